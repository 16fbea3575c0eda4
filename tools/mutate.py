"""Break the model on purpose, one rule at a time, and see whether the tests notice.

The breaks are data, beside the code they break: one ``mutations.toml`` per package folder
(``kafka_lab/sim/server/mutations.toml``, ``kafka_lab/listeners/mutations.toml``, ...), one
``[[mutation]]`` entry each: the rule it removes or bends, the Kafka source the rule comes from, the
text it replaces in which file, and the test that kills it (``killed_by``). This script loads them all.
For each mutation it copies the repository (its tracked files, plus new files git does not ignore) to a
scratch directory, applies the edit there, runs the test that killed it last time, then (if that one
passes) the model's tests with ``PYTHONPATH`` pointing at the copy, and reports the mutation *killed*
(some test failed) or *survived* (every test passed: the rule is untested). The worktree itself is
never modified.

    python tools/mutate.py                      # every mutation; prints the table and the kill rate
    python tools/mutate.py --only lai-leader-epoch-check --only stop-replica-no-delete
    python tools/mutate.py --list               # names and rules, nothing run
    python tools/mutate.py --check              # only check that every snippet still matches
    python tools/mutate.py --jobs 2 --json out.json

An edit whose ``old`` snippet is not found exactly once in its file is an error before anything runs
(exit status 2): the list cannot rot silently when the model changes. The unmutated copy must pass
first (exit status 2 otherwise). Exit status 1 when a mutation survived, 0 when every one was killed.

Tests run with ``-x`` (stop at the first failure), the killing test first, then every file, fastest
first, ``CI=1`` (hypothesis derandomised, as in CI) and ``PYTHONDONTWRITEBYTECODE=1`` (a mutated module
is never shadowed by a stale ``.pyc``). A run longer than ``--timeout`` seconds counts as killed (a
mutation that makes the model loop forever is caught, by the clock).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: the test files, in the order they run (fast rule tests first, the slow statistical ones last; the
#: KRaft listener tests and the assignment's tests, a few seconds each, for the mutations of
#: kafka_lab/listeners/kraft.py and kafka_lab/assignment/); a pattern matching nothing
#: is skipped, a file matched twice runs once
TEST_PATTERNS = [
    "tests/test_listeners_kraft*.py",
    "tests/test_assignment.py",
    "tests/test_broker_process.py",
    "tests/test_ledger_outcomes.py",
    "tests/test_cluster_*.py",
    "tests/test_ledger_times.py",
    "tests/test_sim_log.py",
    "tests/test_sim_model.py",
    "tests/test_sim_kip291.py",
    "tests/test_sim_conservation.py",
    "tests/test_lab0[3-9]*.py",
    "tests/test_sim_*.py",
    "tests/test_fencing.py",
    "tests/test_controller_scale.py",
    "tests/test_shutdown_cluster.py",
    "tests/test_lifecycle.py",
    "tests/test_kraft_*.py",
    "tests/test_logs_generate.py",
    "tests/test_cli_safety.py",
    "tests/test_fault_campaign.py",
]

#: where the lists are: one per package folder, beside the code its mutations edit
LISTS = "kafka_lab/**/mutations.toml"


@dataclass(frozen=True)
class Mutation:
    """One deliberate break: ``edits`` are (file from the repository root, exact old snippet, replacement)."""

    name: str
    edits: tuple
    rule: str
    source: str
    review: bool = False  # one of the breaks the review listed
    killed_by: str = ""  # the test that failed first when it was last run (a pytest node id)
    home: str = ""  # the mutations.toml it is written in


_REQUIRED = {"name", "rule", "source", "killed_by", "file", "old", "new"}
_KEYS = _REQUIRED | {"review", "more"}
_EDIT_KEYS = {"file", "old", "new"}


def load_mutations(repo: Path = REPO) -> list[Mutation]:
    """Every ``mutations.toml`` under ``kafka_lab/``, in path order; a malformed entry is a ValueError naming it."""
    out = []
    for path in sorted(repo.glob(LISTS)):
        home = path.relative_to(repo)
        with path.open("rb") as f:
            data = tomllib.load(f)
        if set(data) != {"mutation"}:
            raise ValueError(f"{home}: expected only [[mutation]] entries, found {sorted(set(data) - {'mutation'})}")
        for i, e in enumerate(data["mutation"]):
            where = f"{home}, entry {i + 1} ({e.get('name', '?')})"
            if not _REQUIRED <= set(e) <= _KEYS:
                raise ValueError(
                    f"{where}: missing {sorted(_REQUIRED - set(e))}, unknown {sorted(set(e) - _KEYS)}; "
                    f"an entry has {sorted(_REQUIRED)} and may have {sorted(_KEYS - _REQUIRED)}"
                )
            more = e.get("more", [])
            bad = [sorted(set(m) ^ _EDIT_KEYS) for m in more if set(m) != _EDIT_KEYS]
            if bad:
                raise ValueError(f"{where}: each [[mutation.more]] has exactly {sorted(_EDIT_KEYS)}; differs by {bad}")

            def edit(m, folder=path.parent):
                return (os.path.relpath(os.path.normpath(folder / m["file"]), repo), m["old"], m["new"])

            out.append(
                Mutation(
                    e["name"],
                    (edit(e), *(edit(m) for m in more)),
                    e["rule"],
                    e["source"],
                    e.get("review", False),
                    e["killed_by"],
                    str(home),
                )
            )
    return out


MUTATIONS = load_mutations()


# -- the runner ----------------------------------------------------------------------------------------


@dataclass
class Outcome:
    name: str
    status: str  # killed | survived | error
    seconds: float
    detail: str = ""
    rule: str = ""
    source: str = ""
    review: bool = False
    files: list = field(default_factory=list)


def repo_files(repo: Path) -> list[str]:
    """Tracked files and new files git does not ignore (what a commit of the worktree would hold)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted({p for p in out.split("\0") if p and (repo / p).is_file()})


def copy_repo(repo: Path, dest: Path) -> None:
    for rel in repo_files(repo):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, target)


def check_snippets(repo: Path, mutations) -> list[str]:
    """Every edit's old snippet must occur exactly once in its file (else the list has rotted)."""
    problems = []
    names = [m.name for m in mutations]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"mutation names used twice: {dupes}")
    for m in mutations:
        for path, old, _new in m.edits:
            f = repo / path
            if not f.is_file():
                problems.append(f"{m.name} ({m.home}): {path} does not exist")
                continue
            n = f.read_text(encoding="utf-8").count(old)
            if n != 1:
                problems.append(
                    f"{m.name} ({m.home}): the snippet occurs {n} times in {path} (must be exactly once):\n"
                    + "\n".join("      | " + ln for ln in old.splitlines())
                )
    return problems


def test_files(root: Path, patterns) -> list[str]:
    seen, out = set(), []
    for pat in patterns:
        for p in sorted(root.glob(pat)):
            rel = str(p.relative_to(root))
            if rel not in seen:
                seen.add(rel)
                out.append(rel)
    return out


def run_tests(root: Path, tests: list[str], timeout: float) -> tuple[int | None, str]:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", "CI": "1"}
    cmd = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=-ra"]
    try:
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f} s"
    return p.returncode, p.stdout + p.stderr


FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def first_failure(output: str) -> str:
    m = FAILED.search(output)
    if m:
        return m.group(1)
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def apply(root: Path, m: Mutation) -> dict:
    """Apply ``m`` in ``root``; return the original texts (to restore)."""
    saved = {}
    for path, old, new in m.edits:
        f = root / path
        text = saved.get(path) or f.read_text(encoding="utf-8")
        saved.setdefault(path, text)
        cur = f.read_text(encoding="utf-8")
        if cur.count(old) != 1:
            raise RuntimeError(f"{m.name}: snippet not found exactly once in {path}")
        f.write_text(cur.replace(old, new, 1), encoding="utf-8")
    return saved


def restore(root: Path, saved: dict) -> None:
    for path, text in saved.items():
        (root / path).write_text(text, encoding="utf-8")


def run_one(root: Path, m: Mutation, tests: list[str], timeout: float) -> Outcome:
    """``m`` applied in ``root``: its killing test first (seconds), then, if that passes, every test file."""
    t0 = time.perf_counter()
    saved = apply(root, m)
    try:
        code = None
        if m.killed_by:
            code, out = run_tests(root, [m.killed_by], timeout)
        if code not in (None, 1, 2) or not m.killed_by:  # it passed, or pytest could not run it: every test decides
            code, out = run_tests(root, tests, timeout)
    finally:
        restore(root, saved)
    dt = time.perf_counter() - t0
    files = sorted({p for p, _o, _n in m.edits})
    base = dict(rule=m.rule, source=m.source, review=m.review, files=files)
    if code is None:
        return Outcome(m.name, "killed", dt, out, **base)
    if code == 0:
        return Outcome(m.name, "survived", dt, "", **base)
    if code == 1:
        return Outcome(m.name, "killed", dt, first_failure(out), **base)
    # 2: interrupted (an import error, a collection error: the mutation broke the module); others: pytest trouble
    if code == 2:
        return Outcome(m.name, "killed", dt, "collection/import error: " + first_failure(out), **base)
    return Outcome(m.name, "error", dt, f"pytest exit {code}: {first_failure(out)}", **base)


def killer(detail: str) -> str:
    """The pytest node id in an outcome's ``detail`` ("" for a timeout), as ``killed_by`` records it: without its
    parameters when pytest's summary cut them at a space (the whole test function then runs first)."""
    node = detail.removeprefix("collection/import error: ")
    if not node.startswith("tests/"):
        return ""
    name, _, params = node.partition("[")
    # parameters pytest cut at a space, or holding "::" (an IPv6 host) that a node id's check would split at
    return node if node.count("[") == node.count("]") and "::" not in params else name


def record_killers(repo: Path, killers: dict) -> list[str]:
    """Write ``{mutation name: node id}`` into each entry's ``killed_by`` line in its mutations.toml; returns the
    names it changed."""
    changed = []
    by_home = {}
    for m in load_mutations(repo):
        if killers.get(m.name) and killers[m.name] != m.killed_by:
            by_home.setdefault(m.home, []).append(m.name)
    for home, names in by_home.items():
        path = repo / home
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        current = None
        for i, line in enumerate(lines):
            if line.startswith("name = "):
                current = tomllib.loads(line)["name"]
            elif line.startswith("killed_by = ") and current in names:
                lines[i] = f"killed_by = {json.dumps(killers[current])}\n"
                changed.append(current)
        path.write_text("".join(lines), encoding="utf-8")
    return changed


def missing_killers(repo: Path, mutations) -> list[str]:
    """Entries whose ``killed_by`` names no test: no file, or no such test function (or class) in it."""
    import ast

    problems, defined = [], {}
    for m in mutations:
        if not m.killed_by:
            problems.append(f"{m.name} ({m.home}): killed_by is empty; run tools/mutate.py --only {m.name} --record")
            continue
        file, *names = m.killed_by.split("::")
        if file not in defined:
            f = repo / file
            defined[file] = None
            if f.is_file() and f.suffix == ".py":
                tree = ast.parse(f.read_text(encoding="utf-8"))
                defined[file] = {
                    n.name: {c.name for c in n.body if isinstance(c, ast.FunctionDef | ast.AsyncFunctionDef)}
                    for n in tree.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                }
        tops = defined[file]
        if tops is None:
            problems.append(f"{m.name} ({m.home}): killed_by {m.killed_by!r}: no test file {file}")
            continue
        names = [n.split("[", 1)[0] for n in names]
        ok = not names or (names[0] in tops and (len(names) == 1 or names[1] in tops[names[0]]))
        if not ok:
            problems.append(f"{m.name} ({m.home}): killed_by {m.killed_by!r}: {file} defines no such test")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this mutation (repeatable; comma-separated names accepted)",
    )
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument(
        "--check", action="store_true", help="only check that every snippet matches and every killed_by names a test"
    )
    ap.add_argument(
        "--record",
        action="store_true",
        help="write each killed mutation's first failing test into its entry's killed_by (mutations.toml)",
    )
    ap.add_argument("--jobs", "-j", type=int, default=1, help="scratch copies run in parallel (default 1)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per test run (default 900)")
    ap.add_argument(
        "--tests",
        nargs="+",
        default=None,
        metavar="PATTERN",
        help="test file patterns, in order (default: the model's tests)",
    )
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)

    wanted = [n for spec in args.only for n in spec.split(",") if n]
    known = {m.name for m in MUTATIONS}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        print(f"unknown mutation(s): {unknown}; see --list", file=sys.stderr)
        return 2
    chosen = [m for m in MUTATIONS if not wanted or m.name in wanted]

    if args.list:
        for m in chosen:
            print(
                f"{m.name}{' (review)' if m.review else ''}  [{m.home}]\n    {m.rule}\n    {m.source}\n"
                f"    killed by {m.killed_by or '(not recorded)'}"
            )
        print(f"{len(chosen)} mutations")
        return 0

    problems = check_snippets(REPO, MUTATIONS)
    if problems:
        print("the mutation list no longer matches the code:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    if args.check:
        missing = missing_killers(REPO, MUTATIONS)
        if missing:
            print("killed_by names no test:\n  " + "\n  ".join(missing), file=sys.stderr)
            return 2
        print(f"all {len(MUTATIONS)} mutations match the code, and each names the test that kills it")
        return 0

    jobs = max(1, min(args.jobs, len(chosen)))
    scratch = [Path(tempfile.mkdtemp(prefix=f"mutate-{i}-")) for i in range(jobs)]
    try:
        for d in scratch:
            copy_repo(REPO, d)
        tests = test_files(scratch[0], args.tests or TEST_PATTERNS)
        if not tests:
            print("no test files matched", file=sys.stderr)
            return 2
        print(
            f"{len(chosen)} mutations, {jobs} scratch cop{'y' if jobs == 1 else 'ies'}; tests: {' '.join(tests)}",
            flush=True,
        )
        if not args.no_baseline:
            t0 = time.perf_counter()
            code, out = run_tests(scratch[0], tests, args.timeout)
            if code != 0:
                print(
                    f"the unmutated copy fails its tests (exit {code}); fix that first:\n{out[-3000:]}", file=sys.stderr
                )
                return 2
            print(f"baseline: the tests pass on the unmutated copy ({time.perf_counter() - t0:.0f} s)", flush=True)

        results: list[Outcome] = []
        free = list(scratch)

        def work(m):
            root = free.pop()
            try:
                return run_one(root, m, tests, args.timeout)
            finally:
                free.append(root)

        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            for r in ex.map(work, chosen):
                results.append(r)
                print(f"  {r.status:8s} {r.name:45s} {r.seconds:6.0f} s  {r.detail}", flush=True)
    finally:
        for d in scratch:
            shutil.rmtree(d, ignore_errors=True)

    killed = sum(r.status == "killed" for r in results)
    survived = [r for r in results if r.status == "survived"]
    errors = [r for r in results if r.status == "error"]
    print()
    print("| mutation | result | killed by | rule | Kafka 2.8 source |")
    print("| --- | --- | --- | --- | --- |")
    for r in results:
        print(
            f"| `{r.name}`{' (review)' if r.review else ''} | {r.status} | {r.detail.replace('|', '/')} "
            f"| {r.rule} | {r.source.replace('|', '/')} |"
        )
    print()
    print(
        f"kill rate: {killed}/{len(results)} ({100.0 * killed / len(results):.0f} %)"
        + (f"; survived: {', '.join(r.name for r in survived)}" if survived else "")
        + (f"; errors: {', '.join(r.name for r in errors)}" if errors else "")
    )
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=1), encoding="utf-8")
    if args.record:
        changed = record_killers(REPO, {r.name: killer(r.detail) for r in results if r.status == "killed"})
        print(f"killed_by written for {len(changed)} mutation(s)" + (f": {', '.join(changed)}" if changed else ""))
    return 1 if survived or errors else 0


if __name__ == "__main__":
    sys.exit(main())

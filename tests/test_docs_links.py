"""Every document the repository points at is in the repository.

A clone of this repository is all a learner or the next engineer has: a docstring, test, benchmark
or README that cites a document the repository lacks (or a folder outside it) cites nothing. This
test reads every tracked text file and fails on

- a path to a ``.md`` file, or a Markdown link to a ``.md`` or ``.ipynb`` file, that exists neither
  beside the citing file nor from the repository root (a notebook's bare name in code is a name in
  ``labs/``, not a citation);
- a section ``docs/<doc>.md §N`` that the document does not have (a heading ``## N. ...``), or a
  quoted heading after it, ``§N ("Title")``, that is not a heading of that document;
- any path into the project's shared folder outside the repository.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".py", ".md", ".ipynb", ".toml", ".txt", ".sh", ".cfg", ".ini", ".json", ".yml", ".yaml", ""}

# a path-like token ending in .md, not in the middle of another path or a URL
DOC_PATH = re.compile(r"(?<![\w/.:@-])((?:\.{1,2}/)*[\w-][\w.-]*(?:/[\w.-]+)*\.md)(?![\w/-])")
# the target of a Markdown link to a document or a notebook (not a URL)
LINK = re.compile(r"\]\((?![a-z]+://)([^)\s#?]+\.(?:md|ipynb))(?:[#?][^)]*)?\)")
SECTION = re.compile(r"(docs/[\w.-]+\.md)\s+§(\d+)(?:\s*\(\"([^\"]+)\"\))?")
# built from pieces so that this file does not match itself
SHARED = re.compile(r"\.\./" + "shared" + r"\b|/work/" + "shared" + r"\b")


def tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
        paths = [REPO / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file but the venv's
        paths = [p for p in REPO.rglob("*") if p.is_file() and ".venv" not in p.parts and ".git" not in p.parts]
    return [p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file()]


def _headings(doc: Path) -> list[str]:
    return [ln.lstrip("#").strip() for ln in doc.read_text(encoding="utf-8").splitlines() if ln.startswith("#")]


def broken_references(path: Path, text: str, repo: Path = REPO) -> list[str]:
    """What ``text`` (the content of ``path``) points at that ``repo`` does not hold."""
    problems = []
    rel = path.relative_to(repo) if path.is_relative_to(repo) else path
    for m in SHARED.finditer(text):
        problems.append(f"{rel}: points outside the repository ({m.group(0)!r}); cite docs/ instead")
    targets = {m.group(1) for m in DOC_PATH.finditer(text)} | {m.group(1) for m in LINK.finditer(text)}
    for target in sorted(targets):
        if not ((path.parent / target).exists() or (repo / target).exists()):
            problems.append(f"{rel}: cites {target}, which the repository does not have")
    for m in SECTION.finditer(text):
        doc, number, title = repo / m.group(1), m.group(2), m.group(3)
        if not doc.exists():
            continue  # reported above
        heads = _headings(doc)
        if not any(re.match(rf"{number}\.\s", h) for h in heads):
            problems.append(f"{rel}: cites {m.group(1)} §{number}, which has no section {number}")
        elif title and not any(h.startswith(title) for h in heads):
            problems.append(f'{rel}: cites {m.group(1)} §{number} ("{title}"), which has no such heading')
    return problems


def test_every_cited_document_is_in_the_repository():
    problems = []
    for path in tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if path == Path(__file__).resolve():  # this file's own examples are made-up names
            text = "\n".join(m.group(0) for m in SHARED.finditer(text))
        problems += broken_references(path, text)
    assert not problems, "\n".join(problems)


def test_the_check_sees_a_missing_document_a_missing_section_and_the_shared_folder(tmp_path):
    """The checker itself: each kind of broken reference is reported, a good one is not."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ref.md").write_text("# Ref\n\n## 1. Listeners\n\n### The loop\n")
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "01_a.ipynb").write_text("{}")
    citing = tmp_path / "labs" / "x.py"
    good = 'see docs/ref.md §1 ("The loop") and [next](01_a.ipynb)'
    assert broken_references(citing, good, tmp_path) == []
    bad = {
        "cites NOTES.md": "as NOTES.md says",
        "no section 3": "docs/ref.md §3",
        "no such heading": 'docs/ref.md §1 ("The wheel")',
        "outside the repository": "read ../" + "shared/REFERENCE.txt",
        "cites 02_b.ipynb": "[next](02_b.ipynb)",
    }
    for what, text in bad.items():
        found = broken_references(citing, text, tmp_path)
        assert len(found) == 1 and what in found[0], (text, found)


def test_urls_and_paths_inside_other_paths_are_not_citations(tmp_path):
    text = (
        "https://example.org/docs/use/repository.md, lab/tree/00_start_here.ipynb?token=x, "
        "[Binder](https://mybinder.org/v2/gh/a/b/HEAD?urlpath=lab/tree/labs/00_start_here.ipynb) "
        'and nb = "01_listeners.ipynb"'
    )
    assert broken_references(tmp_path / "x.py", text, tmp_path) == []

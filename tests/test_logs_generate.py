"""The generated cluster logs: layout on disk, seeding, and the ground truth against the logs themselves.

The ground truth is computed from the simulation's records; here it is recomputed from the written
text with the reference parser (and ``json``), an independent path to the same numbers.
"""

import datetime as _dt
import hashlib
import json
import re
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from kafka_lab.logs.parse import Parsed, parse_lines
from kafka_lab.logs.pool import forked_pool, window_pool
from kafka_lab.logs.scenario import (
    NEW_CONTROLLER,
    RESTART_MS,
    WINDOW_MS,
    generate,
    load_level,
    schedule,
    weighted_quantile,
)

ROOT = Path(__file__).resolve().parent.parent


def _all_files(root: Path):
    return sorted(p for p in root.glob("broker-*/*.log*"))


def _parse_dir(root: Path) -> Parsed:
    out = Parsed()
    for f in _all_files(root):
        with open(f, encoding="utf-8") as fh:
            parse_lines(fh, str(f.relative_to(root)), out)
    return out


def test_one_directory_per_broker_with_kafkas_file_names(small_logs):
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    assert sorted(p.name for p in small_logs.iterdir() if p.is_dir()) == ["broker-1", "broker-2", "broker-3"]
    for d in small_logs.glob("broker-*"):
        names = {p.name for p in d.iterdir()}
        assert {"server.log", "state-change.log", "kafka-request.log", "controller.log"} <= names
        # hourly rolled files: <file>.yyyy-MM-dd-HH
        assert all(
            re.fullmatch(r"(server|state-change|kafka-request|controller)\.log(\.\d{4}-\d{2}-\d{2}-\d{2})?", n)
            for n in names
        )
    # only a controller's broker writes controller.log: the first, and the one elected in the rolling restart
    ctls = {c["controller"] for c in truth["controllers"] if c["event"] == "elected"}
    assert truth["controller"] in ctls and len(ctls) == 2
    for b in (1, 2, 3):
        size = (small_logs / f"broker-{b}" / "controller.log").stat().st_size
        assert (size > 0) == (b in ctls)


def test_line_counts_agree_with_the_files(small_logs):
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    n = sum(len(f.read_bytes().splitlines()) for f in _all_files(small_logs))
    assert n == truth["lines"]["lines_read"]
    p = _parse_dir(small_logs)
    assert (p.lines_read, len(p.records), p.continuations, len(p.rejected)) == (
        truth["lines"]["lines_read"],
        truth["lines"]["records"],
        truth["lines"]["continuations"],
        truth["lines"]["rejected"],
    )
    assert truth["lines"]["continuations"] > 0  # KafkaConfig values: a message with newlines
    assert truth["lines"]["rejected"] == 0  # no damage asked


def test_damage_is_counted_exactly(tmp_path):
    truth = generate(tmp_path, hours=40 / 3600, brokers=3, seed=5, damage=0.05, event_every_s=20)
    p = _parse_dir(tmp_path)
    lines = truth["lines"]
    assert (p.lines_read, len(p.records), p.continuations, len(p.rejected)) == (
        lines["lines_read"],
        lines["records"],
        lines["continuations"],
        lines["rejected"],
    )
    d = truth["damage"]
    assert lines["rejected"] == d["cut_lines"] + d["garbage_lines"] > 0
    assert d["stack_traces"] > 0
    # the cut request lines are the requests missing from the request log
    parsed = Counter()
    for r in p.records:
        if r.logger == "kafka.request.logger":
            j = json.loads(r.message[len("Completed request:") :])
            parsed[
                (int(r.file.split("/")[0].split("-")[1]), j["requestHeader"]["requestApiKeyName"], j["listener"])
            ] += 1
    cut = {(c["broker"], c["api"], c["listener"]): c["lines"] for c in d["cut_requests"]}
    for row in truth["requests"]:
        key = (row["broker"], row["api"], row["listener"])
        assert parsed[key] == row["count"] - cut.get(key, 0)


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in _all_files(root) + [root / "ground-truth.json"]:
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def test_same_seed_same_files(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d, seed in ((a, 7), (b, 7), (c, 8)):
        generate(d, hours=8 / 3600, brokers=2, seed=seed, damage=0.02, event_every_s=4)
    assert _digest(a) == _digest(b)
    assert _digest(a) != _digest(c)


@pytest.mark.parametrize(
    "options",
    [
        {"damage": 0.01, "event_every_s": 5},  # copies with and without damaged lines
        {"request_format": "text", "start": "2024-03-04T10:59:59.500"},  # copies across seconds and an hour
        {"brokers": 4, "seed": 3, "start": "2024-03-04T11:59:50", "gzip": True},  # rolled at 12:00
    ],
)
def test_block_writes_equal_the_line_by_line_loop(tmp_path, monkeypatch, options):
    """generate writes each copy of a window as one block per file; the same bytes as line by line."""
    from kafka_lab.logs import scenario

    generate(tmp_path / "blocks", hours=20 / 3600, **options)
    monkeypatch.setattr(scenario, "_write_copy", lambda *a: False)
    generate(tmp_path / "lines", hours=20 / 3600, **options)
    files = sorted(p.relative_to(tmp_path / "lines") for p in (tmp_path / "lines").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "blocks") for p in (tmp_path / "blocks").rglob("*") if p.is_file())
    for f in files:
        assert (tmp_path / "blocks" / f).read_bytes() == (tmp_path / "lines" / f).read_bytes(), f


def test_windows_simulated_by_worker_processes_give_the_same_files_and_truth(tmp_path, monkeypatch):
    """generate(workers=2): every window from the pool (none simulated here), byte for byte the serial run."""
    from kafka_lab.logs import scenario

    # a minute of 3 brokers: moves, the rolling restart and the windows after it (the new controller), damage
    options = {"hours": 60 / 3600, "brokers": 3, "seed": 2, "damage": 0.01, "event_every_s": 10}
    serial = generate(tmp_path / "serial", **options)
    assert serial["restarts"] and any(n.endswith(NEW_CONTROLLER) for n in serial["windows"])

    def not_here(*a, **k):
        raise AssertionError("a window was simulated in the writing process")

    monkeypatch.setattr(scenario, "_window", not_here)  # the workers (forked from a fresh server) keep theirs
    pooled = generate(tmp_path / "pooled", workers=2, **options)
    assert pooled == serial
    assert _digest(tmp_path / "pooled") == _digest(tmp_path / "serial")
    # a pool of the caller's: used, and left running
    with window_pool(1) as pool:
        assert generate(tmp_path / "given", workers=pool, **options) == serial
        assert _digest(tmp_path / "given") == _digest(tmp_path / "serial")
        assert pool.submit(abs, -3).result() == 3
    with pytest.raises(ValueError, match="--workers is a whole number of processes"):
        generate(tmp_path / "bad", workers=0, **options)


def test_a_pool_is_forked_only_from_a_process_with_one_thread():
    """A fork copies only the calling thread: with another one running, the pool comes from the fork server."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        pool = forked_pool(1)
        try:
            assert pool._mp_context.get_start_method() in ("forkserver", "spawn")
            assert pool.submit(abs, -2).result() == 2
        finally:
            pool.shutdown()
    finally:
        stop.set()
        other.join()


def test_request_truth_agrees_with_the_request_log(small_logs):
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    values = defaultdict(lambda: defaultdict(list))
    for f in small_logs.glob("broker-*/kafka-request.log*"):
        b = int(f.parent.name.split("-")[1])
        for line in f.read_text().splitlines():
            d = json.loads(line[line.index("{") : line.rindex("}") + 1])
            key = (b, d["requestHeader"]["requestApiKeyName"], d["listener"])
            for k in ("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "remoteTimeMs"):
                values[key][k].append(d[k])
    assert len(truth["requests"]) == len(values)
    for row in truth["requests"]:
        v = values[(row["broker"], row["api"], row["listener"])]
        assert len(v["totalTimeMs"]) == row["count"]
        for k in ("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "remoteTimeMs"):
            for q in (50, 99):
                assert np.quantile(v[k], q / 100) == pytest.approx(row[f"{k}_p{q}"], abs=1e-9)


def test_half_way_through_kip291(small_logs):
    """Even brokers have control.plane.listener.name: their LeaderAndIsr and UpdateMetadata come on CONTROLLER."""
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    assert truth["control_plane"] == {"1": False, "2": True, "3": False}
    ctl = {(r["broker"], r["listener"]) for r in truth["requests"] if r["api"] in ("LEADER_AND_ISR", "UPDATE_METADATA")}
    assert ctl == {(1, "PLAINTEXT"), (2, "CONTROLLER"), (3, "PLAINTEXT")}


def test_truncation_truth_agrees_with_the_logs(small_logs):
    """Records truncated = the follower's log end at become-follower − the offset it truncates to."""
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    follower = re.compile(r"\[Broker id=(\d+)\] Follower (\S+)-(\d+) starts at leader epoch \d+ from offset (\d+)")
    trunc = re.compile(r"\[Log partition=(\S+)-(\d+), dir=\S+\] Truncating to offset (\d+)")
    got = Counter()
    for d in small_logs.glob("broker-*"):
        b = int(d.name.split("-")[1])
        events = []
        for f in ("state-change", "server"):
            for r in _parse_dir_file(d / f"{f}.log"):
                events.append((r.timestamp, r.line, f, r.message))
        leo = {}
        for _t, _n, _f, msg in sorted(events):
            m = follower.search(msg)
            if m:
                leo[(m.group(2), int(m.group(3)))] = int(m.group(4))
            m = trunc.search(msg)
            if m:
                tp = (m.group(1), int(m.group(2)))
                got[(b, *tp)] += leo[tp] - int(m.group(3))
    want = {(t["broker"], t["topic"], t["partition"]): t["records"] for t in truth["truncations"]}
    assert want and dict(got) == want


def _parse_dir_file(path: Path):
    with open(path) as fh:
        return parse_lines(fh, path.name).records


def test_the_broker_without_control_plane_waits_longest(small_logs):
    """What the scenario is built to show: a spike holds the LeaderAndIsr of a broker without the control plane."""
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    q = {r["broker"]: r["requestQueueTimeMs_p99"] for r in truth["requests"] if r["api"] == "LEADER_AND_ISR"}
    assert q[2] < 1.0 < min(q[1], q[3])


def test_weighted_quantile_is_numpys_on_the_expanded_multiset():
    rng = np.random.default_rng(3)
    for _ in range(50):
        parts = [(rng.exponential(size=rng.integers(1, 6)).round(3), int(rng.integers(0, 5))) for _ in range(4)]
        if not any(w for _, w in parts):
            continue
        flat = np.concatenate([np.repeat(v, w) for v, w in parts])
        for q in (0.0, 0.5, 0.9, 0.99, 1.0):
            assert weighted_quantile(parts, q) == pytest.approx(np.quantile(flat, q), abs=1e-12)


def test_daily_load_shape():
    assert [load_level(h) for h in (4, 10, 16, 22)] == ["low", "mid", "high", "mid"]


def _cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "kafka_lab", *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
        cwd=cwd,
    )


def test_cli_generate_logs(tmp_path):
    r = _cli("generate-logs", str(tmp_path / "out"), "--hours", str(5 / 3600), "--brokers", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "lines/s" in r.stdout
    truth = json.loads((tmp_path / "out" / "ground-truth.json").read_text())
    assert truth["brokers"] == 2 and truth["lines"]["lines_read"] > 0


def test_cli_workers_write_what_the_serial_generator_writes(tmp_path):
    """kafka-lab's pool (forked from the command's process) gives the library's serial files and truth."""
    hours = 40 / 3600  # the rolling restart from 20 s, and the new controller's windows after it
    r = _cli("generate-logs", str(tmp_path / "cli"), "--hours", repr(hours), "--brokers", "2", "--seed", "6",
             "--event-every", "10", "--workers", "2", "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    serial = generate(tmp_path / "lib", hours=hours, brokers=2, seed=6, event_every_s=10)
    assert serial["restarts"] and any(n.endswith(NEW_CONTROLLER) for n in serial["windows"])
    assert _digest(tmp_path / "cli") == _digest(tmp_path / "lib")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hours", "-1"], "--hours is a positive number"),
        (["--damage", "0.9"], "--damage is a fraction"),
        (["--brokers", "0"], "--brokers is a whole number"),
        (["--start", "yesterday"], "--start is an ISO 8601 time"),
        (["--workers", "0"], "--workers is a whole number of processes"),
        (["--hours", "inf"], "--hours is a positive number of hours, got inf"),
        (["--hours", "nan"], "--hours is a positive number of hours, got nan"),
        (["--start", "9999-12-31T23:59:59", "--hours", "0.001"], "the dates run out of range"),
    ],
)
def test_cli_generate_logs_bad_input(tmp_path, args, message):
    r = _cli("generate-logs", str(tmp_path / "out"), "--quiet", *args)
    assert r.returncode == 2
    assert message in r.stderr


def test_cli_generate_logs_refuses_an_empty_path(tmp_path):
    """An empty OUT once wrote broker-*/ and ground-truth.json into the current directory."""
    r = _cli("generate-logs", "", "--quiet", cwd=tmp_path)
    assert r.returncode == 2 and "expected a path, got an empty one" in r.stderr
    assert not list(tmp_path.iterdir())


def test_the_rolling_restart_starts_half_way_brokers_in_turn_the_controller_last():
    start = _dt.datetime(2024, 3, 4)
    plan = list(schedule(90 / 3600, 3, start, 20, controller_id=1))
    names = [n for _t, n in plan]
    restarts = [(t, n) for t, n in plan if n.startswith("restart-")]
    assert restarts == [
        (45_000, "restart-2"),
        (45_000 + RESTART_MS, "restart-3"),
        (45_000 + 2 * RESTART_MS, "restart-1"),
    ]
    # the windows cover the run back to back
    ends = [t + (RESTART_MS if n.startswith("restart-") else WINDOW_MS) for t, n in plan]
    assert [t for t, _n in plan][1:] == ends[:-1] and ends[-1] == 90_000
    # moves every 20 s (10, 30, ...), none inside the restart; after it, the new controller's windows
    moves = [(t, n) for t, n in plan if n.startswith("move-")]
    assert moves == [(10_000, "move-1"), (30_000, "move-2"), (70_000, "move-3/epoch-2")]
    after = names[names.index("restart-1") + 1 :]
    assert after and all(n.endswith(NEW_CONTROLLER) for n in after)
    assert not any(n.endswith(NEW_CONTROLLER) for n in names[: names.index("restart-1")])
    # the controller restarts last, whoever it is
    assert [n for _t, n in schedule(90 / 3600, 3, start, 20, controller_id=2) if n.startswith("restart-")] == [
        "restart-1",
        "restart-3",
        "restart-2",
    ]


def test_no_rolling_restart_when_it_does_not_fit_or_is_not_asked_for():
    start = _dt.datetime(2024, 3, 4)
    short = [n for _t, n in schedule(40 / 3600, 3, start, 20)]  # from 20 s, 3 x 8 s would end after 40 s
    assert not any(n.startswith("restart-") for n in short) and len(short) == 40
    off = [n for _t, n in schedule(90 / 3600, 3, start, 20, rolling_restart=False)]
    assert len(off) == 90 and [n for n in off if n.startswith("move-")] == ["move-1", "move-2", "move-3", "move-1"]
    assert not any(n.startswith("restart-") or n.endswith(NEW_CONTROLLER) for n in off)
    one = [n for _t, n in schedule(90 / 3600, 1, start, 20)]  # one broker: nothing to move, nothing to restart
    assert set(one) == {"steady-low"}


def test_progress_counts_simulated_seconds(tmp_path):
    seen = []
    truth = generate(tmp_path / "a", hours=60 / 3600, brokers=2, seed=3, event_every_s=20, progress=seen.append)
    assert sum(seen) == 60 and sum(truth["windows"].values()) == len(seen)
    assert [r["broker"] for r in truth["restarts"]] == [2, 1]
    off = generate(tmp_path / "b", hours=60 / 3600, brokers=2, seed=3, event_every_s=20, rolling_restart=False)
    assert off["restarts"] == [] and [c["event"] for c in off["controllers"]] == ["elected"]

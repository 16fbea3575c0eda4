"""The generated cluster logs: layout on disk, seeding, and the ground truth against the logs themselves.

The ground truth is computed from the simulation's records; here it is recomputed from the written
text with the reference parser (and ``json``), an independent path to the same numbers.
"""

import datetime as _dt
import gzip
import hashlib
import itertools
import json
import re
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from kafka_lab.logs.parse import Parsed, parse_lines, parse_timestamp
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
    # the slots the copies fill: no mark is left, and the offsets go on (the same window, written again, is
    # further on: a follower's fetch offset in its last copy is past its first copy's end)
    text = b"".join(
        gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        for p in (tmp_path / "blocks").rglob("*.log*")
    )
    assert not re.search(rb"(?<!\d)7\d{18}(?!\d)", text)
    offsets = [int(x) for x in re.findall(rb"fetchOffset\W{1,2}(\d+)", text)]
    assert max(offsets) > 4 * min(o for o in offsets if o > 0)


def test_a_mark_is_its_value_to_a_template_and_the_copy_shifts_it():
    """slots: a mark is a number (a template's arithmetic on it is on the value), cut out and shifted per copy."""
    from kafka_lab.logs.slots import LEADER_EPOCH, OFFSET, Slots, fill, split

    s = Slots()
    leo, epoch, none = s.mark(OFFSET, ("orders", 0), 0), s.mark(LEADER_EPOCH, ("orders", 0), 3), s.mark(OFFSET, 1, -1)
    assert none == -1 and s.keys == [(OFFSET, ("orders", 0)), (LEADER_EPOCH, ("orders", 0))]
    text = f"largest offset {leo - 1}, epoch {epoch}, none {none}"
    assert fill(text, None) == "largest offset -1, epoch 3, none -1"
    assert fill(text, [500, 7]) == "largest offset 499, epoch 10, none -1"
    pieces, marks = split(text)
    assert pieces == ["largest offset ", ", epoch ", ", none -1"] and marks == [(0, -1), (1, 3)]


def test_a_segment_position_goes_on_from_the_bytes_the_copies_before_wrote():
    """A byte position in a partition's log segment (``Non-monotonic update of high watermark from (offset=...
    segment=[0:<bytes>])``) is a counter of its own, shifted per copy by the window's bytes as offsets are by its
    records: each copy's partition log starts where the copies before left it."""
    from kafka_lab.logs.scenario import Window, _Counters
    from kafka_lab.logs.slots import OFFSET, POSITION, Slots, fill

    s, tp = Slots(), ("orders", 0)
    text = f"from (offset={s.mark(OFFSET, tp, 30)} segment=[0:{s.mark(POSITION, tp, 3661)}])"
    win = Window("w", [], {}, {}, {}, [], keys=list(s.keys), advance={(OFFSET, tp): 40, (POSITION, tp): 4882})
    counters = _Counters()
    firsts = []
    for _ in range(3):
        firsts.append(fill(text, counters.shifts(win)))
        counters.advance(win)
    assert firsts == [
        "from (offset=30 segment=[0:3661])",
        "from (offset=70 segment=[0:8543])",
        "from (offset=110 segment=[0:13425])",
    ]


def test_a_window_moves_each_partitions_segment_by_the_bytes_its_produce_requests_appended():
    """What a window moves a partition's segment position by (the next copy starts there) is what its leader
    appended: the recordsSizeInBytes of every Produce the window's request log shows answered without error."""
    from kafka_lab.logs import scenario
    from kafka_lab.logs.slots import POSITION, fill

    w = scenario._simulate_window("steady-low", 3, 0, "json")
    appended = Counter()
    for ln in w.lines:
        text = fill(ln.text(), None)
        if '"requestApiKeyName":"PRODUCE"' not in text:
            continue
        j = json.loads(text.split("Completed request:", 1)[1].rsplit(" (kafka.request.logger)", 1)[0])
        ok = {
            (t["name"], p["index"]) for t in j["response"]["responses"] for p in t["partitionResponses"]
            if p["errorCode"] == 0
        }  # fmt: skip
        for t in j["request"]["topicData"]:
            for p in t["partitionData"]:
                if (t["name"], p["index"]) in ok:
                    appended[(t["name"], p["index"])] += p["recordsSizeInBytes"]
    moved = {tp: v for (kind, tp), v in w.advance.items() if kind == POSITION}
    assert moved == dict(appended) and len(moved) == 6 and min(moved.values()) > 0


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
    """Even brokers have control.plane.listener.name; the controller, broker 1, does not. The control plane's two
    sides (docs/kafka-reference.md §2): while broker 1 is the controller every broker's LeaderAndIsr comes on the
    inter-broker listener INTERNAL, broker 2's too; after broker 1's restart moves the controller, the new
    controller's config decides (CONTROLLER, on every broker, if it names it). Each broker's server.log says which
    plane serves CONTROLLER."""
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    assert truth["control_plane"] == {"1": False, "2": True, "3": False}
    elected = [c for c in truth["controllers"] if c["event"] == "elected"]
    assert elected[0]["controller"] == 1 and len(elected) == 2
    after = "CONTROLLER" if truth["control_plane"][str(elected[-1]["controller"])] else "INTERNAL"
    ctl = {(r["broker"], r["listener"]) for r in truth["requests"] if r["api"] in ("LEADER_AND_ISR", "UPDATE_METADATA")}
    assert ctl == {(b, lst) for b in (1, 2, 3) for lst in ("INTERNAL", after)}
    clients = {r["listener"] for r in truth["requests"] if r["api"] == "PRODUCE"}
    assert clients == {"EXTERNAL"}  # never CONTROLLER: the clients have a listener of their own
    resigned = next(c["time_ms"] for c in truth["controllers"] if c["event"] == "resigned")
    moved = elected[-1]["time_ms"]
    start = parse_timestamp(truth["start"] + ",000")
    seen = Counter()
    for f in small_logs.glob("broker-*/kafka-request.log*"):
        for line in f.read_text().splitlines():
            d = json.loads(line[line.index("{") : line.rindex("}") + 1])
            if d["requestHeader"]["requestApiKeyName"] != "LEADER_AND_ISR":
                continue
            at = (parse_timestamp(line[1:24]) - start).total_seconds() * 1000
            if at < resigned or at >= moved:  # who sent one answered during the election is not a rule
                assert d["listener"] == ("INTERNAL" if at < resigned else after), line[:40]
                seen[at < resigned] += 1
    assert seen[True] > 3 and seen[False] > 3
    for b, has in truth["control_plane"].items():
        server = (small_logs / f"broker-{b}" / "server.log").read_text()
        planes = set(
            re.findall(
                r"Created (control|data)-plane acceptor and processors? for endpoint : "
                r"ListenerName\(CONTROLLER\)",
                server,
            )
        )
        assert planes == {"control" if has else "data"}, b


def test_the_controllers_requests_per_broker_agree_with_the_request_log(small_logs):
    """ground truth's controller_requests: per broker and API, whatever the listener, the exact queue-time
    percentiles and maximum of what the request log holds."""
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    waits = defaultdict(list)
    for f in small_logs.glob("broker-*/kafka-request.log*"):
        b = int(f.parent.name.split("-")[1])
        for line in f.read_text().splitlines():
            d = json.loads(line[line.index("{") : line.rindex("}") + 1])
            api = d["requestHeader"]["requestApiKeyName"]
            if api in ("LEADER_AND_ISR", "UPDATE_METADATA"):
                waits[(b, api)].append(d["requestQueueTimeMs"])
    assert {(r["broker"], r["api"]) for r in truth["controller_requests"]} == set(waits)
    for r in truth["controller_requests"]:
        v = waits[(r["broker"], r["api"])]
        assert r["count"] == len(v) and r["requestQueueTimeMs_max"] == max(v)
        for q in (50, 99):
            assert np.quantile(v, q / 100) == pytest.approx(r[f"requestQueueTimeMs_p{q}"], abs=1e-9)


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


def _records_in_order(root: Path, broker: int, files=("state-change", "server", "kafka-request", "controller")):
    """A broker's records of ``files``, in time order; at one millisecond, in the order of ``files`` and
    then of the lines (a become-follower comes before the truncation it leads to)."""
    out = []
    for rank, f in enumerate(files):
        for path in sorted((root / f"broker-{broker}").glob(f"{f}.log*"), key=lambda p: (p.name == f"{f}.log", p.name)):
            for r in _parse_dir_file(path):
                out.append((parse_timestamp(r.timestamp), rank, path.name, r.line, r.message))
    out.sort(key=lambda x: (x[0], x[1]))
    return out


_STARTS = re.compile(
    r"\[Broker id=\d+\] (?:Leader|Follower) (\S+)-(\d+) starts at leader epoch (\d+) from offset (\d+) with high "
    r"watermark (\d+).*Previous leader epoch was (\d+)\."
)
_TRUNCATES = re.compile(r"\[Log partition=(\S+)-(\d+), dir=\S+\] Truncating to offset (\d+)$")


def test_leader_epochs_and_offsets_go_on_from_one_window_copy_to_the_next(small_logs):
    """A partition's leader epoch never goes back on a broker, and its log end offset at a become-leader or
    become-follower only falls after a truncation, and only to its offset: each window copy continues
    where the one before left every partition (they once all started again at offset 0, epoch 0)."""
    seen = 0
    for b in (1, 2, 3):
        epoch, floor = {}, {}  # tp -> last leader epoch; the lowest offset the next line may have
        for _t, _r, f, n, msg in _records_in_order(small_logs, b, ("state-change", "server")):
            m = _STARTS.search(msg)
            if m:
                tp = (m.group(1), int(m.group(2)))
                e, leo, hw, prev = (int(x) for x in m.group(3, 4, 5, 6))
                assert prev <= e and e >= epoch.get(tp, 0) and prev >= epoch.get(tp, 0), (b, f, n, msg)
                assert leo >= floor.get(tp, 0) and hw <= leo, (b, f, n, msg)
                epoch[tp], floor[tp] = e, leo
                seen += 1
            m = _TRUNCATES.search(msg)
            if m:
                tp = (m.group(1), int(m.group(2)))
                assert int(m.group(3)) <= floor[tp], (b, f, n, msg)
                floor[tp] = int(m.group(3))
    assert seen > 20
    # the controller's elections: each partition's leader epoch grows at each, across the run
    changed = re.compile(r"\[Controller id=\d+ epoch=(\d+)\] Changed partition (\S+)-(\d+) .*leaderEpoch=(\d+),")
    epochs, controller_epochs = defaultdict(list), []
    for b in (1, 2, 3):
        for t, _r, _f, _n, msg in _records_in_order(small_logs, b, ("state-change",)):
            m = changed.search(msg)
            if m:
                controller_epochs.append((t, int(m.group(1))))
                epochs[(m.group(2), int(m.group(3)))].append((t, int(m.group(4))))
    assert len(epochs) == 6
    for tp, es in epochs.items():
        values = [e for _t, e in sorted(es)]
        assert values == sorted(set(values)) and len(values) > 1, tp
    # the controller epoch: 1, then 2 after the controller's restart, never back
    assert [e for _t, e in sorted(controller_epochs)] == sorted(e for _t, e in controller_epochs)
    assert {e for _t, e in controller_epochs} == {1, 2}


_CHANGED = re.compile(
    r"\[Controller id=\d+ epoch=\d+\] Changed partition (\S+)-(\d+) from \w+ to OnlinePartition with state "
    r"LeaderAndIsr\(leader=(\d+), leaderEpoch=(\d+), isr=List\(([\d, ]*)\), zkVersion=(\d+)\)"
)
_SHUTTING = re.compile(r"\[Controller id=(\d+)\] (?:Shutting down broker (\d+)|Removed (\d+) from list|Resigned)")


def test_each_election_line_carries_the_isr_and_znode_version_it_wrote(small_logs):
    """A ``Changed partition`` line is the state the controller has just written: its zkVersion is the
    version of that write (``KafkaZkClient.updateLeaderAndIsr``: ``withZkVersion(stat.getVersion)``), so a
    partition's versions rise from line to line; and an election during a broker's controlled shutdown
    leaves it out of the ISR (``Election.leaderForControlledShutdown``: ``isr.filter(!shuttingDown)``).
    The lines once carried the ISR and version of the end of the window: a version repeated, the shutting
    down broker still in the ISR."""
    shutting = {}  # broker -> [start, end] of its controlled shutdown, from the controller's log: to
    for b in (1, 2, 3):  # "Removed <b> from list of shutting down brokers", or the controller's "Resigned"
        for t, _r, _f, _n, msg in _records_in_order(small_logs, b, ("controller",)):
            m = _SHUTTING.search(msg)
            if m and m.group(2):
                shutting.setdefault(int(m.group(2)), []).append([t, None])
            elif (
                m
                and int(m.group(3) or m.group(1)) in shutting
                and shutting[int(m.group(3) or m.group(1))][-1][1] is None
            ):
                shutting[int(m.group(3) or m.group(1))][-1][1] = t
    assert sorted(shutting) == [1, 2, 3] and all(end is not None for w in shutting.values() for _s, end in w)
    versions, during = defaultdict(list), 0
    for b in (1, 2, 3):
        for t, _r, f, n, msg in _records_in_order(small_logs, b, ("state-change",)):
            m = _CHANGED.search(msg)
            if not m:
                continue
            tp = (m.group(1), int(m.group(2)))
            leader, isr = int(m.group(3)), [int(x) for x in m.group(5).split(", ") if x]
            versions[tp].append((t, int(m.group(4)), int(m.group(6))))
            assert leader in isr, (f, n, msg)
            for gone, windows in shutting.items():
                if any(start <= t <= end for start, end in windows):
                    during += 1
                    assert gone not in isr and leader != gone, (gone, f, n, msg)
    assert during >= 2
    for tp, vs in versions.items():
        vs.sort()
        assert all(e1 < e2 and z1 < z2 for (_a, e1, z1), (_b, e2, z2) in itertools.pairwise(vs)), (tp, vs)


def _request_partitions(d: dict):
    """``(topic, partition, request state, response state)`` of a Fetch request line's JSON."""
    answers = {
        (t["topic"], p["partition"]): p
        for t in (d["response"] or {}).get("responses", [])
        for p in t["partitionResponses"]
    }
    for t in d["request"]["topics"]:
        for p in t["partitions"]:
            yield t["topic"], p["partition"], p, answers.get((t["topic"], p["partition"]))


def test_the_request_log_offsets_go_on_from_one_window_copy_to_the_next(small_logs):
    """The request log's offsets and epochs continue across window copies: per broker and partition, the
    high watermark its Fetch answers give never falls; a follower's fetch offset falls only to the offset
    it truncated to meanwhile; the broker epoch a broker's requests carry never falls, and grows at its
    restart."""
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    truncated = defaultdict(list)  # (replica, tp) -> [(time, offset)]
    for b in (1, 2, 3):
        for t, _r, _f, _n, msg in _records_in_order(small_logs, b, ("server",)):
            m = _TRUNCATES.search(msg)
            if m:
                truncated[(b, m.group(1), int(m.group(2)))].append((t, int(m.group(3))))
    answered, fell = 0, 0
    broker_epoch = defaultdict(list)
    for b in (1, 2, 3):
        hw, fetch = {}, {}  # per tp: the last high watermark; per follower and tp: its last fetch
        for t, _r, f, n, msg in _records_in_order(small_logs, b, ("kafka-request",)):
            d = json.loads(msg[len("Completed request:") :])
            api = d["requestHeader"]["requestApiKeyName"]
            if api in ("LEADER_AND_ISR", "UPDATE_METADATA", "STOP_REPLICA"):
                broker_epoch[b].append((t, d["request"]["brokerEpoch"]))
            elif api in ("ALTER_ISR", "CONTROLLED_SHUTDOWN"):
                broker_epoch[d["request"]["brokerId"]].append((t, d["request"]["brokerEpoch"]))
            if api != "FETCH":
                continue
            replica = d["request"]["replicaId"]
            sent = t - _dt.timedelta(milliseconds=d["totalTimeMs"] + 1)
            for topic, part, req, resp in _request_partitions(d):
                key = (replica, topic, part)
                if replica >= 0 and key in fetch:  # a follower's fetch offset: its log end offset
                    offset, before = req["fetchOffset"], fetch[key]
                    if offset < before[1]:  # only to a truncation's offset, after the fetch before
                        since = [o for when, o in truncated[key] if before[0] <= when <= t]
                        assert since and offset >= min(since), (b, f, n, topic, part)
                        fell += 1
                if replica >= 0:
                    fetch[key] = (sent, req["fetchOffset"])
                if resp is not None and resp["errorCode"] == 0:
                    assert resp["highWatermark"] >= hw.get((topic, part), 0), (b, f, n, topic, part)
                    hw[(topic, part)] = resp["highWatermark"]
                    answered += 1
    assert answered > 1000 and fell > 0
    # each restart registers the broker with a new epoch, above every other: 2, 3, 4 in turn
    restarted = {r["broker"]: r["broker_epoch"] for r in truth["restarts"]}
    assert sorted(restarted.values()) == [2, 3, 4]
    for b, carried in broker_epoch.items():
        values = [e for _t, e in sorted(carried)]
        assert values == sorted(values) and values[0] == 1 and values[-1] == restarted[b], b


def test_a_spike_holds_a_leader_and_isr_that_comes_through_the_data_plane(small_logs):
    """What the scenario is built to show: a spike holds a broker's LeaderAndIsr when it comes through the broker's
    data plane, which is every broker's while the controller (broker 1) does not name CONTROLLER, broker 2's
    control plane notwithstanding; a LeaderAndIsr on a control plane (the listener the broker itself names) never
    waits. (In this run the new controller, broker 3, does not name it either: see the committed sample for one
    that does.)"""
    truth = json.loads((small_logs / "ground-truth.json").read_text())
    cp_listener = {int(b): "CONTROLLER" if has else None for b, has in truth["control_plane"].items()}
    rows = [r for r in truth["requests"] if r["api"] == "LEADER_AND_ISR"]
    data = {}
    for r in rows:
        if r["listener"] == cp_listener[r["broker"]]:
            assert r["requestQueueTimeMs_p99"] < 1.0, r
        else:
            data[r["broker"]] = max(data.get(r["broker"], 0.0), r["requestQueueTimeMs_p99"])
    assert sorted(data) == [1, 2, 3] and min(data.values()) > 1.0


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

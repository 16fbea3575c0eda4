"""``kafka-lab analyze`` on Spark: what it writes (every table whole, or nothing), what it says about input
that is not Kafka's, and the answers ``summary.json`` gives, against the generator's ground truth."""

import json
import os
import shutil
from pathlib import Path

import pytest

from kafka_lab.cli import main
from kafka_lab.logs.sample import ground_truth, sample_dir
from kafka_lab.spark import pipeline

pytestmark = pytest.mark.slow


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_summary_answers_lab_08s_questions(spark, tmp_path, capsys):
    """From the command line alone: the brokers without the control plane, each broker's LeaderAndIsr p99
    queue time, the records truncated per partition (and acknowledged), the controller's moves, the log mode."""
    out = tmp_path / "out"
    assert main(["analyze", str(sample_dir()), "--out", str(out)]) == 0
    capsys.readouterr()
    s = json.loads((out / "summary.json").read_text())
    t = ground_truth()
    assert {k: s[k] for k in t["lines"]} == t["lines"]
    assert s["brokers_without_control_plane"] == sorted(int(b) for b, cp in t["control_plane"].items() if not cp)
    want = {
        str(r["broker"]): r["requestQueueTimeMs_p99"] for r in t["controller_requests"] if r["api"] == "LEADER_AND_ISR"
    }
    got = {b: v["leader_and_isr_queue_p99_ms"] for b, v in s["brokers"].items()}
    assert got == pytest.approx(want, abs=1e-3)
    assert {v["mode"] for v in s["brokers"].values()} == {"zookeeper"}
    per_partition = {}
    for r in t["truncations"]:
        key = (r["topic"], r["partition"])
        a = per_partition.setdefault(key, [0, 0])
        a[0] += r["records"]
        a[1] += r["acknowledged"]
    assert {(r["topic"], r["partition"]): [r["records"], r["acknowledged"]] for r in s["truncated"]} == per_partition
    assert s["acknowledged_then_truncated"] == sum(a for _r, a in per_partition.values())
    moves = [(m["event"], m["broker"], m["epoch"]) for m in s["controller_moves"]]
    want_moves = [
        (c["event"], c["controller"], c.get("epoch") if c["event"] == "elected" else None) for c in t["controllers"]
    ]
    assert moves == want_moves
    assert s["tables"]["records"] == t["lines"]["records"] and s["rejected_share"] == pytest.approx(
        t["lines"]["rejected"] / t["lines"]["lines_read"], abs=1e-6
    )
    # the tables open without Spark (pyarrow)
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    assert len(pd.read_parquet(out / "requests")) == s["tables"]["requests"]


def test_summary_of_a_log_outside_any_broker_directory(spark, tmp_path):
    """A log file outside any ``broker-<id>/`` directory (broker null) beside a broker's: summary.json keys it
    ``"None"`` and lists it as ``None``; pandas gave that broker as NaN and the others as floats (keys
    ``"nan"``, ``"2.0"``, then ``int("None")`` failed the run)."""
    logs = tmp_path / "logs"
    (logs / "broker-2").mkdir(parents=True)
    shutil.copy(sample_dir() / "broker-1" / "server.log.gz", logs / "server.log.gz")
    shutil.copy(sample_dir() / "broker-2" / "server.log.gz", logs / "broker-2" / "server.log.gz")
    s = pipeline.analyze(spark, str(logs), str(tmp_path / "out"))
    cp = ground_truth()["control_plane"]
    assert {b: (v["mode"], v["control_plane"]) for b, v in s["brokers"].items()} == {
        "None": ("zookeeper", cp["1"]),
        "2": ("zookeeper", cp["2"]),
    }
    assert (cp["1"], cp["2"]) == (False, True)  # the sample: broker 1 has no control plane, broker 2 has one
    assert s["brokers_without_control_plane"] == [None]


def test_overwrite_replaces_only_the_tables(spark, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "records").mkdir(parents=True)
    (out / "records" / "old.parquet").write_text("an earlier run's table")
    (out / "notes.txt").write_text("a user's notes")
    assert main(["analyze", str(sample_dir()), "--out", str(out), "--overwrite"]) == 0
    capsys.readouterr()
    assert (out / "notes.txt").read_text() == "a user's notes"
    assert not (out / "records" / "old.parquet").exists()
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(
        [*pipeline.TABLES, "summary.json", "notes.txt"]
    )


def test_a_failed_run_leaves_out_as_it_was(spark, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "records").mkdir()
    (out / "records" / "kept.parquet").write_text("the last good run's table")
    before = _tree(out)

    def broken(records):
        raise RuntimeError("the truncations table failed")

    monkeypatch.setattr(pipeline, "_truncations", lambda records, state_changes: broken(records))
    with pytest.raises(RuntimeError, match="truncations"):
        pipeline.analyze(spark, str(sample_dir()), str(out), overwrite=True)
    assert _tree(out) == before and sorted(os.listdir(out)) == ["records"]  # no half table, no staging left
    with pytest.raises(RuntimeError, match="truncations"):
        pipeline.analyze(spark, str(sample_dir()), str(tmp_path / "new"))
    assert not (tmp_path / "new").exists()  # an --out the run made is gone with it


def test_binary_input_is_reported_and_fails_above_the_threshold(spark, tmp_path, capsys):
    """A binary file read as text: every 'line' rejected; once exit 0 with no word."""
    logs = tmp_path / "logs" / "broker-1"
    logs.mkdir(parents=True)
    rng = __import__("random").Random(3)
    (logs / "server.log").write_bytes(bytes(rng.randrange(256) for _ in range(200_000)))
    (logs / "controller.log").write_text("[2024-03-04 10:00:00,000] INFO ok (kafka.controller.KafkaController)\n")
    assert main(["analyze", str(tmp_path / "logs"), "--out", str(tmp_path / "out")]) == 3
    err = capsys.readouterr().err
    assert "warning: " in err and "fit no Kafka log layout" in err and "broker-1/server.log (100%)" in err
    assert "above --max-rejected 0.5" in err
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert s["records"] == 1 and s["rejected_share"] > 0.99
    assert (
        main(["analyze", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--overwrite", "--max-rejected", "1"])
        == 0
    )


def test_a_line_too_long_is_rejected_with_its_file_and_line(spark, tmp_path, capsys):
    """A 100 MB line ended in Java's OutOfMemoryError (about 200 lines of Java) and an empty records table."""
    logs = tmp_path / "logs"
    logs.mkdir()
    huge = "[2024-03-04 10:00:01,000] INFO " + "x" * (pipeline.MAX_LINE_BYTES + 10) + " (kafka.server.KafkaServer)"
    with open(logs / "server.log", "w") as f:
        f.write("[2024-03-04 10:00:00,000] INFO before (kafka.server.KafkaServer)\n")
        f.write(huge + "\n")
        f.write("[2024-03-04 10:00:02,000] INFO after (kafka.server.KafkaServer)\n")
    assert main(["analyze", str(logs), "--out", str(tmp_path / "out"), "--max-rejected", "1"]) == 0
    err = capsys.readouterr().err
    assert "\tat " not in err and "Exception" not in err
    rejects = spark.read.parquet(str(tmp_path / "out" / "rejects")).collect()
    assert [(r.file, r.line, r.reason) for r in rejects] == [("logs/server.log", 2, "too_long")]
    assert rejects[0].text.encode()[: pipeline.KEPT_BYTES] == huge.encode()[: pipeline.KEPT_BYTES]
    assert len(rejects[0].text.encode()) <= pipeline.KEPT_BYTES
    recs = spark.read.parquet(str(tmp_path / "out" / "records")).orderBy("line").collect()
    assert [(r.line, r.message) for r in recs] == [(1, "before"), (3, "after")]


REAL = json.loads((Path(__file__).parent / "data" / "real_log_lines.json").read_text())


def test_kraft_lines_read_as_kafkas_events(spark, tmp_path):
    """Real KRaft lines (tests/data): elections, fencing, leaders moved, a resignation, each with the node,
    epoch, new leader and target broker its message names (docs/kafka-reference.md §4)."""
    cases = [c for c in REAL if "events" in c["expect"]]
    assert len(cases) >= 5
    for i, c in enumerate(cases):
        (tmp_path / f"case-{i}").mkdir()
        (tmp_path / f"case-{i}" / "controller.log").write_text("\n".join(c["lines"]) + "\n")
    t = pipeline.parse(spark, str(tmp_path))
    got = {}
    for r in t.controller_events.orderBy("file", "line").collect():
        got.setdefault(r.file.split("/")[0], []).append(
            [r.event, r.controller_id, r.epoch, r.new_leader, r.target_broker]
        )
    parts = {}
    for r in t.controller_events.where("partition is not null").orderBy("file", "line").collect():
        parts.setdefault(r.file.split("/")[0], []).append(r.partition)
    for i, c in enumerate(cases):
        assert got.get(f"case-{i}", []) == c["expect"]["events"], c["source"]
        if "partitions" in c["expect"]:
            assert parts[f"case-{i}"] == c["expect"]["partitions"]
    t.unpersist()


def test_each_brokers_log_mode(spark, tmp_path):
    from kafka_lab.spark import analyses

    for b, mode in ((1, "kraft"), (2, "zookeeper")):
        d = tmp_path / f"broker-{b}"
        d.mkdir()
        lines = [ln for c in REAL if c.get("mode") == mode and c["expect"]["records"] for ln in c["lines"]]
        (d / "server.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "broker-3").mkdir()
    (tmp_path / "broker-3" / "server.log").write_text(
        "[2024-03-04 10:00:00,000] INFO hello (kafka.utils.Log4jController)\n"
    )
    t = pipeline.parse(spark, str(tmp_path))
    assert analyses.log_modes(t.records) == {1: "kraft", 2: "zookeeper", 3: "unknown"}
    t.unpersist()


@pytest.mark.parametrize("mode", ["sample", "zookeeper", "kraft"])
def test_analyzes_small_tables_equal_those_parse_derives(spark, small_logs, tmp_path, mode):
    """``analyze`` derives ``state_changes``, ``controller_events``, ``truncations`` and the control plane from the
    records' Parquet it wrote (the files moved as they are and those written again); :func:`pipeline.parse` from
    the records in Spark's cache. Both give the same rows, on the sample (damaged files), on generated
    ZooKeeper-mode logs of whole records only, and on KRaft logs."""
    from kafka_lab.spark import analyses

    if mode == "sample":  # with damaged lines: some files' records are written again
        logs = sample_dir()
    elif mode == "zookeeper":  # only whole records: no file is written again
        logs = tmp_path / "logs"
        for f in small_logs.rglob("*.log*"):
            (logs / f.relative_to(small_logs)).parent.mkdir(parents=True, exist_ok=True)
            lines = f.read_text().splitlines(keepends=True)
            whole = [x for x in lines if x.startswith("[") and x.rstrip("\n").endswith(")")]
            (logs / f.relative_to(small_logs)).write_text("".join(whole))
    else:
        logs = tmp_path / "logs"
        assert main(["generate-logs", str(logs), "--mode", "kraft", "--quiet"]) == 0
    out = tmp_path / "out"
    s = pipeline.analyze(spark, str(logs), str(out))
    if mode == "zookeeper":  # every record read from the pass's own files, none written again
        assert s["continuations"] == s["rejected"] == 0
    every = pipeline.parse(spark, str(logs))
    try:
        for name in ("state_changes", "controller_events", "truncations"):
            written = spark.read.parquet(str(out / name))
            assert written.count() == s["tables"][name], name
            assert s["tables"][name] > 0 or (mode, name) == ("kraft", "truncations"), name  # 4.0's: UnifiedLog
            want = every.table(name).select(*written.columns)
            assert sorted(map(tuple, written.collect())) == sorted(map(tuple, want.collect())), name
        cp = analyses.control_plane(every.records)
        got = {b: v["control_plane"] for b, v in s["brokers"].items() if v["control_plane"] is not None}
        assert got == {analyses.broker_key(r.broker): bool(r.control_plane) for r in cp.itertuples()}
        assert len(cp) > 0 or mode == "kraft"  # the KRaft generator writes no acceptor lines
    finally:
        every.unpersist()

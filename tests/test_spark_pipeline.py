"""The Spark pipeline against the generator's ground truth, the reference parser and real lines.

One Spark session for the run (conftest ``spark``), small data (``small_logs``: 90 simulated seconds).
"""

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from kafka_lab.logs.parse import Parsed, parse_lines
from kafka_lab.logs.scenario import generate
from kafka_lab.spark import analyses
from kafka_lab.spark.pipeline import analyze, parse

pytestmark = pytest.mark.slow


def _truth(root):
    return json.loads((root / "ground-truth.json").read_text())


def test_lines_read_are_records_continuations_and_rejects(spark_tables, small_logs):
    c = spark_tables.counts()
    t = _truth(small_logs)["lines"]
    assert c == {k: t[k] for k in ("lines_read", "records", "continuations", "rejected")}
    assert c["lines_read"] == c["records"] + c["continuations"] + c["rejected"]
    # the KafkaConfig records carry their setting lines
    cfg = spark_tables.records.where("logger = 'kafka.server.KafkaConfig'").collect()
    # one per broker start: at the beginning, and again in the rolling restart
    starts = 3 + len(_truth(small_logs)["restarts"])
    assert len(cfg) == starts and all(r.continuations > 5 and "\tbroker.id = " in r.continuation for r in cfg)


def test_request_percentiles_agree_with_the_truth(spark_tables, small_logs):
    got = analyses.request_percentiles(spark_tables.requests)
    want = {(r["broker"], r["api"], r["listener"]): r for r in _truth(small_logs)["requests"]}
    assert len(got) == len(want)
    for row in got.to_dict("records"):
        w = want[(row["broker"], row["api"], row["listener"])]
        assert row["count"] == w["count"]
        for p in analyses.PHASES:
            for q in (50, 99):
                assert row[f"{p}_p{q}"] == pytest.approx(w[f"{p}_p{q}"], abs=1e-6), (row["broker"], row["api"], p, q)


def test_control_plane_is_found_from_each_brokers_start_up_lines(spark_tables, small_logs):
    """server.log's SocketServer lines name the plane of each listener; the request log cannot (the listener a
    LeaderAndIsr arrives on is the controller's choice: every broker got it on INTERNAL in this run)."""
    got = analyses.control_plane(spark_tables.records)
    truth = _truth(small_logs)["control_plane"]
    assert {str(b): cp for b, cp in zip(got["broker"], got["control_plane"])} == truth
    for row in got.to_dict("records"):
        assert row["control_plane_listener"] == ("CONTROLLER" if row["control_plane"] else None)
        others = ["EXTERNAL", "INTERNAL"] + ([] if row["control_plane"] else ["CONTROLLER"])
        assert row["data_plane_listeners"] == sorted(others)


def test_controller_request_waits(spark_tables, small_logs):
    got = analyses.controller_request_waits(spark_tables.requests)
    want = {
        (r["broker"], r["api"]): r["requestQueueTimeMs_p99"]
        for r in _truth(small_logs)["requests"]
        if r["api"] in ("LEADER_AND_ISR", "UPDATE_METADATA")
    }
    assert {(r["broker"], r["api"]): r["requestQueueTimeMs_p99"] for r in got.to_dict("records")} == pytest.approx(want)


def test_truncated_records_agree_with_the_truth(spark_tables, small_logs):
    got = analyses.truncated_records(spark_tables.truncations)
    want = {
        (t["broker"], t["topic"], t["partition"]): (t["events"], t["records"])
        for t in _truth(small_logs)["truncations"]
    }
    assert want
    assert {
        (r["broker"], r["topic"], r["partition"]): (r["events"], r["records"]) for r in got.to_dict("records")
    } == want
    # the records acknowledged, then lost: the old leaders' truncations, found from the logs alone (the move's
    # largest), against the simulation's ledger; per partition (a follower that had every record ties)
    acked_truth, acked_logs = Counter(), Counter()
    for t in _truth(small_logs)["truncations"]:
        acked_truth[t["topic"], t["partition"]] += t["acknowledged"]
    for r in got.to_dict("records"):
        acked_logs[r["topic"], r["partition"]] += r["acknowledged"]
    assert +acked_truth and acked_logs == acked_truth
    assert sum(acked_truth.values()) <= sum(t["records"] for t in _truth(small_logs)["truncations"])


def test_staleness_agrees_with_the_truth(spark_tables, small_logs):
    got = analyses.staleness_by_broker(spark_tables.state_changes, spark_tables.requests)
    want = {s["broker"]: s for s in _truth(small_logs)["staleness"]}
    assert all(s["never_applied"] == 0 for s in want.values())
    assert sorted(got["broker"]) == sorted(want)
    for r in got.to_dict("records"):
        w = want[r["broker"]]
        assert r["windows"] == w["windows"]
        # log4j writes whole milliseconds: decision and application are each truncated
        assert abs(r["max_ms"] - w["max_ms"]) < 1.0
        assert abs(r["p50_ms"] - w["p50_ms"]) < 1.0


def test_controller_events(spark_tables, small_logs):
    truth = _truth(small_logs)
    ev = Counter(r.event for r in spark_tables.controller_events.select("event").collect())
    moves = sum(n for name, n in truth["windows"].items() if name.startswith("move-"))
    restarts = sum(n for name, n in truth["windows"].items() if name.startswith("restart-"))
    assert restarts == 3  # the rolling restart fits in the 90 s
    # the start-up election, and the one when the controller's broker restarts
    assert ev["elected"] == ev["ready"] == 2
    # a preferred-replica election per move, and per restart (the broker gets its partitions back)
    assert ev["election_started"] == moves + restarts
    tl = analyses.controller_timeline(spark_tables.controller_events, spark_tables.state_changes, limit=None)
    assert tl["timestamp"].is_monotonic_increasing


def test_restarts_and_controller_changes_agree_with_the_truth(spark_tables, small_logs):
    """From controller.log alone: each election (who, which epoch, when) and each broker's restart."""
    truth = _truth(small_logs)
    start = pd.Timestamp(truth["start"])
    ch = analyses.controller_changes(spark_tables.controller_events)
    ms = ((ch["timestamp"] - start) / pd.Timedelta(milliseconds=1)).round().astype(int)
    elected = ch[ch["event"] == "elected"]
    want = [(c["time_ms"], c["controller"], c["epoch"]) for c in truth["controllers"] if c["event"] == "elected"]
    got = [
        (int(a), int(b), int(e)) for a, b, e in zip(ms[elected.index], elected["broker"], elected["epoch"], strict=True)
    ]
    assert got == want
    resigned = ch[ch["event"] == "resigned"]
    want = [(c["time_ms"], c["controller"]) for c in truth["controllers"] if c["event"] == "resigned"]
    assert [(int(a), int(b)) for a, b in zip(ms[resigned.index], resigned["broker"], strict=True)] == want
    # each restart: the controller logs the controlled shutdown as it starts, and the start-up after it
    down = ch[ch["event"] == "controlled_shutdown"]
    assert list(down["target_broker"]) == [r["broker"] for r in truth["restarts"]]
    assert list(ms[down.index]) == [r["shutting_down_ms"] for r in truth["restarts"]]
    up = ch[ch["event"] == "broker_startup"]
    assert list(up["target_broker"]) == [r["broker"] for r in truth["restarts"]]
    assert all(0 <= a - r["started_ms"] < 10 for a, r in zip(ms[up.index], truth["restarts"], strict=True))
    # the controller's own restart has no broker-failure line: it resigned, and the next one never knew it live
    failed = ch[ch["event"] == "broker_failure"]
    assert list(failed["target_broker"]) == [r["broker"] for r in truth["restarts"]][:-1]


def test_damaged_logs_split_across_tasks(spark, tmp_path):
    """Rejects keep their file and line number even when Spark reads a file in many splits."""
    truth = generate(tmp_path, hours=20 / 3600, brokers=3, seed=9, damage=0.05, event_every_s=10)
    ref = Parsed()
    for f in sorted(tmp_path.glob("broker-*/*.log*")):
        with open(f) as fh:
            parse_lines(fh, f"{f.parent.name}/{f.name}", ref)
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(256 * 1024))
    try:
        assert spark.read.text(str(tmp_path / "broker-1" / "kafka-request.log")).rdd.getNumPartitions() > 1
        t = parse(spark, str(tmp_path))
        c = t.counts()
        rejects = sorted((r.file, r.line) for r in t.rejects.collect())
        conts = {(r.file, r.line): r.continuations for r in t.records.where("continuations > 0").collect()}
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)
        t.unpersist()
    assert c == {k: truth["lines"][k] for k in c}
    assert truth["lines"]["rejected"] > 0 and truth["lines"]["continuations"] > 0
    assert rejects == sorted((f, n) for f, n, _t in ref.rejected)
    assert conts == {(r.file, r.line): r.continuations for r in ref.records if r.continuations}


def test_real_lines_read_as_the_reference_parser_reads_them(spark, tmp_path):
    from pathlib import Path

    cases = json.loads((Path(__file__).parent / "data" / "real_log_lines.json").read_text())
    for i, case in enumerate(cases):
        d = tmp_path / f"case-{i}"
        d.mkdir()
        (d / "server.log").write_text("\n".join(case["lines"]) + "\n")
    t = parse(spark, str(tmp_path))
    recs = {}
    for r in t.records.orderBy("file", "line").collect():
        recs.setdefault(r.file, []).append(r)
    for i, case in enumerate(cases):
        ref = parse_lines(case["lines"])
        got = recs.get(f"case-{i}/server.log", [])
        assert [
            (r.line, r.level, r.logger, r.message, r.container, r.container_time, r.thread, r.continuations, r.prefix)
            for r in got
        ] == [
            (r.line, r.level, r.logger, r.message, r.container, r.container_time, r.thread, r.continuations, r.prefix)
            for r in ref.records
        ], case["source"]
    assert t.counts()["lines_read"] == sum(len(c["lines"]) for c in cases)


TRICKY = json.loads((Path(__file__).parent / "data" / "tricky_lines.json").read_text())


@pytest.fixture(scope="module")
def tricky(spark, tmp_path_factory):
    """Every case of tests/data/tricky_lines.json as a file of its own (the text's exact bytes), parsed
    once by the pipeline: per case, its records, rejects and counts."""
    from pyspark.sql import functions as F

    root = tmp_path_factory.mktemp("tricky")
    for c in TRICKY:
        (root / c["id"]).mkdir()
        (root / c["id"] / "server.log").write_bytes(c["text"].encode("utf-8"))
    t = parse(spark, str(root))
    ts = F.date_format("timestamp", "yyyy-MM-dd HH:mm:ss,SSS").alias("ts")
    got = {c["id"]: {"records": [], "rejects": [], "kinds": Counter()} for c in TRICKY}
    for r in (
        t.records.select(
            "file", "line", ts, "level", "logger", "message", "continuations", "prefix", "source_line", "thread"
        )
        .orderBy("file", "line")
        .collect()
    ):
        got[r.file.split("/")[0]]["records"].append(
            (r.line, r.ts, r.level, r.logger, r.message, r.continuations, r.prefix, r.source_line, r.thread)
        )
    for r in t.rejects.orderBy("file", "line").collect():
        got[r.file.split("/")[0]]["rejects"].append((r.line, r.text))
    for r in t.irregular.groupBy("file", "status").count().collect():
        got[r.file.split("/")[0]]["kinds"][r.status] = r["count"]
    got["_lines_read"] = t.lines_read
    t.unpersist()
    return got


@pytest.mark.parametrize("case", TRICKY, ids=[c["id"] for c in TRICKY])
def test_tricky_lines_read_as_the_reference_parser_reads_them(tricky, case):
    """Impossible dates, line terminators other than \\n, non-ASCII digits and letters, CR line endings, a
    cut head: each line is a record, a continuation or rejected alike in both parsers (Java's regex with
    UNIX_LINES, Python's with re.ASCII; lines split at \\n, \\r\\n and \\r by both)."""
    ref = parse_lines(case["text"], "server.log")
    got = tricky[case["id"]]
    assert got["records"] == [
        (r.line, r.timestamp, r.level, r.logger, r.message, r.continuations, r.prefix, r.source_line, r.thread)
        for r in ref.records
    ], case["why"]
    assert got["rejects"] == [(n, text) for _f, n, text in sorted(ref.rejected, key=lambda x: x[1])]
    assert got["kinds"]["continuation"] == ref.continuations
    e = case["expect"]
    assert (len(got["records"]), ref.continuations, len(got["rejects"])) == (
        e["records"],
        e["continuations"],
        e["rejected"],
    )


def test_tricky_lines_are_all_counted(tricky):
    assert tricky["_lines_read"] == sum(parse_lines(c["text"]).lines_read for c in TRICKY)


def test_analyze_completes_with_an_impossible_date(spark, tmp_path):
    """Spark 4's to_timestamp throws on 2024-02-30; the record stays a record, its timestamp null."""
    d = tmp_path / "logs"
    d.mkdir()
    lines = [
        "[2024-13-45 99:99:99,000] INFO hi (kafka.server)",
        "[2024-02-30 10:00:00,000] INFO ho (kafka.server)",
        "[2024-03-04 10:00:00,000] INFO ok (kafka.server)",
    ]
    (d / "server.log").write_text("\n".join(lines) + "\n")
    summary = analyze(spark, str(d), str(tmp_path / "out"))
    assert {k: summary[k] for k in ("lines_read", "records", "continuations", "rejected")} == {
        "lines_read": 3,
        "records": 3,
        "continuations": 0,
        "rejected": 0,
    }
    got = spark.read.parquet(str(tmp_path / "out" / "records")).orderBy("line").collect()
    assert [(r.message, r.timestamp is None) for r in got] == [("hi", True), ("ho", True), ("ok", False)]


def test_every_pattern_reaches_java_with_unix_lines():
    """The pipeline's regular expressions all go through _rlike/_extract/_replace, which add (?d)."""
    import inspect
    import re

    from kafka_lab.spark import pipeline

    src = inspect.getsource(pipeline)
    assert len(re.findall(r"F\.regexp_extract\(|F\.regexp_replace\(|\.rlike\(|F\.rlike\(", src)) == 3
    assert pipeline.JAVA_FLAGS == "(?d)"


def test_the_older_text_request_log(spark, tmp_path):
    truth = generate(tmp_path, hours=6 / 3600, brokers=2, seed=4, request_format="text", event_every_s=3)
    req = parse(spark, str(tmp_path)).requests
    got = analyses.request_percentiles(req, phases=("totalTimeMs", "requestQueueTimeMs"))
    want = {(r["broker"], r["api"], r["listener"]): r for r in truth["requests"]}
    assert len(got) == len(want)
    for row in got.to_dict("records"):
        w = want[(row["broker"], row["api"], row["listener"])]
        assert row["count"] == w["count"]
        assert row["totalTimeMs_p99"] == pytest.approx(w["totalTimeMs_p99"], abs=1e-6)


def test_analyze_cli_writes_tables_and_summary(spark, small_logs, tmp_path):
    from kafka_lab.cli import main

    out = tmp_path / "out"
    assert main(["analyze", str(small_logs), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    t = _truth(small_logs)["lines"]
    assert {k: summary[k] for k in ("lines_read", "records", "continuations", "rejected")} == {
        k: t[k] for k in ("lines_read", "records", "continuations", "rejected")
    }
    assert summary["tables"]["records"] == t["records"]
    assert summary["tables"]["rejects"] == t["rejected"]
    assert spark.read.parquet(str(out / "requests")).count() == summary["tables"]["requests"] > 0


def test_analyze_cli_unreadable_input(spark, tmp_path, capsys):
    from kafka_lab.cli import main

    assert main(["analyze", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "no log directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["analyze", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    assert "kafka-lab analyze:" in capsys.readouterr().err


def test_bad_quantiles_and_phases(spark_tables):
    with pytest.raises(ValueError, match="between 0 and 1"):
        analyses.request_percentiles(spark_tables.requests, quantiles=(99,))
    with pytest.raises(ValueError, match="unknown phase"):
        analyses.request_percentiles(spark_tables.requests, phases=("latency",))


def test_analyze_cli_corrupt_gzip(spark, tmp_path, capsys):
    """A file Spark cannot read (a .gz that is not gzip) is a message and exit status 2, not a Java trace."""
    from kafka_lab.cli import main

    d = tmp_path / "logs" / "broker-1"
    d.mkdir(parents=True)
    (d / "server.log.gz").write_bytes(b"this is not gzip\n" * 10)
    assert main(["analyze", str(tmp_path / "logs"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-lab analyze: cannot read the Kafka logs under ") and "\tat " not in err
    # the one line names the file and what is wrong with it (the root of Spark's chain of causes)
    assert "broker-1/server.log.gz" in err and err.rstrip().endswith("(java.io.IOException: not a gzip file)"), err
    assert "SQLSTATE" not in err and err.count("\n") == 1


def test_request_json_fields_whatever_the_bodies_hold_and_in_any_key_order(spark, tmp_path):
    """``requests`` reads the header and times from the short parts of Kafka's JSON (before the first
    ``,"request":``, after the last ``,"connection":``): a body holding a ``"connection"`` key of its own,
    or a ``,"request":`` inside a string, must not move them; another key order is parsed whole."""
    head = '{"isForwarded":false,"requestHeader":{"requestApiKey":6,"requestApiVersion":7,"correlationId":7,"clientId":"p","requestApiKeyName":"UPDATE_METADATA"}'
    tail = (
        '"127.0.0.1:9092-10.0.0.9:5-1","totalTimeMs":12.5,"requestQueueTimeMs":3.25,"localTimeMs":1.0,'
        '"remoteTimeMs":8.0,"throttleTimeMs":0,"responseQueueTimeMs":0.125,"sendTimeMs":0.125,'
        '"securityProtocol":"PLAINTEXT","principal":"User:ANONYMOUS","listener":"PLAINTEXT",'
        '"clientInformation":{"softwareName":"x","softwareVersion":"1"}}'
    )
    nested = ',"request":{"connection":"not this","note":",\\"request\\":"},"response":{"connection":"nor this"},"connection":'
    reordered = '{"connection":' + tail[:-1] + "," + head[1:] + ',"request":{},"response":{}}'
    bodies = [head + nested + tail, reordered]
    lines = [
        f"[2024-03-04 00:00:0{i},000] DEBUG Completed request:{b} (kafka.request.logger)" for i, b in enumerate(bodies)
    ]
    (tmp_path / "kafka-request.log").write_text("\n".join(lines) + "\n")
    got = parse(spark, str(tmp_path)).requests.orderBy("line").collect()
    assert len(got) == 2
    for r in got:
        assert (r.api, r.api_version, r.correlation_id, r.client_id) == ("UPDATE_METADATA", 7, 7, "p")
        assert r.connection == "127.0.0.1:9092-10.0.0.9:5-1" and r.listener == "PLAINTEXT"
        assert (r.totalTimeMs, r.requestQueueTimeMs, r.sendTimeMs) == (12.5, 3.25, 0.125)
    assert got[0].request == '{"connection":"not this","note":",\\"request\\":"}'
    # a client request's body is not cut out: it stays in the records' message
    produce = [
        ln.replace('"requestApiKey":6', '"requestApiKey":0').replace("UPDATE_METADATA", "PRODUCE") for ln in lines
    ]
    (tmp_path / "kafka-request.log").write_text("\n".join(produce) + "\n")
    got = parse(spark, str(tmp_path)).requests.orderBy("line").collect()
    assert [(r.api, r.request) for r in got] == [("PRODUCE", None), ("PRODUCE", None)]
    assert got[0].totalTimeMs == 12.5

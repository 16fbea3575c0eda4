"""The generated logs' formats, against Kafka's own configuration and source, and real log lines.

Independent truths: Kafka 2.8's ``config/log4j.properties`` (copied in tests/data), the key order of
``RequestConvertToJson.requestDescMetrics`` and the field order of 2.7's text request log
(docs/kafka-reference.md §4), real lines from public issue reports (tests/data/real_log_lines.json),
and a real line whose container timestamp and log4j date name the same instant.
"""

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from kafka_lab.logs import layout
from kafka_lab.logs.damage import Damage
from kafka_lab.logs.parse import parse_lines, parse_timestamp
from kafka_lab.logs.render import FILES

DATA = Path(__file__).parent / "data"


def _log4j():
    props = {}
    for line in (DATA / "kafka-2.8-log4j.properties").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            k, v = line.split("=", 1)
            props[k.strip()] = v.strip()
    return props


def test_every_kafka_appender_uses_our_layout():
    props = _log4j()
    patterns = {v for k, v in props.items() if k.endswith("layout.ConversionPattern")}
    assert patterns == {layout.LAYOUT}


def test_file_names_and_rolling_are_kafkas():
    props = _log4j()
    files = {v.rsplit("/", 1)[1] for k, v in props.items() if k.endswith(".File")}
    assert {f"{f}.log" for f in FILES} <= files
    # every file appender rolls hourly, DailyRollingFileAppender with '.'yyyy-MM-dd-HH
    roll = {v for k, v in props.items() if k.endswith(".DatePattern")}
    assert roll == {"'.'yyyy-MM-dd-HH"}


def test_log4j_date_of_a_real_line():
    # Yolean/kubernetes-kafka#261: docker's UTC timestamp 2019-04-11T12:32:24.676797004Z and log4j's
    # [2019-04-11 12:32:24,676] are the same instant (the broker ran in UTC): milliseconds are truncated
    ms = 1554985944676.797
    assert layout.format_timestamp(ms) == "2019-04-11 12:32:24,676"
    assert layout.TimestampFormatter()(ms) == "[2019-04-11 12:32:24,676]"


@pytest.mark.parametrize("lay", [layout.LAYOUT, layout.TEST_LAYOUT, layout.STRIMZI_LAYOUT])
def test_each_layout_round_trips(lay):
    line = layout.record_line(
        1554985944676, "WARN", "[Broker id=1] a (message) with (parens)", "state.change.logger", layout=lay
    )
    p = parse_lines([line])
    (r,) = p.records
    assert (r.timestamp, r.level, r.logger, r.message) == (
        "2019-04-11 12:32:24,676",
        "WARN",
        "state.change.logger",
        "[Broker id=1] a (message) with (parens)",
    )


def test_record_line_rejects_unknown_level_and_layout():
    with pytest.raises(ValueError, match="level must be one of"):
        layout.record_line(0, "NOTICE", "m", "c")
    with pytest.raises(ValueError, match="unknown layout"):
        layout.record_line(0, "INFO", "m", "c", layout="%m%n")


CASES = json.loads((DATA / "real_log_lines.json").read_text())


@pytest.mark.parametrize(
    "case", CASES, ids=[c["source"].rsplit("/", 3)[-3] + "-" + c["source"].rsplit("/", 1)[-1] for c in CASES]
)
def test_real_lines(case):
    p = parse_lines(case["lines"], "real.log")
    e = case["expect"]
    assert (len(p.records), p.continuations, len(p.rejected)) == (e["records"], e["continuations"], e["rejected"])
    assert p.lines_read == len(p.records) + p.continuations + len(p.rejected) == len(case["lines"])
    assert [r.logger for r in p.records] == e["loggers"]
    for key, attr in (
        ("levels", "level"),
        ("threads", "thread"),
        ("containers", "container"),
        ("container_times", "container_time"),
        ("timestamps", "timestamp"),
        ("source_lines", "source_line"),
        ("prefixes", "prefix"),
    ):
        if key in e:
            assert [getattr(r, attr) for r in p.records] == e[key]
    if "rejected_lines" in e:
        assert [n for _f, n, _t in p.rejected] == e["rejected_lines"]


# -- the request log ---------------------------------------------------------------------------------
#: RequestConvertToJson.requestDescMetrics (2.8): the keys of a request-log line, in order
JSON_KEYS = [
    "isForwarded",
    "requestHeader",
    "request",
    "response",
    "connection",
    "totalTimeMs",
    "requestQueueTimeMs",
    "localTimeMs",
    "remoteTimeMs",
    "throttleTimeMs",
    "responseQueueTimeMs",
    "sendTimeMs",
    "securityProtocol",
    "principal",
    "listener",
    "clientInformation",
]
PHASES = ["requestQueueTimeMs", "localTimeMs", "remoteTimeMs", "throttleTimeMs", "responseQueueTimeMs", "sendTimeMs"]


def _request_lines(root: Path):
    for f in sorted(root.glob("broker-*/kafka-request.log*")):
        yield from f.read_text().splitlines()


def test_json_request_lines_follow_kafka(small_logs):
    n = 0
    for line in _request_lines(small_logs):
        (r,) = parse_lines([line]).records
        assert (r.level, r.logger) == ("DEBUG", "kafka.request.logger")
        assert r.message.startswith("Completed request:{")
        d = json.loads(r.message[len("Completed request:") :])
        assert list(d) == JSON_KEYS
        assert list(d["requestHeader"]) == [
            "requestApiKey",
            "requestApiVersion",
            "correlationId",
            "clientId",
            "requestApiKeyName",
        ]
        assert isinstance(d["throttleTimeMs"], int)  # a LongNode
        # the phases partition the total; each is truncated to the microsecond (nanosToMs)
        gap = d["totalTimeMs"] - sum(d[k] for k in PHASES)
        assert -1e-9 <= gap < 0.006 + 1e-9, line
        n += 1
    assert n > 1000


def test_correlation_ids_never_repeat_per_client_and_broker(small_logs):
    # the windows are written again and again: each copy continues every client's correlation ids
    seen = set()
    n = 0
    for f in sorted(small_logs.glob("broker-*/kafka-request.log*")):
        for line in f.read_text().splitlines():
            d = json.loads(line[line.index("{") : line.rindex("}") + 1])
            h = d["requestHeader"]
            key = (f.parent.name, h["clientId"], h["correlationId"], h["requestApiKeyName"])
            assert key not in seen, key
            seen.add(key)
            n += 1
    assert len(seen) == n > 1000


TEXT_FIELDS = re.compile(
    r"^Completed request:RequestHeader\(apiKey=(\w+), apiVersion=\d+, clientId=[^,]*, correlationId=\d+\) -- \{.*\},response:.* "
    r"from connection \S+;totalTime:[\d.]+,requestQueueTime:[\d.]+,localTime:[\d.]+,remoteTime:[\d.]+,throttleTime:\d+,"
    r"responseQueueTime:[\d.]+,sendTime:[\d.]+,securityProtocol:\w+,principal:User:\w+,listener:\w+,"
    r"clientInformation:ClientInformation\(softwareName=[\w-]+, softwareVersion=[\w.]+\)$"
)


def test_text_request_log_has_27s_field_order(tmp_path):
    from kafka_lab.logs.scenario import generate

    generate(tmp_path, hours=20 / 3600, brokers=3, seed=3, request_format="text")
    lines = list(_request_lines(tmp_path))
    assert len(lines) > 100
    for line in lines:
        (r,) = parse_lines([line]).records
        assert TEXT_FIELDS.match(r.message), r.message[:300]


# -- damage ------------------------------------------------------------------------------------------
def test_damage_is_read_as_it_is_counted():
    d = Damage(0.5, seed=4)
    line = layout.record_line(
        0, "INFO", "[Broker id=1] Handling LeaderAndIsr request correlationId 3", "state.change.logger"
    )
    cut = [d.cut(line) for _ in range(50)]
    garbage = [d.garbage() for _ in range(50)]
    _lvl, head, trace = d.stack_trace(1, 2)
    p = parse_lines(cut + garbage)
    assert len(p.rejected) == 100 and not p.records
    p = parse_lines([layout.format_timestamp(0).join("[]") + head, *trace])
    assert (len(p.records), p.continuations, len(p.rejected)) == (1, len(trace), 0)
    assert d.counts["cut_lines"] == 50 and d.counts["garbage_lines"] == 50


def test_damage_fraction_is_checked():
    with pytest.raises(ValueError, match=r"between 0 and 0\.5"):
        Damage(0.9)


# -- lines both parsers must read alike (tests/data/tricky_lines.json; Spark: test_spark_pipeline.py) ------
TRICKY = json.loads((DATA / "tricky_lines.json").read_text())


def _reads(text: str, tmp_path: Path):
    """The reference parser on ``text`` given the ways a caller gives it: the whole text, a file opened in
    the default newline mode, a file opened with ``newline="\\n"``, and a list of the file's lines."""
    f = tmp_path / "server.log"
    f.write_bytes(text.encode("utf-8"))
    yield "text", parse_lines(text)
    with open(f, encoding="utf-8") as fh:
        yield "open()", parse_lines(fh)
    with open(f, encoding="utf-8", newline="\n") as fh:
        yield "open(newline='\\n')", parse_lines(fh)
    pieces = text.split("\n")
    yield "list", parse_lines(pieces[:-1] if text.endswith("\n") else pieces)  # no line after the final newline


@pytest.mark.parametrize("case", TRICKY, ids=[c["id"] for c in TRICKY])
def test_tricky_lines(case, tmp_path):
    e = case["expect"]
    for how, p in _reads(case["text"], tmp_path):
        got = (len(p.records), p.continuations, len(p.rejected))
        assert got == (e["records"], e["continuations"], e["rejected"]), (how, case["why"])
        assert p.lines_read == sum(got)
        if "timestamps" in e:
            assert [r.timestamp for r in p.records] == e["timestamps"], how
        if "prefixes" in e:
            assert [r.prefix for r in p.records] == e["prefixes"], how
        if "containers" in e:
            assert [r.container for r in p.records] == e["containers"], how


def test_an_impossible_date_is_a_record_with_no_time():
    # Spark reads it as a record with a null timestamp (try_to_timestamp); the reference parser agrees
    p = parse_lines(
        ["[2024-13-45 99:99:99,000] INFO hi (kafka.server)", "[2024-02-30 10:00:00,000] INFO ho (kafka.server)"]
    )
    assert [(r.timestamp, r.message, r.logger) for r in p.records] == [
        (None, "hi", "kafka.server"),
        (None, "ho", "kafka.server"),
    ]
    assert (p.lines_read, p.continuations, p.rejected) == (2, 0, [])
    assert parse_timestamp("2024-02-30 10:00:00,000") is None
    assert parse_timestamp("2024-02-29 10:00:00,042") == dt.datetime(2024, 2, 29, 10, 0, 0, 42000, tzinfo=dt.UTC)


def test_a_rejected_head_is_kept_whole():
    line = "[2024-03-04 10:00:00,000] INFO cut sho"
    p = parse_lines([line, "\tat x.Y.z(Y.java:1)"], "server.log")
    assert p.rejected == [("server.log", 1, line), ("server.log", 2, "\tat x.Y.z(Y.java:1)")]
    assert not p.records


def test_rejects_are_listed_in_line_order():
    """A head without its logger is rejected only when its group ends, after lines rejected meanwhile: the
    rejects still come in the file's line order."""
    head = "[2024-03-04 10:00:00,000] INFO cut sho"
    lines = [head, "\tat x.Y.z(Y.java:1)", "garbage", "\tat x.Y.w(Y.java:2)", "[2024-03-04 10:00:01,000] INFO b (k)"]
    p = parse_lines(lines, "server.log")
    assert [n for _, n, _ in p.rejected] == [1, 2, 3, 4]
    # appended to an earlier file's rejects: those stay first
    parse_lines(["more garbage"], "other.log", p)
    assert [(f, n) for f, n, _ in p.rejected][-2:] == [("server.log", 4), ("other.log", 1)]


def test_a_whole_text_is_read_as_its_lines():
    lines = ["[2024-03-04 10:00:00,000] INFO a (kafka.server)", "[2024-03-04 10:00:01,000] INFO b (kafka.server)"]
    text = "\n".join(lines) + "\n"
    p = parse_lines(text)
    assert (p.lines_read, [r.message for r in p.records], p.rejected) == (2, ["a", "b"], [])
    assert parse_lines(text) == parse_lines(lines) == parse_lines(text.splitlines(keepends=True))
    assert parse_lines("").lines_read == 0
    # split as a file is read, not as str.splitlines does: U+2028 stays inside its line
    assert len(parse_lines(lines[0].replace(" a ", " a\u2028b ")).records) == 1


def test_bytes_are_refused_with_what_is_accepted():
    with pytest.raises(TypeError, match="decode"):
        parse_lines(b"[2024-03-04 10:00:00,000] INFO a (kafka.server)\n")
    with pytest.raises(TypeError, match="iterable of lines"):
        parse_lines([b"[2024-03-04 10:00:00,000] INFO a (kafka.server)"])

"""FROZEN copy of ``kafka_lab.spark.pipeline`` as it was before issue 34 (commit dff4caf), with that commit's
layout patterns (``kafka_lab.logs.layout``): the old path, kept only for ``tests/test_spark_equality.py``, which
compares the new pipeline's tables with it row for row. Not part of the package."""

# ruff: noqa

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path


class layout:  # kafka_lab.logs.layout's patterns at commit dff4caf
    LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")

    #: log4j 1.x's ISO8601 date: ``yyyy-MM-dd HH:mm:ss,SSS``
    TIMESTAMP = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}"
    _LEVEL = "(" + "|".join(LEVELS) + ")"
    _LOGGER = r"([A-Za-z_$][\w$.\-]*)"

    #: what a container runtime may put before a record: docker-compose's ``name  | `` (group 1) and/or an
    #: RFC 3339 time (group 2, ``docker logs -t``, ``kubectl logs --timestamps``)
    PREFIX = r"(?:([\w.\-]+) +\| )?(?:(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+\-]\d{2}:\d{2})) )?"

    #: what a record's first line holds before its message: groups 1 compose name, 2 container time,
    #: 3 bracketed date (Kafka's layouts), 4 bare date (Strimzi's), 5 level
    RECORD_START = "^" + PREFIX + r"(?:\[(" + TIMESTAMP + r")\]|(" + TIMESTAMP + r")) " + _LEVEL + r" +"

    #: what a record's line holds after its message: `` (logger)``, `` (logger:line)``, then maybe `` [thread]``.
    #: Groups: 1 logger, 2 source line (``%L``), 3 thread (``%t``)
    RECORD_END = r" \(" + _LOGGER + r"(?::(\d+|\?))?\)(?: \[([^\]]*)\])?$"

    #: one whole record on one line. Groups: 1 compose name, 2 container time, 3 bracketed date (Kafka's
    #: layouts), 4 bare date (Strimzi's), 5 level, 6 message, 7 logger, 8 source line (``%L``), 9 thread (``%t``)
    RECORD = RECORD_START + "(.*)" + RECORD_END

    #: the start of a record whose logger is not on this line: the first line of a message with a newline,
    #: or a line cut short. Same groups 1-6 as :data:`RECORD` (6: the rest of the line)
    HEAD = RECORD_START + r"(.*)$"

    #: a line that continues the record before it: a stack trace (``\tat ...``, ``Caused by: ...``,
    #: ``\t... 12 more``, an exception's first line) or an indented line of a message with a newline
    CONTINUATION = (
        "^"
        + PREFIX
        + r"(?:[ \t]+\S.*|Caused by: .*|Suppressed: .*|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+"
        + r"(?:Exception|Error|Throwable)(?:: .*)?)$"
    )

    #: the end of a message with a newline: its last line carries the logger (groups: 1 text, 2 logger,
    #: 3 source line, 4 thread)
    LOGGER_TAIL = r"^(.*) \(" + _LOGGER + r"(?::(\d+|\?))?\)(?: \[([^\]]*)\])?$"


__all__ = ["Tables", "parse", "analyze", "REQUEST_SCHEMA", "TABLES"]

TABLES = ("records", "rejects", "requests", "state_changes", "controller_events", "truncations")
PHASES = [
    "totalTimeMs",
    "requestQueueTimeMs",
    "localTimeMs",
    "remoteTimeMs",
    "throttleTimeMs",
    "responseQueueTimeMs",
    "sendTimeMs",
]


def _types():
    from pyspark.sql import types as T

    return T


def request_schema():
    """The 2.8 request log's JSON (``RequestConvertToJson.requestDescMetrics``) as ``requests`` parses it:
    the header, connection and times. The request body is cut out as text (:func:`_requests`); the
    response body, the longest part of a line (kept in the records' ``message``), is skipped."""
    T = _types()
    header = T.StructType(
        [
            T.StructField("requestApiKey", T.IntegerType()),
            T.StructField("requestApiVersion", T.IntegerType()),
            T.StructField("correlationId", T.IntegerType()),
            T.StructField("clientId", T.StringType()),
            T.StructField("requestApiKeyName", T.StringType()),
        ]
    )
    fields = [
        T.StructField("isForwarded", T.BooleanType()),
        T.StructField("requestHeader", header),
        T.StructField("connection", T.StringType()),
    ]
    for p in PHASES:
        fields.append(T.StructField(p, T.LongType() if p == "throttleTimeMs" else T.DoubleType()))
    fields += [
        T.StructField("securityProtocol", T.StringType()),
        T.StructField("principal", T.StringType()),
        T.StructField("listener", T.StringType()),
    ]
    return T.StructType(fields)


#: separates the groups :func:`parse` extracts in one regex evaluation (a character no Kafka log line holds)
_SEP = "\u241f"

REQUEST_SCHEMA = None  # built on first use (pyspark is imported lazily)


@dataclass
class Tables:
    """The parsed tables (DataFrames) of one log directory.

    ``lines_read``: the lines of every file (counted when :func:`parse` numbered them); ``irregular``:
    the lines that are not a whole record on one line (heads, continuations, rejected lines; cached),
    with their ``status``."""

    lines_read: int
    irregular: object
    records: object
    rejects: object
    requests: object
    state_changes: object
    controller_events: object
    truncations: object

    def counts(self, records: int | None = None) -> dict:
        """``lines_read``, ``records``, ``continuations``, ``rejected``; ``records`` counted from the
        records table unless given (:func:`analyze` passes the count of what it wrote)."""
        from pyspark.sql import functions as F

        row = self.irregular.agg(
            F.sum(F.when(F.col("status") == "continuation", 1).otherwise(0)).alias("continuations"),
            F.sum(F.when(F.col("status") == "rejected", 1).otherwise(0)).alias("rejected"),
        ).first()
        return {
            "lines_read": int(self.lines_read),
            "records": int(self.records.count() if records is None else records),
            "continuations": int(row["continuations"] or 0),
            "rejected": int(row["rejected"] or 0),
        }

    def table(self, name: str):
        return getattr(self, name)

    def unpersist(self) -> None:
        self.irregular.unpersist()


#: before every pattern given to Java: ``UNIX_LINES``, so that only ``\n`` ends a line for ``.``, ``^`` and
#: ``$``, as in Python's ``re`` (Java's ``.`` otherwise stops at ``\r``, U+0085, U+2028 and U+2029, and its
#: ``$`` matches before a final one of them: a line with U+2028 in its message would be rejected here and
#: a record in the reference parser). Python has no ``(?d)``, so it is added here, not in the layout's text.
JAVA_FLAGS = "(?d)"


def _rlike(c, pattern):
    """``c`` matches ``pattern`` somewhere (Java's regex with :data:`JAVA_FLAGS`)."""
    return c.rlike(JAVA_FLAGS + pattern)


def _extract(c, pattern, i):
    """``regexp_extract`` with :data:`JAVA_FLAGS`: group ``i`` of the first match, ``""`` if none."""
    from pyspark.sql import functions as F

    return F.regexp_extract(c, JAVA_FLAGS + pattern, i)


def _replace(c, pattern, replacement):
    """``regexp_replace`` with :data:`JAVA_FLAGS`."""
    from pyspark.sql import functions as F

    return F.regexp_replace(c, JAVA_FLAGS + pattern, replacement)


def _timestamp(c):
    """log4j's ``yyyy-MM-dd HH:mm:ss,SSS`` as a timestamp; null when the text names no time (``2024-02-30``,
    ``99:99:99``: Spark 4's ``to_timestamp`` would fail the job, ``try_to_timestamp`` gives null) or a time
    before year 1 (``0000-01-01``: Python's datetime, and so ``collect()``, cannot hold it). The reference
    parser's ``timestamp`` is ``None`` for the same texts."""
    from pyspark.sql import functions as F

    t = F.try_to_timestamp(c, F.lit("yyyy-MM-dd HH:mm:ss,SSS"))
    return F.when(F.year(t) >= 1, t)


def _blank_to_null(c):
    from pyspark.sql import functions as F

    return F.when(c != "", c)


def _text_source(spark, logdir: str):
    from pyspark.errors import AnalysisException

    p = str(logdir)
    if "://" not in p and not Path(p).is_dir():
        raise ValueError(f"no log directory at {p!r}")
    try:
        return spark.read.option("recursiveFileLookup", "true").option("pathGlobFilter", "*.log*").text(p)
    except AnalysisException as e:
        raise ValueError(f"cannot read Kafka logs at {p!r}: {str(e).splitlines()[0]}") from None


def _read_lines(spark, logdir: str):
    """Every line of every ``*.log*`` file: ``uri``, ``text``, the split it was read in (``_split``: the
    file's offset) and ``_id`` (``monotonically_increasing_id``: consecutive within a split)."""
    from pyspark.sql import functions as F

    return _text_source(spark, logdir).select(
        F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("_split"),
        F.col("value").alias("text"),
        F.monotonically_increasing_id().alias("_id"),
    )


def _splits(spark, raw):
    """One row per (file, split) Spark reads: the first ``_id`` of the split and the lines before it in
    its file (so that ``line = _id - _first + _before + 1``), and the file's ``file``, ``broker`` and
    ``log`` names. One pass over the files that decodes no text (the cost of a raw count); the result,
    a few rows per file, is collected and broadcast."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    rows = raw.groupBy("uri", "_split").agg(F.min("_id").alias("_first"), F.count("*").alias("_n")).collect()
    out, before = [], {}
    for r in sorted(rows, key=lambda r: (r.uri, r._split)):
        file = "/".join(r.uri.rstrip("/").split("/")[-2:])
        m = re.search(r"broker-(\d+)/", file)
        log = re.search(r"([A-Za-z\-]+)\.log[^/]*$", file)
        n0 = before.get(r.uri, 0)
        out.append((r.uri, r._split, r._first, n0, file, int(m.group(1)) if m else None, log.group(1) if log else ""))
        before[r.uri] = n0 + r._n
    schema = T.StructType(
        [
            T.StructField("uri", T.StringType()),
            T.StructField("_split", T.LongType()),
            T.StructField("_first", T.LongType()),
            T.StructField("_before", T.LongType()),
            T.StructField("file", T.StringType()),
            T.StructField("broker", T.IntegerType()),
            T.StructField("log", T.StringType()),
        ]
    )
    # built in the JVM (a literal array of structs), not with createDataFrame: a DataFrame made from a
    # Python list is a Python RDD, and every job that joins it would start Python workers to read it
    if not out:
        return spark.createDataFrame([], schema), 0
    rows = F.array(
        *[F.struct(*[F.lit(v).cast(f.dataType).alias(f.name) for v, f in zip(r, schema.fields)]) for r in out]
    )
    return spark.range(1).select(F.inline(rows)), sum(before.values())


#: a whole record's line as three spans: 1 what comes before the message (:data:`layout.RECORD_START`),
#: the message, and what comes after it (:data:`layout.RECORD_END`); the same match as :data:`layout.RECORD`
_SPANS = "(" + layout.RECORD_START + ")(?:.*)(" + layout.RECORD_END + ")"
_HEAD_SPAN = "(" + layout.RECORD_START + ")(?:.*)$"
#: marks the result of a matching line in ``regexp_replace`` (a line that matches cannot start with it)
_MARK = "\u241e"


def parse(spark, logdir) -> Tables:
    """Parse every ``*.log*`` file under ``logdir`` into :class:`Tables` (lazy DataFrames but for a small
    job that counts each file's lines; ``irregular`` cached).

    Every line is matched against :data:`layout.RECORD` once: ``regexp_replace`` with the two short spans
    around the message (``_SPANS``) leaves a line that does not match as it is, and turns one that does
    into ``<mark><start>\u241f<end>``; the message is the substring between the spans, and the fields
    come from the short spans. Lines that are not whole records (a head, a continuation, anything else:
    few) are the ``irregular`` table, where a small window over each file groups continuations with
    the record before them; the records take their continuations from it with a broadcast join.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    raw = _read_lines(spark, logdir)
    splits, n_lines = _splits(spark, raw)
    text = F.col("text")
    lines = (
        raw.join(F.broadcast(splits), ["uri", "_split"])
        .withColumn("line", F.col("_id") - F.col("_first") + F.col("_before") + 1)
        .withColumn("_r", _replace(text, _SPANS, _MARK + "$1\u241f$" + str(2 + _START_GROUPS)))
    )
    whole = F.col("_r").startswith(_MARK) & ~text.startswith(_MARK)
    kind = (
        F.when(whole, "record")
        .when(_rlike(text, layout.HEAD), "head")
        .when(_rlike(text, layout.CONTINUATION), "continuation")
        .otherwise("other")
    )
    lines = lines.withColumn("kind", kind).select("uri", "file", "broker", "log", "line", "kind", "text", "_r")

    # -- the lines that are not whole records, and the groups they make (few: a small window per file)
    odd = lines.where(F.col("kind") != "record").select(
        "uri",
        "file",
        "line",
        "kind",
        "text",
        F.when(
            (F.col("kind") == "continuation") & _rlike(text, layout.LOGGER_TAIL),
            _extract(text, layout.LOGGER_TAIL, 2),
        ).alias("tail_logger"),
    )
    w = Window.partitionBy("uri").orderBy("line")
    # a run of consecutive odd lines: the line before it (if any) is a whole record, which opens the group
    odd = odd.withColumn("_run", F.col("line") - F.row_number().over(w))
    run = Window.partitionBy("uri", "_run").orderBy("line")
    upto = run.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    first = F.min("line").over(run.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
    last_head = F.last(F.when(F.col("kind") == "head", F.col("line")), ignorenulls=True).over(upto)
    odd = odd.withColumn("_first_odd", first).withColumn("_head", last_head)
    odd = odd.withColumn(
        "group", F.coalesce(F.col("_head"), F.when(F.col("_first_odd") > 1, F.col("_first_odd") - 1))
    ).withColumn("group_kind", F.when(F.col("_head").isNotNull(), "head").when(F.col("group").isNotNull(), "record"))
    # a head's tail: the first continuation of its group that ends with `` (logger)`` (a window, not a
    # self-join, which would compute the odd lines, and so read every line, twice)
    group = Window.partitionBy("uri", "_run", "group")
    is_tail = F.col("tail_logger").isNotNull() & (F.col("group_kind") == "head")
    odd = odd.withColumn("tail", F.min(F.when(is_tail, F.struct("line", "tail_logger", "text"))).over(group))
    valid_group = (F.col("group_kind") == "record") | F.col("tail").isNotNull()
    status = (
        F.when((F.col("kind") == "head") & valid_group, "record")
        .when((F.col("kind") == "continuation") & F.col("group").isNotNull() & valid_group, "continuation")
        .otherwise("rejected")
    )
    odd = odd.withColumn("status", status).select("uri", "file", "line", "kind", "text", "group", "tail", "status")
    odd = odd.cache()

    # per record that has them (the group's first line): its continuation lines, and a head's tail
    conts = (
        odd.where(F.col("status") == "continuation")
        .groupBy("uri", "group")
        .agg(
            F.count("*").alias("continuations"),
            F.transform(F.array_sort(F.collect_list(F.struct("line", "text"))), lambda s: s["text"]).alias("_conts"),
        )
        .withColumnRenamed("group", "line")
    )
    heads = odd.where((F.col("kind") == "head") & (F.col("status") == "record")).select(
        "uri", "line", F.lit(True).alias("_valid_head"), "tail"
    )
    extra = conts.join(heads, ["uri", "line"], "full")
    recs = lines.where(F.col("kind").isin("record", "head")).join(F.broadcast(extra), ["uri", "line"], "left")
    recs = recs.where((F.col("kind") == "record") | F.col("_valid_head"))
    is_rec = F.col("kind") == "record"
    # the spans around the message: a record's from _r, a head's (no logger on its line) from HEAD
    start = F.when(is_rec, F.substring_index(F.substring(F.col("_r"), 2, 1 << 30), "\u241f", 1)).otherwise(
        _extract(text, _HEAD_SPAN, 1)
    )
    recs = recs.withColumn("_start", start)
    recs = recs.withColumn(
        "_end", F.when(is_rec, F.col("_r").substr(F.length("_start") + 3, F.lit(1 << 30))).otherwise(F.lit(""))
    )
    S, E, TL = layout.RECORD_START, layout.RECORD_END, layout.LOGGER_TAIL

    def sg(i):  # group i of RECORD_START (1 compose name, 2 container time, 3 and 4 date, 5 level)
        return _blank_to_null(_extract("_start", S, i))

    def eg(i, j):  # group i of RECORD_END for a record, group j of LOGGER_TAIL of a head's tail line
        return _blank_to_null(F.when(is_rec, _extract("_end", E, i)).otherwise(_extract(F.col("tail.text"), TL, j)))

    # the message in bytes, not characters: a string's length and substr count the characters of the
    # whole line (UTF-8), each time; a binary's substring and octet_length do not
    msg_bytes = F.octet_length(text) - F.octet_length("_start") - F.octet_length("_end")
    message = F.substring(text.cast("binary"), F.octet_length("_start") + 1, msg_bytes).cast("string")
    records = recs.select(
        _timestamp(F.coalesce(sg(3), sg(4))).alias("timestamp"),
        sg(5).alias("level"),
        F.when(is_rec, _extract("_end", E, 1)).otherwise(F.col("tail.tail_logger")).alias("logger"),
        message.alias("message"),
        "file",
        "broker",
        "log",
        "line",
        F.coalesce(F.col("continuations"), F.lit(0)).alias("continuations"),
        F.array_join(F.col("_conts"), "\n").alias("continuation"),
        sg(1).alias("container"),
        sg(2).alias("container_time"),
        eg(2, 3).alias("source_line"),
        eg(3, 4).alias("thread"),
    )
    rejects = odd.where(F.col("status") == "rejected").select("file", "line", "text")
    return Tables(
        lines_read=n_lines,
        irregular=odd,
        records=records,
        rejects=rejects,
        requests=_requests(records),
        state_changes=_state_changes(records),
        controller_events=_controller_events(records),
        truncations=None,
    )._with_truncations()


_START_GROUPS = 5  # groups of layout.RECORD_START (the end span is group 2 + this in _SPANS)


def _with_truncations(self):
    self.truncations = _truncations(self.records, self.state_changes)
    return self


Tables._with_truncations = _with_truncations


def _after(c, n_bytes: int):
    """``c`` without its first ``n_bytes`` bytes (a substring of the bytes: no count of the characters)."""
    from pyspark.sql import functions as F

    return F.substring(c.cast("binary"), n_bytes + 1, 1 << 30).cast("string")


def _requests(records):
    from pyspark.sql import functions as F

    global REQUEST_SCHEMA
    if REQUEST_SCHEMA is None:
        REQUEST_SCHEMA = request_schema()
    base = records.where(
        (F.col("logger") == "kafka.request.logger") & F.col("message").startswith("Completed request:")
    ).select("timestamp", "broker", "file", "line", _after(F.col("message"), len("Completed request:")).alias("body"))
    is_json = F.col("body").startswith("{")
    # parsed ONCE per line into a column: a field taken straight from from_json(...) would be rewritten
    # by Spark's optimizer into a from_json of its own (OptimizeCsvJsonExprs), one parse of the whole
    # line per column; a column referenced many times keeps its own projection (CollapseProject)
    base = base.withColumn("_j", F.when(is_json, F.from_json(F.col("body"), REQUEST_SCHEMA)))
    j = F.col("_j")
    body = F.col("body")

    def tx(pattern, cast=None):
        c = _blank_to_null(_extract(body, pattern, 1))
        return c.cast(cast) if cast else c

    text_phase = {
        "totalTimeMs": "totalTime",
        "requestQueueTimeMs": "requestQueueTime",
        "localTimeMs": "localTime",
        "remoteTimeMs": "remoteTime",
        "throttleTimeMs": "throttleTime",
        "responseQueueTimeMs": "responseQueueTime",
        "sendTimeMs": "sendTime",
    }
    cols = [
        "timestamp",
        "broker",
        "file",
        "line",
        F.when(is_json, "json").otherwise("text").alias("format"),
        F.when(is_json, j["requestHeader"]["requestApiKeyName"])
        .otherwise(tx(r"^RequestHeader\(apiKey=(\w+)"))
        .alias("api"),
        F.when(is_json, j["requestHeader"]["requestApiVersion"])
        .otherwise(tx(r"apiVersion=(\d+)", "int"))
        .alias("api_version"),
        F.when(is_json, j["requestHeader"]["clientId"]).otherwise(tx(r"clientId=([^,]*),")).alias("client_id"),
        F.when(is_json, j["requestHeader"]["correlationId"])
        .otherwise(tx(r"correlationId=(\d+)\)", "int"))
        .alias("correlation_id"),
        F.when(is_json, j["connection"]).otherwise(tx(r" from connection (\S+);totalTime:")).alias("connection"),
        F.when(is_json, j["listener"]).otherwise(tx(r",listener:([^,]+),clientInformation:")).alias("listener"),
        F.when(is_json, j["securityProtocol"]).otherwise(tx(r",securityProtocol:(\w+),")).alias("security_protocol"),
        F.when(is_json, j["principal"]).otherwise(tx(r",principal:(.*?),listener:")).alias("principal"),
    ]
    for p in PHASES:
        t = "long" if p == "throttleTimeMs" else "double"
        cols.append(F.when(is_json, j[p]).otherwise(tx(rf"[;,]{text_phase[p]}:([\d.E\-]+)", t)).alias(p))
    # the request body as the broker wrote it: Kafka writes ``"requestHeader":{...},"request":{...},"response":``,
    # and a key in quotes cannot occur inside a JSON string (its quotes are escaped), so the text between
    # the first ``"request":`` and the first ``,"response":`` is the body; other key orders go through the
    # parsed JSON (re-serialising every body costs as much as parsing the line)
    kafka_order = body.contains('"request":') & body.contains(',"response":')
    cut = F.substring_index(F.substring_index(body, ',"response":', 1), '"request":', -1)
    cols.append(
        F.when(is_json, F.when(kafka_order, cut).otherwise(F.get_json_object(body, "$.request"))).alias("request")
    )
    return base.select(*cols)


_STATE_EVENTS = [
    ("Handling LeaderAndIsr request", "leader_and_isr_received"),
    ("Finished LeaderAndIsr request", "leader_and_isr_finished"),
    (r"^\[Broker id=\d+\] Leader \S+ starts at", "become_leader"),
    (r"^\[Broker id=\d+\] Follower \S+ starts at", "become_follower"),
    ("Stopped fetchers as part of", "fetchers_stopped"),
    ("from metadata cache in response to UpdateMetadata", "update_metadata_applied"),
    ("Handling StopReplica request", "stop_replica_received"),
    ("Changed partition ", "partition_changed"),
    ("Sending LeaderAndIsr request", "leader_and_isr_sent"),
    ("Sending UpdateMetadata request", "update_metadata_sent"),
]


def _event(message, table, default="other"):
    from pyspark.sql import functions as F

    c = None
    for pattern, name in table:
        c = (F.when(_rlike(message, pattern), name)) if c is None else c.when(_rlike(message, pattern), name)
    return c.otherwise(default)


def _int(message, pattern):
    return _blank_to_null(_extract(message, pattern, 1)).cast("long")


def _state_changes(records):
    from pyspark.sql import functions as F

    msg = F.col("message")
    tp = r"(?:Leader|Follower|partition) (\S+)-(\d+)(?: starts| from)"
    return records.where(F.col("logger") == "state.change.logger").select(
        "timestamp",
        "broker",
        "file",
        "line",
        "level",
        _event(msg, _STATE_EVENTS).alias("event"),
        _blank_to_null(_extract(msg, r"^\[(Broker|Controller) id=", 1)).alias("actor"),
        _int(msg, r"^\[(?:Broker|Controller) id=(\d+)").alias("actor_id"),
        _int(msg, r"(?:from|by) controller (\d+)").alias("controller_id"),
        _int(msg, r"(?:correlationId|correlation id) (\d+)").alias("correlation_id"),
        _blank_to_null(_extract(msg, tp, 1)).alias("topic"),
        _int(msg, r"(?:Leader|Follower|partition) \S+-(\d+)(?: starts| from)").alias("partition"),
        _int(msg, r"(?:leader epoch |leaderEpoch=)(\d+)").alias("leader_epoch"),
        _int(msg, r"from offset (\d+)").alias("offset"),
        _int(msg, r"Finished LeaderAndIsr request in (\d+)ms").alias("elapsed_ms"),
        _int(msg, r" for (\d+) partitions").alias("partitions"),
        "message",
    )


_CONTROLLER_EVENTS = [
    ("successfully elected as the controller", "elected"),
    ("Ready to serve as the new controller", "ready"),
    ("Starting replica leader election", "election_started"),
    ("completed preferred replica leader election", "election_completed"),
    ("Leader imbalance ratio for broker", "imbalance_ratio"),
    ("Processing automatic preferred replica leader election", "auto_rebalance"),
    (r"^\[Controller id=\d+\] Resigned", "resigned"),
    (r"Shutting down broker \d+", "controlled_shutdown"),
    ("Newly added brokers: ", "broker_change"),
    ("Broker failure callback for ", "broker_failure"),
    ("New broker startup callback for ", "broker_startup"),
    (r"Controller \d+ connected to", "connected"),
]


def _controller_events(records):
    from pyspark.sql import functions as F

    msg = F.col("message")
    return records.where(F.col("logger").startswith("kafka.controller")).select(
        "timestamp",
        "broker",
        "file",
        "line",
        "level",
        _event(msg, _CONTROLLER_EVENTS).alias("event"),
        _int(msg, r"(?:^\[Controller id=|controllerId=)(\d+)").alias("controller_id"),
        _int(msg, r"Epoch incremented to (\d+)").alias("epoch"),
        _blank_to_null(_extract(msg, r"(?:for partitions |^\[Controller id=\d+\] Partition )(\S+?)(?: |,|$)", 1)).alias(
            "partition"
        ),
        _int(msg, r"New leader is (\d+)").alias("new_leader"),
        _int(msg, r"(?:Shutting down broker|failure callback for|startup callback for) (\d+)").alias("target_broker"),
        _blank_to_null(_extract(msg, r"triggered by (\w+)", 1)).alias("trigger"),
        _int(msg, r"ratio for broker (\d+)").alias("ratio_broker"),
        _blank_to_null(_extract(msg, r"ratio for broker \d+ is ([\d.E\-]+)", 1)).cast("double").alias("ratio"),
        "message",
    )


def _truncations(records, state_changes):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    msg = F.col("message")
    trunc = records.where((F.col("logger") == "kafka.log.Log") & _rlike(msg, r"\] Truncating to offset \d+$")).select(
        "timestamp",
        "broker",
        "file",
        "line",
        _extract(msg, r"^\[Log partition=(\S+)-(\d+), dir=", 1).alias("topic"),
        _extract(msg, r"^\[Log partition=\S+-(\d+), dir=", 1).cast("int").alias("partition"),
        _extract(msg, r"Truncating to offset (\d+)$", 1).cast("long").alias("offset"),
        F.lit(1).alias("_order"),
    )
    follow = state_changes.where(F.col("event") == "become_follower").select(
        "timestamp",
        "broker",
        "file",
        "line",
        "topic",
        F.col("partition").cast("int").alias("partition"),
        F.col("offset").alias("offset"),
        F.lit(0).alias("_order"),
    )
    w = Window.partitionBy("broker", "topic", "partition").orderBy("timestamp", "_order", "line")
    both = trunc.unionByName(follow).withColumn(
        "_leo",
        F.last(F.when(F.col("_order") == 0, F.col("offset")), ignorenulls=True).over(
            w.rowsBetween(Window.unboundedPreceding, -1)
        ),
    )
    out = both.where(F.col("_order") == 1).select(
        "timestamp",
        "broker",
        "topic",
        "partition",
        F.col("offset").alias("truncated_to"),
        F.col("_leo").alias("log_end_before"),
        F.greatest(F.col("_leo") - F.col("offset"), F.lit(0)).alias("records"),
        "file",
        "line",
    )
    # One leader move truncates every replica that had records the new leader lacks, each to the new leader's
    # end: the same partition to the same offset within a second. The old leader had the most; a follower's
    # removed records are copies of some of the old leader's. So the old leader is the truncation of its move
    # that removed the most (ties: the lowest broker id), and only its records were acknowledged (acks=1).
    same = Window.partitionBy("topic", "partition", "truncated_to").orderBy("timestamp", "broker", "line")
    t = F.col("timestamp").cast("double")
    gap = t - F.lag(t).over(same)
    out = out.withColumn("_move", F.sum(F.when(gap.isNull() | (gap > 1.0), 1).otherwise(0)).over(same))
    move = Window.partitionBy("topic", "partition", "truncated_to", "_move").orderBy(F.desc("records"), "broker")
    return out.withColumn("old_leader", F.row_number().over(move) == 1).drop("_move")


def _java_causes(e) -> list[str]:
    """``Class: message`` of a Py4J error's Java exception and each of its causes, outermost first."""
    out, j = [], getattr(e, "java_exception", None)
    try:
        while j is not None and len(out) < 16:
            msg = j.getMessage()
            out.append(f"{j.getClass().getName()}: {msg}" if msg else j.getClass().getName())
            j = j.getCause()
    except Exception:  # the JVM is gone: what was read so far
        pass
    return out


def _read_or_explain(action, logdir):
    """Run a Spark action; a file Spark cannot read (a corrupt .gz, a vanished file) becomes a ValueError
    of one line: the directory, Spark's error (which names the file) and its root cause (``Not in GZIP
    format``, ``Unexpected end of input stream``), not a Java stack trace."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        return action()
    except (Py4JJavaError, PySparkException) as e:
        causes = _java_causes(e)
        if not causes:
            text = str(e)
            lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
            causes = [ln for ln in lines if "Exception:" in ln or "Error:" in ln] or lines or ["?"]
        # Spark's own error names the file: the one that carries an error class ([FAILED_READ_FILE...]),
        # else the outermost; the root cause says what is wrong with it
        spark_error = next((c for c in causes if ": [" in c), causes[0])
        spark_error = re.sub(r"\s+SQLSTATE: \w+\s*$", "", spark_error.split(": ", 1)[-1]).strip()
        root = causes[-1]
        why = spark_error if root.split(": ", 1)[-1] in spark_error else f"{spark_error} ({root})"
        raise ValueError(f"cannot read the Kafka logs under {str(logdir)!r}: {why}") from None


def analyze(spark, logdir, out) -> dict:
    """Parse ``logdir``, write each table as Parquet under ``out`` and ``summary.json``; return the summary.

    The records are written first, in one pass over the text; the derived tables then read the records'
    Parquet (only the columns they use; the files' row groups of other loggers skipped by their
    statistics), so no table is held in memory whatever the size of the logs."""
    tables = _read_or_explain(lambda: parse(spark, logdir), logdir)
    if tables.lines_read == 0:
        tables.unpersist()
        raise ValueError(f"no Kafka log lines (files named *.log*) under {str(logdir)!r}")
    out_s = str(out).rstrip("/")
    summary = {"tables": {}}

    def write(name, df):
        df.write.mode("overwrite").parquet(f"{out_s}/{name}")
        summary["tables"][name] = int(spark.read.parquet(f"{out_s}/{name}").count())

    _read_or_explain(lambda: write("records", tables.records), logdir)
    records = spark.read.parquet(f"{out_s}/records")
    state_changes = _state_changes(records)
    derived = {
        "rejects": tables.rejects,
        "requests": _requests(records),
        "state_changes": state_changes,
        "controller_events": _controller_events(records),
        "truncations": _truncations(records, state_changes),
    }
    for name in TABLES[1:]:
        write(name, derived[name])
    summary.update(tables.counts(records=summary["tables"]["records"]))
    summary["logdir"] = str(logdir)
    if "://" not in out_s:
        Path(out_s).mkdir(parents=True, exist_ok=True)
        Path(out_s, "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    else:
        spark.createDataFrame([(json.dumps(summary),)], "value string").coalesce(1).write.mode("overwrite").text(
            f"{out_s}/summary.json"
        )
    tables.unpersist()
    return summary

"""Kafka's logs into tables, with Spark's native functions only (no Python UDFs on the hot path).

:func:`parse` reads every ``*.log*`` file under a directory (any URI Spark reads, sub-directories
included: the generator's ``broker-<id>/``, a real ``/var/log/kafka``) with ``spark.read.text``, and
classifies each line with the patterns of :mod:`kafka_lab.logs.layout` (``rlike``/``regexp_extract``:
the same text the reference parser :mod:`kafka_lab.logs.parse` compiles with Python's ``re``):

- a line that starts a record (``RECORD``: a whole record; ``HEAD``: a record whose logger comes on a
  later line) opens a group; a ``CONTINUATION`` line belongs to the last group opened before it in the
  same file (a window over the file, ordered by line); anything else is rejected;
- a ``HEAD`` group without a `` (logger)`` tail among its continuations is rejected, lines and all.

So ``lines read = records + continuations + rejected``, always (``Tables.counts``).

Line numbers come from the order Spark reads a file in (``monotonically_increasing_id``: a file's
splits are read in offset order) and a window over each file; Kafka's hourly rolled files keep
files, and so those windows, small.

The derived tables read the records' messages: ``requests`` (the request log, 2.8 JSON with
``from_json`` and an explicit schema, or 2.7's text form with ``regexp_extract``), ``state_changes``,
``controller_events`` and ``truncations`` (with the records each truncation removed: the follower's
log end offset at its become-follower minus the offset it truncates to).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kafka_lab.logs import layout

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
    """The 2.8 request log's JSON (``RequestConvertToJson.requestDescMetrics``); bodies kept as JSON text."""
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
        T.StructField("request", T.StringType()),
        T.StructField("response", T.StringType()),
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
    """The parsed tables (DataFrames) of one log directory."""

    lines: object
    records: object
    rejects: object
    requests: object
    state_changes: object
    controller_events: object
    truncations: object

    def counts(self) -> dict:
        """``lines_read``, ``records``, ``continuations``, ``rejected`` (one pass over the classified lines)."""
        from pyspark.sql import functions as F

        row = self.lines.agg(
            F.count("*").alias("lines_read"),
            F.sum(F.when(F.col("status") == "record", 1).otherwise(0)).alias("records"),
            F.sum(F.when(F.col("status") == "continuation", 1).otherwise(0)).alias("continuations"),
            F.sum(F.when(F.col("status") == "rejected", 1).otherwise(0)).alias("rejected"),
        ).first()
        return {k: int(row[k] or 0) for k in ("lines_read", "records", "continuations", "rejected")}

    def table(self, name: str):
        return getattr(self, name)


def _blank_to_null(c):
    from pyspark.sql import functions as F

    return F.when(c != "", c)


def _read_lines(spark, logdir: str):
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    p = str(logdir)
    if "://" not in p and not Path(p).is_dir():
        raise ValueError(f"no log directory at {p!r}")
    try:
        df = (
            spark.read.option("recursiveFileLookup", "true")
            .option("pathGlobFilter", "*.log*")
            .text(p)
            .select(F.input_file_name().alias("uri"), F.col("value").alias("text"))
        )
    except AnalysisException as e:
        raise ValueError(f"cannot read Kafka logs at {p!r}: {str(e).splitlines()[0]}") from None
    return df.select(
        F.regexp_extract(F.col("uri"), r"([^/]+/[^/]+)$", 1).alias("file"),
        "uri",
        "text",
        F.monotonically_increasing_id().alias("_id"),
    )


def parse(spark, logdir) -> Tables:
    """Parse every ``*.log*`` file under ``logdir`` into :class:`Tables` (lazy DataFrames; ``lines`` cached)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    raw = _read_lines(spark, logdir)
    w = Window.partitionBy("uri").orderBy("_id")
    upto = w.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    text = F.col("text")
    kind = (
        F.when(text.rlike(layout.RECORD), "record")
        .when(text.rlike(layout.HEAD), "head")
        .when(text.rlike(layout.CONTINUATION), "continuation")
        .otherwise("other")
    )
    lines = (
        raw.withColumn("line", F.row_number().over(w))
        .withColumn("kind", kind)
        .withColumn("start", F.when(F.col("kind").isin("record", "head"), F.col("line")))
        .withColumn("group", F.last("start", ignorenulls=True).over(upto))
        .withColumn(
            "group_kind", F.last(F.when(F.col("start").isNotNull(), F.col("kind")), ignorenulls=True).over(upto)
        )
        .withColumn(
            "tail_logger",
            F.when(
                (F.col("kind") == "continuation") & text.rlike(layout.LOGGER_TAIL),
                F.regexp_extract(text, layout.LOGGER_TAIL, 2),
            ),
        )
    )
    # HEAD groups that found their logger: few (messages with a newline), so a small join
    tails = (
        lines.where(F.col("tail_logger").isNotNull() & (F.col("group_kind") == "head"))
        .groupBy("uri", "group")
        .agg(F.min(F.struct("line", "tail_logger", "text")).alias("tail"))
    )
    lines = lines.join(F.broadcast(tails), ["uri", "group"], "left")
    valid_group = (F.col("group_kind") == "record") | F.col("tail").isNotNull()
    status = (
        F.when(F.col("kind").isin("record", "head") & valid_group, "record")
        .when((F.col("kind") == "continuation") & F.col("group").isNotNull() & valid_group, "continuation")
        .otherwise("rejected")
    )
    lines = lines.withColumn("status", status).drop("_id").cache()

    conts = (
        lines.where(F.col("status") == "continuation")
        .groupBy("uri", "group")
        .agg(
            F.count("*").alias("continuations"),
            F.transform(F.array_sort(F.collect_list(F.struct("line", "text"))), lambda s: s["text"]).alias("_conts"),
        )
    )
    heads = lines.where(F.col("status") == "record")
    R, H, TL = layout.RECORD, layout.HEAD, layout.LOGGER_TAIL
    is_rec = F.col("kind") == "record"

    def all_groups(pattern: str, n: int):
        # every group of a whole-line pattern from ONE regex evaluation (regexp_replace with $1<sep>$2...,
        # then split): a regexp_extract per group costs a full match each, on lines of a kilobyte and more
        return F.split(F.regexp_replace(text, pattern, _SEP.join(f"${i}" for i in range(1, n + 1))), _SEP, -1)

    heads = heads.withColumn("_g", F.when(is_rec, all_groups(R, 9)).otherwise(all_groups(H, 6)))

    def g(i):  # group i (1-based) of RECORD, or of HEAD for a head line (the first 6 are the same groups)
        return _blank_to_null(F.col("_g")[i - 1])

    records = heads.join(conts, ["uri", "group"], "left").select(
        F.to_timestamp(F.coalesce(g(3), g(4)), "yyyy-MM-dd HH:mm:ss,SSS").alias("timestamp"),
        g(5).alias("level"),
        F.when(is_rec, F.col("_g")[6]).otherwise(F.col("tail.tail_logger")).alias("logger"),
        F.col("_g")[5].alias("message"),
        "file",
        _blank_to_null(F.regexp_extract("file", r"broker-(\d+)/", 1)).cast("int").alias("broker"),
        F.regexp_extract("file", r"([A-Za-z\-]+)\.log[^/]*$", 1).alias("log"),
        "line",
        F.coalesce(F.col("continuations"), F.lit(0)).alias("continuations"),
        F.array_join(F.col("_conts"), "\n").alias("continuation"),
        g(1).alias("container"),
        g(2).alias("container_time"),
        _blank_to_null(F.when(is_rec, F.col("_g")[7]).otherwise(F.regexp_extract(F.col("tail.text"), TL, 3))).alias(
            "source_line"
        ),
        _blank_to_null(F.when(is_rec, F.col("_g")[8]).otherwise(F.regexp_extract(F.col("tail.text"), TL, 4))).alias(
            "thread"
        ),
    )
    rejects = lines.where(F.col("status") == "rejected").select("file", "line", "text")
    return Tables(
        lines=lines,
        records=records,
        rejects=rejects,
        requests=_requests(records),
        state_changes=_state_changes(records),
        controller_events=_controller_events(records),
        truncations=None,
    )._with_truncations()


def _with_truncations(self):
    self.truncations = _truncations(self.records, self.state_changes)
    return self


Tables._with_truncations = _with_truncations


def _requests(records):
    from pyspark.sql import functions as F

    global REQUEST_SCHEMA
    if REQUEST_SCHEMA is None:
        REQUEST_SCHEMA = request_schema()
    base = records.where(
        (F.col("logger") == "kafka.request.logger") & F.col("message").startswith("Completed request:")
    ).select("timestamp", "broker", "file", "line", F.substring("message", 19, 1 << 30).alias("body"))
    is_json = F.col("body").startswith("{")
    j = F.from_json(F.col("body"), REQUEST_SCHEMA)
    body = F.col("body")

    def tx(pattern, cast=None):
        c = _blank_to_null(F.regexp_extract(body, pattern, 1))
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
    cols.append(F.when(is_json, j["request"]).alias("request"))
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
        c = (F.when(message.rlike(pattern), name)) if c is None else c.when(message.rlike(pattern), name)
    return c.otherwise(default)


def _int(message, pattern):
    from pyspark.sql import functions as F

    return _blank_to_null(F.regexp_extract(message, pattern, 1)).cast("long")


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
        _blank_to_null(F.regexp_extract(msg, r"^\[(Broker|Controller) id=", 1)).alias("actor"),
        _int(msg, r"^\[(?:Broker|Controller) id=(\d+)").alias("actor_id"),
        _int(msg, r"(?:from|by) controller (\d+)").alias("controller_id"),
        _int(msg, r"(?:correlationId|correlation id) (\d+)").alias("correlation_id"),
        _blank_to_null(F.regexp_extract(msg, tp, 1)).alias("topic"),
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
        _blank_to_null(
            F.regexp_extract(msg, r"(?:for partitions |^\[Controller id=\d+\] Partition )(\S+?)(?: |,|$)", 1)
        ).alias("partition"),
        _int(msg, r"New leader is (\d+)").alias("new_leader"),
        _blank_to_null(F.regexp_extract(msg, r"triggered by (\w+)", 1)).alias("trigger"),
        _int(msg, r"ratio for broker (\d+)").alias("ratio_broker"),
        _blank_to_null(F.regexp_extract(msg, r"ratio for broker \d+ is ([\d.E\-]+)", 1)).cast("double").alias("ratio"),
        "message",
    )


def _truncations(records, state_changes):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    msg = F.col("message")
    trunc = records.where((F.col("logger") == "kafka.log.Log") & msg.rlike(r"\] Truncating to offset \d+$")).select(
        "timestamp",
        "broker",
        "file",
        "line",
        F.regexp_extract(msg, r"^\[Log partition=(\S+)-(\d+), dir=", 1).alias("topic"),
        F.regexp_extract(msg, r"^\[Log partition=\S+-(\d+), dir=", 1).cast("int").alias("partition"),
        F.regexp_extract(msg, r"Truncating to offset (\d+)$", 1).cast("long").alias("offset"),
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
    return both.where(F.col("_order") == 1).select(
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


def _read_or_explain(action, logdir):
    """Run a Spark action; a file Spark cannot read (a corrupt .gz, a vanished file) becomes a ValueError
    that names the directory and Spark's first line of explanation, not a Java stack trace."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        return action()
    except (Py4JJavaError, PySparkException) as e:
        text = str(getattr(e, "java_exception", None) or e)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
        causes = [ln for ln in lines if "Exception:" in ln or "Error:" in ln]
        raise ValueError(
            f"cannot read the Kafka logs under {str(logdir)!r}: {(causes or lines or ['?'])[-1]}"
        ) from None


def analyze(spark, logdir, out) -> dict:
    """Parse ``logdir``, write each table as Parquet under ``out`` and ``summary.json``; return the summary."""
    tables = parse(spark, logdir)
    counts = _read_or_explain(tables.counts, logdir)
    if counts["lines_read"] == 0:
        raise ValueError(f"no Kafka log lines (files named *.log*) under {str(logdir)!r}")
    tables.records.cache()  # every derived table reads the records: parse them once
    out_s = str(out)
    summary = dict(counts)
    summary["tables"] = {}
    for name in TABLES:
        df = tables.table(name)
        df.write.mode("overwrite").parquet(f"{out_s.rstrip('/')}/{name}")
        summary["tables"][name] = int(spark.read.parquet(f"{out_s.rstrip('/')}/{name}").count())
    summary["logdir"] = str(logdir)
    if "://" not in out_s:
        Path(out_s).mkdir(parents=True, exist_ok=True)
        Path(out_s, "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    else:
        spark.createDataFrame([(json.dumps(summary),)], "value string").coalesce(1).write.mode("overwrite").text(
            f"{out_s.rstrip('/')}/summary.json"
        )
    tables.records.unpersist()
    tables.lines.unpersist()
    return summary

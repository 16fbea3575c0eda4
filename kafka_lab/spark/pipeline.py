"""Kafka's logs into tables, with Spark's native functions only (no Python UDFs on the hot path).

:func:`parse` reads every ``*.log*`` file under a directory (the files :func:`.files.find_log_files` finds,
each once; any URI Spark reads, sub-directories included) with ``spark.read.text``, and **classifies each
line once**, with the patterns of :mod:`kafka_lab.logs.layout` (the same text the reference parser
:mod:`kafka_lab.logs.parse` compiles with Python's ``re``):

- a line that starts a record (``RECORD``: a whole record, after any prefix; ``HEAD``: a record whose
  logger comes on a later line) opens a group; a ``CONTINUATION`` line belongs to the last group opened
  before it in the same file; anything else is rejected, and so is a line longer than
  :data:`MAX_LINE_BYTES` (with its file and line number; its text cut to :data:`KEPT_BYTES`);
- a ``HEAD`` group without a `` (logger)`` tail among its continuations is rejected, lines and all.

So ``lines read = records + continuations + rejected``, always (``Tables.counts``). Every pattern is given
to Java behind :data:`JAVA_FLAGS` (``(?d)``), and the reference parser compiles the same text with
``re.ASCII``, so both classify every line alike (:mod:`kafka_lab.logs.layout`). A record whose date names
no time (``2024-02-30``) is a record with a null ``timestamp``.

Lines are split by Spark's text reader (Hadoop's ``LineReader``): at ``\\n``, ``\\r\\n`` or a lone ``\\r``,
as Python's ``open()`` splits them in its default newline mode, and as the reference parser splits what
it is given; a ``\\r`` inside a log4j message therefore ends a line in both.

**One pass classifies** (:func:`_classify`): one ``regexp_replace`` per line turns a whole record into
its fields, separated by Latin-1 control characters (:data:`_MARK`, :data:`_SEP`: a character outside
Latin-1 would make Java build every result in UTF-16), and the message is cut from the line by bytes;
``HEAD`` and ``CONTINUATION`` are tried only on the lines that are not whole records. Everything else
derives from that one result:

- **line numbers** without sorting and without a second pass when each file is read by one task (the
  files outnumber the cores evenly enough, or are gzip): a line's number is its row's index in its task,
  the low bits of ``monotonically_increasing_id``. Otherwise (a few large files, split across tasks) a
  first pass that decodes no text counts the lines of each split Spark reads (:func:`_splits`), as a
  raw count does;
- the **irregular lines** (heads, continuations, garbage: few in any real log) are grouped with a window
  over each file of them only, and joined back to their records by broadcast;
- the counts come from the pass itself (an ``Observation``), not from reading any table again.

:func:`analyze` writes the classifying pass once, as Parquet: the whole records in the records table's
own columns, the irregular lines beside them (one write, split by ``partitionBy``). The records read
from a file with no irregular line are the records table as they are, moved into place; only the
records of files with irregular lines (a stack trace, damage) are written again, with their
continuations. The derived tables read the records' Parquet: ``requests`` (the request log, 2.8 JSON
parsed once with ``from_json`` and an explicit schema, or 2.7's text form with ``regexp_extract``),
``state_changes``, ``controller_events`` (ZooKeeper-mode and KRaft controllers) and ``truncations`` (with
the records each truncation removed: the follower's log end offset at its become-follower minus the
offset it truncates to; and ``old_leader``, whether it is the move's old leader, the one whose removed
records had been acknowledged). Every table is written in a staging directory and moved into ``--out``
when all are complete (:class:`.files.Staging`).
"""

from __future__ import annotations

import json
import re
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kafka_lab.logs import layout

from . import files as _files
from .analyses import CONTROLLER_APIS

__all__ = [
    "Tables",
    "parse",
    "analyze",
    "REQUEST_SCHEMA",
    "TABLES",
    "RECORD_COLUMNS",
    "MAX_LINE_BYTES",
    "REJECT_WARN_SHARE",
]

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


REQUEST_SCHEMA = None  # built on first use (pyspark is imported lazily)

#: the records table's columns, in order (the Parquet files of every part of it have exactly these)
RECORD_COLUMNS = (
    "timestamp",
    "level",
    "logger",
    "message",
    "file",
    "broker",
    "log",
    "line",
    "continuations",
    "continuation",
    "container",
    "container_time",
    "source_line",
    "thread",
    "prefix",
    "uri",
)
#: a line longer than this is rejected unread (a binary file's "line" between two newlines can be hundreds
#: of MB: Java's regex on it runs out of memory); a request-log line of a large Metadata response is ~1 MB
MAX_LINE_BYTES = 8 << 20
#: how much of a too-long line the rejects table keeps
KEPT_BYTES = 1024
#: above this share of rejected lines, ``analyze`` warns (``kafka-lab analyze`` exits with status 3 above
#: its ``--max-rejected``)
REJECT_WARN_SHARE = 0.01


@dataclass
class Tables:
    """The parsed tables (DataFrames) of one log directory.

    ``lines_read``: the lines of every file (counted by the classifying pass); ``irregular``: the lines
    that are not a whole record on one line (heads, continuations, rejected lines; cached), with their
    ``status``; ``whole_records``: the records on one line (counted by the same pass)."""

    lines_read: int
    irregular: object
    records: object
    rejects: object
    requests: object
    state_changes: object
    controller_events: object
    truncations: object
    whole_records: int = 0
    _cached: list = field(default_factory=list, repr=False)
    _counts: dict | None = field(default=None, repr=False)

    def counts(self, records: int | None = None) -> dict:
        """``lines_read``, ``records``, ``continuations``, ``rejected``: from the classifying pass and the
        (few, cached) irregular lines; no table is read again."""
        if self._counts is None:
            self._counts = _odd_counts(self.irregular)
        c = self._counts
        return {
            "lines_read": int(self.lines_read),
            "records": int(self.whole_records + c["heads"] if records is None else records),
            "continuations": c["continuations"],
            "rejected": c["rejected"],
        }

    def table(self, name: str):
        return getattr(self, name)

    def unpersist(self) -> None:
        for df in self._cached:
            df.unpersist()


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
    """log4j's ``yyyy-MM-dd HH:mm:ss,SSS`` (``c``: a text the layout's ``TIMESTAMP`` matched) as a timestamp;
    null when the text names no time (``2024-02-30``, ``99:99:99``, ``23:59:60``) or a time before year 1
    (``0000-01-01``: Python's datetime, and so ``collect()``, cannot hold it). The reference parser's
    ``timestamp`` is ``None`` for the same texts.

    The comma becomes a dot and the text is cast (``try_cast``: null, not a failed job, for a date that does
    not exist): Spark's own parser of ``yyyy-MM-dd HH:mm:ss.SSS``, which checks each field as
    ``try_to_timestamp(c, 'yyyy-MM-dd HH:mm:ss,SSS')`` does (the same result on 3 million texts and on
    the dates above), at about half the cost of that pattern formatter (measured: 2.4 s against 3.7 s for
    the 3 million, 0.9 s for reading the text alone; under 1 s of a 1M-line parse either way)."""
    from pyspark.sql import functions as F

    t = F.concat(F.substring(c, 1, 19), F.lit("."), F.substring(c, 21, 3)).try_cast("timestamp")
    return F.when(F.year(t) >= 1, t)


def _blank_to_null(c):
    from pyspark.sql import functions as F

    return F.when(c != "", c)


def _text_source(spark, logdir, files=None):
    """``spark.read.text`` of the log files: ``files`` (found by :func:`.files.find_log_files`), or every
    ``*.log*`` file under the URI ``logdir`` as Spark lists it."""
    from pyspark.errors import AnalysisException

    p = str(logdir)
    try:
        if files is not None:
            return spark.read.text([f.path for f in files])
        if not _files.is_uri(p) and not Path(p).is_dir():
            raise ValueError(f"no log directory at {p!r}")
        return spark.read.option("recursiveFileLookup", "true").option("pathGlobFilter", _files.LOG_GLOB).text(p)
    except AnalysisException as e:
        raise ValueError(f"cannot read Kafka logs at {p!r}: {str(e).splitlines()[0]}") from None


def _list(logdir):
    """The files to read under a local ``logdir`` (each once), or None for a URI (Spark lists it)."""
    return None if _files.is_uri(logdir) else _files.find_log_files(logdir)


#: the low bits of ``monotonically_increasing_id``: a row's index in its task
_ROW_BITS = (1 << 33) - 1
#: a split size no file reaches: each file read whole, by a task of its own
_WHOLE_FILES = 1 << 50


def _one_task_per_file(files, cores: int) -> bool:
    """Whether reading each file in one task keeps the cores as busy as splitting the large ones would:
    the longest task load of the files dealt largest first to ``cores`` tasks at a time is within 10 % of
    an even share (gzip files are one task either way). With one task per file, a line's number is its
    row's index in the task, and no counting pass is needed."""
    if files is None:
        return False
    if not files:
        return True
    splittable = [f.size for f in files if not f.gzip]
    if not splittable:
        return True
    loads = [0] * max(1, cores)
    for size in sorted((f.size for f in files), reverse=True):
        loads[loads.index(min(loads))] += size
    even = sum(f.size for f in files) / len(loads)
    return max(loads) <= 1.1 * max(even, max(f.size for f in files if f.gzip) if len(splittable) < len(files) else 0)


@contextmanager
def _conf(spark, **settings):
    """Spark SQL settings for the actions inside (each restored after)."""
    keys = {k.replace("_", "."): str(v) for k, v in settings.items()}
    old = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def _whole_file_conf(spark, whole: bool):
    if not whole:
        return _conf(spark)
    return _conf(
        spark,
        spark_sql_files_maxPartitionBytes=_WHOLE_FILES,
        spark_sql_files_openCostInBytes=_WHOLE_FILES,
    )


def _file_columns(uri):
    """``file`` (the last two parts of the path: ``broker-1/server.log``), ``broker`` (the node id of its directory:
    ``broker-<id>/``, or ``controller-<id>/`` for a KRaft controller node, as ``generate-logs --mode kraft`` writes
    them) and ``log`` (the name before ``.log``) of a file's URI."""
    from pyspark.sql import functions as F

    file = F.substring_index(uri, "/", -2)
    return [
        file.alias("file"),
        _blank_to_null(_extract(file, r"(?:broker|controller)-(\d+)/", 1)).cast("int").alias("broker"),
        _extract(file, r"([A-Za-z\-]+)\.log[^/]*$", 1).alias("log"),
    ]


def _splits(spark, raw):
    """One row per (file, split) Spark reads: the first ``_id`` of the split and the lines before it in
    its file (so that ``line = _id - _first + _before + 1``). One pass over the files that decodes no
    text (the cost of a raw count); the result, a few rows per file, is collected and broadcast."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    rows = raw.groupBy("uri", "_split").agg(F.min("_id").alias("_first"), F.count("*").alias("_n")).collect()
    out, before = [], {}
    for r in sorted(rows, key=lambda r: (r.uri, r._split)):
        n0 = before.get(r.uri, 0)
        out.append((r.uri, r._split, r._first, n0))
        before[r.uri] = n0 + r._n
    schema = T.StructType(
        [
            T.StructField("uri", T.StringType()),
            T.StructField("_split", T.LongType()),
            T.StructField("_first", T.LongType()),
            T.StructField("_before", T.LongType()),
        ]
    )
    # built in the JVM (a literal array of structs), not with createDataFrame: a DataFrame made from a
    # Python list is a Python RDD, and every job that joins it would start Python workers to read it
    if not out:
        return spark.createDataFrame([], schema)
    rows = F.array(
        *[F.struct(*[F.lit(v).cast(f.dataType).alias(f.name) for v, f in zip(r, schema.fields)]) for r in out]
    )
    return spark.range(1).select(F.inline(rows))


def _numbered_lines(spark, logdir, files, whole: bool):
    """Every line: ``uri``, ``line`` (its number in its file, from 1) and ``text``."""
    from pyspark.sql import functions as F

    raw = _text_source(spark, logdir, files).select(
        F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("_split"),
        F.col("value").alias("text"),
        F.monotonically_increasing_id().alias("_id"),
    )
    if whole:
        return raw.select("uri", ((F.col("_id").bitwiseAND(F.lit(_ROW_BITS))) + 1).alias("line"), "text")
    splits = _splits(spark, raw)
    return raw.join(F.broadcast(splits), ["uri", "_split"]).select(
        "uri", (F.col("_id") - F.col("_first") + F.col("_before") + 1).alias("line"), "text"
    )


#: marks a whole record's result in ``regexp_replace`` and separates its fields: Latin-1 control characters,
#: so that Java keeps the result in one byte a character
_MARK, _SEP = "\u0001", "\u0002"
#: a whole record (:data:`layout.RECORD`) with its two spans around the message as groups: 1 the start span
#: (2 prefix, 3 bracketed date, 4 bare date, 5 level), 6 the end span (7 logger, 8 source line, 9 thread)
_SPANS = "(" + layout.RECORD_START + ")(?:.*)(" + layout.RECORD_END + ")"
_FIELDS = ("start", "end", "prefix", "date1", "date2", "level", "logger", "source_line", "thread")
_REPLACEMENT = _MARK + _SEP.join(f"${g}" for g in (1, 6, 2, 3, 4, 5, 7, 8, 9))
#: a head (:data:`layout.HEAD`): 1 the start span (2 prefix, 3 and 4 the date, 5 level)
_HEAD_SPAN = "(" + layout.RECORD_START + ")(?:.*)$"


def _container(prefix, i):
    """Group ``i`` of :data:`layout.CONTAINER_PREFIX` in a record's prefix (null if none)."""
    from pyspark.sql import functions as F

    return F.when(prefix.isNotNull(), _blank_to_null(_extract(prefix, layout.CONTAINER_PREFIX, i)))


def _classify(lines, max_line_bytes: int):
    """Each line classified once. A whole record becomes a row of :data:`RECORD_COLUMNS` (no continuations
    yet) with ``_k = "rec"``; any other line a row with ``_k = "odd"``, its kind in ``continuation`` and
    its text in ``message`` (cut to :data:`KEPT_BYTES` when longer than ``max_line_bytes``), the other
    columns null: one row layout for both, so that one Parquet write can hold both (``partitionBy("_k")``)."""
    from pyspark.sql import functions as F

    text = F.col("text")
    too_long = F.octet_length(text) > F.lit(max_line_bytes)
    lines = lines.withColumn("_r", F.when(~too_long, _replace(text, _SPANS, _REPLACEMENT)))
    r = F.col("_r")
    # matched: the result starts with the mark. A line that starts with it itself (rare: binary data) is tested
    # by the pattern alone. (Not ``_r != text``: Java gives back a line with invalid UTF-8 decoded, so changed.)
    whole = F.coalesce(
        F.when(text.startswith(_MARK), _rlike(text, layout.RECORD)).otherwise(r.startswith(_MARK)), F.lit(False)
    )
    lines = lines.withColumn("_whole", whole).withColumn(
        "_f", F.when(F.col("_whole"), F.split(F.substring(r, 2, 1 << 30), _SEP, -1))
    )
    f = F.col("_f")
    exact = F.size(f) == len(_FIELDS)  # a prefix or thread holding _SEP: the fields from the line itself

    def field(name):
        i = _FIELDS.index(name)
        group = (1, 6, 2, 3, 4, 5, 7, 8, 9)[i]
        return F.when(exact, F.element_at(f, i + 1)).otherwise(_extract(text, _SPANS, group))

    lines = lines.select(
        "uri",
        "line",
        "text",
        "_whole",
        too_long.alias("_too_long"),
        *[F.when(F.col("_whole"), field(n)).alias("_" + n) for n in _FIELDS],
    )
    start, end = F.col("_start"), F.col("_end")
    prefix = _blank_to_null(F.col("_prefix"))
    # the message in bytes, not characters: a string's length and substr count the characters of the
    # whole line (UTF-8), each time; a binary's substring and octet_length do not
    msg_bytes = F.octet_length(text) - F.octet_length(start) - F.octet_length(end)
    message = F.substring(text.cast("binary"), F.octet_length(start) + 1, msg_bytes).cast("string")
    kind = (
        F.when(F.col("_too_long"), "too_long")
        .when(_rlike(text, layout.HEAD), "head")
        .when(_rlike(text, layout.CONTINUATION), "continuation")
        .otherwise("other")
    )
    rec = F.col("_whole")
    kept = F.when(F.col("_too_long"), F.substring(text.cast("binary"), 1, KEPT_BYTES).cast("string")).otherwise(text)
    cols = {
        "timestamp": F.when(
            rec, _timestamp(F.coalesce(_blank_to_null(F.col("_date1")), _blank_to_null(F.col("_date2"))))
        ),
        "level": F.when(rec, F.col("_level")),
        "logger": F.when(rec, F.col("_logger")),
        "message": F.when(rec, message).otherwise(kept),
        "line": F.col("line"),
        "continuations": F.when(rec, F.lit(0)),
        "continuation": F.when(~rec, kind),
        "container": F.when(rec, _container(prefix, 1)),
        "container_time": F.when(rec, _container(prefix, 2)),
        "source_line": F.when(rec, _blank_to_null(F.col("_source_line"))),
        "thread": F.when(rec, _blank_to_null(F.col("_thread"))),
        "prefix": F.when(rec, prefix),
        "uri": F.col("uri"),
    }
    out = []
    for name in RECORD_COLUMNS:
        if name == "file":
            out += _file_columns(F.col("uri"))
        elif name in ("broker", "log"):
            continue
        else:
            out.append(cols[name].alias(name))
    return lines.select(*out, F.when(rec, "rec").otherwise("odd").alias("_k"))


def _odd(classified, prefixed=None):
    """The irregular lines (``_k = "odd"``, few), grouped with the record before them in their file; cached.

    Columns: ``uri``, ``file``, ``broker``, ``log``, ``line``, ``kind`` (``head``, ``continuation``,
    ``other``, ``too_long``), ``text``, ``group`` (the line of the record a line belongs to), ``tail`` (a
    head's first continuation that ends with `` (logger)``), ``status`` (``record``: a head whose logger
    came; ``continuation``; ``rejected``) and ``reason`` (why a rejected line was).

    A line of kind ``other`` that begins with its group's record's prefix and continues as
    :data:`layout.CONTINUATION` reads is a continuation (:func:`layout.continues`): the prefix of a head is
    read here, that of a whole record from ``prefixed`` (the whole records that have a prefix: ``uri``,
    ``line``, ``prefix``; None when there are none), looked up only for the groups that have such lines."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    text = F.col("text")
    odd = classified.where(F.col("_k") == "odd").select(
        "uri",
        "file",
        "broker",
        "log",
        "line",
        F.col("continuation").alias("kind"),
        F.col("message").alias("text"),
    )
    w = Window.partitionBy("uri").orderBy("line")
    # a run of consecutive odd lines: the line before it (if any) is a whole record, which opens the group
    odd = odd.withColumn("_run", F.col("line") - F.row_number().over(w))
    run = Window.partitionBy("uri", "_run").orderBy("line")
    upto = run.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    first = F.min("line").over(run.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
    is_head = F.col("kind") == "head"
    last_head = F.last(F.when(is_head, F.col("line")), ignorenulls=True).over(upto)
    head_prefix = F.when(is_head, F.coalesce(_extract(text, layout.RECORD_START, 1), F.lit("")))
    odd = (
        odd.withColumn("_first_odd", first)
        .withColumn("_head", last_head)
        .withColumn("_head_prefix", F.last(head_prefix, ignorenulls=True).over(upto))
    )
    odd = odd.withColumn(
        "group", F.coalesce(F.col("_head"), F.when(F.col("_first_odd") > 1, F.col("_first_odd") - 1))
    ).withColumn("group_kind", F.when(F.col("_head").isNotNull(), "head").when(F.col("group").isNotNull(), "record"))
    # an ``other`` line behind its group's record's own prefix, continuing as a continuation does
    other = (F.col("kind") == "other") & F.col("group").isNotNull()
    if prefixed is not None:
        wanted = odd.where(other & (F.col("group_kind") == "record")).select("uri", F.col("group").alias("line"))
        prefixes = prefixed.join(F.broadcast(wanted.distinct()), ["uri", "line"], "left_semi")
        odd = odd.join(
            F.broadcast(prefixes.select("uri", F.col("line").alias("group"), F.col("prefix").alias("_rec_prefix"))),
            ["uri", "group"],
            "left",
        )
        prefix = F.when(F.col("group_kind") == "head", F.col("_head_prefix")).otherwise(F.col("_rec_prefix"))
    else:
        prefix = F.when(F.col("group_kind") == "head", F.col("_head_prefix"))
    n = F.octet_length(prefix)
    continues = (
        other
        & (n > 0)
        & text.startswith(prefix)
        & _rlike(F.substring(text.cast("binary"), n + 1, 1 << 30).cast("string"), layout.CONTINUATION)
    )
    odd = odd.withColumn("kind", F.when(continues, "continuation").otherwise(F.col("kind")))
    odd = odd.withColumn(
        "tail_logger",
        F.when(
            (F.col("kind") == "continuation") & _rlike(text, layout.LOGGER_TAIL), _extract(text, layout.LOGGER_TAIL, 2)
        ),
    )
    # a head's tail: the first continuation of its group that ends with `` (logger)``
    group = Window.partitionBy("uri", "_run", "group")
    is_tail = F.col("tail_logger").isNotNull() & (F.col("group_kind") == "head")
    odd = odd.withColumn("tail", F.min(F.when(is_tail, F.struct("line", "tail_logger", "text"))).over(group))
    valid_group = (F.col("group_kind") == "record") | F.col("tail").isNotNull()
    kind = F.col("kind")
    status = (
        F.when((kind == "head") & valid_group, "record")
        .when((kind == "continuation") & F.col("group").isNotNull() & valid_group, "continuation")
        .otherwise("rejected")
    )
    reason = (
        F.when(kind == "too_long", "too_long")
        .when(kind == "other", "no_layout")
        .when(F.col("group").isNull(), "no_record_before")
        .otherwise("no_logger")
    )
    odd = odd.withColumn("status", status).withColumn("reason", F.when(F.col("status") == "rejected", reason))
    return odd.select(
        "uri", "file", "broker", "log", "line", "kind", "text", "group", "tail", "status", "reason"
    ).cache()


def _prefixed(records, metrics):
    """The whole records with a prefix (``uri``, ``line``, ``prefix``) when some line may continue one behind
    it (:func:`_odd`), else None (no lookup)."""
    from pyspark.sql import functions as F

    if not (metrics["other"] and metrics["prefixed"]):
        return None
    return records.where(F.col("prefix").isNotNull()).select("uri", "line", "prefix")


def _odd_counts(odd) -> dict:
    from pyspark.sql import functions as F

    row = odd.agg(
        F.count_if(F.col("status") == "continuation").alias("continuations"),
        F.count_if(F.col("status") == "rejected").alias("rejected"),
        F.count_if(F.col("status") == "record").alias("heads"),
    ).first()
    return {k: int(row[k] or 0) for k in ("continuations", "rejected", "heads")}


def _continued(odd):
    """Per record that has them (the group's first line): ``continuations`` and their text (``_conts``)."""
    from pyspark.sql import functions as F

    return (
        odd.where(F.col("status") == "continuation")
        .groupBy("uri", "group")
        .agg(
            F.count("*").alias("_n"),
            F.transform(F.array_sort(F.collect_list(F.struct("line", "text"))), lambda s: s["text"]).alias("_conts"),
        )
        .withColumnRenamed("group", "line")
    )


def _head_records(odd):
    """The heads whose logger came, as records (their fields from ``HEAD``, the logger from their tail)."""
    from pyspark.sql import functions as F

    text = F.col("text")
    heads = odd.where((F.col("kind") == "head") & (F.col("status") == "record"))
    start = _extract(text, _HEAD_SPAN, 1)
    heads = heads.withColumn("_start", start)
    prefix = _blank_to_null(_extract(F.col("_start"), layout.RECORD_START, 1))
    date = F.coalesce(
        _blank_to_null(_extract(F.col("_start"), layout.RECORD_START, 2)),
        _blank_to_null(_extract(F.col("_start"), layout.RECORD_START, 3)),
    )
    tl = F.col("tail.text")
    cols = {
        "timestamp": _timestamp(date),
        "level": _extract(F.col("_start"), layout.RECORD_START, 4),
        "logger": F.col("tail.tail_logger"),
        "message": F.substring(
            text.cast("binary"), F.octet_length("_start") + 1, F.octet_length(text) - F.octet_length("_start")
        ).cast("string"),
        "continuations": F.lit(0),
        "continuation": F.lit(None).cast("string"),
        "container": _container(prefix, 1),
        "container_time": _container(prefix, 2),
        "source_line": _blank_to_null(_extract(tl, layout.LOGGER_TAIL, 3)),
        "thread": _blank_to_null(_extract(tl, layout.LOGGER_TAIL, 4)),
        "prefix": prefix,
    }
    return heads.select(*[cols[c].alias(c) if c in cols else F.col(c) for c in RECORD_COLUMNS])


def _with_continuations(records, conts, broadcast: bool):
    """``records`` with their continuation lines (``conts``: :func:`_continued`), in :data:`RECORD_COLUMNS`."""
    from pyspark.sql import functions as F

    joined = records.join(F.broadcast(conts) if broadcast else conts, ["uri", "line"], "left")
    cols = {
        "continuations": F.coalesce(F.col("_n"), F.lit(0)).cast("int"),
        "continuation": F.array_join(F.col("_conts"), "\n"),
    }
    return joined.select(*[cols[c].alias(c) if c in cols else F.col(c) for c in RECORD_COLUMNS])


#: irregular lines up to which their continuations are broadcast to every task (else joined by a shuffle)
_BROADCAST_ODD = 2_000_000


def _observed(df, name: str, **metrics):
    """``df`` observed: after an action on it, ``obs.get`` holds ``metrics`` (Spark column expressions, which
    may use ``_p``: the task's partition, a column only while observed)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    # a name of its own: two parses of the same files (changed in between) are then two plans, so the second
    # never reads the first one's cached result
    obs = Observation(f"{name}-{uuid.uuid4().hex}")
    cols = df.columns
    df = df.withColumn("_p", F.spark_partition_id())
    return df.observe(obs, *[c.alias(k) for k, c in metrics.items()]).select(*cols), obs


def _pass_metrics():
    from pyspark.sql import functions as F

    return {
        "lines": F.count(F.lit(1)),
        "whole": F.count_if(F.col("_k") == "rec"),
        "odd": F.count_if(F.col("_k") == "odd"),
        # lines that may continue a record behind its prefix (_odd), and records with a prefix
        "other": F.count_if(F.col("continuation") == "other"),
        "prefixed": F.count_if(F.col("prefix").isNotNull()),
    }


def _tables(records, odd, lines_read, whole, cached) -> Tables:
    from pyspark.sql import functions as F

    rejects = odd.where(F.col("status") == "rejected").select("file", "line", "text", "reason")
    state_changes = _state_changes(records)
    return Tables(
        lines_read=lines_read,
        irregular=odd,
        records=records,
        rejects=rejects,
        requests=_requests(records),
        state_changes=state_changes,
        controller_events=_controller_events(records),
        truncations=_truncations(records, state_changes),
        whole_records=whole,
        _cached=cached,
    )


def parse(spark, logdir, *, mode: str = "auto", max_line_bytes: int = MAX_LINE_BYTES) -> Tables:
    """Parse every ``*.log*`` file under ``logdir`` into :class:`Tables`: the classifying pass runs once,
    here, into Spark's cache (memory, then disk); the tables are lazy DataFrames derived from it.

    ``mode``: ``"files"`` (each file read by one task, line numbers from the row ids), ``"splits"``
    (large files split across tasks, line numbers from a count per split) or ``"auto"`` (the first when
    it keeps every core as busy, :func:`_one_task_per_file`). Both give the same tables."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    files = _list(logdir)
    whole = _choose(spark, files, mode)
    classified, obs = _observed(
        _classify(_numbered_lines(spark, logdir, files, whole), max_line_bytes), "pass", **_pass_metrics()
    )
    classified = classified.persist(StorageLevel.MEMORY_AND_DISK)
    with _whole_file_conf(spark, whole):
        _read_or_explain(lambda: classified.write.format("noop").mode("overwrite").save(), logdir)
    m = obs.get
    odd = _odd(classified, _prefixed(classified.where(F.col("_k") == "rec"), m))
    recs = classified.where(F.col("_k") == "rec").select(*RECORD_COLUMNS)
    recs = recs.drop("continuations", "continuation").select("*")
    conts = _continued(odd)
    records = _with_continuations(recs, conts, m["odd"] < _BROADCAST_ODD).unionByName(
        _with_continuations(_head_records(odd).drop("continuations", "continuation"), conts, True)
    )
    return _tables(records, odd, m["lines"], m["whole"], [odd, classified])


def _choose(spark, files, mode: str) -> bool:
    if mode not in ("auto", "files", "splits"):
        raise ValueError(f"mode is 'auto', 'files' or 'splits', not {mode!r}")
    if mode == "files":
        if files is None:
            raise ValueError("mode 'files' needs a local directory (its files are listed before Spark reads them)")
        return True
    if mode == "splits":
        return False
    return _one_task_per_file(files, spark.sparkContext.defaultParallelism)


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
    # the request body as the broker wrote it, for the controller's requests (the analyses read their partitions;
    # a client request's body, most of the request log, stays in the records' message: cutting it out of every
    # line was a quarter of this table's time). Kafka writes ``"requestHeader":{...},"request":{...},"response":``,
    # and a key in quotes cannot occur inside a JSON string (its quotes are escaped), so the text between
    # the first ``"request":`` and the first ``,"response":`` is the body; other key orders go through the
    # parsed JSON (re-serialising every body costs as much as parsing the line)
    controller = is_json & j["requestHeader"]["requestApiKeyName"].isin(*CONTROLLER_APIS)
    kafka_order = body.contains('"request":') & body.contains(',"response":')
    cut = F.substring_index(F.substring_index(body, ',"response":', 1), '"request":', -1)
    cols.append(
        F.when(controller, F.when(kafka_order, cut).otherwise(F.get_json_object(body, "$.request"))).alias("request")
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


#: what ``controller_events`` reads, ZooKeeper mode's controller (2.8, ``kafka.controller.*`` in
#: controller.log) and KRaft's (3.x/4.x: the active controller's ``QuorumController`` and
#: ``ReplicationControlManager``, the heartbeat manager, the Raft client's ``QuorumState``, the snapshot
#: generator, and each broker's ``BrokerLifecycleManager``); the messages are Kafka's
#: (docs/kafka-reference.md §4 and §8.10 give each with its source file). First match wins.
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
    # KRaft: the quorum controller (QuorumController.QuorumMetaLogListener.handleLeaderChange, renounce)
    ("Becoming the active controller at epoch ", "elected"),
    (r"^(?:\[[^\]]*\] )?In the new epoch \d+, the leader is ", "leader_change"),
    ("Renouncing (?:the )?leadership", "resigned"),
    # KRaft: the Raft client's election (QuorumState.transitionTo: Completed transition to <state>)
    (r"Completed transition to Leader\(", "quorum_leader"),
    (r"Completed transition to (?:Candidate|Prospective)", "quorum_election"),
    (r"Completed transition to ", "quorum_transition"),
    # KRaft: fencing and unfencing (ReplicationControlManager.maybeFenceOneStaleBroker, BrokerHeartbeatManager)
    (r"Fencing broker \d+ because its session has timed out", "broker_fenced"),
    (r"Unfenced broker \d+ has requested and been granted fencing", "broker_fenced"),
    (r"The request from broker \d+ to unfence has been granted", "broker_unfenced"),
    ("The broker has been unfenced", "broker_unfenced"),
    # KRaft: controlled shutdown, asked (BrokerHeartbeatManager) and begun (BrokerLifecycleManager), and its end
    (r"Unfenced broker \d+ has requested and been granted a controlled shutdown", "controlled_shutdown"),
    ("Beginning controlled shutdown", "controlled_shutdown"),
    (r"broker \d+ has requested and been granted an immediate shutdown", "immediate_shutdown"),
    (r"The request from broker \d+ to shut down has been granted", "shutdown_granted"),
    (r"Successfully registered broker \d+ with broker epoch", "broker_registered"),
    # KRaft: the controller's side of a registration (ClusterControlManager.registerBroker)
    (r"Registering a new incarnation of broker \d+", "broker_registration"),
    # KRaft: partition leaders moved by the controller, and the metadata snapshots
    ("UNCLEAN partition change for ", "unclean_leader_election"),
    (
        r"^(?:\[[^\]]*\] )?(?:handleBroker\w+|enterControlledShutdown\[\d+\]): changing \d+ partition",
        "partitions_changed",
    ),
    ("Creating new KRaft snapshot file ", "snapshot"),
]
#: the loggers ``controller_events`` reads: ZooKeeper mode's controller and KRaft's (see above)
CONTROLLER_LOGGERS = (
    "kafka.controller",
    "org.apache.kafka.controller",
    "org.apache.kafka.raft.QuorumState",
    "kafka.server.BrokerLifecycleManager",
    "org.apache.kafka.image.publisher.SnapshotGenerator",
)
#: the node a line is about, from its log prefix (``[Controller id=1]``, ``[QuorumController id=1]``, KRaft
#: 3.0's ``[Controller 1]``, ``[RaftManager id=1]`` or ``nodeId=1``, ``[BrokerLifecycleManager id=1]``)
_NODE = (
    r"^\[(?:Controller|QuorumController|RaftManager|BrokerLifecycleManager|SnapshotGenerator)(?: id=| nodeId=| )(\d+)"
)


def _controller_events(records):
    from pyspark.sql import functions as F

    msg = F.col("message")
    logger = F.col("logger")
    of_controller = None
    for prefix in CONTROLLER_LOGGERS:
        c = logger.startswith(prefix)
        of_controller = c if of_controller is None else of_controller | c
    of_broker = logger == "kafka.server.BrokerLifecycleManager"
    return records.where(of_controller).select(
        "timestamp",
        "broker",
        "file",
        "line",
        "level",
        _event(msg, _CONTROLLER_EVENTS).alias("event"),
        F.when(~of_broker, F.coalesce(_int(msg, r"controllerId=(\d+)"), _int(msg, _NODE))).alias("controller_id"),
        _int(
            msg,
            r"(?:Epoch incremented to |active controller at epoch |In the new epoch |"
            r"transition to \w+\(.*?\bepoch=)(\d+)",
        ).alias("epoch"),
        _blank_to_null(
            _extract(
                msg,
                r"(?:for partitions |^\[Controller id=\d+\] Partition |UNCLEAN partition change for )(\S+?)(?: |,|:|$)",
                1,
            )
        ).alias("partition"),
        _int(
            msg,
            r"(?:New leader is |, the leader is |, leader: -?\d+ -> |transition to Leader\((?:localId=|localReplicaKey=ReplicaKey\(id=))(\d+)",
        ).alias("new_leader"),
        F.coalesce(
            _int(
                msg,
                r"(?:Shutting down broker|failure callback for|startup callback for|Fencing broker|[Uu]nfenced broker|"
                r"Fenced broker|from broker|registered broker|incarnation of broker) (\d+)",
            ),
            F.when(of_broker, _int(msg, _NODE)),  # a broker's own lifecycle: the broker itself
        ).alias("target_broker"),
        _blank_to_null(_extract(msg, r"triggered by (\w+)", 1)).alias("trigger"),
        _int(msg, r"ratio for broker (\d+)").alias("ratio_broker"),
        _blank_to_null(_extract(msg, r"ratio for broker \d+ is ([\d.E\-]+)", 1)).cast("double").alias("ratio"),
        "logger",
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


#: the row groups of the staged and written Parquet: small enough that every core gets a share of a table
_ROW_GROUP_BYTES = 16 << 20
_PART = re.compile(r"^part-(\d+)-")


def _read(spark, schema, *paths):
    """The Parquet this run wrote, read with the schema it was written with (every column nullable, as
    Spark writes them): without a schema, Spark runs a job of its own to read a file's footer first."""
    T = _types()
    nullable = T.StructType([T.StructField(f.name, f.dataType, True) for f in schema.fields])
    return spark.read.schema(nullable).parquet(*paths)


def _write(df, path: str, name: str):
    """Write ``df`` as Parquet at ``path``; the rows written (counted as they are written)."""
    from pyspark.sql import functions as F

    df, obs = _observed(df, name, rows=F.count(F.lit(1)))
    df.write.option("parquet.block.size", _ROW_GROUP_BYTES).mode("errorifexists").parquet(path)
    return int(obs.get["rows"])


def analyze(
    spark, logdir, out, *, overwrite: bool = False, mode: str = "auto", max_line_bytes: int = MAX_LINE_BYTES
) -> dict:
    """Parse ``logdir``, write each table as Parquet under ``out`` and ``summary.json``; return the summary.

    Refuses (``ValueError``, one line) an ``out`` that is, holds or lies inside ``logdir``, and a non-empty
    ``out`` unless ``overwrite`` (which replaces only the tables and ``summary.json``). Everything is
    written in a staging directory inside ``out`` and moved into place at the end; a failed run leaves
    ``out`` as it was. The classifying pass runs once and writes the whole records and the irregular
    lines; the records of files without irregular lines are moved into the records table as they are."""

    files = _list(logdir)
    _files.check_out(out, [logdir], overwrite=overwrite)
    if files is not None and not files:
        raise ValueError(f"no Kafka log files (named {_files.LOG_GLOB}) under {str(logdir)!r}")
    whole = _choose(spark, files, mode)
    staging = _files.Staging(spark, out)
    try:
        summary = _analyze(spark, logdir, files, whole, staging, max_line_bytes)
        summary["logdir"] = str(logdir)
        staging.write_text("summary.json", json.dumps(summary, indent=1, sort_keys=True) + "\n")
        staging.commit(_files.OUTPUTS)
    except BaseException:
        staging.abort()
        raise
    return summary


def _analyze(spark, logdir, files, whole, staging, max_line_bytes) -> dict:
    from pyspark.sql import functions as F

    stage = staging.path("_pass")
    metrics = _pass_metrics()
    metrics["files"] = F.collect_set(F.struct(F.col("_p").alias("p"), F.col("uri")))
    metrics["dirty_files"] = F.collect_set(F.when(F.col("_k") == "odd", F.col("uri")))
    classified, obs = _observed(
        _classify(_numbered_lines(spark, logdir, files, whole), max_line_bytes), "pass", **metrics
    )
    # one write, two directories (_k=rec, _k=odd) and no sort: each task keeps a writer open per directory
    with (
        _whole_file_conf(spark, whole),
        _conf(spark, spark_sql_optimizer_plannedWrite_enabled="false", spark_sql_maxConcurrentOutputFileWriters=4),
    ):
        _read_or_explain(
            lambda: classified.write.option("parquet.block.size", _ROW_GROUP_BYTES).partitionBy("_k").parquet(stage),
            logdir,
        )
    m = obs.get
    if m["lines"] == 0:
        raise ValueError(f"no Kafka log lines (files named {_files.LOG_GLOB}) under {str(logdir)!r}")
    dirty_uris = set(m["dirty_files"])
    dirty_parts = {r["p"] for r in m["files"] if r["uri"] in dirty_uris}
    staged = _read(spark, classified.schema, stage)
    odd = _odd(staged, _prefixed(staged.where(F.col("_k") == "rec"), m))
    record_schema = staged.select(*RECORD_COLUMNS).schema
    try:
        counts = _odd_counts(odd)
        records_dir = staging.path("records")
        staging.mkdirs(records_dir)
        rewrite = []
        for f in staging.files(f"{stage}/_k=rec"):
            name = f.rsplit("/", 1)[1]
            p = _PART.match(name)
            if p is None or int(p.group(1)) in dirty_parts:
                rewrite.append(f)
            else:  # a file with no irregular line: its records are final
                staging.move(f, f"{records_dir}/{name}")
        conts = _continued(odd)
        small = m["odd"] < _BROADCAST_ODD
        parts = _with_continuations(_head_records(odd).drop("continuations", "continuation"), conts, True)
        if rewrite:
            again = _read(spark, record_schema, *rewrite).drop("continuations", "continuation")
            parts = _with_continuations(again, conts, small).unionByName(parts)
        summary = {"tables": {}, "lines_read": int(m["lines"])}
        redo = staging.path("_rewrite")
        _read_or_explain(lambda: _write(parts, redo, "records"), logdir)
        for f in staging.files(redo):
            staging.move(f, f"{records_dir}/{f.rsplit('/', 1)[1]}")
        summary["tables"]["records"] = int(m["whole"]) + counts["heads"]
        records = _read(spark, record_schema, records_dir)
        state_changes = _state_changes(records)
        derived = {
            "rejects": odd.where(F.col("status") == "rejected").select("file", "line", "text", "reason"),
            "requests": _requests(records),
            "state_changes": state_changes,
            "controller_events": _controller_events(records),
            "truncations": _truncations(records, state_changes),
        }
        # the derived tables read the records' Parquet in tasks of a row group or so: every core busy to the end
        # (split by the logs' size, the request log's few large files made 3 tasks for 2 cores)
        with _conf(spark, spark_sql_files_maxPartitionBytes=_ROW_GROUP_BYTES, spark_sql_files_openCostInBytes=0):
            for name in TABLES[1:]:
                summary["tables"][name] = _read_or_explain(
                    lambda n=name: _write(derived[n], staging.path(n), n), logdir
                )
        summary.update(
            records=summary["tables"]["records"], continuations=counts["continuations"], rejected=counts["rejected"]
        )
        schemas = {"records": record_schema, **{n: df.schema for n, df in derived.items()}}
        summary.update(_answers(spark, staging, summary, odd, schemas))
    finally:
        odd.unpersist()
    return summary


def _answers(spark, staging, summary, odd, schemas) -> dict:
    """What lab 08 asks, from the tables just written (see :mod:`.analyses`)."""
    from pyspark.sql import functions as F

    from . import analyses

    tables = {n: _read(spark, schemas[n], staging.path(n)) for n in TABLES}
    out = {}
    share = summary["rejected"] / summary["lines_read"] if summary["lines_read"] else 0.0
    out["rejected_share"] = round(share, 6)
    out.update(analyses.summary_answers(tables))
    # the files with most rejected lines, and the share of their lines: a file's last line is a record's or an
    # irregular line's, so the most of both is its number of lines
    bad = odd.where(F.col("status") == "rejected").groupBy("uri", "file").agg(F.count("*").alias("rejected"))
    bad = bad.orderBy(F.desc("rejected"), "file").limit(10).collect()
    if bad:
        uris = [r.uri for r in bad]
        lines = dict(
            tables["records"]
            .select("uri", "line")
            .where(F.col("uri").isin(uris))
            .unionByName(odd.select("uri", "line").where(F.col("uri").isin(uris)))
            .groupBy("uri")
            .agg(F.max("line"))
            .collect()
        )
        out["most_rejected"] = [
            {"file": r.file, "rejected": int(r.rejected), "rejected_share": round(r.rejected / lines[r.uri], 4)}
            for r in bad
        ]
    else:
        out["most_rejected"] = []
    return out

"""Kafka's log4j layout and the regular expressions that read it back.

Every appender of Kafka 2.8's ``config/log4j.properties`` uses the same ``PatternLayout``::

    [%d] %p %m (%c)%n

``%d`` is log4j 1.x's ISO8601 date, ``2019-04-11 12:32:24,676`` (milliseconds after a comma), ``%p``
the level, ``%m`` the message (with its ``logIdent`` prefix, e.g. ``[Broker id=1] ``) and ``%c`` the
logger's name (docs/kafka-reference.md §4). A message with a newline keeps it, so the logger ends up
at the end of its *last* line; a logged exception's stack trace follows the line (log4j 1's
``PatternLayout`` does not handle throwables: the appender prints them after it).

Real logs come in more shapes than ours; the patterns below read all of these:

- the default layout above;
- Kafka's test layout (``core/src/test/resources/log4j.properties``): ``[%d] %p %m (%c:%L)%n``;
- Strimzi and other operators' ``%d{ISO8601} %p %m (%c) [%t]%n`` (no brackets, the thread after);
- any prefix before the record: a record is recognised wherever the layout starts on the line (its
  date, level, message and `` (logger)`` at the end), whatever a container runtime, a log shipper, a pod
  multiplexer or a test harness put before it (:data:`RECORD_START`'s first group, kept as the record's
  ``prefix``). The prefixes of ``docker logs --timestamps`` / ``kubectl logs --timestamps`` (an RFC 3339
  time and a space), docker-compose's ``name  | `` or both (compose's name first) are also read apart
  (:data:`CONTAINER_PREFIX`: ``container``, ``container_time``), and are the only ones any continuation
  line (a stack trace) may carry: any prefix there would make every line a continuation. Behind another
  prefix, a continuation carries the one of the record it continues (:func:`continues`): ``kubectl logs
  --prefix``'s ``[pod/<pod>/<container>] ``, stern's ``<pod> <container> ``, a harness's constant columns.

The patterns are plain strings in the common subset of Python's ``re`` and Java's
``java.util.regex``: the Spark pipeline (:mod:`kafka_lab.spark`) and the reference parser
(:mod:`kafka_lab.logs.parse`) use the very same text. The same text means the same match only with
each side's flags, which make both read every line alike:

- Python compiles them with :data:`PYTHON_FLAGS` (``re.ASCII``): ``\\d``, ``\\w`` and ``\\s`` are ASCII, as
  in Java (without it Python's ``\\d`` matches ``٢``, its ``\\w`` ``é``);
- Java gets them behind ``(?d)`` (``UNIX_LINES``, added by the pipeline): only ``\\n`` ends a line for
  ``.``, ``^`` and ``$``, as in Python (without it Java's ``.`` stops at ``\\r``, U+0085, U+2028 and
  U+2029, and its ``$`` matches before a final one of them). ``(?d)`` is Java's alone: Python rejects it.

Times here are UTC: the generator writes simulated times from a UTC start, and the parsers read them
as UTC (a real broker writes its JVM's local time zone).
"""

from __future__ import annotations

import datetime as _dt
import re as _re

__all__ = [
    "LAYOUT",
    "TEST_LAYOUT",
    "STRIMZI_LAYOUT",
    "LEVELS",
    "PYTHON_FLAGS",
    "TIMESTAMP",
    "PREFIX",
    "CONTAINER_PREFIX",
    "RECORD_START",
    "RECORD_END",
    "RECORD",
    "HEAD",
    "CONTINUATION",
    "LOGGER_TAIL",
    "continues",
    "format_timestamp",
    "TimestampFormatter",
    "record_line",
]

LAYOUT = "[%d] %p %m (%c)%n"
TEST_LAYOUT = "[%d] %p %m (%c:%L)%n"
STRIMZI_LAYOUT = "%d{ISO8601} %p %m (%c) [%t]%n"

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")

#: the flags Python's ``re`` compiles the patterns below with (ASCII ``\d``, ``\w``, ``\s``, as Java's)
PYTHON_FLAGS = _re.ASCII

#: log4j 1.x's ISO8601 date: ``yyyy-MM-dd HH:mm:ss,SSS``
TIMESTAMP = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}"
_LEVEL = "(" + "|".join(LEVELS) + ")"
_LOGGER = r"([A-Za-z_$][\w$.\-]*)"

#: what a container runtime may put before a line: docker-compose's ``name  | `` (group 1) and/or an
#: RFC 3339 time (group 2, ``docker logs -t``, ``kubectl logs --timestamps``)
PREFIX = r"(?:([\w.\-]+) +\| )?(?:(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+\-]\d{2}:\d{2})) )?"
#: a record's prefix read as a container runtime's (groups 1 compose name, 2 container time); a prefix this
#: does not match whole is kept as it is, with no container fields
CONTAINER_PREFIX = "^" + PREFIX + "$"

#: what a record's first line holds before its message: groups 1 the prefix (whatever comes before the
#: layout: the shortest that lets the line match), 2 bracketed date (Kafka's layouts), 3 bare date
#: (Strimzi's), 4 level
RECORD_START = r"^(.*?)(?:\[(" + TIMESTAMP + r")\]|(" + TIMESTAMP + r")) " + _LEVEL + r" +"

#: what a record's line holds after its message: `` (logger)``, `` (logger:line)``, then maybe `` [thread]``.
#: Groups: 1 logger, 2 source line (``%L``), 3 thread (``%t``)
RECORD_END = r" \(" + _LOGGER + r"(?::(\d+|\?))?\)(?: \[([^\]]*)\])?$"

#: one whole record on one line. Groups: 1 prefix, 2 bracketed date (Kafka's layouts), 3 bare date
#: (Strimzi's), 4 level, 5 message, 6 logger, 7 source line (``%L``), 8 thread (``%t``)
RECORD = RECORD_START + "(.*)" + RECORD_END

#: the start of a record whose logger is not on this line: the first line of a message with a newline,
#: or a line cut short. Same groups 1-5 as :data:`RECORD` (5: the rest of the line)
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


def continues(text: str, prefix: str | None, continuation: _re.Pattern) -> bool:
    """Whether ``text`` continues a record whose prefix is ``prefix`` (:data:`RECORD`'s group 1) though
    :data:`CONTINUATION` does not match it whole: it begins with that very prefix, and what follows matches
    ``continuation`` (:data:`CONTINUATION` compiled). A record without a prefix gives no such line.

    A pod multiplexer or a test harness puts its prefix before every line of a record, the stack trace's
    included (``kafka-0 kafka \\tat kafka.log.Log...``, ``kafka-0 kafka  (kafka.server.KafkaConfig)``); only
    the open record's own prefix is accepted, so a line of another pod, or any line with a space in it,
    is not taken for a continuation."""
    return bool(prefix) and text.startswith(prefix) and continuation.match(text[len(prefix) :]) is not None


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def format_timestamp(epoch_ms: float) -> str:
    """``%d`` of ``epoch_ms`` (UTC): ``2024-03-04 13:05:09,042`` (milliseconds truncated, as log4j does)."""
    ms = int(epoch_ms // 1)
    t = _EPOCH + _dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%d %H:%M:%S") + f",{ms % 1000:03d}"


class TimestampFormatter:
    """``[%d]`` fast: the date and time to the second are formatted once per second and reused.

    >>> f = TimestampFormatter()
    >>> f(1709557509042.7)
    '[2024-03-04 13:05:09,042]'
    """

    __slots__ = ("_second", "_text")

    def __init__(self):
        self._second = None
        self._text = ""

    def __call__(self, epoch_ms: float) -> str:
        ms = int(epoch_ms // 1)
        return f"{self.second(ms // 1000)}{ms % 1000:03d}]"

    def second(self, s: int) -> str:
        """``[%d]`` up to the milliseconds of the second ``s`` (epoch seconds): ``[2024-03-04 13:05:09,``."""
        if s != self._second:
            self._second = s
            self._text = "[" + (_EPOCH + _dt.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S") + ","
        return self._text


def record_line(epoch_ms: float, level: str, message: str, logger: str, *, layout: str = LAYOUT, thread: str = "main"):
    """One record as ``layout`` writes it (without the final newline).

    ``layout`` is :data:`LAYOUT`, :data:`TEST_LAYOUT` (the source line is written as ``?``, as log4j does
    without location information) or :data:`STRIMZI_LAYOUT` (``thread`` is ``%t``).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    d = format_timestamp(epoch_ms)
    if layout == LAYOUT:
        return f"[{d}] {level} {message} ({logger})"
    if layout == TEST_LAYOUT:
        return f"[{d}] {level} {message} ({logger}:?)"
    if layout == STRIMZI_LAYOUT:
        return f"{d} {level} {message} ({logger}) [{thread}]"
    raise ValueError(f"unknown layout {layout!r}; known: {LAYOUT!r}, {TEST_LAYOUT!r}, {STRIMZI_LAYOUT!r}")

"""The reference parser: the rules :mod:`kafka_lab.spark` applies, as a plain Python loop.

Each line of a file is one of three things (:mod:`.layout` has the patterns):

- the **start of a record**: a whole record (:data:`~.layout.RECORD`: date, level, message and logger on
  one line, after any prefix, kept in ``prefix``) or a record's first line whose logger comes later (:data:`~.layout.HEAD`: a message with
  a newline, whose last line ends with `` (logger)``);
- a **continuation** (:data:`~.layout.CONTINUATION`: a stack trace's lines, the indented lines of a
  message with a newline): it belongs to the last record started before it in the same file. Behind a
  prefix the layout list does not know (a pod multiplexer's ``pod container``, a test harness's own
  columns), a continuation carries the prefix of that record: a line that begins with the open record's
  ``prefix``, exactly, and continues after it as :data:`~.layout.CONTINUATION` reads, is a continuation
  (:func:`~.layout.continues`). Only the record's own prefix: any prefix would make every line with a
  space in it a continuation;
- anything else is **rejected** (garbage, a line cut short before its logger).

A record whose logger never comes (a head with no `` (logger)`` tail among its continuations: a line cut
short) is rejected, with its continuation lines. So every line is counted exactly once:
``lines read = records + continuations + rejected``.

A rejected line is kept whole, as it was read (a rejected head too, not only its message).

A record's ``timestamp`` is its date as written, or ``None`` when the date does not exist
(``2024-02-30``, ``99:99:99``): the record is still a record, as in the Spark pipeline, whose
``timestamp`` is then null.

**Lines** are split where Spark's text reader splits them, which is also where Python's ``open()`` in its
default newline mode splits them: at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (not at U+2028, U+0085 or the
other breaks of ``str.splitlines``). :func:`parse_lines` takes an open file, a list of lines, or a
file's whole text as one ``str``; a line given with a ``\\r`` or ``\\n`` inside is split there, so a
file opened with ``newline="\\n"`` reads the same.

The patterns are compiled with ``re.ASCII`` (:data:`~.layout.PYTHON_FLAGS`): ``\\d`` and ``\\w`` are ASCII, as
in Java, so both parsers classify every line the same way.

The Spark pipeline does the same with Spark's native functions; this loop is what it is tested
against, and the baseline of ``benchmarks/spark_pipeline.py``.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import re
from dataclasses import dataclass, field

from .layout import CONTAINER_PREFIX, CONTINUATION, HEAD, LOGGER_TAIL, PYTHON_FLAGS, RECORD
from .layout import continues as _continues

__all__ = ["Record", "Parsed", "parse_lines", "parse_timestamp"]

_RECORD = re.compile(RECORD, PYTHON_FLAGS)
_HEAD = re.compile(HEAD, PYTHON_FLAGS)
_CONT = re.compile(CONTINUATION, PYTHON_FLAGS)
_TAIL = re.compile(LOGGER_TAIL, PYTHON_FLAGS)
_CONTAINER = re.compile(CONTAINER_PREFIX, PYTHON_FLAGS)
#: where Spark's text reader (Hadoop's LineReader) and Python's universal newlines end a line
_NEWLINE = re.compile(r"\r\n|\r|\n")


def parse_timestamp(text: str) -> _dt.datetime | None:
    """log4j's ``yyyy-MM-dd HH:mm:ss,SSS`` as a UTC datetime; ``None`` when there is no such time
    (``2024-02-30``, ``25:00:00``), as Spark's ``try_to_timestamp`` gives null."""
    try:
        return _dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=_dt.UTC)
    except ValueError:
        return None


class _Dates:
    """Whether a date text names a real time, remembered for the last second seen (records come in
    runs within a second, so this checks a few dates per second of log, not every line)."""

    __slots__ = ("_second", "_real")

    def __init__(self):
        self._second = None
        self._real = False

    def real(self, text: str) -> bool:
        second = text[:19]
        if second != self._second:
            self._second = second
            self._real = parse_timestamp(second + ",000") is not None
        return self._real


def _split(lines):
    """The lines of ``lines`` (an iterable of lines, or a file's whole text), each without its line
    ending, split where Spark's text reader splits them (:data:`_NEWLINE`)."""
    if isinstance(lines, str):
        parts = _NEWLINE.split(lines)
        if parts[-1] == "":  # the final line's ending, or an empty text: no line after it
            parts.pop()
        yield from parts
        return
    if isinstance(lines, (bytes, bytearray)):
        raise TypeError("parse_lines reads text: decode the bytes, or open the file in text mode")
    for raw in lines:
        if not isinstance(raw, str):
            raise TypeError(
                "parse_lines takes an iterable of lines (str: an open text file, a list) or a file's whole "
                f"text as one str; got a line of type {type(raw).__name__}"
            )
        text = raw[:-1] if raw[-1:] == "\n" else raw
        if "\r" not in text and "\n" not in text:  # the common line: one "\n" ending, or none
            yield text
            continue
        parts = _NEWLINE.split(raw)  # a "\r\n" or "\r" ending, or breaks inside the line
        if parts[-1] == "" and raw[-1] in "\r\n":
            parts.pop()  # the line's own ending: no line after it
        yield from parts


@dataclass
class Record:
    timestamp: str | None  # the date as written (``2024-03-04 13:05:09,042``); None if there is no such time
    level: str
    logger: str | None
    message: str
    file: str
    line: int  # 1-based line number of the record's first line
    continuations: int = 0
    container: str | None = None
    container_time: str | None = None
    source_line: str | None = None
    thread: str | None = None
    prefix: str | None = None  # what came before the layout on the line (None: the line starts with it)


@dataclass
class Parsed:
    records: list = field(default_factory=list)
    continuations: int = 0
    rejected: list = field(default_factory=list)  # (file, line number, text)
    lines_read: int = 0


def parse_lines(lines, file: str = "", out: Parsed | None = None) -> Parsed:
    """Parse one file's lines into ``out``: an iterable of strings (an open text file, a list; newlines
    stripped or not) or the file's whole text as one ``str`` (split into lines as a file is read)."""
    out = out or Parsed()
    first_reject = len(out.rejected)
    dates = _Dates()
    pending = None  # (record, [continuation (n, text)], complete, the record's first line)

    def close():
        nonlocal pending
        if pending is None:
            return
        rec, conts, complete, first = pending
        if complete:
            rec.continuations = len(conts)
            out.records.append(rec)
            out.continuations += len(conts)
        else:
            out.rejected.append((file, rec.line, first))
            out.rejected.extend((file, n, t) for n, t in conts)
        pending = None

    def date(g):
        d = g[1] or g[2]
        return d if dates.real(d) else None

    def container(prefix):
        if not prefix:
            return None, None
        c = _CONTAINER.match(prefix)
        return (c.group(1), c.group(2)) if c else (None, None)

    for n, text in enumerate(_split(lines), 1):
        out.lines_read += 1
        m = _RECORD.match(text)
        if m:
            close()
            g = m.groups()
            rec = Record(date(g), g[3], g[5], g[4], file, n, 0, *container(g[0]), g[6], g[7], g[0] or None)
            pending = (rec, [], True, text)
            continue
        m = _HEAD.match(text)
        if m:
            close()
            g = m.groups()
            rec = Record(date(g), g[3], None, g[4], file, n, 0, *container(g[0]), prefix=g[0] or None)
            pending = (rec, [], False, text)
            continue
        if pending is not None and (_CONT.match(text) or _continues(text, pending[0].prefix, _CONT)):
            rec, conts, complete, first = pending
            conts.append((n, text))
            if not complete:
                t = _TAIL.match(text)
                if t:
                    rec.logger, rec.source_line, rec.thread = t.group(2), t.group(3), t.group(4)
                    pending = (rec, conts, True, first)
            continue
        out.rejected.append((file, n, text))
    close()
    # a head's group is rejected when it ends, after the lines rejected while it was open: line order
    mine = out.rejected[first_reject:]
    if any(a[1] > b[1] for a, b in itertools.pairwise(mine)):
        out.rejected[first_reject:] = sorted(mine, key=lambda r: r[1])
    return out

"""The reference parser: the rules :mod:`kafka_lab.spark` applies, as a plain Python loop.

Each line of a file is one of three things (:mod:`.layout` has the patterns):

- the **start of a record**: a whole record (:data:`~.layout.RECORD`: date, level, message and logger on
  one line) or a record's first line whose logger comes later (:data:`~.layout.HEAD`: a message with
  a newline, whose last line ends with `` (logger)``);
- a **continuation** (:data:`~.layout.CONTINUATION`: a stack trace's lines, the indented lines of a
  message with a newline): it belongs to the last record started before it in the same file;
- anything else is **rejected** (garbage, a line cut short before its logger).

A record whose logger never comes (a head with no `` (logger)`` tail among its continuations: a line cut
short) is rejected, with its continuation lines. So every line is counted exactly once:
``lines read = records + continuations + rejected``.

The Spark pipeline does the same with Spark's native functions; this loop is what it is tested
against, and the baseline of ``benchmarks/spark_pipeline.py``.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field

from .layout import CONTINUATION, HEAD, LOGGER_TAIL, RECORD

__all__ = ["Record", "Parsed", "parse_lines", "parse_timestamp"]

_RECORD = re.compile(RECORD)
_HEAD = re.compile(HEAD)
_CONT = re.compile(CONTINUATION)
_TAIL = re.compile(LOGGER_TAIL)


def parse_timestamp(text: str) -> _dt.datetime:
    """log4j's ``yyyy-MM-dd HH:mm:ss,SSS`` as a UTC datetime."""
    return _dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=_dt.UTC)


@dataclass
class Record:
    timestamp: str
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


@dataclass
class Parsed:
    records: list = field(default_factory=list)
    continuations: int = 0
    rejected: list = field(default_factory=list)  # (file, line number, text)
    lines_read: int = 0


def parse_lines(lines, file: str = "", out: Parsed | None = None) -> Parsed:
    """Parse one file's lines (an iterable of strings, newlines stripped or not) into ``out``."""
    out = out or Parsed()
    pending = None  # (record, [continuation (n, text)], complete)

    def close():
        nonlocal pending
        if pending is None:
            return
        rec, conts, complete = pending
        if complete:
            rec.continuations = len(conts)
            out.records.append(rec)
            out.continuations += len(conts)
        else:
            out.rejected.append((file, rec.line, rec.message))
            out.rejected.extend((file, n, t) for n, t in conts)
        pending = None

    for n, raw in enumerate(lines, 1):
        text = raw.rstrip("\n").rstrip("\r")
        out.lines_read += 1
        m = _RECORD.match(text)
        if m:
            close()
            g = m.groups()
            rec = Record(g[2] or g[3], g[4], g[6], g[5], file, n, 0, g[0], g[1], g[7], g[8])
            pending = (rec, [], True)
            continue
        m = _HEAD.match(text)
        if m:
            close()
            g = m.groups()
            pending = (Record(g[2] or g[3], g[4], None, g[5], file, n, 0, g[0], g[1]), [], False)
            continue
        if pending is not None and _CONT.match(text):
            rec, conts, complete = pending
            conts.append((n, text))
            if not complete:
                t = _TAIL.match(text)
                if t:
                    rec.logger, rec.source_line, rec.thread = t.group(2), t.group(3), t.group(4)
                    pending = (rec, conts, True)
            continue
        out.rejected.append((file, n, text))
    close()
    return out

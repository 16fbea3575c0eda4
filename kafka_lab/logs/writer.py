"""Writing a cluster's log directories as Kafka's log4j does, streaming, at constant memory.

One directory per broker (``broker-<id>/``), in it the files of Kafka 2.8's ``config/log4j.properties``:
``server.log``, ``state-change.log``, ``kafka-request.log`` and ``controller.log``. Their appenders are
``DailyRollingFileAppender`` with ``DatePattern='.'yyyy-MM-dd-HH``: at the first line of a new hour
the current file is renamed ``<file>.<yyyy-MM-dd-HH of the hour it holds>`` and a new one started, so
a directory holds ``server.log.2024-03-04-12``, ``server.log.2024-03-04-13``, ... and ``server.log``
(the current hour). :class:`LogWriter` does the same (``roll=False`` keeps one file each).
``gzip=True`` compresses each file as logrotate's ``compress`` would (``server.log.gz``,
``server.log.2024-03-04-12.gz``; no time stamp in the gzip header, so the same seed gives the same
bytes): Spark reads them as text, and the committed sample stays small.

Lines must come in time order per file; the writer keeps one open file per broker and log, buffered,
and counts what it wrote (lines, records, continuation lines, rejected lines), so that the ground
truth of :mod:`.scenario` never re-reads the output.
"""

from __future__ import annotations

import datetime as _dt
import gzip as _gzip
import io
import os
from pathlib import Path

from .layout import TimestampFormatter
from .render import FILES

__all__ = ["LogWriter", "broker_dir", "log_file_name", "prepare_out_dir", "TRUTH_FILE"]

TRUTH_FILE = "ground-truth.json"

_HOUR_MS = 3_600_000
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def broker_dir(broker: int) -> str:
    return f"broker-{broker}"


def log_file_name(file: int) -> str:
    return f"{FILES[file]}.log"


def _own_files(out: Path) -> tuple[list[Path], list[Path]]:
    """What ``out`` holds: (the files this module writes: ``broker-<id>/<log>.log*`` (``controller-<id>/`` for a
    KRaft controller node) and the ground truth;
    everything else)."""
    import re

    own_log = re.compile(
        r"^(?:" + "|".join(re.escape(f) for f in FILES) + r")\.log(?:\.\d{4}-\d{2}-\d{2}-\d{2})?(?:\.gz)?$"
    )
    own, other = [], []
    for p in sorted(out.iterdir()):
        if p.name == TRUTH_FILE and p.is_file() and not p.is_symlink():
            own.append(p)
        elif re.fullmatch(r"(?:broker|controller)-\d+", p.name) and p.is_dir() and not p.is_symlink():
            for q in sorted(p.iterdir()):
                (own if own_log.match(q.name) and q.is_file() and not q.is_symlink() else other).append(q)
        else:
            other.append(p)
    return own, other


def prepare_out_dir(out_dir, *, replace: bool = False) -> None:
    """Refuse to write into a directory that holds anything, unless ``replace``: then the files a previous run
    wrote (``broker-<id>/`` logs and ``ground-truth.json``) are removed first, and anything else there is
    refused too (mixed with the new logs it would be read as theirs). ``ValueError`` of one line."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{str(out_dir)!r} is a file: give a directory to write the logs in")
    if not out.is_dir() or not any(out.iterdir()):
        return
    own, other = _own_files(out)
    if other:
        names = ", ".join(str(p.relative_to(out)) for p in other[:3]) + (" ..." if len(other) > 3 else "")
        raise ValueError(
            f"{str(out_dir)!r} holds files generate-logs did not write ({names}): choose an empty or new directory"
        )
    if not replace:
        raise ValueError(
            f"{str(out_dir)!r} already holds generated logs: pass --replace to replace them, or choose an empty directory"
        )
    for p in own:
        p.unlink()
    for d in out.iterdir():
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()


class _Out:
    __slots__ = ("path", "fh", "hour", "lines")

    def __init__(self, path: Path):
        self.path = path
        self.fh = None
        self.hour = None
        self.lines = 0


class LogWriter:
    """Per broker and file, one open, hourly-rolled, buffered log file; counts every line it writes."""

    def __init__(
        self, out_dir, brokers, *, roll: bool = True, buffer_bytes: int = 1 << 20, gzip: bool = False, dirs=None
    ):
        """``brokers``: the nodes to write; ``dirs``: each one's directory name (default ``broker-<id>``; a KRaft
        controller node's is ``controller-<id>``, :func:`.kraft.node_dir`)."""
        self.out = Path(out_dir)
        self.dirs = {b: (dirs[b] if dirs else broker_dir(b)) for b in brokers}
        self.roll = roll
        self.gzip = gzip
        self.suffix = ".gz" if gzip else ""
        self.buffer_bytes = buffer_bytes
        self.fmt = TimestampFormatter()
        self.files: dict = {}
        for b in brokers:
            d = self.out / self.dirs[b]
            d.mkdir(parents=True, exist_ok=True)
            for f in range(len(FILES)):
                self.files[(b, f)] = _Out(d / (log_file_name(f) + self.suffix))
        self.lines = 0
        self.records = 0
        self.continuations = 0
        self.rejected = 0
        self.bytes = 0

    def _open(self, path: Path):
        if self.gzip:
            file = open(path, "wb")  # noqa: SIM115
            raw = _gzip.GzipFile(filename="", mode="wb", fileobj=file, mtime=0)
            fh = io.TextIOWrapper(io.BufferedWriter(raw, self.buffer_bytes), encoding="utf-8", newline="\n")
            fh.kafka_lab_file = file
            return fh
        # newline="\n": log4j's "\n" as it is; the default (None) makes TextIOWrapper copy every string it is
        # given to translate "\n" to os.linesep, which cost more than half the writing time (1M lines: 1.1 s)
        return open(path, "w", encoding="utf-8", newline="\n", buffering=self.buffer_bytes)

    def _close(self, fh) -> None:
        fh.close()  # closes the gzip stream, not the file under it
        if self.gzip:
            fh.kafka_lab_file.close()

    def _handle(self, out: _Out, epoch_ms: int):
        hour = epoch_ms // _HOUR_MS
        if out.fh is None:
            out.fh = self._open(out.path)
            out.hour = hour
        elif self.roll and hour != out.hour:
            self._close(out.fh)
            stamp = (_EPOCH + _dt.timedelta(hours=out.hour)).strftime("%Y-%m-%d-%H")
            name = out.path.name.removesuffix(self.suffix)
            os.replace(out.path, out.path.with_name(f"{name}.{stamp}{self.suffix}"))
            out.fh = self._open(out.path)
            out.hour = hour
        return out.fh

    def write(self, broker: int, file: int, epoch_ms: float, text: str, *, records=1, continuations=0, rejected=0):
        """Write ``text`` (after the date) as one record line at ``epoch_ms``; text with newlines spans lines.

        ``records``/``continuations``/``rejected`` say how the written lines count (a record with a
        stack trace: 1 record and its trace's lines as continuations).
        """
        ms = int(epoch_ms // 1)
        out = self.files[(broker, file)]
        fh = self._handle(out, ms)
        s = self.fmt(ms) + text + "\n"
        fh.write(s)
        n = records + continuations + rejected
        out.lines += n
        self.lines += n
        self.records += records
        self.continuations += continuations
        self.rejected += rejected
        self.bytes += len(s)

    def write_block(self, broker: int, file: int, epoch_ms: int, block: str, lines: int) -> None:
        """Write ``block``, ``lines`` whole record lines already formatted (each with its date and newline),
        all in the hour of ``epoch_ms``: what :meth:`write` would write for each of them, in one call."""
        out = self.files[(broker, file)]
        self._handle(out, epoch_ms).write(block)
        out.lines += lines
        self.lines += lines
        self.records += lines
        self.bytes += len(block)

    def write_raw(self, broker: int, file: int, epoch_ms: float, text: str, *, rejected=1, continuations=0):
        """Write ``text`` as it is (a damaged line: no date added), counted as rejected or continuation lines."""
        out = self.files[(broker, file)]
        fh = self._handle(out, int(epoch_ms // 1))
        s = text + "\n"
        fh.write(s)
        n = rejected + continuations
        out.lines += n
        self.lines += n
        self.rejected += rejected
        self.continuations += continuations
        self.bytes += len(s)

    def close(self) -> dict:
        """Close every file (empty logs are still created, as log4j does); ``{path: lines}`` of the current files."""
        counts = {}
        for (b, _f), out in self.files.items():
            if out.fh is None:
                if not out.path.exists():  # an empty (and for gzip, valid) file
                    self._close(self._open(out.path))
            else:
                self._close(out.fh)
                out.fh = None
            counts[str(Path(self.dirs[b]) / out.path.name)] = out.lines
        return counts

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

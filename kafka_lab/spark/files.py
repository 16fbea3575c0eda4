"""What ``kafka-lab analyze`` reads and writes, checked before Spark starts: nothing of a user's is lost.

Reading: :func:`find_log_files` lists every ``*.log*`` file under a local directory itself (Spark's own
listing follows a symbolic link to a directory every time it meets it: a link back up the tree made
``analyze`` read each file 41 times, or never end). Here a directory is entered once (by its device and
inode) and a file read once (by its real path), whatever links lead to it; names Spark's listing skips
(starting with ``_`` or ``.``) are skipped too. A URI (``hdfs://...``) is listed by Spark.

Writing: :func:`check_out` refuses an ``--out`` that is, holds or lies inside an input (writing the
tables there would delete the logs, or read the tables back as logs next time), and a non-empty
``--out`` unless ``overwrite`` is given, which then replaces only the tables the run writes (and
``summary.json``). :class:`Staging` is where a run writes: a hidden directory inside ``--out``, whose
complete tables are moved into place (a rename, on the same file system) only when every table has been
written; a failed run removes it and leaves ``--out`` as it was. It works on any file system Hadoop
reaches (the local disk, HDFS), through Spark's JVM.

Each refusal is a ``ValueError`` of one line that says what to change.
"""

from __future__ import annotations

import fnmatch
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LogFile", "LOG_GLOB", "OUTPUTS", "find_log_files", "check_out", "is_uri", "Staging"]

LOG_GLOB = "*.log*"
#: what an analyze run writes under ``--out`` (the tables, then summary.json)
OUTPUTS = ("records", "rejects", "requests", "state_changes", "controller_events", "truncations", "summary.json")


@dataclass(frozen=True)
class LogFile:
    path: str  # as found under the directory given (a link's name, not its target)
    size: int
    gzip: bool  # Spark reads a .gz file in one task (it cannot be split)


def is_uri(path) -> bool:
    return "://" in str(path)


def _skipped(name: str) -> bool:
    """Names Spark's own listing leaves out (``InMemoryFileIndex``: hidden and ``_``-prefixed files)."""
    return name.startswith(("_", ".")) or name.endswith("._COPYING_")


def find_log_files(logdir) -> list[LogFile]:
    """Every ``*.log*`` file under the local directory ``logdir``, each once, in path order.

    Links are followed, but a directory already entered (the same device and inode) is not entered
    again, and a file already found (the same real path) is not listed again: a link loop is read once.
    """
    root = Path(logdir)
    if not root.exists():
        raise ValueError(f"no log directory at {str(logdir)!r}: check the path")
    if not root.is_dir():
        raise ValueError(f"{str(logdir)!r} is a file, not a directory: give the directory that holds the logs")
    seen_dirs, seen_files, out = set(), set(), []

    def walk(d: Path):
        try:
            st = d.stat()
        except OSError:
            return
        if (st.st_dev, st.st_ino) in seen_dirs:
            return
        seen_dirs.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except PermissionError:
            raise ValueError(f"cannot read the directory {str(d)!r} (permission denied)") from None
        for e in entries:
            if _skipped(e.name):
                continue
            try:
                if e.is_dir():  # follows a link
                    walk(Path(e.path))
                elif e.is_file() and fnmatch.fnmatchcase(e.name, LOG_GLOB):
                    real = os.path.realpath(e.path)
                    if real in seen_files:
                        continue
                    seen_files.add(real)
                    out.append(LogFile(e.path, e.stat().st_size, e.name.endswith(".gz")))
            except OSError:  # a dangling link, a file gone meanwhile: nothing to read
                continue

    walk(root)
    return out


def _resolved(p) -> Path:
    return Path(os.path.realpath(os.path.abspath(p)))


def check_out(out, inputs, *, overwrite: bool = False) -> None:
    """Refuse an ``out`` that would lose a user's files (see the module). Local paths only; a URI is
    checked by :class:`Staging` when Spark is up."""
    if is_uri(out):
        return
    o = _resolved(out)
    for i in inputs:
        if is_uri(i):
            continue
        p = _resolved(i)
        if o == p:
            raise ValueError(f"--out {str(out)!r} is the log directory itself: choose another directory for the tables")
        if p in o.parents:
            raise ValueError(
                f"--out {str(out)!r} lies inside the log directory {str(i)!r}: the tables would be read as logs "
                "next time; choose a directory outside it"
            )
        if o in p.parents:
            raise ValueError(
                f"--out {str(out)!r} holds the log directory {str(i)!r}: writing the tables there could delete "
                "the logs; choose a directory outside it"
            )
    if o.exists() and not o.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file: give a directory (new, or empty, or --overwrite)")
    if o.is_dir() and any(o.iterdir()) and not overwrite:
        raise ValueError(
            f"--out {str(out)!r} is not empty: choose a new directory, or pass --overwrite to replace the tables "
            f"it holds ({', '.join(OUTPUTS)}; nothing else is touched)"
        )


class Staging:
    """A hidden directory inside ``out`` where a run writes; :meth:`commit` moves what it holds into
    ``out`` (replacing those names only), :meth:`abort` removes it. Paths are Hadoop paths (any URI)."""

    def __init__(self, spark, out):
        jvm = spark._jvm
        self._jvm = jvm
        self.out = str(out).rstrip("/") or "/"
        self.root = f"{self.out}/.kafka-lab-{uuid.uuid4().hex[:12]}"
        conf = spark._jsc.hadoopConfiguration()
        self._fs = jvm.org.apache.hadoop.fs.Path(self.out).getFileSystem(conf)
        self._made_out = not self._fs.exists(self._path(self.out))  # removed again if the run fails
        self._fs.mkdirs(self._path(self.root))

    def _path(self, p):
        return self._jvm.org.apache.hadoop.fs.Path(p)

    def path(self, name: str) -> str:
        return f"{self.root}/{name}"

    def exists(self, p: str) -> bool:
        return bool(self._fs.exists(self._path(p)))

    def files(self, d: str) -> list[str]:
        """The data files directly under ``d`` (not Spark's ``_SUCCESS`` or hidden ``.crc`` files)."""
        if not self.exists(d):
            return []
        out = []
        for st in self._fs.listStatus(self._path(d)):
            name = st.getPath().getName()
            if st.isFile() and not _skipped(name):
                out.append(st.getPath().toString())
        return sorted(out)

    def move(self, src: str, dst: str) -> None:
        self._fs.mkdirs(self._path(dst).getParent())
        if not self._fs.rename(self._path(src), self._path(dst)):
            raise OSError(f"could not move {src} to {dst}")

    def mkdirs(self, d: str) -> None:
        self._fs.mkdirs(self._path(d))

    def write_text(self, name: str, text: str) -> None:
        if not is_uri(self.out):  # a plain file (Hadoop's local file system would add a hidden .crc beside it)
            Path(self.path(name)).write_text(text)
            return
        stream = self._fs.create(self._path(self.path(name)), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def commit(self, names) -> None:
        """Move each of ``names`` from the staging directory to ``out``, replacing what ``out`` held under that
        name; then remove the staging directory."""
        for name in names:
            src, dst = self._path(self.path(name)), self._path(f"{self.out}/{name}")
            if not self._fs.exists(src):
                continue
            if self._fs.exists(dst):
                self._fs.delete(dst, True)
            if not self._fs.rename(src, dst):
                raise OSError(f"could not move {self.path(name)} into {self.out}")
        self.abort()

    def abort(self) -> None:
        """Remove the staging directory, and ``out`` itself when this run made it and it is empty."""
        self._fs.delete(self._path(self.root), True)
        out = self._path(self.out)
        if self._made_out and self._fs.exists(out) and len(self._fs.listStatus(out)) == 0:
            self._fs.delete(out, False)

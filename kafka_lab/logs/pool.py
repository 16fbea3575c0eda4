"""The worker processes that simulate :mod:`.scenario`'s windows side by side (``generate(workers=N)``).

They are started by a fork server: a fresh interpreter that imports the scenario (the model, numpy,
pandas, simpy) once and forks each worker from itself. The pool is never a fork of the calling process,
which may hold threads (tqdm's monitor) or, under pytest, a Spark JVM. Where there is no fork server
(Windows), the workers are spawned, each importing the model itself.

This module imports nothing heavy, so that the CLI can start the server first (:func:`start_server`)
and the server imports the model while the CLI imports it too, on another core.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
from concurrent.futures import ProcessPoolExecutor

__all__ = ["PRELOAD", "start_server", "window_pool"]

#: what the fork server imports before it forks a worker: everything a window's simulation needs
PRELOAD = "kafka_lab.logs.scenario"


def _context():
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([PRELOAD])  # no effect on a server already running (it imports on demand)
    return ctx


def start_server() -> None:
    """Start the fork server now, without waiting for it (a no-op if it runs, or where there is none)."""
    if _context().get_start_method() == "forkserver":
        multiprocessing.forkserver.ensure_running()


def window_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes for :meth:`.scenario.Windows.prefetch`, from the fork server."""
    return ProcessPoolExecutor(workers, mp_context=_context())

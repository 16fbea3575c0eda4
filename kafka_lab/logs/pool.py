"""The worker processes that simulate :mod:`.scenario`'s windows side by side (``generate(workers=...)``).

Two ways to start them:

- :func:`window_pool`, safe in any process: a fork server (a fresh interpreter that imports the scenario
  once and forks each worker from itself), never a fork of the caller, which may hold threads or, under
  pytest, a Spark JVM. It costs a second import of the model (about 0.5 s of CPU), which a busy machine
  feels: on two cores under a load of 4, a 1M-line run took longer with it than without any pool.
  Where there is no fork server (Windows), spawned processes.
- :func:`forked_pool`, for a process with no other thread (the ``kafka-lab`` command before its progress
  bar starts tqdm's monitor thread): the workers are forks of the caller, sharing the model it has
  imported, so a pool costs little more CPU than the serial run.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor

__all__ = ["PRELOAD", "window_pool", "forked_pool"]

#: what the fork server imports before it forks a worker: everything a window's simulation needs
PRELOAD = "kafka_lab.logs.scenario"


def window_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes for :meth:`.scenario.Windows.prefetch`, from the fork server."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([PRELOAD])  # no effect on a server already running (it imports on demand)
    return ProcessPoolExecutor(workers, mp_context=ctx)


def forked_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes forked from this one now; :func:`window_pool` instead if this process
    runs another thread (a fork copies only the calling thread, and any lock another one holds stays
    locked in the child) or cannot fork. Import the model first, so that the workers share it."""
    if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        return window_pool(workers)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    # a "fork" pool forks all its processes at its first task, before it starts its own thread
    pool.submit(int).result()
    return pool

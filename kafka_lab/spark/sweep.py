"""Simulations as a Spark job: a parameter grid × replications, one seeded simulation per Spark task.

The experiment is lab 03's (:func:`kafka_lab.sim.experiments.controller_behind_backlog`): ``backlog``
Produce requests written at t = 0, one connection each, then a ``LeaderAndIsr``; each Produce takes an
exponentially distributed service time (mean ``service_ms``), so replications differ. Each task returns
how long the ``LeaderAndIsr`` waited before a handler took it and the Produce requests' latency.

Seeds: replication ``r`` of a sweep seeded ``seed`` runs with :func:`task_seed` ``(seed, r)`` at every
grid point (common random numbers: two grid points of one replication differ only by their
parameters). A task's result depends on its parameters and seed alone, never on where it runs, so
:func:`run` gives the same table on ``local[*]``, on a cluster, or in a plain loop (``spark=None``):
``tests/test_spark_sweep.py`` checks exactly that.

On a cluster, every worker needs kafka_lab's dependencies (simpy, numpy, pandas); kafka_lab itself is
shipped to the executors with the job (``SparkContext.addPyFile``) when the master is not local.
"""

from __future__ import annotations

import itertools
import math
import numbers
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["GRID", "PARAMETERS", "RESULTS", "tasks", "task_seed", "run_task", "run", "summarise"]

#: what a grid may vary, with the default values of ``kafka-lab sweep``
GRID = {"backlog": [100, 200, 400], "control_plane": [False, True]}
#: the parameters a task accepts and their types
PARAMETERS = {"backlog": int, "control_plane": bool, "num_io_threads": int, "service_ms": float}
#: the columns each task adds to its parameters
RESULTS = ("lai_wait_ms", "produce_p50_ms", "produce_p99_ms", "produces")


def task_seed(seed: int, replication: int) -> int:
    """The seed of replication ``replication`` of a sweep seeded ``seed`` (numpy's SeedSequence)."""
    return int(np.random.SeedSequence([int(seed), int(replication)]).generate_state(1)[0])


def _check_grid(grid: dict) -> dict:
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"a grid is a non-empty dict of parameter -> list of values, not {grid!r}")
    out = {}
    for name, values in grid.items():
        if name not in PARAMETERS:
            raise ValueError(f"unknown sweep parameter {name!r}; the parameters are {', '.join(PARAMETERS)}")
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if not values:
            raise ValueError(f"sweep parameter {name!r} has no values")
        kind = PARAMETERS[name]
        for v in values:
            ok = isinstance(v, bool) if kind is bool else isinstance(v, numbers.Real) and not isinstance(v, bool)
            if not ok:
                raise ValueError(f"sweep parameter {name!r} takes {kind.__name__} values, not {v!r}")
            if kind is not bool and not math.isfinite(v):
                raise ValueError(f"sweep parameter {name!r} takes finite {kind.__name__} values, not {v}")
            if kind is int and v != int(v):  # int() would truncate: 2.5 would run as 2
                raise ValueError(f"sweep parameter {name!r} takes whole numbers, not {v}")
        out[name] = [kind(v) for v in values]
        if len(set(out[name])) < len(out[name]):  # a point twice: the same seeds run twice, as more replications
            raise ValueError(f"sweep parameter {name!r} has a value twice: {values!r}; give each value once")
    return out


def tasks(grid: dict | None = None, replications: int = 3, seed: int = 0) -> list[dict]:
    """Every (grid point, replication), in a fixed order: ``{"task", "replication", "seed", **params}``."""
    grid = _check_grid(GRID if grid is None else grid)
    if isinstance(replications, bool) or not isinstance(replications, numbers.Integral) or replications < 1:
        raise ValueError(f"replications must be a whole number of at least 1, not {replications!r}")
    names = list(grid)
    out = []
    for point in itertools.product(*(grid[n] for n in names)):
        for r in range(int(replications)):
            out.append({"replication": r, "seed": task_seed(seed, r), **dict(zip(names, point))})
    for i, t in enumerate(out):
        t["task"] = i
    return out


def run_task(task: dict) -> dict:
    """One simulation (the module's experiment) for one task; the task's fields plus :data:`RESULTS`."""
    from kafka_lab.sim.experiments import controller_behind_backlog

    params = {k: task[k] for k in PARAMETERS if k in task}
    res = controller_behind_backlog(
        params.get("backlog", 200),
        control_plane=params.get("control_plane", False),
        num_io_threads=params.get("num_io_threads", 8),
        service_ms=params.get("service_ms", 1.0),
        deterministic=False,
        seed=task["seed"],
    )
    lai = res.request("LeaderAndIsr")
    produce = res.requests[res.requests["api"] == "Produce"]["totalTime"].to_numpy(dtype=float)
    return {
        **task,
        "lai_wait_ms": round(float(lai["dequeue_ms"] - lai["sent_ms"]), 6),
        "produce_p50_ms": round(float(np.percentile(produce, 50)), 6) if len(produce) else float("nan"),
        "produce_p99_ms": round(float(np.percentile(produce, 99)), 6) if len(produce) else float("nan"),
        "produces": len(produce),
    }


def _ship_package(sc) -> None:
    """Send kafka_lab to the executors (a zip of this checkout's package), unless the master is local."""
    if sc.master.startswith("local"):
        return
    pkg = Path(__file__).resolve().parents[1]
    path = Path(tempfile.mkdtemp(prefix="kafka-lab-")) / "kafka_lab.zip"
    with zipfile.ZipFile(path, "w") as z:
        for f in sorted(pkg.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                z.write(f, Path("kafka_lab") / f.relative_to(pkg))
    sc.addPyFile(str(path))


def run(grid: dict | None = None, replications: int = 3, seed: int = 0, *, spark=None) -> pd.DataFrame:
    """Run the sweep: on Spark (one task per simulation) when ``spark`` is given, else in a local loop.

    Returns one row per task, in task order (the same table either way).
    """
    todo = tasks(grid, replications, seed)
    if spark is None:
        rows = [run_task(t) for t in todo]
    else:
        sc = spark.sparkContext
        _ship_package(sc)
        rows = sc.parallelize(todo, numSlices=len(todo)).map(run_task).collect()
    rows.sort(key=lambda r: r["task"])
    cols = ["task", "replication", "seed", *[c for c in todo[0] if c in PARAMETERS], *RESULTS]
    return pd.DataFrame(rows)[cols]


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Per grid point: replications, and the mean and the spread (min, max) of each result."""
    keys = [c for c in results.columns if c in PARAMETERS]
    agg = results.groupby(keys)[list(RESULTS[:3])].agg(["mean", "min", "max"])
    agg.columns = [f"{a}_{b}" for a, b in agg.columns]
    agg.insert(0, "replications", results.groupby(keys).size())
    return agg.reset_index()

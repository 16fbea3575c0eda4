"""Fingerprint the model's results: one hash per result frame of the runs the labs and the benchmark make.

A speed-up of the simulation must not change what it simulates: the same seed must give bit-identical
results before and after. This script runs

- the benchmark workload (``benchmarks/cluster.py``'s ``build(5000)``) for 2 simulated seconds;
- lab 03's :class:`~kafka_lab.sim.scenario.Scenario` experiments as its figures call them
  (``controller_behind_backlog``, ``backlog_table``, the load sweep, ``steady_load``, ``downstream_table``);
- labs 04–06's four incidents as their figures call them (``purgatory_incident``, ``truncation_incident``,
  ``stale_metadata_incident``, ``unavailability_incident``), with and without the control plane, and
  lab 07's controlled shutdown in the cluster (``shutdown_in_cluster``), lab 05's duplicates (request.timeout.ms
  10 ms, without and with idempotence), and lab 09's KRaft runs (the incidents, ``broker_fencing``, and
  ``kraft_failover`` and ``kraft_controlled_shutdown`` at 1,000 partitions);

and prints, per run, a SHA-256 of every frame it returned (request log, sampled metrics, each broker's
exact metric change log, ledger, staleness, unavailability, replication events, clients' sent counts),
each frame written as CSV with floats at full precision (``repr``), plus its dtypes. Record the output
on main, apply the change, run again and compare:

    PYTHONPATH=$PWD .venv/bin/python tools/fingerprint.py > before.txt   # on main
    PYTHONPATH=$PWD .venv/bin/python tools/fingerprint.py | diff before.txt -

``--only NAME`` (repeatable) runs only the runs whose name starts with NAME; ``--list`` names them.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent


def frame_hash(df: pd.DataFrame) -> str:
    """SHA-256 (first 16 hex digits) of a frame's dtypes and values; floats at full precision."""
    h = hashlib.sha256()
    h.update(repr(list(zip(df.columns, map(str, df.dtypes)))).encode())
    h.update(df.to_csv(index=True, float_format=repr).encode())
    return h.hexdigest()[:16]


def cluster_frames(res) -> dict:
    """Every frame of a :class:`~kafka_lab.sim.cluster.ClusterResults`, and each broker's exact change log."""
    out = {
        "requests": res.requests,
        "metrics": res.metrics,
        "ledger": res.ledger,
        "staleness": res.staleness,
        "unavailability": res.unavailability,
        "events": res.events,
    }
    for bid, b in sorted(res.cluster.brokers.items()):
        out[f"changes[{bid}]"] = b.metrics.changes()
    return out


def scenario_frames(res) -> dict:
    """Every frame of a lab 03 :class:`~kafka_lab.sim.scenario.Results`."""
    return {
        "requests": res.requests,
        "metrics": res.metrics,
        "changes": res.changes(),
        "sent": pd.DataFrame(sorted(res.sent.items()), columns=["client_id", "sent"]),
    }


def runs() -> dict:
    """name -> a function returning ``{frame name: DataFrame}``."""
    from kafka_lab.incident_stats import downstream_table
    from kafka_lab.sim import (
        broker_fencing,
        kraft_controlled_shutdown,
        kraft_failover,
        purgatory_incident,
        shutdown_in_cluster,
        stale_metadata_incident,
        truncation_incident,
        unavailability_incident,
    )
    from kafka_lab.sim.experiments import backlog_table, controller_behind_backlog, load_sweep, steady_load

    def benchmark():
        sys.path.insert(0, str(REPO / "benchmarks"))
        try:
            from cluster import build
        finally:
            sys.path.pop(0)
        return cluster_frames(build(5000).run(2000.0))

    load = {"producers": 200, "burst": 1, "rate_per_s": 20, "partitions": 20}
    out = {"benchmark/2s": benchmark}
    # lab 03 (tests/test_lab03_figures.py)
    for cp in (False, True):
        out[f"lab03/controller_behind_backlog(400,cp={cp})"] = lambda cp=cp: scenario_frames(
            controller_behind_backlog(400, control_plane=cp)
        )
    out["lab03/controller_behind_backlog(100,acks=-1,replicas=3)"] = lambda: scenario_frames(
        controller_behind_backlog(100, control_plane=False, acks=-1, replicas=3)
    )
    out["lab03/backlog_table"] = lambda: {"table": backlog_table([0, 250, 500, 750, 1000, 1500, 2000])}
    out["lab03/load_sweep"] = lambda: {
        "table": load_sweep(
            [1000, 2000, 3000, 3500, 3800, 4200, 5000, 6000],
            control_plane=False,
            service_ms=2.0,
            duration_ms=2000,
            controller_at_ms=1500,
        )
    }
    for name, kw in {
        "off": dict(control_plane=False),
        "on": dict(control_plane=True),
        "prioritise": dict(control_plane=False, prioritise=True),
    }.items():
        out[f"lab03/steady_load(10000,{name})"] = lambda kw=kw: scenario_frames(
            steady_load(10000, duration_ms=600.0, controller_at_ms=450.0, **kw)
        )
    out["lab03/downstream_table"] = lambda: {"table": downstream_table()}
    # labs 04-06 (tests/test_lab0[4-6]_figures.py)
    for cp in (False, True):
        out[f"lab04/purgatory(partitions=1,cp={cp})"] = lambda cp=cp: cluster_frames(
            purgatory_incident(control_plane=cp, **{**load, "partitions": 1})
        )
        out[f"lab04/purgatory(partitions=20,until=150,cp={cp})"] = lambda cp=cp: cluster_frames(
            purgatory_incident(control_plane=cp, until_ms=150, **load)
        )
        out[f"lab05/truncation(cp={cp})"] = lambda cp=cp: cluster_frames(truncation_incident(control_plane=cp, **load))
        out[f"lab06/stale_metadata(until=150,cp={cp})"] = lambda cp=cp: cluster_frames(
            stale_metadata_incident(control_plane=cp, until_ms=150, **load)
        )
        out[f"lab06/stale_metadata(producers=400,until=80,cp={cp})"] = lambda cp=cp: cluster_frames(
            stale_metadata_incident(control_plane=cp, until_ms=80, **{**load, "producers": 400})
        )
    for cp in (False, {1: True}, {2: True}, True):
        out[f"lab06/unavailability(until=60,cp={cp})"] = lambda cp=cp: cluster_frames(
            unavailability_incident(control_plane=cp, until_ms=60, **load)
        )
    # lab 07's controlled shutdown in the cluster (tests/test_shutdown_cluster.py)
    for cp in (False, True):
        out[f"lab07/shutdown_in_cluster(1.1,cp={cp})"] = lambda cp=cp: {
            "moves": (s := shutdown_in_cluster(version="1.1", control_plane=cp)).moves,
            **cluster_frames(s.results),
        }
    # lab 05's duplicates (tests/test_lab05_idempotence.py): request.timeout.ms=10, without and with idempotence
    for idem in (False, True):
        out[f"lab05/duplicates(idempotence={idem})"] = lambda idem=idem: cluster_frames(
            purgatory_incident(
                control_plane=False,
                enable_idempotence=idem,
                **{**load, "producers": 50, "request_timeout_ms": 10},
            )
        )
    # lab 09: the three incidents on the KRaft cluster, fencing, failover and shutdown (tests/test_lab09.py)
    for name, incident in (
        ("purgatory", purgatory_incident),
        ("truncation", truncation_incident),
        ("stale_metadata", stale_metadata_incident),
    ):
        out[f"lab09/{name}(kraft)"] = lambda incident=incident: kraft_frames(incident(control_plane=None, mode="kraft"))
    for fault in ("pause", "crash"):
        out[f"lab09/broker_fencing({fault})"] = lambda fault=fault: {
            "moves": (f := broker_fencing(fault=fault)).moves,
            **kraft_frames(f.results),
        }
    out["lab09/kraft_failover(1000)"] = lambda: _scale_frames(kraft_failover(partitions=1000))
    out["lab09/kraft_controlled_shutdown(1000)"] = lambda: _scale_frames(kraft_controlled_shutdown(partitions=1000))
    return out


def kraft_frames(res) -> dict:
    """A KRaft run's frames: the cluster's, the metadata log and the KRaft metrics."""
    return {**cluster_frames(res), "metadata_log": res.metadata_log, "kraft_metrics": res.kraft_metrics}


def _scale_frames(r) -> dict:
    frames = {"phases": pd.DataFrame(sorted(r.phases.items()), columns=["phase", "ms"])}
    for name in ("events", "transitions", "requests", "metadata_log", "timeline"):
        df = getattr(r, name, None)
        if df is not None:
            frames[name] = df
    return frames


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="run only the runs whose name starts with this")
    ap.add_argument("--list", action="store_true", help="name the runs, run nothing")
    args = ap.parse_args(argv)
    selected = {n: fn for n, fn in runs().items() if not args.only or any(n.startswith(o) for o in args.only)}
    if not selected:
        print(f"no run matches {args.only}", file=sys.stderr)
        return 2
    for name, fn in selected.items():
        if args.list:
            print(name)
            continue
        for frame, df in fn().items():
            print(f"{name:58s} {frame:16s} {len(df):8d} rows  {frame_hash(df)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

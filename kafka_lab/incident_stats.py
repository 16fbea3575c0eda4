"""What labs 04–06 measure in a KIP-291 incident's results: one home for each statistic.

The incidents (:mod:`kafka_lab.sim.incidents`) return :class:`~kafka_lab.sim.ClusterResults`; the labs'
figures, tables and self-checks all read their numbers through these functions, so the figure a learner
sees, the check that grades a prediction and the test that pins the prose agree by construction.
No drawing here: ``kafka_lab.ui.cluster`` draws, ``kafka_lab.exercises`` grades.

- :func:`controller_requests` -- each LeaderAndIsr / UpdateMetadata a broker received: sent, waited, applied.
- :func:`leader_and_isr_wait_ms` -- how long one broker's LeaderAndIsr waited before a handler took it.
- :func:`queue_ahead` -- what sat in a broker's request queue ahead of its LeaderAndIsr: how many, how long each.
- :func:`follower_fetches` -- the followers' Fetch requests to a leader: sent, waited in its queue, answered.
- :func:`slowest_produce` -- the longest ``remoteTime`` and ``totalTime`` among a broker's Produce requests.
- :func:`partition_ledger` -- the ledger per partition: records by outcome, NOT_LEADER_OR_FOLLOWER answers, latency.
- :func:`ledger_by_group` -- the same in two rows: the moved partition and all the others together.
- :func:`stale_answers` -- the Metadata requests a broker answered while its cache still named the old leader.
- :func:`leadership` -- who acted as the partition's leader, and when (two leaders, or none, for a while).
- :func:`wrong_leader_answers` -- each Produce a broker refused with ``NOT_LEADER_OR_FOLLOWER``.
- :func:`truncated_acks` -- each batch acknowledged, then lost (truncated), by when it was acknowledged.
- :func:`duplicate_summary` -- the batches retried and the records a log holds twice (lab 05's idempotence step).
- :func:`incident_summary` -- the headline numbers of one run, in one flat mapping.
- :func:`downstream_table` -- lab 03's closing table: what the delay costs the clients, per partition.
- :func:`cached_run` -- an incident run once per process for the same options (the lab, its checks and its
  panel share runs instead of repeating them).
"""

from __future__ import annotations

import gc
from collections import OrderedDict

import numpy as np
import pandas as pd

from kafka_lab.sim import OUTCOMES, ClusterResults

__all__ = [
    "CONTROLLER_APIS",
    "controller_requests",
    "leader_and_isr_wait_ms",
    "queue_ahead",
    "follower_fetches",
    "slowest_produce",
    "partition_ledger",
    "ledger_by_group",
    "stale_answers",
    "leadership",
    "wrong_leader_answers",
    "truncated_acks",
    "truncated_records",
    "duplicate_summary",
    "metric_peak",
    "incident_summary",
    "cached_run",
    "cached_runs",
    "CACHE_SIZE",
    "DESIGNS",
    "DOWNSTREAM_RUNS",
    "downstream_table",
]

#: the controller-to-broker requests of KIP-291's motivation, in the order the controller sends them
CONTROLLER_APIS = ("LeaderAndIsr", "UpdateMetadata")

#: the ledger's outcomes (kafka_lab.sim.ledger), in its order
_OUTCOMES = list(OUTCOMES)


def _check(res) -> None:
    if not isinstance(res, ClusterResults):
        raise TypeError(
            f"expected the ClusterResults of an incident (kafka_lab.sim.incidents), got {type(res).__name__}"
        )


def controller_requests(res: ClusterResults) -> pd.DataFrame:
    """One row per LeaderAndIsr / UpdateMetadata a broker received, in the order sent.

    ``listener`` is the one the controller's config chose, ``plane`` the one the broker's config serves it on;
    ``waited_ms`` is the time before a handler took it (in the socket + ``requestQueueTime``, as in
    lab 03); ``applied_ms`` is when its handler finished (``apiLocalComplete``), NaN if the run ended first.
    """
    _check(res)
    r = res.requests[res.requests["api"].isin(CONTROLLER_APIS)]
    return pd.DataFrame(
        {
            "broker_id": r["broker_id"].astype(np.int64),
            "api": r["api"],
            "listener": r["listener"],
            "plane": r["plane"],
            "sent_ms": r["sent_ms"],
            "waited_ms": r["dequeue_ms"] - r["sent_ms"],  # = wait_for_handler_ms
            "applied_ms": r["api_local_complete_ms"],
        }
    ).reset_index(drop=True)


def leader_and_isr_wait_ms(res: ClusterResults, broker_id: int) -> float:
    """How long ``broker_id``'s (first) LeaderAndIsr waited before a handler took it (NaN: still waiting)."""
    c = controller_requests(res)
    c = c[(c["broker_id"] == broker_id) & (c["api"] == "LeaderAndIsr")]
    if c.empty:
        raise ValueError(
            f"broker {broker_id} received no LeaderAndIsr in this run; brokers: {sorted(res.cluster.brokers)}"
        )
    return float(c["waited_ms"].iloc[0])


def queue_ahead(res: ClusterResults, broker_id: int, api: str = "LeaderAndIsr") -> dict:
    """The requests in ``broker_id``'s request queue when its (first) ``api`` request was put there.

    ``requests``: how many (read before it, not yet taken by a handler); ``by_api``: how many of each
    kind; ``mean_local_ms``: their mean ``localTime`` (handler time), so that requests × mean_local_ms /
    ``num.io.threads`` estimates the wait (lab 03's backlog × service time / handlers).
    """
    _check(res)
    r = res.requests
    mine = r[(r["api"] == api) & (r["broker_id"] == broker_id)]
    if mine.empty:
        raise ValueError(f"broker {broker_id} received no {api} in this run")
    start = float(mine["start_ms"].iloc[0])
    ahead = r[
        (r["broker_id"] == broker_id)
        & (r["plane"] == mine["plane"].iloc[0])
        & (r["start_ms"] < start)
        & ~(r["dequeue_ms"] <= start)
    ]
    return {
        "requests": len(ahead),
        "by_api": {k: int(v) for k, v in ahead["api"].value_counts().items()},
        "mean_local_ms": float(ahead["localTime"].mean()) if len(ahead) else 0.0,
    }


def follower_fetches(res: ClusterResults, broker_id: int) -> pd.DataFrame:
    """The replica fetchers' Fetch requests to ``broker_id`` (other brokers following it), in the order sent.

    ``waited_ms`` is the wait before a handler took it (in the socket + ``requestQueueTime``): a follower's
    fetch queues behind the same backlog as everything else on the leader's data plane.
    """
    _check(res)
    r = res.requests
    f = r[(r["api"] == "Fetch") & (r["broker_id"] == broker_id) & r["client_id"].str.contains("-fetcher-")]
    return pd.DataFrame(
        {
            "fetcher": f["client_id"],
            "sent_ms": f["sent_ms"],
            "waited_ms": f["dequeue_ms"] - f["sent_ms"],  # = wait_for_handler_ms
            "remote_ms": f["remoteTime"],
            "answered_ms": f["end_ms"],
        }
    ).reset_index(drop=True)


def slowest_produce(res: ClusterResults, broker_id: int = 1) -> dict:
    """The Produce requests ``broker_id`` answered (the points of lab 04's latency figure): the longest
    ``remoteTime`` (time parked in purgatory) and ``totalTime`` (ms), and when the slowest one was sent.

    One statistic for the figure's legend and the lab's prose, so that "up to N ms" is the figure's highest point.
    """
    _check(res)
    r = res.requests
    p = r[(r["api"] == "Produce") & (r["broker_id"] == broker_id) & r["totalTime"].notna()]
    if p.empty:
        return {"requests": 0, "max_remote_ms": np.nan, "max_total_ms": np.nan, "slowest_sent_ms": np.nan}
    slowest = p["totalTime"].idxmax()
    return {
        "requests": len(p),
        "max_remote_ms": float(p["remoteTime"].max()),
        "max_total_ms": float(p.loc[slowest, "totalTime"]),
        "slowest_sent_ms": float(p.loc[slowest, "sent_ms"]),
    }


def partition_ledger(res: ClusterResults) -> pd.DataFrame:
    """The ledger per partition: batches, records by outcome, ``NOT_LEADER_OR_FOLLOWER`` answers, latency.

    ``records`` = the sum over the ledger's outcomes (its conservation: committed, offline, truncated,
    unwritten, failed, pending); latencies are over
    the batches that got a final answer (acknowledged or failed), in ms from the first send;
    ``wrong_leader_ms`` is the time the partition's batches lost to wrong leaders, summed (the ledger's).
    """
    _check(res)
    lg = res.ledger
    outcome = lg["outcome"].astype(str)
    frame = pd.DataFrame(
        {
            "topic": lg["topic"],
            "partition": lg["partition"],
            "batches": 1,
            "records": lg["records"],
            **{o: np.where(outcome == o, lg["records"], 0) for o in _OUTCOMES},
            "not_leader_answers": lg["wrong_leader_sends"],
            "duplicates": lg["duplicates"],
            "wrong_leader_ms": lg["wrong_leader_ms"],
            "latency": np.where(outcome != "pending", lg["latency_ms"], np.nan),
        }
    )
    by = frame.groupby(["topic", "partition"], sort=True)
    ints = ["batches", "records", *_OUTCOMES, "not_leader_answers", "duplicates"]
    out = by[ints].sum().astype(np.int64)
    out["wrong_leader_ms"] = by["wrong_leader_ms"].sum()
    out["mean_latency_ms"] = by["latency"].mean()
    out["max_latency_ms"] = by["latency"].max()
    return out.reset_index()


def ledger_by_group(res: ClusterResults, partition: int = 0, topic: str = "orders") -> pd.DataFrame:
    """:func:`partition_ledger` in two rows: the moved partition, and every other partition of ``topic`` together.

    Counts are summed; latencies are over the batches of the group (so the second row's mean weighs each batch).
    """
    _check(res)
    lg = res.ledger[res.ledger["topic"] == topic]
    others = sorted(set(lg["partition"]) - {partition})
    label = (
        f"{topic}-{others[0]} … {topic}-{others[-1]}"
        if len(others) > 1
        else (f"{topic}-{others[0]}" if others else None)
    )
    rows = []
    for name, part in (
        (f"{topic}-{partition}", lg[lg["partition"] == partition]),
        (label, lg[lg["partition"] != partition]),
    ):
        if name is None or part.empty:
            continue
        outcome = part["outcome"].astype(str)
        done = part.loc[outcome != "pending", "latency_ms"]
        rows.append(
            {
                "partitions": name,
                "batches": len(part),
                "records": int(part["records"].sum()),
                **{o: int(part.loc[outcome == o, "records"].sum()) for o in _OUTCOMES},
                "not_leader_answers": int(part["wrong_leader_sends"].sum()),
                "duplicates": int(part["duplicates"].sum()),
                "wrong_leader_ms": float(part["wrong_leader_ms"].sum()),
                "mean_latency_ms": float(done.mean()) if len(done) else np.nan,
                "max_latency_ms": float(done.max()) if len(done) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def stale_answers(res: ClusterResults, broker_id: int, topic: str = "orders", partition: int = 0) -> pd.DataFrame:
    """The Metadata requests ``broker_id`` answered while its cache still named the partition's old leader.

    Between the controller's decision and the broker applying the UpdateMetadata that carries it
    (``staleness``), every Metadata answer from that broker names the old leader: the client that asked
    sends its next produce to a broker that is, or soon will be, no longer the leader.
    """
    _check(res)
    st = res.staleness[
        (res.staleness["broker_id"] == broker_id)
        & (res.staleness["topic"] == topic)
        & (res.staleness["partition"] == partition)
    ]
    if st.empty:
        raise ValueError(f"no leader change of {topic}-{partition} in this run")
    start = float(st["decided_ms"].iloc[0])
    end = start + float(st["stale_ms"].iloc[0])
    r = res.requests
    md = r[
        (r["api"] == "Metadata")
        & (r["broker_id"] == broker_id)
        & (r["api_local_complete_ms"] > start)
        & (r["api_local_complete_ms"] < end)
    ]
    return (
        md[["client_id", "sent_ms", "api_local_complete_ms"]]
        .rename(columns={"api_local_complete_ms": "answered_ms"})
        .reset_index(drop=True)
    )


def truncated_records(res: ClusterResults, partition: int | None = None) -> int:
    """Records acknowledged, then lost (the ledger's ``truncated``), in one partition or all."""
    _check(res)
    lg = res.ledger if partition is None else res.ledger[res.ledger["partition"] == partition]
    return int(lg.loc[lg["outcome"] == "truncated", "records"].sum())


def _old_leader(res: ClusterResults, topic: str, partition: int) -> int | None:
    ev = res.events
    gave_up = ev[(ev["topic"] == topic) & (ev["partition"] == partition) & (ev["event"] == "become_follower")]
    for _, row in gave_up.iterrows():
        if row["detail"].get("was_leader"):
            return int(row["broker_id"])
    acked = res.ledger[
        (res.ledger["topic"] == topic)
        & (res.ledger["partition"] == partition)
        & (res.ledger["outcome"].isin(["committed", "truncated"]))
    ].sort_values("done_ms")
    return int(acked["broker_id"].iloc[0]) if len(acked) else None


def leadership(res: ClusterResults, topic: str = "orders", partition: int = 0) -> pd.DataFrame:
    """When each broker acted as the leader of ``topic-partition`` (``start_ms`` to ``end_ms``).

    The old leader from t=0 until it applied the LeaderAndIsr that made it a follower; the new leader
    from when it applied the one that made it leader. Overlap = two brokers accepting writes; a gap =
    no leader at all (the ``unavailability`` frame measures both).
    """
    _check(res)
    end = res.duration_ms
    rows = []
    old = _old_leader(res, topic, partition)
    un = res.unavailability[(res.unavailability["topic"] == topic) & (res.unavailability["partition"] == partition)]
    if old is not None:
        stop = float(un["old_leader_stopped_ms"].iloc[0]) if len(un) else end
        gave_up = res.events[
            (res.events["broker_id"] == old)
            & (res.events["event"] == "become_follower")
            & (res.events["topic"] == topic)
            & (res.events["partition"] == partition)
        ]
        if gave_up.empty:
            stop = end
        rows.append((old, "old leader", 0.0, stop))
    for _, u in un.iterrows():
        if not np.isnan(u["new_leader_started_ms"]):
            rows.append((int(u["new_leader"]), "new leader", float(u["new_leader_started_ms"]), end))
    return pd.DataFrame(rows, columns=["broker_id", "role", "start_ms", "end_ms"])


def wrong_leader_answers(res: ClusterResults) -> pd.DataFrame:
    """Each Produce a broker answered ``NOT_LEADER_OR_FOLLOWER`` (the client had sent it to a wrong leader)."""
    _check(res)
    r = res.requests
    r = r[(r["api"] == "Produce") & (r["error"] == "NOT_LEADER_OR_FOLLOWER")]
    return r[["client_id", "broker_id", "sent_ms", "end_ms"]].sort_values("end_ms", ignore_index=True)


def truncated_acks(res: ClusterResults) -> pd.DataFrame:
    """Each batch acknowledged, then lost (``truncated`` in the ledger), by the time it was acknowledged.

    With ``acks=1`` these are the records the old leader acknowledged that the new leader never fetched:
    from the followers' last fetch of the partition (before they applied their LeaderAndIsr) until the
    old leader applied its own; ``broker_id`` is the broker that acknowledged them.
    """
    _check(res)
    lg = res.ledger[res.ledger["outcome"] == "truncated"]
    return lg[["client_id", "topic", "partition", "records", "broker_id", "created_ms", "done_ms"]].sort_values(
        "done_ms", ignore_index=True
    )


def metric_peak(res: ClusterResults, metric: str, broker_id: int) -> float:
    """The largest sampled value of a broker metric (e.g. ``PurgatorySize``) in the run."""
    _check(res)
    m = res.metrics
    if metric not in m:
        raise ValueError(f"no metric {metric!r}; metrics: {sorted(c for c in m if c not in ('time_ms', 'broker_id'))}")
    return float(m.loc[m["broker_id"] == broker_id, metric].max())


def incident_summary(res: ClusterResults, *, topic: str = "orders", partition: int = 0) -> dict:
    """The headline numbers of one run (times in ms, counts as ints), keyed by what they measure.

    - ``lai_wait_ms[b]``, ``lai_applied_ms[b]``: broker b's LeaderAndIsr, waited / applied;
    - ``stale_ms[b]``: how long broker b's metadata cache still named the old leader;
    - ``stale_answers[b]``: how many Metadata requests broker b answered in that time;
    - ``unavailable_ms``, ``two_leaders_ms``: no leader / two leaders of the moved partition;
    - ``truncated_records`` (moved partition), ``not_leader_answers`` (Produce requests refused);
    - ``wrong_leader_ms``: the time the moved partition's batches lost to wrong leaders (each refused send to
      that batch's next send, summed), and ``per_refused_send_ms``, that over ``not_leader_answers``;
    - ``peak_purgatory[b]``: broker b's largest ``PurgatorySize``;
    - ``mean_latency_ms`` / ``other_mean_latency_ms``: batches of the moved partition / of the others;
    - ``controller``: the controller's broker; ``lai_route[b]``: (listener, plane) of broker b's LeaderAndIsr,
      the listener the controller's config names and the plane broker b's config serves it on.
    """
    _check(res)
    c = controller_requests(res)
    lai = c[c["api"] == "LeaderAndIsr"].groupby("broker_id").first()
    st = res.staleness[(res.staleness["topic"] == topic) & (res.staleness["partition"] == partition)]
    un = res.unavailability[(res.unavailability["topic"] == topic) & (res.unavailability["partition"] == partition)]
    per = partition_ledger(res)
    moved = per[(per["topic"] == topic) & (per["partition"] == partition)]
    others = res.ledger[(res.ledger["partition"] != partition) & (res.ledger["outcome"] != "pending")]
    brokers = sorted(res.cluster.brokers)
    return {
        "lai_wait_ms": {b: float(lai["waited_ms"].get(b, np.nan)) for b in brokers},
        "lai_applied_ms": {b: float(lai["applied_ms"].get(b, np.nan)) for b in brokers},
        "stale_ms": {int(b): float(s) for b, s in zip(st["broker_id"], st["stale_ms"])},
        "stale_answers": {int(b): len(stale_answers(res, int(b), topic, partition)) for b in st["broker_id"]},
        "unavailable_ms": float(un["unavailable_ms"].iloc[0]) if len(un) else 0.0,
        "two_leaders_ms": float(un["two_leaders_ms"].iloc[0]) if len(un) else 0.0,
        "truncated_records": truncated_records(res, partition),
        "not_leader_answers": int(moved["not_leader_answers"].iloc[0]) if len(moved) else 0,
        "wrong_leader_ms": float(moved["wrong_leader_ms"].iloc[0]) if len(moved) else 0.0,
        "per_refused_send_ms": (
            float(moved["wrong_leader_ms"].iloc[0] / moved["not_leader_answers"].iloc[0])
            if len(moved) and moved["not_leader_answers"].iloc[0]
            else np.nan
        ),
        "peak_purgatory": {b: metric_peak(res, "PurgatorySize", b) for b in brokers},
        "mean_latency_ms": float(moved["mean_latency_ms"].iloc[0]) if len(moved) else np.nan,
        "other_mean_latency_ms": float(others["latency_ms"].mean()) if len(others) else np.nan,
        "controller": int(res.cluster.controller.history[0][1]),
        "lai_route": {int(b): (str(lai["listener"][b]), str(lai["plane"][b])) for b in lai.index},
    }


def duplicate_summary(res: ClusterResults) -> dict:
    """What retries wrote twice, from the ledger: records handed over, committed and pending; the batches sent more
    than once; the extra copies of batches in their leaders' logs (``duplicates``), in batches and records; and the
    partitions that hold them."""
    _check(res)
    lg = res.ledger
    outcome = lg["outcome"].astype(str)
    twice = lg[lg["duplicates"] > 0]
    return {
        "records": int(lg["records"].sum()),
        "committed": int(lg.loc[outcome == "committed", "records"].sum()),
        "pending": int(lg.loc[outcome == "pending", "records"].sum()),
        "retried_batches": int((lg["attempts"] > 1).sum()),
        "duplicate_batches": int(twice["duplicates"].sum()),
        "duplicate_records": int((twice["duplicates"] * twice["records"]).sum()),
        "duplicate_partitions": sorted(f"{t}-{p}" for t, p in set(zip(twice["topic"], twice["partition"]))),
    }


_RUNS: OrderedDict = OrderedDict()
#: runs kept by :func:`cached_run`: a run holds its whole simulated cluster (about 30 MB with 5 partitions and
#: 100 simulated ms, 70 MB with 20 partitions and 300 ms), so a notebook keeps a handful
CACHE_SIZE = 8


def cached_runs() -> list:
    """The keys of the runs :func:`cached_run` holds, oldest first (for benchmarks and tests)."""
    return list(_RUNS)


def cached_run(incident, *, control_plane, **options) -> ClusterResults:
    """``incident(control_plane=..., **options)``, computed once per process (same seed, same result).

    The most recent :data:`CACHE_SIZE` runs are kept; treat the result as read-only.
    """
    cp = tuple(sorted(control_plane.items())) if isinstance(control_plane, dict) else control_plane
    key = (incident.__module__, incident.__name__, cp, tuple(sorted(options.items())))
    if key in _RUNS:
        _RUNS.move_to_end(key)
        return _RUNS[key]
    res = _RUNS[key] = incident(control_plane=control_plane, **options)
    if len(_RUNS) > CACHE_SIZE:
        while len(_RUNS) > CACHE_SIZE:
            _RUNS.popitem(last=False)
        gc.unfreeze()  # the evicted runs become collectable again (by the next full collection)
    # the cached runs' millions of objects are not garbage: keep the cyclic collector from walking them at every
    # full collection (a live panel's redraw otherwise pays up to a second for it once a few runs are cached);
    # the young garbage first, so that little garbage is frozen with them (an eviction unfreezes it all)
    gc.collect(1)
    gc.freeze()
    return res


#: the runs of :func:`downstream_table`, the same as labs 04-06's: 200 producers, ``orders`` with 20 partitions
DOWNSTREAM_RUNS = {"producers": 200, "burst": 1, "rate_per_s": 20, "partitions": 20}

#: the two designs :func:`downstream_table` compares, by column label
DESIGNS = {"no control plane": False, "control.plane.listener.name=CONTROLLER": True}


def downstream_table() -> pd.DataFrame:
    """What a delayed LeaderAndIsr / UpdateMetadata costs the clients, per partition, with and without KIP-291.

    The KIP's example in the cluster model: busy broker 1 leads ``orders``' 20 partitions and loses
    ``orders-0`` to broker 2; each produce request carries all 20. Three incidents, each a run labs 04-06
    take apart: ``acks=all`` with ``orders`` as one partition (lab 04's first run: purgatory), ``acks=1``
    (lab 05's: truncation, 300 simulated ms) and stale metadata (lab 06's: 150 ms). Rows name the
    partitions they count: only ``orders-0`` moves, the other 19 are acknowledged as usual. One column
    per design; times in ms rounded to 0.1, counts as whole numbers.
    """
    from kafka_lab.sim import purgatory_incident, stale_metadata_incident, truncation_incident

    rows = {}
    for label, cp in DESIGNS.items():
        one = cached_run(purgatory_incident, control_plane=cp, **{**DOWNSTREAM_RUNS, "partitions": 1})
        acks_1 = cached_run(truncation_incident, control_plane=cp, **DOWNSTREAM_RUNS)
        stale = cached_run(stale_metadata_incident, control_plane=cp, until_ms=150, **DOWNSTREAM_RUNS)
        g = ledger_by_group(acks_1).set_index("partitions")
        moved, others = g.index
        s_1, s_stale = incident_summary(acks_1), incident_summary(stale)
        rows[label] = {
            "LeaderAndIsr applied on broker 1 at (ms)": round(s_1["lai_applied_ms"][1], 1),
            f"acks=all, {moved} alone: peak PurgatorySize on broker 1 (watch entries)": int(
                metric_peak(one, "PurgatorySize", 1)
            ),
            f"acks=1, {moved}: records acknowledged, then truncated": int(g.loc[moved, "truncated"]),
            f"acks=1, {others}: records truncated": int(g.loc[others, "truncated"]),
            f"acks=1, {moved}: NOT_LEADER_OR_FOLLOWER answers": int(g.loc[moved, "not_leader_answers"]),
            f"acks=1, {moved}: mean batch latency (ms)": round(float(g.loc[moved, "mean_latency_ms"]), 1),
            f"acks=1, {others}: mean batch latency (ms)": round(float(g.loc[others, "mean_latency_ms"]), 1),
            "UpdateMetadata: broker 1's metadata stale for (ms)": round(s_stale["stale_ms"][1], 1),
            "Metadata answers from broker 1 naming the old leader": int(s_stale["stale_answers"][1]),
        }
    # object columns keep each cell's type: a count shows as 1700, not 1700.0
    return pd.DataFrame({label: pd.Series(measures, dtype=object) for label, measures in rows.items()})

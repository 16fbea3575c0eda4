"""The ledger: where every record a producer handed over ended up.

Every batch the application hands to a producer ends in exactly one outcome, as things stand at the end
of the run (a partition's leader is the controller's, its log the partition's truth):

============== ==================================================================================
``committed``  acknowledged, and in the partition leader's log
``offline``    acknowledged; the partition has no leader (its last in-sync replica is down and
               unclean election is off), and the log of one of its replicas holds the batch: on a
               disk, not lost, unavailable. Whether it survives depends on which replica leads next
               (with unclean election off, only a member of the ISR the controller kept); the last
               ISR member coming back with it makes it ``committed`` again
``truncated``  acknowledged, then lost: the partition's leader does not hold it, and no running replica
               does (an old leader that acknowledged with ``acks=1`` was made a follower and truncated
               it; an unclean election chose a replica without it). A copy may still sit on the disk of a replica that is
               down, above the point where it truncates when it comes back to follow the leader (a
               replica always follows the leader it finds): nothing can read it, and the protocol
               removes it. For ``acks=0``, a batch some leader appended, then lost, as above
``unwritten``  ``acks=0`` only: done for its producer once sent (no answer is expected), never
               appended to any log: a broker no longer leading its partition refused it (and closed
               the connection, :mod:`kafka_lab.sim.server.apis`), or it was lost in a connection that closed before the
               broker read it
``failed``     an error returned to the application (not retriable, retries or
               ``delivery.timeout.ms`` exhausted)
``pending``    none of these yet when the run ended (in the accumulator, in flight, or an ``acks=0``
               batch a broker has not yet handled), or its fate not yet settled: acknowledged, not in
               the leader's log, but still in the log of a running replica, one that has not yet acted
               on the leader's move or not yet truncated to it (a run that ends inside the window labs
               04-06 study): on a disk, so not called lost; the replica removes it once it follows
============== ==================================================================================

Why ``offline`` is an outcome of its own rather than ``committed`` with the partition marked unavailable:
``committed`` says a reader can have the record now, and nobody can while the partition has no leader;
and why not ``truncated``: nothing has removed it, and the replica that has it may lead again.
``unwritten`` keeps apart what was never in a log from what was written and then lost, so ``truncated``
always means a log lost it.

``duplicates`` counts the extra copies of a batch in the leader's log (for an ``offline`` batch, in the
replica's log that holds the most copies): a retry after a timeout or a disconnect whose first attempt
had been appended after all (possible without idempotence).

Conservation: the records of the six outcomes add up to the records handed over (tested in every
scenario).

Times, per batch: ``created_ms`` when the application handed it over; ``first_sent_ms`` the producer's
first send of it (later than creation when the producer had no metadata yet, or its connection already
had ``max.in.flight.requests.per.connection`` requests in flight); ``latency_ms`` from the first send to
the final answer (an acknowledgement or an error; NaN while pending, or when never sent);
``wrong_leader_ms`` the time lost to wrong leaders: from each send answered ``NOT_LEADER_OR_FOLLOWER`` to
the batch's next send (or its failure, or the end of the run), which covers the refused round trip and
``retry.backoff.ms``. ``wrong_leader_sends`` counts those sends.
"""

from __future__ import annotations

from collections import Counter
from operator import attrgetter

import numpy as np
import pandas as pd

__all__ = [
    "ledger_frame",
    "OUTCOMES",
    "leader_log_index",
    "replica_log_index",
    "running_replica_log_index",
    "written_batch_ids",
]

OUTCOMES = ("committed", "offline", "truncated", "unwritten", "failed", "pending")

_COLUMNS = [
    "batch_id",
    "client_id",
    "topic",
    "partition",
    "records",
    "acks",
    "outcome",
    "error",
    "attempts",
    "created_ms",
    "first_sent_ms",
    "done_ms",
    "latency_ms",
    "base_offset",
    "broker_id",
    "wrong_leader_sends",
    "wrong_leader_ms",
    "duplicates",
]


def leader_log_index(cluster) -> dict:
    """``{tp: Counter(batch_id -> copies)}`` of the log of each partition's leader (a partition with no leader
    is left out: :func:`replica_log_index`)."""
    out = {}
    for tp, st in cluster.controller.state.items():
        b = cluster.brokers.get(st["leader"])
        if b is None:
            continue
        p = b.replica_manager.partitions.get(tp)
        out[tp] = Counter(p.log.batch_ids()) if p is not None else Counter()
    return out


def replica_log_index(cluster) -> dict:
    """``{tp: Counter(batch_id -> copies)}`` of each partition with no leader: per batch, the most copies the
    log of any of its replicas holds (the disks of brokers that are down included)."""
    out = {}
    for tp, st in cluster.controller.state.items():
        if st["leader"] in cluster.brokers:
            continue
        copies: Counter = Counter()
        for r in st["replicas"]:
            b = cluster.brokers.get(r)
            p = b.replica_manager.partitions.get(tp) if b is not None else None
            if p is not None:
                copies |= Counter(p.log.batch_ids())  # the larger count of each
        out[tp] = copies
    return out


def running_replica_log_index(cluster) -> dict:
    """``{tp: Counter(batch_id -> copies)}`` of each led partition: per batch, the most copies the log of any of its
    *running* replicas other than the leader holds (a replica that has not yet acted on a move, or not yet
    truncated to its new leader: what it holds is still on a disk)."""
    out = {}
    for tp, st in cluster.controller.state.items():
        if st["leader"] not in cluster.brokers:
            continue
        copies: Counter = Counter()
        for r in st["replicas"]:
            b = cluster.brokers.get(r)
            if r == st["leader"] or b is None or not b.online:
                continue
            p = b.replica_manager.partitions.get(tp)
            if p is not None:
                copies |= Counter(p.log.batch_ids())
        if copies:
            out[tp] = copies
    return out


def written_batch_ids(cluster) -> set:
    """Every batch id some log of the cluster holds or held: in a log now, or removed by a truncation."""
    ids = set()
    for b in cluster.brokers.values():
        rm = b.replica_manager
        for p in rm.partitions.values():
            ids.update(p.log.batch_ids())
        for _t, kind, _topic, _part, detail in rm.events:
            if kind == "truncated":
                ids.update(detail.get("batch_ids", ()))
    return ids


#: the columns the ledger works out (the rest are a ProducerBatch's fields, read in one attrgetter call)
_DERIVED = ("latency_ms", "wrong_leader_ms", "duplicates")
_FIELDS = tuple(c for c in _COLUMNS if c not in _DERIVED)
_INTS = ("batch_id", "partition", "records", "acks", "attempts", "base_offset", "broker_id", "wrong_leader_sends")
_FLOATS = ("created_ms", "first_sent_ms", "done_ms")


def ledger_frame(
    batches,
    index: dict,
    now: float = float("nan"),
    offline: dict | None = None,
    written: set | None = None,
    held: dict | None = None,
) -> pd.DataFrame:
    """One row per produced batch with its final outcome (see the module docstring), as of ``now``.

    ``index``: :func:`leader_log_index`; ``offline``: :func:`replica_log_index` (None: no partition is
    offline); ``written``: :func:`written_batch_ids` (needed only for ``acks=0`` batches); ``held``:
    :func:`running_replica_log_index` (None: no running replica holds what its leader lacks)."""
    none: Counter = Counter()
    offline = offline or {}
    n = len(batches)
    copies = np.fromiter(
        (index.get((b.topic, b.partition), none).get(b.batch_id, 0) for b in batches), dtype=np.int64, count=n
    )
    rows = list(map(attrgetter(*_FIELDS), batches))
    cols = dict(zip(_FIELDS, zip(*rows))) if rows else dict.fromkeys(_FIELDS, ())
    for name in _INTS:
        cols[name] = np.array(cols[name], dtype=np.int64)
    for name in _FLOATS:
        cols[name] = np.array(cols[name], dtype=np.float64)
    for name in ("client_id", "topic", "error"):
        cols[name] = np.array(cols[name], dtype=object)
    kept = np.array(cols["outcome"], dtype=object)
    acknowledged = kept == "acknowledged"
    kept[acknowledged] = np.where(copies[acknowledged] > 0, "committed", "truncated")
    lost = np.flatnonzero(kept == "truncated")
    if len(lost) and offline:  # not in a leader's log: a partition with no leader keeps it on a replica's disk
        for i in lost:
            b = batches[i]
            held = offline.get((b.topic, b.partition), none).get(b.batch_id, 0)
            if held:
                kept[i], copies[i] = "offline", held
    if held:  # not in the leader's log, but a running replica still has it: its fate is not settled yet
        for i in np.flatnonzero(kept == "truncated"):
            b = batches[i]
            if held.get((b.topic, b.partition), none).get(b.batch_id, 0):
                kept[i] = "pending"
    for i in np.flatnonzero((kept == "truncated") & (cols["acks"] == 0)):
        b = batches[i]  # an acks=0 batch: done once sent; was it ever in a log?
        if written is None or b.batch_id not in written:
            req = b.request
            kept[i] = "unwritten" if req is not None and req.end == req.end else "pending"
    cols["outcome"] = pd.Categorical(kept, categories=list(OUTCOMES))
    cols["latency_ms"] = cols["done_ms"] - cols["first_sent_ms"]
    cols["wrong_leader_ms"] = np.array([b.wrong_leader_ms_at(now) for b in batches], dtype=np.float64)
    cols["duplicates"] = np.maximum(copies - 1, 0)
    return pd.DataFrame(cols, columns=_COLUMNS)

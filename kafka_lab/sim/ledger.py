"""The ledger: where every record a producer handed over ended up.

Every batch the application hands to a producer ends in exactly one outcome:

============== ==================================================================================
``committed``  acknowledged, and still in the partition leader's log at the end of the run
``truncated``  acknowledged, then lost: the leader's log does not hold it at the end (an old leader
               that acknowledged with ``acks=1`` was made a follower and truncated it; or an ``acks=0``
               batch, done for its producer once sent, that reached a broker no longer leading its
               partition and was never appended: lost without ever being in a log)
``failed``     an error returned to the application (not retriable, retries or
               ``delivery.timeout.ms`` exhausted)
``pending``    neither yet when the run ended (in the accumulator, or in flight)
============== ==================================================================================

``duplicates`` counts the extra copies of a batch in the leader's log: a retry after a timeout or a
disconnect whose first attempt had been appended after all (possible without idempotence).

Conservation: the records of the four outcomes add up to the records handed over (tested in every
scenario). ``latency_ms`` is the time from the batch's creation (the producer's first send follows at
once, ``linger.ms=0``) to its final answer.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

__all__ = ["ledger_frame", "OUTCOMES", "leader_log_index"]

OUTCOMES = ("committed", "truncated", "failed", "pending")

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
    "done_ms",
    "latency_ms",
    "base_offset",
    "broker_id",
    "wrong_leader_sends",
    "duplicates",
]


def leader_log_index(cluster) -> dict:
    """``{tp: Counter(batch_id -> copies)}`` of each partition's current leader's log."""
    out = {}
    for tp, st in cluster.controller.state.items():
        b = cluster.brokers.get(st["leader"])
        p = b.replica_manager.partitions.get(tp) if b is not None else None
        out[tp] = Counter(p.log.batch_ids()) if p is not None else Counter()
    return out


def ledger_frame(batches, index: dict) -> pd.DataFrame:
    """One row per produced batch with its final outcome (see the module docstring)."""
    rows = []
    for b in batches:
        in_log = index.get((b.topic, b.partition))
        copies = in_log.get(b.batch_id, 0) if in_log is not None else 0
        if b.outcome == "acknowledged":
            outcome = "committed" if copies else "truncated"
        else:
            outcome = b.outcome
        rows.append(
            (
                b.batch_id,
                b.client_id,
                b.topic,
                b.partition,
                b.records,
                b.acks,
                outcome,
                b.error,
                b.attempts,
                b.created_ms,
                b.done_ms,
                b.done_ms - b.created_ms,
                b.base_offset,
                b.broker_id,
                b.wrong_leader_sends,
                max(0, copies - 1),
            )
        )
    df = pd.DataFrame(rows, columns=_COLUMNS)
    if df.empty:
        df = df.astype({"records": np.int64, "partition": np.int64})
    df["outcome"] = pd.Categorical(df["outcome"], categories=list(OUTCOMES))
    return df

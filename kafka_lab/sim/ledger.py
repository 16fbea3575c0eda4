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
    """``{tp: Counter(batch_id -> copies)}`` of each partition's current leader's log."""
    out = {}
    for tp, st in cluster.controller.state.items():
        b = cluster.brokers.get(st["leader"])
        p = b.replica_manager.partitions.get(tp) if b is not None else None
        out[tp] = Counter(p.log.batch_ids()) if p is not None else Counter()
    return out


#: the columns the ledger works out (the rest are a ProducerBatch's fields, read in one attrgetter call)
_DERIVED = ("latency_ms", "wrong_leader_ms", "duplicates")
_FIELDS = tuple(c for c in _COLUMNS if c not in _DERIVED)
_INTS = ("batch_id", "partition", "records", "acks", "attempts", "base_offset", "broker_id", "wrong_leader_sends")
_FLOATS = ("created_ms", "first_sent_ms", "done_ms")


def ledger_frame(batches, index: dict, now: float = float("nan")) -> pd.DataFrame:
    """One row per produced batch with its final outcome (see the module docstring), as of ``now``."""
    none: Counter = Counter()
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
    cols["outcome"] = pd.Categorical(kept, categories=list(OUTCOMES))
    cols["latency_ms"] = cols["done_ms"] - cols["first_sent_ms"]
    cols["wrong_leader_ms"] = np.array([b.wrong_leader_ms_at(now) for b in batches], dtype=np.float64)
    cols["duplicates"] = np.maximum(copies - 1, 0)
    return pd.DataFrame(cols, columns=_COLUMNS)

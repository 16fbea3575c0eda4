"""A broker that goes silent in a KRaft cluster, fenced by the controller (Kafka 4.0; docs/kafka-reference.md §8.5).

:func:`broker_fencing` runs three brokers and three controllers in KRaft mode; ``orders`` has ``partitions``
partitions (replication factor 3, leaders spread over the brokers in turn), written by ``producers`` clients with
``acks=all``. At ``fault_ms`` broker 2's process ends without a controlled shutdown (``fault="crash"``: its threads
stop, its connections close) or holds still for ``pause_ms`` (``fault="pause"``: a stop-the-world pause; its sockets
stay open, nothing in it runs): either way it sends no more heartbeats (its process's gate,
:mod:`~kafka_lab.sim.server.node`, holds or ends the lifecycle manager's thread; nothing else tells the
controller). The active controller hears nothing from it; at its last contact + ``broker.session.timeout.ms`` (9000
ms) the deferred ``maybeFenceReplicas`` event fences it, in one event: a ``PartitionChangeRecord`` for every
partition whose ISR holds it (out of the ISR, a new leader where it led), then
``BrokerRegistrationChangeRecord(Fenced=1)``. Until then the partitions it led have no leader that works: the
clients' produces to them fail (crash) or wait (pause) and are retried. A paused broker that wakes heartbeats
again with its old broker epoch and, caught up, is unfenced (``unfenced_ms``).

What it returns (:class:`BrokerFencing`, times in simulated ms):

- ``last_heartbeat_ms``: when broker 2 sent its last heartbeat; ``last_contact_ms``: when the controller handled it
  (the session counts from there); ``fenced_ms``: when the controller decided the fence record;
  ``fenced_after_ms`` = ``fenced_ms`` − ``last_contact_ms`` (9000 ms and the event's nanosecond);
- ``pause_ms``: how long a pause lasted (NaN for a crash);
- ``unfenced_ms``: (a pause) when the controller unfenced it after it woke (NaN: it was not);
- ``moves``: per partition broker 2 led: its new leader, the fence decision, its commit, and when each other
  broker applied it (its metadata loader: become leader or follower);
- ``results``: the run's :class:`~kafka_lab.sim.cluster.ClusterResults` (the ledger: what the clients lost or
  waited for).

Overrides: ``partitions`` (6), ``producers`` (5), ``rate_per_s`` (100 per producer), ``fault`` ("crash" or
"pause"), ``fault_ms`` (5000), ``pause_ms`` (15000), ``until_ms`` (``fault_ms`` + 12000; a pause: the end of the
pause + 5000), ``metrics_interval_ms`` (10).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .cluster import Cluster, ClusterResults
from .common.options import check_options, check_time
from .server.broker_kraft import crash_broker, pause_broker

__all__ = ["broker_fencing", "BrokerFencing", "FENCING_DEFAULTS"]

TOPIC = "orders"
SILENT = 2

FENCING_DEFAULTS = {
    "partitions": 6,
    "producers": 5,
    "rate_per_s": 100.0,
    "fault": "crash",
    "fault_ms": 5000.0,
    "pause_ms": 15_000.0,
    "until_ms": None,
    "metrics_interval_ms": 10.0,
}

_RANGES = {
    "partitions": (True, 1, False),
    "producers": (True, 0, False),
    "rate_per_s": (False, 0, False),
    "fault_ms": (False, 0, False),
    "pause_ms": (False, 0, False),
    "metrics_interval_ms": (False, 0, True),
}


@dataclass
class BrokerFencing:
    """What :func:`broker_fencing` measured (see the module)."""

    broker: int
    fault_ms: float
    last_heartbeat_ms: float
    last_contact_ms: float
    fenced_ms: float
    fenced_after_ms: float
    unfenced_ms: float
    fault: str
    moves: pd.DataFrame = field(repr=False)
    results: ClusterResults = field(repr=False)
    pause_ms: float = float("nan")  #: how long a pause lasted (NaN: a crash)


def broker_fencing(*, seed: int = 0, **overrides) -> BrokerFencing:
    """Broker 2 crashes (or pauses) at ``fault_ms`` in a KRaft cluster; the controller fences it 9 s after its last
    contact (see the module)."""
    unknown = set(overrides) - set(FENCING_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; known: {sorted(FENCING_DEFAULTS)}")
    opts = {**FENCING_DEFAULTS, **overrides}
    check_options({k: opts[k] for k in _RANGES}, _RANGES)
    if opts["fault"] not in ("crash", "pause"):
        raise ValueError(f"fault is 'crash' or 'pause', got {opts['fault']!r}")
    fault = float(opts["fault_ms"])
    pause_ms = float(opts["pause_ms"])
    default_until = fault + 12_000.0 if opts["fault"] == "crash" else fault + pause_ms + 5000.0
    check_time("until_ms", opts["until_ms"], optional=True)
    until = default_until if opts["until_ms"] is None else float(opts["until_ms"])
    if not until > fault:
        raise ValueError(f"until_ms must be after fault_ms={fault}, got {until!r}")
    c = Cluster(3, seed=seed, mode="kraft")
    n = int(opts["partitions"])
    assignment = {p: [1 + (p + i) % 3 for i in range(3)] for p in range(n)}
    c.create_topic(TOPIC, assignment=assignment)
    for i in range(int(opts["producers"])):
        c.producer(f"producer-{i + 1}", topic=TOPIC, acks="all").open_loop(float(opts["rate_per_s"]))
    if opts["fault"] == "crash":
        crash_broker(c, SILENT, at_ms=fault)
    else:
        pause_broker(c, SILENT, at_ms=fault, for_ms=pause_ms)
    res = c.run(until, metrics_interval_ms=float(opts["metrics_interval_ms"]))
    q = c.kraft.quorum
    ev = q.events_frame()
    fence = ev[(ev["event"] == "fence") & (ev["detail"].map(lambda d: d.get("broker")) == SILENT)]
    hb = [
        r
        for r in c.log
        if r.api == "BrokerHeartbeat" and r.client_id.startswith(f"broker-{SILENT}-") and r.sent <= fault
    ]
    last_sent = max((r.sent for r in hb), default=float("nan"))  # none: it crashed before its first heartbeat
    if len(fence):
        f = fence.iloc[0]
        last_contact, fenced = float(f["detail"]["last_contact_ms"]), float(f["time_ms"])
    else:
        last_contact, fenced = max((r.dequeue for r in hb), default=0.0), float("nan")
    unfence = ev[(ev["event"] == "unfence_granted") & (ev["detail"].map(lambda d: d.get("broker")) == SILENT)]
    unfence = unfence[unfence["time_ms"] > fenced] if len(fence) else unfence.iloc[0:0]
    unfenced = float(unfence.iloc[0]["time_ms"]) if len(unfence) else float("nan")
    ml = res.metadata_log
    pcr = ml[(ml["record_type"] == "PartitionChangeRecord") & ml["committed"] & (ml["decided_ms"] >= fault)]
    rows = []
    led = [p for p, r in assignment.items() if r[0] == SILENT]
    for f, decided, committed in zip(pcr["fields"], pcr["decided_ms"], pcr["committed_ms"], strict=True):
        p = f["PartitionId"]
        if p not in led or "Leader" not in f:
            continue
        applied = {}
        for bid, b in c.brokers.items():
            if bid == SILENT:
                continue
            applied[bid] = next(
                (
                    t
                    for t, kind, topic, part, _d in b.replica_manager.events
                    if (topic, part) == (TOPIC, p) and t >= decided and kind in ("become_leader", "become_follower")
                ),
                float("nan"),
            )
        rows.append(
            (p, f["Leader"], list(f.get("Isr", [])), decided, committed, *(applied[b] for b in sorted(applied)))
        )
    others = sorted(b for b in c.brokers if b != SILENT)
    moves = pd.DataFrame(
        rows,
        columns=["partition", "new_leader", "isr", "decided_ms", "committed_ms", *(f"applied_ms_{b}" for b in others)],
    )
    return BrokerFencing(
        SILENT,
        fault,
        last_sent,
        last_contact,
        fenced,
        fenced - last_contact,
        unfenced,
        opts["fault"],
        moves,
        res,
        pause_ms if opts["fault"] == "pause" else float("nan"),
    )

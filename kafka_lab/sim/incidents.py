"""KIP-291's incidents in a three-broker cluster: what a delayed controller request costs clients.

The KIP's motivation, each as one function ``(*, control_plane, seed=0, **overrides)`` returning
:class:`~kafka_lab.sim.cluster.ClusterResults` (``requests``, ``metrics``, ``ledger``, ``staleness``,
``unavailability``, ``events``):

- :func:`purgatory_incident`: broker 1 leads all 20 partitions of ``orders`` and is busy with a backlog
  of acks=all produce requests (20 partitions each). The controller moves ``orders-0`` to broker 2.
  Brokers 2 and 3 apply their LeaderAndIsr at once and stop fetching ``orders-0`` from broker 1, so
  the produces waiting in broker 1's purgatory for ``orders-0`` can only finish when broker 1 applies
  *its* LeaderAndIsr (``NOT_LEADER_OR_FOLLOWER``; the producer refreshes its metadata and retries) or
  when they time out. Without a control plane that LeaderAndIsr waits behind the backlog.
- :func:`truncation_incident`: the same with acks=1. Until broker 1 applies the LeaderAndIsr it keeps
  acknowledging ``orders-0`` writes that no follower will ever fetch; when it becomes a follower of
  broker 2 it truncates them (by diverging epoch): acknowledged, then lost.
- :func:`unavailability_incident`: broker 2 is the busy one and becomes the new leader of ``orders-0``,
  which broker 1 led. Broker 1 gives up leadership at once; ``orders-0`` has no leader until broker 2
  gets to its LeaderAndIsr.
- :func:`stale_metadata_incident`: like :func:`purgatory_incident` with acks=1; the producers ask broker 1
  for metadata. Broker 1's UpdateMetadata queues behind the backlog (and behind its LeaderAndIsr, one
  controller request in flight per broker), so after ``NOT_LEADER_OR_FOLLOWER`` its answers still name
  itself leader, and the producers send to the wrong leader again.

``control_plane`` is a bool for every broker or ``{broker_id: bool}`` (a cluster half-way through the
migration). Overrides: ``producers`` (40), ``burst`` (app sends each producer hands over at t=0: 5),
``rate_per_s`` (app sends per second per producer afterwards: 100), ``records_per_batch`` (10),
``decision_ms`` (when the controller moves ``orders-0``: 2), ``until_ms`` (300), ``request_timeout_ms``
(30000), ``min_insync_replicas`` (1), ``acks``, ``metrics_interval_ms`` (1), ``produce_service_ms`` (the mean
Produce handler time: 0.5 ms, exponential, plus Kafka's per-partition and per-record costs).
"""

from __future__ import annotations

from .apis import CostModel, default_costs
from .cluster import Cluster, ClusterResults
from .config import ModelSettings
from .distributions import Exponential

__all__ = [
    "purgatory_incident",
    "truncation_incident",
    "unavailability_incident",
    "stale_metadata_incident",
    "INCIDENT_DEFAULTS",
]

INCIDENT_DEFAULTS = {
    "producers": 40,
    "burst": 5,
    "rate_per_s": 100.0,
    "records_per_batch": 10,
    "decision_ms": 2.0,
    "until_ms": 300.0,
    "request_timeout_ms": 30000,
    "min_insync_replicas": 1,
    "metrics_interval_ms": 1.0,
    "produce_service_ms": 0.5,
    "partitions": 20,
}

TOPIC = "orders"


def _options(overrides: dict, **fixed) -> dict:
    unknown = set(overrides) - set(INCIDENT_DEFAULTS) - {"acks"}
    if unknown:
        raise TypeError(f"unknown incident option(s) {sorted(unknown)}; known: {sorted(INCIDENT_DEFAULTS) + ['acks']}")
    return {**INCIDENT_DEFAULTS, **fixed, **overrides}


def _incident(
    control_plane,
    seed: int,
    *,
    busy: int,
    old_leader: int,
    new_leader: int,
    acks,
    opts: dict,
    metadata_from: int | None = None,
) -> ClusterResults:
    """Three brokers; ``busy`` leads every partition but ``orders-0`` (which ``old_leader`` leads) and takes the load."""
    n = int(opts["partitions"])
    costs = {
        **default_costs(),
        "Produce": CostModel(
            Exponential(float(opts["produce_service_ms"])), per_partition_ms=0.01, per_record_ms=0.0005
        ),
    }
    cluster = Cluster(
        3,
        seed=seed,
        control_plane=control_plane,
        settings=ModelSettings(costs=costs),
        broker_overrides={"min.insync.replicas": int(opts["min_insync_replicas"])},
    )
    others = [b for b in (1, 2, 3) if b != busy]
    assignment = {p: [busy] + others for p in range(1, n)}
    rest = [b for b in (1, 2, 3) if b != old_leader]
    assignment[0] = [old_leader] + rest
    cluster.create_topic(TOPIC, n, 3, assignment=assignment)
    if metadata_from is not None:
        cluster.bootstrap = metadata_from
    tps = cluster.partitions_of(TOPIC)
    for i in range(int(opts["producers"])):
        p = cluster.producer(
            f"producer-{i + 1}",
            topic=TOPIC,
            acks=acks,
            partitions=tps,
            records_per_batch=int(opts["records_per_batch"]),
            request_timeout_ms=int(opts["request_timeout_ms"]),
            delivery_timeout_ms=max(120000, int(opts["request_timeout_ms"])),
        )
        if metadata_from is not None:
            p.prefer = metadata_from
        if opts["burst"]:
            p.burst(int(opts["burst"]), at_ms=0.0)
        if opts["rate_per_s"]:
            p.open_loop(float(opts["rate_per_s"]))
    cluster.controller.elect_leader((TOPIC, 0), new_leader, at_ms=float(opts["decision_ms"]))
    return cluster.run(float(opts["until_ms"]), metrics_interval_ms=float(opts["metrics_interval_ms"]))


def purgatory_incident(*, control_plane, seed: int = 0, **overrides) -> ClusterResults:
    """acks=all produces wait in broker 1's purgatory for ``orders-0`` until its LeaderAndIsr (see module)."""
    opts = _options(overrides, acks=-1)
    return _incident(control_plane, seed, busy=1, old_leader=1, new_leader=2, acks=opts["acks"], opts=opts)


def truncation_incident(*, control_plane, seed: int = 0, **overrides) -> ClusterResults:
    """acks=1 records broker 1 acknowledges after the decision are truncated (see module)."""
    opts = _options(overrides, acks=1)
    return _incident(control_plane, seed, busy=1, old_leader=1, new_leader=2, acks=opts["acks"], opts=opts)


def unavailability_incident(*, control_plane, seed: int = 0, **overrides) -> ClusterResults:
    """``orders-0`` has no leader while busy broker 2's LeaderAndIsr waits (see module)."""
    opts = _options(overrides, acks=1)
    return _incident(control_plane, seed, busy=2, old_leader=1, new_leader=2, acks=opts["acks"], opts=opts)


def stale_metadata_incident(*, control_plane, seed: int = 0, **overrides) -> ClusterResults:
    """Broker 1 serves stale metadata while its UpdateMetadata waits; clients send to a wrong leader (see module)."""
    opts = _options(overrides, acks=1)
    return _incident(
        control_plane, seed, busy=1, old_leader=1, new_leader=2, acks=opts["acks"], opts=opts, metadata_from=1
    )

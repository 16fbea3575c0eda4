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
- :func:`stale_metadata_incident`: like :func:`truncation_incident`, and 20 more clients ask broker 1 about
  ``orders-0`` (``metadata_clients``, each ``metadata_rate_per_s`` times a second on its own connection:
  new producers, consumers, tools; the producers' own refreshes queue behind their produce requests on
  the same connection, which a broker reads one at a time). Broker 1's UpdateMetadata is sent only once its LeaderAndIsr is answered (one controller request in flight per
  broker) and then queues behind the backlog: every Metadata request handled before it is answered with
  the old leader. A client that has already seen the new leader epoch ignores such an answer (KIP-320);
  one that has not keeps writing to the old leader.

``control_plane`` is a bool for every broker or ``{broker_id: bool}`` (a cluster half-way through the
migration). The control plane has two sides (docs/kafka-reference.md §2): the controller, on broker
``controller`` (1 unless told), connects to every broker on the listener *its* config names, and a broker
serves it on its control plane only if it names it too; so "broker 2 only" with the controller on broker 1
is no control plane at all. Overrides: ``controller`` (the controller's broker: 1), ``producers`` (200, one connection each), ``burst`` (app sends each producer hands over at t=0: 1),
``rate_per_s`` (app sends per second per producer afterwards: 20), ``records_per_batch`` (10),
``metadata_clients`` (0), ``metadata_rate_per_s`` (200), ``retry_backoff_ms`` (100), ``metadata_max_age_ms`` (300000),
``decision_ms`` (when the controller moves ``orders-0``: 2), ``until_ms`` (300), ``request_timeout_ms``
(30000), ``min_insync_replicas`` (1), ``acks``, ``enable_idempotence`` (the producers' ``enable.idempotence``:
False, 2.8's default; True needs ``acks=all``, as Kafka's producer does), ``metrics_interval_ms`` (1),
``produce_service_ms`` (the mean Produce handler time: 0.5 ms, exponential, plus Kafka's per-partition and
per-record costs).

``mode="kraft"`` runs the same incident on a KRaft cluster (Kafka 4.0, :mod:`.kraft_mode`): the same brokers,
clients and workload, the same random streams, and three controller nodes; the leader move is a
``PartitionChangeRecord`` the brokers' metadata loaders apply, with no request in any broker's queue.
``control_plane`` is refused there with Kafka's configuration error (a KRaft node has no
``control.plane.listener.name``), and so is ``controller`` (the controllers are nodes of their own). The
results have the same columns, plus ``metadata_log`` and ``kraft_metrics``.
"""

from __future__ import annotations

from .clients.workloads import MetadataClient
from .cluster import Cluster, ClusterResults
from .common.distributions import Exponential
from .common.options import (
    CLIENTS_WHY,
    MAX_CLIENTS,
    MAX_CLUSTER_PARTITIONS,
    MAX_RATE_PER_S,
    PARTITIONS_WHY,
    RATE_WHY,
    check_options,
    kafka_int,
)
from .server.apis import CostModel, default_costs
from .server.config import ModelSettings

__all__ = [
    "purgatory_incident",
    "truncation_incident",
    "unavailability_incident",
    "stale_metadata_incident",
    "INCIDENT_DEFAULTS",
]

INCIDENT_DEFAULTS = {
    # a broker reads one request per connection at a time, so the backlog a busy broker holds is about one
    # request per producer connection: 200 producers make the KIP's "hundreds of requests" queue
    "producers": 200,
    "burst": 1,
    "rate_per_s": 20.0,
    "records_per_batch": 10,
    "decision_ms": 2.0,
    "until_ms": 300.0,
    "request_timeout_ms": 30000,
    "min_insync_replicas": 1,
    "metrics_interval_ms": 1.0,
    "produce_service_ms": 0.5,
    "partitions": 20,
    "retry_backoff_ms": 100,
    "metadata_clients": 0,
    "metadata_rate_per_s": 200.0,
    "metadata_max_age_ms": 300000,
    "controller": 1,
    "enable_idempotence": False,
}

TOPIC = "orders"


#: the model's own options (not Kafka settings), what each accepts: (whole number?, least value, excluded?)
_RANGES = {
    "producers": (True, 0, False, MAX_CLIENTS, CLIENTS_WHY),
    "burst": (True, 0, False),
    "records_per_batch": (True, 1, False),
    "partitions": (True, 1, False, MAX_CLUSTER_PARTITIONS, PARTITIONS_WHY),
    "metadata_clients": (True, 0, False, MAX_CLIENTS, CLIENTS_WHY),
    "rate_per_s": (False, 0, False, MAX_RATE_PER_S, RATE_WHY),
    "metadata_rate_per_s": (False, 0, True, MAX_RATE_PER_S, RATE_WHY),
    "decision_ms": (False, 0, False),
    "until_ms": (False, 0, True),
    "metrics_interval_ms": (False, 0, True),
    "produce_service_ms": (False, 0, True),
}


def _options(overrides: dict, **fixed) -> dict:
    unknown = set(overrides) - set(INCIDENT_DEFAULTS) - {"acks"}
    if unknown:
        raise TypeError(f"unknown incident option(s) {sorted(unknown)}; known: {sorted(INCIDENT_DEFAULTS) + ['acks']}")
    opts = {**INCIDENT_DEFAULTS, **fixed, **overrides}
    check_options({name: opts[name] for name in _RANGES}, _RANGES)
    # the topic config, as LogConfig reads it: INT, atLeast(1), with Kafka's message
    opts["min_insync_replicas"] = kafka_int("min.insync.replicas", opts["min_insync_replicas"], 1)
    if opts["controller"] not in (1, 2, 3) or isinstance(opts["controller"], bool):
        raise ValueError(f"controller is the broker the controller runs on: 1, 2 or 3, got {opts['controller']!r}")
    if opts["min_insync_replicas"] > 3:
        raise ValueError(f"min_insync_replicas is at most the replication factor, 3, got {opts['min_insync_replicas']}")
    return opts


def _mode(name: str, mode: str, control_plane, overrides: dict):
    """The incident's ``mode`` and ``control_plane`` checked: ZooKeeper mode needs ``control_plane``; KRaft mode takes
    no ``controller`` (a ``control_plane`` is refused by the brokers' KRaft properties, with Kafka's message)."""
    if mode not in ("zk", "kraft"):
        raise ValueError(f"mode is 'zk' (ZooKeeper, Kafka 2.8) or 'kraft' (Kafka 4.0), got {mode!r}")
    if mode == "zk" and control_plane is None:
        raise TypeError(f"{name}() missing 1 required keyword-only argument: 'control_plane'")
    if mode == "kraft" and "controller" in overrides:
        raise ValueError(
            "controller is the broker the ZooKeeper-mode controller runs on; in KRaft mode the controllers are "
            "nodes of their own (controller ids 3000, 3001, 3002)"
        )
    return False if control_plane is None else control_plane


def _incident(
    control_plane,
    seed: int,
    *,
    mode: str = "zk",
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
        controller_id=int(opts["controller"]) if mode == "zk" else None,
        settings=ModelSettings(costs=costs),
        broker_overrides={"min.insync.replicas": int(opts["min_insync_replicas"])},
        mode=mode,
    )
    others = [b for b in (1, 2, 3) if b != busy]
    assignment = {p: [busy] + others for p in range(1, n)}
    rest = [b for b in (1, 2, 3) if b != old_leader]
    assignment[0] = [old_leader] + rest
    cluster.create_topic(TOPIC, assignment=assignment)
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
            request_timeout_ms=opts["request_timeout_ms"],
            delivery_timeout_ms=max(120000, opts["request_timeout_ms"]),
            retry_backoff_ms=opts["retry_backoff_ms"],
            metadata_max_age_ms=opts["metadata_max_age_ms"],
            enable_idempotence=opts["enable_idempotence"],
        )
        if metadata_from is not None:
            p.prefer = metadata_from
        if opts["burst"]:
            p.burst(int(opts["burst"]), at_ms=0.0)
        if opts["rate_per_s"]:
            p.open_loop(float(opts["rate_per_s"]))
    ask = cluster.brokers[metadata_from if metadata_from is not None else busy]
    for i in range(int(opts["metadata_clients"])):
        # other clients asking that broker about orders-0 (new producers, consumers, tools), each on its own
        # connection: the Metadata requests it answers while its cache is stale name the old leader
        MetadataClient(
            cluster,
            ask,
            f"admin-{i + 1}",
            listener=cluster.client_listener(ask),
            connections=1,
            partitions=[(TOPIC, 0)],
        ).open_loop(float(opts["metadata_rate_per_s"]))
    cluster.controller.elect_leader((TOPIC, 0), new_leader, at_ms=float(opts["decision_ms"]))
    return cluster.run(float(opts["until_ms"]), metrics_interval_ms=float(opts["metrics_interval_ms"]))


def purgatory_incident(*, control_plane=None, seed: int = 0, mode: str = "zk", **overrides) -> ClusterResults:
    """acks=all produces wait in broker 1's purgatory for ``orders-0`` until its LeaderAndIsr (see module)."""
    control_plane = _mode("purgatory_incident", mode, control_plane, overrides)
    opts = _options(overrides, acks=-1)
    return _incident(control_plane, seed, busy=1, old_leader=1, new_leader=2, acks=opts["acks"], opts=opts, mode=mode)


def truncation_incident(*, control_plane=None, seed: int = 0, mode: str = "zk", **overrides) -> ClusterResults:
    """acks=1 records broker 1 acknowledges after the decision are truncated (see module)."""
    control_plane = _mode("truncation_incident", mode, control_plane, overrides)
    opts = _options(overrides, acks=1)
    return _incident(control_plane, seed, busy=1, old_leader=1, new_leader=2, acks=opts["acks"], opts=opts, mode=mode)


def unavailability_incident(*, control_plane=None, seed: int = 0, mode: str = "zk", **overrides) -> ClusterResults:
    """``orders-0`` has no leader while busy broker 2's LeaderAndIsr waits (see module)."""
    control_plane = _mode("unavailability_incident", mode, control_plane, overrides)
    opts = _options(overrides, acks=1)
    return _incident(control_plane, seed, busy=2, old_leader=1, new_leader=2, acks=opts["acks"], opts=opts, mode=mode)


def stale_metadata_incident(*, control_plane=None, seed: int = 0, mode: str = "zk", **overrides) -> ClusterResults:
    """Broker 1 serves stale metadata while its UpdateMetadata waits; clients send to a wrong leader (see module)."""
    control_plane = _mode("stale_metadata_incident", mode, control_plane, overrides)
    opts = _options({"metadata_clients": 20, **overrides}, acks=1)
    return _incident(
        control_plane,
        seed,
        busy=1,
        old_leader=1,
        new_leader=2,
        acks=opts["acks"],
        opts=opts,
        metadata_from=1,
        mode=mode,
    )

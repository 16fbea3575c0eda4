"""A discrete-event (simpy) model of a Kafka 2.8 cluster in ZooKeeper mode: brokers, their controller, clients.

The model's folders follow Kafka's own packages, so a reader who knows Kafka finds each part where Kafka
keeps it (each folder's docstring lists its modules):

- :mod:`.network`: the socket server, the request channel and the request record with its request-log
  times (``kafka.network``);
- :mod:`.server`: a broker: KafkaApis, request handlers, purgatory, replica manager, partitions, fetchers,
  AlterIsr, log, metadata cache, config, and its process (``kafka.server``, ``kafka.cluster``, ``kafka.log``);
- :mod:`.clients`: the producer and the consumer with their own metadata, the ledger of every record they
  handed over, and lab 03's open-loop clients (``org.apache.kafka.clients``);
- :mod:`.zk`: the ZooKeeper-mode controller, ZooKeeper, the controller at scale, fencing, and a broker's
  restart (``kafka.controller``, ``kafka.zk``); :mod:`.kraft`: Kafka 4.0's KRaft controller quorum
  (Raft, the quorum controller, the controller nodes; ``Cluster(..., mode="kraft")``, and
  :func:`kraft_failover` and :func:`kraft_controlled_shutdown` from 100 to 100k partitions);
- :mod:`.common`: metrics, distributions, the queueing formulas and the options check, used by all.

Above them, :mod:`.cluster` wires brokers, one controller and the clients on one clock, one random stream per
component (:class:`Cluster`); the labs' scripted runs use it: :mod:`.scenario` (lab 03's one-broker view,
:class:`Scenario`) and :mod:`.experiments`, :mod:`.incidents` (labs 04-06), :mod:`.shutdown_cluster` and
:mod:`.last_isr` (lab 07), :mod:`.broker_fencing` (a KRaft broker crashed or paused, fenced). A folder never imports the modules above it, and the server never imports a
controller.

KIP-291's broker1 with its dedicated control plane, produce traffic beyond what 8 handlers of 1 ms
take, and a LeaderAndIsr at 50 ms: it arrives on CONTROLLER, the control plane, and does not wait::

    >>> from kafka_lab.sim import Scenario, kip291_properties
    >>> sc = Scenario(kip291_properties(control_plane=True), seed=1)
    >>> sc.producer(connections=100).open_loop(rate_per_s=9000)
    >>> sc.controller.send(sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=2)], at_ms=50)
    >>> res = sc.run(until_ms=100)
    >>> lai = res.request("LeaderAndIsr")
    >>> lai["listener"], lai["plane"], float(lai["requestQueueTime"])
    ('CONTROLLER', 'control', 0.0)

The path a request takes, and the module that models each step:

    client / controller ──connection──▶ acceptor ──▶ network processor      (:mod:`.network.socket_server`)
        ──▶ request queue, bounded (``queued.max.requests``)               (:mod:`.network.request_channel`)
        ──▶ request handler thread (``num.io.threads``)                     (:mod:`.server.handlers`)
        ──▶ KafkaApis: the work and its effects                             (:mod:`.server.apis`)
        ──▶ [purgatory: acks=all waits for the followers]                   (:mod:`.server.purgatory`,
                                                                             :mod:`.server.replica_manager`)
        ──▶ the processor's response queue ──▶ the processor sends it       (:mod:`.network.socket_server`)

With ``control.plane.listener.name`` set (KIP-291), the controller's connections go to a dedicated
acceptor, one processor, a queue of 20 and one handler thread: the control plane (:mod:`.server.broker`).

Every request becomes one record (:mod:`.network.request`) with Kafka's request-log timings; metrics are
sampled under Kafka's names (:mod:`.common.metrics`); :mod:`.common.theory` holds the queueing formulas the
model is tested against.

The controller and ZooKeeper at scale (lab 07): :mod:`.zk.zookeeper` (znodes, versions, sessions, watches,
conditional writes and ``multi``; serial and pipelined clients), :mod:`.zk.controller_scale`
(:func:`controlled_shutdown` and :func:`controller_failover` from 100 to 100k partitions, Kafka 1.0
against 1.1+, with the calibration table), :mod:`.controller_election` (:func:`controller_election`:
the brokers race for ``/controller`` through the cluster's ZooKeeper), :mod:`.controller_fencing` (:func:`broker_restart_race`:
KIP-380's bounce on the cluster; ``zombie_in_cluster``: the zombie controller on it, what lab 07 shows) and
:mod:`.shutdown_cluster` (:func:`shutdown_in_cluster`: the same shutdown through the cluster's brokers)::

    >>> from kafka_lab.sim import controlled_shutdown
    >>> old, new = (controlled_shutdown(partitions=10_000, version=v) for v in ("1.0", "1.1"))
    >>> round(old.duration_s / 60, 1), round(new.duration_s, 2)
    (6.5, 2.75)
"""

from .broker_fencing import BrokerFencing, broker_fencing
from .clients.ledger import OUTCOMES
from .cluster import Cluster, ClusterResults, cluster_properties
from .common.distributions import Deterministic, Empirical, Exponential, LogNormal
from .controller_election import controller_election
from .controller_fencing import broker_restart_race
from .incidents import purgatory_incident, stale_metadata_incident, truncation_incident, unavailability_incident
from .kraft.scale import KRaftFailoverResult, KRaftShutdownResult, kraft_controlled_shutdown, kraft_failover
from .network.request import TIMING_COLUMNS, Request
from .scenario import Results, Scenario, kip291_properties
from .server.apis import CostModel, default_costs
from .server.broker import Broker
from .server.config import BrokerConfig, ModelSettings
from .shutdown_cluster import shutdown_in_cluster
from .zk.controller_scale import controlled_shutdown, controller_failover

__all__ = [
    "Broker",
    "BrokerConfig",
    "BrokerFencing",
    "Cluster",
    "ClusterResults",
    "CostModel",
    "Deterministic",
    "Empirical",
    "Exponential",
    "LogNormal",
    "ModelSettings",
    "OUTCOMES",
    "KRaftFailoverResult",
    "KRaftShutdownResult",
    "Request",
    "Results",
    "Scenario",
    "TIMING_COLUMNS",
    "broker_fencing",
    "broker_restart_race",
    "cluster_properties",
    "controller_election",
    "controlled_shutdown",
    "controller_failover",
    "default_costs",
    "kip291_properties",
    "kraft_controlled_shutdown",
    "kraft_failover",
    "purgatory_incident",
    "shutdown_in_cluster",
    "stale_metadata_incident",
    "truncation_incident",
    "unavailability_incident",
]

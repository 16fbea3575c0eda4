"""The KRaft settings the model reads (Kafka 4.0's names and defaults), and the model's own costs.

Kafka's settings (``KRaftConfigs``, docs/kafka-reference.md §8.2), in :class:`KRaftConfig`:
``broker.heartbeat.interval.ms`` (2000), ``broker.session.timeout.ms`` (9000),
``metadata.max.idle.interval.ms`` (500: a ``NoOpRecord`` that often; 0, none), and the quorum's
``controller.quorum.*`` (:class:`~kafka_lab.sim.kraft.raft.QuorumConfig`).

:class:`KRaftCosts` are the model's, not Kafka's: how long each piece of work takes on the simulated clock.
None is fitted to a measurement; each is small against the waits the model is about (linger, heartbeats,
timeouts), and the one that grows with a cluster's size is bounded by a published figure:

- ``raft_io_ms`` (0.01): the raft thread's work per request or response it handles;
- ``controller_event_ms`` (0.05) + ``controller_record_ms`` (0.005) per record: one controller event's work
  (``EventQueueProcessingTimeMs``);
- ``controller_api_ms`` (0.02): a request handler's work to hand a request to the raft thread or the
  controller's queue (its ``localTime``; the answer waits in ``remoteTime``);
- ``loader_batch_ms`` (0.05) + ``loader_partition_ms`` (0.002) per partition a delta changes: the metadata
  loader building the new image. PR #13280's benchmark (docs/kafka-reference.md §8.8,
  ``TopicsImageZonalOutageBenchmark``) applies a ``TopicsDelta`` that takes broker 0 out of the ISR of every
  partition it holds in a 1M-partition image (100,000 topics of 10 partitions, replication factor 3, 10,000
  replicas per broker, so 300 brokers): 10,000 partitions changed in 19.6 ms with the persistent maps 4.0
  ships (47.7 ms before), about 2 µs a changed partition at that size. The model takes that as its
  per-partition cost at every size (the same benchmark at 125,000 partitions took 7.7 ms for the same
  10,000: a small cluster's image is cheaper, and the model overstates it there, by about 1 µs a partition).
  It times ``TopicsDelta.apply`` alone, not the loader's other work (``loader_batch_ms``, the model's own);
- ``apply_partition_ms`` (0.05): ``ReplicaManager.applyDelta``'s work per partition of this broker that
  becomes leader or follower: the same cost the ZooKeeper-mode model gives a LeaderAndIsr per partition
  (:func:`~kafka_lab.sim.server.apis.default_costs`), so a comparison of the two modes changes the path, not the
  work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..common.options import check_number, kafka_int
from .raft import QuorumConfig

__all__ = ["KRaftConfig", "KRaftCosts"]


def _ms(name: str, value, least: int, kafka_range: bool = False) -> None:
    """An INT setting given as a Python int: Kafka's message for anything else (a float, a bool, a Long:
    ``ConfigDef.parseType``, :func:`~kafka_lab.sim.common.options.kafka_int`); then at least ``least``, with
    Kafka's message where Kafka has the range (``kafka_range``: ``metadata.max.idle.interval.ms``'s ``atLeast(0)``),
    else the model's (4.0 defines the others with no range: the model needs them positive)."""
    if isinstance(value, str):
        raise TypeError(f"{name} is a whole number of ms (a Python int), got the string {value!r}")
    kafka_int(name, value, least if kafka_range else None)
    if value < least:
        raise ValueError(f"{name} is a whole number of ms, at least {least}, got {value!r}")


@dataclass(frozen=True)
class KRaftConfig:
    """Kafka 4.0's KRaft settings, under their names (``broker_heartbeat_interval_ms`` is
    ``broker.heartbeat.interval.ms``)."""

    broker_heartbeat_interval_ms: int = 2000
    broker_session_timeout_ms: int = 9000
    metadata_max_idle_interval_ms: int = 500
    quorum: QuorumConfig = field(default_factory=QuorumConfig)

    def __post_init__(self):
        _ms("broker.heartbeat.interval.ms", self.broker_heartbeat_interval_ms, 1)
        _ms("broker.session.timeout.ms", self.broker_session_timeout_ms, 1)
        _ms("metadata.max.idle.interval.ms", self.metadata_max_idle_interval_ms, 0, kafka_range=True)
        if not isinstance(self.quorum, QuorumConfig):
            raise TypeError(f"quorum is a QuorumConfig, got {type(self.quorum).__name__} {self.quorum!r}")

    @property
    def heartbeat_rpc_timeout_ms(self) -> float:
        """A broker's heartbeat RPC times out after ``broker.session.timeout.ms / 2`` (``BrokerServer``,
        KAFKA-14392)."""
        return self.broker_session_timeout_ms / 2

    @property
    def heartbeat_deadline_ms(self) -> float:
        """A heartbeat that waited in the controller's queue longer than ``broker.heartbeat.interval.ms / 2``
        is handled as expired (``ControllerApis.handleBrokerHeartBeatRequest``)."""
        return self.broker_heartbeat_interval_ms / 2


@dataclass(frozen=True)
class KRaftCosts:
    """The model's own costs of the KRaft components (see the module; none is a Kafka setting)."""

    raft_io_ms: float = 0.01
    controller_event_ms: float = 0.05
    controller_record_ms: float = 0.005
    controller_api_ms: float = 0.02
    loader_batch_ms: float = 0.05
    loader_partition_ms: float = 0.002
    apply_partition_ms: float = 0.05

    def __post_init__(self):
        for name in self.__dataclass_fields__:
            check_number(name, getattr(self, name), least=0)

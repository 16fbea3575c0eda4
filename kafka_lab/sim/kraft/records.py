"""The records of ``__cluster_metadata`` (Kafka 4.0, KRaft), and the batches the Raft log holds them in.

In KRaft mode the cluster's metadata is a log: the active controller appends records, the Raft quorum
commits them, and every controller and broker replays the committed ones in offset order
(docs/kafka-reference.md §8.5). The model writes the records it needs, under Kafka's names and with the
fields Kafka's schemas give them (``metadata/src/main/resources/common/metadata/*.json``):

==================================== ====================================================================
``RegisterBrokerRecord``             a broker's registration: ``BrokerId``, ``IncarnationId``, ``BrokerEpoch``
                                     (the record's own offset, §8.5), ``Rack``, ``Fenced`` (true: a broker
                                     registers fenced), ``InControlledShutdown``
``BrokerRegistrationChangeRecord``   ``BrokerId``, ``BrokerEpoch``, ``Fenced`` (1 fence, -1 unfence, 0 no
                                     change), ``InControlledShutdown`` (1: it entered controlled shutdown)
``TopicRecord``                      ``Name``, ``TopicId``
``PartitionRecord``                  a new partition: ``PartitionId``, ``TopicId``, ``Replicas``, ``Isr``,
                                     ``Leader``, ``LeaderEpoch``, ``PartitionEpoch``
``PartitionChangeRecord``            only what changes: ``Leader`` (-2: no change, -1: none), ``Isr`` (None:
                                     no change), ``LeaderRecoveryState``; a new leader is a new leader
                                     epoch, every change a new partition epoch (replayed by
                                     :meth:`MetadataImage.replay`)
``NoOpRecord``                       nothing (every ``metadata.max.idle.interval.ms``)
``LeaderChangeMessage``              the Raft control record a new leader writes first: ``LeaderId``,
                                     ``Voters``, ``GrantingVoters``
==================================== ====================================================================

A :class:`RecordBatch` is what the Raft leader appends at once (its records share one epoch and one
append time, as a Kafka record batch does); offsets are per record. Each record also keeps, outside its
fields, when the controller decided it (``decided_ms``, when its event generated it) and which controller
did: what the results' ``metadata_log`` shows and a log line would print.

:class:`MetadataImage` is what replaying the records builds: broker registrations, topics and partitions
(Kafka's ``MetadataImage``, built by ``MetadataDelta``). The controller keeps one (its in-memory state,
``ClusterControlManager`` / ``ReplicationControlManager``), every broker's metadata loader keeps one.

Simplifications: no ``FeatureLevelRecord`` (the model's metadata.version is fixed: 4.0's, without ELR, §8.1)
nor configuration, ACL or producer-id records; a topic id is derived from the topic's name (a version-5 UUID,
printed as Kafka prints a ``Uuid``) so that the same run names the same ids.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field

__all__ = [
    "MetadataRecord",
    "RecordBatch",
    "MetadataImage",
    "BrokerRegistration",
    "PartitionRegistration",
    "topic_id",
    "NO_LEADER",
    "NO_LEADER_CHANGE",
    "RECORD_TYPES",
    "METADATA_TOPIC",
]

#: ``LeaderConstants.NO_LEADER`` and ``NO_LEADER_CHANGE``
NO_LEADER = -1
NO_LEADER_CHANGE = -2

#: the Raft partition of the metadata log
METADATA_TOPIC = ("__cluster_metadata", 0)

RECORD_TYPES = (
    "RegisterBrokerRecord",
    "BrokerRegistrationChangeRecord",
    "TopicRecord",
    "PartitionRecord",
    "PartitionChangeRecord",
    "NoOpRecord",
    "LeaderChangeMessage",
)


def topic_id(name: str) -> str:
    """The model's id of topic ``name``: a UUID derived from the name, printed as Kafka's ``Uuid.toString``
    (URL-safe base64 without padding, 22 characters)."""
    raw = uuid.uuid5(uuid.NAMESPACE_URL, "kafka-lab-topic:" + name).bytes
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class MetadataRecord:
    """One record: its type (Kafka's name), its fields, and when and by whom it was decided."""

    __slots__ = ("type", "fields", "decided_ms", "controller_id")

    def __init__(self, type: str, fields: dict | None = None, *, decided_ms: float = 0.0, controller_id: int = -1):
        if type not in RECORD_TYPES:
            raise ValueError(f"unknown metadata record type {type!r}; known: {RECORD_TYPES}")
        self.type = type
        self.fields = dict(fields or {})
        self.decided_ms = decided_ms
        self.controller_id = controller_id

    def __repr__(self) -> str:
        return f"{self.type}({self.fields})"


@dataclass(slots=True)
class RecordBatch:
    """Records the Raft leader appended at once: offsets ``base_offset`` .. ``last_offset``, one epoch."""

    base_offset: int
    epoch: int
    records: tuple
    append_ms: float  # when the leader wrote it to its log (the batch's append timestamp)

    @property
    def last_offset(self) -> int:
        return self.base_offset + len(self.records) - 1

    @property
    def next_offset(self) -> int:
        return self.base_offset + len(self.records)


@dataclass(slots=True)
class BrokerRegistration:
    """``BrokerRegistration``: one broker as the metadata says."""

    id: int
    epoch: int
    incarnation: str
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    offset: int = -1  # the offset of its RegisterBrokerRecord (to unfence, a heartbeat's offset reaches it)


@dataclass(slots=True)
class PartitionRegistration:
    """``PartitionRegistration``: one partition's replicas, ISR, leader and epochs."""

    topic: str
    partition: int
    replicas: list
    isr: list
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    leader_recovery_state: int = 0  # 0 RECOVERED, 1 RECOVERING (after an unclean election)

    @property
    def tp(self) -> tuple:
        return (self.topic, self.partition)

    def state(self) -> dict:
        """The partition as the broker side reads it (the keys a ZooKeeper-mode LeaderAndIsr state has, with the
        partition epoch as ``zk_version``: the version an AlterPartition must name)."""
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "isr": list(self.isr),
            "replicas": list(self.replicas),
            "zk_version": self.partition_epoch,
        }


@dataclass
class MetadataImage:
    """What replaying the metadata records builds (``MetadataImage``): brokers, topics, partitions."""

    brokers: dict = field(default_factory=dict)  # id -> BrokerRegistration
    topics: dict = field(default_factory=dict)  # topic id -> name
    topic_ids: dict = field(default_factory=dict)  # name -> topic id
    partitions: dict = field(default_factory=dict)  # (topic, partition) -> PartitionRegistration
    offset: int = -1  # the offset of the last record replayed

    def replay(self, record: MetadataRecord, offset: int):
        """Apply ``record`` (at ``offset``); returns the partition it changed (its ``(topic, partition)``), or
        None."""
        f, t = record.fields, record.type
        self.offset = offset
        if t == "PartitionChangeRecord":
            p = self.partitions[(self.topics[f["TopicId"]], f["PartitionId"])]
            leader = f.get("Leader", NO_LEADER_CHANGE)
            if leader != NO_LEADER_CHANGE:
                p.leader = leader
                p.leader_epoch += 1  # a new leader (or none): a new leader epoch (PartitionRegistration.merge)
            if f.get("Isr") is not None:
                p.isr = list(f["Isr"])
            if "LeaderRecoveryState" in f:
                p.leader_recovery_state = f["LeaderRecoveryState"]
            p.partition_epoch += 1
            return p.tp
        if t == "BrokerRegistrationChangeRecord":
            b = self.brokers[f["BrokerId"]]
            if f.get("Fenced", 0) == 1:
                b.fenced = True
            elif f.get("Fenced", 0) == -1:
                b.fenced = False
            if f.get("InControlledShutdown", 0) == 1:
                b.in_controlled_shutdown = True
            return None
        if t == "RegisterBrokerRecord":
            self.brokers[f["BrokerId"]] = BrokerRegistration(
                f["BrokerId"],
                f["BrokerEpoch"],
                f.get("IncarnationId", ""),
                f.get("Rack"),
                fenced=f.get("Fenced", True),
                in_controlled_shutdown=f.get("InControlledShutdown", False),
                offset=offset,
            )
            return None
        if t == "TopicRecord":
            self.topics[f["TopicId"]] = f["Name"]
            self.topic_ids[f["Name"]] = f["TopicId"]
            return None
        if t == "PartitionRecord":
            name = self.topics[f["TopicId"]]
            p = PartitionRegistration(
                name,
                f["PartitionId"],
                list(f["Replicas"]),
                list(f["Isr"]),
                f["Leader"],
                f.get("LeaderEpoch", 0),
                f.get("PartitionEpoch", 0),
            )
            self.partitions[p.tp] = p
            return p.tp
        return None  # NoOpRecord, LeaderChangeMessage: nothing to replay

    def copy(self) -> MetadataImage:
        """An independent copy (what ``copy.deepcopy`` gives, built field by field: a bootstrap image of 100k
        partitions is copied for every node)."""
        B, P = BrokerRegistration, PartitionRegistration
        return MetadataImage(
            {
                i: B(b.id, b.epoch, b.incarnation, b.rack, b.fenced, b.in_controlled_shutdown, b.offset)
                for i, b in self.brokers.items()
            },
            dict(self.topics),
            dict(self.topic_ids),
            {
                tp: P(
                    p.topic,
                    p.partition,
                    list(p.replicas),
                    list(p.isr),
                    p.leader,
                    p.leader_epoch,
                    p.partition_epoch,
                    p.leader_recovery_state,
                )
                for tp, p in self.partitions.items()
            },
            self.offset,
        )

    # -- what the controller asks of it -----------------------------------------------------------------
    def is_active(self, broker_id: int) -> bool:
        """``ClusterControlManager.isActive``: registered, unfenced and not in controlled shutdown."""
        b = self.brokers.get(broker_id)
        return b is not None and not b.fenced and not b.in_controlled_shutdown

    def unfenced(self) -> set:
        """The registered brokers that are not fenced (the live brokers of a broker's metadata cache)."""
        return {bid for bid, b in self.brokers.items() if not b.fenced}

    def fenced_count(self) -> int:
        return sum(1 for b in self.brokers.values() if b.fenced)

    def partitions_with_in_isr(self, broker_id: int) -> list:
        """``BrokersToIsrs.partitionsWithBrokerInIsr``."""
        return [tp for tp, p in self.partitions.items() if broker_id in p.isr]

    def has_leaderships(self, broker_id: int) -> bool:
        return any(p.leader == broker_id for p in self.partitions.values())

    def leaderless(self) -> list:
        """``BrokersToIsrs.partitionsWithNoLeader``."""
        return [tp for tp, p in self.partitions.items() if p.leader == NO_LEADER]

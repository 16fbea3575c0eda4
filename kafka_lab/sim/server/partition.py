"""One replica of a partition on one broker (Kafka 2.8).

:class:`Partition` is ``kafka.cluster.Partition`` reduced to what replication needs. On every broker
that holds a replica it has a real :class:`~kafka_lab.sim.server.log.Log` (batches and leader-epoch cache),
the leader and leader epoch it was last told, and its high watermark (HW). On the leader it also
keeps, per follower, what ``kafka.cluster.Replica`` keeps: the follower's log end offset as its last
fetch reported it (-1, unknown, until a fetch after this broker became leader) and
``lastCaughtUpTimeMs``.

The rules that move its state are :class:`~.replica_manager.ReplicaManager`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .log import Log

__all__ = ["Partition", "RemoteReplica", "NEVER"]

#: "never caught up": Kafka's 0 is the epoch of a wall clock, long ago; the model's clock starts at 0
NEVER = float("-inf")


@dataclass(slots=True)
class RemoteReplica:
    """What a leader knows of one follower (``kafka.cluster.Replica``)."""

    leo: int = -1  # unknown until the follower fetches from this leader
    last_caught_up_ms: float = NEVER
    last_fetch_leader_leo: int = -1
    last_fetch_ms: float = 0.0


@dataclass(slots=True)
class Partition:
    """One replica of a partition on one broker: its log, HW, the leadership it was told, and (on the
    leader) what it knows of each follower and any ISR change in flight."""

    topic: str
    partition: int
    replicas: list
    leader: int
    leader_epoch: int = 0
    isr: list = field(default_factory=list)  # the committed ISR (as the controller last confirmed it)
    zk_version: int = 0
    log: Log = field(default_factory=Log)
    hw: int = 0
    remote: dict = field(default_factory=dict)  # follower id -> RemoteReplica (leader only)
    pending_isr: list | None = None  # an AlterIsr in flight: the ISR asked for
    pending_kind: str = ""  # "shrink" or "expand"
    min_isr: int = 1

    @property
    def tp(self):
        return (self.topic, self.partition)

    @property
    def leo(self) -> int:
        return self.log.leo

    @property
    def maximal_isr(self) -> list:
        """The ISR that counts for the HW: during a pending expand, with the new member."""
        if self.pending_isr is not None and self.pending_kind == "expand":
            return self.pending_isr
        return self.isr

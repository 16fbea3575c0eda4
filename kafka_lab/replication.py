"""What replication buys: how many replicas a topic puts on a cluster, and how many broker losses it survives.

A topic of ``P`` partitions with replication factor ``RF`` holds ``P × RF`` replicas: each partition has
one leader and ``RF − 1`` followers, each on a different broker. When brokers die, the controller
removes them from each partition's in-sync replica set (ISR) and, if the leader died, elects a new one
from the ISR. What still works then depends on how many of the partition's replicas are left:

* ``alive ≥ min.insync.replicas``: producers with ``acks=all`` (``acks=-1``) are accepted;
* ``1 ≤ alive < min.insync.replicas``: the partition still serves consumers and ``acks=0/1`` producers,
  but the leader refuses ``acks=all`` appends with ``NOT_ENOUGH_REPLICAS`` (Kafka 2.8,
  ``Partition.appendRecordsToLeader``);
* ``alive = 0``: the partition is offline (no replica left to lead it; unclean election is off by default).

So, counting a partition's worst case (the lost brokers are among its replicas), ``acks=all`` writes
survive ``RF − min.insync.replicas`` broker losses and committed data survives ``RF − 1``.
The model assumes every replica was in sync before the losses.

Lab 00's warm-up panel (:mod:`kafka_lab.ui.lab00`) and its exercises draw on this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lab.assignment import KIP36_RACKS, check_counts
from kafka_lab.listeners import ConfigException

__all__ = [
    "ReplicationBudget",
    "replication_budget",
    "partition_state",
    "not_enough_replicas_message",
    "KIP36_BROKERS",
    "WRITABLE",
    "READ_ONLY",
    "OFFLINE",
]

#: KIP-36's worked example: 6 brokers (in 3 racks), 12 partitions, replication factor 3
KIP36_BROKERS = len(KIP36_RACKS)

WRITABLE = "acks=all writes accepted"
READ_ONLY = "acks=all rejected (NOT_ENOUGH_REPLICAS)"
OFFLINE = "offline: no replica left"


@dataclass(frozen=True)
class ReplicationBudget:
    """What a topic costs a cluster and what it survives (per partition, worst case)."""

    partitions: int
    replication_factor: int
    min_insync_replicas: int
    brokers: int
    replicas: int  #: partitions × replication factor
    replicas_per_broker: float  #: on average over the brokers
    leaders_per_broker: float  #: on average: one leader per partition
    losses_writable: int  #: broker losses acks=all producers survive
    losses_readable: int  #: broker losses committed data survives


def replication_budget(
    partitions: int, replication_factor: int, min_insync_replicas: int = 1, brokers: int = KIP36_BROKERS
) -> ReplicationBudget:
    """Replica count and failure budget of a topic; Kafka's own errors for impossible topics."""
    for name, v in (
        ("partitions", partitions),
        ("replication_factor", replication_factor),
        ("min_insync_replicas", min_insync_replicas),
        ("brokers", brokers),
    ):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    check_counts(partitions, replication_factor, brokers)  # what a topic creation checks first, as Kafka does
    if min_insync_replicas < 1:  # ConfigDef's atLeast(1) validator on the topic config
        raise ConfigException(
            f"Invalid value {min_insync_replicas} for configuration min.insync.replicas: Value must be at least 1",
            kafka_exception="ConfigException",
            config_key="min.insync.replicas",
        )
    replicas = partitions * replication_factor
    return ReplicationBudget(
        partitions=partitions,
        replication_factor=replication_factor,
        min_insync_replicas=min_insync_replicas,
        brokers=brokers,
        replicas=replicas,
        replicas_per_broker=replicas / brokers,
        leaders_per_broker=partitions / brokers,
        # min.insync.replicas > RF is accepted by Kafka 2.8, but then no acks=all write ever succeeds
        losses_writable=max(replication_factor - min_insync_replicas, -1),
        losses_readable=replication_factor - 1,
    )


def partition_state(replication_factor: int, min_insync_replicas: int, lost: int) -> str:
    """What one partition still does after ``lost`` of its replicas' brokers died."""
    if not 0 <= lost <= replication_factor:
        raise ValueError(f"lost must be between 0 and {replication_factor}, not {lost}")
    alive = replication_factor - lost
    if alive == 0:
        return OFFLINE
    return WRITABLE if alive >= min_insync_replicas else READ_ONLY


def not_enough_replicas_message(isr: list[int], min_insync_replicas: int, topic: str, partition: int) -> str:
    """The leader's message when an acks=all append meets a too-small ISR (Kafka 2.8, Scala ``Set`` repr)."""
    return (
        f"The size of the current ISR Set({', '.join(map(str, isr))}) is insufficient to satisfy "
        f"the min.isr requirement of {min_insync_replicas} for partition {topic}-{partition}"
    )


# ---------------------------------------------------------------------------------------------- the panel

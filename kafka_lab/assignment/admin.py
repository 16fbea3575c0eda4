"""What the tools do around the assignment: ``AdminZkClient`` behind ``kafka-topics.sh --zookeeper``.

Creating a topic checks the brokers' racks for the rack-aware mode and sorts the brokers by id
before it calls the assignment; adding partitions calls it with a start index and a first
partition id derived from the existing assignment (docs/kafka-reference.md §1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from .brokers import BrokerMetadata, as_brokers
from .errors import MSG_RACKS_INCOMPLETE_ZK, AdminOperationException, InvalidPartitionsException
from .fast import assign_replicas_to_brokers
from .java import java_int

__all__ = ["RackAwareMode", "add_partitions", "assign_for_topic", "zk_broker_metadatas"]

RackAwareMode = Literal["enforced", "disabled", "safe"]


def zk_broker_metadatas(brokers, rack_aware_mode: str) -> list[BrokerMetadata]:
    """``AdminZkClient.getBrokerMetadatas``: the rack check for the mode, then brokers sorted by id."""
    if rack_aware_mode not in ("enforced", "disabled", "safe"):
        raise ValueError(f"rack_aware_mode must be 'enforced', 'disabled' or 'safe', not {rack_aware_mode!r}")
    bl = as_brokers(brokers)
    with_rack = [b for b in bl if b.rack is not None]
    if rack_aware_mode == "enforced" and with_rack and len(with_rack) < len(bl):
        raise AdminOperationException(MSG_RACKS_INCOMPLETE_ZK)
    if rack_aware_mode == "disabled" or (rack_aware_mode == "safe" and len(with_rack) < len(bl)):
        bl = [BrokerMetadata(b.id, None) for b in bl]
    return sorted(bl, key=lambda b: b.id)


def assign_for_topic(
    brokers,
    partitions: int,
    replication_factor: int,
    *,
    rack_aware_mode: RackAwareMode = "enforced",
    rng=None,
    fixed_start_index: int = -1,
) -> dict[int, list[int]]:
    """The assignment ``kafka-topics.sh --create --zookeeper`` makes (``AdminZkClient.createTopic``).

    ``rack_aware_mode`` is Kafka's ``RackAwareMode``:

    - ``"enforced"`` (the default): if only some brokers have ``broker.rack``, fail with
      AdminZkClient's own message, which tells you to add ``--disable-rack-aware``;
    - ``"disabled"`` (``--disable-rack-aware``, KIP-36's ``--ignore-racks``): forget every rack;
    - ``"safe"``: forget the racks if any broker lacks one (KIP-36's rule for auto-created topics).

    Brokers are sorted by id first, as ``getBrokerMetadatas`` does, so a rack-unaware result does
    not depend on the order you list them in. ``fixed_start_index`` is not a tool option (Kafka
    always draws it here); it is exposed so a lab can show one reproducible draw.
    """
    metas = zk_broker_metadatas(brokers, rack_aware_mode)
    return assign_replicas_to_brokers(metas, partitions, replication_factor, fixed_start_index, -1, rng)


def add_partitions(
    brokers,
    existing: Mapping[int, Sequence[int]],
    num_partitions: int,
    *,
    topic: str = "topic",
    rack_aware_mode: RackAwareMode = "enforced",
) -> dict[int, list[int]]:
    """``kafka-topics.sh --alter --partitions``: the new partitions' assignment (``AdminZkClient.addPartitions``).

    Kafka keeps the existing partitions where they are, takes the replication factor from
    partition 0, and calls the assignment with ``fixedStartIndex`` = the index, in the id-sorted
    broker list, of the first broker whose id >= partition 0's leader, and ``startPartitionId`` = the
    current partition count. So the result is deterministic, and the follower shift continues from
    the absolute partition ids.

    Errors are Kafka's (``AdminZkClient`` 2.8), except that the missing-partition-0 message stops
    before the ``Assignment: <Scala map>`` Kafka appends to it.
    """
    metas = zk_broker_metadatas(brokers, rack_aware_mode)
    if not isinstance(existing, Mapping):
        raise TypeError(
            f"existing is the topic's assignment {{partition: [broker ids]}}, got {type(existing).__name__}"
        )
    if 0 not in existing:
        raise AdminOperationException(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing."
        )
    partitions_to_add = java_int("num_partitions", num_partitions) - len(existing)
    if partitions_to_add <= 0:
        raise InvalidPartitionsException(
            f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
            f"{len(existing)} partitions, {num_partitions} would not be an increase."
        )
    p0 = list(existing[0])
    if not p0:  # Kafka reads partition 0's first replica (Seq.head) and would fail without a message
        raise ValueError(
            f"partition 0 of topic '{topic}' has no replicas in the existing assignment: the new partitions take "
            "their replication factor and first broker from partition 0, so it lists at least one broker id"
        )
    start_index = next((i for i, b in enumerate(metas) if b.id >= p0[0]), 0)
    return assign_replicas_to_brokers(metas, partitions_to_add, len(p0), start_index, len(existing))

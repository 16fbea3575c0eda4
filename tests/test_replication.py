"""kafka_lab.replication: what a replication factor and min.insync.replicas buy.

Truths: KIP-36's worked assignment (copied from the KIP), a brute force over every set of lost
brokers, the assignment package's own failure analysis on the same cluster (a second, independent
computation), and Kafka 2.8's messages and exception classes (docs/kafka-reference.md §1, §5).
"""

from itertools import combinations

import pytest

from kafka_lab.assignment import KIP36_RACKS, assign_replicas_to_brokers, brokers_from_racks, failure_impact
from kafka_lab.replication import (
    KIP36_BROKERS,
    OFFLINE,
    READ_ONLY,
    WRITABLE,
    not_enough_replicas_message,
    partition_state,
    placement,
    replication_budget,
)

#: KIP-36's worked example, copied from the KIP: 6 brokers in 3 racks, 12 partitions, replication factor 3
KIP36_ASSIGNMENT = {
    0: (0, 3, 1),
    1: (3, 1, 5),
    2: (1, 5, 4),
    3: (5, 4, 2),
    4: (4, 2, 0),
    5: (2, 0, 3),
    6: (0, 4, 2),
    7: (3, 2, 0),
    8: (1, 0, 3),
    9: (5, 3, 1),
    10: (4, 1, 5),
    11: (2, 5, 4),
}
KIP36_BROKER_IDS = range(6)
#: KIP-36's uneven example: brokers 0 (rack1), 1 and 2 (rack2); 3 partitions, replication factor 2
KIP36_UNEVEN = {0: (0, 1), 1: (1, 0), 2: (2, 0)}


def test_kip36_example_replica_count_and_per_broker_share():
    b = replication_budget(12, 3, 2, brokers=6)
    assert b.replicas == sum(len(r) for r in KIP36_ASSIGNMENT.values()) == 36
    per_broker = [sum(br in r for r in KIP36_ASSIGNMENT.values()) for br in KIP36_BROKER_IDS]
    leaders = [sum(r[0] == br for r in KIP36_ASSIGNMENT.values()) for br in KIP36_BROKER_IDS]
    assert per_broker == [b.replicas_per_broker] * 6 == [6] * 6
    assert leaders == [b.leaders_per_broker] * 6 == [2] * 6


def test_per_broker_is_an_average_kip36_uneven_racks():
    """KIP-36: 'Broker 0 has three replicas, broker 1 has two, and broker 2 only has one' - mean 2."""
    b = replication_budget(3, 2, brokers=3)
    counts = [sum(br in r for r in KIP36_UNEVEN.values()) for br in range(3)]
    assert counts == [3, 2, 1]
    assert b.replicas == sum(counts) == 6 and b.replicas_per_broker == sum(counts) / 3


def _first_loss_count_that_breaks(assignment, brokers, min_isr, need):
    """Brute force: the smallest number of dead brokers after which some partition has < need live replicas."""
    for k in range(len(brokers) + 1):
        for dead in combinations(brokers, k):
            if any(len(set(r) - set(dead)) < need for r in assignment.values()):
                return k
    return None


@pytest.mark.parametrize("min_isr", [1, 2, 3])
def test_failure_budget_matches_brute_force_over_kip36_cluster(min_isr):
    b = replication_budget(12, 3, min_isr, brokers=6)
    # the ISR loses each dead broker; acks=all needs |ISR| >= min.insync.replicas, reads need one replica
    assert (
        _first_loss_count_that_breaks(KIP36_ASSIGNMENT, KIP36_BROKER_IDS, min_isr, need=min_isr)
        == b.losses_writable + 1
    )
    assert _first_loss_count_that_breaks(KIP36_ASSIGNMENT, KIP36_BROKER_IDS, min_isr, need=1) == b.losses_readable + 1


def test_partition_states_rf3_min_isr2():
    assert [partition_state(3, 2, k) for k in range(4)] == [WRITABLE, WRITABLE, READ_ONLY, OFFLINE]
    assert [partition_state(3, 4, k) for k in range(4)] == [READ_ONLY, READ_ONLY, READ_ONLY, OFFLINE]
    with pytest.raises(ValueError):
        partition_state(3, 2, 4)


def test_min_isr_above_rf_never_writes():
    assert replication_budget(1, 3, 4).losses_writable == -1


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 3), "Number of partitions must be larger than 0."),
        ((12, 0), "Replication factor must be larger than 0."),
        ((12, 7), "Replication factor: 7 larger than available brokers: 6."),
        ((12, 3, 0), "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ],
)
def test_bad_topics_get_kafkas_messages(args, message):
    with pytest.raises(ValueError) as e:
        replication_budget(*args)
    assert str(e.value) == message


@pytest.mark.parametrize(
    "args, java_class",
    [
        ((0, 3), "InvalidPartitionsException"),
        ((12, 0), "InvalidReplicationFactorException"),
        ((12, 7), "InvalidReplicationFactorException"),
        ((12, 3, 0), "ConfigException"),
    ],
)
def test_bad_topics_raise_kafkas_exception_classes(args, java_class):
    """The same classes topic creation raises (kafka_lab.assignment), not a look-alike ValueError."""
    with pytest.raises(ValueError) as e:
        replication_budget(*args)
    assert type(e.value).__name__ == java_class


def test_not_enough_replicas_message_is_kafkas():
    assert not_enough_replicas_message([1], 2, "orders", 0) == (
        "The size of the current ISR Set(1) is insufficient to satisfy the min.isr requirement of 2 "
        "for partition orders-0"
    )
    assert "Set(1, 2)" in not_enough_replicas_message([1, 2], 3, "t", 5)


def test_the_default_cluster_is_kip36s():
    assert KIP36_BROKERS == 6 == len(KIP36_RACKS)
    assert replication_budget(12, 3).brokers == 6


@pytest.mark.parametrize("rf", [1, 2, 3, 4])
@pytest.mark.parametrize("min_isr", [1, 2, 3, 5])
def test_partition_state_is_the_isr_rule_for_every_loss(rf, min_isr):
    """Per loss count: alive = rf - lost; none alive is offline, fewer than min.insync.replicas refuses acks=all."""
    for lost in range(rf + 1):
        alive = rf - lost
        expected = OFFLINE if alive == 0 else (READ_ONLY if alive < min_isr else WRITABLE)
        assert partition_state(rf, min_isr, lost) == expected
    b = replication_budget(1, rf, min_isr, brokers=rf)
    writable = [k for k in range(rf + 1) if partition_state(rf, min_isr, k) == WRITABLE]
    assert (max(writable) if writable else -1) == b.losses_writable
    assert max(k for k in range(rf + 1) if partition_state(rf, min_isr, k) != OFFLINE) == b.losses_readable


@pytest.mark.parametrize("failed", [(0,), (0, 5), (1, 2), (0, 3, 1)])
@pytest.mark.parametrize("min_isr", [1, 2])
def test_partition_state_agrees_with_the_assignments_failure_analysis(failed, min_isr):
    """The same losses, counted by kafka_lab.assignment.failure_impact on KIP-36's real assignment."""
    brokers = brokers_from_racks(KIP36_RACKS)
    a = assign_replicas_to_brokers(brokers, 12, 3, fixed_start_index=0)
    impact = failure_impact(a, brokers, failed_brokers=failed, min_insync_replicas=min_isr)
    for p, reps in a.items():
        state = partition_state(3, min_isr, sum(b in failed for b in reps))
        assert (state == OFFLINE) == impact.loc[p, "offline"]
        assert (state == READ_ONLY) == impact.loc[p, "below_min_isr"]


@pytest.mark.parametrize("bad", [True, 1.0, "3", None])
def test_non_int_arguments_are_type_errors(bad):
    with pytest.raises(TypeError, match="must be an int"):
        replication_budget(bad, 3)
    with pytest.raises(TypeError, match="must be an int"):
        replication_budget(12, 3, brokers=bad)


@pytest.mark.parametrize("partitions, rf", [(12, 3), (13, 3), (7, 2), (6, 1)])
def test_placement_counts_kafkas_rack_unaware_walk(partitions, rf):
    """Lab 00's placement: without racks and with start index 0, Kafka puts partition p's leader on broker
    p mod n (AdminUtils.assignReplicasUnaware); every partition has rf - 1 followers on other brokers, and
    when the partitions fill whole rounds of the n brokers each broker holds partitions × rf / n replicas."""
    table = placement(partitions, rf)
    assert table.index.tolist() == list(range(KIP36_BROKERS))
    assert table["leaders"].tolist() == [sum(p % KIP36_BROKERS == b for p in range(partitions)) for b in table.index]
    assert table["followers"].sum() == partitions * (rf - 1)
    if partitions % KIP36_BROKERS == 0:
        assert (table["leaders"] + table["followers"] == partitions * rf // KIP36_BROKERS).all()

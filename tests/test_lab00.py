"""Lab 00's warm-up numbers, against KIP-36's worked assignment and a brute force over broker losses."""

from itertools import combinations

import numpy as np
import pytest

from kafka_lab.exercises import check, exercises
from kafka_lab.replication import (
    OFFLINE,
    READ_ONLY,
    WRITABLE,
    not_enough_replicas_message,
    partition_state,
    replication_budget,
)
from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT
from kafka_lab.ui.lab00 import survival_figure, warmup_panel

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
KIP36_BROKERS = range(6)
#: KIP-36's uneven example: brokers 0 (rack1), 1 and 2 (rack2); 3 partitions, replication factor 2
KIP36_UNEVEN = {0: (0, 1), 1: (1, 0), 2: (2, 0)}


def test_kip36_example_replica_count_and_per_broker_share():
    b = replication_budget(12, 3, 2, brokers=6)
    assert b.replicas == sum(len(r) for r in KIP36_ASSIGNMENT.values()) == 36
    per_broker = [sum(br in r for r in KIP36_ASSIGNMENT.values()) for br in KIP36_BROKERS]
    leaders = [sum(r[0] == br for r in KIP36_ASSIGNMENT.values()) for br in KIP36_BROKERS]
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
        _first_loss_count_that_breaks(KIP36_ASSIGNMENT, KIP36_BROKERS, min_isr, need=min_isr) == b.losses_writable + 1
    )
    assert _first_loss_count_that_breaks(KIP36_ASSIGNMENT, KIP36_BROKERS, min_isr, need=1) == b.losses_readable + 1


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


def test_figure_colours_each_loss_count_by_state():
    fig = survival_figure(3, 2)
    by_state = {tr.name: list(tr.x) for tr in fig.data}
    assert by_state == {WRITABLE: [0, 1], READ_ONLY: [2], OFFLINE: [3]}


def test_panel_primary_control_drives_primary_output():
    panel = warmup_panel()
    p, rf, isr, summary, _out = panel.children
    assert PRIMARY_CONTROL in p._dom_classes and PRIMARY_OUTPUT in summary._dom_classes
    assert "<b>36</b> replicas" in summary.value
    p.value = 13
    assert "<b>39</b> replicas" in summary.value
    rf.value = 1  # min.insync.replicas=2 is now more than the replicas: no acks=all write succeeds
    assert "<b>13</b> replicas" in summary.value and "<b>no</b> acks=all write" in summary.value
    isr.value = 1
    assert "through <b>0</b> lost" in summary.value


def test_exercises_agree_with_the_panel_defaults():
    """The lab's three checks accept exactly what the panel shows for KIP-36's example."""
    assert set(exercises("00")) == {"00.replicas", "00.per_broker", "00.acks_all_losses"}
    b = replication_budget(12, 3, 2)
    assert check("00.replicas", b.replicas).ok
    assert check("00.per_broker", int(b.replicas_per_broker)).ok
    assert check("00.acks_all_losses", b.losses_writable).ok
    assert check("00.replicas", "36").ok and not check("00.replicas", True).ok


@pytest.mark.parametrize("answer", ["36", " 36.0 ", 36.0, np.int64(36), 12 * 3])
def test_replicas_accepts_formatting_variants(answer):
    assert check("00.replicas", answer).ok


@pytest.mark.parametrize(
    "ex_id, answer, says",
    [
        ("00.replicas", 24, "followers only"),  # 12 x (3 - 1)
        ("00.replicas", 12, "number of partitions"),
        ("00.replicas", "36 replicas", "not a whole number"),
        ("00.per_broker", 4, "followers only"),  # 24 followers / 6 brokers
        ("00.per_broker", 2, "leaders only"),
        ("00.acks_all_losses", 2, "single replica"),
    ],
)
def test_typical_wrong_answers_get_specific_feedback(ex_id, answer, says):
    fb = check(ex_id, answer)
    assert fb.status == "incorrect" and says in fb.message, str(fb)

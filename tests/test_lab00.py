"""Lab 00's panel, figure and exercises (the replication model itself: tests/test_replication.py)."""

import numpy as np
import pytest

from kafka_lab.exercises import check, exercises
from kafka_lab.replication import OFFLINE, READ_ONLY, WRITABLE, replication_budget
from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT
from kafka_lab.ui.lab00 import survival_figure, warmup_figure, warmup_panel


def test_figure_colours_each_loss_count_by_state():
    fig = survival_figure(3, 2)
    by_state = {tr.name: list(tr.x) for tr in fig.data}
    assert by_state == {WRITABLE: [0, 1], READ_ONLY: [2], OFFLINE: [3]}


def test_warmup_figure_places_the_topic_as_kafka_does():
    """The left panel: leaders and followers per broker, P leaders and P × (RF − 1) followers in all, from Kafka's
    placement (12 partitions on 6 brokers: 2 leaders and 4 followers each; 13: broker 0 leads a third)."""
    fig = warmup_figure(12, 3, 2)
    leaders, followers = (
        next(tr for tr in fig.data if tr.name == f"{role} on a broker") for role in ("leaders", "followers")
    )
    assert list(leaders.y) == [2] * 6 and list(followers.y) == [4] * 6
    fig13 = warmup_figure(13, 3, 2)
    lead13 = next(tr for tr in fig13.data if tr.name == "leaders on a broker")
    assert (
        list(lead13.y) == [3, 2, 2, 2, 2, 2]
        and sum(next(tr for tr in fig13.data if tr.name == "followers on a broker").y) == 13 * 2
    )
    assert "13 partitions × RF 3 = 39 replicas" in fig13.layout.annotations[0].text
    # the survival panel is survival_figure's bars
    states = {tr.name: list(tr.x) for tr in fig.data if tr.legendgroup == "state"}
    assert states == {WRITABLE: [0, 1], READ_ONLY: [2], OFFLINE: [3]}


def test_the_first_control_changes_the_figure(monkeypatch):
    """Lab 00 says: move the partitions slider first. It must change the figure, not only the text."""
    import kafka_lab.ui.lab00 as lab00

    drawn = []
    monkeypatch.setattr(lab00, "show_figure", lambda fig, out=None: drawn.append(fig))
    panel = lab00.warmup_panel()
    p = panel.children[0]
    assert PRIMARY_CONTROL in p._dom_classes
    before = drawn[-1]
    p.value = 13
    after = drawn[-1]
    assert after is not before

    def leaders(fig):
        return [list(tr.y) for tr in fig.data if tr.name == "leaders on a broker"]

    assert leaders(before) == [[2] * 6] and leaders(after) == [[3, 2, 2, 2, 2, 2]]


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


@pytest.mark.parametrize("answer", ["36", " 36.0 ", 36.0, np.int64(36), 12 * 3, "36 replicas", "36 Replicas"])
def test_replicas_accepts_formatting_variants(answer):
    assert check("00.replicas", answer).ok


@pytest.mark.parametrize(
    "ex_id, answer", [("00.per_broker", "6 replicas"), ("00.acks_all_losses", "1 broker"), ("00.acks_all_losses", "1")]
)
def test_a_count_may_carry_the_unit_the_question_counts_in(ex_id, answer):
    assert check(ex_id, answer).ok


@pytest.mark.parametrize(
    "ex_id, answer, says",
    [
        ("00.replicas", 24, "followers only"),  # 12 x (3 - 1)
        ("00.replicas", 12, "number of partitions"),
        # a wrong count with its unit gets the same feedback as the bare number
        ("00.replicas", "12 replicas", "number of partitions"),
        ("00.replicas", "24 replicas", "followers only"),
        ("00.replicas", "36 brokers", "not a whole number of replicas"),  # the right number, counting the wrong thing
        ("00.replicas", "36.5 replicas", "not a whole number"),
        ("00.per_broker", "2 replicas", "leaders only"),
        ("00.acks_all_losses", "2 brokers", "single replica"),
        ("00.per_broker", 4, "followers only"),  # 24 followers / 6 brokers
        ("00.per_broker", 2, "leaders only"),
        ("00.acks_all_losses", 2, "single replica"),
    ],
)
def test_typical_wrong_answers_get_specific_feedback(ex_id, answer, says):
    fb = check(ex_id, answer)
    assert fb.status == "incorrect" and says in fb.message, str(fb)

"""Lab 00's panel, figure and exercises (the replication model itself: tests/test_replication.py)."""

import numpy as np
import pytest

from kafka_lab.exercises import check, exercises
from kafka_lab.replication import OFFLINE, READ_ONLY, WRITABLE, replication_budget
from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT
from kafka_lab.ui.lab00 import survival_figure, warmup_panel


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

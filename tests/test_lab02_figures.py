"""Every number lab 02 teaches, from the same package calls, against KIP-36's worked examples or a hand count."""

import json
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from kafka_lab import assignment as asg
from kafka_lab.exercises import check
from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT
from kafka_lab.ui import lab02 as ui

LAB = Path(__file__).resolve().parent.parent / "labs" / "02_rack_awareness.ipynb"
KIP = asg.brokers_from_racks(asg.KIP36_RACKS)


def test_constants_are_the_kip_examples():
    assert asg.KIP36_RACKS == {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert asg.UNEVEN_RACKS == {0: "rack1", 1: "rack2", 2: "rack2"}


def test_step_by_step_list_is_the_kip_list():
    steps = asg.rack_alternated_steps(asg.KIP36_RACKS)
    assert steps["broker"].tolist() == [
        0,
        3,
        1,
        5,
        4,
        2,
    ]  # KIP-36: "0 (rack1), 3 (rack2), 1 (rack3), 5 (rack1), 4 (rack2), 2 (rack3)"
    assert steps["rack"].tolist() == ["rack1", "rack2", "rack3"] * 2
    assert steps["left in rack"].tolist() == ["5", "4", "2", "-", "-", "-"]


def test_show_steps_shows_the_racks_the_picks_and_the_table():
    shown = ui.show_steps(asg.KIP36_RACKS).data
    racks, picks = re.search(
        r"Racks in Java string order, brokers by id: (.*?)<br>One broker from each rack in "
        r"turn: (.*?)</div>",
        shown,
    ).groups()
    assert re.findall(r"<b>(\w+)</b>: ([\d, ]+)", racks) == [("rack1", "0, 5"), ("rack2", "3, 4"), ("rack3", "1, 2")]
    assert re.findall(r"<b>(\d+)</b>", picks) == ["0", "3", "1", "5", "4", "2"]
    assert shown.count("<tr>") == 1 + 6  # the header and one row per pick
    # plain column names: whose turn, whom it gives, who in that rack waits for a later turn
    assert "still to pick in its rack" in shown and "left in rack" not in shown


def test_rack10_sorts_before_rack2():
    assert asg.rack_alternated_broker_list(
        {0: "rack2", 1: "rack10", 2: "rack1", 3: "rack2", 4: "rack10", 5: "rack1"}
    ) == [2, 1, 0, 5, 4, 3]


def test_kip_twelve_partitions_and_balance():
    a = asg.assign_replicas_to_brokers(KIP, 12, 3, fixed_start_index=0)
    # KIP-36's two tables, partitions 0-5 and 6-11
    assert a == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
        7: [3, 2, 0],
        8: [1, 0, 3],
        9: [5, 3, 1],
        10: [4, 1, 5],
        11: [2, 5, 4],
    }
    bb = asg.broker_balance(a, KIP)
    assert set(bb["leaders"]) == {2} and set(bb["replicas"]) == {6}
    rb = asg.rack_balance(a, KIP)
    assert set(rb["leaders"]) == {4} and set(rb["replicas"]) == {12}


def test_uneven_example_penalizes_broker_0():
    uneven = asg.brokers_from_racks(asg.UNEVEN_RACKS)
    a = asg.assign_replicas_to_brokers(uneven, 3, 2, fixed_start_index=0)
    assert a == {0: [0, 1], 1: [1, 0], 2: [2, 0]}  # KIP-36
    fig = ui.balance_figure(a, uneven)
    replicas, leaders = fig.data
    assert list(replicas.y) == [3, 2, 1] and list(leaders.y) == [1, 1, 1]
    assert fig.layout.yaxis.title.text == "replicas (count)"  # the bars count replicas and leaders, not partitions


def test_penalized_solution_names_the_partition_that_skips():
    """The solution's walk-through agrees with Kafka's walk: in KIP-36's uneven example partition 1's first
    candidate follower (broker 2) shares its leader's rack and is skipped; partition 2's (broker 0) does not."""
    from kafka_lab.exercises import show_solution

    racks = asg.UNEVEN_RACKS
    listed = asg.rack_alternated_broker_list(asg.brokers_from_racks(racks))
    n = len(listed)
    first_candidate = {p: listed[(p + 1) % n] for p in (1, 2)}  # start index 0, shift 0: the next broker
    assert racks[first_candidate[1]] == racks[listed[1]] and racks[first_candidate[2]] != racks[listed[2]]
    text = str(show_solution("02.penalized"))
    assert "Partition 1's leader is broker 1" in text and "so Kafka skips to broker 0" in text
    assert "broker 2's follower cannot be broker 1" not in text


def test_rack_failure_rf2_by_hand():
    # rack-unaware over 0..5, start 0: p0-5 -> [p, p+1], so p5 = [5, 0]: both in rack1 (0 and 5) -> offline.
    # p6-11 -> [f, f+2]: (0,2) (1,3) (2,4) (3,5) (4,0) (5,1): none inside {0, 5}.
    t = asg.rack_failure_comparison(asg.KIP36_RACKS, 12, 2, failed_rack="rack1")
    assert t.loc["rack-unaware", "offline"] == 1
    assert t.loc["rack-aware", "offline"] == 0
    assert t.loc["rack-aware", "min racks spanned"] == 2 and t.loc["rack-unaware", "min racks spanned"] == 1
    shown = ui.show_comparison(asg.KIP36_RACKS, 12, 2, failed_rack="rack1")  # the lab's column names
    assert shown.loc["rack-unaware", "offline (no replica left)"] == 1
    assert shown.loc["rack-aware", "offline (no replica left)"] == 0
    assert shown.loc["rack-aware", "fewest racks one partition spans"] == 2
    assert shown.loc["rack-unaware", "fewest racks one partition spans"] == 1
    unaware = asg.assign_for_topic(KIP, 12, 2, rack_aware_mode="disabled", fixed_start_index=0)
    impact = asg.failure_impact(unaware, KIP, failed_racks=["rack1"])
    assert impact.index[impact["offline"]].tolist() == [5]
    assert check("02.rack_failure", (1, 0)).ok


def test_the_failure_figure_refuses_an_empty_rack_name_it_does_not_have():
    """failure_figure(failed_rack="") once drew "no rack down": '' is a rack name, refused as any unknown rack;
    None is no rack down, and a rack really named '' is failed and named in the title."""
    with pytest.raises(ValueError, match=r"no broker is in rack\(s\) \[''\]"):
        ui.failure_figure(asg.KIP36_RACKS, 12, 2, "", 1)
    assert "no rack down" in ui.failure_figure(asg.KIP36_RACKS, 12, 2, None, 1).layout.title.text
    fig = ui.failure_figure({0: "", 1: "r2", 2: "r2"}, 3, 1, "", 1)
    assert '"" down' in fig.layout.title.text


def test_rack_failure_rf3_min_isr_2_by_hand():
    # rack-unaware: p0-5 -> [f, f+1, f+2], p6-11 -> [f, f+2, f+3]; two of {0, 5} in p4 [4,5,0], p5 [5,0,1], p9 [3,5,0]
    t = asg.rack_failure_comparison(asg.KIP36_RACKS, 12, 3, failed_rack="rack1", min_insync_replicas=2)
    assert t.loc["rack-unaware", "below_min_isr"] == 3 and t.loc["rack-unaware", "writable (acks=all)"] == 9
    assert t.loc["rack-aware", "below_min_isr"] == 0 and t.loc["rack-aware", "writable (acks=all)"] == 12
    assert (t["offline"] == 0).all()
    # every partition had a replica on rack1 when RF = racks = 3; 4 of 12 were led from rack1
    assert t.loc["rack-aware", "leader_lost"] == 4
    shown = ui.show_comparison(asg.KIP36_RACKS, 12, 3, failed_rack="rack1", min_insync_replicas=2)
    below, writable = "below min.insync.replicas", "still take acks=all writes"
    assert shown.loc["rack-unaware", below] == 3 and shown.loc["rack-unaware", writable] == 9
    assert shown.loc["rack-aware", below] == 0 and shown.loc["rack-aware", writable] == 12
    assert (shown["offline (no replica left)"] == 0).all()
    assert shown.loc["rack-aware", "lost their leader"] == 4


def test_partial_racks_messages_in_the_lab():
    half = [asg.BrokerMetadata(0, "rack1"), asg.BrokerMetadata(1, None), asg.BrokerMetadata(2, "rack2")]
    assert ui.kafka_says(asg.assign_replicas_to_brokers, half, 3, 2) == (
        "AdminOperationException: Not all brokers have rack information for replica rack aware assignment."
    )
    assert ui.kafka_says(asg.assign_for_topic, half, 3, 2) == (
        "AdminOperationException: Not all brokers have rack information. "
        "Add --disable-rack-aware in command line to make replica assignment without rack information."
    )
    # rack-unaware by hand over [0, 1, 2]: [p, p+1] -> {0: [0, 1], 1: [1, 2], 2: [2, 0]}
    assert ui.kafka_says(asg.assign_for_topic, half, 3, 2, rack_aware_mode="disabled", fixed_start_index=0) == {
        0: [0, 1],
        1: [1, 2],
        2: [2, 0],
    }
    assert ui.kafka_says(asg.assign_replicas_to_brokers, half, 3, 4) == (
        "InvalidReplicationFactorException: Replication factor: 4 larger than available brokers: 3."
    )


def test_growing_the_kip_topic_matches():
    # KIP-36's first table (partitions 0-5) grown to 12 gives its second table (6-11), as the lab says
    first = {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3]}
    grown = asg.add_partitions(KIP, first, 12)
    assert grown == {6: [0, 4, 2], 7: [3, 2, 0], 8: [1, 0, 3], 9: [5, 3, 1], 10: [4, 1, 5], 11: [2, 5, 4]}


def test_scale_example_is_even_per_rack():
    big = [asg.BrokerMetadata(i, f"rack{i % 10}") for i in range(1000)]
    rb = asg.rack_balance(asg.assign_replicas_to_brokers(big, 100_000, 3, fixed_start_index=0), big)
    assert rb["leaders"].tolist() == [10_000] * 10 and rb["replicas"].tolist() == [30_000] * 10
    assert set(rb["replicas per broker"]) == {300.0}


def test_assignment_figure_marks_leaders_and_colours_racks():
    a = asg.assign_replicas_to_brokers(KIP, 12, 3, fixed_start_index=0)
    fig = ui.assignment_figure(a, KIP)
    stars = [t for t in fig.data if t.marker.symbol == "star"]
    squares = [t for t in fig.data if t.marker.symbol == "square"]
    assert sum(len(t.x) for t in stars) == 12 and sum(len(t.x) for t in squares) == 24
    colours = {t.name.split()[0]: t.marker.color for t in fig.data}
    assert len(set(colours.values())) == 3  # one colour per rack
    for t in stars:  # each star sits on its partition's leader
        for x, y in zip(t.x, t.y):
            assert y.startswith(f"broker {a[x][0]} ")


def test_panel_redraws_when_the_primary_control_moves():
    panel = ui.rack_awareness_panel()
    controls = [w for w in _walk(panel) if PRIMARY_CONTROL in w._dom_classes]
    outputs = [w for w in _walk(panel) if PRIMARY_OUTPUT in w._dom_classes]
    assert len(controls) == 1 and len(outputs) == 1
    before = outputs[0].value
    assert "[0, 3, 1]" in before and "6–6" in before and "(even)" in before
    assert "rack1: 4 leaders, 12 replicas; rack2: 4 leaders, 12 replicas; rack3: 4 leaders, 12 replicas" in before
    controls[0].value = 13
    assert outputs[0].value != before and "(uneven)" in outputs[0].value


def test_panel_shows_kafka_error_for_a_broker_without_rack():
    panel = ui.rack_awareness_panel()
    dropdowns = [w for w in _walk(panel) if getattr(w, "description", "") == "broker 1"]
    dropdowns[0].value = ui.NO_RACK
    out = next(w for w in _walk(panel) if PRIMARY_OUTPUT in w._dom_classes)
    assert "Not all brokers have rack information for replica rack aware assignment." in out.value


def test_failure_panel_builds():
    panel = ui.rack_failure_panel()
    assert isinstance(ui.failure_figure(asg.KIP36_RACKS, 12, 2, "rack1", 1, 0), go.Figure)
    assert panel.children


@pytest.mark.parametrize(
    "ex_id, answer",
    [
        ("02.partition0", [0, 3, 1]),
        ("02.partition6", [0, 4, 2]),
        ("02.penalized", [3, 2, 1]),
        ("02.rack_failure", (1, 0)),
    ],
)
def test_exercise_answers_are_the_kip_values(ex_id, answer):
    assert check(ex_id, answer).ok


def test_lab_uses_the_same_calls():
    src = "\n".join("".join(c["source"]) for c in json.loads(LAB.read_text())["cells"])
    for call in (
        "assign_replicas_to_brokers(kip, 12, 3, fixed_start_index=0)",
        'show_comparison(KIP36_RACKS, 12, 3, failed_rack="rack1", min_insync_replicas=2)',
        'rack_failure_panel(KIP36_RACKS, partitions=12, replication_factor=2, failed_rack="rack1")',
        "assign_replicas_to_brokers(uneven, 3, 2, fixed_start_index=0)",
        "assign_replicas_to_brokers(big, 100_000, 3, fixed_start_index=0)",
    ):
        assert call in src, call


def _walk(w):
    yield w
    for c in getattr(w, "children", ()):
        yield from _walk(c)


@pytest.mark.parametrize(
    "ex_id, answer",
    [
        ("02.partition0", "[0, 3, 1]"),
        ("02.partition0", "0 3 1"),
        ("02.partition0", ("0", "3", "1")),
        ("02.partition0", np.array([0, 3, 1])),
        ("02.partition6", "(0,4,2)"),
        ("02.partition6", {0: [0, 3, 1], 6: [0, 4, 2]}),  # a whole assignment: partition 6's entry
        ("02.penalized", "3, 2, 1"),
        ("02.penalized", {0: 3, 1: 2, 2: 1}),
        ("02.rack_failure", [1, 0]),
        ("02.rack_failure", "1, 0"),
        # labelled counts are read by their labels (they once were read in key order: "rack-aware" first)
        ("02.rack_failure", {"rack-unaware": 1, "rack-aware": 0}),
        ("02.rack_failure", {"rack_aware": 0, "Rack-Unaware": 1}),
    ],
)
def test_exercises_accept_formatting_variants(ex_id, answer):
    assert check(ex_id, answer).ok


@pytest.mark.parametrize(
    "ex_id, answer, says",
    [
        ("02.partition0", [0, 5, 3], "both on rack1"),  # KIP-36: 0 -> rack1, 5 -> rack1
        ("02.partition0", [3, 0, 1], "the leader is not 3"),
        ("02.partition0", [0, 1, 3], "wrong order"),
        ("02.partition0", [0, 0, 1], "appears twice"),
        ("02.partition0", [0, 3, 7], "no broker 7"),
        ("02.partition0", "0, 3", "you gave 2"),
        ("02.partition6", [0, 3, 1], "repeats partition 0"),
        ("02.partition6", [0, 5, 4], "both on rack1"),
        ("02.partition6", (3, 2, 0), "partition 7"),  # KIP-36: 7 -> (3,2,0)
        ("02.penalized", [1, 2, 3], "in reverse"),
        ("02.penalized", [1, 1, 1], "leaders only"),
        ("02.rack_failure", (0, 1), "swapped"),
        ("02.rack_failure", "1", "not two counts"),
        ("02.rack_failure", {"rack-aware": 1, "rack-unaware": 0}, "swapped"),
        ("02.rack_failure", {"first": 1, "second": 0}, "one for each assignment"),
    ],
)
def test_typical_wrong_answers_get_specific_feedback(ex_id, answer, says):
    fb = check(ex_id, answer)
    assert fb.status == "incorrect" and says in fb.message, str(fb)


def test_the_answer_format_example_is_read_by_the_check_and_is_no_answer():
    """Exercise 1 shows how to write a replica list with made-up broker ids (it once showed [5, 4, 2], partition
    3's replicas, which gives the walk away; tests/test_notebook_hygiene.py keeps any real list out): the lab
    and the checks' hint show the same example, the checks' parser reads it, and a learner who types it is told
    that no such broker exists."""
    from kafka_lab.exercises.answers import whole_numbers
    from kafka_lab.exercises.lab02 import REPLICA_LIST_FORMAT

    cells = json.loads(LAB.read_text())["cells"]
    (question,) = [c for c in cells if "**Exercise 1.**" in "".join(c["source"])]
    assert f"written like `{REPLICA_LIST_FORMAT}`" in "".join(question["source"])
    ids = whole_numbers(REPLICA_LIST_FORMAT)
    assert ids is not None and len(ids) == 3 and not set(ids) & set(asg.KIP36_RACKS)
    for ex_id in ("02.partition0", "02.partition6"):
        fb = check(ex_id, REPLICA_LIST_FORMAT)
        assert fb.status == "incorrect" and f"there is no broker {ids[0]}" in fb.message
        assert REPLICA_LIST_FORMAT in check(ex_id, "leader first").hint  # the hint shows the same example

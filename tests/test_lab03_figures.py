"""Every number lab 03 teaches, from the same package calls and seeds, against the KIP's arithmetic,
queueing theory or a hand count."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kafka_lab.exercises import check
from kafka_lab.exercises import lab03 as ex
from kafka_lab.sim import experiments
from kafka_lab.sim.experiments import controller_behind_backlog, controller_wait_ms, lab_properties
from kafka_lab.sim.theory import saturation_rate
from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT
from kafka_lab.ui import lab03 as ui

LAB = Path(__file__).resolve().parent.parent / "labs" / "03_control_plane.ipynb"
SRC = "\n".join("".join(c["source"]) for c in json.loads(LAB.read_text())["cells"])


def test_the_lab_makes_these_calls():
    for call in (
        "lab_properties(control_plane=False)",
        "lab_properties(control_plane=True)",
        "sweep(rates, control_plane=False, service_ms=2.0, duration_ms=2000, controller_at_ms=1500)",
        "rates = [1000, 2000, 3000, 3500, 3800, 4200, 5000, 6000]",
        "controller_behind_backlog(400, control_plane=False)",
        "controller_behind_backlog(400, control_plane=True)",
        "backlogs = [0, 250, 500, 750, 1000, 1500, 2000]",
        "downstream_table(backlog=200)",
        "request_path_panel(rate=10000)",
        "backlog_panel(backlog=1500)",
        "saturation_rate(8, 2.0)",
    ):
        assert call in SRC, call


def test_config_goes_through_listener_resolution():
    off = ui.config_html(lab_properties(control_plane=False))
    on = ui.config_html(lab_properties(control_plane=True))
    assert "no control.plane.listener.name" in off and "the controller" in off and "round 1" in off
    assert "control.plane.listener.name = <b>CONTROLLER</b>" in on and "queue of 20" in on
    bad = ui.config_html(lab_properties(True, **{"control.plane.listener.name": "PLAINTEXT"}))
    assert "Currently they both have the value ListenerName(PLAINTEXT)" in bad


def test_saturation_sweep():
    rates = [1000, 2000, 3000, 3500, 3800, 4200, 5000, 6000]
    t = ui.sweep(rates, progress=False, control_plane=False, service_ms=2.0, duration_ms=2000, controller_at_ms=1500)
    sat = saturation_rate(8, 2.0)
    assert sat == 4000
    below = t[t["rate_per_s"] < sat]
    # utilisation = rho = rate × 2 ms / 8 handlers, within the sampling noise of one 2 s run (~2000+ requests)
    assert np.allclose(below["handler_utilisation"], below["rate_per_s"] * 2.0 / 8000, rtol=0.06)
    assert (t.loc[t["rate_per_s"] > sat, "handler_utilisation"] > 0.97).all()
    q = t["mean_requestQueueTime"].to_numpy()
    assert (np.diff(q) > 0).all()  # waits grow with load, and explode past rho = 1
    assert q[-1] > 20 * q[2]


def test_fifo_backlog_of_400():
    row = controller_behind_backlog(400, control_plane=False).request("LeaderAndIsr")
    # sent at 0.001 ms behind 400 requests: 400 / 8 rounds of 1 ms
    assert row["requestQueueTime"] == pytest.approx(400 / 8 * 1.0 - 0.001)
    assert row["totalTime"] == pytest.approx(400 / 8 + 1.0 - 0.001)
    assert (row["listener"], row["plane"], row["error"]) == ("PLAINTEXT", "data", "NONE")
    assert row["processor"] == 400 % 3  # the 401st connection on PLAINTEXT's 3 processors, round-robin
    assert ex.backlog_wait() == pytest.approx(controller_wait_ms(row))


def test_control_plane_backlog_of_400():
    row = controller_behind_backlog(400, control_plane=True).request("LeaderAndIsr")
    assert (row["listener"], row["plane"], row["processor"]) == ("CONTROLLER", "control", 0)
    assert row["requestQueueTime"] == 0 and row["socketWaitTime"] == 0
    assert row["totalTime"] == pytest.approx(1.0)


def test_backlog_table_three_designs():
    backlogs = [0, 250, 500, 750, 1000, 1500, 2000]
    t = experiments.backlog_table(backlogs).pivot(index="backlog", columns="design", values="wait_ms")
    fifo, prio, cp = (t[label] for label, _, _ in experiments.DESIGNS)
    for n in backlogs:
        assert fifo[n] == pytest.approx(max(math.floor(n / 8) - 0.001, 0), abs=1e-9)  # backlog × s / c
        assert cp[n] == 0
        if n <= 500:
            assert prio[n] <= 1.0  # jumps the queue: at most one service time
        else:
            assert prio[n] == pytest.approx((n - 500) / 8, abs=1.5)  # waits to be read behind a blocked processor
    fig = ui.backlog_figure(experiments.backlog_table([0, 1000]))
    assert [tr.name for tr in fig.data][:3] == [d[0] for d in experiments.DESIGNS]


def test_downstream_table():
    t = experiments.downstream_table(backlog=200)
    # one row per measure, the two designs as columns (it fits a notebook column)
    assert list(t.columns) == ["no control plane", "control.plane.listener.name=CONTROLLER"]
    no, yes = t["no control plane"], t["control.plane.listener.name=CONTROLLER"]
    # 200 produces and the followers' 2 first fetches ahead: 202 / 8 → 25 rounds, then 1 ms of work
    assert no["LeaderAndIsr applied at (ms)"] == pytest.approx(26.0)
    assert yes["LeaderAndIsr applied at (ms)"] == pytest.approx(0.001 + 1.0)
    # acks=all: parked from their append (round k ends at k + 1 ms) until 26 ms: about 26 − 13 = 13 ms on average
    assert no["acks=all: mean remoteTime (ms)"] == pytest.approx(13.0, abs=0.5)
    assert yes["acks=all: mean remoteTime (ms)"] < 0.01
    assert no["acks=all: NOT_LEADER_OR_FOLLOWER"] == yes["acks=all: NOT_LEADER_OR_FOLLOWER"] == 200
    # acks=1: all but the 8 the handlers took at t=0 are acknowledged by the demoted leader; none with the control plane
    assert no["acks=1: acknowledged after the decision"] == 200 - 8
    assert yes["acks=1: acknowledged after the decision"] == 0
    assert no["UpdateMetadata: stale window (ms)"] == pytest.approx(200 / 8 - 0.001 + 0.5)
    assert yes["UpdateMetadata: stale window (ms)"] == pytest.approx(0.5)
    assert type(no["acks=1: acknowledged after the decision"]) is int  # a count reads 192, not 192.000


def test_sweep_figure_axes_start_at_zero_on_round_shared_ticks():
    rates = [1000, 2000, 3000, 3500, 3800, 4200, 5000, 6000]
    t = ui.sweep(rates, progress=False, control_plane=False, service_ms=2.0, duration_ms=2000, controller_at_ms=1500)
    fig = ui.sweep_figure(t, saturation_rate(8, 2.0))
    util, wait = fig.layout.yaxis, fig.layout.yaxis2
    assert util.range[0] == 0 and wait.range[0] == 0  # no negative wait on the axis
    top = max(t["mean_requestQueueTime"].max(), t["leader_and_isr_wait_ms"].max())
    assert top <= wait.range[1] and wait.dtick in (1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 250, 500)
    # the same number of ticks over the same height: the wait ticks sit on the utilisation grid lines
    assert wait.range[1] / wait.dtick == pytest.approx(util.range[1] / util.dtick)


def test_leader_and_isr_markers_have_a_colour_of_their_own():
    res = controller_behind_backlog(100, control_plane=False)
    fig = ui.metrics_figure(res)
    metric_colours = {tr.line.color for tr in fig.data if not tr.name.startswith("LeaderAndIsr")}
    marker_colours = {sh.line.color for sh in fig.layout.shapes}
    assert marker_colours and not marker_colours & metric_colours
    assert {"LeaderAndIsr sent", "LeaderAndIsr taken by a handler"} <= {tr.name for tr in fig.data}
    row = res.request("LeaderAndIsr")
    assert sorted({sh.x0 for sh in fig.layout.shapes}) == pytest.approx(sorted({row["sent_ms"], row["dequeue_ms"]}))


def test_exercise_truths_are_the_lab_numbers():
    assert check("03.saturation", 4000).ok and check("03.backlog_wait", 50).ok
    full = ex.priority_full_wait()
    assert full["wait"] == pytest.approx((1500 - 500) / 8, abs=1.5) and full["queue"] <= 1.0 + 1e-9
    assert check("03.priority_full", round(full["wait"])).ok
    assert check("03.why_rejected", "b").ok


def _find(widget, cls):
    if cls in getattr(widget, "_dom_classes", ()):
        return widget
    for child in getattr(widget, "children", ()):
        hit = _find(child, cls)
        if hit is not None:
            return hit
    return None


def test_primary_control_changes_the_primary_output():
    panel = ui.request_path_panel(rate=10000, duration_ms=300)
    control, output = _find(panel, PRIMARY_CONTROL), _find(panel, PRIMARY_OUTPUT)
    assert control is not None and output is not None
    before = output.value
    control.value = 3000
    assert output.value != before and "LeaderAndIsr" in output.value and "3000 produce requests/s" in output.value


def test_backlog_panel_redraws_and_is_not_a_second_primary():
    panel = ui.backlog_panel(backlog=1500)
    assert _find(panel, PRIMARY_CONTROL) is None and _find(panel, PRIMARY_OUTPUT) is None
    slider, _, table = panel.children[:3]
    before = table.value
    slider.value = 300
    assert (
        table.value != before
        and f"<td>{controller_wait_ms(controller_behind_backlog(300, control_plane=False).request('LeaderAndIsr')):.3f}</td>"
        in table.value
    )


def test_timeline_and_metrics_figures_use_kafka_names():
    res = controller_behind_backlog(100, control_plane=False)
    fig = ui.timeline_figure(res, around=0.0, n=10)
    names = {tr.name for tr in fig.data}
    assert {"requestQueueTime", "localTime"} <= names
    labels = set(np.concatenate([np.asarray(tr.y) for tr in fig.data]))
    assert "LeaderAndIsr controller-1#0" in labels
    m = ui.metrics_figure(res)
    assert {"RequestQueueSize", "RequestHandlerAvgIdlePercent", "NetworkProcessorAvgIdlePercent"} <= {
        tr.name for tr in m.data
    }


def test_live_panel_default_numbers():
    """request_path_panel(rate=10000): rho = 10000 × 1 ms / 8 = 1.25, so the queue fills to queued.max.requests,
    the processors block, and the LeaderAndIsr (at 450 ms) waits about a full queue's worth, 500 / 8 ms, or more."""
    from kafka_lab.sim.experiments import steady_load

    panel = ui.request_path_panel(rate=10000)
    text = _find(panel, PRIMARY_OUTPUT).value
    assert "offered load ρ = 1.25" in text
    res = steady_load(10000, control_plane=False, duration_ms=600.0, controller_at_ms=450.0)
    assert f"mean RequestQueueSize {res.time_average('RequestQueueSize'):.1f}" in text
    assert max(res.broker.metrics.gauges["RequestQueueSize"].values) == 500
    lai = res.request("LeaderAndIsr")
    assert controller_wait_ms(lai) > 500 / 8 and f"waited {controller_wait_ms(lai):.2f} ms" in text
    assert lai["socketWaitTime"] > 0  # its processor was blocked on the full queue
    cp = steady_load(10000, control_plane=True, duration_ms=600.0, controller_at_ms=450.0).request("LeaderAndIsr")
    assert controller_wait_ms(cp) == pytest.approx(0.01)  # just the network read
    prio = steady_load(10000, control_plane=False, prioritise=True, duration_ms=600.0, controller_at_ms=450.0)
    p = prio.request("LeaderAndIsr")
    assert p["requestQueueTime"] < 1.0 < p["socketWaitTime"]  # jumps the queue, but only once read


def test_backlog_panel_default_numbers():
    text = ui.backlog_panel(backlog=1500).children[2].value
    fifo, prio, cp = (
        controller_behind_backlog(1500, control_plane=c, prioritise=p).request("LeaderAndIsr")
        for _, c, p in experiments.DESIGNS
    )
    assert controller_wait_ms(fifo) == pytest.approx(1500 / 8 - 0.5 - 0.001)  # floor(1500 / 8) rounds of 1 ms
    assert controller_wait_ms(prio) == pytest.approx((1500 - 500) / 8, abs=1.5)
    assert controller_wait_ms(cp) == 0
    for row in (fifo, prio, cp):
        assert f"<td>{controller_wait_ms(row):.3f}</td>" in text


@pytest.mark.parametrize(
    "eid,answer",
    [
        ("03.backlog_wait", "50"),
        ("03.backlog_wait", 50.0),
        ("03.backlog_wait", 49.999),
        ("03.backlog_wait", "50 ms"),
        ("03.backlog_wait", np.float64(50)),
        ("03.saturation", "4,000"),
        ("03.saturation", "4000/s"),
        ("03.saturation", 4000.0),
        ("03.priority_full", "125"),
        ("03.priority_full", 124.999),
        ("03.why_rejected", "B"),
        ("03.why_rejected", "(b)"),
        ("03.why_rejected", "b."),
    ],
)
def test_exercises_accept_the_usual_spellings_of_a_right_answer(eid, answer):
    assert check(eid, answer).ok


@pytest.mark.parametrize(
    "eid,answer,says",
    [
        ("03.backlog_wait", 49, "one round"),
        ("03.backlog_wait", 51, "one round"),
        ("03.backlog_wait", 1, "dedicated control plane"),
        ("03.backlog_wait", 0.05, "seconds"),
        ("03.saturation", 4, "per millisecond"),
        ("03.saturation", 8000, "1 ms per request"),
        ("03.priority_full", 62.5, "jumps that queue"),
        ("03.priority_full", 126, "own 1 ms"),
        ("03.why_rejected", "a", "never drops"),
    ],
)
def test_exercises_explain_the_typical_wrong_answers(eid, answer, says):
    fb = check(eid, answer)
    assert fb.status == "incorrect" and says in fb.message


def test_live_panel_keeps_up_below_8000_per_second():
    """Step 2's prose: 8 handlers × 1000 requests per second (1 ms each): below 8000/s the handlers keep up
    (the queue stays short, the LeaderAndIsr hardly waits); above it the queue grows
    until it holds queued.max.requests (at 10000/s within the panel's 600 ms: test_live_panel_default_numbers)."""
    from kafka_lab.sim.experiments import steady_load

    assert saturation_rate(8, 1.0) == 8000
    below = steady_load(6000, control_plane=False, duration_ms=600.0, controller_at_ms=450.0)
    assert max(below.broker.metrics.gauges["RequestQueueSize"].values) < 50
    assert 1 - below.time_average("RequestHandlerAvgIdlePercent") == pytest.approx(6000 / 8000, abs=0.05)
    assert controller_wait_ms(below.request("LeaderAndIsr")) < 5.0
    above = steady_load(9000, control_plane=False, duration_ms=600.0, controller_at_ms=450.0)
    q = above.metrics.set_index("time_ms")["RequestQueueSize"]
    # 1000 requests/s more than the handlers take; the queue keeps growing, if slower than that, since a
    # connection whose request is queued is muted and the rest of the excess waits in the socket
    assert q.loc[300.0] > 100 and q.iloc[-1] - q.loc[300.0] > 100  # still growing

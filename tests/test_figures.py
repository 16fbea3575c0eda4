"""Every figure the labs draw follows the same rules: a title, a named legend, axes titled (times with their
unit: ms, or s where lab 07's controller takes seconds to minutes; fractions as 0..1), and colours only from
kafka_lab.ui's one colour-blind-safe palette and its neutrals."""

from __future__ import annotations

import json

import pytest

import kafka_lab.assignment as asg
from kafka_lab.sim import stale_metadata_incident, truncation_incident, unavailability_incident
from kafka_lab.sim.experiments import backlog_table, controller_behind_backlog, steady_load
from kafka_lab.ui import COLOURS, PALETTE, TEMPLATE, cluster, lab00, lab02, lab03, lab07


def _figures():
    kip = asg.brokers_from_racks(asg.KIP36_RACKS)
    uneven = asg.brokers_from_racks(asg.UNEVEN_RACKS)
    res = steady_load(10000, control_plane=False, duration_ms=300.0, controller_at_ms=200.0)
    sweep = lab03.sweep(
        [2000, 3500, 5000], progress=False, control_plane=False, service_ms=2.0, duration_ms=600, controller_at_ms=400
    )
    return {
        "lab00 warm-up": lab00.warmup_figure(12, 3, 2),
        "lab00 survival": lab00.survival_figure(3, 2),
        "lab02 assignment": lab02.assignment_figure(
            asg.assign_replicas_to_brokers(kip, 12, 3, fixed_start_index=0), kip
        ),
        "lab02 balance": lab02.balance_figure(
            asg.assign_replicas_to_brokers(uneven, 3, 2, fixed_start_index=0), uneven
        ),
        "lab02 failure": lab02.failure_figure(asg.KIP36_RACKS, 12, 2, "rack1", 1),
        "lab03 metrics": lab03.metrics_figure(res),
        "lab03 timeline": lab03.timeline_figure(controller_behind_backlog(100, control_plane=False), around=0.0, n=10),
        "lab03 backlog": lab03.backlog_figure(backlog_table([0, 500, 1000])),
        "lab03 sweep": lab03.sweep_figure(sweep, handlers=8, service_ms=2.0),
        "lab07 shutdown": lab07.shutdown_figure(1000),
        "lab07 scale": lab07.scale_figure((100, 1000)),
        "lab07 failover": lab07.failover_figure(1000),
        **_cluster_figures(),
    }


def _cluster_figures():
    """Labs 04-06 draw with kafka_lab.ui.cluster: every one of its figures, on short runs."""
    small = dict(producers=60, burst=1, rate_per_s=20, partitions=3, until_ms=60)
    trunc = cluster.compare(truncation_incident, **small)
    stale = cluster.compare(stale_metadata_incident, **small)
    moves = cluster.compare(unavailability_incident, settings=(False, {1: True}), **small)
    return {
        "cluster purgatory": cluster.purgatory_figure(trunc),
        "cluster metric": cluster.metric_figure(trunc, "RequestQueueSize", 1),
        "cluster latency": cluster.latency_figure(trunc),
        "cluster leadership": cluster.leadership_figure(moves),
        "cluster outcomes": cluster.outcomes_figure(trunc),
        "cluster truncated acks": cluster.truncated_acks_figure(trunc),
        "cluster staleness": cluster.staleness_figure(stale),
        "cluster wrong leader": cluster.wrong_leader_figure(stale),
    }


FIGURES = _figures()


def _colours(fig):
    """Every colour the figure's traces and shapes use."""
    out = set()
    for tr in fig.data:
        for path in ("marker.color", "line.color", "marker.line.color"):
            obj = tr
            for part in path.split("."):
                obj = getattr(obj, part, None)
                if obj is None:
                    break
            values = obj if isinstance(obj, (list, tuple)) else [obj]
            out |= {v for v in values if isinstance(v, str)}
    for sh in fig.layout.shapes:
        out |= {c for c in (sh.fillcolor, sh.line.color) if isinstance(c, str)}
    return out


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_has_a_title_a_legend_and_titled_axes(name):
    fig = FIGURES[name]
    assert fig.layout.title.text, f"{name}: no title"
    named = [tr for tr in fig.data if tr.name and tr.showlegend is not False]
    assert named and fig.layout.showlegend is not False, f"{name}: no legend"
    used = {
        ref.replace("x", "xaxis", 1) if ref.startswith("x") else ref.replace("y", "yaxis", 1)
        for tr in fig.data
        for ref in (tr.xaxis or "x", tr.yaxis or "y")
    }
    for key in sorted(used):
        axis = fig.layout[key]
        title = axis.title.text or ""
        if not title:
            # a panel sharing its axis with the panel beside or above it is titled once, there
            assert axis.matches, f"{name}: {key} has no title"
        low = title.lower()
        if any(w in low for w in ("time", "wait")):
            assert "ms" in low or "(s" in low, f"{name}: {key} shows a time without its unit: {title!r}"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_uses_the_one_palette(name):
    fig = FIGURES[name]
    assert fig.layout.template.layout.colorway == tuple(PALETTE), f"{name}: not drawn with {TEMPLATE}"
    stray = _colours(fig) - COLOURS
    assert not stray, f"{name} uses colours outside kafka_lab.ui's palette: {sorted(stray)}"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_is_valid_plotly(name):
    """Live panels draw from plain specs without plotly's validation (kafka_lab.ui.plain_figure): rebuilding each
    figure with validation on fails on a misspelt or misplaced property."""
    import plotly.graph_objects as go

    fig = FIGURES[name]
    assert json.loads(go.Figure(fig.to_dict()).to_json()) == json.loads(fig.to_json())


def test_the_validity_check_catches_a_wrong_property():
    import plotly.graph_objects as go

    from kafka_lab.ui import plain_figure

    bad = plain_figure([{"type": "scatter", "y": [1, 2], "name": "x", "line": {"colour": "#0072B2"}}], {})
    with pytest.raises(ValueError, match="colour"):
        go.Figure(bad.to_dict())


def test_the_palette_is_okabe_ito():
    """Okabe & Ito's colour-universal-design set (without black): safe for the common colour-vision deficiencies."""
    assert PALETTE == ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442"]


def test_the_palette_rule_catches_a_stray_colour():
    import plotly.graph_objects as go

    fig = go.Figure(go.Scatter(y=[1, 2], name="x", line=dict(color="#E45756")))
    assert _colours(fig) - COLOURS == {"#E45756"}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_a_reference_lines_label_sits_beside_it_not_across_it(name):
    """The screenshots showed 'ρ = 1' and 'queued.max.requests = 500' struck through by their own dashed lines."""
    fig = FIGURES[name]
    vertical = {sh.x0 for sh in fig.layout.shapes if sh.type == "line" and sh.x0 == sh.x1 and sh.x0 is not None}
    horizontal = {sh.y0 for sh in fig.layout.shapes if sh.type == "line" and sh.y0 == sh.y1 and sh.y0 is not None}
    for ann in fig.layout.annotations:
        if ann.x in vertical and ann.xref in ("x", "x1", "x2", None):
            assert ann.xanchor in ("left", "right") and ann.bgcolor, f"{name}: {ann.text!r} sits on its line"
        if ann.y in horizontal and ann.yref not in ("paper",):
            assert ann.yanchor in ("top", "bottom") and ann.bgcolor, f"{name}: {ann.text!r} sits on its line"


def test_the_screenshots_findings():
    # the rack-unaware half of lab 02's failure figure names its rows too; the title says "rack1 down"
    fail = FIGURES["lab02 failure"]
    assert fail.layout.yaxis2.showticklabels is True and fail.layout.title.text.startswith(
        "12 partitions, RF 2: rack1 down"
    )
    assert {"offline: no replica left", "below min.insync.replicas=1"} <= {tr.name for tr in fail.data}
    # lab 03: the backlog panel's headers are cells of their own, with units, in a padded left-aligned table
    table = lab03.backlog_panel(backlog=600).children[2].value
    assert "table.kl-table.kl-table td" in table and "<th class='kl-num'>of which in the socket (ms)</th>" in table
    # step 1's table is left-aligned, and one handler is "1 handler"
    config = lab03.config_html({"listeners": "PLAINTEXT://:9092", "num.network.threads": 1})
    assert "class='kl-table'" in config and "data (1 processor)" in config
    panel = lab03.request_path_panel(rate=1000, duration_ms=100)
    panel.children[1].value = 1  # num.io.threads
    summary = next(w for w in panel.children if "kl-primary-output" in w._dom_classes).value
    assert "on 1 handler," in summary and "1 handlers" not in summary


def _legend_gap_px(fig) -> float:
    """How far below the plot area a horizontal legend starts, in px (the figure's height less its margins)."""
    lay = fig.layout
    plot_px = (lay.height or 450) - lay.margin.t - lay.margin.b
    return -lay.legend.y * plot_px


@pytest.mark.parametrize("name", sorted(n for n in FIGURES if n.startswith("cluster")))
def test_a_legend_below_the_plot_clears_the_x_axis_title(name):
    """Issue 31's screenshots: lab 04's live panel put its legend on the x axis's title. Labs 04-06 place the legend
    a fixed distance below the plot area (tick labels and title take about 45 px), whatever the height."""
    fig = FIGURES[name]
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.yanchor == "top"
    assert _legend_gap_px(fig) == pytest.approx(cluster.LEGEND_GAP_PX) and cluster.LEGEND_GAP_PX >= 60


def test_the_live_panels_two_leadership_bars_leave_room_for_the_axis_title():
    """The panel runs one setting: two bars, a figure 290 px high. A legend at a fraction of the plot's height sat
    45 px below it, on "simulated time (ms)"."""
    run = cluster.compare(unavailability_incident, settings=(False,), producers=60, burst=1, rate_per_s=20,
                          partitions=3, until_ms=60)  # fmt: skip
    fig = cluster.leadership_figure(run)
    assert fig.layout.height == 290 and _legend_gap_px(fig) == pytest.approx(cluster.LEGEND_GAP_PX)


def test_lab_07s_screenshot_findings():
    """Issue 31's screenshots of lab 07: the election toggle cut "1.0: create, then the epoch" to "1.0: create,
    then ..."; the scale figure's left title ran off its half; log axes labelled the 2s and 5s of every decade."""
    panel = lab07.election_panel(brokers=3)
    toggle = panel.children[1]
    longest = max(len(label) for label, _v in toggle.options)
    assert (
        longest == len("1.0: create, then the epoch")
        and int(toggle.style.button_width.removesuffix("px")) >= 8 * longest
    )
    scale = FIGURES["lab07 scale"]
    titles = [a.text for a in scale.layout.annotations]
    assert titles == ["controlled shutdown", "failover: loading the state"]  # short enough for half the width
    assert "2.5 ×" in scale.layout.xaxis.title.text and scale.layout.xaxis2.title.text == "partitions in the cluster"
    axes = [scale.layout[k] for k in ("xaxis", "xaxis2", "yaxis", "yaxis2")] + [FIGURES["lab07 failover"].layout.xaxis]
    assert all(axis.type == "log" and axis.dtick == 1 for axis in axes)  # a label per decade only

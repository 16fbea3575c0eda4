"""Lab 07's panels: election through ZooKeeper, controlled shutdown and failover from 100 to 100k
partitions (Kafka 1.0 against 1.1+), and fencing a zombie controller and a bounced broker.

Every number comes from :mod:`kafka_lab.sim` (:mod:`~kafka_lab.sim.controller_scale`,
:mod:`~kafka_lab.sim.fencing`); this module only draws it.

- :func:`election_panel` -- brokers race for ``/controller``; crash the controller and watch the epoch grow.
- :func:`shutdown_figure` -- leadership moving off the broker over time, 1.0 against 1.1.
- :func:`scale_figure` -- shutdown and failover time against partitions, simulation and closed form.
- :func:`shutdown_panel` -- the live experiment: partitions on the broker (the lab's primary control).
- :func:`cluster_shutdown_html` -- the same shutdown in the cluster model, a busy broker, KIP-291 on and off.
- :func:`calibration_html` -- every parameter and its source, and the published figures beside the model's.
- :func:`failover_figure` / :func:`failover_panel` -- leaderless partitions over time after the controller dies.
- :func:`zombie_panel` -- the zombie controller with fencing on and off, and what everyone believes.
- :func:`restart_race_table` -- KIP-380's bounced broker, with and without the broker epoch.
"""

from __future__ import annotations

import functools
import html

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kafka_lab.sim import (
    broker_restart_race,
    controlled_shutdown,
    controller_election,
    controller_failover,
    default_costs,
    shutdown_in_cluster,
)
from kafka_lab.sim.controller_fencing import ZOMBIE_SESSION_TIMEOUT_MS, zombie_in_cluster
from kafka_lab.sim.last_isr import last_isr_run
from kafka_lab.sim.zk.controller_scale import (
    CALIBRATION,
    VERSIONS,
    calibration_table,
    controlled_shutdown_closed_form,
    failover_closed_form,
)

from . import GREY, INK, PALETTE, TEMPLATE, html_table, primary, primary_output, show_figure

__all__ = [
    "PARTITION_COUNTS",
    "SHUTDOWN_COUNTS",
    "ZOMBIE_CAUSE_LABELS",
    "ZOMBIE_RATE_PER_S",
    "calibration_html",
    "cluster_shutdown_html",
    "election_html",
    "election_panel",
    "failover_figure",
    "failover_panel",
    "restart_race_table",
    "scale_figure",
    "shutdown_figure",
    "shutdown_panel",
    "unclean_table",
    "zombie_html",
    "zombie_panel",
]

#: the partition counts the lab's curves and the failover slider use
PARTITION_COUNTS = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
#: the shutdown slider's: the curves' counts, and Exercise 2's 20,000 (the talk's broker, doubled)
SHUTDOWN_COUNTS = tuple(sorted({*PARTITION_COUNTS, 20_000}))
#: one colour per version, kept across figures
VERSION_COLOUR = {"1.0": PALETTE[3], "1.1": PALETTE[0], "2.8": PALETTE[2]}


def _fmt_s(s: float) -> str:
    if s >= 7200:
        return f"{s / 3600:.1f} h"
    if s >= 120:
        return f"{s / 60:.1f} min"
    return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"


# -- election ---------------------------------------------------------------------------------------------
def election_html(brokers: int = 3, crashes: int = 0, seed: int = 0, version: str = "2.8") -> str:
    r = controller_election(brokers=brokers, crashes=crashes, seed=seed, version=version)
    rounds = [
        [f"{t / 1000:.3f}", f"broker {c}", str(e)]
        for t, c, e in r.elections[["time_ms", "controller", "epoch"]].itertuples(index=False)
    ]
    zk = r.zookeeper
    ops = zk[zk["path"].str.contains("/controller") & (zk["time_ms"] > 0)]
    tries = [
        [f"{t / 1000:.4f}", f"broker {b}", html.escape(op), html.escape(p.replace(",", " + ")), html.escape(res)]
        for t, _s, b, op, p, res in ops.itertuples(index=False)
    ]
    return (
        "<b>Who won each round</b> (time in s; the epoch is /controller_epoch after the win)"
        + html_table(["time (s)", "controller", "epoch"], rounds, numeric=(0, 2))
        + "<b>Every ZooKeeper operation on /controller and /controller_epoch</b>, in the order ZooKeeper "
        + (
            "applied them (a Multi is create /controller + set /controller_epoch, all or nothing)"
            if version == "2.8"
            else "applied them (before 2.1: the create alone, then the winner bumps the epoch)"
        )
        + html_table(["time (s)", "from", "operation", "path", "ZooKeeper's answer"], tries, numeric=(0,))
    )


def election_panel(brokers: int = 3) -> widgets.VBox:
    """Brokers race for ``/controller``; the button crashes the current controller (its session then times out)."""
    n = widgets.IntSlider(value=brokers, min=2, max=6, description="brokers", continuous_update=False)
    version = widgets.ToggleButtons(  # wide enough for the longer label (the default width cut it)
        options=[("2.8: one multi", "2.8"), ("1.0: create, then the epoch", "1.0")],
        value="2.8",
        style={"button_width": "230px"},
    )
    crash = widgets.Button(description="crash the controller", button_style="warning")
    reset = widgets.Button(description="start again")
    out = widgets.HTML()
    state = {"crashes": 0}

    def redraw(_=None):
        state["crashes"] = min(state["crashes"], n.value - 1)
        out.value = election_html(n.value, state["crashes"], version=version.value)

    def on_crash(_):
        if state["crashes"] < n.value - 1:
            state["crashes"] += 1
        redraw()

    def on_reset(_):
        state["crashes"] = 0
        redraw()

    crash.on_click(on_crash)
    reset.on_click(on_reset)
    n.observe(redraw, names="value")
    version.observe(redraw, names="value")
    redraw()
    return widgets.VBox([n, version, widgets.HBox([crash, reset]), out])


# -- controlled shutdown -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=24)
def _shutdown(partitions: int, version: str, seed: int):
    """:func:`~kafka_lab.sim.controlled_shutdown`, once per setting: the panel's table and figure, and the scale
    figure, share the runs (at 100,000 partitions a run of the three versions costs about 0.2 s). Read-only."""
    return controlled_shutdown(partitions=partitions, version=version, seed=seed)


@functools.lru_cache(maxsize=24)
def _failover(partitions: int, version: str, seed: int):
    """:func:`~kafka_lab.sim.controller_failover`, once per setting: the failover panel's table and figure, and
    the scale figure, share the runs. Read-only."""
    return controller_failover(partitions=partitions, version=version, seed=seed)


def shutdown_figure(partitions: int = 10_000, seed: int = 0) -> go.Figure:
    """How many of the broker's led partitions have a new leader acting, over time: 1.0 and 1.1 side by side."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=[f"Kafka {v}" for v in ("1.0", "1.1")])
    for col, v in enumerate(("1.0", "1.1"), start=1):
        r = _shutdown(partitions, v, seed)
        curve = r.moved_over_time()
        fig.add_trace(
            go.Scatter(
                x=curve["time_s"],
                y=curve["moved"],
                name=f"{v}: leaders moved",
                mode="lines",
                line=dict(color=VERSION_COLOUR[v], width=3, shape="hv"),
            ),
            row=1,
            col=col,
        )
        fig.add_vline(x=r.duration_s, line=dict(color=INK, dash="dot"), row=1, col=col)
        if not r.broker["clean"]:
            stop = r.broker["stopped_ms"] / 1000
            fig.add_vline(x=stop, line=dict(color=GREY, dash="dash"), row=1, col=col)
            fig.add_annotation(
                x=stop,
                y=1,
                xref=f"x{col}" if col > 1 else "x",
                yref="paper",
                text=f"the broker gives up: unclean shutdown at {_fmt_s(stop)}",
                xanchor="left",
                xshift=4,
                yanchor="top",
                showarrow=False,
                bgcolor="rgba(255,255,255,0.9)",
            )
        fig.add_annotation(
            x=r.duration_s,
            y=0,
            xref=f"x{col}" if col > 1 else "x",
            yref=f"y{col}" if col > 1 else "y",
            text=f"reply after {_fmt_s(r.duration_s)}",
            xanchor="right",
            yanchor="bottom",
            showarrow=False,
            bgcolor="rgba(255,255,255,0.9)",
        )
        fig.update_xaxes(title_text="time since the ControlledShutdown request (s)", row=1, col=col)
    fig.update_yaxes(title_text="partitions with their new leader acting")
    fig.update_layout(
        title=f"Controlled shutdown of a broker with {partitions:,} partitions (half of them led)",
        template=TEMPLATE,
        height=400,
        margin=dict(l=60, r=20, t=80, b=50),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def scale_figure(counts=PARTITION_COUNTS, seed: int = 0) -> go.Figure:
    """Shutdown duration and failover load against partitions: simulation (markers), closed form (lines)."""
    counts = list(counts)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=["controlled shutdown", "failover: loading the state"],
    )
    xs = np.array(counts)
    for v in VERSIONS:
        sim_sd = [_shutdown(n, v, seed).duration_s for n in counts]
        sim_fo = [_failover(n, v, seed).load_s for n in counts]
        cf_sd = [controlled_shutdown_closed_form(partitions=n, version=v) for n in counts]
        cf_fo = [failover_closed_form(partitions=n, version=v) for n in counts]
        for col, sim, cf in ((1, sim_sd, cf_sd), (2, sim_fo, cf_fo)):
            c = VERSION_COLOUR[v]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=cf,
                    mode="lines",
                    name=f"{v} closed form",
                    line=dict(color=c, width=1.5, dash="dot"),
                    showlegend=col == 1,
                    legendgroup=v,
                ),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=sim,
                    mode="markers",
                    name=f"{v} simulation",
                    # 2.8 times like 1.1 here: an open marker so that both show
                    marker=dict(
                        color=c, size=13 if v == "2.8" else 9, symbol="circle-open" if v == "2.8" else "circle"
                    ),
                    showlegend=col == 1,
                    legendgroup=v,
                ),
                row=1,
                col=col,
            )
    talk = calibration_table(seed)
    for col, prefix in ((1, "controlled"), (2, "failover")):
        t = talk[talk["figure"].str.startswith(prefix)]
        fig.add_trace(
            go.Scatter(
                x=t["partitions"],
                y=t["talk_s"],
                mode="markers",
                name="published figures (the blog's, the talk's)",
                marker=dict(color=INK, symbol="star-open", size=16, line=dict(width=2)),
                showlegend=col == 1,
                text=[f"{v}: {s:g} s" for v, s in zip(t["version"], t["talk_s"], strict=True)],
                hovertemplate="%{text}<extra>published</extra>",
            ),
            row=1,
            col=col,
        )
    # a label per decade only: plotly's default labels the 2s and 5s between them too, a clutter of digits
    fig.update_xaxes(type="log", dtick=1)
    fig.update_xaxes(title_text="partitions on the broker (the cluster: 2.5 × as many)", row=1, col=1)
    fig.update_xaxes(title_text="partitions in the cluster", row=1, col=2)
    fig.update_yaxes(type="log", dtick=1, title_text="seconds (log scale)")
    fig.update_layout(
        title="From 100 to 100k partitions: the model against its closed form and the published figures",
        template=TEMPLATE,
        height=440,
        margin=dict(l=60, r=20, t=80, b=50),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def _shutdown_summary(partitions: int, seed: int = 0) -> str:
    rows = []
    for v in VERSIONS:
        r = _shutdown(partitions, v, seed)
        parts = "; ".join(f"{k.removesuffix('_s').replace('_', ' ')} {_fmt_s(s)}" for k, s in r.phases.items())
        b = r.broker
        if b["clean"]:
            broker = f"stops cleanly after {_fmt_s(b['stopped_ms'] / 1000)} ({b['attempts']} attempt(s))"
        else:
            broker = (
                f"gives up after {b['attempts']} attempts of request.timeout.ms: unclean shutdown at "
                f"{_fmt_s(b['stopped_ms'] / 1000)}, {r.left_leaderless:,} partitions without a leader until the "
                "controller reaches them"
            )
        rows.append([v, _fmt_s(r.duration_s), _fmt_s(r.closed_form_s), html.escape(parts), html.escape(broker)])
    return f"<b>{partitions:,} partitions on the broker</b>" + html_table(
        ["version", "ControlledShutdown → reply", "closed form", "where the time goes", "the broker"],
        rows,
        numeric=(1, 2),
    )


def _slider_value(partitions, options) -> int:
    """``partitions`` if the slider offers it; else a ValueError that lists what it offers."""
    if isinstance(partitions, bool) or partitions not in options:
        raise ValueError(
            f"partitions is one of the slider's values, {', '.join(f'{v:_}' for v in options)}; got {partitions!r}"
        )
    return partitions


def shutdown_panel(partitions: int = 10_000, seed: int = 0) -> widgets.VBox:
    """The live experiment: move the partitions on the broker (:data:`SHUTDOWN_COUNTS`); the table and the
    timelines follow."""
    partitions = _slider_value(partitions, SHUTDOWN_COUNTS)
    n = primary(
        widgets.SelectionSlider(
            options=list(SHUTDOWN_COUNTS),
            value=partitions,
            description="partitions on the broker",
            style={"description_width": "170px"},
            layout=widgets.Layout(width="560px"),
            continuous_update=False,
        )
    )
    summary = primary_output(widgets.HTML())
    fig = widgets.Output()

    def redraw(_=None):
        summary.value = _shutdown_summary(n.value, seed)
        show_figure(shutdown_figure(n.value, seed), fig)

    n.observe(redraw, names="value")
    redraw()
    return widgets.VBox([n, summary, fig])


def cluster_shutdown_html(versions=("1.0", "1.1"), partitions: int = 20, seed: int = 0) -> str:
    """Broker 3's shutdown in a three-broker cluster while 200 producers keep broker 2 busy: 1.0 (a round of
    requests per partition) and 1.1 (one batch), KIP-291's control plane off and on."""
    rows = []
    for version in versions:
        for cp in (False, True):
            r = shutdown_in_cluster(version=version, control_plane=cp, partitions=partitions, seed=seed)
            req = r.results.requests
            lai = req[(req["api"] == "LeaderAndIsr") & (req["broker_id"] == 2)]
            rows.append(
                [
                    version,
                    "CONTROLLER (its own plane)" if cp else "not set (the data plane)",
                    f"{len(lai)}",
                    f"{r.reply_ms:.1f}",
                    f"{r.leaders_moved_ms:.1f}",
                    f"{lai['requestQueueTime'].mean():.1f}",
                ]
            )
    return (
        f"<b>{partitions} partitions, broker 2 busy</b> (the control plane came with Kafka 2.2, KIP-291: "
        "beside 1.0 and 1.1 it is a what-if, their controllers with a later broker's control plane)"
    ) + html_table(
        [
            "Kafka",
            "control.plane.listener.name on the brokers",
            "LeaderAndIsr requests to broker 2",
            "controller's reply (ms)",
            "broker 2 leads all of broker 3's partitions (ms)",
            "LeaderAndIsr's requestQueueTime at broker 2 (mean, ms)",
        ],
        rows,
        numeric=(2, 3, 4, 5),
    )


def calibration_html(seed: int = 0) -> str:
    params = [
        [
            f"<code>{html.escape(p.name)}</code>",
            f"{p.value:g} {html.escape(p.unit)}",
            html.escape(p.role),
            html.escape(p.source),
        ]
        for p in CALIBRATION.values()
    ]
    for api in ("LeaderAndIsr", "UpdateMetadata", "StopReplica"):
        cm = default_costs()[api]
        params.append(
            [
                f"<code>{api}</code> handler time",
                f"{cm.base.mean_ms:g} ms + {cm.per_partition_ms:g} ms per partition",
                "model",
                "the broker model of lab 03 (kafka_lab.sim.apis.default_costs); the receiving broker's work",
            ]
        )
    t = calibration_table(seed)
    rows = [
        [
            html.escape(r.figure),
            r.version,
            f"{r.partitions:,}",
            f"{r.talk_s:g} s",
            f"{r.model_s:g} s",
            _signed_percent(r.error),
            html.escape(r.fixes),
        ]
        for r in t.itertuples(index=False)
    ]
    return (
        "<b>The published figures and the model's</b> (the Confluent blog's; the talk gives the same but for 1.0's "
        '6.5 minutes, which it calls "more than six minutes")'
        + html_table(
            ["figure", "version", "partitions", "published", "model", "error", "parameters this row fixed"],
            rows,
            numeric=(2, 3, 4, 5),
        )
        + "<b>Every number the model uses</b>"
        + html_table(["parameter", "value", "kind", "source"], params, numeric=(1,))
    )


def _signed_percent(x: float) -> str:
    """``+1.2%``; an error that rounds to zero shows as ``+0.0%``, never ``-0.0%``."""
    x = round(x, 3)
    return f"{(x if x != 0 else 0.0):+.1%}"


# -- failover -------------------------------------------------------------------------------------------------
def failover_figure(partitions: int = 100_000, seed: int = 0) -> go.Figure:
    """Leaderless partitions over time after the controller's broker crashes, per version (log time axis)."""
    fig = go.Figure()
    for v in VERSIONS:
        r = _failover(partitions, v, seed)
        curve = r.unavailable_over_time(400)
        fig.add_trace(
            go.Scatter(
                x=np.maximum(curve["time_s"], 0.1),
                y=curve["unavailable"],
                mode="lines",
                name=f"{v}: back after {_fmt_s(r.unavailable_s)}",
                line=dict(color=VERSION_COLOUR[v], width=3, shape="hv"),
            )
        )
    fig.update_layout(
        title=f"The controller's broker dies: its {partitions // 5:,} led partitions (of {partitions:,}) wait",
        template=TEMPLATE,
        xaxis=dict(type="log", dtick=1, title="time since the crash (s, log scale)"),  # a label per decade
        yaxis_title="partitions without a leader",
        height=400,
        margin=dict(l=60, r=20, t=60, b=50),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def _failover_table(partitions: int, seed: int = 0) -> str:
    rows = []
    for v in VERSIONS:
        r = _failover(partitions, v, seed)
        ph = r.phases
        rows.append(
            [
                v,
                _fmt_s(ph["session_expired_ms"] / 1000),
                f"{(ph['elected_ms'] - ph['session_expired_ms']):.1f} ms",
                _fmt_s(r.load_s),
                _fmt_s((ph["leaders_ms"] - ph["loaded_ms"]) / 1000),
                _fmt_s(r.unavailable_s),
            ]
        )
    return html_table(
        [
            "version",
            "session timeout",
            "election",
            "load the state",
            "elect the dead broker's leaders",
            "unavailable for",
        ],
        rows,
        numeric=(1, 2, 3, 4, 5),
    )


def failover_panel(partitions: int = 100_000, seed: int = 0) -> widgets.VBox:
    """Leaderless partitions after the controller's broker dies: move the partitions in the cluster
    (:data:`PARTITION_COUNTS`)."""
    partitions = _slider_value(partitions, PARTITION_COUNTS)
    n = widgets.SelectionSlider(
        options=list(PARTITION_COUNTS),
        value=partitions,
        description="partitions in the cluster",
        style={"description_width": "170px"},
        layout=widgets.Layout(width="560px"),
        continuous_update=False,
    )
    table = widgets.HTML()
    fig = widgets.Output()

    def redraw(_=None):
        table.value = _failover_table(n.value, seed)
        show_figure(failover_figure(n.value, seed), fig)

    n.observe(redraw, names="value")
    redraw()
    return widgets.VBox([n, table, fig])


# -- fencing --------------------------------------------------------------------------------------------------
def _frame_html(df: pd.DataFrame) -> str:
    return html_table(list(df.columns), [[html.escape(str(v)) for v in row] for row in df.itertuples(index=False)])


#: the zombie panel's two causes, as the talk tells them
ZOMBIE_CAUSE_LABELS = {
    "gc_pause": "a GC pause longer than the session timeout",
    "znode_deleted": "/controller deleted by hand (its session alive)",
}


#: the panel's producer rate: a third of ``zombie_in_cluster``'s default, so a 20 s pause answers in under 0.5 s CPU
ZOMBIE_RATE_PER_S = 200.0


def zombie_html(fencing: bool, pause_ms: float | None = None, seed: int = 1, cause: str = "gc_pause") -> str:
    """The zombie controller on the cluster (:func:`~kafka_lab.sim.controller_fencing.zombie_in_cluster`, producer
    at :data:`ZOMBIE_RATE_PER_S`, acks=1): the damage, what everyone believes, the old controller's requests and
    writes from its pause on, and what happened."""
    kw = {"pause_ms": pause_ms} if cause == "gc_pause" else {}
    r = zombie_in_cluster(fencing=fencing, seed=seed, cause=cause, rate_per_s=ZOMBIE_RATE_PER_S, **kw)
    start = r.events[r.events["event"].str.startswith("paused")]["time_ms"].iloc[0]
    req = r.requests[(r.requests["controller_epoch"] == 1) & (r.requests["time_ms"] > start)]
    late = req[["time_ms", "broker", "api", "controller_epoch", "error", "applied_stale"]]
    late = late.assign(time_ms=late["time_ms"].round(1))
    ev = r.events.assign(time_ms=r.events["time_ms"].round(1))
    dmg = "; ".join(f"{k.replace('_', ' ')}: {v:,}" for k, v in r.damage.items())
    colour = GREY if r.applied_stale == 0 else PALETTE[3]
    label = ZOMBIE_CAUSE_LABELS[cause]
    if cause == "gc_pause" and pause_ms is not None:  # the header follows the slider
        longer = "longer" if pause_ms > ZOMBIE_SESSION_TIMEOUT_MS else "no longer"
        label = f"a GC pause of {pause_ms / 1000:g} s, {longer} than the session timeout"
    return (
        f"<div style='border-left:4px solid {colour};padding:4px 10px'><b>{html.escape(label)}, "
        f"fencing {'on' if fencing else 'off'}: applied_stale = {r.applied_stale}</b> (of which ZooKeeper writes: "
        f"{r.stale_writes}). {html.escape(dmg)}</div>"
        "<b>What everyone believes afterwards</b> (each broker: its own role; its metadata cache's leader)"
        + _frame_html(r.beliefs)
        + "<b>The old controller's requests from then on</b>"
        + (_frame_html(late) if len(late) else "<p>none: it sent nothing after its pause</p>")
        + "<b>What happened</b>"
        + _frame_html(ev)
    )


def zombie_panel(seed: int = 1) -> widgets.VBox:
    cause = widgets.ToggleButtons(
        options=[(v, k) for k, v in ZOMBIE_CAUSE_LABELS.items()], value="gc_pause", style={"button_width": "340px"}
    )
    fencing = widgets.ToggleButtons(
        options=[("fencing on (2.1+)", True), ("fencing off", False)], value=True, style={"button_width": "340px"}
    )
    pause = widgets.IntSlider(
        value=8000,
        min=1000,
        max=20000,
        step=500,
        description="GC pause (ms)",
        style={"description_width": "120px"},
        layout=widgets.Layout(width="520px"),
        continuous_update=False,
    )
    out = widgets.HTML()

    def redraw(_=None):
        pause.disabled = cause.value != "gc_pause"
        out.value = zombie_html(fencing.value, float(pause.value), seed, cause.value)

    for w in (cause, fencing, pause):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox(
        [
            widgets.HTML(
                f"zookeeper.session.timeout.ms = {ZOMBIE_SESSION_TIMEOUT_MS} (the 2.2 default); a pause shorter "
                f"than that is harmless. The producer sends {ZOMBIE_RATE_PER_S:g} records/s with acks=1."
            ),
            cause,
            fencing,
            pause,
            out,
        ]
    )


def restart_race_table(seed: int = 1, restart_ms: float = 100, backlog_ms: float = 700) -> str:
    rows = []
    for be in (False, True):
        r = broker_restart_race(broker_epoch=be, seed=seed, restart_ms=restart_ms, backlog_ms=backlog_ms)
        stop = r.requests[r.requests["api"] == "StopReplica"]
        rows.append(
            [
                "with the broker epoch (2.2+)" if be else "without (before 2.2)",
                html.escape(", ".join(stop["error"])),
                html.escape(str(r.damage["orders-0 on broker 3"])),
                str(r.applied_stale),
                "yes" if r.events["event"].str.contains("bounced").any() else "no",
                "yes" if r.damage["broker 3 in the ISR of orders-0"] else "no",
            ]
        )
    return html_table(
        [
            "",
            "the old StopReplica, answered",
            "broker 3's replica of orders-0",
            "applied_stale",
            "controller saw the bounce",
            "broker 3 back in the ISR",
        ],
        rows,
        numeric=(3,),
    )


# -- every in-sync replica gone -------------------------------------------------------------------------------
def last_isr_table(seed: int = 0) -> str:
    """``orders-0`` loses both brokers, then each order of their return: when it has a leader again, and which."""
    rows = []
    for first in (3, 2):
        r = last_isr_run(first, seed)
        rows.append(
            [
                f"broker {first} ({_fmt_s(r.back_ms[first] / 1000)}), then {5 - first} "
                f"({_fmt_s(r.back_ms[5 - first] / 1000)})",
                f"{_fmt_s(r.offline_ms / 1000)}, ISR {r.isr_while_offline}",
                f"{', '.join(f'{t / 1000:.1f} s' for t in r.shutdown_failed_ms)} (controlled shutdown); "
                f"{', '.join(f'{t / 1000:.1f} s' for t in r.failed_ms)} (offline)",
                _fmt_s(r.online_ms / 1000),
                f"broker {r.leader}",
                html.escape(f"from {r.from_state}"),
                f"{(r.online_ms - r.offline_ms) / 1000:.1f} s",
                f"{r.only_on_last:,}",
                ", ".join(f"{n:,} {k}" for k, n in r.outcomes.items() if n),
            ]
        )
    return html_table(
        [
            "back first",
            "offline from (controller's ISR)",
            "elections tried and failed (ERROR)",
            "leader again at",
            "new leader",
            "state-change.log",
            "offline for",
            "records broker 3 lacks",
            "the producer's batches",
        ],
        rows,
        numeric=(7,),
    )


def unclean_table(seed: int = 0) -> str:
    """The same outage, broker 3 back first, with ``unclean.leader.election.enable`` false and true: when and
    whom the controller elects, and what the producer's acknowledged records became."""
    rows = []
    for unclean in (False, True):
        r = last_isr_run(3, seed, unclean)
        n = sum(r.outcomes.values())
        rows.append(
            [
                f"<code>{str(unclean).lower()}</code>",
                _fmt_s(r.online_ms / 1000),
                f"broker {r.leader}, ISR {r.isr_elected}" + (" (unclean)" if r.unclean_elections else ""),
                f"{(r.online_ms - r.offline_ms) / 1000:.1f} s",
                f"{r.truncated_records:,}",
                f"{n:,}: " + ", ".join(f"{k:,} {o}" for o, k in r.outcomes.items() if k),
            ]
        )
    return html_table(
        [
            "unclean.leader.election.enable",
            "leader again at",
            "new leader",
            "offline for",
            "records acknowledged, then lost",
            "the producer's batches",
        ],
        rows,
        numeric=(4,),
    )

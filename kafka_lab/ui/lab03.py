"""Lab 03's panels: the broker request path under load, with and without KIP-291's control plane.

Every number comes from :mod:`kafka_lab.sim` (the simpy model, checked against Erlang C, Little's
law and the KIP's arithmetic); this module only draws it.

- :func:`config_html` -- the broker properties and what listener resolution makes of them.
- :func:`metrics_figure` -- queue sizes and idle fractions over simulated time (Kafka's metric names).
- :func:`timeline_figure` -- each request's journey: a Gantt chart of the request-log phases.
- :func:`backlog_figure` -- the LeaderAndIsr's wait against the backlog, for the three designs.
- :func:`sweep_figure` -- a load sweep: where the data plane saturates.
- :func:`request_path_panel` -- the live experiment (produce rate first, then threads, queue, toggles).
- :func:`backlog_panel` -- KIP-291's scenario with a backlog slider, and the rejected alternative.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kafka_lab.listeners import ConfigException, resolve
from kafka_lab.sim.experiments import (
    DESIGNS,
    controller_behind_backlog,
    controller_wait_ms,
    lab_properties,
    load_sweep,
    steady_load,
)

from . import PALETTE, primary, primary_output, show_figure

__all__ = [
    "PHASES",
    "TIMINGS",
    "config_html",
    "show_config",
    "metrics_figure",
    "timeline_figure",
    "backlog_figure",
    "sweep",
    "sweep_figure",
    "request_path_panel",
    "backlog_panel",
    "leader_and_isr_summary",
]

#: the request-log phases, in the order a request lives them, and their colours
PHASES = {
    "socketWaitTime": ("in the socket (not in Kafka's log)", "#BAB0AC"),
    "requestQueueTime": ("requestQueueTime", PALETTE[1]),
    "localTime": ("localTime", PALETTE[0]),
    "remoteTime": ("remoteTime (purgatory)", PALETTE[5]),
    "responseQueueTime": ("responseQueueTime", PALETTE[4]),
    "sendTime": ("sendTime", PALETTE[2]),
}
_START = {
    "socketWaitTime": "sent_ms",
    "requestQueueTime": "start_ms",
    "localTime": "dequeue_ms",
    "remoteTime": "api_local_complete_ms",
    "responseQueueTime": "response_complete_ms",
    "sendTime": "response_dequeue_ms",
}

#: the columns the lab shows for one request
TIMINGS = [
    "api",
    "listener",
    "plane",
    "processor",
    "error",
    "sent_ms",
    "socketWaitTime",
    "requestQueueTime",
    "localTime",
    "remoteTime",
    "responseQueueTime",
    "sendTime",
    "totalTime",
]

_DESIGN_COLOUR = dict(zip([d[0] for d in DESIGNS], (PALETTE[3], PALETTE[1], PALETTE[2])))
#: the LeaderAndIsr's marker lines: a colour no trace uses
_MARKER = "#333333"


def _props_text(props: dict) -> str:
    return "\n".join(f"{k}={v}" for k, v in props.items())


def config_html(props: dict, client_listener: str = "PLAINTEXT") -> str:
    """The properties, and listener resolution's verdict: which plane serves which listener, who uses it."""
    text = f"<pre style='margin:0 0 4px 0'>{html.escape(_props_text(props))}</pre>"
    try:
        res = resolve({k: str(v) for k, v in props.items()})
    except ConfigException as exc:
        return text + f"<div style='color:#b3261e'><b>Kafka refuses to start:</b> {html.escape(str(exc))}</div>"
    cp = res.control_plane_listener
    threads = props.get("num.network.threads", 3)
    rows = []
    for e in res.listeners:
        name = e.listener_name
        # who uses it in this experiment: the producers on client_listener; the rest is listener resolution's
        users = ["producers"] if name == client_listener and res.plane(name) == "data" else []
        if name == res.inter_broker_listener_name:
            users.append("other brokers")
        if name == res.controller_to_broker_listener_name:
            users.append("the controller")
        plane = (
            "control (1 processor, queue of 20, 1 handler)"
            if res.plane(name) == "control"
            else f"data ({threads} processors)"
        )
        who = ", ".join(users) or "nobody in this experiment (bound but unused, like round 1 of the KIP's migration)"
        rows.append(f"<tr><td><code>{html.escape(str(e))}</code></td><td>{plane}</td><td>{who}</td></tr>")
    verdict = (
        f"control.plane.listener.name = <b>{cp.listener_name}</b>: a dedicated control plane"
        if cp is not None
        else "no control.plane.listener.name: controller requests share the data plane "
        f"(inter-broker listener <b>{res.inter_broker_listener_name}</b>)"
    )
    return (
        text + f"<div>{verdict}</div><table style='border-collapse:collapse'>"
        "<tr><th style='text-align:left'>listener</th><th style='text-align:left'>plane</th>"
        f"<th style='text-align:left'>used by</th></tr>{''.join(rows)}</table>"
    )


def show_config(props: dict):
    """Display :func:`config_html` in a notebook."""
    from IPython.display import HTML

    return HTML(config_html(props))


def leader_and_isr_summary(res) -> str:
    """One sentence: where the LeaderAndIsr went and how long it waited, phase by phase."""
    lai = res.requests[res.requests["api"] == "LeaderAndIsr"]
    if lai.empty:
        return "No LeaderAndIsr in this run."
    row = lai.iloc[0]
    if row["error"] == "IN_FLIGHT" and np.isnan(row["dequeue_ms"]):
        return (
            f"The LeaderAndIsr (sent at {row['sent_ms']:.1f} ms on {row['listener']}, {row['plane']} plane) "
            f"was still waiting when the run ended at {res.duration_ms:.0f} ms."
        )
    return (
        f"LeaderAndIsr on listener {row['listener']} ({row['plane']} plane, processor {row['processor']}): "
        f"waited {controller_wait_ms(row):.2f} ms before a handler took it "
        f"(in the socket {row['socketWaitTime']:.2f} ms + requestQueueTime {row['requestQueueTime']:.2f} ms), "
        f"then localTime {row['localTime']:.2f} ms."
    )


def metrics_figure(res, title: str = "") -> go.Figure:
    """RequestQueueSize (and the control plane's) and the *AvgIdlePercent metrics against simulated time."""
    m = res.metrics
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=(
            "request queues (kafka.network:type=RequestChannel)",
            "idle fraction (0..1) of the thread pools",
        ),
    )
    colours = iter(PALETTE)
    for name in ("RequestQueueSize", "ControlPlaneRequestQueueSize", "ResponseQueueSize"):
        if name in m:
            fig.add_trace(
                go.Scatter(x=m["time_ms"], y=m[name], name=name, line=dict(color=next(colours), shape="hv")), 1, 1
            )
    for name in (
        "RequestHandlerAvgIdlePercent",
        "NetworkProcessorAvgIdlePercent",
        "ControlPlaneRequestHandlerAvgIdlePercent",
    ):
        if name in m:
            fig.add_trace(go.Scatter(x=m["time_ms"], y=m[name], name=name, line=dict(color=next(colours))), 2, 1)
    lai = res.requests[res.requests["api"] == "LeaderAndIsr"]
    for _, row in lai.iterrows():
        marks = [(row["sent_ms"], "dot", "LeaderAndIsr sent", "left")]
        if not np.isnan(row["dequeue_ms"]):
            marks.append((row["dequeue_ms"], "solid", "taken", "right"))
        for x, dash, text, side in marks:  # the line in both panels, labelled once, beside its middle
            line = dict(color=_MARKER, dash=dash, width=1.5)
            fig.add_vline(
                x=x,
                line=line,
                row=1,
                col=1,
                annotation_position=side,
                annotation=dict(text=text, font_size=10, font_color=_MARKER, bgcolor="rgba(255,255,255,0.85)"),
            )
            fig.add_vline(x=x, line=line, row=2, col=1)
    if len(lai):  # legend entries for the two marker lines (vlines have none of their own)
        for name, dash in (("LeaderAndIsr sent", "dot"), ("LeaderAndIsr taken by a handler", "solid")):
            fig.add_trace(
                go.Scatter(
                    x=[None],
                    y=[None],
                    mode="lines",
                    name=name,
                    hoverinfo="skip",
                    line=dict(color=_MARKER, dash=dash, width=1.5),
                ),
                1,
                1,
            )
    queues = [n for n in ("RequestQueueSize", "ControlPlaneRequestQueueSize") if n in m]
    fig.update_yaxes(title_text=" / ".join(queues) + " (requests)", title_font_size=11, row=1, col=1)
    fig.update_yaxes(title_text="…AvgIdlePercent (0..1, 1 = idle)", title_font_size=11, range=[0, 1.05], row=2, col=1)
    fig.update_xaxes(title_text="simulated time (ms)", row=2, col=1)
    fig.update_layout(
        title=title,
        height=520,
        template="plotly_white",
        margin=dict(l=60, r=20, t=60, b=50),
        legend=dict(orientation="h", y=-0.18),
    )
    return fig


def _timeline_rows(res, around: float | None, n: int) -> pd.DataFrame:
    r = res.requests
    if around is None:
        lai = r[r["api"] == "LeaderAndIsr"]
        around = float(lai["sent_ms"].iloc[0]) if len(lai) else float(r["sent_ms"].median())
    idx = int(np.searchsorted(r["sent_ms"].to_numpy(), around))
    lo = max(0, idx - n // 2)
    rows = r.iloc[lo : lo + n]
    lai = r[r["api"] == "LeaderAndIsr"]
    return pd.concat([rows, lai]).drop_duplicates(subset=["client_id", "correlation_id"]).sort_values("sent_ms")


def timeline_figure(res, around: float | None = None, n: int = 30, title: str = "") -> go.Figure:
    """Each request's journey: one bar per request, one segment per request-log phase (a Gantt chart)."""
    rows = _timeline_rows(res, around, n)
    labels = [f"{a} {c}#{k}" for a, c, k in zip(rows["api"], rows["client_id"], rows["correlation_id"])]
    end = res.duration_ms
    fig = go.Figure()
    for phase, (name, colour) in PHASES.items():
        start = rows[_START[phase]].to_numpy()
        length = rows[phase].to_numpy()
        # a phase under way when the run ended is drawn up to the end
        open_ = ~np.isnan(start) & np.isnan(length)
        length = np.where(open_, end - start, length)
        ok = ~np.isnan(start) & (length > 0)
        if ok.any():
            fig.add_trace(
                go.Bar(
                    y=np.array(labels)[ok],
                    x=length[ok],
                    base=start[ok],
                    orientation="h",
                    name=name,
                    marker_color=colour,
                    hovertemplate=f"{name}: %{{x:.3f}} ms from %{{base:.3f}} ms<extra>%{{y}}</extra>",
                )
            )
    fig.update_layout(
        barmode="overlay",
        title=title or "Requests' journeys (request-log phases)",
        height=160 + 18 * len(rows),
        template="plotly_white",
        margin=dict(l=190, r=20, t=60, b=50),
        xaxis_title="simulated time (ms)",
        yaxis=dict(categoryorder="array", categoryarray=labels[::-1], type="category"),
        legend=dict(orientation="h", y=-0.12),
    )
    return fig


def backlog_figure(
    table: pd.DataFrame, *, queued_max_requests: int = 500, num_io_threads: int = 8, service_ms: float = 1.0
) -> go.Figure:
    fig = go.Figure()
    for label, _, _ in DESIGNS:
        t = table[table["design"] == label]
        fig.add_trace(
            go.Scatter(
                x=t["backlog"],
                y=t["wait_ms"],
                name=label,
                mode="lines+markers",
                line=dict(color=_DESIGN_COLOUR[label], width=5 if label == DESIGNS[0][0] else 2),
            )
        )
    xs = np.array(sorted(table["backlog"].unique()))
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=xs * service_ms / num_io_threads,
            name="backlog × service time / handlers",
            mode="lines",
            line=dict(color="#333", dash="dot", width=1.5),
        )
    )
    fig.add_vline(
        x=queued_max_requests,
        line=dict(color="#999", dash="dash"),
        annotation_text=f"queued.max.requests = {queued_max_requests}",
    )
    fig.update_layout(
        title="How long the LeaderAndIsr waits before a handler takes it",
        template="plotly_white",
        xaxis_title="Produce requests ahead of it (backlog)",
        yaxis_title="wait (ms)",
        height=420,
        margin=dict(l=60, r=20, t=60, b=50),
        legend=dict(orientation="h", y=-0.2),
    )
    return fig


def sweep(rates, *, progress: bool = True, **kw) -> pd.DataFrame:
    """:func:`kafka_lab.sim.experiments.load_sweep` with a tqdm progress bar."""
    if progress:
        from tqdm.auto import tqdm

        return load_sweep(rates, progress=lambda it: tqdm(it, desc="load sweep", unit="run"), **kw)
    return load_sweep(rates, **kw)


def _round_step(x: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is at least ``x``: a tick step people read easily."""
    if not x > 0:
        return 1.0
    power = 10.0 ** np.floor(np.log10(x))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= x * (1 - 1e-12))


def sweep_figure(table: pd.DataFrame, saturation_rate: float | None = None) -> go.Figure:
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(
            x=table["rate_per_s"],
            y=table["handler_utilisation"],
            name="handler utilisation (1 − RequestHandlerAvgIdlePercent)",
            line=dict(color=PALETTE[0]),
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=table["rate_per_s"],
            y=table["mean_requestQueueTime"],
            name="mean requestQueueTime (ms)",
            line=dict(color=PALETTE[1]),
        ),
        secondary_y=True,
    )
    fig.add_trace(
        go.Scatter(
            x=table["rate_per_s"],
            y=table["leader_and_isr_wait_ms"],
            name="the LeaderAndIsr's wait (ms)",
            mode="markers",
            marker=dict(color=PALETTE[3], size=9),
            cliponaxis=False,
        ),
        secondary_y=True,
    )  # not clipped: most waits sit on the axis' zero
    if saturation_rate:
        fig.add_vline(x=saturation_rate, line=dict(color="#999", dash="dash"), annotation_text="ρ = 1")
    # both axes from 0 with five round steps each, so their ticks share the grid lines
    top = 1.05
    wait_max = float(
        np.nanmax(table[["mean_requestQueueTime", "leader_and_isr_wait_ms"]].to_numpy(dtype=float), initial=0.0)
    )
    step = _round_step(wait_max / 5)
    fig.update_yaxes(title_text="utilisation", range=[0, top], tickmode="linear", tick0=0, dtick=0.2, secondary_y=False)
    fig.update_yaxes(
        title_text="wait (ms)",
        range=[0, top * 5 * step],
        tickmode="linear",
        tick0=0,
        dtick=step,
        showgrid=False,
        secondary_y=True,
    )
    fig.update_layout(
        title="Where the data plane saturates",
        xaxis_title="produce requests per second",
        template="plotly_white",
        height=400,
        margin=dict(l=60, r=60, t=60, b=50),
        legend=dict(orientation="h", y=-0.2),
    )
    return fig


def request_path_panel(rate: int = 6000, duration_ms: float = 600.0) -> widgets.VBox:
    """The live experiment: produce rate (primary), threads, queue, control plane and the rejected alternative."""
    style = {"description_width": "190px"}
    lay = widgets.Layout(width="520px")
    rate_w = primary(
        widgets.IntSlider(
            value=rate,
            min=500,
            max=12000,
            step=250,
            description="produce requests/s",
            style=style,
            layout=lay,
            continuous_update=False,
        )
    )
    io = widgets.IntSlider(
        value=8, min=1, max=16, description="num.io.threads", style=style, layout=lay, continuous_update=False
    )
    net = widgets.IntSlider(
        value=3, min=1, max=8, description="num.network.threads", style=style, layout=lay, continuous_update=False
    )
    queue = widgets.IntSlider(
        value=500,
        min=10,
        max=1000,
        step=10,
        description="queued.max.requests",
        style=style,
        layout=lay,
        continuous_update=False,
    )
    cp = widgets.ToggleButtons(
        options=[("not set", False), ("CONTROLLER", True)],
        value=False,
        description="control.plane.listener.name",
        style=style,
    )
    prio = widgets.Checkbox(
        value=False,
        description="rejected alternative: prioritise controller requests in the data queue",
        indent=False,
        layout=widgets.Layout(width="600px"),
    )
    config = widgets.HTML()
    summary = primary_output(widgets.HTML())
    figs, gantt = widgets.Output(), widgets.Output()

    def redraw(_=None):
        props = lab_properties(
            cp.value, num_io_threads=io.value, num_network_threads=net.value, queued_max_requests=queue.value
        )
        config.value = config_html(props)
        res = steady_load(
            rate_w.value,
            control_plane=cp.value,
            num_io_threads=io.value,
            num_network_threads=net.value,
            queued_max_requests=queue.value,
            prioritise=prio.value and not cp.value,
            duration_ms=duration_ms,
            controller_at_ms=0.75 * duration_ms,
        )
        util = 1 - res.time_average("RequestHandlerAvgIdlePercent")
        summary.value = (
            f"<div><b>{rate_w.value} produce requests/s</b> on {io.value} handlers, 1 ms each on average: "
            f"offered load ρ = {rate_w.value / (io.value * 1000):.2f}, measured handler utilisation "
            f"{util:.2f}, mean RequestQueueSize {res.time_average('RequestQueueSize'):.1f}.<br>"
            f"{html.escape(leader_and_isr_summary(res))}</div>"
        )
        show_figure(metrics_figure(res), figs)
        show_figure(timeline_figure(res, n=24), gantt)

    for w in (rate_w, io, net, queue, cp, prio):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([rate_w, io, net, queue, cp, prio, config, summary, figs, gantt])


def backlog_panel(backlog: int = 400) -> widgets.VBox:
    """KIP-291's scenario: the backlog ahead of the LeaderAndIsr (first slider) and the queue size.

    The lab's primary control is :func:`request_path_panel`'s rate slider; this panel's are not marked.
    """
    style = {"description_width": "190px"}
    lay = widgets.Layout(width="520px")
    b = widgets.IntSlider(
        value=backlog,
        min=0,
        max=2000,
        step=50,
        description="Produce backlog",
        style=style,
        layout=lay,
        continuous_update=False,
    )
    queue = widgets.IntSlider(
        value=500,
        min=20,
        max=1000,
        step=20,
        description="queued.max.requests",
        style=style,
        layout=lay,
        continuous_update=False,
    )
    out = widgets.HTML()
    gantt = widgets.Output()

    def redraw(_=None):
        rows = []
        for label, cp, prio in DESIGNS:
            res = controller_behind_backlog(b.value, control_plane=cp, prioritise=prio, queued_max_requests=queue.value)
            row = res.request("LeaderAndIsr")
            rows.append(
                f"<tr><td>{label}</td><td>{controller_wait_ms(row):.3f}</td><td>{row['socketWaitTime']:.3f}</td>"
                f"<td>{row['requestQueueTime']:.3f}</td></tr>"
            )
            if prio:
                fig = timeline_figure(res, around=0.0, n=16, title=f"{label}: the first requests and the LeaderAndIsr")
        out.value = (
            "<table><tr><th>design</th><th>wait (ms)</th><th>in the socket</th><th>requestQueueTime</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        show_figure(fig, gantt)

    b.observe(redraw, names="value")
    queue.observe(redraw, names="value")
    redraw()
    return widgets.VBox([b, queue, out, gantt])

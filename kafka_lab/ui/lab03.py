"""Lab 03's panels: the broker request path under load, with and without KIP-291's control plane.

Every number comes from :mod:`kafka_lab.sim` (the simpy model, checked against Erlang C, Little's
law and the KIP's arithmetic); this module only draws it.

- :func:`config_html` -- the broker properties and what listener resolution makes of them.
- :func:`metrics_figure` -- queue sizes and idle fractions over simulated time (Kafka's metric names).
- :func:`timeline_figure` -- each request's journey: a Gantt chart of the request-log phases.
- :func:`backlog_figure` -- the LeaderAndIsr's wait against the backlog, for the three designs.
- :func:`sweep_figure` -- a load sweep: where the data plane saturates.
- :func:`sweep_table`, :func:`backlog_wait_table` -- the sweep's and the backlog's tables, units in the headers.
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
from kafka_lab.sim.common.theory import mm_c_wait, saturation_rate
from kafka_lab.sim.experiments import (
    DESIGNS,
    controller_behind_backlog,
    lab_properties,
    load_sweep,
    steady_load,
    wait_for_handler_ms,
)
from kafka_lab.sim.network.request import IN_FLIGHT, PHASE_STARTS, TIMING_COLUMNS

from . import (
    GREY,
    INK,
    MUTED,
    PALETTE,
    TEMPLATE,
    html_table,
    legend_line,
    plain_figure,
    plural,
    primary,
    primary_output,
    release_runs,
    show_figure,
    vline,
)

__all__ = [
    "PHASES",
    "TIMINGS",
    "config_html",
    "show_config",
    "metrics_figure",
    "request_label",
    "timeline_figure",
    "backlog_figure",
    "sweep",
    "sweep_figure",
    "SWEEP_HEADERS",
    "sweep_table",
    "backlog_wait_table",
    "request_path_panel",
    "backlog_panel",
    "leader_and_isr_summary",
    "processor_idle_note",
]

#: the request-log phases (the model's PHASE_STARTS), in the order a request lives them, with their labels and colours
_LABELS = {"socketWaitTime": "in the socket (not in Kafka's log)", "remoteTime": "remoteTime (purgatory)"}
PHASES = {
    phase: (_LABELS.get(phase, phase), colour)
    for phase, colour in zip(
        PHASE_STARTS, (GREY, PALETTE[1], PALETTE[0], PALETTE[5], PALETTE[4], PALETTE[2]), strict=True
    )
}

#: the columns the lab shows for one request: who and when, then the request log's times (throttleTime is always 0)
TIMINGS = ["api", "listener", "plane", "processor", "error", "sent_ms"] + [
    c for c in TIMING_COLUMNS if c != "throttleTime"
]

_DESIGN_COLOUR = dict(zip([d[0] for d in DESIGNS], (PALETTE[3], PALETTE[1], PALETTE[2])))
#: the LeaderAndIsr's marker lines: a colour no trace uses
_MARKER = INK
#: theory's curves (dotted or dashed, never a measured series' colour)
_THEORY = MUTED


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
            else f"data ({plural(int(threads), 'processor')})"
        )
        who = ", ".join(users) or "nobody in this experiment (bound but unused, like round 1 of the KIP's migration)"
        rows.append([f"<code>{html.escape(str(e))}</code>", plane, html.escape(who)])
    verdict = (
        f"control.plane.listener.name = <b>{cp.listener_name}</b>: a dedicated control plane"
        if cp is not None
        else "no control.plane.listener.name: controller requests share the data plane "
        f"(inter-broker listener <b>{res.inter_broker_listener_name}</b>)"
    )
    return text + f"<div>{verdict}</div>" + html_table(["listener", "plane", "used by"], rows)


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
    if row["error"] == IN_FLIGHT and np.isnan(row["dequeue_ms"]):
        return (
            f"The LeaderAndIsr (sent at {row['sent_ms']:.1f} ms on {row['listener']}, {row['plane']} plane) "
            f"was still waiting when the run ended at {res.duration_ms:.0f} ms."
        )
    return (
        f"LeaderAndIsr on listener {row['listener']} ({row['plane']} plane, processor {row['processor']}): "
        f"waited {wait_for_handler_ms(row):.2f} ms before a handler took it "
        f"(in the socket {row['socketWaitTime']:.2f} ms + requestQueueTime {row['requestQueueTime']:.2f} ms), "
        f"then localTime {row['localTime']:.2f} ms."
    )


def processor_idle_note(res) -> str:
    """What ``NetworkProcessorAvgIdlePercent`` averages in this run, and why it can read high under overload.

    Kafka's gauge (``SocketServer``, 2.8) is the mean ``io-wait-ratio`` of *every* data-plane processor:
    ``num.network.threads`` per data-plane listener. Without ``control.plane.listener.name`` the
    CONTROLLER listener is one of them (round 1 of the migration); nobody sends it a request here, so
    its processors sit idle and hold the average up while the busy listener's processors are blocked.
    """
    data = res.broker.planes["data"]
    per_listener: dict[str, int] = {}
    for p in data.processors:
        per_listener[p.listener] = per_listener.get(p.listener, 0) + 1
    r = res.requests
    used = set(r.loc[r["plane"] == "data", "listener"])
    total = len(data.processors)
    parts = ", ".join(f"{k} on {name}" for name, k in per_listener.items())
    text = (
        f"NetworkProcessorAvgIdlePercent {res.time_average('NetworkProcessorAvgIdlePercent'):.2f} is the mean "
        f"over the data plane's {total} processor{'s' if total != 1 else ''} ({parts})."
    )
    unused = [name for name in per_listener if name not in used]
    if unused:
        k = sum(per_listener[name] for name in unused)
        text += (
            f" {' and '.join(unused)} {'carries' if len(unused) == 1 else 'carry'} no request in this run "
            f"(bound but unused, like round 1 of the migration), so {'its' if len(unused) == 1 else 'their'} "
            f"{k} processor{'s' if k != 1 else ''} sit idle and hold the average at {k / total:.2f} or more, "
            "even when every busy processor is blocked. Kafka averages over the same processors."
        )
    return text


def _subplot_title(text: str, y: float) -> dict:
    """A subplot's title above its panel (as ``make_subplots(subplot_titles=...)`` places it)."""
    return {
        "text": text,
        "font": {"size": 16},
        "showarrow": False,
        "x": 0.5,
        "xanchor": "center",
        "xref": "paper",
        "y": y,
        "yanchor": "bottom",
        "yref": "paper",
    }


def metrics_figure(res, title: str = "Broker metrics over simulated time, under Kafka's names") -> go.Figure:
    """RequestQueueSize (and the control plane's) and the *AvgIdlePercent metrics against simulated time.

    Two panels sharing the time axis: the request and response queues above, the pools' idle fractions below;
    the LeaderAndIsr's send and take marked in both."""
    m = res.metrics
    t = m["time_ms"].to_numpy()
    colours = iter(PALETTE)
    data = []
    for name in ("RequestQueueSize", "ControlPlaneRequestQueueSize", "ResponseQueueSize"):
        if name in m:
            line = {"color": next(colours), "shape": "hv"}
            data.append({"type": "scatter", "x": t, "y": m[name].to_numpy(), "name": name, "line": line})
    for name in (
        "RequestHandlerAvgIdlePercent",
        "NetworkProcessorAvgIdlePercent",
        "ControlPlaneRequestHandlerAvgIdlePercent",
    ):
        if name in m:
            line = {"color": next(colours)}
            data.append(
                {
                    "type": "scatter",
                    "x": t,
                    "y": m[name].to_numpy(),
                    "name": name,
                    "line": line,
                    "xaxis": "x2",
                    "yaxis": "y2",
                }
            )
    shapes = []
    annotations = [
        _subplot_title("request queues (kafka.network:type=RequestChannel)", 1.0),
        _subplot_title("idle fraction (0..1) of the thread pools", 0.46),
    ]
    lai = res.requests[res.requests["api"] == "LeaderAndIsr"]
    for sent, taken in zip(lai["sent_ms"], lai["dequeue_ms"]):
        marks = [(sent, "dot", "LeaderAndIsr sent", "right")]
        if not np.isnan(taken):
            marks.append((taken, "solid", "taken", "left"))
        for x, dash, text, anchor in marks:  # the line in both panels, labelled once, beside its middle
            shapes += [vline(x, _MARKER, axis=axis, dash=dash) for axis in ("", "2")]
            annotations.append(
                {
                    "text": text,
                    "font": {"size": 10, "color": _MARKER},
                    "bgcolor": "rgba(255,255,255,0.85)",
                    "showarrow": False,
                    "x": x,
                    "xanchor": anchor,
                    "xref": "x",
                    "y": 0.5,
                    "yanchor": "middle",
                    "yref": "y domain",
                }
            )
    if len(lai):  # legend entries for the two marker lines (shapes have none of their own)
        for name, dash in (("LeaderAndIsr sent", "dot"), ("LeaderAndIsr taken by a handler", "solid")):
            data.append(legend_line(name, _MARKER, dash))
    queues = [n for n in ("RequestQueueSize", "ControlPlaneRequestQueueSize") if n in m]
    small = {"size": 11}
    return plain_figure(
        data,
        {
            "title": {"text": title},
            "height": 520,
            "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
            "legend": {"orientation": "h", "y": -0.18},
            "xaxis": {"anchor": "y", "domain": [0.0, 1.0], "matches": "x2", "showticklabels": False},
            "yaxis": {
                "anchor": "x",
                "domain": [0.54, 1.0],
                "title": {"text": " / ".join(queues) + " (requests)", "font": small},
            },
            "xaxis2": {"anchor": "y2", "domain": [0.0, 1.0], "title": {"text": "simulated time (ms)"}},
            "yaxis2": {
                "anchor": "x2",
                "domain": [0.0, 0.46],
                "range": [0, 1.05],
                "title": {"text": "…AvgIdlePercent (0..1, 1 = idle)", "font": small},
            },
            "annotations": annotations,
            "shapes": shapes,
        },
    )


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


def request_label(api: str, client_id: str, correlation_id: int) -> str:
    """How a timeline names a request: its API, its client and ``#n``, the client's request number (Kafka's
    correlation id, counted from 0), e.g. ``Produce producer-1 request #17``. The number counts the client's
    requests, not its connections: a client spreads its requests over its connections in turn."""
    return f"{api} {client_id} request #{correlation_id}"


def timeline_figure(res, around: float | None = None, n: int = 30, title: str = "") -> go.Figure:
    """Each request's journey: one bar per request, one segment per request-log phase (a Gantt chart).

    A bar is labelled by :func:`request_label`; hovering a segment also shows the request's connection and
    the network processor that owns it."""
    rows = _timeline_rows(res, around, n)
    labels = [request_label(a, c, k) for a, c, k in zip(rows["api"], rows["client_id"], rows["correlation_id"])]
    where = np.column_stack([rows["connection_id"].astype(str), rows["processor"].astype(str)])
    end = res.duration_ms
    data = []
    for phase, (name, colour) in PHASES.items():
        start = rows[PHASE_STARTS[phase]].to_numpy()
        length = rows[phase].to_numpy()
        # a phase under way when the run ended is drawn up to the end
        open_ = ~np.isnan(start) & np.isnan(length)
        length = np.where(open_, end - start, length)
        ok = ~np.isnan(start) & (length > 0)
        if ok.any():
            data.append(
                {
                    "type": "bar",
                    "y": np.array(labels)[ok],
                    "x": length[ok],
                    "base": start[ok],
                    "orientation": "h",
                    "name": name,
                    "marker": {"color": colour},
                    "customdata": where[ok],
                    "hovertemplate": f"{name}: %{{x:.3f}} ms from %{{base:.3f}} ms<br>"
                    "connection %{customdata[0]} (network processor %{customdata[1]})<extra>%{y}</extra>",
                }
            )
    return plain_figure(
        data,
        {
            "barmode": "overlay",
            "title": {"text": title or "Requests' journeys (request-log phases)"},
            "height": 160 + 18 * len(rows),
            "margin": {"l": 190, "r": 20, "t": 60, "b": 50},
            "xaxis": {"title": {"text": "simulated time (ms)"}},
            "yaxis": {
                "categoryorder": "array",
                "categoryarray": labels[::-1],
                "type": "category",
                "title": {"text": "request: API, client, #n (the client's n-th request, from 0)"},
                "automargin": True,
            },
            "legend": {"orientation": "h", "y": -0.12},
        },
    )


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
            line=dict(color=INK, dash="dot", width=1.5),
        )
    )
    fig.add_vline(x=queued_max_requests, line=dict(color=GREY, dash="dash"))
    # the label beside its line, on a white ground, never across it
    fig.add_annotation(
        x=queued_max_requests,
        xanchor="left",
        xshift=4,
        y=1,
        yref="paper",
        yanchor="top",
        text=f"queued.max.requests = {queued_max_requests}",
        showarrow=False,
        bgcolor="rgba(255,255,255,0.9)",
        font=dict(size=11),
    )
    fig.update_layout(
        title="How long the LeaderAndIsr waits before a handler takes it",
        template=TEMPLATE,
        xaxis_title="Produce requests ahead of it (backlog, requests)",
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


def sweep_figure(table: pd.DataFrame, *, handlers: int, service_ms: float) -> go.Figure:
    """A load sweep (:func:`sweep`) against theory, in two panels over the produce rate.

    Top: measured handler utilisation against the offered load ρ = rate × ``service_ms`` / ``handlers``
    (capped at 1). Bottom, on a log scale: the mean requestQueueTime against Erlang C's curve for the
    same plane (drawn up to where it leaves the panel, below saturation), and the LeaderAndIsr's wait.
    """
    sat = saturation_rate(handlers, service_ms)
    x = table["rate_per_s"].to_numpy(dtype=float)
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.1,
        subplot_titles=(
            "Handler utilisation against the offered load ρ",
            "Time in the request queue: the model against Erlang C",
        ),
    )
    grid = np.linspace(0.0, max(x.max(), sat) * 1.02, 200)
    fig.add_trace(
        go.Scatter(
            x=grid,
            y=np.minimum(grid / sat, 1.0),
            name="ρ = rate × service time / handlers (capped at 1)",
            mode="lines",
            line=dict(color=_THEORY, dash="dot", width=1.5),
        ),
        1,
        1,
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=table["handler_utilisation"],
            name="measured handler utilisation (1 − RequestHandlerAvgIdlePercent)",
            mode="lines+markers",
            line=dict(color=PALETTE[0]),
        ),
        1,
        1,
    )
    waits = table[["mean_requestQueueTime", "erlang_c_wait_ms", "leader_and_isr_wait_ms"]].to_numpy(dtype=float)
    positive = waits[np.isfinite(waits) & (waits > 0)]
    lo = np.floor(np.log10(positive.min())) if positive.size else -3.0
    hi = np.ceil(np.log10(positive.max() * 1.5)) if positive.size else 3.0
    curve_x = np.linspace(max(grid[1], 1.0), sat, 400, endpoint=False)
    curve_y = np.array([mm_c_wait(handlers, r / 1000.0, 1.0 / service_ms) for r in curve_x])
    keep = (curve_y > 0) & (curve_y <= 10**hi)
    fig.add_trace(
        go.Scatter(
            x=curve_x[keep],
            y=curve_y[keep],
            name="Erlang C: mean wait of an M/M/c queue",
            mode="lines",
            line=dict(color=_THEORY, dash="dash", width=1.5),
        ),
        2,
        1,
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=table["mean_requestQueueTime"],
            name="measured mean requestQueueTime",
            mode="lines+markers",
            line=dict(color=PALETTE[1]),
        ),
        2,
        1,
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=table["leader_and_isr_wait_ms"],
            name="the LeaderAndIsr's wait",
            mode="markers",
            marker=dict(color=PALETTE[3], size=9, symbol="diamond"),
        ),
        2,
        1,
    )
    for row in (1, 2):
        fig.add_vline(x=sat, line=dict(color=GREY, dash="dash"), row=row, col=1)
    fig.add_annotation(
        x=sat,
        y=0.5,
        xref="x",
        yref="y",
        text=f" ρ = 1 ({sat:,.0f}/s) ",
        showarrow=False,
        xanchor="left",
        bgcolor="rgba(255,255,255,0.9)",
        font=dict(size=11),
    )
    fig.update_yaxes(title_text="utilisation (0..1)", range=[0, 1.05], dtick=0.2, row=1, col=1)
    fig.update_yaxes(title_text="wait (ms, log scale)", type="log", range=[lo, hi], exponentformat="none", row=2, col=1)
    fig.update_xaxes(title_text="produce requests per second", row=2, col=1)
    fig.update_layout(
        title=f"Where the data plane saturates ({handlers} handlers, {service_ms:g} ms per request)",
        template=TEMPLATE,
        height=620,
        margin=dict(l=70, r=20, t=80, b=50),
        legend=dict(orientation="h", y=-0.14),
    )
    return fig


#: :func:`sweep_table`'s headers for :func:`~kafka_lab.sim.experiments.load_sweep`'s columns, each with its unit
SWEEP_HEADERS = {
    "rate_per_s": "produce rate offered (requests/s)",
    "handler_utilisation": "handler utilisation (0..1)",
    "throughput_per_s": "throughput λ into the queue (requests/s)",
    "mean_requestQueueTime": "mean requestQueueTime W (ms)",
    "erlang_c_wait_ms": "Erlang C's mean wait (ms)",
    "mean_RequestQueueSize": "mean RequestQueueSize L (requests)",
    "leader_and_isr_wait_ms": "the LeaderAndIsr's wait (ms)",
}


def sweep_table(table: pd.DataFrame) -> pd.DataFrame:
    """A load sweep (:func:`sweep`) as the lab shows it: one row per offered rate, units in the headers
    (:data:`SWEEP_HEADERS`), rates and throughputs in whole requests per second, the rest to 3 decimals."""
    missing = [c for c in SWEEP_HEADERS if c not in table]
    if missing:
        raise ValueError(f"not a load sweep's table (kafka_lab.sim.experiments.load_sweep): no {missing}")
    t = table[list(SWEEP_HEADERS)].copy()
    for col in ("rate_per_s", "throughput_per_s"):
        t[col] = t[col].round().astype(np.int64)
    return t.round(3).rename(columns=SWEEP_HEADERS).set_index(SWEEP_HEADERS["rate_per_s"])


def backlog_wait_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`~kafka_lab.sim.experiments.backlog_table` as the lab shows it: the LeaderAndIsr's wait (ms) before a
    handler takes it, one row per backlog, one column per design (in the order of the figure's legend)."""
    t = table.pivot(index="backlog", columns="design", values="wait_ms")[[d[0] for d in DESIGNS]]
    t.index.name = "backlog (Produce requests ahead)"
    t.columns.name = "wait before a handler takes the LeaderAndIsr (ms)"
    return t


def request_path_panel(rate: int = 6000, duration_ms: float = 600.0, service_ms: float = 1.0) -> widgets.VBox:
    """The live experiment: produce rate (primary), threads, queue, control plane and the rejected alternative.

    Each Produce takes ``service_ms`` of a handler on average (exponential); the summary's offered load is
    ρ = rate / :func:`~kafka_lab.sim.common.theory.saturation_rate` of the handlers.
    """
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
            service_ms=service_ms,
            num_io_threads=io.value,
            num_network_threads=net.value,
            queued_max_requests=queue.value,
            prioritise=prio.value and not cp.value,
            duration_ms=duration_ms,
            controller_at_ms=0.75 * duration_ms,
        )
        util = 1 - res.time_average("RequestHandlerAvgIdlePercent")
        rho = rate_w.value / saturation_rate(io.value, service_ms)
        summary.value = (
            f"<div><b>{rate_w.value} produce requests/s</b> on {plural(io.value, 'handler')}, {service_ms:g} ms "
            f"each on average: offered load ρ = {rho:.2f}, measured handler utilisation "
            f"{util:.2f}, mean RequestQueueSize {res.time_average('RequestQueueSize'):.1f}.<br>"
            f"{html.escape(leader_and_isr_summary(res))}<br>"
            f"<span style='color:#555'>{html.escape(processor_idle_note(res))}</span></div>"
        )
        show_figure(metrics_figure(res), figs)
        show_figure(timeline_figure(res, n=24), gantt)
        del res
        release_runs()

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
                [
                    html.escape(label),
                    f"{wait_for_handler_ms(row):.3f}",
                    f"{row['socketWaitTime']:.3f}",
                    f"{row['requestQueueTime']:.3f}",
                ]
            )
            if prio:
                fig = timeline_figure(res, around=0.0, n=16, title=f"{label}: the first requests and the LeaderAndIsr")
        out.value = html_table(
            [
                "design",
                "waits before a handler takes it (ms)",
                "of which in the socket (ms)",
                "of which requestQueueTime (ms)",
            ],
            rows,
            numeric=(1, 2, 3),
        )
        show_figure(fig, gantt)
        del res, fig
        release_runs()

    b.observe(redraw, names="value")
    queue.observe(redraw, names="value")
    redraw()
    return widgets.VBox([b, queue, out, gantt])

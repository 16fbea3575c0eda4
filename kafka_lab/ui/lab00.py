"""Lab 00's warm-up panel: how many replicas a topic puts on a cluster, and how many broker losses it survives.

The model is :mod:`kafka_lab.replication` (budget, survival and Kafka's placement); this
module draws it: :func:`warmup_panel` and :func:`warmup_figure` (where the replicas go, and
what one partition survives).
"""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kafka_lab.replication import (
    KIP36_BROKERS,
    OFFLINE,
    READ_ONLY,
    WRITABLE,
    ReplicationBudget,
    partition_state,
    placement,
    replication_budget,
)

from . import BAD, GOOD, INK, PALETTE, PARTLY, TEMPLATE, primary, primary_output, show_figure

__all__ = ["survival_figure", "warmup_figure", "warmup_panel"]

_STATE_COLOUR = {WRITABLE: GOOD, READ_ONLY: PARTLY, OFFLINE: BAD}


def _summary_html(b: ReplicationBudget) -> str:
    if b.losses_writable < 0:
        writes = (
            f"<b>no</b> acks=all write ever succeeds: min.insync.replicas={b.min_insync_replicas} "
            f"is more than the {b.replication_factor} replicas a partition has"
        )
    else:
        writes = (
            f"acks=all producers keep writing through <b>{b.losses_writable}</b> lost "
            f"broker{'s' if b.losses_writable != 1 else ''} of a partition's replicas"
        )
    return (
        "<div style='font-size:14px;line-height:1.6'>"
        f"<b>{b.partitions}</b> partitions × replication factor <b>{b.replication_factor}</b> = "
        f"<b>{b.replicas}</b> replicas on {b.brokers} brokers: about "
        f"<b>{b.replicas_per_broker:.1f}</b> replicas and {b.leaders_per_broker:.1f} leaders per broker.<br>"
        f"With min.insync.replicas={b.min_insync_replicas}, {writes}; committed data survives "
        f"<b>{b.losses_readable}</b> lost broker{'s' if b.losses_readable != 1 else ''} "
        "(one replica left is enough to read it).</div>"
    )


def _survival_traces(replication_factor: int, min_insync_replicas: int) -> list[go.Bar]:
    traces = []
    lost = list(range(replication_factor + 1))
    for state, colour in _STATE_COLOUR.items():
        xs = [k for k in lost if partition_state(replication_factor, min_insync_replicas, k) == state]
        traces.append(
            go.Bar(
                x=xs,
                y=[replication_factor - k if k < replication_factor else 0.08 for k in xs],
                name=state,
                marker_color=colour,
                legendgroup="state",
                text=[f"{replication_factor - k} left" for k in xs],
                textposition="outside",
                hovertemplate="%{x} brokers lost: %{text}<extra>" + state + "</extra>",
            )
        )
    return traces


def survival_figure(replication_factor: int, min_insync_replicas: int) -> go.Figure:
    """Bars: a partition's replicas left after losing 0..RF of its brokers, coloured by what still works."""
    fig = go.Figure(_survival_traces(replication_factor, min_insync_replicas))
    fig.add_hline(
        y=min_insync_replicas,
        line_dash="dash",
        line_color=INK,
        annotation_text=f"min.insync.replicas = {min_insync_replicas}",
        annotation_position="top right",
        annotation_bgcolor="rgba(255,255,255,0.9)",
    )
    fig.update_layout(
        title=f"One partition with replication factor {replication_factor}: what survives losing its brokers",
        xaxis=dict(title="brokers lost (of this partition's replicas)", dtick=1),
        yaxis=dict(
            title="replicas left (in sync)", range=[0, max(replication_factor, min_insync_replicas) + 0.8], dtick=1
        ),
        barmode="overlay",
        height=380,
        margin=dict(l=60, r=20, t=60, b=50),
        legend=dict(orientation="h", y=-0.25),
        template=TEMPLATE,
    )
    return fig


def warmup_figure(
    partitions: int, replication_factor: int, min_insync_replicas: int, brokers: int = KIP36_BROKERS
) -> go.Figure:
    """Two panels: where the topic's replicas go (leaders and followers per broker, as Kafka places them),
    and what one partition survives (:func:`survival_figure`)."""
    per_broker = placement(partitions, replication_factor, brokers)
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.5, 0.5],
        horizontal_spacing=0.12,
        subplot_titles=(
            f"{partitions} partitions × RF {replication_factor} = "
            f"{partitions * replication_factor} replicas on {brokers} brokers",
            "One partition: what survives losing its brokers",
        ),
    )
    labels = [f"broker {i}" for i in per_broker.index]
    for role, colour in (("leaders", PALETTE[0]), ("followers", PALETTE[4])):
        fig.add_trace(
            go.Bar(
                x=labels,
                y=per_broker[role],
                name=f"{role} on a broker",
                marker_color=colour,
                legendgroup="placement",
                hovertemplate="%{x}: %{y} " + role + "<extra></extra>",
            ),
            1,
            1,
        )
    for trace in _survival_traces(replication_factor, min_insync_replicas):
        fig.add_trace(trace, 1, 2)
    fig.add_hline(y=min_insync_replicas, line_dash="dash", line_color=INK, row=1, col=2)
    fig.add_annotation(
        x=1.0,
        xref="x2 domain",
        xanchor="right",
        y=min_insync_replicas,
        yref="y2",
        yanchor="bottom",
        yshift=3,
        text=f"min.insync.replicas = {min_insync_replicas}",
        showarrow=False,
        bgcolor="rgba(255,255,255,0.9)",
        font=dict(size=11),
    )
    top = int(per_broker.sum(axis=1).max())
    fig.update_yaxes(title_text="replicas (leaders + followers)", range=[0, top * 1.15 + 0.5], row=1, col=1)
    fig.update_yaxes(
        title_text="replicas left (in sync)",
        dtick=1,
        range=[0, max(replication_factor, min_insync_replicas) + 0.8],
        row=1,
        col=2,
    )
    fig.update_xaxes(title_text="broker (Kafka's placement, no racks)", row=1, col=1)
    fig.update_xaxes(title_text="brokers lost (of this partition's replicas)", dtick=1, row=1, col=2)
    fig.update_layout(
        title=f"Replication factor {replication_factor}, min.insync.replicas {min_insync_replicas}: "
        "the bill and the insurance",
        barmode="stack",
        height=420,
        margin=dict(l=60, r=20, t=80, b=50),
        legend=dict(orientation="h", y=-0.28),
        template=TEMPLATE,
    )
    # the survival panel overlays its bars (one per loss count), the placement panel stacks them
    for trace in fig.data:
        if trace.legendgroup == "state":
            trace.offsetgroup = "state"
    return fig


def warmup_panel(
    partitions: int = 12, replication_factor: int = 3, min_insync_replicas: int = 2, brokers: int = KIP36_BROKERS
) -> widgets.VBox:
    """Partitions slider (the primary control), RF dropdown, min.insync.replicas slider; summary and figure."""
    style = {"description_width": "170px"}
    layout = widgets.Layout(width="480px")
    p = primary(
        widgets.IntSlider(
            value=partitions,
            min=1,
            max=60,
            description="partitions",
            style=style,
            layout=layout,
            continuous_update=False,
        )
    )
    rf = widgets.Dropdown(
        options=list(range(1, brokers + 1)),
        value=replication_factor,
        description="replication factor",
        style=style,
        layout=layout,
    )
    isr = widgets.IntSlider(
        value=min_insync_replicas,
        min=1,
        max=brokers,
        description="min.insync.replicas",
        style=style,
        layout=layout,
        continuous_update=False,
    )
    summary = primary_output(widgets.HTML())
    out = widgets.Output()

    def redraw(_=None):
        b = replication_budget(p.value, rf.value, isr.value, brokers)
        summary.value = _summary_html(b)
        show_figure(warmup_figure(p.value, rf.value, isr.value, brokers), out)

    for w in (p, rf, isr):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([p, rf, isr, summary, out])

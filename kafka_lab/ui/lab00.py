"""Lab 00's warm-up panel: how many replicas a topic puts on a cluster, and how many broker losses it survives.

The model is :mod:`kafka_lab.replication` (no widgets); this module draws it: :func:`warmup_panel`
and :func:`survival_figure`.
"""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go

from kafka_lab.replication import (
    KIP36_BROKERS,
    OFFLINE,
    READ_ONLY,
    WRITABLE,
    ReplicationBudget,
    partition_state,
    replication_budget,
)

from . import PALETTE, primary, primary_output, show_figure

__all__ = ["survival_figure", "warmup_panel"]

_STATE_COLOUR = {WRITABLE: PALETTE[2], READ_ONLY: PALETTE[1], OFFLINE: PALETTE[3]}


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


def survival_figure(replication_factor: int, min_insync_replicas: int) -> go.Figure:
    """Bars: a partition's replicas left after losing 0..RF of its brokers, coloured by what still works."""
    fig = go.Figure()
    lost = list(range(replication_factor + 1))
    for state, colour in _STATE_COLOUR.items():
        xs = [k for k in lost if partition_state(replication_factor, min_insync_replicas, k) == state]
        fig.add_bar(
            x=xs,
            y=[replication_factor - k if k < replication_factor else 0.08 for k in xs],
            name=state,
            marker_color=colour,
            text=[f"{replication_factor - k} left" for k in xs],
            textposition="outside",
            hovertemplate="%{x} brokers lost: %{text}<extra>" + state + "</extra>",
        )
    fig.add_hline(
        y=min_insync_replicas,
        line_dash="dash",
        line_color="#444",
        annotation_text=f"min.insync.replicas = {min_insync_replicas}",
        annotation_position="top right",
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
        template="plotly_white",
    )
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
    last_fig = {}

    def redraw(_=None):
        b = replication_budget(p.value, rf.value, isr.value, brokers)
        summary.value = _summary_html(b)
        key = (rf.value, isr.value)
        if last_fig.get("key") != key:  # the figure does not depend on the partition count
            last_fig["key"] = key
            show_figure(survival_figure(rf.value, isr.value), out)

    for w in (p, rf, isr):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([p, rf, isr, summary, out])

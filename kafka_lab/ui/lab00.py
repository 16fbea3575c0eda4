"""Lab 00's warm-up: how many replicas a topic puts on a cluster, and how many broker losses it survives.

A topic of ``P`` partitions with replication factor ``RF`` holds ``P × RF`` replicas: each partition has
one leader and ``RF − 1`` followers, each on a different broker. When brokers die, the controller
removes them from each partition's in-sync replica set (ISR) and, if the leader died, elects a new one
from the ISR. What still works then depends on how many of the partition's replicas are left:

* ``alive ≥ min.insync.replicas``: producers with ``acks=all`` (``acks=-1``) are accepted;
* ``1 ≤ alive < min.insync.replicas``: the partition still serves consumers and ``acks=0/1`` producers,
  but the leader refuses ``acks=all`` appends with ``NOT_ENOUGH_REPLICAS`` (Kafka 2.8,
  ``Partition.appendRecordsToLeader``);
* ``alive = 0``: the partition is offline (no replica left to lead it; unclean election is off by default).

So, counting a partition's worst case (the lost brokers are among its replicas), ``acks=all`` writes
survive ``RF − min.insync.replicas`` broker losses and committed data survives ``RF − 1``.
The model assumes every replica was in sync before the losses.

:func:`replication_budget` is the model (no widgets); :func:`warmup_panel` is the live panel.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import plotly.graph_objects as go

from . import PALETTE, primary, primary_output, show_figure

__all__ = ["ReplicationBudget", "replication_budget", "partition_state", "not_enough_replicas_message",
           "warmup_panel", "KIP36_BROKERS"]

#: KIP-36's worked example: 6 brokers (in 3 racks), 12 partitions, replication factor 3
KIP36_BROKERS = 6

WRITABLE = "acks=all writes accepted"
READ_ONLY = "acks=all rejected (NOT_ENOUGH_REPLICAS)"
OFFLINE = "offline: no replica left"
_STATE_COLOUR = {WRITABLE: PALETTE[2], READ_ONLY: PALETTE[1], OFFLINE: PALETTE[3]}


@dataclass(frozen=True)
class ReplicationBudget:
    """What a topic costs a cluster and what it survives (per partition, worst case)."""

    partitions: int
    replication_factor: int
    min_insync_replicas: int
    brokers: int
    replicas: int                   #: partitions × replication factor
    replicas_per_broker: float      #: on average over the brokers
    leaders_per_broker: float       #: on average: one leader per partition
    losses_writable: int            #: broker losses acks=all producers survive
    losses_readable: int            #: broker losses committed data survives


def replication_budget(partitions: int, replication_factor: int, min_insync_replicas: int = 1,
                       brokers: int = KIP36_BROKERS) -> ReplicationBudget:
    """Replica count and failure budget of a topic; Kafka's own errors for impossible topics."""
    for name, v in (("partitions", partitions), ("replication_factor", replication_factor),
                    ("min_insync_replicas", min_insync_replicas), ("brokers", brokers)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if partitions <= 0:
        raise ValueError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise ValueError("Replication factor must be larger than 0.")
    if replication_factor > brokers:
        raise ValueError(f"Replication factor: {replication_factor} larger than available brokers: {brokers}.")
    if min_insync_replicas < 1:
        raise ValueError(f"Invalid value {min_insync_replicas} for configuration min.insync.replicas: "
                         "Value must be at least 1")
    replicas = partitions * replication_factor
    return ReplicationBudget(
        partitions=partitions,
        replication_factor=replication_factor,
        min_insync_replicas=min_insync_replicas,
        brokers=brokers,
        replicas=replicas,
        replicas_per_broker=replicas / brokers,
        leaders_per_broker=partitions / brokers,
        # min.insync.replicas > RF is accepted by Kafka 2.8, but then no acks=all write ever succeeds
        losses_writable=max(replication_factor - min_insync_replicas, -1),
        losses_readable=replication_factor - 1,
    )


def partition_state(replication_factor: int, min_insync_replicas: int, lost: int) -> str:
    """What one partition still does after ``lost`` of its replicas' brokers died."""
    if not 0 <= lost <= replication_factor:
        raise ValueError(f"lost must be between 0 and {replication_factor}, not {lost}")
    alive = replication_factor - lost
    if alive == 0:
        return OFFLINE
    return WRITABLE if alive >= min_insync_replicas else READ_ONLY


def not_enough_replicas_message(isr: list[int], min_insync_replicas: int, topic: str, partition: int) -> str:
    """The leader's message when an acks=all append meets a too-small ISR (Kafka 2.8, Scala ``Set`` repr)."""
    return (f"The size of the current ISR Set({', '.join(map(str, isr))}) is insufficient to satisfy "
            f"the min.isr requirement of {min_insync_replicas} for partition {topic}-{partition}")


# ---------------------------------------------------------------------------------------------- the panel

def _summary_html(b: ReplicationBudget) -> str:
    if b.losses_writable < 0:
        writes = (f"<b>no</b> acks=all write ever succeeds: min.insync.replicas={b.min_insync_replicas} "
                  f"is more than the {b.replication_factor} replicas a partition has")
    else:
        writes = (f"acks=all producers keep writing through <b>{b.losses_writable}</b> lost "
                  f"broker{'s' if b.losses_writable != 1 else ''} of a partition's replicas")
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
        fig.add_bar(x=xs, y=[replication_factor - k if k < replication_factor else 0.08 for k in xs],
                    name=state, marker_color=colour,
                    text=[f"{replication_factor - k} left" for k in xs], textposition="outside",
                    hovertemplate="%{x} brokers lost: %{text}<extra>" + state + "</extra>")
    fig.add_hline(y=min_insync_replicas, line_dash="dash", line_color="#444",
                  annotation_text=f"min.insync.replicas = {min_insync_replicas}", annotation_position="top right")
    fig.update_layout(
        title=f"One partition with replication factor {replication_factor}: what survives losing its brokers",
        xaxis=dict(title="brokers lost (of this partition's replicas)", dtick=1),
        yaxis=dict(title="replicas left (in sync)", range=[0, max(replication_factor, min_insync_replicas) + 0.8],
                   dtick=1),
        barmode="overlay", height=380, margin=dict(l=60, r=20, t=60, b=50),
        legend=dict(orientation="h", y=-0.25), template="plotly_white",
    )
    return fig


def warmup_panel(partitions: int = 12, replication_factor: int = 3, min_insync_replicas: int = 2,
                 brokers: int = KIP36_BROKERS) -> widgets.VBox:
    """Partitions slider (the primary control), RF dropdown, min.insync.replicas slider; summary and figure."""
    style = {"description_width": "170px"}
    layout = widgets.Layout(width="480px")
    p = primary(widgets.IntSlider(value=partitions, min=1, max=60, description="partitions",
                                  style=style, layout=layout, continuous_update=False))
    rf = widgets.Dropdown(options=list(range(1, brokers + 1)), value=replication_factor,
                          description="replication factor", style=style, layout=layout)
    isr = widgets.IntSlider(value=min_insync_replicas, min=1, max=brokers, description="min.insync.replicas",
                            style=style, layout=layout, continuous_update=False)
    summary = primary_output(widgets.HTML())
    out = widgets.Output()
    last_fig = {}

    def redraw(_=None):
        b = replication_budget(p.value, rf.value, isr.value, brokers)
        summary.value = _summary_html(b)
        key = (rf.value, isr.value)
        if last_fig.get("key") != key:      # the figure does not depend on the partition count
            last_fig["key"] = key
            show_figure(survival_figure(rf.value, isr.value), out)

    for w in (p, rf, isr):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([p, rf, isr, summary, out])

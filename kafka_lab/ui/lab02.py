"""Lab 02's panels: KIP-36 replica assignment on a cluster you put in racks, and losing a rack.

Every number here comes from :mod:`kafka_lab.assignment` (Kafka-exact); this module only draws.
The notebook imports the model (KIP-36's clusters, the assignment, the tables) from there.

- :func:`assignment_figure` -- the broker x partition picture: a square per replica, coloured by the
  broker's rack, a star on the (preferred) leader; brokers grouped by rack.
- :func:`balance_figure` -- leaders and replicas per broker.
- :func:`rack_awareness_panel` -- the live experiment: put brokers in racks, pick partitions, replication
  factor and the start index, and watch the rack-alternated list, the assignment and the balance.
- :func:`rack_failure_panel` -- rack-aware and rack-unaware side by side, then fail a rack.
- :func:`failure_figure` -- the two assignments side by side after a rack fails.
- :func:`show_steps` -- the rack-alternated list, one pick at a time, coloured by rack.
- :func:`show_comparison` -- what a rack failure does to each assignment, in plain column names.

The model's tables keep their column names; what a learner reads is renamed here
(:data:`STEP_COLUMNS`, :data:`COMPARISON_COLUMNS`).
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from IPython.display import HTML, display
from plotly.subplots import make_subplots

from kafka_lab import assignment as asg
from kafka_lab.assignment import KIP36_RACKS

from . import BAD, GREY, INK, PALETTE, PARTLY, TEMPLATE, primary, primary_output, show_figure

__all__ = [
    "assignment_figure",
    "balance_figure",
    "kafka_says",
    "rack_awareness_panel",
    "failure_figure",
    "rack_failure_panel",
    "show_comparison",
    "show_steps",
]

NO_RACK = "(no rack)"


def _rack_colours(brokers) -> dict:
    racks = sorted({b.rack for b in brokers if b.rack is not None}, key=asg.java_string_key)
    colours = {r: PALETTE[i % len(PALETTE)] for i, r in enumerate(racks)}
    colours[None] = GREY
    return colours


def _broker_label(b) -> str:
    return f"broker {b.id} ({b.rack if b.rack is not None else 'no rack'})"


def _broker_order(brokers) -> list:
    """Brokers grouped by rack (Kafka's rack order), ids ascending: the picture's rows, top to bottom."""

    def key(b):
        return (b.rack is None, asg.java_string_key(b.rack or ""), b.id)

    return sorted(brokers, key=key)


def _grid_traces(assignment, brokers, failed=frozenset(), showlegend=True):
    colours = _rack_colours(brokers)
    by_id = {b.id: b for b in brokers}
    traces = []
    for role, symbol, size in (("follower", "square", 16), ("leader", "star", 19)):
        for rack, colour in colours.items():
            xs, ys, hover, alpha = [], [], [], []
            for p, reps in sorted(assignment.items()):
                for i, bid in enumerate(reps):
                    if (i == 0) != (role == "leader") or by_id[bid].rack != rack:
                        continue
                    xs.append(p)
                    ys.append(_broker_label(by_id[bid]))
                    alpha.append(0.22 if bid in failed else 1.0)
                    hover.append(
                        f"partition {p}: {'leader' if i == 0 else f'follower {i}'} on broker {bid}"
                        f" ({rack if rack is not None else 'no rack'}); replicas {reps}"
                        + (" — broker down" if bid in failed else "")
                    )
            if xs:
                name = (rack if rack is not None else "no rack") + (" leader" if role == "leader" else "")
                traces.append(
                    go.Scatter(
                        x=xs,
                        y=ys,
                        mode="markers",
                        name=name,
                        legendgroup=str(rack),
                        showlegend=showlegend,
                        marker=dict(
                            symbol=symbol, size=size, color=colour, opacity=alpha, line=dict(width=1, color=INK)
                        ),
                        hovertext=hover,
                        hoverinfo="text",
                    )
                )
    return traces


def assignment_figure(assignment, brokers, *, title: str = "", failed=()) -> go.Figure:
    """Broker x partition: a square per replica coloured by rack, a star on each partition's leader."""
    brokers = asg.as_brokers(brokers)
    failed = frozenset(failed)
    fig = go.Figure(_grid_traces(assignment, brokers, failed))
    rows = [_broker_label(b) for b in _broker_order(brokers)]
    parts = sorted(assignment)
    fig.update_layout(
        title=title or f"{len(parts)} partitions on {len(brokers)} brokers (★ = leader)",
        xaxis=dict(
            title="partition", dtick=1 if len(parts) <= 30 else None, range=[min(parts) - 0.7, max(parts) + 0.7]
        ),
        yaxis=dict(categoryorder="array", categoryarray=rows[::-1], type="category", title="broker (rack)"),
        height=120 + 34 * len(rows),
        margin=dict(l=150, r=20, t=60, b=50),
        template=TEMPLATE,
        legend=dict(orientation="h", y=-0.2),
    )
    return fig


def balance_figure(assignment, brokers, *, title: str = "") -> go.Figure:
    """Leaders and replicas per broker, brokers grouped by rack (the rack is in each broker's label)."""
    brokers = asg.as_brokers(brokers)
    bb = asg.broker_balance(assignment, brokers)
    order = [b.id for b in _broker_order(brokers)]
    bb = bb.loc[order]
    labels = [f"broker {i} ({r if r is not None else 'no rack'})" for i, r in zip(bb.index, bb["rack"])]
    fig = go.Figure(
        [
            go.Bar(
                x=labels,
                y=bb["replicas"],
                name="replicas (leaders and followers)",
                marker_color=PALETTE[4],
                text=bb["replicas"],
                textposition="outside",
            ),
            go.Bar(
                x=labels,
                y=bb["leaders"],
                name="leaders",
                marker_color=PALETTE[0],
                text=bb["leaders"],
                textposition="outside",
            ),
        ]
    )
    fig.update_layout(
        title=title or "Leaders and replicas per broker",
        barmode="group",
        height=360,
        template=TEMPLATE,
        margin=dict(l=60, r=20, t=60, b=40),
        xaxis=dict(title="broker (rack)"),
        yaxis=dict(
            title="replicas (count)",
            dtick=1 if bb["replicas"].max() <= 10 else None,
            range=[0, bb["replicas"].max() * 1.2 + 0.5],
        ),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


#: :func:`kafka_lab.assignment.rack_alternated_steps`'s columns as the lab shows them
STEP_COLUMNS = {"left in rack": "still to pick in its rack"}

#: :func:`kafka_lab.assignment.rack_failure_comparison`'s columns as the lab shows them
COMPARISON_COLUMNS = {
    "partitions": "partitions",
    "offline": "offline (no replica left)",
    "leader_lost": "lost their leader",
    "below_min_isr": "below min.insync.replicas",
    "writable (acks=all)": "still take acks=all writes",
    "min racks spanned": "fewest racks one partition spans",
}


def show_steps(brokers) -> HTML:
    """Show how Kafka builds the rack-alternated list: the racks, the picks in turn, and the table of
    :func:`kafka_lab.assignment.rack_alternated_steps` (one row per pick: whose turn it is, whom it gives,
    and which brokers of that rack are still waiting for a later turn)."""
    brokers = asg.as_brokers(brokers)
    return HTML(_steps_html(brokers) + asg.rack_alternated_steps(brokers).rename(columns=STEP_COLUMNS).to_html())


def show_comparison(racks, partitions: int, replication_factor: int, **kw) -> pd.DataFrame:
    """:func:`kafka_lab.assignment.rack_failure_comparison` (same arguments) with the lab's column names:
    'offline (no replica left)', 'lost their leader', 'below min.insync.replicas', 'still take acks=all
    writes', 'fewest racks one partition spans'."""
    return asg.rack_failure_comparison(racks, partitions, replication_factor, **kw).rename(columns=COMPARISON_COLUMNS)


def _steps_html(brokers) -> str:
    steps = asg.rack_alternated_steps(brokers)
    by_rack = asg.brokers_by_rack(brokers)
    colours = _rack_colours(brokers)
    head = " ".join(
        f"<span style='color:{colours[r]}'><b>{html.escape(r) or '&quot;&quot;'}</b>: {', '.join(map(str, ids))}</span>"
        for r, ids in by_rack.items()
    )
    picks = " → ".join(
        f"<span style='color:{colours[r]}'><b>{b}</b></span>" for b, r in zip(steps["broker"], steps["rack"])
    )
    return (
        f"<div style='line-height:1.7'>Racks in Java string order, brokers by id: {head}<br>"
        f"One broker from each rack in turn: {picks}</div>"
    )


def _summary_html(a, brokers, rf) -> str:
    bb = asg.broker_balance(a, brokers)
    pr = asg.partition_racks(a, brokers)
    n_racks = len({b.rack for b in brokers})
    lead, rep = bb["leaders"], bb["replicas"]
    spread = pr["racks spanned"].value_counts().sort_index()
    rb = asg.rack_balance(a, brokers)
    per_rack = "; ".join(
        f"{html.escape(r) or '&quot;&quot;'}: {int(row.leaders)} leaders, {int(row.replicas)} replicas"
        for r, row in rb.iterrows()
    )
    spread_txt = ", ".join(
        f"{c} partition{'s' if c != 1 else ''} on {k} rack{'s' if k != 1 else ''}" for k, c in spread.items()
    )
    return (
        "<div style='font-size:14px;line-height:1.6'>"
        f"Partition 0 → <b>{a[min(a)]}</b> (leader first). "
        f"Leaders per broker: {lead.min()}–{lead.max()}; replicas per broker: <b>{rep.min()}–{rep.max()}</b>"
        f"{' (even)' if rep.min() == rep.max() else ' (uneven)'}.<br>Per rack: {per_rack}.<br>"
        f"Rack spread ({n_racks} rack{'s' if n_racks != 1 else ''}, RF {rf}): {spread_txt}.</div>"
    )


def _error_html(exc: Exception) -> str:
    cls = type(exc).__name__
    return (
        f"<div style='color:#b3261e;font-size:14px'>Kafka refuses: <code>{html.escape(cls)}</code>: "
        f"{html.escape(str(exc))}</div>"
    )


def kafka_says(fn, *args, **kwargs):
    """Call ``fn``; if Kafka would refuse, return its exception as ``Class: message`` instead of a traceback."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        return f"{type(exc).__name__}: {exc}"


def rack_awareness_panel(
    racks: dict | None = None,
    partitions: int = 12,
    replication_factor: int = 3,
    start_index: int = 0,
    rack_names=("rack1", "rack2", "rack3", "rack4"),
) -> widgets.VBox:
    """Put each broker in a rack, then see Kafka's list, assignment and balance (partitions slider first)."""
    racks = dict(KIP36_RACKS if racks is None else racks)
    options = list(dict.fromkeys([*rack_names, *[r for r in racks.values() if r is not None]])) + [NO_RACK]
    style = {"description_width": "150px"}
    pickers = {
        bid: widgets.Dropdown(
            options=options,
            value=r if r is not None else NO_RACK,
            description=f"broker {bid}",
            layout=widgets.Layout(width="230px"),
        )
        for bid, r in racks.items()
    }
    p = primary(
        widgets.IntSlider(
            value=partitions,
            min=1,
            max=48,
            description="partitions",
            style=style,
            continuous_update=False,
            layout=widgets.Layout(width="460px"),
        )
    )
    rf = widgets.IntSlider(
        value=replication_factor,
        min=1,
        max=len(racks),
        description="replication factor",
        style=style,
        continuous_update=False,
        layout=widgets.Layout(width="460px"),
    )
    si = widgets.IntSlider(
        value=start_index,
        min=0,
        max=len(racks) - 1,
        style=style,
        continuous_update=False,
        description="fixedStartIndex",
        layout=widgets.Layout(width="460px"),
    )
    steps = widgets.HTML()
    summary = primary_output(widgets.HTML())
    grid, bars = widgets.Output(), widgets.Output()

    def redraw(_=None):
        brokers = [asg.BrokerMetadata(b, None if w.value == NO_RACK else w.value) for b, w in pickers.items()]
        try:
            steps.value = (
                _steps_html(brokers)
                if all(b.rack is not None for b in brokers)
                else "<div>Some broker has no rack: there is no rack-alternated list.</div>"
            )
            a = asg.assign_replicas_to_brokers(brokers, p.value, rf.value, si.value)
        except ValueError as exc:
            summary.value = _error_html(exc)
            with grid:
                grid.clear_output()
            with bars:
                bars.clear_output()
            return
        summary.value = _summary_html(a, brokers, rf.value)
        show_figure(assignment_figure(a, brokers), grid)
        show_figure(balance_figure(a, brokers), bars)

    for w in (*pickers.values(), p, rf, si):
        w.observe(redraw, names="value")
    redraw()
    rack_box = widgets.HBox(list(pickers.values()), layout=widgets.Layout(flex_flow="row wrap"))
    return widgets.VBox(
        [widgets.HTML("<b>Racks</b> (<code>broker.rack</code>)"), rack_box, p, rf, si, steps, summary, grid, bars]
    )


def failure_figure(racks, partitions, rf, failed_rack, min_isr, start_index=0) -> go.Figure:
    """Rack-aware and rack-unaware side by side after ``failed_rack`` fails: faded replicas, shaded partitions.

    ``failed_rack`` None: no rack down. Any string is a rack name (``""`` too, as Kafka's racks go), and one
    no broker is in is refused as :func:`~kafka_lab.assignment.failure_impact` refuses it."""
    brokers = asg.brokers_from_racks(racks)
    failed = {b.id for b in brokers if b.rack == failed_rack}
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.16,
        subplot_titles=("rack-aware (KIP-36)", "rack-unaware (--disable-rack-aware)"),
    )
    assignments = asg.rack_mode_assignments(brokers, partitions, rf, start_index=start_index)
    for col, a in enumerate(assignments.values(), start=1):
        for t in _grid_traces(a, brokers, failed, showlegend=col == 1):
            fig.add_trace(t, row=1, col=col)
        impact = asg.failure_impact(
            a, brokers, failed_racks=[] if failed_rack is None else [failed_rack], min_insync_replicas=min_isr
        )
        for p, row in impact.iterrows():
            if row["offline"] or row["below_min_isr"]:
                fig.add_vrect(
                    x0=p - 0.5,
                    x1=p + 0.5,
                    row=1,
                    col=col,
                    line_width=0,
                    opacity=0.25,
                    fillcolor=BAD if row["offline"] else PARTLY,
                )
    for name, colour in (("offline: no replica left", BAD), (f"below min.insync.replicas={min_isr}", PARTLY)):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=name,
                hoverinfo="skip",
                marker=dict(symbol="square", size=14, color=colour, opacity=0.4),
            ),
            row=1,
            col=1,
        )
    rows = [_broker_label(b) for b in _broker_order(brokers)]
    # both halves name their rows (shared axes hide the second half's labels by default)
    fig.update_yaxes(categoryorder="array", categoryarray=rows[::-1], type="category", showticklabels=True)
    fig.update_yaxes(title_text="broker (rack)", row=1, col=1)
    fig.update_xaxes(title="partition", dtick=1 if partitions <= 24 else None, range=[-0.7, partitions - 0.3])
    what = "no rack down" if failed_rack is None else (failed_rack or '""') + " down (its replicas faded)"
    fig.update_layout(
        title=f"{partitions} partitions, RF {rf}: {what}",
        height=160 + 34 * len(rows),
        template=TEMPLATE,
        margin=dict(l=150, r=20, t=80, b=50),
        legend=dict(orientation="h", y=-0.3),
    )
    return fig


def rack_failure_panel(
    racks: dict | None = None,
    partitions: int = 12,
    replication_factor: int = 2,
    failed_rack: str | None = "rack1",
    min_insync_replicas: int = 1,
    start_index: int = 0,
) -> widgets.VBox:
    """Rack-aware and rack-unaware side by side; choose a rack to fail and see what stays available."""
    racks = dict(KIP36_RACKS if racks is None else racks)
    rack_opts = list(asg.brokers_by_rack(racks))
    style = {"description_width": "150px"}
    lay = widgets.Layout(width="420px")
    fail = widgets.Dropdown(
        options=[("none", None)] + [(r, r) for r in rack_opts],
        value=failed_rack,
        description="rack that fails",
        style=style,
        layout=lay,
    )
    rf = widgets.IntSlider(
        value=replication_factor,
        min=1,
        max=len(racks),
        description="replication factor",
        style=style,
        continuous_update=False,
        layout=lay,
    )
    p = widgets.IntSlider(
        value=partitions, min=1, max=36, description="partitions", style=style, continuous_update=False, layout=lay
    )
    isr = widgets.IntSlider(
        value=min_insync_replicas,
        min=1,
        max=len(racks),
        description="min.insync.replicas",
        style=style,
        continuous_update=False,
        layout=lay,
    )
    table, fig_out = widgets.Output(), widgets.Output()

    def redraw(_=None):
        with table:
            table.clear_output(wait=True)
            display(
                show_comparison(
                    racks,
                    p.value,
                    rf.value,
                    failed_rack=fail.value,
                    min_insync_replicas=isr.value,
                    start_index=start_index,
                )
            )
        show_figure(failure_figure(racks, p.value, rf.value, fail.value, isr.value, start_index), fig_out)

    for w in (fail, rf, p, isr):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([fail, rf, p, isr, table, fig_out])

"""Lab 08's figures and panel: a cluster's logs, read with Spark.

The numbers come from :mod:`kafka_lab.spark.analyses` (Spark); this module only draws them.

- :func:`lines_table`: where every line read went (records, continuations, rejected), against the
  generator's own counts;
- :func:`queue_figure`: per second, a phase's p99 per API on one broker (the spikes, and the
  LeaderAndIsr that waits in them);
- :func:`blank_missing`: a table with its missing values shown blank (pandas writes ``<NA>``);
- :func:`sweep_table`: a sweep's summary with one column group per result (mean, min, max), to fit the page;
- :func:`waits_table`: the controller requests' queue waits, the percentiles under one heading, to fit the page;
- :func:`latency_panel`: the live experiment: pick a broker (primary) and a phase; the figure and a
  one-line summary redraw from Spark.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from kafka_lab.spark import analyses

from . import PALETTE, TEMPLATE, html_table, primary, primary_output, show_figure

__all__ = [
    "lines_table",
    "blank_missing",
    "sweep_table",
    "waits_table",
    "queue_figure",
    "latency_panel",
    "API_COLOURS",
    "API_LINES",
]

#: one colour per API, in every figure of the lab
API_COLOURS = {
    "PRODUCE": PALETTE[0],
    "FETCH": PALETTE[1],
    "METADATA": PALETTE[2],
    "UPDATE_METADATA": PALETTE[5],
    "LEADER_AND_ISR": PALETTE[3],  # drawn last: on top of an UpdateMetadata at the same point
}
#: the clients' APIs as lines, each its own dash and width, drawn in this order: PRODUCE last and widest, so that
#: a FETCH spike that follows it second by second (a follower fetches what was just produced) no longer hides it
API_LINES = {
    "METADATA": dict(dash="dot", width=2),
    "FETCH": dict(dash="dash", width=2),
    "PRODUCE": dict(dash="solid", width=3),
}


def lines_table(counts: dict, truth: dict | None = None) -> widgets.HTML:
    """Lines read, records, continuations, rejected (and the generator's counts beside them)."""
    keys = ("lines_read", "records", "continuations", "rejected")
    header = ["", "Spark read"] + (["the generator wrote"] if truth else [])
    rows = [[k.replace("_", " "), f"{counts[k]:,}"] + ([f"{truth[k]:,}"] if truth else []) for k in keys]
    total = counts["records"] + counts["continuations"] + counts["rejected"]
    rows.append(["records + continuations + rejected", f"{total:,}"] + ([""] if truth else []))
    return widgets.HTML(html_table(header, rows, numeric=(1, 2)))


def blank_missing(df: pd.DataFrame):
    """``df`` to display with an empty cell where a value is missing (an election has no target broker,
    a shutdown no epoch), times to the millisecond as log4j writes them, and without the row numbers;
    the data is unchanged (``.data``)."""
    times = {c: _millis for c in df.columns if pd.api.types.is_datetime64_any_dtype(df[c])}
    return df.style.format(times, na_rep="").hide(axis="index")


def sweep_table(summary: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """:func:`kafka_lab.spark.sweep.summarise`'s table for reading: the grid point as the row labels and,
    per result, its ``mean``, ``min`` and ``max`` under one heading (the flat ``lai_wait_ms_mean`` names
    made the table twice as wide as a notebook), rounded to ``digits``. The same numbers."""
    stats = ("mean", "min", "max")
    keys = [c for c in summary.columns if c != "replications" and not c.endswith(tuple(f"_{s}" for s in stats))]
    out = summary.set_index(keys)
    out.columns = pd.MultiIndex.from_tuples(
        [("", c) if c == "replications" else tuple(c.rsplit("_", 1)) for c in out.columns]
    )
    return out.round(digits)


def waits_table(waits: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """:func:`kafka_lab.spark.analyses.controller_request_waits`'s table for reading: broker, listener and API as
    the row labels and the ``requestQueueTimeMs`` statistics under one heading (``p50``, ``p99``, ``max``: the flat
    ``requestQueueTimeMs_p99`` names ran past the right edge of a notebook), rounded to ``digits``. The same
    numbers."""
    phase = "requestQueueTimeMs"
    out = waits.set_index(["broker", "listener", "api"])
    out.columns = pd.MultiIndex.from_tuples(
        [(phase, c.removeprefix(f"{phase}_")) if c.startswith(f"{phase}_") else ("", c) for c in out.columns]
    )
    return out.round(digits)


def _millis(t) -> str:
    return "" if pd.isna(t) else t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def queue_figure(per_second: pd.DataFrame, broker: int, phase: str = "requestQueueTimeMs") -> go.Figure:
    """Per second, the p99 of ``phase`` per API on ``broker`` (``per_second``: :func:`analyses.latency_over_time`)."""
    col = f"{phase}_p99"
    df = per_second[per_second["broker"] == broker]
    fig = go.Figure()
    order = [*API_LINES, *(a for a in API_COLOURS if a not in API_LINES)]  # lines first, PRODUCE last of them
    for api in order:
        colour = API_COLOURS[api]
        d = df[df["api"] == api]
        if d.empty:
            continue
        controller = api not in API_LINES
        fig.add_trace(
            go.Scatter(
                x=d["window_start"],
                y=d[col],
                name=api,
                legendrank=list(API_COLOURS).index(api),  # the legend keeps the lab's order
                mode="markers" if controller else "lines",
                marker=dict(color=colour, size=11 if controller else 4, symbol="diamond" if controller else "circle"),
                line=dict(color=colour, **API_LINES.get(api, {"width": 1.5})),
                hovertemplate=f"{api}<br>%{{x|%H:%M:%S}}<br>p99 {phase} %{{y:.2f}} ms<br>%{{customdata}} requests"
                "<extra></extra>",
                customdata=d["count"],
            )
        )
    fig.update_layout(
        template=TEMPLATE,
        title=f"Broker {broker}: p99 {phase} per second, per API (from its kafka-request.log)",
        xaxis_title="time (UTC, from the log's dates)",
        yaxis_title=f"p99 {phase} (ms)",
        height=380,
        margin=dict(l=60, r=20, t=50, b=50),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def latency_panel(requests, broker: int = 1, phase: str = "requestQueueTimeMs", per_second=None) -> widgets.VBox:
    """The live experiment on the parsed ``requests`` (a Spark DataFrame): broker (primary) and phase.

    ``per_second``: ``analyses.latency_over_time(requests, every="1 second", phase=phase)`` when the caller
    has it already (lab 08 has just plotted it), so that the panel does not ask Spark for it again."""
    cache: dict = {} if per_second is None else {phase: per_second}
    if per_second is None:
        brokers = [int(r[0]) for r in requests.select("broker").distinct().orderBy("broker").collect()]
    else:  # every request falls in some second: the same brokers
        brokers = sorted(int(b) for b in per_second["broker"].unique())
    pick = primary(widgets.Dropdown(options=[(f"broker {b}", b) for b in brokers], value=broker, description="broker"))
    phases = widgets.Dropdown(options=list(analyses.PHASES), value=phase, description="phase")
    note = widgets.HTML()
    out = widgets.Output()

    def per_second(p):
        if p not in cache:
            cache[p] = analyses.latency_over_time(requests, every="1 second", phase=p)
        return cache[p]

    def redraw(_=None):
        df = per_second(phases.value)
        col = f"{phases.value}_p99"
        mine = df[df["broker"] == pick.value]
        worst = mine.loc[mine[col].idxmax()] if not mine.empty else None
        lai = mine[mine["api"] == "LEADER_AND_ISR"]
        note.value = (
            f"<b>broker {pick.value}</b>: {int(mine['count'].sum()):,} requests in the log; the worst second's p99 "
            f"{html.escape(phases.value)} is <b>{worst[col]:.2f} ms</b> ({html.escape(str(worst['api']))} at "
            f"{worst['window_start']:%H:%M:%S}); its LeaderAndIsr requests' worst p99 is "
            f"<b>{(lai[col].max() if not lai.empty else float('nan')):.2f} ms</b>."
        )
        show_figure(queue_figure(df, pick.value, phases.value), out)

    pick.observe(redraw, names="value")
    phases.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([pick, phases]), primary_output(widgets.VBox([note, out]))])

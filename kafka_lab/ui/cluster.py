"""The drawing labs 04–06 share: a KIP-291 incident in a three-broker cluster, run by run.

Every number comes from :mod:`kafka_lab.sim.incidents` through :mod:`kafka_lab.incident_stats`; this
module only draws it. A *run* is one incident's :class:`~kafka_lab.sim.ClusterResults`; figures take
``{label: run}`` so that the same picture compares the control plane off and on (or half-way through
the migration). Colours: one per run, in the shared palette's colour-blind-safe order (blue, orange,
purple, teal), and a dash style as well, so that no figure relies on hue alone.

- :func:`setting_label`, :func:`compare` -- name a control-plane setting; run an incident under several.
- :func:`metric_figure` -- a broker metric over simulated time, one line per run, LeaderAndIsr marks.
- :func:`latency_figure` -- produce latency of each batch of the moved partition against when it was created.
- :func:`purgatory_figure` -- the two together (lab 04).
- :func:`leadership_figure` -- who acted as the partition's leader, when: two leaders or none.
- :func:`outcomes_figure` -- records per partition by outcome: committed, truncated, failed, pending (and offline,
  unwritten when a run has any).
- :func:`truncated_acks_figure` -- records acknowledged, then truncated, over time, and when they vanished.
- :func:`staleness_figure` -- how long each broker's metadata still named the old leader.
- :func:`wrong_leader_figure` -- the clients' sends to a wrong leader over time: refused, or acknowledged and lost.
- :func:`controller_table`, :func:`events_table`, :func:`stale_answers_table`, :func:`ledger_table`, :func:`summary_table`, :func:`summary_html` -- the tables and
  the one-paragraph verdict.
- :class:`IncidentControls` -- the live experiment's controls (load, acks, timeouts, min.insync.replicas,
  control plane per broker, the controller's broker; optionally when the leader moves), with a cache so that
  going back to a setting is instant.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kafka_lab.incident_stats import (
    cached_run,
    controller_requests,
    duplicate_summary,
    incident_summary,
    leadership,
    ledger_by_group,
    partition_ledger,
    slowest_produce,
    stale_answers,
    truncated_acks,
    wrong_leader_answers,
)

from . import BAD, GOOD, GREY, INK, PALETTE, legend_line, plain_figure, primary, primary_output, vline

__all__ = [
    "RUN_COLOURS",
    "OUTCOME_COLOURS",
    "PANEL_RUN",
    "setting_label",
    "compare",
    "metric_figure",
    "latency_figure",
    "purgatory_figure",
    "leadership_figure",
    "outcomes_figure",
    "truncated_acks_figure",
    "staleness_figure",
    "wrong_leader_figure",
    "controller_table",
    "events_table",
    "stale_answers_table",
    "ledger_table",
    "duplicates_table",
    "summary_table",
    "summary_html",
    "IncidentControls",
    "incident_panel",
]

#: one colour per run, in this order: blue, orange, purple, teal (told apart with deuteranopia and protanopia)
RUN_COLOURS = (PALETTE[0], PALETTE[1], PALETTE[5], PALETTE[4])
_DASHES = ("solid", "dash", "dot", "dashdot")
#: the ledger's outcomes: acknowledged and kept (green), kept on a disk with no leader (sky blue), acknowledged then
#: lost (vermillion), acks=0 never written (orange), an error (reddish purple), open (grey)
OUTCOME_COLOURS = {
    "committed": GOOD,
    "offline": PALETTE[4],
    "truncated": BAD,
    "unwritten": PALETTE[1],
    "failed": PALETTE[5],
    "pending": GREY,
}
#: the outcomes every ledger table and figure shows; the others only when a run has any (a partition with no
#: leader at the end, acks=0 batches no broker wrote): labs 04-06 have neither
_ALWAYS_SHOWN = ("committed", "truncated", "failed", "pending")


def _shown_outcomes(frames) -> list:
    """The ledger's outcomes to show for these per-partition ledgers, in the ledger's order."""
    return [o for o in OUTCOME_COLOURS if o in _ALWAYS_SHOWN or any(int(f[o].sum()) for f in frames)]


_MARK = INK
#: a live panel's run with several partitions: 5 partitions, 100 simulated ms (a control answers in well under 0.5 s)
PANEL_RUN = {"partitions": 5, "burst": 1, "rate_per_s": 20, "until_ms": 100.0}
#: when the incidents' controller moves orders-0 unless told (their ``decision_ms``): its LeaderAndIsr leaves 2 ms later
DECISION_MS = 2.0
#: what a table shows where a mean latency has no batch to average (none answered yet in a short run)
NO_ANSWER = "—"


def setting_label(control_plane) -> str:
    """``False`` → "no control plane"; ``True`` → "control plane on every broker"; ``{1: True}`` → "... on broker 1"."""
    if isinstance(control_plane, dict):
        on = sorted(b for b, v in control_plane.items() if v)
        if not on:
            return "no control plane"
        return f"control plane on broker{'s' if len(on) > 1 else ''} {', '.join(map(str, on))}"
    if not isinstance(control_plane, bool):
        raise TypeError(f"control_plane is a bool or {{broker_id: bool}}, got {control_plane!r}")
    return "control plane on every broker" if control_plane else "no control plane"


def compare(incident: Callable, settings=(False, True), **options) -> dict:
    """Run ``incident`` once per control-plane setting (same seed, same load): ``{setting_label: run}``."""
    return {setting_label(cp): cached_run(incident, control_plane=cp, **options) for cp in settings}


def _style(i: int) -> dict:
    return dict(color=RUN_COLOURS[i % len(RUN_COLOURS)], dash=_DASHES[i % len(_DASHES)])


#: how far below the plot area a figure's legend starts: clear of the x axis's tick labels and title (about 45 px)
LEGEND_GAP_PX = 66


def _figure(data: list, layout: dict) -> go.Figure:
    """A figure from plain specs, with the margins and legend of labs 04-06 (:func:`~kafka_lab.ui.plain_figure`).

    Every figure has a title, axis titles with units and a legend; the tests read them back. The legend is a row
    :data:`LEGEND_GAP_PX` below the plot area whatever the figure's height (a fraction of the plot's height put
    a short figure's legend on its axis title: the live panel's leadership bars, two rows high).
    """
    base = {
        "margin": {"l": 70, "r": 30, "t": 80, "b": 60},
        "legend": {"orientation": "h"},
    }
    merged = {**base, **layout}
    plot_px = merged.get("height", 450) - merged["margin"]["t"] - merged["margin"]["b"]
    merged["legend"] = {**merged["legend"], "y": -LEGEND_GAP_PX / plot_px, "yanchor": "top"}
    return plain_figure(data, merged)


def _title(text: str) -> dict:
    return {"text": text, "x": 0.01, "xanchor": "left"}


def _axis_title(text: str) -> dict:
    return {"title": {"text": text}}


def _lai_marks(runs: dict, broker_id: int, axis: str = "") -> tuple[list, list]:
    """Where broker ``broker_id`` applied its LeaderAndIsr, per run, in the run's colour: (shapes, legend traces)."""
    shapes, traces = [], []
    for i, (label, res) in enumerate(runs.items()):
        c = controller_requests(res)
        c = c[(c["broker_id"] == broker_id) & (c["api"] == "LeaderAndIsr")]
        if c.empty or np.isnan(c["applied_ms"].iloc[0]):
            continue
        x = float(c["applied_ms"].iloc[0])
        shapes.append(vline(x, _style(i)["color"], axis=axis))
        traces.append(
            legend_line(
                f"broker {broker_id} applies its LeaderAndIsr ({label}): {x:.1f} ms", _style(i)["color"], axis=axis
            )
        )
    return shapes, traces


def _x_range(runs: dict, x_max: float | None) -> list:
    end = max(r.duration_ms for r in runs.values())
    return [0, min(end, x_max) if x_max else end]


def _metric_traces(runs: dict, metric: str, broker_id: int, axis: str = "") -> list:
    out = []
    for i, (label, res) in enumerate(runs.items()):
        m = res.metrics[res.metrics["broker_id"] == broker_id]
        if metric not in m:
            raise ValueError(f"no metric {metric!r} in run {label!r}")
        out.append(
            {
                "type": "scatter",
                "x": m["time_ms"].to_numpy(),
                "y": m[metric].to_numpy(),
                "name": f"{metric} ({label})",
                "line": {**_style(i), "shape": "hv"},
                "xaxis": f"x{axis}",
                "yaxis": f"y{axis}",
            }
        )
    return out


def metric_figure(
    runs: dict, metric: str, broker_id: int, *, title: str = "", unit: str = "", x_max: float | None = None
) -> go.Figure:
    """``metric`` of broker ``broker_id`` against simulated time, one line per run."""
    shapes, marks = _lai_marks(runs, broker_id)
    return _figure(
        _metric_traces(runs, metric, broker_id) + marks,
        {
            "title": _title(title or f"Broker {broker_id}: {metric}"),
            "height": 400,
            "shapes": shapes,
            "xaxis": {**_axis_title("simulated time (ms)"), "range": _x_range(runs, x_max)},
            "yaxis": {**_axis_title(f"{metric}{f' ({unit})' if unit else ''}"), "rangemode": "tozero"},
        },
    )


def _latency_traces(runs: dict, partition: int) -> list:
    out = []
    for i, (label, res) in enumerate(runs.items()):
        lg = res.ledger[(res.ledger["partition"] == partition) & (res.ledger["outcome"] != "pending")]
        lost = lg["outcome"] == "truncated"
        for part, what, marker in (
            (
                lg[~lost],
                "answered",
                {
                    "color": _style(i)["color"],
                    "size": 5,
                    "opacity": 0.6,
                    "symbol": "circle" if i % 2 == 0 else "diamond",
                },
            ),
            (
                lg[lost],
                "acknowledged, then truncated",
                {
                    "color": OUTCOME_COLOURS["truncated"],
                    "size": 8,
                    "symbol": "x-thin",
                    "line": {"width": 2, "color": OUTCOME_COLOURS["truncated"]},
                },
            ),
        ):
            if part.empty and what != "answered":
                continue
            out.append(
                {
                    "type": "scattergl" if len(part) > 3000 else "scatter",
                    "mode": "markers",
                    "x": part["done_ms"].to_numpy(),
                    "y": part["latency_ms"].to_numpy(),
                    "name": f"a batch to orders-{partition}, {what} ({label}): {len(part)}",
                    "marker": marker,
                    "hovertemplate": "final answer at %{x:.1f} ms, %{y:.1f} ms after its first send<extra></extra>",
                }
            )
    return out


def latency_figure(runs: dict, partition: int = 0, *, title: str = "", x_max: float | None = None) -> go.Figure:
    """Each batch of ``orders-<partition>``: its latency (first send to final answer) against when it was answered."""
    return _figure(
        _latency_traces(runs, partition),
        {
            "title": _title(
                title or f"Latency of each batch to orders-{partition}, from the first send to the final answer"
            ),
            "height": 420,
            "xaxis": {**_axis_title("final answer at (simulated ms)"), "range": _x_range(runs, x_max)},
            "yaxis": {**_axis_title("latency (ms)"), "rangemode": "tozero"},
        },
    )


def _request_latency_traces(runs: dict, broker_id: int, axis: str = "") -> list:
    out = []
    for i, (label, res) in enumerate(runs.items()):
        r = res.requests
        r = r[(r["api"] == "Produce") & (r["broker_id"] == broker_id) & r["totalTime"].notna()]
        text = [f"remoteTime (purgatory) {rt:.1f} ms, {e}" for rt, e in zip(r["remoteTime"], r["error"])]
        slowest = slowest_produce(res, broker_id)["max_total_ms"]
        out.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": r["sent_ms"].to_numpy(),
                "y": r["totalTime"].to_numpy(),
                "text": text,
                "name": f"a Produce request to broker {broker_id}: its totalTime ({label})"
                + ("" if np.isnan(slowest) else f", the slowest {slowest:.1f} ms"),
                "marker": {
                    "color": _style(i)["color"],
                    "size": 5,
                    "opacity": 0.6,
                    "symbol": "circle" if i % 2 == 0 else "x",
                },
                "hovertemplate": "sent at %{x:.1f} ms: totalTime %{y:.1f} ms, %{text}<extra></extra>",
                "xaxis": f"x{axis}",
                "yaxis": f"y{axis}",
            }
        )
    return out


def _subplot_title(text: str, y: float) -> dict:
    return {
        "text": text,
        "x": 0.5,
        "xref": "paper",
        "xanchor": "center",
        "y": y,
        "yref": "paper",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 13},
    }


def purgatory_figure(runs: dict, broker_id: int = 1, *, x_max: float | None = 60.0) -> go.Figure:
    """Broker ``broker_id``'s ``PurgatorySize`` over time, and the latency (``totalTime``) of its Produce requests."""
    shapes, marks = _lai_marks(runs, broker_id)
    shapes2, _ = _lai_marks(runs, broker_id, axis="2")
    x_range = _x_range(runs, x_max)
    data = _metric_traces(runs, "PurgatorySize", broker_id) + marks + _request_latency_traces(runs, broker_id, axis="2")
    return _figure(
        data,
        {
            "title": _title(f"Broker {broker_id}: purgatory and produce latency"),
            "height": 680,
            "shapes": shapes + shapes2,
            "annotations": [
                _subplot_title(f"broker {broker_id}: PurgatorySize (delayedOperation=Produce), in watch entries", 1.0),
                _subplot_title(
                    f"each Produce request to broker {broker_id}: its totalTime (request log), by when it was sent",
                    0.42,
                ),
            ],
            "xaxis": {"anchor": "y", "matches": "x2", "range": x_range, "showticklabels": False},
            "yaxis": {"domain": [0.58, 1.0], **_axis_title("PurgatorySize (entries)"), "rangemode": "tozero"},
            "xaxis2": {"anchor": "y2", "range": x_range, **_axis_title("simulated time (ms)")},
            "yaxis2": {"domain": [0.0, 0.42], **_axis_title("totalTime (ms)"), "rangemode": "tozero"},
        },
    )


def leadership_figure(
    runs: dict, topic: str = "orders", partition: int = 0, *, x_max: float | None = 60.0, title: str = ""
) -> go.Figure:
    """One bar per run and broker while that broker acted as leader of the partition; the decision marked."""
    data, rows = [], []
    for i, (label, res) in enumerate(runs.items()):
        for _, r in leadership(res, topic, partition).iterrows():
            y = f"{label}: broker {r['broker_id']}"
            rows.append(y)
            data.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "y": [y],
                    "x": [r["end_ms"] - r["start_ms"]],
                    "base": [r["start_ms"]],
                    "name": f"{label}: broker {r['broker_id']} ({r['role']})",
                    "marker": {
                        "color": _style(i)["color"],
                        "pattern": {"shape": "" if r["role"] == "old leader" else "/"},
                    },
                    "hovertemplate": f"broker {r['broker_id']} acts as leader from %{{base:.2f}} ms<extra></extra>",
                }
            )
    shapes = []
    decided = [float(r.unavailability["decided_ms"].iloc[0]) for r in runs.values() if len(r.unavailability)]
    if decided:
        shapes.append(vline(decided[0], _MARK))
        data.append(legend_line(f"the controller sends its LeaderAndIsr ({decided[0]:g} ms)", _MARK))
    return _figure(
        data,
        {
            "title": _title(title or f"Who acts as leader of {topic}-{partition}"),
            "barmode": "overlay",
            "height": 200 + 45 * len(rows),
            "shapes": shapes,
            "margin": {"l": 330, "r": 30, "t": 80, "b": 60},
            "xaxis": {**_axis_title("simulated time (ms)"), "range": _x_range(runs, x_max)},
            "yaxis": {
                "categoryorder": "array",
                "categoryarray": rows[::-1],
                "type": "category",
                **_axis_title("run: broker"),
            },
        },
    )


def outcomes_figure(runs: dict, *, title: str = "") -> go.Figure:
    """Records per partition by outcome (stacked), one panel per run: where every record ended up."""
    n = len(runs)
    gap = 0.04
    width = (1 - gap * (n - 1)) / n
    data, layout, notes = [], {}, []
    pers = {label: partition_ledger(res) for label, res in runs.items()}
    shown = _shown_outcomes(pers.values())
    for c, (label, per) in enumerate(pers.items(), start=1):
        axis = "" if c == 1 else str(c)
        x = per["partition"].astype(str).to_numpy()
        for outcome in shown:
            colour = OUTCOME_COLOURS[outcome]
            data.append(
                {
                    "type": "bar",
                    "x": x,
                    "y": per[outcome].to_numpy(),
                    "name": outcome,
                    "marker": {"color": colour},
                    "legendgroup": outcome,
                    "showlegend": c == 1,
                    "hovertemplate": f"orders-%{{x}}: %{{y}} records {outcome}<extra>{label}</extra>",
                    "xaxis": f"x{axis}",
                    "yaxis": f"y{axis}",
                }
            )
        lo = (c - 1) * (width + gap)
        layout[f"xaxis{axis}"] = {
            "domain": [lo, lo + width],
            "anchor": f"y{axis}",
            "type": "category",
            **_axis_title("partition of orders"),
        }
        layout[f"yaxis{axis}"] = {
            "anchor": f"x{axis}",
            **_axis_title("records" if c == 1 else ""),
            **({"matches": "y", "showticklabels": False} if c > 1 else {}),
        }
        notes.append({**_subplot_title(label, 1.0), "x": lo + width / 2})
    return _figure(
        data,
        {
            "title": _title(title or "Where every record ended up, per partition"),
            "barmode": "stack",
            "height": 440,
            "annotations": notes,
            "legend": {"orientation": "h", "title": {"text": "outcome: "}},
            **layout,
        },
    )


def _to_the_end(x, y, end_ms: float) -> tuple:
    """A cumulative count as a step line from (0, 0) to the run's end: a run with nothing to count still draws
    a line along 0, not a lone point at the origin, and every line shows where it stays."""
    last = y[-1] if len(y) else 0
    return np.concatenate([[0.0], x, [end_ms]]), np.concatenate([[0], y, [last]])


def _lifted_range(data: list) -> list:
    """A y range from a little below 0 to a little above the highest count: a run that stays at 0 (nothing lost,
    nothing refused) draws its line above the x axis instead of hiding in it."""
    top = max(
        (float(np.max(t["y"])) for t in data if t.get("y") is not None and len(t["y"]) and t["y"][0] is not None),
        default=0.0,
    )
    top = max(top, 1.0)
    return [-0.04 * top, 1.06 * top]


def _took_over(res, topic: str = "orders", partition: int = 0):
    """``(new leader, when it applied its LeaderAndIsr)`` for the partition's move, or None (no move, or not yet)."""
    un = res.unavailability[(res.unavailability["topic"] == topic) & (res.unavailability["partition"] == partition)]
    if un.empty or np.isnan(un["new_leader_started_ms"].iloc[0]):
        return None
    return int(un["new_leader"].iloc[0]), float(un["new_leader_started_ms"].iloc[0])


def truncated_acks_figure(runs: dict, *, x_max: float | None = None, title: str = "") -> go.Figure:
    """Cumulative records acknowledged that are truncated later, by when they were acknowledged, per run.

    The dotted line is when the broker that acknowledged them truncated its log; the dashed one when the new
    leader took over (it applied its LeaderAndIsr: from then on nothing more of the old leader's is replicated),
    one line for every run when they agree.
    """
    data, shapes = [], []
    for i, (label, res) in enumerate(runs.items()):
        acks = truncated_acks(res)
        x, y = _to_the_end(acks["done_ms"].to_numpy(), np.cumsum(acks["records"].to_numpy()), res.duration_ms)
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": y,
                "line": {**_style(i), "shape": "hv"},
                "name": f"acknowledged, then truncated ({label}): {int(y[-1])} records",
            }
        )
        ev = res.events[res.events["event"] == "truncated"]
        ev = ev[ev["detail"].map(lambda d: d.get("removed_records", 0) > 0)]
        for _, e in ev.iterrows():
            shapes.append(vline(float(e["time_ms"]), _style(i)["color"]))
            data.append(
                legend_line(
                    f"broker {e['broker_id']} truncates orders-{e['partition']} ({label}): "
                    f"{e['detail']['removed_records']} records",
                    _style(i)["color"],
                )
            )
    took_over = {label: _took_over(res) for label, res in runs.items()}
    took_over = {label: t for label, t in took_over.items() if t is not None}
    if took_over and len({(t[0], round(t[1], 9)) for t in took_over.values()}) == 1:
        (new, at), n = next(iter(took_over.values())), len(took_over)
        shapes.append(vline(at, _MARK, dash="dash"))
        both = "" if n == 1 else (" (both runs)" if n == 2 else " (every run)")
        data.append(legend_line(f"broker {new} takes over orders-0{both}: {at:.1f} ms", _MARK, dash="dash"))
    else:
        for i, label in enumerate(runs):
            if label in took_over:
                new, at = took_over[label]
                shapes.append(vline(at, _style(i)["color"], dash="dash"))
                data.append(
                    legend_line(f"broker {new} takes over orders-0 ({label}): {at:.1f} ms", _style(i)["color"], "dash")
                )
    return _figure(
        data,
        {
            "title": _title(title or "Records acknowledged, then truncated"),
            "height": 420,
            "shapes": shapes,
            "xaxis": {**_axis_title("acknowledged at (simulated ms)"), "range": _x_range(runs, x_max)},
            "yaxis": {**_axis_title("records (cumulative)"), "range": _lifted_range(data)},
        },
    )


def staleness_figure(runs: dict, topic: str = "orders", partition: int = 0, *, title: str = "") -> go.Figure:
    """Per broker: how long its metadata cache still named the old leader after the controller decided."""
    data = []
    for i, (label, res) in enumerate(runs.items()):
        st = res.staleness[(res.staleness["topic"] == topic) & (res.staleness["partition"] == partition)]
        data.append(
            {
                "type": "bar",
                "x": [f"broker {b}" for b in st["broker_id"]],
                "y": st["stale_ms"].to_numpy(),
                "name": label,
                "text": [f"{v:.1f}" for v in st["stale_ms"]],
                "textposition": "outside",
                "cliponaxis": False,
                "marker": {"color": _style(i)["color"], "pattern": {"shape": "" if i % 2 == 0 else "/"}},
                "hovertemplate": "%{x}: stale for %{y:.2f} ms<extra></extra>",
            }
        )
    return _figure(
        data,
        {
            "title": _title(
                title or f"How long each broker's metadata still named the old leader of {topic}-{partition}"
            ),
            "barmode": "group",
            "height": 420,
            "xaxis": _axis_title("broker (its metadata cache)"),
            "yaxis": {**_axis_title("stale (ms)"), "rangemode": "tozero"},
        },
    )


def wrong_leader_figure(runs: dict, *, x_max: float | None = None, title: str = "") -> go.Figure:
    """The clients' sends to a wrong leader, cumulative over time: refused (solid) or acknowledged and lost (dotted)."""
    data = []
    for i, (label, res) in enumerate(runs.items()):
        colour = _style(i)["color"]
        refused = wrong_leader_answers(res)
        x, y = _to_the_end(refused["end_ms"].to_numpy(), np.arange(1, len(refused) + 1), res.duration_ms)
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": y,
                "line": {"color": colour, "shape": "hv"},
                "name": f"refused with NOT_LEADER_OR_FOLLOWER ({label}): {len(refused)}",
            }
        )
        lost = truncated_acks(res)
        x, y = _to_the_end(lost["done_ms"].to_numpy(), np.arange(1, len(lost) + 1), res.duration_ms)
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": y,
                "line": {"color": colour, "dash": "dot", "shape": "hv", "width": 3.5},
                "name": f"acknowledged by the old leader, then truncated ({label}): {len(lost)}",
            }
        )
    return _figure(
        data,
        {
            "title": _title(title or "The producers' sends to a broker that was no longer the leader"),
            "height": 440,
            "xaxis": {**_axis_title("answered at (simulated ms)"), "range": _x_range(runs, x_max)},
            "yaxis": {**_axis_title("sends (cumulative)"), "range": _lifted_range(data)},
        },
    )


def controller_table(runs: dict) -> pd.DataFrame:
    """Each broker's LeaderAndIsr and UpdateMetadata per run: plane, waited and applied (ms)."""
    parts = []
    for label, res in runs.items():
        c = controller_requests(res).assign(run=label)
        parts.append(c)
    t = pd.concat(parts, ignore_index=True)
    t = t.rename(
        columns={
            "broker_id": "broker",
            "waited_ms": "waited (ms)",
            "applied_ms": "applied at (ms)",
            "sent_ms": "sent at (ms)",
        }
    )
    cols = ["listener", "plane", "sent at (ms)", "waited (ms)", "applied at (ms)"]
    return t.set_index(["run", "broker", "api"])[cols].round(2)


def stale_answers_table(runs: dict, broker_id: int = 1) -> pd.DataFrame:
    """Per run: how many Metadata requests ``broker_id`` answered with the old leader, first and last (ms)."""
    rows = {}
    for label, res in runs.items():
        a = stale_answers(res, broker_id)["answered_ms"]
        rows[label] = pd.Series(
            {
                "Metadata answers naming the old leader": len(a),
                "first at (ms)": round(float(a.min()), 1) if len(a) else "—",
                "last at (ms)": round(float(a.max()), 1) if len(a) else "—",
            },
            dtype=object,
        )
    return pd.DataFrame(rows).T  # object columns: a count shows as 30, not 30.0


def events_table(runs: dict, kinds=("become_leader", "become_follower", "truncated")) -> pd.DataFrame:
    """Each broker's replication state changes per run (from ``events``), their details as columns."""
    rows = []
    for label, res in runs.items():
        ev = res.events[res.events["event"].isin(kinds)]
        for _, e in ev.iterrows():
            d = e["detail"]
            rows.append(
                {
                    "run": label,
                    "time (ms)": round(float(e["time_ms"]), 2),
                    "broker": int(e["broker_id"]),
                    "event": e["event"],
                    "partition": f"{e['topic']}-{e['partition']}",
                    "leader": d.get("leader", int(e["broker_id"]) if e["event"] == "become_leader" else ""),
                    "leader epoch": d.get("leader_epoch", ""),
                    "log end offset": d.get("leo", ""),
                    "truncated to offset": d.get("offset", ""),
                    "records removed": d.get("removed_records", ""),
                    "why": d.get("reason", ""),
                }
            )
    return pd.DataFrame(rows).set_index(["run", "time (ms)"])


def ledger_table(res, partition: int = 0, *, each: bool = False) -> pd.DataFrame:
    """The ledger: the moved partition, then the others together (``each=True``: one row per partition).

    Records by outcome, duplicates, the ``NOT_LEADER_OR_FOLLOWER`` answers and the mean latency of the
    batches answered (ms from the first send to the final answer).
    """
    if each:
        per = partition_ledger(res)
        per = pd.concat([per[per["partition"] == partition], per[per["partition"] != partition]])
        per.insert(0, "partitions", per.pop("topic") + "-" + per.pop("partition").astype(str))
    else:
        per = ledger_by_group(res, partition)
    shown = _shown_outcomes([per])
    per = per.rename(columns={"not_leader_answers": "NOT_LEADER_OR_FOLLOWER", "mean_latency_ms": "mean latency (ms)"})
    table = per.set_index("partitions")[
        [
            "records",
            *shown,
            "duplicates",
            "NOT_LEADER_OR_FOLLOWER",
            "mean latency (ms)",
        ]
    ].round(1)
    latency = table["mean latency (ms)"]
    if latency.isna().any():  # no batch of that row answered yet (a short run): say so, never "NaN"
        table["mean latency (ms)"] = pd.Series(
            [NO_ANSWER if np.isnan(v) else v for v in latency], latency.index, object
        )
    return table


def duplicates_table(runs: dict) -> pd.DataFrame:
    """What retries wrote twice in each run (:func:`~kafka_lab.incident_stats.duplicate_summary`), one column per run."""
    rows = {
        "records handed over": "records",
        "committed": "committed",
        "pending at the end": "pending",
        "batches sent more than once": "retried_batches",
        "batches in a leader's log twice": "duplicate_batches",
        "records in a leader's log twice": "duplicate_records",
    }
    cols = {}
    for label, res in runs.items():
        s = duplicate_summary(res)
        col = {name: s[key] for name, key in rows.items()}
        col["partitions holding them"] = ", ".join(s["duplicate_partitions"]) or "—"
        cols[label] = pd.Series(col, dtype=object)
    return pd.DataFrame(cols)


def summary_table(runs: dict, *, brokers=(1, 2, 3)) -> pd.DataFrame:
    """The headline numbers of each run (:func:`~kafka_lab.incident_stats.incident_summary`), one column per run."""
    cols = {}
    for label, res in runs.items():
        s = incident_summary(res)
        col = {f"broker {b}: LeaderAndIsr waited (ms)": round(s["lai_wait_ms"][b], 2) for b in brokers}
        col.update({f"broker {b}: peak PurgatorySize (watch entries)": int(s["peak_purgatory"][b]) for b in brokers})
        col.update({f"broker {b}: metadata stale (ms)": round(s["stale_ms"][b], 2) for b in brokers})
        col.update({f"broker {b}: stale Metadata answers": s["stale_answers"][b] for b in brokers})
        col.update(
            {
                "orders-0: two leaders (ms)": round(s["two_leaders_ms"], 2),
                "orders-0: no leader (ms)": round(s["unavailable_ms"], 2),
                "orders-0: records acknowledged, then truncated": s["truncated_records"],
                "orders-0: NOT_LEADER_OR_FOLLOWER answers": s["not_leader_answers"],
                "orders-0: time a refused send costs its batch (ms, mean)": round(s["per_refused_send_ms"], 1),
                "orders-0: mean batch latency (ms)": round(s["mean_latency_ms"], 1),
                "other partitions: mean batch latency (ms)": (
                    "—"
                    if np.isnan(s["other_mean_latency_ms"])  # one partition
                    else round(s["other_mean_latency_ms"], 1)
                ),
            }
        )
        # object: a count shows as 178, not 178.0; no batch answered yet (a short run) shows as —
        cols[label] = pd.Series(
            {k: "—" if isinstance(v, float) and np.isnan(v) else v for k, v in col.items()}, dtype=object
        )
    return pd.DataFrame(cols)


def _routes_sentence(s: dict) -> str:
    """Both sides of the control plane, as the run went: the listener the controller's config chose, and which
    brokers served it on their control plane (their own config) or their data plane."""
    routes = s["lai_route"]
    if not routes:
        return ""
    names = sorted({lst for lst, _ in routes.values()})
    by_plane = {p: [b for b, (_, q) in sorted(routes.items()) if q == p] for p in ("control", "data")}
    served = "; ".join(
        f"broker{'s' if len(bs) > 1 else ''} {', '.join(map(str, bs))} on {'its' if len(bs) == 1 else 'their'} {p} "
        "plane"
        for p, bs in by_plane.items()
        if bs
    )
    return (
        f"The controller (broker {s['controller']}) sent the LeaderAndIsr on {' and '.join(names)}, served by {served}."
    )


def _ms(value: float, missing: str) -> str:
    """``value`` in ms to 0.1, or ``missing`` (what is true instead) when the run has no such value (NaN)."""
    return missing if np.isnan(value) else f"{value:.1f} ms"


def summary_html(res, *, broker_id: int = 1, label: str = "") -> str:
    """One paragraph: the LeaderAndIsr's wait, purgatory, truncation, staleness, leaderless time, latency.

    A value the run does not have (a request still queued at its end, no batch answered yet) is said in words,
    never printed as ``nan``.
    """
    s = incident_summary(res)
    queued = "still queued when the run ended"
    waits = ", ".join(f"broker {b} {_ms(w, queued)}" for b, w in s["lai_wait_ms"].items())
    stale = ", ".join(
        f"broker {b} {_ms(v, 'still stale when the run ended')} ({s['stale_answers'][b]} answers)"
        for b, v in s["stale_ms"].items()
    )
    head = f"<b>{html.escape(label)}</b>: " if label else ""
    unanswered = np.isnan(s["mean_latency_ms"])
    others = (
        ""
        if np.isnan(s["other_mean_latency_ms"])  # one partition: there are no others
        else (
            f"; the other partitions' mean latency: {s['other_mean_latency_ms']:.1f} ms"
            if unanswered
            else f" (the other partitions: {s['other_mean_latency_ms']:.1f} ms)"
        )
    )
    latency = (
        "no orders-0 batch got its final answer in this run: each was still under way at its end, a refused "
        "send being retried retry.backoff.ms (100 ms) later"
        if unanswered
        else f"mean latency {s['mean_latency_ms']:.1f} ms"
    )
    peak = s["peak_purgatory"][broker_id]
    return (
        f"<div>{head}{_routes_sentence(s)} LeaderAndIsr waited: {waits}. Peak PurgatorySize on broker {broker_id}: "
        f"{'not sampled' if np.isnan(peak) else f'{peak:.0f}'}. orders-0: <b>{s['truncated_records']}</b> records "
        f"acknowledged then truncated, {s['not_leader_answers']} NOT_LEADER_OR_FOLLOWER answers, "
        f"{latency}{others}. Two leaders "
        f"for {s['two_leaders_ms']:.1f} ms, no leader for {s['unavailable_ms']:.1f} ms. Metadata stale (Metadata "
        f"requests answered meanwhile): {stale}.</div>"
    )


class IncidentControls:
    """The live experiment's controls, and a run per setting (cached: going back to a setting is instant).

    ``incident`` is one of :mod:`kafka_lab.sim.incidents`, or ``{label: incident}`` to choose among
    (a toggle); ``move_at``, ``{decision_ms: label}``, adds a choice of when the controller moves ``orders-0``
    (the incidents' ``decision_ms``, :data:`DECISION_MS` unless chosen); ``fixed`` are options the panel does
    not show (e.g. ``partitions``, ``until_ms``). The producers slider is the lab's primary control.
    """

    def __init__(
        self,
        incident,
        *,
        producers: int = 200,
        max_producers: int = 300,
        acks: str | None = None,
        request_timeout_ms: int = 30000,
        min_insync_replicas: int = 1,
        control_plane=False,
        move_at: dict | None = None,
        **fixed,
    ):
        style = {"description_width": "200px"}
        lay = widgets.Layout(width="560px")
        self.choice = None
        if isinstance(incident, dict):
            self.choice = widgets.ToggleButtons(
                options=list(incident.items()),
                description="the busy broker is",
                style={**style, "button_width": "220px"},
            )
        else:
            self.incident = incident
        self.fixed = fixed
        self.producers = primary(
            widgets.IntSlider(
                value=producers,
                min=25,
                max=max_producers,
                step=25,
                description="producers",
                style=style,
                layout=lay,
                continuous_update=False,
            )
        )
        self.acks = (
            None
            if acks is None
            else widgets.ToggleButtons(
                options=[("acks=1", 1), ("acks=all", -1)],
                value=-1 if acks == "all" else int(acks),
                description="acks",
                style=style,
            )
        )
        self.timeout = widgets.Dropdown(
            options=[("30000 (2.8's default)", 30000), ("1000", 1000), ("20", 20), ("10", 10)],
            value=request_timeout_ms,
            description="request.timeout.ms",
            style=style,
            layout=lay,
        )
        self.min_isr = widgets.Dropdown(
            options=[1, 2, 3], value=min_insync_replicas, description="min.insync.replicas", style=style, layout=lay
        )
        self.move = (
            None
            if move_at is None
            else widgets.Dropdown(
                options=[(text, float(ms)) for ms, text in move_at.items()],
                value=float(fixed.pop("decision_ms", DECISION_MS)),
                description="orders-0 moves at",
                style=style,
                layout=lay,
            )
        )
        self.controller = widgets.Dropdown(
            options=[(f"broker {b}", b) for b in (1, 2, 3)],
            value=int(fixed.pop("controller", 1)),
            description="the controller is on",
            style=style,
            layout=widgets.Layout(width="360px"),
        )
        cp = control_plane if isinstance(control_plane, dict) else dict.fromkeys((1, 2, 3), bool(control_plane))
        self.cp = {
            b: widgets.Checkbox(
                value=bool(cp.get(b, False)),
                description=f"broker {b}",
                indent=False,
                layout=widgets.Layout(width="110px"),
            )
            for b in (1, 2, 3)
        }

    @property
    def widgets(self) -> list:
        cp_row = widgets.HBox(
            [
                widgets.HTML(
                    "<code>control.plane.listener.name=CONTROLLER</code> on:&nbsp;",
                    layout=widgets.Layout(width="330px"),
                ),
                *self.cp.values(),
            ]
        )
        shown = (self.choice, self.producers, self.move, self.acks, self.timeout, self.min_isr)
        return [w for w in shown if w is not None] + [cp_row, self.controller]

    def observe(self, callback: Callable) -> None:
        for w in [
            self.choice,
            self.producers,
            self.move,
            self.acks,
            self.timeout,
            self.min_isr,
            *self.cp.values(),
            self.controller,
        ]:
            if w is not None:
                w.observe(callback, names="value")

    @property
    def control_plane(self) -> dict:
        return {b: w.value for b, w in self.cp.items()}

    def options(self) -> dict:
        opts = dict(
            producers=self.producers.value,
            request_timeout_ms=self.timeout.value,
            min_insync_replicas=self.min_isr.value,
            **self.fixed,
        )
        if self.controller.value != 1:  # the incidents' default: a run the lab's cells made is served from the cache
            opts["controller"] = self.controller.value
        if self.move is not None and self.move.value != DECISION_MS:  # the same: the default is not passed
            opts["decision_ms"] = self.move.value
        if self.acks is not None:
            opts["acks"] = self.acks.value
        return opts

    def run(self):
        """The incident under the current setting: ``(label, results)``."""
        cp = self.control_plane
        incident = self.choice.value if self.choice is not None else self.incident
        label = f"{setting_label(cp)}, the controller on broker {self.controller.value}"
        return label, cached_run(incident, control_plane=cp, **self.options())


def incident_panel(controls: IncidentControls, draw: Callable, *, note: str = "") -> widgets.VBox:
    """Controls, a summary (the primary output) and the figures ``draw({label: run})`` returns, redrawn live."""
    from IPython.display import display

    from . import show_figure

    summary = primary_output(widgets.HTML())
    out = widgets.Output()

    def redraw(_=None):
        label, res = controls.run()
        summary.value = summary_html(res, label=label)
        with out:
            out.clear_output(wait=True)
            for item in draw({label: res}):
                if isinstance(item, go.Figure):
                    show_figure(item)
                else:
                    display(item)

    controls.observe(redraw)
    redraw()
    head = [widgets.HTML(note)] if note else []
    return widgets.VBox([*head, *controls.widgets, summary, out])

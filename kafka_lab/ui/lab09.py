"""Lab 09's tables and panels: the controller after ZooKeeper (Kafka 4.0 in KRaft mode), beside labs 04-07.

Every number comes from :mod:`kafka_lab.sim` (the KRaft cluster of ``Cluster(..., mode="kraft")``,
:func:`~kafka_lab.sim.kraft_failover`, :func:`~kafka_lab.sim.kraft_controlled_shutdown`,
:func:`~kafka_lab.sim.broker_fencing`, and lab 07's ZooKeeper-mode functions at the same sizes); this module
only arranges and draws it.

- :func:`metadata_log_frame` / :func:`metadata_log_panel` -- ``__cluster_metadata`` as a table the learner filters.
- :func:`failover_table` -- the active controller crashes, 100 to 100k partitions, against lab 07's failover.
- :func:`shutdown_table` -- a controlled shutdown, 1k to 100k partitions, against 1.0 and 1.1;
  :func:`shutdown_seeds` -- the same shutdown over 20 seeds (heartbeats set its pace: 2 s or 4 s).
- :func:`mode_runs` / :func:`modes_table` -- one incident of labs 04-06 in ZooKeeper mode (without and with the
  control plane) and in KRaft, same seed and load.
- :func:`commit_path` -- where the time goes between the controller's decision and a broker acting on it.
- :func:`incidents_panel` -- the live experiment: incident, load and control plane (ZooKeeper or KRaft).
- :func:`fencing_html` / :func:`fencing_figure` / :func:`fencing_panel` -- a broker paused or crashed, fenced.
"""

from __future__ import annotations

import functools
import html
import json

import ipywidgets as widgets
import numpy as np
import pandas as pd

from kafka_lab.incident_stats import cached_run
from kafka_lab.sim import (
    broker_fencing,
    controlled_shutdown,
    controller_failover,
    kraft_controlled_shutdown,
    kraft_failover,
    purgatory_incident,
    stale_metadata_incident,
    truncation_incident,
)
from kafka_lab.sim.kraft.config import KRaftConfig

from . import GREY, INK, PALETTE, html_table, plain_figure, primary, primary_output, release_runs, show_figure, vline

__all__ = [
    "FAILOVER_SIZES",
    "SHUTDOWN_SIZES",
    "MODES",
    "PANEL_RUN",
    "INCIDENTS",
    "commit_path",
    "failover_table",
    "fencing_figure",
    "fencing_html",
    "fencing_panel",
    "incidents_panel",
    "metadata_log_frame",
    "metadata_log_panel",
    "mode_runs",
    "modes_table",
    "shutdown_seeds",
    "shutdown_table",
]

SEED = 0
#: lab 07's sizes (its failover panel's) for the failover table
FAILOVER_SIZES = (100, 1_000, 10_000, 100_000)
#: the controlled shutdown's sizes (lab 07's 1.0 at 100k is about ten hours)
SHUTDOWN_SIZES = (1_000, 10_000, 100_000)
#: the three control planes an incident is run with: label -> the incident's own arguments
MODES = {
    "ZooKeeper, no control plane": {"control_plane": False},
    "ZooKeeper, control plane on every broker": {"control_plane": True},
    "KRaft (3 controllers)": {"control_plane": None, "mode": "kraft"},
}
#: the panel's names for :data:`MODES` (a button is narrower than a table's column)
_SHORT = ("ZooKeeper", "ZooKeeper + control plane", "KRaft (3 controllers)")
#: the live panel's runs: 5 partitions, 300 simulated ms (a KRaft broker applies the move about 144 ms in)
PANEL_RUN = {"partitions": 5, "burst": 1, "rate_per_s": 20, "until_ms": 300.0}
#: what a table shows for a broker that had not acted on the move when the run ended
NOT_BY_THE_END = "not by the run's end"
#: the incidents the panel offers, by the lab that teaches them
INCIDENTS = {
    "04 · purgatory": purgatory_incident,
    "05 · truncation (acks=1)": truncation_incident,
    "06 · stale metadata": stale_metadata_incident,
}


# -- the metadata log ------------------------------------------------------------------------------------------
def _fields(value) -> str:
    return json.dumps(value, separators=(", ", ": "), default=str) if isinstance(value, dict) else str(value)


def metadata_log_frame(res, record_type: str | None = None, broker: int | None = None) -> pd.DataFrame:
    """``res.metadata_log`` (a KRaft run's, or a :class:`~kafka_lab.sim.BrokerFencing`'s) as the learner reads it:
    offset, epoch, record type, its fields, and when it was decided, appended and committed (ms).

    ``record_type`` keeps one type; ``broker`` keeps the records that name that broker (``BrokerId``, a leader,
    a replica, an ISR member).
    """
    ml = _metadata_log(res)
    if record_type is not None and not isinstance(record_type, str):
        raise TypeError(f"record_type is a record type's name (a str) or None, got {record_type!r}")
    if broker is not None and (isinstance(broker, bool) or not isinstance(broker, int)):
        raise TypeError(f"broker is a broker id (an int) or None, got {broker!r}")
    out = ml
    if record_type is not None:
        if record_type not in set(ml["record_type"]):
            raise ValueError(f"record_type is one of {sorted(set(ml['record_type']))}, got {record_type!r}")
        out = out[out["record_type"] == record_type]
    if broker is not None:
        out = out[out["fields"].map(lambda f: _names_broker(f, broker))]
    frame = pd.DataFrame(
        {
            "offset": out["offset"].astype(int),
            "epoch": out["epoch"].astype(int),
            "record": out["record_type"],
            "fields": out["fields"].map(_fields),
            "decided (ms)": out["decided_ms"].round(2),
            "appended (ms)": out["appended_ms"].round(2),
            "committed (ms)": out["committed_ms"].round(2).where(out["committed"], np.nan),
        }
    )
    return frame.reset_index(drop=True)


def _metadata_log(res):
    """The metadata log of a KRaft run: a ClusterResults, a BrokerFencing (its run's), a KRaftFailoverResult."""
    ml = getattr(res, "metadata_log", None)
    if ml is None and hasattr(res, "results"):
        ml = res.results.metadata_log
    if ml is None:
        raise ValueError(
            "this run has no metadata log: give a KRaft run (an incident with mode='kraft', broker_fencing, "
            "kraft_failover)"
        )
    return ml


def _names_broker(fields: dict, broker: int) -> bool:
    for key in ("BrokerId", "Leader"):
        if fields.get(key) == broker:
            return True
    return any(broker in fields.get(key, ()) or () for key in ("Replicas", "Isr"))


def metadata_log_panel(res) -> widgets.VBox:
    """The metadata log of ``res`` with two filters: the record type and a broker it names."""
    ml = metadata_log_frame(res)
    types = ["every record"] + sorted(set(ml["record"]))
    kind = primary(
        widgets.Dropdown(
            options=types, value="every record", description="record type", style={"description_width": "120px"}
        )
    )
    who = widgets.Dropdown(
        options=[("any", None), ("broker 1", 1), ("broker 2", 2), ("broker 3", 3)],
        value=None,
        description="names broker",
        style={"description_width": "120px"},
    )
    out = primary_output(widgets.HTML())

    def redraw(_=None):
        t = None if kind.value == "every record" else kind.value
        df = metadata_log_frame(res, t, who.value)
        rows = [[html.escape(str(v)) for v in r] for r in df.itertuples(index=False)]
        out.value = f"<div>{len(df)} of {len(ml)} records</div>" + html_table(list(df.columns), rows, numeric=(0, 1))

    kind.observe(redraw, names="value")
    who.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([kind, who]), out])


# -- failover and controlled shutdown at scale ---------------------------------------------------------------------
@functools.cache
def _kraft_failover(n: int):
    return kraft_failover(partitions=n, seed=SEED)


@functools.cache
def _kraft_shutdown(n: int):
    return kraft_controlled_shutdown(partitions=n, seed=SEED)


def _sizes(sizes) -> list:
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"sizes is a list of partition counts, got {sizes!r}")
    out = list(sizes)
    bad = [n for n in out if isinstance(n, bool) or not isinstance(n, (int, np.integer))]
    if not out or bad:
        raise ValueError(f"sizes are whole numbers of partitions (at least one), got {out!r}")
    return [int(n) for n in out]


def failover_table(sizes=FAILOVER_SIZES) -> pd.DataFrame:
    """The active controller's node crashes, one column per size: KRaft's time to a new active controller, the
    records of the log and how many of them it replayed after the crash (measured by its controller), beside lab
    07's failover (the controller's
    broker crashes) in 1.1 and 1.0: the crash to an active controller (the session timeout, the election and the
    state load), the load alone, and the time the dead broker's partitions had no leader (seconds)."""
    cols = {}
    for n in _sizes(sizes):
        k = _kraft_failover(int(n))
        ml = k.metadata_log
        committed = int((ml["committed"] & (ml["committed_ms"] <= k.phases["activated_ms"])).sum())
        col = {
            "KRaft: crash → a new active controller (s)": round(k.duration_s, 2),
            "KRaft: records in the metadata log at its activation": committed,
            "KRaft: of which it replayed after the crash": k.reloaded_records,
        }
        for version in ("1.1", "1.0"):
            z = controller_failover(partitions=int(n), version=version, seed=SEED)
            col[f"ZooKeeper {version}: crash → an active controller (s)"] = round(z.phases["loaded_ms"] / 1000, 2)
            col[f"ZooKeeper {version}: of which the state load (s)"] = round(z.load_s, 2)
            col[f"ZooKeeper {version}: partitions without a leader (s)"] = round(z.unavailable_s, 1)
        cols[f"{int(n):,} partitions"] = pd.Series(col, dtype=object)
    return pd.DataFrame(cols)


def shutdown_table(sizes=SHUTDOWN_SIZES) -> pd.DataFrame:
    """A controlled shutdown of a broker with ``n`` partition replicas (half led): KRaft (the first WantShutDown
    heartbeat to the answer that lets it go), its records and the appends of at most 10,000 records they
    took (the model writes each as a Raft batch; Kafka packs appends into batches of up to 8 MiB), and lab 07's 1.0 and 1.1 (the
    ControlledShutdown request to its reply), in seconds."""
    rows = []
    for n in _sizes(sizes):
        k = _kraft_shutdown(int(n))
        rows.append(
            {
                "partitions on the broker": int(n),
                "KRaft (s)": round(k.duration_s, 2),
                "KRaft: records": k.records,
                "KRaft: appends of ≤ 10,000 records (the model's batches)": k.batches,
                "KRaft: the other brokers' reports (s)": round(k.phases["reported_ms"] / 1000, 2),
                "ZooKeeper 1.1 (s)": round(controlled_shutdown(partitions=int(n), version="1.1").duration_s, 2),
                "ZooKeeper 1.0 (s)": round(controlled_shutdown(partitions=int(n), version="1.0").duration_s, 1),
            }
        )
    return pd.DataFrame(rows).set_index("partitions on the broker")


#: the seeds :func:`shutdown_seeds` runs by default (0 is the lab's)
SHUTDOWN_SEEDS = tuple(range(20))


def shutdown_seeds(partitions: int = 1_000, seeds=SHUTDOWN_SEEDS) -> pd.DataFrame:
    """The same KRaft controlled shutdown over several seeds (each its own heartbeat phases and NoOpRecord phase):
    how many took each duration, rounded to 0.1 s, and the seeds that did."""
    runs = {
        int(s): round(kraft_controlled_shutdown(partitions=int(partitions), seed=int(s)).duration_s, 1) for s in seeds
    }
    by = {}
    for seed, d in sorted(runs.items()):
        by.setdefault(d, []).append(seed)
    return pd.DataFrame(
        {
            "shutdown (s)": list(by),
            "runs": [len(v) for v in by.values()],
            "seeds": [", ".join(map(str, v)) for v in by.values()],
        }
    ).sort_values("shutdown (s)", ignore_index=True)


# -- the incidents of labs 04-06 in both modes ---------------------------------------------------------------------
def mode_runs(incident, modes=tuple(MODES), **options) -> dict:
    """``{label: run}``: ``incident`` under each of ``modes`` (labels of :data:`MODES`), same seed and load."""
    if isinstance(modes, str):
        raise TypeError(f"modes is a tuple of labels of MODES, e.g. ({modes!r},), not a string")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"modes are among {list(MODES)}, got {unknown}")
    return {m: cached_run(incident, **MODES[m], **options) for m in modes}


def _moved(res, partition: int = 0):
    un = res.unavailability
    row = un[(un["topic"] == "orders") & (un["partition"] == partition)]
    return float(row["decided_ms"].iloc[0]) if len(row) else np.nan


def _acted(res, broker: int, partition: int = 0) -> float:
    """When ``broker`` acted on the move of orders-``partition`` (became its leader or a follower of the new one)."""
    ev = res.events
    hit = ev[
        (ev["broker_id"] == broker)
        & (ev["topic"] == "orders")
        & (ev["partition"] == partition)
        & ev["event"].isin(["become_leader", "become_follower"])
    ]
    return float(hit["time_ms"].min()) if len(hit) else np.nan


def modes_table(runs: dict, *, brokers=(1, 2, 3)) -> pd.DataFrame:
    """The numbers labs 04-06 teach, one column per run of :func:`mode_runs`: when each broker acted on the
    controller's decision to move ``orders-0`` and when its metadata cache named the new leader (ms after the
    decision), what the clients saw, and what the ledger counted."""
    from kafka_lab.incident_stats import incident_summary

    if not isinstance(runs, dict) or not runs:
        raise TypeError(f"runs is {{label: run}} as mode_runs returns it, got {type(runs).__name__}")
    cols = {}
    for label, res in runs.items():
        missing = [b for b in brokers if b not in getattr(getattr(res, "cluster", None), "brokers", {})]
        if not hasattr(res, "unavailability") or missing:
            raise ValueError(
                f"modes_table reads runs of labs 04-06's incidents (brokers 1-3); {label!r} is not one"
                + (f" (it has no broker {missing})" if missing and hasattr(res, "unavailability") else "")
            )
        s = incident_summary(res)
        decided = _moved(res)
        col = {}
        end = NOT_BY_THE_END
        for b in brokers:
            acted = _acted(res, b) - decided
            col[f"broker {b}: acts on the move (ms after the decision)"] = end if np.isnan(acted) else round(acted, 2)
        st = res.staleness
        for b in brokers:
            row = st[(st["broker_id"] == b) & (st["topic"] == "orders") & (st["partition"] == 0)]
            applied = bool(row["applied"].iloc[0]) if len(row) else False
            col[f"broker {b}: metadata stale (ms after the decision)"] = round(s["stale_ms"][b], 2) if applied else end
        col["orders-0: two leaders (ms)"] = round(s["two_leaders_ms"], 2)
        col["orders-0: records acknowledged, then truncated"] = s["truncated_records"]
        col["orders-0: NOT_LEADER_OR_FOLLOWER answers"] = s["not_leader_answers"]
        col["orders-0: mean batch latency (ms)"] = round(s["mean_latency_ms"], 1)
        col["peak PurgatorySize on broker 1"] = int(s["peak_purgatory"][1])
        # object: a count shows as 30, not 30.0; a value the run lacks as —
        cols[label] = pd.Series(
            {k: "—" if isinstance(v, float) and np.isnan(v) else v for k, v in col.items()}, dtype=object
        )
    return pd.DataFrame(cols)


def commit_path(res, partition: int = 0) -> pd.DataFrame:
    """A KRaft run's move of ``orders-<partition>``, step by step (ms from the start of the run): the controller's
    decision, the batch's append (``controller.quorum.append.linger.ms`` later), its commit (a majority of the
    voters has it), the next write to the log (the brokers' parked fetches return only with new records in 4.0),
    and each broker acting on it."""
    if hasattr(res, "results") and not hasattr(res, "unavailability"):  # a BrokerFencing: its run
        res = res.results
    ml = getattr(res, "metadata_log", None)
    if ml is None:
        raise ValueError("commit_path needs a KRaft run (mode='kraft')")
    pcr = ml[
        (ml["record_type"] == "PartitionChangeRecord") & ml["fields"].map(lambda f: f.get("PartitionId") == partition)
    ]
    if not len(pcr):
        raise ValueError(f"no PartitionChangeRecord for partition {partition} in this run")
    r = pcr.iloc[0]
    later = ml[(ml["offset"] > r["offset"]) & (ml["appended_ms"] > r["appended_ms"])]  # a later batch's
    rows = [
        ("the controller decides (hands the record to Raft)", r["decided_ms"]),
        ("its batch is appended to the leader's log", r["appended_ms"]),
        ("a majority of the voters has it: committed", r["committed_ms"]),
    ]
    if len(later):
        n = later.iloc[0]
        rows.append((f"the next record ({n['record_type']}) is appended", n["appended_ms"]))
    for b in sorted(res.cluster.brokers):
        rows.append((f"broker {b} acts on it (its metadata loader)", _acted(res, b, partition)))
    d = float(r["decided_ms"])

    def shown(t):
        return NOT_BY_THE_END if np.isnan(t) else round(float(t), 2)

    return pd.DataFrame(
        {
            "step": [s for s, _ in rows],
            "time (ms)": pd.Series([shown(t) for _, t in rows], dtype=object),
            "after the decision (ms)": pd.Series([shown(float(t) - d) for _, t in rows], dtype=object),
        }
    )


def _panel_html(label: str, res) -> str:
    t = modes_table({label: res})
    rows = [[html.escape(str(k)), html.escape(str(v))] for k, v in t[label].items()]
    return f"<b>{html.escape(label)}</b>" + html_table(["", "this run"], rows, numeric=(1,))


def incidents_panel(producers: int = 200) -> widgets.VBox:
    """The live experiment: an incident of labs 04-06, the load (primary), and the control plane: ZooKeeper mode
    without or with KIP-291's, or KRaft. Each run is :data:`PANEL_RUN` (5 partitions, 300 simulated ms)."""
    style = {"description_width": "140px"}
    which = widgets.ToggleButtons(
        options=list(INCIDENTS), description="incident", style={**style, "button_width": "190px"}
    )
    mode = widgets.ToggleButtons(
        options=[(short, label) for short, label in zip(_SHORT, MODES, strict=True)],
        description="control",
        style={**style, "button_width": "230px"},
    )
    load = primary(
        widgets.IntSlider(
            value=producers,
            min=25,
            max=300,
            step=25,
            description="producers",
            style=style,
            layout=widgets.Layout(width="560px"),
            continuous_update=False,
        )
    )
    out = primary_output(widgets.HTML())

    def redraw(_=None):
        res = cached_run(INCIDENTS[which.value], **MODES[mode.value], producers=load.value, **PANEL_RUN)
        out.value = _panel_html(mode.value, res)
        release_runs()

    for w in (which, mode, load):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([which, mode, load, out])


# -- fencing a broker -------------------------------------------------------------------------------------------------
#: the fencing panel's runs: one producer (the timeline, not the load, is the lesson; a run answers in ~0.2 s)
FENCING_RUN = {"producers": 1}


@functools.lru_cache(maxsize=64)
def _fencing(fault: str, pause_s: float):
    extra = {"pause_ms": pause_s * 1000.0} if fault == "pause" else {}
    return broker_fencing(seed=SEED, fault=fault, **FENCING_RUN, **extra)


def fencing_html(r) -> str:
    """One paragraph: the fault, the last heartbeat the controller handled, the fence (or why none), the moves."""
    cfg = KRaftConfig()
    what = (
        f"broker {r.broker} crashed at {r.fault_ms / 1000:.2f} s"
        if r.fault == "crash"
        else f"broker {r.broker} paused at {r.fault_ms / 1000:.2f} s"
    )
    last = f"the controller last heard from it at {r.last_contact_ms / 1000:.2f} s"
    if np.isnan(r.fenced_ms):
        fate = (
            f"it was <b>not fenced</b>: it heartbeated again before {cfg.broker_session_timeout_ms / 1000:g} s had "
            "passed since that last contact"
        )
    else:
        fate = (
            f"the controller <b>fenced</b> it at {r.fenced_ms / 1000:.2f} s, {r.fenced_after_ms / 1000:.2f} s after "
            f"that last contact (broker.session.timeout.ms={cfg.broker_session_timeout_ms}), "
            f"{(r.fenced_ms - r.fault_ms) / 1000:.2f} s after the fault"
        )
    unf = "" if np.isnan(r.unfenced_ms) else f"; it woke, heartbeated and was unfenced at {r.unfenced_ms / 1000:.2f} s"
    moves = ""
    if len(r.moves):
        acted = r.moves[[c for c in r.moves.columns if c.startswith("applied_ms_")]]
        parts = ", ".join(f"orders-{p} to broker {b}" for p, b in zip(r.moves["partition"], r.moves["new_leader"]))
        by = (
            "not yet acted on by every other broker when the run ended"
            if acted.isna().to_numpy().any()
            else f"acted on by every other broker by {acted.max(axis=1).max() / 1000:.2f} s"
        )
        moves = f". Its leaderships moved ({parts}), committed at {r.moves['committed_ms'].max() / 1000:.2f} s and {by}"
    lg = r.results.ledger
    outcomes = lg.groupby("outcome", observed=True)["records"].sum()
    parts = ", ".join(f"{int(n):,} {o}" for o, n in outcomes.items() if n)
    slow = lg["latency_ms"].max()
    answered = "" if not outcomes.get("pending", 0) else " of those answered"
    ledger = (
        f" The producer's records, in the ledger: {parts or 'none'}"
        + (
            ""
            if np.isnan(slow)
            else f"; the slowest batch{answered} took "
            + (f"{slow / 1000:.2f} s" if slow >= 1000 else f"{slow:.1f} ms")
            + " from its first send to its answer"
        )
        + "."
    )
    return f"<div>{what}; {last}; {fate}{unf}{moves}.{ledger}</div>"


def fencing_figure(r):
    """Broker ``r.broker``'s heartbeats (sent), the fault (a band for a pause), the fence and the unfence."""
    res = r.results
    hb = [
        x.sent
        for x in res.cluster.log
        if x.api == "BrokerHeartbeat" and x.client_id.startswith(f"broker-{r.broker}-") and x.error == "NONE"
    ]
    data = [
        {
            "type": "scatter",
            "x": [t / 1000 for t in hb],
            "y": [1] * len(hb),
            "mode": "markers",
            "name": f"broker {r.broker}'s heartbeats (answered)",
            "marker": {"color": PALETTE[0], "size": 9, "symbol": "line-ns-open"},
        }
    ]
    shapes = [vline(r.fault_ms / 1000, INK, dash="dash")]
    notes = [(r.fault_ms / 1000, r.fault)]
    if r.fault == "pause":
        end = (r.fault_ms + r.pause_ms) / 1000
        shapes.append(
            {
                "type": "rect",
                "x0": r.fault_ms / 1000,
                "x1": end,
                "xref": "x",
                "y0": 0,
                "y1": 1,
                "yref": "y domain",
                "fillcolor": GREY,
                "opacity": 0.15,
                "line": {"width": 0},
            }
        )
    if not np.isnan(r.fenced_ms):
        shapes.append(vline(r.fenced_ms / 1000, PALETTE[3]))
        notes.append((r.fenced_ms / 1000, "fenced"))
    if not np.isnan(r.unfenced_ms):
        shapes.append(vline(r.unfenced_ms / 1000, PALETTE[2]))
        notes.append((r.unfenced_ms / 1000, "unfenced"))
    layout = {
        "title": {"text": f"Broker {r.broker}: heartbeats every 2 s, the fault, and the controller's answer"},
        "xaxis": {"title": {"text": "simulated time (s)"}},
        "yaxis": {"visible": False, "range": [0, 2]},
        "height": 260,
        "shapes": shapes,
        "annotations": [
            {"x": x, "y": 1.7, "xref": "x", "yref": "y", "text": t, "showarrow": False, "xanchor": "left"}
            for x, t in notes
        ],
        "showlegend": False,
        "margin": {"t": 50, "b": 50},
    }
    return plain_figure(data, layout)


def fencing_panel(pause_s: float = 15.0) -> widgets.VBox:
    """The live experiment: crash broker 2, or pause it for 1 to 20 s (primary)."""
    if isinstance(pause_s, bool) or not isinstance(pause_s, (int, float)) or not 1 <= pause_s <= 20:
        raise ValueError(f"pause_s is the pause the panel starts with, 1 to 20 s, got {pause_s!r}")
    style = {"description_width": "140px"}
    fault = widgets.ToggleButtons(options=[("pause", "pause"), ("crash", "crash")], description="fault", style=style)
    length = primary(
        widgets.FloatSlider(
            value=pause_s,
            min=1.0,
            max=20.0,
            step=1.0,
            description="pause (s)",
            style=style,
            layout=widgets.Layout(width="560px"),
            continuous_update=False,
        )
    )
    text = primary_output(widgets.HTML())
    fig = widgets.Output()

    def redraw(_=None):
        length.disabled = fault.value == "crash"
        r = _fencing(fault.value, float(length.value) if fault.value == "pause" else 0.0)
        text.value = fencing_html(r)
        show_figure(fencing_figure(r), fig)
        release_runs()

    fault.observe(redraw, names="value")
    length.observe(redraw, names="value")
    redraw()
    return widgets.VBox([fault, length, text, fig])

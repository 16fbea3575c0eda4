"""Every control of labs 04-06's live panels reaches the run the panel shows, through the widgets.

The labs' own tests check the incidents by calling them; these build each panel as its lab does, move
one widget at a time (as a learner would, and as benchmarks/panels.py does) and check three things:

- the run the panel asks for (``cached_run``, recorded) has exactly the keyword arguments the widgets
  say, every other one unchanged: a value never passed on, passed to the wrong parameter or stale after
  a change fails here, also for controls whose effect the model does not show (min.insync.replicas);
- what the panel shows (the summary, the ledger table it draws) is the package's answer to that call,
  and differs from the previous setting where the model says it must;
- once per lab, the panel's summary, ledger and figures equal a direct call of the incident function,
  written out with the seed, under a setting where every control is off its default.
"""

import re

import IPython.display
import ipywidgets as widgets
import numpy as np
import pandas as pd
import pytest
from widget_tree import find

import kafka_lab.ui
from kafka_lab.incident_stats import cached_run, incident_summary
from kafka_lab.sim import purgatory_incident, stale_metadata_incident, truncation_incident, unavailability_incident
from kafka_lab.ui import PRIMARY_OUTPUT, lab04, lab05, lab06
from kafka_lab.ui import cluster as ui

BUSY = "the busy broker is"
CONTROLLER = "the controller is on"
MOVE = "orders-0 moves at"
#: per lab: the panel as the notebook builds it, its incident, its acks, and every control it offers
LABS = {
    "04": dict(
        build=lambda: lab04.purgatory_panel(producers=200),
        incident=purgatory_incident,
        acks=-1,
        options=lab04.PANEL_OPTIONS,
        controls={
            "producers",
            "acks",
            "request.timeout.ms",
            "min.insync.replicas",
            "broker 1",
            "broker 2",
            "broker 3",
            CONTROLLER,
        },
    ),
    "05": dict(
        build=lambda: lab05.truncation_panel(producers=200),
        incident=truncation_incident,
        acks=1,
        options=lab05.PANEL_OPTIONS,
        controls={
            "producers",
            MOVE,
            "acks",
            "request.timeout.ms",
            "min.insync.replicas",
            "broker 1",
            "broker 2",
            "broker 3",
            CONTROLLER,
        },
    ),
    "06": dict(
        build=lambda: lab06.staleness_panel(producers=200),
        incident=stale_metadata_incident,
        acks=1,
        options=lab06.PANEL_OPTIONS,
        controls={
            BUSY,
            "producers",
            "acks",
            "request.timeout.ms",
            "min.insync.replicas",
            "broker 1",
            "broker 2",
            "broker 3",
            CONTROLLER,
        },
    ),
}

#: (control, value) moves whose run the model says must show other numbers than the panel's first setting:
#: the load; acks (acks=all parks produces in broker 1's purgatory, acks=1 lets broker 1 acknowledge records
#: that are truncated); a request.timeout.ms shorter than the LeaderAndIsr's wait (requests time out, are
#: retried); the control plane on broker 1, the busy broker whose LeaderAndIsr waits; the other busy broker
MUST_DIFFER = {
    ("producers", 25),
    ("producers", "max"),
    ("acks", "other"),
    ("request.timeout.ms", 20),
    ("request.timeout.ms", 10),
    ("broker 1", True),
    (BUSY, unavailability_incident),
    (MOVE, 10.0),
    (MOVE, 50.0),
}
#: ... and must not: no request waits 1 s in a run of at most 150 simulated ms; min.insync.replicas only
#: refuses acks=all produces when the ISR is smaller, and all three replicas stay in sync (lab 04, step 3)
MUST_NOT_DIFFER = {("request.timeout.ms", 1000), ("min.insync.replicas", 2), ("min.insync.replicas", 3)}


def _all(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _all(child)


def controls(panel) -> dict:
    """The panel's controls by description: every widget with a value a learner sets (not the HTML it shows)."""
    found = [
        w
        for w in _all(panel)
        if isinstance(w, widgets.ValueWidget) and not isinstance(w, (widgets.HTML, widgets.Label))
    ]
    by_name = {w.description: w for w in found}
    assert len(by_name) == len(found), "two controls with one description"
    return by_name


def other_values(w) -> list:
    """Every value of ``w`` but its current one (a slider: its two ends)."""
    if isinstance(w, widgets.Checkbox):
        return [not w.value]
    if isinstance(w, widgets.IntSlider):
        return [v for v in (w.min, w.max) if v != w.value]
    return [o[1] if isinstance(o, tuple) else o for o in w.options if (o[1] if isinstance(o, tuple) else o) != w.value]


def apply(call: dict, name: str, value) -> dict:
    """``call`` (the incident and its keyword arguments) after the control ``name`` is set to ``value``."""
    call = {**call, "control_plane": dict(call["control_plane"])}
    if name == BUSY:
        call["incident"] = value
    elif name == CONTROLLER:  # the incidents' default, broker 1, is not passed (the lab's own runs are reused)
        call.pop("controller", None)
        if value != 1:
            call["controller"] = value
    elif name == MOVE:  # the same: the incidents' decision_ms, 2 ms, is not passed
        call.pop("decision_ms", None)
        if value != 2.0:
            call["decision_ms"] = value
    elif name.startswith("broker "):
        call["control_plane"][int(name.split()[1])] = value
    else:
        key = {"request.timeout.ms": "request_timeout_ms", "min.insync.replicas": "min_insync_replicas"}.get(name, name)
        assert key in call, name
        call[key] = value
    return call


class Shown:
    """A panel built as its lab builds it, with the runs it asks for and what it draws recorded."""

    def __init__(self, lab: str, monkeypatch):
        self.calls, self.drawn = [], []

        def recording_run(incident, *, control_plane, **options):
            self.calls.append({"incident": incident, "control_plane": dict(control_plane), **options})
            return cached_run(incident, control_plane=control_plane, **options)

        monkeypatch.setattr(ui, "cached_run", recording_run)
        # the panel imports both when it is built: its figures and tables land here, not in a notebook
        monkeypatch.setattr(kafka_lab.ui, "show_figure", lambda fig, out=None: self.drawn.append(fig))
        monkeypatch.setattr(IPython.display, "display", self.drawn.append)
        self.panel = LABS[lab]["build"]()
        self.summary = find(self.panel, PRIMARY_OUTPUT)
        self.controls = controls(self.panel)

    def set(self, name: str, value) -> None:
        """Move one control; the panel must answer with exactly one run."""
        n = len(self.calls)
        self.drawn.clear()
        self.controls[name].value = value
        assert len(self.calls) == n + 1, f"setting {name} to {value!r} asked for {len(self.calls) - n} runs"

    @property
    def ledger(self) -> pd.DataFrame:
        (table,) = [d for d in self.drawn if isinstance(d, pd.DataFrame)]
        return table


def first_call(lab: str) -> dict:
    """The run a lab's panel must ask for first: its defaults, every broker without a control plane."""
    spec = LABS[lab]
    return {
        "incident": spec["incident"],
        "control_plane": {1: False, 2: False, 3: False},
        "producers": 200,
        "acks": spec["acks"],
        "request_timeout_ms": 30000,
        "min_insync_replicas": 1,
        **spec["options"],
    }


def package_answer(call: dict):
    """What the package gives for ``call``: the run, and the panel's summary of it."""
    opts = {k: v for k, v in call.items() if k not in ("incident", "control_plane")}
    res = cached_run(call["incident"], control_plane=call["control_plane"], **opts)
    label = f"{ui.setting_label(call['control_plane'])}, the controller on broker {call.get('controller', 1)}"
    return res, ui.summary_html(res, label=label)


@pytest.mark.parametrize("lab", LABS)
def test_the_panel_offers_the_controls_tested_here(lab, monkeypatch):
    """A control added to a panel fails here until it has a case in the tests below."""
    shown = Shown(lab, monkeypatch)
    assert set(shown.controls) == LABS[lab]["controls"]
    if BUSY in shown.controls:  # lab 06: the toggle's two values are the two incidents, the old leader first
        assert [v for _, v in shown.controls[BUSY].options] == [stale_metadata_incident, unavailability_incident]
    assert shown.calls == [first_call(lab)]
    res, summary = package_answer(first_call(lab))
    assert shown.summary.value == summary and shown.ledger.equals(ui.ledger_table(res))


@pytest.mark.parametrize(
    ("lab", "name"), [(lab, name) for lab, spec in LABS.items() for name in sorted(spec["controls"])]
)
def test_a_control_passes_its_value_to_the_run_shown(lab, name, monkeypatch):
    """Every value of one control, then back: the exact call, and the package's answer to it on show."""
    shown = Shown(lab, monkeypatch)
    start = first_call(lab)
    first_summary, first_ledger = shown.summary.value, shown.ledger
    w = shown.controls[name]
    initial = w.value
    checked = set()
    for value in [*other_values(w), initial]:
        shown.set(name, value)
        expected = apply(start, name, value)
        assert shown.calls[-1] == expected, f"{name}={value!r}"
        res, summary = package_answer(expected)
        assert shown.summary.value == summary, f"{name}={value!r}: the summary is not the run's"
        assert shown.ledger.equals(ui.ledger_table(res)), f"{name}={value!r}: the ledger is not the run's"
        # a summary says what is true, never "nan" (no batch answered yet, a request still queued at the end)
        assert not re.search(r"\bnan\b", shown.summary.value, re.IGNORECASE), f"{name}={value!r}: {shown.summary.value}"
        assert not shown.ledger.isna().any().any(), f"{name}={value!r}: NaN in the ledger table"
        if value == initial:
            continue
        key = (
            name,
            "max" if isinstance(w, widgets.IntSlider) and value == w.max else "other" if name == "acks" else value,
        )
        checked.add(key)
        if key in MUST_DIFFER:
            assert shown.summary.value != first_summary and not shown.ledger.equals(first_ledger), key
        if key in MUST_NOT_DIFFER:
            assert shown.summary.value == first_summary and shown.ledger.equals(first_ledger), key
    assert {k for k in MUST_DIFFER | MUST_NOT_DIFFER if k[0] == name} <= checked  # no case left unvisited
    # back where it started: the first run again
    assert shown.calls[-1] == start
    assert shown.summary.value == first_summary and shown.ledger.equals(first_ledger)


#: per lab, a setting with every control off its default (lab 06: the other busy broker too), in the order set;
#: chosen so that putting any one of them back but min.insync.replicas (and lab 05's broker 2, whose
#: LeaderAndIsr never waits there) changes the summary and the ledger: the direct-call check below sees each
EVERY_CONTROL_MOVED = {
    "04": [
        ("producers", 300),
        ("acks", 1),
        ("request.timeout.ms", 10),
        ("min.insync.replicas", 3),
        ("broker 1", True),
        ("broker 2", True),
        (CONTROLLER, 3),
    ],
    "05": [
        ("producers", 300),
        (MOVE, 50.0),
        ("acks", -1),
        ("request.timeout.ms", 10),
        ("min.insync.replicas", 2),
        ("broker 1", True),
        ("broker 3", True),
        (CONTROLLER, 2),
    ],
    "06": [
        (BUSY, unavailability_incident),
        ("producers", 300),
        ("acks", -1),
        ("request.timeout.ms", 20),
        ("min.insync.replicas", 3),
        ("broker 2", True),
        (CONTROLLER, 2),
    ],
}


@pytest.mark.parametrize("lab", LABS)
def test_controls_keep_each_others_values(lab, monkeypatch):
    """Moves accumulate: a control's change leaves every other control's value in the call, then each goes back."""
    shown = Shown(lab, monkeypatch)
    moves = EVERY_CONTROL_MOVED[lab]
    initial = {name: shown.controls[name].value for name, _ in moves}
    assert {name for name, _ in moves} | {"broker 1", "broker 2", "broker 3"} >= LABS[lab]["controls"]
    expected = first_call(lab)
    for name, value in moves:
        shown.set(name, value)
        expected = apply(expected, name, value)
        assert shown.calls[-1] == expected, f"after {name}={value!r}"
    for name, _ in reversed(moves):
        shown.set(name, initial[name])
        expected = apply(expected, name, initial[name])
        assert shown.calls[-1] == expected, f"after {name} back to {initial[name]!r}"
    assert expected == first_call(lab)
    res, summary = package_answer(expected)
    assert shown.summary.value == summary and shown.ledger.equals(ui.ledger_table(res))


#: the same settings as EVERY_CONTROL_MOVED, written out as a direct call of the incident function (seed 0)
DIRECT = {
    "04": lambda: purgatory_incident(
        control_plane={1: True, 2: True, 3: False},
        controller=3,
        seed=0,
        producers=300,
        acks=1,
        request_timeout_ms=10,
        min_insync_replicas=3,
        partitions=1,
        burst=1,
        rate_per_s=20,
        until_ms=150.0,
    ),
    "05": lambda: truncation_incident(
        control_plane={1: True, 2: False, 3: True},
        controller=2,
        seed=0,
        producers=300,
        decision_ms=50.0,
        acks="all",
        request_timeout_ms=10,
        min_insync_replicas=2,
        partitions=5,
        burst=1,
        rate_per_s=20,
        until_ms=100.0,
    ),
    "06": lambda: unavailability_incident(
        control_plane={1: False, 2: True, 3: False},
        controller=2,
        seed=0,
        producers=300,
        acks="all",
        request_timeout_ms=20,
        min_insync_replicas=3,
        partitions=5,
        burst=1,
        rate_per_s=20,
        until_ms=70.0,
    ),
}
DIRECT_LABEL = {
    "04": "control plane on brokers 1, 2, the controller on broker 3",
    "05": "control plane on brokers 1, 3, the controller on broker 2",
    "06": "control plane on broker 2, the controller on broker 2",
}


@pytest.mark.parametrize("lab", LABS)
def test_the_panel_shows_what_a_direct_call_gives(lab, monkeypatch):
    """End to end: every control off its default, the summary, the ledger and the figures are a direct call's."""
    shown = Shown(lab, monkeypatch)
    first_summary, first_ledger = shown.summary.value, shown.ledger
    for name, value in EVERY_CONTROL_MOVED[lab]:
        shown.set(name, value)
    direct = DIRECT[lab]()
    label = DIRECT_LABEL[lab]
    assert shown.summary.value == ui.summary_html(direct, label=label)
    assert f"<b>{label}</b>" in shown.summary.value
    assert shown.ledger.equals(ui.ledger_table(direct))
    assert shown.summary.value != first_summary and not shown.ledger.equals(first_ledger)
    figures = [d for d in shown.drawn if not isinstance(d, pd.DataFrame)]
    draw = {
        "04": lambda runs: [ui.purgatory_figure(runs), ui.leadership_figure(runs)],
        # the move at 50 ms (its LeaderAndIsr at 52 ms): the figure reaches 30 ms past it
        "05": lambda runs: [ui.outcomes_figure(runs), ui.truncated_acks_figure(runs, x_max=82.0)],
        "06": lambda runs: [
            ui.staleness_figure(runs),
            ui.leadership_figure(runs, x_max=40),
            ui.wrong_leader_figure(runs),
        ],
    }[lab]
    assert [f.to_json() for f in figures] == [f.to_json() for f in draw({label: direct})]


@pytest.mark.parametrize("lab", ["04", "05"])
def test_the_controllers_broker_is_one_side_of_the_control_plane(lab, monkeypatch):
    """The control plane's two sides, in the panel: with the control plane on broker 1 (the busy broker) only,
    moving the controller off broker 1 gives back the run without any control plane (the controller, on a
    broker that does not name CONTROLLER, sends on INTERNAL everywhere); the summary says so."""
    shown = Shown(lab, monkeypatch)
    first_ledger = shown.ledger
    shown.set("broker 1", True)
    assert "on CONTROLLER, served by broker 1 on its control plane" in shown.summary.value
    assert not shown.ledger.equals(first_ledger)
    shown.set(CONTROLLER, 3)
    assert "The controller (broker 3) sent the LeaderAndIsr on INTERNAL" in shown.summary.value
    assert "brokers 1, 2, 3 on their data plane" in shown.summary.value
    assert shown.ledger.equals(first_ledger)


def test_a_summary_says_what_is_true_where_a_number_is_missing():
    """Lab 05's panel with acks=all: every orders-0 batch is parked, refused and not yet retried when the 100 ms run
    ends, so there is no mean latency to give. The summary and the ledger say so in words, never "nan"."""
    res = cached_run(
        truncation_incident,
        control_plane={1: False, 2: False, 3: False},
        producers=200,
        acks=-1,
        request_timeout_ms=30000,
        min_insync_replicas=1,
        **lab05.PANEL_OPTIONS,
    )
    s = incident_summary(res)
    assert np.isnan(s["mean_latency_ms"]) and not np.isnan(s["other_mean_latency_ms"])  # the case this is about
    assert (res.ledger.query("partition == 0")["outcome"] == "pending").all()
    html = ui.summary_html(res)
    assert "no orders-0 batch got its final answer in this run" in html
    assert f"the other partitions' mean latency: {s['other_mean_latency_ms']:.1f} ms" in html
    assert not re.search(r"\bnan\b", html, re.IGNORECASE)
    t = ui.ledger_table(res)
    assert t.loc["orders-0", "mean latency (ms)"] == ui.NO_ANSWER == "—"
    assert t.loc["orders-1 … orders-4", "mean latency (ms)"] == round(
        t.loc["orders-1 … orders-4", "mean latency (ms)"], 1
    )


def test_the_move_controls_default_is_the_incidents():
    """The panel leaves decision_ms out at its default (so a run the lab made is reused): the default must be the
    incidents' own, or the panel's first run would not be the one it claims."""
    o = {**lab05.PANEL_OPTIONS, "producers": 50}
    plain = truncation_incident(control_plane=False, **o)
    assert plain.ledger.equals(truncation_incident(control_plane=False, decision_ms=ui.DECISION_MS, **o).ledger)
    assert set(plain.unavailability["decided_ms"]) == {ui.DECISION_MS + 2.0}  # the LeaderAndIsr leaves 2 ms later
    assert not plain.ledger.equals(truncation_incident(control_plane=False, decision_ms=10.0, **o).ledger)
    assert lab05.MOVE_AT and ui.DECISION_MS in lab05.MOVE_AT

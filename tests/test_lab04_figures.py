"""Every number lab 04 teaches, from the same package calls and seeds as the notebook, against the KIP's
mechanism (what ends a parked produce), lab 03's backlog arithmetic, or a count in the request log."""

import json
from pathlib import Path

import numpy as np
import pytest
from widget_tree import find

from kafka_lab.exercises import check
from kafka_lab.exercises import lab04 as ex
from kafka_lab.incident_stats import (
    follower_fetches,
    incident_summary,
    leader_and_isr_wait_ms,
    metric_peak,
    queue_ahead,
    slowest_produce,
    truncated_records,
)
from kafka_lab.sim import purgatory_incident
from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT, lab04
from kafka_lab.ui import cluster as ui

LAB = Path(__file__).resolve().parent.parent / "labs" / "04_purgatory.ipynb"
CELLS = json.loads(LAB.read_text())["cells"]
SRC = "\n".join("".join(c["source"]) for c in CELLS)
OFF, ON = "no control plane", "control plane on every broker"


@pytest.fixture(scope="module")
def runs():
    return ui.compare(purgatory_incident, producers=200, burst=1, rate_per_s=20, partitions=1)


@pytest.fixture(scope="module")
def runs20():
    return ui.compare(purgatory_incident, producers=200, burst=1, rate_per_s=20, partitions=20, until_ms=150)


def test_the_lab_makes_these_calls():
    for call in (
        "compare(purgatory_incident, producers=200, burst=1, rate_per_s=20, partitions=1)",
        "compare(purgatory_incident, producers=200, burst=1, rate_per_s=20, partitions=20, until_ms=150)",
        "purgatory_incident(control_plane=False, producers=200, burst=1, rate_per_s=20, partitions=1,",
        "min_insync_replicas=3)",
        "purgatory_panel(producers=200)",
        'follower_fetches(runs20["no control plane"]',
    ):
        assert call in SRC, call
    # the exercises' runs are the lab's runs
    assert ex.LOAD == {"producers": 200, "burst": 1, "rate_per_s": 20}
    assert (
        ex.one_partition(False)
        is ui.compare(purgatory_incident, producers=200, burst=1, rate_per_s=20, partitions=1)[OFF]
    )
    assert (
        ex.twenty_partitions(True)
        is ui.compare(purgatory_incident, producers=200, burst=1, rate_per_s=20, partitions=20, until_ms=150)[ON]
    )


def _first(text):
    return next(i for i, c in enumerate(CELLS) if text in "".join(c["source"]))


def test_every_exercise_is_asked_before_the_cells_that_answer_it():
    """Predict before you see: a check comes before any figure or table of the run that answers it."""
    first = _first

    assert first('check("04.what_ends_the_wait"') < first("purgatory_figure(runs)")
    assert first('check("04.lai_wait"') < first("controller_table(runs)")
    assert first('check("04.twenty_partitions"') < first("purgatory_figure(runs20)")
    assert first('check("04.min_insync"') < first("min_insync_replicas=3)")
    assert first('check("04.min_insync"') < first("purgatory_panel(")
    assert "05_truncation.ipynb" in "".join(CELLS[-1]["source"])


def test_exercise_2_numbers_are_the_model_queue(runs):
    ahead = queue_ahead(runs[OFF], 1)
    assert ahead["requests"] == 191 and ahead["by_api"] == {"Produce": 171, "Metadata": 20}
    assert f"{ahead['mean_local_ms']:.2f}" == "0.47"
    assert "191 requests" in SRC and "0.47 ms" in SRC and "171 `Produce`, 20 `Metadata`" in SRC
    wait = leader_and_isr_wait_ms(runs[OFF], 1)
    # lab 03's rule: backlog × service time / handlers, within the spread of exponential service times
    assert wait == pytest.approx(191 * ahead["mean_local_ms"] / 8, rel=0.05)
    assert check("04.lai_wait", round(wait)).ok and not check("04.lai_wait", 191 * 0.47).ok


def test_step_1_numbers(runs):
    off, on = incident_summary(runs[OFF]), incident_summary(runs[ON])
    assert f"{off['lai_wait_ms'][1]:.1f}" == "11.0" and f"{off['lai_applied_ms'][1]:.1f}" == "16.0"
    assert f"{off['lai_applied_ms'][2]:.1f}" == f"{off['lai_applied_ms'][3]:.1f}" == "5.1"
    assert all(f"{on['lai_applied_ms'][b]:.1f}" == "5.1" for b in (1, 2, 3))
    assert on["lai_wait_ms"][1] < 0.1
    assert off["peak_purgatory"][1] == 178 and on["peak_purgatory"][1] == 0
    assert f"{off['two_leaders_ms']:.1f}" == "11.0" and on["two_leaders_ms"] == 0
    for text in (
        "waits **11.0 ms**",
        "applied at **16.0 ms**",
        "at **5.1 ms**",
        "climbs to **178**",
        "all **178** are",
        "**16.0 ms**",
        "up to **10.9 ms**",
        "up to **15.3 ms**",
        "stays **0**",
        "sent at **4.8 ms**",
        "**13.1 ms** in total",
        "for **11.0 ms**",
    ):
        assert text in SRC, text


def test_parked_produces_end_when_broker_1_applies_its_leader_and_isr(runs):
    """The KIP's mechanism: every produce parked for orders-0 is answered NOT_LEADER_OR_FOLLOWER at that instant."""
    parked = ex.parked_produces(runs[OFF])
    applied = incident_summary(runs[OFF])["lai_applied_ms"][1]
    assert len(parked) == 178
    assert set(parked["error"]) == {"NOT_LEADER_OR_FOLLOWER"}
    assert np.allclose(parked["response_complete_ms"], applied)
    assert len(ex.parked_produces(runs[ON])) == 0
    first = {
        k: r.requests[(r.requests["api"] == "Produce") & (r.requests["broker_id"] == 1) & (r.requests["sent_ms"] < 1)]
        for k, r in runs.items()
    }
    assert f"{first[OFF]['remoteTime'].max():.1f}" == "10.9" and f"{first[OFF]['totalTime'].max():.1f}" == "15.3"
    # "up to" is the figure's highest point: the first requests are the slowest of the run without the control plane
    # (the same statistic the figure's legend gives); with it, none waits in purgatory, the slowest was sent at 4.8 ms
    off, on = slowest_produce(runs[OFF]), slowest_produce(runs[ON])
    assert (f"{off['max_remote_ms']:.1f}", f"{off['max_total_ms']:.1f}") == ("10.9", "15.3")
    assert off["slowest_sent_ms"] < 1 and first[ON]["remoteTime"].max() == on["max_remote_ms"] == 0
    assert (f"{on['max_total_ms']:.1f}", f"{on['slowest_sent_ms']:.1f}") == ("13.1", "4.8")
    r = runs[ON].requests
    assert on["max_total_ms"] == r[(r["api"] == "Produce") & (r["broker_id"] == 1)]["totalTime"].max()
    names = [t.name for t in ui.purgatory_figure(runs).data]
    assert f"a Produce request to broker 1: its totalTime ({ON}), the slowest 13.1 ms" in names
    assert f"a Produce request to broker 1: its totalTime ({OFF}), the slowest 15.3 ms" in names
    assert check("04.what_ends_the_wait", "b").ok


def test_step_2_twenty_partitions(runs20):
    off, on = incident_summary(runs20[OFF]), incident_summary(runs20[ON])
    assert f"{off['lai_wait_ms'][1]:.1f}" == "16.7" and f"{off['lai_applied_ms'][1]:.1f}" == "21.7"
    ahead = queue_ahead(runs20[OFF], 1)
    assert ahead["requests"] == 191 and f"{ahead['mean_local_ms']:.2f}" == "0.71"
    assert ahead["by_api"] == {"Produce": 169, "Metadata": 22}
    # the 0.71 ms mean is over every request ahead, the cheap Metadata ones too: a 20-partition Produce takes 0.77 ms
    # (lab 05's 0.76 ms is the Produce requests broker 1 handles while it acknowledges the records it later loses)
    r = runs20[OFF].requests
    lai = r[(r["api"] == "LeaderAndIsr") & (r["broker_id"] == 1)].iloc[0]
    queued = r[
        (r["broker_id"] == 1)
        & (r["plane"] == "data")
        & (r["start_ms"] < lai["start_ms"])
        & (r["dequeue_ms"] > lai["start_ms"])
    ]
    by_api = queued.groupby("api")["localTime"].mean()
    assert len(queued) == 191 and (f"{by_api['Produce']:.2f}", f"{by_api['Metadata']:.2f}") == ("0.77", "0.24")
    assert (off["peak_purgatory"][1], on["peak_purgatory"][1]) == (3980, 3980) == (199 * 20, 199 * 20)
    assert (
        metric_peak(runs20[OFF], "NumDelayedOperations", 1) == metric_peak(runs20[ON], "NumDelayedOperations", 1) == 199
    )
    fetch = follower_fetches(runs20[OFF], 1).iloc[2]
    assert (f"{fetch['sent_ms']:.1f}", f"{fetch['waited_ms']:.1f}", f"{fetch['answered_ms']:.1f}") == (
        "5.4",
        "18.7",
        "24.3",
    )
    # the followers' fetch is answered after the LeaderAndIsr would have been applied: replication is as late
    assert fetch["answered_ms"] > off["lai_applied_ms"][1]
    for text in (
        "waits **16.7 ms**",
        "**0.71 ms** each on average",
        "169 `Produce` requests, 20 partitions each, take **0.77 ms**, the 22 `Metadata` requests 0.24 ms",
        "at **21.7 ms**",
        "**3980** entries",
        "with\nand without the control plane",
        "at most **199**",
        "at **5.4 ms**",
        "waits **18.7 ms**",
        "at **24.3 ms**",
    ):
        assert text in SRC, text
    assert check("04.twenty_partitions", "c").ok


def test_step_2_ledger(runs20):
    for res in runs20.values():
        t = ui.ledger_table(res)
        assert t.loc["orders-0", "truncated"] == t.loc["orders-0", "failed"] == 0
        assert truncated_records(res) == 0 and (res.ledger["outcome"] == "failed").sum() == 0
        # orders-0's batches are mostly still pending at 150 ms; the others' are committed
        assert t.loc["orders-0", "pending"] > t.loc["orders-0", "committed"]
        others = t.loc["orders-1 … orders-19"]
        assert others["committed"] > 10 * others["pending"]
        # conservation: every record in exactly one outcome, and the two rows are the whole ledger
        assert (t[["committed", "truncated", "failed", "pending"]].sum(axis=1) == t["records"]).all()
        assert t["records"].sum() == res.ledger["records"].sum()
        each = ui.ledger_table(res, each=True)
        assert len(each) == 20 and each["records"].sum() == t["records"].sum()


def test_step_3_min_insync_replicas_changes_nothing(runs):
    strict = purgatory_incident(
        control_plane=False, producers=200, burst=1, rate_per_s=20, partitions=1, min_insync_replicas=3
    )
    base = runs[OFF]
    t = ui.summary_table({"1": base, "3": strict})
    assert t["1"].equals(t["3"])
    assert strict.ledger.equals(base.ledger) and strict.metrics.equals(base.metrics)
    assert not {"NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"} & set(strict.ledger["error"])
    assert check("04.min_insync", "b").ok
    # the ISR never changes in the run (no leader asks the controller to shrink it: no AlterIsr), and the ISR the
    # new leader took over is all three: 300 ms is far less than replica.lag.time.max.ms
    assert not (strict.requests["api"] == "AlterIsr").any() and strict.duration_ms < 30000
    became = strict.events[strict.events["event"] == "become_leader"].iloc[0]
    assert became["detail"]["isr"] == [1, 2, 3]


def test_exercise_4_is_answerable_from_what_precedes_it():
    """What exercise 4 needs (the ISR, and what removes a follower from it) is taught before it is asked."""
    before = "\n".join("".join(c["source"]) for c in CELLS[: _first('check("04.min_insync"')])
    for needed in ("**ISR**", "`NOT_ENOUGH_REPLICAS`", "`replica.lag.time.max.ms` (30 s in Kafka 2.8)"):
        assert needed in before, needed


def test_step_3_the_new_leaders_purgatory(runs):
    """The summary table's other peak: broker 2's, when the refused produces come back retry.backoff.ms later."""
    res = runs[OFF]
    m = res.metrics[res.metrics["broker_id"] == 2]
    peak = m.loc[m["PurgatorySize"].idxmax()]
    assert (int(peak["PurgatorySize"]), peak["time_ms"]) == (162, 130.0)
    assert incident_summary(res)["peak_purgatory"][2] == 162
    r = res.requests
    to_2 = r[(r["api"] == "Produce") & (r["broker_id"] == 2)]
    # nothing reaches broker 2 before the refused produces' retries: 100 ms after broker 1's refusals at 16.0 ms
    applied = incident_summary(res)["lai_applied_ms"][1]
    assert f"{to_2['sent_ms'].min():.0f}" == "116" and to_2["sent_ms"].min() >= applied + 100
    fetches = follower_fetches(res, 2)
    wave = fetches[(fetches["sent_ms"] >= 116) & (fetches["sent_ms"] < 130)]
    assert set(wave["fetcher"]) == {"broker-1-fetcher-0", "broker-3-fetcher-0"}
    assert f"{wave['waited_ms'].max():.1f}" == "8.3"
    for text in ("**162**", "at **130 ms**", "**116 ms** on", "(up to **8.3 ms**)", "brokers 1 and 3"):
        assert text in SRC, text


def test_what_the_live_panel_text_promises():
    o = {**lab04.PANEL_OPTIONS, "producers": 200}
    only_1 = purgatory_incident(control_plane={1: True, 2: False, 3: False}, **o)
    only_23 = purgatory_incident(control_plane={1: False, 2: True, 3: True}, **o)
    assert metric_peak(only_1, "PurgatorySize", 1) == 0 and metric_peak(only_23, "PurgatorySize", 1) == 178
    # both sides: with the controller on broker 3, broker 1's setting alone changes nothing, with broker 3's it does
    away = purgatory_incident(control_plane={1: True, 2: False, 3: False}, controller=3, **o)
    both = purgatory_incident(control_plane={1: True, 2: False, 3: True}, controller=3, **o)
    assert metric_peak(away, "PurgatorySize", 1) == 178 and metric_peak(both, "PurgatorySize", 1) == 0
    assert incident_summary(only_23)["lai_route"] == dict.fromkeys((1, 2, 3), ("INTERNAL", "data"))
    for text in ("its setting is both sides at once", "the controller on broker 3", "until broker 3 has it too"):
        assert text in SRC, text
    short = purgatory_incident(control_plane=False, request_timeout_ms=10, **o)
    counts = short.ledger["error"].value_counts()
    assert counts["NETWORK_EXCEPTION"] > counts.get("NONE", 0) and short.outcomes()["pending"].sum() > 0
    acks1 = purgatory_incident(control_plane=False, acks=1, **o)
    assert metric_peak(acks1, "PurgatorySize", 1) == 0 and truncated_records(acks1) > 0


def test_primary_control_changes_the_primary_output():
    panel = lab04.purgatory_panel(producers=200)
    control, output = find(panel, PRIMARY_CONTROL), find(panel, PRIMARY_OUTPUT)
    before = output.value
    assert "broker 1 11.0 ms" in before and "Peak PurgatorySize on broker 1: 178" in before
    control.value = 100
    assert output.value != before and "Peak PurgatorySize on broker 1" in output.value
    assert lab04.PANEL_OPTIONS["partitions"] == 1 and lab04.PANEL_OPTIONS["until_ms"] <= 150


def test_figures_have_titles_axes_and_legends(runs):
    fig = ui.purgatory_figure(runs)
    assert fig.layout.title.text and fig.layout.yaxis.title.text == "PurgatorySize (entries)"
    assert fig.layout.xaxis2.title.text == "simulated time (ms)" and fig.layout.yaxis2.title.text == "totalTime (ms)"
    names = [t.name for t in fig.data]
    assert f"PurgatorySize ({OFF})" in names and f"PurgatorySize ({ON})" in names
    assert "broker 1 applies its LeaderAndIsr (no control plane): 16.0 ms" in names
    # the marker lines are where the LeaderAndIsr was applied, in both subplots
    xs = sorted({round(s.x0, 3) for s in fig.layout.shapes})
    assert xs == [5.06, 16.011]

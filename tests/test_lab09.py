"""Lab 09: every number its text teaches, from the same calls with the same seeds (kafka_lab.ui.lab09 and
kafka_lab.exercises.lab09), and the tables' own rules.

The lab's text is prose; each figure it quotes is asserted here to the precision it is quoted, so that a change
of the model that moves a taught number fails here and the text is revisited.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kafka_lab.exercises import lab09 as ex
from kafka_lab.sim import broker_fencing, truncation_incident
from kafka_lab.sim.kraft.config import KRaftConfig, KRaftCosts
from kafka_lab.ui import lab09 as ui

LAB = Path(__file__).resolve().parent.parent / "labs" / "09_kraft.ipynb"
KRAFT = "KRaft (3 controllers)"
ZK = "ZooKeeper, no control plane"
ZK_CP = "ZooKeeper, control plane on every broker"


def lab_text() -> str:
    cells = json.loads(LAB.read_text())["cells"]
    return " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")


@pytest.fixture(scope="module")
def runs():
    return ui.mode_runs(truncation_incident)


@pytest.fixture(scope="module")
def table(runs):
    return ui.modes_table(runs)


# -- Step 1: the log and the broker epoch --------------------------------------------------------------------------
def test_a_broker_epoch_is_the_offset_of_its_registration():
    """Brokers 1-3 register at offsets 1-3 after the LeaderChangeMessage at 0; the fence/unfence records carry that
    offset as BrokerEpoch (the model's two sides of one rule agree)."""
    ml = ex.kraft_run().metadata_log
    assert ml.iloc[0]["record_type"] == "LeaderChangeMessage" and ml.iloc[0]["offset"] == 0
    reg = ml[ml["record_type"] == "RegisterBrokerRecord"]
    assert dict(zip(reg["fields"].map(lambda f: f["BrokerId"]), reg["offset"])) == {1: 1, 2: 2, 3: 3}
    change = ml[ml["record_type"] == "BrokerRegistrationChangeRecord"]
    for f in change["fields"]:
        assert f["BrokerEpoch"] == f["BrokerId"]


def test_the_log_table_filters_by_type_and_by_broker():
    r = ex.fencing_run("pause")
    every = ui.metadata_log_frame(r)
    assert len(every) == len(r.results.metadata_log)
    fences = ui.metadata_log_frame(r, "BrokerRegistrationChangeRecord", 2)
    assert [json.loads(f)["Fenced"] for f in fences["fields"]] == [-1, 1, -1]  # the start, the fence, the unfence
    named = ui.metadata_log_frame(r, broker=2)
    assert len(named) < len(every)
    assert all("2" in f for f in named["fields"])
    with pytest.raises(ValueError, match="record_type is one of"):
        ui.metadata_log_frame(r, "LeaderAndIsr")
    with pytest.raises(ValueError, match="mode='kraft'"):
        ui.metadata_log_frame(truncation_incident(control_plane=False, partitions=2, producers=1, until_ms=5))


# -- Step 2: failover ------------------------------------------------------------------------------------------------
def test_failover_is_the_same_at_every_size_and_reloads_nothing():
    t = ui.failover_table()
    assert list(t.columns) == ["100 partitions", "1,000 partitions", "10,000 partitions", "100,000 partitions"]
    assert (t.loc["KRaft: crash → a new active controller (s)"] == 2.98).all()
    # measured: the new active controller replayed 2 records after the crash (the last NoOpRecord, whose commit it
    # learned late, and its own LeaderChangeMessage), of a log of 120 to 102,018 records: no reload
    assert (t.loc["KRaft: of which it replayed after the crash"] == 2).all()
    assert list(t.loc["KRaft: records in the metadata log at its activation"]) == [120, 1_038, 10_218, 102_018]
    big = t["100,000 partitions"]
    # lab 07's figures the lab quotes: the 1.1 load of 14 s and 1.0's 28 s at 100k, after a 6 s session timeout
    assert round(big["ZooKeeper 1.1: of which the state load (s)"]) == 14
    assert round(big["ZooKeeper 1.0: of which the state load (s)"]) == 28
    assert round(big["ZooKeeper 1.1: crash → an active controller (s)"]) == 20
    assert round(big["ZooKeeper 1.0: crash → an active controller (s)"]) == 34


def test_failover_splits_into_the_fetch_timeout_and_an_election():
    p = ui._kraft_failover(100_000).phases
    detect = (p["detected_ms"] - p["fault_ms"]) / 1000
    assert round(detect, 2) == 1.65
    assert round(KRaftConfig().quorum.fetch_timeout_ms / 1000 - detect, 2) == 0.35  # its last fetch before the crash
    assert round((p["elected_ms"] - p["detected_ms"]) / 1000, 2) == 1.34


# -- Step 3: controlled shutdown -------------------------------------------------------------------------------------
def test_shutdown_is_the_heartbeat_wait_until_the_batches_grow():
    t = ui.shutdown_table()
    assert list(t["KRaft (s)"]) == [2.11, 2.17, 4.6]
    assert list(t["KRaft: records"]) == [1_001, 10_001, 100_001]
    assert list(t["KRaft: appends of ≤ 10,000 records (the model's batches)"]) == [1, 2, 11]
    assert t.loc[100_000, "ZooKeeper 1.1 (s)"] == 27.5
    assert t.loc[10_000, "ZooKeeper 1.1 (s)"] == 2.75
    assert t.loc[10_000, "ZooKeeper 1.0 (s)"] == 390.0  # 6.5 minutes
    assert t.loc[100_000, "ZooKeeper 1.0 (s)"] > 3600  # "hours"
    k = ui._kraft_shutdown(10_000)
    assert round(k.phases["committed_ms"] - k.phases["decided_ms"]) == 25  # "committed about 25 ms after the decision"


def test_over_seeds_the_shutdown_is_one_or_two_heartbeat_intervals():
    """Step 3: 20 seeds at 1,000 partitions: 11 shutdowns of 2.1 s and 9 of 4.1 s; in a 4.1 s run the last other
    broker's report came after the leaving broker's third heartbeat (2.08 s), so the grant waited for its fourth."""
    t = ui.shutdown_seeds(partitions=1_000)
    assert dict(zip(t["shutdown (s)"], t["runs"])) == {2.1: 11, 4.1: 9}
    two = ui._kraft_shutdown(1_000)
    for seed in map(int, t.loc[t["shutdown (s)"] == 4.1, "seeds"].iloc[0].split(", ")):
        late = ex.kraft_controlled_shutdown(partitions=1_000, seed=seed)
        assert late.phases["reported_ms"] > two.phases["granted_ms"]
        assert late.phases["granted_ms"] - two.phases["granted_ms"] == pytest.approx(2000.0, abs=1.0)


def test_the_loader_cost_is_the_calibrated_figure():
    """Step 3: about 2 µs per changed partition, from PR #13280's 19.6 ms for the 10,000 partitions whose ISR lost
    broker 0 (TopicsImageZonalOutageBenchmark: 10,000 replicas per broker)."""
    assert KRaftCosts().loader_partition_ms == pytest.approx(19.6 / 10_000, rel=0.03)


# -- Step 4: the incident in three control planes --------------------------------------------------------------------
def test_the_busy_broker_acts_with_the_others_in_kraft(table):
    acts = {b: table.loc[f"broker {b}: acts on the move (ms after the decision)", KRAFT] for b in (1, 2, 3)}
    assert round(acts[1] - acts[2], 2) == 0.57
    assert acts[2] == acts[3] == pytest.approx(144.05, abs=0.01)
    assert table.loc["orders-0: two leaders (ms)", KRAFT] == 0.57
    assert table.loc["orders-0: records acknowledged, then truncated", KRAFT] == 50
    zk = table.loc["broker 1: acts on the move (ms after the decision)", ZK]
    cp = table.loc["broker 1: acts on the move (ms after the decision)", ZK_CP]
    assert round(zk - cp, 1) == 16.7  # lab 05's LeaderAndIsr wait
    assert table.loc["orders-0: records acknowledged, then truncated", ZK] == 1_700


def test_staleness_in_kraft_is_the_commit_path_on_every_broker(table):
    for b in (1, 2, 3):
        assert round(table.loc[f"broker {b}: metadata stale (ms after the decision)", KRAFT]) == 144
        assert round(table.loc[f"broker {b}: metadata stale (ms after the decision)", ZK_CP], 1) == 1.6
    assert round(table.loc["broker 1: metadata stale (ms after the decision)", ZK]) == 28


def test_the_commit_path_and_the_exercise_prompt_agree_with_the_run(runs):
    t = ex.move_times(runs[KRAFT])
    n = ex.HWM_PROMPT_NUMBERS
    assert round(t["decided"], 1) == n["decided"]
    assert round(t["appended"] - t["decided"]) == n["linger"] == KRaftConfig().quorum.append_linger_ms
    assert round(t["committed"], 1) == n["committed"] and round(t["appended"], 1) == n["appended"]
    assert t["next_type"] == "NoOpRecord" and round(t["next_decided"], 1) == n["next_decided"]
    assert round(t["acted"][2], 1) == 146.1  # the exercise's solution
    # the brokers act with the next append, not with the commit: the rule of 4.0's parked fetch
    assert t["next_appended"] <= t["acted"][2] < t["next_appended"] + 1
    assert t["acted"][2] - t["committed"] > 100
    cp = ui.commit_path(runs[KRAFT])
    assert list(cp["after the decision (ms)"])[:3] == [0.0, 25.0, 25.06]
    with pytest.raises(ValueError, match="KRaft run"):
        ui.commit_path(runs[ZK])


def test_mode_runs_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="modes are among"):
        ui.mode_runs(truncation_incident, modes=("KRaft",))


# -- Step 5: fencing -------------------------------------------------------------------------------------------------
def test_the_fence_comes_a_session_after_the_last_contact():
    r = ex.fencing_run("pause")
    n = ex.FENCE_PROMPT_NUMBERS
    assert r.fault_ms / 1000 == n["fault_s"] and r.pause_ms / 1000 == n["pause_s"]
    assert round(r.last_contact_ms / 1000, 2) == n["last_contact_s"]
    assert round(r.fenced_ms / 1000, 2) == 12.23
    assert round((r.fault_ms - r.last_contact_ms) / 1000, 2) == 1.77
    assert round(r.moves["committed_ms"].max() - r.fenced_ms) == 25
    applied = r.moves[[c for c in r.moves.columns if c.startswith("applied_ms_")]].max(axis=1).max()
    assert round((applied - r.moves["committed_ms"].max()) / 1000, 1) == 0.4
    assert list(r.moves["new_leader"]) == [3, 3]
    assert r.unfenced_ms > r.fault_ms + r.pause_ms


@pytest.mark.parametrize("pause_s, fenced", [(7.0, False), (8.0, True)])
def test_a_pause_up_to_about_seven_seconds_goes_unnoticed(pause_s, fenced):
    r = ui._fencing("pause", pause_s)
    assert (not math.isnan(r.fenced_ms)) is fenced


def test_the_fencing_sentence_says_what_happened():
    crash = ui._fencing("crash", 0.0)
    text = ui.fencing_html(crash)
    assert "crashed at 5.00 s" in text and "fenced</b> it at 12.23 s" in text and "unfenced" not in text
    short = ui._fencing("pause", 3.0)
    assert "not fenced" in ui.fencing_html(short)
    assert np.isnan(crash.pause_ms)
    fig = ui.fencing_figure(ui._fencing("pause", 15.0))
    assert {a["text"] for a in fig.layout.annotations} == {"pause", "fenced", "unfenced"}


def test_the_faults_lose_nothing_and_cost_time():
    """Step 5: every record committed after a crash and a 15 s pause; the slowest batches 7.63 s and 15.08 s."""
    for fault, pause_s, slowest in (("crash", 0.0, 7.63), ("pause", 15.0, 15.08)):
        lg = ui._fencing(fault, pause_s).results.ledger
        assert set(lg["outcome"].astype(str)) == {"committed"}
        assert round(lg["latency_ms"].max() / 1000, 2) == slowest
        assert f"the slowest batch took {slowest:.2f} s" in ui.fencing_html(ui._fencing(fault, pause_s))
        worst = lg.loc[lg["latency_ms"].idxmax()]
        if fault == "crash":  # acks=all on orders-5 (led by 3), waiting for broker 2 until the fence shrank the ISR
            assert (worst["partition"], worst["broker_id"], worst["attempts"]) == (5, 3, 1)
        else:  # sent to paused broker 2, refused when it woke, sent again to broker 3
            assert (worst["partition"], worst["wrong_leader_sends"], worst["broker_id"]) == (4, 1, 3)


def test_the_fencing_panel_runs_are_the_function_s_own():
    """The panel's one-producer runs fence at the same time as the lab's five-producer default."""
    assert broker_fencing(fault="pause").fenced_ms == ex.fencing_run("pause").fenced_ms


# -- the text quotes what the tests above assert --------------------------------------------------------------------
@pytest.mark.parametrize(
    "quoted",
    [
        "2.98 s",
        "20 s",
        "102,018",
        "1.65 s",
        "1.34 s",
        "0.35 s",
        "0.57 ms",
        "16.7 ms",
        "about 144 ms",
        "1,700",
        "50 `acks=1`",
        "(1.6 ms)",
        "28 ms on the busy broker",
        "4.6 s",
        "27.5 s",
        "100,001 records in 11 appends",
        "12.23 s",
        "1.77 s",
        "7.63 s",
        "15.08 s",
        "121 ms",
        "about 2 µs",
        "half take 2.1 s and half 4.1 s",
        "19.6 ms",
        "47.7 ms",
        "135 s",
        "32 s",
    ],
)
def test_the_lab_quotes_these_figures(quoted):
    assert quoted in lab_text()


# -- the live panels: every control reaches the run the panel shows -------------------------------------------------
def _widgets(panel, kind):
    out = []

    def walk(w):
        if isinstance(w, kind):
            out.append(w)
        for c in getattr(w, "children", ()):
            walk(c)

    walk(panel)
    return out


def test_the_incidents_panel_shows_the_run_its_controls_name():
    """Each setting's table is modes_table of the incident, mode and load the widgets say, with PANEL_RUN."""
    import ipywidgets as widgets

    panel = ui.incidents_panel(producers=200)
    which, mode = _widgets(panel, widgets.ToggleButtons)
    load = _widgets(panel, widgets.IntSlider)[0]
    out = _widgets(panel, widgets.HTML)[-1]
    seen = set()
    for incident in ("05 · truncation (acks=1)", "06 · stale metadata"):
        which.value = incident
        for label in ui.MODES:
            mode.value = label
            for producers in (100, 200):
                load.value = producers
                res = ui.cached_run(ui.INCIDENTS[incident], **ui.MODES[label], producers=producers, **ui.PANEL_RUN)
                assert out.value == ui._panel_html(label, res)
                seen.add(out.value)
    assert len(seen) == 2 * len(ui.MODES) * 2  # no two settings show the same table


def test_the_fencing_panel_follows_its_slider_and_its_fault():
    import ipywidgets as widgets

    panel = ui.fencing_panel(pause_s=15)
    fault = _widgets(panel, widgets.ToggleButtons)[0]
    length = _widgets(panel, widgets.FloatSlider)[0]
    text = next(w for w in _widgets(panel, widgets.HTML) if "broker 2" in w.value)
    assert "fenced</b> it at 12.23 s" in text.value and "unfenced" in text.value
    length.value = 5.0
    assert "not fenced" in text.value
    fault.value = "crash"
    assert length.disabled and "crashed at 5.00 s" in text.value and "unfenced" not in text.value


def test_going_further_calls_what_it_names():
    """The 'Going further' section's calls run as written, and the metrics it names are in the results."""
    res = truncation_incident(mode="kraft", producers=300)
    assert res.metadata_log is not None
    named = {"last-applied-record-lag-ms", "EventQueueTimeMs", "commit-latency", "FencedBrokerCount"}
    named.add("NewActiveControllersCount")
    assert named <= set(res.kraft_metrics["metric"])
    from kafka_lab.sim.broker_fencing import FENCING_DEFAULTS
    from kafka_lab.sim.kraft.scale import MAX_PARTITIONS

    assert MAX_PARTITIONS == 200_000
    assert {"fault", "fault_ms", "pause_ms", "producers", "rate_per_s"} <= set(FENCING_DEFAULTS)

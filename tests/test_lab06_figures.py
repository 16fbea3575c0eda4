"""Every number lab 06 teaches, from the same package calls and seeds as the notebook, against the
controller's one-request-in-flight rule, the producers' refresh pacing and the leadership timeline."""

import json
from pathlib import Path

from widget_tree import find

from kafka_lab.exercises import check
from kafka_lab.exercises import lab06 as ex
from kafka_lab.incident_stats import incident_summary, leadership, queue_ahead, stale_answers, wrong_leader_answers
from kafka_lab.sim import purgatory_incident, stale_metadata_incident, unavailability_incident
from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT, lab06
from kafka_lab.ui import cluster as ui

LAB = Path(__file__).resolve().parent.parent / "labs" / "06_metadata_staleness.ipynb"
CELLS = json.loads(LAB.read_text())["cells"]
SRC = "\n".join("".join(c["source"]) for c in CELLS)
OFF, ON = "no control plane", "control plane on every broker"
LOAD = dict(producers=200, burst=1, rate_per_s=20, partitions=20)


def _first(text):
    return next(i for i, c in enumerate(CELLS) if text in "".join(c["source"]))


def _runs(**kw):
    return ui.compare(stale_metadata_incident, **{**LOAD, "until_ms": 150, **kw})


def _moves():
    return ui.compare(unavailability_incident, settings=(False, {1: True}, {2: True}, True), **LOAD, until_ms=60)


def test_the_lab_makes_these_calls():
    for call in (
        "compare(stale_metadata_incident, producers=200, burst=1, rate_per_s=20, partitions=20, until_ms=150)",
        "compare(stale_metadata_incident, producers=400, burst=1, rate_per_s=20, partitions=20, until_ms=80)",
        "compare(unavailability_incident, settings=(False, {1: True}, {2: True}, True),\n"
        "                producers=200, burst=1, rate_per_s=20, partitions=20, until_ms=60)",
        "staleness_panel(producers=200)",
        "stale_answers_table(runs, broker_id=1)",
    ):
        assert call in SRC, call
    assert ex.stale_run(False) is _runs()[OFF]
    assert ex.unavailable_run({1: True}) is _moves()["control plane on broker 1"]


def test_every_exercise_is_asked_before_the_cells_that_answer_it():
    assert _first('check("06.why_longer"') < _first("controller_table(runs)")
    assert _first('check("06.refresh"') < _first("stale_answers_table(")
    assert _first('check("06.half_migrated"') < _first("moves = compare(")
    assert _first('check("06.which_brokers"') < _first("moves = compare(")
    assert _first('check("06.which_brokers"') < _first("staleness_panel(")
    assert "07_controller.ipynb" in "".join(CELLS[-1]["source"])


def test_the_incidents_wait_is_its_own_and_lab_04s_is_lab_04s():
    """Lab 06 cites its own run's LeaderAndIsr wait (16.8 ms), and lab 04's (16.7 ms) as lab 04's, with the
    difference: the admin clients' Metadata requests ahead of it."""
    s = incident_summary(ex.stale_run(False))
    assert f"{s['lai_wait_ms'][1]:.1f}" == "16.8"
    lab04 = ui.compare(purgatory_incident, **LOAD, until_ms=150)[OFF]
    assert f"{incident_summary(lab04)['lai_wait_ms'][1]:.1f}" == "16.7"
    mine, theirs = queue_ahead(ex.stale_run(False), 1), queue_ahead(lab04, 1)
    assert mine["requests"] - theirs["requests"] == 8
    assert mine["by_api"]["Metadata"] - theirs["by_api"]["Metadata"] == 8
    assert mine["by_api"]["Produce"] == theirs["by_api"]["Produce"]
    r = ex.stale_run(False).requests
    lai = r[(r["api"] == "LeaderAndIsr") & (r["broker_id"] == 1)].iloc[0]
    ahead = r[(r["broker_id"] == 1) & (r["start_ms"] < lai["start_ms"]) & (r["dequeue_ms"] > lai["start_ms"])]
    assert (ahead["client_id"].str.startswith("admin-")).sum() == 8
    assert "waits **16.8 ms** behind its backlog (lab 04's waited 16.7 ms: here 8 more `Metadata`" in SRC
    assert "16.8 ms behind its backlog (lab 04)" not in SRC


def test_what_exercise_1_needs_is_taught_before_it():
    """The controller's one request in flight per broker, which exercise 1 applies, is taught above it."""
    before = "\n".join("".join(c["source"]) for c in CELLS[: _first('check("06.why_longer"')])
    assert "sends that broker's requests one at a time" in before and "`RequestSendThread`" in before


def test_the_producers_first_metadata_request_leaves_at_their_first_send():
    """Kafka 2.8 asks for a topic's metadata on the first send to it; the model asks when the producer is created.
    In these incidents every producer hands over its first batch at t = 0, and its first Metadata request names
    orders and leaves at t = 0: the same request at the same moment, so the model's simplification changes no
    number the lab teaches."""
    for res in (ex.stale_run(False), ex.unavailable_run(False)):
        lg, r = res.ledger, res.requests
        first_batch = lg.groupby("client_id")["created_ms"].min()
        md = r[(r["api"] == "Metadata") & r["client_id"].str.startswith("producer-")]
        first_md = md.groupby("client_id")["sent_ms"].min()
        assert len(first_batch) == len(first_md) == 200
        assert (first_batch == 0).all() and (first_md == 0).all()
    for text in (
        "on its first send to that topic",
        "`metadata.max.age.ms` (5 minutes)",
        "when it loses a connection",
        "The model sends that request when the producer is created, not on its first send",
    ):
        assert text in SRC, text
    assert "A producer asks for metadata when it starts" not in SRC
    assert "Clients that start, restart or refresh then" not in SRC


def test_step_1_update_metadata_follows_the_leader_and_isr():
    runs = _runs()
    c = ui.controller_table(runs).reset_index()
    b1 = c[(c["run"] == OFF) & (c["broker"] == 1)].set_index("api")
    lai, um = b1.loc["LeaderAndIsr"], b1.loc["UpdateMetadata"]
    # one request in flight per broker: the UpdateMetadata leaves once the LeaderAndIsr is answered
    assert um["sent at (ms)"] >= lai["applied at (ms)"]
    assert (f"{lai['waited (ms)']:.1f}", f"{lai['applied at (ms)']:.1f}") == ("16.8", "21.8")
    assert (f"{um['sent at (ms)']:.1f}", f"{um['waited (ms)']:.1f}", f"{um['applied at (ms)']:.1f}") == (
        "21.8",
        "10.3",
        "32.6",
    )
    off, on = incident_summary(runs[OFF]), incident_summary(runs[ON])
    assert f"{off['stale_ms'][1]:.1f}" == "28.6"
    assert {f"{v:.1f}" for v in (off["stale_ms"][2], off["stale_ms"][3], *on["stale_ms"].values())} == {"1.6"}
    for text in (
        "at **21.8 ms**",
        "(at **21.8 ms**:",
        "waits **10.3 ms**",
        "for **28.6 ms**",
        "for **1.6 ms**",
        "until **32.6 ms**",
        "here 28.6 ms for a 16.8 ms `LeaderAndIsr` wait",  # the takeaway
    ):
        assert text in SRC, text
    assert check("06.why_longer", "c").ok
    # the decision's time is the model's decided_ms
    assert set(runs[OFF].staleness["decided_ms"]) == {4.0} and "(at 4 ms, when its ZooKeeper write is done" in SRC


def test_step_2_who_gets_stale_metadata():
    runs = _runs()
    t = ui.stale_answers_table(runs, broker_id=1)
    assert list(t["Metadata answers naming the old leader"]) == [59, 31]
    stale = stale_answers(runs[OFF], 1)
    producers = stale[stale["client_id"].str.startswith("producer-")]["answered_ms"]
    admins = stale[stale["client_id"].str.startswith("admin-")]["answered_ms"]
    assert len(producers) + len(admins) == len(stale)  # the incident has no other clients
    assert (len(producers), f"{producers.min():.1f}", f"{producers.max():.1f}") == (30, "4.0", "5.2")
    assert (len(admins), f"{admins.max():.1f}") == (29, "32.5")
    on = stale_answers(runs[ON], 1)
    assert (on["client_id"].str.startswith("producer-").sum(), on["client_id"].str.startswith("admin-").sum()) == (
        30,
        1,
    )
    # no producer asks broker 1 between its LeaderAndIsr and its UpdateMetadata: the refresh waits retry.backoff.ms;
    # the admin clients, which ask every 5 ms, do
    s = incident_summary(runs[OFF])
    window = (s["lai_applied_ms"][1], s["lai_applied_ms"][1] + 10.8)
    assert ex.metadata_answers_between(runs[OFF], 1, *window, clients="producer-") == 0
    assert ex.metadata_answers_between(runs[OFF], 1, *window, clients="admin-") > 0
    first = wrong_leader_answers(runs[OFF])["end_ms"].min()  # "from 21.8 ms on": once broker 1 applied its LeaderAndIsr
    assert s["lai_applied_ms"][1] < first < 22 and "from **21.8 ms** on" in SRC
    for text in (
        "**59** stale answers",
        "**31** with it",
        "**30** of them (30 with",
        "between **4.0** and **5.2 ms**",
        "The other **29** (**1** with",
        "until **32.5 ms**",
    ):
        assert text in SRC, text
    assert check("06.refresh", "b").ok


def test_step_2_a_crowd_of_first_metadata_requests():
    runs = _runs(producers=400, until_ms=80)
    off, on = incident_summary(runs[OFF]), incident_summary(runs[ON])
    assert (f"{off['lai_wait_ms'][1]:.1f}", f"{off['stale_ms'][1]:.1f}") == ("22.0", "55.6")
    assert (off["stale_answers"][1], on["stale_answers"][1]) == (259, 62)
    assert (off["not_leader_answers"], on["not_leader_answers"]) == (468, 311)
    assert (off["truncated_records"], on["truncated_records"]) == (1700, 0)
    for text in (
        "waits **22.0 ms**",
        "stale for **55.6 ms**",
        "**259** `Metadata`",
        "(**62** with",
        "**468**",
        "**1700** records",
        "with it **311**",
    ):
        assert text in SRC, text
    fig = ui.wrong_leader_figure(runs)
    assert f"refused with NOT_LEADER_OR_FOLLOWER ({OFF}): 468" in [t.name for t in fig.data]


def test_step_3_the_control_plane_per_broker():
    moves = _moves()
    s = {k: incident_summary(r) for k, r in moves.items()}
    none, one, two, every = (s[k] for k in moves)
    assert f"{none['lai_wait_ms'][1]:.1f}" == "11.0" and f"{none['lai_wait_ms'][2]:.1f}" == "14.1"
    assert [f"{x['unavailable_ms']:.1f}" for x in (none, one, two, every)] == ["3.1", "14.0", "3.1", "0.0"]
    assert [f"{x['two_leaders_ms']:.1f}" for x in (none, one, two, every)] == ["0.0", "0.0", "0.0", "0.0"]
    assert [x["truncated_records"] for x in (none, one, two, every)] == [1770, 0, 1770, 0]
    # the two sides: broker 2's setting alone is never used (the controller's broker 1 lacks it), to the record
    assert two == none and moves["control plane on broker 2"].ledger.equals(moves["no control plane"].ledger)
    assert two["lai_route"] == dict.fromkeys((1, 2, 3), ("INTERNAL", "data"))
    assert one["lai_route"] == {1: ("CONTROLLER", "control"), 2: ("CONTROLLER", "data"), 3: ("CONTROLLER", "data")}
    # the gap is from the old leader resigning to the new one taking over
    for label, x in (("no control plane", none), ("control plane on broker 1", one)):
        lead = leadership(moves[label])
        assert lead.iloc[1]["start_ms"] - lead.iloc[0]["end_ms"] == x["unavailable_ms"]
    assert f"{leadership(moves['no control plane']).iloc[0]['end_ms']:.1f}" == "16.0"
    assert f"{leadership(moves['control plane on broker 1']).iloc[0]['end_ms']:.1f}" == "5.1"
    assert {
        f"{leadership(moves[k]).iloc[1]['start_ms']:.1f}" for k in ("no control plane", "control plane on broker 1")
    } == {"19.1"}
    for text in (
        "**no leader for 3.1 ms**",
        "No leader for **14.0 ms**",
        "exactly as with none, to the record (no leader for 3.1 ms, **1770** truncated)",
        "**1770**",
        "waits 11.0 ms and broker 2's 14.1 ms",
        "resigns at 16.0 ms",
        "takes over at\n  19.1 ms",
    ):
        assert text in SRC, text
    assert check("06.half_migrated", "c").ok and check("06.which_brokers", "c").ok
    t = ui.summary_table(moves)
    assert t.loc["orders-0: mean batch latency (ms)", "control plane on broker 1"] == "—"  # no retry answered in 60 ms


def test_what_the_live_panel_text_promises():
    o = lab06.PANEL_OPTIONS
    n = {
        p: incident_summary(stale_metadata_incident(control_plane=False, producers=p, **o))["stale_answers"][1]
        for p in (100, 200, 300, 400)
    }
    assert n[100] <= n[200] < n[300] < n[400] and n[400] > 3 * n[200]


def test_the_panels_busy_new_leader_shows_two_leaders_and_why():
    """With 5 partitions busy broker 2's LeaderAndIsr waits less than broker 1's: two leaders, no gap. The lab
    says so and why, in the panel's own numbers."""
    o = lab06.PANEL_OPTIONS
    res = unavailability_incident(control_plane=False, producers=200, **o)
    s = incident_summary(res)
    assert (f"{s['lai_wait_ms'][2]:.1f}", f"{s['lai_wait_ms'][1]:.1f}") == ("9.2", "11.0")
    assert (f"{s['lai_applied_ms'][2]:.1f}", f"{s['lai_applied_ms'][1]:.1f}") == ("14.3", "16.0")
    assert (f"{s['two_leaders_ms']:.1f}", s["unavailable_ms"]) == ("1.7", 0.0)
    assert "Two leaders for 1.7 ms, no leader for 0.0 ms" in ui.summary_html(res)
    # broker 1's wait is step 3's: the same backlog (one orders-0 batch per producer)
    assert f"{incident_summary(ex.unavailable_run(False))['lai_wait_ms'][1]:.1f}" == "11.0"
    # the control plane on both (the controller's broker 1 among them) removes the race
    both = incident_summary(unavailability_incident(control_plane={1: True, 2: True, 3: False}, producers=200, **o))
    assert both["two_leaders_ms"] == both["unavailable_ms"] == 0
    for text in (
        "two leaders for\n**1.7 ms**",
        "waits **9.2 ms**",
        "broker 1's **11.0 ms**",
        "takes over at **14.3 ms**, before broker 1 resigns at **16.0 ms**",
    ):
        assert text in SRC, text


def test_the_takeaway_says_in_the_model():
    """The control plane's windows, in the model: 1.6 ms of staleness, no time with two leaders or none."""
    for res in (ex.stale_run(True), ex.unavailable_run(True)):
        s = incident_summary(res)
        assert {f"{v:.1f}" for v in s["stale_ms"].values()} == {"1.6"}
        assert s["two_leaders_ms"] == s["unavailable_ms"] == 0
    assert "In the model, KIP-291 turns each of these windows" in SRC and "**1.6 ms** of stale metadata" in SRC
    assert "into about a millisecond" not in SRC


def test_primary_control_and_the_busy_broker_toggle():
    panel = lab06.staleness_panel(producers=200)
    control, output = find(panel, PRIMARY_CONTROL), find(panel, PRIMARY_OUTPUT)
    before = output.value
    assert "Metadata stale" in before
    control.value = 400
    crowd = output.value
    assert crowd != before
    toggle = next(w for w in panel.children if getattr(w, "description", "") == "the busy broker is")
    toggle.value = lab06.BUSY_BROKER["2, the new leader"]
    assert output.value != crowd and "no leader for" in output.value


def test_step_3_where_the_controller_runs():
    """The lab's extra run: the controller on broker 3, the control plane on brokers 2 and 3. The new leader
    serves its LeaderAndIsr on its control plane, the old leader (not naming CONTROLLER) on its data plane:
    two leaders, the case 'broker 2 only' cannot make while the controller is on broker 1."""
    assert (
        "elsewhere = unavailability_incident(control_plane={2: True, 3: True}, controller=3, producers=200, burst=1,\n"
        "                                    rate_per_s=20, partitions=20, until_ms=60)" in SRC
    )
    assert _first("elsewhere = ") > _first('check("06.which_brokers"')
    r = unavailability_incident(control_plane={2: True, 3: True}, controller=3, **LOAD, until_ms=60)
    s = incident_summary(r)
    assert s["controller"] == 3
    assert s["lai_route"] == {1: ("CONTROLLER", "data"), 2: ("CONTROLLER", "control"), 3: ("CONTROLLER", "control")}
    assert f"{s['lai_wait_ms'][1]:.1f}" == "11.0" and s["lai_wait_ms"][2] < 0.1
    assert (f"{s['two_leaders_ms']:.1f}", s["unavailable_ms"], s["truncated_records"]) == ("11.0", 0.0, 1780)
    assert f"{leadership(r).iloc[0]['end_ms']:.1f}" == "16.0"
    for text in ("where it waits **11.0 ms**", "**two** leaders for **11.0 ms**", "**1780** records"):
        assert text in SRC, text
    t = ui.controller_table({"x": r}).reset_index()
    assert list(t.columns[:5]) == ["run", "broker", "api", "listener", "plane"]


def test_the_which_brokers_feedback_teaches_both_sides():
    assert "whose config picks the listener" in check("06.which_brokers", "b").hint
    assert "exactly as with no control plane" in check("06.which_brokers", "b").message
    assert "broker 3 is not needed" in check("06.which_brokers", "d").message
    assert "on its data plane" in check("06.half_migrated", "b").message

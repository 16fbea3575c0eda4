"""Crash and pause as events of the cluster (kafka_lab/sim/zk/lifecycle.py, session.py; server/node.py).

The truths: Kafka 2.8's ``zookeeper.session.timeout.ms`` default (18000, KafkaConfig) and what the controller
does only once a session has expired (``BrokerChangeHandler`` → ``onBrokerFailure``; ``/controller`` deleted →
a new election); ``RequestSendThread`` sends what its queue holds when it runs again; ``KafkaController``'s
``beforeInitializingSession`` resigns a controller whose session expired; brokers refuse an older controller
epoch (``STALE_CONTROLLER_EPOCH``). Every run has its seed; the expected times are the schedule's own numbers.
"""

from __future__ import annotations

import pytest
import simpy

from kafka_lab.sim import Cluster
from kafka_lab.sim.server.node import Node

ZK = 2.0  # the cluster's zk_latency_ms


def _cluster(seed=1, **kw):
    c = Cluster(3, seed=seed, **kw)
    c.create_topic("t", partitions=3, replication_factor=3, min_insync_replicas=2)
    c.producer("p", topic="t", acks="all").open_loop(rate_per_s=200)
    return c


def _failures(c, bid):
    return [t for t, _c, ev, d in c.controller.events if ev == "broker_failure" and d["broker"] == bid]


# -- the Node gate -----------------------------------------------------------------------------------------
def test_a_paused_node_holds_its_threads_and_timers_and_resumes_them_with_what_they_had():
    env = simpy.Environment()
    node = Node(env, "broker 9")
    seen = []

    def thread():
        v = yield env.timeout(10, value="ten")
        seen.append(("thread", env.now, v))

    node.thread(thread())
    node.timer(20, lambda _e: seen.append(("timer", env.now)))
    fired = node.deferred(lambda x: seen.append(("callback", env.now, x)))
    env.timeout(5).callbacks.append(lambda _e: node.pause())
    env.timeout(15).callbacks.append(lambda _e: fired("late"))
    env.timeout(50).callbacks.append(lambda _e: node.resume())
    env.run(until=49)
    assert seen == []  # nothing ran during the pause: not the thread's wake, the timer, or the callback
    env.run(until=60)
    assert seen == [("callback", 50, "late"), ("timer", 50), ("thread", 50, "ten")]


def test_a_node_stopped_during_a_pause_runs_nothing_it_held():
    env = simpy.Environment()
    node = Node(env, "broker 9")
    seen = []

    def thread():
        yield env.timeout(10)
        seen.append("thread")

    node.thread(thread())
    node.timer(20, lambda _e: seen.append("timer"))
    env.timeout(5).callbacks.append(lambda _e: node.pause())
    env.timeout(30).callbacks.append(lambda _e: node.stop())
    env.run(until=100)
    assert seen == [] and not node.paused and not node.alive


# -- crash ---------------------------------------------------------------------------------------------------
def test_the_session_timeout_is_kafka_2_8s_default():
    c = Cluster(3, seed=1)
    assert {b.config.zk_session_timeout_ms for b in c.brokers.values()} == {18000}


@pytest.mark.parametrize("timeout", [None, 6000])
def test_a_crashed_brokers_session_outlives_it_by_the_session_timeout(timeout):
    over = {} if timeout is None else {"zookeeper_session_timeout_ms": timeout}
    c = _cluster(broker_overrides=over)
    expiry = 1000 + (timeout or 18000)
    c.crash(2, at_ms=1000)
    c.run(until_ms=expiry - 1)
    assert not c.brokers[2].online
    assert _failures(c, 2) == []  # nothing yet: the cluster still counts it live
    assert 2 in c.controller.live_brokers
    assert all(2 in st["isr"] for st in c.controller.state.values())
    c.run(until_ms=expiry + 50)
    assert _failures(c, 2) == [expiry + ZK]  # the watch fires, then onBrokerFailure
    assert all(2 not in st["isr"] and st["leader"] != 2 for st in c.controller.state.values())
    assert ("session_expired" in [e for _t, e, _d in c.brokers[2].lifecycle]) and c.brokers[2].lifecycle[0][
        1
    ] == "crashed"


def test_a_crashed_controllers_session_takes_controller_with_it_at_the_timeout():
    c = _cluster()
    c.crash(1, at_ms=1000)
    c.run(until_ms=18999)
    assert c.controller.id == 1 and [e for _t, _c, e, _d in c.controller.events] == []
    c.run(until_ms=19100)
    ev = [(t, cid, e) for t, cid, e, _d in c.controller.events]
    assert ev[0] == (19000.0, 1, "resigned")
    assert ev[1][2] == "elected" and ev[1][1] in (2, 3) and c.controller.epoch == 2
    assert all(st["leader"] != 1 and 1 not in st["isr"] for st in c.controller.state.values())


def test_a_crashed_broker_restarts_only_after_its_session_expired():
    c = _cluster()
    with pytest.raises(ValueError, match="NodeExists"):
        c.crash(2, at_ms=1000, down_ms=17999)
    c.crash(2, at_ms=1000, down_ms=20000)
    c.run(until_ms=26000)
    life = [e for _t, e, _d in c.brokers[2].lifecycle]
    assert life == ["crashed", "session_expired", "starting", "started"]
    assert c.brokers[2].online and c.brokers[2].broker_epoch == 2
    # it came back through the normal start-up: the controller's onBrokerStartup, then the leaders took it back
    assert any(ev == "broker_startup" and d["broker"] == 2 for _t, _c, ev, d in c.controller.events)
    assert all(2 in st["isr"] for st in c.controller.state.values())


# -- pause ---------------------------------------------------------------------------------------------------
def _queued_at_pause(pause_ms):
    """The controller decides a leader move at 1000 (its LeaderAndIsr in flight, its UpdateMetadata queued
    behind them, one request in flight per broker) and pauses a microsecond later."""
    c = _cluster()
    c.controller.elect_leader(("t", 0), 2, at_ms=998)
    c.pause(1, at_ms=1000.001, for_ms=pause_ms)
    res = c.run(until_ms=1000.001 + pause_ms + 100)
    r = res.requests
    return c, r[r["client_id"] == "controller-1"]


def test_a_paused_controllers_queued_requests_are_sent_when_it_wakes():
    c, r = _queued_at_pause(5000)
    lai, um = r[r["api"] == "LeaderAndIsr"], r[r["api"] == "UpdateMetadata"]
    assert list(lai["sent_ms"]) == [1000.0] * 3
    assert len(um) == 3 and um["sent_ms"].min() >= 6000.001  # held in the channels, sent when it wakes
    assert set(um["error"]) == {"NONE"}  # its session lived: it is still the controller
    assert c.controller.id == 1 and c.controller.epoch == 1


def test_a_paused_controller_past_its_session_is_a_zombie_whose_requests_are_fenced():
    c, r = _queued_at_pause(20000)
    um = r[r["api"] == "UpdateMetadata"]
    wake = 21000.001
    assert len(um) == 3 and um["sent_ms"].min() >= wake  # the zombie's queue goes out when it wakes
    others = um[um["broker_id"] != 1]
    # brokers 2 and 3 heard from controller epoch 2 at its election (19000 + ...): epoch 1 is refused
    assert list(others["error"]) == ["STALE_CONTROLLER_EPOCH"] * 2
    ev = [(t, cid, e) for t, cid, e, _d in c.controller.events]
    assert (19000.001, 1, "resigned") in ev and c.controller.epoch == 2 and c.controller.id in (2, 3)
    assert (wake + ZK, 1, "zombie_resigned") in ev  # its Expire event, once its client hears of the expiry
    assert [e for _t, e, _d in c.brokers[1].lifecycle] == [
        "paused",
        "session_expired",
        "resumed",
        "session_expired_seen",
        "registered",
    ]


def test_a_deposed_paused_controller_writes_nothing_it_was_deciding():
    """The election decided at 998 waits for its ZooKeeper write when the controller pauses (at 1000): with the
    session gone and a new controller elected, the write fails (2.8) and the move is never made."""
    c = _cluster()
    c.controller.elect_leader(("t", 0), 2, at_ms=998)
    c.pause(1, at_ms=1000, for_ms=20000)
    c.run(until_ms=21100)
    after = [(t, c.controller.controller_at(t)[0]) for t, *_ in c.controller.decisions if t >= 1000]
    assert after and all(cid != 1 for _t, cid in after)  # every decision after the pause is the new controller's
    assert not any(21000 <= t < 21100 for t, *_ in after)  # none when the zombie woke (its write failed)
    c2 = _cluster()
    c2.controller.elect_leader(("t", 0), 2, at_ms=998)
    c2.pause(1, at_ms=1000, for_ms=5000)  # shorter than the session: the same controller goes on after it
    c2.run(until_ms=6100)
    assert [(t, leader) for t, tp, p, leader, *_ in c2.controller.decisions if p == 0] == [(6000.0, 2)]


@pytest.mark.parametrize("fault", ["pause", "crash"])
def test_a_paused_or_crashed_broker_does_nothing(fault):
    """Broker 2 (leader of t-1, follower of the rest) frozen or dead from 1000 to 6000: no request reaches a
    handler of it, it sends none (fetches, AlterIsr), its logs do not change, no timer of it fires."""
    c = _cluster(broker_overrides={"zookeeper_session_timeout_ms": 30000, "replica_lag_time_max_ms": 1000})
    logs = {}

    def snap(key):
        def at(_e):
            logs[key] = {
                tp: (p.log.leo, len(p.log.batches)) for tp, p in c.brokers[2].replica_manager.partitions.items()
            }

        return at

    c.env.timeout(1000.0001).callbacks.append(snap("start"))
    c.env.timeout(5999.999).callbacks.append(snap("end"))
    if fault == "pause":
        c.pause(2, at_ms=1000, for_ms=5000)
    else:
        c.crash(2, at_ms=1000)
    res = c.run(until_ms=6000)
    r = res.requests
    handled = r[(r["broker_id"] == 2) & (r["dequeue_ms"] > 1000) & (r["dequeue_ms"] < 6000)]
    assert len(handled) == 0
    mine = r["client_id"].str.startswith("broker-2-") | (r["client_id"] == "controller-2")
    assert len(r[mine & (r["sent_ms"] > 1000) & (r["sent_ms"] < 6000)]) == 0
    assert logs["start"] == logs["end"] and sum(leo for leo, _n in logs["start"].values()) > 0
    # its isr-expiration would shrink t-1's ISR every 500 ms (its followers stopped fetching from a silent
    # leader? no: they fetch, it answers nothing); no event of its replica manager in the window
    assert [e for e in c.brokers[2].replica_manager.events if 1000 < e[0] < 6000] == []
    # and the peers waited: the producer's requests to it are unanswered, not handled
    if fault == "pause":
        waiting = r[(r["broker_id"] == 2) & (r["sent_ms"] > 1000) & (r["sent_ms"] < 6000)]
        assert len(waiting) > 0


def test_a_paused_broker_wakes_and_handles_what_waited():
    c = _cluster()
    c.pause(2, at_ms=1000, for_ms=3000)
    res = c.run(until_ms=4200)
    r = res.requests
    waited = r[(r["broker_id"] == 2) & (r["sent_ms"] > 1000) & (r["sent_ms"] < 4000)]
    assert len(waited) and waited["dequeue_ms"].min() >= 4000
    assert [e for _t, e, _d in c.brokers[2].lifecycle] == ["paused", "resumed"]
    assert _failures(c, 2) == []  # a pause shorter than the session: the controller never knew


def test_crash_and_pause_refuse_bad_input():
    c = _cluster()
    with pytest.raises(ValueError, match="not in the cluster"):
        c.crash(7, at_ms=10)
    with pytest.raises(ValueError, match="at_ms"):
        c.pause(1, at_ms=-1, for_ms=10)
    with pytest.raises(ValueError, match="for_ms"):
        c.pause(1, at_ms=10, for_ms=float("nan"))
    with pytest.raises(ValueError, match=r"request\.timeout\.ms"):
        c.pause(1, at_ms=10, for_ms=30000)
    c.pause(1, at_ms=10, for_ms=29999)


def test_what_a_paused_controller_queues_with_nothing_in_flight_goes_out_when_it_wakes():
    c = _cluster()
    c.pause(1, at_ms=1000, for_ms=5000)
    c.controller.send(c.brokers[3], "UpdateMetadata", [], at_ms=3000)  # queued while its thread is frozen
    res = c.run(until_ms=6100)
    r = res.requests
    sent = r[(r["client_id"] == "controller-1") & (r["sent_ms"] > 1000)]
    assert list(sent["sent_ms"]) == [6000.0] and list(sent["broker_id"]) == [3]


@pytest.mark.parametrize("seed", range(6))
def test_a_paused_broker_does_not_race_for_controller(seed):
    """``/controller`` deleted while broker 2 is frozen: its watch fires when it wakes, too late to race."""
    c = _cluster(seed=seed)
    c.pause(2, at_ms=1000, for_ms=3000)
    c.move_controller(at_ms=1500)
    c.run(until_ms=1600)
    assert c.controller.id in (1, 3) and c.controller.epoch == 2


def test_a_zombie_leaders_alter_isr_is_refused_as_from_an_unknown_broker():
    """Broker 1 leads t-0, whose follower 3 stopped fetching at the start, and pauses past its session before
    its isr-expiration shrinks the ISR; woken, it shrinks it and sends AlterIsr before it has registered again:
    the controller no longer counts it live (``processAlterIsr``: "Ignoring AlterIsr due to unknown broker"),
    STALE_BROKER_EPOCH."""
    c = _cluster(broker_overrides={"zookeeper_session_timeout_ms": 3000, "replica_lag_time_max_ms": 1000})
    c.env.timeout(0).callbacks.append(lambda _e: c.brokers[3].fetchers.stop_fetching(("t", 0)))
    c.pause(1, at_ms=600, for_ms=5000)
    res = c.run(until_ms=5800)
    r = res.requests
    alter = r[(r["client_id"] == "broker-1-alter-isr") & (r["sent_ms"] >= 5600)]
    assert len(alter) and alter.iloc[0]["error"] == "STALE_BROKER_EPOCH"
    assert alter.iloc[0]["sent_ms"] < 5604.0  # before its new session registered it (wake + 2 round trips)


def test_a_paused_leader_applies_its_alter_isr_answer_only_when_it_wakes():
    """Broker 2 leads t-1 and shrinks its ISR (follower 3 stopped fetching it) and freezes right after it sent its
    AlterIsr to the controller (broker 1): the answer comes while it is frozen and is applied when it wakes."""
    c = _cluster(broker_overrides={"replica_lag_time_max_ms": 1000})
    c.env.timeout(0).callbacks.append(lambda _e: c.brokers[3].fetchers.stop_fetching(("t", 1)))
    sent = []

    def watch(_e):  # freeze broker 2 right after it sends its AlterIsr
        if any(q.api == "AlterIsr" and q.client_id == "broker-2-alter-isr" for q in c.log):
            sent.append(c.env.now)
            c.pause(2, at_ms=c.env.now, for_ms=2000)
        else:
            c.env.timeout(0.25).callbacks.append(watch)

    c.env.timeout(0.25).callbacks.append(watch)
    res = c.run(until_ms=5000)
    assert sent
    r = res.requests
    answered = r[r["client_id"] == "broker-2-alter-isr"]["end_ms"].iloc[0]
    assert answered < sent[0] + 10  # the controller answered at once
    applied = [t for t, kind, _tp, p, _d in c.brokers[2].replica_manager.events if kind == "isr_shrink" and p == 1]
    assert applied and applied[0] == sent[0] + 2000


def test_a_controller_deposed_under_a_live_session_while_paused_sends_its_queue_then_resigns():
    """``/controller`` deleted while the controller is frozen (its session alive): a new controller is elected;
    the old one wakes, sends what it had queued with its old epoch (refused), and resigns a round trip later
    (``Reelect`` → ``maybeResign``)."""
    c = _cluster()
    c.controller.elect_leader(("t", 0), 2, at_ms=998)
    c.pause(1, at_ms=1000.001, for_ms=3000)
    c.move_controller(at_ms=1500)
    res = c.run(until_ms=4100)
    r = res.requests
    um = r[(r["client_id"] == "controller-1") & (r["api"] == "UpdateMetadata")]
    assert um["sent_ms"].min() >= 4000.001
    assert list(um[um["broker_id"] != 1]["error"]) == ["STALE_CONTROLLER_EPOCH"] * 2
    ev = [(t, cid, e) for t, cid, e, _d in c.controller.events]
    assert (4000.001 + ZK, 1, "zombie_resigned") in ev and c.controller.id in (2, 3)
    assert [e for _t, e, _d in c.brokers[1].lifecycle] == ["paused", "resumed"]  # its session never expired


def test_a_paused_brokers_controlled_shutdown_begins_when_it_wakes():
    c = _cluster()
    c.pause(2, at_ms=1000, for_ms=2000)
    c.restart_broker(2, at_ms=1500, down_ms=100)
    c.run(until_ms=3500)
    life = [(t, e) for t, e, _d in c.brokers[2].lifecycle]
    assert life[:3] == [(1000, "paused"), (3000, "resumed"), (3000, "shutting_down")]


def test_a_broker_that_crashes_during_its_controlled_shutdown_leaves_as_a_crash_does():
    """Its shutdown dies with it: no clean close of its session, so the controller acts only at the expiry."""
    c = _cluster(broker_overrides={"zookeeper_session_timeout_ms": 4000})
    c.restart_broker(2, at_ms=1000, down_ms=100)
    c.crash(2, at_ms=1000.01)  # while its ControlledShutdown is at the controller
    c.run(until_ms=6000)
    life = [e for _t, e, _d in c.brokers[2].lifecycle]
    assert "shut_down" not in life and "starting" not in life and life[-1] == "session_expired"
    assert not c.brokers[2].online and _failures(c, 2) == [1000.01 + 4000 + ZK]


def test_restarting_a_crashed_broker_before_its_session_expired_fails_its_start_up():
    c = _cluster(broker_overrides={"zookeeper_session_timeout_ms": 4000})
    c.crash(2, at_ms=1000)
    c.restart_broker(2, at_ms=2000, down_ms=500)  # an operator's restart of the dead broker, at 2500: too soon
    c.run(until_ms=6000)
    life = [(t, e) for t, e, _d in c.brokers[2].lifecycle]
    assert life == [
        (1000, "crashed"),
        (2000, "restart_of_a_stopped_broker"),
        (2500, "starting"),
        (2500, "startup_failed"),
        (5000, "session_expired"),
    ]
    assert not c.brokers[2].online
    c2 = _cluster(broker_overrides={"zookeeper_session_timeout_ms": 4000})
    c2.crash(2, at_ms=1000)
    c2.restart_broker(2, at_ms=4000, down_ms=1500)  # at 5500, after the expiry at 5000: it starts
    c2.run(until_ms=6000)
    assert c2.brokers[2].online and [e for _t, e, _d in c2.brokers[2].lifecycle][-1] == "started"


def test_a_crashed_leader_keeps_its_log_and_truncates_what_it_alone_had_when_it_returns():
    """Broker 1 leads t-0 (acks=1) and crashes with a batch its followers had not fetched: the batch stays on its
    disk while it is down. Once broker 2 leads without it, the ledger calls it ``truncated`` (its definition: the
    leader lacks it, and the down replica's copy is above the point where it will truncate when it follows); when
    broker 1 comes back as broker 2's follower its fetch finds the divergence by leader epoch and removes it."""
    c = Cluster(3, seed=1, broker_overrides={"zookeeper_session_timeout_ms": 3000})
    c.create_topic("t", partitions=1, replication_factor=3)
    c.producer("p", topic="t", acks="1").open_loop(rate_per_s=2000)
    c.crash(1, at_ms=1000, down_ms=4000)
    down = c.run(until_ms=4500)
    log1 = c.brokers[1].replica_manager.partitions[("t", 0)].log
    leo_down = log1.leo
    gone = down.ledger[down.ledger["outcome"] == "truncated"]
    assert len(gone) == 1 and int(gone["batch_id"].iloc[0]) in log1.batch_ids()  # still on the down broker's disk
    res = c.run(until_ms=8000)
    cut = [d for t, kind, _tp, _p, d in c.brokers[1].replica_manager.events if kind == "truncated" and t > 5000]
    assert len(cut) == 1 and cut[0]["reason"] == "diverging epoch" and cut[0]["offset"] < leo_down
    lg = res.ledger
    lost = lg[lg["outcome"] == "truncated"]
    assert sorted(lost["batch_id"]) == sorted(cut[0]["batch_ids"]) and set(lost["acks"]) == {1}


def test_an_event_that_comes_to_a_frozen_controller_is_handled_when_it_wakes():
    """Broker 2 crashes at 500; its session expires at 2500 while the controller (broker 1) is frozen from 1000 to
    2900 (its own session, 2000 ms, lives: it wakes at 2900, before 3000). The BrokerChange waits for it:
    onBrokerFailure runs at 2900, not at the watch's 2502."""
    c = _cluster(broker_overrides={"zookeeper_session_timeout_ms": 2000})
    c.pause(1, at_ms=1000, for_ms=1900)
    c.crash(2, at_ms=500)
    c.run(until_ms=3500)
    assert c.controller.id == 1 and c.controller.epoch == 1
    assert _failures(c, 2) == [2900.0]

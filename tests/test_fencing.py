"""Election safety and fencing: the zombie controller (KAFKA-6082, the controller epoch) and the bounced
broker (KIP-380), with hypothesis over pause lengths and timings."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_lab.sim import broker_restart_race, zombie_controller
from kafka_lab.sim.zk.fencing import controller_election

TIMEOUT = 6000  # zookeeper.session.timeout.ms in 2.2


def test_first_election_gives_epoch_1_and_every_crash_one_more():
    r = controller_election(brokers=3, crashes=2, seed=3)
    assert list(r.elections["epoch"]) == [1, 2, 3]
    assert r.elections["controller"].nunique() == 3  # a crashed broker never wins again here
    zk = r.zookeeper
    lost = zk[(zk["op"] == "Multi") & (zk["result"] != "OK")]
    assert set(lost["result"]) <= {"NODEEXISTS", "BADVERSION"}
    assert (zk[(zk["op"] == "Multi")]["result"] == "OK").sum() == 3  # one winner per round


def test_before_2_1_the_epoch_is_bumped_after_the_create():
    r = controller_election(brokers=3, crashes=1, seed=0, version="1.0")
    assert list(r.elections["epoch"]) == [1, 2]
    zk = r.zookeeper
    assert "Multi" not in set(zk["op"])
    mine = zk[(zk["broker"] == r.elections["controller"].iloc[0]) & zk["path"].str.startswith("/controller")]
    assert mine["op"].tolist()[:4] == ["GetData", "Create", "GetData", "SetData"]
    assert mine["result"].tolist()[:4] == ["NONODE", "OK", "OK", "OK"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), brokers=st.integers(2, 6), version=st.sampled_from(["1.0", "2.8"]))
def test_election_safety(seed, brokers, version):
    """At most one controller per epoch; epochs only grow."""
    r = controller_election(brokers=brokers, crashes=1, seed=seed, session_timeout_ms=500, version=version)
    e = r.elections
    assert e["epoch"].is_unique and e["epoch"].is_monotonic_increasing
    assert list(e["epoch"]) == list(range(1, len(e) + 1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    cause=st.sampled_from(["gc_pause", "znode_deleted"]),
    pause=st.floats(0.2 * TIMEOUT, 3 * TIMEOUT),
    reconnect=st.floats(0, 200),
    pause_at=st.floats(50, 500),
    lag=st.floats(0, 200),
)
def test_with_fencing_no_stale_request_or_write_is_ever_applied(seed, cause, pause, reconnect, pause_at, lag):
    r = zombie_controller(
        fencing=True,
        seed=seed,
        cause=cause,
        pause_ms=pause,
        reconnect_ms=reconnect,
        pause_at_ms=pause_at,
        event_lag_ms=lag,
    )
    assert r.applied_stale == 0 and r.stale_writes == 0
    # election safety: every request a broker applied under an epoch came from one controller
    applied = r.requests[r.requests["error"] == "NONE"]
    assert (applied.groupby("controller_epoch")["controller_id"].nunique() == 1).all()
    assert r.damage["controller_vs_zookeeper"] == 0 and r.damage["two_leaders_believed"] == 0
    # refused by the brokers and by the expired session; a pause of exactly the timeout ends as ZooKeeper's deadline
    # comes, and the model lets the woken client's ping in first (its session lives): hypothesis found that tie
    if cause == "gc_pause" and pause > TIMEOUT:
        assert (r.requests["error"] == "STALE_CONTROLLER_EPOCH").any()
        assert r.events["event"].str.contains("failed: SESSIONEXPIRED").any()


def test_without_fencing_the_zombie_does_damage():
    r = zombie_controller(fencing=False, seed=1)
    assert r.stale_writes == 1  # ZooKeeper took a write from epoch 1 after epoch 2 was elected
    assert r.applied_stale > r.stale_writes  # and brokers applied its requests
    assert r.damage["controller_vs_zookeeper"] == 1
    assert r.damage["two_leaders_believed"] >= 1
    assert r.damage["metadata_names_a_non_leader"] >= 1
    # as 1.0's ZkClient did: a new session, then the write retried on it
    assert r.events["event"].str.contains("ZkClient reconnected with a new session").any()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), cause=st.sampled_from(["gc_pause", "znode_deleted"]))
def test_without_fencing_the_damage_is_reproduced_whatever_the_timings(seed, cause):
    """Past the session timeout (or with /controller deleted), the deposed controller's write always lands and
    its requests are applied: the parties disagree afterwards."""
    r = zombie_controller(fencing=False, seed=seed, cause=cause)
    assert r.stale_writes == 1 and r.applied_stale > 1
    assert r.damage["controller_vs_zookeeper"] == 1 and r.damage["two_leaders_believed"] >= 1
    # "fencing off" is every 2.2 fence off at once: the broker epoch (KIP-380, 2.2) too
    assert not r.requests["error"].str.startswith("STALE_").any()


def test_after_a_gc_pause_the_expired_session_refuses_the_write():
    """1.1+: the new session is opened only once the Expire event runs (beforeInitializingSession), so the
    write of the event in progress goes out on the expired session: SESSIONEXPIRED, before any epoch check."""
    on = zombie_controller(fencing=True, seed=1)
    assert on.applied_stale == 0 and (on.requests["error"] == "STALE_CONTROLLER_EPOCH").sum() == 2
    ev = on.events["event"]
    assert ev.str.contains("write of orders-1 failed: SESSIONEXPIRED").any()
    assert not ev.str.contains("BADVERSION").any()
    assert ev.str.contains("Expire: resigned").any()


def test_a_deleted_controller_znode_is_fenced_by_the_epoch_check_alone():
    """The talk's second zombie: /controller deleted by hand, the old controller's session alive. Only
    KAFKA-6082's check on /controller_epoch refuses its write; without it, the write lands."""
    on = zombie_controller(fencing=True, seed=1, cause="znode_deleted")
    ev = on.events["event"]
    assert on.applied_stale == 0 and on.stale_writes == 0
    assert ev.str.contains("write of orders-1 failed: BADVERSION").any()
    assert ev.str.contains("Controller epoch zkVersion check fails; resigning").any()
    assert not ev.str.contains("SESSIONEXPIRED|paused").any()  # its session never ended
    off = zombie_controller(fencing=False, seed=1, cause="znode_deleted")
    assert off.stale_writes == 1 and off.events["event"].str.contains("wrote orders-1: leader 3").any()
    assert off.damage == {"controller_vs_zookeeper": 1, "two_leaders_believed": 1, "metadata_names_a_non_leader": 1}
    # the write, then its UpdateMetadata to itself (it had heard from epoch 2) and LeaderAndIsr to 2 and 3
    applied = off.requests[off.requests["applied_stale"]]
    assert sorted(zip(applied["broker"], applied["api"], strict=True)) == [
        (1, "UpdateMetadata"),
        (2, "LeaderAndIsr"),
        (3, "LeaderAndIsr"),
    ]
    assert off.applied_stale == 4


@pytest.mark.parametrize("seed", range(4))
def test_the_old_controller_cannot_win_the_reelection_while_its_event_thread_is_busy(seed):
    """One event thread: the old controller's Reelect (its watch on /controller fires with the others') waits
    behind the event it is in, so another broker wins epoch 2; run at once, the old controller could win."""
    for fencing in (True, False):
        r = zombie_controller(fencing=fencing, seed=seed, cause="znode_deleted")
        won = r.events[r.events["event"].str.contains("Epoch incremented to 2")]
        assert len(won) == 1 and won["broker"].iloc[0] != 1


def test_a_pause_shorter_than_the_session_timeout_is_harmless_either_way():
    for fencing in (True, False):
        r = zombie_controller(fencing=fencing, seed=2, pause_ms=TIMEOUT / 2)
        assert (
            r.applied_stale == 0
            and not r.events["event"].str.contains("elected as the controller. Epoch incremented to 2").any()
        )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), restart=st.floats(5, 3000), backlog=st.floats(0, 3000))
def test_with_the_broker_epoch_no_request_for_a_previous_incarnation_is_applied(seed, restart, backlog):
    r = broker_restart_race(broker_epoch=True, seed=seed, restart_ms=restart, backlog_ms=backlog)
    assert r.applied_stale == 0
    assert r.damage["orders-0 on broker 3"] == "fetching"
    assert r.damage["broker 3 in the ISR of orders-0"]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), restart=st.floats(5, 1000), extra=st.floats(5, 2000))
def test_without_the_broker_epoch_every_race_leaves_the_replica_stopped(seed, restart, extra):
    """Whenever broker 3 is back before the controller wakes, the pre-2.2 controller never notices."""
    r = broker_restart_race(broker_epoch=False, seed=seed, restart_ms=restart, backlog_ms=restart + extra)
    assert r.damage["orders-0 on broker 3"] == "stopped" and not r.damage["broker 3 in the ISR of orders-0"]
    assert r.applied_stale >= 1


def test_without_the_broker_epoch_the_old_stop_replica_stops_the_new_incarnation():
    """KIP-380's example, on the cluster: the restarted broker processes its previous incarnation's StopReplica,
    and the controller, seeing the same broker ids, sends it nothing else: the replica stays stopped and out of
    the ISR while the controller believes the broker online (KIP-380's "leaving the replica offline")."""
    off = broker_restart_race(broker_epoch=False, seed=1, restart_ms=100, backlog_ms=700)
    assert off.damage == {
        "orders-0 on broker 3": "stopped",
        "controller believes broker 3 online": True,
        "broker 3 in the ISR of orders-0": False,
    }
    to3 = off.requests[off.requests["broker"] == 3]
    stop = to3[to3["api"] == "StopReplica"].iloc[0]
    assert stop["error"] == "NONE" and stop["applied_stale"] and stop["broker_epoch"] == -1  # no epoch before 2.2
    assert not off.events["event"].str.contains("bounced").any()
    # after the StopReplica, broker 3 hears only what was queued for its previous incarnation: no LeaderAndIsr
    after = to3[to3["time_ms"] >= stop["time_ms"]]
    assert after["api"].tolist() == ["StopReplica", "UpdateMetadata"] and after["applied_stale"].all()


def test_with_the_broker_epoch_the_bounce_is_seen_and_the_old_request_refused():
    """2.8: the StopReplica carries broker 3's old epoch (KafkaApis.isBrokerEpochStale: STALE_BROKER_EPOCH), the
    controller's BrokerChange sees the registration's newer epoch (bounced: failure, then start-up), and broker 3
    follows orders-0 again, back in its ISR."""
    on = broker_restart_race(broker_epoch=True, seed=1, restart_ms=100, backlog_ms=700)
    assert on.damage == {
        "orders-0 on broker 3": "fetching",
        "controller believes broker 3 online": True,
        "broker 3 in the ISR of orders-0": True,
    }
    to3 = on.requests[on.requests["broker"] == 3]
    stop = to3[to3["api"] == "StopReplica"]
    assert stop["error"].tolist() == ["STALE_BROKER_EPOCH"] and stop["broker_epoch"].tolist() == [1]
    assert on.events["event"].str.contains(r"broker 3 bounced \(broker epoch 1 -> 2\)").any()
    later = to3[to3["time_ms"] > stop["time_ms"].iloc[0]]
    assert "LeaderAndIsr" in set(later["api"]) and set(later["broker_epoch"]) == {2}
    assert on.applied_stale == 0


def test_a_restart_slower_than_the_controllers_pause_is_no_race():
    """The controller handles broker 3's failure before it is back: the old StopReplica goes with the channel
    (removeBroker), and the start-up is an ordinary one, with or without broker epochs."""
    for be in (False, True):
        r = broker_restart_race(broker_epoch=be, seed=1, restart_ms=900, backlog_ms=700)
        assert r.damage["orders-0 on broker 3"] == "fetching" and r.applied_stale == 0
        assert not r.events["event"].str.contains("bounced").any()


@pytest.mark.parametrize(
    "kw, error, message",
    [
        ({"restart_ms": -1}, ValueError, "restart_ms must be more than 0, got -1"),
        ({"restart_ms": 0}, ValueError, "restart_ms must be more than 0, got 0"),
        ({"restart_ms": float("nan")}, TypeError, "restart_ms is a finite number, got nan"),
        ({"backlog_ms": -1}, ValueError, "backlog_ms must be at least 0, got -1"),
        ({"backlog_ms": float("nan")}, TypeError, "backlog_ms is a finite number, got nan"),
        ({"backlog_ms": float("inf")}, TypeError, "backlog_ms is a finite number, got inf"),
        ({"backlog_ms": 18000}, ValueError, "backlog_ms is at most 17,999, got 18,000: the controller's pause must"),
    ],
)
def test_the_restart_race_times_say_what_they_accept(kw, error, message):
    """NaN times once ran (nan < 0 is False); each time says what it takes, as the incidents' options do."""
    with pytest.raises(error, match=re.escape(message)):
        broker_restart_race(broker_epoch=True, seed=1, **kw)


@pytest.mark.parametrize(
    "kw, error, message",
    [
        # NaN once ran into the model (nan < 0 is False): KeyError 'orders-2' or IndexError from inside the run
        ({"pause_ms": float("nan")}, TypeError, "pause_ms is a finite number, got nan"),
        ({"reconnect_ms": float("nan")}, TypeError, "reconnect_ms is a finite number, got nan"),
        ({"pause_at_ms": float("nan")}, TypeError, "pause_at_ms is a finite number, got nan"),
        ({"event_lag_ms": float("nan"), "cause": "znode_deleted"}, TypeError, "event_lag_ms is a finite number"),
        ({"session_timeout_ms": float("nan")}, TypeError, "session_timeout_ms is a finite number, got nan"),
        ({"pause_ms": float("inf")}, TypeError, "pause_ms is a finite number, got inf"),
        ({"pause_ms": "100"}, TypeError, "pause_ms is a finite number, got '100'"),
        ({"pause_ms": -1}, ValueError, "pause_ms must be at least 0, got -1"),
        ({"reconnect_ms": -0.5}, ValueError, "reconnect_ms must be at least 0, got -0.5"),
        ({"pause_at_ms": 49.9}, ValueError, "pause_at_ms must be at least 50, got 49.9"),
        ({"session_timeout_ms": 0}, ValueError, "session_timeout_ms must be more than 0, got 0"),
        ({"session_timeout_ms": 6000.5}, ValueError, "session_timeout_ms is a whole number, got 6000.5"),
    ],
)
def test_the_zombie_times_say_what_they_accept(kw, error, message):
    """Each of zombie_controller's times says what it takes (kafka_lab.sim.common.options), as the restart race's do."""
    with pytest.raises(error, match=re.escape(message)):
        zombie_controller(fencing=True, seed=0, **kw)


def test_the_zombie_takes_the_edges_of_its_ranges():
    r = zombie_controller(fencing=True, seed=0, pause_ms=0, reconnect_ms=0, pause_at_ms=50, session_timeout_ms=1)
    assert r.applied_stale == 0


@pytest.mark.parametrize(
    "timeout, error, message",
    [
        # NaN and inf once ran: ZooKeeper never expired the crashed controller's session, and nobody took over
        (float("nan"), TypeError, "session_timeout_ms is a finite number, got nan"),
        (float("inf"), TypeError, "session_timeout_ms is a finite number, got inf"),
        ("18000", TypeError, "session_timeout_ms is a finite number, got '18000'"),
        (True, TypeError, "session_timeout_ms is a finite number, got True"),
        (0, ValueError, "session_timeout_ms must be more than 0, got 0"),
        (-5, ValueError, "session_timeout_ms must be more than 0, got -5"),
        (500.5, ValueError, "session_timeout_ms is a whole number, got 500.5"),
    ],
)
def test_the_election_session_timeout_says_what_it_accepts(timeout, error, message):
    with pytest.raises(error, match=re.escape(message)):
        controller_election(brokers=3, crashes=1, seed=0, session_timeout_ms=timeout)


def test_bad_input():
    with pytest.raises(TypeError, match="fencing must be True or False"):
        zombie_controller(fencing="yes")
    with pytest.raises(TypeError, match="broker_epoch must be True or False"):
        broker_restart_race(broker_epoch=1)
    with pytest.raises(ValueError, match=r"cause must be one of \('gc_pause', 'znode_deleted'\)"):
        zombie_controller(fencing=True, cause="gc")
    with pytest.raises(ValueError, match="event_lag_ms must be at least 0, got -1"):
        zombie_controller(fencing=True, cause="znode_deleted", event_lag_ms=-1)
    with pytest.raises(ValueError, match="crashes must be an int"):
        controller_election(brokers=2, crashes=2)


def test_a_leader_and_isr_whose_leader_epoch_is_not_newer_is_ignored():
    """The partition's own fence (ReplicaManager.becomeLeaderOrFollower: requestLeaderEpoch > currentLeaderEpoch),
    which holds even with the controller's fences off: an equal or older leader epoch changes nothing."""
    from kafka_lab.sim.zk.fencing import _World

    w = _World([1, 2], {"t-0": [1, 2]}, seed=0, fencing=False, broker_epoch_check=False)
    b2 = w.brokers[2]
    assert b2.following == {"t-0": (1, 0)}

    def lai(leader, epoch):
        states = {"t-0": {"leader": leader, "leader_epoch": epoch, "isr": [1, 2]}}
        return {"api": "LeaderAndIsr", "controller_id": 1, "controller_epoch": 1, "broker_epoch": -1, "states": states}

    for leader, epoch in ((2, 1), (1, 1), (1, 0)):  # newer: applied; equal, then older: ignored
        w.env.process(b2.handle(lai(leader, epoch)))
        w.env.run()
    assert b2.leading == {"t-0": 1} and "t-0" not in b2.following
    assert len(w.requests) == 3  # all three were handled


def test_a_zombies_request_to_its_own_broker_after_it_registered_again_is_refused_by_the_broker_epoch():
    """A pause just past the session timeout: the zombie's queued UpdateMetadata to its own broker (controller epoch
    1, which that broker has not yet seen beaten) arrives after its Expire event re-registered the broker with a new
    czxid. Only the broker epoch refuses it (KafkaApis.isBrokerEpochStale: STALE_BROKER_EPOCH); hypothesis found it."""
    r = zombie_controller(fencing=True, seed=0, pause_ms=6001.0, reconnect_ms=0.0, pause_at_ms=50.0, event_lag_ms=0.0)
    req = r.requests
    own = req[(req["broker"] == 1) & (req["controller_epoch"] == 1) & (req["time_ms"] > 6000)]
    assert own["error"].tolist() == ["STALE_BROKER_EPOCH"]
    assert r.applied_stale == 0

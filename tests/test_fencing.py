"""Election safety, and the bounced broker (KIP-380), with hypothesis over timings. The zombie controller's
tests are tests/test_zombie_cluster.py."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_lab.sim import broker_restart_race, controller_election


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
    with pytest.raises(TypeError, match="broker_epoch must be True or False"):
        broker_restart_race(broker_epoch=1)
    with pytest.raises(ValueError, match="crashes must be an int"):
        controller_election(brokers=2, crashes=2)

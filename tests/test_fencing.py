"""Election safety and fencing: the zombie controller (KAFKA-6082, the controller epoch) and the bounced
broker (KIP-380), with hypothesis over pause lengths and timings."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_lab.sim import broker_restart_race, zombie_controller
from kafka_lab.sim.fencing import controller_election

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
    pause=st.floats(0.2 * TIMEOUT, 3 * TIMEOUT),
    reconnect=st.floats(0, 200),
    pause_at=st.floats(50, 500),
)
def test_with_fencing_no_stale_request_or_write_is_ever_applied(seed, pause, reconnect, pause_at):
    r = zombie_controller(fencing=True, seed=seed, pause_ms=pause, reconnect_ms=reconnect, pause_at_ms=pause_at)
    assert r.applied_stale == 0 and r.stale_writes == 0
    # election safety: every request a broker applied under an epoch came from one controller
    applied = r.requests[r.requests["error"] == "NONE"]
    assert (applied.groupby("controller_epoch")["controller_id"].nunique() == 1).all()
    assert r.damage["controller_vs_zookeeper"] == 0 and r.damage["two_leaders_believed"] == 0
    if pause >= TIMEOUT:  # the zombie's requests were refused, by the brokers or by ZooKeeper
        assert (r.requests["error"] == "STALE_CONTROLLER_EPOCH").any() or (
            r.events["event"].str.contains("BADVERSION").any()
        )


def test_without_fencing_the_zombie_does_damage():
    r = zombie_controller(fencing=False, seed=1)
    assert r.stale_writes == 1  # ZooKeeper took a write from epoch 1 after epoch 2 was elected
    assert r.applied_stale > r.stale_writes  # and brokers applied its requests
    assert r.damage["controller_vs_zookeeper"] == 1
    assert r.damage["two_leaders_believed"] >= 1
    assert r.damage["metadata_names_a_non_leader"] >= 1
    on = zombie_controller(fencing=True, seed=1)
    assert on.applied_stale == 0 and (on.requests["error"] == "STALE_CONTROLLER_EPOCH").sum() == 2
    assert on.events["event"].str.contains("Controller epoch zkVersion check fails").any()


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


def test_without_the_broker_epoch_the_old_stop_replica_stops_the_new_incarnation():
    """KIP-380's example: the restarted broker processes its previous incarnation's StopReplica."""
    off = broker_restart_race(broker_epoch=False, seed=1, restart_ms=100, backlog_ms=700)
    assert off.damage == {"orders-0 on broker 3": "stopped", "controller believes broker 3 online": True}
    stop = off.requests[off.requests["api"] == "StopReplica"].iloc[0]
    assert stop["error"] == "NONE" and stop["applied_stale"]
    on = broker_restart_race(broker_epoch=True, seed=1, restart_ms=100, backlog_ms=700)
    stop = on.requests[on.requests["api"] == "StopReplica"].iloc[0]
    assert stop["error"] == "STALE_BROKER_EPOCH"
    assert on.events["event"].str.contains("bounced").any()


def test_bad_input():
    with pytest.raises(TypeError, match="fencing must be True or False"):
        zombie_controller(fencing="yes")
    with pytest.raises(TypeError, match="broker_epoch must be True or False"):
        broker_restart_race(broker_epoch=1)
    with pytest.raises(ValueError, match="crashes must be an int"):
        controller_election(brokers=2, crashes=2)

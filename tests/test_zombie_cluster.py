"""Lab 07's zombie controller on the cluster (kafka_lab/sim/controller_fencing.py, sim/zk/controller.py).

The truths: Kafka 2.8's fences against a deposed controller, each checked in its source (docs/kafka-reference.md,
"Fencing"): brokers refuse a lower controller epoch than they have seen (``STALE_CONTROLLER_EPOCH``); after a
session expiry the controller's write goes out on the ended session (``SESSIONEXPIRED``: 1.1+'s
``ZooKeeperClient.reinitialize`` opens a new session only after the ``Expire`` event); a state znode write is
conditional on the zkVersion the writer read (``KafkaZkClient.updateLeaderAndIsr``); a new controller reads every
state znode when it starts (``onControllerFailover``); a LeaderAndIsr whose leader epoch is newer than the
partition's is applied (``ReplicaManager.becomeLeaderOrFollower``). And the ledger's own rule: a record
acknowledged with ``acks=1`` by a leader that loses its leadership before its followers have it is truncated,
whatever the controller's fences.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_lab.sim import Cluster
from kafka_lab.sim.controller_fencing import ZOMBIE_ASSIGNMENT, zombie_in_cluster
from kafka_lab.sim.zk.controller import state_path

TP = ("orders", 1)
TIMEOUT = 6000  # zookeeper.session.timeout.ms up to 2.4, the zombie's


@pytest.mark.parametrize("seed", [0, 1])
def test_with_fencing_the_zombies_write_fails_on_its_expired_session_and_nothing_stale_is_applied(seed):
    r = zombie_in_cluster(fencing=True, seed=seed)
    assert r.events["event"].str.contains(r"write of orders-1 failed: SESSIONEXPIRED \(controller epoch 1\)").any()
    assert r.applied_stale == 0 and r.stale_writes == 0
    d = r.damage
    assert (d["controller_vs_zookeeper"], d["two_leaders_believed"], d["metadata_names_a_non_leader"]) == (0, 0, 0)
    # what acks=1 loses anyway: records broker 1 acknowledged and its followers never got, on the partitions it led
    assert d["truncated records"] == d["truncated where broker 1 led"] > 0
    assert d["orders-1 records not written"] <= 10  # at most the last ones in flight when the run ends


@pytest.mark.parametrize("seed", [0, 1])
def test_without_fencing_the_zombies_write_lands_and_its_leader_and_isr_is_applied(seed):
    """1.0's ZkClient retries on a new session; only the state znode's zkVersion is checked, and nobody moved it:
    ZooKeeper takes the write of controller epoch 1, brokers 2 and 3 apply its LeaderAndIsr (leader epoch 1), and
    the active controller (epoch 2) still believes broker 2 leads: its metadata sends the producer to a follower."""
    r = zombie_in_cluster(fencing=False, seed=seed)
    wrote = r.events[r.events["event"].str.startswith("wrote orders-1")]
    assert wrote["event"].tolist() == ["wrote orders-1: leader 3, leader epoch 1 (controller epoch 1)"]
    stale = r.requests[r.requests["applied_stale"]]
    assert sorted(stale["broker"]) == [2, 3] and set(stale["api"]) == {"LeaderAndIsr"}
    assert set(stale["controller_epoch"]) == {1} and r.stale_writes == 1 and r.applied_stale == 3
    row = r.beliefs.set_index("partition").loc["orders-1"]
    ctl_col = next(c for c in r.beliefs.columns if c.startswith("controller"))
    assert row["zookeeper"] == 3 and row[ctl_col] == 2
    assert row["broker 3"].startswith("leader") and row["broker 2"].startswith("follower")
    d = r.damage
    assert (d["controller_vs_zookeeper"], d["two_leaders_believed"], d["metadata_names_a_non_leader"]) == (1, 1, 3)
    assert d["orders-1 records not written"] > 1000  # the producer keeps sending to broker 2: NOT_LEADER_OR_FOLLOWER
    assert d["truncated records"] == d["truncated where broker 1 led"]  # the zombie's move itself truncated nothing
    # its event ends (the write, its requests queued) before its Expire event resigns it: one event thread
    resigned = r.events[r.events["event"].str.startswith("zombie_resigned")]["time_ms"].iloc[0]
    assert resigned >= wrote["time_ms"].iloc[0] and (stale["time_ms"] > resigned).all()


def test_with_acks_all_no_acknowledged_record_is_lost_with_or_without_the_fences():
    """acks=all waits for the ISR: broker 1 acknowledged nothing its follower lacked, and the zombie's move goes to
    an in-sync replica. The fences protect the cluster's view (and orders-1's availability), not these records."""
    on = zombie_in_cluster(fencing=True, seed=0, acks="all")
    off = zombie_in_cluster(fencing=False, seed=0, acks="all")
    assert on.damage["truncated records"] == off.damage["truncated records"] == 0
    assert on.damage["orders-1 records not written"] == 0 < off.damage["orders-1 records not written"]


def test_a_zombie_write_before_the_new_controller_reads_the_state_is_what_it_reads():
    """Woken a millisecond past its session, fences off, reconnecting at once: the zombie's write lands before the
    new controller (elected a few ms after the expiry) reads the state znodes, so the new controller starts from it:
    no disagreement, and no write after a newer epoch was elected."""
    r = zombie_in_cluster(fencing=False, seed=0, pause_ms=6001, reconnect_ms=0, pause_at_ms=60)
    wrote = r.events[r.events["event"].str.startswith("wrote orders-1")]["time_ms"].iloc[0]
    elected = r.events[r.events["event"] == "elected (controller epoch 2)"]["time_ms"].iloc[0]
    assert wrote < elected
    row = r.beliefs.set_index("partition").loc["orders-1"]
    ctl_col = next(c for c in r.beliefs.columns if c.startswith("controller"))
    assert row["zookeeper"] == row[ctl_col] == 3
    assert r.damage["controller_vs_zookeeper"] == 0 and r.stale_writes == 0


def test_a_zombie_write_at_a_moved_zk_version_fails_even_without_the_fences():
    """The one check left with the fences off: the state znode's version. The new controller moves orders-1 itself
    (a preferred election back and forth) before the zombie wakes: the zombie's write is BADVERSION."""
    c = Cluster(
        3,
        seed=0,
        controller_fencing=False,
        broker_epochs=False,
        broker_overrides={"zookeeper.session.timeout.ms": 6000},
    )
    c.create_topic("orders", assignment=ZOMBIE_ASSIGNMENT)
    c.controller.elect_leader(TP, 3, at_ms=99)
    c.pause(1, at_ms=100, for_ms=9000)
    c.run(7000)
    assert c.controller.id in (2, 3)
    c.controller.elect_leader(TP, 3, at_ms=7000)  # the new controller's own move: version 1
    c.run(9500)
    assert [w[-1] for w in c.controller.zombie_writes] == ["BADVERSION"]
    z = c.zk.znodes[state_path(TP)]
    assert (z.version, z.data["controller_epoch"]) == (1, 2)  # the new controller's write stands


def test_with_the_fences_off_the_zombies_queued_update_metadata_is_applied():
    """The brokers' own fence: with it off, what the zombie had queued before its pause (UpdateMetadata of
    controller epoch 1) is applied by brokers that have heard from epoch 2 (with it on: STALE_CONTROLLER_EPOCH,
    tests/test_cluster_faults.py)."""
    c = Cluster(3, seed=1, controller_fencing=False)
    c.create_topic("t", partitions=3, replication_factor=3, min_insync_replicas=2)
    c.controller.elect_leader(("t", 0), 2, at_ms=998)
    c.pause(1, at_ms=1000.001, for_ms=20000)
    res = c.run(21100)
    r = res.requests
    um = r[(r["client_id"] == "controller-1") & (r["api"] == "UpdateMetadata") & (r["broker_id"] != 1)]
    assert len(um) == 2 and set(um["error"]) == {"NONE"} and um["sent_ms"].min() >= 21000


@pytest.mark.parametrize("seed", [0, 1])
def test_a_deleted_controller_znode_is_fenced_by_the_epoch_check_alone(seed):
    """/controller deleted while controller 1 is in its event (its session alive): the write goes out on a live
    session, and with the fences only the /controller_epoch check refuses it (BADVERSION); without them it lands
    after the new controller read the state znodes. Its Reelect event resigns it after the event, not before."""
    on = zombie_in_cluster(fencing=True, seed=seed, cause="znode_deleted")
    ev = on.events
    assert ev["event"].str.contains(r"write of orders-1 failed: BADVERSION \(controller epoch 1\)").any()
    assert not ev["event"].str.contains("SESSIONEXPIRED").any()  # its session lived:
    assert ev["event"].str.contains("resumed ({'session_expired': False})", regex=False).any()
    assert on.applied_stale == 0 and on.damage["controller_vs_zookeeper"] == 0
    off = zombie_in_cluster(fencing=False, seed=seed, cause="znode_deleted")
    ev = off.events[off.events["broker"] == 1]["event"].tolist()
    wrote = "wrote orders-1: leader 3, leader epoch 1 (controller epoch 1)"
    assert wrote in ev and ev.index(wrote) < ev.index("zombie_resigned (controller epoch 1)")
    assert off.stale_writes == 1 and off.damage["controller_vs_zookeeper"] == 1
    assert off.damage["two_leaders_believed"] == 1


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    cause=st.sampled_from(["gc_pause", "znode_deleted"]),
    pause=st.floats(0.2 * TIMEOUT, 3 * TIMEOUT),
    reconnect=st.floats(0, 200),
    pause_at=st.floats(50, 500),
    lag=st.floats(0, 200),
)
def test_with_fencing_no_stale_request_or_write_is_ever_applied(seed, cause, pause, reconnect, pause_at, lag):
    """Whatever the timings: nothing a deposed controller sends or writes is applied, every request applied under
    a controller epoch came from one controller, and ZooKeeper and the active controller agree at the end."""
    times = {"pause_ms": pause, "reconnect_ms": reconnect} if cause == "gc_pause" else {"event_lag_ms": lag}
    r = zombie_in_cluster(fencing=True, seed=seed, cause=cause, pause_at_ms=pause_at, **times)
    assert r.applied_stale == 0 and r.stale_writes == 0
    applied = r.requests[r.requests["error"] == "NONE"]
    assert (applied.groupby("controller_epoch")["controller_id"].nunique() == 1).all()
    assert r.damage["controller_vs_zookeeper"] == 0 and r.damage["two_leaders_believed"] == 0
    if cause == "gc_pause" and pause > TIMEOUT:  # deposed: its write went out on the ended session
        assert r.events["event"].str.contains("failed: SESSIONEXPIRED").any()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), cause=st.sampled_from(["gc_pause", "znode_deleted"]))
def test_without_fencing_the_damage_is_reproduced_whatever_the_seed(seed, cause):
    """Past the session timeout (or with /controller deleted), the deposed controller's write lands and its
    LeaderAndIsr is applied: ZooKeeper and the active controller disagree afterwards. "Fencing off" is every 2.2
    fence off at once, the broker epoch (KIP-380, 2.2) too: every control request carries -1
    (``UNKNOWN_BROKER_EPOCH``), and none is refused as stale."""
    r = zombie_in_cluster(fencing=False, seed=seed, cause=cause)
    assert r.stale_writes == 1 and r.applied_stale > 1
    assert r.damage["controller_vs_zookeeper"] == 1 and r.damage["two_leaders_believed"] >= 1
    assert not r.requests["error"].str.startswith("STALE_").any()
    assert (r.requests["broker_epoch"] == -1).all()


@pytest.mark.parametrize("seed", range(4))
def test_the_old_controller_cannot_win_the_reelection_while_its_event_thread_is_busy(seed):
    """One event thread: the old controller's Reelect (its watch on /controller fires with the others') waits
    behind the event it is in, so another broker wins epoch 2."""
    for fencing in (True, False):
        r = zombie_in_cluster(fencing=fencing, seed=seed, cause="znode_deleted")
        won = r.events[r.events["event"] == "elected (controller epoch 2)"]
        assert len(won) == 1 and won["broker"].iloc[0] != 1


def test_a_pause_shorter_than_the_session_timeout_is_harmless_either_way():
    for fencing in (True, False):
        r = zombie_in_cluster(fencing=fencing, seed=2, pause_ms=TIMEOUT / 2)
        assert r.applied_stale == 0 and r.stale_writes == 0
        assert not r.events["event"].str.contains("controller epoch 2").any()


def test_the_zombie_takes_the_edges_of_its_ranges():
    r = zombie_in_cluster(fencing=True, seed=0, pause_ms=0, reconnect_ms=0, pause_at_ms=50, session_timeout_ms=1)
    assert r.applied_stale == 0


def test_a_deposed_controllers_write_that_reaches_zookeeper_before_the_new_election_lands():
    """The /controller_epoch check is ZooKeeper's, against the version the old controller set: /controller deleted 1 ms
    before its write, the new controller not yet elected, so the check passes and the write lands, with the fences
    on. It is no stale write (nobody newer was elected), the new controller reads it when it starts, and what the old
    controller then sends under epoch 1 is refused by brokers that heard from epoch 2, or applied before they did."""
    r = zombie_in_cluster(fencing=True, seed=0, cause="znode_deleted", event_lag_ms=1.0)
    ev = r.events
    wrote = ev[ev["event"].str.startswith("wrote orders-1")]
    elected = ev[ev["event"] == "elected (controller epoch 2)"]["time_ms"].iloc[0]
    assert len(wrote) == 1 and wrote["time_ms"].iloc[0] < elected
    assert r.stale_writes == 0 and r.applied_stale == 0
    assert r.damage["controller_vs_zookeeper"] == 0 and r.damage["two_leaders_believed"] == 0


def test_same_seed_same_zombie():
    a, b = zombie_in_cluster(fencing=False, seed=3), zombie_in_cluster(fencing=False, seed=3)
    assert a.damage == b.damage and a.requests.equals(b.requests) and a.events.equals(b.events)


@pytest.mark.parametrize(
    "kw, error, message",
    [
        ({"fencing": "yes"}, TypeError, "fencing must be True or False, got str 'yes'"),
        ({"fencing": True, "pause_ms": 30000}, ValueError, "pause_ms is at most 29,999, got 30,000"),
        ({"fencing": True, "pause_ms": float("nan")}, TypeError, "pause_ms is a finite number, got nan"),
        ({"fencing": True, "pause_at_ms": 10}, ValueError, "pause_at_ms must be at least 50, got 10"),
        ({"fencing": True, "session_timeout_ms": 0}, ValueError, "session_timeout_ms must be more than 0, got 0"),
        ({"fencing": True, "reconnect_ms": -1}, ValueError, "reconnect_ms must be at least 0, got -1"),
        ({"fencing": True, "cause": "gc"}, ValueError, "cause must be one of ('gc_pause', 'znode_deleted'), got 'gc'"),
        (
            {"fencing": True, "cause": "znode_deleted", "pause_ms": 9000},
            ValueError,
            "pause_ms and reconnect_ms are for",
        ),
        ({"fencing": True, "event_lag_ms": 10}, ValueError, "event_lag_ms is for cause='znode_deleted'"),
        (
            {"fencing": True, "cause": "znode_deleted", "event_lag_ms": 6000},
            ValueError,
            "event_lag_ms (6000) must be less than session_timeout_ms (6000)",
        ),
    ],
)
def test_the_zombie_says_what_it_accepts(kw, error, message):
    with pytest.raises(error, match=re.escape(message)):
        zombie_in_cluster(**kw)


def test_cluster_controller_fencing_is_a_switch():
    with pytest.raises(TypeError, match="controller_fencing must be True or False"):
        Cluster(3, controller_fencing=1)

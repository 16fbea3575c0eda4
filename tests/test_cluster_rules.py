"""More of the cluster's Kafka rules, one test each: the ones tools/mutate.py found no test for.

Each test names the Kafka 2.8 method its rule comes from (docs/kafka-reference.md §5 and §6) and asserts
what Kafka does, computed by hand from that source, not what the model happens to return. Each one kills
the mutation of tools/mutate.py named in its docstring: the model with that rule removed fails it.
"""

from __future__ import annotations

import pytest
import simpy
from test_cluster_replication import TP, make_cluster, part, purgatory, run_control, state

from kafka_lab.sim import Cluster
from kafka_lab.sim.clients.producer import KafkaProducer
from kafka_lab.sim.server.fetcher import REPLICA_FETCH_BACKOFF_MS, ReplicaFetcherThread
from kafka_lab.sim.server.partition import Partition
from kafka_lab.sim.server.replica_manager import ReplicaManager


class Produce:
    """A produce request as ``ReplicaManager.append`` reads it."""

    def __init__(self, records=10, acks=-1, tps=(TP,)):
        self.partitions = tuple(tps)
        self.acks = acks
        self.records = records
        self.payload = None


def leader_rm(*, at_ms=0.0, isr=(1, 2, 3), lag=30000.0):
    """Broker 1's replica manager leading ``t-0`` (replicas 1, 2, 3) on a clock standing at ``at_ms``."""
    env = simpy.Environment()
    env.run(until=at_ms) if at_ms else None
    rm = ReplicaManager(1, env, replica_lag_time_max_ms=lag)
    p = rm.add_partition("t", 0, [1, 2, 3], leader=1, isr=list(isr))
    return env, rm, p


def fetch(rm, follower, offset, *, last_epoch=None, epoch=None):
    """A follower's Fetch of ``t-0`` at ``offset`` (its last fetched epoch and the leader epoch it knows)."""
    p = rm.partitions[TP]
    last = p.log.latest_epoch if last_epoch is None else last_epoch
    out, _ = rm.fetch_as_leader(follower, {TP: (offset, last, p.leader_epoch if epoch is None else epoch)})
    return out[TP]


# -- becoming leader (Partition.makeLeader, ReplicaManager.makeLeaders) -------------------------------


def test_a_broker_that_leads_again_forgets_what_it_knew_of_its_followers():
    """make-leader-keeps-stale-follower-offsets, hw-moves-backwards. Partition.makeLeader: ``if (isNewLeader)``
    every remote replica's LEO becomes UnknownOffset (-1) until it fetches; the HW only moves forward
    (Log.maybeIncrementHighWatermark), so it stays where it was."""
    _env, rm, p = leader_rm()
    rm.append(Produce(10))
    fetch(rm, 2, 10)
    fetch(rm, 3, 10)
    assert p.hw == 10 and p.remote[2].leo == 10
    rm.become_leader_or_follower([state(None, 2, 1)])  # follower of broker 2 ...
    rm.become_leader_or_follower([state(None, 1, 2)])  # ... and leader again, epoch 2
    assert {rid: r.leo for rid, r in p.remote.items()} == {2: -1, 3: -1}
    assert p.hw == 10
    rm.append(Produce(5))
    assert p.hw == 10  # the followers' LEOs are unknown: nothing more is committed until they fetch
    fetch(rm, 2, 15)
    fetch(rm, 3, 15)
    assert p.hw == 15


def test_a_new_leaders_isr_followers_are_caught_up_as_of_the_election():
    """make-leader-isr-not-caught-up. Partition.makeLeader: resetLastCaughtUpTime(..., curTimeMs) for ISR
    members, so a follower that never fetches from the new leader leaves the ISR only
    replica.lag.time.max.ms after the election (Partition.isFollowerOutOfSync)."""
    env = simpy.Environment()
    rm = ReplicaManager(2, env, replica_lag_time_max_ms=100.0)
    p = rm.add_partition("t", 0, [1, 2, 3], leader=1)
    p.log.append_as_leader(10, 0)  # what it replicated from broker 1
    env.run(until=1000.0)
    rm.become_leader_or_follower([state(None, 2, 1)])
    rm.append(Produce(5))  # the followers are now behind (and have not fetched from it)
    env.run(until=1100.0)
    rm.maybe_shrink_isr()
    assert p.isr == [1, 2, 3] and p.pending_isr is None  # exactly the lag: not yet out of sync
    env.run(until=1100.5)
    rm.maybe_shrink_isr()
    assert p.isr == [2]


def test_a_broker_that_becomes_leader_stops_fetching_the_partition():
    """make-leader-keeps-fetching. ReplicaManager.makeLeaders: replicaFetcherManager.removeFetcherForPartitions."""
    c = make_cluster()
    assert c.brokers[2].fetchers.fetching() == {TP: 1}
    c.controller.elect_leader(TP, 2, at_ms=5)
    c.run(40)
    assert part(c, 2).leader == 2 and TP not in c.brokers[2].fetchers.fetching()
    assert c.brokers[3].fetchers.fetching() == {TP: 2}


def test_a_follower_whose_new_leader_is_not_alive_is_left_as_it_was():
    """make-follower-leader-unavailable. ReplicaManager.makeFollowers: the new leader not among the metadata
    cache's alive brokers → 'cannot become follower since the new leader 4 is unavailable', no change."""
    c = make_cluster()
    req, _ = run_control(c, 3, "LeaderAndIsr", [state(c, 4, 1, replicas=(4, 1, 3), isr=(4, 1, 3))])
    assert req.partition_errors == {TP: "NONE"}
    p = part(c, 3)
    assert (p.leader, p.leader_epoch) == (1, 0) and c.brokers[3].fetchers.fetching() == {TP: 1}


# -- StopReplica (ReplicaManager.stopReplicas) -----------------------------------------------------------


def test_stop_replica_with_an_older_leader_epoch_is_fenced():
    """stop-replica-older-epoch-accepted. stopReplicas: requestLeaderEpoch < currentLeaderEpoch → FENCED_LEADER_EPOCH."""
    rm = ReplicaManager(2)
    rm.add_partition("t", 0, [1, 2, 3], leader=1, leader_epoch=3)
    assert rm.stop_replicas({TP: (2, True)}) == {TP: "FENCED_LEADER_EPOCH"} and TP in rm.partitions
    assert rm.stop_replicas({TP: (4, True)}) == {TP: "NONE"} and TP not in rm.partitions


def test_stop_replica_completes_the_delayed_produces_of_the_partition():
    """stop-replica-keeps-purgatory. stopReplicas: completeDelayedFetchOrProduceRequests(topicPartition); the
    partition is gone but still in the metadata cache: NOT_LEADER_OR_FOLLOWER (ReplicaManager.getPartitionOrError)."""
    c = make_cluster()
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching(TP)
    c.producer("p", topic="t", acks="all").burst(1, at_ms=1)
    c.controller.send(
        c.brokers[1],
        "StopReplica",
        [{"topic": "t", "partition": 0, "leader_epoch": 1}],
        at_ms=20,
        delete_partitions=True,
    )
    r = c.run(60).requests
    stop = r[r["api"] == "StopReplica"].iloc[0]
    produce = r[r["api"] == "Produce"].iloc[0]
    assert produce["api_local_complete_ms"] < 20  # parked in purgatory: the followers do not fetch
    assert produce["response_complete_ms"] == stop["api_local_complete_ms"]
    assert produce["error"] == "NOT_LEADER_OR_FOLLOWER"


# -- the high watermark (Partition.maybeIncrementLeaderHW) --------------------------------------------


def test_a_follower_being_added_to_the_isr_already_holds_the_high_watermark():
    """hw-committed-isr-not-maximal. maybeIncrementLeaderHW uses isrState.maximalIsr: while the AlterIsr that
    adds replica 3 is in flight, its LEO bounds the HW as if it were in the ISR."""
    _env, rm, p = leader_rm(at_ms=50000.0, isr=(1, 2))
    asked = []
    rm.alter_isr = lambda part_, isr: asked.append(isr)  # the controller does not answer (yet)
    rm.append(Produce(10))
    fetch(rm, 2, 10)
    assert p.hw == 10
    rm.append(Produce(10))
    fetch(rm, 3, 10)  # at the HW: the leader asks to add it, and waits for the controller
    assert asked == [[1, 2, 3]] and p.isr == [1, 2]
    fetch(rm, 2, 20)
    assert p.hw == 10  # not 20: replica 3 has only 10


def test_a_follower_caught_up_within_the_lag_holds_the_high_watermark_outside_the_isr():
    """hw-ignores-recently-caught-up. maybeIncrementLeaderHW: a replica counts when in the maximal ISR *or*
    when curTime - lastCaughtUpTimeMs <= replica.lag.time.max.ms."""
    _env, rm, p = leader_rm(at_ms=50000.0, isr=(1, 2))
    p.pending_isr, p.pending_kind = [1, 2], "shrink"  # an ISR change in flight: replica 3 cannot join meanwhile
    rm.append(Produce(10))
    fetch(rm, 2, 10)
    assert p.hw == 10
    fetch(rm, 3, 10)  # at the leader's LEO: caught up now
    rm.append(Produce(10))
    fetch(rm, 2, 20)
    assert p.hw == 10  # replica 3 (LEO 10) caught up 0 ms ago holds it


def test_a_followers_high_watermark_never_passes_its_own_log_end():
    """follower-hw-beyond-leo. ReplicaFetcherThread.processPartitionData: log.updateHighWatermark(leader's HW),
    which Log.updateHighWatermark caps at the log end offset."""
    rm = ReplicaManager(2)
    rm.add_partition("t", 0, [1, 2, 3], leader=1)
    leader = Partition("t", 0, [1, 2, 3], 1)
    first = leader.log.append_as_leader(5, 0)
    leader.log.append_as_leader(5, 0)
    rm.append_as_follower(TP, [first], leader_hw=10)
    p = rm.partitions[TP]
    assert p.leo == 5 and p.hw == 5


# -- follower fetch on the leader (Partition.readRecords, Replica.updateFetchState) ---------------------


def test_a_last_fetched_epoch_the_leader_never_had_is_a_diverging_epoch():
    """fetch-divergence-ignores-epoch. Partition.readRecords: epochEndOffset.leaderEpoch < fetchEpoch diverges
    even when that epoch's end lies beyond the fetch offset."""
    _env, rm, p = leader_rm()
    rm.append(Produce(10))  # epoch 0: offsets 0..9
    p.leader_epoch = 2
    p.log.assign_epoch(2, 10)
    rm.append(Produce(20))  # epoch 2: offsets 10..29
    # a follower that wrote offsets 5..7 in an epoch 1 this leader never saw
    err, _hw, batches, diverging = fetch(rm, 3, 8, last_epoch=1)
    assert err == "NONE" and batches == () and diverging == (0, 10)


def test_a_fetch_reaching_the_leaders_previous_end_counts_as_caught_up_then():
    """fetch-caught-up-only-at-leo. Replica.updateFetchState: an offset >= the leader's LEO at the previous fetch
    sets lastCaughtUpTimeMs to that fetch's time, so a follower never exactly at the LEO stays in sync."""
    env, rm, p = leader_rm(isr=(1, 2), lag=30000.0)
    rm.append(Produce(10))
    env.run(until=1000.0)
    fetch(rm, 2, 5)  # behind the leader's LEO (10)
    rm.append(Produce(10))
    env.run(until=2000.0)
    fetch(rm, 2, 12)  # past 10, the LEO at its previous fetch: caught up as of t=1000
    assert p.remote[2].last_caught_up_ms == 1000.0
    env.run(until=30500.0)
    rm.maybe_shrink_isr()
    assert p.isr == [1, 2] and p.pending_isr is None  # 29.5 s since it was caught up: in sync


def test_an_idle_follower_long_polls_replica_fetch_wait_max_ms():
    """fetch-no-long-poll. ReplicaManager.fetchMessages: nothing to read (replica.fetch.min.bytes=1) → a
    DelayedFetch answered after replica.fetch.wait.max.ms (500 ms)."""
    c = make_cluster()
    r = c.run(2000).requests
    fetches = r[(r["api"] == "Fetch") & r["client_id"].str.contains("fetcher")]
    assert 2 * 4 <= len(fetches) <= 2 * 5  # two followers, one fetch per 500 ms each
    done = fetches[fetches["error"] == "NONE"]
    assert ((done["remoteTime"] - 500).abs() < 1e-9).all()


def test_an_append_answers_the_follower_fetches_waiting_on_the_partition():
    """append-does-not-wake-fetches. ReplicaManager.appendToLocalLog → delayedFetchPurgatory.checkAndComplete:
    a long-polling follower is answered at once, so an acks=all produce to an idle cluster takes a few ms,
    not up to replica.fetch.wait.max.ms."""
    c = make_cluster()
    p = c.producer("p", topic="t", acks="all")
    for t in (1000, 1130, 1270, 1410, 1590):
        p.burst(1, at_ms=t)
    res = c.run(2000)
    assert (res.ledger["outcome"] == "committed").all() and len(res.ledger) == 5
    assert res.ledger["latency_ms"].max() < 10


# -- ISR (Partition.maybeExpandIsr, maybeShrinkIsr) -----------------------------------------------------


def test_a_follower_joins_the_isr_only_from_the_start_of_the_current_leader_epoch():
    """isr-expand-before-epoch-start. Partition.isFollowerAtHighwatermark: followerEndOffset >= HW *and* >=
    leaderEpochStartOffset (committed data between the HW and the new leader's LEO could be lost otherwise)."""
    rm = ReplicaManager(1, simpy.Environment())
    p = rm.add_partition("t", 0, [1, 2, 3], leader=2)
    p.log.append_as_leader(10, 0)
    p.log.append_as_leader(10, 0)
    p.hw = 10
    rm.become_leader_or_follower([state(None, 1, 1, isr=(1, 2))])  # leader from offset 20 on
    assert p.log.epochs[-1] == (1, 20) and p.hw == 10
    fetch(rm, 3, 15, last_epoch=0)
    assert p.isr == [1, 2] and p.pending_isr is None  # at the HW, but before the epoch's start
    fetch(rm, 3, 20, last_epoch=0)
    assert p.isr == [1, 2, 3]


def test_a_follower_below_the_high_watermark_does_not_join_the_isr():
    """isr-expand-below-hw. Partition.isFollowerAtHighwatermark: followerEndOffset >= leaderLog.highWatermark."""
    _env, rm, p = leader_rm(isr=(1, 2))
    rm.append(Produce(10))
    fetch(rm, 2, 10)
    assert p.hw == 10
    fetch(rm, 3, 5)
    assert p.isr == [1, 2] and p.pending_isr is None
    fetch(rm, 3, 10)
    assert p.isr == [1, 2, 3]


def test_a_follower_with_the_leaders_log_end_never_leaves_the_isr():
    """isr-shrink-caught-up-follower. Partition.isFollowerOutOfSync: logEndOffset != leaderEndOffset && lag; a
    stopped follower that has everything stays in sync however long it waits."""
    c = make_cluster(lag=100)
    c.producer("p", topic="t", acks=1).burst(3, at_ms=1)
    c.env.timeout(50).callbacks.append(lambda _e: c.brokers[3].fetchers.stop_fetching(TP))
    res = c.run(800)
    assert part(c, 3).leo == part(c, 1).leo == 30
    assert part(c, 1).isr == [1, 2, 3] and not (res.events["event"] == "isr_shrink_requested").any()


def test_one_isr_change_in_flight_per_partition():
    """isr-two-changes-in-flight. Partition.maybeShrinkIsr: nothing while isrState.isInflight, however many
    isr-expiration rounds pass while the controller writes the znode."""
    c = Cluster(3, seed=0, broker_overrides={"replica.lag.time.max.ms": 100}, zk_latency_ms=300.0)
    c.create_topic("t", assignment={0: [1, 2, 3]})
    c.producer("p", topic="t", acks=1).open_loop(1000)
    c.brokers[3].fetchers.stop_fetching(TP)
    res = c.run(700)
    ev = res.events[res.events["broker_id"] == 1]
    asked = ev[ev["event"] == "isr_shrink_requested"]
    applied = ev[ev["event"] == "isr_shrink"]
    assert len(asked) == 1 and len(applied) == 1
    assert applied["time_ms"].iloc[0] - asked["time_ms"].iloc[0] > 300  # six expiration rounds came and went


# -- the controller (KafkaController.processAlterIsr, ControllerChannelManager) -------------------------


class AlterIsr:
    """An AlterIsr request as the controller reads it."""

    def __init__(self, items, broker_id=1, broker_epoch=1):
        self.payload = {"broker_id": broker_id, "broker_epoch": broker_epoch, "items": items}
        self.error = "NONE"
        self.result = None


def alter_isr(c, req):
    answered = []
    c.controller.handle_alter_isr(req, answered.append)
    c.env.run(until=c.env.now + 10)
    assert answered == [req]
    return req


def test_alter_isr_from_an_older_leader_epoch_is_fenced():
    """alter-isr-no-leader-epoch-check. processAlterIsr: newLeaderAndIsr.leaderEpoch < current → FENCED_LEADER_EPOCH
    (even with the znode's current zkVersion), and the ISR stays."""
    c = make_cluster()
    c.controller.elect_leader(TP, 2, at_ms=1)
    c.env.run(until=10)
    st = c.controller.state[TP]
    assert st["leader_epoch"] == 1
    req = alter_isr(c, AlterIsr({TP: (0, [1, 2], st["zk_version"])}))
    assert req.result[TP][0] == "FENCED_LEADER_EPOCH" and st["isr"] == [1, 2, 3]


def test_alter_isr_from_a_broker_epoch_the_controller_does_not_know_is_stale():
    """alter-isr-no-broker-epoch-check. processAlterIsr: !brokerEpochOpt.contains(brokerEpoch) → STALE_BROKER_EPOCH."""
    c = make_cluster()
    st = c.controller.state[TP]
    req = alter_isr(c, AlterIsr({TP: (0, [1, 2], st["zk_version"])}, broker_epoch=0))
    assert req.error == "STALE_BROKER_EPOCH" and st["isr"] == [1, 2, 3] and st["zk_version"] == 0
    ok = alter_isr(c, AlterIsr({TP: (0, [1, 2], st["zk_version"])}))
    assert ok.result[TP][0] == "NONE" and st["isr"] == [1, 2]


def test_the_controller_sends_a_broker_one_request_at_a_time():
    """controller-channel-two-in-flight. ControllerChannelManager.RequestSendThread: sendAndReceive, so the
    next request to a broker is sent only once the previous one's response is back."""
    c = make_cluster()
    c.controller.send(c.brokers[1], "UpdateMetadata", [state(c, 1, 0)], at_ms=1)
    c.controller.send(c.brokers[1], "LeaderAndIsr", [state(c, 1, 1)], at_ms=1)
    c.controller.send(c.brokers[1], "UpdateMetadata", [state(c, 1, 1)], at_ms=1)
    r = c.run(30).requests
    ctl = r[r["client_id"] == c.controller.client_id].sort_values("sent_ms")
    assert list(ctl["api"]) == ["UpdateMetadata", "LeaderAndIsr", "UpdateMetadata"]
    assert (ctl["sent_ms"].to_numpy()[1:] >= ctl["end_ms"].to_numpy()[:-1]).all()


def test_an_election_for_a_partition_the_controller_does_not_know_is_unknown_topic_or_partition():
    """election-of-unknown-partition. processReplicaLeaderElection: a partition not in allPartitions (never
    created, or deleted) is answered UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist." (it was a
    bare KeyError)."""
    c = make_cluster(partitions=3)
    for tp, where in [(("t", 3), "'t' has partitions 0 to 2"), (("u", 0), "there is no topic 'u'")]:
        with pytest.raises(ValueError) as info:
            c.controller.elect_leader(tp, 2)
        assert str(info.value) == (
            f"UNKNOWN_TOPIC_OR_PARTITION: The partition does not exist. ({tp[0]}-{tp[1]}: {where})"
        )
    with pytest.raises(TypeError, match=r"a partition is a \(topic, partition\) pair, got 't-0'"):
        c.controller.elect_leader("t-0", 2)
    c.controller.delete_topic("t", at_ms=1.0)
    c.run(50)
    with pytest.raises(ValueError, match="UNKNOWN_TOPIC_OR_PARTITION: The partition does not exist"):
        c.controller.elect_leader(("t", 0), 2)


def test_an_election_is_checked_when_the_controller_decides_it_not_when_it_is_asked_for():
    """election-checked-at-call, election-unchecked-when-decided. processReplicaLeaderElection looks the
    partition up when the controller handles the election, so a later election (``at_ms``) is checked against
    the partitions then: one created meanwhile is elected (it was refused at the call), one deleted meanwhile
    fails UNKNOWN_TOPIC_OR_PARTITION and the run goes on (it was a KeyError from inside the run), and one
    recreated meanwhile is judged by its new replicas (the old partition's were used)."""
    c = Cluster(3, seed=0)
    c.controller.elect_leader(("later", 0), 2, at_ms=20.0)  # no such topic yet: asked for, not refused
    c.controller.elect_leader(("t", 0), 2, at_ms=40.0)  # deleted at 10, then recreated at 30 on brokers 1, 3
    c.controller.elect_leader(("t", 0), 3, at_ms=25.0)  # deleted at 10, not yet recreated
    c.create_topic("t", assignment={0: [1, 2, 3]})
    c.controller.delete_topic("t", at_ms=10.0)
    c.run(15.0)
    c.create_topic("later", assignment={0: [1, 2, 3]})
    c.run(30.0)
    c.create_topic("t", assignment={0: [1, 3]})
    c.run(80.0)
    ctl = c.controller
    assert ctl.state[("later", 0)]["leader"] == 2 and ctl.state[("later", 0)]["leader_epoch"] == 1
    assert [f[1:] for f in ctl.failed_elections] == [
        ("t", 0, 3, [], "UNKNOWN_TOPIC_OR_PARTITION"),
        ("t", 0, 2, [1, 3], "PREFERRED_LEADER_NOT_AVAILABLE"),
    ]
    assert [f[0] for f in ctl.failed_elections] == [25.0, 40.0]
    assert ctl.state[("t", 0)]["leader"] == 1 and ctl.state[("t", 0)]["leader_epoch"] == 0
    assert part(c, 1).leader == 1 and part(c, 1).leader_epoch == 0


def test_no_leader_is_elected_for_a_topic_being_deleted():
    """election-during-deletion. processReplicaLeaderElection: a partition of a topic queued for deletion
    (isTopicQueuedUpForDeletion) is answered INVALID_TOPIC_EXCEPTION, "The topic is being deleted", and nothing
    is written or sent: the deletion completes as if the election had not been asked for."""
    c = make_cluster(partitions=2)
    c.controller.delete_topic("t", at_ms=1.0)
    c.controller.elect_leader(TP, 2, at_ms=1.05)  # StopReplicas out, not every replica has answered
    c.run(1.1)
    with pytest.raises(ValueError, match=r"^INVALID_TOPIC_EXCEPTION: The topic is being deleted \(t-1\)$"):
        c.controller.elect_leader(("t", 1), 3)  # decided at once: refused at once
    res = c.run(50)
    assert [f[1:] for f in c.controller.failed_elections] == [("t", 0, 2, [1, 2, 3], "INVALID_TOPIC_EXCEPTION")]
    assert not c.controller.decisions and "LeaderAndIsr" not in set(res.requests["api"])
    assert "t" in c.controller.deleted_topics and not c.controller.deleting
    assert all(not b.replica_manager.partitions for b in c.brokers.values())


def test_an_election_whose_partition_is_deleted_while_its_state_is_written_changes_nothing():
    """election-write-after-deletion. The controller's events do not overlap in Kafka (one event thread), so
    a deletion cannot complete in the middle of an election; in the model the election's znode write takes
    zk_latency_ms, and a deletion that completes meanwhile leaves nothing to write: the election fails
    UNKNOWN_TOPIC_OR_PARTITION (it was a KeyError from inside the run)."""
    c = make_cluster()
    c.controller.elect_leader(TP, 2, at_ms=5.0)  # decided at 5.0, written at 7.0
    c.controller.delete_topic("t", at_ms=5.2)
    c.run(50)
    assert 5.2 < c.controller.deleted_topics["t"] < 7.0
    assert [f[1:] for f in c.controller.failed_elections] == [("t", 0, 2, [1, 2, 3], "UNKNOWN_TOPIC_OR_PARTITION")]
    assert not c.controller.decisions and not c.controller.state


def test_leader_and_isr_leaves_the_metadata_cache_as_it_was():
    """leader-and-isr-writes-metadata-cache. ZkMetadataCache.updateMetadata runs only for UpdateMetadata
    (KafkaApis.handleUpdateMetadataRequest): after a LeaderAndIsr alone, Metadata answers still name the old leader."""
    c = make_cluster()
    run_control(c, 1, "LeaderAndIsr", [state(c, 2, 1)])
    assert part(c, 1).leader == 2
    assert c.brokers[1].metadata_cache.describe([TP])[TP] == ("NONE", 1, 0)


# -- follower truncation (AbstractFetcherThread.getOffsetTruncationState) -------------------------------


def follower_log(*epochs):
    """A follower's partition whose log holds ``(records, epoch)`` batches."""
    p = Partition("t", 0, [1, 2, 3], 1)
    for records, epoch in epochs:
        p.log.append_as_leader(records, epoch)
    return p


def test_a_diverging_follower_truncates_to_the_smaller_end_of_the_common_epoch():
    """truncate-to-leader-end-not-min. getOffsetTruncationState: min(followerEndOffset, leader's endOffset, LEO):
    the follower's epoch 0 ends at 10, the leader's at 15, so the follower keeps 0..9 only."""
    p = follower_log((10, 0), (10, 1))  # epoch 0: 0..9, epoch 1: 10..19
    assert ReplicaFetcherThread._truncation_offset(p, 0, 15) == 10


def test_an_epoch_the_follower_does_not_know_truncates_to_its_own_end_and_asks_again():
    """truncate-ignores-unknown-epoch. getOffsetTruncationState: followerEpoch != leader's epoch → truncate to
    min(followerEndOffset, LEO) (its own end of its largest epoch below), truncationCompleted = false."""
    p = follower_log((30, 0), (10, 2))  # epoch 0: 0..29, epoch 2: 30..39
    # the leader has epoch 1 (ending at 15), which this follower never saw; its largest below is 0, ending at 30
    assert ReplicaFetcherThread._truncation_offset(p, 1, 15) == 30


def test_a_failed_fetch_waits_replica_fetch_backoff_ms():
    """fetcher-no-error-backoff. AbstractFetcherThread.handlePartitionsWithErrors → delayPartitions(fetchBackOffMs):
    broker 3 told that broker 2 leads, before broker 2 is, gets NOT_LEADER_OR_FOLLOWER and waits 1000 ms."""
    c = make_cluster()
    run_control(c, 3, "LeaderAndIsr", [state(c, 2, 1)], until=1500)
    r = c.run(1500.0 + 1e-6).requests if False else c.run(1600).requests
    to2 = r[(r["client_id"] == "broker-3-fetcher-0") & (r["broker_id"] == 2)]
    assert to2["error"].iloc[0] == "NONE" and len(to2) >= 2
    first, second = to2["end_ms"].iloc[0], to2["sent_ms"].iloc[1]
    assert second - first >= REPLICA_FETCH_BACKOFF_MS


# -- purgatory (DelayedOperation.scala) ------------------------------------------------------------------


def test_the_purge_needs_more_than_the_purge_interval_of_completed_operations():
    """purgatory-purge-at-the-interval. ExpiredOperationReaper: estimatedTotalOperations - numDelayed > purgeInterval."""
    env, reps, pur, answered = purgatory(purge_interval=3)
    a, c = ("t", 0), ("t", 2)

    class Req:
        def __init__(self):
            self.partitions = (a, c)
            self.timeout_ms = 10000.0

    for _ in range(3):
        pur.try_complete_else_watch(Req(), {a: 1}, {})
    reps.hw[a] = 1
    pur.check_and_complete(a)
    assert len(answered) == 3 and pur.size.value == 3  # still watched under c
    env.run(until=450)  # two reaper cycles: 3 completed is not more than 3
    assert pur.size.value == 3
    pur.try_complete_else_watch(Req(), {a: 2}, {})
    reps.hw[a] = 2
    pur.check_and_complete(a)
    env.run(until=650)
    assert pur.size.value == 0


def test_a_produce_that_can_complete_at_once_is_answered_without_waiting():
    """purgatory-no-first-try. DelayedOperationPurgatory.tryCompleteElseWatch tries the operation before it
    watches it: an acks=all produce whose ISR is the leader alone is answered when appended."""
    _env, reps, pur, answered = purgatory()
    reps.hw[TP] = 10

    class Req:
        partitions = (TP,)
        timeout_ms = 30000.0

    req = Req()
    pur.try_complete_else_watch(req, {TP: 10}, {})
    assert answered == [req] and req.error == "NONE"
    assert pur.size.value == 0 and pur.num_delayed.value == 0


def test_operations_expire_timeout_after_they_were_parked_whatever_the_order():
    """DelayedOperationPurgatory's timer: each operation expires timeoutMs after it was watched, a later one
    with a shorter timeout first; a completed one never expires, and the timer keeps no completed request."""
    env, reps, pur, _answered = purgatory()

    class Req:
        def __init__(self, tp, timeout_ms):
            self.partitions = (tp,)
            self.timeout_ms = timeout_ms

    times = {}
    pur.respond = lambda r: times.setdefault(r.partitions[0], env.now)
    slow, fast, done = Req(("t", 0), 100.0), Req(("t", 1), 30.0), Req(("t", 2), 50.0)
    pur.try_complete_else_watch(slow, {slow.partitions[0]: 1}, {})
    env.run(until=10)
    pur.try_complete_else_watch(fast, {fast.partitions[0]: 1}, {})
    pur.try_complete_else_watch(done, {done.partitions[0]: 1}, {})
    reps.hw[("t", 2)] = 1
    env.run(until=20)
    pur.check_and_complete(("t", 2))
    env.run(until=200)
    assert times == {("t", 2): 20, ("t", 1): 40, ("t", 0): 100}
    assert slow.error == fast.error == "REQUEST_TIMED_OUT" and done.error == "NONE"
    for _ in range(500):  # many operations completed at once: the timer drops them, not just their answers
        r = Req(("t", 3), 30000.0)
        pur.try_complete_else_watch(r, {("t", 3): 5}, {})
        reps.hw[("t", 3)] = 5
        pur.check_and_complete(("t", 3))
        reps.hw[("t", 3)] = 0
    assert len(pur._expiry) <= 64 + 2 and all(op.req is None for _d, _s, op in pur._expiry if op.done)


# -- the producer (Sender, NetworkClient, RecordAccumulator) ---------------------------------------------


def stuck_producer(**kw):
    """A producer of acks=all to ``t-0`` whose followers never fetch: nothing is ever acknowledged."""
    c = make_cluster()
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching(TP)
    return c, c.producer("p", topic="t", acks="all", **kw)


def test_each_request_times_out_request_timeout_ms_after_it_was_sent(monkeypatch):
    """NetworkClient.handleTimedOutRequests: a request unanswered request.timeout.ms after it was sent times out
    then, whatever else is in flight."""
    seen = []
    orig = KafkaProducer._client_timeout
    monkeypatch.setattr(
        KafkaProducer,
        "_client_timeout",
        lambda self, req, conn: (seen.append((self.env.now, req.sent)), orig(self, req, conn))[1],
    )
    c, p = stuck_producer(request_timeout_ms=50, max_in_flight_requests_per_connection=1)
    for t in (1, 11, 23):
        p.burst(1, at_ms=t)
    c.run(300)
    # the first at 1.2 ms times out at 51.2; its retry (sent after retry.backoff.ms, at 151.2) at 201.2
    assert len(seen) >= 2 and all(now - sent == pytest.approx(50) for now, sent in seen)


def test_a_client_timeout_fails_every_request_on_the_connection_and_retries_after_the_backoff():
    """producer-timeout-fails-only-that-request, producer-no-retry-backoff. NetworkClient.processDisconnection
    cancels every request in flight on the node; Sender re-enqueues their batches, sent again retry.backoff.ms
    (100) later (RecordAccumulator.ready: backingOff)."""
    c, p = stuck_producer(request_timeout_ms=50, max_in_flight_requests_per_connection=3)
    for t in (1, 11, 21):
        p.burst(1, at_ms=t)
    r = c.run(200).requests
    produce = r[r["api"] == "Produce"]
    first = produce[produce["sent_ms"] < 30]
    again = produce[produce["sent_ms"] > 30]
    assert len(first) == 3 and len(again) >= 3
    # the first request timed out 50 ms after it was sent: all three failed then, and went out again together
    # retry.backoff.ms later
    t = first["sent_ms"].iloc[0] + 50 + 100
    assert again["sent_ms"].iloc[:3].tolist() == pytest.approx([t, t, t], abs=0.01)


def test_no_more_than_max_in_flight_requests_per_connection():
    """producer-ignores-max-in-flight. NetworkClient.canSendRequest: InFlightRequests.canSendMore."""
    c, p = stuck_producer(max_in_flight_requests_per_connection=2)
    p.burst(10, at_ms=1)
    r = c.run(40).requests
    assert (r["api"] == "Produce").sum() == 2


def test_a_retried_batch_goes_back_to_the_head_of_its_partition():
    """producer-retry-at-the-tail. RecordAccumulator.reenqueue: deque.addFirst, so a younger batch of the
    partition waits behind the retried one (and its backoff)."""
    c = Cluster(3, seed=0, broker_overrides={"min.insync.replicas": 2})
    c.create_topic("t", assignment={0: [1]})  # ISR [1] < 2: every acks=all append is NOT_ENOUGH_REPLICAS
    p = c.producer("p", topic="t", acks="all", max_in_flight_requests_per_connection=1)
    p.burst(1, at_ms=1)
    p.burst(1, at_ms=5)
    c.run(60)
    old, young = p.batches
    assert old.error == "NOT_ENOUGH_REPLICAS" and old.attempts == 1 and old.retry_at > 60
    assert young.attempts == 0  # behind the retried batch, not sent in its place


def test_a_batch_out_of_retries_is_failed_in_the_ledger():
    """ledger-failed-counted-pending. Sender.canRetry false → failBatch: the error goes to the application."""
    c = Cluster(3, seed=0, broker_overrides={"min.insync.replicas": 2})
    c.create_topic("t", assignment={0: [1]})
    c.producer("p", topic="t", acks="all", retries=0).burst(1, at_ms=1)
    lg = c.run(50).ledger
    assert lg["outcome"].tolist() == ["failed"] and lg["error"].tolist() == ["NOT_ENOUGH_REPLICAS"]


def test_a_consumer_reads_only_below_the_high_watermark():
    """consumer-reads-beyond-hw. ReplicaManager.readFromLocalLog with FetchHighWatermark isolation: records
    the followers do not have yet (the HW stays at 0) are not given to consumers."""
    c = make_cluster()
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching(TP)
    c.producer("p", topic="t", acks=1).burst(5, at_ms=1)
    reader = c.consumer("reader", topic="t", poll_interval_ms=10)
    c.run(200)
    assert part(c, 1).leo == 50 and part(c, 1).hw == 0 and reader.consumed == 0


# -- the fetcher thread's response handling (AbstractFetcherThread.processFetchRequest) ----------------


def _leader_answers(c, rewrite):
    """Broker 1 (the leader) answers follower fetches through ``rewrite(replica_id, out)``."""
    rm = c.brokers[1].replica_manager
    serve = rm.fetch_as_leader

    def fetch_as_leader(replica_id, fetches, *args, **kwargs):
        out, any_data = serve(replica_id, fetches, *args, **kwargs)
        return rewrite(replica_id, out), any_data

    rm.fetch_as_leader = fetch_as_leader


def test_a_high_watermark_from_a_fetch_without_records_is_capped_at_the_followers_log_end():
    """follower-hw-beyond-leo-empty-fetch. ReplicaFetcherThread.processPartitionData updates the follower's
    HW with the leader's through Log.updateHighWatermark, capped at its own log end, records or not."""
    c = make_cluster()
    # the leader says its HW is 7 beyond what it has, in answers that carry no records
    _leader_answers(c, lambda rid, out: {tp: (e, hw + 7 if not b else hw, b, d) for tp, (e, hw, b, d) in out.items()})
    c.brokers[1].replica_manager.append(Produce(10))
    c.run(1200)  # caught up, the followers' next fetches wait replica.fetch.wait.max.ms (500) and come back empty
    for follower in (2, 3):
        p = part(c, follower)
        assert p.log.leo == 10 and p.hw <= p.log.leo


def test_a_fetch_answer_for_a_partition_whose_leader_epoch_changed_in_flight_is_dropped():
    """fetcher-applies-stale-response. AbstractFetcherThread.processFetchRequest applies a partition's data
    only if its fetch state's current leader epoch is the one the request was built with."""
    c = make_cluster()
    bumped = []

    def new_epoch_in_flight(rid, out):
        if rid == 2 and not bumped and any(b for _e, _hw, b, _d in out.values()):
            part(c, 2).leader_epoch += 1  # a LeaderAndIsr reached broker 2 while its fetch was answered
            bumped.append(c.env.now)
        return out

    _leader_answers(c, new_epoch_in_flight)
    c.brokers[1].replica_manager.append(Produce(10))
    c.run(2)
    assert bumped and part(c, 2).log.leo == 0  # broker 2 dropped the answer
    assert part(c, 3).log.leo == 10  # broker 3's epoch did not change: it appended


def test_a_deleted_topic_is_gone_from_the_controller_once_the_last_replica_answers():
    """topic-deleted-before-every-replica. TopicDeletionManager completes a deletion only when every replica
    has answered StopReplica(delete=true) (``isTopicDeletionSuccessful``), once."""

    class Completions(dict):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __setitem__(self, key, value):
            self.calls.append((key, value))
            super().__setitem__(key, value)

    c = make_cluster(partitions=3)
    c.controller.deleted_topics = done = Completions()
    c.controller.delete_topic("t", at_ms=1.0)
    res = c.run(50)
    deletes = res.requests[res.requests["api"] == "StopReplica"].sort_values("end_ms").tail(3)
    assert done.calls == [("t", pytest.approx(deletes["end_ms"].max()))]

"""The cluster's replication rules, one test each, against Kafka 2.8's source (docs/kafka-reference.md §5).

Each test names the rule and the Kafka method it comes from; each fails when that rule is removed from
the model (tools/mutate.py applies those removals and reports which tests catch them).
"""

from __future__ import annotations

import pytest

from kafka_lab.sim import Cluster
from kafka_lab.sim.server.log import next_offset
from kafka_lab.sim.server.metadata_cache import MetadataCache
from kafka_lab.sim.server.purgatory import ProducePurgatory
from kafka_lab.sim.server.replica_manager import ReplicaManager

TP = ("t", 0)


def make_cluster(n=3, partitions=1, *, lag=None, min_isr=None, seed=0, control_plane=False, wait_ms=None):
    over = {}
    if lag is not None:
        over["replica.lag.time.max.ms"] = lag
    if min_isr is not None:
        over["min.insync.replicas"] = min_isr
    if wait_ms is not None:
        over["replica.fetch.wait.max.ms"] = wait_ms
    c = Cluster(n, seed=seed, broker_overrides=over, control_plane=control_plane)
    c.create_topic("t", assignment={p: list(range(1, n + 1)) for p in range(partitions)})
    return c


def part(c, broker, tp=TP):
    return c.brokers[broker].replica_manager.partitions[tp]


def state(c, leader, epoch, *, isr=(1, 2, 3), replicas=(1, 2, 3), tp=TP):
    return {
        "topic": tp[0],
        "partition": tp[1],
        "leader": leader,
        "leader_epoch": epoch,
        "isr": list(isr),
        "replicas": list(replicas),
    }


# -- high watermark and acks=all -----------------------------------------------------------------------


def test_the_high_watermark_is_the_smallest_log_end_offset_in_the_isr():
    """Partition.maybeIncrementLeaderHW: min(leader LEO, LEO of each ISR follower)."""
    c = make_cluster()
    c.producer("p", topic="t", acks="all").open_loop(2000)
    c.env.timeout(20).callbacks.append(lambda _e: c.brokers[3].fetchers.stop_fetching(TP))
    c.env.run(until=50)
    leader = part(c, 1)
    third = leader.remote[3].leo
    assert leader.leo > 0 and 0 <= third < leader.leo
    assert leader.hw == min(leader.leo, leader.remote[2].leo, third)
    # a follower's HW is the leader's as of its last fetch, never beyond its own LEO
    assert part(c, 2).hw <= min(leader.hw, part(c, 2).leo)


def test_acks_all_waits_for_the_isr_and_acks_1_does_not():
    c = make_cluster()
    c.brokers[2].fetchers.stop_fetching(TP)
    c.producer("all", topic="t", acks="all").burst(1, at_ms=1)
    c.producer("one", topic="t", acks=1).burst(1, at_ms=1)
    res = c.run(100)
    lg = res.ledger.set_index("client_id")
    assert lg.loc["one", "outcome"] == "committed" and lg.loc["one", "latency_ms"] < 5
    assert lg.loc["all", "outcome"] == "pending"  # broker 2 never fetches: the HW cannot pass its LEO


def test_acks_all_below_min_insync_replicas_fails_not_enough_replicas_and_appends_nothing():
    """Partition.appendRecordsToLeader: ISR smaller than min.insync.replicas → NOT_ENOUGH_REPLICAS."""
    rm = ReplicaManager(1, min_insync_replicas=2)
    rm.add_partition("t", 0, [1, 2, 3], leader=1, isr=[1], min_isr=2)

    class Req:
        partitions = (TP,)
        acks = -1
        records = 10
        payload = None

    required, _bases, errors = rm.append(Req)
    assert errors == {TP: "NOT_ENOUGH_REPLICAS"} and rm.partitions[TP].leo == 0 and not required
    Req.acks = 1
    _, _, errors = rm.append(Req)
    assert errors == {} and rm.partitions[TP].leo == 10  # acks=1 does not look at the ISR


def test_isr_too_small_when_the_high_watermark_arrives_is_not_enough_replicas_after_append():
    """Partition.checkEnoughReplicasReachOffset: HW reached but the ISR shrank below min.insync.replicas."""
    rm = ReplicaManager(1, min_insync_replicas=2)
    p = rm.add_partition("t", 0, [1, 2], leader=1, isr=[1, 2], min_isr=2)
    p.log.append_as_leader(10, 0)
    assert rm.check_enough_replicas_reach_offset(TP, 10) is None  # waiting
    p.isr = [1]
    p.hw = 10
    assert rm.check_enough_replicas_reach_offset(TP, 10) == "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    p.isr = [1, 2]
    assert rm.check_enough_replicas_reach_offset(TP, 10) == "NONE"


# -- ISR: shrink and expand through AlterIsr -----------------------------------------------------------


def test_a_stuck_follower_leaves_the_isr_after_replica_lag_time_max_ms_through_alter_isr():
    """maybeShrinkIsr every lag/2; the leader sends AlterIsr; the controller writes it and sends UpdateMetadata."""
    c = make_cluster(lag=100)
    c.producer("p", topic="t", acks=1).open_loop(1000)
    c.brokers[3].fetchers.stop_fetching(TP)
    res = c.run(400)
    ev = res.events
    shrink = ev[(ev["event"] == "isr_shrink") & (ev["broker_id"] == 1)]
    assert len(shrink) == 1
    t = shrink["time_ms"].iloc[0]
    assert 100 < t <= 150 + 5  # out of sync after 100 ms, found by the next check (every 50 ms), plus AlterIsr
    assert part(c, 1).isr == [1, 2] and c.controller.state[TP]["isr"] == [1, 2]
    assert c.controller.state[TP]["zk_version"] == 1
    alter = res.requests[res.requests["api"] == "AlterIsr"]
    assert len(alter) == 1 and alter["broker_id"].iloc[0] == c.controller.id and alter["plane"].iloc[0] == "data"
    for b in (1, 2, 3):  # published with UpdateMetadata, not LeaderAndIsr
        assert c.brokers[b].metadata_cache.partitions[TP]["isr"] == [1, 2]
    assert not (res.requests["api"] == "LeaderAndIsr").any()


def test_a_follower_that_catches_up_rejoins_the_isr():
    """maybeExpandIsr: a replica out of the ISR whose fetch offset reaches the HW is added (AlterIsr)."""
    c = make_cluster(lag=100)
    c.producer("p", topic="t", acks=1).open_loop(1000)
    c.brokers[3].fetchers.stop_fetching(TP)
    c.env.timeout(300).callbacks.append(lambda _e: c.brokers[3].fetchers.resume_fetching(TP))
    res = c.run(600)
    kinds = res.events.query("broker_id == 1 and event in ['isr_shrink', 'isr_expand']")["event"].tolist()
    assert kinds == ["isr_shrink", "isr_expand"]
    assert part(c, 1).isr == [1, 2, 3] and c.controller.state[TP]["zk_version"] == 2


def test_alter_isr_with_a_stale_zk_version_is_refused():
    """KafkaController.processAlterIsr: a wrong zkVersion is INVALID_UPDATE_VERSION and nothing changes."""
    c = make_cluster(lag=100)
    c.controller.state[TP]["zk_version"] = 5  # someone else wrote the znode
    c.producer("p", topic="t", acks=1).open_loop(1000)
    c.brokers[3].fetchers.stop_fetching(TP)
    res = c.run(300)
    failed = res.events.query("event == 'isr_change_failed'")
    assert len(failed) >= 1 and failed["detail"].iloc[0]["error"] == "INVALID_UPDATE_VERSION"
    assert c.controller.state[TP]["isr"] == [1, 2, 3] and part(c, 1).isr == [1, 2, 3]


# -- LeaderAndIsr, StopReplica, UpdateMetadata on the broker -------------------------------------------


def run_control(c, broker, api, states, *, until=20.0, **kw):
    c.controller.send(c.brokers[broker], api, states, at_ms=1.0, **kw)
    res = c.run(until)
    return [r for r in c.log if r.api == api][-1], res


def test_leader_and_isr_with_a_leader_epoch_not_newer_is_ignored():
    """becomeLeaderOrFollower: leaderEpoch <= current → STALE_CONTROLLER_EPOCH (sic) and no change."""
    c = make_cluster()
    req, _ = run_control(c, 1, "LeaderAndIsr", [state(c, 2, 0)])
    assert req.partition_errors == {TP: "STALE_CONTROLLER_EPOCH"}
    assert part(c, 1).leader == 1 and part(c, 1).leader_epoch == 0


def test_leader_and_isr_for_a_broker_outside_the_replicas_is_unknown_topic_or_partition():
    c = make_cluster()
    req, _ = run_control(c, 1, "LeaderAndIsr", [state(c, 2, 1, replicas=(2, 3), isr=(2, 3))])
    assert req.partition_errors == {TP: "UNKNOWN_TOPIC_OR_PARTITION"}
    assert part(c, 1).leader == 1


@pytest.mark.parametrize("api", ["LeaderAndIsr", "UpdateMetadata", "StopReplica"])
def test_requests_from_an_older_controller_epoch_are_fenced(api):
    """Every controller request carries the controller epoch; an older one is STALE_CONTROLLER_EPOCH."""
    c = make_cluster()
    c.brokers[1].replica_manager.controller_epoch = 3
    c.brokers[1].metadata_cache.controller_epoch = 3
    req, _ = run_control(c, 1, api, [state(c, 2, 1)], epoch=2)
    assert req.error == "STALE_CONTROLLER_EPOCH"
    assert part(c, 1).leader == 1 and c.brokers[1].metadata_cache.partitions[TP]["leader"] == 1


def test_stop_replica_delete_removes_the_partition_and_without_delete_keeps_it_as_it_is():
    c = make_cluster()
    c.controller.send(
        c.brokers[2],
        "StopReplica",
        [{"topic": "t", "partition": 0, "leader_epoch": 1}],
        at_ms=1.0,
        delete_partitions=False,
    )
    c.controller.send(
        c.brokers[3],
        "StopReplica",
        [{"topic": "t", "partition": 0, "leader_epoch": 1}],
        at_ms=1.0,
        delete_partitions=True,
    )
    c.run(20)
    assert TP in c.brokers[2].replica_manager.partitions and part(c, 2).leader == 1
    assert TP not in c.brokers[2].fetchers.fetching()  # its fetcher stopped
    assert TP not in c.brokers[3].replica_manager.partitions


@pytest.mark.parametrize("epoch, error", [(0, "FENCED_LEADER_EPOCH"), (-1, "NONE"), (-2, "NONE"), (1, "NONE")])
def test_stop_replica_accepts_a_newer_epoch_or_a_sentinel_and_fences_the_current_one(epoch, error):
    """2.8 stopReplicas: equal (or older) leader epoch → FENCED_LEADER_EPOCH; 3.x accepts equal."""
    c = make_cluster()
    req, _ = run_control(
        c, 2, "StopReplica", [{"topic": "t", "partition": 0, "leader_epoch": epoch}], delete_partitions=True
    )
    assert req.partition_errors == {TP: error}
    assert (TP in c.brokers[2].replica_manager.partitions) == (error != "NONE")


def test_topic_deletion_completes_when_every_replica_has_answered():
    c = make_cluster(partitions=3)
    c.controller.delete_topic("t", at_ms=1.0)
    res = c.run(50)
    stops = res.requests[(res.requests["api"] == "StopReplica")]
    assert len(stops) == 6  # delete=false then delete=true, to each of the three replicas
    assert c.controller.deleted_topics["t"] == pytest.approx(stops["end_ms"].max())
    assert all(not b.replica_manager.partitions for b in c.brokers.values())
    assert all(not b.metadata_cache.partitions for b in c.brokers.values())


def test_a_deleted_topic_leaves_the_cluster_when_the_deletion_completes_and_its_name_is_free_again():
    """TopicDeletionManager.completeDeleteTopic deletes /brokers/topics/<t> once every replica has deleted its
    log: the cluster's topic table follows (it once listed the topic for ever, so the name could not be reused).
    While the deletion is in progress the topic still exists (AdminZkClient: Topic 't' already exists.)."""
    from kafka_lab.assignment import TopicExistsException

    c = make_cluster(partitions=3)
    old = c.producer("old", topic="t", acks="all")  # a client of the topic while it is deleted
    old.open_loop(rate_per_s=200)
    c.controller.delete_topic("t", at_ms=10.0)
    c.run(10.5)  # StopReplicas on their way: not yet deleted
    assert "t" in c.topics and c.partitions_of("t") == [("t", 0), ("t", 1), ("t", 2)]
    with pytest.raises(TopicExistsException, match=r"Topic 't' already exists\."):
        c.create_topic("t", 1, 1)
    c.run(100)
    done = c.controller.deleted_topics["t"]
    assert 10.5 < done < 100
    assert "t" not in c.topics
    with pytest.raises(ValueError, match=r"unknown topic 't'; topics: \[\]"):
        c.partitions_of("t")
    assert c.create_topic("t", 2, 3) == {0: [1, 2, 3], 1: [2, 3, 1]}
    assert c.partitions_of("t") == [("t", 0), ("t", 1)]
    new = c.producer("new", topic="t", acks="all")
    new.burst(4, at_ms=150.0)
    res = c.run(400)
    mine = res.ledger[(res.ledger["client_id"] == "new")]
    assert len(mine) == 4 and (mine["outcome"].astype(str) == "committed").all()
    assert {tp for tp, st in c.controller.state.items()} == {("t", 0), ("t", 1)}


def test_the_metadata_cache_changes_only_on_update_metadata_and_names_unknown_partitions():
    cache = MetadataCache()
    cache.update([state(None, 1, 0)], 0, 0.0, 1.0, live_brokers=[1, 2, 3])
    assert cache.describe([TP, ("t", 9)]) == {TP: ("NONE", 1, 0), ("t", 9): ("UNKNOWN_TOPIC_OR_PARTITION", -1, -1)}
    cache.update([state(None, 4, 1)], 1, 1.0, 2.0)
    assert cache.describe([TP])[TP] == ("LEADER_NOT_AVAILABLE", -1, 1)  # leader 4 is not a live broker
    assert cache.update([state(None, 2, 2)], 2, 2.0, 3.0, controller_epoch=0) == "NONE"
    cache.controller_epoch = 5
    assert cache.update([state(None, 3, 3)], 3, 3.0, 4.0, controller_epoch=4) == "STALE_CONTROLLER_EPOCH"
    assert cache.leader(TP) == 2


# -- leadership changes ------------------------------------------------------------------------------


def test_a_new_leader_knows_nothing_of_its_followers_logs():
    """Partition.makeLeader: remote LEOs unknown (-1) until they fetch; ISR members caught up 'now'."""
    c = make_cluster()
    c.producer("p", topic="t", acks="all").open_loop(2000)
    c.controller.elect_leader(TP, 2, at_ms=30)
    c.env.run(until=34.5)  # decided at 32 (ZooKeeper write), applied by 33
    ev = [e for e in c.brokers[2].replica_manager.events if e[1] == "become_leader"]
    assert len(ev) == 1
    p = part(c, 2)
    assert p.leader == 2 and p.leader_epoch == 1 and p.log.epochs[-1] == (1, p.leo)
    t = ev[0][0]
    fetched_since = {
        r.client_id
        for r in c.log
        if r.api == "Fetch" and r.connection.broker_id == 2 and r.dequeue == r.dequeue and r.dequeue >= t
    }
    for rid, r in p.remote.items():
        if f"broker-{rid}-fetcher-0" not in fetched_since:
            assert r.leo == -1 and r.last_caught_up_ms == t
    assert p.hw <= min(p.leo, *[r.leo for r in p.remote.values() if r.leo >= 0] or [p.leo])


def test_fetch_with_an_older_or_newer_leader_epoch_is_fenced():
    rm = ReplicaManager(1)
    rm.add_partition("t", 0, [1, 2], leader=1, leader_epoch=3)
    out, _ = rm.fetch_as_leader(2, {TP: (0, -1, 2)})
    assert out[TP][0] == "FENCED_LEADER_EPOCH"
    out, _ = rm.fetch_as_leader(2, {TP: (0, -1, 4)})
    assert out[TP][0] == "UNKNOWN_LEADER_EPOCH"
    out, _ = rm.fetch_as_leader(2, {TP: (0, -1, 3)})
    assert out[TP][0] == "NONE"


def test_a_follower_that_diverged_truncates_to_where_the_new_leaders_epoch_ends():
    """The old leader kept appending acks=1 records in epoch 0 after the new leader started epoch 1; it
    truncates to the end of epoch 0 on the new leader, and then holds exactly the new leader's log."""
    from kafka_lab.sim import truncation_incident

    res = truncation_incident(control_plane=False, until_ms=150.0)
    c = res.cluster
    old, new = part(c, 1, ("orders", 0)), part(c, 2, ("orders", 0))
    ev = res.events.query("event == 'truncated' and broker_id == 1 and partition == 0")
    assert len(ev) >= 1
    cut = ev["detail"].iloc[0]
    # the new leader answers "epoch 0 ends at" its own end of epoch 0, or, when it never appended in epoch
    # 0, where its first epoch starts (LeaderEpochFileCache.endOffsetFor); the follower cuts there
    epoch, end = new.log.end_offset_for_epoch(0)
    assert epoch == 0 and cut["offset"] == end and cut["removed_records"] > 0
    common = min(old.leo, new.leo)
    assert [b for b in old.log.batches if next_offset(b) <= common] == [
        b for b in new.log.batches if next_offset(b) <= common
    ]
    # the ledger's truncated batches are exactly among those the old leader removed
    removed = {i for d in ev["detail"] for i in d["batch_ids"]}
    lost = res.ledger[res.ledger["outcome"] == "truncated"]
    assert len(lost) > 0 and set(lost["batch_id"]) <= removed


# -- purgatory --------------------------------------------------------------------------------------


class _Gauge:
    def __init__(self):
        self.value = 0

    def add(self, d):
        self.value += d


class _Replicas:
    def __init__(self):
        self.hw = {}

    def check_enough_replicas_reach_offset(self, tp, required):
        return "NONE" if self.hw.get(tp, 0) >= required else None


class _Req:
    def __init__(self, tps):
        self.partitions = tuple(tps)
        self.timeout_ms = 1000.0


def purgatory(purge_interval=1000):
    import simpy

    env = simpy.Environment()
    answered = []
    reps = _Replicas()
    pur = ProducePurgatory(env, reps, _Gauge(), _Gauge(), answered.append, purge_interval=purge_interval)
    return env, reps, pur, answered


def test_purgatory_size_counts_one_watch_entry_per_partition_of_each_request():
    """DelayedOperationPurgatory.watched: an operation is watched under every key (partition) it has."""
    _env, reps, pur, answered = purgatory()
    tps = [("t", p) for p in range(20)]
    pur.try_complete_else_watch(_Req(tps), dict.fromkeys(tps, 10), {})
    assert pur.size.value == 20 and pur.num_delayed.value == 1
    for tp in tps[1:]:  # 19 partitions replicated: the operation still waits for partition 0
        reps.hw[tp] = 10
        pur.check_and_complete(tp)
    assert pur.size.value == 20 and pur.num_delayed.value == 1 and not answered
    reps.hw[tps[0]] = 10
    pur.check_and_complete(tps[0])
    assert answered and pur.num_delayed.value == 0
    # completed, but still watched under the 19 other keys until they are checked again or purged
    assert pur.size.value == 19


def test_completed_operations_are_purged_once_more_than_the_purge_interval_are_still_watched():
    env, reps, pur, answered = purgatory(purge_interval=3)
    a, b, c = ("t", 0), ("t", 1), ("t", 2)
    for _ in range(5):
        pur.try_complete_else_watch(_Req([a, b, c]), {a: 1, b: 1}, {})
    reps.hw[a] = reps.hw[b] = 1
    pur.check_and_complete(a)
    pur.check_and_complete(b)
    # completed, yet still watched under a (checked before they completed) and c (never checked)
    assert len(answered) == 5 and pur.size.value == 10
    env.run(until=250)  # the reaper's next cycle: 5 completed > 3 → purge
    assert pur.size.value == 0


def test_a_wake_up_examines_only_the_partition_that_changed():
    _env, reps, pur, answered = purgatory()
    a, b = ("t", 0), ("t", 1)
    pur.try_complete_else_watch(_Req([a, b]), {a: 1, b: 1}, {})
    reps.hw[a] = reps.hw[b] = 1
    pur.check_and_complete(a)  # b is not re-examined here: its own wake-up settles it
    assert not answered
    pur.check_and_complete(b)
    assert len(answered) == 1


def test_an_expired_produce_answers_request_timed_out_for_the_partitions_still_pending():
    env, reps, pur, answered = purgatory()
    a, b = ("t", 0), ("t", 1)
    reps.hw[a] = 1
    req = _Req([a, b])
    pur.try_complete_else_watch(req, {a: 1, b: 1}, {})
    env.run(until=1001)
    assert answered == [req] and req.partition_errors == {a: "NONE", b: "REQUEST_TIMED_OUT"}
    assert req.error == "REQUEST_TIMED_OUT" and pur.num_delayed.value == 0


# -- placement and the follower's request path ----------------------------------------------------------


def test_a_cluster_with_racks_places_replicas_as_kafkas_rack_aware_assignment():
    """cluster-ignores-racks, cluster-drops-racks-argument. ``racks={id: broker.rack}`` becomes each broker's
    ``broker.rack``, and a topic is placed by ``AdminUtils.assignReplicasToBrokers`` over those racks
    (``assignReplicasToBrokersRackAware``): compared here with the assignment called directly (its loop
    transcription, kafka_lab.assignment.reference, and the fast one the cluster uses). Rack-aware with
    three racks and RF 3: every partition has one replica per rack (rack-unaware, partition 0 would be
    1, 2, 3: two in rack1)."""
    from kafka_lab.assignment import BrokerMetadata, assign_replicas_to_brokers, assign_replicas_to_brokers_reference

    racks = {1: "rack1", 2: "rack1", 3: "rack2", 4: "rack2", 5: "rack3", 6: "rack3"}
    c = Cluster(6, seed=0, racks=racks)
    assert {b: c.brokers[b].config.props.get("broker.rack") for b in c.brokers} == racks
    placed = c.create_topic("t", 12, 3)
    metas = [BrokerMetadata(b, r) for b, r in racks.items()]
    assert (
        placed == assign_replicas_to_brokers_reference(metas, 12, 3, 0) == assign_replicas_to_brokers(metas, 12, 3, 0)
    )
    assert all(len({racks[b] for b in replicas}) == 3 for replicas in placed.values())
    for p, replicas in placed.items():  # what the controller and every replica hold
        assert c.controller.state[("t", p)]["replicas"] == replicas
        assert all(c.brokers[b].replica_manager.partitions[("t", p)].replicas == replicas for b in replicas)


#: brokers whose clients and brokers use different listeners (EXTERNAL for clients, INTERNAL between brokers)
SPLIT_LISTENERS = {
    "listeners": "EXTERNAL://:9092,INTERNAL://:9093,CONTROLLER://:9091",
    "listener.security.protocol.map": "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "num.io.threads": 1,
}


def test_follower_fetches_go_through_the_leaders_inter_broker_listener_and_queue_behind_produce_traffic():
    """follower-fetch-through-client-listener, follower-fetch-not-in-request-log. ReplicaFetcherBlockingSend
    connects to ``sourceBroker.node(brokerConfig.interBrokerListenerName)`` with client id
    ``broker-<replicaId>-fetcher-<fetcherId>`` (ReplicaFetcherThread); the leader handles the Fetch like any
    request: in its request log, on its data plane, through the same request queue (one handler thread
    here) as the producers' requests, so a busy leader makes its followers wait and fetch less often."""
    fetches = {}
    for producers in (1, 10):
        c = Cluster(3, seed=0, broker_overrides=SPLIT_LISTENERS)
        c.create_topic("t", assignment={p: [1, 2, 3] for p in range(6)})
        for i in range(producers):
            c.producer(f"p{i}", topic="t", acks=1, partitions=list(range(6))).open_loop(1000)
        r = c.run(300).requests
        fetch = r[r["api"] == "Fetch"]
        assert set(fetch["client_id"]) == {"broker-2-fetcher-0", "broker-3-fetcher-0"}
        assert (fetch["broker_id"] == 1).all() and len(fetch) > 20
        assert set(fetch["listener"]) == {"INTERNAL"} and set(fetch["plane"]) == {"data"}
        assert set(r.loc[r["api"] == "Produce", "listener"]) == {"EXTERNAL"}  # the clients' listener
        fetches[producers] = fetch
    quiet, busy = fetches[1], fetches[10]
    assert busy["requestQueueTime"].mean() > 4 * quiet["requestQueueTime"].mean()
    assert len(busy) < len(quiet) / 2

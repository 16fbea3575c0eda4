"""A KRaft cluster (``Cluster(..., mode="kraft")``): the quorum beside the same brokers, against Kafka 4.0's
``KafkaRaftClient``, ``MetadataLoader``, ``BrokerMetadataPublisher``, ``ReplicaManager.applyDelta``,
``Partition.leaderIsrUpdateLock`` and ``isReplicaIsrEligible``, ``BrokerLifecycleManager`` and the quorum
controller (docs/kafka-reference.md §8.4-§8.6).

Each test names the mutation of the mutation lists (tools/mutate.py) it kills.
"""

from __future__ import annotations

import numpy as np
import pytest

from kafka_lab.listeners import ConfigException
from kafka_lab.sim import (
    Cluster,
    broker_fencing,
    kraft_failover,
    purgatory_incident,
    shutdown_in_cluster,
    stale_metadata_incident,
    truncation_incident,
    unavailability_incident,
)
from kafka_lab.sim.kraft.config import KRaftConfig

LOAD = {"producers": 200, "burst": 1, "rate_per_s": 20, "partitions": 20}
ZK_ONLY = {"LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdown", "AlterIsr"}


def test_a_kraft_cluster_starts_in_steady_state_and_sends_no_zookeeper_mode_request():
    """At t=0 the lowest controller leads epoch 1, every broker is registered and unfenced, the topic's records are
    committed at the start of the log; the run's requests are 4.0's: no LeaderAndIsr, UpdateMetadata,
    StopReplica, ControlledShutdown or AlterIsr (KAFKA-18399), and the KRaft ones go to the controllers over their
    CONTROLLER listener."""
    c = Cluster(3, seed=0, mode="kraft")
    c.create_topic("t", 6, 3)
    c.producer("p", topic="t", acks="all").open_loop(200)
    c.restart_broker(3, at_ms=1000, down_ms=500)
    res = c.run(6000)
    assert c.controller.history[0] == (0.0, 3000, 1)
    ml = res.metadata_log
    first = list(ml[ml["committed"]].sort_values("offset")["record_type"][:5])
    assert first == [
        "LeaderChangeMessage",
        "RegisterBrokerRecord",
        "RegisterBrokerRecord",
        "RegisterBrokerRecord",
        "BrokerRegistrationChangeRecord",
    ]
    r = res.requests
    assert not set(r["api"]) & ZK_ONLY
    kraft = r[r["api"].isin(["Vote", "BeginQuorumEpoch", "BrokerRegistration", "BrokerHeartbeat", "AlterPartition"])]
    assert set(kraft["listener"]) == {"CONTROLLER"} and set(kraft["broker_id"]) <= {3000, 3001, 3002}
    meta_fetch = [x for x in c.log if x.api == "Fetch" and x.connection.broker_id >= 3000]
    assert meta_fetch and {tuple(x.partitions) for x in meta_fetch} == {(("__cluster_metadata", 0),)}
    assert {"BrokerRegistration", "AlterPartition", "BrokerHeartbeat"} <= set(r["api"])
    assert res.outcomes().loc[-1, "committed"] > 0 and res.outcomes().loc[-1, "failed"] == 0


def test_the_control_plane_and_a_broker_controller_are_refused_in_kraft_mode():
    """A KRaft node has no ``control.plane.listener.name``: Kafka's configuration error (3.9's message, §8.3); nor is
    the controller a broker (``controller``, ``controller_id``)."""
    with pytest.raises(ConfigException, match=r"control\.plane\.listener\.name is not supported in KRaft mode"):
        purgatory_incident(mode="kraft", control_plane=True, **LOAD)
    with pytest.raises(ConfigException, match="not supported in KRaft mode"):
        shutdown_in_cluster(mode="kraft", control_plane=True)
    with pytest.raises(ValueError, match="nodes of their own"):
        purgatory_incident(mode="kraft", controller=2, **LOAD)
    with pytest.raises(ValueError, match="nodes of their own"):
        Cluster(3, mode="kraft", controller_id=1)
    with pytest.raises(ConfigException, match="the node id 3 must not be included in the set of voters"):
        Cluster(3, mode="kraft", controllers=[3, 4, 5])
    with pytest.raises(TypeError, match="'control_plane'"):
        purgatory_incident(**LOAD)
    with pytest.raises(ValueError, match="mode is 'zk'"):
        Cluster(3, mode="raft")


def test_the_incidents_give_the_same_columns_in_both_modes():
    """Labs 04-06's tables draw both modes: the same frames with the same columns, plus the metadata log."""
    zk = truncation_incident(control_plane=False, until_ms=200, **LOAD)
    kr = truncation_incident(mode="kraft", until_ms=200, **LOAD)
    for name in ("requests", "metrics", "ledger", "staleness", "unavailability", "events"):
        assert list(getattr(zk, name).columns) == list(getattr(kr, name).columns), name
    assert zk.metadata_log is None and list(kr.metadata_log.columns) == [
        "offset",
        "epoch",
        "record_type",
        "fields",
        "controller_id",
        "decided_ms",
        "appended_ms",
        "committed_ms",
        "committed",
    ]


def test_a_leader_move_reaches_a_busy_broker_without_waiting_behind_its_backlog():
    """``MetadataLoader``: the records are applied on the loader's own thread, not a request handler. In the purgatory
    incident broker 1's request queue holds a backlog of produces: in ZooKeeper mode without a control plane its
    LeaderAndIsr waits behind it (its cache is stale far longer than the idle brokers'); in KRaft mode it applies the
    change within a millisecond of the idle brokers (the same delivery, its own apply work)."""
    zk = purgatory_incident(control_plane=False, until_ms=1500, **LOAD)
    kr = purgatory_incident(mode="kraft", until_ms=1500, **LOAD)
    s_zk = zk.staleness.set_index("broker_id")["stale_ms"]
    s_kr = kr.staleness.set_index("broker_id")["stale_ms"]
    assert s_zk[1] - s_zk[3] > 10.0
    assert kr.staleness["applied"].all()
    assert abs(s_kr[1] - s_kr[3]) < 1.0


def test_brokers_learn_a_commit_with_the_next_write_or_500_ms_later():
    """raft-hw-completes-parked-fetch. 4.0's ``KafkaRaftClient``: a parked Fetch completes when the leader's log grows
    or after 500 ms, never because the high watermark moved (KAFKA-14145 changed that in 4.1), so without another
    write (no ``NoOpRecord``: ``metadata.max.idle.interval.ms=0``) the brokers apply a change committed at ~125 ms
    only when their parked fetch times out, 500 ms after it was parked."""
    c = Cluster(3, seed=0, mode="kraft", kraft_config=KRaftConfig(metadata_max_idle_interval_ms=0))
    c.create_topic("t", assignment={0: [1, 2, 3], 1: [2, 3, 1]})
    c.controller.elect_leader(("t", 0), 2, at_ms=100)
    res = c.run(3000)
    ml = res.metadata_log
    pcr = ml[ml["record_type"] == "PartitionChangeRecord"].iloc[0]
    assert pcr["appended_ms"] - pcr["decided_ms"] == pytest.approx(25.0)  # append.linger.ms
    assert pcr["committed_ms"] < pcr["appended_ms"] + 1
    st = res.staleness
    assert st["applied"].all()
    applied = st["decided_ms"] + st["stale_ms"]
    assert np.all((applied > pcr["committed_ms"] + 499) & (applied < pcr["committed_ms"] + 502))


def test_a_partition_change_waits_for_an_append_in_progress():
    """loader-no-partition-lock. ``Partition.makeFollower`` takes ``leaderIsrUpdateLock``'s write lock, an append holds
    its read lock: broker 1's loader makes ``orders-0`` a follower only when the Produce it is handling for that
    partition has done its work, at that request's very instant (``api_local_complete``)."""
    res = truncation_incident(mode="kraft", until_ms=1500, produce_service_ms=3.0, **LOAD)
    ev = res.events
    moved = ev[(ev["broker_id"] == 1) & (ev["event"] == "become_follower") & (ev["partition"] == 0)]
    t = float(moved.iloc[0]["time_ms"])
    writes_0 = [
        x
        for x in res.cluster.log
        if x.api == "Produce" and x.connection.broker_id == 1 and ("orders", 0) in x.partitions
    ]
    ends = np.array([x.api_local_complete for x in writes_0])
    starts = np.array([x.dequeue for x in writes_0])
    assert np.isclose(ends, t, atol=1e-9).sum() >= 1  # it went the instant the last append it waited for ended
    assert ((starts < t) & (ends > t)).sum() >= 1  # appends that began after it asked went on meanwhile


def test_apply_delta_costs_its_work_per_partition():
    """loader-free-apply. ``ReplicaManager.applyDelta``'s work per partition made leader or follower
    (``apply_partition_ms``, the model's LeaderAndIsr cost per partition): broker 2 takes over broker 3's ten
    leaderships one after another, 0.05 ms apart, where a LeaderAndIsr applies them all at one instant."""
    s = shutdown_in_cluster(mode="kraft")
    started = np.sort(s.moves["new_leader_started_ms"].to_numpy())
    assert len(started) == 10
    assert np.allclose(np.diff(started), 0.05)


def test_a_fenced_broker_neither_rejoins_an_isr_nor_holds_the_high_watermark_back():
    """replica-ignores-isr-eligibility. 4.0's ``Partition.isReplicaIsrEligible`` (KIP-841): once broker 2 is fenced,
    the leaders of the partitions it followed stop waiting for it (2.8's rule would wait for it until
    ``replica.lag.time.max.ms``, 30 s, past the end of the run): the acks=all produces complete."""
    f = broker_fencing()
    lg = f.results.ledger
    late = lg[lg["handed_over_ms"] > f.fenced_ms + 1000] if "handed_over_ms" in lg else lg
    assert f.results.outcomes().loc[-1, "pending"] < 100
    assert len(late)


def test_broker_fencing_fences_nine_seconds_after_the_last_contact_and_moves_its_leaderships():
    """broker_fencing (see kafka_lab/sim/broker_fencing.py): ``fenced_after_ms`` is the session timeout; the partitions
    broker 2 led move in the fence's event to the first ISR member in assignment order, and every other broker
    applies them."""
    f = broker_fencing()
    assert f.fenced_after_ms == pytest.approx(9000.0, abs=1e-3)
    assert f.last_contact_ms >= f.last_heartbeat_ms and f.last_contact_ms < f.fault_ms
    m = f.moves
    assert sorted(m["partition"]) == [1, 4]
    assert (m["new_leader"] == 3).all() and np.allclose(m["decided_ms"], f.fenced_ms, atol=0.2)
    assert (m["applied_ms_1"] > m["committed_ms"]).all() and (m["applied_ms_3"] > m["committed_ms"]).all()


def test_restart_broker_in_kraft_mode_goes_through_want_shut_down():
    """``restart_broker`` of a KRaft cluster: ``WantShutDown`` heartbeats until the controller lets the broker go (no
    ``ControlledShutdown`` request), a new incarnation registers with a new broker epoch (its registration's
    offset), STARTING → RECOVERY → RUNNING, and its leaderships moved before it stopped."""
    c = Cluster(3, seed=0, mode="kraft")
    c.create_topic("t", assignment={0: [2, 1, 3], 1: [1, 2, 3]})
    c.producer("p", topic="t", acks="all").open_loop(200)
    c.restart_broker(2, at_ms=1000, down_ms=300)
    res = c.run(8000)
    b2 = c.brokers[2]
    times = {e: t for t, e, _d in b2.lifecycle}
    assert times["controlled_shutdown_succeeded"] <= times["shut_down"] < times["started"]
    hb = [r for r in c.log if r.api == "BrokerHeartbeat" and r.client_id.startswith("broker-2-")]
    assert any(r.payload["want_shut_down"] for r in hb)
    ml = res.metadata_log
    reg = ml[(ml["record_type"] == "RegisterBrokerRecord") & (ml["decided_ms"] > 1000)]
    assert len(reg) == 1 and b2.broker_epoch == reg.iloc[0]["offset"]
    assert [s for _t, _f, s in b2.kraft.lifecycle.transitions][-3:] == ["STARTING", "RECOVERY", "RUNNING"]
    ev = res.events
    gave_up = ev[(ev["broker_id"] == 2) & (ev["event"] == "become_follower") & (ev["partition"] == 0)]
    assert gave_up.iloc[0]["time_ms"] < times["shut_down"]
    ap = [
        r
        for r in c.log
        if r.api == "AlterPartition" and r.client_id.startswith("broker-1-") and r.sent > times["started"]
    ]
    assert ap  # broker 2 back in the ISRs, once unfenced
    assert res.outcomes().loc[-1, "failed"] == 0


def test_the_active_controller_stops_and_a_standby_takes_over_without_a_reload():
    """Failover: the active controller's node stops; a voter that has the log is elected, becomes active, and the
    brokers find it (heartbeats, fetches) without a reload; ``NewActiveControllersCount`` grows on every
    controller and the election's latency is recorded."""
    c = Cluster(3, seed=0, mode="kraft")
    c.create_topic("t", 6, 3)
    c.producer("p", topic="t", acks="all").open_loop(200)
    c.restart_controller("active", at_ms=1000, down_ms=None)
    c.controller.elect_leader(("t", 0), c.controller.state[("t", 0)]["replicas"][1], at_ms=6000)
    res = c.run(9000)
    hist = c.controller.history
    assert hist[0][1] == 3000 and hist[-1][1] != 3000 and hist[-1][2] > 1
    km = res.kraft_metrics
    new_active = km[km["metric"] == "NewActiveControllersCount"].groupby("node_id")["value"].max()
    assert new_active[hist[-1][1]] >= 2
    assert (km["metric"] == "election-latency").any()
    assert c.controller.elections and not c.controller.failed_elections
    st = res.staleness
    assert st["applied"].all()
    hb = [r for r in c.log if r.api == "BrokerHeartbeat" and r.sent > 6000]
    assert hb and {r.connection.broker_id for r in hb} == {hist[-1][1]}
    assert res.outcomes().loc[-1, "failed"] == 0


def test_kraft_metrics_are_under_kafkas_names():
    """``last-applied-record-lag-ms`` per broker (now minus the append time of the last applied batch),
    ``NewActiveControllersCount``, ``FencedBrokerCount``, ``EventQueueTimeMs``, ``EventQueueProcessingTimeMs``, raft
    ``commit-latency`` (per record)."""
    res = unavailability_incident(mode="kraft", until_ms=1200, metrics_interval_ms=10, **LOAD)
    km = res.kraft_metrics
    names = set(km["metric"])
    assert {
        "last-applied-record-lag-ms",
        "NewActiveControllersCount",
        "FencedBrokerCount",
        "EventQueueTimeMs",
        "EventQueueProcessingTimeMs",
        "commit-latency",
        "ActiveControllerCount",
    } <= names
    lag = km[km["metric"] == "last-applied-record-lag-ms"]
    assert set(lag["node_id"]) == {1, 2, 3}
    ml = res.metadata_log
    last = ml[ml["committed"]]["appended_ms"].max()
    assert (lag["value"] >= 0).all() and lag["value"].max() < 1200
    assert last > 0


def test_a_paused_broker_is_fenced_as_a_crashed_one_and_unfenced_when_it_wakes():
    """A stop-the-world pause of broker 2 (its process gate holds every thread, kafka_lab/sim/server/node.py) stops its
    heartbeats as a crash does: fenced 9 s after the controller last heard from it, its leaderships moved; when it
    wakes it heartbeats with the epoch it registered with and, caught up, is unfenced (``calculateNextBrokerState``:
    FENCED → UNFENCED), without registering again."""
    f = broker_fencing(fault="pause", pause_ms=12_000.0)
    assert f.fault == "pause"
    assert f.fenced_after_ms == pytest.approx(9000.0, abs=1e-3)
    assert sorted(f.moves["partition"]) == [1, 4]
    c = f.results.cluster
    hb2 = [r for r in c.log if r.api == "BrokerHeartbeat" and r.client_id.startswith("broker-2-")]
    assert not [r for r in hb2 if f.fault_ms < r.sent < f.fault_ms + 12_000.0]
    assert f.unfenced_ms > f.fault_ms + 12_000.0
    ml = f.results.metadata_log
    assert not (ml["record_type"] == "RegisterBrokerRecord").loc[ml["decided_ms"] > 0].any()
    crash = broker_fencing()
    assert crash.fenced_after_ms == pytest.approx(f.fenced_after_ms, abs=1e-3) and np.isnan(crash.unfenced_ms)


def test_a_paused_old_leader_commits_nothing_after_it_wakes():
    """The active controller pauses for 10 s: the voters elect a new leader, which already has the log; when the old
    one wakes, its epoch is stale: whatever it still wrote is never committed, it follows the new leader, and every
    voter's log agrees on the committed prefix (Raft's safety)."""
    r = kraft_failover(partitions=100, fault="pause", pause_ms=10_000.0)
    assert r.fault == "pause" and r.reloaded_records <= 2  # what committed meanwhile, and its LeaderChangeMessage
    tr = r.transitions
    old = tr[(tr["node_id"] == 3000) & (tr["time_ms"] > r.phases["fault_ms"])]
    assert len(old) and old.iloc[-1]["to_state"] == "Follower" and old.iloc[-1]["epoch"] > 1
    leaders = tr[tr["to_state"] == "Leader"].groupby("epoch")["node_id"].nunique()
    assert (leaders == 1).all()
    ml = r.metadata_log
    late = ml[(ml["controller_id"] == 3000) & (ml["appended_ms"] > r.phases["fault_ms"])]
    assert not late["committed"].any()
    assert r.old_leader_uncommitted == int((~ml["committed"] & (ml["controller_id"] == 3000)).sum())


def test_controllers_as_a_count_or_a_list_of_node_ids():
    """``controllers``: a count (ids 3000, 3001, ...) or the node ids themselves (``controller.quorum.voters``); the
    lowest leads epoch 1 at t=0, and a one-controller quorum commits alone. Lab 06's incident runs on either."""
    c = Cluster(3, seed=0, mode="kraft", controllers=[7, 9, 8])
    assert c.kraft.quorum.ids == [7, 9, 8] and c.brokers[1].config.props["controller.quorum.voters"].startswith("7@")
    c.create_topic("t", 2, 3)
    c.run(1200)
    assert c.controller.history[0] == (0.0, 7, 1) and c.controller.id == 7
    one = Cluster(3, seed=0, mode="kraft", controllers=1)
    one.create_topic("t", 2, 3)
    res = one.run(1200)
    ml = res.metadata_log
    assert one.kraft.quorum.ids == [3000] and (ml["record_type"] == "NoOpRecord").sum() >= 2 and ml["committed"].all()
    st = stale_metadata_incident(mode="kraft", until_ms=300, **LOAD)
    assert st.metadata_log is not None and st.staleness["applied"].all()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda c: c.crash(1, at_ms=float("nan")), TypeError, "at_ms is a finite number"),
        (lambda c: c.crash(1, at_ms=5.0, down_ms=-1), ValueError, "down_ms must be at least 0"),
        (lambda c: c.pause(1, at_ms=5.0, for_ms=float("inf")), TypeError, "for_ms is a finite number"),
        (lambda c: c.restart_broker(1, at_ms=-5, down_ms=10.0), ValueError, "at_ms must be at least 0"),
        (lambda c: c.restart_broker(1, at_ms=5.0, down_ms="x"), TypeError, "down_ms is a finite number"),
    ],
)
def test_kraft_faults_check_their_times_at_the_call_as_zookeeper_modes_do(call, error, message):
    """A KRaft broker's crash, pause and restart refuse a bad time before anything runs (common/options.check_time)."""
    c = Cluster(3, mode="kraft")
    with pytest.raises(error, match=message):
        call(c)


def test_a_pause_inside_a_pause_does_not_wake_the_broker_early():
    """kraft-pause-inside-a-pause-wakes-it. Broker 2 pauses from 1 s for 15 s; a second pause from 2 s for 1 s is
    ignored (it is already paused), so broker 2 sends no heartbeat until 16 s (an adversary found heartbeats every
    2 s from 3 s on: the short pause's end had woken it)."""
    from kafka_lab.sim import Cluster

    c = Cluster(3, mode="kraft")
    c.create_topic("orders", partitions=3, replication_factor=3)
    c.pause(2, at_ms=1000.0, for_ms=15000.0)
    c.pause(2, at_ms=2000.0, for_ms=1000.0)
    c.run(17000.0)
    sent = [r.sent for r in c.log if r.api == "BrokerHeartbeat" and r.client_id.startswith("broker-2-")]
    assert not [t for t in sent if 1000.0 < t < 16000.0]
    assert [t for t in sent if t >= 16000.0]  # it does wake at the end of the first pause
    assert (2000.0, "pause_ignored", "paused") in c.brokers[2].lifecycle


def test_a_kraft_pause_of_30_s_or_more_is_refused():
    """The peers' request timeouts (30 s) bound a pause the model holds, as in ZooKeeper mode."""
    import pytest

    from kafka_lab.sim import Cluster

    c = Cluster(3, mode="kraft")
    with pytest.raises(ValueError, match=r"a pause of 30000\.0 ms is past what the model holds"):
        c.pause(2, at_ms=1000.0, for_ms=30000.0)

"""A broker's restart and a controller change in the cluster model, against Kafka 2.8's rules
(``KafkaController.doControlledShutdown``, ``onBrokerFailure``, ``onBrokerStartup``,
``onControllerFailover``; ``KafkaServer.controlledShutdown``; docs/kafka-reference.md)."""

import re
from collections import Counter
from itertools import pairwise

import pytest

from kafka_lab.sim import Cluster
from kafka_lab.sim.network.request import Request
from kafka_lab.sim.zk.lifecycle import CONTROLLED_SHUTDOWN_MAX_RETRIES, CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS

TOPIC = "orders"


def _cluster(seed=1, partitions=6, rf=3, producers=4, brokers=3):
    c = Cluster(brokers, seed=seed, control_plane={1: False, 2: True, 3: False})
    c.log.keep_answered = True  # whole requests, not only the request log's columns
    c.create_topic(TOPIC, partitions, rf)
    for i in range(producers):
        c.producer(f"p{i}", topic=TOPIC, acks=1).open_loop(50.0)
    c.consumer("c1", topic=TOPIC)
    return c


def _controller_requests(c, api=None):
    return [r for r in c.log if r.is_controller and (api is None or r.api == api)]


def test_controlled_shutdown_moves_each_led_partition_to_the_first_live_isr_replica_and_stops_the_rest():
    c = _cluster()
    before = {tp: (st["leader"], list(st["replicas"]), list(st["isr"])) for tp, st in c.controller.state.items()}
    c.restart_broker(2, at_ms=200.0, down_ms=10_000.0)
    c.run(400.0)
    ctl = c.controller
    led = [tp for tp, (leader, _r, _i) in before.items() if leader == 2]
    followed = [tp for tp, (leader, reps, _i) in before.items() if leader != 2 and 2 in reps]
    assert led and followed
    for tp in led:  # ControlledShutdownPartitionLeaderElectionStrategy: assignment order, in ISR, live, not 2
        _l, reps, isr = before[tp]
        assert ctl.state[tp]["leader"] == next(r for r in reps if r in isr and r != 2)
    assert all(2 not in st["isr"] for st in ctl.state.values())
    # StopReplica(deletePartition=false) to broker 2 for exactly the partitions it followed
    stops = [r for r in _controller_requests(c, "StopReplica") if r.connection.broker_id == 2]
    assert len(stops) == 1 and sorted(stops[0].partitions) == sorted(followed)
    assert all(delete is False for _e, delete in stops[0].payload["stop"].values())
    # the answer names no partition left, so the broker shut down at once
    (cs,) = [r for r in c.log if r.api == "ControlledShutdown"]
    assert cs.error == "NONE" and cs.result == () and cs.connection.broker_id == 1
    events = [e for _t, e, _d in c.brokers[2].lifecycle]
    assert events == ["shutting_down", "controlled_shutdown_started", "controlled_shutdown_succeeded", "shut_down"]
    assert not c.brokers[2].online and 2 not in ctl.live_brokers


def test_a_partition_no_other_replica_can_lead_is_left_and_the_shutdown_retried_then_unclean():
    c = Cluster(3, seed=2)
    c.create_topic(TOPIC, assignment={0: [2, 3], 1: [3, 2]})
    c.restart_broker(3, at_ms=10.0, down_ms=60_000.0)  # broker 3 goes away: broker 2 is alone in orders-0's ISR
    c.restart_broker(2, at_ms=100.0, down_ms=60_000.0)
    c.run(100.0 + CONTROLLED_SHUTDOWN_MAX_RETRIES * CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS + 500.0)
    events = [e for _t, e, _d in c.brokers[2].lifecycle]
    assert events.count("controlled_shutdown_failed") == CONTROLLED_SHUTDOWN_MAX_RETRIES
    assert events.count("controlled_shutdown_retry") == CONTROLLED_SHUTDOWN_MAX_RETRIES - 1
    assert events[-2:] == ["unclean_shutdown", "shut_down"]
    answers = [r for r in c.log if r.api == "ControlledShutdown" and r.payload["broker_id"] == 2]
    # it leads orders-0, and orders-1 since broker 3 left: no other live replica can take either
    assert [r.result for r in answers] == [((TOPIC, 0), (TOPIC, 1))] * CONTROLLED_SHUTDOWN_MAX_RETRIES
    # gone uncleanly, its session closed: the partitions it led have no live ISR member left, so no leader
    # (onBrokerFailure: OfflinePartitionLeaderElectionStrategy, unclean election off); it stays their ISR's
    # last member (ReplicaStateMachine.removeReplicasFromIsr keeps an ISR of one)
    for p in (0, 1):
        st = c.controller.state[(TOPIC, p)]
        assert st["leader"] == -1 and st["isr"] == [2]
    t_fail = [t for t, e, _d in c.brokers[2].lifecycle if e == "controlled_shutdown_failed"]
    assert [b - a for a, b in pairwise(t_fail)] == pytest.approx([CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS] * 2, abs=5)


def test_a_controlled_shutdown_sent_to_a_broker_that_is_not_the_controller_is_stale_controller_epoch():
    """2.8: ``doControlledShutdown`` on a broker that is not the active controller throws ControllerMovedException,
    which the response carries as STALE_CONTROLLER_EPOCH (``Errors.forException``: error 11), not NOT_CONTROLLER; the
    broker shutting down then tries again after ``controlled.shutdown.retry.backoff.ms``."""
    c = _cluster(producers=0)
    state = {tp: dict(st) for tp, st in c.controller.state.items()}
    other = c.brokers[2]  # the controller is broker 1
    conn = other.connect(other.config.inter_broker_listener_name, "3")
    req = Request("ControlledShutdown", 0, "3", payload={"broker_id": 3, "broker_epoch": c.brokers[3].broker_epoch})
    c.log.append(req)
    conn.send(req)
    c.run(50.0)
    assert req.error == "STALE_CONTROLLER_EPOCH"
    assert {tp: dict(st) for tp, st in c.controller.state.items()} == state and 3 not in c.controller.shutting_down


def test_a_controlled_shutdown_from_an_older_broker_epoch_is_refused_and_changes_nothing():
    c = _cluster(producers=0)
    c.brokers[2].broker_epoch = 5
    state = {tp: dict(st) for tp, st in c.controller.state.items()}
    ctl_broker = c.brokers[1]
    conn = ctl_broker.connect(ctl_broker.config.inter_broker_listener_name, "2")
    req = Request("ControlledShutdown", 0, "2", payload={"broker_id": 2, "broker_epoch": 4})
    c.log.append(req)
    conn.send(req)
    c.run(50.0)
    assert req.error == "STALE_BROKER_EPOCH"
    assert {tp: dict(st) for tp, st in c.controller.state.items()} == state
    assert 2 not in c.controller.shutting_down


def test_a_restarted_broker_rejoins_every_isr_with_a_new_broker_epoch_and_gets_its_leaders_back():
    c = _cluster()
    preferred = [tp for tp, st in c.controller.state.items() if st["replicas"][0] == 2]
    c.restart_broker(2, at_ms=200.0, down_ms=1000.0)
    for tp in preferred:
        c.controller.elect_leader(tp, 2, at_ms=2500.0)
    res = c.run(3000.0)
    b = c.brokers[2]
    up = next(t for t, e, _d in b.lifecycle if e == "started")
    down = next(t for t, e, _d in b.lifecycle if e == "shut_down")
    assert b.online and b.broker_epoch == 2
    assert not c.controller.failed_elections
    for st in c.controller.state.values():
        assert sorted(st["isr"]) == sorted(st["replicas"]) and st["leader"] == st["replicas"][0]
    # nothing reached broker 2 while it was down: clients' sends to it fail as disconnections
    assert not [r for r in c.log if r.connection is not None and r.connection.broker_id == 2 and down < r.sent < up]
    # the ledger: every batch ends exactly once
    lg = res.ledger
    assert set(lg["outcome"]) <= {"committed", "truncated", "failed", "pending"}
    produced = sum(len(p.batches) for p in c.clients if hasattr(p, "batches"))
    assert len(lg) == produced and lg["batch_id"].is_unique


def test_a_broker_startups_batches_are_logged_in_the_order_the_controller_sends_them():
    """state-change.log at a broker's start-up, at one instant, as ``onBrokerStartup`` sends its batches: the
    others' UpdateMetadata without partitions, the new broker's with all of them, then the OnlineReplica
    batch: its LeaderAndIsr line first, then that batch's UpdateMetadata to every live broker
    (``sendRequestsToBrokers``: LeaderAndIsr, then UpdateMetadata). One line per batch, each broker once."""
    from kafka_lab.logs.render import render

    c = _cluster()
    c.log.keep_answered = True
    c.restart_broker(3, at_ms=100.0, down_ms=500.0)
    c.run(1000.0)
    up = next(t for t, e, _d in c.brokers[3].lifecycle if e == "started")
    sends = [(ln.time_ms, ln.head) for ln in render(c, up, 1000.0) if ln.broker == 1 and "] Sending " in ln.head]
    at = sends[0][0]
    assert [h.split("] ", 1)[1].split(" (state")[0] for t, h in sends if t == at] == [
        "Sending UpdateMetadata request to brokers HashSet(1, 2) for 0 partitions",
        "Sending UpdateMetadata request to brokers HashSet(3) for 6 partitions",
        "Sending LeaderAndIsr request to broker 3 with 0 become-leader and 6 become-follower partitions",
        "Sending UpdateMetadata request to brokers HashSet(1, 2, 3) for 6 partitions",
    ]


def test_a_restarted_broker_starts_from_its_logs_and_the_controllers_leader_and_isr():
    """onBrokerStartup, in its order (each a batch of its own): UpdateMetadata without partitions to the others,
    with all to it, then (``replicaStateMachine.handleStateChanges(OnlineReplica)``) LeaderAndIsr to it for its
    replicas, with UpdateMetadata for those to every live broker (``addLeaderAndIsrRequestForBrokers`` adds
    it to every LeaderAndIsr batch)."""
    c = _cluster()
    c.restart_broker(3, at_ms=100.0, down_ms=500.0)
    c.run(1000.0)
    up = next(t for t, e, _d in c.brokers[3].lifecycle if e == "started")
    after = [r for r in _controller_requests(c) if r.sent >= up]
    queued = min(r.payload["queued_ms"] for r in after)
    startup = sorted((r for r in after if r.payload["queued_ms"] == queued), key=lambda r: r.correlation_id)
    got = [(r.api, r.connection.broker_id, len(r.payload["partition_states"])) for r in startup]
    assert got == [
        ("UpdateMetadata", 1, 0),
        ("UpdateMetadata", 2, 0),
        ("UpdateMetadata", 3, 6),
        ("LeaderAndIsr", 3, 6),
        ("UpdateMetadata", 1, 6),
        ("UpdateMetadata", 2, 6),
        ("UpdateMetadata", 3, 6),
    ]
    batches = [r.payload["batch"] for r in startup]
    assert batches[0] == batches[1] != batches[2] != batches[3] == batches[4] == batches[5] == batches[6]
    rm = c.brokers[3].replica_manager
    assert all(p.leader == c.controller.state[tp]["leader"] for tp, p in rm.partitions.items())


def test_the_controllers_restart_elects_another_broker_under_the_next_epoch():
    c = _cluster()
    c.restart_broker(1, at_ms=200.0, down_ms=1000.0)
    c.run(2000.0)
    ctl = c.controller
    (_t0, c0, e0), (t_resign, none, e1), (t_elect, winner, e2) = ctl.history
    assert (c0, e0, none, e1, e2) == (1, 1, -1, 1, 2) and winner in (2, 3) and t_resign < t_elect
    # the new controller's requests carry its id and epoch, and every broker has moved to epoch 2
    sent_after = [r for r in _controller_requests(c) if r.sent >= t_elect]
    assert sent_after and {(r.payload["controller_id"], r.payload["controller_epoch"]) for r in sent_after} == {
        (winner, 2)
    }
    assert all(b.replica_manager.controller_epoch == 2 for b in c.brokers.values())
    # nothing was sent while there was no controller
    assert not [r for r in _controller_requests(c) if t_resign < r.sent < t_elect]
    # the old controller was never known live by the new one until it came back
    kinds = [(cid, e) for _t, cid, e, _d in ctl.events]
    assert (winner, "broker_startup") in kinds and (winner, "broker_failure") not in kinds


@pytest.mark.parametrize("seed", range(5))
def test_each_controller_epoch_has_one_controller(seed):
    """Election safety: every request sent under an epoch comes from one broker, and epochs only grow."""
    c = _cluster(seed=seed, producers=2)
    c.move_controller(at_ms=100.0)
    c.move_controller(at_ms=400.0)
    c.run(800.0)
    by_epoch: dict = {}
    last = 0
    for r in sorted(_controller_requests(c), key=lambda r: r.sent):
        e = r.payload["controller_epoch"]
        by_epoch.setdefault(e, set()).add(r.payload["controller_id"])
        assert e >= last
        last = e
    assert {2, 3} <= set(by_epoch) <= {1, 2, 3} and all(len(ids) == 1 for ids in by_epoch.values())


def test_after_a_controller_change_brokers_ignore_the_leader_epochs_they_already_have():
    """onControllerFailover resends every partition's state; 2.8 ignores a leader epoch it already has."""
    c = _cluster(producers=0)
    c.move_controller(at_ms=100.0)
    c.run(300.0)
    t_elect = c.controller.history[-1][0]
    lai = [r for r in _controller_requests(c, "LeaderAndIsr") if r.sent >= t_elect]
    assert len(lai) == 3
    errors = Counter(e for r in lai for e in r.partition_errors.values())
    assert errors == {"STALE_CONTROLLER_EPOCH": 18}  # 6 partitions x 3 replicas
    changes = [kind for b in c.brokers.values() for (t, kind, *_x) in b.replica_manager.events if t >= t_elect]
    assert not [k for k in changes if k in ("become_leader", "become_follower")]


def test_a_controlled_shutdown_skips_a_replica_that_is_not_in_the_isr():
    """The first replica of the assignment that is in the ISR, not merely the first live one."""
    c = _cluster(producers=0)
    tp = next(tp for tp, st in c.controller.state.items() if st["leader"] == 2)
    st = c.controller.state[tp]
    out = st["replicas"][1]  # the replica after the leader in the assignment drops out of the ISR
    st["isr"] = [r for r in st["isr"] if r != out]
    c.restart_broker(2, at_ms=10.0, down_ms=10_000.0)
    c.run(100.0)
    assert st["leader"] == st["replicas"][2] != out


def test_no_leader_is_elected_while_the_controller_is_being_elected():
    c = _cluster(producers=0)
    tp = next(iter(c.controller.state))
    st = c.controller.state[tp]
    leader, other = st["leader"], st["replicas"][1]
    c.move_controller(at_ms=100.0)
    c.controller.elect_leader(tp, other, at_ms=101.0)  # /controller is gone: nobody decides
    c.run(300.0)
    assert st["leader"] == leader
    assert [(f[1], f[2], f[3], f[5]) for f in c.controller.failed_elections] == [
        (tp[0], tp[1], other, "NOT_CONTROLLER")
    ]


def _decisions_for(c, tp):
    """The controller's decisions for ``tp``: (time, topic, partition, leader, leader epoch, ISR, zkVersion, from)."""
    return [d for d in c.controller.decisions if (d[1], d[2]) == tp]


def _leaders_over_time(c, tp):
    """(time, leader) of each decision for ``tp``, and the state each was decided from."""
    return [(t, leader, was) for t, _topic, _p, leader, _e, _isr, _zk, was in _decisions_for(c, tp)]


def test_an_offline_partition_waits_for_its_last_isr_member_not_the_first_broker_back():
    """Unclean leader election off (2.8's default): when every ISR member is gone the partition is offline,
    and it keeps its last ISR member (``removeReplicasFromIsr``: ``if (isr.size == 1) isr``). A replica that
    comes back but was out of the ISR may lack acknowledged records, so it may not lead; the partition comes
    back online only when that last member returns (``onBrokerStartup`` -> ``triggerOnlinePartitionStateChange``),
    and the controller logs the election from OfflinePartition."""
    c = Cluster(3, seed=2)
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.restart_broker(3, at_ms=10.0, down_ms=20_000.0)  # 3 leaves the ISR cleanly, back at about 20 s
    c.restart_broker(2, at_ms=100.0, down_ms=60_000.0)  # 2, the last ISR member, cannot hand over: unclean
    c.run(100.0)
    assert c.controller.state[tp]["isr"] == [2]
    c.run(40_000.0)
    assert c.brokers[3].online and not c.brokers[2].online
    st = c.controller.state[tp]
    assert st["leader"] == -1 and st["isr"] == [2]  # 3 is back, but not in the ISR: still offline
    c.run(80_000.0)
    back = next(t for t, e, _d in c.brokers[2].lifecycle if e == "started")
    st = c.controller.state[tp]
    assert c.brokers[2].online and st["leader"] == 2
    (last,) = [d for d in _leaders_over_time(c, tp) if d[0] > back]
    assert last[1:] == (2, "OfflinePartition") and last[0] <= back + 3 * c.controller.zk_latency_ms
    assert c.brokers[2].replica_manager.partitions[tp].leader == 2  # its LeaderAndIsr arrived


def test_a_partition_with_one_replica_is_offline_while_its_broker_restarts_then_leads_again():
    """Replication factor 1: a controlled shutdown does not move it (only partitions with more than one
    replica), so it goes offline with its broker and comes back with it, under a new leader epoch."""
    c = Cluster(3, seed=3)
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [1]})
    epoch0 = c.controller.state[tp]["leader_epoch"]
    c.restart_broker(1, at_ms=50.0, down_ms=2_000.0)
    c.run(1_000.0)
    st = c.controller.state[tp]
    assert st["leader"] == -1 and st["isr"] == [1] and st["leader_epoch"] == epoch0 + 1
    assert c.brokers[2].metadata_cache.describe([tp])[tp][0] == "LEADER_NOT_AVAILABLE"
    c.run(4_000.0)
    st = c.controller.state[tp]
    assert st["leader"] == 1 and st["isr"] == [1] and st["leader_epoch"] == epoch0 + 2
    assert [d[1:] for d in _leaders_over_time(c, tp)] == [(1, "OfflinePartition")]
    assert c.brokers[2].metadata_cache.describe([tp])[tp] == ("NONE", 1, epoch0 + 2)


def test_after_a_crash_the_new_leader_is_the_first_live_isr_member_in_assignment_order():
    """``Election.leaderForOffline``: ``assignment.find(id => live(id) && isr.contains(id))`` -- the order of the
    assignment, not of the ISR (which grows by appending, so the two differ after a replica rejoined); the new
    ISR is the old one's live members. (The controller is broker 3: a crashed controller does nothing.)"""
    c = Cluster(3, seed=4, controller_id=3)
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.controller.state[tp]["isr"] = [1, 3, 2]  # 2 rejoined last
    c.brokers[1].shut_down()  # a crash: no controlled shutdown; its session expires
    c.controller.on_broker_failure(1, at_ms=100.0)
    c.run(500.0)
    st = c.controller.state[tp]
    assert st["leader"] == 2 and st["isr"] == [3, 2]
    assert [d[1:] for d in _leaders_over_time(c, tp)] == [(2, "OfflinePartition")]


def test_a_new_controller_takes_the_dead_controllers_replicas_offline_and_elects_for_its_partitions():
    """``onControllerFailover``: ``ReplicaStateMachine.startup`` moves the replicas of brokers that are not
    live to OfflineReplica (out of the ISR), then ``PartitionStateMachine.startup`` elects for partitions
    without a live leader. The controller's broker restarting with a single-replica partition it leads: the
    partition is offline until that broker is back, then led by it again."""
    c = Cluster(3, seed=5, controller_id=1)
    c.create_topic(TOPIC, assignment={0: [1]})
    c.create_topic("audit", assignment={0: [2, 1]})  # broker 1 follows: it leaves this ISR
    c.restart_broker(1, at_ms=50.0, down_ms=3_000.0)
    c.run(2_000.0)
    ctl = c.controller
    assert ctl.id in (2, 3)
    assert ctl.state[(TOPIC, 0)]["leader"] == -1 and ctl.state[(TOPIC, 0)]["isr"] == [1]
    assert ctl.state[("audit", 0)]["leader"] == 2 and ctl.state[("audit", 0)]["isr"] == [2]
    c.run(6_000.0)
    assert ctl.state[(TOPIC, 0)]["leader"] == 1
    assert [d[1:] for d in _leaders_over_time(c, (TOPIC, 0))] == [(1, "OfflinePartition")]


def test_the_controller_logs_an_election_of_an_offline_partition_from_offline_partition():
    """state-change.log: ``Changed partition orders-0 from OfflinePartition to OnlinePartition`` for the election
    that brings an offline partition back (its state before it), ``from OnlinePartition`` for a preferred one
    (``ZkPartitionStateMachine.doHandleStateChanges``: ``from ${partitionState(partition)}``)."""
    from kafka_lab.logs.render import render

    c = Cluster(3, seed=3, controller_id=2)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1]})
    c.create_topic("audit", assignment={0: [3, 1]})
    c.restart_broker(1, at_ms=50.0, down_ms=2_000.0)
    c.controller.elect_leader(("audit", 0), 1, at_ms=4_000.0)
    c.run(5_000.0)
    changed = [ln.head for ln in render(c, 0.0, 5_000.0) if "Changed partition" in ln.head]
    assert [re.search(r"Changed partition (\S+) from (\w+) to (\w+)", h).groups() for h in changed] == [
        ("orders-0", "OfflinePartition", "OnlinePartition"),
        ("audit-0", "OnlinePartition", "OnlinePartition"),
    ]


def test_an_offline_election_passes_over_a_broker_in_controlled_shutdown():
    """``ControllerContext.isReplicaOnline`` leaves out shutting-down brokers (``liveBrokerIds`` is the live
    brokers minus ``shuttingDownBrokerIds``): an offline partition neither elects one nor keeps it in the new ISR."""
    c = Cluster(3, seed=4, controller_id=3)  # broker 1 crashes: the controller is another
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.controller.shutting_down.add(2)  # broker 2's controlled shutdown has begun
    c.brokers[1].shut_down()
    c.controller.on_broker_failure(1, at_ms=100.0)
    c.run(500.0)
    # the election's write (broker 2, still fetching, may rejoin the ISR afterwards through AlterIsr: 2.8 does
    # not fence a shutting-down broker from ISR expansion)
    assert [d[3:6] for d in _decisions_for(c, tp)] == [(3, 1, (3,))]


def test_a_broker_failure_leaves_a_topic_being_deleted_as_it_is():
    """``onReplicasBecomeOffline``: ``partitionsWithOfflineLeader`` leaves out topics queued for deletion, whose
    offline replicas fail their deletion (``failReplicaDeletion``) instead of leaving the ISR: no write."""
    c = Cluster(3, seed=4, controller_id=3)  # the controller on another broker: a stopped broker's controller is gone
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    before = dict(c.controller.state[tp])
    c.controller.deleting.add(TOPIC)  # a deletion in progress
    c.brokers[1].shut_down()
    c.controller.on_broker_failure(1, at_ms=100.0)
    c.run(500.0)
    assert [e for e in c.controller.events if e[2] == "broker_failure"]  # the failure was handled
    assert c.controller.state[tp] == before and not c.controller.decisions


def test_a_new_controller_writes_a_deleted_topics_offline_replicas_but_sends_no_leader_and_isr():
    """``ReplicaStateMachine`` (OfflineReplica) on failover: a dead broker's replica leaves the ISR of a topic being
    deleted too, but no ``LeaderAndIsr`` carries that change (``if (!isTopicQueuedUpForDeletion(...))``)."""
    c = Cluster(3, seed=4, controller_id=1)
    c.log.keep_answered = True
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [3, 2]})
    ctl = c.controller
    ctl.deleting.add(TOPIC)  # a deletion in progress
    c.brokers[3].shut_down()
    ctl.live_brokers.discard(3)
    ctl.fail_over(at_ms=100.0, rng=c.rng("controller-election"), by_hand=True)  # /controller deleted
    c.run(1_000.0)
    st = ctl.state[tp]
    assert st["leader"] == -1 and st["isr"] == [2]
    sent = [
        s
        for r in _controller_requests(c, "LeaderAndIsr")
        for s in r.payload["partition_states"]
        if (s["topic"], s["partition"]) == tp
    ]
    assert sent and all(s["leader_epoch"] < st["leader_epoch"] for s in sent)


def test_every_election_an_offline_partition_cannot_make_is_tried_again_and_kept_as_failed():
    """``triggerOnlinePartitionStateChange`` tries every offline partition (``partitionsInStates(OfflinePartition)``)
    on each broker failure (``onReplicasBecomeOffline``, whether or not the broker held a replica of it), each
    broker start-up (``onBrokerStartup``) and each new controller; with no live ISR member the attempt fails
    (``doElectLeaderForPartitions``: ``Failed to elect leader``), and is logged each time, until one succeeds."""
    c = Cluster(4, seed=2, controller_id=1)
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.restart_broker(3, at_ms=10.0, down_ms=20_000.0)  # 3 leaves the ISR cleanly, back at about 20 s
    c.restart_broker(2, at_ms=100.0, down_ms=60_000.0)  # 2, the last ISR member: offline from its stop
    c.run(25_000.0)
    c.brokers[4].shut_down()  # a broker with no replica of orders-0 crashes while it is offline
    c.controller.on_broker_failure(4, at_ms=30_000.0)
    c.run(90_000.0)
    ctl = c.controller
    events = {(e, d["broker"]): t for t, _c, e, d in ctl.events if e in ("broker_failure", "broker_startup")}
    failed = [(t, (topic, p), s) for t, topic, p, was, s in ctl.failed_state_changes if was == "OfflinePartition"]
    zk = ctl.zk_latency_ms
    strategy = "OfflinePartitionLeaderElectionStrategy(false)"
    assert failed == [
        (events[("broker_failure", 2)] + zk, tp, strategy),  # its leader died: no one else in the ISR
        (events[("broker_startup", 3)] + zk, tp, strategy),  # 3 is back, but was not in the ISR
        (events[("broker_failure", 4)] + zk, tp, strategy),  # another broker's failure triggers it too
    ]
    (elected,) = [d for d in _leaders_over_time(c, tp) if d[0] > events[("broker_startup", 2)]]
    assert elected[1:] == (2, "OfflinePartition")  # broker 2's return ends the failures: none after it


def test_a_failed_offline_election_is_logged_at_error_with_its_exception_before_the_elections_it_made():
    """state-change.log: ``Controller 3 epoch 1 failed to change state for partition b-0 from OfflinePartition
    to OnlinePartition`` at ERROR (``ZkPartitionStateMachine.logFailedStateChange``), the exception's line
    below it (``StateChangeFailedException: Failed to elect leader for partition b-0 under strategy
    OfflinePartitionLeaderElectionStrategy(false)``); the failures of one attempt are logged in
    ``electLeaderForPartitions``, before ``doHandleStateChanges`` logs the elections it made."""
    from kafka_lab.logs.render import render

    c = Cluster(3, seed=4, controller_id=3)
    c.create_topic("a", assignment={0: [1, 2]})
    c.create_topic("b", assignment={0: [1]})
    c.brokers[1].shut_down()  # a crash: a-0 moves to broker 2, b-0 has no one
    c.controller.on_broker_failure(1, at_ms=100.0)
    c.run(500.0)
    lines = [ln.head for ln in render(c, 0.0, 500.0) if ln.broker == 3 and "artition " in ln.head]
    assert [h.split("] ", 1)[1].split(" with state")[0] for h in lines] == [
        "Controller 3 epoch 1 failed to change state for partition b-0 from OfflinePartition to OnlinePartition "
        "(state.change.logger)\nkafka.common.StateChangeFailedException: Failed to elect leader for partition b-0 "
        "under strategy OfflinePartitionLeaderElectionStrategy(false)",
        "Changed partition a-0 from OfflinePartition to OnlinePartition",
    ]
    assert lines[0].startswith(" ERROR [Controller id=3 epoch=1] ")


def test_an_isr_changes_update_metadata_is_logged_apart_from_the_election_before_it():
    """state-change.log's ``Sending UpdateMetadata request to brokers HashSet(...)``: one line per batch the
    controller sent (``ControllerBrokerRequestBatch.sendUpdateMetadataRequests``), each broker once. An ISR
    change (AlterIsr) keeps the leader epoch but writes a new znode version: its UpdateMetadata is a batch of
    its own, sent after the election's, not merged into it (which listed every broker twice)."""
    from kafka_lab.logs.render import render

    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.restart_broker(3, at_ms=1000.0, down_ms=24000.0)
    c.restart_broker(2, at_ms=2000.0, down_ms=18000.0)
    c.run(45000.0)
    sent = [
        (ln.time_ms, [int(b) for b in re.search(r"HashSet\(([\d, ]+)\)", ln.head).group(1).split(", ")])
        for ln in render(c, 0.0, 45000.0)
        if "Sending UpdateMetadata" in ln.head
    ]
    assert all(len(set(brokers)) == len(brokers) for _t, brokers in sent)
    # broker 3 rejoins the ISR after broker 2 leads again: an UpdateMetadata to all three, after the election's
    alter = [r.sent for r in c.log if r.api == "AlterIsr"]
    assert alter and any(t > alter[-1] and b == [1, 2, 3] for t, b in sent)


def test_a_controlled_shutdown_that_cannot_move_a_leader_logs_each_failed_attempt():
    """``doControlledShutdown`` elects with ``ControlledShutdownPartitionLeaderElectionStrategy`` (a live ISR
    member not shutting down); with none, the partition stays (``remainingPartitions``) and the attempt is
    logged at ERROR, ``from OnlinePartition to OnlinePartition``, with its ``StateChangeFailedException``
    naming that strategy: once per try of the broker's controlled shutdown (3, 5 s apart by default)."""
    from kafka_lab.logs.render import render

    c = Cluster(3, seed=2, controller_id=1)
    c.log.keep_answered = True
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.restart_broker(3, at_ms=10.0, down_ms=60_000.0)  # 3 leaves the ISR cleanly
    c.restart_broker(2, at_ms=100.0, down_ms=60_000.0)  # 2 leads orders-0 alone: no one to hand it to
    c.run(20_000.0)
    ctl = c.controller
    tries = [t for t, _c, e, d in ctl.events if e == "controlled_shutdown" and d["broker"] == 2]
    shutdown = [
        (t, w, s) for t, topic, p, w, s in ctl.failed_state_changes if (topic, p) == tp and w == "OnlinePartition"
    ]
    assert len(tries) == CONTROLLED_SHUTDOWN_MAX_RETRIES
    assert shutdown == [(t, "OnlinePartition", "ControlledShutdownPartitionLeaderElectionStrategy") for t in tries]
    lines = [ln.head for ln in render(c, 0.0, 20_000.0) if ln.broker == 1 and "failed to change state" in ln.head]
    assert len(lines) == len(tries) + 1  # and the offline election when 2 stops
    assert lines[0] == (
        " ERROR [Controller id=1 epoch=1] Controller 1 epoch 1 failed to change state for partition orders-0 "
        "from OnlinePartition to OnlinePartition (state.change.logger)\nkafka.common.StateChangeFailedException: "
        "Failed to elect leader for partition orders-0 under strategy ControlledShutdownPartitionLeaderElectionStrategy"
    )
    assert "from OfflinePartition to OnlinePartition" in lines[-1]


# -- unclean leader election (unclean.leader.election.enable) ---------------------------------------------------
def test_an_unclean_topic_elects_the_first_live_replica_outside_the_isr_alone_in_its_new_isr():
    """``PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection``: no live ISR member, and the topic
    has ``unclean.leader.election.enable=true``: ``assignment.find(liveReplicas.contains)``, with the ISR the
    new leader alone (``leaderForOffline``: ``List(leader)``), logged as any election from OfflinePartition
    and counted (``UncleanLeaderElectionsPerSec``). The same run with the topic's default waits for broker 2
    (test_an_offline_partition_waits_for_its_last_isr_member_not_the_first_broker_back)."""
    c = Cluster(3, seed=2)
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [2, 3]}, unclean_leader_election_enable=True)
    c.restart_broker(3, at_ms=10.0, down_ms=20_000.0)  # 3 leaves the ISR cleanly, back at about 20 s
    c.restart_broker(2, at_ms=100.0, down_ms=60_000.0)  # 2, the last ISR member, cannot hand over
    c.run(19_000.0)
    assert c.controller.state[tp]["leader"] == -1 and c.controller.unclean_elections == []  # no live replica yet
    c.run(40_000.0)
    back = next(t for t, e, _d in c.brokers[3].lifecycle if e == "started")
    st = c.controller.state[tp]
    assert not c.brokers[2].online and st["leader"] == 3 and st["isr"] == [3]
    (elected,) = [d for d in _leaders_over_time(c, tp) if d[0] > back]
    assert elected[1:] == (3, "OfflinePartition") and elected[0] <= back + 3 * c.controller.zk_latency_ms
    assert c.controller.unclean_elections == [(elected[0], TOPIC, 0, 3)]
    assert c.brokers[3].replica_manager.partitions[tp].leader == 3  # its LeaderAndIsr arrived


def test_an_unclean_topic_still_prefers_a_live_isr_member_to_a_replica_ahead_of_it_in_the_assignment():
    """Unclean election is the fallback only: ``assignment.find(live && isr).orElse(...)``. Broker 2 comes
    first in the assignment but is out of the ISR; broker 3 is in it: 3 leads, cleanly."""
    c = Cluster(3, seed=4, controller_id=3)  # broker 1 crashes: the controller is another
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]}, unclean_leader_election_enable="TRUE")
    c.controller.state[tp]["isr"] = [1, 3]  # 2 fell behind
    c.brokers[1].shut_down()
    c.controller.on_broker_failure(1, at_ms=100.0)
    c.run(500.0)
    (decision,) = [d for d in c.controller.decisions if (d[1], d[2]) == tp]
    assert decision[3] == 3 and decision[5] == (3,)  # the live ISR members (2 may rejoin later, by AlterIsr)
    assert c.controller.unclean_elections == []


def test_an_unclean_election_takes_the_first_live_replica_in_assignment_order():
    """``assignment.find(liveReplicas.contains)``: of two live replicas outside the ISR, the one listed first in
    the assignment (2, not 3), whatever their ids or the order they came back in."""
    c = Cluster(3, seed=4, controller_id=3)  # broker 1 crashes: the controller is another
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]}, unclean_leader_election_enable=True)
    c.controller.state[tp]["isr"] = [1]  # 2 and 3 fell behind
    c.brokers[1].shut_down()
    c.controller.on_broker_failure(1, at_ms=100.0)
    c.run(500.0)
    (decision,) = [d for d in c.controller.decisions if (d[1], d[2]) == tp]
    assert decision[3] == 2 and decision[5] == (2,)
    assert c.controller.unclean_elections == [(decision[0], TOPIC, 0, 2)]


def test_after_an_unclean_election_the_last_isr_member_returns_and_truncates_the_records_only_it_had():
    """Lab 07: ``orders-0`` with unclean election on, broker 3 back first. It leads at once, lacking every
    record broker 2 appended and acknowledged (``acks=all`` with the ISR down to broker 2) after 3 left; when
    broker 2 comes back it follows, its fetch finds the divergence by leader epoch, and it truncates them:
    each of those batches ends ``truncated`` in the ledger, and together they are exactly those records.
    Off (the default), nothing is lost. The ledger's conservation holds in both."""
    from kafka_lab.sim.last_isr import last_isr_member

    clean, unclean = last_isr_member(first_back=3), last_isr_member(first_back=3, unclean=True)
    assert clean.leader == 2 and unclean.leader == 3
    assert unclean.online_ms < clean.online_ms and unclean.online_ms - unclean.back_ms[3] < 10.0
    assert clean.outcomes.get("truncated", 0) == 0
    assert unclean.leo_at_stop == clean.leo_at_stop  # the same run up to the election (same seed, same draws)
    batches = sum(unclean.outcomes.values())
    assert batches == sum(clean.outcomes.values())
    truncated = unclean.outcomes["truncated"]
    assert truncated > 0 and truncated * 10 == unclean.only_on_last  # 10 records a batch (records_per_batch)
    assert unclean.outcomes["committed"] + truncated == batches


def test_an_unclean_election_shows_in_the_logs_as_kafka_writes_them():
    """state-change.log: the election ``from OfflinePartition`` with ``isr=List(3)``; broker 2, back as a follower,
    ``starts ... with high watermark <its own>``, then its server.log has what every truncation writes
    (``Log.truncateTo``: ``Truncating to offset <3's end>``, ``Loading producer state till offset ...``) and then
    the WARN that tells this truncation apart: ``completeTruncation`` lowers the high watermark below its old
    value, and ``Log.updateHighWatermarkMetadata`` (2.7.1+, KAFKA-12153) logs ``Non-monotonic update of high
    watermark from <old> to <new>``, each a ``LogOffsetMetadata`` (offset, segment base, byte position: the old
    one the log end as broker 2 loaded it at restart, the new one the log end after the truncation; one segment
    from 0, sizes as the request log's: 61 bytes a batch plus 120 a record). ``ReplicaFetcherThread``'s own WARN
    ``... below high watermark`` is tested after the high watermark was lowered, so 2.8 never writes it
    (KAFKA-19474)."""
    from kafka_lab.logs.render import render

    c = Cluster(3, seed=0, controller_id=1)
    c.log.keep_answered = True
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [2, 3]}, unclean_leader_election_enable=True)
    c.producer("p", topic=TOPIC, acks="all").open_loop(200.0)
    c.restart_broker(3, at_ms=1_000.0, down_ms=20_000.0)  # back at about 21 s
    c.restart_broker(2, at_ms=2_000.0, down_ms=30_000.0)  # stops at about 17 s (3 tries), back at about 47 s
    c.run(19_000.0)
    leo = {b: c.brokers[b].replica_manager.partitions[tp].log.leo for b in (2, 3)}
    hw2 = c.brokers[2].replica_manager.partitions[tp].hw
    assert leo[2] > leo[3] and hw2 > leo[3] and hw2 == leo[2]  # broker 2 acknowledged alone: HW = its log end
    batches2 = list(c.brokers[2].replica_manager.partitions[tp].log.batches)  # (base offset, records, ...)
    size = {  # the segment's bytes: each v2 batch a 61-byte header and 120 bytes a record
        "before": sum(61 + 120 * b[1] for b in batches2),
        "after": sum(61 + 120 * b[1] for b in batches2 if b[0] < leo[3]),
    }
    c.run(60_000.0)
    heads = [(ln.broker, ln.head) for ln in render(c, 0.0, 60_000.0)]
    changed = [h for b, h in heads if b == 1 and "Changed partition orders-0 from OfflinePartition" in h]
    assert len(changed) == 1 and "LeaderAndIsr(leader=3, " in changed[0] and "isr=List(3)," in changed[0]
    mine = [h for b, h in heads if b == 2 and "orders-0" in h and h.endswith("(kafka.log.Log)")]
    ident = "[Log partition=orders-0, dir=/var/lib/kafka/data]"
    assert mine == [
        f" INFO {ident} Truncating to offset {leo[3]} (kafka.log.Log)",
        f" INFO {ident} Loading producer state till offset {leo[3]} with message format version 2 (kafka.log.Log)",
        f" WARN {ident} Non-monotonic update of high watermark from (offset={hw2} segment=[0:{size['before']}]) "
        f"to (offset={leo[3]} segment=[0:{size['after']}]) (kafka.log.Log)",
    ]
    # rendered for the scenario's copies (lab 08), the offsets and the positions are marks, each of its counter
    from kafka_lab.logs.slots import OFFSET, POSITION, Slots, fill, split

    slots = Slots()
    (warn,) = [ln for ln in render(c, 0.0, 60_000.0, slots=slots) if ln.broker == 2 and "Non-monotonic" in ln.head]
    assert fill(warn.head, None) == mine[-1]
    assert [slots.keys[k] for k, _v in split(warn.head)[1]] == [(OFFSET, tp), (POSITION, tp)] * 2
    assert any(
        f"Follower orders-0 starts at leader epoch 3 from offset {leo[2]} with high watermark {hw2}." in h
        for b, h in heads
        if b == 2
    )


def test_enabling_unclean_election_on_a_topic_elects_its_offline_partitions_at_once():
    """``kafka-configs --alter --add-config unclean.leader.election.enable=true``: the controller is told
    (``TopicConfigHandler`` -> ``processTopicUncleanLeaderElectionEnable``, which logs *Unclean leader election
    has been enabled for topic orders* in controller.log) and tries the topic's offline partitions then, not
    at the next broker change. Another topic's offline partition is not tried. A topic that does not exist is
    refused with Kafka's message."""
    from kafka_lab.assignment import UnknownTopicOrPartitionException
    from kafka_lab.logs.render import render

    c = Cluster(3, seed=2, controller_id=1)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.create_topic("audit", assignment={0: [2, 3]})
    c.restart_broker(3, at_ms=10.0, down_ms=20_000.0)
    c.restart_broker(2, at_ms=100.0, down_ms=120_000.0)
    c.run(25_000.0)  # 3 is back, neither partition has a leader
    ctl = c.controller
    assert ctl.state[(TOPIC, 0)]["leader"] == ctl.state[("audit", 0)]["leader"] == -1
    with pytest.raises(UnknownTopicOrPartitionException, match=r"^Topic 'nope' does not exist\.$"):
        c.enable_unclean_leader_election("nope", at_ms=30_000.0)
    c.enable_unclean_leader_election(TOPIC, at_ms=30_000.0)
    c.run(29_999.0)
    assert ctl.state[(TOPIC, 0)]["leader"] == -1
    c.run(31_000.0)
    zk = ctl.zk_latency_ms
    assert ctl.state[(TOPIC, 0)]["leader"] == 3 and ctl.state[(TOPIC, 0)]["isr"] == [3]
    assert ctl.unclean_elections == [(30_000.0 + 2 * zk, TOPIC, 0, 3)]
    assert ctl.state[("audit", 0)]["leader"] == -1  # its topic keeps the default, and is not even tried
    assert not [t for t, topic, *_ in ctl.failed_state_changes if topic == "audit" and t >= 30_000.0]
    assert [(t, e, d) for t, _c, e, d in ctl.events if e == "unclean_enabled"] == [
        (30_000.0 + zk, "unclean_enabled", {"topic": TOPIC})
    ]
    lines = [ln.head for ln in render(c, 29_000.0, 31_000.0) if "Unclean" in ln.head]
    assert lines == [
        " INFO [Controller id=1] Unclean leader election has been enabled for topic orders "
        "(kafka.controller.KafkaController)"
    ]


def test_unclean_leader_election_enable_is_read_as_kafka_reads_a_boolean_and_goes_with_its_topic():
    """``ConfigDef``'s BOOLEAN: a bool, or ``true``/``false`` in any case with spaces around; anything else is
    ``Invalid value <v> for configuration unclean.leader.election.enable: Expected value to be either true or
    false``, and nothing is created. A deleted topic's config is deleted with it: the name created again has
    the default."""
    from kafka_lab.sim.server.config import ConfigException

    c = Cluster(3, seed=1)
    for bad in ("yes", 1, None):
        with pytest.raises(ConfigException) as e:
            c.create_topic(TOPIC, assignment={0: [1, 2]}, unclean_leader_election_enable=bad)
        assert str(e.value) == (
            f"Invalid value {bad} for configuration unclean.leader.election.enable: "
            "Expected value to be either true or false"
        )
    assert TOPIC not in c.topics and not c.controller.state
    c.create_topic(TOPIC, assignment={0: [1, 2]}, unclean_leader_election_enable=" false ")
    assert TOPIC not in c.controller.unclean_topics
    c.create_topic("audit", assignment={0: [1, 2]}, unclean_leader_election_enable=True)
    assert c.controller.unclean_topics == {"audit"}
    c.controller.delete_topic("audit", at_ms=10.0)
    c.run(1_000.0)
    assert "audit" not in c.topics and c.controller.unclean_topics == set()
    c.create_topic("audit", assignment={0: [1, 2]})
    assert c.controller.unclean_topics == set()


def test_a_controllers_request_is_logged_when_queued_not_when_the_state_it_carries_was_decided():
    """``Sending LeaderAndIsr request to broker 3`` is logged as the controller hands the batch to broker 3's
    channel. Broker 3, down while broker 2 was elected at about 25 s, gets that state when it comes back at
    about 35 s: its line is written then (it was dated at the election, when broker 3 was down)."""
    from kafka_lab.logs.render import render

    c = Cluster(3, seed=0, controller_id=1)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.restart_broker(3, at_ms=1_000.0, down_ms=34_000.0)
    c.restart_broker(2, at_ms=2_000.0, down_ms=8_000.0)
    c.run(40_000.0)
    sends = [
        (ln.time_ms, int(re.search(r"to broker (\d+) ", ln.head).group(1)))
        for ln in render(c, 0.0, 40_000.0)
        if "Sending LeaderAndIsr" in ln.head
    ]
    for b in (2, 3):
        downs = [t for t, e, _d in c.brokers[b].lifecycle if e == "shut_down"]
        ups = [t for t, e, _d in c.brokers[b].lifecycle if e == "started"]
        assert downs and ups
        assert not [t for t, to in sends if to == b and downs[0] < t < ups[0]], (b, sends)
    back3 = next(t for t, e, _d in c.brokers[3].lifecycle if e == "started")
    assert any(to == 3 and back3 < t < back3 + 10.0 for t, to in sends)
    # one batch, one time: the election's UpdateMetadata is logged with its LeaderAndIsr, to every live broker at
    # once, though the channel sends it to broker 2 only once broker 2 has answered the LeaderAndIsr
    (elected,) = [d[0] for d in c.controller.decisions if d[3] == 2 and d[7] == "OfflinePartition"]
    um = [
        (ln.time_ms, ln.head.split("brokers ")[1].split(" for")[0])
        for ln in render(c, elected, elected + 50.0)
        if "Sending UpdateMetadata" in ln.head
    ]
    assert um[0] == (elected, "HashSet(1, 2)")
    sent = [r.sent for r in c.log if r.is_controller and r.api == "UpdateMetadata" and r.connection.broker_id == 2]
    assert any(t > elected for t in sent if t < elected + 50.0)


# -- a partition created with no live replica (NewPartition) ------------------------------------------------------
def _created_while_down():
    """Topic ``b`` (one replica, on broker 3) created at 1 s while broker 3 is down (back at about 5.1 s)."""
    c = Cluster(3, seed=1, controller_id=1)
    c.log.keep_answered = True
    c.create_topic("a", assignment={0: [1, 2]})
    c.restart_broker(3, at_ms=100.0, down_ms=5_000.0)
    c.run(1_000.0)
    assert not c.brokers[3].online
    c.create_topic("b", assignment={0: [3]}, min_insync_replicas=2)
    return c


def test_a_partition_created_with_no_live_replica_stays_new_until_one_is_back_then_is_initialized():
    """``initializeLeaderAndIsrForPartitions``: no live replica, so no state znode, no leader, nothing sent; the
    partition stays NewPartition (Kafka logs ``No assigned replica is alive.``) and every
    ``triggerOnlinePartitionStateChange`` tries it again. When broker 3 registers, it is initialized, not
    elected: leader the first live replica, ISR the live replicas, leader epoch 0 and version 0 (the znode is
    created then), ``from NewPartition``; broker 3 leads it and every broker's cache has it."""
    c = _created_while_down()
    ctl, tp = c.controller, ("b", 0)
    assert tp in ctl.new_partitions and ctl.state[tp]["leader"] == -1
    assert ctl.failed_state_changes == [(1_000.0, "b", 0, "NewPartition", (1, 2))]
    assert tp not in c.brokers[3].replica_manager.partitions  # no replica has heard of it
    c.run(10_000.0)
    back = next(t for t, e, _d in c.brokers[3].lifecycle if e == "started")
    st = ctl.state[tp]
    assert tp not in ctl.new_partitions
    assert (st["leader"], st["isr"], st["leader_epoch"], st["zk_version"]) == (3, [3], 0, 0)
    (init,) = [d for d in ctl.decisions if (d[1], d[2]) == tp]
    assert init[3:] == (3, 0, (3,), 0, "NewPartition") and back < init[0] <= back + 3 * ctl.zk_latency_ms
    assert [f[3] for f in ctl.failed_state_changes] == ["NewPartition"]  # no other trigger while it was down
    part = c.brokers[3].replica_manager.partitions[tp]
    assert (part.leader, part.leader_epoch) == (3, 0)  # its LeaderAndIsr (epoch 0) was applied, not ignored
    assert part.min_isr == 2  # the topic's min.insync.replicas, though the log was made only now
    assert all(b.metadata_cache.describe([tp])[tp] == ("NONE", 3, 0) for b in c.brokers.values())
    lai = [r for r in c.log if r.is_controller and r.api == "LeaderAndIsr" and tp in r.partitions]
    assert lai and min(r.sent for r in lai) >= init[0]  # nothing about it before it had a leader


def test_a_new_partitions_failed_initialization_is_logged_as_kafka_logs_it():
    """state-change.log: ``failed to change state for partition b-0 from NewPartition to OnlinePartition`` at
    ERROR, its exception naming the live *replicas* (none: Kafka's text says "assigned") and the live brokers
    as a Scala ``Set``; then, when broker 3 is back, ``Changed partition b-0 from NewPartition to
    OnlinePartition with state LeaderAndIsr(leader=3, leaderEpoch=0, isr=List(3), zkVersion=0)``."""
    from kafka_lab.logs.render import render

    c = _created_while_down()
    c.run(10_000.0)
    lines = [ln.head for ln in render(c, 0.0, 10_000.0) if ln.broker == 1 and "partition b-0" in ln.head]
    assert lines == [
        " ERROR [Controller id=1 epoch=1] Controller 1 epoch 1 failed to change state for partition b-0 from "
        "NewPartition to OnlinePartition (state.change.logger)\nkafka.common.StateChangeFailedException: "
        "Controller 1 epoch 1 encountered error during state change of partition b-0 from New to Online, "
        "assigned replicas are [], live brokers are [Set(1, 2)]. No assigned replica is alive.",
        " INFO [Controller id=1 epoch=1] Changed partition b-0 from NewPartition to OnlinePartition with state "
        "LeaderAndIsr(leader=3, leaderEpoch=0, isr=List(3), zkVersion=0) (state.change.logger)",
    ]


def test_a_new_partition_is_tried_at_every_trigger_and_by_a_new_controller():
    """A broker failure (broker 2 crashes) tries it again, and fails (broker 3 is still down); so does a new
    controller (``onControllerFailover`` -> ``triggerOnlinePartitionStateChange``), and its LeaderAndIsr and
    UpdateMetadata for every partition leave it out. Broker 3's return initializes it."""
    c = _created_while_down()
    ctl = c.controller
    c.brokers[2].shut_down()
    ctl.on_broker_failure(2, at_ms=2_000.0)
    c.run(3_000.0)
    assert [(t, w, live) for t, topic, _p, w, live in ctl.failed_state_changes if topic == "b"] == [
        (1_000.0, "NewPartition", (1, 2)),
        (2_000.0 + ctl.zk_latency_ms, "NewPartition", (1,)),
    ]
    c.move_controller(at_ms=3_500.0)
    c.run(4_500.0)
    (again,) = [t for t, topic, *_ in ctl.failed_state_changes if topic == "b" and t > 3_500.0]
    assert ctl.controller_at(again)[1] == 2  # the new controller's epoch
    sent = [r for r in c.log if r.is_controller and r.sent > 3_500.0]
    assert sent and not [r for r in sent if ("b", 0) in r.partitions]
    c.run(10_000.0)
    assert ctl.state[("b", 0)]["leader"] == 3


@pytest.mark.parametrize("failed_hosts", [True, False])
def test_an_election_a_broker_failure_happens_to_make_is_sent_too(failed_hosts):
    """A broker fails just after ``unclean.leader.election.enable`` was set on ``orders`` and before the
    controller acted on it: the failure's own trigger (``onReplicasBecomeOffline`` ->
    ``triggerOnlinePartitionStateChange``) reads the new config and elects broker 3 for ``orders-0``, and that
    election goes out with the rest (LeaderAndIsr to broker 3), whether the failed broker hosted a replica
    (``x-0``) or none. (An election that no broker hears of would leave the partition without a leader.)"""
    c = Cluster(4, seed=2, controller_id=1)
    c.log.keep_answered = True
    tp = (TOPIC, 0)
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.create_topic("x", assignment={0: [4, 1]} if failed_hosts else {0: [1]})
    c.restart_broker(3, at_ms=10.0, down_ms=20_000.0)
    c.restart_broker(2, at_ms=100.0, down_ms=120_000.0)
    c.run(25_000.0)
    ctl = c.controller
    assert ctl.state[tp]["leader"] == -1
    c.enable_unclean_leader_election(TOPIC, at_ms=30_000.0)
    c.run(30_000.5)  # the config is written; the controller hears of it a ZooKeeper round trip later
    c.brokers[4].shut_down()
    ctl.on_broker_failure(4, at_ms=30_001.0)
    c.run(31_000.0)
    ((t, *_),) = ctl.unclean_elections
    assert ctl.state[tp]["leader"] == 3
    assert c.brokers[3].replica_manager.partitions[tp].leader == 3  # its LeaderAndIsr went out
    lai = [r for r in c.log if r.is_controller and r.api == "LeaderAndIsr" and tp in r.partitions and r.sent >= t]
    assert [r.connection.broker_id for r in lai] == [3]

"""A broker's restart and a controller change in the cluster model, against Kafka 2.8's rules
(``KafkaController.doControlledShutdown``, ``onBrokerFailure``, ``onBrokerStartup``,
``onControllerFailover``; ``KafkaServer.controlledShutdown``; docs/kafka-reference.md)."""

from collections import Counter
from itertools import pairwise

import pytest

from kafka_lab.sim import Cluster
from kafka_lab.sim.lifecycle import CONTROLLED_SHUTDOWN_MAX_RETRIES, CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS
from kafka_lab.sim.records import Request

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
    # (onBrokerFailure: OfflinePartitionLeaderElectionStrategy, unclean election off)
    for p in (0, 1):
        st = c.controller.state[(TOPIC, p)]
        assert st["leader"] == -1 and 2 not in st["isr"]
    t_fail = [t for t, e, _d in c.brokers[2].lifecycle if e == "controlled_shutdown_failed"]
    assert [b - a for a, b in pairwise(t_fail)] == pytest.approx([CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS] * 2, abs=5)


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


def test_a_restarted_broker_starts_from_its_logs_and_the_controllers_leader_and_isr():
    """onBrokerStartup: UpdateMetadata without partitions to the others, with all to it, then LeaderAndIsr to it."""
    c = _cluster()
    c.restart_broker(3, at_ms=100.0, down_ms=500.0)
    c.run(1000.0)
    up = next(t for t, e, _d in c.brokers[3].lifecycle if e == "started")
    after = [r for r in _controller_requests(c) if r.sent >= up]
    first = [(r.api, r.connection.broker_id, len(r.payload["partition_states"])) for r in after[:4]]
    assert ("UpdateMetadata", 1, 0) in first and ("UpdateMetadata", 2, 0) in first
    assert ("UpdateMetadata", 3, 6) in first and ("LeaderAndIsr", 3, 6) in first
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

"""KIP-291's scenarios, reproduced by the model and checked against the KIP's arithmetic.

The KIP: "a controller request is enqueued into the requestQueue after a backlog of data requests,
and experiences a long queuing time" and "the requestQueue is full, and therefore blocks a network
(processor) thread that has a controller request ready to be enqueued". With deterministic service
the waits are exact: the k-th request behind a backlog of N on c handlers starts at floor(N/c)·s.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lab.sim.experiments import controller_behind_backlog, lab_properties, wait_for_handler_ms

EPS = 0.001  # the controller request is sent just after the backlog


@pytest.mark.parametrize(
    "backlog,handlers,service_ms",
    [(0, 8, 1.0), (8, 8, 1.0), (100, 8, 1.0), (333, 4, 2.0), (480, 8, 0.5), (150, 1, 1.0)],
)
def test_without_control_plane_the_controller_request_waits_behind_the_backlog(backlog, handlers, service_ms):
    res = controller_behind_backlog(backlog, control_plane=False, num_io_threads=handlers, service_ms=service_ms)
    lai = res.request("LeaderAndIsr")
    assert lai["plane"] == "data" and lai["listener"] == "PLAINTEXT"
    expected = math.floor(backlog / handlers) * service_ms - (EPS if backlog >= handlers else 0)
    assert wait_for_handler_ms(lai) == pytest.approx(max(expected, 0.0), abs=1e-9)
    assert lai["socketWaitTime"] == 0  # the queue never filled: all the wait is requestQueueTime
    assert lai["requestQueueTime"] == pytest.approx(max(expected, 0.0), abs=1e-9)


@pytest.mark.parametrize("backlog", [0, 100, 480, 1000, 3000])
@pytest.mark.parametrize("handlers", [1, 8])
def test_with_control_plane_it_takes_one_service_time_whatever_the_backlog(backlog, handlers):
    res = controller_behind_backlog(
        backlog, control_plane=True, num_io_threads=handlers, controller_ms=1.0, until_ms=50.0
    )
    lai = res.request("LeaderAndIsr")
    assert (lai["plane"], lai["listener"], lai["processor"]) == ("control", "CONTROLLER", 0)
    assert wait_for_handler_ms(lai) == 0.0
    assert lai["totalTime"] == pytest.approx(1.0) and lai["error"] == "NONE"
    assert res.time_average("ControlPlaneRequestQueueSize", 0, 50) == 0.0


@pytest.mark.parametrize("backlog,queued", [(1000, 500), (2000, 500), (600, 100)])
def test_a_full_queue_blocks_the_controllers_processor(backlog, queued):
    """Without KIP-291 and with the queue full, the wait is still about backlog·s/c, but most of it is
    spent in the socket, behind the processor's blocked put: invisible to requestQueueTime."""
    res = controller_behind_backlog(backlog, control_plane=False, queued_max_requests=queued)
    lai = res.request("LeaderAndIsr")
    assert wait_for_handler_ms(lai) == pytest.approx(backlog / 8, rel=0.02)
    assert lai["socketWaitTime"] > 0.4 * backlog / 8
    assert lai["requestQueueTime"] == pytest.approx(queued / 8, rel=0.05)
    # the same backlog with a queue big enough: no socket wait at all
    roomy = controller_behind_backlog(backlog, control_plane=False, queued_max_requests=backlog + 10).request(
        "LeaderAndIsr"
    )
    assert roomy["socketWaitTime"] == 0


@pytest.mark.parametrize("backlog", [100, 400, 480])
def test_rejected_alternative_works_while_the_queue_has_room(backlog):
    lai = controller_behind_backlog(backlog, control_plane=False, prioritise=True).request("LeaderAndIsr")
    assert lai["plane"] == "data"
    assert wait_for_handler_ms(lai) <= 1.0  # at most one (deterministic) produce service time


@pytest.mark.parametrize("backlog,queued", [(1000, 500), (2000, 500), (3000, 500)])
def test_rejected_alternative_fails_when_the_queue_is_full(backlog, queued):
    """The KIP's reason for rejecting it: the processor is blocked before the request is even read."""
    lai = controller_behind_backlog(backlog, control_plane=False, prioritise=True, queued_max_requests=queued).request(
        "LeaderAndIsr"
    )
    assert lai["requestQueueTime"] <= 1.0 + 1e-9  # once read, it does jump the queue...
    assert wait_for_handler_ms(lai) == pytest.approx((backlog - queued) / 8, rel=0.03)  # ...but it waited to be read
    assert wait_for_handler_ms(lai) > 50


@pytest.mark.parametrize("backlog", [200, 400])
def test_exponential_service_waits_average_backlog_times_service_over_handlers(backlog):
    """Exponential service (mean s) on c busy handlers: departures come at rate c/s, and the LeaderAndIsr
    starts at the (N − c + 1)-th, so E[wait] = (N − c + 1)·s/c (≈ N·s/c), with variance (N − c + 1)·(s/c)².
    20 seeded runs: the standard error is under 1.6 % of the mean, the tolerance 5 %."""
    c, s = 8, 1.0
    waits = [
        wait_for_handler_ms(
            controller_behind_backlog(backlog, control_plane=False, deterministic=False, seed=seed).request(
                "LeaderAndIsr"
            )
        )
        for seed in range(20)
    ]
    assert np.mean(waits) == pytest.approx((backlog - c + 1) * s / c - EPS, rel=0.05)
    assert np.std(waits) == pytest.approx(math.sqrt(backlog - c + 1) * s / c, rel=0.35)
    cp = [
        controller_behind_backlog(backlog, control_plane=True, deterministic=False, seed=s).request("LeaderAndIsr")
        for s in range(3)
    ]
    assert all(wait_for_handler_ms(r) == 0 and r["totalTime"] == pytest.approx(1.0) for r in cp)


# -- downstream effects ----------------------------------------------------------------------------


def purgatory_run(control_plane, backlog=200, timeout_ms=30000, seed=0, produce_partitions=None):
    return controller_behind_backlog(
        backlog,
        control_plane=control_plane,
        acks=-1,
        replicas=3,
        request_timeout_ms=timeout_ms,
        seed=seed,
        until_ms=200.0,
        produce_partitions=produce_partitions,
    )


def test_acks_all_produces_wait_in_purgatory_until_the_leader_and_isr_then_fail():
    res = purgatory_run(control_plane=False)
    r = res.requests
    lai = res.request("LeaderAndIsr")
    applied = lai["api_local_complete_ms"]
    produce = r[r["api"] == "Produce"]
    assert len(produce) == 200 and (produce["error"] == "NOT_LEADER_OR_FOLLOWER").all()
    # causally: nobody is answered before the LeaderAndIsr is applied; those parked are answered at that instant
    assert (produce["response_complete_ms"] >= applied - 1e-9).all()
    parked = produce[produce["api_local_complete_ms"] < applied]
    assert len(parked) > 150
    # A DelayedProduce completes only when no partition is pending: makeFollowers settles partition 0 at
    # that instant, and the other 19 wait for the followers' next fetches to report the records (their
    # fetches queued behind the same backlog). So every answer comes at the LeaderAndIsr or at the handling
    # of a follower fetch that advanced the high watermark.
    fetches = r[(r["api"] == "Fetch") & r["client_id"].str.contains("fetcher")]
    instants = np.concatenate(([applied], fetches["api_local_complete_ms"].dropna().to_numpy()))
    at_trigger = np.isclose(parked["response_complete_ms"].to_numpy()[:, None], instants[None, :]).any(axis=1)
    assert at_trigger.all()


def test_leader_and_isr_completes_purgatory_at_that_instant_when_only_the_moved_partition_is_pending():
    res = purgatory_run(control_plane=False, produce_partitions=1)
    r = res.requests
    applied = res.request("LeaderAndIsr")["api_local_complete_ms"]
    parked = r[(r["api"] == "Produce") & (r["api_local_complete_ms"] < applied)]
    assert len(parked) > 150 and (parked["error"] == "NOT_LEADER_OR_FOLLOWER").all()
    assert np.allclose(parked["response_complete_ms"], applied)
    assert parked["remoteTime"].max() == pytest.approx(applied - parked["api_local_complete_ms"].min())


def test_with_control_plane_the_purgatory_wait_disappears():
    # produce to partition 0 only, so the wait is the wait for partition 0 (no other partition pending)
    slow, fast = purgatory_run(False, produce_partitions=1), purgatory_run(True, produce_partitions=1)
    p_slow = slow.requests.query("api == 'Produce'")
    p_fast = fast.requests.query("api == 'Produce'")
    applied = fast.request("LeaderAndIsr")["api_local_complete_ms"]
    assert applied == pytest.approx(EPS + 1.0)
    assert p_fast["remoteTime"].mean() < 0.05 * p_slow["remoteTime"].mean()
    # after the (fast) LeaderAndIsr the produces fail at append: NOT_LEADER_OR_FOLLOWER at once, clients retry
    late = p_fast[p_fast["dequeue_ms"] >= applied]
    assert (late["error"] == "NOT_LEADER_OR_FOLLOWER").all() and (late["remoteTime"] < 1.0).all()


def test_delayed_leader_and_isr_lets_acks_all_produces_time_out():
    res = purgatory_run(control_plane=False, backlog=400, timeout_ms=20)
    r = res.requests
    applied = res.request("LeaderAndIsr")["api_local_complete_ms"]
    produce = r[r["api"] == "Produce"]
    timed_out = produce[produce["error"] == "REQUEST_TIMED_OUT"]
    not_leader = produce[produce["error"] == "NOT_LEADER_OR_FOLLOWER"]
    assert len(timed_out) > 100 and len(not_leader) > 0 and len(timed_out) + len(not_leader) == 400
    assert np.allclose(timed_out["remoteTime"], 20.0)  # request.timeout.ms, to the microsecond
    assert (timed_out["response_complete_ms"] <= applied + 1e-9).all()
    assert (not_leader["response_complete_ms"] >= applied - 1e-9).all()


@pytest.mark.parametrize("backlog", [100, 400])
def test_update_metadata_delay_is_the_stale_metadata_window(backlog):
    windows = {}
    for cp in (False, True):
        res = controller_behind_backlog(backlog, control_plane=cp, controller_api="UpdateMetadata", controller_ms=0.5)
        um = res.request("UpdateMetadata")
        window = um["api_local_complete_ms"] - um["sent_ms"]
        # the broker's own bookkeeping (the metadata cache) agrees with the request log
        ((_, sent, applied),) = res.broker.metadata_cache.updates
        assert (sent, applied) == (um["sent_ms"], um["api_local_complete_ms"])
        assert res.broker.metadata_cache.leaders[("orders", 0)] == 2
        windows[cp] = window
    assert windows[True] == pytest.approx(0.5)
    assert windows[False] == pytest.approx(math.floor(backlog / 8) * 1.0 - EPS + 0.5)


def test_acks_1_records_acknowledged_after_the_controller_decided():
    """acks=1: without the control plane, every produce behind the backlog is acknowledged by a broker that
    the controller has already demoted, so a later truncation will lose it; with it, they get NOT_LEADER_OR_FOLLOWER."""
    counts = {}
    for cp in (False, True):
        r = controller_behind_backlog(300, control_plane=cp, acks=1).requests
        p = r[(r["api"] == "Produce") & (r["dequeue_ms"] > EPS)]
        counts[cp] = int((p["error"] == "NONE").sum())
    assert counts[False] == 300 - 8 and counts[True] <= 8


def test_stop_replica_goes_through_the_control_plane_too():
    res = controller_behind_backlog(
        300, control_plane=True, controller_api="StopReplica", acks=-1, replicas=3, until_ms=100.0
    )
    sr = res.request("StopReplica")
    assert sr["plane"] == "control" and wait_for_handler_ms(sr) == 0.0
    assert ("orders", 0) in res.broker.replica_manager.partitions  # deletePartitions=false keeps the log
    # 2.8's stopPartitions leaves the partition's state alone (it stops fetchers and re-checks purgatory)
    assert res.broker.replica_manager.partitions[("orders", 0)].leader == res.broker.id
    assert sr["error"] == "NONE"


def test_metadata_requests_are_answered_stale_until_update_metadata_is_applied():
    """The staleness window, seen from a client: Metadata answered from the cache before the
    UpdateMetadata is applied names the old leader (this broker, 1); after it, the new one (2)."""
    from kafka_lab.sim import Scenario
    from kafka_lab.sim.experiments import lab_settings

    for cp in (False, True):
        sc = Scenario(
            lab_properties(cp), seed=0, settings=lab_settings(1.0, controller_ms=0.5), client_listener="PLAINTEXT"
        )
        sc.producer(connections=300).burst(300)
        sc.metadata_client(connections=50).open_loop(2000)
        sc.controller.send(sc.broker, "UpdateMetadata", [sc.leader_and_isr_state(0, leader=2)], at_ms=EPS)
        res = sc.run(80.0)
        applied = res.request("UpdateMetadata")["api_local_complete_ms"]
        md = [req for req in sc.log if req.api == "Metadata" and req.result is not None]
        # a Metadata response's partition: (error, leader, leader epoch)
        before = [req.result[("orders", 0)][1] for req in md if req.api_local_complete < applied]
        after = [req.result[("orders", 0)][1] for req in md if req.api_local_complete > applied]
        assert set(before) <= {1} and set(after) == {2}
        stale = sum(1 for req in md if req.sent > EPS and req.api_local_complete < applied)
        if cp:
            assert applied == pytest.approx(EPS + 0.5) and stale == 0
        else:
            assert applied == pytest.approx(300 / 8 * 1.0 + 0.5, abs=1.0) and stale > 0


@pytest.mark.parametrize("overload", [1.25, 1.5, 2.0])
def test_under_sustained_overload_a_full_queue_adds_the_blocked_processor_time(overload):
    """Steady traffic above saturation (deterministic 1 ms service, 8 handlers): the queue is full when the
    LeaderAndIsr arrives, so it waits for the whole queue, 500 × 1 ms / 8, *plus* the time its processor
    spends blocked putting the requests it read earlier, while requests read later by other processors
    take the slots. With the control plane: only the network read."""
    from kafka_lab.sim.experiments import steady_load

    rate = overload * 8000
    fifo = steady_load(rate, control_plane=False, deterministic=True, duration_ms=600, controller_at_ms=450)
    assert max(fifo.broker.metrics.gauges["RequestQueueSize"].values) == 500
    lai = fifo.request("LeaderAndIsr")
    assert lai["socketWaitTime"] > 1.0
    assert wait_for_handler_ms(lai) > 500 * 1.0 / 8 + 1.0
    assert lai["requestQueueTime"] == pytest.approx(500 / 8, abs=1.5)  # Kafka's own metric sees only the queue
    cp = steady_load(rate, control_plane=True, deterministic=True, duration_ms=600, controller_at_ms=450)
    assert wait_for_handler_ms(cp.request("LeaderAndIsr")) == pytest.approx(0.01)


@settings(max_examples=25)
@given(
    backlog=st.integers(0, 400),
    handlers=st.integers(1, 12),
    service=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
    spare=st.integers(1, 50),
)
def test_fifo_wait_is_exact_for_any_backlog_that_fits(backlog, handlers, service, spare):
    """Deterministic service, a queue with room: the k-th request in line starts at floor(k / c) · s."""
    res = controller_behind_backlog(
        backlog, control_plane=False, num_io_threads=handlers, service_ms=service, queued_max_requests=backlog + spare
    )
    lai = res.request("LeaderAndIsr")
    expected = math.floor(backlog / handlers) * service - (EPS if backlog >= handlers else 0.0)
    assert wait_for_handler_ms(lai) == pytest.approx(expected, abs=1e-9)
    assert (
        wait_for_handler_ms(
            controller_behind_backlog(backlog, control_plane=True, num_io_threads=handlers, service_ms=service).request(
                "LeaderAndIsr"
            )
        )
        == 0
    )


def test_a_leader_and_isr_that_shrinks_the_isr_to_the_leader_completes_waiting_produces():
    """Partition.makeLeader: "we may need to increment high watermark since ISR could be down to 1".
    The followers stopped fetching orders-0, so acks=all produces wait; a LeaderAndIsr that keeps this
    broker the leader with ISR = {itself} moves the HW to the log end and they complete with NONE, at once."""
    from kafka_lab.sim import Scenario
    from kafka_lab.sim.experiments import lab_settings

    sc = Scenario(lab_properties(True), seed=0, settings=lab_settings(1.0), replicas=3, client_listener="PLAINTEXT")
    for f in sc.followers():
        f.stop_fetching(sc.partitions[0])
    sc.producer(connections=16, acks=-1, partitions=[sc.partitions[0]]).burst(16)
    me = sc.broker.id
    sc.controller.send(sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=me, isr=[me])], at_ms=5.0)
    res = sc.run(20.0)
    applied = res.request("LeaderAndIsr")["api_local_complete_ms"]
    assert applied == pytest.approx(6.0)  # sent at 5 ms, its own 1 ms on the control plane
    p = res.requests.query("api == 'Produce'")
    assert len(p) == 16 and (p["error"] == "NONE").all()
    assert np.allclose(p["response_complete_ms"], applied)  # parked since 1 or 2 ms, all released at 6 ms
    assert res.broker.replica_manager.partitions[("orders", 0)].hw == 16 * 10


@pytest.mark.parametrize("bad, error", [("1", TypeError), (True, TypeError), (0, ValueError), (-1.0, ValueError)])
def test_service_ms_is_a_positive_number_of_ms(bad, error):
    with pytest.raises(error, match="service_ms"):
        controller_behind_backlog(10, control_plane=False, service_ms=bad)

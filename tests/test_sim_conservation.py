"""Conservation laws of the broker model: Little's law for every queue, no request lost or doubled.

Little's law is checked exactly: the time integral of each queue-size metric equals the summed time
requests spent in that queue (L·T = Σ stays = λT·W), an identity between two independent records,
the metric's change log and the request log's timestamps. A steady run checks it once more with
requests still in flight at the end left out, where it holds only approximately.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lab.sim import CostModel, Exponential, ModelSettings, Scenario
from kafka_lab.sim.experiments import controller_behind_backlog, lab_properties, littles_law, steady_load

QUEUES = {
    # metric: (plane, start column, end column)
    "RequestQueueSize": ("data", "enqueue_ms", "dequeue_ms"),
    "ControlPlaneRequestQueueSize": ("control", "enqueue_ms", "dequeue_ms"),
    "ResponseQueueSize": ("data", "response_complete_ms", "response_dequeue_ms"),
    "ControlPlaneResponseQueueSize": ("control", "response_complete_ms", "response_dequeue_ms"),
}


def busy_run(seed, control_plane=True, acks=-1, queued=50, rate=9000, until=300.0):
    """A run that exercises every queue: overload, a small queue, purgatory, a follower, control requests."""
    settings = ModelSettings(costs={"Produce": CostModel(Exponential(0.8))})
    sc = Scenario(
        lab_properties(control_plane, queued_max_requests=queued),
        seed=seed,
        settings=settings,
        replicas=2,
        client_listener="PLAINTEXT",
    )
    for f in sc.followers():
        f.stop_fetching(sc.partitions[0])  # KIP-291's example: the follower stopped fetching partition 0
    sc.producer(connections=300, acks=acks, request_timeout_ms=40).open_loop(rate)
    sc.consumer(connections=5).open_loop(500)
    sc.metadata_client().open_loop(200)
    for k, t in enumerate((20.0, 120.0, 200.0)):
        sc.controller.send(sc.broker, "UpdateMetadata", [sc.leader_and_isr_state(k, leader=1)], at_ms=t)
    sc.controller.send(sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=2)], at_ms=150.0)
    return sc.run(until)


def stays(r, start, end, until):
    s = r[start].to_numpy()
    e = np.where(np.isnan(r[end].to_numpy()), until, r[end].to_numpy())
    ok = ~np.isnan(s)
    return s[ok], np.minimum(e[ok], until)


@pytest.mark.parametrize("seed,control_plane", [(1, True), (2, False), (3, True)])
def test_littles_law_holds_exactly_for_every_queue(seed, control_plane):
    res = busy_run(seed, control_plane)
    T = res.duration_ms
    r = res.requests
    checked = 0
    for metric, (plane, start, end) in QUEUES.items():
        if metric not in res.broker.metrics.gauges:
            assert not control_plane and plane == "control"
            continue
        s, e = stays(r[r["plane"] == plane], start, end, T)
        L = res.time_average(metric, 0, T)
        assert pytest.approx((e - s).sum(), rel=1e-9, abs=1e-9) == L * T, metric  # L = lambda·W, exactly
        checked += 1
    # purgatory: acks=all produces parked from apiLocalComplete until responseComplete
    p = r[(r["api"] == "Produce") & (r["acks"] == -1)]
    s, e = stays(p, "api_local_complete_ms", "response_complete_ms", T)
    assert res.time_average("NumDelayedOperations", 0, T) * T == pytest.approx((e - s).sum(), rel=1e-9, abs=1e-9)
    assert (e - s).sum() > 0, "the run must actually park requests in purgatory"
    assert checked == (4 if control_plane else 2)


def test_littles_law_with_sampling_noise_is_close_too():
    res = steady_load(6000, control_plane=False, duration_ms=2000, seed=5)
    r = res.requests
    done = r[r["error"] != "IN_FLIGHT"]
    lam = len(done) / res.duration_ms
    W = (done["dequeue_ms"] - done["enqueue_ms"]).mean()
    assert res.time_average("RequestQueueSize") == pytest.approx(lam * W, rel=0.02)


@pytest.mark.parametrize(
    "run, plane",
    [
        (lambda: steady_load(3000, control_plane=False, service_ms=2.0, duration_ms=1500, seed=3), "data"),
        (lambda: steady_load(6000, control_plane=False, service_ms=2.0, duration_ms=1500, seed=4), "data"),  # overload
        (lambda: busy_run(5, control_plane=True), "data"),
        (lambda: busy_run(5, control_plane=True), "control"),
        (lambda: controller_behind_backlog(1500, control_plane=False, queued_max_requests=100), "data"),
    ],
    ids=["3000/s", "6000/s overload", "busy data plane", "busy control plane", "backlog over a full queue"],
)
def test_littles_law_function_against_the_metric_and_a_count(run, plane):
    """experiments.littles_law (lab 03's λ, W and L) against two records it does not read the same way.

    From t0 = 0, λ·W must equal the queue-size metric's time average, which comes from the metric's change
    log, not the request log: exactly, in steady load, in overload and behind a full queue. And over any
    window the requests put in (λ × window) are the requests taken out, counted from the request log, plus
    what the queue gained, read from the metric: a count that fails if λ were the clients' offered rate."""
    res = run()
    T = res.duration_ms
    whole = littles_law(res, plane=plane)
    assert whole["throughput_per_s"] > 0
    assert whole["mean_queue_size"] > 0 or plane == "control"  # the control plane's queue is taken at once here
    assert whole["littles_law_queue_size"] == pytest.approx(whole["mean_queue_size"], rel=1e-9, abs=1e-12)
    metric = {"data": "RequestQueueSize", "control": "ControlPlaneRequestQueueSize"}[plane]
    gauge = res.broker.metrics.gauges[metric]
    times, values = np.array(gauge.times), np.array(gauge.values)

    def just_before(t):  # the queue's size in force just before t (before any change at t itself)
        i = np.searchsorted(times, t, side="left") - 1
        return values[i] if i >= 0 else 0

    r = res.requests[res.requests["plane"] == plane]
    for t0 in (0.0, T / 3):
        part = littles_law(res, t0, plane=plane)
        put_in = part["throughput_per_s"] / 1000 * (T - t0)
        taken_out = int(((r["dequeue_ms"] >= t0) & (r["dequeue_ms"] < T)).sum())
        assert put_in == pytest.approx(taken_out + just_before(T) - just_before(t0), abs=1e-6)


def test_littles_law_from_a_late_start_is_close_and_the_edges_are_its_only_error():
    res = steady_load(3500, control_plane=False, service_ms=2.0, duration_ms=2000, seed=6)
    late = littles_law(res, 200.0)
    assert late["littles_law_queue_size"] == pytest.approx(late["mean_queue_size"], rel=0.03)
    assert late["throughput_per_s"] == pytest.approx(3500, rel=0.05)
    with pytest.raises(ValueError, match="t0 < t1"):
        littles_law(res, 2000.0)
    with pytest.raises(ValueError, match="no control plane"):
        littles_law(res, plane="control")
    with pytest.raises(ValueError, match="'data' or 'control'"):
        littles_law(res, plane="both")


@pytest.mark.parametrize("control_plane", [True, False])
def test_every_request_ends_exactly_once_or_is_in_flight(control_plane, monkeypatch):
    from collections import Counter

    from kafka_lab.sim.network.socket_server import Connection, Processor

    # count, independently of the request log, every response handed to a processor and every send finished
    answered, sent = Counter(), Counter()
    enqueue, done = Processor.enqueue_response, Connection.response_sent
    # (the studied broker's connections only: a follower broker's own request path is not in its log)
    mine = 1

    def count(counter, req):
        if req.connection.broker_id == mine:
            counter.update([id(req)])

    monkeypatch.setattr(Processor, "enqueue_response", lambda self, req: (count(answered, req), enqueue(self, req))[1])
    monkeypatch.setattr(Connection, "response_sent", lambda self, req: (count(sent, req), done(self, req))[1])
    res = busy_run(7, control_plane)
    assert max(answered.values()) == 1 and max(sent.values()) == 1  # no request answered (or sent) twice
    r = res.requests
    assert len(sent) == r["end_ms"].notna().sum() and len(answered) == r["response_complete_ms"].notna().sum()
    # one row per request sent, counted independently by each client
    assert len(r) == sum(res.sent.values())
    assert not r.duplicated(["client_id", "correlation_id"]).any()
    finished = r["error"] != "IN_FLIGHT"
    assert r.loc[finished, "end_ms"].notna().all()
    assert r.loc[~finished, "end_ms"].isna().all()
    # timestamps in causal order, phases non-negative, and they add up to totalTime
    phases = ["requestQueueTime", "localTime", "remoteTime", "throttleTime", "responseQueueTime", "sendTime"]
    f = r[finished]
    assert (f[phases + ["socketWaitTime"]] >= -1e-9).all().all()
    assert np.allclose(f[phases].sum(axis=1), f["totalTime"])
    assert set(r["error"]) <= {"NONE", "IN_FLIGHT", "NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"}
    assert (r["error"] == "REQUEST_TIMED_OUT").any() and (r["error"] == "NOT_LEADER_OR_FOLLOWER").any()


def test_a_full_queue_blocks_processors_but_drops_nothing():
    res = controller_behind_backlog(1500, control_plane=False, queued_max_requests=100, until_ms=1000)
    r = res.requests
    assert len(r) == 1501 and (r["error"] == "NONE").all()  # all answered, none dropped
    assert (
        res.broker.metrics.gauges["RequestQueueSize"].values
        and max(res.broker.metrics.gauges["RequestQueueSize"].values) == 100
    )
    assert (r["socketWaitTime"] > 0).sum() > 1000  # most waited in the socket behind a blocked processor
    # while the queue was full the processors were not idle: they were blocked on the put
    m = res.metrics
    early = m[m["time_ms"] <= 150]
    assert (early["NetworkProcessorAvgIdlePercent"] < 0.6).all()


@settings(max_examples=15)
@given(
    seed=st.integers(0, 10**6),
    queued=st.integers(1, 40),
    handlers=st.integers(1, 4),
    acks=st.sampled_from([0, 1, -1]),
    control_plane=st.booleans(),
    prioritise=st.booleans(),
)
def test_conservation_property(seed, queued, handlers, acks, control_plane, prioritise):
    settings_ = ModelSettings(costs={"Produce": CostModel(Exponential(0.5))}, prioritise_controller_requests=prioritise)
    props = lab_properties(control_plane, queued_max_requests=queued, num_io_threads=handlers)
    sc = Scenario(props, seed=seed, settings=settings_, replicas=2, client_listener="PLAINTEXT")
    sc.followers()
    sc.producer(connections=20, acks=acks, request_timeout_ms=15).open_loop(4000)
    sc.controller.send(sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(3, leader=2)], at_ms=10)
    res = sc.run(40.0)
    r = res.requests
    assert len(r) == sum(res.sent.values())
    assert (r["error"] == "IN_FLIGHT").sum() + (r["end_ms"].notna()).sum() == len(r)
    for metric in ("RequestQueueSize", "ResponseQueueSize", "NumDelayedOperations"):
        assert min(res.broker.metrics.gauges[metric].values) >= 0
    assert max(res.broker.metrics.gauges["RequestQueueSize"].values) <= queued
    # Little's law, exactly, for every queue of this run too
    T = res.duration_ms
    for metric, (plane, start, end) in QUEUES.items():
        if metric in res.broker.metrics.gauges:
            s, e = stays(r[r["plane"] == plane], start, end, T)
            assert res.time_average(metric, 0, T) * T == pytest.approx((e - s).sum(), rel=1e-9, abs=1e-9), metric
    # and for produce purgatory: parked from apiLocalComplete to responseComplete
    s, e = stays(r[(r["api"] == "Produce") & (r["acks"] == -1)], "api_local_complete_ms", "response_complete_ms", T)
    assert res.time_average("NumDelayedOperations", 0, T) * T == pytest.approx((e - s).sum(), rel=1e-9, abs=1e-9)


def test_same_seed_same_dataframes():
    a, b = busy_run(11), busy_run(11)
    pd.testing.assert_frame_equal(a.requests, b.requests)
    pd.testing.assert_frame_equal(a.metrics, b.metrics)
    c = busy_run(12)
    assert not a.requests["end_ms"].equals(c.requests["end_ms"])

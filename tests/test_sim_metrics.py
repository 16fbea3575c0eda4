"""kafka_lab.sim.common.metrics: change logs, exact integrals and time averages, sampled frames under Kafka's names.

Truths: step functions whose areas are counted by hand (or, in the property test, by summing
rectangles with exact fractions), and the definition of an idle fraction in Kafka's pool metrics
(docs/kafka-reference.md §3): 1 − busy thread time / (threads × window).
"""

from fractions import Fraction

import pandas as pd
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lab.sim import CostModel, ModelSettings, Scenario
from kafka_lab.sim.common.metrics import Metrics


def _run_steps(steps, threads=0, name="RequestQueueSize"):
    """A gauge driven through ``steps`` = [(time, delta), ...] on a real simpy clock."""
    env = simpy.Environment()
    m = Metrics(env)
    g = m.gauge(name, threads)

    def proc():
        for t, delta in steps:
            yield env.timeout(t - env.now)
            g.add(delta)

    env.process(proc())
    env.run()
    return env, m, g


def test_a_gauge_logs_each_change_and_collapses_changes_at_one_instant():
    env, _, g = _run_steps([(1.0, +2), (1.0, -1), (3.0, +4), (6.0, -5)])
    assert g.times == [0.0, 1.0, 3.0, 6.0]
    assert g.values == [0, 1, 5, 0]  # +2 then -1 at t=1 leaves one entry, the value after both
    assert g.value == 0 and env.now == 6.0


@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.5]), st.sampled_from(["pulse", 1, -1, 3])), max_size=12))
def test_a_pulse_logs_exactly_what_one_in_and_one_out_at_that_instant_log(ops):
    """``Gauge.pulse`` (a request an idle handler takes at once) is ``add(1)`` then ``add(-1)``, change log and all."""
    env = simpy.Environment()
    m = Metrics(env)
    fast, slow = m.gauge("fast"), m.gauge("slow")

    def proc():
        for t, op in sorted(ops, key=lambda o: o[0]):
            yield env.timeout(t - env.now)
            if op == "pulse":
                fast.pulse()
                slow.add(1)
                slow.add(-1)
            else:
                fast.add(op)
                slow.add(op)

    env.process(proc())
    env.run()
    assert (fast.times, fast.values, fast.value) == (slow.times, slow.values, slow.value)


def test_integral_at_and_time_average_are_the_step_functions_area():
    # value 0 on [0,1), 1 on [1,3), 5 on [3,6), 0 after: area to 6 is 1*2 + 5*3 = 17
    _, _, g = _run_steps([(1.0, +1), (3.0, +4), (6.0, -5)])
    assert g.integral([0.0, 1.0, 2.0, 3.0, 4.5, 6.0, 10.0]).tolist() == [0.0, 0.0, 1.0, 2.0, 9.5, 17.0, 17.0]
    assert g.at([0.0, 0.99, 1.0, 3.0, 5.99, 6.0]).tolist() == [0, 0, 1, 5, 5, 0]  # after the change at that time
    assert g.time_average(0.0, 6.0) == pytest.approx(17 / 6)
    assert g.time_average(2.0, 4.0) == pytest.approx((1 * 1 + 5 * 1) / 2)


def test_a_metric_is_registered_once():
    m = Metrics(simpy.Environment())
    m.gauge("RequestQueueSize")
    with pytest.raises(ValueError, match="registered twice"):
        m.gauge("RequestQueueSize")


def test_an_idle_metric_is_one_minus_the_busy_share_of_the_pool():
    # 4 handlers: 2 busy on [0, 2), 4 busy on [2, 3), 0 busy after; up to t=4: busy thread-ms = 4 + 4 = 8 of 16
    env, m, _ = _run_steps([(0.0, +2), (2.0, +2), (3.0, -4), (4.0, 0)], threads=4, name="RequestHandlerAvgIdlePercent")
    assert m.time_average("RequestHandlerAvgIdlePercent") == pytest.approx(1 - 8 / 16)
    assert m.time_average("RequestHandlerAvgIdlePercent", 2.0, 3.0) == pytest.approx(0.0)
    frame = m.frame(1.0)
    # each sample: idle share over the window before it
    assert frame["RequestHandlerAvgIdlePercent"].tolist() == [0.5, 0.5, 0.0, 1.0]
    assert frame["time_ms"].tolist() == [1.0, 2.0, 3.0, 4.0] and env.now == 4.0


def test_frame_samples_gauges_at_whole_intervals_only():
    _, m, _ = _run_steps([(0.5, +3), (2.5, -1), (7.0, 0)])
    frame = m.frame(2.0)  # until now = 7: samples at 2, 4, 6 (not 8)
    assert frame["time_ms"].tolist() == [2.0, 4.0, 6.0]
    assert frame["RequestQueueSize"].tolist() == [3, 2, 2]
    assert m.frame(2.0, until=3.0)["RequestQueueSize"].tolist() == [3]


def test_changes_is_every_change_log_in_long_form():
    env = simpy.Environment()
    m = Metrics(env)
    assert list(m.changes().columns) == ["metric", "time_ms", "value"] and m.changes().empty
    a, b = m.gauge("RequestQueueSize"), m.gauge("PurgatorySize")
    a.add(1)
    env.run(until=2.0)
    b.add(3)
    # the change at t=0 replaces the gauge's initial entry rather than adding one
    expected = pd.DataFrame(
        {
            "metric": ["RequestQueueSize", "PurgatorySize", "PurgatorySize"],
            "time_ms": [0.0, 0.0, 2.0],
            "value": [1, 0, 3],
        }
    )
    pd.testing.assert_frame_equal(m.changes(), expected)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(-3, 3)), min_size=1, max_size=30),
    st.integers(1, 5),
    st.integers(1, 4),
)
def test_integrals_and_samples_conserve_the_area(raw, interval, threads):
    """Any step function: the integral is the sum of its rectangles (exact fractions), and the sampled idle
    fractions over whole windows average to the exact time average over those windows."""
    steps, level = [], 0
    for t, delta in sorted(raw):
        delta = max(-level, min(threads - level, delta))  # a pool has between 0 and `threads` busy threads
        level += delta
        steps.append((t / 4, delta))
    env, m, g = _run_steps(steps, threads=threads, name="RequestHandlerAvgIdlePercent")
    end = env.now
    area, t_prev, v = Fraction(0), Fraction(0), 0
    for t, delta in steps:
        area += v * (Fraction(t) - t_prev)
        t_prev, v = Fraction(t), v + delta
    assert g.integral([end])[0] == pytest.approx(float(area), abs=1e-9)
    n = int(end // interval)
    if n:
        frame = m.frame(float(interval))
        assert len(frame) == n
        exact = m.time_average("RequestHandlerAvgIdlePercent", 0.0, n * interval)
        assert frame["RequestHandlerAvgIdlePercent"].mean() == pytest.approx(exact, abs=1e-9)
        assert (
            (frame["RequestHandlerAvgIdlePercent"] >= -1e-12) & (frame["RequestHandlerAvgIdlePercent"] <= 1 + 1e-12)
        ).all()


def test_metric_samples_are_gauge_values_and_exact_idle_fractions():
    """One handler, one 2 ms request at t=0: sampled every 1 ms, the handler is busy for the first two
    samples' windows (idle 0) and idle afterwards (idle 1); the data queue never holds it."""
    sc = Scenario(
        {"num.io.threads": 1},
        seed=0,
        settings=ModelSettings(network_read_ms=0, network_send_ms=0, costs={"Produce": CostModel(2.0)}),
    )
    sc.producer().burst(1)
    res = sc.run(4.0, metrics_interval_ms=1.0)
    m = res.metrics
    assert m["time_ms"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert m["RequestHandlerAvgIdlePercent"].tolist() == [0.0, 0.0, 1.0, 1.0]
    assert m["RequestQueueSize"].tolist() == [0, 0, 0, 0]
    assert res.time_average("RequestHandlerAvgIdlePercent") == pytest.approx(0.5)
    # two requests on two connections, one handler: the second waits in the queue for 2 ms
    sc = Scenario(
        {"num.io.threads": 1},
        seed=0,
        settings=ModelSettings(network_read_ms=0, network_send_ms=0, costs={"Produce": CostModel(2.0)}),
    )
    sc.producer(connections=2).burst(2)
    res = sc.run(4.0, metrics_interval_ms=1.0)
    assert res.metrics["RequestQueueSize"].tolist() == [1, 0, 0, 0]
    assert res.time_average("RequestQueueSize") == pytest.approx(2.0 / 4.0)

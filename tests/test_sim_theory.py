"""The broker model against queueing theory: Erlang C (M/M/c) and handler utilisation.

With Poisson arrivals, exponential service, a request queue that never fills and free network
reads/sends, one plane of the broker *is* an M/M/c queue (c = ``num.io.threads``). Following ciw's
test style: several seeded replications, warm-up discarded, the mean wait, P(wait) and the FIFO wait
distribution's tail compared with theory within 5 %.
"""

import math

import numpy as np
import pytest

from kafka_lab.sim import CostModel, Exponential, ModelSettings, Scenario
from kafka_lab.sim.common.theory import erlang_c, mm_c_utilisation, mm_c_wait, saturation_rate


def test_erlang_c_matches_the_recipes_numbers():
    # docs/recipes.md §6: M/M/8, mu = 1, rho = 0.8
    assert erlang_c(8, 6.4, 1.0) == pytest.approx(0.45764, abs=5e-6)
    assert mm_c_wait(8, 6.4, 1.0) == pytest.approx(0.28603, abs=5e-6)


def test_erlang_c_textbook_values():
    # M/M/1: P(wait) = rho, Wq = rho / (mu - lam)
    assert erlang_c(1, 0.5, 1.0) == pytest.approx(0.5)
    assert mm_c_wait(1, 0.5, 1.0) == pytest.approx(1.0)
    # M/M/2, lam = 1, mu = 1 (a = 1, rho = 0.5): P0 = 1/3, C = 1/3, Wq = 1/3 (Gross & Harris)
    assert erlang_c(2, 1.0, 1.0) == pytest.approx(1 / 3)
    assert mm_c_wait(2, 1.0, 1.0) == pytest.approx(1 / 3)
    # the closed form, for a c where the recursion and the factorials can both be computed
    c, a = 5, 3.7
    rho = a / c
    top = a**c / math.factorial(c) / (1 - rho)
    closed = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    assert erlang_c(c, a, 1.0) == pytest.approx(closed, rel=1e-12)


def test_theory_rejects_unstable_and_bad_input():
    with pytest.raises(ValueError, match="unstable"):
        erlang_c(2, 2.0, 1.0)
    with pytest.raises(ValueError, match="positive integer"):
        erlang_c(0, 0.5, 1.0)
    assert mm_c_utilisation(8, 6.4, 1.0) == pytest.approx(0.8)
    assert saturation_rate(8, 2.0) == pytest.approx(4000.0)


def mm_c_run(c, rho, seed, duration_ms, service_ms=1.0):
    settings = ModelSettings(
        network_read_ms=0.0, network_send_ms=0.0, costs={"Produce": CostModel(Exponential(service_ms))}
    )
    props = {"num.io.threads": c, "queued.max.requests": 10**7}
    sc = Scenario(props, seed=seed, settings=settings)
    lam_per_ms = rho * c / service_ms
    # many connections: a connection's previous request is long answered when its next one comes
    sc.producer(connections=4000, partitions=[("orders", 0)]).open_loop(rate_per_s=lam_per_ms * 1000)
    return sc.run(duration_ms)


@pytest.mark.slow
@pytest.mark.parametrize("c,rho,reps,duration_ms", [(1, 0.5, 4, 20000), (2, 0.7, 4, 30000), (8, 0.8, 5, 20000)])
def test_a_plane_is_an_mmc_queue(c, rho, reps, duration_ms):
    warmup = duration_ms / 10
    lam = rho * c  # per ms, mu = 1 per ms
    t0 = 1.0 / (c - lam)  # the mean wait of those who wait
    waits, pwaits, tails, idles = [], [], [], []
    for seed in range(reps):
        res = mm_c_run(c, rho, seed, duration_ms)
        r = res.requests
        r = r[(r["sent_ms"] > warmup) & (r["error"] != "IN_FLIGHT")]
        waits.append(r["requestQueueTime"].mean())
        pwaits.append((r["requestQueueTime"] > 0).mean())
        tails.append((r["requestQueueTime"] > t0).mean())
        idles.append(res.time_average("RequestHandlerAvgIdlePercent", warmup, duration_ms))
    assert np.mean(waits) == pytest.approx(mm_c_wait(c, lam, 1.0), rel=0.05)
    assert np.mean(pwaits) == pytest.approx(erlang_c(c, lam, 1.0), rel=0.05)
    # the mean and P(wait) are the same for any order of service; the *distribution* of the wait is
    # FIFO's own: P(Wq > t) = C · exp(-(c·mu - lam)·t). (A LIFO queue fails this by 30-50 %.)
    assert np.mean(tails) == pytest.approx(erlang_c(c, lam, 1.0) * math.exp(-1.0), rel=0.05)
    # handler utilisation = rho, so RequestHandlerAvgIdlePercent = 1 - rho
    assert np.mean(idles) == pytest.approx(1 - rho, abs=0.02)

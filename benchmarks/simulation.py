"""How fast is the broker model? Simulated requests per wall-clock second, against bare simpy.

The floor of any simpy model is simpy itself. The baseline here is the bare M/M/c loop of
docs/recipes.md §6 (each customer a process: request a Resource, wait, hold it for an exponential time),
run in the same process, on the same queue (M/M/8, mu = 1 per ms, rho = 0.8). The full broker model
runs the same queue with everything a request does in the lab: a producer's connections, network
processors (read and send 0.01 ms), the bounded request queue, handler threads, a produce append,
the response queue, metrics change logs, and the request log turned into a DataFrame at the end.

Reported: requests per second for both, the cost ratio (model / bare, per request; the aim is <= 3),
and the model's cost per request at 1x, 4x and 16x as many requests (linear growth keeps it flat).

    .venv/bin/python benchmarks/simulation.py [--requests 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import random
import time

import simpy

from kafka_lab.sim import CostModel, Exponential, ModelSettings, Scenario

C, MU, RHO = 8, 1.0, 0.8  # per ms
LAM = RHO * C * MU  # arrivals per ms


def bare_simpy(n: int, seed: int = 1) -> float:
    """docs/recipes.md §6: the bare simpy M/M/c loop; returns wall seconds for n customers."""
    rnd = random.Random(seed)
    env = simpy.Environment()
    res = simpy.Resource(env, capacity=C)
    waits = []

    def customer():
        arrive = env.now
        with res.request() as req:
            yield req
            waits.append(env.now - arrive)
            yield env.timeout(rnd.expovariate(MU))

    def source():
        for _ in range(n):
            yield env.timeout(rnd.expovariate(LAM))
            env.process(customer())

    old = gc.get_threshold()
    gc.set_threshold(max(old[0], 50000), old[1], old[2])  # the same GC setting Scenario.run uses: a fair floor
    t0 = time.perf_counter()
    env.process(source())
    env.run()
    elapsed = time.perf_counter() - t0
    gc.set_threshold(*old)
    return elapsed


def broker_model(n: int, seed: int = 1) -> tuple[float, int]:
    """The full broker model on the same queue; returns (wall seconds, requests simulated)."""
    t0 = time.perf_counter()
    settings = ModelSettings(costs={"Produce": CostModel(Exponential(1.0 / MU))})
    sc = Scenario({"num.io.threads": C, "queued.max.requests": 10**7}, seed=seed, settings=settings)
    sc.producer(connections=2000, partitions=[("orders", 0)]).open_loop(rate_per_s=LAM * 1000)
    res = sc.run(until_ms=n / LAM)
    _ = res.requests, res.metrics  # the DataFrames are part of the cost
    return time.perf_counter() - t0, len(res.requests)


def best(fn, repeat):
    return min((fn() for _ in range(repeat)), key=lambda x: x if isinstance(x, float) else x[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    n = args.requests

    bare = best(lambda: bare_simpy(n), args.repeat)
    model_s, model_n = best(lambda: broker_model(n), args.repeat)
    bare_rate, model_rate = n / bare, model_n / model_s
    ratio = (model_s / model_n) / (bare / n)
    print(f"M/M/{C}, rho={RHO}, {n} requests (best of {args.repeat})")
    print(f"  bare simpy loop     : {bare:7.3f} s  {bare_rate:9.0f} requests/s")
    print(f"  full broker model   : {model_s:7.3f} s  {model_rate:9.0f} requests/s  ({model_n} requests)")
    print(f"  cost per request    : model / bare = {ratio:.2f}x  (aim: <= 3x)")

    print("growth with load (full broker model):")
    base = None
    for k in (1, 4, 16):
        s, m = best(lambda k=k: broker_model(n * k // 4), max(1, args.repeat - 1))
        per = s / m * 1e6
        base = base or per
        print(
            f"  {k:>2}x: {m:8d} requests  {s:7.3f} s  {per:6.2f} µs/request  ({per / base:.2f}x the 1x cost per request)"
        )


if __name__ == "__main__":
    main()

"""One broker's request path under load: the experiments on it (lab 03 runs them, the Spark lab sweeps
``load_sweep`` at scale, and their tests repeat them with the same seeds). The cluster's experiments are
grouped the same way, by topic: :mod:`.incidents` (a leader change under load), :mod:`.controller_election`, :mod:`.controller_fencing`,
:mod:`.last_isr`, :mod:`.zk.lifecycle`, :mod:`.shutdown_cluster` and :mod:`.zk.controller_scale` (the controller).

Each builds a :class:`~kafka_lab.sim.scenario.Scenario` from broker properties, so the dedicated
control plane is switched on the way Kafka switches it: by ``control.plane.listener.name``.

- :func:`lab_properties`: a broker with a ``PLAINTEXT`` listener (clients, other brokers, and,
  without KIP-291, the controller) and a ``CONTROLLER`` listener used only when
  ``control.plane.listener.name=CONTROLLER``.
- :func:`controller_behind_backlog`: KIP-291's scenario: a backlog of Produce requests, then one
  controller request. How long does the controller request wait?
- :func:`steady_load`: Poisson produce traffic at a chosen rate, with a LeaderAndIsr part-way.
- :func:`load_sweep`: :func:`steady_load` over several rates (where does the data plane saturate?).
- :func:`backlog_table`: the controller request's wait behind each backlog, for the three :data:`DESIGNS`.
- :func:`littles_law`: a request queue's L = λW in one run: its throughput, mean time in it, and mean size.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from .common.distributions import Deterministic, Exponential
from .common.options import MAX_CONNECTIONS, MAX_RATE_PER_S, RATE_WHY, check_number, check_options, check_seed
from .common.theory import mm_c_wait
from .network.request import IN_FLIGHT
from .scenario import Results, Scenario
from .server.apis import CostModel
from .server.config import ModelSettings

__all__ = [
    "lab_properties",
    "lab_settings",
    "controller_behind_backlog",
    "steady_load",
    "load_sweep",
    "sweep_seed",
    "SWEEP_WARMUP_MS",
    "wait_for_handler_ms",
    "littles_law",
    "QUEUE_SIZE_METRIC",
    "DESIGNS",
    "backlog_table",
]

#: the three designs the lab compares: (label, control plane?, controller requests prioritised?)
DESIGNS = [
    ("data plane only (FIFO)", False, False),
    ("rejected: priority in the data queue", False, True),
    ("KIP-291 control plane", True, False),
]


def lab_properties(
    control_plane: bool = False,
    *,
    num_io_threads: int = 8,
    num_network_threads: int = 3,
    queued_max_requests: int = 500,
    **overrides,
) -> dict:
    """Broker properties for the lab: PLAINTEXT for everyone, CONTROLLER for the controller if enabled
    (:func:`kafka_lab.listeners.control_plane_broker`, with the lab's thread and queue settings)."""
    from kafka_lab.listeners import control_plane_broker

    threads = {
        "num.io.threads": num_io_threads,
        "num.network.threads": num_network_threads,
        "queued.max.requests": queued_max_requests,
    }
    return control_plane_broker(control_plane, **threads, **overrides)


def lab_settings(
    produce,
    deterministic: bool = True,
    prioritise: bool = False,
    network_ms: float = 0.0,
    controller_ms: float | None = 1.0,
) -> ModelSettings:
    """The model settings of the lab's experiments: Produce costs ``produce`` (a mean in ms, deterministic or
    exponential; or a CostModel as it is), controller requests ``controller_ms``, network read/send ``network_ms``."""
    if not isinstance(produce, CostModel):
        produce = CostModel(Deterministic(produce) if deterministic else Exponential(produce))
    costs = {"Produce": produce}
    if controller_ms is not None:
        costs.update(
            {api: CostModel(Deterministic(controller_ms)) for api in ("LeaderAndIsr", "UpdateMetadata", "StopReplica")}
        )
    return ModelSettings(
        network_read_ms=network_ms, network_send_ms=network_ms, costs=costs, prioritise_controller_requests=prioritise
    )


def _service_ms(value) -> float:
    """``service_ms`` as the experiments take it: a mean Produce service time in ms, a number above 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"service_ms must be a number of milliseconds, got {type(value).__name__} {value!r} "
            "(for another cost model, build a Scenario with lab_settings(CostModel(...)))"
        )
    if not value > 0:
        raise ValueError(f"service_ms must be above 0, got {value!r}")
    return float(value)


_CONNECTIONS_WHY = (
    "each is a connection of its own (a backlog is one request per connection): 100,000 took 0.7 s to open on the "
    "project's machine; the lab uses up to 1,000"
)
#: what the experiments' own options accept (:func:`~kafka_lab.sim.common.options.check_options`): (whole number?,
#: least value, excluded?[, most, why]); the broker's settings are checked as Kafka checks them, by its config
_RANGES = {
    "backlog": (True, 0, False, MAX_CONNECTIONS, _CONNECTIONS_WHY),
    "connections": (True, 1, False, MAX_CONNECTIONS, _CONNECTIONS_WHY),
    "produce_rate_per_s": (False, 0, True, MAX_RATE_PER_S, RATE_WHY),
    "controller_ms": (False, 0, False),
    "controller_at_ms": (False, 0, False),
    "network_ms": (False, 0, False),
    "request_timeout_ms": (False, 0, False),
    "produce_partitions": (True, 1, False),
    "until_ms": (False, 0, True),
    "duration_ms": (False, 0, True),
    "metrics_interval_ms": (False, 0, True),
}


def _check(**values) -> None:
    """The experiments' options that were given (None: the default), against :data:`_RANGES`."""
    check_options({k: v for k, v in values.items() if v is not None}, _RANGES)


def wait_for_handler_ms(row: pd.Series) -> float:
    """How long a request (of any API) waited before a handler took it: in the socket plus in the request queue.

    Kafka's ``requestQueueTime`` starts when the processor has read the request; this starts when the
    client sent it, so it also counts the time a blocked processor left it unread in the socket."""
    return float(row["dequeue_ms"] - row["sent_ms"])


#: each plane's request-queue size metric (Kafka's names)
QUEUE_SIZE_METRIC = {"data": "RequestQueueSize", "control": "ControlPlaneRequestQueueSize"}


def littles_law(res: Results, t0: float = 0.0, t1: float | None = None, plane: str = "data") -> dict:
    """Little's law, L = λW, for one plane's request queue over [t0, t1] of a run (t1: the run's end).

    - ``throughput_per_s`` (λ): the requests the plane's processors put into its request queue in [t0, t1),
      per second: the rate requests go *through* the queue, which past saturation is what the handlers
      take, not what the clients offer;
    - ``mean_queue_ms`` (W): their mean time in the queue, ``enqueue`` to ``dequeue`` (Kafka's
      ``requestQueueTime``); a request still queued at t1 counts up to t1 (NaN when none came);
    - ``littles_law_queue_size``: λ·W, the mean queue size Little's law gives (requests);
    - ``mean_queue_size`` (L): the queue's size metric (``RequestQueueSize`` or
      ``ControlPlaneRequestQueueSize``) averaged over [t0, t1], from the metric's own change log, a record
      independent of the request log's timestamps.

    From t0 = 0, when the queue starts empty, the two sizes are equal (to rounding): λ·W·(t1 − t0) sums
    each request's time in the queue up to t1, and that is the integral of the queue's size. From a later
    t0 they differ by the requests already queued at t0 and those still queued at t1 (a few per cent in a
    steady run of a few thousand requests).
    """
    if plane not in QUEUE_SIZE_METRIC:
        raise ValueError(f"plane is 'data' or 'control', got {plane!r}")
    t1 = res.duration_ms if t1 is None else float(t1)
    if not 0 <= t0 < t1:
        raise ValueError(f"need 0 <= t0 < t1, got t0={t0!r}, t1={t1!r}")
    metric = QUEUE_SIZE_METRIC[plane]
    if metric not in res.broker.metrics.gauges:
        raise ValueError(f"this broker has no {plane} plane ({metric} is not one of its metrics)")
    r = res.requests
    r = r[(r["plane"] == plane) & (r["enqueue_ms"] >= t0) & (r["enqueue_ms"] < t1)]
    stays = np.minimum(r["dequeue_ms"].fillna(t1).to_numpy(), t1) - r["enqueue_ms"].to_numpy()
    lam = len(stays) / (t1 - t0)  # per ms
    w = float(stays.mean()) if len(stays) else np.nan
    return {
        "throughput_per_s": 1000.0 * lam,
        "mean_queue_ms": w,
        "littles_law_queue_size": lam * w if len(stays) else 0.0,
        "mean_queue_size": res.time_average(metric, t0, t1),
    }


def controller_behind_backlog(
    backlog: int,
    *,
    control_plane: bool,
    prioritise: bool = False,
    service_ms: float = 1.0,
    deterministic: bool = True,
    num_io_threads: int = 8,
    num_network_threads: int = 3,
    queued_max_requests: int = 500,
    controller_api: str = "LeaderAndIsr",
    controller_ms: float = 1.0,
    controller_at_ms: float = 0.001,
    acks: int = 1,
    replicas: int = 1,
    followers_stop_partition0: bool = True,
    request_timeout_ms: int = 30000,
    network_ms: float = 0.0,
    produce_partitions: int | None = None,
    seed: int = 0,
    until_ms: float | None = None,
) -> Results:
    """``backlog`` Produce requests written at t=0 (one connection each), then one controller request.

    The controller request makes this broker a follower of partition 0 (LeaderAndIsr), updates the
    metadata for it (UpdateMetadata) or stops its replica (StopReplica). With ``replicas`` > 1 the
    followers fetch every partition except partition 0 (the KIP's example: they have stopped
    fetching it), so acks=-1 produces wait in purgatory for partition 0. Each produce request writes
    to all 20 partitions, as in the KIP's example, or to the first ``produce_partitions`` of them.
    """
    _check(
        backlog=backlog,
        controller_ms=controller_ms,
        controller_at_ms=controller_at_ms,
        network_ms=network_ms,
        request_timeout_ms=request_timeout_ms,
        produce_partitions=produce_partitions,
        until_ms=until_ms,
    )
    props = lab_properties(
        control_plane,
        num_io_threads=num_io_threads,
        num_network_threads=num_network_threads,
        queued_max_requests=queued_max_requests,
    )
    sc = Scenario(
        props,
        seed=seed,
        settings=lab_settings(_service_ms(service_ms), deterministic, prioritise, network_ms, controller_ms),
        replicas=replicas,
        client_listener="PLAINTEXT",
    )
    if replicas > 1:
        for f in sc.followers():
            if followers_stop_partition0:
                f.stop_fetching(sc.partitions[0])
    if backlog:
        tps = sc.partitions if produce_partitions is None else sc.partitions[:produce_partitions]
        sc.producer(
            "producer-1", connections=backlog, acks=acks, request_timeout_ms=request_timeout_ms, partitions=tps
        ).burst(backlog)
    other = sc.broker.id + 1
    state = sc.leader_and_isr_state(0, leader=other)
    if controller_api == "StopReplica":
        sc.controller.send(sc.broker, "StopReplica", at_ms=controller_at_ms, partitions=[sc.partitions[0]])
    else:
        sc.controller.send(sc.broker, controller_api, [state], at_ms=controller_at_ms)
    if until_ms is None:
        until_ms = 2 * (backlog + 10) * service_ms / num_io_threads + 10 * controller_ms + 50
    return sc.run(until_ms)


def steady_load(
    produce_rate_per_s: float,
    *,
    control_plane: bool,
    service_ms: float = 1.0,
    num_io_threads: int = 8,
    num_network_threads: int = 3,
    queued_max_requests: int = 500,
    connections: int = 1000,
    duration_ms: float = 1000.0,
    controller_at_ms: float | None = 500.0,
    prioritise: bool = False,
    deterministic: bool = False,
    network_ms: float = 0.01,
    controller_ms: float = 1.0,
    seed: int = 0,
    metrics_interval_ms: float | None = None,
) -> Results:
    """Poisson Produce traffic (acks=1) at ``produce_rate_per_s``, and a LeaderAndIsr at ``controller_at_ms``."""
    _check(
        produce_rate_per_s=produce_rate_per_s,
        connections=connections,
        duration_ms=duration_ms,
        controller_at_ms=controller_at_ms,
        network_ms=network_ms,
        controller_ms=controller_ms,
        metrics_interval_ms=metrics_interval_ms,
    )
    props = lab_properties(
        control_plane,
        num_io_threads=num_io_threads,
        num_network_threads=num_network_threads,
        queued_max_requests=queued_max_requests,
    )
    sc = Scenario(
        props,
        seed=seed,
        settings=lab_settings(_service_ms(service_ms), deterministic, prioritise, network_ms, controller_ms),
        client_listener="PLAINTEXT",
    )
    sc.producer("producer-1", connections=connections, acks=1).open_loop(produce_rate_per_s)
    if controller_at_ms is not None:
        sc.controller.send(
            sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=sc.broker.id + 1)], at_ms=controller_at_ms
        )
    return sc.run(duration_ms, metrics_interval_ms or duration_ms / 100)


def sweep_seed(seed: int, rate_per_s: float) -> int:
    """The seed of :func:`load_sweep`'s run at ``rate_per_s``: each rate draws its own random numbers.

    Derived from the rate itself (not its position in the list), so a rate's row is the same whatever
    other rates are swept; and no two rates reuse one stream of draws, which would bias every row
    the same way."""
    return int(np.random.SeedSequence([int(seed), round(float(rate_per_s))]).generate_state(1)[0])


#: what :func:`load_sweep` leaves out of its averages: the run starts with empty queues and idle handlers
SWEEP_WARMUP_MS = 200.0


def load_sweep(rates_per_s, *, progress=None, seed: int = 0, warmup_ms: float = SWEEP_WARMUP_MS, **kw) -> pd.DataFrame:
    """:func:`steady_load` at each rate: handler utilisation, throughput, mean queue time and size, Erlang C,
    the LeaderAndIsr's wait.

    Each rate runs with its own seed (:func:`sweep_seed`). The averages leave out the first
    ``warmup_ms``: requests sent before it, and the metrics' time before it (a run starts with
    empty queues, which would pull every average down). ``throughput_per_s`` is the rate requests went
    into the data plane's request queue after the warm-up (:func:`littles_law`'s λ), so that
    ``throughput_per_s`` / 1000 × ``mean_requestQueueTime`` is Little's law's estimate of
    ``mean_RequestQueueSize``. ``erlang_c_wait_ms`` is queueing theory's
    mean requestQueueTime for the same plane (M/M/c, :func:`~kafka_lab.sim.common.theory.mm_c_wait`), for
    exponential service below saturation, else NaN. ``progress`` wraps the iterable (e.g.
    ``tqdm.auto.tqdm``); the model itself prints nothing.
    """
    params = {**_defaults(steady_load), **kw}
    duration = params["duration_ms"]
    check_seed(seed)
    rates_per_s = list(rates_per_s)
    for i, rate in enumerate(rates_per_s):  # every rate before the first run
        check_number(f"rates_per_s[{i}]", rate, least=0, excluded=True, most=MAX_RATE_PER_S, why=RATE_WHY)
    _check(duration_ms=duration)
    check_number("warmup_ms", warmup_ms)
    if not 0 <= warmup_ms < duration:
        raise ValueError(f"warmup_ms must be at least 0 and less than duration_ms={duration}, got {warmup_ms!r}")
    rows = []
    it = progress(rates_per_s) if progress else rates_per_s
    for rate in it:
        res = steady_load(rate, seed=sweep_seed(seed, rate), **kw)
        r = res.requests
        produce = r[(r["api"] == "Produce") & (r["sent_ms"] >= warmup_ms)]
        lai = r[r["api"] == "LeaderAndIsr"]
        rows.append(
            {
                "rate_per_s": float(rate),
                "handler_utilisation": 1.0 - res.time_average("RequestHandlerAvgIdlePercent", warmup_ms),
                "throughput_per_s": littles_law(res, warmup_ms)["throughput_per_s"],
                "mean_requestQueueTime": float(np.nanmean(produce["requestQueueTime"])) if len(produce) else np.nan,
                "erlang_c_wait_ms": _erlang_c_wait(rate, params),
                "mean_RequestQueueSize": res.time_average("RequestQueueSize", warmup_ms),
                "leader_and_isr_wait_ms": wait_for_handler_ms(lai.iloc[0])
                if len(lai) and lai.iloc[0]["error"] != IN_FLIGHT
                else np.nan,
            }
        )
    return pd.DataFrame(rows)


def _defaults(fn) -> dict:
    return {k: p.default for k, p in inspect.signature(fn).parameters.items() if p.default is not p.empty}


def _erlang_c_wait(rate_per_s: float, params: dict) -> float:
    """Erlang C's mean wait (ms) for :func:`steady_load` with ``params``, or NaN where it does not apply."""
    c, s = params["num_io_threads"], params["service_ms"]
    if params["deterministic"] or rate_per_s * s / 1000.0 >= c:
        return np.nan
    return mm_c_wait(c, rate_per_s / 1000.0, 1.0 / s)


def backlog_table(
    backlogs, *, queued_max_requests: int = 500, num_io_threads: int = 8, service_ms: float = 1.0
) -> pd.DataFrame:
    """The LeaderAndIsr's wait (ms) behind each backlog, for the three designs (deterministic service)."""
    backlogs = list(backlogs)
    for i, b in enumerate(backlogs):  # every backlog before the first run
        check_options({f"backlogs[{i}]": b}, {f"backlogs[{i}]": _RANGES["backlog"]})
    rows = []
    for b in backlogs:
        for label, cp, prio in DESIGNS:
            row = controller_behind_backlog(
                int(b),
                control_plane=cp,
                prioritise=prio,
                service_ms=service_ms,
                queued_max_requests=queued_max_requests,
                num_io_threads=num_io_threads,
            ).request("LeaderAndIsr")
            rows.append(
                {
                    "backlog": int(b),
                    "design": label,
                    "wait_ms": wait_for_handler_ms(row),
                    "socketWaitTime": row["socketWaitTime"],
                    "requestQueueTime": row["requestQueueTime"],
                }
            )
    return pd.DataFrame(rows)

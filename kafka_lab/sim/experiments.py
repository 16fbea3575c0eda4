"""The experiments lab 03 runs (and its tests repeat with the same seeds).

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
- :func:`downstream_table`: what that wait costs clients (purgatory, acks=1 after the decision, stale metadata).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .apis import CostModel
from .config import ModelSettings
from .distributions import Deterministic, Exponential
from .scenario import Results, Scenario

__all__ = [
    "lab_properties",
    "lab_settings",
    "controller_behind_backlog",
    "steady_load",
    "load_sweep",
    "controller_wait_ms",
    "DESIGNS",
    "backlog_table",
    "downstream_table",
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
    """Broker properties for the lab: PLAINTEXT for everyone, CONTROLLER for the controller if enabled."""
    props = {
        "broker.id": "1",
        "listeners": "PLAINTEXT://:9092,CONTROLLER://:9091",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "num.io.threads": num_io_threads,
        "num.network.threads": num_network_threads,
        "queued.max.requests": queued_max_requests,
    }
    if control_plane:
        props["control.plane.listener.name"] = "CONTROLLER"
    props.update(overrides)
    return props


def lab_settings(
    service,
    deterministic: bool = True,
    prioritise: bool = False,
    network_ms: float = 0.0,
    controller_ms: float | None = 1.0,
) -> ModelSettings:
    """The model settings of the lab's experiments: Produce takes ``service`` ms (deterministic or
    exponential, or a CostModel), controller requests ``controller_ms``, network read/send ``network_ms``."""
    if isinstance(service, CostModel):
        produce = service
    else:
        produce = CostModel(Deterministic(service) if deterministic else Exponential(service))
    costs = {"Produce": produce}
    if controller_ms is not None:
        costs.update(
            {api: CostModel(Deterministic(controller_ms)) for api in ("LeaderAndIsr", "UpdateMetadata", "StopReplica")}
        )
    return ModelSettings(
        network_read_ms=network_ms, network_send_ms=network_ms, costs=costs, prioritise_controller_requests=prioritise
    )


def controller_wait_ms(row: pd.Series) -> float:
    """How long a request waited before a handler took it: in the socket plus in the request queue."""
    return float(row["dequeue_ms"] - row["sent_ms"])


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
    props = lab_properties(
        control_plane,
        num_io_threads=num_io_threads,
        num_network_threads=num_network_threads,
        queued_max_requests=queued_max_requests,
    )
    sc = Scenario(
        props,
        seed=seed,
        settings=lab_settings(service_ms, deterministic, prioritise, network_ms, controller_ms),
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
        mean = service_ms.mean_ms(20, 10) if isinstance(service_ms, CostModel) else service_ms
        until_ms = 2 * (backlog + 10) * mean / num_io_threads + 10 * controller_ms + 50
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
    props = lab_properties(
        control_plane,
        num_io_threads=num_io_threads,
        num_network_threads=num_network_threads,
        queued_max_requests=queued_max_requests,
    )
    sc = Scenario(
        props,
        seed=seed,
        settings=lab_settings(service_ms, deterministic, prioritise, network_ms, controller_ms),
        client_listener="PLAINTEXT",
    )
    sc.producer("producer-1", connections=connections, acks=1).open_loop(produce_rate_per_s)
    if controller_at_ms is not None:
        sc.controller.send(
            sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=sc.broker.id + 1)], at_ms=controller_at_ms
        )
    return sc.run(duration_ms, metrics_interval_ms or duration_ms / 100)


def load_sweep(rates_per_s, *, progress=None, **kw) -> pd.DataFrame:
    """:func:`steady_load` at each rate: mean queue time, handler utilisation, LeaderAndIsr wait.

    ``progress`` wraps the iterable (e.g. ``tqdm.auto.tqdm``); the model itself prints nothing.
    """
    rows = []
    it = progress(list(rates_per_s)) if progress else rates_per_s
    for rate in it:
        res = steady_load(rate, **kw)
        r = res.requests
        produce = r[r["api"] == "Produce"]
        lai = r[r["api"] == "LeaderAndIsr"]
        rows.append(
            {
                "rate_per_s": float(rate),
                "handler_utilisation": 1.0 - res.time_average("RequestHandlerAvgIdlePercent"),
                "mean_requestQueueTime": float(np.nanmean(produce["requestQueueTime"])) if len(produce) else np.nan,
                "mean_RequestQueueSize": res.time_average("RequestQueueSize"),
                "leader_and_isr_wait_ms": controller_wait_ms(lai.iloc[0])
                if len(lai) and lai.iloc[0]["error"] != "IN_FLIGHT"
                else np.nan,
            }
        )
    return pd.DataFrame(rows)


def backlog_table(
    backlogs, *, queued_max_requests: int = 500, num_io_threads: int = 8, service_ms: float = 1.0
) -> pd.DataFrame:
    """The LeaderAndIsr's wait (ms) behind each backlog, for the three designs (deterministic service)."""
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
                    "wait_ms": controller_wait_ms(row),
                    "socketWaitTime": row["socketWaitTime"],
                    "requestQueueTime": row["requestQueueTime"],
                }
            )
    return pd.DataFrame(rows)


def downstream_table(backlog: int = 200) -> pd.DataFrame:
    """What the LeaderAndIsr's delay does downstream, without and with the control plane (KIP-291's motivation).

    - acks=all produces to the partition being moved wait in purgatory until the LeaderAndIsr is applied
      (the followers stopped fetching it), then fail NOT_LEADER_OR_FOLLOWER;
    - acks=1 produces handled after the controller decided are acknowledged by a broker that is no
      longer the leader (their records will be truncated) instead of failing and being retried;
    - an UpdateMetadata's delay is how long this broker serves stale metadata.

    One row per measure, one column per design (narrow enough for a notebook column); times in ms,
    rounded to the microsecond, counts as whole numbers.
    """
    rows = {}
    for label, cp in (("no control plane", False), ("control.plane.listener.name=CONTROLLER", True)):
        purg = controller_behind_backlog(
            backlog, control_plane=cp, acks=-1, replicas=3, produce_partitions=1, until_ms=200.0
        )
        lai = purg.request("LeaderAndIsr")
        p = purg.requests[purg.requests["api"] == "Produce"]
        acks1 = controller_behind_backlog(backlog, control_plane=cp, acks=1).requests
        decided = float(acks1.loc[acks1["api"] == "LeaderAndIsr", "sent_ms"].iloc[0])
        late = acks1[(acks1["api"] == "Produce") & (acks1["dequeue_ms"] > decided)]
        um = controller_behind_backlog(backlog, control_plane=cp, controller_api="UpdateMetadata", controller_ms=0.5)
        umr = um.request("UpdateMetadata")
        rows[label] = {
            "LeaderAndIsr applied at (ms)": round(float(lai["api_local_complete_ms"]), 3),
            "acks=all: mean remoteTime (ms)": round(float(p["remoteTime"].mean()), 3),
            "acks=all: NOT_LEADER_OR_FOLLOWER": int((p["error"] == "NOT_LEADER_OR_FOLLOWER").sum()),
            "acks=1: acknowledged after the decision": int((late["error"] == "NONE").sum()),
            "UpdateMetadata: stale window (ms)": round(float(umr["api_local_complete_ms"] - umr["sent_ms"]), 3),
        }
    # object columns keep each cell's type: a count shows as 200, not 200.000
    table = pd.DataFrame({label: pd.Series(measures, dtype=object) for label, measures in rows.items()})
    return table

"""A controlled shutdown inside the cluster model: the controller's requests go through the brokers'
request paths, so a busy broker's data plane delays them unless it has KIP-291's control plane.

Three brokers; broker 1 is the controller, broker 3 shuts down, broker 2 takes the produce traffic.
``orders`` has ``partitions`` partitions, replication factor 2: broker 3 leads the even ones (replicas
``[3, 2]``) and follows the odd ones (``[2, 3]``), which are the ones the producers write to. The
controller's ZooKeeper writes happen at the times :func:`~kafka_lab.sim.zk.controller_scale.shutdown_schedule`
gives for the version (one partition at a time in 1.0; pipelined, then one batch of requests, in 1.1+);
each request then travels through the cluster: the controller's channel (one in flight per broker),
the broker's acceptor, processor, request queue and handler threads (lab 03's model).

:func:`shutdown_in_cluster` returns the cluster's results and, per partition broker 3 led, when its
new leader (broker 2) started acting: the time the whole move takes *in the brokers*, not only in the
controller.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .cluster import Cluster, ClusterResults, advance
from .common.distributions import Exponential
from .common.options import CLIENTS_WHY, MAX_CLIENTS, MAX_RATE_PER_S, RATE_WHY, check_options
from .server.apis import CostModel, default_costs
from .server.config import ModelSettings
from .zk.controller_scale import shutdown_schedule

__all__ = ["ClusterShutdown", "shutdown_in_cluster"]

TOPIC = "orders"
SHUTTING_DOWN, BUSY, CONTROLLER = 3, 2, 1

#: what :func:`shutdown_in_cluster`'s numeric options accept: (whole number?, least value, excluded?)
#: (:func:`~kafka_lab.sim.common.options.check_options`); ``start_ms`` is at least 1 because every producer hands
#: over its first batch 1 ms before the shutdown
_RANGES = {
    "producers": (True, 0, False, MAX_CLIENTS, CLIENTS_WHY),
    "rate_per_s": (False, 0, True, MAX_RATE_PER_S, RATE_WHY),
    "start_ms": (False, 1, False),
    "until_ms": (False, 0, True),
}


@dataclass
class ClusterShutdown:
    """What the controlled shutdown of broker 3 did in the cluster (times in ms from the request)."""

    version: str
    control_plane: bool
    reply_ms: float  #: the controller's reply (its ZooKeeper work done, its requests queued)
    leaders_moved_ms: float  #: the last of broker 3's led partitions has broker 2 acting as leader
    moves: pd.DataFrame = field(repr=False)  #: per led partition: written_ms, new_leader_started_ms
    results: ClusterResults = field(repr=False)


def shutdown_in_cluster(
    *,
    version: str | None = None,
    control_plane: bool | None = None,
    partitions: int = 20,
    producers: int = 200,
    rate_per_s: float = 100.0,
    seed: int = 0,
    start_ms: float = 20.0,
    until_ms: float | None = None,
    mode: str = "zk",
) -> ClusterShutdown:
    """Broker 3's controlled shutdown at ``start_ms`` while ``producers`` clients keep broker 2 busy.

    Each producer (one connection) hands over one batch just before the shutdown and then ``rate_per_s``
    a second: 200 × 100/s of Produce at about 0.6 ms of a handler each is more than broker 2's 8 handlers
    can do, so its request queue holds about one request per connection (a broker reads one request per
    connection at a time), as in lab 03.

    ``start_ms`` is at least 1 ms (the producers' first batch goes 1 ms before it); ``until_ms``, when
    given, is more than 0 (None: run until broker 2 leads every partition broker 3 led, at most 10 s more).

    ``mode="kraft"``: the same cluster and workload in KRaft mode (Kafka 4.0; ``version`` is then ``"4.0"`` or not
    given, ``control_plane`` refused with Kafka's configuration error): broker 3 sends ``WantShutDown`` heartbeats
    and the active controller moves its leaderships in one event (``enterControlledShutdown``); ``reply_ms`` is the
    answer to the heartbeat that did it (after its records were committed), ``written_ms`` each move's
    ``PartitionChangeRecord`` decided (:func:`_kraft_shutdown`).
    """
    if mode not in ("zk", "kraft"):
        raise ValueError(f"mode is 'zk' (ZooKeeper, Kafka 2.8) or 'kraft' (Kafka 4.0), got {mode!r}")
    if mode == "kraft":
        return _kraft_shutdown(version, control_plane, partitions, producers, rate_per_s, seed, start_ms, until_ms)
    for name, value in (("version", version), ("control_plane", control_plane)):
        if value is None:
            raise TypeError(f"shutdown_in_cluster() missing 1 required keyword-only argument: {name!r}")
    if not isinstance(control_plane, bool):
        raise TypeError(f"control_plane must be True or False, got {control_plane!r}")
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not 2 <= partitions <= 2000:
        raise ValueError(f"partitions must be an int from 2 to 2000, got {partitions!r}")
    options = {"producers": producers, "rate_per_s": rate_per_s, "start_ms": start_ms, "until_ms": until_ms}
    check_options({k: v for k, v in options.items() if k != "until_ms" or v is not None}, _RANGES)
    costs = {**default_costs(), "Produce": CostModel(Exponential(0.5), per_partition_ms=0.01, per_record_ms=0.0005)}
    cluster = Cluster(3, seed=seed, control_plane=control_plane, settings=ModelSettings(costs=costs))
    assignment = {p: ([SHUTTING_DOWN, BUSY] if p % 2 == 0 else [BUSY, SHUTTING_DOWN]) for p in range(partitions)}
    cluster.create_topic(TOPIC, assignment=assignment)
    tps = cluster.partitions_of(TOPIC)
    busy_tps = [tp for tp in tps if tp[1] % 2 == 1]
    for i in range(producers):
        p = cluster.producer(f"producer-{i + 1}", topic=TOPIC, acks=1, partitions=busy_tps, records_per_batch=10)
        p.burst(1, at_ms=start_ms - 1.0)  # every connection has a request waiting when the shutdown starts
        p.open_loop(rate_per_s, start_ms=start_ms - 1.0)
    leads = np.array([tp[1] % 2 == 0 for tp in tps])
    rng = np.random.default_rng([seed, zlib.crc32(f"cluster-shutdown-{version}".encode())])
    sched = shutdown_schedule(leads, version, rng, cluster_size=partitions)  # the one topic is the cluster
    ctl = cluster.controller

    def write(tp, led):
        isr = ctl.state[tp]["isr"]
        ctl._write_state(tp, leader=BUSY if led else None, isr=[r for r in isr if r != SHUTTING_DOWN] or isr[:1])

    def send(group):
        """One round of requests: LeaderAndIsr per broker (batched), UpdateMetadata to all, StopReplica to 3."""
        per_broker: dict = {}
        stop = []
        for tp, led in group:
            targets = ctl.state[tp]["replicas"] if led else [BUSY]
            for r in targets:
                per_broker.setdefault(r, []).append(ctl.partition_state(tp))
            if not led:
                stop.append(tp)
        batch = ctl.new_batch()
        for bid in sorted(per_broker):
            ctl.send(cluster.brokers[bid], "LeaderAndIsr", per_broker[bid], at_ms=cluster.env.now, batch=batch)
        states = [ctl.partition_state(tp) for tp, _ in group]
        for bid in sorted(cluster.brokers):
            ctl.send(cluster.brokers[bid], "UpdateMetadata", states, at_ms=cluster.env.now, batch=batch)
        if stop:
            ctl.send(cluster.brokers[SHUTTING_DOWN], "StopReplica", partitions=stop, at_ms=cluster.env.now)

    def at(t, fn):
        ev = cluster.env.timeout(start_ms + t)
        ev.callbacks.append(lambda _e: fn())

    for i, tp in enumerate(tps):
        at(float(sched["written_ms"][i]), lambda tp=tp, led=bool(leads[i]): write(tp, led))
    groups: dict = {}
    for i, tp in enumerate(tps):
        groups.setdefault(float(sched["sent_ms"][i]), []).append((tp, bool(leads[i])))
    for t, group in sorted(groups.items()):
        at(t + 1e-9, lambda group=group: send(group))
    horizon = until_ms or start_ms + sched["duration_ms"] + 100.0
    cluster.check_run(horizon if until_ms is not None else horizon + 10_000.0)  # its size, before any of it runs
    if until_ms is None:
        # the reply does not wait for the brokers: run on, 100 ms at a time (at most 10 s), until broker 2
        # acts as the leader of every partition broker 3 led (1.0 through a busy data plane takes long:
        # one round of requests per partition, each behind the produce backlog)
        led = {tp for i, tp in enumerate(tps) if leads[i]}
        events = cluster.brokers[BUSY].replica_manager.events
        cap = horizon + 10_000.0
        while True:
            advance(cluster.env, horizon)
            acting = {(e[2], e[3]) for e in events if e[1] == "become_leader" and e[0] >= start_ms}
            if led <= acting or horizon >= cap:
                break
            horizon += 100.0
    res = cluster.run(horizon, metrics_interval_ms=max(1.0, horizon / 200))
    ev = res.events
    started = ev[(ev["event"] == "become_leader") & (ev["broker_id"] == BUSY) & (ev["time_ms"] >= start_ms)]
    first = started.groupby("partition")["time_ms"].min()
    rows = []
    for i, tp in enumerate(tps):
        if leads[i]:
            rows.append((tp[1], float(sched["written_ms"][i]), float(first.get(tp[1], np.nan)) - start_ms))
    moves = pd.DataFrame(rows, columns=["partition", "written_ms", "new_leader_started_ms"])
    return ClusterShutdown(
        version,
        control_plane,
        float(sched["duration_ms"]),
        float(moves["new_leader_started_ms"].max()),
        moves,
        res,
    )


def _workload(cluster, producers: int, rate_per_s: float, start_ms: float) -> list:
    """``orders``: broker 3 leads the even partitions, broker 2 the odd ones, which the producers write to."""
    tps = cluster.partitions_of(TOPIC)
    busy_tps = [tp for tp in tps if tp[1] % 2 == 1]
    for i in range(producers):
        p = cluster.producer(f"producer-{i + 1}", topic=TOPIC, acks=1, partitions=busy_tps, records_per_batch=10)
        p.burst(1, at_ms=start_ms - 1.0)  # every connection has a request waiting when the shutdown starts
        p.open_loop(rate_per_s, start_ms=start_ms - 1.0)
    return tps


def _kraft_shutdown(version, control_plane, partitions, producers, rate_per_s, seed, start_ms, until_ms):
    """:func:`shutdown_in_cluster` in KRaft mode (see it)."""
    if version not in (None, "4.0"):
        raise ValueError(
            f"version is for ZooKeeper mode (the controller of 1.0 or 1.1+); in KRaft mode the controller is 4.0's "
            f"quorum controller: give version='4.0' or none, not {version!r}"
        )
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not 2 <= partitions <= 2000:
        raise ValueError(f"partitions must be an int from 2 to 2000, got {partitions!r}")
    options = {"producers": producers, "start_ms": start_ms, "until_ms": until_ms}
    check_options({k: v for k, v in options.items() if k != "until_ms" or v is not None}, _RANGES)
    costs = {**default_costs(), "Produce": CostModel(Exponential(0.5), per_partition_ms=0.01, per_record_ms=0.0005)}
    cluster = Cluster(
        3,
        seed=seed,
        control_plane=bool(control_plane) if control_plane is not None else False,
        settings=ModelSettings(costs=costs),
        mode="kraft",
    )
    assignment = {p: ([SHUTTING_DOWN, BUSY] if p % 2 == 0 else [BUSY, SHUTTING_DOWN]) for p in range(partitions)}
    cluster.create_topic(TOPIC, assignment=assignment)
    tps = _workload(cluster, producers, rate_per_s, start_ms)
    broker = cluster.brokers[SHUTTING_DOWN]
    cluster.env.timeout(start_ms).callbacks.append(lambda _e: broker.kraft.lifecycle.begin_controlled_shutdown())
    led = {tp for tp in tps if tp[1] % 2 == 0}
    events = cluster.brokers[BUSY].replica_manager.events
    horizon = until_ms or start_ms + 100.0
    cap = horizon + 10_000.0
    while until_ms is None:
        advance(cluster.env, horizon)
        acting = {(e[2], e[3]) for e in events if e[1] == "become_leader" and e[0] >= start_ms}
        if led <= acting or horizon >= cap:
            break
        horizon += 100.0
    res = cluster.run(horizon, metrics_interval_ms=max(1.0, horizon / 200))
    ev = res.events
    started = ev[(ev["event"] == "become_leader") & (ev["broker_id"] == BUSY) & (ev["time_ms"] >= start_ms)]
    first = started.groupby("partition")["time_ms"].min()
    ml = res.metadata_log
    pcr = ml[(ml["record_type"] == "PartitionChangeRecord") & ml["committed"] & (ml["decided_ms"] >= start_ms)]
    written = {
        f["PartitionId"]: t for f, t in zip(pcr["fields"], pcr["decided_ms"], strict=True) if f.get("Leader") == BUSY
    }
    rows = [
        (tp[1], written.get(tp[1], np.nan) - start_ms, float(first.get(tp[1], np.nan)) - start_ms)
        for tp in tps
        if tp in led
    ]
    moves = pd.DataFrame(rows, columns=["partition", "written_ms", "new_leader_started_ms"])
    hb = [
        r
        for r in cluster.log
        if r.api == "BrokerHeartbeat"
        and r.client_id.startswith(f"broker-{SHUTTING_DOWN}-")
        and r.error == "NONE"
        and isinstance(r.result, dict)
        and r.result.get("in_controlled_shutdown")
    ]
    reply = (hb[0].end - start_ms) if hb else float("nan")
    return ClusterShutdown("4.0", False, reply, float(moves["new_leader_started_ms"].max()), moves, res)

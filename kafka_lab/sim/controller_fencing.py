"""Lab 07's fencing experiments on the cluster (Kafka 2.8, ZooKeeper mode): the broker epoch and the zombie.

:func:`zombie_in_cluster` is the talk's zombie controller on a :class:`~kafka_lab.sim.cluster.Cluster`, with every
2.1+ fence on or off (``Cluster(controller_fencing=...)``; the rules are :mod:`.zk.controller`'s, see its
``_zombie_write``), for both causes: a pause past the session, or ``/controller`` deleted mid-event. It is what lab
07's Step 4 shows (``kafka_lab.ui.lab07.zombie_panel``, exercises ``07.who_rejects`` and ``07.fence_left``).

:func:`broker_restart_race` is KIP-380's bounce on a :class:`~kafka_lab.sim.cluster.Cluster`: its controller
(:mod:`.zk.controller`), its brokers' ``KafkaApis`` (:mod:`.server.apis`), their ZooKeeper sessions
(:mod:`.zk.session`) and the faults of :mod:`.zk.lifecycle` (a restart, a GC pause). What Kafka does, and the
model with it:

- every registration ``/brokers/ids/<id>`` has a new ``czxid``, the broker's *epoch*; the controller reads it
  with the registration (``liveBrokerIdAndEpochs``) and sends it in every LeaderAndIsr, UpdateMetadata and
  StopReplica; a broker answers one with an older epoch than its own ``STALE_BROKER_EPOCH``
  (``KafkaApis.isBrokerEpochStale``), before anything else;
- a ``BrokerChange`` reads ``/brokers/ids``: an id registered again with a newer epoch is a *bounce*, handled
  as a failure, then a start-up (``processBrokerChange``); before 2.2 ids were compared alone, and a broker
  back before its BrokerChange was handled was no change at all (``Cluster(broker_epochs=False)``).

Simplification: the controller's event thread and send threads are held by a GC pause of its broker (the
model's :meth:`~kafka_lab.sim.cluster.Cluster.pause`); in Kafka a busy event queue (a long event ahead) delays
the BrokerChange just as well, and a slow request ahead delays the StopReplica.

Both return a :class:`FencingResult`. This module needs a Cluster, so it sits above the rooms, which never import
the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .cluster import Cluster
from .common.options import check_bool, check_options, check_seed
from .network.request import IN_FLIGHT
from .zk.controller import state_path
from .zk.session import ZK_SESSION_TIMEOUT_MS

__all__ = [
    "FencingResult",
    "RACE_ASSIGNMENT",
    "ZOMBIE_ASSIGNMENT",
    "ZOMBIE_CAUSES",
    "ZOMBIE_SESSION_TIMEOUT_MS",
    "broker_restart_race",
    "cluster_beliefs",
    "cluster_events",
    "cluster_requests",
    "zombie_in_cluster",
]


@dataclass
class FencingResult:
    """What a fencing experiment left: ``applied_stale`` and what each party believes afterwards."""

    applied_stale: int
    beliefs: pd.DataFrame  #: per partition: ZooKeeper's leader, the active controller's, each broker's
    requests: pd.DataFrame  #: every control request a broker handled, with its error
    events: pd.DataFrame  #: elections, writes, failures, in time order
    stale_writes: int = 0
    damage: dict = field(default_factory=dict)


#: what :func:`broker_restart_race`'s times accept, when given: (whole number?, least value, excluded?[, most, why])
#: (:func:`~kafka_lab.sim.common.options.check_options`)
_RESTART_RACE_RANGES = {
    "restart_ms": (False, 0, True),
    "backlog_ms": (
        False,
        0,
        False,
        ZK_SESSION_TIMEOUT_MS - 1,
        "the controller's pause must end before its own ZooKeeper session expires "
        f"(zookeeper.session.timeout.ms={ZK_SESSION_TIMEOUT_MS}): longer, it is a controller failover, not a bounce",
    ),
}

#: the restart race's topic: broker 3 follows orders-0 (led by broker 2) and leads orders-1
RACE_ASSIGNMENT = {0: [2, 3], 1: [3, 2]}


def broker_restart_race(
    *,
    broker_epoch: bool,
    seed: int = 0,
    restart_ms: float | None = None,
    backlog_ms: float | None = None,
):
    """KIP-380's bounce, on the cluster: broker 3 shuts down (controlled) and is back before the controller's
    StopReplica for it is delivered.

    A :class:`~kafka_lab.sim.cluster.Cluster` of three brokers, controller 1, topic ``orders`` (``orders-0`` on
    brokers 2 and 3, led by 2; ``orders-1`` on 3 and 2, led by 3). Broker 3 restarts at 50 ms
    (:meth:`~kafka_lab.sim.cluster.Cluster.restart_broker`): the controller moves ``orders-1`` to broker 2, sends
    ``StopReplica(orders-0)`` to broker 3 and answers. The StopReplica is in flight when broker 3 stops: it fails
    with the connection, and the controller's send thread tries it again on a new connection
    (``RequestSendThread``). At that instant the controller's broker goes into a GC pause of ``backlog_ms``
    (default 200 to 2000 ms, drawn from ``seed``; less than the session timeout): its event thread and send
    threads hold, so the ``BrokerChange`` events wait. Broker 3 is back ``restart_ms`` later (default 20 to 150 ms;
    more than 0) with a new session and broker epoch. When the controller wakes, its send thread delivers the
    StopReplica to the new incarnation, and its event thread reads ``/brokers/ids``:

    - ``broker_epoch=True`` (KIP-380, 2.2+): the request carries broker 3's old epoch and is answered
      ``STALE_BROKER_EPOCH``; the controller sees the registration's newer epoch (a bounce), handles a failure
      and a start-up, and broker 3 follows ``orders-0`` again and rejoins its ISR;
    - ``False`` (before 2.2): the restarted broker applies its previous incarnation's StopReplica, and the
      controller, which sees the same broker ids as before, sends nothing: broker 3's replica of ``orders-0``
      stays stopped and out of the ISR, while the controller believes broker 3 online.

    A ``restart_ms`` at least ``backlog_ms`` is no race: the controller handles the failure first.
    """
    check_bool("broker_epoch", broker_epoch)
    check_seed(seed)
    given = {"restart_ms": restart_ms, "backlog_ms": backlog_ms}
    check_options({k: v for k, v in given.items() if v is not None}, _RESTART_RACE_RANGES)
    c = Cluster(3, seed=seed, broker_epochs=broker_epoch)
    rng = c.rng("restart-race")
    backlog = float(rng.uniform(200, 2000)) if backlog_ms is None else float(backlog_ms)
    restart = float(rng.uniform(20, 150)) if restart_ms is None else float(restart_ms)
    c.create_topic("orders", assignment=RACE_ASSIGNMENT)
    c.restart_broker(3, at_ms=50, down_ms=restart)
    b3 = c.brokers[3]
    while not any(ev == "shut_down" for _t, ev, _d in b3.lifecycle):  # to the instant broker 3 stops
        c.env.step()
    stopped_at = c.env.now
    c.pause(1, at_ms=stopped_at, for_ms=backlog)  # the controller's broker: its event and send threads hold
    c.run(stopped_at + max(restart, backlog) + 2000)
    tp = ("orders", 0)
    last = [ev for _t, ev, t, p, _d in b3.replica_manager.events if (t, p) == tp]
    if tp in b3.fetchers.fetching():
        replica = "fetching"
    elif last and last[-1] == "stopped":
        replica = "stopped"
    else:
        replica = "-"
    damage = {
        "orders-0 on broker 3": replica,
        "controller believes broker 3 online": 3 in c.controller.live_brokers,
        "broker 3 in the ISR of orders-0": 3 in c.controller.state[tp]["isr"],
    }
    return cluster_result(c, damage)


def _tp_name(tp) -> str:
    return f"{tp[0]}-{tp[1]}"


def cluster_requests(c) -> pd.DataFrame:
    """Every control request a broker of cluster ``c`` handled (not those lost with a connection), with its
    answer, and ``applied_stale``: applied (``NONE``) although meant for an earlier incarnation of the broker, or
    carrying an older controller epoch than the broker had seen."""
    rows = []
    for req in c.log:
        if not getattr(req, "is_controller", False) or req.error in ("DISCONNECTED", IN_FLIGHT):
            continue
        p = req.payload
        handled_by = p.get("handled_by_broker_epoch", -1)
        stale = p.get("meant_for_broker_epoch", -1) < handled_by or p["controller_epoch"] < p.get(
            "newest_controller_epoch_seen", 0
        )
        rows.append(
            {
                "time_ms": req.end,
                "broker": req.connection.broker_id,
                "api": req.api,
                "controller_id": p["controller_id"],
                "controller_epoch": p["controller_epoch"],
                "broker_epoch": p.get("broker_epoch", -1),
                "partitions": ",".join(_tp_name(tp) for tp in req.partitions),
                "error": req.error,
                "applied_stale": req.error == "NONE" and bool(stale),
            }
        )
    cols = [
        "time_ms",
        "broker",
        "api",
        "controller_id",
        "controller_epoch",
        "broker_epoch",
        "partitions",
        "error",
        "applied_stale",
    ]
    return pd.DataFrame(rows, columns=cols).sort_values("time_ms", kind="stable").reset_index(drop=True)


def cluster_events(c) -> pd.DataFrame:
    """The controller's events and the brokers' lifecycles of cluster ``c``, as lines, in time order."""
    rows = []
    for t, cid, ev, d in c.controller.events:
        if ev == "broker_bounced":
            text = f"broker {d['broker']} bounced (broker epoch {d['from']} -> {d['to']})"
        elif ev in ("elected", "resigned", "ready", "zombie_resigned"):
            text = f"{ev} (controller epoch {d['epoch']})"
        elif "broker" in d:
            text = f"{ev} of broker {d['broker']}"
        else:
            text = ev
        rows.append((t, cid, text))
    for bid, b in sorted(c.brokers.items()):
        for t, ev, d in b.lifecycle:
            rows.append((t, bid, ev if d is None else f"{ev} ({d})"))
    for t, zid, epoch, tp, err in c.controller.zombie_writes:
        if err == "NONE":
            st = c.zk.znodes[state_path(tp)].data
            text = f"wrote {_tp_name(tp)}: leader {st['leader']}, leader epoch {st['leader_epoch']} (controller epoch {epoch})"
        else:
            text = f"write of {_tp_name(tp)} failed: {err} (controller epoch {epoch})"
        rows.append((t, zid, text))
    ev = pd.DataFrame(rows, columns=["time_ms", "broker", "event"])
    # at one instant, a zombie's write comes before what follows its event (its resignation)
    ev["_first"] = ~ev["event"].str.match(r"(wrote |write of )")
    ev = ev.sort_values(["time_ms", "_first"], kind="stable").drop(columns="_first")
    return ev.reset_index(drop=True)


def cluster_beliefs(c) -> pd.DataFrame:
    """Per partition of cluster ``c``: the leader in ZooKeeper's state znode, the active controller's, and what
    each broker's replica is (leader, follower, stopped) and its metadata names."""
    ctl = c.controller
    rows = []
    for tp, st in ctl.state.items():
        z = c.zk.znodes.get(state_path(tp))
        row = {
            "partition": _tp_name(tp),
            "zookeeper": z.data["leader"] if z is not None else -1,
            f"controller {ctl.id}": st["leader"],
        }
        for bid, b in sorted(c.brokers.items()):
            p = b.replica_manager.partitions.get(tp)
            last = [ev for _t, ev, t, n, _d in b.replica_manager.events if (t, n) == tp]
            if p is None or bid not in st["replicas"]:
                role = "-"
            elif p.leader == bid:
                role = "leader"
            elif last and last[-1] == "stopped":
                role = "stopped"
            elif p.leader >= 0:
                role = "follower"
            else:
                role = "-"
            st_meta = b.metadata_cache.partitions.get(tp)
            row[f"broker {bid}"] = f"{role}; metadata: {st_meta['leader'] if st_meta else None}"
        rows.append(row)
    return pd.DataFrame(rows)


def cluster_result(c, damage: dict) -> FencingResult:
    """``applied_stale``: the stale requests brokers applied, and the writes ZooKeeper took from a deposed controller."""
    req = cluster_requests(c)
    elected = [(t, d["epoch"]) for t, _cid, ev, d in c.controller.events if ev == "elected"]
    # a write ZooKeeper took from a controller after a newer one was elected (one before is simply its last write)
    stale_writes = sum(
        1
        for t, _zid, epoch, _tp, err in c.controller.zombie_writes
        if err == "NONE" and any(te <= t and e > epoch for te, e in elected)
    )
    applied = int(req["applied_stale"].sum()) + stale_writes
    return FencingResult(applied, cluster_beliefs(c), req, cluster_events(c), stale_writes, damage)


#: the zombie's topic: six partitions on three brokers, two replicas each
ZOMBIE_ASSIGNMENT = {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3], 4: [2, 1], 5: [3, 2]}

#: ``zookeeper.session.timeout.ms`` of :func:`zombie_in_cluster` unless given: 6000, the default up to 2.4
ZOMBIE_SESSION_TIMEOUT_MS = 6000

#: what deposes the zombie: a GC pause past its session, or ``/controller`` deleted under it
ZOMBIE_CAUSES = ("gc_pause", "znode_deleted")

#: what :func:`zombie_in_cluster`'s times accept, when given: (whole number?, least, excluded?[, most, why])
_ZOMBIE_RANGES = {
    "pause_ms": (
        False,
        0,
        False,
        29_999,
        "the model's peers wait for a paused broker up to their 30 s request timeouts, no longer (Cluster.pause)",
    ),
    "reconnect_ms": (False, 0, False),
    "pause_at_ms": (False, 50, False),
    "session_timeout_ms": (True, 0, True),
    "event_lag_ms": (False, 0, False),
}


def zombie_in_cluster(
    *,
    fencing: bool,
    seed: int = 0,
    pause_ms: float | None = None,
    reconnect_ms: float | None = None,
    pause_at_ms: float | None = None,
    session_timeout_ms: int = ZOMBIE_SESSION_TIMEOUT_MS,
    acks="1",
    rate_per_s: float = 600.0,
    cause: str = "gc_pause",
    event_lag_ms: float | None = None,
):
    """A zombie controller on the cluster: controller 1 is deposed in the middle of an event, and the event goes on.

    A :class:`~kafka_lab.sim.cluster.Cluster` of three brokers (``zookeeper.session.timeout.ms`` =
    ``session_timeout_ms``, 6000 as up to 2.4), topic ``orders`` (:data:`ZOMBIE_ASSIGNMENT`), one producer
    (``acks``, ``rate_per_s``). At ``pause_at_ms`` (default 50 to 100, drawn) controller 1 has decided to move
    ``orders-1``'s leadership from broker 2 to broker 3 (a preferred election) and is writing it when its broker
    pauses for ``pause_ms`` (default 1.05 to 2 session timeouts). Its session expires, broker 2 or 3 is elected
    (controller epoch 2) and moves leadership off broker 1. Then the zombie wakes, deposed, and its event goes on:

    - ``fencing=True`` (2.1+): its write goes out on the expired session and fails ``SESSIONEXPIRED``; what its
      channels still send carries controller epoch 1, which brokers refuse (``STALE_CONTROLLER_EPOCH``); its
      ``Expire`` event resigns it and registers its broker again. Nothing stale is applied;
    - ``fencing=False`` (every 2.1+ fence off at once, the broker epoch too): its ZooKeeper client reconnects
      (``reconnect_ms``, default 1 to 30) and retries the write, conditional only on the state znode's zkVersion,
      which nobody changed: ZooKeeper takes it. Brokers apply its LeaderAndIsr (leader epoch 1 is newer than theirs)
      while the active controller still believes broker 2 leads: ZooKeeper and the controller disagree, broker 3
      leads, and the controller's metadata sends the producer to broker 2, which is a follower now.

    ``cause="znode_deleted"``: someone deletes ``/controller`` while controller 1 is in that event, which holds it
    ``event_lag_ms`` more (default 20 to 50, drawn; the model holds the event by a pause of its broker far shorter
    than the session, which lives). Broker 2 or 3 is elected at once; controller 1 learns it only when its
    ``Reelect`` event runs, after the event in progress. Its write goes out on its live session: with the fences it
    fails ``BADVERSION`` on ``/controller_epoch`` (KAFKA-6082); without them it lands. A lag shorter than the new
    controller's election and its read of the state znodes (about 17 ms here) leaves no disagreement: the new
    controller reads what the zombie wrote. ``pause_ms`` and ``reconnect_ms`` are for ``gc_pause`` only.

    ``damage``: ``controller_vs_zookeeper`` and ``two_leaders_believed`` (partitions where the active controller's
    leader is not the broker that leads), ``metadata_names_a_non_leader`` (brokers whose metadata names a broker
    that does not lead), ``truncated records`` (acknowledged, then truncated: the ledger), ``orders-1 records not
    written`` (sent, never acknowledged by the run's end), and ``truncated where broker 1 led``: what acks=1 loses
    on the paused broker's own partitions whatever the fences (it acknowledged records its followers never got).
    """
    check_bool("fencing", fencing)
    check_seed(seed)
    if cause not in ZOMBIE_CAUSES:
        raise ValueError(f"cause must be one of {ZOMBIE_CAUSES}, got {cause!r}")
    if cause == "znode_deleted" and (pause_ms is not None or reconnect_ms is not None):
        raise ValueError("pause_ms and reconnect_ms are for cause='gc_pause'; a deleted /controller pauses nothing")
    if cause == "gc_pause" and event_lag_ms is not None:
        raise ValueError("event_lag_ms is for cause='znode_deleted'; with 'gc_pause' the event waits out the pause")
    given = {
        "pause_ms": pause_ms,
        "reconnect_ms": reconnect_ms,
        "pause_at_ms": pause_at_ms,
        "session_timeout_ms": session_timeout_ms,
        "event_lag_ms": event_lag_ms,
    }
    check_options({k: v for k, v in given.items() if v is not None}, _ZOMBIE_RANGES)
    if event_lag_ms is not None and event_lag_ms >= session_timeout_ms:
        raise ValueError(
            f"event_lag_ms ({event_lag_ms}) must be less than session_timeout_ms ({session_timeout_ms}): the "
            "controller's session lives through the event"
        )
    c = Cluster(
        3,
        seed=seed,
        controller_fencing=fencing,
        broker_epochs=fencing,
        broker_overrides={"zookeeper.session.timeout.ms": int(session_timeout_ms)},
    )
    rng = c.rng("zombie")
    pause = float(rng.uniform(1.05, 2.0) * session_timeout_ms) if pause_ms is None else float(pause_ms)
    pause = min(pause, 29_999.0)
    reconnect = float(rng.uniform(1, 30)) if reconnect_ms is None else float(reconnect_ms)
    pause_at = float(rng.uniform(50, 100)) if pause_at_ms is None else float(pause_at_ms)
    lag = float(rng.uniform(20, 50)) if event_lag_ms is None else float(event_lag_ms)
    if cause == "znode_deleted":
        pause, reconnect = lag, 0.0
    c.controller.zk_reconnect_ms = reconnect
    c.create_topic("orders", assignment=ZOMBIE_ASSIGNMENT)
    c.producer("p", topic="orders", acks=acks).open_loop(rate_per_s=rate_per_s)
    target = ("orders", 1)
    c.controller.elect_leader(target, 3, at_ms=pause_at - c.controller.zk_latency_ms / 2)  # writing it at the pause
    c.pause(1, at_ms=pause_at, for_ms=pause)
    if cause == "znode_deleted":
        c.move_controller(at_ms=pause_at + 0.001)  # its event holds the old controller, whose session lives
    res = c.run(pause_at + pause + reconnect + 2000)
    ctl = c.controller
    two = wrong = 0
    for tp, st in ctl.state.items():
        leaders = {bid for bid, b in c.brokers.items() if b.online and _leads(b, tp)}
        two += bool(leaders - {st["leader"]})
        wrong += sum(
            1
            for b in c.brokers.values()
            if b.online and b.metadata_cache.partitions.get(tp, {}).get("leader") not in leaders
        )
    lg = res.ledger
    led_by_1 = [p for p, r in ZOMBIE_ASSIGNMENT.items() if r[0] == 1]
    truncated = lg[lg["outcome"] == "truncated"]
    damage = {
        "controller_vs_zookeeper": sum(
            c.zk.znodes[state_path(tp)].data["leader"] != st["leader"] for tp, st in ctl.state.items()
        ),
        "two_leaders_believed": two,
        "metadata_names_a_non_leader": wrong,
        "truncated records": int(truncated["records"].sum()),
        "truncated where broker 1 led": int(truncated[truncated["partition"].isin(led_by_1)]["records"].sum()),
        "orders-1 records not written": int(
            lg[(lg["partition"] == 1) & lg["outcome"].isin(["pending", "unwritten", "failed"])]["records"].sum()
        ),
    }
    return cluster_result(c, damage)


def _leads(broker, tp) -> bool:
    p = broker.replica_manager.partitions.get(tp)
    return p is not None and p.leader == broker.id

"""``generate-logs --mode kraft``: a Kafka 4.0 KRaft cluster's log directories, from the model's KRaft cluster.

The cluster is the model's (``Cluster(n, mode="kraft", controllers=3)``, :mod:`kafka_lab.sim.kraft_mode`): the
same brokers as ZooKeeper mode's scenario, and three controller nodes (``process.roles=controller``, ids 3000 and
up). It runs once, continuously, through a **timeline** of the events a KRaft cluster logs (:func:`timeline`),
back to back from the run's start, under light load (:data:`PRODUCERS` producers, one consumer):

- a leader move on a partition broker 1 leads (an operator's election, :data:`MOVE_AT_MS`);
- a rolling restart, broker after broker (unless ``rolling_restart`` is off): the controlled shutdown through
  ``WantShutDown`` heartbeats, :data:`DOWN_MS` down, the start-up, the registration of a new incarnation and its
  unfencing;
- a crash of the last broker, down :data:`CRASH_DOWN_MS` (longer than ``broker.session.timeout.ms``): the active
  controller fences it when its session times out, and registers its next incarnation when it comes back;
- the active controller's node stopped for :data:`CONTROLLER_DOWN_MS`: the other voters elect a leader, which
  becomes the active controller.

Every line is written for an event the simulation recorded (:func:`render_kraft`), with the template and logger of
Kafka 4.0 (:mod:`.kraft_messages`), in 4.0's files (``config/log4j2.yaml``, docs/kafka-reference.md §8.10): each
node has ``server.log``, ``controller.log``, ``state-change.log`` and ``kafka-request.log`` (log4j2 creates every
appender's file at start), in ``broker-<id>/`` or ``controller-<id>/``. At steady state the classes the model
follows write nothing to these files at INFO (an answered heartbeat, a Raft fetch, the ``NoOpRecord``, a metadata
publication after the first log at DEBUG or not at all), so after the timeline the files end (a real cluster's
other classes, not modelled, would go on writing); ``hours`` shorter than the timeline cuts it there. What 4.0 logs that is *not* written, and why,
is in docs/kafka-reference.md §8.10: among it the request log (4.0's JSON request log names 4.0's request
versions, which :mod:`.requestlog`'s 2.8 forms are not), the Raft client's state transitions (their state
``toString`` prints runtime fields the model does not keep) and the per-partition ``makeLeader``/``makeFollower``
lines.

The ground truth (``ground-truth.json``) is computed from the simulation's own records of what was written: lines
per file, and the events each KRaft line stands for (activations, leader changes, fences, unfences,
registrations, controlled shutdowns, restarts), with their times from the run's start.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from . import kraft_messages as k
from .damage import Damage
from .render import CONTROLLER, SERVER, STATE, Line
from .writer import LogWriter, prepare_out_dir

__all__ = [
    "CONTROLLERS",
    "PRODUCERS",
    "MOVE_AT_MS",
    "RESTART_EVERY_MS",
    "DOWN_MS",
    "CRASH_DOWN_MS",
    "CONTROLLER_DOWN_MS",
    "timeline",
    "simulate",
    "render_kraft",
    "generate_kraft",
    "node_dir",
]

#: the controller nodes of the quorum (ids 3000, 3001, 3002: :func:`kafka_lab.sim.kraft.quorum.controller_ids`)
CONTROLLERS = 3
#: producers (acks=1) at the scenario's rate a second each, and one consumer: replication to move and stop
PRODUCERS = 2
TOPIC = "orders"
MOVE_AT_MS = 5000.0
#: one broker's restart every this often, from the move on; its controlled shutdown at the start, down for
#: DOWN_MS (the controlled shutdown waits for the controller, about two heartbeat intervals)
RESTART_EVERY_MS, DOWN_MS = 15000.0, 4000.0
#: the crash's broker stays down longer than broker.session.timeout.ms (9000): the controller fences it first
CRASH_DOWN_MS, CRASH_EVERY_MS = 15000.0, 25000.0
CONTROLLER_DOWN_MS, CONTROLLER_EVERY_MS = 3000.0, 15000.0
#: the run goes on this long after the last event (the new leader's activation, the last unfencing)
TAIL_MS = 10000.0


def node_dir(node: int, controllers) -> str:
    """``controller-<id>`` for a controller node, ``broker-<id>`` for a broker."""
    return f"controller-{node}" if node in controllers else f"broker-{node}"


def timeline(n_brokers: int, *, rolling_restart: bool = True) -> tuple[list, float]:
    """``([(time_ms, event, node), ...], run length ms)``: ``event`` is ``move`` (node: the broker losing the
    leadership), ``restart``, ``crash`` (a broker) or ``controller_restart`` (``"active"``)."""
    out, t = [], MOVE_AT_MS
    if n_brokers >= 2:
        out.append((t, "move", 1))
    t += RESTART_EVERY_MS / 2
    if rolling_restart:
        for b in range(1, n_brokers + 1):
            out.append((t, "restart", b))
            t += RESTART_EVERY_MS
    out.append((t, "crash", n_brokers))
    t += CRASH_EVERY_MS
    out.append((t, "controller_restart", "active"))
    t += CONTROLLER_EVERY_MS
    return out, t + TAIL_MS


def simulate(n_brokers: int, seed: int, *, rate_per_s: float, rolling_restart: bool = True):
    """The KRaft cluster run through :func:`timeline`, each producer sending ``rate_per_s`` a second (the ZooKeeper
    scenario's rate); ``(cluster, timeline, run length ms)``."""
    from kafka_lab.sim import Cluster

    cluster = Cluster(n_brokers, seed=seed, mode="kraft", controllers=CONTROLLERS)
    cluster.create_topic(TOPIC, 2 * n_brokers, min(3, n_brokers))
    events, length = timeline(n_brokers, rolling_restart=rolling_restart)
    for t, ev, node in events:
        if ev == "move":
            tp = next(tp for tp in cluster.partitions_of(TOPIC) if cluster.leader_of(tp) == node)
            other = next(r for r in cluster.controller.state[tp]["replicas"] if r != node)
            cluster.controller.elect_leader(tp, other, at_ms=t)
        elif ev == "restart":
            cluster.restart_broker(node, at_ms=t, down_ms=DOWN_MS)
        elif ev == "crash":
            cluster.crash(node, at_ms=t, down_ms=CRASH_DOWN_MS)
        else:
            cluster.restart_controller(node, at_ms=t, down_ms=CONTROLLER_DOWN_MS)
    for i in range(PRODUCERS):
        cluster.producer(f"producer-{i + 1}", topic=TOPIC, acks=1).open_loop(rate_per_s)
    cluster.consumer("consumer-1", topic=TOPIC)
    cluster.run(length)
    return cluster, events, length


def _committed_batches(quorum) -> list:
    """Every committed batch of the metadata log, in offset order (the bootstrap's included)."""
    got = {b.base_offset: b for b, _leader, c in quorum.history.batches.values() if not math.isnan(c)}
    return [got[o] for o in sorted(got)]


def _epoch_of(batches, offset: int) -> int:
    for b in batches:
        if b.base_offset <= offset <= b.last_offset:
            return b.epoch
    raise KeyError(offset)


def _broker_deltas(cluster, b: int, batches) -> list:
    """Broker ``b``'s publications with what ``ReplicaManager.applyDelta`` did in each: ``(time_ms, leaders,
    followers, started, stopped)`` counts, from the delivery's records replayed on the broker's image before it
    (``TopicsDelta.localChanges``: every changed partition ``b`` holds, a leader where it leads, else a follower;
    a follower's fetchers restart when its leader epoch is new, except in controlled shutdown for a partition with
    no leader or without ``b`` in its ISR, which stops)."""
    from kafka_lab.sim.kraft.records import NO_LEADER, MetadataImage

    broker = cluster.brokers[b]
    shutdown_from = [t for t, ev, _d in broker.lifecycle if ev == "controlled_shutdown_started"]
    stops = [t for t, ev, _d in broker.lifecycle if ev in ("shut_down", "crashed")]

    def in_controlled_shutdown(t):
        begun = [s for s in shutdown_from if s <= t]
        return bool(begun) and not any(begun[-1] <= s <= t for s in stops)

    records = []  # (offset, record) in log order
    for batch in batches:
        records += [(batch.base_offset + i, r) for i, r in enumerate(batch.records)]
    out, image, applied = [], None, -1
    for t, first, last, _append, _n, _local in broker.kraft.loader.publications:
        if image is None or first <= applied:  # a new process loads the log from its start
            image, epochs = MetadataImage(), {}
        changed = {}
        for off, r in records:
            if first <= off <= last:
                tp = image.replay(r, off)
                if tp is not None:
                    changed[tp] = None
        applied = last
        if t == 0:  # the steady state at t=0: published before the run, nothing logged in it
            epochs.update({tp: p.leader_epoch for tp, p in image.partitions.items()})
            continue
        leaders = followers = started = stopped = 0
        cs = in_controlled_shutdown(t)
        for tp in changed:
            p = image.partitions[tp]
            if b not in p.replicas:
                continue
            new_epoch = p.leader_epoch > epochs.get(tp, -1)
            epochs[tp] = p.leader_epoch
            if p.leader == b:
                leaders += 1
                continue
            followers += 1
            if cs and (p.leader == NO_LEADER or b not in p.isr):
                stopped += 1
            elif new_epoch:
                started += 1
        out.append((t, leaders, followers, started, stopped))
    return out


def render_kraft(cluster) -> list:
    """``[(time_ms, node, file, (level, logger, message)), ...]`` in time order: every line the run justifies (see
    the module)."""
    q = cluster.kraft.quorum
    controllers = set(q.ids)
    out = []  # (time, node, file, lmm), in the order each node wrote them
    batches = _committed_batches(q)
    started = {}  # broker -> times its process started
    for bid, broker in cluster.brokers.items():
        started[bid] = [t for t, ev, _d in broker.lifecycle if ev == "starting"]
    for t, node, kind, d in q.history.events:
        if node in controllers:
            if kind == "activate":
                out.append((t, node, CONTROLLER, k.becoming_active(node, d["epoch"], d["next_offset"])))
            elif kind == "new_leader":
                out.append((t, node, CONTROLLER, k.new_epoch_leader(node, d["epoch"], d["leader"])))
            elif kind == "renounce":
                lmm = k.renouncing(node, d["epoch"], d["new_epoch"], d["leader"], d["offset"])
                out.append((t, node, CONTROLLER, lmm))
            elif kind == "partitions_changed":
                out.append((t, node, CONTROLLER, k.changing_partitions(node, d["context"], d["count"])))
            elif kind == "fence":
                # logged before handleBrokerFenced generates its changes (its "changing" line, already out)
                line = (t, node, CONTROLLER, k.fencing_broker(node, d["broker"]))
                prev = out[-1] if out else None
                if prev is not None and prev[:3] == (t, node, CONTROLLER) and "handleBrokerFenced:" in prev[3][2]:
                    out.insert(len(out) - 1, line)
                else:
                    out.append(line)
            elif kind == "unfence_granted":
                out.append((t, node, CONTROLLER, k.unfence_granted(node, d["broker"], d["offset"])))
            elif kind == "controlled_shutdown_granted":
                out.append((t, node, CONTROLLER, k.controlled_shutdown_granted(node, d["broker"])))
            elif kind == "shutdown_granted":
                low = d["lowest_active_offset"]
                low = k.LONG_MAX if low == math.inf else int(low)
                out.append((t, node, CONTROLLER, k.shutdown_granted(node, d["broker"], low, d["offset"])))
            elif kind == "register" and d.get("previous_incarnation") is not None:
                lmm = k.registering_new_incarnation(
                    node,
                    d["broker"],
                    k.kafka_uuid(d["previous_incarnation"]),
                    k.kafka_uuid(d["incarnation"]),
                    d["cleanup_records"],
                    d["epoch"],
                )
                out.append((t, node, CONTROLLER, lmm))
        # the Raft client's lines, on controllers and brokers alike
        if kind == "fetch_timeout":  # a voter's (an observer looks for the leader instead: raft.py)
            out.append((t, node, SERVER, k.become_candidate_fetch_timeout(node)))
        elif kind == "election_timed_out":
            out.append((t, node, SERVER, k.election_timed_out(node, d["backoff_ms"])))
        elif kind == "reelect_after_backoff":
            out.append((t, node, SERVER, k.reelect_after_backoff(node)))
        elif kind == "votes_rejected":
            out.append((t, node, SERVER, k.insufficient_votes(node, d["rejected_by"])))
        elif kind == "truncated":
            out.append((t, node, SERVER, k.raft_truncated(node, d["offset"], d["leader"])))
        # a broker's own lines
        if node in cluster.brokers:
            if kind == "registered":
                out.append((t, node, SERVER, k.registered(node, d["broker_epoch"])))
            elif kind == "controlled_shutdown_begins":
                out.append((t, node, SERVER, k.beginning_controlled_shutdown(node)))
            elif kind == "exit_controlled_shutdown":
                out.append((t, node, SERVER, k.exit_controlled_shutdown(node)))
            elif kind == "initial_metadata_published" and any(s <= t for s in started[node]):
                lmm = k.publishing_initial_metadata(node, d["offset"], _epoch_of(batches, d["offset"]))
                out.append((t, node, SERVER, lmm))
    for bid, broker in cluster.brokers.items():
        for t, before, after in broker.kraft.lifecycle.transitions:
            if (before, after) == ("STARTING", "RECOVERY"):
                out.append((t, bid, SERVER, k.caught_up(bid)))
            elif (before, after) == ("RECOVERY", "RUNNING"):
                out.append((t, bid, SERVER, k.unfenced(bid)))
            elif after == "SHUTTING_DOWN":
                if before not in ("RUNNING", "PENDING_CONTROLLED_SHUTDOWN"):
                    out.append((t, bid, SERVER, k.skipping_controlled_shutdown(bid, before)))
                out.append((t, bid, SERVER, k.transitioning_to_shutting_down(bid, before)))
        for t, leaders, followers, start, stop in _broker_deltas(cluster, bid, batches):
            if leaders:
                out.append((t, bid, STATE, k.transitioning_local(bid, leaders, True)))
            if followers:
                out.append((t, bid, STATE, k.transitioning_local(bid, followers, False)))
            if start:
                out.append((t, bid, STATE, k.fetchers_become_follower(bid, start, False)))
                out.append((t, bid, STATE, k.fetchers_become_follower(bid, start, True)))
            if stop:
                out.append((t, bid, STATE, k.stopped_fetchers_controlled_shutdown(bid, stop)))
    order = sorted(range(len(out)), key=lambda i: (out[i][0], i))
    return [out[i] for i in order]


def _truth_events(cluster, events, cut_ms: float) -> dict:
    """What the written KRaft lines stand for, from the simulation's records (times in whole ms from the start)."""
    q = cluster.kraft.quorum
    controllers = set(q.ids)

    def at(t):
        return math.floor(t)

    got = {
        "elections": [],
        "leader_changes": [],
        "resignations": [],
        "fences": [],
        "unfences": [],
        "controlled_shutdowns": [],
        "shutdowns_granted": [],
        "registrations": [],
        "broker_registered": [],
        "broker_unfenced": [],
    }
    for t, node, kind, d in q.history.events:
        if t >= cut_ms:
            continue
        if node in controllers:
            if kind == "activate":
                got["elections"].append({"time_ms": at(t), "controller": node, "epoch": d["epoch"]})
            elif kind == "new_leader":
                got["leader_changes"].append(
                    {"time_ms": at(t), "node": node, "epoch": d["epoch"], "leader": d["leader"]}
                )
            elif kind == "renounce":
                got["resignations"].append({"time_ms": at(t), "controller": node, "epoch": d["epoch"]})
            elif kind == "fence":
                got["fences"].append({"time_ms": at(t), "controller": node, "broker": d["broker"]})
            elif kind == "unfence_granted":
                got["unfences"].append({"time_ms": at(t), "controller": node, "broker": d["broker"]})
            elif kind == "controlled_shutdown_granted":
                got["controlled_shutdowns"].append({"time_ms": at(t), "controller": node, "broker": d["broker"]})
            elif kind == "shutdown_granted":
                got["shutdowns_granted"].append({"time_ms": at(t), "controller": node, "broker": d["broker"]})
            elif kind == "register" and d.get("previous_incarnation") is not None:
                got["registrations"].append(
                    {"time_ms": at(t), "controller": node, "broker": d["broker"], "broker_epoch": d["epoch"]}
                )
        elif kind == "registered":
            got["broker_registered"].append({"time_ms": at(t), "broker": node, "broker_epoch": d["broker_epoch"]})
    for bid, broker in sorted(cluster.brokers.items()):
        for t, before, after in broker.kraft.lifecycle.transitions:
            if (before, after) == ("RECOVERY", "RUNNING") and t < cut_ms:
                got["broker_unfenced"].append({"time_ms": at(t), "broker": bid})
    got["timeline"] = [{"time_ms": at(t), "event": ev, "node": node} for t, ev, node in events if t < cut_ms]
    return got


def generate_kraft(
    out_dir,
    *,
    hours: float,
    brokers: int,
    seed: int,
    damage: float,
    start,
    rate_per_s: float,
    write_line,
    roll: bool = True,
    progress=None,
    gzip: bool = False,
    rolling_restart: bool = True,
    replace: bool = False,
) -> dict:
    """Write the KRaft cluster's log directories under ``out_dir`` and ``ground-truth.json``; return the truth (see
    the module; the arguments are :func:`.scenario.generate`'s, already checked there: ``start`` a UTC datetime).
    ``write_line(writer, damage, line, epoch_ms, text)`` writes one line, damaged or not, as the ZooKeeper-mode
    scenario does (its ``_write``: passed in, so that this module does not import the one that calls it)."""
    t0 = start
    dmg = Damage(damage, seed=seed)
    prepare_out_dir(out_dir, replace=replace)
    cluster, events, length = simulate(brokers, seed, rate_per_s=rate_per_s, rolling_restart=rolling_restart)
    controllers = list(cluster.kraft.quorum.ids)
    cut_ms = min(hours * 3_600_000, length)
    lines = [x for x in render_kraft(cluster) if x[0] < cut_ms]
    start_ms = int(t0.timestamp() * 1000)
    nodes = sorted(cluster.brokers) + controllers
    dirs = {n: node_dir(n, controllers) for n in nodes}
    with LogWriter(out_dir, nodes, roll=roll, gzip=gzip, dirs=dirs) as w:
        for t, node, f, (level, logger, msg) in lines:
            text = f" {level} {msg} ({logger})"
            write_line(w, dmg, Line(t, node, f, text), start_ms + t, text)
        files = w.close()
    if progress is not None:
        progress(round(cut_ms / 1000))
    truth = {
        "mode": "kraft",
        "seed": seed,
        "hours": hours,
        "brokers": brokers,
        "controllers": controllers,
        "start": t0.strftime("%Y-%m-%d %H:%M:%S"),
        "run_ms": int(cut_ms),
        "lines": {
            "lines_read": w.lines,
            "records": w.records,
            "continuations": w.continuations,
            "rejected": w.rejected,
        },
        "files": files,
        "bytes": w.bytes,
        "damage": dmg.summary(),
        **_truth_events(cluster, events, cut_ms),
    }
    Path(out_dir, "ground-truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    return truth

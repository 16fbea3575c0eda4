"""The KRaft controller at scale: failover and controlled shutdown from 100 to 100k partitions (Kafka 4.0), beside
lab 07's ZooKeeper-mode runs (:mod:`kafka_lab.sim.zk.controller_scale`).

The talk's layout, as lab 07's: 5 brokers (ids 1-5), replication factor 2, topics of 50 partitions; three
controllers (3000-3002) of their own (``process.roles=controller``). Everything the controllers do is the event
model itself (:mod:`.quorum`, :mod:`.raft`, :mod:`.quorum_controller`: the one event thread, the linger, the
batches of at most 10,000 records, the fetches, the commit, the heartbeats). What is computed rather than
simulated is a broker's *work* on what it fetched, the part that would need 100k partitions' replicas in five
brokers' replica managers: each broker here is a Raft observer and a ``BrokerLifecycleManager`` (the same
classes as a cluster's), and its metadata loader (:class:`ObserverLoader`) spends on each delivery what
:class:`~kafka_lab.sim.server.metadata_loader.MetadataLoader` spends (``loader_batch_ms`` + ``loader_partition_ms``
per changed partition, then ``apply_partition_ms`` per partition it holds whose leader epoch moved), counted from
the records rather than applied to replicas. Without client traffic no append holds a partition's lock, so the
two take the same time: ``tests/test_kraft_scale.py`` runs both setups on a
:class:`~kafka_lab.sim.cluster.Cluster` of the same seed at sizes it can run and finds the same times.

- :func:`kraft_failover`: the active controller's node crashes (or pauses) at ``at_ms``. The voters' fetch timeout
  (2000 ms after their last successful fetch) starts an election; the winner has every committed record (a vote
  goes only to a log at least as up to date) and has replayed them as a standby, so it becomes active as soon as
  its ``LeaderChangeMessage`` is committed: no reload, whatever the number of partitions. ``duration_s``: the
  crash to the new active controller; no partition loses its leader (the controllers lead none).
- :func:`kraft_controlled_shutdown`: broker 1 (half its ``partitions`` replicas led) asks ``WantShutDown``. The
  controller moves its leaderships and takes it out of every ISR in one event (records in batches of 10,000),
  and grants the shutdown once the broker leads nothing and every active broker has reported, in a heartbeat,
  that it applied the event's last offset. ``duration_s``: the first ``WantShutDown`` heartbeat sent to the
  answer that lets the broker go (lab 07's ``duration_s`` is the ControlledShutdown request to its reply).

Model simplifications beyond the cluster's: the brokers' data plane is not simulated (no clients: nothing would
use it), and only broker 1's partitions exist (a controlled shutdown touches only the partitions whose ISR holds
the broker; the image's other partitions change nothing but its size).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import simpy

from ..common.options import check_limit, check_seed
from ..network.request import RequestLog, requests_frame
from ..server.broker_lifecycle import BrokerLifecycleManager
from ..server.node import Node
from .config import KRaftConfig, KRaftCosts
from .quorum import Quorum, controller_ids
from .raft import RaftClient
from .records import topic_id

__all__ = [
    "BROKERS",
    "SHUTTING_DOWN",
    "KRaftFailoverResult",
    "KRaftShutdownResult",
    "ObserverLoader",
    "kraft_failover",
    "kraft_controlled_shutdown",
    "shutdown_assignment",
    "failover_assignment",
]

#: the talk's cluster, as lab 07's (5 brokers, replication factor 2)
BROKERS = (1, 2, 3, 4, 5)
#: the broker that shuts down
SHUTTING_DOWN = 1
#: partitions per topic (lab 07's failover: topics = partitions / 50)
PER_TOPIC = 50
#: the most partitions a run takes (lab 07's range reaches 100k)
MAX_PARTITIONS = 200_000


def _count(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_PARTITIONS:
        raise ValueError(f"{name} is a whole number from 1 to {MAX_PARTITIONS:,}, got {n!r}")
    return int(n)


def _rng_factory(seed: int):
    """One random stream per component, named as :meth:`kafka_lab.sim.cluster.Cluster.rng` names them."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed is a whole number, at least 0, got {seed!r}")
    return lambda name: np.random.default_rng([int(seed), zlib.crc32(name.encode())])


def _topics(assignment: list) -> dict:
    """``[replicas per partition]`` as ``{topic name: {partition: replicas}}``, 50 partitions a topic."""
    out: dict = {}
    for i, replicas in enumerate(assignment):
        out.setdefault(f"t{i // PER_TOPIC:05d}", {})[i % PER_TOPIC] = list(replicas)
    return out


def shutdown_assignment(partitions: int, seed: int = 0) -> dict:
    """Broker 1's ``partitions`` replicas (replication factor 2 on 5 brokers): half it leads, half it follows, the
    other replica on broker 2-5, in a hash-like order (lab 07's layout); ``{topic: {partition: replicas}}``."""
    n = _count("partitions", partitions)
    rng = _rng_factory(seed)(f"kraft-shutdown-layout-{n}")
    leads = np.zeros(n, dtype=bool)
    leads[: (n + 1) // 2] = True
    rng.shuffle(leads)
    other = 2 + rng.integers(0, len(BROKERS) - 1, n)
    return _topics(
        [[SHUTTING_DOWN, int(o)] if lead else [int(o), SHUTTING_DOWN] for lead, o in zip(leads, other, strict=True)]
    )


def failover_assignment(partitions: int) -> dict:
    """``partitions`` partitions over the 5 brokers, replication factor 2 (leaders in turn, the next broker the
    follower); ``{topic: {partition: replicas}}``."""
    n = _count("partitions", partitions)
    k = len(BROKERS)
    return _topics([[BROKERS[i % k], BROKERS[(i + 1) % k]] for i in range(n)])


class ObserverLoader:
    """A broker's metadata loader, its work counted from the records (see the module): on its own thread of the
    broker's process, per delivery ``loader_batch_ms + loader_partition_ms × changed partitions``, then
    ``apply_partition_ms`` for each changed partition this broker holds whose leader epoch moved, as
    :class:`~kafka_lab.sim.server.metadata_loader.MetadataLoader` spends it; then the offset is applied."""

    def __init__(self, env, broker_id: int, node, raft, *, replicas: dict, costs: KRaftCosts, history, lifecycle):
        self.env = env
        self.id = broker_id
        self.node = node
        self.costs = costs
        self.history = history
        self.lifecycle = lifecycle
        self.replicas = replicas  # (topic id, partition) -> replicas (a cluster's assignment does not change here)
        self.last_applied_offset = -1
        #: (time_ms, first offset, last offset, partitions changed, partitions made leader or follower here)
        self.publications: list = []
        raft.register(self)

    def handle_commit(self, batches) -> None:
        self.inbound.append(list(batches))
        self._wakeup()

    def handle_leader_change(self, leader, epoch: int) -> None:
        pass  # the loader's controller id: no work

    def handle_load_from_start(self) -> None:
        self.last_applied_offset = -1

    def bootstrap(self, offset: int) -> None:
        self.last_applied_offset = offset

    def start(self) -> None:
        self.inbound: list = []
        self._wake = None
        self.published_since_start = False
        self.node.thread(self._run())

    def _wakeup(self) -> None:
        w = getattr(self, "_wake", None)
        if w is not None and not w.triggered:
            w.succeed()

    def _run(self):
        env, costs, me, replicas = self.env, self.costs, self.id, self.replicas
        while True:
            if not self.inbound:
                self._wake = env.event()
                yield self._wake
                self._wake = None
                continue
            batches = self.inbound.pop(0)
            changed, moved = set(), set()
            for b in batches:
                for r in b.records:
                    if r.type in ("PartitionChangeRecord", "PartitionRecord"):
                        key = (r.fields["TopicId"], r.fields["PartitionId"])
                        changed.add(key)
                        if r.type == "PartitionChangeRecord" and "Leader" in r.fields and me in replicas[key]:
                            moved.add(key)
            cost = costs.loader_batch_ms + costs.loader_partition_ms * len(changed)
            if cost:
                yield env.timeout(cost)
            if costs.apply_partition_ms:
                for _ in range(len(moved)):  # one partition after another, as applyDelta (same float sums)
                    yield env.timeout(costs.apply_partition_ms)
            self.last_applied_offset = batches[-1].last_offset
            self.publications.append(
                (env.now, batches[0].base_offset, batches[-1].last_offset, len(changed), len(moved))
            )
            if not self.published_since_start:
                self.published_since_start = True
                self.lifecycle.set_ready_to_unfence()


class _ObserverBroker:
    """A broker as the controllers see it: its process, Raft observer, lifecycle manager and loader."""

    def __init__(self, env, bid: int, q: Quorum, *, rng, log, replicas: dict):
        self.id = bid
        self.node = Node(env, f"broker {bid}")
        self.raft = RaftClient(
            env,
            bid,
            voters=q.ids,
            peers=q.nodes,
            node=self.node,
            rng=rng(f"broker-{bid}-raft"),
            request_log=log,
            history=q.history,
            listener_name="CONTROLLER",
            config=q.kraft_config.quorum,
            io_ms=q.costs.raft_io_ms,
            client_host=f"10.0.1.{bid % 250}",
        )
        self.lifecycle = BrokerLifecycleManager(
            env,
            bid,
            self.node,
            controller=lambda: q.nodes.get(self.raft.leader_id) if self.raft.leader_id is not None else None,
            metadata_offset=lambda: self.loader.last_applied_offset,
            request_log=log,
            kraft_config=q.kraft_config,
            rng=rng(f"broker-{bid}-lifecycle"),
            history=q.history,
        )
        self.loader = ObserverLoader(
            env,
            bid,
            self.node,
            self.raft,
            replicas=replicas,
            costs=q.costs,
            history=q.history,
            lifecycle=self.lifecycle,
        )


class _World:
    """Three controllers and five observer brokers in steady state at t=0, as ``Cluster(5, mode="kraft")`` builds
    them (:mod:`kafka_lab.sim.kraft_mode`), with the same random streams."""

    def __init__(self, assignment: dict, *, seed: int, controllers=3, kraft_config=None, costs=None):
        self.env = env = simpy.Environment()
        rng = _rng_factory(seed)
        self.log = RequestLog()
        self.quorum = q = Quorum(
            env, controllers, request_log=self.log, rng=rng, kraft_config=kraft_config or KRaftConfig(), costs=costs
        )
        self.registrations = q.register_brokers(dict.fromkeys(BROKERS))
        replicas = {}
        for name, parts in assignment.items():
            q.create_topic(name, parts)
            tid = topic_id(name)
            for p, r in parts.items():
                replicas[(tid, p)] = tuple(r)
        self.brokers = {bid: _ObserverBroker(env, bid, q, rng=rng, log=self.log, replicas=replicas) for bid in BROKERS}
        self._rng = rng
        env.process(self._start())

    def _start(self):
        q = self.quorum
        batches = q.start()
        phases = self._rng("heartbeat-phases").uniform(0.0, q.kraft_config.broker_heartbeat_interval_ms, len(BROKERS))
        last = batches[-1].last_offset
        for (bid, b), phase in zip(sorted(self.brokers.items()), phases, strict=True):
            b.raft.leader_id = q.first_leader
            b.raft.bootstrap(1, q.first_leader, batches)
            b.loader.bootstrap(last)
            b.raft.start()
            b.loader.start()
            epoch, inc = self.registrations[bid]
            b.lifecycle.start(registered_epoch=epoch, incarnation=inc, first_heartbeat_ms=float(phase))
        yield self.env.timeout(0)

    def run_until(self, done, limit_ms: float, step_ms: float = 250.0) -> None:
        """Run in steps until ``done()`` or ``limit_ms``."""
        env = self.env
        while env.now < limit_ms and not done():
            env.run(until=min(limit_ms, env.now + step_ms))


# -- failover ----------------------------------------------------------------------------------------------------
@dataclass
class KRaftFailoverResult:
    """The active controller's node fails: how long until another is active, and what it had to load."""

    partitions: int
    fault: str
    duration_s: float  #: the fault → the new active controller (its activation)
    phases: dict = field(repr=False)  #: ms from the start of the run: fault, detected, elected, activated, brokers
    #: records the new active controller replayed from the fault to its activation, counted by its own controller
    #: (a reload would be every record of the log; a standby that kept up replays what was committed meanwhile)
    reloaded_records: int = 0
    #: the controllers lead no partition (they are nodes of their own): none goes offline, by construction
    unavailable_s: float = 0.0
    old_leader_uncommitted: int = 0  #: records the old leader wrote and never committed (a paused one's, on waking)
    #: why ``duration_s`` is NaN, when it is (no failover happened); empty otherwise
    note: str = ""
    events: pd.DataFrame = field(default=None, repr=False)
    transitions: pd.DataFrame = field(default=None, repr=False)
    requests: pd.DataFrame = field(default=None, repr=False)
    metadata_log: pd.DataFrame = field(default=None, repr=False)  #: every record any leader wrote (Quorum.metadata_log)

    @property
    def load_s(self) -> float:
        """Lab 07's ``load_s`` (the new controller reading the cluster's state) in KRaft: nothing to read."""
        return 0.0


FAILOVER_DEFAULTS = {"at_ms": 3000.0, "fault": "crash", "pause_ms": 10_000.0, "controllers": 3}
#: the latest ``at_ms`` and longest ``pause_ms`` a run takes: an idle KRaft world costs about 10 ms of wall time per
#: simulated second (``at_ms=100000`` took 1.07 s), so 600,000 ms is about 6 s
MAX_RUN_MS = 600_000.0


def _options(overrides: dict, defaults: dict, name: str) -> dict:
    unknown = set(overrides) - set(defaults)
    if unknown:
        raise TypeError(f"{name}() got unknown option(s) {sorted(unknown)}; known: {sorted(defaults)}")
    opts = {**defaults, **overrides}
    for k in ("at_ms", "pause_ms"):
        if k in opts:
            v = opts[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < math.inf:
                raise ValueError(f"{k} is a time in ms, a finite number at least 0, got {v!r}")
            check_limit(k, v, MAX_RUN_MS, "an idle KRaft world costs about 10 ms of wall time per simulated second")
    ids = controller_ids(opts["controllers"])
    clash = sorted(set(ids) & set(BROKERS))
    if clash:
        raise ValueError(
            f"controller ids {clash} are broker ids too (the brokers here are {list(BROKERS)}): a KRaft controller "
            "here is its own node (process.roles=controller), with an id no broker has"
        )
    return opts


def kraft_failover(*, partitions: int, seed: int = 0, **overrides) -> KRaftFailoverResult:
    """The active controller's node crashes (``fault="crash"``) or pauses for ``pause_ms`` (``fault="pause"``) at
    ``at_ms`` (3000) in a cluster of ``partitions`` partitions; ``duration_s`` to the next active controller (see the
    module). Options: ``at_ms``, ``fault``, ``pause_ms`` (10000), ``controllers`` (3).

        >>> r = kraft_failover(partitions=100)
        >>> r.reloaded_records, len(r.metadata_log)  # replayed after the crash, of the log's records: no reload
        (2, 120)
    """
    n = _count("partitions", partitions)
    check_seed(seed)
    opts = _options(overrides, FAILOVER_DEFAULTS, "kraft_failover")
    if opts["fault"] not in ("crash", "pause"):
        raise ValueError(f"fault is 'crash' or 'pause', got {opts['fault']!r}")
    voters = len(controller_ids(opts["controllers"]))
    if voters < 3:
        raise ValueError(
            f"a failover needs at least 3 controllers, got {voters}: the {voters - 1} left when the active one fails "
            f"are not a majority of {voters}, so no new leader can be elected (Raft), and the cluster waits for it"
        )
    w = _World(failover_assignment(n), seed=seed, controllers=opts["controllers"])
    q, env = w.quorum, w.env
    at = float(opts["at_ms"])
    old = {}

    def fault():
        yield env.timeout(at)
        a = q.active()
        old["id"] = a.id
        old["replayed"] = {i: srv.controller.replayed for i, srv in q.nodes.items()}
        if opts["fault"] == "crash":
            a.shut_down()
        else:
            pause_node(env, a.node, float(opts["pause_ms"]))

    env.process(fault())

    def activated():
        return any(
            e == "activate" and t > at and nid != old.get("id") for t, nid, e, _d in q.history.events
        ) and _brokers_found(w, at, old.get("id"))

    w.run_until(activated, at + 60_000.0)
    if opts["fault"] == "pause":  # let the old leader wake and learn it lost
        end = at + float(opts["pause_ms"]) + 3000.0
        if end > env.now:
            env.run(until=end)
    return _failover_result(w, n, opts["fault"], at, old.get("id"), old.get("replayed", {}), opts)


def _brokers_found(w, at: float, old_id) -> bool:
    """Every broker had a heartbeat answered by a controller other than the old one, after the fault."""
    found = {
        int(r.client_id.split("-")[1])
        for r in w.log
        if r.api == "BrokerHeartbeat" and r.sent > at and r.error == "NONE" and r.connection.broker_id != old_id
    }
    return found >= set(BROKERS)


def _failover_result(w, n: int, fault: str, at: float, old_id, replayed: dict, opts: dict) -> KRaftFailoverResult:
    q = w.quorum
    ev = q.events_frame()
    tr = q.transitions_frame()
    after = tr[tr["time_ms"] > at]
    cand = after[after["to_state"] == "Candidate"]
    lead = after[(after["to_state"] == "Leader") & (after["node_id"] != old_id)]
    act = ev[(ev["event"] == "activate") & (ev["time_ms"] > at) & (ev["node_id"] != old_id)]
    found_at = math.nan
    seen = {}
    for r in w.log:
        if r.api == "BrokerHeartbeat" and r.sent > at and r.error == "NONE" and r.connection.broker_id != old_id:
            bid = int(r.client_id.split("-")[1])
            seen.setdefault(bid, r.end)
    if set(seen) >= set(BROKERS):
        found_at = max(seen.values())
    activated = float(act["time_ms"].iloc[0]) if len(act) else math.nan
    ml = q.metadata_log()
    lost = int((~ml["committed"] & (ml["controller_id"] == old_id)).sum()) if len(ml) else 0
    phases = {
        "fault_ms": at,
        "detected_ms": float(cand["time_ms"].iloc[0]) if len(cand) else math.nan,
        "elected_ms": float(lead["time_ms"].iloc[0]) if len(lead) else math.nan,
        "activated_ms": activated,
        "brokers_ms": found_at,
    }
    note = ""
    reloaded = 0
    if len(act):
        new_id = int(act["node_id"].iloc[0])
        reloaded = int(act["detail"].iloc[0]["replayed"]) - int(replayed.get(new_id, 0))
    elif fault == "pause" and not len(cand):
        note = (
            f"no failover: the active controller's {opts['pause_ms']:g} ms pause ended before a voter's fetch timed "
            "out (controller.quorum.fetch.timeout.ms after its last fetch), so no election was held"
        )
    else:
        note = "no new active controller within 60 s of the fault"
    return KRaftFailoverResult(
        n,
        fault,
        (activated - at) / 1000,
        phases,
        reloaded,
        0.0,
        lost,
        note,
        ev,
        tr,
        requests_frame(w.log),
        ml,
    )


def pause_node(env, node, for_ms: float) -> None:
    """A stop-the-world pause of ``node``'s process for ``for_ms`` (its resume is the host's, not a timer of the
    paused process)."""
    node.pause()
    env.timeout(for_ms).callbacks.append(lambda _e: node.resume())


# -- controlled shutdown -----------------------------------------------------------------------------------------
@dataclass
class KRaftShutdownResult:
    """Broker 1's controlled shutdown through ``WantShutDown`` heartbeats (see the module)."""

    partitions: int
    duration_s: float  #: the first WantShutDown heartbeat sent → the answer that lets the broker go
    phases: dict = field(repr=False)  #: ms from that heartbeat: decided, committed, applied (by every other broker),
    #: reported (the last active broker's heartbeat with the offset), granted, answered
    records: int = 0  #: records of the controlled-shutdown event (the InControlledShutdown change and the partitions')
    batches: int = 0  #: Raft batches they filled (10,000 records at most)
    timeline: pd.DataFrame = field(default=None, repr=False)  #: per partition: role, new_leader, decided, committed
    requests: pd.DataFrame = field(default=None, repr=False)


SHUTDOWN_DEFAULTS = {"at_ms": 3000.0, "controllers": 3}


def kraft_controlled_shutdown(*, partitions: int, seed: int = 0, **overrides) -> KRaftShutdownResult:
    """Broker 1, holding ``partitions`` replicas (half led; 5 brokers, replication factor 2), begins its controlled
    shutdown at ``at_ms`` (3000); ``duration_s`` to the controller's grant (see the module). Options: ``at_ms``,
    ``controllers`` (3).

        >>> kraft_controlled_shutdown(partitions=100).records
        101
    """
    n = _count("partitions", partitions)
    check_seed(seed)
    opts = _options(overrides, SHUTDOWN_DEFAULTS, "kraft_controlled_shutdown")
    assignment = shutdown_assignment(n, seed)
    w = _World(assignment, seed=seed, controllers=opts["controllers"])
    env, b = w.env, w.brokers[SHUTTING_DOWN]
    at = float(opts["at_ms"])
    granted = {}

    def shutdown():
        yield env.timeout(at)
        granted["event"] = b.lifecycle.begin_controlled_shutdown()

    env.process(shutdown())
    w.run_until(lambda: "event" in granted and granted["event"].triggered, at + 600_000.0)
    return shutdown_result(w.quorum, w.log, assignment, at, n)


def shutdown_result(q, log, assignment: dict, at: float, n: int) -> KRaftShutdownResult:
    """What a controlled shutdown of broker 1 begun at ``at`` did, read from the quorum's history and the request log
    (of this module's world or of a :class:`~kafka_lab.sim.cluster.Cluster`: the same reading for both)."""
    mine = f"broker-{SHUTTING_DOWN}-heartbeat-channel-manager"
    hb = [r for r in log if r.api == "BrokerHeartbeat" and r.client_id == mine and r.sent >= at]
    want = [r for r in hb if r.payload["want_shut_down"]]
    answer = next(
        (r for r in want if r.error == "NONE" and r.result is not None and r.result["should_shut_down"]), None
    )
    t0 = want[0].sent if want else math.nan
    ml = q.metadata_log()
    ml = ml[ml["committed"]]
    cs = ml[ml["fields"].map(lambda f: f.get("InControlledShutdown") == 1 and f.get("BrokerId") == SHUTTING_DOWN)]
    decided = float(cs["decided_ms"].iloc[0]) if len(cs) else math.nan
    event = ml[ml["decided_ms"] == decided] if len(cs) else ml.iloc[0:0]
    last = int(event["offset"].max()) if len(event) else -1
    ev = q.events_frame()
    g = ev[(ev["event"] == "shutdown_granted") & (ev["detail"].map(lambda d: d.get("broker")) == SHUTTING_DOWN)]
    granted = float(g["time_ms"].iloc[0]) if len(g) else math.nan
    others = [
        r
        for r in log
        if r.api == "BrokerHeartbeat"
        and r.client_id != mine
        and r.client_id.endswith("-heartbeat-channel-manager")
        and r.sent >= decided
        and r.payload["current_metadata_offset"] >= last
    ]
    reported = {}
    for r in others:
        bid = int(r.client_id.split("-")[1])
        reported.setdefault(bid, r.sent)
    pcr = event[event["record_type"] == "PartitionChangeRecord"]
    names = {topic_id(t): t for t in assignment}
    rows = []
    for f, c in zip(pcr["fields"], pcr["committed_ms"], strict=True):
        t = names[f["TopicId"]]
        replicas = assignment[t][f["PartitionId"]]
        rows.append(
            (
                t,
                f["PartitionId"],
                "leader" if replicas[0] == SHUTTING_DOWN else "follower",
                f.get("Leader", replicas[0]),
                decided - t0,
                c - t0,
            )
        )
    timeline = pd.DataFrame(rows, columns=["topic", "partition", "role", "new_leader", "decided_ms", "committed_ms"])
    phases = {
        "decided_ms": decided - t0,
        "committed_ms": float(event["committed_ms"].max()) - t0 if len(event) else math.nan,
        "reported_ms": max(reported.values()) - t0 if reported else math.nan,
        "granted_ms": granted - t0,
        "answered_ms": (answer.end - t0) if answer is not None else math.nan,
    }
    duration = phases["answered_ms"] / 1000
    return KRaftShutdownResult(
        n,
        duration,
        phases,
        len(event),
        sum(
            1
            for b, _l, c in q.history.batches.values()
            if b.records and b.records[0].decided_ms == decided and not math.isnan(c)
        ),
        timeline,
        requests_frame(log),
    )

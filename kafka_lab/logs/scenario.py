"""A cluster over hours, written as its brokers' log directories, and the ground truth beside them.

The simulation is exact but slow (tens of thousands of requests per second of CPU), and a day of a
cluster's logs holds millions of lines. So the scenario simulates a handful of **windows**, each one
second of one cluster, renders each once (:func:`.render.render`), and writes the hours as a sequence
of those windows, one after another on the clock:

- ``steady-<level>``: the daily load shape's level (``low``, ``mid``, ``high``: :data:`LEVELS`
  producers at :data:`RATE_PER_S` sends a second each, acks=1, and one consumer);
- ``move-<broker>``: every :data:`EVENT_EVERY_S` seconds, a load spike on one broker (a burst of
  :data:`SPIKE_PRODUCERS` producers writing to the partitions it leads), and the controller moves
  leadership of one of them to another replica (a preferred-replica election). The broker hit turns
  round the cluster, so each broker is hit in turn;
- ``restart-<broker>`` (:data:`RESTART_MS` long): from half-way through the run, a **rolling restart**,
  one broker after another and the controller's broker last (:func:`restart_order`): its controlled
  shutdown, :data:`DOWN_MS` down, its start-up, and the controller's preferred-replica election giving
  it back its partitions (:mod:`kafka_lab.sim.zk.lifecycle`). The controller's own restart moves the
  controller: every window after it is simulated again with the new controller and controller epoch 2
  (names ending in :data:`NEW_CONTROLLER`).

The cluster is **half-way through KIP-291's migration**: brokers with an even id have
``control.plane.listener.name=CONTROLLER``, the others do not, and the controller starts on broker 1. The
control plane has two sides (docs/kafka-reference.md §2): the controller picks the listener for every broker
from its own config, and a broker serves it on its control plane only if it names it too. So while broker 1
is the controller every LeaderAndIsr goes out on the inter-broker ``INTERNAL`` listener, broker 2's
included, and waits behind a spike on any broker; once the rolling restart has moved the controller to a
broker with the name, every broker gets them on ``CONTROLLER``, which only the even brokers serve on a
control plane (the odd ones on their data plane). Clients use ``EXTERNAL``. That is what the logs let a
learner find: each broker's ``server.log`` says at start-up which listener is its control plane
(``Created control-plane acceptor ...``); a spike on a broker whose LeaderAndIsr goes through its data plane
holds it (a long ``requestQueueTimeMs``), its acks=1 writes to the moved partition are acknowledged and
later truncated, and its metadata stays stale longer.

Every window copy continues each client's correlation ids (:class:`.render.Line`), so request ids do
not repeat, and where the copies before it left each partition's offsets, leader epoch and zkVersion
and each broker's epoch (:class:`_Counters`, :mod:`.slots`): a partition's offsets (and a position in its log segment) go on
from the most records (bytes) any replica had at the end of the copy before, so they only fall where a
follower truncates;
a restart gives the broker an epoch above every other. Known simplifications, each a consequence of
the replay: every copy of a window repeats its pattern (the same requests, records per request, and
leader moves; only the numbers go on); a copy starts with every partition's preferred leader, so after
a copy that moved one the leader changes back, at the same leader epoch, with no election logged; at a
copy's start every replica of a partition has the same log end, so a follower that lagged at the end of
the copy before skips ahead without fetching; the log start
offset stays 0 (nothing is deleted); a broker is down for :data:`DOWN_MS` (a real restart also spends time
on the JVM and log recovery, and logs it); the preferred-replica election comes at the end of the
restart window, where Kafka's ``leader.imbalance.check.interval.seconds`` (300) may wait longer; the
start-up election is written by :func:`controller_startup`.

:func:`generate` streams: memory is the windows' lines plus counters, whatever the hours. The windows
can be simulated by worker processes (``workers``, :mod:`.pool`) while the copies are written. Each copy of
a window is written as one block per file (:func:`_write_copy`: the window's text, prepared once, with
each copy's dates, correlation ids, offsets and epochs put in), byte for byte what writing it line by
line gives; a copy with a damaged line, or whose lines straddle a second, is written line by line. The ground
truth (:func:`generate`'s return value, also written as ``ground-truth.json``) is computed from the
simulation's own records of what was written: lines per file, per broker/API/listener request counts
and exact percentiles of each phase, the controller's requests per broker whatever their listener (their
queue times' percentiles and maximum), truncated records per partition, metadata staleness windows.
"""

from __future__ import annotations

import datetime as _dt
import gc
import itertools
import json
import math
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kafka_lab.sim.network.socket_server import DISCONNECTED

from . import messages as m
from .damage import Damage
from .pool import window_pool
from .render import CONTROLLER, REQUEST, SERVER, Line, controller_channel, render, server_startup
from .requestlog import API_KEY_NAMES, BrokerView, phase_ms, segment_bytes
from .slots import BROKER_EPOCH, LEADER_EPOCH, MARK, OFFSET, POSITION, ZK_VERSION, Slots, decode
from .writer import LogWriter, prepare_out_dir

__all__ = [
    "WINDOW_MS",
    "LEVELS",
    "RATE_PER_S",
    "EVENT_EVERY_S",
    "SPIKE_PRODUCERS",
    "PHASES",
    "DEFAULT_START",
    "Window",
    "build_windows",
    "Windows",
    "schedule",
    "load_level",
    "controller_startup",
    "generate",
    "weighted_quantile",
]

WINDOW_MS = 1000
#: producers per load level (the daily shape picks the level per window)
LEVELS = {"low": 2, "mid": 5, "high": 10}
RATE_PER_S = 20.0
EVENT_EVERY_S = 300
SPIKE_PRODUCERS = 150
TOPIC = "orders"
#: the request log's phases (JSON keys) and the ground truth's names for them
PHASES = {
    "totalTimeMs": ("start", "end"),
    "requestQueueTimeMs": ("start", "dequeue"),
    "localTimeMs": ("dequeue", "api_local_complete"),
    "remoteTimeMs": ("api_local_complete", "response_complete"),
    "responseQueueTimeMs": ("response_complete", "response_dequeue"),
    "sendTimeMs": ("response_dequeue", "end"),
}
#: a restart window: its length, when the broker's controlled shutdown starts, how long it stays down,
#: and when the controller's preferred-replica election gives it back the partitions it prefers
RESTART_MS = 8000
RESTART_AT_MS, DOWN_MS, REBALANCE_AT_MS = 500.0, 4000.0, 7000.0
#: the name suffix of the windows after the rolling restart (a new controller, controller epoch 2)
NEW_CONTROLLER = "/epoch-2"
DEFAULT_START = "2024-03-04T00:00:00"
#: in a window's text as a copy plan splits it, a line's date and a request's correlation id: numbers of a
#: mark's shape that no mark has (:mod:`.slots`), so that one regular expression finds every slot
_DATE, _ID = 7 * 10**18 + (10**18 - 1), 7 * 10**18 + (10**18 - 2)
QUANTILES = (0.5, 0.99)


def load_level(hour_of_day: float) -> str:
    """The daily load shape: low at night (around 04:00), high in the afternoon (around 16:00)."""
    x = 0.5 - 0.5 * math.cos(2 * math.pi * (hour_of_day - 4.0) / 24.0)
    return "low" if x < 1 / 3 else ("mid" if x < 2 / 3 else "high")


@dataclass
class Window:
    """One simulated second, rendered: its lines and what the ground truth needs of it."""

    name: str
    lines: list[Line]
    corr_span: dict  # client -> correlation ids one copy uses (its max + 1)
    requests: dict  # (broker, API_KEY_NAME, listener) -> {phase: np.ndarray of logged ms}
    truncations: dict  # (broker, topic, partition) -> (records removed, events, of them acknowledged, then lost)
    staleness: list  # (broker, topic, partition, leader epoch, decided_ms, stale_ms, applied)
    end_state: dict = field(default_factory=dict)  # (topic, partition) -> (leader, replicas)
    duration_ms: int = WINDOW_MS
    #: restarts and controller changes: (time_ms, event, broker id, detail), from the simulation's records
    events: list = field(default_factory=list)
    controller: tuple = (1, 1)  # (controller id, epoch) at the window's end
    #: the counters the lines' marks name (:attr:`.slots.Slots.keys`): (kind, subject)
    keys: list = field(default_factory=list)
    #: (kind, (topic, partition)) -> how far the window moves the partition's counter: its log end and its
    #: segment's size in bytes (the most any replica has at the end; the logs start empty), leader epoch and
    #: zkVersion changes
    advance: dict = field(default_factory=dict)
    #: broker -> (its broker epoch at the window's start, at its end)
    broker_epochs: dict = field(default_factory=dict)


def _cluster(n_brokers: int, seed: int, controller: tuple | None = None):
    from kafka_lab.sim import Cluster

    cid, epoch = controller or (None, 1)
    cluster = Cluster(
        n_brokers,
        seed=seed,
        control_plane={b: b % 2 == 0 for b in range(1, n_brokers + 1)},
        controller_id=cid,
        controller_epoch=epoch,
    )
    # a log line needs the whole request (its payload, its response, who sent it), not the columns the
    # request log streams answered Produce/Fetch requests into; a window is one simulated second, so it fits
    cluster.log.keep_answered = True
    cluster.create_topic(TOPIC, 2 * n_brokers, min(3, n_brokers))
    return cluster


def _window(
    name: str,
    n_brokers: int,
    seed: int,
    *,
    producers: int,
    spike_on: int | None,
    fmt: str = "json",
    restart: int | None = None,
    controller: tuple | None = None,
) -> Window:
    cluster = _cluster(n_brokers, seed, controller)
    tps = cluster.partitions_of(TOPIC)
    first = {tp: (st["leader_epoch"], st["zk_version"]) for tp, st in cluster.controller.state.items()}
    first_epochs = {bid: b.broker_epoch for bid, b in cluster.brokers.items()}
    duration = float(WINDOW_MS if restart is None else RESTART_MS)
    rebalance = []
    if restart is not None:  # a rolling restart's step: this broker restarts, then gets its leaders back
        cluster.restart_broker(restart, at_ms=RESTART_AT_MS, down_ms=DOWN_MS)
        rebalance = [tp for tp in tps if cluster.controller.state[tp]["replicas"][0] == restart]
        for tp in rebalance:
            cluster.controller.elect_leader(tp, restart, at_ms=REBALANCE_AT_MS)
    for i in range(producers):
        cluster.producer(f"producer-{i + 1}", topic=TOPIC, acks=1).open_loop(RATE_PER_S)
    cluster.consumer("consumer-1", topic=TOPIC)
    if spike_on is not None:
        led = [tp for tp in tps if cluster.leader_of(tp) == spike_on]
        for i in range(SPIKE_PRODUCERS):
            p = cluster.producer(f"spike-{i + 1}", topic=TOPIC, acks=1, partitions=led)
            p.burst(1, at_ms=0.0)
        moved = led[0]
        new_leader = next(r for r in cluster.controller.state[moved]["replicas"] if r != spike_on)
        cluster.controller.elect_leader(moved, new_leader, at_ms=2.0)
    res = cluster.run(duration)
    slots = Slots()
    views = {bid: BrokerView(cluster, bid, slots=slots) for bid in cluster.brokers}
    lines = render(cluster, 0.0, duration, request_format=fmt, views=views, slots=slots)
    ctl = cluster.controller
    advance = {}
    for tp, st in ctl.state.items():
        logs = [
            b.replica_manager.partitions[tp].log for b in cluster.brokers.values() if tp in b.replica_manager.partitions
        ]
        advance[(OFFSET, tp)] = max((log.leo for log in logs), default=0)
        advance[(POSITION, tp)] = max((segment_bytes(len(log.batches), log.leo) for log in logs), default=0)
        advance[(LEADER_EPOCH, tp)] = st["leader_epoch"] - first[tp][0]
        advance[(ZK_VERSION, tp)] = st["zk_version"] - first[tp][1]
    broker_epochs = {bid: (first_epochs[bid], b.broker_epoch) for bid, b in cluster.brokers.items()}
    if rebalance:  # the automatic preferred-replica election, as the controller logs it
        t = REBALANCE_AT_MS
        cid = ctl.controller_at(t)[0]
        leaders = {tp: ctl.state[tp]["replicas"][0] for tp in tps}  # created with the preferred leaders
        for td, topic, part, leader, *_ in ctl.decisions:
            if td < t:
                leaders[(topic, part)] = leader
        ratios = _imbalance({tp: (leaders[tp], ctl.state[tp]["replicas"]) for tp in tps}, n_brokers)
        for lmm in m.auto_rebalance(cid, ratios):
            lines.append(Line(t, cid, CONTROLLER, _fmt(lmm)))
        names = [m.tp_name(*tp) for tp in rebalance]
        lines.append(Line(t, cid, CONTROLLER, _fmt(m.preferred_election_started(cid, names))))
        for td, topic, part, leader, *_ in ctl.decisions:
            if td >= REBALANCE_AT_MS and (topic, part) in rebalance and leader == restart:
                lines.append(
                    Line(td, cid, CONTROLLER, _fmt(m.preferred_election_completed(cid, m.tp_name(topic, part), leader)))
                )
        lines.sort(key=lambda ln: ln.time_ms)
    if spike_on is not None:  # the election as the controller logs it (KafkaController.onReplicaElection)
        for t, topic, part, leader, *_ in ctl.decisions:
            tp = m.tp_name(topic, part)
            start = max(0.0, t - ctl.zk_latency_ms)
            lines.append(
                Line(
                    start, ctl.id, CONTROLLER, _fmt(m.preferred_election_started(ctl.id, [tp], "AdminClientTriggered"))
                )
            )
            lines.append(Line(t, ctl.id, CONTROLLER, _fmt(m.preferred_election_completed(ctl.id, tp, leader))))
        lines.sort(key=lambda ln: ln.time_ms)
    span: dict = {}
    for ln in lines:
        if ln.client is not None:
            span[ln.client] = max(span.get(ln.client, 0), ln.correlation_id + 1)
    # the requests written (render writes a request line at its end, inside the window; none for a request lost
    # with its connection)
    groups: dict = {}
    for r in cluster.log:
        if not (r.end == r.end and 0.0 <= r.end < duration) or r.error == DISCONNECTED:
            continue
        key = (r.connection.broker_id, API_KEY_NAMES[r.api], r.connection.listener)
        g = groups.setdefault(key, {k: [] for k in PHASES})
        for k, (a, b) in PHASES.items():
            g[k].append(phase_ms(getattr(r, a), getattr(r, b)))
    requests = {k: {p: np.asarray(v) for p, v in g.items()} for k, g in groups.items()}
    trunc: dict = {}
    for bid, b in cluster.brokers.items():
        for t, kind, topic, part, d in b.replica_manager.events:
            if kind == "truncated" and t < duration and d["removed_records"] > 0:
                rec, ev = trunc.get((bid, topic, part), (0, 0))
                trunc[(bid, topic, part)] = (rec + int(d["removed_records"]), ev + 1)
    # of the records a broker removed, those it had acknowledged as the old leader (the ledger's "truncated");
    # a follower's removed records are copies of some of them
    led = res.ledger[res.ledger["outcome"] == "truncated"]
    lost = led.groupby(["broker_id", "topic", "partition"])["records"].sum().to_dict()
    trunc = {key: (rec, ev, int(lost.get(key, 0))) for key, (rec, ev) in trunc.items()}
    stale = [
        (
            int(r.broker_id),
            r.topic,
            int(r.partition),
            int(r.leader_epoch),
            float(r.decided_ms),
            float(r.stale_ms),
            bool(r.applied),
        )
        for r in res.staleness.itertuples()
    ]
    end_state = {tp: (st["leader"], list(st["replicas"])) for tp, st in ctl.state.items()}
    events = [(t, ev, bid, d) for bid, b in cluster.brokers.items() for t, ev, d in b.lifecycle]
    events += [(t, ev, cid, d) for t, cid, ev, d in ctl.events]
    events.sort(key=lambda e: e[0])
    return Window(
        name,
        lines,
        span,
        requests,
        trunc,
        stale,
        end_state,
        int(duration),
        events,
        (ctl.id, ctl.epoch),
        list(slots.keys),
        advance,
        broker_epochs,
    )


def _fmt(lmm) -> str:
    level, logger, msg = lmm
    return f" {level} {msg} ({logger})"


def build_windows(
    n_brokers: int = 3, seed: int = 0, *, request_format: str = "json", rolling_restart: bool = True
) -> dict:
    """Every window the scenario uses, simulated and rendered (seeded: same seed, same windows).

    With ``rolling_restart`` (and at least two brokers): a ``restart-<b>`` window per broker, and the
    steady and move windows again with the controller the last restart left (names ending in
    :data:`NEW_CONTROLLER`).
    """
    windows = Windows(n_brokers, seed, request_format=request_format, rolling_restart=rolling_restart)
    return {name: windows[name] for name in windows.names()}


class Windows(dict):
    """The scenario's windows by name, each simulated the first time it is asked for (a run that never
    reaches the afternoon's load simulates no ``steady-high``); the same window whatever the order, and
    wherever it is simulated, since each one's seed comes from its name.

    :meth:`prefetch` has a process pool simulate the windows a run will ask for, all at once; asking for
    one then waits for its result (the same :class:`Window`, pickled back)."""

    def __init__(self, n_brokers: int, seed: int, *, request_format: str = "json", rolling_restart: bool = True):
        super().__init__()
        if isinstance(n_brokers, bool) or not isinstance(n_brokers, int) or n_brokers < 1:
            raise ValueError(f"--brokers is a whole number of brokers, at least 1, got {n_brokers!r}")
        self.n, self.seed, self.fmt = n_brokers, seed, request_format
        self.restarts = rolling_restart and n_brokers >= 2
        self.first_controller = _cluster(n_brokers, seed).controller.id if self.restarts else None
        self._pool = None
        self._futures: dict = {}  # name -> Future of its Window, while the pool simulates it
        self._later: list = []  # names waiting for the controller the rolling restart leaves

    def names(self) -> list:
        """Every window name, in the order :func:`build_windows` lists them."""
        era = [f"steady-{level}" for level in LEVELS]
        if self.n >= 2:
            era += [f"move-{b}" for b in range(1, self.n + 1)]
        if not self.restarts:
            return era
        return (
            era
            + [f"restart-{b}" for b in restart_order(self.n, self.first_controller)]
            + [name + NEW_CONTROLLER for name in era]
        )

    def __missing__(self, name: str) -> Window:
        if name not in self.names():
            raise KeyError(name)
        future = self._futures.pop(name, None)
        if future is not None:
            w = future.result()
        else:
            controller = self[self._restart_of_controller()].controller if name.endswith(NEW_CONTROLLER) else None
            w = _simulate_window(name, self.n, self.seed, self.fmt, controller)
        self[name] = w
        return w

    def _restart_of_controller(self) -> str:
        return f"restart-{self.first_controller}"

    def prefetch(self, names, pool) -> None:
        """Submit the windows ``names`` (in the order a run first asks for them; repeats are ignored) to
        ``pool``, a :class:`concurrent.futures.Executor` of processes. The controller's restart goes first
        of the restarts: the windows after it (names ending in :data:`NEW_CONTROLLER`) start with the
        controller it leaves, so they are submitted when it is done (:meth:`poll`)."""
        self._pool = pool
        todo = [n for n in dict.fromkeys(names) if n not in self and n not in self._futures]
        first = self._restart_of_controller()
        if first in todo:
            todo.remove(first)
            restarts = [i for i, n in enumerate(todo) if n.startswith("restart-")]
            todo.insert(restarts[0] if restarts else len(todo), first)
        for name in todo:
            if name.endswith(NEW_CONTROLLER):
                self._later.append(name)
            else:
                self._futures[name] = pool.submit(_simulate_window, name, self.n, self.seed, self.fmt)
        self.poll()

    def poll(self) -> None:
        """Once the controller's restart is simulated, submit the windows that wait for its controller."""
        if not self._later:
            return
        first = self._restart_of_controller()
        future = self._futures.get(first)
        if first not in self and (future is None or not future.done()):
            return
        controller = self[first].controller
        for name in self._later:
            if name not in self:
                self._futures[name] = self._pool.submit(_simulate_window, name, self.n, self.seed, self.fmt, controller)
        self._later = []


def _simulate_window(name: str, n: int, seed: int, fmt: str, controller: tuple | None = None) -> Window:
    """The window called ``name`` (one of :meth:`Windows.names`) of an ``n``-broker cluster, simulated;
    ``controller``: the (id, epoch) a window after the rolling restart starts with. A function of its
    arguments alone, so that a worker process of :func:`generate`'s pool can run it.

    Python's cyclic garbage collector is paused meanwhile and run once after (its youngest generation,
    where everything the window made still is): the simulation's objects (every request and event of a
    second, or of a restart, kept whole for rendering) live until the window is rendered, and collecting
    them again and again as they pile up cost 8-15 % of the time. Measured on a 1M-line run: the same
    files, 0.05-0.15 s sooner, and a lower peak RSS (124 MB against 155 MB)."""
    kind, _, arg = name.removesuffix(NEW_CONTROLLER).partition("-")
    s = seed * 1000
    if kind == "steady":
        level = list(LEVELS).index(arg)
        seed_, kw = s + level, {"producers": LEVELS[arg], "spike_on": None, "controller": controller}
    elif kind == "move":
        b = int(arg)
        seed_, kw = s + 100 + b, {"producers": LEVELS["mid"], "spike_on": b, "controller": controller}
    else:
        b = int(arg)
        seed_, kw = s + 200 + b, {"producers": LEVELS["mid"], "spike_on": None, "restart": b}
    paused = gc.isenabled()
    gc.disable()
    try:
        return _window(name, n, seed_, fmt=fmt, **kw)
    finally:
        if paused:
            gc.enable()
            gc.collect(0)  # the window's cluster, its cycles unreachable now


def restart_order(n_brokers: int, controller_id: int) -> list:
    """The rolling restart's order: every other broker by id, the controller last (one controller change)."""
    return [b for b in range(1, n_brokers + 1) if b != controller_id] + [controller_id]


def schedule(
    hours: float,
    n_brokers: int,
    start: _dt.datetime,
    event_every_s: int = EVENT_EVERY_S,
    *,
    rolling_restart: bool = True,
    controller_id: int = 1,
):
    """``(offset ms, window name)`` of each window of the run, in order (a generator).

    Every ``event_every_s`` a leader move; from the first whole second at or after half the run, when it
    fits before the end, the rolling restart (:func:`restart_order`, one ``restart-<b>`` window each,
    back to back; moves that fall inside it are skipped); after it every window is the new controller's.
    """
    total = round(hours * 3600_000 / WINDOW_MS) * WINDOW_MS
    every = max(1, int(event_every_s) * 1000 // WINDOW_MS) * WINDOW_MS
    restarts = []
    if rolling_restart and n_brokers >= 2:
        restarts = [f"restart-{b}" for b in restart_order(n_brokers, controller_id)]
    restart_at = (total // 2) // WINDOW_MS * WINDOW_MS
    if restart_at + len(restarts) * RESTART_MS > total:
        restarts = []
    next_event = (every // WINDOW_MS // 2) * WINDOW_MS
    event, suffix, t = 0, "", 0
    while t < total:
        if restarts and t >= restart_at:
            yield t, restarts.pop(0)
            t += RESTART_MS
            if not restarts:
                suffix = NEW_CONTROLLER
            while next_event < t:
                next_event += every
            continue
        if n_brokers >= 2 and t == next_event:
            event += 1
            next_event += every
            yield t, f"move-{(event - 1) % n_brokers + 1}{suffix}"
        else:
            hod = (start.hour + start.minute / 60 + t / 3600_000) % 24
            yield t, f"steady-{load_level(hod)}{suffix}"
        t += WINDOW_MS


def controller_startup(cluster_like, controller_id: int, epoch: int = 1) -> list:
    """controller.log at start-up: the election (``KafkaController.elect``), the failover sequence, and the
    channel to each broker (``RequestSendThread``). ``cluster_like``: a simulated cluster (its brokers)."""
    brokers = sorted(cluster_like.brokers)
    out = [m.controller_elected(controller_id, epoch, epoch)]
    out += m.controller_failover(controller_id, epoch, brokers, [TOPIC])
    view = BrokerView(cluster_like, controller_id)
    out += [controller_channel(cluster_like, controller_id, b, view) for b in brokers]
    return out


def weighted_quantile(values_weights, q: float) -> float:
    """numpy's default (linear) quantile of the multiset where each value repeats its weight times.

    ``values_weights``: ``[(values array, weight), ...]``; exact, without expanding the multiset.
    """
    vals = np.concatenate([v for v, _ in values_weights]) if values_weights else np.array([])
    wts = (
        np.concatenate([np.full(len(v), w, dtype=np.int64) for v, w in values_weights])
        if values_weights
        else np.array([])
    )
    keep = wts > 0
    vals, wts = vals[keep], wts[keep]
    if len(vals) == 0:
        return float("nan")
    order = np.argsort(vals, kind="stable")
    vals, cum = vals[order], np.cumsum(wts[order])
    n = int(cum[-1])
    h = (n - 1) * q
    lo, hi = math.floor(h), math.ceil(h)

    def at(i):  # the i-th smallest (0-based) of the expanded multiset
        return float(vals[np.searchsorted(cum, i + 1)])

    return at(lo) + (h - lo) * (at(hi) - at(lo))


def _parse_start(start) -> _dt.datetime:
    if isinstance(start, _dt.datetime):
        t = start
    else:
        try:
            t = _dt.datetime.fromisoformat(str(start))
        except ValueError:
            raise ValueError(f"--start is an ISO 8601 time such as {DEFAULT_START!r}, got {start!r}") from None
    return t.replace(tzinfo=_dt.UTC) if t.tzinfo is None else t.astimezone(_dt.UTC)


def generate(
    out_dir,
    *,
    hours: float = 1.0,
    brokers: int = 3,
    seed: int = 0,
    damage: float = 0.0,
    start=DEFAULT_START,
    request_format: str = "json",
    roll: bool = True,
    event_every_s: int = EVENT_EVERY_S,
    progress=None,
    gzip: bool = False,
    rolling_restart: bool = True,
    workers: int | Executor = 1,
    replace: bool = False,
    mode: str = "zk",
) -> dict:
    """Write the cluster's log directories under ``out_dir`` and ``ground-truth.json``; return the truth.

    ``out_dir`` must be empty or new; ``replace``: a directory holding only what an earlier run wrote is
    emptied of it first (:func:`.writer.prepare_out_dir`: mixed with the old files, the new ones would be
    counted twice against a ground truth that knows only them).

    ``event_every_s``: seconds between leader moves (each with a load spike on the broker that loses
    leadership). ``rolling_restart``: restart every broker once, from half-way through the run
    (:func:`schedule`; the controller's restart moves the controller). ``gzip``: each file gzip-compressed (:class:`.writer.LogWriter`). ``progress``: called with the simulated seconds written since the last call (a tqdm's ``update``).

    ``workers``: processes that simulate the windows. 1: this process, each window when the schedule
    first asks for it. More: a pool of that many processes (:func:`.pool.window_pool`, shut down at the
    end) is given every window the run needs at the start, and this process writes the copies
    meanwhile: the same files and ground truth (each window's seed comes from its name), sooner when
    there are cores to spare. Or a :class:`concurrent.futures.Executor` of processes to use (and not
    shut down), such as ``kafka-lab``'s :func:`.pool.forked_pool`. The fork server imports a script's
    main module, so a script that asks for a number of workers calls this under
    ``if __name__ == "__main__":`` (a notebook, pytest and ``kafka-lab`` need nothing).

    ``mode``: ``"zk"`` (the default: this module's ZooKeeper-mode 2.8 cluster) or ``"kraft"``: a Kafka 4.0 KRaft
    cluster's logs (:func:`.kraft.generate_kraft`), which has no request log and no leader moves of its own, so
    ``request_format`` and ``event_every_s`` are refused there unless left at their defaults; ``workers`` does not
    apply (one run is simulated).
    """
    if mode not in ("zk", "kraft"):
        raise ValueError(f"--mode is 'zk' (ZooKeeper mode, Kafka 2.8) or 'kraft' (KRaft, Kafka 4.0), got {mode!r}")
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not 0 < hours < math.inf:
        raise ValueError(f"--hours is a positive number of hours, got {hours!r}")
    if request_format not in ("json", "text"):
        raise ValueError(f"request log format is 'json' (2.8) or 'text' (2.7 and earlier), got {request_format!r}")
    if isinstance(event_every_s, bool) or not isinstance(event_every_s, int) or event_every_s < 2:
        raise ValueError(f"--event-every is a whole number of seconds, at least 2, got {event_every_s!r}")
    if not isinstance(workers, Executor) and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"--workers is a whole number of processes, at least 1, got {workers!r}")
    if mode == "kraft":
        if request_format != "json":
            raise ValueError(
                "--request-format is the ZooKeeper-mode request log's: --mode kraft writes no request lines"
            )
        if event_every_s != EVENT_EVERY_S:
            raise ValueError("--event-every spaces ZooKeeper mode's leader moves: --mode kraft runs its own timeline")
        if isinstance(brokers, bool) or not isinstance(brokers, int) or brokers < 1:
            raise ValueError(f"--brokers is a whole number of brokers, at least 1, got {brokers!r}")
        from .kraft import generate_kraft

        return generate_kraft(
            out_dir,
            hours=hours,
            brokers=brokers,
            seed=seed,
            damage=damage,
            start=_parse_start(start),
            rate_per_s=RATE_PER_S,
            write_line=_write,
            roll=roll,
            progress=progress,
            gzip=gzip,
            rolling_restart=rolling_restart,
            replace=replace,
        )
    t0 = _parse_start(start)
    prepare_out_dir(out_dir, replace=replace)
    windows = Windows(brokers, seed, request_format=request_format, rolling_restart=rolling_restart)
    sample = _cluster(brokers, seed)  # the cluster's brokers and configs, for the start-up lines
    controller_id = sample.controller.id

    def plan():
        return schedule(
            hours, brokers, t0, event_every_s, rolling_restart=rolling_restart, controller_id=sample.controller.id
        )

    own = not isinstance(workers, Executor) and workers > 1
    pool = window_pool(workers) if own else (workers if isinstance(workers, Executor) else None)
    if pool is not None:  # every window the run needs, simulated in the pool while this process writes
        windows.prefetch(itertools.chain(["steady-low"], (name for _off, name in plan())), pool)
    try:
        controllers = [{"time_ms": 0, "controller": controller_id, "epoch": 1, "event": "elected"}]
        restarts: list = []
        start_ms = int(t0.timestamp() * 1000)
        dmg = Damage(damage, seed=seed)
        bases: dict = {}  # client -> next correlation id
        counters = _Counters()  # each partition's offsets and epochs, each broker's epoch, as the copies leave them
        copies: dict = {}  # window name -> copies written
        plans: dict = {}  # window name -> _CopyPlan
        any_w = windows["steady-low"]  # every steady window ends with the preferred leaders
        with LogWriter(out_dir, sorted(sample.brokers), roll=roll, gzip=gzip) as w:
            for b in sorted(sample.brokers):
                for lmm in server_startup(sample, b):
                    text = _fmt(lmm)
                    w.write(b, SERVER, start_ms, text, continuations=text.count("\n"))
            for lmm in controller_startup(sample, controller_id):
                w.write(controller_id, CONTROLLER, start_ms, _fmt(lmm))
            last_check = 0
            for off, name in plan():
                windows.poll()
                win = windows[name]
                copies[name] = copies.get(name, 0) + 1
                base_ms = start_ms + off
                if off - last_check >= EVENT_EVERY_S * 1000:  # leader.imbalance.check.interval.seconds = 300
                    last_check = off
                    ratios = _imbalance(any_w.end_state, brokers)
                    for lmm in m.auto_rebalance(controller_id, ratios):
                        w.write(controller_id, CONTROLLER, base_ms, _fmt(lmm))
                if win.events:
                    _record_events(win, off, restarts, controllers, counters)
                    controller_id = win.controller[0]
                shifts = counters.shifts(win)
                if not _write_copy(w, dmg, win, base_ms, bases, plans, shifts):
                    for ln in win.lines:
                        t = base_ms + ln.time_ms
                        corr = None if ln.client is None else bases.get(ln.client, 0) + ln.correlation_id
                        _write(w, dmg, ln, t, ln.text(corr, shifts))
                for c, n in win.corr_span.items():
                    bases[c] = bases.get(c, 0) + n
                counters.advance(win)
                if progress is not None:
                    progress(win.duration_ms // WINDOW_MS)
            files = w.close()
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    truth = _truth(
        windows,
        copies,
        w,
        files,
        dmg,
        hours=hours,
        brokers=brokers,
        seed=seed,
        start=t0,
        sample=sample,
        event_every_s=event_every_s,
        restarts=restarts,
        controllers=controllers,
    )
    Path(out_dir, "ground-truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    return truth


class _Counters:
    """Where the copies written so far leave each counter a window's marks name (:mod:`.slots`), and so
    each copy's shifts: a partition's offsets go on from the most records any replica had at the end of
    the copies before (its log end), its leader epoch and zkVersion from where they left them.

    A broker's epoch is a counter per broker for the epoch every window starts it with, and one more for
    a restart's new epoch: a restart takes one above every broker's epoch (``Broker.start_up``; in
    ZooKeeper mode, the czxid of its new registration), the highest the run has reached so far.

    Each counter has a place in :attr:`values`; a window's shifts are one gather (:meth:`shifts`)."""

    __slots__ = ("index", "values", "epochs", "windows")

    def __init__(self):
        self.index: dict = {}  # (kind, subject) -> place in values
        self.values = np.zeros(64, dtype=np.int64)
        self.epochs: dict = {}  # broker -> its broker epoch in the run (from the first window it is in)
        self.windows: dict = {}  # window name -> (places of its keys, places it advances, by how much)

    def _place(self, key) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.index)
            if i == len(self.values):
                self.values = np.concatenate([self.values, np.zeros_like(self.values)])
        return i

    def _prepared(self, win: Window):
        got = self.windows.get(win.name)
        if got is None:
            places = []
            for kind, subject in win.keys:
                if kind == BROKER_EPOCH:  # (broker, epoch in the window)
                    b, e = subject
                    key = (BROKER_EPOCH, b) if e == win.broker_epochs[b][0] else (BROKER_EPOCH, None)
                    places.append(self._place(key))
                else:
                    places.append(self._place((kind, subject)))
            moved = [(self._place(k), v) for k, v in win.advance.items() if v]
            got = self.windows[win.name] = (
                np.array(places, dtype=np.int64),
                np.array([p for p, _ in moved], dtype=np.int64),
                np.array([v for _, v in moved], dtype=np.int64),
            )
        return got

    def shifts(self, win: Window) -> np.ndarray:
        """Per key of ``win`` (:attr:`Window.keys`), what its copy now adds to the window's value."""
        places, _m, _v = self._prepared(win)
        for b, (first, _last) in win.broker_epochs.items():
            self.values[self._place((BROKER_EPOCH, b))] = self.epochs.get(b, first) - first
        top = max(self.epochs.get(b, first) for b, (first, _l) in win.broker_epochs.items()) if win.broker_epochs else 0
        top_first = max((first for first, _l in win.broker_epochs.values()), default=0)
        self.values[self._place((BROKER_EPOCH, None))] = top - top_first
        return self.values[places]

    def broker_epoch(self, win: Window, b: int, epoch: int) -> int:
        """The broker epoch ``epoch`` of broker ``b`` in ``win`` is, in the copy about to be written."""
        first = win.broker_epochs[b][0]
        if epoch == first:
            return self.epochs.get(b, first)
        top = max(self.epochs.get(c, f) for c, (f, _l) in win.broker_epochs.items())
        return top + epoch - max(f for f, _l in win.broker_epochs.values())

    def advance(self, win: Window) -> None:
        """After a copy of ``win``: each counter where the copy left it."""
        _p, moved, by = self._prepared(win)
        self.values[moved] += by
        changed = {
            b: self.broker_epoch(win, b, last) for b, (first, last) in win.broker_epochs.items() if last != first
        }
        self.epochs.update(changed)


class _CopyPlan:
    """What every copy of one window writes, prepared once: per file, its lines' positions, and the
    pieces of the file's block (``"".join``-ed per copy): constant text, and between each two a slot for
    a line's date up to the second, a request's correlation id, or an offset or epoch (a mark of
    :mod:`.slots`: the window's value plus the copy's shift of its counter); the constants made for the
    milliseconds the lines fall on. A copy makes its slots' strings once (:meth:`sources`: the date,
    each request's correlation id, each distinct mark's value), and each file takes its own from them in
    one gather (``take``: which source each slot, the odd pieces, gets)."""

    __slots__ = ("times", "files", "clients", "corr", "pieces", "multiline", "keys", "raw")

    def __init__(self, win: Window):
        lines = win.lines
        self.multiline = any("\n" in ln.head or "\n" in ln.tail for ln in lines)
        self.times = np.array([ln.time_ms for ln in lines], dtype=np.float64)
        self.clients = sorted({ln.client for ln in lines if ln.client is not None})
        client_index = {c: i for i, c in enumerate(self.clients)}
        requests = [i for i, ln in enumerate(lines) if ln.client is not None]
        self.corr = (
            np.array([client_index[lines[i].client] for i in requests], dtype=np.int64),
            np.array([lines[i].correlation_id for i in requests], dtype=np.int64),
        )
        self.files, self.pieces = [], (None, None)  # (milliseconds of each line, {file key: pieces})
        self.keys = self.raw = np.zeros(0, dtype=np.int64)
        if self.multiline:  # written line by line
            return
        request_source = {i: 1 + j for j, i in enumerate(requests)}  # sources: date, ids, mark values
        by_file: dict = {}
        for i, ln in enumerate(lines):
            by_file.setdefault((ln.broker, ln.file), []).append(i)
        marks = []  # per file, its marks (as written) and where they are among its slots
        date, corr = str(_DATE), str(_ID)
        for key, idx in by_file.items():
            text = []
            for i in idx:
                ln = lines[i]
                text += (date, ln.head, "\n") if ln.client is None else (date, ln.head, corr, ln.tail, "\n")
            parts = MARK.split("".join(text))  # constant, slot, constant, ..., constant
            slots = np.array(parts[1::2]).astype(np.int64)
            take = np.zeros(len(slots), dtype=np.int64)
            dates = np.flatnonzero(slots == _DATE)
            take[slots == _ID] = [request_source[i] for i in idx if lines[i].client is not None]
            at = np.flatnonzero(slots < _ID)
            marks.append((slots[at], at))
            self.files.append((key, idx, take, 2 * dates + 2, parts))
        every = np.concatenate([m for m, _at in marks]) if marks else np.zeros(0, dtype=np.int64)
        distinct, which = np.unique(every, return_inverse=True)
        self.keys, self.raw = decode(distinct)
        first, n = 1 + len(requests), 0
        for (_m, at), (_k, _i, take, _d, _p) in zip(marks, self.files, strict=True):
            take[at] = first + which[n : n + len(at)]
            n += len(at)

    def pieces_for(self, millis: np.ndarray) -> dict:
        if self.pieces[0] is None or not np.array_equal(self.pieces[0], millis):
            out = {}
            for key, idx, _t, firsts, parts in self.files:
                arr = np.empty(len(parts), dtype=object)
                arr[:] = parts
                for at, i in zip(firsts.tolist(), idx, strict=True):  # each line's text starts "SSS]"
                    arr[at] = f"{int(millis[i]):03d}]{parts[at]}"
                out[key] = arr
            self.pieces = (millis, out)
        return self.pieces[1]

    def sources(self, date: str, bases: dict, shifts: np.ndarray) -> np.ndarray:
        """A copy's strings for the slots: its date, each request's correlation id (``bases``: each
        client's first), and each distinct mark's value plus its counter's shift."""
        clients, corr = self.corr
        base = np.array([bases.get(c, 0) for c in self.clients], dtype=np.int64)
        out = np.empty(1 + len(corr) + len(self.raw), dtype=object)
        out[0] = date
        out[1:] = list(map(str, np.concatenate([base[clients] + corr, self.raw + shifts[self.keys]]).tolist()))
        return out


def _write_copy(
    w: LogWriter, dmg: Damage, win: Window, base_ms: int, bases: dict, plans: dict, shifts: np.ndarray
) -> bool:
    """Write one copy of ``win`` at ``base_ms`` a block per file, byte for byte what the line-by-line loop
    of :func:`generate` writes; False (nothing written, no random draw consumed) when the copy needs that
    loop: a damaged line in it, or lines in more than one second (a start between whole seconds).
    ``shifts``: per key of the window's marks, what this copy adds (:meth:`_Counters.shifts`)."""
    if not win.lines:
        return True
    plan = plans.get(win.name)
    if plan is None:
        plan = plans[win.name] = _CopyPlan(win)
    if plan.multiline:  # a block counts one record per line
        return False
    ms = np.floor(base_ms + plan.times).astype(np.int64)  # the loop's int((base_ms + time_ms) // 1), per line
    second = int(ms.min()) // 1000
    if int(ms.max()) // 1000 != second:
        return False
    if dmg.fraction > 0.0:  # the loop draws one number per line, and more for a damaged one
        state = dmg.rng.getstate()
        rnd, f = dmg.rng.random, dmg.fraction
        if any(rnd() < f for _ in range(len(win.lines))):
            dmg.rng.setstate(state)
            return False
    pieces = plan.pieces_for(ms - second * 1000)
    sources = plan.sources(w.fmt.second(second), bases, shifts)
    for key, idx, take, _f, _p in plan.files:
        block = pieces[key].copy()
        block[1::2] = sources[take]
        w.write_block(key[0], key[1], second * 1000, "".join(block.tolist()), len(idx))
    return True


def _write(w: LogWriter, dmg: Damage, ln: Line, t: float, text: str) -> None:
    kind = dmg.roll()
    more = text.count("\n")  # a message with newlines (a restart's KafkaConfig values): continuation lines
    if kind == 0 or (kind == 1 and more):  # only a one-line record is cut short
        w.write(ln.broker, ln.file, t, text, continuations=more)
    elif kind == 1:
        full = w.fmt(int(t // 1)) + text
        w.write_raw(ln.broker, ln.file, t, dmg.cut(full))
        if ln.file == REQUEST:
            key = _request_key(text, ln.broker)
            dmg.counts["cut_requests"][key] = dmg.counts["cut_requests"].get(key, 0) + 1
    elif kind == 2:
        w.write_raw(ln.broker, ln.file, t, dmg.garbage())
        w.write(ln.broker, ln.file, t, text, continuations=more)
    else:
        other = ln.broker + 1 if ln.broker + 1 in {k[0] for k in w.files} else 1
        _level, head, trace = dmg.stack_trace(ln.broker, other)
        w.write(ln.broker, SERVER, t, head + "\n" + "\n".join(trace), continuations=len(trace))
        w.write(ln.broker, ln.file, t, text, continuations=more)


def _request_key(text: str, broker: int):
    i = text.index('"requestApiKeyName":"') + 21 if '"requestApiKeyName":"' in text else -1
    if i >= 0:
        api = text[i : text.index('"', i)]
        j = text.index('"listener":"') + 12
        return (broker, api, text[j : text.index('"', j)])
    api = text[text.index("apiKey=") + 7 : text.index(",", text.index("apiKey="))]
    j = text.index(",listener:") + 10
    return (broker, api, text[j : text.index(",", j)])


def _imbalance(end_state: dict, brokers: int) -> dict:
    """``{broker: share of the partitions it is preferred leader of that it does not lead}`` (window start state)."""
    pref: dict = {}
    for _tp, (leader, replicas) in end_state.items():
        p = replicas[0]
        n, off = pref.get(p, (0, 0))
        pref[p] = (n + 1, off + (leader != p))
    return {b: (off / n if n else 0.0) for b, (n, off) in pref.items()}


def _record_events(win: Window, off: int, restarts: list, controllers: list, counters: _Counters) -> None:
    """The ground truth of a restart window's copy at ``off`` ms: each broker's restart (with the broker
    epoch the copy writes) and each controller change, at their times in the run (ms from its start)."""
    steps: dict = {}
    for t, ev, bid, d in win.events:
        at = off + math.floor(t)  # log4j writes whole milliseconds
        if ev in ("shutting_down", "controlled_shutdown_succeeded", "shut_down", "started"):
            steps.setdefault(bid, {"broker": bid})[f"{ev}_ms"] = at
            if ev == "started":
                steps[bid]["broker_epoch"] = counters.broker_epoch(win, bid, d)
        elif ev in ("resigned", "elected"):
            controllers.append({"time_ms": at, "controller": bid, "epoch": d["epoch"], "event": ev})
    restarts.extend(steps[b] for b in sorted(steps))


def _truth(
    windows, copies, w, files, dmg, *, hours, brokers, seed, start, sample, event_every_s, restarts, controllers
) -> dict:
    used = {k: v for k, v in copies.items() if v}
    req: dict = {}
    for name, k in used.items():
        for key, phases in windows[name].requests.items():
            req.setdefault(key, []).append((phases, k))
    requests = []
    for (b, api, lst), parts in sorted(req.items()):
        row = {"broker": b, "api": api, "listener": lst, "count": int(sum(len(p["totalTimeMs"]) * k for p, k in parts))}
        for ph in PHASES:
            vw = [(p[ph], k) for p, k in parts]
            for q in QUANTILES:
                row[f"{ph}_p{round(q * 100)}"] = weighted_quantile(vw, q)
        requests.append(row)
    # the controller's requests per broker, whatever the listener: the controller's config chose it, and it changes
    # when the controller moves (a broker's LeaderAndIsr come on INTERNAL, then on CONTROLLER)
    by_broker: dict = {}
    for (b, api, _lst), parts in req.items():
        if api in ("LEADER_AND_ISR", "UPDATE_METADATA"):
            by_broker.setdefault((b, api), []).extend(parts)
    controller_requests = []
    for (b, api), parts in sorted(by_broker.items()):
        waits = [(p["requestQueueTimeMs"], k) for p, k in parts]
        row = {
            "broker": b,
            "api": api,
            "listeners": sorted({lst for (bb, a, lst) in req if (bb, a) == (b, api)}),
            "count": int(sum(len(x) * k for x, k in waits)),
        }
        for q in QUANTILES:
            row[f"requestQueueTimeMs_p{round(q * 100)}"] = weighted_quantile(waits, q)
        row["requestQueueTimeMs_max"] = float(max(float(np.max(x)) for x, _k in waits))
        controller_requests.append(row)
    trunc: dict = {}
    for name, k in used.items():
        for key, (rec, ev, acked) in windows[name].truncations.items():
            r0, e0, a0 = trunc.get(key, (0, 0, 0))
            trunc[key] = (r0 + rec * k, e0 + ev * k, a0 + acked * k)
    stale: dict = {}
    for name, k in used.items():
        for b, _t, _p, _e, _d, ms, applied in windows[name].staleness:
            stale.setdefault(b, []).append((np.array([ms]), k, applied))
    staleness = [
        {
            "broker": b,
            "windows": int(sum(k for _, k, _a in v)),
            "never_applied": int(sum(k for _, k, a in v if not a)),
            "max_ms": float(max(float(x[0]) for x, _k, _a in v)),
            "p50_ms": weighted_quantile([(x, k) for x, k, _a in v], 0.5),
        }
        for b, v in sorted(stale.items())
    ]
    return {
        "seed": seed,
        "hours": hours,
        "event_every_s": event_every_s,
        "brokers": brokers,
        "start": start.strftime("%Y-%m-%d %H:%M:%S"),
        "controller": sample.controller.id,
        "control_plane": {
            str(b): sample.brokers[b].config.control_plane_listener is not None for b in sorted(sample.brokers)
        },
        "windows": used,
        "lines": {
            "lines_read": w.lines,
            "records": w.records,
            "continuations": w.continuations,
            "rejected": w.rejected,
        },
        "files": files,
        "bytes": w.bytes,
        "requests": requests,
        "controller_requests": controller_requests,
        "truncations": [
            {"broker": b, "topic": t, "partition": p, "records": rec, "events": ev, "acknowledged": acked}
            for (b, t, p), (rec, ev, acked) in sorted(trunc.items())
        ],
        "staleness": staleness,
        "restarts": restarts,
        "controllers": controllers,
        "damage": dmg.summary(),
    }

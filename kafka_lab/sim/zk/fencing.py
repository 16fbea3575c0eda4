"""Controller election through ZooKeeper, and fencing: a zombie controller and a broker that bounces.

A small cluster on a simpy clock, every step a ZooKeeper operation (:mod:`.zookeeper`) or a control request:

- **election** (``KafkaController.elect``, 2.8): read ``/controller``; if absent, read ``/controller_epoch``
  and send one ``multi``: create ``/controller`` (ephemeral) + setData ``/controller_epoch`` = epoch + 1 at
  the version read. ``NODEEXISTS``/``BADVERSION``: someone else won; watch ``/controller`` again.
- **the zombie** (:func:`zombie_controller`), two ways the talk describes: the controller stops (a long GC)
  in the middle of an event past ``zookeeper.session.timeout.ms`` (6000 in 2.2), another broker wins the
  election (epoch 2) and moves leadership off the paused broker, and the zombie wakes, sends what it had
  queued and tries to write its decision; or someone deletes ``/controller`` while the controller, its
  session alive, is in an event that writes a moment later.
  With ``fencing`` (2.1+; the talk says 2.2): brokers reject a lower controller epoch than they have seen
  (``STALE_CONTROLLER_EPOCH``); a write on the expired session fails ``SESSIONEXPIRED`` (1.1+ opens a
  new session only once the ``Expire`` event has run); a write with the session alive is
  ``multi(check(/controller_epoch), write)`` (KAFKA-6082) and fails ``BADVERSION``. Without: the
  brokers apply what comes, the client retries on a new session as 1.0's ZkClient did, and only the
  state znode's ``zkVersion`` condition remains ("fencing off" is every 2.1+ fence off at once, not one
  Kafka version). Kafka's controller has one event thread; the model keeps only what that means here:
  the old controller's own ``Reelect`` waits until the event in progress ends (``busy_until``).
- **the broker epoch** (KIP-380) as the zombie meets it: the zombie re-registers after its ``Expire`` event
  with a new ``czxid``, and what its channels still deliver to its own broker, meant for the previous
  incarnation, is refused (``STALE_BROKER_EPOCH``). KIP-380's own race, a broker restarted before its ``StopReplica`` is
  delivered, runs on the cluster: :func:`kafka_lab.sim.controller_fencing.broker_restart_race`.

Every request applied by a broker that had already seen a newer controller epoch, every write by a
deposed controller that ZooKeeper applied, and every request meant for a previous incarnation that was
applied counts in ``applied_stale``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import simpy

from ..common.options import (
    MAX_ELECTION_BROKER_ROUNDS,
    MAX_ELECTION_BROKERS,
    check_limit,
    check_options,
    check_seed,
)
from ..server.apis import default_costs
from .controller_scale import CALIBRATION
from .zookeeper import Check, Create, Delete, GetData, Multi, SetData, ZkError, ZooKeeper

__all__ = [
    "ElectionResult",
    "FencingResult",
    "ZOMBIE_SESSION_TIMEOUT_MS",
    "controller_election",
    "zombie_controller",
]

#: zookeeper.session.timeout.ms in the zombie experiment: 6000, the default up to Kafka 2.4
ZOMBIE_SESSION_TIMEOUT_MS = 6000

#: ``zookeeper.session.timeout.ms`` (an INT in Kafka) as the experiments take it: a whole number of ms, more than 0
_SESSION_TIMEOUT_RANGE = {"session_timeout_ms": (True, 0, True)}

RTT = CALIBRATION["zk_rtt_ms"].value
REPLY = CALIBRATION["zk_reply_ms"].value
COMMIT = CALIBRATION["zk_commit_ms"].value
NET_MS = CALIBRATION["controller_network_ms"].value  # controller → broker, one way


def _state_path(tp: str) -> str:
    topic, part = tp.rsplit("-", 1)
    return f"/brokers/topics/{topic}/partitions/{part}/state"


class _Broker:
    def __init__(self, world, bid: int):
        self.w, self.id = world, bid
        self.session = None
        self.broker_epoch = -1
        self.paused_until = 0.0
        self.known_epoch = 0
        self.leading: dict = {}  # tp -> leader epoch this broker leads at
        self.following: dict = {}  # tp -> (leader, leader epoch)
        self.stopped: set = set()  # replicas a StopReplica stopped
        self.metadata: dict = {}  # tp -> leader (its metadata cache)
        self.controller = None  # its Controller object while it is one
        self.epoch_at_apply = 0
        self.busy_until = 0.0  # its controller event thread is in an event until then

    def register(self):
        self.session = self.w.zk.open_session(self.id, self.w.session_timeout_ms, self.w.env.now)
        self.broker_epoch = self.w.zk.apply(
            Create(f"/brokers/ids/{self.id}", {"id": self.id}, ephemeral=True), self.session, self.w.env.now
        )

    def wait_awake(self):
        if self.w.env.now < self.paused_until:
            yield self.w.env.timeout(self.paused_until - self.w.env.now)

    def zk(self, op):
        """One ZooKeeper request from this broker: half a round trip there, (commit), back, the reply."""
        yield from self.wait_awake()
        yield self.w.env.timeout(RTT / 2 + (COMMIT if op.is_write else 0.0))
        try:
            out = (self.w.zk.apply(op, self.session, self.w.env.now), None)
        except ZkError as e:
            out = (None, e.code)
        self.epoch_at_apply = self.w.newest_epoch()  # the newest controller epoch when ZooKeeper applied it
        yield self.w.env.timeout(RTT / 2 + REPLY)
        return out

    # -- control requests --------------------------------------------------------------------------------
    def handle(self, req: dict):
        yield self.w.env.timeout(NET_MS)
        yield from self.wait_awake()
        cost = default_costs()[req["api"]]
        yield self.w.env.timeout(cost.base.mean_ms + cost.per_partition_ms * len(req["states"]))
        w = self.w
        stale_epoch = req["controller_epoch"] < self.known_epoch
        stale_incarnation = 0 <= req["broker_epoch"] < self.broker_epoch
        if w.fencing and stale_epoch:
            return w.record(self.id, req, "STALE_CONTROLLER_EPOCH")
        if w.broker_epoch_check and stale_incarnation:
            return w.record(self.id, req, "STALE_BROKER_EPOCH")
        self.known_epoch = max(self.known_epoch, req["controller_epoch"])
        for tp, st in req["states"].items():
            if req["api"] == "LeaderAndIsr":
                if tp in self.leading:
                    current = self.leading[tp]
                else:
                    current = self.following[tp][1] if tp in self.following else -1
                if st["leader_epoch"] <= current:
                    continue  # the partition's own fence: an equal or older leader epoch is ignored
                self.stopped.discard(tp)
                if st["leader"] == self.id:
                    self.leading[tp] = st["leader_epoch"]
                    self.following.pop(tp, None)
                else:
                    self.leading.pop(tp, None)
                    self.following[tp] = (st["leader"], st["leader_epoch"])
            elif req["api"] == "UpdateMetadata":
                self.metadata[tp] = st["leader"]
            elif req["api"] == "StopReplica":
                self.stopped.add(tp)
                self.leading.pop(tp, None)
                self.following.pop(tp, None)
        w.record(self.id, req, "NONE", stale=stale_epoch or stale_incarnation)
        return None


class _Controller:
    def __init__(self, broker: _Broker, epoch: int, epoch_version: int):
        self.b, self.w = broker, broker.w
        self.epoch, self.epoch_version = epoch, epoch_version
        self.state: dict = {}  # tp -> {"leader", "leader_epoch", "isr", "replicas", "zk_version"}
        self.live: set = set()
        self.broker_epochs: dict = {}
        self.active = True

    def write(self, tp: str, new: dict):
        """Write a partition's new state: conditional on its zkVersion, and with fencing on the epoch too."""
        st = self.state[tp]
        data = {k: new[k] for k in ("leader", "leader_epoch", "isr")} | {"controller_epoch": self.epoch}
        op = SetData(_state_path(tp), data, version=st["zk_version"])
        if self.w.fencing:
            op = Multi((Check("/controller_epoch", self.epoch_version), op))
        _result, err = yield from self.b.zk(op)
        if err is None:
            st.update(new, zk_version=st["zk_version"] + 1)
            if self.epoch < self.b.epoch_at_apply:
                self.w.stale_writes.append((self.w.env.now, self.b.id, self.epoch, tp))
            self.w.log(self.b.id, f"wrote {tp}: leader {new['leader']}, leader epoch {new['leader_epoch']}")
            return True
        self.w.log(self.b.id, f"write of {tp} failed: {err}")
        if err == "BADVERSION" and self.w.fencing:
            self.w.log(self.b.id, "Controller epoch zkVersion check fails; resigning")
            self.active = False
        return False

    def send(self, bid: int, api: str, tps, broker_epoch: int | None = None):
        if not self.active or bid not in self.w.brokers:
            return
        req = {
            "api": api,
            "controller_id": self.b.id,
            "controller_epoch": self.epoch,
            "broker_epoch": self.broker_epochs.get(bid, -1) if broker_epoch is None else broker_epoch,
            "states": {tp: dict(self.state[tp]) for tp in tps},
            "sent_ms": self.w.env.now,
        }
        self.w.channel(self.b.id, bid).append(req)
        self.w.wake(self.b.id, bid)

    def publish(self, tps, leader_and_isr=True):
        for tp in tps:
            if leader_and_isr:
                for r in self.state[tp]["replicas"]:
                    if r in self.live:
                        self.send(r, "LeaderAndIsr", [tp])
        for bid in sorted(self.live):
            self.send(bid, "UpdateMetadata", list(tps))


class _World:
    def __init__(self, brokers, partitions, *, seed, fencing=True, broker_epoch_check=True, session_timeout_ms=6000):
        self.env = simpy.Environment()
        self.zk = ZooKeeper()
        self.rng = np.random.default_rng([seed, zlib.crc32(b"fencing")])
        self.fencing, self.broker_epoch_check = fencing, broker_epoch_check
        self.session_timeout_ms = session_timeout_ms
        self.brokers = {b: _Broker(self, b) for b in brokers}
        self.partitions = partitions  # tp -> replicas
        self.events: list = []
        self.requests: list = []
        self.stale_writes: list = []
        self.elections: list = []
        self.channels: dict = {}
        self.event_busy_until = 0.0
        self.wakeups: dict = {}
        self.multi_election = True  # 2.1+ (KAFKA-6082); before, /controller alone, then the epoch
        self.zk.apply(Create("/controller_epoch", "0"))
        for tp, replicas in partitions.items():
            self.zk.apply(
                Create(
                    _state_path(tp),
                    {"leader": replicas[0], "leader_epoch": 0, "isr": list(replicas), "controller_epoch": 0},
                )
            )
        for b in self.brokers.values():
            b.register()
            for tp, replicas in partitions.items():
                b.metadata[tp] = replicas[0]
                if b.id == replicas[0]:
                    b.leading[tp] = 0
                elif b.id in replicas:
                    b.following[tp] = (replicas[0], 0)

    def expire(self):
        """ZooKeeper ends the sessions it has not heard from; awake brokers' clients ping in time."""
        for b in self.brokers.values():
            if b.session is not None and self.env.now >= b.paused_until:
                self.zk.heard_from(b.session, self.env.now)
        self.zk.expire_sessions(self.env.now)

    def log(self, who, what):
        self.events.append((self.env.now, who, what))

    def newest_epoch(self) -> int:
        return int(self.zk.znodes["/controller_epoch"].data)

    def record(self, bid, req, error, stale=False):
        self.requests.append(
            {
                "time_ms": self.env.now,
                "broker": bid,
                "api": req["api"],
                "controller_id": req["controller_id"],
                "controller_epoch": req["controller_epoch"],
                "broker_epoch": req["broker_epoch"],
                "partitions": ",".join(req["states"]),
                "error": error,
                "applied_stale": error == "NONE" and stale,
            }
        )

    def channel(self, cid, bid) -> list:
        """The controller's queue to one broker; a send thread delivers one request at a time."""
        key = (cid, bid)
        if key not in self.channels:
            q: list = []
            self.channels[key] = q
            self.env.process(self._send_thread(cid, bid, q))
        return self.channels[key]

    def wake(self, cid, bid):
        ev = self.wakeups.get((cid, bid))
        if ev is not None and not ev.triggered:
            ev.succeed()

    def _send_thread(self, cid, bid, q):
        ctl_broker = self.brokers[cid]
        while True:
            if not q:
                self.wakeups[(cid, bid)] = ev = self.env.event()
                yield ev
                continue
            yield from ctl_broker.wait_awake()
            ctl = ctl_broker.controller
            if ctl is None or not ctl.active or self.channels.get((cid, bid)) is not q:
                q.clear()  # onControllerResignation / removeBroker: the queue is dropped
                continue
            req = q.pop(0)
            yield self.env.process(self.brokers[bid].handle(req))

    # -- election and failover ------------------------------------------------------------------------
    def elect(self, b: _Broker):
        env = self.env

        def watch(path, event):
            if event == "NodeDeleted":  # ControllerChangeHandler.handleDeletion → Reelect
                env.process(self._after(b, RTT / 2, lambda: self.elect(b)))
            else:  # handleCreation / handleDataChange → ControllerChange: watch again
                self.zk.watch(path, watch, b.session)

        (_data, err) = yield from b.zk(GetData("/controller", watch=watch))
        if err is None:
            return
        if not self.multi_election:
            yield from self._elect_before_2_1(b, watch)
            return
        read, err = yield from b.zk(GetData("/controller_epoch"))
        if err is not None:
            self.log(b.id, f"cannot read /controller_epoch ({err})")
            return
        epoch, version = int(read[0]), read[1]
        ops = Multi(
            (
                Create("/controller", {"version": 1, "brokerid": b.id}, ephemeral=True),
                SetData("/controller_epoch", str(epoch + 1), version=version),
            )
        )
        out, err = yield from b.zk(ops)
        if err is not None:
            self.log(b.id, f"lost the election ({err})")
            yield from b.zk(GetData("/controller", watch=watch))
            return
        self.log(b.id, f"{b.id} successfully elected as the controller. Epoch incremented to {epoch + 1}")
        self.elections.append((env.now, b.id, epoch + 1))
        ctl = b.controller = _Controller(b, epoch + 1, out[1])
        yield from self.failover(ctl)

    def _elect_before_2_1(self, b: _Broker, watch):
        """1.0 to 2.0: create ``/controller`` alone (ZKCheckedEphemeral); the winner then reads
        ``/controller_epoch`` and bumps it conditionally in ``onControllerFailover``."""
        _czxid, err = yield from b.zk(Create("/controller", {"version": 1, "brokerid": b.id}, ephemeral=True))
        if err is not None:
            self.log(b.id, f"lost the election ({err})")
            yield from b.zk(GetData("/controller", watch=watch))
            return
        read, err = yield from b.zk(GetData("/controller_epoch"))
        epoch, version = int(read[0]), read[1]
        new_version, err = yield from b.zk(SetData("/controller_epoch", str(epoch + 1), version=version))
        if err is not None:
            self.log(b.id, f"Controller moved to another broker ({err} on /controller_epoch)")
            return
        self.log(b.id, f"{b.id} successfully elected as the controller. Epoch incremented to {epoch + 1}")
        self.elections.append((self.env.now, b.id, epoch + 1))
        ctl = b.controller = _Controller(b, epoch + 1, new_version)
        yield from self.failover(ctl)

    def _after(self, b, delay, fn):
        yield self.env.timeout(delay)
        yield from b.wait_awake()
        if self.env.now < b.busy_until:  # the event waits behind the one being processed
            yield self.env.timeout(b.busy_until - self.env.now)
        yield self.env.process(fn())

    def failover(self, ctl: _Controller):
        """onControllerFailover: read brokers and partition states, then elect leaders the dead brokers held."""
        b = ctl.b
        for bid in sorted(self.brokers):
            (data, err) = yield from b.zk(GetData(f"/brokers/ids/{bid}", watch=self._broker_watch(ctl, bid)))
            if err is None:
                ctl.live.add(bid)
                ctl.broker_epochs[bid] = self.zk.znodes[f"/brokers/ids/{bid}"].czxid
        for tp, replicas in self.partitions.items():
            (data, err) = yield from b.zk(GetData(_state_path(tp)))
            (d, version) = data
            ctl.state[tp] = {
                "leader": d["leader"],
                "leader_epoch": d["leader_epoch"],
                "isr": list(d["isr"]),
                "replicas": list(replicas),
                "zk_version": version,
            }
        yield from self.handle_dead(ctl, [x for x in self.brokers if x not in ctl.live])
        ctl.publish(list(self.partitions), leader_and_isr=False)

    def handle_dead(self, ctl, dead):
        changed = []
        for tp, st in ctl.state.items():
            if not any(d in st["replicas"] for d in dead):
                continue
            isr = [r for r in st["isr"] if r not in dead] or st["isr"][:1]
            leader = st["leader"]
            if leader in dead:
                leader = next((r for r in st["replicas"] if r in isr and r in ctl.live), -1)
            if (yield from ctl.write(tp, {"leader": leader, "leader_epoch": st["leader_epoch"] + 1, "isr": isr})):
                changed.append(tp)
        if changed:
            ctl.publish(changed)

    def _broker_watch(self, ctl, bid):
        def fired(path, event):
            self.env.process(self._broker_change(ctl, bid))

        return fired

    def _broker_change(self, ctl, bid):
        """BrokerChange for one id: gone → failure handling; back → start-up handling, with its new czxid."""
        yield self.env.timeout(RTT / 2)
        if self.env.now < self.event_busy_until:  # the event waits in the controller's queue
            yield self.env.timeout(self.event_busy_until - self.env.now)
        if not ctl.active:
            return
        (_data, err) = yield from ctl.b.zk(GetData(f"/brokers/ids/{bid}", watch=self._broker_watch(ctl, bid)))
        if err is not None:
            if bid in ctl.live:
                ctl.live.discard(bid)
                self.channels.pop((ctl.b.id, bid), None)
                self.log(ctl.b.id, f"broker {bid} failed")
                yield from self.handle_dead(ctl, [bid])
            return
        czxid = self.zk.znodes[f"/brokers/ids/{bid}"].czxid
        if bid in ctl.live:
            # nothing changed, as far as this controller can tell (a bounce, KIP-380, never happens in this world: the
            # cluster's controller handles it, sim/controller_fencing.py)
            return
        ctl.live.add(bid)
        ctl.broker_epochs[bid] = czxid
        hosted = [tp for tp, st in ctl.state.items() if bid in st["replicas"]]
        ctl.publish(list(ctl.state), leader_and_isr=False)
        for tp in hosted:
            ctl.send(bid, "LeaderAndIsr", [tp])

    # -- what everyone believes --------------------------------------------------------------------------
    def beliefs(self) -> pd.DataFrame:
        active = max((b.controller for b in self.brokers.values() if b.controller is not None), key=lambda c: c.epoch)
        rows = []
        for tp in self.partitions:
            z = self.zk.znodes[_state_path(tp)].data
            row = {"partition": tp, "zookeeper": z["leader"], f"controller {active.b.id}": active.state[tp]["leader"]}
            for bid, b in sorted(self.brokers.items()):
                role = "leader" if tp in b.leading else ("stopped" if tp in b.stopped else "follower")
                if tp not in b.leading and tp not in b.following and tp not in b.stopped:
                    role = "-"
                row[f"broker {bid}"] = f"{role}; metadata: {b.metadata.get(tp)}"
            rows.append(row)
        return pd.DataFrame(rows)


@dataclass
class FencingResult:
    """What a fencing experiment left: ``applied_stale`` and what each party believes afterwards."""

    applied_stale: int
    beliefs: pd.DataFrame  #: per partition: ZooKeeper's leader, the active controller's, each broker's
    requests: pd.DataFrame  #: every control request a broker handled, with its error
    events: pd.DataFrame  #: elections, writes, failures, in time order
    stale_writes: int = 0
    damage: dict = field(default_factory=dict)


def _result(w: _World, damage: dict) -> FencingResult:
    req = pd.DataFrame(
        w.requests,
        columns=[
            "time_ms",
            "broker",
            "api",
            "controller_id",
            "controller_epoch",
            "broker_epoch",
            "partitions",
            "error",
            "applied_stale",
        ],
    )
    stale_req = int(req["applied_stale"].sum()) if len(req) else 0
    ev = pd.DataFrame(w.events, columns=["time_ms", "broker", "event"])
    return FencingResult(stale_req + len(w.stale_writes), w.beliefs(), req, ev, len(w.stale_writes), damage)


def controller_election(
    *, brokers: int = 3, crashes: int = 0, seed: int = 0, session_timeout_ms: float = 18000, version: str = "2.8"
):
    """Every broker races to create ``/controller``; then ``crashes`` times the controller's broker dies and,
    once its session times out, the others race again. Returns each round's winner and epoch.

    ``version`` "2.8" (2.1+): one multi, create ``/controller`` + set ``/controller_epoch``; "1.0" or "1.1":
    the create alone, then the winner's conditional update of ``/controller_epoch``. ``session_timeout_ms``
    (``zookeeper.session.timeout.ms``, 18000 from 2.5) is a whole number more than 0.
    """
    if version not in ("1.0", "1.1", "2.8"):
        raise ValueError(f"version must be one of ('1.0', '1.1', '2.8'), got {version!r}")
    check_options({"session_timeout_ms": session_timeout_ms}, _SESSION_TIMEOUT_RANGE)
    check_seed(seed)
    if isinstance(brokers, bool) or not isinstance(brokers, int) or brokers < 1:
        raise ValueError(f"brokers must be a positive int, got {brokers!r}")
    if isinstance(crashes, bool) or not isinstance(crashes, int) or not 0 <= crashes < brokers:
        raise ValueError(f"crashes must be an int from 0 to brokers - 1 = {brokers - 1}, got {crashes!r}")
    check_limit(
        "brokers", brokers, MAX_ELECTION_BROKERS, "10,000 brokers racing once took 3 s on the project's machine"
    )
    check_limit(
        "brokers x (crashes + 1)",
        brokers * (crashes + 1),
        MAX_ELECTION_BROKER_ROUNDS,
        "every round is a race of every live broker: at the limit, 1,000 brokers x 100 rounds took 37 s and "
        "10,000 x 10 took 21 s on the project's machine",
    )
    w = _World(range(1, brokers + 1), {}, seed=seed, session_timeout_ms=session_timeout_ms)
    w.multi_election = version == "2.8"
    for b in w.brokers.values():  # they start within 0.2 ms of each other: the order decides the race
        w.env.process(w._after(b, float(w.rng.uniform(0, 0.2)), lambda b=b: w.elect(b)))

    def crash_loop():
        for _ in range(crashes):
            yield w.env.timeout(1000)
            winner = w.brokers[w.elections[-1][1]]
            w.log(winner.id, "crashed")
            winner.paused_until = float("inf")
            winner.controller.active = False
            yield w.env.timeout(session_timeout_ms)
            w.expire()
            yield w.env.timeout(100)

    w.env.process(crash_loop())
    w.env.run(until=1000 + crashes * (session_timeout_ms + 1200) + 1000)
    zk = pd.DataFrame(w.zk.applied, columns=["time_ms", "session", "op", "path", "result"])
    owner = {sid: s.owner for sid, s in w.zk.sessions.items()}
    zk.insert(2, "broker", zk["session"].map(owner).astype("Int64"))  # the setup's writes have no session
    return ElectionResult(
        pd.DataFrame(w.elections, columns=["time_ms", "controller", "epoch"]),
        pd.DataFrame(w.events, columns=["time_ms", "broker", "event"]),
        zk,
    )


@dataclass
class ElectionResult:
    elections: pd.DataFrame  #: time, winner, epoch (one row per round)
    events: pd.DataFrame
    zookeeper: pd.DataFrame  #: every operation ZooKeeper applied, with its result (OK, NODEEXISTS, ...)


ZOMBIE_PARTITIONS = {
    "orders-0": [1, 2],
    "orders-1": [2, 3],
    "orders-2": [3, 1],
    "orders-3": [1, 3],
    "orders-4": [2, 1],
    "orders-5": [3, 2],
}


ZOMBIE_CAUSES = ("gc_pause", "znode_deleted")

#: what :func:`zombie_controller`'s times accept, when given: (whole number?, least value, excluded?)
#: (:func:`~kafka_lab.sim.common.options.check_options`); ``pause_at_ms`` comes after the first election (at most 50 ms)
_ZOMBIE_RANGES = {
    "pause_ms": (False, 0, False),
    "reconnect_ms": (False, 0, False),
    "pause_at_ms": (False, 50, False),
    "event_lag_ms": (False, 0, False),
    **_SESSION_TIMEOUT_RANGE,
}


def zombie_controller(
    *,
    fencing: bool,
    seed: int = 0,
    cause: str = "gc_pause",
    pause_ms: float | None = None,
    reconnect_ms: float | None = None,
    pause_at_ms: float | None = None,
    event_lag_ms: float | None = None,
    session_timeout_ms: float = ZOMBIE_SESSION_TIMEOUT_MS,
):
    """A deposed controller that still acts, for one of two causes, with fencing on (2.1+) or off.

    - ``cause="gc_pause"``: the controller stops (a GC) mid-event for ``pause_ms`` (default 1.05 to 2
      session timeouts, drawn from ``seed``); past the session timeout ZooKeeper ends its session and
      another broker is elected. On waking, its send threads deliver what was queued. With fencing its
      controller thread's write goes out on the expired session and fails ``SESSIONEXPIRED``: since 1.1
      a new session is opened only after the ``Expire`` event has cleared the queue
      (``KafkaController``'s ``beforeInitializingSession``). Without, as 1.0's ZkClient did, the client
      reconnects with a new session after ``reconnect_ms`` (default 1 to 30 ms) and retries the write,
      conditioned only on the state znode's zkVersion.
    - ``cause="znode_deleted"``: someone deletes ``/controller`` while the controller is in an event that
      will write ``event_lag_ms`` later (default 5 to 50 ms); its session is alive. The others elect a new
      controller at once. With fencing the write is ``multi(check(/controller_epoch), write)`` (KAFKA-6082,
      2.1+) and fails ``BADVERSION``; without, it lands.

    In both, brokers with fencing refuse requests of a lower controller epoch than they have seen.
    ``pause_at_ms`` (default 50 to 100) is when it happens.

    What the times accept, when given (:data:`_ZOMBIE_RANGES`): ``pause_ms``, ``reconnect_ms`` and
    ``event_lag_ms`` at least 0, ``pause_at_ms`` at least 50 (after the first election),
    ``session_timeout_ms`` a whole number more than 0; each a finite number (NaN and infinities are refused).
    """
    if not isinstance(fencing, bool):
        raise TypeError(f"fencing must be True or False, got {fencing!r}")
    check_seed(seed)
    if cause not in ZOMBIE_CAUSES:
        raise ValueError(f"cause must be one of {ZOMBIE_CAUSES}, got {cause!r}")
    given = {
        "pause_ms": pause_ms,
        "reconnect_ms": reconnect_ms,
        "pause_at_ms": pause_at_ms,
        "event_lag_ms": event_lag_ms,
        "session_timeout_ms": session_timeout_ms,
    }
    check_options({k: v for k, v in given.items() if v is not None}, _ZOMBIE_RANGES)
    w = _World(
        [1, 2, 3],
        ZOMBIE_PARTITIONS,
        seed=seed,
        fencing=fencing,
        broker_epoch_check=fencing,
        session_timeout_ms=session_timeout_ms,
    )
    rng = w.rng
    pause = float(rng.uniform(1.05, 2.0) * session_timeout_ms) if pause_ms is None else float(pause_ms)
    reconnect = float(rng.uniform(1, 30)) if reconnect_ms is None else float(reconnect_ms)
    pause_at = float(rng.uniform(50, 100)) if pause_at_ms is None else float(pause_at_ms)
    lag = float(rng.uniform(5, 50)) if event_lag_ms is None else float(event_lag_ms)
    if cause == "znode_deleted":
        pause = 0.0
    env = w.env
    w.env.process(w._after(w.brokers[1], 0.0, lambda: w.elect(w.brokers[1])))
    for b in (2, 3):
        w.env.process(w._after(w.brokers[b], 1.0, lambda b=b: w.elect(w.brokers[b])))

    def script():
        yield env.timeout(pause_at)
        z = w.brokers[w.elections[0][1]]
        zc = z.controller
        # mid-event: UpdateMetadata queued to everyone, one leader move decided but not yet written
        target = next(tp for tp, r in ZOMBIE_PARTITIONS.items() if z.id not in r)
        st = zc.state[target]
        move = {"leader": st["replicas"][1], "leader_epoch": st["leader_epoch"] + 1, "isr": list(st["isr"])}
        if cause == "znode_deleted":
            zc.publish(list(ZOMBIE_PARTITIONS), leader_and_isr=False)
            z.busy_until = env.now + lag + 2 * (RTT + COMMIT + REPLY)  # its Reelect waits behind this event
            w.zk.apply(Delete("/controller"), None, env.now)
            w.log("admin", "deleted /controller; the controller's session is alive")
            yield env.timeout(lag)
            if (yield from zc.write(target, move)):
                zc.publish([target])
            yield env.timeout(RTT + REPLY)  # its Reelect event reads /controller, then resigns
            zc.active = False
            w.log(z.id, "processed Reelect: resigned")
            return
        z.paused_until = pause_at + pause
        zc.publish(list(ZOMBIE_PARTITIONS), leader_and_isr=False)  # queued; the send threads are paused too
        w.log(z.id, f"paused (GC) for {pause:.0f} ms")
        if pause >= session_timeout_ms:
            yield env.timeout(session_timeout_ms)
            w.log(z.id, "session expired at ZooKeeper")
            w.expire()
        yield from z.wait_awake()
        w.log(z.id, "woke up; its send threads deliver what was queued")
        if z.session.alive:
            if (yield from zc.write(target, move)):
                zc.publish([target])
            return
        if fencing:
            # 1.1+: the write goes out on the expired session; the Expire event comes after this one
            yield from zc.write(target, move)
            yield env.timeout(reconnect)
        else:
            # 1.0's ZkClient: reconnect with a new session and retry the write on it
            yield env.timeout(reconnect)
            z.session = w.zk.open_session(z.id, session_timeout_ms, env.now)
            w.log(z.id, "ZkClient reconnected with a new session and retries the write")
            if (yield from zc.write(target, move)):
                zc.publish([target])
            yield env.timeout(RTT + REPLY)  # the Expire event, next: each send thread has one request out
        zc.active = False
        z.session = w.zk.open_session(z.id, session_timeout_ms, env.now)
        z.broker_epoch = w.zk.apply(Create(f"/brokers/ids/{z.id}", {"id": z.id}, ephemeral=True), z.session, env.now)
        w.log(z.id, f"Expire: resigned; new session, re-registered as a broker (broker epoch {z.broker_epoch})")

    env.process(script())
    env.run(until=pause_at + pause + reconnect + lag + 2000)
    b = w.beliefs()
    damage = _damage(w, b)
    return _result(w, damage)


def _damage(w: _World, beliefs: pd.DataFrame) -> dict:
    """Where the parties disagree at the end: the active controller against ZooKeeper, leaders believed,
    and metadata caches that name a broker that does not lead."""
    ctl_col = next(c for c in beliefs.columns if c.startswith("controller"))
    active = dict(zip(beliefs["partition"], beliefs[ctl_col], strict=True))
    two, wrong = 0, 0
    for tp in w.partitions:
        believed = {b.id for b in w.brokers.values() if tp in b.leading} | {active[tp]}
        two += len(believed) > 1
        leaders = {b.id for b in w.brokers.values() if tp in b.leading}
        wrong += any(b.metadata.get(tp) not in leaders for b in w.brokers.values())
    return {
        "controller_vs_zookeeper": int((beliefs["zookeeper"] != beliefs[ctl_col]).sum()),
        "two_leaders_believed": two,
        "metadata_names_a_non_leader": wrong,
    }

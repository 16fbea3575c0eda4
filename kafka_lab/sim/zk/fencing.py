"""Controller election through ZooKeeper: every broker races to create ``/controller``.

A small cluster on a simpy clock, every step a ZooKeeper operation (:mod:`.zookeeper`):

- **election** (``KafkaController.elect``, 2.8): read ``/controller``; if absent, read ``/controller_epoch``
  and send one ``multi``: create ``/controller`` (ephemeral) + setData ``/controller_epoch`` = epoch + 1 at
  the version read. ``NODEEXISTS``/``BADVERSION``: someone else won; watch ``/controller`` again. Before
  2.1 the create alone, then the winner's conditional update of ``/controller_epoch``;
- **failover**: the winner reads every registration ``/brokers/ids/<id>`` (and watches it); when a
  controller's broker dies, its session expires after ``zookeeper.session.timeout.ms`` and ``/controller``
  with it, and the others race again.

The zombie controller and KIP-380's bounce run on the cluster (:mod:`kafka_lab.sim.controller_fencing`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

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
from .controller_scale import CALIBRATION
from .zookeeper import Create, GetData, Multi, SetData, ZkError, ZooKeeper

__all__ = ["ElectionResult", "controller_election"]

#: ``zookeeper.session.timeout.ms`` (an INT in Kafka) as the experiments take it: a whole number of ms, more than 0
_SESSION_TIMEOUT_RANGE = {"session_timeout_ms": (True, 0, True)}

RTT = CALIBRATION["zk_rtt_ms"].value
REPLY = CALIBRATION["zk_reply_ms"].value
COMMIT = CALIBRATION["zk_commit_ms"].value


class _Broker:
    def __init__(self, world, bid: int):
        self.w, self.id = world, bid
        self.session = None
        self.paused_until = 0.0
        self.controller = None  # its Controller object while it is one

    def register(self):
        self.session = self.w.zk.open_session(self.id, self.w.session_timeout_ms, self.w.env.now)
        self.w.zk.apply(
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
        yield self.w.env.timeout(RTT / 2 + REPLY)
        return out


class _Controller:
    def __init__(self, broker: _Broker, epoch: int, epoch_version: int):
        self.b, self.w = broker, broker.w
        self.epoch, self.epoch_version = epoch, epoch_version
        self.live: set = set()
        self.active = True


class _World:
    def __init__(self, brokers, *, seed, session_timeout_ms=6000):
        self.env = simpy.Environment()
        self.zk = ZooKeeper()
        self.rng = np.random.default_rng([seed, zlib.crc32(b"fencing")])
        self.session_timeout_ms = session_timeout_ms
        self.brokers = {b: _Broker(self, b) for b in brokers}
        self.events: list = []
        self.elections: list = []
        self.multi_election = True  # 2.1+ (KAFKA-6082); before, /controller alone, then the epoch
        self.zk.apply(Create("/controller_epoch", "0"))
        for b in self.brokers.values():
            b.register()

    def expire(self):
        """ZooKeeper ends the sessions it has not heard from; awake brokers' clients ping in time."""
        for b in self.brokers.values():
            if b.session is not None and self.env.now >= b.paused_until:
                self.zk.heard_from(b.session, self.env.now)
        self.zk.expire_sessions(self.env.now)

    def log(self, who, what):
        self.events.append((self.env.now, who, what))

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
        yield self.env.process(fn())

    def failover(self, ctl: _Controller):
        """onControllerFailover, as far as the election needs it: read (and watch) every broker's registration."""
        b = ctl.b
        for bid in sorted(self.brokers):
            (_data, err) = yield from b.zk(GetData(f"/brokers/ids/{bid}", watch=self._broker_watch(ctl, bid)))
            if err is None:
                ctl.live.add(bid)

    def _broker_watch(self, ctl, bid):
        def fired(path, event):
            self.env.process(self._broker_change(ctl, bid))

        return fired

    def _broker_change(self, ctl, bid):
        """BrokerChange for one id: a registration gone is a failed broker."""
        yield self.env.timeout(RTT / 2)
        if not ctl.active:
            return
        (_data, err) = yield from ctl.b.zk(GetData(f"/brokers/ids/{bid}", watch=self._broker_watch(ctl, bid)))
        if err is not None and bid in ctl.live:
            ctl.live.discard(bid)
            self.log(ctl.b.id, f"broker {bid} failed")
        elif err is None:
            ctl.live.add(bid)


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
    w = _World(range(1, brokers + 1), seed=seed, session_timeout_ms=session_timeout_ms)
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

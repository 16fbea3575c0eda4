"""Lab 07's controller election, on the cluster's own controller and ZooKeeper (Kafka 2.8, ZooKeeper mode).

:func:`controller_election` starts a :class:`~kafka_lab.sim.cluster.Cluster` with no controller: every broker
runs ``KafkaController.startup`` within 0.2 ms of the others and races for ``/controller`` through the cluster's
ZooKeeper data tree (:attr:`~kafka_lab.sim.cluster.Cluster.zk`), as
:meth:`~kafka_lab.sim.zk.controller.Controller._elect` does it (``KafkaController.elect``,
``KafkaZkClient.registerControllerAndIncrementControllerEpoch``):

- read ``/controller``: there, someone won (stop); read ``/controller_epoch`` and its zkVersion;
- one ``multi`` (2.1+, KAFKA-6082): create ``/controller``, ephemeral, in the broker's session, and set
  ``/controller_epoch`` to epoch + 1 at the zkVersion read. ZooKeeper applies the brokers' multis one after the
  other: the first wins, every later one fails ``NODEEXISTS`` (or ``BADVERSION`` on the epoch); the loser reads
  ``/controller`` again, finds another broker's id and gives up (``ControllerMovedException``, ``maybeResign``);
- before 2.1 (``version="1.0"`` or ``"1.1"``): the create alone, then the winner's conditional write of the epoch.

Then ``crashes`` times the controller's broker crashes (:meth:`~kafka_lab.sim.cluster.Cluster.crash`): its session,
and ``/controller`` with it, ends ``zookeeper.session.timeout.ms`` later, the watch on ``/controller`` fires on
every broker still running, and they race again. Every request takes the calibrated ZooKeeper round trip and reply
(:data:`~kafka_lab.sim.zk.controller_scale.CALIBRATION`, 0.275 ms; a write's quorum commit is left out), and a
broker's ``Reelect`` starts up to one such round trip after its watch fired.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .cluster import Cluster
from .common.options import (
    MAX_ELECTION_BROKER_ROUNDS,
    MAX_ELECTION_BROKERS,
    check_limit,
    check_options,
    check_seed,
)
from .zk.controller_scale import CALIBRATION, VERSIONS

__all__ = ["ElectionResult", "ELECTION_VERSIONS", "controller_election"]

#: the versions :func:`controller_election` takes (lab 07's): "2.8" elects with one multi (2.1+), "1.0" and "1.1" without
ELECTION_VERSIONS = VERSIONS

#: ``zookeeper.session.timeout.ms`` (an INT in Kafka) as the experiment takes it: a whole number of ms, more than 0
_SESSION_TIMEOUT_RANGE = {"session_timeout_ms": (True, 0, True)}

#: one ZooKeeper request, there and back, its reply handled: the calibrated round trip and reply
ZK_REQUEST_MS = CALIBRATION["zk_rtt_ms"].value + CALIBRATION["zk_reply_ms"].value

#: the first crash comes this long after the start; each next one this long after the previous expiry
_CRASH_AFTER_MS = 1000.0
#: after a crash's session expiry, what the run waits before the next crash's second
_AFTER_EXPIRY_MS = 100.0


@dataclass
class ElectionResult:
    elections: pd.DataFrame  #: time, winner, epoch (one row per round)
    events: pd.DataFrame  #: every broker's part in every election, the crashes and the session expiries
    zookeeper: pd.DataFrame  #: every operation ZooKeeper applied, with its result (OK, NODEEXISTS, ...)


def controller_election(
    *, brokers: int = 3, crashes: int = 0, seed: int = 0, session_timeout_ms: float = 18000, version: str = "2.8"
):
    """Every broker races to create ``/controller``; then ``crashes`` times the controller's broker crashes and,
    once its session times out, the others race again. Returns each round's winner and epoch (see the module).

    ``version`` "2.8" (2.1+): one multi, create ``/controller`` + set ``/controller_epoch``; "1.0" or "1.1": the
    create alone, then the winner's conditional update of ``/controller_epoch``. ``session_timeout_ms``
    (``zookeeper.session.timeout.ms``, 18000 from 2.5) is a whole number more than 0.
    """
    if version not in ELECTION_VERSIONS:
        raise ValueError(f"version must be one of {ELECTION_VERSIONS}, got {version!r}")
    check_options({"session_timeout_ms": session_timeout_ms}, _SESSION_TIMEOUT_RANGE)
    check_seed(seed)
    if isinstance(brokers, bool) or not isinstance(brokers, int) or brokers < 1:
        raise ValueError(f"brokers must be a positive int, got {brokers!r}")
    if isinstance(crashes, bool) or not isinstance(crashes, int) or not 0 <= crashes < brokers:
        raise ValueError(f"crashes must be an int from 0 to brokers - 1 = {brokers - 1}, got {crashes!r}")
    check_limit("brokers", brokers, MAX_ELECTION_BROKERS, ELECTION_BROKERS_WHY)
    check_limit("brokers x (crashes + 1)", brokers * (crashes + 1), MAX_ELECTION_BROKER_ROUNDS, ELECTION_ROUNDS_WHY)
    c = Cluster(
        brokers,
        seed=seed,
        zk_latency_ms=ZK_REQUEST_MS,
        broker_overrides={"zookeeper.session.timeout.ms": int(session_timeout_ms)},
    )
    ctl = c.controller
    ctl.election_multi = version == "2.8"
    ctl.startup_election(c.rng("controller-election"))
    t = 0.0
    for _ in range(crashes):
        t += _CRASH_AFTER_MS
        c.run(t)
        c.crash(ctl.id, at_ms=t)
        t += session_timeout_ms + _AFTER_EXPIRY_MS
        c.run(t)
    c.run(t + 2 * _CRASH_AFTER_MS)
    return ElectionResult(_elections(c), _events(c), _zookeeper(c))


#: why :data:`~kafka_lab.sim.common.options.MAX_ELECTION_BROKERS`, in the message
ELECTION_BROKERS_WHY = "the cluster's own limit: Kafka's broker ids stop at reserved.broker.max.id, 1000 by default"
#: why :data:`~kafka_lab.sim.common.options.MAX_ELECTION_BROKER_ROUNDS`, in the message
ELECTION_ROUNDS_WHY = (
    "every round is a race of every live broker, and the cluster runs a session timeout between rounds: 100 brokers "
    "x 100 rounds took 11 s, 1,000 x 10 took 10 s on the project's machine"
)


def _elections(c) -> pd.DataFrame:
    rows = [(t, bid, d["epoch"]) for t, bid, outcome, d in c.controller.election_log if outcome == "elected"]
    return pd.DataFrame(rows, columns=["time_ms", "controller", "epoch"])


def _events(c) -> pd.DataFrame:
    """Each broker's part in each election, as Kafka's controller logs it, and its crash and session expiry."""
    rows = []
    for t, bid, outcome, d in c.controller.election_log:
        if outcome == "elected":
            text = (
                f"{bid} successfully elected as the controller. Epoch incremented to {d['epoch']} and epoch zk "
                f"version is now {d['epoch_zk_version']}"
            )
        elif outcome == "controller_exists":
            holder = d.get("controller")
            text = (
                f"Broker {holder} has been elected as the controller, so stopping the election process"
                if holder is not None
                else f"lost the election ({d['error']} on /controller)"
            )
        else:
            text = f"lost the election ({d['error']}): broker {d['controller']} was elected as controller instead"
        rows.append((t, bid, text))
    for bid, b in sorted(c.brokers.items()):
        for t, ev, _d in b.lifecycle:
            if ev in ("crashed", "session_expired"):
                rows.append((t, bid, ev))
    ev = pd.DataFrame(rows, columns=["time_ms", "broker", "event"])
    return ev.sort_values("time_ms", kind="stable").reset_index(drop=True)


def _zookeeper(c) -> pd.DataFrame:
    zk = pd.DataFrame(c.zk.applied, columns=["time_ms", "session", "op", "path", "result"])
    owner = {sid: s.owner for sid, s in c.zk.sessions.items()}
    zk.insert(2, "broker", zk["session"].map(owner).astype("Int64"))  # the setup's writes have no session
    return zk

"""ZooKeeper as Kafka's controller uses it: znodes with versions, sessions, watches, conditional writes.

The data tree (:class:`ZooKeeper`) applies one operation at a time, in the order they reach the server,
as a ZooKeeper ensemble does:

- every znode has ``data``, a ``version`` (``Stat.version``, bumped by every setData: Kafka's
  ``zkVersion``), the ``czxid`` of the transaction that created it (KIP-380's broker epoch is the czxid of
  ``/brokers/ids/<id>``) and, when ephemeral, the session that owns it;
- ``create`` fails ``NODEEXISTS``, ``setData``/``delete`` with an expected version fail ``BADVERSION``
  when the znode's version differs (``-1`` matches any), a missing znode is ``NONODE``;
- ``multi`` applies all its operations or none (the first failure's code is the answer): Kafka 2.1+
  (KAFKA-6082) sends every controller write as ``multi(check(/controller_epoch, version), write)``;
- a session ends when the server has not heard from its client for ``session_timeout_ms``
  (:meth:`ZooKeeper.expire_sessions`) or on a clean close; its ephemeral znodes go at once, and
  the watches set on them fire (one-shot, as ZooKeeper's).

Timing (:class:`ZooKeeperClient`, on a simpy clock): a request reaches the server after half the
round trip ``rtt_ms`` (writes then wait ``commit_ms`` for the quorum), its reply comes back after the
other half, and the client's single event thread (``ClientCnxn.EventThread``) spends ``reply_ms`` on each
reply. ZooKeeper answers a session's requests in the order they were sent, so replies are handled in that order. A *serial* client (Kafka 1.0's ZkClient) waits for each reply before it sends the next;
a *pipelined* one (1.1+'s ``ZooKeeperClient.handleRequests``) keeps up to
``zookeeper.max.in.flight.requests`` (10) in flight and frees a slot when a reply has been handled.

:func:`pipeline_completions` computes the same completion times for many requests at once (arrays; the
scale model uses it) and :func:`pipeline_time` is its closed form for constant latencies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Check",
    "Create",
    "Delete",
    "GetData",
    "SetData",
    "ZkError",
    "ZooKeeper",
    "ZooKeeperClient",
    "Znode",
    "pipeline_completions",
    "pipeline_time",
]

#: ZooKeeper's error codes (KeeperException.Code) that the controller meets
ZK_ERRORS = {
    "NODEEXISTS": "NodeExists",
    "NONODE": "NoNode",
    "BADVERSION": "BadVersion",
    "SESSIONEXPIRED": "Session expired",
}


class ZkError(Exception):
    """A failed ZooKeeper operation; ``code`` is ZooKeeper's (``NODEEXISTS``, ``BADVERSION``, ...)."""

    def __init__(self, code: str, path: str):
        if code not in ZK_ERRORS:
            raise ValueError(f"unknown ZooKeeper error {code!r}; known: {sorted(ZK_ERRORS)}")
        # KeeperException's message, e.g. "KeeperErrorCode = BadVersion for /controller_epoch"
        super().__init__(f"KeeperErrorCode = {ZK_ERRORS[code]} for {path}")
        self.code = code
        self.path = path


@dataclass
class Znode:
    data: object
    version: int = 0
    czxid: int = 0
    mzxid: int = 0
    ephemeral_owner: int | None = None


# -- operations -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Create:
    path: str
    data: object = None
    ephemeral: bool = False
    is_write = True


@dataclass(frozen=True)
class GetData:
    path: str
    watch: object = None  #: a callable(path, event) set as a one-shot watch (also when the znode is absent)
    is_write = False


@dataclass(frozen=True)
class SetData:
    path: str
    data: object
    version: int = -1
    is_write = True


@dataclass(frozen=True)
class Delete:
    path: str
    version: int = -1
    is_write = True


@dataclass(frozen=True)
class Check:
    path: str
    version: int
    is_write = True


@dataclass(frozen=True)
class Multi:
    ops: tuple
    is_write = True


@dataclass
class Session:
    id: int
    owner: object
    timeout_ms: float
    last_heard_ms: float
    alive: bool = True


@dataclass
class ZooKeeper:
    """The ensemble's data tree, sessions and watches (applied in arrival order; no clock of its own)."""

    znodes: dict = field(default_factory=dict)
    sessions: dict = field(default_factory=dict)
    watches: dict = field(default_factory=dict)  # path -> {watcher key: callback(path, event)}
    zxid: int = 0
    applied: list = field(default_factory=list)  # (time, session id, op name, path, result or error code)

    # -- sessions ------------------------------------------------------------------------------------
    def open_session(self, owner, timeout_ms: float, now: float = 0.0) -> Session:
        if timeout_ms <= 0:
            raise ValueError(f"zookeeper.session.timeout.ms must be > 0, got {timeout_ms}")
        s = Session(len(self.sessions) + 1, owner, float(timeout_ms), now)
        self.sessions[s.id] = s
        return s

    def heard_from(self, session: Session, now: float) -> None:
        """A ping or request from the session's client (ZooKeeper resets the session's expiry)."""
        if session.alive:
            session.last_heard_ms = max(session.last_heard_ms, now)

    def expire_sessions(self, now: float) -> list[Session]:
        """End every session not heard from for its timeout: its ephemeral znodes go, their watches fire."""
        gone = [s for s in self.sessions.values() if s.alive and now - s.last_heard_ms >= s.timeout_ms]
        for s in gone:
            self.close_session(s, now)
        return gone

    def close_session(self, session: Session, now: float) -> None:
        session.alive = False
        for watchers in self.watches.values():  # its watches go with it: it is told nothing more
            watchers.pop(session.id, None)
        for path in [p for p, z in self.znodes.items() if z.ephemeral_owner == session.id]:
            del self.znodes[path]
            self._fire(path, "NodeDeleted")

    def watch(self, path: str, callback, session: Session | None = None) -> None:
        """Set a one-shot watch; one per client and path, as ZooKeeper keeps them (a second replaces the first)."""
        key = session.id if session is not None else id(callback)
        self.watches.setdefault(path, {})[key] = callback

    def _fire(self, path: str, event: str) -> None:
        for cb in self.watches.pop(path, {}).values():
            cb(path, event)

    # -- operations ----------------------------------------------------------------------------------
    def apply(self, op, session: Session | None = None, now: float = 0.0):
        """Apply ``op`` as the server does; returns its result or raises :class:`ZkError`."""
        if session is not None:
            if not session.alive:
                raise ZkError("SESSIONEXPIRED", getattr(op, "path", "/"))
            self.heard_from(session, now)
        try:
            result = self._apply(op, session)
        except ZkError as e:
            self.applied.append((now, session.id if session else None, type(op).__name__, _path(op), e.code))
            raise
        self.applied.append((now, session.id if session else None, type(op).__name__, _path(op), "OK"))
        return result

    def _apply(self, op, session):
        self._session = session
        if isinstance(op, Multi):
            self._validate(op.ops)
            return [self._do(o, session) for o in op.ops]
        self._validate((op,))
        return self._do(op, session)

    def _validate(self, ops) -> None:
        """Check every operation against the tree as it would be after the ones before it (all or none)."""
        exists = {}

        def present(path):
            return exists.get(path, path in self.znodes)

        for o in ops:
            if isinstance(o, GetData):
                continue
            if isinstance(o, Create):
                if present(o.path):
                    raise ZkError("NODEEXISTS", o.path)
                exists[o.path] = True
                continue
            if not present(o.path):
                raise ZkError("NONODE", o.path)
            if o.version != -1 and o.path in self.znodes and self.znodes[o.path].version != o.version:
                raise ZkError("BADVERSION", o.path)
            if isinstance(o, Delete):
                exists[o.path] = False

    def _do(self, op, session):
        if isinstance(op, Check):
            return self.znodes[op.path].version
        if isinstance(op, GetData):
            if op.watch is not None:  # like exists(watch): set whether or not the znode is there
                self.watch(op.path, op.watch, self._session)
            z = self.znodes.get(op.path)
            if z is None:
                raise ZkError("NONODE", op.path)
            return z.data, z.version
        self.zxid += 1
        if isinstance(op, Create):
            owner = None
            if op.ephemeral:
                if session is None:
                    raise ValueError("an ephemeral znode needs a session")
                owner = session.id
            self.znodes[op.path] = Znode(op.data, 0, self.zxid, self.zxid, owner)
            self._fire(op.path, "NodeCreated")
            return self.zxid  # the czxid
        if isinstance(op, SetData):
            z = self.znodes[op.path]
            z.data, z.version, z.mzxid = op.data, z.version + 1, self.zxid
            self._fire(op.path, "NodeDataChanged")
            return z.version
        if isinstance(op, Delete):
            del self.znodes[op.path]
            self._fire(op.path, "NodeDeleted")
            return None
        raise TypeError(f"not a ZooKeeper operation: {op!r}")


def _path(op) -> str:
    if isinstance(op, Multi):
        return ",".join(_path(o) for o in op.ops)
    return op.path


class ZooKeeperClient:
    """One broker's ZooKeeper client on a simpy clock: serial (``max_in_flight=1``, 1.0's ZkClient) or
    pipelined (``zookeeper.max.in.flight.requests``, 10, 1.1+)."""

    def __init__(
        self,
        env,
        zk: ZooKeeper,
        session: Session,
        *,
        rtt_ms: float,
        reply_ms: float,
        commit_ms: float = 0.0,
        max_in_flight: int = 10,
    ):
        if max_in_flight < 1:
            raise ValueError(f"zookeeper.max.in.flight.requests must be >= 1, got {max_in_flight}")
        if min(rtt_ms, reply_ms, commit_ms) < 0:
            raise ValueError("ZooKeeper latencies must be >= 0")
        import simpy

        self.env = env
        self.zk = zk
        self.session = session
        self.rtt_ms, self.reply_ms, self.commit_ms = rtt_ms, reply_ms, commit_ms
        self.slots = simpy.Resource(env, capacity=max_in_flight)
        self._last_handled = env.event().succeed()
        self.paused_until = 0.0

    def latency(self, op) -> float:
        return self.rtt_ms + (self.commit_ms if op.is_write else 0.0)

    def request(self, op):
        """A simpy process: send ``op`` when a slot is free; its value is ``(result, error code or None)``."""
        return self.env.process(self._request(op))

    def _request(self, op):
        before, handled = self._last_handled, self.env.event()
        self._last_handled = handled
        with self.slots.request() as slot:
            yield slot
            if self.env.now < self.paused_until:
                yield self.env.timeout(self.paused_until - self.env.now)
            yield self.env.timeout(self.latency(op) - self.rtt_ms / 2)
            try:
                out = (self.zk.apply(op, self.session, self.env.now), None)
            except ZkError as e:
                out = (None, e.code)
            yield self.env.timeout(self.rtt_ms / 2)
            # one TCP connection: replies come back, and are handled, in the order the requests were sent
            if not before.triggered:
                yield before
            yield self.env.timeout(self.reply_ms)
            handled.succeed()
            return out

    def handle_requests(self, ops):
        """``ZooKeeperClient.handleRequests``: send them all (as slots allow), wait for every reply."""

        def run():
            procs = [self.request(op) for op in ops]
            results = yield self.env.all_of(procs)
            return [results[p] for p in procs]

        return self.env.process(run())


# -- many requests at once ----------------------------------------------------------------------------------
def pipeline_completions(latencies, reply_ms: float, max_in_flight: int, start_ms: float = 0.0) -> np.ndarray:
    """When each of many requests, sent in order through one client, has had its reply handled.

    Request ``i`` is sent when slot ``i - max_in_flight`` frees (at once for the first ones), its reply
    arrives ``latencies[i]`` later, and the one event thread handles replies in order, ``reply_ms`` each:
    ``done[i] = max(sent[i] + latencies[i], done[i-1]) + reply_ms``. The same rule as
    :class:`ZooKeeperClient`, on arrays (a window of requests at a time).
    """
    lat = np.asarray(latencies, dtype=float)
    n, w = lat.size, int(max_in_flight)
    if w < 1:
        raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
    done = np.empty(n)
    if n == 0:
        return done
    if w == 1:  # serial: each waits for the previous one's reply to be handled
        return start_ms + np.cumsum(lat + reply_ms)
    if w < _NUMPY_WINDOW:  # small windows (ZooKeeper's default is 10): the recurrence as it reads, in Python
        return np.array(_completions(lat.tolist(), reply_ms, w, start_ms))
    prev = start_ms
    k = np.arange(1, w + 1) * reply_ms
    for b in range(0, n, w):
        sent = np.full(min(w, n - b), start_ms) if b == 0 else done[b - w : b - w + min(w, n - b)]
        arrive = sent + lat[b : b + w]
        m = arrive.size
        # done_j = max(arrive_j + reply, done_{j-1} + reply): a running max of arrive_i - i·reply
        run = np.maximum.accumulate(arrive - k[:m] + reply_ms)
        done[b : b + m] = np.maximum(run, prev) + k[:m]
        prev = done[b + m - 1]
    return done


#: from this window size on, :func:`pipeline_completions` works a window at a time on arrays; below it,
#: numpy's cost per call outweighs the window (100,000 requests through 10 slots: 63 ms in windows, 20 ms
#: element by element; through 100 slots, 7 ms against 20 ms)
_NUMPY_WINDOW = 64


def _completions(lat: list, reply_ms: float, w: int, start_ms: float) -> list:
    """``done[i] = max(sent[i] + lat[i], done[i-1]) + reply_ms``, ``sent[i] = done[i-w]`` (``start_ms`` for
    the first ``w``), element by element."""
    done = [0.0] * len(lat)
    prev = start_ms
    for i, x in enumerate(lat):
        a = (start_ms if i < w else done[i - w]) + x
        prev = (a if a > prev else prev) + reply_ms
        done[i] = prev
    return done


def pipeline_time(n: int, latency_ms: float, reply_ms: float, max_in_flight: int) -> float:
    """Closed form of :func:`pipeline_completions` for ``n`` requests of constant latency.

    - reply-bound, ``(W-1)·reply >= latency``: the event thread never idles after the first reply:
      ``latency + n·reply``;
    - latency-bound: ``B = ceil(n/W)`` windows, each one latency long, and the event thread's lag grows
      by one reply per window: ``B·latency + (n - (B-1)·W + B - 1)·reply``. With ``W = 1``, ``n·(latency + reply)``.
    """
    if n <= 0:
        return 0.0
    w = int(max_in_flight)
    if (w - 1) * reply_ms >= latency_ms:
        return latency_ms + n * reply_ms
    b = math.ceil(n / w)
    return b * latency_ms + (n - (b - 1) * w + b - 1) * reply_ms

"""A KRaft broker's registration and heartbeats (Kafka 4.0's ``BrokerLifecycleManager``), and its channels to the
active controller (``NodeToControllerChannelManager``: ``heartbeat``, ``alter-partition``).

A broker in KRaft mode registers with the active controller and then keeps its session with heartbeats
(docs/kafka-reference.md §8.6), on one event thread (``broker-<id>-lifecycle-manager-event-handler``):

- **STARTING**: ``BrokerRegistration`` (a new incarnation id each process); the answer is its broker epoch
  (``Successfully registered broker <id> with broker epoch <e>``); then a ``BrokerHeartbeat`` at once and
  every 10 ms until the controller answers ``isCaughtUp`` → **RECOVERY** (heartbeats at the interval) until it
  is unfenced → **RUNNING**;
- a heartbeat carries ``BrokerEpoch``, ``CurrentMetadataOffset`` (the metadata loader's last applied offset),
  ``WantFence`` (until the broker has published its first metadata), ``WantShutDown``; the next is sent
  ``broker.heartbeat.interval.ms`` after the *answer*; after a failure the backoff is exponential from 100 ms,
  ×2, up to ``broker.session.timeout.ms``, 2 % jitter (``ExponentialBackoff(100, 2, sessionTimeout, 0.02)``);
- **controlled shutdown** (:meth:`BrokerLifecycleManager.begin_controlled_shutdown`): **PENDING_CONTROLLED_SHUTDOWN**, a
  heartbeat with ``WantShutDown`` at once, the next 50 ms after the first answer, then at the interval, until
  the controller answers ``shouldShutDown`` (``The controller has asked us to exit controlled shutdown.``)
  → **SHUTTING_DOWN**, and the process may end.

The channel sends each request to the active controller as the broker's Raft client knows it (the leader of
the metadata quorum, ``RaftControllerNodeProvider``), over the first of ``controller.listener.names``, on its
own connection: not the broker's data plane. A request lost with its connection, refused, or answered
``NOT_CONTROLLER`` is sent again to whoever leads then, until its timeout (a heartbeat's: half the session
timeout, ``BrokerServer``; then ``onTimeout``).

The thread and its timers belong to the broker's process (:mod:`.node`): a stopped broker sends nothing, a
paused one holds still.

Simplifications: the channel tries again ``CHANNEL_RETRY_MS`` (100, the clients' ``retry.backoff.ms``) after
a lost or refused request or while no leader is known (Kafka's ``NodeToControllerRequestThread`` waits on its
network client's poll); no ``initial.broker.registration.timeout.ms`` (a broker that cannot register keeps
trying).
"""

from __future__ import annotations

import uuid
from collections import deque
from itertools import count

from ..network.request import Request
from ..network.socket_server import DISCONNECTED, ConnectionRefused

__all__ = ["BrokerLifecycleManager", "NodeToControllerChannel", "CHANNEL_RETRY_MS", "STARTING_HEARTBEAT_MS"]

#: the model's wait before a channel tries again (see the module)
CHANNEL_RETRY_MS = 100.0
#: ``BrokerLifecycleManager``: heartbeats every 10 ms while STARTING
STARTING_HEARTBEAT_MS = 10.0
#: the first heartbeat in PENDING_CONTROLLED_SHUTDOWN after the first answer: 50 ms
PENDING_SHUTDOWN_HEARTBEAT_MS = 50.0


class NodeToControllerChannel:
    """``NodeToControllerChannelManager``: requests to the active controller, one at a time, retried to the next
    controller when lost or refused, until each one's timeout."""

    def __init__(self, env, name: str, broker_id: int, node, *, controller, request_log, client_host: str):
        self.env = env
        self.name = name
        self.client_id = f"broker-{broker_id}-{name}-channel-manager"
        self.broker_id = broker_id
        self.node = node
        self.controller = controller  # () -> the active controller's node (its .connect, .id), or None
        self.request_log = request_log
        self.client_host = client_host
        self.connection = None
        self._correlation = count()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def send(self, api: str, payload: dict, timeout_ms: float, on_done) -> None:
        """Send ``api`` until it is answered or ``timeout_ms`` passes; ``on_done(req or None)`` then (None: timed
        out). Runs in the caller's thread; the retries are timers of the node."""
        deadline = self.env.now + timeout_ms
        inc = self.node.incarnation

        def attempt(_e=None):
            if self.node.incarnation != inc:
                return
            if self.env.now >= deadline:
                on_done(None)
                return
            target = self.controller()
            if target is None:
                self.node.timer(CHANNEL_RETRY_MS, attempt)
                return
            if self.connection is None or self.connection.closed or self.connection.broker_id != target.id:
                if self.connection is not None and not self.connection.closed:
                    self.connection.close()
                try:
                    self.connection = target.connect(target.listener_name, self.client_id, client_host=self.client_host)
                except ConnectionRefused:
                    self.connection = None
                    self.node.timer(CHANNEL_RETRY_MS, attempt)
                    return
            req = Request(
                api,
                next(self._correlation),
                self.client_id,
                payload=payload,
                on_done=self.node.deferred(answered),  # a paused broker reads it when it wakes
            )
            self.request_log.append(req)
            conn = self.connection
            self.connection.send(req)
            # a request still unanswered at the deadline: the client gives up on it (its connection closes)
            self.node.timer(max(deadline - self.env.now, 0.0), lambda _e, r=req, c=conn: expire(r, c))

        def expire(req, conn):
            if req.error == "IN_FLIGHT" and self.node.incarnation == inc:
                conn.close()
                if self.connection is conn:
                    self.connection = None
                req.error = "REQUEST_TIMED_OUT"
                on_done(None)

        def answered(req):
            if self.node.incarnation != inc or req.error == "REQUEST_TIMED_OUT":
                return
            if req.error in (DISCONNECTED, "NOT_CONTROLLER"):
                if req.error == DISCONNECTED:
                    self.connection = None
                self.node.timer(CHANNEL_RETRY_MS, attempt)
                return
            on_done(req)

        attempt()


class BrokerLifecycleManager:
    """One broker's ``BrokerLifecycleManager`` (see the module)."""

    def __init__(
        self,
        env,
        broker_id: int,
        node,
        *,
        controller,
        metadata_offset,
        request_log,
        kraft_config,
        rng,
        history,
        rack: str | None = None,
    ):
        self.env = env
        self.id = broker_id
        self.node = node
        self.controller = controller
        self.metadata_offset = metadata_offset  # () -> the loader's last applied offset
        self.request_log = request_log
        self.config = kraft_config
        self.rng = rng
        self.history = history
        self.rack = rack
        self.state = "NOT_RUNNING"
        self.broker_epoch = -1
        self.incarnation = ""
        self.ready_to_unfence = False
        self.shutdown_granted = None  # an event, once a controlled shutdown begins
        self.transitions: list = []  # (time_ms, from, to)
        self.channel = None
        self.on_registered = None  # called with the new broker epoch when a registration is answered

    # -- the process ----------------------------------------------------------------------------------------
    def start(self, *, registered_epoch: int | None = None, incarnation: str | None = None, first_heartbeat_ms=0.0):
        """A new process. ``registered_epoch``: the broker is already registered and unfenced (the cluster's steady
        state at t=0), RUNNING, its first heartbeat at ``first_heartbeat_ms``; else STARTING and it registers."""
        self.channel = NodeToControllerChannel(
            self.env,
            "heartbeat",
            self.id,
            self.node,
            controller=self.controller,
            request_log=self.request_log,
            client_host=f"10.0.1.{self.id % 250}",
        )
        self.node.on_stop.append(self._stopped)
        self.inbound: deque = deque()
        self.failed_attempts = 0
        self.got_shutdown_answer = False
        self.shutdown_granted = None
        self._wake = None
        if registered_epoch is not None:
            self.broker_epoch, self.incarnation = registered_epoch, incarnation or self._new_incarnation()
            self.ready_to_unfence = True
            self._set_state("RUNNING")
            self.next_ms = self.env.now + first_heartbeat_ms
        else:
            self.incarnation = self._new_incarnation()
            self.broker_epoch = -1
            self.ready_to_unfence = False
            self._set_state("STARTING")
            self.history.event(self.env.now, self.id, "broker_starting", {"incarnation": self.incarnation})
            self.next_ms = self.env.now
        self.node.thread(self._run())

    def _new_incarnation(self) -> str:
        return str(uuid.UUID(int=int(self.rng.integers(2**63)) << 64 | int(self.rng.integers(2**63)), version=4))

    def _stopped(self) -> None:
        if self.channel is not None:
            self.channel.close()
        self.node.on_stop.remove(self._stopped)

    def _set_state(self, state: str) -> None:
        self.transitions.append((self.env.now, self.state, state))
        self.state = state

    def set_ready_to_unfence(self) -> None:
        """``setReadyToUnfence``: the broker has published its metadata; its heartbeats stop asking to stay fenced."""
        self.ready_to_unfence = True

    def begin_controlled_shutdown(self):
        """``beginControlledShutdown``: PENDING_CONTROLLED_SHUTDOWN and a heartbeat at once; returns an event that
        succeeds when the controller lets the broker go (SHUTTING_DOWN)."""
        if self.shutdown_granted is None:
            self.shutdown_granted = self.env.event()
        if self.state == "RUNNING":
            self.history.event(self.env.now, self.id, "controlled_shutdown_begins", {})
            self._set_state("PENDING_CONTROLLED_SHUTDOWN")
            self.next_ms = self.env.now
            self._wakeup()
        elif self.state != "PENDING_CONTROLLED_SHUTDOWN":
            # "Skipping controlled shutdown because we are in state ...": nothing to wait for
            self._set_state("SHUTTING_DOWN")
            self.shutdown_granted.succeed()
        return self.shutdown_granted

    def _wakeup(self) -> None:
        w = self._wake
        if w is not None and not w.triggered:
            w.succeed()

    # -- the event thread -------------------------------------------------------------------------------------
    def _run(self):
        env = self.env
        while True:
            while self.inbound:
                kind, req = self.inbound.popleft()
                self._handle(kind, req)
            if self.state == "SHUTTING_DOWN":
                return
            if self.next_ms is not None and env.now >= self.next_ms:
                self.next_ms = None
                self._communicate()
            self._wake = env.event()
            if self.next_ms is None:
                yield self._wake
            else:
                yield env.any_of([self._wake, env.timeout(self.next_ms - env.now)])
            self._wake = None

    def _communicate(self) -> None:
        inc = self.node.incarnation

        def deliver(kind, req):
            if self.node.incarnation == inc:
                self.inbound.append((kind, req))
                self._wakeup()

        if self.state == "STARTING" and self.broker_epoch < 0:
            payload = {"broker_id": self.id, "incarnation": self.incarnation, "rack": self.rack}
            self.channel.send(
                "BrokerRegistration",
                payload,
                self.config.heartbeat_rpc_timeout_ms,
                lambda r: deliver("registration", r),
            )
            return
        payload = {
            "broker_id": self.id,
            "broker_epoch": self.broker_epoch,
            "current_metadata_offset": self.metadata_offset(),
            "want_fence": not self.ready_to_unfence,
            "want_shut_down": self.state == "PENDING_CONTROLLED_SHUTDOWN",
        }
        self.channel.send(
            "BrokerHeartbeat", payload, self.config.heartbeat_rpc_timeout_ms, lambda r: deliver("heartbeat", r)
        )

    def _after_failure(self) -> None:
        """``scheduleNextCommunicationAfterFailure``: ``ExponentialBackoff(100, 2, sessionTimeout, 0.02)``."""
        base = 100.0 * 2**self.failed_attempts
        delay = min(base, float(self.config.broker_session_timeout_ms))
        jitter = 1.0 + 0.02 * (2 * float(self.rng.random()) - 1)
        self.failed_attempts += 1
        self.next_ms = self.env.now + int(delay * jitter)

    def _after_success(self) -> None:
        self.next_ms = self.env.now + self.config.broker_heartbeat_interval_ms

    def _handle(self, kind: str, req) -> None:
        now = self.env.now
        if req is None or req.error != "NONE" or req.result is None:
            error = "REQUEST_TIMED_OUT" if req is None else req.error
            self.history.event(now, self.id, f"{kind}_failed", {"error": error})
            self._after_failure()
            return
        self.failed_attempts = 0
        if kind == "registration":
            self.broker_epoch = req.result
            self.history.event(now, self.id, "registered", {"broker_epoch": self.broker_epoch})
            if self.on_registered is not None:
                self.on_registered(self.broker_epoch)
            self.next_ms = now  # a heartbeat at once
            return
        r = req.result
        state = self.state
        if state == "STARTING":
            if r["is_caught_up"]:
                self._set_state("RECOVERY")
            self.next_ms = now + STARTING_HEARTBEAT_MS
        elif state == "RECOVERY":
            if not r["is_fenced"]:
                self._set_state("RUNNING")
            self._after_success()
        elif state == "RUNNING":
            self._after_success()
        elif state == "PENDING_CONTROLLED_SHUTDOWN":
            if r["should_shut_down"]:
                self.history.event(now, self.id, "exit_controlled_shutdown", {})
                self._set_state("SHUTTING_DOWN")
                if self.shutdown_granted is not None and not self.shutdown_granted.triggered:
                    self.shutdown_granted.succeed()
            elif not self.got_shutdown_answer:
                self.next_ms = now + PENDING_SHUTDOWN_HEARTBEAT_MS
            else:
                self._after_success()
            self.got_shutdown_answer = True

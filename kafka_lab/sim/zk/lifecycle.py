"""A broker's restart and the controller moving, inside the cluster model (Kafka 2.8).

**A restart** (:func:`restart_broker`), as ``KafkaServer.shutdown`` and ``startup`` do it:

1. *controlled shutdown*: the broker sends ``ControlledShutdown`` (its id and broker epoch) to the
   controller's broker on the inter-broker listener, through that broker's request path; the
   controller moves leadership of the partitions it leads and stops its follower replicas
   (:meth:`~kafka_lab.sim.zk.controller.Controller.handle_controlled_shutdown`) and answers with the
   partitions it still leads. An error or a partition left is retried after
   ``controlled.shutdown.retry.backoff.ms`` (5000), up to ``controlled.shutdown.max.retries`` (3) times;
2. *shut down*: its process ends (:mod:`kafka_lab.sim.server.node`): every thread stops with what it had in hand, every
   connection closes (a request in flight fails ``NETWORK_EXCEPTION`` at its client, as a disconnection
   does), new connections are refused, and its ZooKeeper session closes, so its
   registration znode is gone: the controller hears of it a ZooKeeper round trip later
   (:meth:`~kafka_lab.sim.zk.controller.Controller.on_broker_failure`). When the broker *is* the
   controller, ``/controller`` goes with the session and the other brokers elect a new controller
   (:meth:`~kafka_lab.sim.zk.controller.Controller.fail_over`);
3. *down* for ``down_ms``: what a real restart spends on the JVM, log recovery and registration is
   one gap here, with nothing logged;
4. *start-up*: a new process on the same logs, with a new broker epoch (KIP-380: the registration
   znode's new ``czxid``); the controller sends it the cluster's state and a LeaderAndIsr for each
   replica it holds (:meth:`~kafka_lab.sim.zk.controller.Controller.on_broker_startup`); it truncates and
   fetches as a follower until the leaders take it back into their ISRs.

Leadership does not come back by itself: the controller's preferred-replica election does that
(``auto.leader.rebalance.enable``; :meth:`~kafka_lab.sim.zk.controller.Controller.elect_leader`).

**A controller move** (:func:`move_controller`): ``/controller`` deleted while its broker stays up
(an operator forcing a re-election); the same election as above, with every broker alive.

**A crash** (:func:`crash_broker`): the process dies with no controlled shutdown (``kill -9``, a power
cut): everything in flight to or from it is lost with its connections, its logs stay on disk. Its
ZooKeeper session is not closed: it expires ``zookeeper.session.timeout.ms`` (18000 in 2.8) later
(:mod:`.session`), and only then does the controller act (``/brokers/ids/<id>`` deleted:
``onBrokerFailure``), or, when it was the controller, do the others elect a new one (``/controller`` went
with the session). Until then the cluster still counts it live: its partitions keep their leader and ISR,
and their clients fail against a broker that refuses connections. A crashed broker that starts again comes
back through the normal start-up (a new process on the same logs, a new broker epoch): not before its old
session has expired, since 2.8 refuses to register a broker whose ``/brokers/ids/<id>`` another session
still owns (``KafkaZkClient.registerBroker``: ``NodeExists``, and the start-up fails).

**A pause** (:func:`pause_broker`): a stop-the-world pause (a long GC). The process holds every thread and
timer (:meth:`~kafka_lab.sim.server.node.Node.pause`): it handles, sends, appends and expires nothing, and its
peers' requests wait in its sockets unread. Its ZooKeeper session stops being pinged: a pause longer than
the session timeout ends it, with what a crash's expiry does. When it wakes it carries on with what it had
in hand: its threads handle what waited, its controller's channels send what they had queued (with the
controller epoch it had), its leaders lead at the epochs they knew. Then its ZooKeeper client reconnects
and learns its session expired: the controller's ``Expire`` event resigns (``processExpire``) and a new
session registers the broker again with a new broker epoch (``RegisterBrokerAndReelect``), which the
controller handles as a broker start-up. A paused controller deposed meanwhile is the talk's *zombie
controller*: what it sends after waking carries its old epoch, which brokers refuse
(``STALE_CONTROLLER_EPOCH``) once they have heard from the new one, and a write it still had to make fails
(2.8: its session is gone, and every controller write checks ``/controller_epoch``, KAFKA-6082).

Each broker keeps what happened to it in ``Broker.lifecycle`` (time, event, detail) and the controller
in ``Controller.events``: the records the logs are written from.
"""

from __future__ import annotations

from ..common.options import check_time
from ..network.request import Request
from ..network.socket_server import ConnectionRefused
from ..server.node import check_pause_length

__all__ = [
    "restart_broker",
    "move_controller",
    "crash_broker",
    "pause_broker",
    "session_expired",
    "CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS",
    "CONTROLLED_SHUTDOWN_MAX_RETRIES",
]

#: ``controlled.shutdown.retry.backoff.ms`` and ``controlled.shutdown.max.retries`` (2.8 defaults)
CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS = 5000.0
CONTROLLED_SHUTDOWN_MAX_RETRIES = 3


def restart_broker(cluster, broker_id: int, *, at_ms: float, down_ms: float) -> None:
    """Schedule ``broker_id``'s restart: controlled shutdown at ``at_ms``, start-up ``down_ms`` after it stops."""
    if broker_id not in cluster.brokers:
        raise ValueError(f"broker {broker_id} is not in the cluster {sorted(cluster.brokers)}")
    check_time("at_ms", at_ms)
    check_time("down_ms", down_ms)
    env, ctl, broker = cluster.env, cluster.controller, cluster.brokers[broker_id]

    def run():
        if at_ms > env.now:
            yield env.timeout(at_ms - env.now)
        yield from broker.node.gate()  # a paused broker begins its shutdown when it wakes
        if not broker.online:  # it crashed (or is down): nothing to shut down; it is started down_ms later
            broker.lifecycle.append((env.now, "restart_of_a_stopped_broker", None))
            yield env.timeout(down_ms)
            _start(cluster, broker)
            return
        incarnation = broker.node.incarnation
        broker.lifecycle.append((env.now, "shutting_down", None))
        broker.lifecycle.append((env.now, "controlled_shutdown_started", None))
        t0 = env.now
        for attempt in range(CONTROLLED_SHUTDOWN_MAX_RETRIES):
            if attempt:
                broker.lifecycle.append((env.now, "controlled_shutdown_retry", None))
            controller = cluster.controller_broker()
            req = conn = None
            if controller is not None:
                try:
                    conn = controller.connect(
                        controller.config.inter_broker_listener_name,
                        str(broker_id),
                        client_host=f"10.0.1.{broker_id % 250}",
                    )
                except ConnectionRefused:  # the controller's broker is not running: this attempt fails
                    conn = None
            if conn is not None:
                done = env.event()
                req = Request(
                    "ControlledShutdown",
                    0,
                    str(broker_id),
                    payload={"broker_id": broker_id, "broker_epoch": broker.broker_epoch},
                    on_done=lambda r, done=done: done.succeed(r),
                )
                cluster.log.append(req)
                conn.send(req)
                yield done
                yield from broker.node.gate()  # KafkaServer.shutdown runs in its process: a pause holds it too
                if broker.node.incarnation != incarnation:
                    return  # it crashed meanwhile: its shutdown died with it (its session expires later)
            if req is not None and req.error == "NONE" and not req.result:
                broker.lifecycle.append((env.now, "controlled_shutdown_succeeded", env.now - t0))
                break
            broker.lifecycle.append(
                (env.now, "controlled_shutdown_failed", None if req is None else (req.error, tuple(req.result or ())))
            )
            yield env.timeout(CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS)
            yield from broker.node.gate()
            if broker.node.incarnation != incarnation:
                return
        else:
            broker.lifecycle.append((env.now, "unclean_shutdown", None))
        broker.shut_down()
        cluster.zk_sessions.close(broker_id)  # a clean close: its znodes go now, nothing expires later
        broker.lifecycle.append((env.now, "shut_down", None))
        if ctl.id == broker_id:  # its session held /controller too
            ctl.live_brokers.discard(broker_id)
            ctl.shutting_down.discard(broker_id)
            ctl.fail_over(at_ms=env.now, rng=cluster.rng("controller-election"))
        else:
            ctl.on_broker_failure(broker_id, at_ms=env.now + ctl.zk_latency_ms)
        yield env.timeout(down_ms)
        _start(cluster, broker)

    env.process(run())


def _start(cluster, broker) -> None:
    """``KafkaServer.startup``: a new process on the same logs, a new session and broker epoch (KIP-380: the
    new registration znode's ``czxid``); the controller hears of it a ZooKeeper round trip later."""
    env, ctl = cluster.env, cluster.controller
    broker.lifecycle.append((env.now, "starting", None))
    sessions = cluster.zk_sessions
    if sessions.silent_since[broker.id] is not None and not sessions.expired[broker.id]:
        # the crashed process's session still owns /brokers/ids/<id>: registerBroker fails NodeExists
        # ("Error while creating ephemeral at /brokers/ids/<id>, node already exists and owner ... does not match
        # current session"), and KafkaServer.startup gives up: the broker stays down
        broker.lifecycle.append((env.now, "startup_failed", f"NodeExists /brokers/ids/{broker.id}"))
        return
    sessions.renew(broker.id)
    broker.start_up(1 + max(b.broker_epoch for b in cluster.brokers.values()))
    broker.lifecycle.append((env.now, "started", broker.broker_epoch))
    ctl.on_broker_startup(broker.id, at_ms=env.now + ctl.zk_latency_ms)


def _check_fault(cluster, broker_id, at_ms) -> None:
    if isinstance(broker_id, bool) or broker_id not in cluster.brokers:
        raise ValueError(f"broker {broker_id!r} is not in the cluster {sorted(cluster.brokers)}")
    if isinstance(at_ms, bool) or not isinstance(at_ms, (int, float)) or not at_ms >= 0 or at_ms == float("inf"):
        raise ValueError(f"at_ms is a time in ms, a finite number at least 0, got {at_ms!r}")


def crash_broker(cluster, broker_id: int, *, at_ms: float, down_ms: float | None = None) -> None:
    """Schedule ``broker_id``'s crash at ``at_ms`` (see the module); ``down_ms`` later it starts again, or never
    (None). ``down_ms`` shorter than the broker's ``zookeeper.session.timeout.ms`` is refused: 2.8 would fail
    that start-up (its old session still owns ``/brokers/ids/<id>``)."""
    _check_fault(cluster, broker_id, at_ms)
    broker = cluster.brokers[broker_id]
    timeout = broker.config.zk_session_timeout_ms
    if down_ms is not None:
        if isinstance(down_ms, bool) or not isinstance(down_ms, (int, float)) or not 0 <= down_ms < float("inf"):
            raise ValueError(f"down_ms is a time in ms (a finite number at least 0) or None, got {down_ms!r}")
        if down_ms < timeout:
            raise ValueError(
                f"broker {broker_id} cannot start again {down_ms} ms after its crash: its ZooKeeper session lives "
                f"until zookeeper.session.timeout.ms={timeout} ms after it, and Kafka 2.8's start-up fails while "
                f"/brokers/ids/{broker_id} belongs to that session (NodeExists); down_ms must be at least {timeout}"
            )
    env = cluster.env

    def run():
        if at_ms > env.now:
            yield env.timeout(at_ms - env.now)
        if not broker.online:
            broker.lifecycle.append((env.now, "crash_ignored", "not running"))
            return
        broker.lifecycle.append((env.now, "crashed", None))
        cluster.zk_sessions.silent(broker_id)  # no more pings: the session expires after its timeout
        broker.shut_down()
        if down_ms is None:
            return
        yield env.timeout(down_ms)
        _start(cluster, broker)

    env.process(run())


def pause_broker(cluster, broker_id: int, *, at_ms: float, for_ms: float) -> None:
    """Schedule a stop-the-world pause of ``broker_id``'s process from ``at_ms`` for ``for_ms`` (see the module).
    A broker that is not running then, or already paused, is left as it is. ``for_ms`` is less than 30000: the
    peers' requests to a paused broker wait for it, as Kafka's do up to their 30 s request timeouts, and no longer
    (the model's clients have none)."""
    _check_fault(cluster, broker_id, at_ms)
    if isinstance(for_ms, bool) or not isinstance(for_ms, (int, float)) or not 0 <= for_ms < float("inf"):
        raise ValueError(f"for_ms is a time in ms, a finite number at least 0, got {for_ms!r}")
    check_pause_length(for_ms)
    env, broker = cluster.env, cluster.brokers[broker_id]
    sessions = cluster.zk_sessions

    def run():
        if at_ms > env.now:
            yield env.timeout(at_ms - env.now)
        node = broker.node
        if not broker.online or node.paused:
            broker.lifecycle.append((env.now, "pause_ignored", "not running" if not broker.online else "paused"))
            return
        incarnation = node.incarnation
        broker.lifecycle.append((env.now, "paused", for_ms))
        sessions.silent(broker_id)
        node.pause()
        yield env.timeout(for_ms)
        if node.incarnation != incarnation:
            return  # it crashed during the pause: there is nothing to wake
        expired = sessions.expired[broker_id]
        if not expired:
            sessions.heard(broker_id)
        broker.lifecycle.append((env.now, "resumed", {"session_expired": expired}))
        node.resume()
        if expired:
            node.thread(_reinitialize(cluster, broker))
        elif cluster.controller.deposed(broker_id):
            node.thread(_reelect(cluster, broker))

    env.process(run())


def _reinitialize(cluster, broker):
    """A thread of a woken broker whose session expired: its client reconnects and is told ``Expired``; the
    ``Expire`` event resigns what its controller still believed; a new session registers it again."""
    env, ctl = cluster.env, cluster.controller
    yield env.timeout(ctl.zk_latency_ms)  # the reconnect, answered Expired
    broker.lifecycle.append((env.now, "session_expired_seen", None))
    yield from ctl.zombie_busy(broker.id)  # fencing off: the event it woke in (its write retried) ends first
    ctl.zombie_resigns(broker.id)  # processExpire: onControllerResignation (nothing if it was not a controller)
    yield env.timeout(ctl.zk_latency_ms)  # a new session; registerBroker
    cluster.zk_sessions.renew(broker.id)
    broker.broker_epoch = 1 + max(b.broker_epoch for b in cluster.brokers.values())
    broker.lifecycle.append((env.now, "registered", broker.broker_epoch))
    ctl.on_broker_startup(broker.id, at_ms=env.now + ctl.zk_latency_ms)


def _reelect(cluster, broker):
    """A thread of a woken broker whose controller was deposed while its session lived (``/controller`` deleted
    under it): the watch it missed fires now, its ``Reelect`` event reads ``/controller`` (a round trip) and
    resigns (``maybeResign``: ``onControllerResignation``)."""
    env, ctl = cluster.env, cluster.controller
    yield env.timeout(ctl.zk_latency_ms)
    yield from ctl.zombie_busy(broker.id)  # fencing off: the event it woke in ends first (one event thread)
    ctl.zombie_resigns(broker.id)


def session_expired(cluster, broker_id: int) -> None:
    """ZooKeeper ended ``broker_id``'s session: its registration is gone, and ``/controller`` with it if it held
    it. The controller handles the broker's failure a round trip later; or the others elect a new controller."""
    env, ctl, broker = cluster.env, cluster.controller, cluster.brokers[broker_id]
    broker.lifecycle.append((env.now, "session_expired", cluster.zk_sessions.timeout_ms(broker_id)))
    if ctl.id == broker_id:
        ctl.live_brokers.discard(broker_id)
        ctl.shutting_down.discard(broker_id)
        ctl.fail_over(at_ms=env.now, rng=cluster.rng("controller-election"))
    else:
        ctl.on_broker_failure(broker_id, at_ms=env.now + ctl.zk_latency_ms)


def move_controller(cluster, *, at_ms: float) -> None:
    """``/controller`` is deleted at ``at_ms`` with every broker up: a new election (see the module)."""
    check_time("at_ms", at_ms)
    cluster.controller.fail_over(at_ms=at_ms, rng=cluster.rng("controller-election"), by_hand=True)

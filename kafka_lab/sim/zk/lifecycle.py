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

Each broker keeps what happened to it in ``Broker.lifecycle`` (time, event, detail) and the controller
in ``Controller.events``: the records the logs are written from.
"""

from __future__ import annotations

from ..common.options import check_time
from ..network.request import Request
from ..network.socket_server import ConnectionRefused

__all__ = [
    "restart_broker",
    "move_controller",
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
            if req is not None and req.error == "NONE" and not req.result:
                broker.lifecycle.append((env.now, "controlled_shutdown_succeeded", env.now - t0))
                break
            broker.lifecycle.append(
                (env.now, "controlled_shutdown_failed", None if req is None else (req.error, tuple(req.result or ())))
            )
            yield env.timeout(CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS)
        else:
            broker.lifecycle.append((env.now, "unclean_shutdown", None))
        broker.shut_down()
        broker.lifecycle.append((env.now, "shut_down", None))
        if ctl.id == broker_id:  # its session held /controller too
            ctl.live_brokers.discard(broker_id)
            ctl.shutting_down.discard(broker_id)
            ctl.fail_over(at_ms=env.now, rng=cluster.rng("controller-election"))
        else:
            ctl.on_broker_failure(broker_id, at_ms=env.now + ctl.zk_latency_ms)
        yield env.timeout(down_ms)
        broker.lifecycle.append((env.now, "starting", None))
        broker.start_up(1 + max(b.broker_epoch for b in cluster.brokers.values()))
        broker.lifecycle.append((env.now, "started", broker.broker_epoch))
        ctl.on_broker_startup(broker_id, at_ms=env.now + ctl.zk_latency_ms)

    env.process(run())


def move_controller(cluster, *, at_ms: float) -> None:
    """``/controller`` is deleted at ``at_ms`` with every broker up: a new election (see the module)."""
    check_time("at_ms", at_ms)
    cluster.controller.fail_over(at_ms=at_ms, rng=cluster.rng("controller-election"))

"""A broker in KRaft mode: what replaces the ZooKeeper-mode control requests on it (Kafka 4.0, ``BrokerServer``).

A KRaft broker receives no ``LeaderAndIsr``, ``UpdateMetadata`` or ``StopReplica`` (4.0 removed them,
docs/kafka-reference.md §8.1) and sends no ``ControlledShutdown``. In their place, each a part of its process
(:mod:`.node`) and started with it:

- its Raft client, an *observer* of the metadata quorum (``__cluster_metadata``: it fetches, never votes), on its
  own connection to the active controller's listener (:mod:`kafka_lab.sim.kraft.raft`, given to it);
- the metadata loader and publisher (:mod:`.metadata_loader`): the committed records applied to the metadata
  cache and the replica manager;
- the lifecycle manager (:mod:`.broker_lifecycle`): registration, heartbeats, controlled shutdown; the broker
  epoch it registers with is the one its ``AlterPartition`` requests carry;
- the ``AlterPartition`` sender (:class:`AlterPartitionManager`: 2.8's ``AlterIsr``, renamed and sent to the active
  controller over the controller listener, ``DefaultAlterPartitionManager``).

:func:`restart_broker` is ``restart_broker`` of a KRaft cluster: ``WantShutDown`` heartbeats until the controller
lets the broker go (at most 5 minutes, ``BrokerServer.shutdown``), the process ends, ``down_ms`` later a new process
registers as a new incarnation, catches up and is unfenced. :func:`crash_broker` ends the process with no controlled
shutdown and :func:`pause_broker` holds it (a stop-the-world pause, :meth:`~kafka_lab.sim.server.node.Node.pause`):
either way its heartbeats stop, and the controller fences it ``broker.session.timeout.ms`` after the last one it
handled; nothing else tells the controller (in KRaft no session of another system ends with the process). A paused
broker that wakes sends the heartbeat it had due, with the broker epoch it registered with: if it was fenced
meanwhile and has caught up, the controller unfences it (``calculateNextBrokerState``); a crashed one that starts
again registers as a new incarnation.
"""

from __future__ import annotations

from ..common.options import check_time
from .alter_isr import AlterIsrManager
from .node import check_pause_length

__all__ = [
    "BrokerKRaft",
    "AlterPartitionManager",
    "restart_broker",
    "crash_broker",
    "pause_broker",
    "CONTROLLED_SHUTDOWN_WAIT_MS",
]

#: ``BrokerServer.shutdown``: the broker waits at most 5 minutes for the controller to let it go
CONTROLLED_SHUTDOWN_WAIT_MS = 300_000.0


class AlterPartitionManager(AlterIsrManager):
    """``AlterPartition`` to the active controller (its Raft leader), one in flight, changes batched, retried after
    50 ms on an error or a lost connection: :class:`~kafka_lab.sim.server.alter_isr.AlterIsrManager`'s sender with
    4.0's request name and client id, sent to the active controller over its controller listener."""

    API = "AlterPartition"
    CLIENT = "alter-partition-channel-manager"
    CORRELATION = "alter-partition"

    def __init__(self, broker, cluster, kraft):
        self.kraft = kraft
        super().__init__(broker, cluster)

    def _controller(self):
        controller = self.kraft.controller()
        return None if controller is None else (controller, controller.listener_name)


class BrokerKRaft:
    """The KRaft parts of one broker (see the module). ``raft`` is its observer Raft client, ``nodes`` the
    controller nodes by id (whose ``connect`` its channels use)."""

    def __init__(self, broker, raft, *, nodes, new_image, kraft_config, costs, history, rng):
        from .broker_lifecycle import BrokerLifecycleManager
        from .metadata_loader import MetadataLoader

        self.broker = broker
        self.raft = raft
        self.nodes = nodes
        self.history = history
        self.lifecycle = BrokerLifecycleManager(
            broker.env,
            broker.id,
            broker.node,
            controller=self.controller,
            metadata_offset=self.metadata_offset,
            request_log=broker.cluster.log,
            kraft_config=kraft_config,
            rng=rng,
            history=history,
            rack=broker.config.props.get("broker.rack"),
        )
        self.lifecycle.on_registered = self._registered
        self.loader = MetadataLoader(
            broker, raft, new_image=new_image, costs=costs, history=history, lifecycle=self.lifecycle
        )
        self._first = True

    def controller(self):
        """``RaftControllerNodeProvider``: the controller node the Raft client knows as leader, or None."""
        return self.nodes.get(self.raft.leader_id) if self.raft.leader_id is not None else None

    def metadata_offset(self) -> int:
        """``CurrentMetadataOffset``: the offset of the last record the loader applied."""
        return self.loader.last_applied_offset

    def bootstrap(self, batches, image, registration: tuple, first_heartbeat_ms: float) -> None:
        """The steady state before t=0: the log committed, the image published, registered and unfenced."""
        self.raft.bootstrap(1, self.raft.leader_id, batches)
        self.loader.bootstrap(image, batches[-1].last_offset, self.raft.leader_id)
        self._registration = registration
        self._first_heartbeat_ms = first_heartbeat_ms
        self.broker.broker_epoch = registration[0]

    def start(self) -> None:
        """The broker's process started (its first, or a new one): the KRaft threads start with it."""
        b = self.broker
        b.partition_locks.reset()
        b.alter_isr = AlterPartitionManager(b, b.cluster, self)
        b.replica_manager.alter_isr = b.alter_isr.submit
        b.replica_manager.isr_eligible = self.loader.isr_eligible
        self.raft.start()
        self.loader.start()
        if self._first:
            self._first = False
            epoch, inc = self._registration
            self.lifecycle.start(registered_epoch=epoch, incarnation=inc, first_heartbeat_ms=self._first_heartbeat_ms)
        else:
            self.lifecycle.start()

    def _registered(self, epoch: int) -> None:
        self.broker.broker_epoch = epoch


def restart_broker(cluster, broker_id: int, *, at_ms: float, down_ms: float) -> None:
    """``broker_id``'s controlled shutdown at ``at_ms`` through ``WantShutDown`` (see the module), down ``down_ms``,
    then a new process."""
    if broker_id not in cluster.brokers:
        raise ValueError(f"broker {broker_id} is not in the cluster {sorted(cluster.brokers)}")
    check_time("at_ms", at_ms)
    check_time("down_ms", down_ms)
    env, broker = cluster.env, cluster.brokers[broker_id]

    def run():
        if at_ms > env.now:
            yield env.timeout(at_ms - env.now)
        if not broker.online:
            return
        broker.lifecycle.append((env.now, "shutting_down", None))
        broker.lifecycle.append((env.now, "controlled_shutdown_started", None))
        t0 = env.now
        granted = broker.kraft.lifecycle.begin_controlled_shutdown()
        yield env.any_of([granted, env.timeout(CONTROLLED_SHUTDOWN_WAIT_MS)])
        if not broker.online:
            return  # its process ended meanwhile (a fault): nothing more to shut down
        if granted.triggered:
            broker.lifecycle.append((env.now, "controlled_shutdown_succeeded", env.now - t0))
        else:
            broker.lifecycle.append((env.now, "unclean_shutdown", None))
        broker.shut_down()
        broker.lifecycle.append((env.now, "shut_down", None))
        yield env.timeout(down_ms)
        broker.lifecycle.append((env.now, "starting", None))
        broker.start_up(-1)
        broker.lifecycle.append((env.now, "started", broker.broker_epoch))

    env.process(run())


def _check_fault(cluster, broker_id, at_ms) -> None:
    if isinstance(broker_id, bool) or broker_id not in cluster.brokers:
        raise ValueError(f"broker {broker_id!r} is not in the cluster {sorted(cluster.brokers)}")
    check_time("at_ms", at_ms)


def crash_broker(cluster, broker_id: int, *, at_ms: float, down_ms: float | None = None) -> None:
    """``broker_id``'s process dies at ``at_ms`` (no controlled shutdown, see the module); it starts again ``down_ms``
    later as a new incarnation, or never (None)."""
    _check_fault(cluster, broker_id, at_ms)
    check_time("down_ms", down_ms, optional=True)
    env, broker = cluster.env, cluster.brokers[broker_id]

    def run():
        if at_ms > env.now:
            yield env.timeout(at_ms - env.now)
        if not broker.online:
            return
        broker.lifecycle.append((env.now, "crashed", None))
        broker.shut_down()
        if down_ms is None:
            return
        yield env.timeout(down_ms)
        broker.lifecycle.append((env.now, "starting", None))
        broker.start_up(-1)
        broker.lifecycle.append((env.now, "started", broker.broker_epoch))

    env.process(run())


def pause_broker(cluster, broker_id: int, *, at_ms: float, for_ms: float) -> None:
    """A stop-the-world pause of ``broker_id``'s process from ``at_ms`` for ``for_ms`` (see the module); the resume is
    the host's, not a timer of the paused process. A broker that is not running then, or already paused, is left
    as it is (a second pause inside a first does not end it early); one that crashes during its pause is not woken.
    ``for_ms`` is less than 30000: its peers' requests wait for a paused broker, as Kafka's do up to their 30 s
    timeouts, and no longer (the model's followers have none)."""
    _check_fault(cluster, broker_id, at_ms)
    check_time("for_ms", for_ms)
    check_pause_length(for_ms)
    env, broker = cluster.env, cluster.brokers[broker_id]

    def run():
        if at_ms > env.now:
            yield env.timeout(at_ms - env.now)
        node = broker.node
        if not broker.online or node.paused:
            broker.lifecycle.append((env.now, "pause_ignored", "not running" if not broker.online else "paused"))
            return
        incarnation = node.incarnation
        broker.lifecycle.append((env.now, "paused", for_ms))
        node.pause()
        yield env.timeout(for_ms)
        if node.incarnation != incarnation or not node.paused:
            return  # it crashed during the pause: there is nothing to wake
        node.resume()
        broker.lifecycle.append((env.now, "resumed", None))

    env.process(run())

"""A broker: its socket server (one or two planes), request channel, handler pools, purgatory and replicas.

A *plane* is one path through the broker: acceptors and network processors, a bounded request
queue, a handler pool, and the processors' response queues. Every broker has the data plane
(``num.network.threads`` processors per data-plane listener, ``queued.max.requests``,
``num.io.threads`` handlers). With ``control.plane.listener.name`` set it also has KIP-291's
control plane: one acceptor on that listener, one processor, a queue of 20, one handler thread.
Both planes hand requests to the same ``KafkaApis`` and the same replica manager.

Clients and the controller are separate processes: they :meth:`Broker.connect` to a listener of a
broker, as a real client opens a socket to an advertised endpoint.

The broker's threads and timers belong to its process (:class:`~kafka_lab.sim.server.node.Node`). What outlives
a process is what a restarted broker finds again: its configuration, its listeners (the acceptors' ports),
its logs, the request handlers' cost model (one random stream per broker), and its metrics' history.
Everything else is made new at each start-up (:meth:`Broker.start_up`): request queues, processors,
handler threads, purgatories, fetcher threads, the AlterIsr sender and the ``isr-expiration`` task, an
empty metadata cache, and partitions that wait for the controller's LeaderAndIsr. When the process stops
(:meth:`Broker.shut_down`) each of them stops with it; every connection to the broker closes (its clients
see a disconnection) and its own connections close; its gauges read 0 until it starts again (its queues
are gone, its threads idle), where Kafka's JMX would have nothing at all.
"""

from __future__ import annotations

from ..common.metrics import Metrics
from ..network.request_channel import RequestQueue
from ..network.socket_server import Acceptor, Processor
from .apis import KafkaApis, default_costs
from .config import (
    CONTROL_PLANE_HANDLERS,
    CONTROL_PLANE_PROCESSORS,
    CONTROL_PLANE_QUEUE_CAPACITY,
    BrokerConfig,
    ModelSettings,
)
from .handlers import RequestHandlerPool
from .metadata_cache import MetadataCache
from .node import Node
from .purgatory import FetchPurgatory, ProducePurgatory
from .replica_manager import ReplicaManager

__all__ = ["Broker", "Plane", "PID_BLOCK_SIZE"]

#: ``ProducerIdManager.PidBlockSize``
PID_BLOCK_SIZE = 1000


class Plane:
    """The data plane (metric prefix "") or the control plane (prefix "ControlPlane").

    Its gauges outlive the broker's process; its request queue, processors and handlers are the running
    process's (:meth:`open` makes them new)."""

    def __init__(self, name: str, metrics: Metrics, capacity: int, processors: int, prioritise_controller: bool):
        prefix = "ControlPlane" if name == "control" else ""
        self.name = name
        self.prefix = prefix
        self.env = metrics.env
        self.capacity = capacity
        self.prioritise_controller = prioritise_controller
        self.request_queue_size = metrics.gauge(f"{prefix}RequestQueueSize")
        self.response_queue_size = metrics.gauge(f"{prefix}ResponseQueueSize")
        self.processor_busy = metrics.gauge(f"{prefix}NetworkProcessorAvgIdlePercent", threads=processors)
        self.handler_busy = None  # set once the handler count is known
        self.request_queue: RequestQueue | None = None
        self.processors: list[Processor] = []
        self.handlers: RequestHandlerPool | None = None
        self.open()

    def open(self) -> None:
        """A new process's plane: an empty request queue; its processors and handlers are started next."""
        self.request_queue = RequestQueue(self.env, self.capacity, self.request_queue_size, self.prioritise_controller)
        self.processors = []
        self.handlers = None


class Broker:
    """One Kafka broker: its socket server and planes, ``KafkaApis``, purgatories, replicas, metadata cache.

    In a :class:`~kafka_lab.sim.cluster.Cluster` it also has fetcher threads for the partitions it
    follows, an AlterIsr channel to the controller and the ``isr-expiration`` task; alone (``cluster``
    None) nobody replicates from it unless a test drives its Fetch path directly.
    """

    def __init__(
        self, env, props=None, *, rng, settings: ModelSettings | None = None, cluster=None, broker_epoch: int = 1
    ):
        self.env = env
        self.config = cfg = props if isinstance(props, BrokerConfig) else BrokerConfig.from_properties(props)
        self.settings = settings = settings or ModelSettings()
        self.id = cfg.broker_id
        self.broker_epoch = broker_epoch  # KIP-380: the czxid of its registration znode
        self.first_broker_epoch = broker_epoch  # before any restart (each start-up's is in lifecycle)
        self.node = Node(env, f"broker {self.id}")  # its process: every thread and timer below belongs to it
        self.node.on_stop.append(self._process_stopped)
        self.lifecycle: list = []  # (time_ms, event, detail): its shutdowns and start-ups
        #: its own clients' correlation ids (fetchers, AlterIsr), continued by the next process (see :mod:`.fetcher`)
        self.correlation_ids: dict = {}
        self.cluster = cluster
        self.metrics = Metrics(env)
        self.replica_manager = rm = ReplicaManager(
            self.id,
            env,
            replica_lag_time_max_ms=cfg.replica_lag_time_max_ms,
            min_insync_replicas=cfg.min_insync_replicas,
        )
        self.metadata_cache = MetadataCache()
        rm.metadata_cache = self.metadata_cache
        self.apis = KafkaApis(self, {**default_costs(), **settings.costs}, rng)
        self._delayed_operations = self.metrics.gauge("NumDelayedOperations")
        self._purgatory_size = self.metrics.gauge("PurgatorySize")

        # SocketServer: the control plane's acceptor and processor first, then the data plane's
        self.acceptors: dict[str, Acceptor] = {}
        self.planes: dict[str, Plane] = {}
        if cfg.control_plane_listener is not None:
            lst = cfg.control_plane_listener
            plane = self.planes["control"] = Plane(
                "control", self.metrics, CONTROL_PLANE_QUEUE_CAPACITY, CONTROL_PLANE_PROCESSORS, False
            )
            self.acceptors[lst.name] = Acceptor(lst.name, lst.host, lst.port, [], plane, self.id)
        n_data = cfg.num_network_threads * len(cfg.data_plane_listeners)
        data = Plane("data", self.metrics, cfg.queued_max_requests, n_data, settings.prioritise_controller_requests)
        self.planes["data"] = data
        for lst in cfg.data_plane_listeners:
            self.acceptors[lst.name] = Acceptor(lst.name, lst.host, lst.port, [], data, self.id)
        data.handler_busy = self.metrics.gauge("RequestHandlerAvgIdlePercent", threads=cfg.num_io_threads)
        if "control" in self.planes:
            self.planes["control"].handler_busy = self.metrics.gauge(
                "ControlPlaneRequestHandlerAvgIdlePercent", threads=CONTROL_PLANE_HANDLERS
            )
        self.fetchers = None
        self.alter_isr = None
        #: in KRaft mode, its KRaft parts (:mod:`.broker_kraft`, started with each process by ``start_up_hooks``) and
        #: the partitions' append locks the metadata loader waits on; None in ZooKeeper mode
        self.kraft = None
        self.partition_locks = None
        self.start_up_hooks: list = []  # called at the end of each start-up (the KRaft parts' threads)
        self._producer_ids = None  # (next producer id, end of its block) of the running process
        self._start_process()

    def _start_process(self) -> None:
        """``KafkaServer.startup``'s threads, for the running process: purgatories, the socket server (the
        control plane's processor first, then the data plane's, as ``SocketServer.startup``), the handler
        pools, then in a cluster the fetcher manager, the AlterIsr sender and ``isr-expiration``."""
        env, cfg, settings, node, rm = self.env, self.config, self.settings, self.node, self.replica_manager
        self.produce_purgatory = ProducePurgatory(
            env, rm, self._delayed_operations, self._purgatory_size, self.apis.respond, node=node
        )
        self.fetch_purgatory = FetchPurgatory(env, self.apis.respond_follower_fetch, node=node)
        rm.produce_purgatory = self.produce_purgatory
        rm.fetch_purgatory = self.fetch_purgatory
        self._producer_ids = self._producer_id_block()
        pid = 0
        read_ms, send_ms = settings.network_read_ms, settings.network_send_ms
        if "control" in self.planes:
            lst, plane = cfg.control_plane_listener, self.planes["control"]
            plane.open()
            plane.processors.append(Processor(env, pid, lst.name, plane, read_ms, send_ms, node=node))
            pid += 1
            self.acceptors[lst.name].open(plane.processors, plane)
        data = self.planes["data"]
        data.open()
        for lst in cfg.data_plane_listeners:
            procs = []
            for _ in range(cfg.num_network_threads):
                procs.append(Processor(env, pid, lst.name, data, read_ms, send_ms, node=node))
                pid += 1
            data.processors.extend(procs)
            self.acceptors[lst.name].open(procs, data)
        data.handlers = RequestHandlerPool(env, data, cfg.num_io_threads, self.apis, node=node)
        if "control" in self.planes:
            cp = self.planes["control"]
            cp.handlers = RequestHandlerPool(env, cp, CONTROL_PLANE_HANDLERS, self.apis, node=node)
        if self.cluster is not None:
            from .alter_isr import AlterIsrManager
            from .fetcher import ReplicaFetcherManager

            self.fetchers = rm.fetchers = ReplicaFetcherManager(self, self.cluster, settings.replica_append_ms)
            self.alter_isr = AlterIsrManager(self, self.cluster)
            rm.alter_isr = self.alter_isr.submit
            if cfg.replica_lag_time_max_ms > 0:
                node.thread(self._isr_expiration())

    def _producer_id_block(self) -> tuple:
        """``ProducerIdManager``: at start-up (and when its block runs out) a broker takes the next block of
        ``PidBlockSize`` (1000) producer ids from ZooKeeper's ``/latest_producer_id_block`` (the cluster's count
        of blocks; the conditional ZooKeeper write it takes is not simulated)."""
        n = self.cluster.next_producer_id_block() if self.cluster is not None else 0
        return n * PID_BLOCK_SIZE, (n + 1) * PID_BLOCK_SIZE - 1

    def generate_producer_id(self) -> int:
        """``ProducerIdManager.generateProducerId``: the next id of this process's block, a new block after its end."""
        nxt, end = self._producer_ids
        if nxt > end:
            nxt, end = self._producer_id_block()
        self._producer_ids = (nxt + 1, end)
        return nxt

    def _isr_expiration(self):
        """``isr-expiration``: every ``replica.lag.time.max.ms / 2``, shrink the ISRs of lagging followers."""
        period = self.config.replica_lag_time_max_ms / 2.0
        while True:
            yield self.env.timeout(period)
            self.replica_manager.maybe_shrink_isr()

    @property
    def online(self) -> bool:
        """Whether its process is running (False from a shutdown to the next start-up, :mod:`kafka_lab.sim.zk.lifecycle`)."""
        return self.node.alive

    def shut_down(self) -> None:
        """``KafkaServer.shutdown`` after the controlled shutdown: the process ends (:meth:`_process_stopped`)."""
        self.node.stop()

    def _process_stopped(self) -> None:
        """Its threads have stopped: every connection to it closes (its clients see a disconnection, new ones
        are refused), its own connections close, its gauges read 0."""
        for acceptor in self.acceptors.values():
            acceptor.close()
        if self.fetchers is not None:
            self.fetchers.close()
        if self.alter_isr is not None:
            self.alter_isr.close()
        for gauge in self.metrics.gauges.values():
            if gauge.value:
                gauge.add(-gauge.value)

    def start_up(self, broker_epoch: int) -> None:
        """A new process on the same logs: a new broker epoch, new threads (:meth:`_start_process`), an empty
        metadata cache, and partitions that wait for the controller's LeaderAndIsr (the leader epochs it knew
        are not kept in memory)."""
        self.node.start()
        self.broker_epoch = broker_epoch
        self._start_process()
        self.replica_manager.restart()
        self.metadata_cache.reset()
        for hook in self.start_up_hooks:
            hook()

    @property
    def has_control_plane(self) -> bool:
        return "control" in self.planes

    def connect(self, listener: str, client_id: str, client_host: str = "10.0.0.1", on_disconnect=None):
        """Open a connection to ``listener`` (the acceptor assigns it a processor); ``on_disconnect(connection)``
        is called if the broker closes it. :class:`~kafka_lab.sim.network.socket_server.ConnectionRefused` when the broker's
        process is not running."""
        try:
            acceptor = self.acceptors[listener]
        except KeyError:
            raise ValueError(
                f"broker {self.id} has no listener {listener!r}; it listens on {sorted(self.acceptors)}"
            ) from None
        return acceptor.accept(client_id, client_host, on_disconnect)

    def controller_connection(self, listener: str, controller_id: int):
        """The connection controller ``controller_id`` opens to ``listener``, the name *its* config picks
        (:func:`~kafka_lab.sim.zk.controller.controller_route`); this broker's acceptor for that listener puts it on
        the control plane if this broker's ``control.plane.listener.name`` names it, else on the data plane."""
        return self.connect(listener, f"controller-{controller_id}", client_host="10.0.0.100")

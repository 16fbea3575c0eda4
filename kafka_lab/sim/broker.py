"""A broker: its socket server (one or two planes), request channel, handler pools, purgatory and replicas.

A *plane* is one path through the broker: acceptors and network processors, a bounded request
queue, a handler pool, and the processors' response queues. Every broker has the data plane
(``num.network.threads`` processors per data-plane listener, ``queued.max.requests``,
``num.io.threads`` handlers). With ``control.plane.listener.name`` set it also has KIP-291's
control plane: one acceptor on that listener, one processor, a queue of 20, one handler thread.
Both planes hand requests to the same ``KafkaApis`` and the same replica manager.

Clients and the controller are separate processes: they :meth:`Broker.connect` to a listener of a
broker, as a real client opens a socket to an advertised endpoint.
"""

from __future__ import annotations

from .apis import KafkaApis, default_costs
from .channel import RequestQueue
from .config import (
    CONTROL_PLANE_HANDLERS,
    CONTROL_PLANE_PROCESSORS,
    CONTROL_PLANE_QUEUE_CAPACITY,
    BrokerConfig,
    ModelSettings,
)
from .handlers import RequestHandlerPool
from .metrics import Metrics
from .network import Acceptor, Processor
from .purgatory import FetchPurgatory, ProducePurgatory
from .replica import MetadataCache, ReplicaManager

__all__ = ["Broker", "Plane"]


class Plane:
    """The data plane (metric prefix "") or the control plane (prefix "ControlPlane")."""

    def __init__(self, name: str, metrics: Metrics, capacity: int, processors: int, prioritise_controller: bool):
        prefix = "ControlPlane" if name == "control" else ""
        self.name = name
        self.prefix = prefix
        self.request_queue_size = metrics.gauge(f"{prefix}RequestQueueSize")
        self.response_queue_size = metrics.gauge(f"{prefix}ResponseQueueSize")
        self.processor_busy = metrics.gauge(f"{prefix}NetworkProcessorAvgIdlePercent", threads=processors)
        self.handler_busy = None  # set once the handler count is known
        self.request_queue = RequestQueue(metrics.env, capacity, self.request_queue_size, prioritise_controller)
        self.processors: list[Processor] = []
        self.handlers: RequestHandlerPool | None = None


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
        self.online = True  # False between a shutdown and the next start-up (:mod:`.lifecycle`)
        self.lifecycle: list = []  # (time_ms, event, detail): its shutdowns and start-ups
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
        respond = self.apis.respond
        self.produce_purgatory = ProducePurgatory(
            env,
            self.replica_manager,
            self.metrics.gauge("NumDelayedOperations"),
            self.metrics.gauge("PurgatorySize"),
            respond,
        )
        self.fetch_purgatory = FetchPurgatory(env, self.apis.respond_follower_fetch)
        self.replica_manager.produce_purgatory = self.produce_purgatory
        self.replica_manager.fetch_purgatory = self.fetch_purgatory

        self.acceptors: dict[str, Acceptor] = {}
        self.planes: dict[str, Plane] = {}
        pid = 0
        # SocketServer.startup: the control plane's acceptor and processor first, then the data plane's
        if cfg.control_plane_listener is not None:
            lst = cfg.control_plane_listener
            plane = self.planes["control"] = Plane(
                "control", self.metrics, CONTROL_PLANE_QUEUE_CAPACITY, CONTROL_PLANE_PROCESSORS, False
            )
            plane.processors.append(
                Processor(env, pid, lst.name, plane, settings.network_read_ms, settings.network_send_ms)
            )
            pid += 1
            self.acceptors[lst.name] = Acceptor(lst.name, lst.host, lst.port, plane.processors, plane, self.id)
        n_data = cfg.num_network_threads * len(cfg.data_plane_listeners)
        data = Plane("data", self.metrics, cfg.queued_max_requests, n_data, settings.prioritise_controller_requests)
        self.planes["data"] = data
        for lst in cfg.data_plane_listeners:
            procs = []
            for _ in range(cfg.num_network_threads):
                procs.append(Processor(env, pid, lst.name, data, settings.network_read_ms, settings.network_send_ms))
                pid += 1
            data.processors.extend(procs)
            self.acceptors[lst.name] = Acceptor(lst.name, lst.host, lst.port, procs, data, self.id)
        data.handler_busy = self.metrics.gauge("RequestHandlerAvgIdlePercent", threads=cfg.num_io_threads)
        data.handlers = RequestHandlerPool(env, data, cfg.num_io_threads, self.apis)
        if "control" in self.planes:
            cp = self.planes["control"]
            cp.handler_busy = self.metrics.gauge(
                "ControlPlaneRequestHandlerAvgIdlePercent", threads=CONTROL_PLANE_HANDLERS
            )
            cp.handlers = RequestHandlerPool(env, cp, CONTROL_PLANE_HANDLERS, self.apis)
        self.fetchers = None
        self.alter_isr = None
        if cluster is not None:
            from .fetcher import AlterIsrManager, ReplicaFetcherManager

            self.fetchers = rm.fetchers = ReplicaFetcherManager(self, cluster, settings.replica_append_ms)
            self.alter_isr = AlterIsrManager(self, cluster)
            rm.alter_isr = self.alter_isr.submit
            if cfg.replica_lag_time_max_ms > 0:
                env.process(self._isr_expiration())

    def _isr_expiration(self):
        """``isr-expiration``: every ``replica.lag.time.max.ms / 2``, shrink the ISRs of lagging followers."""
        period = self.config.replica_lag_time_max_ms / 2.0
        while True:
            yield self.env.timeout(period)
            self.replica_manager.maybe_shrink_isr()

    def shut_down(self) -> None:
        """``KafkaServer.shutdown`` after the controlled shutdown: the fetchers stop, connections are refused."""
        self.online = False
        if self.fetchers is not None:
            self.fetchers.remove_partitions(list(self.fetchers.fetching()))

    def start_up(self, broker_epoch: int) -> None:
        """A new process on the same logs: a new broker epoch, an empty metadata cache, and partitions
        that wait for the controller's LeaderAndIsr (the leader epochs it knew are not kept in memory)."""
        self.online = True
        self.broker_epoch = broker_epoch
        self.replica_manager.restart()
        self.metadata_cache.reset()

    @property
    def has_control_plane(self) -> bool:
        return "control" in self.planes

    def connect(self, listener: str, client_id: str, client_host: str = "10.0.0.1"):
        """Open a connection to ``listener`` (the acceptor assigns it a processor)."""
        try:
            acceptor = self.acceptors[listener]
        except KeyError:
            raise ValueError(
                f"broker {self.id} has no listener {listener!r}; it listens on {sorted(self.acceptors)}"
            ) from None
        return acceptor.accept(client_id, client_host)

    def controller_connection(self, listener: str, controller_id: int):
        """The connection controller ``controller_id`` opens to ``listener``, the name *its* config picks
        (:func:`~kafka_lab.sim.controller.controller_route`); this broker's acceptor for that listener puts it on
        the control plane if this broker's ``control.plane.listener.name`` names it, else on the data plane."""
        return self.connect(listener, f"controller-{controller_id}", client_host="10.0.0.100")

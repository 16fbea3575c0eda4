"""A KRaft controller node (``process.roles=controller``): its process, socket server, ``ControllerApis``, Raft
client and quorum controller (Kafka 4.0's ``ControllerServer``).

A controller node is built from its properties as Kafka reads them (``process.roles=controller``, ``node.id``,
``listeners=CONTROLLER://...``, ``controller.listener.names``, ``controller.quorum.voters``), resolved and
checked by :func:`kafka_lab.listeners.resolve_kraft` (docs/kafka-reference.md §8.3). It serves its controller
listener with the same network layer a broker uses: an acceptor, ``num.network.threads`` processors, a request
queue of ``queued.max.requests`` and ``num.io.threads`` request handler threads (:mod:`kafka_lab.sim.network.socket_server`,
:mod:`kafka_lab.sim.network.request_channel`, :mod:`kafka_lab.sim.server.handlers`), so a controller's requests appear in the
cluster's request log with Kafka's timings, their ``broker_id`` the controller's node id.

``ControllerApis`` hands each request on, as Kafka's does: ``Vote``, ``BeginQuorumEpoch``, ``EndQuorumEpoch``
and ``Fetch`` to the Raft client's queue (``RaftManager.handleRequest``), ``BrokerRegistration``,
``BrokerHeartbeat`` and ``AlterPartition`` to the quorum controller's event queue; the handler's own work is
short (``controller_api_ms``), and the answer comes when the raft thread or the controller's event has done
its part (the request's ``remoteTime``). A heartbeat carries a deadline, half the heartbeat interval after the
handler took it (``handleBrokerHeartBeatRequest``).

Every thread and timer of the node goes through its :class:`~kafka_lab.sim.server.node.Node`: when the process
stops, its raft thread, event thread, processors and handlers stop with it, its connections close, and new ones
are refused; :meth:`ControllerServer.start_up` builds a new process on the same disk (its Raft log and quorum
state).
"""

from __future__ import annotations

from kafka_lab.listeners import resolve_kraft

from ..common.metrics import Metrics
from ..network.request import IN_FLIGHT
from ..network.socket_server import Acceptor, Processor
from ..server.broker import Plane
from ..server.handlers import RequestHandlerPool
from ..server.node import Node
from .quorum_controller import ControllerError, QuorumController
from .raft import RAFT_APIS, RaftClient

__all__ = ["ControllerServer", "ControllerApis", "controller_properties", "CONTROLLER_APIS", "CONTROLLER_PORT"]

#: what the quorum controller answers (its own APIs; the Raft ones go to the raft thread)
CONTROLLER_APIS = frozenset({"BrokerRegistration", "BrokerHeartbeat", "AlterPartition"})
#: the port the model's controllers listen on (the quickstart's ``CONTROLLER://:9093``)
CONTROLLER_PORT = 9093


def controller_properties(node_id: int, voters: dict) -> dict:
    """A controller node's properties: ``process.roles=controller``, its ``CONTROLLER`` listener, the voters
    (``{id: host}``, each on :data:`CONTROLLER_PORT`)."""
    return {
        "process.roles": "controller",
        "node.id": str(node_id),
        "listeners": f"CONTROLLER://{voters[node_id]}:{CONTROLLER_PORT}",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": ",".join(f"{v}@{h}:{CONTROLLER_PORT}" for v, h in voters.items()),
    }


class ControllerApis:
    """``ControllerApis``: each request handed to the raft thread or the quorum controller."""

    def __init__(self, server):
        self.server = server
        self.env = server.env

    def handle(self, req) -> float:
        return self.server.costs.controller_api_ms

    def respond(self, req) -> None:
        if req.error == IN_FLIGHT:
            req.error = "NONE"
        req.connection.processor.enqueue_response(req)

    def complete_local(self, req) -> None:
        req.api_local_complete = self.env.now
        api, s = req.api, self.server
        if api in RAFT_APIS:
            s.raft.handle_request(req, self.respond)
            return
        if api not in CONTROLLER_APIS:
            req.error = "UNSUPPORTED_VERSION"
            self.respond(req)
            return

        def done(result, error, req=req):
            if error is not None:
                req.error = error.error if isinstance(error, ControllerError) else "UNKNOWN_SERVER_ERROR"
                req.result = {"message": getattr(error, "message", str(error))}
            else:
                req.result = result
            self.respond(req)

        p = req.payload
        if api == "BrokerRegistration":
            s.controller.register_broker(p, done)
        elif api == "BrokerHeartbeat":
            s.controller.broker_heartbeat(p, done, self.env.now + s.kraft_config.heartbeat_deadline_ms)
        else:
            s.controller.alter_partition(p, done)


class ControllerServer:
    """One controller node (see the module)."""

    def __init__(
        self,
        env,
        props: dict,
        *,
        peers: dict,
        request_log,
        history,
        rng,
        kraft_config,
        costs,
        settings,
        num_network_threads: int = 3,
        num_io_threads: int = 8,
        queued_max_requests: int = 500,
    ):
        self.env = env
        self.config = cfg = resolve_kraft(props)
        if cfg.process_roles != ("controller",):
            raise ValueError(f"a controller node has process.roles=controller, got {','.join(cfg.process_roles)}")
        self.id = cfg.node_id
        self.props = dict(props)
        self.kraft_config = kraft_config
        self.costs = costs
        self.settings = settings
        self.node = Node(env, f"controller {self.id}")
        self.node.on_stop.append(self._process_stopped)
        self.metrics = Metrics(env)
        self.lifecycle: list = []
        self.num_io_threads = num_io_threads
        lst = cfg.listeners[0]
        self.listener_name = lst.listener_name
        self.plane = Plane("data", self.metrics, queued_max_requests, num_network_threads, False)
        self.plane.handler_busy = self.metrics.gauge("RequestHandlerAvgIdlePercent", threads=num_io_threads)
        self.acceptor = Acceptor(
            lst.listener_name, lst.host or f"controller-{self.id}", lst.port, [], self.plane, self.id
        )
        self.num_network_threads = num_network_threads
        self.apis = ControllerApis(self)
        self.raft = RaftClient(
            env,
            self.id,
            voters=list(cfg.voters),
            peers=peers,
            node=self.node,
            rng=rng,
            request_log=request_log,
            history=history,
            listener_name=self.listener_name,
            config=kraft_config.quorum,
            io_ms=costs.raft_io_ms,
            client_host=f"10.0.3.{self.id % 250}",
        )
        self.controller = QuorumController(self, self.raft, config=kraft_config, costs=costs, history=history)

    def start(self) -> None:
        """``ControllerServer.startup``: the socket server, the handlers, the raft thread, the controller."""
        env, node, plane = self.env, self.node, self.plane
        plane.open()
        read_ms, send_ms = self.settings.network_read_ms, self.settings.network_send_ms
        plane.processors = [
            Processor(env, i, self.listener_name, plane, read_ms, send_ms, node=node)
            for i in range(self.num_network_threads)
        ]
        self.acceptor.open(plane.processors, plane)
        plane.handlers = RequestHandlerPool(env, plane, self.num_io_threads, self.apis, node=node)
        self.raft.start()
        self.controller.start()

    @property
    def online(self) -> bool:
        return self.node.alive

    def connect(self, listener: str, client_id: str, client_host: str = "10.0.0.1", on_disconnect=None):
        """A connection to this node's controller listener (:class:`~kafka_lab.sim.network.socket_server.ConnectionRefused`
        while its process is not running)."""
        if listener != self.listener_name:
            raise ValueError(f"controller {self.id} listens on {self.listener_name}, not {listener!r}")
        return self.acceptor.accept(client_id, client_host, on_disconnect)

    def shut_down(self) -> None:
        """The process ends (a stop: every thread, timer and connection of it)."""
        self.lifecycle.append((self.env.now, "shut_down", None))
        self.node.stop()

    def start_up(self) -> None:
        """A new process on the same disk: the Raft log and quorum state it had."""
        self.node.start()
        self.lifecycle.append((self.env.now, "started", None))
        self.start()

    def _process_stopped(self) -> None:
        self.acceptor.close()
        for gauge in self.metrics.gauges.values():
            if gauge.value:
                gauge.add(-gauge.value)

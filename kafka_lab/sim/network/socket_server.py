"""The socket server: acceptors, network processors and connections.

Kafka's ``SocketServer`` binds one *acceptor* per listener. The acceptor hands each new connection
to one of its listener's *network processors* (``num.network.threads`` per data-plane listener),
round-robin. A processor is one thread multiplexing all of its connections:

- it reads a complete request from a connection, stamps it (``start``) and puts it into its plane's
  request queue. Having read one request from a connection it *mutes* that connection: the broker
  handles one request per connection at a time, in order, and reads the next only after the
  response has been sent (later requests wait in the socket);
- when the request queue is full the put blocks, and with it the whole processor: every other
  connection it owns waits, including, without KIP-291, the controller's (head-of-line blocking),
  and the responses in its response queue are not sent either;
- it takes responses from its own response queue and writes them to their connections, then
  unmutes them.

With KIP-291 (``control.plane.listener.name`` set) the control-plane listener gets its own acceptor
and a single processor feeding the control-plane request queue. Read and send times are small and
configurable (``network_read_ms``, ``network_send_ms``).

**Closing.** A client closes its connection (``close``: a request timeout, or the client's own process
ending): requests still in the socket are lost, the broker answers the one it has read into a closed
socket. The broker closes it (``server_close``) when its process stops, or when ``KafkaApis`` asks the
processor to (an ``acks=0`` produce that failed: ``CloseConnectionResponse``): every request the client
still waits on over it is lost, ``DISCONNECTED`` in the request log, and the client hears of it as a
disconnection (``on_disconnect``, then each lost request completes with ``NETWORK_EXCEPTION`` for each of
its partitions, as ``NetworkClient.handleDisconnections`` completes them). A broker whose process is not
running refuses new connections (:class:`ConnectionRefused`).

Simplification: Kafka's processor works in rounds (send every queued response, poll the selector,
then put every request the poll completed); the model's processor does one thing at a time,
responses first, then the oldest request ready to read. The order of requests and the blocking on a
full queue are the same; a request's ``start`` is stamped just before its put, as in Kafka, so time
spent blocked on the put shows in ``requestQueueTime`` of that request and in ``socketWaitTime`` of
the requests behind it.
"""

from __future__ import annotations

from collections import deque
from itertools import count

__all__ = ["Connection", "ConnectionRefused", "Processor", "Acceptor", "DISCONNECTED"]

#: the request log's error for a request lost with its connection (it never completed at the broker)
DISCONNECTED = "DISCONNECTED"


class ConnectionRefused(ConnectionRefusedError):
    """A connection to a broker whose process is not running (the client sees a disconnection)."""


class Connection:
    """A client's TCP connection to one listener, owned by one processor."""

    __slots__ = (
        "connection_id",
        "listener",
        "plane",
        "processor",
        "client_id",
        "in_flight",
        "pending",
        "broker_id",
        "closed",
        "acceptor",
        "on_disconnect",
    )

    def __init__(
        self,
        connection_id: str,
        listener: str,
        plane: str,
        processor: Processor,
        client_id: str,
        broker_id: int = 0,
        acceptor: Acceptor | None = None,
        on_disconnect=None,
    ):
        self.connection_id = connection_id
        self.broker_id = broker_id
        self.closed = False
        self.acceptor = acceptor
        self.on_disconnect = on_disconnect  # the client's callback(connection) when the broker closes it
        self.listener = listener
        self.plane = plane
        self.processor = processor
        self.client_id = client_id
        self.in_flight = None  # the one request the broker is working on (the connection is muted)
        self.pending: deque = deque()  # requests written by the client, still in the socket

    def send(self, req) -> None:
        """The client writes ``req`` to the socket."""
        req.connection = self
        req.sent = self.processor.env.now
        if self.in_flight is None:
            self.in_flight = req
            self.processor.ready(req)
        else:
            self.pending.append(req)

    def close(self) -> None:
        """The client closes the connection: requests still in the socket are lost (``DISCONNECTED``); the one
        the broker has read is still handled, and answered into the closed socket."""
        self.closed = True
        if self.acceptor is not None:
            self.acceptor.connections.pop(self, None)
        now = self.processor.env.now
        while self.pending:
            req = self.pending.popleft()
            req.error = DISCONNECTED
            req.end = now

    def server_close(self, answered=None) -> None:
        """The broker closes the connection (see the module): ``answered``, the request whose answer this is (an
        ``acks=0`` produce that failed), ends as it is; every other request the client waits on over it is lost,
        and the client is told (``on_disconnect``) before each lost request completes."""
        if self.closed:
            return
        self.closed = True
        if self.acceptor is not None:
            self.acceptor.connections.pop(self, None)
        now = self.processor.env.now
        lost = [] if self.in_flight is None or self.in_flight is answered else [self.in_flight]
        lost.extend(self.pending)
        self.in_flight = None
        self.pending.clear()
        for req in lost:
            req.error = DISCONNECTED
            req.partition_errors = dict.fromkeys(req.partitions, "NETWORK_EXCEPTION")
            req.result = None
            req.end = now
        if self.on_disconnect is not None:
            self.on_disconnect(self)
        if answered is not None and answered.on_done is not None:
            answered.on_done(answered)
        for req in lost:
            if req.on_done is not None:
                req.on_done(req)

    def response_sent(self, req) -> None:
        """The processor finished sending ``req``'s response: unmute, the next request can be read."""
        self.in_flight = None
        if self.pending:
            nxt = self.pending.popleft()
            self.in_flight = nxt
            self.processor.ready(nxt)


class Processor:
    """A network thread: reads requests into the request queue, writes responses back."""

    def __init__(self, env, pid: int, listener: str, plane, read_ms: float, send_ms: float, node=None):
        self.env = env
        self.id = pid
        self.listener = listener
        self.plane = plane
        self.read_ms = read_ms
        self.send_ms = send_ms
        self.receives: deque = deque()  # connections with a request ready to read, in arrival order
        self.responses: deque = deque()  # this processor's response queue
        self._wake = None
        self.blocked_since = None
        if node is not None:
            node.thread(self._run())
        else:
            env.process(self._run())

    def ready(self, req) -> None:
        self.receives.append(req)
        if self._wake is not None:
            self._wake.succeed()
            self._wake = None

    def enqueue_response(self, req) -> None:
        """A handler (or purgatory) hands over a response: ``responseComplete``."""
        req.response_complete = self.env.now
        self.responses.append(req)
        self.plane.response_queue_size.add(1)
        if self._wake is not None:
            self._wake.succeed()
            self._wake = None

    def _run(self):
        env = self.env
        timeout = env.timeout
        plane = self.plane
        queue = plane.request_queue
        busy = plane.processor_busy
        response_queue_size = plane.response_queue_size
        responses, receives = self.responses, self.receives
        busy.add(1)
        while True:
            if responses:  # processNewResponses comes before reading new requests
                req = responses.popleft()
                response_queue_size.add(-1)
                req.response_dequeue = env.now
                conn = req.connection
                if req.close_connection:  # CloseConnectionResponse: no answer, the connection closes
                    req.end = env.now
                    conn.server_close(answered=req)
                    continue
                if self.send_ms and not req.no_response and not conn.closed:
                    yield timeout(self.send_ms)
                req.end = env.now
                conn.response_sent(req)
                if req.on_done is not None and not conn.closed:  # a closed socket delivers nothing
                    req.on_done(req)
            elif receives:
                req = receives.popleft()
                # reading takes read_ms; even at 0 the thread yields, so processors interleave as threads do
                yield timeout(self.read_ms)
                req.start = env.now
                blocked = queue.offer(req)
                if blocked is not None:  # the request queue is full: this whole thread waits
                    self.blocked_since = env.now
                    yield blocked
                    self.blocked_since = None
            else:
                busy.add(-1)
                self._wake = env.event()
                yield self._wake
                busy.add(1)


class Acceptor:
    """Accepts connections on one listener and assigns them to its processors round-robin.

    It outlives its broker's process (its port is the broker's): :meth:`open` hands it the processors of
    a new process, :meth:`close` closes every connection it accepted and refuses new ones until then.
    Connection ids keep counting across processes, so each one names one connection."""

    def __init__(self, listener: str, host: str, port: int, processors: list[Processor], plane, broker_id: int = 0):
        self.broker_id = broker_id
        self.listener = listener
        self.host = host or "127.0.0.1"
        self.port = port
        self.processors = processors
        self.plane = plane
        self.connections: dict = {}  # the open connections it accepted, in the order it accepted them
        self._next = 0
        self._index = count()

    def open(self, processors: list[Processor], plane) -> None:
        """A new process listens here: its processors take the new connections."""
        self.processors = processors
        self.plane = plane

    def close(self) -> None:
        """The process stopped: every open connection closes (its client is told), new ones are refused."""
        self.processors = []
        for conn in list(self.connections):
            conn.server_close()

    def accept(self, client_id: str, client_host: str = "10.0.0.1", on_disconnect=None) -> Connection:
        if not self.processors:
            raise ConnectionRefused(f"broker {self.broker_id} is not running: {self.listener} refuses connections")
        proc = self.processors[self._next % len(self.processors)]
        self._next += 1
        i = next(self._index)
        cid = f"{self.host}:{self.port}-{client_host}:{50000 + i}-{i}"
        conn = Connection(cid, self.listener, self.plane.name, proc, client_id, self.broker_id, self, on_disconnect)
        self.connections[conn] = None
        return conn

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

__all__ = ["Connection", "Processor", "Acceptor"]


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
    )

    def __init__(
        self, connection_id: str, listener: str, plane: str, processor: Processor, client_id: str, broker_id: int = 0
    ):
        self.connection_id = connection_id
        self.broker_id = broker_id
        self.closed = False
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
        """The client closes the connection: requests still in the socket are lost (``DISCONNECTED``)."""
        self.closed = True
        now = self.processor.env.now
        while self.pending:
            req = self.pending.popleft()
            req.error = "DISCONNECTED"
            req.end = now

    def response_sent(self, req) -> None:
        """The processor finished sending ``req``'s response: unmute, the next request can be read."""
        self.in_flight = None
        if self.pending:
            nxt = self.pending.popleft()
            self.in_flight = nxt
            self.processor.ready(nxt)


class Processor:
    """A network thread: reads requests into the request queue, writes responses back."""

    def __init__(self, env, pid: int, listener: str, plane, read_ms: float, send_ms: float):
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
                if self.send_ms and not req.no_response and not conn.closed:
                    yield timeout(self.send_ms)
                req.end = env.now
                conn.response_sent(req)
                if req.on_done is not None:
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
    """Accepts connections on one listener and assigns them to its processors round-robin."""

    def __init__(self, listener: str, host: str, port: int, processors: list[Processor], plane, broker_id: int = 0):
        self.broker_id = broker_id
        self.listener = listener
        self.host = host or "127.0.0.1"
        self.port = port
        self.processors = processors
        self.plane = plane
        self._next = 0
        self._index = count()

    def accept(self, client_id: str, client_host: str = "10.0.0.1") -> Connection:
        proc = self.processors[self._next % len(self.processors)]
        self._next += 1
        i = next(self._index)
        cid = f"{self.host}:{self.port}-{client_host}:{50000 + i}-{i}"
        return Connection(cid, self.listener, self.plane.name, proc, client_id, self.broker_id)

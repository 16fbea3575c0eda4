"""The processes that talk to a broker: producers, consumers, metadata clients, followers, the controller.

Each is a separate simpy process with its own connections, opened through the broker's acceptor
on a listener, the way a real client connects to an advertised endpoint. Open-loop clients send at
Poisson times (rate in requests per second of simulated time) regardless of how the broker is
doing; requests written to a connection whose previous request is still being handled wait in the
socket (the broker reads one request per connection at a time). Each request becomes one
:class:`~kafka_lab.sim.network.request.Request`, kept in the scenario's request log.

- :class:`Producer`: ``Produce`` with ``acks`` 0, 1 or -1 (all), ``records`` per partition.
- :class:`Consumer`: consumer ``Fetch`` (no long poll).
- :class:`MetadataClient`: ``Metadata``.

These are lab 03's open-loop clients of one broker, with fixed partitions and no metadata of their
own; the clients of a cluster, with metadata, retries and a ledger, are in :mod:`.producer`. Followers
and the controller are brokers of the cluster (:mod:`kafka_lab.sim.server.fetcher`, :mod:`kafka_lab.sim.zk.controller`).
"""

from __future__ import annotations

from ..common.distributions import Exponential
from ..common.options import MAX_CONNECTIONS, check_number, check_open_loop, check_time
from ..network.request import Request

__all__ = ["Producer", "Consumer", "MetadataClient"]


class _Client:
    api = ""

    def __init__(self, scenario, broker, client_id: str, listener: str, connections: int):
        check_number(
            "connections",
            connections,
            whole=True,
            least=1,
            most=MAX_CONNECTIONS,
            why="each is a connection the broker's processors serve one request at a time",
        )
        self.scenario = scenario
        self.cluster = getattr(scenario, "cluster", scenario)  # lab 03's Scenario, or a Cluster
        self.env = scenario.env
        self.broker = broker
        self.client_id = client_id
        self.connections = [broker.connect(listener, client_id) for _ in range(connections)]
        self._next_conn = 0
        self._correlation = 0
        self.sent = 0

    def _request(self) -> Request:  # overridden
        raise NotImplementedError

    def send_one(self) -> Request:
        req = self._request()
        req.correlation_id = self._correlation
        self._correlation += 1
        conn = self.connections[self._next_conn]
        self._next_conn = (self._next_conn + 1) % len(self.connections)
        self.scenario.log.append(req)
        self.sent += 1
        conn.send(req)
        return req

    def open_loop(self, rate_per_s: float, start_ms: float = 0.0, stop_ms: float | None = None) -> None:
        """Send at Poisson times with ``rate_per_s`` requests per (simulated) second."""
        check_open_loop(rate_per_s, start_ms, stop_ms)
        self.cluster.expect_handovers(rate_per_s=rate_per_s, start_ms=self.env.now + start_ms, stop_ms=stop_ms)
        gap = Exponential(1000.0 / rate_per_s).sampler(self.scenario.rng(f"client:{self.client_id}"))
        self.env.process(self._open_loop(gap, start_ms, stop_ms))

    def _open_loop(self, gap, start_ms, stop_ms):
        env = self.env
        if start_ms:
            yield env.timeout(start_ms)
        send = self.send_one
        while True:
            yield env.timeout(gap())
            if stop_ms is not None and env.now > stop_ms:
                return
            send()

    def burst(self, n: int, at_ms: float = 0.0) -> None:
        """Write ``n`` requests at once, ``at_ms`` from now (a backlog)."""
        check_number("n", n, whole=True, least=0)
        check_time("at_ms", at_ms)
        self.cluster.expect_handovers(sends=n, start_ms=self.env.now + at_ms)

        def go():
            if at_ms:
                yield self.env.timeout(at_ms)
            for _ in range(n):
                self.send_one()

        self.env.process(go())


class Producer(_Client):
    """Open-loop ``Produce`` to one broker: ``acks`` 0, 1 or -1, ``records`` per partition, fixed partitions."""

    def __init__(
        self,
        scenario,
        broker,
        client_id="producer-1",
        *,
        listener,
        connections=1,
        acks=1,
        partitions=(("orders", 0),),
        records=10,
        request_timeout_ms=30000,
    ):
        if isinstance(acks, bool) or acks not in (0, 1, -1):
            raise ValueError(f"acks must be 0, 1 or -1 (all), got {acks!r}")
        check_number("records", records, whole=True, least=1)
        check_number("request_timeout_ms", request_timeout_ms, least=0)
        super().__init__(scenario, broker, client_id, listener, connections)
        self.acks, self.partitions, self.records, self.timeout_ms = acks, tuple(partitions), records, request_timeout_ms

    def _request(self):
        return Request(
            "Produce",
            0,
            self.client_id,
            acks=self.acks,
            partitions=self.partitions,
            records=self.records,
            timeout_ms=self.timeout_ms,
        )


class Consumer(_Client):
    """Open-loop consumer ``Fetch`` of fixed partitions from one broker (no long poll)."""

    def __init__(
        self, scenario, broker, client_id="consumer-1", *, listener, connections=1, partitions=(("orders", 0),)
    ):
        super().__init__(scenario, broker, client_id, listener, connections)
        self.partitions = tuple(partitions)

    def _request(self):
        return Request("Fetch", 0, self.client_id, partitions=self.partitions, payload={"replica_id": -1})


class MetadataClient(_Client):
    """Open-loop ``Metadata`` requests about fixed partitions to one broker (admin tools, new clients)."""

    def __init__(self, scenario, broker, client_id="admin-1", *, listener, connections=1, partitions=(("orders", 0),)):
        super().__init__(scenario, broker, client_id, listener, connections)
        self.partitions = tuple(partitions)

    def _request(self):
        return Request("Metadata", 0, self.client_id, partitions=self.partitions)

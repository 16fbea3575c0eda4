"""The processes that talk to a broker: producers, consumers, metadata clients, followers, the controller.

Each is a separate simpy process with its own connections, opened through the broker's acceptor
on a listener, the way a real client connects to an advertised endpoint. Open-loop clients send at
Poisson times (rate in requests per second of simulated time) regardless of how the broker is
doing; requests written to a connection whose previous request is still being handled wait in the
socket (the broker reads one request per connection at a time). Each request becomes one
:class:`~kafka_lab.sim.records.Request`, kept in the scenario's request log.

- :class:`Producer`: ``Produce`` with ``acks`` 0, 1 or -1 (all), ``records`` per partition.
- :class:`Consumer`: consumer ``Fetch`` (no long poll).
- :class:`MetadataClient`: ``Metadata``.
- :class:`ReplicaFetcher`: a follower broker replicating from this one: ``Fetch`` with its
  replica id, in a loop, one at a time; it can stop fetching some partitions (KIP-291's example).
- :class:`Controller`: sends ``LeaderAndIsr``, ``UpdateMetadata``, ``StopReplica``; like
  ``ControllerChannelManager`` it keeps one queue per broker and at most one request in flight.
"""

from __future__ import annotations

from collections import deque

from .apis import CONTROLLER_APIS
from .distributions import Exponential
from .records import Request

__all__ = ["Producer", "Consumer", "MetadataClient", "ReplicaFetcher", "Controller"]


class _Client:
    api = ""

    def __init__(self, scenario, broker, client_id: str, listener: str, connections: int):
        if connections < 1:
            raise ValueError(f"a client needs at least one connection, got {connections}")
        self.scenario = scenario
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
        if not rate_per_s > 0:
            raise ValueError(f"a request rate must be > 0 per second, got {rate_per_s!r}")
        gap = Exponential(1000.0 / rate_per_s).sampler(self.scenario.rng)
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
        """Write ``n`` requests at once at ``at_ms`` (a backlog)."""

        def go():
            if at_ms:
                yield self.env.timeout(at_ms)
            for _ in range(n):
                self.send_one()

        self.env.process(go())


class Producer(_Client):
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
        if acks not in (0, 1, -1):
            raise ValueError(f"acks must be 0, 1 or -1 (all), got {acks!r}")
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
    def __init__(
        self, scenario, broker, client_id="consumer-1", *, listener, connections=1, partitions=(("orders", 0),)
    ):
        super().__init__(scenario, broker, client_id, listener, connections)
        self.partitions = tuple(partitions)

    def _request(self):
        return Request("Fetch", 0, self.client_id, partitions=self.partitions, payload={"replica_id": -1})


class MetadataClient(_Client):
    def __init__(self, scenario, broker, client_id="admin-1", *, listener, connections=1, partitions=(("orders", 0),)):
        super().__init__(scenario, broker, client_id, listener, connections)
        self.partitions = tuple(partitions)

    def _request(self):
        return Request("Metadata", 0, self.client_id, partitions=self.partitions)


class ReplicaFetcher(_Client):
    """A follower replicating ``partitions`` from ``broker``: fetch, append (``append_ms``), fetch again."""

    def __init__(self, scenario, broker, replica_id: int, *, listener, partitions, append_ms=0.1):
        super().__init__(scenario, broker, f"broker-{replica_id}-fetcher-0", listener, 1)
        self.replica_id = replica_id
        self.leo = dict.fromkeys(partitions, 0)
        self.stopped: set = set()
        self.append_ms = append_ms
        self._done = None
        self.env.process(self._run())

    def stop_fetching(self, tp) -> None:
        self.stopped.add(tp)

    def _request(self):
        tps = tuple(tp for tp in self.leo if tp not in self.stopped)
        return Request(
            "Fetch",
            0,
            self.client_id,
            partitions=tps,
            payload={"replica_id": self.replica_id, "offsets": {tp: self.leo[tp] for tp in tps}},
            on_done=self._on_done,
        )

    def _on_done(self, req):
        self._done.succeed(req)

    def _run(self):
        env = self.env
        while True:
            self._done = env.event()
            self.send_one()
            req = yield self._done
            if req.result:
                if self.append_ms:
                    yield env.timeout(self.append_ms)
                for tp, off in req.result.items():
                    if tp in self.leo and tp not in self.stopped:
                        self.leo[tp] = max(self.leo[tp], off)
            elif not req.partitions:
                yield env.timeout(500.0)  # nothing to fetch: back off (replica.fetch.backoff.ms order)


class Controller:
    """The controller's channel to brokers: one FIFO queue and one request in flight per broker."""

    def __init__(self, scenario, controller_id: int = 1, epoch: int = 1):
        self.scenario = scenario
        self.env = scenario.env
        self.id = controller_id
        self.epoch = epoch
        self.client_id = f"controller-{controller_id}"
        self._channels: dict = {}
        self._correlation = 0
        self.sent = 0

    def _channel(self, broker):
        ch = self._channels.get(broker.id)
        if ch is None:
            ch = self._channels[broker.id] = {
                "conn": broker.controller_connection(self.id),
                "queue": deque(),
                "busy": False,
            }
        return ch

    def send(
        self,
        broker,
        api: str,
        partition_states: list[dict] | None = None,
        *,
        at_ms: float = 0.0,
        partitions=None,
        delete_partitions: bool = False,
    ) -> None:
        """Queue a control request for ``broker`` at ``at_ms``; sent when the previous one is answered."""
        if api not in CONTROLLER_APIS:
            raise ValueError(f"the controller sends {sorted(CONTROLLER_APIS)}, not {api!r}")
        states = list(partition_states or [])
        tps = tuple(partitions) if partitions is not None else tuple((s["topic"], s["partition"]) for s in states)
        payload = {
            "controller_id": self.id,
            "controller_epoch": self.epoch,
            "partition_states": states,
            "delete_partitions": delete_partitions,
        }
        ch = self._channel(broker)

        def enqueue(_e=None):
            req = Request(
                api,
                self._correlation,
                self.client_id,
                partitions=tps,
                payload=payload,
                is_controller=True,
                on_done=lambda r: self._answered(ch),
            )
            self._correlation += 1
            ch["queue"].append(req)
            self._pump(ch)

        if at_ms <= self.env.now:
            enqueue()
        else:
            self.env.timeout(at_ms - self.env.now).callbacks.append(enqueue)

    def _pump(self, ch) -> None:
        if ch["busy"] or not ch["queue"]:
            return
        ch["busy"] = True
        req = ch["queue"].popleft()
        self.scenario.log.append(req)
        self.sent += 1
        ch["conn"].send(req)

    def _answered(self, ch) -> None:
        ch["busy"] = False
        self._pump(ch)

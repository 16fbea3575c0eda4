"""Followers are brokers: replica fetcher threads (Kafka 2.8).

A broker that follows partitions runs ``ReplicaFetcherManager``: with ``num.replica.fetchers=1`` one
:class:`ReplicaFetcherThread` per leader broker. The thread is a client of the leader like any
other: it connects to the leader's **inter-broker listener** (so its Fetch requests wait in the
leader's data-plane request queue behind produce traffic: a busy leader slows its own replication)
and loops:

1. send ``Fetch`` with its replica id and, per partition, the fetch offset (its own LEO), the epoch of
   its last fetched batch (``lastFetchedEpoch``, Fetch v12) and the leader epoch it believes current;
   the leader long-polls it up to ``replica.fetch.wait.max.ms`` (500 ms) when there is nothing new;
2. per partition of the response: an error (``NOT_LEADER_OR_FOLLOWER``, ``FENCED_LEADER_EPOCH``, ...)
   delays that partition by ``replica.fetch.backoff.ms`` (1000 ms); a *diverging epoch* truncates the
   log (``AbstractFetcherThread.truncateOnFetchResponse``: to ``min(leader's end offset of that epoch,
   own end offset of that epoch, own LEO)``; when its own largest epoch at or below the leader's is a
   different one, to that epoch's end, and the next fetch asks again); records are appended as they
   are, and the HW becomes ``min(leader's HW, own LEO)``;
3. a response for a partition whose leader epoch changed while it was in flight is dropped.

The thread's own work on a response with records (appending to the local log) takes ``append_ms``.

A fetch that fails whole, because its connection was closed (the leader's process stopped) or a new one is
refused, is ``AbstractFetcherThread.processFetchRequest``'s exception: the thread waits
``replica.fetch.backoff.ms`` (a partition added meanwhile wakes it), then delays each of its partitions
not already delayed by ``replica.fetch.backoff.ms`` more (``handlePartitionsWithErrors``), and the next
fetch connects again (``ReplicaFetcherBlockingSend`` closes the client on any error).

The fetcher threads are threads of the broker's process (:mod:`.node`): when it stops they stop, their
connections close, and what they had in hand (a fetch in flight) is gone.

Simplification: the threads of a restarted broker continue the correlation ids of the last process's (Kafka's
new ``NetworkClient`` starts again at 0), so that in a broker's request log a client and a correlation id name
one request.
"""

from __future__ import annotations

from itertools import count

from ..network.request import Request
from ..network.socket_server import DISCONNECTED, ConnectionRefused

__all__ = ["ReplicaFetcherManager", "ReplicaFetcherThread", "REPLICA_FETCH_BACKOFF_MS"]

#: replica.fetch.backoff.ms (2.8 default)
REPLICA_FETCH_BACKOFF_MS = 1000.0


class ReplicaFetcherManager:
    """The fetcher threads of one broker, one per leader broker."""

    def __init__(self, broker, cluster, append_ms: float = 0.1):
        self.broker = broker
        self.cluster = cluster
        self.append_ms = append_ms
        self.threads: dict = {}  # leader id -> ReplicaFetcherThread
        self.stopped: set = set()  # partitions this follower does not fetch, whatever their leader (stop_fetching)

    def add_partitions(self, leaders: dict) -> None:
        """Fetch each ``tp`` from ``leaders[tp]`` (removing it from any other thread first)."""
        self.remove_partitions(list(leaders))
        for tp, leader in leaders.items():
            if leader not in self.cluster.brokers:
                continue  # a leader outside the simulation (lab 03's one-broker view): nothing to fetch from
            t = self.threads.get(leader)
            if t is None:
                t = self.threads[leader] = ReplicaFetcherThread(self, leader)
            t.add(tp)

    def remove_partitions(self, tps) -> None:
        for t in self.threads.values():
            t.remove(tps)

    def stop_fetching(self, tp) -> None:
        """Incident knob: this follower stops fetching ``tp`` (KIP-291's example) until told otherwise, from
        whichever leader (a new process, after a restart, fetches again)."""
        self.stopped.add(tp)

    def resume_fetching(self, tp) -> None:
        if tp in self.stopped:
            self.stopped.discard(tp)
            for t in self.threads.values():
                if tp in t.partitions:
                    t.wake()

    def close(self) -> None:
        """The process stopped: each thread's connection to its leader closes (the threads stopped with it)."""
        for t in self.threads.values():
            if t.connection is not None:
                t.connection.close()

    def fetching(self) -> dict:
        """``{tp: leader id}`` of every partition a thread fetches."""
        return {tp: lid for lid, t in self.threads.items() for tp in t.partitions}


class ReplicaFetcherThread:
    """``ReplicaFetcherThread-0-<leader>`` of one follower broker."""

    def __init__(self, manager: ReplicaFetcherManager, leader_id: int):
        self.manager = manager
        self.broker = manager.broker
        self.cluster = manager.cluster
        self.env = self.broker.env
        self.leader_id = leader_id
        self.client_id = f"broker-{self.broker.id}-fetcher-0"
        self.connection = None
        self._connect()
        self.partitions: dict = {}  # tp -> delayed until (ms)
        self.stopped = manager.stopped
        self._wake = None
        # the correlation ids go on from the last process's thread (Kafka's new NetworkClient starts at 0): in
        # the logs a (client, correlation id) names one request
        self._correlation = self.broker.correlation_ids.setdefault(self.client_id + f"->{leader_id}", count())
        self.sent = 0
        self.broker.node.thread(self._run())

    def _connect(self):
        """A connection to the leader's inter-broker listener; None when it is refused."""
        leader = self.cluster.brokers[self.leader_id]
        try:
            self.connection = leader.connect(
                leader.config.inter_broker_listener_name, self.client_id, client_host=f"10.0.1.{self.broker.id % 250}"
            )
        except ConnectionRefused:
            self.connection = None
        return self.connection

    def add(self, tp) -> None:
        self.partitions[tp] = 0.0
        self.wake()

    def remove(self, tps) -> None:
        for tp in tps:
            self.partitions.pop(tp, None)

    def wake(self) -> None:
        if self._wake is not None and not self._wake.triggered:
            self._wake.succeed()

    def _ready(self) -> list:
        now = self.env.now
        return [tp for tp, until in self.partitions.items() if until <= now and tp not in self.stopped]

    def _run(self):
        env = self.env
        rm = self.broker.replica_manager
        me = self.broker.id
        while True:
            tps = self._ready()
            if not tps:
                delays = [u for tp, u in self.partitions.items() if tp not in self.stopped and u > env.now]
                self._wake = env.event()
                if delays:
                    yield env.any_of([self._wake, env.timeout(min(delays) - env.now)])
                else:
                    yield self._wake
                self._wake = None
                continue
            fetches = {}  # tp -> (fetch offset, last fetched epoch, the leader epoch the request is built with)
            partition = rm.partitions.get
            for tp in tps:
                p = partition(tp)
                if p is None:
                    self.partitions.pop(tp, None)
                    continue
                log = p.log
                fetches[tp] = (log.leo, log.latest_epoch, p.leader_epoch)
            if not fetches:
                continue
            if (self.connection is None or self.connection.closed) and self._connect() is None:
                yield from self._back_off()  # the leader refuses the connection: its process is not running
                continue
            done = env.event()
            req = Request(
                "Fetch",
                next(self._correlation),
                self.client_id,
                partitions=tuple(fetches),
                payload={"replica_id": me, "fetches": fetches},
                on_done=lambda _r, done=done: done.succeed(),  # not done.succeed: req <-> event, a cycle
            )
            self.sent += 1
            self.cluster.log.append(req)
            self.connection.send(req)
            yield done
            if req.error == DISCONNECTED:  # the leader closed the connection: the fetch failed whole
                yield from self._back_off()
                continue
            appended = 0
            fetching = self.partitions
            for tp, (err, hw, batches, diverging) in (req.result or {}).items():
                p = partition(tp)
                if tp not in fetching or p is None or p.leader_epoch != fetches[tp][2]:
                    continue  # the partition moved while the fetch was in flight
                if err != "NONE":
                    self.partitions[tp] = env.now + REPLICA_FETCH_BACKOFF_MS
                    continue
                if diverging is not None:
                    rm.truncate(tp, self._truncation_offset(p, *diverging), reason="diverging epoch")
                    continue
                if batches:
                    rm.append_as_follower(tp, batches, hw)
                    appended += 1
                elif hw > p.hw:
                    p.hw = min(hw, p.log.leo)
            if appended and self.manager.append_ms:
                yield env.timeout(self.manager.append_ms)

    def _back_off(self):
        """``processFetchRequest``'s catch: wait ``replica.fetch.backoff.ms`` (a partition added wakes it), then
        ``handlePartitionsWithErrors`` delays every partition not already delayed by as much again."""
        env = self.env
        self._wake = env.event()
        yield env.any_of([self._wake, env.timeout(REPLICA_FETCH_BACKOFF_MS)])
        self._wake = None
        now = env.now
        for tp, until in self.partitions.items():
            if until <= now:
                self.partitions[tp] = now + REPLICA_FETCH_BACKOFF_MS

    @staticmethod
    def _truncation_offset(p, leader_epoch: int, leader_end: int) -> int:
        """``AbstractFetcherThread.getOffsetTruncationState`` (2.8) for a diverging epoch."""
        leo = p.log.leo
        if leader_end < 0:  # unknown offset: the fetch offset, which is the LEO here
            return leo
        if leader_epoch < 0:
            return min(leader_end, leo)
        f_epoch, f_end = p.log.end_offset_for_epoch(leader_epoch)
        if f_end < 0:  # the follower does not track that epoch: the leader's offset
            return min(leader_end, leo)
        if f_epoch != leader_epoch:  # an epoch unknown to the follower: truncate to its own, ask again
            return min(f_end, leo)
        return min(f_end, leader_end, leo)

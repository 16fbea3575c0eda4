"""A KRaft broker applying the metadata log: its metadata loader thread, the publisher, and
``ReplicaManager.applyDelta`` (Kafka 4.0, docs/kafka-reference.md §8.6).

The broker's Raft client (an observer) hands each run of newly committed batches to the loader
(``MetadataLoader.handleCommit``), which queues it for its own thread (``kafka-<id>-metadata-loader-event-handler``):
no request handler is involved, so a leader move reaches a broker whose request queue is full. For each
delivery the loader replays the records into its image (``MetadataDelta``) and publishes once
(``BrokerMetadataPublisher.onMetadataUpdate``):

1. the metadata cache takes the new image (``metadataCache.setImage``): every changed partition's leader,
   leader epoch, ISR and replicas, the unfenced brokers as the live ones, the active controller;
2. ``ReplicaManager.applyDelta``: for each changed partition this broker holds, *become leader* (a new
   leader epoch naming it) or *become follower* (a new leader epoch naming another, or none), with what that
   does in ZooKeeper mode (:mod:`.replica_manager`): the fetchers stop and start, a follower's delayed produces complete
   ``NOT_LEADER_OR_FOLLOWER``; a change of the ISR alone (same leader epoch, a newer partition epoch) updates it.
   Each such partition first waits for an append in progress on it (``Partition.leaderIsrUpdateLock``: the
   append holds its read lock, ``makeLeader``/``makeFollower`` its write lock).

The cost, on the loader's thread: ``loader_batch_ms`` per delivery plus ``loader_partition_ms`` per changed
partition (building the image; bounded by apache/kafka PR #13280's benchmark, §8.8) and ``apply_partition_ms``
per partition of this broker that becomes leader or follower (the model's LeaderAndIsr cost per partition), all
the model's (:class:`~kafka_lab.sim.kraft.config.KRaftCosts`).

``last-applied-record-offset``, ``last-applied-record-timestamp`` and ``last-applied-record-lag-ms`` (now minus the
append time of the last applied batch, group ``broker-metadata-metrics``) are kept per delivery; the first
publication after a start (``Publishing initial metadata at offset ...``) lets the broker ask to be unfenced.

Simplifications: the append holds the partition's lock for its request's whole ``localTime`` (the model applies
a request's effects at the end of it; Kafka holds it only for that partition's append: the model's wait is an
upper bound), and the loader applies a partition at once once it has the lock (its work is spent before), so
appends never wait for it.
"""

from __future__ import annotations

from collections import deque

__all__ = ["MetadataLoader", "PartitionLocks"]


class PartitionLocks:
    """``Partition.leaderIsrUpdateLock`` as the model needs it: the appends in progress on each partition.

    A leadership change takes the write lock: it waits for the appends in progress when it asks, and, the lock
    being a ``ReentrantReadWriteLock`` whose waiting writer blocks later readers (``readerShouldBlock``), not for
    appends that begin after it asked (they would wait for it; in the model they go on, and find the partition
    changed when their work ends)."""

    def __init__(self, env):
        self.env = env
        self.appending: dict = {}  # tp -> {request: None} in progress
        self._waiters: dict = {}  # tp -> [events fired at the next end]

    def begin(self, req) -> None:
        a = self.appending
        for tp in req.partitions:
            a.setdefault(tp, {})[req] = None

    def end(self, req) -> None:
        a = self.appending
        for tp in req.partitions:
            held = a.get(tp)
            if held is None:
                continue
            held.pop(req, None)
            if not held:
                del a[tp]
            for ev in self._waiters.pop(tp, ()):
                if not ev.triggered:
                    ev.succeed()

    def in_progress(self, tp) -> tuple:
        return tuple(self.appending.get(tp, ()))

    def wait(self, tp):
        """An event that fires when the next append on ``tp`` ends."""
        ev = self.env.event()
        self._waiters.setdefault(tp, []).append(ev)
        return ev

    def reset(self) -> None:
        """A new process: no append is in progress (the last process's requests ended with it)."""
        self.appending = {}
        self._waiters = {}


class MetadataLoader:
    """One broker's metadata loader and publisher (see the module).

    ``new_image`` makes an empty image (:class:`~kafka_lab.sim.kraft.records.MetadataImage`); ``lifecycle`` is the
    broker's :class:`~kafka_lab.sim.server.broker_lifecycle.BrokerLifecycleManager` (told when the first metadata is
    published)."""

    def __init__(self, broker, raft, *, new_image, costs, history, lifecycle=None):
        self.broker = broker
        self.env = broker.env
        self.raft = raft
        self.new_image = new_image
        self.costs = costs
        self.history = history
        self.lifecycle = lifecycle
        self.image = new_image()
        self.last_applied_offset = -1
        self.last_applied_append_ms = 0.0
        self.controller_id = -1
        #: (time_ms, first offset, last offset, append time of the last batch, partitions changed, local changes)
        self.publications: list = []
        raft.register(self)

    # -- Raft's listener (on the raft thread) -------------------------------------------------------------------
    def handle_commit(self, batches) -> None:
        self.inbound.append(("commit", list(batches)))
        self._wakeup()

    def handle_leader_change(self, leader, epoch: int) -> None:
        self.inbound.append(("leader", (leader, epoch)))
        self._wakeup()

    def handle_load_from_start(self) -> None:
        """A restarted process loads the log from its start (its image is gone)."""
        self.image = self.new_image()
        self.last_applied_offset = -1

    def bootstrap(self, image, offset: int, controller_id: int, append_ms: float = 0.0) -> None:
        """The image before t=0 (the cluster's steady state): already published."""
        self.image = image
        self.last_applied_offset = offset
        self.last_applied_append_ms = append_ms
        self.controller_id = controller_id
        self.publications.append((self.env.now, 0, offset, append_ms, len(image.partitions), 0))

    def isr_eligible(self, broker_id: int) -> bool:
        """``Partition.isReplicaIsrEligible`` (4.0, KIP-841), from this broker's image: a follower may join an ISR, or
        hold a high watermark back from outside it, only while registered, unfenced and not in controlled
        shutdown."""
        return self.image.is_active(broker_id)

    def lag_ms(self, times) -> list:
        """``last-applied-record-lag-ms`` read at each of ``times``: the time minus the append time of the last batch
        applied by then (``BrokerServerMetrics``: ``now - lastContainedLogTimeMs``)."""
        out, pubs, i, last = [], self.publications, 0, None
        for t in times:
            while i < len(pubs) and pubs[i][0] <= t:
                last = pubs[i][3]
                i += 1
            out.append(float("nan") if last is None else t - last)
        return out

    # -- the process ----------------------------------------------------------------------------------------------
    def start(self) -> None:
        self.inbound: deque = deque()
        self._wake = None
        self.published_since_start = False
        self.broker.node.thread(self._run())

    def _wakeup(self) -> None:
        w = getattr(self, "_wake", None)
        if w is not None and not w.triggered:
            w.succeed()

    def _run(self):
        env = self.env
        while True:
            if not self.inbound:
                self._wake = env.event()
                yield self._wake
                self._wake = None
                continue
            kind, item = self.inbound.popleft()
            if kind == "leader":
                self.controller_id = item[0] if item[0] is not None else -1
                self.broker.metadata_cache.controller_id = self.controller_id
                continue
            yield from self._load(item)

    def _load(self, batches):
        """One delivery: replay into the image, then publish (metadata cache, then applyDelta)."""
        env, costs = self.env, self.costs
        image = self.image
        changed, brokers_changed = {}, False
        for b in batches:
            for i, r in enumerate(b.records):
                tp = image.replay(r, b.base_offset + i)
                if tp is not None:
                    changed[tp] = None
                elif r.type in ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord"):
                    brokers_changed = True
        cost = costs.loader_batch_ms + costs.loader_partition_ms * len(changed)
        if cost:
            yield env.timeout(cost)
        now = env.now
        first, last = batches[0].base_offset, batches[-1].last_offset
        cache = self.broker.metadata_cache
        states = [image.partitions[tp].state() for tp in changed]
        cache.update(
            states,
            last,
            batches[-1].append_ms,
            now,
            live_brokers=image.unfenced() if (brokers_changed or not cache.live_brokers) else None,
            controller_id=self.controller_id,
        )
        local = yield from self._apply_delta(list(changed))
        self.last_applied_offset = last
        self.last_applied_append_ms = batches[-1].append_ms
        self.publications.append((env.now, first, last, batches[-1].append_ms, len(changed), local))
        if not self.published_since_start:
            self.published_since_start = True
            self.history.event(env.now, self.broker.id, "initial_metadata_published", {"offset": last})
            if self.lifecycle is not None:
                self.lifecycle.set_ready_to_unfence()

    def _apply_delta(self, tps):
        """``ReplicaManager.applyDelta`` for the changed partitions this broker holds; the number it made leader or
        follower."""
        env, me = self.env, self.broker.id
        rm = self.broker.replica_manager
        locks = self.broker.partition_locks
        image = self.image
        moves = []
        for tp in tps:
            reg = image.partitions[tp]
            if me not in reg.replicas:
                continue
            p = rm.partitions.get(tp)
            if p is None:
                p = rm.add_partition(tp[0], tp[1], list(reg.replicas), -1, list(reg.isr), -1)
            if reg.leader_epoch > p.leader_epoch:
                moves.append((tp, reg))
            elif reg.partition_epoch > p.zk_version:  # the ISR alone changed (no new leader epoch)
                p.isr, p.zk_version = list(reg.isr), reg.partition_epoch
                if p.leader == me:
                    rm.maybe_increment_hw(p)
                    if rm.produce_purgatory is not None:
                        rm.produce_purgatory.check_and_complete(tp)
        follow = {}
        for tp, reg in moves:
            if self.costs.apply_partition_ms:
                yield env.timeout(self.costs.apply_partition_ms)
            before = locks.in_progress(tp)  # the write lock waits for the appends that hold the read lock now
            while any(r in locks.appending.get(tp, ()) for r in before):
                yield locks.wait(tp)
            p = rm.partitions[tp]
            st = reg.state()
            if reg.leader_epoch <= p.leader_epoch:
                continue  # applied meanwhile (a restart replays from the start)
            if reg.leader == me:
                rm._make_leader(p, st)
            else:
                rm._make_follower(p, st)
                if reg.leader >= 0:
                    follow[tp] = reg.leader
        if follow and rm.fetchers is not None:
            rm.fetchers.add_partitions(follow)
        return len(moves)

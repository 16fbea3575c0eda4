"""A broker's partitions and their replication rules: the replica manager (Kafka 2.8).

:class:`ReplicaManager` holds a broker's :class:`~.partition.Partition` objects and applies the rules
of replication to them.

The rules, each with its 2.8 source:

- **HW** (``maybeIncrementLeaderHW``): the smallest LEO among the leader and every follower that is in
  the *maximal* ISR or caught up within ``replica.lag.time.max.ms``; it only moves forward. A follower
  sets its HW to ``min(leader's HW, own LEO)`` on each fetch response.
- **Append** (``appendRecordsToLeader``): ``acks=-1`` with an ISR smaller than ``min.insync.replicas``
  fails ``NOT_ENOUGH_REPLICAS`` and appends nothing. An idempotent producer's batch is then checked against
  the log's producer state (:mod:`.producer_state`): a duplicate is answered with the original batch's
  offsets and appends nothing (an ``acks=all`` one waits for the original's last offset, as
  ``ProducePartitionStatus(lastOffset + 1)`` does); a gap or an old epoch fails the partition
  (``OUT_OF_ORDER_SEQUENCE_NUMBER``, ``INVALID_PRODUCER_EPOCH``).
- **acks=all completion** (``checkEnoughReplicasReachOffset``): not leader → ``NOT_LEADER_OR_FOLLOWER``;
  HW reached → ``NONE``, or ``NOT_ENOUGH_REPLICAS_AFTER_APPEND`` if the ISR is now smaller than
  ``min.insync.replicas``; otherwise keep waiting.
- **Follower fetch** (``fetchRecords`` / ``updateFollowerFetchState``): a stale or future
  ``currentLeaderEpoch`` is ``FENCED_LEADER_EPOCH`` / ``UNKNOWN_LEADER_EPOCH``; a ``lastFetchedEpoch``
  that ends below the fetch offset on the leader returns a *diverging epoch* instead of records; else the
  fetch offset becomes the follower's LEO, ``lastCaughtUpTimeMs`` advances, the ISR may expand and the
  HW may advance.
- **ISR** (``maybeShrinkIsr``, ``maybeExpandIsr``, ``AlterIsrManager``): every
  ``replica.lag.time.max.ms / 2`` the leader drops followers whose LEO differs from its own and that
  have not caught up for ``replica.lag.time.max.ms``; a follower in the replica set whose LEO reaches
  the HW (and the current epoch's start offset) is added back. Neither is written by the leader: it
  sends **AlterIsr** to the controller (one change in flight per partition) and applies the result the
  controller returns. During a pending expand the new member already counts for the HW ("maximal ISR").
- **LeaderAndIsr** (``ReplicaManager.becomeLeaderOrFollower``): a controller epoch older than the one
  this broker knows fails the whole request ``STALE_CONTROLLER_EPOCH``; per partition, a broker not in
  the replica set answers ``UNKNOWN_TOPIC_OR_PARTITION``, a leader epoch not newer than the current one
  ``STALE_CONTROLLER_EPOCH`` (sic, 2.8). *makeLeader* assigns the new epoch at the LEO in the epoch cache
  and forgets what it knew of its followers' logs; *makeFollowers* stops the fetchers, completes the
  partition's delayed produces (``NOT_LEADER_OR_FOLLOWER``) and starts fetching from the new leader at
  its own LEO (truncation happens on the first fetch, by diverging epoch). A follower whose new leader
  the metadata cache does not know as alive is not changed (2.8 logs an error and waits).
- **StopReplica** (``ReplicaManager.stopReplicas``): per partition, a leader epoch newer than the
  current, -1 (none) or -2 (topic being deleted) is applied; an *equal* epoch is ignored with
  ``FENCED_LEADER_EPOCH`` (3.x accepts it). The fetchers stop, the delayed operations complete, and
  ``deletePartition=true`` removes the partition and its log; ``false`` leaves the partition, and its
  leadership, as it is. An older epoch is ``FENCED_LEADER_EPOCH`` too; a controller epoch older than the
  broker's fails the whole request ``STALE_CONTROLLER_EPOCH``.
"""

from __future__ import annotations

from .log import BASE_OFFSET, BATCH_ID, RECORDS
from .partition import NEVER, Partition, RemoteReplica

__all__ = ["ReplicaManager"]


class ReplicaManager:
    """The partitions of one broker and the replication rules of :mod:`kafka_lab.sim.server.replica_manager`."""

    def __init__(
        self, broker_id: int, env=None, *, replica_lag_time_max_ms: float = 30000.0, min_insync_replicas: int = 1
    ):
        self.broker_id = broker_id
        self.env = env
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self.min_insync_replicas = min_insync_replicas
        #: topic -> its min.insync.replicas, where the topic sets one (a topic config, read from ZooKeeper for every
        #: log the broker creates, also one created later by a LeaderAndIsr)
        self.topic_min_isr: dict = {}
        self.partitions: dict = {}
        self.controller_epoch = 0  # the newest controller epoch this broker has seen
        #: refuse a lower controller epoch than the newest seen (False: lab 07's zombie with the fences off)
        self.controller_epoch_fence = True
        self.produce_purgatory = None  # set by the broker
        self.fetch_purgatory = None
        self.fetchers = None  # the broker's ReplicaFetcherManager (None: nobody fetches, e.g. one broker)
        self.alter_isr = None  # callback(partition, new_isr) sending AlterIsr (None: apply at once)
        self.metadata_cache = None
        #: KRaft mode (4.0's ``Partition.isReplicaIsrEligible``, KIP-841): ``broker id -> bool``, whether a follower may
        #: join the ISR or hold the HW back while outside it (not fenced, not in controlled shutdown); None in
        #: ZooKeeper mode (2.8 has no such check: KAFKA-14140)
        self.isr_eligible = None
        self.events: list = []  # (time_ms, kind, topic, partition, detail): state changes, for logs and labs

    def _now(self) -> float:
        return self.env.now if self.env is not None else 0.0

    def _event(self, kind: str, tp, **detail) -> None:
        self.events.append((self._now(), kind, tp[0], tp[1], detail))

    def add_partition(
        self,
        topic: str,
        partition: int,
        replicas: list,
        leader: int,
        isr: list | None = None,
        leader_epoch: int = 0,
        min_isr: int | None = None,
    ) -> Partition:
        p = Partition(
            topic,
            partition,
            list(replicas),
            leader,
            leader_epoch,
            isr=list(isr if isr is not None else replicas),
            min_isr=self.topic_min_isr.get(topic, self.min_insync_replicas) if min_isr is None else min_isr,
        )
        if leader == self.broker_id:
            p.log.assign_epoch(leader_epoch, 0)
            now = self._now()
            p.remote = {
                r: RemoteReplica(last_caught_up_ms=now if r in p.isr else NEVER)
                for r in p.replicas
                if r != self.broker_id
            }
        self.partitions[p.tp] = p
        return p

    def leader_partition(self, tp):
        p = self.partitions.get(tp)
        return p if p is not None and p.leader == self.broker_id else None

    # -- the high watermark ------------------------------------------------------------------------
    def maybe_increment_hw(self, p: Partition) -> bool:
        """Partition.maybeIncrementLeaderHW; completes delayed produces and fetches when it moves."""
        new = p.log.leo
        if p.remote:  # the HW is the least LEO of the leader and the followers it waits for
            now = self._now()
            maximal = p.maximal_isr
            lag = self.replica_lag_time_max_ms
            eligible = self.isr_eligible
            for rid, r in p.remote.items():
                if r.leo < new and (rid in maximal or now - r.last_caught_up_ms <= lag):
                    if eligible is not None and rid not in maximal and not eligible(rid):
                        continue  # KRaft (KIP-841): a fenced or shutting-down replica does not hold the HW back
                    new = r.leo
        if new > p.hw:
            p.hw = new
            purgatory = self.produce_purgatory
            if purgatory is not None and purgatory.watchers:
                purgatory.check_and_complete((p.topic, p.partition))
            return True
        return False

    # -- produce -------------------------------------------------------------------------------------
    def append(self, req) -> tuple[dict, dict, dict]:
        """Append ``req``'s batches as leader: (required offsets, base offsets, local errors) per partition."""
        required, bases, errors = {}, {}, {}
        me = self.broker_id
        batches = req.payload.get("batches") if isinstance(req.payload, dict) else None
        partition, increment_hw, fetches = self.partitions.get, self.maybe_increment_hw, self.fetch_purgatory
        fetch_watchers = fetches.watchers if fetches is not None else None
        for tp in req.partitions:
            p = partition(tp)
            if p is None:
                errors[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
                continue
            if p.leader != me:
                errors[tp] = "NOT_LEADER_OR_FOLLOWER"
                continue
            if req.acks == -1 and len(p.isr) < p.min_isr:
                errors[tp] = "NOT_ENOUGH_REPLICAS"
                continue
            if batches is not None:
                entry = batches[tp]
                records, batch_id = entry[0], entry[1]
            else:
                entry, records, batch_id = (), req.records, -1
            if len(entry) > 2:  # an idempotent producer's batch: (records, batch id, producer id, epoch, sequence)
                producer_id, producer_epoch, sequence = entry[2], entry[3], entry[4]
                err, duplicate = p.log.check_producer(producer_id, producer_epoch, sequence, records)
                if duplicate is not None:  # Log.append: the original batch's offsets, nothing appended
                    bases[tp] = duplicate[0]
                    required[tp] = duplicate[1] + 1
                    continue
                if err != "NONE":
                    errors[tp] = err
                    continue
                base = p.log.append_as_leader(
                    records,
                    p.leader_epoch,
                    producer_id=producer_id,
                    sequence=sequence,
                    batch_id=batch_id,
                    producer_epoch=producer_epoch,
                )[BASE_OFFSET]
            else:
                base = p.log.append_as_leader(records, p.leader_epoch, batch_id=batch_id)[BASE_OFFSET]
            bases[tp] = base
            required[tp] = base + records
            increment_hw(p)
            if fetch_watchers is not None and tp in fetch_watchers:
                fetches.check_and_complete(tp)
        return required, bases, errors

    def check_enough_replicas_reach_offset(self, tp, required: int):
        """None while waiting; else the partition's final error (Partition.checkEnoughReplicasReachOffset)."""
        p = self.partitions.get(tp)
        if p is None or p.leader != self.broker_id:
            return "NOT_LEADER_OR_FOLLOWER"
        if p.hw >= required:
            return "NONE" if p.min_isr <= len(p.maximal_isr) else "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
        return None

    # -- follower fetch, on the leader ---------------------------------------------------------------
    def fetch_as_leader(
        self,
        replica_id: int,
        fetches: dict,
        max_batches: int = 64,
        update_follower: bool = True,
        check_divergence: bool = True,
    ) -> tuple[dict, bool]:
        """Serve a follower's Fetch: per partition ``(error, hw, batches, diverging)``; and whether any data.

        ``fetches``: ``{tp: (fetch_offset, last_fetched_epoch, current_leader_epoch)}``. A long-polled fetch
        read again when it completes (``update_follower`` and ``check_divergence`` False) only reads: the
        follower's state and its last fetched epoch were taken into account when it was parked.
        """
        now = self._now()
        me, partition = self.broker_id, self.partitions.get
        out, any_data = {}, False
        for tp, (offset, last_epoch, current_epoch) in fetches.items():
            p = partition(tp)
            if p is None or p.leader != me:
                out[tp] = ("NOT_LEADER_OR_FOLLOWER", -1, (), None)
                any_data = True
                continue
            if current_epoch < p.leader_epoch:
                out[tp] = ("FENCED_LEADER_EPOCH", -1, (), None)
                any_data = True
                continue
            if current_epoch > p.leader_epoch:
                out[tp] = ("UNKNOWN_LEADER_EPOCH", -1, (), None)
                any_data = True
                continue
            log = p.log
            if check_divergence and last_epoch >= 0:
                epoch, end = log.end_offset_for_epoch(last_epoch)
                if epoch < last_epoch or end < offset:
                    out[tp] = ("NONE", p.hw, (), (epoch, end))
                    any_data = True
                    continue
            if update_follower:
                self._update_follower(p, replica_id, offset, now)
            # a follower that has everything (the common case: most partitions of a fetch have nothing new)
            # gets no records, without a search of the log
            batches = tuple(log.read(offset, max_batches)) if offset < log.leo else ()
            if batches:
                any_data = True
            out[tp] = ("NONE", p.hw, batches, None)
        return out, any_data

    def _update_follower(self, p: Partition, rid: int, offset: int, now: float) -> None:
        """Partition.updateFollowerFetchState: LEO, lastCaughtUpTimeMs, ISR expansion, HW."""
        r = p.remote.get(rid)
        if r is None:
            return
        leader_leo = p.log.leo
        if offset >= leader_leo:
            r.last_caught_up_ms = max(r.last_caught_up_ms, now)
        elif offset >= r.last_fetch_leader_leo:
            r.last_caught_up_ms = max(r.last_caught_up_ms, r.last_fetch_ms)
        r.last_fetch_leader_leo = leader_leo
        r.last_fetch_ms = now
        before = r.leo
        r.leo = offset
        # maybeExpandIsr: in the replica set, not in the ISR, no change in flight, caught up to the HW
        # and to the start of the current leader epoch
        if rid not in p.isr and p.pending_isr is None and rid in p.replicas:
            epoch_start = p.log.epochs[-1][1] if p.log.epochs else 0
            if offset >= p.hw and offset >= epoch_start:  # noqa: SIM102 (the KRaft check stays a line of its own)
                if self.isr_eligible is None or self.isr_eligible(rid):  # KRaft: isReplicaIsrEligible
                    self._change_isr(p, sorted(p.isr + [rid]), "expand")
        if before != offset:
            self.maybe_increment_hw(p)

    # -- ISR changes (AlterIsr, KIP-497) -------------------------------------------------------------
    def maybe_shrink_isr(self) -> None:
        """The ``isr-expiration`` task: out-of-sync followers leave the ISR (one AlterIsr per partition)."""
        now = self._now()
        lag = self.replica_lag_time_max_ms
        for p in list(self.partitions.values()):
            if p.leader != self.broker_id or p.pending_isr is not None:
                continue
            leo = p.log.leo
            out = [
                rid
                for rid in p.isr
                if rid != self.broker_id
                and (r := p.remote.get(rid)) is not None
                and r.leo != leo
                and now - r.last_caught_up_ms > lag
            ]
            if out:
                self._change_isr(p, [rid for rid in p.isr if rid not in out], "shrink")

    def _change_isr(self, p: Partition, new_isr: list, kind: str) -> None:
        p.pending_isr = list(new_isr)
        p.pending_kind = kind
        self._event("isr_" + kind + "_requested", p.tp, old=list(p.isr), new=list(new_isr), hw=p.hw, leo=p.log.leo)
        if self.alter_isr is None:
            self.isr_changed(p.tp, list(new_isr), p.leader_epoch, p.zk_version + 1)
        else:
            self.alter_isr(p, list(new_isr))
        if kind == "expand":
            self.maybe_increment_hw(p)

    def isr_changed(self, tp, isr: list | None, leader_epoch: int, zk_version: int, error: str = "NONE") -> None:
        """The controller's AlterIsr answer for one partition: apply the new ISR, or drop the pending change."""
        p = self.partitions.get(tp)
        if p is None or p.pending_isr is None:
            return
        kind = p.pending_kind
        p.pending_isr, p.pending_kind = None, ""
        if error != "NONE" or leader_epoch != p.leader_epoch:
            self._event("isr_change_failed", tp, error=error)
            return
        old = list(p.isr)
        p.isr, p.zk_version = list(isr), zk_version
        self._event("isr_" + kind, tp, old=old, new=list(isr), hw=p.hw, leo=p.log.leo)
        if p.leader == self.broker_id:
            self.maybe_increment_hw(p)
            if self.produce_purgatory is not None:
                self.produce_purgatory.check_and_complete(tp)

    # -- control requests ---------------------------------------------------------------------------
    def check_controller_epoch(self, epoch: int) -> bool:
        """Fence requests from an older controller; remember a newer epoch."""
        if epoch < self.controller_epoch:
            return not self.controller_epoch_fence
        self.controller_epoch = epoch
        return True

    def restart(self) -> None:
        """A restarted broker (``Broker.start_up``): its logs and high watermarks stay (recovered from disk);
        what it knew of leaders, ISRs and the controller is gone until the controller's LeaderAndIsr."""
        self.controller_epoch = 0
        for p in self.partitions.values():
            p.leader, p.leader_epoch = -1, -1
            p.isr, p.remote = [], {}
            p.pending_isr, p.pending_kind = None, ""

    def become_leader_or_follower(self, states: list[dict], controller_epoch: int | None = None) -> dict:
        """Apply a LeaderAndIsr request's partition states; the per-partition errors."""
        if controller_epoch is not None and not self.check_controller_epoch(controller_epoch):
            return {(st["topic"], st["partition"]): "STALE_CONTROLLER_EPOCH" for st in states}
        errors, follow = {}, {}
        me = self.broker_id
        for st in states:
            tp = (st["topic"], st["partition"])
            replicas = list(st.get("replicas", [st["leader"]]))
            if me not in replicas:
                errors[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
                continue
            p = self.partitions.get(tp)
            new = p is None
            if new:
                min_isr = self.topic_min_isr.get(tp[0], self.min_insync_replicas)
                p = Partition(tp[0], tp[1], replicas, -1, -1, min_isr=min_isr)
                self.partitions[tp] = p
            elif st["leader_epoch"] <= p.leader_epoch:
                errors[tp] = "STALE_CONTROLLER_EPOCH"
                continue
            leader = st["leader"]
            if leader == me:
                self._make_leader(p, st)
            else:
                cache = self.metadata_cache
                if cache is not None and cache.live_brokers and leader not in cache.live_brokers:
                    # "cannot become follower since the new leader ... is unavailable"
                    errors[tp] = "NONE"
                    self._event("follower_leader_unavailable", tp, leader=leader)
                    continue
                self._make_follower(p, st)
                if leader >= 0:
                    follow[tp] = leader
            errors[tp] = "NONE"
        if self.fetchers is not None and follow:
            self.fetchers.add_partitions(follow)
        return errors

    def _make_leader(self, p: Partition, st: dict) -> None:
        was_leader = p.leader == self.broker_id
        if self.fetchers is not None:
            self.fetchers.remove_partitions([p.tp])
        p.replicas = list(st.get("replicas", p.replicas))
        p.leader, p.leader_epoch = self.broker_id, st["leader_epoch"]
        p.isr = list(st.get("isr", p.replicas))
        p.zk_version = st.get("zk_version", p.zk_version)
        p.pending_isr, p.pending_kind = None, ""
        p.log.assign_epoch(p.leader_epoch, p.log.leo)
        now = self._now()
        old = p.remote
        p.remote = {}
        for rid in p.replicas:
            if rid == self.broker_id:
                continue
            r = RemoteReplica(
                last_caught_up_ms=now if rid in p.isr else NEVER, last_fetch_ms=now, last_fetch_leader_leo=p.log.leo
            )
            if was_leader and rid in old:  # still the leader: what it knew of the follower stays
                r.leo = old[rid].leo
            p.remote[rid] = r
        self._event("become_leader", p.tp, leader_epoch=p.leader_epoch, isr=list(p.isr), leo=p.log.leo, hw=p.hw)
        # "we may need to increment high watermark since ISR could be down to 1"
        self.maybe_increment_hw(p)

    def _make_follower(self, p: Partition, st: dict) -> None:
        was_leader = p.leader == self.broker_id
        if self.fetchers is not None:
            self.fetchers.remove_partitions([p.tp])
        p.replicas = list(st.get("replicas", p.replicas))
        p.leader, p.leader_epoch = st["leader"], st["leader_epoch"]
        p.isr = list(st.get("isr", p.isr))
        p.zk_version = st.get("zk_version", p.zk_version)
        p.pending_isr, p.pending_kind = None, ""
        p.remote = {}
        self._event(
            "become_follower",
            p.tp,
            leader=p.leader,
            leader_epoch=p.leader_epoch,
            leo=p.log.leo,
            hw=p.hw,
            was_leader=was_leader,
        )
        if self.produce_purgatory is not None:
            self.produce_purgatory.check_and_complete(p.tp)
        if self.fetch_purgatory is not None:
            self.fetch_purgatory.check_and_complete(p.tp)

    def stop_replicas(self, partitions: dict, controller_epoch: int | None = None) -> dict:
        """Apply a StopReplica: ``partitions`` maps tp → (leader_epoch, delete)."""
        if controller_epoch is not None and not self.check_controller_epoch(controller_epoch):
            return dict.fromkeys(partitions, "STALE_CONTROLLER_EPOCH")
        errors, stop = {}, []
        for tp, (epoch, delete) in partitions.items():
            p = self.partitions.get(tp)
            if p is not None and epoch not in (-1, -2) and epoch <= p.leader_epoch:
                errors[tp] = "FENCED_LEADER_EPOCH"  # older or equal (2.8; 3.x accepts equal)
                continue
            stop.append((tp, delete))
            errors[tp] = "NONE"
        if self.fetchers is not None and stop:
            self.fetchers.remove_partitions([tp for tp, _ in stop])
        for tp, delete in stop:
            if delete and tp in self.partitions:
                del self.partitions[tp]
                self._event("deleted", tp)
            else:
                self._event("stopped", tp)
            if self.produce_purgatory is not None:
                self.produce_purgatory.check_and_complete(tp)
            if self.fetch_purgatory is not None:
                self.fetch_purgatory.check_and_complete(tp)
        return errors

    # -- follower side ------------------------------------------------------------------------------
    def truncate(self, tp, offset: int, reason: str) -> list:
        """Truncate a follower's log (by diverging epoch); the batches removed.

        The event keeps the high watermark before the truncation (``hw``) and the batches left (``batches``):
        ``Log.completeTruncation`` lowers a high watermark above the new log end, and 2.8 logs that as
        ``Non-monotonic update of high watermark`` with both offsets' positions in the segment
        (:mod:`kafka_lab.logs.render`)."""
        p = self.partitions[tp]
        hw_before = p.hw
        removed = p.log.truncate_to(offset)
        if p.hw > p.log.leo:
            p.hw = p.log.leo
        self._event(
            "truncated",
            tp,
            offset=offset,
            removed_batches=len(removed),
            removed_records=sum(b[RECORDS] for b in removed),
            reason=reason,
            leo=p.log.leo,
            batch_ids=[b[BATCH_ID] for b in removed],
            hw=hw_before,
            batches=len(p.log.batches),
        )
        return removed

    def append_as_follower(self, tp, batches, leader_hw: int) -> None:
        p = self.partitions.get(tp)
        if p is None:
            return
        for b in batches:
            if b[BASE_OFFSET] == p.log.leo:
                p.log.append_as_follower(b)
        new_hw = min(leader_hw, p.log.leo)
        if new_hw > p.hw:
            p.hw = new_hw

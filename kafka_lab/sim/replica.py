"""A broker's partitions, their replication state, and its metadata cache.

Kept small but real:

- :class:`Partition`: leader, leader epoch, replicas, ISR, the leader's log end offset (LEO), the
  high watermark (HW) and each follower's LEO as last reported by its fetches. The HW is the
  smallest LEO in the ISR; it only moves forward.
- :class:`ReplicaManager`: appends produce requests (``acks`` 0/1/all), advances the HW on follower
  fetches, and applies LeaderAndIsr (become leader / become follower) and StopReplica. Becoming a
  follower completes the produce requests waiting in purgatory for that partition with
  ``NOT_LEADER_OR_FOLLOWER``, as ``ReplicaManager.makeFollowers`` does. Staying (or becoming) the
  leader with a smaller ISR may advance the HW, as ``Partition.makeLeader`` does, and so complete
  waiting produces with ``NONE``.
- :class:`MetadataCache`: changes only on UpdateMetadata. It remembers, per update, when the
  controller sent it and when this broker applied it: the difference is how long clients asking
  this broker for metadata were served stale leadership.

Ignored here (later labs may add them): ISR shrink after ``replica.lag.time.max.ms``,
``min.insync.replicas``, truncation of the old leader's log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Partition", "ReplicaManager", "MetadataCache"]


@dataclass
class Partition:
    topic: str
    partition: int
    replicas: list
    leader: int
    leader_epoch: int = 0
    isr: list = field(default_factory=list)
    leo: int = 0
    hw: int = 0
    follower_leo: dict = field(default_factory=dict)

    @property
    def tp(self):
        return (self.topic, self.partition)

    def advance_hw(self) -> bool:
        new = min([self.leo] + [self.follower_leo.get(r, 0) for r in self.isr if r != self.leader])
        if new > self.hw:
            self.hw = new
            return True
        return False


class ReplicaManager:
    def __init__(self, broker_id: int):
        self.broker_id = broker_id
        self.partitions: dict = {}
        self.produce_purgatory = None  # set by the broker
        self.fetch_purgatory = None

    def add_partition(
        self, topic: str, partition: int, replicas: list, leader: int, isr: list | None = None
    ) -> Partition:
        p = Partition(topic, partition, list(replicas), leader, isr=list(isr if isr is not None else replicas))
        self.partitions[p.tp] = p
        return p

    def leader_partition(self, tp):
        p = self.partitions.get(tp)
        return p if p is not None and p.leader == self.broker_id else None

    # -- produce ---------------------------------------------------------------------------------
    def append(self, req) -> tuple[dict, dict]:
        """Append ``req.records`` to each partition; returns (required offsets, local errors)."""
        required, errors = {}, {}
        me = self.broker_id
        produce_watchers = self.produce_purgatory.watchers
        fetch_watchers = self.fetch_purgatory.watchers
        n = req.records
        for tp in req.partitions:
            p = self.partitions.get(tp)
            if p is None:
                errors[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
            elif p.leader != me:
                errors[tp] = "NOT_LEADER_OR_FOLLOWER"
            else:
                p.leo += n
                required[tp] = p.leo
                if len(p.isr) <= 1:  # the leader alone is the ISR: the high watermark follows the log end
                    p.hw = p.leo
                elif p.advance_hw() and produce_watchers.get(tp):
                    self.produce_purgatory.check_and_complete(tp)
                if fetch_watchers.get(tp):
                    self.fetch_purgatory.check_and_complete(tp)
        return required, errors

    def check_enough_replicas_reach_offset(self, tp, required: int):
        """None while waiting; else the partition's final error (Partition.checkEnoughReplicasReachOffset)."""
        p = self.partitions.get(tp)
        if p is None or p.leader != self.broker_id:
            return "NOT_LEADER_OR_FOLLOWER"
        return "NONE" if p.hw >= required else None

    # -- follower fetch --------------------------------------------------------------------------
    def update_follower(self, replica_id: int, offsets: dict) -> bool:
        """A follower's fetch reports its LEO per partition; returns whether it is already caught up."""
        caught_up = True
        for tp, off in offsets.items():
            p = self.leader_partition(tp)
            if p is None:
                continue
            if off > p.follower_leo.get(replica_id, 0):
                p.follower_leo[replica_id] = off
                if p.advance_hw():
                    self.produce_purgatory.check_and_complete(tp)
            if off < p.leo:
                caught_up = False
        return caught_up

    def log_end_offsets(self, tps) -> dict:
        return {tp: self.partitions[tp].leo for tp in tps if tp in self.partitions}

    # -- control requests ------------------------------------------------------------------------
    def become_leader_or_follower(self, states: list[dict]) -> dict:
        """Apply a LeaderAndIsr: per partition, error NONE, or STALE_CONTROLLER_EPOCH for an old leader epoch."""
        errors = {}
        for st in states:
            tp = (st["topic"], st["partition"])
            p = self.partitions.get(tp)
            if p is None:
                p = self.add_partition(
                    st["topic"], st["partition"], st.get("replicas", [st["leader"]]), st["leader"], st.get("isr")
                )
                p.leader_epoch = st["leader_epoch"]
                errors[tp] = "NONE"
                continue
            if st["leader_epoch"] <= p.leader_epoch:
                errors[tp] = "STALE_CONTROLLER_EPOCH"
                continue
            was_leader = p.leader == self.broker_id
            p.leader, p.leader_epoch = st["leader"], st["leader_epoch"]
            p.isr = list(st.get("isr", p.isr))
            if p.leader == self.broker_id:  # makeLeader
                if not was_leader:  # a new leader knows nothing yet of its followers' logs
                    p.follower_leo.clear()
                # "we may need to increment high watermark since ISR could be down to 1"
                if p.advance_hw():
                    self.produce_purgatory.check_and_complete(tp)
            elif was_leader:  # makeFollowers
                p.follower_leo.clear()
                self.produce_purgatory.check_and_complete(tp)
                self.fetch_purgatory.check_and_complete(tp)
            errors[tp] = "NONE"
        return errors

    def stop_replicas(self, tps: list, delete: bool) -> dict:
        errors = {}
        for tp in tps:
            p = self.partitions.get(tp)
            if p is None:
                errors[tp] = "NONE"
                continue
            if delete:
                del self.partitions[tp]
            else:
                p.leader = -1
            self.produce_purgatory.check_and_complete(tp)
            self.fetch_purgatory.check_and_complete(tp)
            errors[tp] = "NONE"
        return errors


class MetadataCache:
    """Partition leadership as this broker will tell clients (changes only on UpdateMetadata)."""

    def __init__(self):
        self.leaders: dict = {}
        self.updates: list = []  # (correlation_id, controller_sent_ms, applied_ms)

    def update(self, states: list[dict], correlation_id: int, sent_ms: float, now: float) -> None:
        for st in states:
            tp = (st["topic"], st["partition"])
            if st["leader"] == -2:
                self.leaders.pop(tp, None)
            else:
                self.leaders[tp] = st["leader"]
        self.updates.append((correlation_id, sent_ms, now))

"""A broker's metadata cache (Kafka 2.8).

:class:`MetadataCache` is ``ZkMetadataCache``: it changes only on UpdateMetadata and holds, per
partition, leader, leader epoch, ISR and replicas, and the live brokers and the controller id.
It is what the broker answers a client's Metadata request from, so a client learns of a new leader only
once the controller's UpdateMetadata has reached the broker it asks.
"""

from __future__ import annotations

__all__ = ["MetadataCache"]


class MetadataCache:
    """What this broker tells clients about the cluster (``ZkMetadataCache``): changes only on UpdateMetadata."""

    def __init__(self):
        self.partitions: dict = {}  # tp -> {"leader", "leader_epoch", "isr", "replicas"}
        self.live_brokers: set = set()
        self.controller_id = -1
        self.controller_epoch = 0
        #: refuse an UpdateMetadata of a lower controller epoch than the newest seen (False: lab 07's fences off)
        self.controller_epoch_fence = True
        self.updates: list = []  # (correlation_id, controller_sent_ms, applied_ms)
        self.applied: list = []  # (applied_ms, topic, partition, leader, leader_epoch)

    def reset(self) -> None:
        """A restarted broker's cache: empty until its first UpdateMetadata (the records of updates stay)."""
        self.partitions = {}
        self.live_brokers = set()
        self.controller_id = -1
        self.controller_epoch = 0

    @property
    def leaders(self) -> dict:
        """``{tp: leader}`` for every partition the cache knows."""
        return {tp: st["leader"] for tp, st in self.partitions.items()}

    def leader(self, tp) -> int:
        st = self.partitions.get(tp)
        return -1 if st is None else st["leader"]

    def load(
        self,
        states: list[dict],
        *,
        live_brokers=None,
        controller_id: int | None = None,
        controller_epoch: int | None = None,
    ) -> None:
        """The state a broker starts the run with (as if its last UpdateMetadata came before t=0)."""
        if live_brokers is not None:
            self.live_brokers = set(live_brokers)
        if controller_id is not None:
            self.controller_id = controller_id
        if controller_epoch is not None:
            self.controller_epoch = controller_epoch
        for st in states:
            self.partitions[(st["topic"], st["partition"])] = {
                "leader": st["leader"],
                "leader_epoch": st.get("leader_epoch", 0),
                "isr": list(st.get("isr", ())),
                "replicas": list(st.get("replicas", ())),
            }

    def update(
        self,
        states: list[dict],
        correlation_id: int,
        sent_ms: float,
        now: float,
        *,
        live_brokers=None,
        controller_id: int | None = None,
        controller_epoch: int | None = None,
    ) -> str:
        """Apply an UpdateMetadata; ``STALE_CONTROLLER_EPOCH`` (and nothing applied) from an older controller."""
        if controller_epoch is not None:
            if controller_epoch < self.controller_epoch and self.controller_epoch_fence:
                return "STALE_CONTROLLER_EPOCH"
            self.controller_epoch = max(self.controller_epoch, controller_epoch)
        if live_brokers is not None:
            self.live_brokers = set(live_brokers)
        if controller_id is not None:
            self.controller_id = controller_id
        for st in states:
            tp = (st["topic"], st["partition"])
            if st["leader"] == -2:
                self.partitions.pop(tp, None)
            else:
                self.partitions[tp] = {
                    "leader": st["leader"],
                    "leader_epoch": st.get("leader_epoch", 0),
                    "isr": list(st.get("isr", ())),
                    "replicas": list(st.get("replicas", ())),
                }
            self.applied.append((now, tp[0], tp[1], st["leader"], st.get("leader_epoch", 0)))
        self.updates.append((correlation_id, sent_ms, now))
        return "NONE"

    def describe(self, tps) -> dict:
        """A Metadata response's partitions: ``{tp: (error, leader, leader_epoch)}``."""
        out = {}
        for tp in tps:
            st = self.partitions.get(tp)
            if st is None:
                out[tp] = ("UNKNOWN_TOPIC_OR_PARTITION", -1, -1)
            elif st["leader"] < 0 or (self.live_brokers and st["leader"] not in self.live_brokers):
                out[tp] = ("LEADER_NOT_AVAILABLE", -1, st["leader_epoch"])
            else:
                out[tp] = ("NONE", st["leader"], st["leader_epoch"])
        return out

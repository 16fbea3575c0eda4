"""The control plane of a KRaft cluster as the cluster and its scripts see it: what the ZooKeeper-mode
``Controller`` answers (:mod:`kafka_lab.sim.controller`), read from the quorum.

A script moves a partition's leadership, reads the partitions' state and the controller's decisions the same
way in both modes (``cluster.controller.elect_leader``, ``.state``, ``.decisions``, ``.id``, ``.epoch``), so labs
04–06's incidents and their tables run unchanged on either. In KRaft mode:

- :meth:`KRaftControl.elect_leader` puts an election on the queue of whichever controller is active at ``at_ms``
  (:meth:`~kafka_lab.sim.kraft.quorum_controller.QuorumController.elect_leader`); with none, it fails
  ``NOT_CONTROLLER`` (kept in :attr:`KRaftControl.failed_elections`);
- :attr:`KRaftControl.state` is the partitions as the committed metadata log has them;
- :attr:`KRaftControl.decisions` are the committed ``PartitionChangeRecord`` that name a leader, each at the time
  the controller decided it (its event generated it: the record's ``decided_ms``), with the leader epoch it made,
  the ISR, the partition epoch and the state it was made from (``OfflinePartition`` when the partition had no
  leader before it). What a broker's metadata cache applies is measured from that moment (the staleness).
"""

from __future__ import annotations

import math

from .records import NO_LEADER, MetadataImage

__all__ = ["KRaftControl"]


class KRaftControl:
    """``cluster.controller`` of a KRaft cluster (see the module)."""

    def __init__(self, env, quorum, brokers: dict):
        self.env = env
        self.quorum = quorum
        self.brokers = brokers
        self.failed_elections: list = []  # (time_ms, topic, partition, wanted leader, isr, Kafka's error)
        self.elections: list = []  # (time_ms, topic, partition, leader): elections asked for and made
        self._cache = (None, None)

    # -- who leads --------------------------------------------------------------------------------------------
    @property
    def id(self) -> int:
        """The active controller's node id (-1 while none is active)."""
        a = self.quorum.active()
        return a.id if a is not None else -1

    @property
    def epoch(self) -> int:
        """The active controller's epoch (the Raft epoch it claimed; the highest any node knows while none is)."""
        a = self.quorum.active()
        if a is not None:
            return a.controller.claim_epoch
        return max((s.raft.epoch for s in self.quorum.nodes.values()), default=0)

    @property
    def history(self) -> list:
        """``(from time_ms, controller id, epoch)`` of each leader in turn (a Raft leader is the active controller)."""
        out = []
        for t, node, _b, (role, epoch, _l), _e, _v in self.quorum.history.transitions:
            if role == "Leader":
                out.append((t, node, epoch))
        return out

    def controller_at(self, t: float) -> tuple:
        """``(controller id, epoch)`` of the last leader elected at or before ``t``."""
        cid, epoch = -1, 0
        for t0, c, e in self.history:
            if t0 > t:
                break
            cid, epoch = c, e
        return cid, epoch

    # -- the committed state --------------------------------------------------------------------------------------
    def _replayed(self):
        """The committed log replayed in order: the image, and the decisions on the way (cached per log length)."""
        ml = self.quorum.history.batches
        key = (len(ml), sum(1 for v in ml.values() if not math.isnan(v[2])), self.quorum.next_offset())
        if self._cache[0] == key:
            return self._cache[1]
        if self.quorum.started:
            committed = sorted((b.base_offset, b) for b, _l, c in ml.values() if not math.isnan(c))
        else:  # before t=0: what the bootstrap will hold (the topics created so far)
            committed = [(b.base_offset, b) for b in self.quorum.bootstrap_batches()]
        image, decisions = MetadataImage(), []
        for _o, b in committed:
            for i, r in enumerate(b.records):
                before = None
                if r.type == "PartitionChangeRecord" and r.fields.get("Leader", -2) != -2:
                    tp = (image.topics[r.fields["TopicId"]], r.fields["PartitionId"])
                    before = image.partitions[tp].leader
                tp = image.replay(r, b.base_offset + i)
                if before is not None and r.fields["Leader"] >= 0:
                    p = image.partitions[tp]
                    decisions.append(
                        (
                            r.decided_ms,
                            tp[0],
                            tp[1],
                            p.leader,
                            p.leader_epoch,
                            tuple(p.isr),
                            p.partition_epoch,
                            "OfflinePartition" if before == NO_LEADER else "OnlinePartition",
                        )
                    )
        self._cache = (key, (image, decisions))
        return image, decisions

    @property
    def state(self) -> dict:
        """``{tp: {"leader", "leader_epoch", "isr", "replicas", "zk_version"}}`` as the committed log has them (the
        partition epoch as ``zk_version``)."""
        image, _d = self._replayed()
        return {
            tp: {
                "leader": p.leader,
                "leader_epoch": p.leader_epoch,
                "isr": list(p.isr),
                "replicas": list(p.replicas),
                "zk_version": p.partition_epoch,
            }
            for tp, p in image.partitions.items()
        }

    @property
    def decisions(self) -> list:
        """``(decided_ms, topic, partition, leader, leader_epoch, isr, partition_epoch, from_state)`` per committed
        leader change, in log order."""
        return list(self._replayed()[1])

    @property
    def live_brokers(self) -> set:
        """The registered, unfenced brokers (committed)."""
        return self._replayed()[0].unfenced()

    def partition_state(self, tp) -> dict:
        st = self.state[tp]
        return {"topic": tp[0], "partition": tp[1], **st}

    # -- an operator's election -----------------------------------------------------------------------------------
    def elect_leader(self, tp, new_leader: int, *, at_ms: float = 0.0) -> None:
        """At ``at_ms``, the active controller moves ``tp``'s leadership to ``new_leader`` if it is an acceptable ISR
        member (see the module); a failure is kept in :attr:`failed_elections` with Kafka's error."""
        if not (isinstance(tp, tuple) and len(tp) == 2):
            raise TypeError(f"a partition is a (topic, partition) pair, got {tp!r}")
        if at_ms <= self.env.now:
            st = self.state.get(tp)
            if st is None:
                raise ValueError(f"UNKNOWN_TOPIC_OR_PARTITION: The partition does not exist. ({tp[0]}-{tp[1]})")
            if new_leader not in st["replicas"]:
                raise ValueError(f"broker {new_leader} holds no replica of {tp[0]}-{tp[1]}; replicas: {st['replicas']}")

        def decide(_e=None):
            active = self.quorum.active()
            if active is None:
                st = self.state.get(tp, {"isr": []})
                self.failed_elections.append((self.env.now, *tp, new_leader, list(st["isr"]), "NOT_CONTROLLER"))
                return

            def done(record, error):
                if error is not None:
                    st = self.state.get(tp, {"isr": []})
                    self.failed_elections.append((self.env.now, *tp, new_leader, list(st["isr"]), error.error))
                else:
                    self.elections.append((self.env.now, *tp, new_leader))

            active.controller.elect_leader(tp, new_leader, done)

        if at_ms <= self.env.now:
            decide()
        else:
            self.env.timeout(at_ms - self.env.now).callbacks.append(decide)

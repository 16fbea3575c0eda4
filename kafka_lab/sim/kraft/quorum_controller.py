"""The quorum controller (KIP-631, Kafka 4.0's ``QuorumController``): one event thread over the metadata log.

Every controller node runs one; the one whose Raft client leads is *active*, the others are hot standbys
that replay every committed record into the same in-memory state (docs/kafka-reference.md §8.5). All its work
is one queue of events on one thread (``quorum-controller-<id>-event-handler``): requests from brokers
(``BrokerRegistration``, ``BrokerHeartbeat``, ``AlterPartition``), an operator's leader election, the Raft
client's commits and leader changes, and *deferred* events that run at a deadline (fencing a stale broker,
the periodic ``NoOpRecord``), which go before the queue once due.

A **write** event runs only on the active controller (else ``NOT_CONTROLLER``): it reads the state, generates
records, replays them into its state at once and hands them to Raft (``prepareAppend``), and its caller is
answered only when Raft has committed their offset (``deferredEventQueue``); one that generates no record is
answered once everything written before it is committed. ``EventQueueTimeMs`` is the wait in the queue
(not counted for deferred events), ``EventQueueProcessingTimeMs`` the event's work.

The rules, with their source (``metadata/src/main/java/org/apache/kafka/controller/``):

- **Activation** (``QuorumMetaLogListener.handleLeaderChange``, ``claim``): when Raft names this node
  leader, after it has replayed everything before the epoch; the heartbeat manager is rebuilt and every
  registered broker touched at that instant (``ClusterControlManager.activate``), the ``NoOpRecord`` task
  scheduled. ``NewActiveControllersCount`` + 1 on every controller at each leader change that names one.
  Losing the leadership (``renounce``): pending writes fail ``NOT_CONTROLLER`` and the state reverts to the
  last committed offset (its uncommitted records are dropped; Raft truncates them from the log).
- **Registration** (``ClusterControlManager.registerBroker``): a new incarnation while the old one's session
  is valid → ``DUPLICATE_BROKER_REGISTRATION``; else (for a new incarnation of a known broker, first
  ``handleBrokerUncleanShutdown``'s partition changes, 4.0) a ``RegisterBrokerRecord`` with ``Fenced`` true;
  the broker epoch is the offset of the event's first record.
- **Heartbeat** (``ReplicationControlManager.processBrokerHeartbeat``, ``BrokerHeartbeatManager``): another
  broker epoch → ``STALE_BROKER_EPOCH``; the next state by ``calculateNextBrokerState``: fenced and caught up
  to its registration offset → unfenced (``BrokerRegistrationChangeRecord(Fenced=-1)`` and an election for
  each leaderless partition); ``WantShutDown`` with leaderships → controlled shutdown
  (``InControlledShutdown=1`` and every partition whose ISR holds it changed: out of the ISR, a new leader where
  it led), without → shut down now (fenced); in controlled shutdown, granted once it leads nothing and its
  controlled-shutdown offset ≤ the lowest offset any active broker reported. Last contact is when the event
  runs; one that waited longer than ``broker.heartbeat.interval.ms / 2`` only touches.
- **Fencing** (``maybeFenceOneStaleBroker``): a deferred event at the oldest unfenced broker's last contact +
  ``broker.session.timeout.ms``; a broker whose session ended is fenced, *one per event*, the next event at
  once: a ``PartitionChangeRecord`` for every partition whose ISR holds it (out of it; a new leader where it
  led; the last ISR member kept, leader -1) and ``BrokerRegistrationChangeRecord(Fenced=1)``.
- **Elections** (``PartitionChangeBuilder``, without ELR, 4.0's default): keep the leader if it is still in
  the target ISR and acceptable, else the first replica in assignment order in the target ISR that is
  acceptable (registered, unfenced, not in controlled shutdown), else none; an ISR is never emptied; a new
  leader is a new leader epoch, every change a new partition epoch.
- **AlterPartition** (``alterPartition``, ``validateAlterPartitionData``): a stale broker epoch fails the whole
  request; per partition ``FENCED_LEADER_EPOCH``, ``INVALID_UPDATE_VERSION`` (partition epoch),
  ``INVALID_REQUEST`` (not the leader, or an ISR without it), ``INELIGIBLE_REPLICA`` (a fenced, shutting-down
  or unregistered broker in the new ISR: KIP-841, where 2.8 accepted it, KAFKA-14140).
- **NoOpRecord** every ``metadata.max.idle.interval.ms`` (the next scheduled when one runs).

Simplifications: the controller's work per event is ``controller_event_ms`` + ``controller_record_ms`` per
record (:class:`~kafka_lab.sim.kraft.config.KRaftCosts`); an operator's election is an event put straight on the
active controller's queue (an admin ``ElectLeaders`` request is not sent through the network); no
``BeginTransactionRecord``/activation records, no topic creation after t=0 (topics are in the bootstrap
records).
"""

from __future__ import annotations

import math
from collections import deque

from .raft import NotLeader
from .records import NO_LEADER, MetadataImage, MetadataRecord

__all__ = ["QuorumController", "ControllerEvent"]


class ControllerEvent:
    """One event of the queue: ``run()`` returns ``(records, result)`` (a write) or ``result``; ``done(result,
    error)`` is called when it completes (after the commit, for a write)."""

    __slots__ = (
        "name",
        "run",
        "done",
        "write",
        "enqueued_ms",
        "updates_queue_time",
        "deadline_ms",
        "cs_broker",
        "started_ms",
    )

    def __init__(self, name, run, done=None, *, write=True, updates_queue_time=True, deadline_ms=math.inf):
        self.name = name
        self.run = run
        self.done = done
        self.write = write
        self.enqueued_ms = 0.0
        self.updates_queue_time = updates_queue_time
        self.deadline_ms = deadline_ms  # a heartbeat's: handled as expired after it
        self.cs_broker = None  # the broker a heartbeat put in controlled shutdown (its offset is the event's last)
        self.started_ms = 0.0


class ControllerError(Exception):
    """An event's failure, with Kafka's error name (``NOT_CONTROLLER``, ``STALE_BROKER_EPOCH``, ...)."""

    def __init__(self, error: str, message: str = ""):
        super().__init__(message or error)
        self.error = error
        self.message = message


class QuorumController:
    """One controller node's ``QuorumController`` (see the module)."""

    def __init__(self, server, raft, *, config, costs, history):
        self.server = server
        self.env = server.env
        self.id = server.id
        self.node = server.node
        self.raft = raft
        self.config = config
        self.costs = costs
        self.history = history
        self.image = MetadataImage()
        self.new_active_controllers = 0
        self.timed_out_heartbeats = 0
        #: records this controller has replayed into its image, all told (a restart's replay from the log's start, a
        #: reload, adds them all again): what a failover's new active controller replayed is measured from it
        self.replayed = 0
        raft.register(self)

    # -- the process --------------------------------------------------------------------------------------
    def bootstrap(self, image: MetadataImage) -> None:
        """The committed state before t=0 (replayed from the bootstrap records)."""
        self.image = image
        self.last_committed = image.offset

    def start(self) -> None:
        """A new process: an empty queue, standby until Raft names it leader; its thread."""
        self.queue: deque = deque()
        self.deferred: dict = {}  # name -> event (its deadline_ms is when it runs)
        self.claim_epoch = -1
        self.pending_writes: deque = deque()  # (last offset, event, result) waiting for the commit
        self.heartbeats: dict = {}  # broker -> [last contact, fenced, metadata offset, controlled shutdown offset]
        self.leader_seen = (None, -1)
        self._wake = None
        self.node.thread(self._run())
        self._gauge("ActiveControllerCount", 0)
        self._gauge("FencedBrokerCount", self.image.fenced_count())
        self._gauge("NewActiveControllersCount", self.new_active_controllers)

    def handle_load_from_start(self) -> None:
        """A restarted process replays the log from its start (its memory is gone)."""
        self.image = MetadataImage()
        self.last_committed = -1

    @property
    def active(self) -> bool:
        return self.claim_epoch >= 0

    # -- the queue ------------------------------------------------------------------------------------------
    def append(self, event: ControllerEvent) -> None:
        event.enqueued_ms = self.env.now
        self.queue.append(event)
        self._wakeup()

    def prepend(self, event: ControllerEvent) -> None:
        event.enqueued_ms = self.env.now
        self.queue.appendleft(event)
        self._wakeup()

    def schedule_deferred(self, name: str, deadline_ms: float, event: ControllerEvent) -> None:
        """``scheduleDeferred``: one deferred event per name, replaced; it runs at ``deadline_ms``."""
        event.deadline_ms = deadline_ms
        event.updates_queue_time = False
        event.enqueued_ms = self.env.now
        self.deferred[name] = event
        self._wakeup()

    def cancel_deferred(self, name: str) -> None:
        self.deferred.pop(name, None)

    def _wakeup(self) -> None:
        w = self._wake
        if w is not None and not w.triggered:
            w.succeed()

    def _next_event(self):
        now = self.env.now
        due = [(ev.deadline_ms, name) for name, ev in self.deferred.items() if ev.deadline_ms <= now]
        if due:
            _d, name = min(due)
            return self.deferred.pop(name)
        if self.queue:
            return self.queue.popleft()
        return None

    def _run(self):
        env = self.env
        while True:
            ev = self._next_event()
            if ev is None:
                self._wake = env.event()
                nxt = min((e.deadline_ms for e in self.deferred.values()), default=math.inf)
                if nxt == math.inf:
                    yield self._wake
                else:
                    yield env.any_of([self._wake, env.timeout(max(nxt - env.now, 0.0))])
                self._wake = None
                continue
            start = ev.started_ms = env.now
            if ev.updates_queue_time:
                self.history.metric(start, self.id, "EventQueueTimeMs", start - ev.enqueued_ms)
            records, result, error = [], None, None
            try:
                if ev.write and not self.active:
                    raise ControllerError("NOT_CONTROLLER", "This node is not the active controller.")
                out = ev.run()
                if ev.write:
                    records, result = out
                else:
                    result = out
            except ControllerError as e:
                error = e
            cost = self.costs.controller_event_ms + self.costs.controller_record_ms * len(records)
            if cost:
                yield env.timeout(cost)
            if error is not None or not ev.write:
                self._finish(ev, result, error)
                continue
            self._complete_write(ev, records, result)

    def _finish(self, ev, result, error) -> None:
        """The event completes: ``EventQueueProcessingTimeMs`` from its start to now (for a write, its commit:
        ``handleEventEnd`` runs when its future completes), then its caller is told."""
        self.history.metric(self.env.now, self.id, "EventQueueProcessingTimeMs", self.env.now - ev.started_ms)
        if ev.done is not None:
            ev.done(result, error)

    def _complete_write(self, ev, records, result) -> None:
        """Replay ``records``, hand them to Raft, and answer ``ev`` once they commit; an event without records once
        every write pending before it has (``ControllerWriteEvent.run``)."""
        if not records:
            if not self.pending_writes:
                self._finish(ev, result, None)
            else:
                self.pending_writes.append((self.pending_writes[-1][0], ev, result))
            return
        if not self.active:  # renounced while the event worked
            self._finish(ev, None, ControllerError("NOT_CONTROLLER"))
            return
        now = self.env.now
        for r in records:
            r.decided_ms, r.controller_id = now, self.id
        first = self.raft.next_write_offset()
        try:
            last = self.raft.prepare_append(self.claim_epoch, records)
        except NotLeader:
            self._renounce()
            self._finish(ev, None, ControllerError("NOT_CONTROLLER"))
            return
        for i, r in enumerate(records):
            self._replay(r, first + i)
        self._after_write(ev, last)
        if last <= self.last_committed:
            self._finish(ev, result, None)
        else:
            self.pending_writes.append((last, ev, result))

    def _after_write(self, ev, last_offset: int) -> None:
        """``processBatchEndOffset``: a controlled shutdown's offset is its event's last."""
        hook = ev.cs_broker
        if hook is not None and hook in self.heartbeats and self.heartbeats[hook][3] < 0:
            self.heartbeats[hook][3] = last_offset

    def _replay(self, record: MetadataRecord, offset: int) -> None:
        self.replayed += 1
        self.image.replay(record, offset)
        if record.type in ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord"):
            self._gauge("FencedBrokerCount", self.image.fenced_count())

    def _gauge(self, name: str, value) -> None:
        self.history.metric(self.env.now, self.id, name, value)

    # -- Raft's listener (called on the raft thread: hand over to this thread) -----------------------------
    def handle_commit(self, batches: list) -> None:
        def run():
            last = batches[-1].last_offset
            if self.active:
                self.last_committed = max(self.last_committed, last)
                while self.pending_writes and self.pending_writes[0][0] <= self.last_committed:
                    _o, ev, result = self.pending_writes.popleft()
                    self._finish(ev, result, None)
            else:
                for b in batches:
                    for i, r in enumerate(b.records):
                        self._replay(r, b.base_offset + i)
                self.last_committed = max(self.last_committed, last)

        self.append(ControllerEvent(f"handleCommit[baseOffset={batches[0].base_offset}]", run, write=False))

    def handle_leader_change(self, leader, epoch: int) -> None:
        def run():
            if leader is not None:
                self.new_active_controllers += 1
                self._gauge("NewActiveControllersCount", self.new_active_controllers)
            if leader == self.id:
                if not self.active:
                    self._claim(epoch)
            elif self.active:
                self.history.event(
                    self.env.now,
                    self.id,
                    "renounce",
                    {"epoch": self.claim_epoch, "new_epoch": epoch, "leader": leader, "offset": self.last_committed},
                )
                self._renounce()
            else:
                self.history.event(self.env.now, self.id, "new_leader", {"epoch": epoch, "leader": leader})
            self.leader_seen = (leader, epoch)

        self.append(ControllerEvent(f"handleLeaderChange[{epoch}]", run, write=False))

    # -- activation and renunciation --------------------------------------------------------------------------
    def _claim(self, epoch: int, first_noop_ms: float | None = None) -> None:
        """``claim``: active from now; the heartbeat manager rebuilt, every registered broker touched.
        ``first_noop_ms``: when the first ``NoOpRecord`` comes (the steady state at t=0 starts the periodic task at a
        phase of its own; a new leader's comes one interval after its activation)."""
        now = self.env.now
        self.claim_epoch = epoch
        self.history.event(
            now,
            self.id,
            "activate",
            {"epoch": epoch, "next_offset": self.raft.next_write_offset(), "replayed": self.replayed},
        )
        self._gauge("ActiveControllerCount", 1)
        self.heartbeats = {bid: [now, b.fenced, -1, -1] for bid, b in sorted(self.image.brokers.items())}

        def complete_activation():
            self._schedule_noop(first_noop_ms)
            self._reschedule_fencing()
            return [], None

        self.prepend(ControllerEvent(f"completeActivation[{epoch}]", complete_activation, updates_queue_time=False))

    def _renounce(self) -> None:
        """``renounce``: pending writes fail, the state reverts to the last committed offset."""
        epoch = self.claim_epoch
        self.claim_epoch = -1
        self._gauge("ActiveControllerCount", 0)
        self.raft.resign(epoch)
        failed, self.pending_writes = self.pending_writes, deque()
        for _o, ev, _r in failed:
            self._finish(ev, None, ControllerError("NOT_CONTROLLER"))
        self.cancel_deferred("maybeFenceReplicas")
        self.cancel_deferred("writeNoOpRecord")
        image = MetadataImage()
        for b in self.raft.log.batches:
            if b.last_offset > self.last_committed:
                break
            for i, r in enumerate(b.records):
                image.replay(r, b.base_offset + i)
        self.image = image
        self._gauge("FencedBrokerCount", image.fenced_count())

    # -- periodic tasks -------------------------------------------------------------------------------------------
    def _schedule_noop(self, after_ms: float | None = None) -> None:
        """``maybeScheduleNextWriteNoOpRecord``: a ``NoOpRecord`` ``metadata.max.idle.interval.ms`` from now (or
        ``after_ms`` from now)."""
        interval = self.config.metadata_max_idle_interval_ms
        if not interval:
            return
        delay = interval if after_ms is None else after_ms

        def write():
            self._schedule_noop()
            return [MetadataRecord("NoOpRecord")], None

        self.schedule_deferred("writeNoOpRecord", self.env.now + delay, ControllerEvent("writeNoOpRecord", write))

    def _reschedule_fencing(self) -> None:
        """``rescheduleMaybeFenceStaleBrokers``: at the oldest unfenced broker's last contact + the session timeout,
        one nanosecond after it (a session is valid up to and including its last instant: ``hasValidSession``)."""
        unfenced = [hb[0] for hb in self.heartbeats.values() if not hb[1]]
        if not unfenced:
            self.cancel_deferred("maybeFenceReplicas")
            return
        at = max(min(unfenced) + self.config.broker_session_timeout_ms, self.env.now) + 1e-6

        def fence_one():
            records = self._maybe_fence_one_stale_broker()
            self._reschedule_fencing()
            return records, None

        self.schedule_deferred("maybeFenceReplicas", at, ControllerEvent("maybeFenceReplicas", fence_one))

    def _maybe_fence_one_stale_broker(self) -> list:
        """``maybeFenceOneStaleBroker``: the unfenced broker with the oldest contact, if its session ended."""
        now = self.env.now
        oldest = min(((hb[0], bid) for bid, hb in self.heartbeats.items() if not hb[1]), default=None)
        if oldest is None or oldest[0] + self.config.broker_session_timeout_ms >= now:
            return []
        bid = oldest[1]
        records = self._handle_broker_fenced(bid)
        self.history.event(
            now, self.id, "fence", {"broker": bid, "last_contact_ms": oldest[0], "partitions": len(records) - 1}
        )
        hb = self.heartbeats[bid]
        hb[1], hb[3] = True, -1
        return records

    # -- partition changes (PartitionChangeBuilder, ReplicationControlManager.generateLeaderAndIsrUpdates) ---------
    def _acceptable(self, remove=NO_LEADER, add=NO_LEADER):
        image = self.image
        return lambda r: r != remove and (r == add or image.is_active(r))

    def _change(self, tp, target_isr, acceptable, *, preferred: int | None = None):
        """One ``PartitionChangeRecord`` for ``tp`` (None when nothing changes)."""
        p = self.image.partitions[tp]
        fields: dict = {}

        def valid(r):
            return r in target_isr and acceptable(r)

        if preferred is not None and valid(preferred):
            leader = preferred
        elif valid(p.leader):
            leader = p.leader
        else:
            leader = next((r for r in p.replicas if valid(r)), NO_LEADER)
        if leader != p.leader:
            fields["Leader"] = leader
        if target_isr and list(target_isr) != list(p.isr):
            fields["Isr"] = list(target_isr)
        if not fields:
            return None
        return MetadataRecord(
            "PartitionChangeRecord",
            {"TopicId": self.image.topic_ids[tp[0]], "PartitionId": tp[1], **fields},
        )

    def _updates(self, context: str, tps, *, remove=NO_LEADER, add=NO_LEADER, unclean=NO_LEADER) -> list:
        """``generateLeaderAndIsrUpdates``: each partition's change with ``remove`` (and ``unclean``) out of the ISR
        and unacceptable as leader, ``add`` acceptable even if still fenced."""
        acceptable = self._acceptable(remove, add)
        out = []
        for tp in tps:
            p = self.image.partitions[tp]
            target = [r for r in p.isr if r not in (remove, unclean)]
            accept = acceptable if unclean == NO_LEADER else (lambda r, a=acceptable: r != unclean and a(r))
            rec = self._change(tp, target, accept)
            if rec is not None:
                out.append(rec)
        if out:
            self.history.event(self.env.now, self.id, "partitions_changed", {"context": context, "count": len(out)})
        return out

    def _handle_broker_fenced(self, bid: int) -> list:
        b = self.image.brokers[bid]
        records = self._updates("handleBrokerFenced", self.image.partitions_with_in_isr(bid), remove=bid)
        records.append(
            MetadataRecord("BrokerRegistrationChangeRecord", {"BrokerId": bid, "BrokerEpoch": b.epoch, "Fenced": 1})
        )
        return records

    # -- broker requests ------------------------------------------------------------------------------------------
    def _check_broker_epoch(self, bid: int, epoch: int) -> None:
        """``ClusterControlManager.checkBrokerEpoch``."""
        b = self.image.brokers.get(bid)
        if b is None:
            raise ControllerError("STALE_BROKER_EPOCH", f"No broker registration found for broker {bid}")
        if b.epoch != epoch:
            raise ControllerError(
                "STALE_BROKER_EPOCH", f"Expected broker epoch {b.epoch}, but got broker epoch {epoch}"
            )

    def _has_valid_session(self, bid: int) -> bool:
        hb = self.heartbeats.get(bid)
        return hb is not None and not hb[1] and hb[0] + self.config.broker_session_timeout_ms >= self.env.now

    def register_broker(self, p: dict, done) -> None:
        """``BrokerRegistration`` (see the module); ``done(broker epoch, error)``."""

        def run():
            bid, inc = p["broker_id"], p["incarnation"]
            existing = self.image.brokers.get(bid)
            if existing is not None and existing.incarnation != inc and self._has_valid_session(bid):
                raise ControllerError(
                    "DUPLICATE_BROKER_REGISTRATION", "Another broker is registered with that broker id."
                )
            epoch = self.raft.next_write_offset()
            records = []
            if existing is not None and existing.incarnation != inc:
                records += self._updates(
                    "handleBrokerUncleanShutdown", self.image.partitions_with_in_isr(bid), unclean=bid
                )
            cleanup = len(records)  # the partition changes of handleBrokerUncleanShutdown, generated first
            records.append(
                MetadataRecord(
                    "RegisterBrokerRecord",
                    {
                        "BrokerId": bid,
                        "IncarnationId": inc,
                        "BrokerEpoch": epoch,
                        "Rack": p.get("rack"),
                        "Fenced": True,
                        "InControlledShutdown": False,
                    },
                )
            )
            self.heartbeats[bid] = [self.env.now, True, -1, -1]
            self._reschedule_fencing()
            self.history.event(
                self.env.now,
                self.id,
                "register",
                {
                    "broker": bid,
                    "epoch": epoch,
                    "incarnation": inc,
                    "previous_incarnation": None if existing is None else existing.incarnation,
                    "cleanup_records": cleanup,
                },
            )
            return records, epoch

        self.append(ControllerEvent("processBrokerRegistration", run, done))

    def broker_heartbeat(self, p: dict, done, deadline_ms: float) -> None:
        """``BrokerHeartbeat`` (see the module); ``done(reply dict, error)``."""
        ev = ControllerEvent("processBrokerHeartbeat", None, done, deadline_ms=deadline_ms)

        def run():
            bid = p["broker_id"]
            self._check_broker_epoch(bid, p["broker_epoch"])
            reg = self.image.brokers[bid]
            hb = self.heartbeats.setdefault(bid, [self.env.now, reg.fenced, -1, -1])
            if self.env.now > ev.deadline_ms:  # processExpiredBrokerHeartbeat
                hb[0], hb[2] = self.env.now, p["current_metadata_offset"]
                self.timed_out_heartbeats += 1
                self._gauge("TimedOutBrokerHeartbeatCount", self.timed_out_heartbeats)
                self.history.event(self.env.now, self.id, "expired_heartbeat", {"broker": bid})
                raise ControllerError("REQUEST_TIMED_OUT", "The controller event queue is overloaded.")
            current, nxt = self._next_broker_state(bid, reg, hb, p)
            records = []
            if current != nxt:
                if nxt in ("FENCED", "SHUTDOWN_NOW"):
                    records = self._handle_broker_fenced(bid)
                elif nxt == "UNFENCED":
                    records = [
                        MetadataRecord(
                            "BrokerRegistrationChangeRecord", {"BrokerId": bid, "BrokerEpoch": reg.epoch, "Fenced": -1}
                        )
                    ] + self._updates("handleBrokerUnfenced", self.image.leaderless(), add=bid)
                elif nxt == "CONTROLLED_SHUTDOWN":
                    records = []
                    if not reg.in_controlled_shutdown:
                        records.append(
                            MetadataRecord(
                                "BrokerRegistrationChangeRecord",
                                {"BrokerId": bid, "BrokerEpoch": reg.epoch, "InControlledShutdown": 1},
                            )
                        )
                    records += self._updates(
                        f"enterControlledShutdown[{bid}]", self.image.partitions_with_in_isr(bid), remove=bid
                    )
                    ev.cs_broker = bid
            # touch: last contact, fenced, the broker's metadata offset
            hb[0], hb[1], hb[2] = self.env.now, nxt in ("FENCED", "SHUTDOWN_NOW"), p["current_metadata_offset"]
            if hb[1]:
                hb[3] = -1
            self._reschedule_fencing()
            reply = {
                "is_caught_up": p["current_metadata_offset"] >= reg.offset,
                "is_fenced": nxt in ("FENCED", "SHUTDOWN_NOW"),
                "in_controlled_shutdown": nxt == "CONTROLLED_SHUTDOWN",
                "should_shut_down": nxt == "SHUTDOWN_NOW",
            }
            return records, reply

        ev.run = run
        self.append(ev)

    def _next_broker_state(self, bid, reg, hb, p) -> tuple:
        """``BrokerHeartbeatManager.calculateNextBrokerState``: ``(current, next)``."""
        current = "CONTROLLED_SHUTDOWN" if hb[3] >= 0 else ("FENCED" if hb[1] else "UNFENCED")
        want_fence, want_shut_down = p.get("want_fence", False), p.get("want_shut_down", False)
        now = self.env.now
        if current == "FENCED":
            if want_shut_down:
                return current, "SHUTDOWN_NOW"
            if not want_fence and p["current_metadata_offset"] >= reg.offset:
                self.history.event(now, self.id, "unfence_granted", {"broker": bid, "offset": reg.offset})
                return current, "UNFENCED"
            return current, "FENCED"
        if current == "UNFENCED":
            if want_fence:
                return current, "SHUTDOWN_NOW" if want_shut_down else "FENCED"
            if want_shut_down:
                if self.image.has_leaderships(bid):
                    self.history.event(now, self.id, "controlled_shutdown_granted", {"broker": bid})
                    return current, "CONTROLLED_SHUTDOWN"
                return current, "SHUTDOWN_NOW"
            return current, "UNFENCED"
        # CONTROLLED_SHUTDOWN
        if self.image.has_leaderships(bid):
            return current, "CONTROLLED_SHUTDOWN"
        lowest = self._lowest_active_offset()
        if hb[3] <= lowest:
            self.history.event(
                now, self.id, "shutdown_granted", {"broker": bid, "lowest_active_offset": lowest, "offset": hb[3]}
            )
            return current, "SHUTDOWN_NOW"
        return current, "CONTROLLED_SHUTDOWN"

    def _lowest_active_offset(self) -> float:
        """``lowestActiveOffset``: the least metadata offset an active (unfenced, not shutting down) broker
        reported."""
        active = [hb[2] for hb in self.heartbeats.values() if not hb[1] and hb[3] < 0]
        return min(active) if active else math.inf

    def alter_partition(self, p: dict, done) -> None:
        """``AlterPartition`` (see the module); ``done({tp: (error, isr, leader epoch, partition epoch)}, error)``."""

        def run():
            bid = p["broker_id"]
            self._check_broker_epoch(bid, p["broker_epoch"])
            result, records = {}, []
            for tp, (leader_epoch, new_isr, partition_epoch) in p["items"].items():
                part = self.image.partitions.get(tp)
                err = self._validate_alter(bid, part, leader_epoch, new_isr, partition_epoch)
                if err != "NONE":
                    result[tp] = (err, None, leader_epoch, partition_epoch)
                    continue
                rec = self._change(tp, list(new_isr), self._acceptable())
                if rec is None:
                    result[tp] = ("NONE", list(part.isr), part.leader_epoch, part.partition_epoch)
                    continue
                records.append(rec)
                f = rec.fields  # the answer names the partition as the record leaves it (partition.merge)
                isr = f.get("Isr", part.isr)
                result[tp] = ("NONE", list(isr), part.leader_epoch + ("Leader" in f), part.partition_epoch + 1)
            return records, result

        self.append(ControllerEvent("alterPartition", run, done))

    def _validate_alter(self, bid, part, leader_epoch, new_isr, partition_epoch) -> str:
        """``validateAlterPartitionData``, in its order."""
        if part is None:
            return "UNKNOWN_TOPIC_OR_PARTITION"
        if leader_epoch > part.leader_epoch or partition_epoch > part.partition_epoch:
            return "NOT_CONTROLLER"
        if leader_epoch < part.leader_epoch:
            return "FENCED_LEADER_EPOCH"
        if bid != part.leader:
            return "INVALID_REQUEST"
        if partition_epoch < part.partition_epoch:
            return "INVALID_UPDATE_VERSION"
        if any(r not in part.replicas for r in new_isr) or part.leader not in new_isr:
            return "INVALID_REQUEST"
        if any(not self.image.is_active(r) for r in new_isr):
            return "INELIGIBLE_REPLICA"
        return "NONE"

    # -- an operator's election -----------------------------------------------------------------------------------
    def elect_leader(self, tp, new_leader: int, done=None) -> None:
        """Make ``new_leader`` the leader of ``tp`` if it is an acceptable member of its ISR (the model's preferred
        election with ``new_leader`` as the preferred replica); ``done(record or None, error)``."""

        def run():
            part = self.image.partitions.get(tp)
            if part is None:
                raise ControllerError("UNKNOWN_TOPIC_OR_PARTITION", "The partition does not exist.")
            if part.leader == new_leader:
                raise ControllerError("ELECTION_NOT_NEEDED", "Leader election not needed for topic partition.")
            if new_leader not in part.isr or not self.image.is_active(new_leader):
                raise ControllerError("PREFERRED_LEADER_NOT_AVAILABLE", f"{new_leader} is not an active ISR member")
            rec = self._change(tp, list(part.isr), self._acceptable(), preferred=new_leader)
            return [rec], rec

        self.append(ControllerEvent("electLeaders", run, done))

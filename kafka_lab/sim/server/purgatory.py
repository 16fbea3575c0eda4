"""Purgatory: requests that have been handled locally but cannot be answered yet.

A produce request with ``acks=all`` (-1) is appended to the leader's log by a handler thread and
then parked as a ``DelayedProduce``, watched under each of its partitions. It completes when, for
every partition, either the high watermark has reached the offset it needs (``NONE``) or the
partition is no longer led here (``NOT_LEADER_OR_FOLLOWER``: ``ReplicaManager.makeFollowers`` calls
``completeDelayedFetchOrProduceRequests``), or when its timeout (the producer's
``request.timeout.ms``, sent as the request's ``timeoutMs``) expires: the partitions still pending
answer ``REQUEST_TIMED_OUT``. The time parked is the request's ``remoteTime``.

A follower's fetch that finds no new data is parked likewise (long poll) until data is appended to
one of its partitions or ``replica.fetch.wait.max.ms`` passes.

Gauges (``delayedOperation=Produce``), as ``DelayedOperationPurgatory`` keeps them:
``NumDelayedOperations`` (operations not yet completed or expired) and ``PurgatorySize`` (*watch
entries*: an operation is watched under every partition of its request, so a request to 20 partitions
adds 20). An entry stays until a check of its partition finds its operation completed, or until the
purge: every reaper cycle (200 ms), when more than ``producer.purgatory.purge.interval.requests``
(1000) operations are completed but still watched, every list drops its completed entries. So
``PurgatorySize`` can stay above zero after every operation has completed, as Kafka's does.

A wake-up re-examines only the partition that changed (``checkAndComplete(key)``): a partition's HW
or leadership changes only together with a check of its own key, so examining the others would find
nothing new (Kafka's ``tryComplete`` re-examines them all; the outcome is the same).

Simplification: an operation expires exactly ``timeoutMs`` after it was parked; Kafka's timing wheel
(1 ms ticks, advanced by the ``ExpirationReaper`` thread) expires it within about a tick of that.
"""

from __future__ import annotations

import heapq
from itertools import count

from .node import Node

__all__ = ["DelayedProduce", "ProducePurgatory", "FetchPurgatory", "PURGE_INTERVAL_REQUESTS", "REAPER_INTERVAL_MS"]

#: ``producer.purgatory.purge.interval.requests`` (2.8 default)
PURGE_INTERVAL_REQUESTS = 1000
#: the ``ExpirationReaper`` thread advances the timer with a 200 ms poll
REAPER_INTERVAL_MS = 200.0


class DelayedProduce:
    """One parked acks=all produce: the offset each pending partition needs, and the errors settled so far."""

    __slots__ = ("req", "pending", "errors", "done")

    def __init__(self, req, pending: dict):
        self.req = req
        self.pending = pending  # tp -> required offset
        self.errors: dict = {}
        self.done = False


class ProducePurgatory:
    """Delayed acks=all produces, watched per partition (``TopicPartitionOperationKey``)."""

    def __init__(
        self, env, replicas, num_delayed, size, respond, purge_interval: int = PURGE_INTERVAL_REQUESTS, node=None
    ):
        self.env = env
        self.node = node if node is not None else Node(env, "purgatory")  # its broker's process (a reaper, timers)
        self.replicas = replicas
        self.num_delayed = num_delayed
        self.size = size
        self.respond = respond  # callback(req) once the operation completes
        self.purge_interval = purge_interval
        self.watchers: dict = {}  # tp -> list of DelayedProduce (completed ones until removed)
        self.estimated_total = 0
        self._reaper = None
        # the timer: (deadline, seq, op) of every watched operation, one simpy timeout armed at the earliest
        self._expiry: list = []
        self._seq = count()
        self._timer_at = None

    def try_complete_else_watch(self, req, pending: dict, errors: dict, keys=None) -> None:
        op = DelayedProduce(req, pending)
        op.errors.update(errors)
        if self._check_all(op):
            return self._complete(op)
        keys = tuple(req.partitions) if keys is None else tuple(keys)
        for tp in keys:
            self.watchers.setdefault(tp, []).append(op)
        self.size.add(len(keys))
        self.estimated_total += 1
        self.num_delayed.add(1)
        self._add_timer(op, self.env.now + req.timeout_ms)
        if self._reaper is None:
            self._reaper = self.node.thread(self._reap())

    def _check_all(self, op) -> bool:
        check = self.replicas.check_enough_replicas_reach_offset
        for tp in list(op.pending):
            err = check(tp, op.pending[tp])
            if err is not None:
                del op.pending[tp]
                op.errors[tp] = err
        return not op.pending

    def check_and_complete(self, tp) -> int:
        """Examine the operations watching ``tp`` (after its HW or leadership changed); how many completed."""
        ops = self.watchers.get(tp)
        if not ops:
            return 0
        check = self.replicas.check_enough_replicas_reach_offset
        keep, completed = [], 0
        for op in ops:
            if op.done:
                continue
            required = op.pending.get(tp)
            if required is not None:
                err = check(tp, required)
                if err is not None:
                    del op.pending[tp]
                    op.errors[tp] = err
            if not op.pending:
                self.num_delayed.add(-1)
                self._complete(op)
                completed += 1
            else:
                keep.append(op)
        removed = len(ops) - len(keep)
        if removed:
            self.size.add(-removed)
        if keep:
            self.watchers[tp] = keep
        else:
            del self.watchers[tp]
        return completed

    def _add_timer(self, op, deadline: float) -> None:
        """``timeoutTimer.add(operation)``; completed operations leave the timer (``cancel``) in batches."""
        if len(self._expiry) > 64 + 2 * self.num_delayed.value:
            self._expiry = [e for e in self._expiry if not e[2].done]
            heapq.heapify(self._expiry)
        heapq.heappush(self._expiry, (deadline, next(self._seq), op))
        if self._timer_at is None or deadline < self._timer_at:
            self._timer_at = deadline
            self.node.timer(deadline - self.env.now, lambda _e, at=deadline: self._expire_due(at))

    def _expire_due(self, at: float) -> None:
        """The timer fires: expire every operation whose deadline has come, in the order they were watched."""
        if at != self._timer_at:
            return  # superseded by an earlier deadline, whose firing re-armed the timer
        self._timer_at = None
        now, heap = self.env.now, self._expiry
        while heap and heap[0][0] <= now:
            self._expire(heapq.heappop(heap)[2])
        while heap and heap[0][2].done:
            heapq.heappop(heap)
        if heap:
            deadline = heap[0][0]
            self._timer_at = deadline
            self.node.timer(deadline - now, lambda _e, at=deadline: self._expire_due(at))

    def _expire(self, op) -> None:
        if op.done:
            return
        self.num_delayed.add(-1)
        for tp in op.pending:
            op.errors[tp] = "REQUEST_TIMED_OUT"
        op.pending.clear()
        self._complete(op)

    def _complete(self, op) -> None:
        op.done = True
        req, op.req = op.req, None  # a completed operation may stay watched (PurgatorySize); its request goes
        req.partition_errors = op.errors
        req.error = next((e for tp in req.partitions if (e := op.errors.get(tp, "NONE")) != "NONE"), "NONE")
        self.respond(req)

    def purge(self) -> int:
        """Drop completed operations from every watch list (``purgeCompleted``); how many entries went."""
        removed = 0
        for tp in list(self.watchers):
            ops = self.watchers[tp]
            keep = [op for op in ops if not op.done]
            removed += len(ops) - len(keep)
            if keep:
                self.watchers[tp] = keep
            else:
                del self.watchers[tp]
        if removed:
            self.size.add(-removed)
        return removed

    def _reap(self):
        """The ``ExpirationReaper``: purge when enough completed operations are still watched."""
        env = self.env
        while True:
            yield env.timeout(REAPER_INTERVAL_MS)
            delayed = self.num_delayed.value
            if self.estimated_total - delayed > self.purge_interval:
                self.estimated_total = delayed
                self.purge()
            if not self.watchers:
                self._reaper = None
                return


class FetchPurgatory:
    """Long-poll follower fetches: answered on the next append to one of their partitions, or at max wait."""

    def __init__(self, env, respond, node=None):
        self.env = env
        self.node = node if node is not None else Node(env, "purgatory")
        self.respond = respond
        self.watchers: dict = {}

    def watch(self, req, max_wait_ms: float) -> None:
        box = [req]
        for tp in req.partitions:
            self.watchers.setdefault(tp, []).append(box)
        self.node.timer(max_wait_ms, lambda _e: self._fire(box))

    def _fire(self, box) -> None:
        if box[0] is not None:
            req, box[0] = box[0], None
            self.respond(req)

    def check_and_complete(self, tp) -> None:
        boxes = self.watchers.pop(tp, None)
        if boxes:
            for box in boxes:
                self._fire(box)

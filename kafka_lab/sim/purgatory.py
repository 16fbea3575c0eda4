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

Gauges (``delayedOperation=Produce``): ``NumDelayedOperations`` (operations not yet completed) and
``PurgatorySize`` (watch-list entries: one per pending partition of each pending operation; Kafka's
also keeps completed entries until its periodic purge, which is not modelled).

Simplification: an operation expires exactly ``timeoutMs`` after it was parked; Kafka's timing wheel
(1 ms ticks, advanced by the ``ExpirationReaper`` thread) expires it within about a tick of that.
"""

from __future__ import annotations

__all__ = ["DelayedProduce", "ProducePurgatory", "FetchPurgatory"]


class DelayedProduce:
    __slots__ = ("req", "pending", "errors", "done")

    def __init__(self, req, pending: dict):
        self.req = req
        self.pending = pending  # tp -> required offset
        self.errors: dict = {}
        self.done = False


class ProducePurgatory:
    def __init__(self, env, replicas, num_delayed, size, respond):
        self.env = env
        self.replicas = replicas
        self.num_delayed = num_delayed
        self.size = size
        self.respond = respond  # callback(req) once the operation completes
        self.watchers: dict = {}  # tp -> list of DelayedProduce

    def try_complete_else_watch(self, req, pending: dict, errors: dict) -> None:
        op = DelayedProduce(req, pending)
        op.errors.update(errors)
        if self._check(op):
            return self._complete(op)
        self.num_delayed.add(1)
        self.size.add(len(op.pending))
        for tp in op.pending:
            self.watchers.setdefault(tp, []).append(op)
        self.env.timeout(req.timeout_ms).callbacks.append(lambda _e, op=op: self._expire(op))

    def _check(self, op) -> bool:
        for tp in list(op.pending):
            err = self.replicas.check_enough_replicas_reach_offset(tp, op.pending[tp])
            if err is not None:
                del op.pending[tp]
                op.errors[tp] = err
        return not op.pending

    def check_and_complete(self, tp) -> None:
        """Re-check every operation watching ``tp`` (after a HW increase or a leadership change)."""
        ops = self.watchers.get(tp)
        if not ops:
            return
        keep = []
        for op in ops:
            if op.done:
                continue
            before = len(op.pending)
            if self._check(op):
                self.size.add(-before)
                self.num_delayed.add(-1)
                self._complete(op)
            else:
                self.size.add(len(op.pending) - before)
                keep.append(op)
        self.watchers[tp] = keep

    def _expire(self, op) -> None:
        if op.done:
            return
        self.size.add(-len(op.pending))
        self.num_delayed.add(-1)
        for tp in op.pending:
            op.errors[tp] = "REQUEST_TIMED_OUT"
        op.pending.clear()
        self._complete(op)

    def _complete(self, op) -> None:
        op.done = True
        req = op.req
        req.partition_errors = op.errors
        req.error = next((e for tp in req.partitions if (e := op.errors.get(tp, "NONE")) != "NONE"), "NONE")
        self.respond(req)


class FetchPurgatory:
    """Long-poll follower fetches: answered on the next append to one of their partitions, or at max wait."""

    def __init__(self, env, respond):
        self.env = env
        self.respond = respond
        self.watchers: dict = {}

    def watch(self, req, max_wait_ms: float) -> None:
        box = [req]
        for tp in req.partitions:
            self.watchers.setdefault(tp, []).append(box)
        self.env.timeout(max_wait_ms).callbacks.append(lambda _e: self._fire(box))

    def _fire(self, box) -> None:
        if box[0] is not None:
            req, box[0] = box[0], None
            self.respond(req)

    def check_and_complete(self, tp) -> None:
        boxes = self.watchers.pop(tp, None)
        if boxes:
            for box in boxes:
                self._fire(box)

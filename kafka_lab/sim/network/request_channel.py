"""The request channel: a plane's bounded request queue between network processors and handlers.

Kafka's ``RequestChannel`` holds one ``ArrayBlockingQueue`` of capacity ``queued.max.requests``
(500 by default) for the data plane, and, with KIP-291, a second one of capacity 20 for the control
plane. A network processor *puts* each request it has read; when the queue is full the put blocks,
and the processor with it. Request handler threads *take* from the head.

``prioritise_controller=True`` is KIP-291's rejected alternative: controller requests
(LeaderAndIsr, UpdateMetadata, StopReplica) jump ahead of data requests *inside* the shared queue.
They still count against the same capacity, and they still have to be read first by a processor
that may be blocked on a full queue, which is why the KIP rejected it.

Each plane's response queues (one per processor) live on the processors (see :mod:`.socket_server`).

Simplification: when several processors are blocked on a full queue, the model lets them in in the
order they blocked; Kafka's ``ArrayBlockingQueue`` (a non-fair lock) promises no order among them.
"""

from __future__ import annotations

from collections import deque

from ..common.metrics import Gauge

__all__ = ["RequestQueue"]


class RequestQueue:
    """A bounded FIFO of requests with blocking put (processors) and blocking take (handlers)."""

    def __init__(self, env, capacity: int, gauge: Gauge, prioritise_controller: bool = False):
        if capacity < 1:
            raise ValueError(f"a request queue needs a capacity of at least 1, got {capacity}")
        self.env = env
        self.capacity = capacity
        self.gauge = gauge
        self.prioritise_controller = prioritise_controller
        self._items: deque = deque()
        self._urgent: deque = deque()  # controller requests, used only when prioritise_controller
        self._putters: deque = deque()  # (event, request) of processors blocked on a full queue
        self._takers: deque = deque()  # events of idle handler threads

    def __len__(self) -> int:
        return len(self._items) + len(self._urgent)

    def offer(self, req):
        """Enqueue ``req`` now and return None, or return an event that fires once it is enqueued."""
        if len(self._items) + len(self._urgent) < self.capacity:
            self._admit(req)
            return None
        ev = self.env.event()
        self._putters.append((ev, req))
        return ev

    def _admit(self, req) -> None:
        req.enqueue = self.env.now
        if self._takers:  # an idle handler takes it at once: in and out at the same instant
            self.gauge.pulse()
            self._takers.popleft().succeed(req)
            return
        if self.prioritise_controller and req.is_controller:
            self._urgent.append(req)
        else:
            self._items.append(req)
        self.gauge.add(1)

    def poll(self):
        """Take the head request now, or None when the queue is empty."""
        if self._urgent:
            req = self._urgent.popleft()
        elif self._items:
            req = self._items.popleft()
        else:
            return None
        self.gauge.add(-1)
        if self._putters:  # room again: the first blocked processor's request goes in
            ev, waiting = self._putters.popleft()
            self._admit(waiting)
            ev.succeed()
        return req

    def take(self):
        """An event that fires with the next request (for a handler that found the queue empty)."""
        ev = self.env.event()
        self._takers.append(ev)
        return ev

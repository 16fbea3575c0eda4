"""The request handler pool: the I/O threads that run ``KafkaApis.handle``.

``num.io.threads`` (8 by default) threads take requests from the data-plane request queue; with
KIP-291 one more, pinned thread takes them from the control-plane queue. A thread that finds its
queue empty is idle (``RequestHandlerAvgIdlePercent`` / ``ControlPlaneRequestHandlerAvgIdlePercent``);
otherwise it stamps the request's ``dequeue`` time and handles it: the handler's own work is the
request's ``localTime``. A handler never waits for replication: an acks=all produce is parked in
purgatory and the thread moves on.
"""

from __future__ import annotations

__all__ = ["RequestHandlerPool"]


class RequestHandlerPool:
    """``threads`` handler threads serving one plane's request queue through ``apis``."""

    def __init__(self, env, plane, threads: int, apis, node=None):
        if threads < 1:
            raise ValueError(f"a request handler pool needs at least one thread, got {threads}")
        self.env = env
        self.plane = plane
        self.threads = threads
        self.apis = apis
        for _ in range(threads):
            if node is not None:
                node.thread(self._run())
            else:
                env.process(self._run())

    def _run(self):
        env = self.env
        queue = self.plane.request_queue
        busy = self.plane.handler_busy
        handle = self.apis.handle
        timeout = env.timeout
        busy.add(1)
        while True:
            req = queue.poll()
            if req is None:
                busy.add(-1)
                req = yield queue.take()
                busy.add(1)
            req.dequeue = env.now
            local_ms = handle(req)  # decides the work; its effects apply when the work is done
            if local_ms:
                yield timeout(local_ms)
            self.apis.complete_local(req)

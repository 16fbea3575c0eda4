"""``--damage``: what real log files also contain, mixed in at a known rate and counted.

Three kinds, each the way it happens to real brokers:

- **a line cut short** (a broker killed mid-write, a full disk): a record line loses its end, logger
  included. It fits no layout: a reader must reject it (and lose that record);
- **garbage**: a run of NUL bytes (a file pre-allocated and never written, after a crash), the tail
  of a torn JSON line, binary noise. Rejected;
- **a stack trace**: an ``ERROR`` record with an exception after it, ``\\tat ...`` lines and a
  ``Caused by:``. The record is a record; the trace's lines continue it.

:class:`Damage` decides, line by line, with its own seeded generator; every decision is counted in
:attr:`Damage.counts`, so the ground truth knows exactly how many lines of each kind the reader must
find. Every damaged line is checked against the reader's own patterns (:mod:`.layout`) when made.
"""

from __future__ import annotations

import random
import re

from .layout import CONTINUATION, HEAD, PYTHON_FLAGS, RECORD

__all__ = ["Damage", "STACK_TRACES"]

_RECORD = re.compile(RECORD, PYTHON_FLAGS)
_HEAD = re.compile(HEAD, PYTHON_FLAGS)
_CONT = re.compile(CONTINUATION, PYTHON_FLAGS)

#: (logger, message, trace lines): Kafka's own errors of a replica fetcher and a request handler
STACK_TRACES = (
    (
        "kafka.server.ReplicaFetcherThread",
        "WARN",
        "[ReplicaFetcher replicaId={b}, leaderId={o}, fetcherId=0] Error in response for fetch request "
        "(type=FetchRequest, replicaId={b}, maxWait=500, minBytes=1, maxBytes=10485760, fetchData={{}}, "
        "isolationLevel=READ_UNCOMMITTED, toForget=, metadata=(sessionId=INVALID, epoch=INITIAL), rackId=)",
        [
            "java.io.IOException: Connection to {o} was disconnected before the response was read",
            "\tat org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:100)",
            "\tat kafka.server.ReplicaFetcherBlockingSend.sendRequest(ReplicaFetcherBlockingSend.scala:110)",
            "\tat kafka.server.ReplicaFetcherThread.fetchFromLeader(ReplicaFetcherThread.scala:217)",
            "\tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:325)",
            "\tat kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:137)",
            "\tat kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:96)",
        ],
    ),
    (
        "kafka.server.KafkaApis",
        "ERROR",
        "[KafkaApi-{b}] Unexpected error handling request RequestHeader(apiKey=METADATA, apiVersion=11, "
        "clientId=admin-1, correlationId=42) -- MetadataRequestData(topics=null, allowAutoTopicCreation=true, "
        "includeClusterAuthorizedOperations=false, includeTopicAuthorizedOperations=false) with context "
        "RequestContext(header=RequestHeader(apiKey=METADATA, apiVersion=11, clientId=admin-1, correlationId=42))",
        [
            "java.lang.IllegalStateException: Unexpected state",
            "\tat kafka.server.KafkaApis.handleTopicMetadataRequest(KafkaApis.scala:1212)",
            "\tat kafka.server.KafkaApis.handle(KafkaApis.scala:172)",
            "\tat kafka.server.KafkaRequestHandler.run(KafkaRequestHandler.scala:74)",
            "\tat java.base/java.lang.Thread.run(Thread.java:829)",
            "Caused by: java.util.ConcurrentModificationException",
            "\tat java.base/java.util.HashMap$HashIterator.nextNode(HashMap.java:1493)",
            "\t... 4 more",
        ],
    ),
)

_JSON_TAILS = (
    '"partitionIndex":{p},"errorCode":0,"baseOffset":{n},"logAppendTimeMs":-1}}]}}],"throttleTimeMs":0}}',
    'tionData":[{{"index":{p},"recordsSizeInBytes":{n}}}]}}]}},"response":',
    ',"highWatermark":{n},"lastStableOffset":{n},"logStartOffset":0,"abortedTransactions":null',
)


class Damage:
    """Seeded decisions: cut this line? insert garbage or a stack trace before it? (see the module)."""

    def __init__(self, fraction: float, seed: int = 0):
        if not 0.0 <= fraction <= 0.5:
            raise ValueError(f"--damage is a fraction of lines between 0 and 0.5, got {fraction!r}")
        self.fraction = float(fraction)
        self.rng = random.Random(seed)
        self.counts = {
            "cut_lines": 0,
            "garbage_lines": 0,
            "stack_traces": 0,
            "stack_trace_lines": 0,
            "cut_requests": {},  # (broker, "API_KEY_NAME", listener) -> request lines cut
        }

    def roll(self) -> int:
        """0: leave the line; 1: cut it; 2: garbage before it; 3: a stack trace before it."""
        if self.fraction == 0.0 or self.rng.random() >= self.fraction:
            return 0
        return 1 + self.rng.randrange(3)

    def cut(self, line: str) -> str:
        """``line`` (a whole record line) cut before its logger; never a record, a head or a continuation alone."""
        end = line.rfind(" (")
        start = line.find("] ") + 2
        for _ in range(20):
            pos = self.rng.randrange(start + 1, max(start + 2, end))
            out = line[:pos]
            if not _RECORD.match(out) and not _CONT.match(out):
                self.counts["cut_lines"] += 1
                return out
        raise AssertionError(f"could not cut {line[:80]!r} into a line no reader accepts")

    def garbage(self) -> str:
        kind = self.rng.randrange(3)
        if kind == 0:
            out = "\x00" * self.rng.randrange(16, 400)
        elif kind == 1:
            out = self.rng.choice(_JSON_TAILS).format(p=self.rng.randrange(50), n=self.rng.randrange(10**6))
        else:
            out = "".join(
                self.rng.choice("#@%&*+=~^<>|0123456789abcdefXYZ!?") for _ in range(self.rng.randrange(8, 120))
            )
        if _RECORD.match(out) or _HEAD.match(out) or _CONT.match(out):  # never, by construction
            raise AssertionError(f"garbage {out!r} reads as a log line")
        self.counts["garbage_lines"] += 1
        return out

    def stack_trace(self, broker: int, other: int) -> tuple[str, str, list[str]]:
        """``(level, " LEVEL message (logger)", trace lines)`` of one logged exception."""
        logger, level, msg, trace = STACK_TRACES[self.rng.randrange(len(STACK_TRACES))]
        lines = [t.format(b=broker, o=other) for t in trace]
        self.counts["stack_traces"] += 1
        self.counts["stack_trace_lines"] += len(lines)
        return level, f" {level} {msg.format(b=broker, o=other)} ({logger})", lines

    def summary(self) -> dict:
        c = dict(self.counts)
        c["cut_requests"] = [
            {"broker": b, "api": api, "listener": lst, "lines": n}
            for (b, api, lst), n in sorted(c["cut_requests"].items())
        ]
        return c

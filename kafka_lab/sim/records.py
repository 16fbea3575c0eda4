"""The request record: the one thing that flows out of the simulation.

Every request a client sends becomes one :class:`Request`. While it travels through the broker the
model stamps it with the same timestamps Kafka's ``RequestChannel`` keeps, and at the end of a run
the records become one pandas DataFrame (:func:`requests_frame`) with Kafka's request-log timings:

==================== ==============================================================================
``requestQueueTime`` dequeue − start: waiting in the plane's request queue (start = the network
                     processor has read the whole request and hands it to the request channel)
``localTime``        apiLocalComplete − dequeue: the request handler thread's work
``remoteTime``       responseComplete − apiLocalComplete: waiting in purgatory (acks=all
                     replication, long-poll fetch)
``throttleTime``     quota throttling (not modelled: always 0)
``responseQueueTime`` responseDequeue − responseComplete: waiting in the processor's response queue
``sendTime``         end − responseDequeue: writing the response to the socket
``totalTime``        end − start
==================== ==============================================================================

One more column is *not* in Kafka's request log, and that is the point of showing it:
``socketWaitTime`` = start − sent, the time the request sat in the socket before its network
processor had read it, the read itself (``network_read_ms``) included: behind an earlier request on
the same connection, or behind a processor that is blocked on a full request queue (KIP-291's first
failure mode, invisible to ``requestQueueTime``).

All times are simulated milliseconds. A request the run ended before finishing has the outcome
``IN_FLIGHT`` and NaN for the phases it has not reached.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["Request", "requests_frame", "TIMING_COLUMNS", "IN_FLIGHT"]

IN_FLIGHT = "IN_FLIGHT"
NAN = float("nan")

TIMING_COLUMNS = [
    "socketWaitTime",
    "requestQueueTime",
    "localTime",
    "remoteTime",
    "throttleTime",
    "responseQueueTime",
    "sendTime",
    "totalTime",
]


class Request:
    """One request and, once answered, its response (a plain object with slots: one per request)."""

    __slots__ = (
        "api",
        "correlation_id",
        "client_id",
        "connection",
        "acks",
        "partitions",
        "records",
        "timeout_ms",
        "payload",
        "error",
        "partition_errors",
        "on_done",
        "sent",
        "start",
        "enqueue",
        "dequeue",
        "api_local_complete",
        "response_complete",
        "response_dequeue",
        "end",
        "is_controller",
        "no_response",
        "result",
    )

    def __init__(
        self,
        api: str,
        correlation_id: int,
        client_id: str,
        *,
        acks: int = 1,
        partitions: tuple = (),
        records: int = 0,
        timeout_ms: float = 30000.0,
        payload=None,
        is_controller: bool = False,
        on_done=None,
    ):
        self.api = api
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.connection = None
        self.acks = acks
        self.partitions = partitions
        self.records = records
        self.timeout_ms = timeout_ms
        self.payload = payload
        self.is_controller = is_controller
        self.on_done = on_done
        self.error = IN_FLIGHT
        self.partition_errors = None
        self.no_response = False
        self.result = None
        self.sent = self.start = self.enqueue = self.dequeue = NAN
        self.api_local_complete = self.response_complete = self.response_dequeue = self.end = NAN


_RAW = ["sent", "start", "enqueue", "dequeue", "api_local_complete", "response_complete", "response_dequeue", "end"]


def requests_frame(requests: list[Request]) -> pd.DataFrame:
    """The request log of a run as a DataFrame, one row per request, in the order they were sent."""
    cols = {
        "api": [r.api for r in requests],
        "correlation_id": np.fromiter((r.correlation_id for r in requests), dtype=np.int64, count=len(requests)),
        "client_id": [r.client_id for r in requests],
        "broker_id": np.fromiter((r.connection.broker_id for r in requests), dtype=np.int64, count=len(requests)),
        "connection_id": [r.connection.connection_id for r in requests],
        "listener": [r.connection.listener for r in requests],
        "plane": [r.connection.plane for r in requests],
        "processor": np.fromiter((r.connection.processor.id for r in requests), dtype=np.int64, count=len(requests)),
        # acks is a Produce field; other requests have none (<NA>)
        "acks": pd.array([r.acks if r.api == "Produce" else None for r in requests], dtype="Int64"),
        "partitions": np.fromiter((len(r.partitions) for r in requests), dtype=np.int64, count=len(requests)),
        "records": np.fromiter((r.records for r in requests), dtype=np.int64, count=len(requests)),
        # the outcome is known once the response has been sent (or, for acks=0, the connection unmuted)
        "error": [r.error if r.end == r.end else IN_FLIGHT for r in requests],
    }
    raw = {name: np.fromiter((getattr(r, name) for r in requests), dtype=float, count=len(requests)) for name in _RAW}
    for name in _RAW:
        cols[f"{name}_ms"] = raw[name]
    cols["socketWaitTime"] = raw["start"] - raw["sent"]
    cols["requestQueueTime"] = raw["dequeue"] - raw["start"]
    cols["localTime"] = raw["api_local_complete"] - raw["dequeue"]
    cols["remoteTime"] = raw["response_complete"] - raw["api_local_complete"]
    cols["throttleTime"] = np.where(np.isnan(raw["response_complete"]), np.nan, 0.0)
    cols["responseQueueTime"] = raw["response_dequeue"] - raw["response_complete"]
    cols["sendTime"] = raw["end"] - raw["response_dequeue"]
    cols["totalTime"] = raw["end"] - raw["start"]
    return pd.DataFrame(cols)

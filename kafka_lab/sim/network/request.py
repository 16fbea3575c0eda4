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

**The log keeps columns, not objects.** A run sends far more requests than anyone inspects one by one,
so the :class:`RequestLog` keeps an answered ``Produce`` or ``Fetch`` request (the bulk of every run)
only as its row of the request log: a few numbers in column arrays, about a hundred bytes, written the
moment its response has been sent (``end`` is stamped), plus its partitions and per-partition errors
(codes into tables of the distinct ones: a run has few). The object, its payload and its response
(``result``) go. Every other request (``Metadata``, ``AlterIsr`` and the controller's) is few, and stays
whole, response included, as does any request still in flight; ``RequestLog(keep_answered=True)`` keeps
every request whole (lab 03's one-broker :class:`~kafka_lab.sim.scenario.Scenario`, whose runs are
small). Iterating over the log gives the requests in the order they were sent: those kept whole as
they are, the others as :class:`RequestRecord` (that row of the columns). :func:`requests_frame` is
the same DataFrame either way.
"""

from __future__ import annotations

from array import array

import numpy as np
import pandas as pd

__all__ = [
    "Request",
    "RequestLog",
    "RequestRecord",
    "requests_frame",
    "TIMING_COLUMNS",
    "PHASE_STARTS",
    "IN_FLIGHT",
    "STREAMED_APIS",
]

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
#: the phases of a request's life, in the order it lives them, each with the timestamp column its time starts at (the
#: next phase's is its end); throttleTime (0: the model throttles nothing) and totalTime are no phases of their own
PHASE_STARTS = dict(
    zip(
        [c for c in TIMING_COLUMNS if c not in ("throttleTime", "totalTime")],
        ["sent_ms", "start_ms", "dequeue_ms", "api_local_complete_ms", "response_complete_ms", "response_dequeue_ms"],
        strict=True,
    )
)

#: APIs whose answered requests the log keeps as columns only (the rest stay whole, response included)
STREAMED_APIS = frozenset({"Produce", "Fetch"})

_RAW = ["sent", "start", "enqueue", "dequeue", "api_local_complete", "response_complete", "response_dequeue", "end"]


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
        "_end",
        "is_controller",
        "no_response",
        "close_connection",
        "result",
        "_log",
        "_row",
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
        self.close_connection = False  # answered by closing its connection (an acks=0 produce that failed)
        self.result = None
        self.sent = self.start = self.enqueue = self.dequeue = NAN
        self.api_local_complete = self.response_complete = self.response_dequeue = self._end = NAN
        self._log = None  # the RequestLog holding it, until it is answered
        self._row = -1

    @property
    def end(self) -> float:
        """When the response was sent (or the connection unmuted, or the request lost): NaN until then."""
        return self._end

    @end.setter
    def end(self, t: float) -> None:
        self._end = t
        log = self._log
        if log is not None:
            self._log = None
            log._answered(self)


class RequestRecord:
    """An answered ``Produce`` or ``Fetch`` request as the log keeps it: its row of the request log, its
    partitions and per-partition errors; not its payload nor its response (``result``)."""

    __slots__ = (
        "api",
        "correlation_id",
        "client_id",
        "connection",
        "acks",
        "partitions",
        "partition_errors",
        "records",
        "error",
        *_RAW,
    )

    def __getattr__(self, name):
        raise AttributeError(
            f"the request log keeps an answered {self.api} request as its columns only "
            f"(RequestRecord: {', '.join(RequestRecord.__slots__)}); {name!r} was not kept"
        )

    def __repr__(self) -> str:
        return (
            f"RequestRecord({self.api} {self.client_id}#{self.correlation_id} to broker "
            f"{self.connection.broker_id}, {self.error}, sent {self.sent} ms, end {self.end} ms)"
        )


class _Codes(dict):
    """Values (strings, connections, tuples) to small integer codes and back: ``codes[value]`` is the value's
    code (a value not seen before gets the next one), ``codes.decoded[code]`` the value."""

    __slots__ = ("decoded",)

    def __init__(self):
        super().__init__()
        self.decoded: list = []

    def __missing__(self, value) -> int:
        c = self[value] = len(self.decoded)
        self.decoded.append(value)
        return c


class RequestLog:
    """Every request a run sent, in the order sent; answered Produce/Fetch requests as column arrays."""

    def __init__(self, keep_answered: bool = False):
        #: keep answered Produce/Fetch requests whole too (lab 03's one-broker Scenario does: its runs are
        #: small, and its tests count request objects by identity, which needs them alive)
        self.keep_answered = keep_answered
        self._n = 0
        self._whole: dict = {}  # row -> Request: unanswered requests, and answered ones of other APIs
        self._apis, self._clients, self._errors, self._conns = _Codes(), _Codes(), _Codes(), _Codes()
        # the partitions of a request, and its per-partition errors, are few distinct tuples: kept once each
        self._tp_sets, self._partition_errors = _Codes(), _Codes()
        # the answered Produce/Fetch requests, one entry per column, in the order they were answered
        self._rows = array("q")
        self._api = array("b")
        self._corr = array("q")
        self._client = array("i")
        self._conn = array("i")
        self._acks = array("b")
        self._tps = array("i")
        self._perr = array("i")  # -1: no per-partition errors (None)
        self._records = array("q")
        self._error = array("h")
        self._times = [array("d") for _ in _RAW]

    def __len__(self) -> int:
        return self._n

    def append(self, req: Request) -> None:
        """Log ``req`` (sent now); it becomes columns when answered if its API is a streamed one."""
        req._log = self
        req._row = self._n
        self._whole[self._n] = req
        self._n += 1

    def _answered(self, req: Request) -> None:
        """``req``'s ``end`` was stamped: a Produce or Fetch request becomes its row of columns."""
        if self.keep_answered or req.api not in STREAMED_APIS:
            return
        del self._whole[req._row]
        self._rows.append(req._row)
        self._api.append(self._apis[req.api])
        self._corr.append(req.correlation_id)
        self._client.append(self._clients[req.client_id])
        self._conn.append(self._conns[req.connection])  # a connection is its own key (hashed by identity)
        self._acks.append(req.acks)
        self._tps.append(self._tp_sets[tuple(req.partitions)])
        pe = req.partition_errors
        self._perr.append(-1 if pe is None else self._partition_errors[tuple(pe.items())])
        self._records.append(req.records)
        self._error.append(self._errors[req.error])
        t = self._times
        t[0].append(req.sent)
        t[1].append(req.start)
        t[2].append(req.enqueue)
        t[3].append(req.dequeue)
        t[4].append(req.api_local_complete)
        t[5].append(req.response_complete)
        t[6].append(req.response_dequeue)
        t[7].append(req._end)

    def __iter__(self):
        """The requests in the order sent: kept whole as they are, answered Produce/Fetch as RequestRecord."""
        index = {row: i for i, row in enumerate(self._rows)}
        for row in range(self._n):
            req = self._whole.get(row)
            yield req if req is not None else self._record(index[row])

    def _record(self, i: int) -> RequestRecord:
        r = RequestRecord.__new__(RequestRecord)
        r.api = self._apis.decoded[self._api[i]]
        r.correlation_id = self._corr[i]
        r.client_id = self._clients.decoded[self._client[i]]
        r.connection = self._conns.decoded[self._conn[i]]
        r.acks = self._acks[i]
        r.partitions = self._tp_sets.decoded[self._tps[i]]
        pe = self._perr[i]
        r.partition_errors = None if pe < 0 else dict(self._partition_errors.decoded[pe])
        r.records = self._records[i]
        r.error = self._errors.decoded[self._error[i]]
        for name, col in zip(_RAW, self._times):
            setattr(r, name, col[i])
        return r

    def frame(self) -> pd.DataFrame:
        """The request log as a DataFrame (see :func:`requests_frame`)."""
        n = self._n
        rows = _np(self._rows, np.int64)
        whole = list(self._whole.values())
        wrows = np.fromiter(self._whole, dtype=np.int64, count=len(whole))

        def merged(streamed, from_whole, dtype):
            out = np.empty(n, dtype=dtype)
            out[rows] = streamed
            out[wrows] = from_whole
            return out

        def codes_of(table, keys):
            return np.fromiter((table[k] for k in keys), dtype=np.int64, count=len(whole))

        api = merged(_np(self._api, np.int8), codes_of(self._apis, (r.api for r in whole)), np.int64)
        client = merged(_np(self._client, np.int32), codes_of(self._clients, (r.client_id for r in whole)), np.int64)
        conn_whole = np.fromiter((self._conns[r.connection] for r in whole), dtype=np.int64, count=len(whole))
        conn = merged(_np(self._conn, np.int32), conn_whole, np.int64)
        error = merged(
            _np(self._error, np.int16),
            codes_of(self._errors, (r.error if r._end == r._end else IN_FLIGHT for r in whole)),
            np.int64,
        )
        cols = {
            "api": _decode(self._apis.decoded, api),
            "correlation_id": merged(_np(self._corr, np.int64), [r.correlation_id for r in whole], np.int64),
            "acks": merged(_np(self._acks, np.int8), [r.acks for r in whole], np.int64),
            "partitions": merged(
                _table(self._tp_sets.decoded, len, np.int64)[_np(self._tps, np.int32)],
                [len(r.partitions) for r in whole],
                np.int64,
            ),
            "records": merged(_np(self._records, np.int64), [r.records for r in whole], np.int64),
        }
        raw = {
            name: merged(_np(col, np.float64), [getattr(r, name) for r in whole], np.float64)
            for name, col in zip(_RAW, self._times)
        }
        conns = self._conns.decoded
        return _frame(
            api=cols["api"],
            correlation_id=cols["correlation_id"],
            client_id=_decode(self._clients.decoded, client),
            broker_id=_table(conns, lambda c: c.broker_id, np.int64)[conn],
            connection_id=_decode([c.connection_id for c in conns], conn),
            listener=_decode([c.listener for c in conns], conn),
            plane=_decode([c.plane for c in conns], conn),
            processor=_table(conns, lambda c: c.processor.id, np.int64)[conn],
            acks=cols["acks"],
            partitions=cols["partitions"],
            records=cols["records"],
            error=_decode(self._errors.decoded, error),
            raw=raw,
        )


def _np(a: array, dtype) -> np.ndarray:
    """A copy of an ``array.array`` as numpy (a copy: the array keeps growing during a run)."""
    return np.frombuffer(a, dtype=dtype).copy() if len(a) else np.empty(0, dtype=dtype)


def _table(values: list, key, dtype) -> np.ndarray:
    return np.fromiter((key(v) for v in values), dtype=dtype, count=len(values))


def _decode(values: list, codes: np.ndarray) -> np.ndarray:
    table = np.empty(len(values), dtype=object)
    table[:] = values
    return table[codes]


def _frame(
    *,
    api,
    correlation_id,
    client_id,
    broker_id,
    connection_id,
    listener,
    plane,
    processor,
    acks,
    partitions,
    records,
    error,
    raw,
) -> pd.DataFrame:
    cols = {
        "api": api,
        "correlation_id": correlation_id,
        "client_id": client_id,
        "broker_id": broker_id,
        "connection_id": connection_id,
        "listener": listener,
        "plane": plane,
        "processor": processor,
        # acks is a Produce field; other requests have none (<NA>)
        "acks": pd.arrays.IntegerArray(np.asarray(acks, dtype=np.int64), np.asarray(api) != "Produce"),
        "partitions": partitions,
        "records": records,
        # the outcome is known once the response has been sent (or, for acks=0, the connection unmuted)
        "error": error,
    }
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


def requests_frame(requests) -> pd.DataFrame:
    """The request log of a run as a DataFrame, one row per request, in the order they were sent.

    ``requests`` is a :class:`RequestLog` or a list of :class:`Request` objects.
    """
    if isinstance(requests, RequestLog):
        return requests.frame()
    log = RequestLog()  # a log holding them whole, without registering itself with them
    log._whole = dict(enumerate(requests))
    log._n = len(log._whole)
    return log.frame()

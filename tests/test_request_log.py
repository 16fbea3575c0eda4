"""The request log keeps columns, not objects (kafka_lab/sim/network/request.py), and loses nothing by it.

The truth for the DataFrame is the direct reading: every request object of the run kept alive beside
the model (a test hook, not the model's log), read when the run ends, one row each, with the timings of
Kafka's request log (``RequestChannel.updateRequestMetrics``: requestQueueTime = dequeue − start, and so
on). The streamed log must give exactly that frame, row for row, in the order the requests were sent.
"""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest

from kafka_lab.sim import Cluster, Scenario
from kafka_lab.sim.network import request as records_mod
from kafka_lab.sim.network.request import STREAMED_APIS, Request, RequestLog, RequestRecord, requests_frame

RAW = ["sent", "start", "enqueue", "dequeue", "api_local_complete", "response_complete", "response_dequeue", "end"]


def reference_frame(reqs) -> pd.DataFrame:
    """One row per request object, read directly (the log's contract, without its storage)."""
    cols = {
        "api": [r.api for r in reqs],
        "correlation_id": np.array([r.correlation_id for r in reqs], dtype=np.int64),
        "client_id": [r.client_id for r in reqs],
        "broker_id": np.array([r.connection.broker_id for r in reqs], dtype=np.int64),
        "connection_id": [r.connection.connection_id for r in reqs],
        "listener": [r.connection.listener for r in reqs],
        "plane": [r.connection.plane for r in reqs],
        "processor": np.array([r.connection.processor.id for r in reqs], dtype=np.int64),
        "acks": pd.array([r.acks if r.api == "Produce" else None for r in reqs], dtype="Int64"),
        "partitions": np.array([len(r.partitions) for r in reqs], dtype=np.int64),
        "records": np.array([r.records for r in reqs], dtype=np.int64),
        "error": [r.error if r.end == r.end else "IN_FLIGHT" for r in reqs],
    }
    raw = {n: np.array([getattr(r, n) for r in reqs], dtype=float) for n in RAW}
    for n in RAW:
        cols[f"{n}_ms"] = raw[n]
    cols["socketWaitTime"] = raw["start"] - raw["sent"]
    cols["requestQueueTime"] = raw["dequeue"] - raw["start"]
    cols["localTime"] = raw["api_local_complete"] - raw["dequeue"]
    cols["remoteTime"] = raw["response_complete"] - raw["api_local_complete"]
    cols["throttleTime"] = np.where(np.isnan(raw["response_complete"]), np.nan, 0.0)
    cols["responseQueueTime"] = raw["response_dequeue"] - raw["response_complete"]
    cols["sendTime"] = raw["end"] - raw["response_dequeue"]
    cols["totalTime"] = raw["end"] - raw["start"]
    return pd.DataFrame(cols)


@pytest.fixture
def kept(monkeypatch):
    """Every request the run sends, kept alive beside the model's log."""
    out = []
    append = RequestLog.append
    monkeypatch.setattr(RequestLog, "append", lambda self, req: (out.append(req), append(self, req))[1])
    return out


def busy_cluster(seed=3):
    """Every kind of row: acks=all and acks=1 produces, follower and consumer fetches, metadata, AlterIsr,
    LeaderAndIsr and UpdateMetadata, client timeouts (NETWORK_EXCEPTION, DISCONNECTED) and requests in flight."""
    c = Cluster(3, seed=seed, broker_overrides={"replica.lag.time.max.ms": 60})
    c.create_topic("t", 6, 3)
    c.brokers[3].fetchers.stop_fetching(("t", 0))
    c.producer(
        "all", topic="t", acks="all", request_timeout_ms=40, max_in_flight_requests_per_connection=3, partitions=[0, 1]
    ).open_loop(800)
    c.producer("one", topic="t", acks=1).open_loop(1500)
    c.consumer("reader", topic="t", poll_interval_ms=10)
    c.controller.elect_leader(("t", 2), 2, at_ms=50)
    return c, c.run(200)


def test_the_streamed_log_is_the_frame_of_every_request_object(kept):
    _c, res = busy_cluster()
    pd.testing.assert_frame_equal(res.requests, reference_frame(kept))
    errors = set(res.requests["error"])
    assert {"NONE", "IN_FLIGHT", "DISCONNECTED"} <= errors  # the run has every kind of ending
    assert set(res.requests["api"]) == {"Produce", "Fetch", "Metadata", "AlterIsr", "LeaderAndIsr", "UpdateMetadata"}
    # and a list of request objects still makes the same frame
    pd.testing.assert_frame_equal(requests_frame(kept), res.requests)


def test_answered_produce_and_fetch_requests_are_not_kept_as_objects():
    c, res = busy_cluster()
    gc.collect()
    procs = {id(p) for b in c.brokers.values() for plane in b.planes.values() for p in plane.processors}
    alive = [o for o in gc.get_objects() if type(o) is Request and id(o.connection.processor) in procs]
    answered = res.requests["error"] != "IN_FLIGHT"
    streamed = res.requests["api"].isin(STREAMED_APIS)
    in_flight_or_whole = int((~streamed | ~answered).sum())
    # every other request stays whole, and so does every request still in flight; of the answered
    # Produce/Fetch requests only the last one a thread or client was handling survives
    threads = sum(
        len(b.fetchers.threads) + sum(len(p.processors) for p in b.planes.values()) for b in c.brokers.values()
    ) + len(c.clients)
    assert in_flight_or_whole <= len(alive) <= in_flight_or_whole + threads
    assert (streamed & answered).sum() > 1000


def test_iterating_the_log_gives_each_row_in_the_order_sent(kept):
    c, res = busy_cluster()
    items = list(c.log)
    frame = res.requests
    assert len(items) == len(c.log) == len(frame) == len(kept)
    for (_i, row), item, obj in zip(frame.iterrows(), items, kept):
        assert (item.api, item.correlation_id, item.client_id, item.connection) == (
            row["api"],
            row["correlation_id"],
            row["client_id"],
            obj.connection,
        )
        for n in RAW:
            assert getattr(item, n) == row[f"{n}_ms"] or (np.isnan(getattr(item, n)) and np.isnan(row[f"{n}_ms"]))
        if isinstance(item, RequestRecord):
            assert item.api in STREAMED_APIS and item.error == row["error"] == obj.error
            # its partitions and their errors are kept: a produce to 20 partitions has its 20 results
            assert item.partitions == obj.partitions and item.partition_errors == obj.partition_errors
            assert len(item.partitions) == row["partitions"]
        else:
            assert item is obj
    # a controller request keeps its response: the partitions' errors are there to read
    lai = [r for r in items if r.api == "LeaderAndIsr"][-1]
    assert isinstance(lai, Request) and lai.partition_errors == {("t", 2): "NONE"}
    record = next(r for r in items if isinstance(r, RequestRecord))
    with pytest.raises(AttributeError, match="columns only"):
        _ = record.payload


def test_lab_03s_scenario_keeps_its_request_objects():
    sc = Scenario({"num.io.threads": 2}, seed=1)
    sc.producer(acks=1).open_loop(2000)
    res = sc.run(20)
    assert len(res.requests) > 10 and all(isinstance(r, Request) for r in sc.log)
    assert sc.log.keep_answered and not records_mod.RequestLog().keep_answered


def test_an_empty_log_is_an_empty_frame_with_the_columns():
    empty = RequestLog().frame()
    assert len(empty) == 0
    assert list(empty.columns) == list(reference_frame([]).columns)

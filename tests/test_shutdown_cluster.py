"""The controlled shutdown inside the cluster model: the controller's requests through the brokers' request
paths (lab 03's model), so that KIP-291's control plane matters for it too."""

import re
import zlib

import numpy as np
import pytest

from kafka_lab.sim import shutdown_in_cluster
from kafka_lab.sim.zk.controller_scale import shutdown_schedule


@pytest.fixture(scope="module")
def runs():
    return {
        (v, cp, load): shutdown_in_cluster(version=v, control_plane=cp, producers=200 if load else 0)
        for v in ("1.0", "1.1")
        for cp in (False, True)
        for load in (False, True)
        if v == "1.1" or load
    }


def test_every_led_partition_moves_to_broker_2_after_its_write(runs):
    for r in runs.values():
        m = r.moves
        assert len(m) == 10 and m["new_leader_started_ms"].notna().all()
        assert (m["new_leader_started_ms"] > m["written_ms"]).all()
        # each move is one decision of the controller, and the cluster measures its unavailability
        assert len(r.results.unavailability) == 10


def test_the_reply_is_the_schedules_and_does_not_wait_for_the_brokers(runs):
    leads = np.arange(20) % 2 == 0
    for (v, _cp, _load), r in runs.items():
        rng = np.random.default_rng([0, zlib.crc32(f"cluster-shutdown-{v}".encode())])
        assert r.reply_ms == pytest.approx(shutdown_schedule(leads, v, rng, cluster_size=20)["duration_ms"])


def test_on_an_idle_cluster_the_control_plane_changes_nothing(runs):
    a, b = runs[("1.1", False, False)], runs[("1.1", True, False)]
    assert a.leaders_moved_ms == pytest.approx(b.leaders_moved_ms, abs=0.05)


def test_on_a_busy_broker_the_batched_leader_and_isr_waits_behind_the_produce_backlog(runs):
    off, on = runs[("1.1", False, True)], runs[("1.1", True, True)]
    req = off.results.requests
    lai = req[(req["api"] == "LeaderAndIsr") & (req["broker_id"] == 2)]
    assert lai["requestQueueTime"].mean() > 5  # about 200 requests ahead, 8 handlers of ~0.6 ms
    assert lai["plane"].eq("data").all()
    req_on = on.results.requests
    lai_on = req_on[(req_on["api"] == "LeaderAndIsr") & (req_on["broker_id"] == 2)]
    assert lai_on["plane"].eq("control").all() and lai_on["requestQueueTime"].max() == 0
    assert off.leaders_moved_ms > on.leaders_moved_ms + 5
    # with its own plane the new leader acts about one LeaderAndIsr after the writes
    assert on.leaders_moved_ms == pytest.approx(runs[("1.1", True, False)].leaders_moved_ms, abs=0.05)


def test_1_0_moves_one_partition_at_a_time_in_the_cluster_too(runs):
    r, on = runs[("1.0", False, True)], runs[("1.0", True, True)]
    req = r.results.requests
    assert (req[(req["api"] == "LeaderAndIsr") & (req["broker_id"] == 2)]["partitions"] == 1).all()
    # with its own plane, broker 2 follows the controller's pace: one led partition every other step of
    # about 3 ms (a read, a write, seven requests built; the election's log line of 20 partitions is tiny)
    assert np.all(np.diff(on.moves["new_leader_started_ms"].to_numpy()) < 10)
    # on the data plane each partition's own round of requests waits behind broker 2's produce backlog
    # (the channel has one request in flight per broker): the brokers set the pace, long after the reply
    assert np.all(np.diff(r.moves["new_leader_started_ms"].to_numpy()) > 30)
    assert r.reply_ms == on.reply_ms and r.leaders_moved_ms > 5 * r.reply_ms
    # 1.1 sends one batch: the same backlog is waited for once
    assert runs[("1.1", False, True)].leaders_moved_ms < r.leaders_moved_ms / 10


def test_bad_input():
    with pytest.raises(TypeError, match="control_plane must be True or False"):
        shutdown_in_cluster(version="1.1", control_plane="yes")
    with pytest.raises(ValueError, match="partitions must be an int from 2 to 2000"):
        shutdown_in_cluster(version="1.1", control_plane=False, partitions=1)
    with pytest.raises(ValueError, match="version must be one of"):
        shutdown_in_cluster(version="0.9", control_plane=False)


@pytest.mark.parametrize(
    "kw, error, message",
    [
        ({"start_ms": -5}, ValueError, "start_ms must be at least 1, got -5"),
        ({"start_ms": 0.5}, ValueError, "start_ms must be at least 1, got 0.5"),
        ({"start_ms": float("nan")}, TypeError, "start_ms is a finite number, got nan"),
        ({"until_ms": -1.0}, ValueError, "until_ms must be more than 0, got -1.0"),
        ({"until_ms": 0}, ValueError, "until_ms must be more than 0, got 0"),  # once read as "not given"
        ({"until_ms": float("nan")}, TypeError, "until_ms is a finite number, got nan"),
        ({"producers": -1}, ValueError, "producers must be at least 0, got -1"),
        ({"producers": 2.5}, ValueError, "producers is a whole number, got 2.5"),
    ],
)
def test_times_and_counts_say_what_they_accept(kw, error, message):
    """Negative or NaN times once ran (a simpy 'Negative delay', or a run that did not end): each option says
    what it takes, as the incidents' options do (kafka_lab.sim.common.options)."""
    with pytest.raises(error, match=re.escape(message)):
        shutdown_in_cluster(version="1.1", control_plane=False, **kw)

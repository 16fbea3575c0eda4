"""The KRaft controller at scale (kafka_lab/sim/kraft/scale.py): failover and controlled shutdown from 100 to 100k
partitions, against the cluster's own event model at the sizes it runs (the same times, to the float), and
against Kafka 4.0's rules (docs/kafka-reference.md §8.4, §8.5): no reload on failover, a controlled shutdown's records
in batches of at most 10,000, granted once every active broker reported the event's last offset."""

from __future__ import annotations

import math

import pytest

from kafka_lab.sim import Cluster, controller_failover, kraft_controlled_shutdown, kraft_failover
from kafka_lab.sim.kraft.scale import SHUTTING_DOWN, failover_assignment, shutdown_assignment, shutdown_result


def _cluster(assignment: dict, seed: int) -> Cluster:
    c = Cluster(5, seed=seed, mode="kraft")
    for name, parts in assignment.items():
        c.create_topic(name, assignment=parts)
    return c


@pytest.mark.parametrize("n", [100, 260])
def test_controlled_shutdown_at_scale_equals_the_cluster_event_model(n):
    """The observer brokers' loader work counted from the records takes the time a cluster's brokers take to apply the
    same records (no client traffic: no append holds a partition's lock): every phase of the shutdown is the same."""
    a = shutdown_assignment(n, seed=1)
    c = _cluster(a, seed=1)
    c.restart_broker(SHUTTING_DOWN, at_ms=3000.0, down_ms=10**7)
    c.run(9000)
    full = shutdown_result(c.kraft.quorum, c.log, a, 3000.0, n)
    scaled = kraft_controlled_shutdown(partitions=n, seed=1)
    assert not math.isnan(full.duration_s)
    assert scaled.duration_s == pytest.approx(full.duration_s, rel=1e-12)
    for k, v in full.phases.items():
        assert scaled.phases[k] == pytest.approx(v, rel=1e-12), k
    assert scaled.records == full.records == n + 1


def test_failover_at_scale_equals_the_cluster_event_model():
    """The active controller stops at 3 s in a cluster and in the scaled world of the same seed: the same election,
    the same activation, to the float."""
    n = 150
    c = _cluster(failover_assignment(n), seed=2)
    c.restart_controller("active", at_ms=3000.0)
    c.run(9000)
    ev = c.kraft.quorum.events_frame()
    act = ev[(ev["event"] == "activate") & (ev["time_ms"] > 3000)]["time_ms"].iloc[0]
    f = kraft_failover(partitions=n, seed=2)
    assert f.phases["activated_ms"] == pytest.approx(act, rel=1e-12)


def test_failover_reloads_nothing_whatever_the_partitions():
    """A standby has replayed every committed record: the new active controller activates once its
    LeaderChangeMessage commits, at the same time at 100 and 5,000 partitions, after the voters' fetch timeout
    (2000 ms after their last successful fetch), far below lab 07's ZooKeeper-mode reload of 100k partitions."""
    small, big = kraft_failover(partitions=100), kraft_failover(partitions=5000)
    assert small.duration_s == big.duration_s
    # measured by the new active controller: after the crash it replayed only what was committed meanwhile and its
    # own LeaderChangeMessage, at 100 partitions as at 5,000 (a reload would replay the whole log: 120 or 5,118)
    assert small.reloaded_records == big.reloaded_records == 2
    assert len(big.metadata_log) > 50 * small.reloaded_records
    p = small.phases
    assert p["fault_ms"] < p["detected_ms"] <= p["fault_ms"] + 2000.0
    assert p["detected_ms"] < p["elected_ms"] < p["activated_ms"] < p["brokers_ms"]
    assert 2.0 > small.duration_s - (p["detected_ms"] - p["fault_ms"]) / 1000 > 0
    assert controller_failover(partitions=100_000, version="2.8").load_s > 4 * small.duration_s  # 14 s against 3 s


def test_controlled_shutdown_records_come_in_batches_of_ten_thousand():
    """``QuorumController.MAX_RECORDS_PER_BATCH``: the event's 10,001 records (one ``BrokerRegistrationChangeRecord``,
    one ``PartitionChangeRecord`` per partition) fill two Raft batches; broker 1's led partitions move to their other
    replica, its followed ones lose it from their ISR."""
    r = kraft_controlled_shutdown(partitions=10_000)
    assert r.records == 10_001 and r.batches == 2
    tl = r.timeline
    led = tl[tl["role"] == "leader"]
    assert len(led) == 5000 and (led["new_leader"] != SHUTTING_DOWN).all()
    small = kraft_controlled_shutdown(partitions=100)
    assert r.phases["committed_ms"] > small.phases["committed_ms"]
    assert r.phases["granted_ms"] >= r.phases["reported_ms"] >= r.phases["committed_ms"]


def test_the_scale_runs_refuse_bad_input():
    with pytest.raises(ValueError, match="partitions is a whole number"):
        kraft_failover(partitions=0)
    with pytest.raises(ValueError, match="partitions is a whole number"):
        kraft_controlled_shutdown(partitions=2.5)
    with pytest.raises(TypeError, match="unknown option"):
        kraft_failover(partitions=100, version="1.1")
    with pytest.raises(ValueError, match="fault is 'crash' or 'pause'"):
        kraft_failover(partitions=100, fault="kill")
    with pytest.raises(ValueError, match="at_ms is a time"):
        kraft_controlled_shutdown(partitions=100, at_ms=-1)

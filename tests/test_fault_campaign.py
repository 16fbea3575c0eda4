"""A fault campaign in the spirit of Jepsen (tools/fault_campaign.py): hypothesis draws small clusters (3-5 brokers,
replication factor 3, ``min.insync.replicas`` 1 or 2, producers with acks 0, 1 or all, the control plane on some
brokers, a ``zookeeper.session.timeout.ms``) and fault schedules (restarts, controlled shutdowns, preferred leader
moves, controller moves, a follower that stops fetching, crashes, stop-the-world pauses), and every run must keep
every property the tool checks: conservation of records; no acks=all record lost with ``min.insync.replicas >= 2``
and unclean election off; leader epochs that never decrease; one leader per partition and epoch; a leader's high
watermark that never falls; committed records on every ISR member; a stopped or paused broker inert; the same
schedule, the same ledger.

``tools/fault_campaign.py --runs N`` is the soak: the same checks on thousands of schedules.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent


def _campaign():
    name = "kafka_lab_tools_fault_campaign"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "tools" / "fault_campaign.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up while it loads
        spec.loader.exec_module(module)
    return sys.modules[name]


fc = _campaign()


@st.composite
def faults(draw, brokers: int):
    out, restarted = [], set()
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(fc.KINDS))
        b = draw(st.integers(0, brokers - 1))
        if kind in ("restart", "shutdown", "crash"):
            if b in restarted:  # one restart per broker: a script does not shut down a broker that is down
                continue
            restarted.add(b)
        for_ms = None
        if kind == "restart":
            for_ms = draw(st.sampled_from([0.0, 1.5, 40.0, 300.0, 1200.0]))
        elif kind == "stall":
            for_ms = draw(st.sampled_from([None, 80.0, 700.0]))
        elif kind == "crash":  # back this long after its session expired, or never
            for_ms = draw(st.sampled_from([None, 0.0, 300.0]))
        elif kind == "pause":
            for_ms = draw(st.sampled_from([0.0, 150.0, 700.0, 1500.0]))
        out.append(
            fc.Fault(
                kind,
                draw(st.floats(50.0, 2200.0).map(lambda t: round(t, 2))),
                broker=b,
                partition=draw(st.integers(0, 3)),
                replica=draw(st.integers(0, 2)),
                for_ms=for_ms,
            )
        )
    return tuple(out)


@st.composite
def schedules(draw):
    brokers = draw(st.integers(3, 5))
    return fc.Schedule(
        seed=draw(st.integers(0, 10_000)),
        brokers=brokers,
        partitions=draw(st.integers(1, 3)),
        min_isr=draw(st.integers(1, 2)),
        acks=tuple(draw(st.lists(st.sampled_from(["0", "1", "all"]), min_size=1, max_size=2))),
        rate_per_s=draw(st.sampled_from([100.0, 250.0])),
        control_plane=tuple(b for b in range(1, brokers + 1) if draw(st.booleans())),
        lag_ms=draw(st.sampled_from([300, 1000, 30000])),
        session_ms=draw(st.sampled_from([400, 1000, 18000])),
        unclean=False,
        faults=draw(faults(brokers)),
        until_ms=2500.0,
    )


#: the issue's run: broker 2's controlled shutdown while the controller moves t-0 to it, broker 3's follower
#: stalled; the LeaderAndIsr it is handling when it stops must be lost, not applied after the shutdown
ISSUE = fc.Schedule(
    seed=0,
    brokers=3,
    partitions=3,
    min_isr=2,
    acks=("all", "0"),
    rate_per_s=250.0,
    lag_ms=600,
    faults=(
        fc.Fault("stall", 40.0, broker=2, partition=1),
        fc.Fault("stall", 40.0, broker=2, partition=2),
        fc.Fault("elect", 1000.0, partition=0, replica=1),
        fc.Fault("restart", 1000.0, broker=1, for_ms=1200.0),
        fc.Fault("move_controller", 1500.0),
    ),
    until_ms=2500.0,
)


@settings(max_examples=25, deadline=None)
@given(schedules())
@example(ISSUE)
@example(
    fc.Schedule(
        seed=3,
        brokers=3,
        partitions=1,
        min_isr=1,
        acks=("all",),
        faults=(
            fc.Fault("restart", 300.0, broker=0, for_ms=0.0),  # the controller's own broker, back at once
            fc.Fault("shutdown", 900.0, broker=1),  # gone for good: the partition's ISR keeps its last member
            fc.Fault("shutdown", 1200.0, broker=2),
        ),
        until_ms=2500.0,
    )
)
@example(  # the zombie controller: broker 1 frozen past its session, while the others elect and move on
    fc.Schedule(
        seed=5,
        brokers=3,
        partitions=3,
        min_isr=2,
        acks=("all", "1"),
        session_ms=400,
        faults=(
            fc.Fault("elect", 600.0, partition=1, replica=0),  # written at 602, sent
            fc.Fault("pause", 602.01, broker=0, for_ms=1500.0),  # its UpdateMetadata queued
            fc.Fault("crash", 1000.0, broker=1, for_ms=300.0),  # and broker 2 dies while it sleeps
        ),
        until_ms=2500.0,
    )
)
@example(  # soak seed 36, run 9: broker 2's session expired 3 ms before the end, its ISR write lands after it
    fc.Schedule(
        seed=9,
        brokers=3,
        partitions=3,
        min_isr=1,
        acks=("1",),
        rate_per_s=300.0,
        control_plane=(2,),
        lag_ms=300,
        session_ms=1500,
        faults=(
            fc.Fault("crash", 1497.26, broker=1, for_ms=301.44),
            fc.Fault("move_controller", 1730.18),
            fc.Fault("pause", 2142.8, broker=2, for_ms=25.03),
        ),
        until_ms=3000.0,
    )
)
def test_every_fault_schedule_keeps_the_properties(schedule):
    run = fc.run_schedule(schedule)
    assert fc.violations(run, repeat=True) == []


def test_the_campaign_finds_a_broken_property():
    """The checks can fail: a ledger that loses an acks=all batch, a high watermark that falls on a leader, a
    broker that handles a request while down, each planted in a real run, is reported."""
    run = fc.run_schedule(ISSUE)
    assert fc.violations(run) == []
    lg = run.results.ledger
    i = lg.index[(lg["acks"] == -1) & (lg["outcome"] == "committed")][0]
    lg["outcome"] = lg["outcome"].cat.set_categories(lg["outcome"].cat.categories)
    lg.loc[i, "outcome"] = "truncated"
    assert any(v.startswith("acks=all lost") for v in fc.violations(run))
    lg.loc[i, "outcome"] = "committed"
    leader = run.cluster.brokers[run.cluster.leader_of((fc.TOPIC, 0))].replica_manager.partitions[(fc.TOPIC, 0)]
    run.hw_drops.append((2000.0, leader, 10, 5, leader.leader, leader.leader_epoch))
    assert any(v.startswith("high watermark") for v in fc.violations(run))
    run.hw_drops.pop()
    req = run.results.requests
    stopped, _logs, started, _after = run.stops[2][0]
    j = req.index[req["broker_id"] == 2][0]
    req.loc[j, "dequeue_ms"] = (stopped + started) / 2
    assert any(v.startswith("inert: broker 2 handled") for v in fc.violations(run))


def test_the_campaign_finds_a_paused_broker_that_acts():
    """A paused broker's planted request (handled, then sent) and a planted change of its logs are reported."""
    s = fc.Schedule(
        seed=2, brokers=3, partitions=2, session_ms=1000, faults=(fc.Fault("pause", 800.0, broker=1, for_ms=600.0),)
    )
    run = fc.run_schedule(s)
    assert fc.violations(run) == []
    req = run.results.requests
    j = req.index[req["broker_id"] == 2][0]
    req.loc[j, "dequeue_ms"] = 1000.0
    assert any(v.startswith("inert: broker 2 handled") and "paused" in v for v in fc.violations(run))
    req.loc[j, "dequeue_ms"] = 10.0
    k = req.index[req["client_id"].str.startswith("broker-2-")][0]
    req.loc[k, "sent_ms"] = 1000.0
    assert any(v.startswith("inert: broker 2 sent") and "paused" in v for v in fc.violations(run))
    req.loc[k, "sent_ms"] = 10.0
    key = next(k for k in run.pauses if k[0] == 2)
    tp = next(iter(run.pauses[key]))
    run.pauses[key][tp] = (-1, 0, ())
    assert any("logs changed while it was paused" in v for v in fc.violations(run))


@st.composite
def kraft_schedules(draw):
    brokers = draw(st.integers(3, 4))
    return fc.Schedule(
        seed=draw(st.integers(0, 10_000)),
        brokers=brokers,
        partitions=draw(st.integers(1, 2)),
        min_isr=draw(st.integers(1, 2)),
        acks=tuple(draw(st.lists(st.sampled_from(["1", "all"]), min_size=1, max_size=2))),
        rate_per_s=100.0,
        lag_ms=draw(st.sampled_from([1000, 30000])),
        faults=draw(faults(brokers)),
        until_ms=4000.0,
        mode="kraft",
    )


#: a KRaft run whose active controller stops while a broker restarts: a new Raft leader, the old one back later
KRAFT = fc.Schedule(
    seed=1,
    brokers=3,
    partitions=2,
    min_isr=2,
    acks=("all",),
    rate_per_s=100.0,
    faults=(
        fc.Fault("move_controller", 500.0, for_ms=1200.0),
        fc.Fault("restart", 900.0, broker=1, for_ms=300.0),
        fc.Fault("elect", 3500.0, partition=1, replica=1),
    ),
    until_ms=6000.0,
    mode="kraft",
)


@settings(max_examples=4, deadline=None)
@given(kraft_schedules())
@example(KRAFT)
def test_every_kraft_fault_schedule_keeps_the_properties_and_raft_safety(schedule):
    """KRaft mode under the same faults (the active controller's node stops in place of a controller move): the same
    properties, and Raft's: one leader per epoch, committed entries never lost, logs agreeing on their committed
    prefix."""
    run = fc.run_schedule(schedule)
    assert fc.violations(run) == []


def test_the_raft_checks_find_a_broken_property():
    """The Raft checks can fail: a second leader planted in an epoch, a committed record dropped from a voter's log."""
    run = fc.run_schedule(KRAFT)
    c = run.cluster
    assert fc.raft_violations(c) == []
    h = c.kraft.quorum.history
    h.transitions.append((10.0, 3002, ("Candidate", 1, None), ("Leader", 1, 3002), 0, None))
    assert any("epoch 1 had leaders" in v for v in fc.raft_violations(c))
    h.transitions.pop()
    lg = c.kraft.quorum.nodes[3001].raft.log
    first = lg.batches[0]
    lg.batches[0] = type(first)(first.base_offset, first.epoch + 7, first.records, first.append_ms)
    assert any("below its high watermark" in v for v in fc.raft_violations(c))


@pytest.mark.parametrize("kind", ["restart", "nonsense"])
def test_a_schedule_checks_its_faults(kind):
    if kind == "restart":
        assert fc.Schedule(seed=0, faults=(fc.Fault(kind, 10.0, for_ms=5.0),)).faults[0].kind == "restart"
    else:
        with pytest.raises(ValueError, match="is not one of"):
            fc.Schedule(seed=0, faults=(fc.Fault(kind, 10.0),))

"""KRaft's Raft (kafka_lab/sim/kraft/raft.py) on a quorum of controller nodes alone, against Kafka 4.0's
``KafkaRaftClient``, ``QuorumState``, ``LeaderState`` and ``QuorumConfig`` (docs/kafka-reference.md §8.2, §8.4).

Each test names the mutation of tools/mutate.py it kills.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
import simpy

from kafka_lab.sim.kraft.config import KRaftConfig
from kafka_lab.sim.kraft.quorum import Quorum
from kafka_lab.sim.kraft.raft import MAX_FETCH_WAIT_MS, QuorumConfig
from kafka_lab.sim.network.request import RequestLog, requests_frame


def quorum(n=3, seed=0, **config):
    env = simpy.Environment()
    log = RequestLog()

    def rng(name):
        return np.random.default_rng([seed, zlib.crc32(name.encode())])

    q = Quorum(env, n, request_log=log, rng=rng, kraft_config=KRaftConfig(**config))
    q.start()
    return env, q, log


def at(env, t, fn):
    env.timeout(t - env.now).callbacks.append(lambda _e: fn())


def test_election_timeout_is_uniform_in_one_to_two_election_timeouts():
    """raft-election-timeout-fixed. ``QuorumState.randomElectionTimeoutMs``: ``electionTimeoutMs +
    random.nextInt(electionTimeoutMs)``, drawn for each Unattached, Candidate and Resigned state: [1000, 2000)."""
    _env, q, _log = quorum()
    raft = q.nodes[3001].raft
    draws = np.array([raft._random_election_timeout() for _ in range(2000)])
    assert draws.min() >= 1000 and draws.max() < 2000
    assert (draws < 1500).mean() == pytest.approx(0.5, abs=0.05)
    assert np.all(draws == np.floor(draws))  # whole milliseconds (Random.nextInt)


def test_a_follower_stands_two_seconds_after_its_last_successful_fetch():
    """raft-fetch-timeout. ``FollowerState``'s fetch timeout is not randomised: ``controller.quorum.fetch.timeout.ms``
    (2000) after the last fetch that succeeded, then ``Become candidate due to fetch timeout`` at epoch + 1."""
    env, q, log = quorum()
    env.run(until=3000)
    q.nodes[3000].shut_down()
    env.run(until=7000)
    # the last Fetch each follower had answered before the leader stopped (its raft thread handles the answer
    # raft_io_ms = 0.01 ms after it arrives)
    last_ok = {
        i: max(
            r.end
            for r in log
            if r.api == "Fetch" and r.client_id == f"raft-client-{i}" and r.error == "NONE" and r.end <= 3000
        )
        for i in (3001, 3002)
    }
    ev = q.events_frame()
    timeouts = ev[ev["event"] == "fetch_timeout"].groupby("node_id")["time_ms"].min()
    for i in (3001, 3002):
        assert timeouts[i] == pytest.approx(last_ok[i] + 2000, abs=0.05)
    tr = q.transitions_frame()
    first = tr[(tr["to_state"] == "Candidate")].iloc[0]
    assert first["epoch"] == 2 and first["from_state"] == "Follower"


def test_a_new_leader_is_elected_and_it_already_has_the_log():
    """raft-new-leader-reloads. After the active controller stops, a voter that has every committed record wins
    (``Vote`` is granted only to a log at least as up to date), becomes the active controller with the state it
    had replayed as a standby (no reload: it replays nothing it had not already), and writes on."""
    env, q, _log = quorum()
    env.run(until=3000)
    before = {i: q.nodes[i].controller.image.offset for i in (3001, 3002)}
    committed = q.nodes[3000].raft.log.hw
    q.nodes[3000].shut_down()
    env.run(until=10_000)
    active = q.active()
    assert active is not None and active.id != 3000
    leaders = q.history.leaders()
    assert leaders[1] == {3000} and max(leaders) >= 2
    ev = q.events_frame()
    act = ev[(ev["event"] == "activate") & (ev["node_id"] == active.id)].iloc[0]
    # activated at the start of its epoch, from the state it had: its image had every record committed before
    tr = q.transitions_frame()
    won = tr[(tr["node_id"] == active.id) & (tr["to_state"] == "Leader")].iloc[0]
    # it had every committed record (a Vote goes only to a log at least as up to date), replayed as a standby up to
    # the last commit it had heard of (4.0: a follower learns the high watermark with the next write, §8.4)
    assert won["log_end_offset"] >= committed
    assert committed - 2 <= before[active.id] <= committed - 1
    assert act["detail"]["next_offset"] == won["log_end_offset"] + 1  # after its LeaderChangeMessage
    ml = q.metadata_log()
    new = ml[(ml["epoch"] == act["detail"]["epoch"]) & ml["committed"]]
    assert "NoOpRecord" in set(new["record_type"])
    # the commit after the failover delivered only the new records to the new active controller: no replay from 0
    assert active.controller.image.offset >= active.raft.log.hw - 1  # its own writes are replayed at once


def test_one_vote_per_epoch_and_only_to_a_log_at_least_as_up_to_date():
    """raft-vote-twice, raft-vote-stale-log. ``UnattachedState.canGrantVote``: one vote per epoch (a second candidate
    of the same epoch is refused), and none to a candidate whose (last epoch, end offset) is behind its own."""
    env, q, _log = quorum()
    env.run(until=600)
    raft = q.nodes[3002].raft
    answers = []

    class Req:
        api = "Vote"

        def __init__(self, payload):
            self.payload = payload
            self.result = None

    def vote(cid, epoch, last_epoch, last_offset):
        r = Req(
            {"candidate_id": cid, "candidate_epoch": epoch, "last_offset_epoch": last_epoch, "last_offset": last_offset}
        )
        raft._handle_request(r, answers.append)
        return r.result["vote_granted"]

    end = raft.log.end_offset
    assert vote(3001, 5, 1, end - 1) is False  # behind its own log
    assert vote(3001, 5, 1, end) is True
    assert raft.voted_for == 3001
    assert vote(3000, 5, 1, end + 10) is False  # the same epoch: already voted
    assert vote(3001, 5, 1, end) is True  # the same candidate again
    assert vote(3000, 6, 1, end) is True  # a new epoch, a new vote


def test_commit_needs_a_majority_of_the_voters():
    """raft-commit-without-majority. ``LeaderState.maybeUpdateHighWatermark``: the high watermark is the end offset at
    index ``voters / 2`` of the voters' end offsets in descending order: with one follower of two stopped the
    NoOpRecords still commit, with both stopped none does."""
    env, q, _log = quorum()
    env.run(until=1000)
    q.nodes[3002].shut_down()
    env.run(until=2000)
    ml = q.metadata_log()
    assert ml[(ml["appended_ms"] > 1000) & (ml["appended_ms"] < 2000)]["committed"].all()
    q.nodes[3001].shut_down()
    env.run(until=2900)  # before check-quorum resigns it (3 s after the last majority of fetches)
    ml = q.metadata_log()
    late = ml[ml["appended_ms"] > 2100]
    assert len(late) >= 1 and not late["committed"].any()


def test_the_high_watermark_moves_only_past_the_epochs_start():
    """raft-commit-before-own-epoch. A new leader commits nothing until a majority has its ``LeaderChangeMessage``
    (``highWatermarkUpdateOffset > epochStartOffset``)."""
    env, q, _log = quorum()
    env.run(until=100)
    leader = q.nodes[3000].raft
    st = leader.lead
    st.epoch_start = leader.log.end_offset + 5
    hw = leader.log.hw
    st.voter_end = dict.fromkeys(st.voter_end, leader.log.end_offset + 3)
    leader._maybe_update_hw()
    assert leader.log.hw == hw
    st.voter_end = dict.fromkeys(st.voter_end, leader.log.end_offset + 6)
    leader._maybe_update_hw()
    assert leader.log.hw == leader.log.end_offset + 6


def test_a_leader_without_a_majority_of_fetches_resigns_after_three_seconds():
    """raft-no-check-quorum. ``LeaderState.timeUntilCheckQuorumExpires``: no fetch from a majority of the voters
    within 1.5 × ``fetch.timeout.ms`` = 3000 ms: the leader resigns and sends ``EndQuorumEpoch``."""
    env, q, log = quorum()
    env.run(until=1000)
    q.nodes[3001].shut_down()
    q.nodes[3002].shut_down()
    env.run(until=6000)
    tr = q.transitions_frame()
    resigned = tr[(tr["node_id"] == 3000) & (tr["to_state"] == "Resigned")]
    r = requests_frame(log)
    # the fetches parked when they stopped still count when the next write completes them (updateReplicaState)
    fetched = r[(r["api"] == "Fetch") & (r["broker_id"] == 3000)]["response_complete_ms"].max()
    assert fetched > 1000
    assert len(resigned) == 1 and resigned.iloc[0]["time_ms"] == pytest.approx(fetched + 3000, abs=0.1)
    ev = q.events_frame()
    assert list(ev[ev["event"] == "check_quorum_resign"]["node_id"]) == [3000]


def test_begin_quorum_epoch_is_sent_again_every_second():
    """raft-begin-quorum-epoch-once. ``LeaderState.beginQuorumEpochTimeoutMs`` = ``fetch.timeout.ms / 2``: the leader
    sends ``BeginQuorumEpoch`` to every other voter at once and every 1000 ms."""
    env, _q, log = quorum()
    env.run(until=3500)
    r = requests_frame(log)
    bqe = r[r["api"] == "BeginQuorumEpoch"]
    for v in (3001, 3002):
        assert sorted(round(t) for t in bqe[bqe["broker_id"] == v]["sent_ms"]) == [0, 1000, 2000, 3000]


def test_records_wait_the_append_linger_before_they_are_written():
    """raft-no-linger. ``controller.quorum.append.linger.ms`` (25): a record the controller hands over waits that
    long in the accumulator; the batch's append time is 25 ms after the event generated it."""
    env, q, _log = quorum()
    env.run(until=2000)
    ml = q.metadata_log()
    noops = ml[ml["record_type"] == "NoOpRecord"]
    assert len(noops) >= 3
    assert np.allclose(noops["appended_ms"] - noops["decided_ms"], 25.0)


def test_a_fetch_with_nothing_new_waits_at_most_500_ms_at_the_leader():
    """raft-fetch-wait. ``MAX_FETCH_WAIT_MS`` = 500: on an idle quorum (no NoOpRecords) every follower fetch with
    nothing new is parked and answered 500 ms later."""
    env, _q, log = quorum(metadata_max_idle_interval_ms=0)
    env.run(until=3000)
    r = requests_frame(log)
    f = r[(r["api"] == "Fetch") & (r["error"] == "NONE")]
    assert len(f) >= 8
    assert np.allclose(f["remoteTime"], MAX_FETCH_WAIT_MS, atol=0.1)


def test_the_noop_record_comes_every_max_idle_interval():
    """controller-no-noop. ``metadata.max.idle.interval.ms`` (500): the active controller writes a ``NoOpRecord``
    that often (the next scheduled when one runs)."""
    env, q, _log = quorum()
    env.run(until=3000)
    ml = q.metadata_log()
    d = np.diff(ml[ml["record_type"] == "NoOpRecord"]["decided_ms"].to_numpy())
    assert len(d) >= 4 and np.allclose(d, 500.0)


def test_a_lone_leader_and_its_uncommitted_writes_are_truncated_never_committed():
    """raft-keep-uncommitted. The leader cut off from both followers keeps writing NoOpRecords it cannot commit; the
    followers elect a new leader; when the old one is back it fetches from it, learns of the new epoch, and its
    uncommitted records are truncated (``truncateToEndOffset``), never committed. The logs agree on the committed
    prefix."""
    env, q, _log = quorum()
    env.run(until=1000)
    for i in (3001, 3002):
        q.nodes[i].shut_down()
    env.run(until=2200)
    lost = [
        (b.base_offset, b.epoch) for b in q.nodes[3000].raft.log.batches if b.next_offset > q.nodes[3000].raft.log.hw
    ]
    assert lost
    q.nodes[3000].shut_down()
    for i in (3001, 3002):
        q.nodes[i].start_up()
    env.run(until=6000)
    q.nodes[3000].start_up()
    env.run(until=12_000)
    ml = q.metadata_log()
    committed = {(o, e) for o, e, c in zip(ml["offset"], ml["epoch"], ml["committed"], strict=True) if c}
    assert not [b for b in lost if b in committed]
    logs = {i: q.nodes[i].raft.log for i in q.ids}
    hw = min(lg.hw for lg in logs.values())
    assert hw > 0
    prefixes = {i: lg.entries(hw) for i, lg in logs.items()}
    assert prefixes[3000] == prefixes[3001] == prefixes[3002]
    ev = q.events_frame()
    assert ((ev["event"] == "truncated") & (ev["node_id"] == 3000)).any()


def test_quorum_config_refuses_what_kafka_refuses():
    with pytest.raises(ValueError, match=r"election\.timeout\.ms"):
        QuorumConfig(election_timeout_ms=0)
    with pytest.raises(ValueError, match="linger"):
        QuorumConfig(append_linger_ms=-1)
    assert math.isclose(QuorumConfig().check_quorum_timeout_ms, 3000)

"""The replica log and its leader-epoch cache against Kafka 2.8's Log / LeaderEpochFileCache rules.

Truth: ``LeaderEpochFileCache.endOffsetFor`` (the largest epoch <= the one asked for, ending where the
next begins, or at the LEO if it is the latest; UNDEFINED before the first), ``truncateFromEnd``
(entries starting at or after the new end go) and ``Log.truncateTo`` (a target at or past the LEO still
truncates the epoch cache: docs/kafka-reference.md, "Becoming follower and truncation").
Read from LeaderEpochFileCache.scala and Log.scala, branch 2.8.
"""

from __future__ import annotations

import gc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_lab.sim.server.log import (
    BASE_OFFSET,
    BATCH_ID,
    LEADER_EPOCH,
    RECORDS,
    UNDEFINED_EPOCH,
    UNDEFINED_OFFSET,
    Log,
    batch,
    next_offset,
)


def log_with(*batches) -> Log:
    """A leader's log from (records, epoch) pairs."""
    log = Log()
    for records, epoch in batches:
        log.append_as_leader(records, epoch)
    return log


def test_a_leader_assigns_offsets_from_its_log_end_and_stamps_its_epoch():
    log = Log()
    a = log.append_as_leader(5, 0, batch_id=7)
    b = log.append_as_leader(3, 2, batch_id=8)
    assert (a[BASE_OFFSET], a[RECORDS], a[LEADER_EPOCH], a[BATCH_ID]) == (0, 5, 0, 7)
    assert a == batch(0, 5, 0, batch_id=7) and type(a) is tuple  # exact: the cyclic collector stops tracking it
    assert (b[BASE_OFFSET], next_offset(b)) == (5, 8) and log.leo == 8
    assert log.epochs == [(0, 0), (2, 5)]  # one entry per epoch that appended, at its first offset
    with pytest.raises(ValueError, match="at least one record"):
        log.append_as_leader(0, 2)


def test_a_logs_batches_leave_the_cyclic_garbage_collector_after_its_first_pass():
    # a run's logs hold most of what it allocates; a tuple subclass (NamedTuple) stays tracked for life, and made
    # lab 03's live panel pay up to a second for a full collection every few answers
    log = log_with((5, 0), (3, 1))
    gc.collect()
    assert not any(gc.is_tracked(b) for b in log.batches)


@pytest.mark.parametrize(
    "asked, expected",
    [
        (0, (0, 10)),  # epoch 0 ends where epoch 1 starts
        (1, (1, 13)),
        (2, (1, 13)),  # unknown epoch 2: the largest epoch below it, and where that one ends
        (3, (3, 15)),  # the latest epoch ends at the log end offset
        (9, (-1, -1)),  # newer than any known epoch: UNDEFINED ("should never be hit")
        (-1, (-1, -1)),  # an undefined epoch asked
    ],
)
def test_end_offset_for_epoch_is_leader_epoch_file_cache_end_offset_for(asked, expected):
    log = log_with((5, 0), (5, 0), (3, 1), (2, 3))
    assert log.epochs == [(0, 0), (1, 10), (3, 13)]
    assert log.end_offset_for_epoch(asked) == expected


def test_an_epoch_older_than_every_entry_ends_where_the_first_known_epoch_starts():
    log = Log()
    log.assign_epoch(2, 0)
    log.append_as_leader(3, 2)
    log.append_as_leader(2, 5)
    assert log.epochs == [(2, 0), (5, 3)]
    assert log.end_offset_for_epoch(1) == (1, 0)  # the asked epoch, and the first known epoch's start
    assert Log().end_offset_for_epoch(0) == (UNDEFINED_EPOCH, UNDEFINED_OFFSET)


def test_truncation_removes_whole_batches_and_the_epochs_that_start_after_the_new_end():
    log = log_with((5, 0), (5, 0), (3, 1), (2, 3))
    removed = log.truncate_to(12)  # inside the epoch-1 batch 10..12: it goes whole
    assert [b[BASE_OFFSET] for b in removed] == [10, 13]
    assert log.leo == 10 and log.epochs == [(0, 0)]
    assert log.truncate_to(10) == [] and log.leo == 10


def test_truncating_at_the_log_end_still_drops_an_epoch_that_appended_nothing():
    # a leader assigned epoch 1 at its LEO, then lost leadership before appending: the follower must
    # forget that entry, or every fetch asks the new leader about an epoch it never saw (Log.truncateTo)
    log = log_with((5, 0))
    log.assign_epoch(1, 5)
    assert log.latest_epoch == 1
    assert log.truncate_to(5) == []
    assert log.epochs == [(0, 0)] and log.latest_epoch == 0


def test_a_follower_appends_the_leaders_batches_as_they_are():
    leader = log_with((5, 0), (2, 4))
    follower = Log()
    for b in leader.read(0):
        follower.append_as_follower(b)
    assert follower.batches == leader.batches and follower.epochs == leader.epochs
    with pytest.raises(ValueError, match="out of order"):
        follower.append_as_follower(batch(99, 1, 4))


def test_read_returns_the_batches_from_an_offset_on():
    log = log_with((5, 0), (5, 0), (3, 1))
    assert [b[BASE_OFFSET] for b in log.read(0)] == [0, 5, 10]
    assert [b[BASE_OFFSET] for b in log.read(7)] == [5, 10]  # the batch holding offset 7 first
    assert [b[BASE_OFFSET] for b in log.read(13)] == []
    assert [b[BASE_OFFSET] for b in log.read(0, max_batches=2)] == [0, 5]


@given(st.lists(st.tuples(st.sampled_from(["append", "truncate"]), st.integers(1, 5), st.integers(0, 3)), max_size=40))
def test_the_log_stays_contiguous_and_its_epoch_cache_consistent(ops):
    log = Log()
    epoch = 0
    for op, n, bump in ops:
        if op == "append":
            epoch += bump
            log.append_as_leader(n, epoch)
        else:
            log.truncate_to(max(0, log.leo - n * 2))
            epoch = max(epoch, log.latest_epoch)
        # offsets contiguous from 0; LEO = records held; epochs increase in both fields
        offsets = [b[BASE_OFFSET] for b in log.batches]
        assert offsets == sorted(offsets)
        assert all(next_offset(a) == b[BASE_OFFSET] for a, b in zip(log.batches, log.batches[1:]))
        assert log.leo == sum(b[RECORDS] for b in log.batches)
        assert all(e1 < e2 and s1 < s2 for (e1, s1), (e2, s2) in zip(log.epochs, log.epochs[1:]))
        # every batch's epoch is known and starts at or before it
        for b in log.batches:
            e, _end = log.end_offset_for_epoch(b[LEADER_EPOCH])
            assert e == b[LEADER_EPOCH]

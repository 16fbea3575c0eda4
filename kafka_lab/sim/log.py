"""A replica's log: record batches and the leader-epoch cache, as ``kafka.log.Log`` keeps them.

A log is a sequence of *record batches*. Each batch has a base offset, a record count, the leader
epoch of the leader that first appended it (``partitionLeaderEpoch``), and the producer id and
sequence the producer wrote (-1 when the producer is not idempotent, 2.8's default). The model adds
one field Kafka does not have, ``batch_id``: the producer's own tag for the batch, so that a run can
say where every record it produced ended up (the ledger).

Offsets are Kafka's: the first record of the log has offset 0, the *log end offset* (LEO) is the
offset the next record will get.

The **leader-epoch cache** (``LeaderEpochFileCache``, KIP-101) is a list of ``(epoch, start offset)``
entries, one for every leader epoch that appended something to this log (or, on a leader, the epoch
it became leader in, assigned at its LEO). It answers the one question follower truncation needs:
*where does epoch e end?* :meth:`Log.end_offset_for_epoch` gives ``(largest epoch <= e, the start
offset of the next epoch, or the LEO if it is the latest)``, as ``LeaderEpochFileCache.endOffsetFor``
does; ``(-1, -1)`` (UNDEFINED) when e is older than every epoch the log knows.

Truncation (:meth:`Log.truncate_to`) removes every batch at or above an offset and the cache entries
that start there, and returns the removed batches: that is what the ledger counts as *truncated*.
A batch is never split (Kafka truncates at batch boundaries too, for the offsets followers compute).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple

__all__ = ["Batch", "Log", "UNDEFINED_EPOCH", "UNDEFINED_OFFSET"]

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1


class Batch(NamedTuple):
    """One record batch as it sits in a log."""

    base_offset: int
    records: int
    leader_epoch: int
    producer_id: int = -1
    sequence: int = -1
    batch_id: int = -1  # the model's tag (not in Kafka's format): which produced batch this is

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.records - 1

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.records


class Log:
    """The batches of one replica, its log end offset and its leader-epoch cache."""

    __slots__ = ("batches", "_bases", "epochs", "leo")

    def __init__(self):
        self.batches: list[Batch] = []
        self._bases: list[int] = []  # base offsets, for bisection
        self.epochs: list[tuple[int, int]] = []  # (epoch, start offset), increasing in both
        self.leo = 0

    def __len__(self) -> int:
        return len(self.batches)

    # -- the leader-epoch cache -----------------------------------------------------------------
    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else UNDEFINED_EPOCH

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """``LeaderEpochFileCache.assign``: record that ``epoch`` starts at ``start_offset``.

        An epoch older than the latest is ignored (Kafka logs a warning); the same epoch again keeps
        its first start offset; entries starting at or after ``start_offset`` with a lower epoch are
        removed (they were never written, e.g. a leader that appended nothing).
        """
        if self.epochs:
            last_epoch = self.epochs[-1][0]
            if epoch < last_epoch:
                return
            if epoch == last_epoch:
                return
            while self.epochs and self.epochs[-1][1] >= start_offset:
                self.epochs.pop()
        self.epochs.append((epoch, start_offset))

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """``LeaderEpochFileCache.endOffsetFor``, case by case as in 2.8.

        - ``epoch`` undefined (-1), or newer than the latest known: ``(-1, -1)``;
        - the latest epoch: ``(epoch, LEO)``;
        - older than every known epoch: ``(epoch, start offset of the first known epoch)``;
        - otherwise: ``(largest known epoch <= epoch, start offset of the next known epoch)``.
        """
        if epoch == UNDEFINED_EPOCH or not self.epochs:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if epoch == self.epochs[-1][0]:
            return epoch, self.leo
        i = bisect_right(self.epochs, (epoch, float("inf")))  # the first entry with a larger epoch
        if i == len(self.epochs):
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if i == 0:
            return epoch, self.epochs[0][1]
        return self.epochs[i - 1][0], self.epochs[i][1]

    # -- appends ------------------------------------------------------------------------------------
    def append_as_leader(
        self, records: int, leader_epoch: int, *, producer_id: int = -1, sequence: int = -1, batch_id: int = -1
    ) -> Batch:
        """The leader assigns offsets from its LEO and stamps its epoch (``Log.appendAsLeader``)."""
        if records < 1:
            raise ValueError(f"a batch holds at least one record, got {records}")
        b = Batch(self.leo, records, leader_epoch, producer_id, sequence, batch_id)
        self._append(b)
        return b

    def append_as_follower(self, batch: Batch) -> None:
        """A follower appends the leader's batch as it is, offsets and epoch included."""
        if batch.base_offset != self.leo:
            raise ValueError(f"out of order append: batch at {batch.base_offset}, log end offset {self.leo}")
        self._append(batch)

    def _append(self, b: Batch) -> None:
        if not self.epochs or b.leader_epoch > self.epochs[-1][0]:
            self.assign_epoch(b.leader_epoch, b.base_offset)
        self.batches.append(b)
        self._bases.append(b.base_offset)
        self.leo = b.next_offset

    # -- reads and truncation -----------------------------------------------------------------------
    def read(self, offset: int, max_batches: int = 64, max_offset: int | None = None) -> list[Batch]:
        """The batches from ``offset`` on (at most ``max_batches``; below ``max_offset`` if given)."""
        i = bisect_right(self._bases, offset) - 1
        if i < 0:
            i = 0
        out = []
        for b in self.batches[i : i + max_batches + 1]:
            if b.next_offset <= offset:
                continue
            if max_offset is not None and b.next_offset > max_offset:
                break
            out.append(b)
            if len(out) == max_batches:
                break
        return out

    def truncate_to(self, offset: int) -> list[Batch]:
        """Remove every batch that ends after ``offset`` (cut at a batch boundary); return them."""
        if offset >= self.leo:
            # Log.truncateTo: "Always truncate epoch cache since we may have a conflicting epoch entry at
            # the end of the log from the leader" (a leader that assigned its epoch, then appended nothing)
            while self.epochs and self.epochs[-1][1] >= self.leo:
                self.epochs.pop()
            return []
        # the first batch that ends after ``offset``: it and everything after it go (a batch that
        # straddles ``offset`` goes whole, as LogSegment.truncateTo cuts at a batch's position)
        i = bisect_right(self._bases, max(offset, 0)) - 1
        if i < 0 or self.batches[i].next_offset > offset:
            i = max(i, 0)
        else:
            i += 1
        removed = self.batches[i:]
        del self.batches[i:]
        del self._bases[i:]
        self.leo = self.batches[-1].next_offset if self.batches else 0
        # LeaderEpochFileCache.truncateFromEnd: entries starting at or after the new end go
        while self.epochs and self.epochs[-1][1] >= self.leo:
            self.epochs.pop()
        return removed

    def batch_ids(self) -> list[int]:
        return [b.batch_id for b in self.batches]

"""A replica's log: record batches and the leader-epoch cache, as ``kafka.log.Log`` keeps them.

A log is a sequence of *record batches*. Each batch has a base offset, a record count, the leader
epoch of the leader that first appended it (``partitionLeaderEpoch``), and the producer id, producer
epoch and base sequence the producer wrote (-1 when the producer is not idempotent, 2.8's default). The
model adds one field Kafka does not have, ``batch_id``: the producer's own tag for the batch, so that a
run can say where every record it produced ended up (the ledger).

A log also keeps what it knows of each idempotent producer (:mod:`.producer_state`, Kafka's
``ProducerStateManager``): every append of a batch with a producer id updates it, as leader or follower,
and a truncation rebuilds it from the batches that remain. A log no idempotent producer wrote to keeps none.

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

from .producer_state import ProducerStateManager

__all__ = [
    "BASE_OFFSET",
    "BATCH_ID",
    "LEADER_EPOCH",
    "Log",
    "PRODUCER_EPOCH",
    "PRODUCER_ID",
    "RECORDS",
    "SEQUENCE",
    "UNDEFINED_EPOCH",
    "UNDEFINED_OFFSET",
    "batch",
    "next_offset",
]

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1


#: A record batch as a log keeps it: the plain tuple ``(base_offset, records, leader_epoch, producer_id, sequence,
#: batch_id, producer_epoch)``; these are its fields' positions (``b[BASE_OFFSET]``). A plain tuple, not a NamedTuple, because
#: CPython's cyclic garbage collector stops tracking an exact tuple of numbers at its first collection, and tracks
#: an instance of any tuple subclass for as long as it lives: a run's logs hold most of the objects the run
#: allocates (lab 03's live panel: 93,000 of the 103,000 a 600 ms run at 12,000 produce/s leaves), and tracked
#: they made every collection walk them again.
BASE_OFFSET, RECORDS, LEADER_EPOCH, PRODUCER_ID, SEQUENCE, BATCH_ID, PRODUCER_EPOCH = range(7)


def batch(
    base_offset: int,
    records: int,
    leader_epoch: int,
    producer_id: int = -1,
    sequence: int = -1,
    batch_id: int = -1,
    producer_epoch: int = -1,
) -> tuple:
    """One record batch (see :data:`BASE_OFFSET`); ``batch_id`` is the model's tag, not in Kafka's format: which
    produced batch this is."""
    return (base_offset, records, leader_epoch, producer_id, sequence, batch_id, producer_epoch)


def next_offset(b: tuple) -> int:
    """The offset after the batch's last record."""
    return b[BASE_OFFSET] + b[RECORDS]


class Log:
    """The batches of one replica, its log end offset and its leader-epoch cache."""

    __slots__ = ("batches", "_bases", "epochs", "leo", "producers")

    def __init__(self):
        self.batches: list[tuple] = []  # batches (see BASE_OFFSET), in offset order
        self._bases: list[int] = []  # base offsets, for bisection
        self.epochs: list[tuple[int, int]] = []  # (epoch, start offset), increasing in both
        self.leo = 0
        #: what it knows of idempotent producers (None until a batch with a producer id is appended)
        self.producers: ProducerStateManager | None = None

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
        self,
        records: int,
        leader_epoch: int,
        *,
        producer_id: int = -1,
        sequence: int = -1,
        batch_id: int = -1,
        producer_epoch: int = -1,
    ) -> tuple:
        """The leader assigns offsets from its LEO and stamps its epoch (``Log.appendAsLeader``); a batch with a
        producer id updates the producer state (checked before, :meth:`check_producer`)."""
        if records < 1:
            raise ValueError(f"a batch holds at least one record, got {records}")
        base = self.leo
        b = (base, records, leader_epoch, producer_id, sequence, batch_id, producer_epoch)
        # _append, written out: a Produce to 20 partitions makes 20 of these
        if not self.epochs or leader_epoch > self.epochs[-1][0]:
            self.assign_epoch(leader_epoch, base)
        self.batches.append(b)
        self._bases.append(base)
        self.leo = base + records
        if producer_id >= 0:
            self._update_producer(b)
        return b

    def check_producer(self, producer_id: int, producer_epoch: int, sequence: int, records: int):
        """A client's batch checked against the producer state before a leader appends it: ``(error, duplicate)``
        (:meth:`.producer_state.ProducerStateManager.check`)."""
        if self.producers is None:
            return "NONE", None
        return self.producers.check(producer_id, producer_epoch, sequence, records)

    def _update_producer(self, b: tuple) -> None:
        if self.producers is None:
            self.producers = ProducerStateManager()
        self.producers.update(b[PRODUCER_ID], b[PRODUCER_EPOCH], b[SEQUENCE], b[RECORDS], b[BASE_OFFSET])

    def append_as_follower(self, b: tuple) -> None:
        """A follower appends the leader's batch as it is, offsets and epoch included."""
        base = b[BASE_OFFSET]
        if base != self.leo:
            raise ValueError(f"out of order append: batch at {base}, log end offset {self.leo}")
        self._append(b)

    def _append(self, b: tuple) -> None:
        base, epoch = b[BASE_OFFSET], b[LEADER_EPOCH]
        if not self.epochs or epoch > self.epochs[-1][0]:
            self.assign_epoch(epoch, base)
        self.batches.append(b)
        self._bases.append(base)
        self.leo = base + b[RECORDS]
        if b[PRODUCER_ID] >= 0:  # a follower's producer state follows what it replicates (origin Replication)
            self._update_producer(b)

    # -- reads and truncation -----------------------------------------------------------------------
    def read(self, offset: int, max_batches: int = 64, max_offset: int | None = None) -> list[tuple]:
        """The batches from ``offset`` on (at most ``max_batches``; below ``max_offset`` if given)."""
        i = bisect_right(self._bases, offset) - 1
        if i < 0:
            i = 0
        out = []
        for b in self.batches[i : i + max_batches + 1]:
            end = b[BASE_OFFSET] + b[RECORDS]
            if end <= offset:
                continue
            if max_offset is not None and end > max_offset:
                break
            out.append(b)
            if len(out) == max_batches:
                break
        return out

    def truncate_to(self, offset: int) -> list[tuple]:
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
        if i < 0 or next_offset(self.batches[i]) > offset:
            i = max(i, 0)
        else:
            i += 1
        removed = self.batches[i:]
        del self.batches[i:]
        del self._bases[i:]
        self.leo = next_offset(self.batches[-1]) if self.batches else 0
        # LeaderEpochFileCache.truncateFromEnd: entries starting at or after the new end go
        while self.epochs and self.epochs[-1][1] >= self.leo:
            self.epochs.pop()
        if self.producers is not None:  # loadProducerState: the producer state of the log that remains
            self.producers = None
            for b in self.batches:
                if b[PRODUCER_ID] >= 0:
                    self._update_producer(b)
        return removed

    def batch_ids(self) -> list[int]:
        return [b[BATCH_ID] for b in self.batches]

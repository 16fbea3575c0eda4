"""What a log knows of each idempotent producer: ``ProducerStateManager`` (Kafka 2.8).

An idempotent producer (``enable.idempotence=true``, :mod:`kafka_lab.sim.clients.producer`) stamps every batch
with its **producer id**, its **producer epoch** and a **base sequence**: per partition, the sequence of the
batch's first record, counted from 0 and advanced by the batch's record count. Every replica's log keeps, per
producer id, the epoch it last saw and the metadata of its **last 5 batches** (``ProducerStateEntry``,
``NumBatchesToRetain = 5``): first and last sequence, first and last offset. Appending a batch updates it, as
leader and as follower alike, so a follower that becomes leader knows the sequences of everything it
replicated.

A leader checks a producer's batch before appending it (``Log.analyzeAndValidateProducerState``, then
``ProducerAppendInfo`` for an append whose origin is a client), in this order:

1. **a duplicate**: same epoch as the entry, and a cached batch with exactly this first and last sequence
   (``findDuplicateBatch``): nothing is appended, and the produce is answered ``NONE`` with the *original*
   batch's offsets (``Log.append``: ``appendInfo.firstOffset = duplicate.firstOffset``); with ``acks=all`` it
   waits, like any append, until the high watermark passes the original's last offset;
2. **an older epoch** than the entry's: ``INVALID_PRODUCER_EPOCH`` ("Epoch of producer ... is smaller than the
   last seen epoch", ``checkProducerEpoch``);
3. **a newer epoch**: its first sequence must be 0, else ``OUT_OF_ORDER_SEQUENCE_NUMBER`` ("Invalid sequence
   number for new epoch"); the entry's cached batches are dropped when the new epoch's batch is added
   (``maybeUpdateProducerEpoch``);
4. **the same epoch**: the first sequence must follow the entry's last one (``inSequence``: ``last + 1``),
   else ``OUT_OF_ORDER_SEQUENCE_NUMBER`` ("Out of order sequence number"): a gap, or a retry of a batch older
   than the 5 cached;
5. **a producer id the log does not know** (none of its batches in the log): any sequence is accepted
   (``currentEntry.producerEpoch == NO_PRODUCER_EPOCH``). Since KIP-360 (2.5) a 2.8 broker never answers
   ``UNKNOWN_PRODUCER_ID``: nothing in 2.8's ``core`` raises it.

2.8's broker never sends ``DUPLICATE_SEQUENCE_NUMBER`` either (no use of it in ``core``): a duplicate it has
cached is answered ``NONE``, one it has not is out of order. Followers do not check: a replicated batch
updates the state as it is (origin ``Replication``).

**Truncation** (``Log.truncateTo`` → ``loadProducerState``) rebuilds the state from the log that remains: the
model replays the remaining batches, which is what Kafka's reload amounts to when it replays the log from its
start. Simplification: Kafka starts from the latest producer snapshot at or below the truncation point
(written at segment rolls and truncations), and a snapshot keeps only each producer's *last* batch, so after
a reload Kafka may cache fewer than 5 batches of a producer; the model keeps the last 5 the log holds.
Sequences do not wrap in the model (Kafka's wrap at ``Integer.MAX_VALUE``; no run comes near).
Producer ids expire after ``transactional.id.expiration.ms`` (7 days) in Kafka; a run never lasts that long.
"""

from __future__ import annotations

from collections import deque

__all__ = ["NUM_BATCHES_TO_RETAIN", "NO_PRODUCER_EPOCH", "NO_SEQUENCE", "ProducerStateManager"]

#: ``ProducerStateEntry.NumBatchesToRetain``
NUM_BATCHES_TO_RETAIN = 5
#: ``RecordBatch.NO_PRODUCER_ID``, ``NO_PRODUCER_EPOCH``, ``NO_SEQUENCE``
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1


class _Entry:
    """``ProducerStateEntry``: the epoch, and ``(first_seq, last_seq, first_offset, last_offset)`` of the last batches."""

    __slots__ = ("epoch", "batches")

    def __init__(self):
        self.epoch = NO_PRODUCER_EPOCH
        self.batches: deque = deque(maxlen=NUM_BATCHES_TO_RETAIN)

    @property
    def last_seq(self) -> int:
        return self.batches[-1][1] if self.batches else NO_SEQUENCE


class ProducerStateManager:
    """Per producer id, what one log knows (see the module docstring)."""

    __slots__ = ("producers",)

    def __init__(self):
        self.producers: dict = {}  # producer id -> _Entry

    def __len__(self) -> int:
        return len(self.producers)

    def check(self, producer_id: int, epoch: int, first_seq: int, records: int):
        """A client's batch, before the leader appends it: ``(error, duplicate)``.

        ``duplicate`` is ``(first_offset, last_offset)`` of the batch already in the log (error ``NONE``: answer
        with those offsets, append nothing); else ``error`` is ``NONE`` (append) or the partition's error."""
        entry = self.producers.get(producer_id)
        if entry is None:  # unknown to this log: any sequence (2.8, since KIP-360)
            return "NONE", None
        last_seq = first_seq + records - 1
        if epoch == entry.epoch:
            for f_seq, l_seq, f_off, l_off in entry.batches:  # findDuplicateBatch
                if f_seq == first_seq and l_seq == last_seq:
                    return "NONE", (f_off, l_off)
        if epoch < entry.epoch:  # checkProducerEpoch
            return "INVALID_PRODUCER_EPOCH", None
        if epoch != entry.epoch:  # checkSequence, a new epoch
            return ("NONE" if first_seq == 0 else "OUT_OF_ORDER_SEQUENCE_NUMBER"), None
        if first_seq != entry.last_seq + 1:  # checkSequence: inSequence(currentLastSeq, appendFirstSeq)
            return "OUT_OF_ORDER_SEQUENCE_NUMBER", None
        return "NONE", None

    def update(self, producer_id: int, epoch: int, first_seq: int, records: int, base_offset: int) -> None:
        """A batch appended (as leader or follower): ``ProducerStateEntry.addBatch``."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = _Entry()
        if entry.epoch != epoch:  # maybeUpdateProducerEpoch: a new epoch forgets the old one's batches
            entry.batches.clear()
            entry.epoch = epoch
        entry.batches.append((first_seq, first_seq + records - 1, base_offset, base_offset + records - 1))

    def last_sequence(self, producer_id: int) -> int:
        """The last sequence the log holds of ``producer_id`` (``NO_SEQUENCE`` when none)."""
        entry = self.producers.get(producer_id)
        return entry.last_seq if entry is not None else NO_SEQUENCE

    def epoch(self, producer_id: int) -> int:
        entry = self.producers.get(producer_id)
        return entry.epoch if entry is not None else NO_PRODUCER_EPOCH

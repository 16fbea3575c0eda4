"""The idempotent producer (``enable.idempotence``, issue 31 item 12): Kafka 2.8's rules, one test each.

Each test names the 2.8 method its rule comes from (docs/kafka-reference.md §5, "The idempotent producer") and
asserts what Kafka does, worked out by hand from that source: the client's config checks (``ProducerConfig``, ``KafkaProducer``), its
sequences (``TransactionManager``, ``RecordAccumulator``, ``Sender``), the broker's producer state
(``ProducerStateManager``, ``Log.analyzeAndValidateProducerState``) and its producer ids (``ProducerIdManager``).
The docstring names the mutation (``kafka_lab/sim/*/mutations.toml``) the test kills.
"""

from __future__ import annotations

import pytest
import simpy

from kafka_lab.sim import Cluster, purgatory_incident
from kafka_lab.sim.server.broker import PID_BLOCK_SIZE
from kafka_lab.sim.server.log import PRODUCER_EPOCH, PRODUCER_ID, SEQUENCE, Log
from kafka_lab.sim.server.replica_manager import ReplicaManager

TP = ("t", 0)


def one_partition_cluster(**producer):
    c = Cluster(3, seed=0)
    c.create_topic("t", 1, 3)
    return c, c.producer("p", topic="t", **producer)


# -- the client's configuration (ProducerConfig.maybeOverrideAcksAndRetries, KafkaProducer.configure*) ---------


@pytest.mark.parametrize("acks", [1, 0, "1", "0"])
def test_idempotence_refuses_acks_other_than_all_with_kafkas_message(acks):
    """idempotence-acks-all. ProducerConfig.maybeOverrideAcksAndRetries: an acks the user set that is not -1."""
    c = Cluster(3, seed=0)
    c.create_topic("t", 1, 3)
    with pytest.raises(ValueError) as e:
        c.producer("p", topic="t", acks=acks, enable_idempotence=True)
    assert str(e.value) == (
        "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."
    )
    for ok in ("all", "-1", -1):
        assert c.producer(topic="t", acks=ok, enable_idempotence=True).acks == -1


def test_idempotence_makes_acks_all_when_acks_is_not_set():
    """idempotence-default-acks. "Overriding the default acks to all since idempotence is enabled"; without
    idempotence 2.8's default stays acks=1."""
    _c, p = one_partition_cluster(enable_idempotence=True)
    _c2, q = one_partition_cluster()
    assert p.acks == -1 and q.acks == 1 and q.idempotent is False


def test_idempotence_refuses_retries_0_first_and_more_than_5_requests_in_flight():
    """idempotence-retries, idempotence-max-in-flight. ProducerConfig checks retries before acks; KafkaProducer's
    configureInflightRequests allows at most 5."""
    c = Cluster(3, seed=0)
    c.create_topic("t", 1, 3)
    with pytest.raises(ValueError, match=r"^Must set retries to non-zero when using the idempotent producer\.$"):
        c.producer(topic="t", acks=1, retries=0, enable_idempotence=True)  # both wrong: retries is checked first
    with pytest.raises(ValueError) as e:
        c.producer(topic="t", max_in_flight_requests_per_connection=6, enable_idempotence=True)
    assert str(e.value) == "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."
    assert c.producer(topic="t", max_in_flight_requests_per_connection=5, enable_idempotence=True).idempotent
    # without idempotence none of these is refused
    c.producer(topic="t", acks=1, retries=0, max_in_flight_requests_per_connection=6)


def test_enable_idempotence_is_a_boolean_setting():
    """ConfigDef.parseType(BOOLEAN): a Boolean, or "true"/"false" trimmed in any case."""
    c = Cluster(3, seed=0)
    c.create_topic("t", 1, 3)
    assert c.producer(topic="t", enable_idempotence=" TRUE ").idempotent
    assert not c.producer(topic="t", enable_idempotence="false").idempotent
    with pytest.raises(ValueError, match=r"Invalid value yes for configuration enable\.idempotence: Expected value"):
        c.producer(topic="t", enable_idempotence="yes")
    with pytest.raises(TypeError, match="enable_idempotence is a bool"):
        c.producer(topic="t", enable_idempotence=1)


# -- producer ids (TransactionCoordinator.handleInitProducerId, ProducerIdManager) -----------------------------


def test_an_idempotent_producer_asks_for_its_id_before_its_first_produce():
    """producer-sends-before-its-id. Sender.runOnce sends InitProducerId first (to the least loaded broker:
    broker 1, the bootstrap broker); RecordAccumulator.shouldStopDrainBatchesForPartition drains nothing "until
    we have refreshed the producer id". The broker answers the first id of its block, epoch 0."""
    c, p = one_partition_cluster(enable_idempotence=True)
    p.burst(3)
    c.run(50)
    mine = [q for q in c.log if q.client_id == "p"]
    init = [q for q in mine if q.api == "InitProducerId"]
    assert len(init) == 1 and mine[0] is init[0] and init[0].connection.broker_id == 1
    produce = [q for q in mine if q.api == "Produce"]
    assert produce and all(q.sent >= init[0].end for q in produce)
    assert (p.producer_id, p.producer_epoch) == (0, 0)  # broker 1 took block 0 at start-up: ids 0 .. 999
    # the next producer to ask broker 1 gets the next id of its block
    q = c.producer("q", topic="t", enable_idempotence=True)
    c.run(100)
    assert q.producer_id == 1


def test_each_broker_takes_a_block_of_1000_producer_ids_at_start_up_and_another_when_it_runs_out():
    """producer-id-block. ProducerIdManager (ZooKeeper's /latest_producer_id_block): PidBlockSize = 1000, blocks
    in the order the brokers ask; generateProducerId takes the next block after the current one's end."""
    c = Cluster(3, seed=0)
    assert PID_BLOCK_SIZE == 1000
    assert [c.brokers[b].generate_producer_id() for b in (1, 2, 3)] == [0, 1000, 2000]
    b1 = c.brokers[1]
    ids = [b1.generate_producer_id() for _ in range(999)]
    assert ids[-1] == 999 and b1.generate_producer_id() == 3000  # block 3: the fourth handed out


def test_an_init_producer_id_that_fails_is_sent_again_after_retry_backoff():
    """init-pid-no-backoff, init-pid-timeout-lost. TxnRequestHandler: a request that could not be sent (the broker
    refuses the connection) or was disconnected (NetworkClient.handleTimedOutRequests closes the connection after
    request.timeout.ms) is retried after retry.backoff.ms (100); the producer gets its id all the same."""
    c = Cluster(3, seed=0)
    c.create_topic("t", 1, 3)
    c.brokers[1].shut_down()  # the bootstrap broker refuses the connection
    p = c.producer("p", topic="t", enable_idempotence=True)
    p.burst(1)
    c.run(400)
    init = [q for q in c.log if q.client_id == "p" and q.api == "InitProducerId"]
    assert init[0].sent >= 100 and init[0].connection.broker_id != 1
    assert p.producer_id == PID_BLOCK_SIZE * (init[0].connection.broker_id - 1)  # broker 2's or 3's block
    # request.timeout.ms=5 with 200 producers asking broker 1 at once: some InitProducerIds time out, are sent
    # again, and every producer ends up with an id (and produces)
    res = purgatory_incident(
        control_plane=False, producers=200, until_ms=150, request_timeout_ms=5, enable_idempotence=True
    )
    sends = {}
    for q in res.cluster.log:
        if q.api == "InitProducerId":
            sends.setdefault(q.client_id, []).append(q)
    again = [qs for qs in sends.values() if len(qs) > 1]
    assert again and all(qs[1].sent - qs[0].sent >= 5 + 100 for qs in again)
    assert all(p.producer_id >= 0 for p in res.cluster.clients)
    assert set(res.ledger.loc[res.ledger["attempts"] > 0, "client_id"]) == set(sends)


# -- sequences (RecordAccumulator.drain, TransactionManager) ---------------------------------------------------


def test_each_partition_numbers_its_batches_from_0_by_record_count():
    """sequence-per-record. setProducerState(sequenceNumber(tp)) then incrementSequenceNumber(tp, recordCount):
    per partition, a batch's base sequence is the number of records sent to that partition before it."""
    c = Cluster(3, seed=0)
    c.create_topic("t", 2, 3)
    p = c.producer("p", topic="t", partitions=[0, 1], records_per_batch=7, enable_idempotence=True)
    p.burst(3)
    c.run(100)
    for part in (0, 1):
        log = c.brokers[c.leader_of(("t", part))].replica_manager.partitions[("t", part)].log
        assert [(b[PRODUCER_ID], b[PRODUCER_EPOCH], b[SEQUENCE]) for b in log.batches] == [
            (0, 0, 0),
            (0, 0, 7),
            (0, 0, 14),
        ]


# -- the broker's producer state (Log.analyzeAndValidateProducerState, ProducerStateManager) ------------------


class Produce:
    """An idempotent producer's produce request, as ``ReplicaManager.append`` reads it."""

    def __init__(self, sequence, records=10, producer_id=7, epoch=0, batch_id=0):
        self.partitions = (TP,)
        self.acks = -1
        self.records = records
        self.payload = {"batches": {TP: (records, batch_id, producer_id, epoch, sequence)}}


def leader():
    rm = ReplicaManager(1, simpy.Environment())
    p = rm.add_partition("t", 0, [1], leader=1, isr=[1])
    return rm, p


def test_a_retry_of_a_batch_the_log_has_is_answered_with_its_offsets_and_not_appended():
    """broker-appends-duplicate. Log.append: a duplicate of one of the last 5 batches sets the append info's
    offsets to the original batch's and appends nothing; the acks=all wait is for its last offset + 1."""
    rm, p = leader()
    rm.append(Produce(0, batch_id=1))
    rm.append(Produce(10, batch_id=2))
    required, bases, errors = rm.append(Produce(0, batch_id=1))
    assert (required, bases, errors) == ({TP: 10}, {TP: 0}, {})
    assert p.log.leo == 20 and p.log.batch_ids() == [1, 2]


def test_the_broker_remembers_the_last_5_batches_of_a_producer():
    """producer-state-keeps-5. ProducerStateEntry.NumBatchesToRetain = 5: a retry of the 5th batch from the end
    is a duplicate; of the 6th, it is out of order (2.8's broker never answers DUPLICATE_SEQUENCE_NUMBER)."""
    rm, p = leader()
    for i in range(6):
        rm.append(Produce(10 * i, batch_id=i))
    assert rm.append(Produce(10, batch_id=1))[1:] == ({TP: 10}, {})  # the 2nd of 6: still cached
    assert rm.append(Produce(0, batch_id=0))[1:] == ({}, {TP: "OUT_OF_ORDER_SEQUENCE_NUMBER"})
    assert p.log.leo == 60


def test_a_gap_in_the_sequence_is_out_of_order_and_appends_nothing():
    """broker-accepts-gap. ProducerAppendInfo.checkSequence: the first sequence must be the last one + 1."""
    rm, p = leader()
    rm.append(Produce(0))
    assert rm.append(Produce(20))[1:] == ({}, {TP: "OUT_OF_ORDER_SEQUENCE_NUMBER"})
    assert rm.append(Produce(10))[1:] == ({TP: 10}, {}) and p.log.leo == 20


def test_a_producer_the_log_does_not_know_may_start_at_any_sequence():
    """broker-unknown-producer. checkSequence accepts any sequence when the log has no entry for the producer
    (currentEntry.producerEpoch == NO_PRODUCER_EPOCH): since KIP-360, 2.8 never answers UNKNOWN_PRODUCER_ID."""
    rm, _p = leader()
    assert rm.append(Produce(50))[1:] == ({TP: 0}, {})
    assert rm.append(Produce(60))[1:] == ({TP: 10}, {})
    assert rm.append(Produce(60, producer_id=8))[1:] == ({TP: 20}, {})  # another producer: its own sequences


def test_a_new_epoch_starts_at_sequence_0_and_an_older_epoch_is_refused():
    """broker-new-epoch-any-sequence, broker-old-epoch. checkSequence: a new epoch's first sequence must be 0;
    checkProducerEpoch: an epoch older than the last seen is INVALID_PRODUCER_EPOCH. The new epoch's batch
    drops the old epoch's cached batches (maybeUpdateProducerEpoch)."""
    rm, p = leader()
    rm.append(Produce(0))
    assert rm.append(Produce(10, epoch=1))[1:] == ({}, {TP: "OUT_OF_ORDER_SEQUENCE_NUMBER"})
    assert rm.append(Produce(0, epoch=1))[1:] == ({TP: 10}, {})
    assert rm.append(Produce(0, epoch=0))[1:] == ({}, {TP: "INVALID_PRODUCER_EPOCH"})
    assert p.log.leo == 20


def test_a_follower_keeps_the_producer_state_of_what_it_replicates():
    """follower-producer-state. Log.appendAsFollower updates the producer state (origin Replication, not
    checked), so a follower that becomes leader answers a retry of a replicated batch as a duplicate."""
    lead, follower = Log(), Log()
    for seq in (0, 10):
        follower.append_as_follower(lead.append_as_leader(10, 0, producer_id=7, sequence=seq, producer_epoch=0))
    assert follower.check_producer(7, 0, 10, 10) == ("NONE", (10, 19))
    assert follower.check_producer(7, 0, 30, 10) == ("OUT_OF_ORDER_SEQUENCE_NUMBER", None)


def test_truncation_rebuilds_the_producer_state_from_the_log_that_remains():
    """truncation-keeps-producer-state. Log.truncateTo → loadProducerState: what the log no longer holds is no
    longer known, so the producer's retry of a truncated batch is appended again (not a duplicate) and the one
    after it is out of order."""
    log = Log()
    for seq in (0, 10, 20):
        log.append_as_leader(10, 0, producer_id=7, sequence=seq, producer_epoch=0)
    log.truncate_to(10)
    assert log.producers.last_sequence(7) == 9
    assert log.check_producer(7, 0, 10, 10) == ("NONE", None)
    assert log.check_producer(7, 0, 20, 10) == ("OUT_OF_ORDER_SEQUENCE_NUMBER", None)
    assert log.check_producer(7, 0, 0, 10) == ("NONE", (0, 9))


# -- the client's handling (Sender.completeBatch, TransactionManager.canRetry / handleFailedBatch) --------------


def sent(p, *batches):
    """Drain ``batches`` as the accumulator does, in order, as if they were sent."""
    for b in batches:
        p._queue(b.tp).remove(b)
        p._drained(b)


def idle_producer(**kw):
    """An idempotent producer that has its producer id (0, epoch 0) and sends nothing: the test drives the rules."""
    c = Cluster(3, seed=0)
    c.create_topic("t", 1, 3)
    p = c.producer("p", topic="t", enable_idempotence=True, **kw)
    c.run(20)
    assert (p.producer_id, p.producer_epoch) == (0, 0) and not p.batches
    p.drain = lambda: None
    return c, p


def test_a_retry_goes_only_as_the_first_batch_not_done():
    """retry-not-first-in-flight. shouldStopDrainBatchesForPartition: a batch with a sequence goes only when its
    sequence is the first in flight; a new batch goes meanwhile (in flight: up to 5 requests)."""
    _c, p = idle_producer()
    a, b, new = (p.produce()[0] for _ in range(3))
    sent(p, a, b)
    assert not p._stop_drain(TP, a) and p._stop_drain(TP, b)
    assert not p._stop_drain(TP, new)
    p._complete_batch(a, "NONE", 0)
    assert not p._stop_drain(TP, b)


def test_a_retried_batch_goes_back_in_sequence_order():
    """retry-out-of-order. RecordAccumulator.insertInSequenceOrder: after the queued batches with a smaller
    sequence, before those with a larger one or none."""
    _c, p = idle_producer()
    a, b, c3, new = (p.produce()[0] for _ in range(4))
    sent(p, a, b, c3)
    for batch, err in ((c3, "NETWORK_EXCEPTION"), (a, "NETWORK_EXCEPTION"), (b, "NETWORK_EXCEPTION")):
        p._complete_batch(batch, err, -1)
    assert list(p.accumulator[TP]) == [a, b, c3, new]


def test_out_of_order_is_retried_and_a_real_gap_bumps_the_epoch():
    """oosn-not-retried, oosn-no-epoch-bump. TransactionManager.canRetry: OUT_OF_ORDER_SEQUENCE_NUMBER is retried;
    for a batch that is not the next after the last acknowledged sequence, without a bump; for the next one (a
    gap in the log), the epoch goes up and the partition's batches not done are numbered from 0 again."""
    _c, p = idle_producer()
    a, b = (p.produce()[0] for _ in range(2))
    sent(p, a, b)
    p._complete_batch(b, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)  # b (10..19) is not next: a is still unanswered
    assert b.outcome == "pending" and not p._epoch_bump_required
    p._complete_batch(a, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)  # a (0..9) follows last acked -1: a gap
    assert a.outcome == "pending" and p._epoch_bump_required
    p._maybe_bump_epoch()
    assert p.producer_epoch == 1
    assert [(x.producer_epoch, x.base_sequence, x.sequence_reset) for x in (a, b)] == [(1, 0, True), (1, 10, True)]
    assert p._entry(TP).next_sequence == 20
    # an answer to the old attempt of a rewritten batch is retried without a bump ...
    p._complete_batch(a, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
    assert not p._epoch_bump_required
    # ... and once the batch is drained again with its new sequence (ProducerBatch.close: reopened = false) the
    # same answer means a gap again
    sent(p, a)
    assert not a.sequence_reset
    p._complete_batch(a, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
    assert p._epoch_bump_required


def test_a_batch_failed_with_retries_left_starts_the_partition_again_under_a_new_epoch():
    """failed-batch-no-epoch-bump, stale-epoch-drains-new-batch. Sender.failBatch(adjustSequenceNumbers = attempts <
    retries) → handleFailedBatch → requestEpochBumpForPartition; a new batch waits while batches of the old
    epoch are not done, then starts at sequence 0 (maybeUpdateProducerIdAndEpoch)."""
    _c, p = idle_producer(delivery_timeout_ms=30000)
    a, b, new = (p.produce()[0] for _ in range(3))
    sent(p, a, b)
    p.env.run(until=a.created_ms + 30001)  # past delivery.timeout.ms: a's answer fails it
    p._complete_batch(a, "NETWORK_EXCEPTION", -1)
    assert a.outcome == "failed" and p._epoch_bump_required
    p._maybe_bump_epoch()
    assert (b.producer_epoch, b.base_sequence) == (1, 0)  # the partition's batch not done, numbered again
    p._complete_batch(b, "NONE", 0)
    assert not p._stop_drain(TP, new)
    sent(p, new)
    assert (new.producer_epoch, new.base_sequence) == (1, 10)
    # another partition's entry with the old epoch: a new batch waits while an old one is not done
    _c2, q = idle_producer()
    x, y = (q.produce()[0] for _ in range(2))
    sent(q, x)
    q.producer_epoch = 1
    assert q._stop_drain(TP, y)
    q._complete_batch(x, "NONE", 0)
    assert not q._stop_drain(TP, y)
    sent(q, y)
    assert (y.producer_epoch, y.base_sequence) == (1, 0)


# -- what it is for: a retry after a lost response writes no duplicate ------------------------------------------


def test_retries_after_lost_responses_write_duplicates_without_idempotence_and_none_with_it():
    """broker-appends-duplicate, follower-producer-state. KIP-291's purgatory incident with 50 producers and
    request.timeout.ms=10: requests still queued or parked on broker 1 when the producers give up are appended
    anyway (Connection.close: the broker handles the request it has read), and the retries write them again;
    the idempotent producer's retries are answered with the original offsets."""
    o = dict(producers=50, burst=1, rate_per_s=20, partitions=20, until_ms=300, request_timeout_ms=10)
    plain = purgatory_incident(control_plane=False, **o)
    idem = purgatory_incident(control_plane=False, enable_idempotence=True, **o)
    for res in (plain, idem):
        assert (res.ledger["attempts"] > 1).sum() > 50  # plenty of retries in both
    assert (plain.ledger["duplicates"] * plain.ledger["records"]).sum() == 130
    assert idem.ledger["duplicates"].sum() == 0
    # every committed batch is once in its leader's log, at the offset its producer was told
    cluster = idem.cluster
    for row in idem.ledger[idem.ledger["outcome"] == "committed"].itertuples():
        tp = (row.topic, row.partition)
        log = cluster.brokers[cluster.leader_of(tp)].replica_manager.partitions[tp].log
        (b,) = [b for b in log.batches if b[5] == row.batch_id]
        assert b[0] == row.base_offset


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_leader_moves_and_lost_responses_leave_no_duplicate_with_idempotence(seed):
    """follower-producer-state, truncation-keeps-producer-state, broker-appends-duplicate. A short
    request.timeout.ms and leader moves back and forth: the same run writes duplicates without idempotence and
    none with it, and every record handed over is accounted for (conservation)."""
    dups = {}
    for idem in (False, True):
        c = Cluster(3, seed=seed)
        c.create_topic("t", 2, 3)
        p = c.producer("p", topic="t", acks="all", request_timeout_ms=4, enable_idempotence=idem)
        p.open_loop(2000)
        for i, at in enumerate((40, 90, 140, 190)):
            c.controller.elect_leader(("t", i % 2), [2, 3, 1, 2][i], at_ms=at)
        res = c.run(300)
        lg = res.ledger
        assert lg["records"].sum() == sum(b.records for b in p.batches) and lg["outcome"].notna().all()
        assert lg.query("outcome == 'truncated'").empty
        dups[idem] = int(lg["duplicates"].sum())
    assert dups[False] > 0 and dups[True] == 0


def test_an_idempotent_run_renders_its_request_log():
    """KIP-673's request log (kafka_lab.logs): InitProducerId v4 as a 2.8 idempotent producer sends it (no
    transactional id, Integer.MAX_VALUE timeout; InitProducerIdRequest.json's fields) and its answer, in JSON and
    in 2.7's text."""
    import json

    from kafka_lab.logs.render import render

    c = Cluster(3, seed=0)
    c.create_topic("t", 1, 3)
    c.log.keep_answered = True
    p = c.producer("p", topic="t", enable_idempotence=True)
    p.burst(2)
    c.run(50)
    for fmt in ("json", "text"):
        lines = [ln.text() for ln in render(c, 0, 50, request_format=fmt) if "INIT_PRODUCER_ID" in ln.text()]
        assert len(lines) == 1, fmt
    (line,) = [ln.text() for ln in render(c, 0, 50) if "INIT_PRODUCER_ID" in ln.text()]
    d = json.loads(line.split("Completed request:", 1)[1].rsplit(" (kafka.request.logger)", 1)[0])
    assert d["requestHeader"]["requestApiKey"] == 22 and d["requestHeader"]["requestApiVersion"] == 4
    assert d["request"] == {
        "transactionalId": None,
        "transactionTimeoutMs": 2147483647,
        "producerId": -1,
        "producerEpoch": -1,
    }
    assert d["response"] == {"throttleTimeMs": 0, "errorCode": 0, "producerId": 0, "producerEpoch": 0}

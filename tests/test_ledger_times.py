"""The ledger's times per batch, checked against the request log (each send is a Produce request there).

- ``latency_ms`` runs from the producer's first send of a batch to its final answer (issue 7's ledger), not
  from when the application handed it over: a batch handed over before the producer has metadata waits
  for it first (in Kafka, ``KafkaProducer.send`` blocks in ``waitOnMetadata`` before the batch exists);
- an ``acks=0`` batch is done once its request is written: no response is expected (``Sender``:
  ``expectResponse = acks != 0``; ``NetworkClient.handleCompletedSends``), so the producer neither waits
  for the broker nor holds a ``max.in.flight.requests.per.connection`` slot;
- ``wrong_leader_ms``: a send answered ``NOT_LEADER_OR_FOLLOWER`` costs the batch the time to its next send
  (the refused round trip and ``retry.backoff.ms``), or to its failure.

With one partition, each Produce request carries exactly one batch (the sender takes the head batch of
each ready partition), so a client's Produce rows in the request log are its batches' sends, in order.
"""

from __future__ import annotations

import pytest

from kafka_lab.sim import Cluster

TP = ("t", 0)


def one_partition(**producer):
    """Three brokers, ``t-0`` led by broker 1 (replicas 1, 2, 3), and one producer of it."""
    c = Cluster(3, seed=0)
    c.create_topic("t", assignment={0: [1, 2, 3]})
    return c, c.producer("p", topic="t", **producer)


def produce_rows(res, client="p"):
    r = res.requests
    return r[(r["api"] == "Produce") & (r["client_id"] == client)].sort_values("sent_ms", ignore_index=True)


def test_latency_runs_from_the_first_send_not_from_the_hand_over():
    c, p = one_partition(acks=1)
    p.burst(1, at_ms=0.0)  # handed over at once, before the producer's first Metadata answer
    res = c.run(50)
    (row,) = res.ledger.itertuples()
    (send,) = produce_rows(res).itertuples()
    metadata = res.requests[(res.requests["api"] == "Metadata") & (res.requests["client_id"] == "p")]
    assert row.created_ms == 0.0 and row.first_sent_ms == send.sent_ms >= metadata["end_ms"].min() > 0
    assert row.done_ms == send.end_ms and row.latency_ms == pytest.approx(send.end_ms - send.sent_ms, abs=1e-9)


def test_an_acks_0_batch_is_done_when_sent_and_holds_no_in_flight_slot():
    c, p = one_partition(acks=0, max_in_flight_requests_per_connection=1)
    c.run(20)  # metadata known
    p.burst(5, at_ms=0.0)
    res = c.run(60)
    lg = res.ledger
    sends = produce_rows(res)
    # all five go out at once: none waits for the previous one's answer (one slot, yet never full)
    assert len(sends) == 5 and sends["sent_ms"].nunique() == 1
    assert (lg["outcome"] == "committed").all() and (lg["done_ms"] == lg["first_sent_ms"]).all()
    assert (lg["latency_ms"] == 0).all() and (lg["base_offset"] == -1).all()
    # the broker still reads, appends and "answers" them later (the processor unmutes the connection)
    assert (sends["end_ms"] > sends["sent_ms"]).all()
    assert p.in_flight[1] == 0 and not p.requests


def test_acks_1_with_one_slot_waits_for_each_answer():
    """The contrast that makes the acks=0 test mean something: with a response expected, one slot serialises."""
    c, p = one_partition(acks=1, max_in_flight_requests_per_connection=1)
    c.run(20)
    p.burst(5, at_ms=0.0)
    res = c.run(60)
    sends = produce_rows(res)
    assert len(sends) == 5 and (sends["sent_ms"].iloc[1:].to_numpy() >= sends["end_ms"].iloc[:-1].to_numpy()).all()


def moved_under_the_producer(**producer):
    """The producer learns that broker 1 leads ``t-0``; the controller moves it to broker 2; then a batch."""
    c, p = one_partition(**producer)
    c.run(20)
    c.controller.elect_leader(TP, 2, at_ms=20.0)
    c.run(40)  # every broker has applied it; the producer's metadata still names broker 1
    assert p.leaders[TP][0] == 1
    p.burst(1, at_ms=0.0)
    return c, p


def test_a_send_refused_by_a_wrong_leader_costs_the_time_to_the_next_send():
    c, p = moved_under_the_producer(acks=1)
    res = c.run(400)
    refused, accepted = produce_rows(res).itertuples()
    assert (refused.broker_id, refused.error, accepted.broker_id, accepted.error) == (
        1,
        "NOT_LEADER_OR_FOLLOWER",
        2,
        "NONE",
    )
    (row,) = res.ledger.itertuples()
    assert (row.wrong_leader_sends, row.attempts, row.outcome) == (1, 2, "committed")
    assert row.wrong_leader_ms == pytest.approx(accepted.sent_ms - refused.sent_ms, abs=1e-9)
    assert row.wrong_leader_ms >= p.cfg["retry.backoff.ms"]  # the retry waits retry.backoff.ms after the answer
    assert row.latency_ms == pytest.approx(accepted.end_ms - refused.sent_ms, abs=1e-9)
    per_client = res.wrong_leader
    assert per_client.loc[0, "wrong_leader_ms"] == row.wrong_leader_ms


def test_a_refresh_asked_for_goes_out_at_the_backoff_not_at_the_next_send():
    """Metadata.timeToNextUpdate: an update asked for is due retry.backoff.ms after the last refresh, although the
    age-based refresh (metadata.max.age.ms) is armed for much later; so the retry, 100 ms after the refusal,
    already knows the new leader. (A model that kept only its first timer sent the refresh with the retry,
    and the retry went to the old leader again.)"""
    c, p = moved_under_the_producer(acks=1)
    res = c.run(400)
    r = res.requests
    metadata = r[(r["api"] == "Metadata") & (r["client_id"] == "p")].sort_values("sent_ms", ignore_index=True)
    refused, accepted = produce_rows(res).itertuples()
    first, refresh = metadata.iloc[0], metadata.iloc[1]
    due = max(refused.end_ms, first["end_ms"] + p.cfg["retry.backoff.ms"])
    assert refresh["sent_ms"] == pytest.approx(due, abs=1e-9) and refresh["end_ms"] < accepted.sent_ms


def test_a_refused_batch_that_fails_lost_the_time_until_its_failure():
    c, _p = moved_under_the_producer(acks=1, retries=0)
    res = c.run(400)
    (refused,) = produce_rows(res).itertuples()
    (row,) = res.ledger.itertuples()
    assert (row.outcome, row.error) == ("failed", "NOT_LEADER_OR_FOLLOWER")
    assert refused.end_ms > refused.sent_ms
    assert row.wrong_leader_ms == pytest.approx(refused.end_ms - refused.sent_ms, abs=1e-9)


def test_a_refused_batch_still_waiting_at_the_end_counts_until_the_end():
    c, _p = moved_under_the_producer(acks=1)
    res = c.run(45)  # refused, and its retry is still backing off
    (refused,) = produce_rows(res).itertuples()
    (row,) = res.ledger.itertuples()
    assert row.outcome == "pending" and row.wrong_leader_ms == pytest.approx(45.0 - refused.sent_ms, abs=1e-9)

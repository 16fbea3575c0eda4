"""The producer's metadata and partitioning rules, one test each, against Kafka 2.8's client source.

Each test names the Kafka method its rule comes from and the mutation of tools/mutate.py that removes the
rule (the model with that rule removed fails the test). The times asserted are computed by hand from the
source (``Metadata.timeToNextUpdate``: the later of ``lastRefresh + metadata.max.age.ms`` and, once an
update is requested, ``lastRefresh + retry.backoff.ms``), never read back from what the model decided.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest

from kafka_lab.sim import Cluster
from kafka_lab.sim.clients.producer import PRODUCER_DEFAULTS

TP = ("t", 0)


def metadata_requests(res, client_id="p"):
    r = res.requests
    return r[(r["api"] == "Metadata") & (r["client_id"] == client_id)].reset_index(drop=True)


def one_partition(**kw):
    """Brokers 1-3, ``t-0`` led by broker 1 (replicas 1, 2, 3), a producer ``p`` with ``kw``."""
    c = Cluster(3, seed=0)
    c.create_topic("t", assignment={0: [1, 2, 3]})
    return c, c.producer("p", topic="t", **kw)


# -- metadata refresh (Metadata, NetworkClient.DefaultMetadataUpdater) ---------------------------------


@pytest.mark.parametrize("age", [None, 200.0])
def test_metadata_is_refreshed_metadata_max_age_ms_after_the_last_refresh_and_not_before(age):
    """producer-no-age-refresh, producer-age-refresh-early. Metadata.timeToNextUpdate: with no update asked
    for, the next refresh is due ``lastSuccessfulRefreshMs + metadataExpireMs``; an idle producer (nothing
    handed over, so nothing asks for an update) refreshes exactly then, again and again. ``None``: 2.8's
    default, metadata.max.age.ms = 300000 (ProducerConfig: ``define(METADATA_MAX_AGE_CONFIG, ..., 5 * 60 *
    1000, ...)``)."""
    kw = {} if age is None else {"metadata_max_age_ms": age}
    expire = 300000.0 if age is None else age
    c, _p = one_partition(**kw)
    md = metadata_requests(c.run(2.2 * expire))
    assert md["sent_ms"].iloc[0] == 0.0  # the first: at once, nothing known yet
    # each later one: the previous answer (the refresh) + metadata.max.age.ms, so exactly 3 in 2.2 x the age
    assert len(md) == 3
    for prev, nxt in zip(md.itertuples(), md.iloc[1:].itertuples()):
        assert nxt.sent_ms == pytest.approx(prev.end_ms + expire, abs=1e-6)


def test_a_connection_refused_by_a_broker_that_is_down_is_followed_by_a_metadata_refresh():
    """producer-no-refresh-after-refused-connection. NetworkClient.processDisconnection →
    DefaultMetadataUpdater.handleServerDisconnect: "The disconnect may be the result of stale metadata, so
    request an update" (``metadata.requestUpdate()``); the update is then sent once ``retry.backoff.ms``
    (100) has passed since the last refresh. Broker 1, t-0's leader, is down from 50 ms (the controller has
    not noticed yet: no session expiry in the run); the batch handed over at 60 ms is never sent: its leader
    refuses the connection, and ``Sender.sendProducerData`` drains nothing for a node that is not ready."""
    c, p = one_partition()
    c.env.timeout(50).callbacks.append(lambda _e: c.brokers[1].shut_down())
    p.burst(1, at_ms=60)
    md = metadata_requests(c.run(400))
    assert md["sent_ms"].iloc[0] == 0.0 and (md["sent_ms"].iloc[1:] >= 60).all()  # none between: none asked for
    assert len(md) >= 2 and md["sent_ms"].iloc[1] <= 60 + 100 + 1e-6
    # the refresh went to a broker that is up (NetworkClient.leastLoadedNode skips a disconnected node)
    assert (md["broker_id"].iloc[1:] != 1).all()
    b = p.batches[0]
    assert (b.attempts, b.outcome, b.error) == (0, "pending", "")  # still in the accumulator, never failed


def test_a_request_failed_network_exception_by_the_client_timeout_is_followed_by_a_metadata_refresh():
    """producer-no-refresh-after-client-timeout. NetworkClient.handleTimedOutRequests closes the connection
    and calls processDisconnection → handleServerDisconnect → ``metadata.requestUpdate()``; the batch fails
    NETWORK_EXCEPTION (an InvalidMetadataException: Sender.completeBatch asks for an update too). t-0's
    followers never fetch, so the acks=all produce sent at 1.2 ms is unanswered at 51.2 ms
    (request.timeout.ms 50); a Metadata request follows within retry.backoff.ms (100)."""
    c, p = one_partition(acks="all", request_timeout_ms=50)
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching(TP)
    p.burst(1, at_ms=1)
    res = c.run(300)
    r = res.requests
    produce = r[(r["api"] == "Produce") & (r["client_id"] == "p")]
    timed_out = produce["sent_ms"].iloc[0] + 50
    md = metadata_requests(res)
    later = md[md["sent_ms"] > md["sent_ms"].iloc[0]]
    assert (later["sent_ms"] >= timed_out).all() and len(later) >= 1
    assert later["sent_ms"].iloc[0] <= timed_out + 100 + 1e-6
    assert p.batches[0].attempts >= 2


def test_the_refresh_after_a_disconnect_is_sent_retry_backoff_ms_after_the_last_refresh():
    """Metadata.timeToNextUpdate once an update is requested: ``max(0, lastRefresh + refreshBackoff - now)``;
    NetworkClient.poll sends it then. Refused at 60 ms, last refresh answered at ~1.2 ms: Kafka sends the
    Metadata request at 101.2 ms, before the batch's retry at 160 ms (so the retry can use it)."""
    c, p = one_partition()
    c.env.timeout(50).callbacks.append(lambda _e: c.brokers[1].shut_down())
    p.burst(1, at_ms=60)
    md = metadata_requests(c.run(400))
    assert md["sent_ms"].iloc[1] == pytest.approx(max(60.0, md["end_ms"].iloc[0] + 100), abs=1e-6)


def test_a_request_timing_out_after_its_leader_stopped_sends_nothing_to_the_stopped_leader():
    """producer-drains-to-refused-node. t-0's followers never fetch, so the producer's acks=all requests wait in
    broker 1's purgatory; broker 1 stops at 20 ms (the controller is not told). The five requests in flight
    fail then (the connection closes: NETWORK_EXCEPTION, retriable), and the three batches still queued are
    never drained to broker 1: Sender.sendProducerData drops a node that is not ready (NetworkClient.ready,
    the connection refused). The model before this rule "sent" them without a connection (sent NaN), and the
    next request timeout ended the run with AttributeError: 'NoneType' object has no attribute 'close'."""
    c, p = one_partition(acks="all", request_timeout_ms=50)
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching(TP)
    p.burst(8, at_ms=1)
    c.env.timeout(20).callbacks.append(lambda _e: c.brokers[1].shut_down())
    res = c.run(400)
    produce = res.requests[res.requests["api"] == "Produce"]
    assert len(produce) == 5 and (produce["sent_ms"] < 20).all()  # max.in.flight.requests.per.connection
    assert (produce["error"] == "DISCONNECTED").all() and (produce["end_ms"] == 20).all()
    assert sorted((b.attempts, b.error) for b in p.batches) == [(0, "")] * 3 + [(1, "NETWORK_EXCEPTION")] * 5
    assert (res.ledger["outcome"] == "pending").all()


def test_an_acks0_produce_a_broker_refuses_closes_the_connection_and_the_producer_follows_the_leader():
    """acks0-error-keeps-connection. KafkaApis.handleProduceRequest (2.8), acks=0 with an error: "the server will
    close socket server so that the producer client will know that some error has happened and will refresh
    its metadata" (``closeConnection``); the producer's NetworkClient.handleDisconnections requests an update
    (DefaultMetadataUpdater.handleServerDisconnect). The controller moves t-0 from broker 1 to broker 2 at
    100 ms: broker 1 refuses the first acks=0 produce after its LeaderAndIsr and closes the connection, the
    producer refreshes (not from broker 1: in its reconnect backoff) and sends the rest to broker 2. The model
    before this rule kept sending to broker 1 for the rest of the run (457 produce requests refused, every
    one a batch lost), until metadata.max.age.ms."""
    c, p = one_partition(acks=0)
    p.open_loop(500.0)
    c.controller.elect_leader(TP, 2, at_ms=100.0)
    res = c.run(1000.0)
    r = res.requests
    produce = r[(r["api"] == "Produce") & (r["sent_ms"] > 103)]
    refused = produce[produce["error"] == "NOT_LEADER_OR_FOLLOWER"]
    assert len(refused) == 1 and (refused["broker_id"] == 1).all()
    assert (produce.loc[produce["error"] != "NOT_LEADER_OR_FOLLOWER", "broker_id"] == 2).all()
    md = metadata_requests(res)
    refresh = md[md["sent_ms"] >= refused["end_ms"].iloc[0]]
    assert refresh["broker_id"].iloc[0] != 1
    assert refresh["sent_ms"].iloc[0] <= max(refused["end_ms"].iloc[0], md["end_ms"].iloc[0] + 100) + 1e-6
    # the refused batch was never written: the ledger says so (not "truncated", a loss of something written)
    lg = res.ledger
    assert list(lg.loc[lg["outcome"] != "committed", "outcome"].astype(str)) == ["unwritten"]
    assert lg.loc[lg["outcome"] == "unwritten", "broker_id"].tolist() == [1]


# -- the sticky partitioner (KIP-480: DefaultPartitioner, StickyPartitionCache) ------------------------


def test_the_sticky_partitioner_changes_partition_per_batch_among_partitions_with_a_leader():
    """sticky-ignores-leaders, sticky-may-repeat, sticky-first-available. 2.8's DefaultPartitioner sends a
    keyless record to ``StickyPartitionCache.partition``; ``onNewBatch`` → ``nextPartition`` draws at random
    from ``cluster.availablePartitionsForTopic`` (partitions whose metadata names a leader) until the draw
    differs from the previous partition (when more than one is available). Each ``produce()`` is one new
    batch. Broker 3 is down when the topic is created, so t-2 and t-5 (replicas [3]) never get a leader."""
    c = Cluster(3, seed=0)
    c.brokers[3].shut_down()
    c.controller.live_brokers.discard(3)
    c.create_topic("t", assignment={0: [1], 1: [2], 2: [3], 3: [1], 4: [2], 5: [3]})
    p = c.producer("p", topic="t")
    seen = []  # (partitions with a leader in p's metadata when the batch is made, the batch's partition)
    hand_over = p.produce

    def produce():
        avail = {tp for tp, (leader, _epoch) in p.leaders.items() if leader >= 0}
        out = hand_over()
        seen.extend((avail, b.tp) for b in out)
        return out

    p.produce = produce
    p.open_loop(1000, start_ms=10)  # after the first metadata answer (1.2 ms)
    c.run(300)
    assert len(seen) > 200
    with_leader = {("t", 0), ("t", 1), ("t", 3), ("t", 4)}
    for (avail, tp), (_a, prev) in zip(seen[1:], seen):
        assert avail == with_leader
        assert tp in avail and tp != prev
    used = Counter(tp for _a, tp in seen)
    assert set(used) == with_leader  # t-2 and t-5 never, every other one
    assert min(used.values()) > len(seen) / 4 / 2  # random among the three others: about a quarter each


# -- 2.8's defaults (ProducerConfig) -------------------------------------------------------------------


def test_the_producer_defaults_are_kafka_2_8s():
    """producer-default-acks-all, producer-default-retries-zero, producer-default-max-in-flight-1. 2.8's
    ProducerConfig.CONFIG: ``define(ACKS_CONFIG, Type.STRING, "1", ...)`` (``all`` only from 3.0, KIP-679);
    ``RETRIES_CONFIG ... Integer.MAX_VALUE``; ``RETRY_BACKOFF_MS_CONFIG ... 100L``; ``REQUEST_TIMEOUT_MS_CONFIG
    ... 30 * 1000``; ``DELIVERY_TIMEOUT_MS_CONFIG ... 120 * 1000``; ``MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION
    ... 5``; ``METADATA_MAX_AGE_CONFIG ... 5 * 60 * 1000``; ``LINGER_MS_CONFIG ... 0``."""
    kafka_2_8 = {
        "acks": 1,
        "retries": 2**31 - 1,
        "retry.backoff.ms": 100,
        "request.timeout.ms": 30 * 1000,
        "delivery.timeout.ms": 120 * 1000,
        "max.in.flight.requests.per.connection": 5,
        "metadata.max.age.ms": 5 * 60 * 1000,
        "linger.ms": 0,
    }
    assert kafka_2_8 == PRODUCER_DEFAULTS
    c, p = one_partition()  # nothing set
    assert p.acks == 1 and {k: v for k, v in p.cfg.items() if k != "acks"} == {
        k: v for k, v in kafka_2_8.items() if k != "acks"
    }
    assert p.retry_backoff_ms == 100 and p.metadata_max_age_ms == 300000
    # what the broker sees: acks 1 and the request timeout in every ProduceRequest
    sent = []
    send = p._send
    p._send = lambda bid, req: (sent.append((req.api, req.acks, req.timeout_ms)), send(bid, req))[1]
    p.burst(3, at_ms=1)
    c.run(50)
    assert [s for s in sent if s[0] == "Produce"] and all(s == ("Produce", 1, 30000) for s in sent if s[0] == "Produce")
    # max.in.flight 5: an acks=all producer (default settings otherwise) whose followers never fetch
    c, p = one_partition(acks="all")
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching(TP)
    p.burst(10, at_ms=1)
    r = c.run(40).requests
    assert (r["api"] == "Produce").sum() == 5


def test_with_no_partition_led_the_sticky_partitioner_draws_from_all_even_the_previous_one():
    """StickyPartitionCache.nextPartition (2.8): with no available partition, ``random % partitions.size()``, so
    the previous partition may come again; with two partitions, about every other batch repeats. Batches
    handed over at t=0, before the producer's first Metadata answer, find no partition with a leader."""
    c = Cluster(3, seed=0)
    c.create_topic("t", 2, 3)
    p = c.producer("p", topic="t")
    assert not p.leaders
    chosen = [b.tp[1] for _ in range(50) for b in p.produce()]
    repeats = sum(a == b for a, b in pairwise(chosen))
    assert set(chosen) == {0, 1} and 10 <= repeats <= 39
    c.run(50)
    assert len(p.leaders) == 2  # once both have a leader, a new batch never repeats the previous partition
    after = [b.tp[1] for _ in range(20) for b in p.produce()]
    assert all(a != b for a, b in pairwise(after))


def test_a_metadata_request_times_out_like_any_other_and_the_refresh_is_retried():
    """producer-metadata-never-times-out. NetworkClient.handleTimedOutRequests covers every request in flight,
    Metadata included: after request.timeout.ms (50 here) the connection is closed and
    DefaultMetadataUpdater.handleFailedRequest counts the refresh as failed (``failedUpdate``: the last refresh is
    now), so the next is sent retry.backoff.ms (100) later: at 50 + 100 = 150 ms. Broker 1, the bootstrap broker
    the first Metadata goes to, is paused from 0 to 1000 ms: without the timeout the producer would wait for it
    until it wakes."""
    c = Cluster(3, seed=0)
    c.create_topic("t", assignment={0: [2, 3, 1]})
    c.producer("p", topic="t", acks=1, request_timeout_ms=50)
    c.pause(1, at_ms=0.0, for_ms=1000.0)
    md = metadata_requests(c.run(300.0))
    assert md["sent_ms"].iloc[0] == 0.0
    assert len(md) >= 2 and md["sent_ms"].iloc[1] == pytest.approx(50.0 + 100.0, abs=1e-9)


def test_metadata_refreshes_keep_timing_out_while_their_broker_is_paused():
    """producer-metadata-never-times-out, the same rule over a longer pause. Broker 1 leads t-0 and is paused from
    20 ms to 2020 ms; a produce request times out at its send + 50 ms and asks for a metadata update. Each Metadata
    request then times out 50 ms after it is sent and the next follows retry.backoff.ms (100) after that failure:
    sends exactly 150 ms apart, none left waiting on the paused broker. (They all go to broker 1: the model's
    least-loaded node takes the bootstrap broker on a tie, where 2.8's NetworkClient.leastLoadedNode starts at a
    random node; docs/kafka-reference.md §7.)"""
    c = Cluster(3, seed=0)
    c.create_topic("t", assignment={0: [1, 2, 3]})
    p = c.producer("p", topic="t", acks=1, request_timeout_ms=50)
    p.open_loop(200.0)
    c.pause(1, at_ms=20.0, for_ms=2000.0)
    md = metadata_requests(c.run(1000.0))
    later = md[md["sent_ms"] > 20.0]["sent_ms"].tolist()
    assert len(later) >= 5
    assert all(b - a == pytest.approx(150.0, abs=1e-6) for a, b in pairwise(later))

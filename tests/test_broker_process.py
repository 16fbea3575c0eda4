"""A stopped broker is inert: its process (kafka_lab/sim/server/node.py) ends, and with it every thread, timer and
connection; a start-up is a new process. Against Kafka 2.8's source (docs/kafka-reference.md §5, §6):
``KafkaServer.shutdown`` (the socket server, handlers, replica manager and fetchers all stop),
``SocketServer.Processor.close`` (a closed connection's responses are dropped), ``NetworkClient``'s
``handleDisconnections`` (every request in flight on a lost connection completes disconnected, and metadata
is requested), ``AbstractFetcherThread.processFetchRequest`` (a failed fetch backs off
``replica.fetch.backoff.ms``, then delays its partitions as much again), ``RequestSendThread.doWork`` (a
failed control request is sent again after 100 ms, on a new connection), ``Sender.sendProducerData`` (no
batch is drained for a node that is not ready).

Each test names the mutation of tools/mutate.py it kills.
"""

from __future__ import annotations

import pytest

from kafka_lab.sim import Cluster
from kafka_lab.sim.cluster import advance
from kafka_lab.sim.network.socket_server import ConnectionRefused
from kafka_lab.sim.server.fetcher import REPLICA_FETCH_BACKOFF_MS
from kafka_lab.sim.zk.controller import CONTROLLER_SEND_RETRY_MS

TOPIC = "t"


def _restart_during_a_leader_move(seed=0, until=4500.0):
    """Brokers 1-3, ``t`` with 6 partitions (RF 3, ``min.insync.replicas=2``), ``replica.lag.time.max.ms=600``,
    five ``acks=all`` producers; broker 3's fetcher stalled from the start. At 1000 ms the controller moves
    ``t-0`` to broker 2 and broker 2 begins its controlled shutdown: the LeaderAndIsr for the two partitions it
    hands over (``t-1``, ``t-4``) is still being handled on broker 2 when it stops, 4.22 ms later; it is down
    until 4004.22 ms."""
    c = Cluster(3, seed=seed, broker_overrides={"replica_lag_time_max_ms": 600})
    c.log.keep_answered = True
    c.create_topic(TOPIC, 6, 3, min_insync_replicas=2)
    for i in range(5):
        c.producer(f"p{i}", topic=TOPIC, acks="all").open_loop(400.0)
    for tp in c.topics[TOPIC]:
        c.brokers[3].fetchers.stop_fetching(tp)
    c.controller.elect_leader((TOPIC, 0), 2, at_ms=1000.0)
    c.restart_broker(2, at_ms=1000.0, down_ms=3000.0)
    return c


def _window(broker, event_from="shut_down", event_to="started"):
    times = {e: t for t, e, _d in broker.lifecycle}
    return times[event_from], times.get(event_to, float("inf"))


def test_a_stopped_broker_handles_sends_and_appends_nothing():
    """stopped-broker-keeps-running, stopped-broker-keeps-fetching. KafkaServer.shutdown stops the socket server,
    the request handlers and the replica fetchers with the process: the LeaderAndIsr broker 2 was handling when
    it stopped is lost with its connection (``DISCONNECTED``) instead of being applied after the shutdown, no
    request reaches a handler of broker 2 while it is down, no thread of it sends one, and its logs do not grow.
    (The model before this rule: 11 requests handled while down, 1,938 Fetch requests from its restarted
    fetcher, its log of ``t-0`` from 4,300 to 14,980.)"""
    c = _restart_during_a_leader_move()
    b2 = c.brokers[2]
    advance(c.env, 1004.3)
    down, _ = _window(b2)
    assert down == pytest.approx(1004.22)
    leo_at_stop = {tp: p.log.leo for tp, p in b2.replica_manager.partitions.items()}
    advance(c.env, 4000.0)
    assert {tp: p.log.leo for tp, p in b2.replica_manager.partitions.items()} == leo_at_stop
    c.run(4500.0)
    down, up = _window(b2)
    to_2 = [r for r in c.log if r.connection is not None and r.connection.broker_id == 2]
    assert not [r for r in to_2 if down < r.dequeue < up]  # nothing handled (NaN compares false: never handled)
    assert not [r for r in c.log if r.client_id.startswith("broker-2-") and down < r.sent < up]
    (lost,) = [r for r in to_2 if r.is_controller and r.error == "DISCONNECTED"]
    assert lost.api == "LeaderAndIsr" and lost.sent < down and lost.end == down
    assert sorted(lost.partitions) == [(TOPIC, 1), (TOPIC, 4)]


def test_acks_all_with_min_insync_replicas_2_is_not_acknowledged_by_one_live_replica():
    """stopped-broker-keeps-fetching, stopped-broker-keeps-running. With broker 2 down and broker 3's fetcher
    stalled, broker 1 is the only live replica of the partitions it leads (``t-1`` and ``t-4`` from broker 2's
    shutdown on; ``t-0``): after ``replica.lag.time.max.ms`` its ISR is itself alone, so with
    ``min.insync.replicas=2`` every acks=all produce to them fails NOT_ENOUGH_REPLICAS
    (Partition.appendRecordsToLeader) until broker 2 is back. The model before this rule acknowledged 1,189
    batches of ``t-1`` and ``t-4`` in that window: broker 2's fetcher, restarted by a LeaderAndIsr handled after
    the shutdown, fetched while it was down, and broker 1 put it back in the ISR."""
    c = _restart_during_a_leader_move()
    res = c.run(4500.0)
    down, up = _window(c.brokers[2])
    lag = 600.0
    led_by_1 = [tp for tp, st in c.controller.state.items() if st["leader"] == 1]
    assert {(TOPIC, 1), (TOPIC, 4)} <= set(led_by_1)
    lg = res.ledger
    acked = lg[
        lg["partition"].isin([p for _t, p in led_by_1])
        & (lg["outcome"] == "committed")
        & (lg["done_ms"] > down + 2 * lag)
        & (lg["done_ms"] < up)
    ]
    assert acked.empty
    # and they were not lost: each is committed once broker 2 is back (NOT_ENOUGH_REPLICAS is retriable)
    assert (lg["outcome"] == "committed").all()


def test_requests_in_flight_to_a_broker_that_stops_fail_as_disconnections_at_once():
    """stopped-broker-keeps-connections. The socket server's shutdown closes every connection: the producer's
    acks=all requests parked in broker 1's purgatory (its followers do not fetch) complete at the stop as
    disconnected (NetworkClient.handleDisconnections: NETWORK_EXCEPTION, retriable), not 30 s later at
    ``request.timeout.ms``; their batches wait in the accumulator while broker 1 refuses connections."""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching((TOPIC, 0))
    p = c.producer("p", topic=TOPIC, acks="all")
    p.burst(3, at_ms=1.0)
    c.env.timeout(50).callbacks.append(lambda _e: c.brokers[1].shut_down())
    c.run(1000.0)
    produces = [r for r in c.log if r.api == "Produce"]
    assert len(produces) == 3
    assert all(r.error == "DISCONNECTED" and r.end == 50.0 for r in produces)
    assert all(r.partition_errors == {(TOPIC, 0): "NETWORK_EXCEPTION"} for r in produces)
    assert all((b.attempts, b.error, b.outcome) == (1, "NETWORK_EXCEPTION", "pending") for b in p.batches)
    assert not c.brokers[1].produce_purgatory.watchers or c.brokers[1].produce_purgatory.num_delayed.value == 0


def test_a_new_connection_to_a_stopped_broker_is_refused():
    """stopped-broker-keeps-connections. A broker whose process is not running accepts no connection."""
    c = Cluster(3, seed=0)
    c.brokers[2].shut_down()
    with pytest.raises(ConnectionRefused, match="broker 2 is not running"):
        c.brokers[2].connect("EXTERNAL", "client")
    c.brokers[2].start_up(2)
    assert not c.brokers[2].connect("EXTERNAL", "client").closed


def test_followers_of_a_stopped_leader_back_off_and_send_it_nothing():
    """fetcher-no-backoff-on-disconnect, stopped-broker-keeps-running. Broker 1, the leader, stops at 100 ms
    and starts again at 1050 ms (the controller is told neither: no session in this run). Its followers'
    fetches fail: the one in flight completes disconnected, after which each thread waits
    ``replica.fetch.backoff.ms``, then delays its partition as much again (AbstractFetcherThread
    .processFetchRequest, then handlePartitionsWithErrors: "effectively doubling the delay"). So no Fetch
    reaches broker 1 while it is down, and each follower's next one is sent 2 × 1000 ms after the failure
    (not at 1100 ms, when broker 1 is already back)."""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.producer("p", topic=TOPIC, acks=1).open_loop(100.0)
    c.env.timeout(100).callbacks.append(lambda _e: c.brokers[1].shut_down())
    c.env.timeout(1050).callbacks.append(lambda _e: c.brokers[1].start_up(2))
    c.run(2500.0)
    fetches = [r for r in c.log if r.api == "Fetch" and r.connection.broker_id == 1 and r.payload["replica_id"] >= 0]
    assert [r.error for r in fetches if r.end == 100.0] == ["DISCONNECTED", "DISCONNECTED"]
    assert not [r for r in fetches if 100.0 <= r.sent < 1050.0]
    for b in (2, 3):
        after = [r.sent for r in fetches if r.payload["replica_id"] == b and r.sent >= 100.0]
        assert after[0] == pytest.approx(100.0 + 2 * REPLICA_FETCH_BACKOFF_MS)


def test_a_stopped_follower_sends_nothing_even_if_its_fetcher_was_waiting_out_a_backoff():
    """stopped-broker-keeps-fetching. The replica fetchers stop with their broker's process
    (ReplicaManager.shutdown → replicaFetcherManager.shutdown). Broker 2 follows ``t-0``; its leader, broker 1,
    stops at 100 ms, so broker 2's fetcher backs off; broker 2 itself stops at 500 ms, in the middle of that
    backoff, and broker 1 is back at 700 ms (nobody told: no sessions in this run). Broker 2 sends nothing
    while it is down: its fetcher does not wake from the backoff and fetch from broker 1."""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.producer("p", topic=TOPIC, acks=1).open_loop(100.0)
    c.env.timeout(100).callbacks.append(lambda _e: c.brokers[1].shut_down())
    c.env.timeout(500).callbacks.append(lambda _e: c.brokers[2].shut_down())
    c.env.timeout(700).callbacks.append(lambda _e: c.brokers[1].start_up(2))
    c.run(3500.0)
    assert not [r for r in c.log if r.client_id.startswith("broker-2-") and r.sent > 500.0]
    fetches_3 = [r for r in c.log if r.client_id == "broker-3-fetcher-0" and r.sent > 700.0]
    assert fetches_3  # broker 3, up all along, does fetch from broker 1 again


def test_a_control_request_lost_with_its_connection_is_sent_again_100_ms_later_on_a_new_one():
    """controller-channel-no-resend. RequestSendThread.doWork: a send that fails ("Reconnecting to broker")
    waits ``backoff()`` (100 ms) and sends the same request again, for as long as the broker is in the channel
    manager. Broker 2 stops while the controller's LeaderAndIsr is in flight to it (the controller is not told:
    no session expiry in this run), and starts again 250 ms later: the request is tried every 100 ms, refused
    while broker 2 is down, and delivered on a new connection once it is up. (It starts with the broker epoch it
    had, as if its registration never changed: with a new one, the request meant for the old incarnation is
    answered STALE_BROKER_EPOCH, KIP-380, which tests/test_fencing.py's restart race shows.)"""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.controller.elect_leader((TOPIC, 0), 2, at_ms=10.0)
    b2 = c.brokers[2]
    stop_at = []

    def stop_when_in_flight(_e):
        lai = [r for r in c.log if r.api == "LeaderAndIsr" and r.connection.broker_id == 2]
        stop_at.append(c.env.now)
        assert lai and lai[-1].end != lai[-1].end  # in flight now
        b2.shut_down()

    c.env.timeout(12.05).callbacks.append(stop_when_in_flight)
    c.env.timeout(12.05 + 250.0).callbacks.append(lambda _e: b2.start_up(b2.broker_epoch))
    c.run(600.0)
    lai = [r for r in c.log if r.api == "LeaderAndIsr" and r.connection.broker_id == 2]
    assert [r.error for r in lai] == ["DISCONNECTED", "NONE"]
    first, again = lai
    assert first.end == stop_at[0]
    # tried at stop + 100 and + 200 (refused: down), + 300 (up since + 250): sent then, on a new connection
    assert again.sent == pytest.approx(stop_at[0] + 3 * CONTROLLER_SEND_RETRY_MS)
    assert again.connection is not first.connection and again.payload is first.payload
    assert b2.replica_manager.partitions[(TOPIC, 0)].leader == 2


def test_a_restarted_broker_is_a_new_process_and_what_the_old_one_held_is_gone():
    """stopped-broker-keeps-running. A request read into broker 1's request queue before it stopped is never
    handled, neither while it is down nor by the new process; the new process has its own threads (the old
    processors and handlers never run again), and its gauges read 0 while it is down."""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    for i in range(40):  # 40 producers, 5 requests in flight each: more than broker 1's 8 handlers can take
        c.producer(f"p{i}", topic=TOPIC, acks=1).burst(5, at_ms=5.0)
    b1 = c.brokers[1]
    old_processors = list(b1.planes["data"].processors)
    snapshot = {}

    def stop(_e):
        snapshot["queued"] = list(b1.planes["data"].request_queue._items)
        b1.shut_down()
        snapshot["gauges"] = {n: g.value for n, g in b1.metrics.gauges.items()}

    c.env.timeout(6.0).callbacks.append(stop)
    c.env.timeout(56.0).callbacks.append(lambda _e: b1.start_up(2))
    c.run(300.0)
    assert snapshot["queued"]  # there was work in hand
    assert all(r.dequeue != r.dequeue and r.error == "DISCONNECTED" for r in snapshot["queued"])
    assert set(snapshot["gauges"].values()) == {0}
    assert not set(map(id, old_processors)) & set(map(id, b1.planes["data"].processors))
    after = [r for r in c.log if r.connection is not None and r.connection.broker_id == 1 and r.sent > 56.0]
    assert after and all(r.connection.processor in b1.planes["data"].processors for r in after)


def test_a_controller_whose_broker_stopped_decides_and_sends_nothing():
    """controller-work-outlives-its-broker. The controller's event thread and its request senders live in its
    broker's process. Broker 1, the controller, stops at 50 ms without a controlled shutdown and nobody is told
    (no session in this run): the leader move asked of it at 100 ms is not decided, no state is written, and
    no request goes out under its name. The model before this rule decided it and sent LeaderAndIsr and
    UpdateMetadata as ``controller-1`` from a broker that was down."""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.env.timeout(50).callbacks.append(lambda _e: c.brokers[1].shut_down())
    c.controller.elect_leader((TOPIC, 0), 2, at_ms=100.0)
    c.run(300.0)
    assert c.controller.state[(TOPIC, 0)]["leader"] == 1 and c.controller.decisions == []
    assert not [r for r in c.log if r.client_id == "controller-1" and r.sent > 50.0]


def test_a_broker_whose_process_stops_during_the_election_it_would_win_is_not_the_controller():
    """The brokers race to create ``/controller``, an ephemeral znode of the creator's session
    (KafkaController.elect). Broker 1 begins its controlled shutdown at 100 ms and the controller moves at 102 ms:
    broker 1 is the first to race, but its process stops at 104.22 ms, before its multi is sent, and its session
    with it; another broker wins. The model before this rule made broker 1 the controller at 108.09 ms although it
    was down, and it sent 6 requests. (A broker that stops after its multi won: tests/test_cluster_election.py.)"""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, 2, 3)
    c.producer("p", topic=TOPIC, acks="all").open_loop(200.0)
    c.restart_broker(1, at_ms=100.0, down_ms=200.0)
    c.move_controller(at_ms=102.0)
    c.run(600.0)
    down, up = _window(c.brokers[1])
    elected = [(t, cid) for t, cid, ev, _d in c.controller.events if ev == "elected"]
    assert elected and all(cid != 1 for t, cid in elected if down - 10 < t < up)
    assert elected[0][0] > down  # decided after broker 1's znode went: the second round
    assert not [r for r in c.log if r.client_id == "controller-1" and down < r.sent < up]


def test_a_controller_whose_broker_stopped_sends_none_of_the_requests_it_had_queued():
    """controller-channel-outlives-its-broker. The controller's request senders are threads of its broker's
    process: a topic deletion the controller (broker 1) queued for 100 ms is not sent when broker 1 has
    stopped at 50 ms (nobody told: no session in this run). The model before this rule sent its StopReplica
    and UpdateMetadata requests as ``controller-1`` from a broker that was down."""
    c = Cluster(3, seed=0)
    c.log.keep_answered = True
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.controller.delete_topic(TOPIC, at_ms=100.0)
    c.env.timeout(50).callbacks.append(lambda _e: c.brokers[1].shut_down())
    c.run(300.0)
    assert not [r for r in c.log if r.client_id == "controller-1" and r.sent > 50.0]
    assert TOPIC in c.topics  # no replica deleted it: the deletion never went out

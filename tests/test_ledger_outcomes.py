"""The ledger's outcomes say what is true when the run ends (kafka_lab/sim/clients/ledger.py): data still on a disk is not
called lost, an acks=0 batch no log ever held is not called truncated, and the outcomes add up to what the
application handed over. The truth each test compares with is the brokers' own logs."""

from __future__ import annotations

from kafka_lab.sim import OUTCOMES, Cluster

TOPIC = "orders"
TP = (TOPIC, 0)


def _last_isr_member_down(seed=0):
    """``orders-0`` on brokers 2 and 3, acks=all at 200/s: broker 3 restarts at 1 s, then broker 2, the leader and
    the ISR's last member (its controlled shutdown cannot move the leadership: it stops uncleanly after three
    attempts). Both are down for 60 s: from about 17 s the partition has no leader (unclean election off)."""
    c = Cluster(3, seed=seed)
    c.create_topic(TOPIC, assignment={0: [2, 3]})
    c.producer("p", topic=TOPIC, acks="all").open_loop(200.0)
    c.restart_broker(3, at_ms=1000.0, down_ms=60_000.0)
    c.restart_broker(2, at_ms=2000.0, down_ms=60_000.0)
    return c


def test_acknowledged_records_of_a_partition_with_no_leader_are_offline_not_truncated():
    """ledger-offline-is-truncated. At 20 s ``orders-0`` has no leader and its ISR is broker 2 alone (Kafka keeps the
    last member: ReplicaStateMachine.doRemoveReplicasFromIsr). Every acknowledged batch is on broker 2's disk:
    the ledger calls each one ``offline``, none ``truncated`` (the model before this rule called all 33,820
    records truncated). When broker 2 is back and leads again, every one of them is ``committed``."""
    c = _last_isr_member_down()
    res = c.run(20_000.0)
    st = c.controller.state[TP]
    assert st["leader"] == -1 and st["isr"] == [2] and not c.brokers[2].online
    lg = res.ledger
    on_disk = set(c.brokers[2].replica_manager.partitions[TP].log.batch_ids())
    offline = lg[lg["outcome"] == "offline"]
    assert len(offline) > 1000 and set(offline["batch_id"]) <= on_disk
    assert (lg["outcome"] != "truncated").all()
    acknowledged = lg[lg["done_ms"].notna() & (lg["error"] == "NONE")]
    assert set(acknowledged["outcome"].astype(str)) == {"offline"}
    # conservation: every record handed over, in exactly one outcome
    assert int(lg.groupby("outcome", observed=False)["records"].sum().sum()) == int(lg["records"].sum())
    later = c.run(85_000.0).ledger.set_index("batch_id")  # broker 2 is back at about 77 s
    assert c.controller.state[TP]["leader"] == 2
    assert set(later.loc[offline["batch_id"], "outcome"].astype(str)) == {"committed"}


def test_an_acks0_batch_is_truncated_if_a_log_held_it_unwritten_if_none_did_pending_if_not_handled_yet():
    """ledger-acks0-refused-is-truncated. acks=0, ``orders-0`` led by broker 1 whose followers do not fetch; the
    controller moves the leadership to broker 2 (an ISR member: replica.lag.time.max.ms is 30 s) at 100 ms.
    Broker 1 had appended batches broker 2 never fetched: it truncates them when it follows broker 2 (written,
    then lost: ``truncated``); the first batch it refuses after the move was never in a log (``unwritten``); a
    batch handed over 0.05 ms before the run ends has not reached a handler yet (``pending``)."""
    c = Cluster(3, seed=0)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    for b in (2, 3):
        c.brokers[b].fetchers.stop_fetching(TP)
    p = c.producer("p", topic=TOPIC, acks=0)
    p.open_loop(500.0, stop_ms=900.0)
    p.burst(1, at_ms=999.95)
    c.controller.elect_leader(TP, 2, at_ms=100.0)
    res = c.run(1000.0)
    lg = res.ledger.set_index("batch_id")
    removed = {i for d in res.events.loc[res.events["event"] == "truncated", "detail"] for i in d.get("batch_ids", ())}
    ever_in_a_log = removed | {i for b in c.brokers.values() for i in b.replica_manager.partitions[TP].log.batch_ids()}
    leader_log = set(c.brokers[2].replica_manager.partitions[TP].log.batch_ids())
    outcome = lg["outcome"].astype(str)
    assert removed and set(outcome[sorted(removed)]) == {"truncated"}
    unwritten = outcome[outcome == "unwritten"].index
    assert len(unwritten) >= 1 and not set(unwritten) & ever_in_a_log
    assert outcome[p.batches[-1].batch_id] == "pending" and p.batches[-1].done_ms == 999.95
    assert set(outcome[outcome == "committed"].index) <= leader_log
    assert set(outcome) <= set(OUTCOMES)


def test_an_acknowledged_batch_a_running_replica_still_holds_is_pending_not_truncated():
    """ledger-running-replica-copy-is-truncated. The run ends inside the move's window: the controller has made broker
    2 ``orders-0``'s leader, but broker 1, the old leader, has not yet acted on it (KRaft: it learns of the commit
    with the next record, up to half a second later; ZooKeeper mode: its LeaderAndIsr waits behind its produce
    backlog). The batches broker 1 acknowledged that broker 2 lacks are still in broker 1's log, on a running
    broker: the ledger calls them ``pending`` (their fate not settled), never ``truncated``. A run long enough for
    broker 1 to truncate them calls them ``truncated``. (An adversary found 10 such records called truncated at
    KRaft seed 4, 460 in ZooKeeper mode at 10 ms.)"""
    from collections import Counter

    from kafka_lab.sim import truncation_incident

    for kw in (dict(control_plane=None, mode="kraft", seed=4), dict(control_plane=False, until_ms=10.0)):
        res = truncation_incident(**kw)
        c = res.cluster
        leader = c.controller.state[TP]["leader"]
        on_leader = Counter(c.brokers[leader].replica_manager.partitions[TP].log.batch_ids())
        old = c.brokers[1].replica_manager.partitions[TP].log.batch_ids()
        lg = res.ledger[
            (res.ledger["partition"] == 0) & (res.ledger["outcome"] == "pending") & (res.ledger["done_ms"] > 0)
        ]
        unsettled = [b for b in lg["batch_id"] if b not in on_leader and b in set(old)]
        assert unsettled, kw  # the case exists: acknowledged, not on the leader, still on broker 1's disk
        assert (res.ledger["outcome"] != "truncated").all(), kw
    # the same incident, run to the end of its window: broker 1 truncated them, and they are truncated
    assert (
        int((truncation_incident(control_plane=False)).ledger.query("outcome == 'truncated'")["records"].sum()) == 1700
    )

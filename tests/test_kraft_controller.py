"""The quorum controller (kafka_lab/sim/kraft/quorum_controller.py) with brokers that run only what the controller
sees of them: a Raft observer and a ``BrokerLifecycleManager`` (kafka_lab/sim/server/broker_lifecycle.py), against Kafka
4.0's ``QuorumController``, ``ReplicationControlManager``, ``BrokerHeartbeatManager``, ``ClusterControlManager`` and
``BrokerLifecycleManager`` (docs/kafka-reference.md §8.5, §8.6).

Each test names the mutation of tools/mutate.py it kills.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import simpy

from kafka_lab.sim.kraft.config import KRaftConfig
from kafka_lab.sim.kraft.quorum import Quorum
from kafka_lab.sim.kraft.raft import RaftClient
from kafka_lab.sim.network.request import RequestLog, requests_frame
from kafka_lab.sim.server.broker_lifecycle import BrokerLifecycleManager
from kafka_lab.sim.server.node import Node

TOPIC = "t"


class BareBroker:
    """A broker process with only a Raft observer and a lifecycle manager; its metadata offset is what its observer
    has committed (no loader: the controller's tests need only what the controller hears)."""

    def __init__(self, env, bid, q, log, rng, epoch, incarnation, phase):
        self.id, self.env, self.q = bid, env, q
        self.node = Node(env, f"broker {bid}")
        self.raft = RaftClient(
            env,
            bid,
            voters=q.ids,
            peers=q.nodes,
            node=self.node,
            rng=rng(f"broker-{bid}-raft"),
            request_log=log,
            history=q.history,
            config=q.kraft_config.quorum,
        )
        self.applied = -1
        self.raft.register(self)
        self.lifecycle = BrokerLifecycleManager(
            env,
            bid,
            self.node,
            controller=self.controller,
            metadata_offset=lambda: self.applied,
            request_log=log,
            kraft_config=q.kraft_config,
            rng=rng(f"broker-{bid}-lifecycle"),
            history=q.history,
        )
        self.epoch, self.incarnation, self.phase = epoch, incarnation, phase

    def controller(self):
        return self.q.nodes.get(self.raft.leader_id)

    def handle_commit(self, batches):
        self.applied = batches[-1].last_offset
        self.lifecycle.set_ready_to_unfence()  # as the loader does once it has published

    def handle_leader_change(self, leader, epoch):
        pass

    def handle_load_from_start(self):
        self.applied = -1

    def start(self, bootstrap_batches=None):
        if bootstrap_batches is not None:
            self.raft.bootstrap(1, self.q.first_leader, bootstrap_batches)
            self.applied = bootstrap_batches[-1].last_offset
            self.raft.start()
            self.lifecycle.start(
                registered_epoch=self.epoch, incarnation=self.incarnation, first_heartbeat_ms=self.phase
            )
        else:
            self.raft.start()
            self.lifecycle.start()

    def stop(self):
        self.node.stop()

    def restart(self):
        self.node.start()
        self.start()


def cluster(brokers=(1, 2, 3), assignment=None, seed=0, **config):
    env = simpy.Environment()
    log = RequestLog()

    def rng(name):
        return np.random.default_rng([seed, zlib.crc32(name.encode())])

    q = Quorum(env, 3, request_log=log, rng=rng, kraft_config=KRaftConfig(**config))
    reg = q.register_brokers(dict.fromkeys(brokers))
    if assignment is not None:
        q.create_topic(TOPIC, assignment)
    phases = rng("heartbeat-phases").uniform(0, q.kraft_config.broker_heartbeat_interval_ms, len(brokers))
    bs = {
        b: BareBroker(env, b, q, log, rng, reg[b][0], reg[b][1], float(ph))
        for b, ph in zip(brokers, phases, strict=True)
    }
    batches = q.start()
    for b in bs.values():
        b.start(batches)
    return env, q, bs, log


def records(q, kind=None):
    ml = q.metadata_log()
    ml = ml[ml["committed"]]
    return ml if kind is None else ml[ml["record_type"] == kind]


def test_the_broker_epoch_is_the_offset_of_its_register_broker_record():
    """controller-epoch-not-offset. ``ClusterControlManager.registerBroker``: the broker epoch is the controller's next
    write offset, the offset of the ``RegisterBrokerRecord`` (bootstrap and a registration during the run alike)."""
    env, q, bs, _log = cluster()
    ml = records(q, "RegisterBrokerRecord")
    assert all(f["BrokerEpoch"] == o for o, f in zip(ml["offset"], ml["fields"], strict=True))
    env.run(until=1000)
    assert bs[2].lifecycle.begin_controlled_shutdown() is not None
    env.run(until=2000)
    assert bs[2].lifecycle.state == "SHUTTING_DOWN"
    bs[2].stop()
    env.run(until=2500)
    bs[2].restart()
    env.run(until=4000)
    ml = records(q, "RegisterBrokerRecord")
    again = ml[ml["decided_ms"] > 2500]
    assert len(again) == 1
    assert again.iloc[0]["fields"]["BrokerEpoch"] == again.iloc[0]["offset"] == bs[2].lifecycle.broker_epoch


def test_a_new_incarnation_is_refused_while_the_old_session_lasts():
    """controller-duplicate-registration. ``registerBroker``: a broker that crashed (no controlled shutdown, so not
    fenced) and comes back within ``broker.session.timeout.ms`` is refused ``DUPLICATE_BROKER_REGISTRATION`` (``Another
    broker is registered with that broker id.``) until its old session is fenced; then it registers."""
    env, q, bs, log = cluster()
    env.run(until=1000)
    bs[2].stop()
    env.run(until=1500)
    bs[2].restart()
    env.run(until=30_000)
    regs = [x for x in log if getattr(x, "api", None) == "BrokerRegistration"]
    refused = [x for x in regs if x.error == "DUPLICATE_BROKER_REGISTRATION"]
    assert refused and refused[0].result["message"] == "Another broker is registered with that broker id."
    ok = [x for x in regs if x.error == "NONE"]
    ev = q.events_frame()
    fenced_at = ev[ev["event"] == "fence"].iloc[0]["time_ms"]
    assert len(ok) == 1 and ok[0].dequeue > fenced_at > refused[-1].dequeue


def test_heartbeats_go_every_interval_after_each_answer():
    """lifecycle-heartbeat-fixed-rate. ``scheduleNextCommunicationAfterSuccess``: the next heartbeat is sent
    ``broker.heartbeat.interval.ms`` (2000) after the answer to the last, so the period is 2000 ms plus the round
    trip (the controller answers once everything written before is committed)."""
    env, _q, _bs, log = cluster()
    env.run(until=10_000)
    r = requests_frame(log)
    hb = r[(r["api"] == "BrokerHeartbeat") & (r["client_id"] == "broker-1-heartbeat-channel-manager")]
    assert len(hb) >= 4
    gaps = hb["sent_ms"].to_numpy()[1:] - hb["end_ms"].to_numpy()[:-1]
    assert np.allclose(gaps, 2000.0)
    assert (hb["totalTime"] > 0).all()
    assert (np.diff(hb["sent_ms"]) > 2000.0).all()


def test_a_silent_broker_is_fenced_nine_seconds_after_its_last_heartbeat():
    """controller-session-timeout. ``BrokerHeartbeatManager``: a broker is fenced when ``lastContact +
    broker.session.timeout.ms < now`` (9000), last contact being when the controller *processed* its last
    heartbeat; the fence is its own event (``maybeFenceReplicas``) at that deadline."""
    env, q, bs, log = cluster(assignment={0: [2, 1, 3], 1: [1, 2, 3]})
    env.run(until=3000)
    bs[2].stop()
    env.run(until=15_000)
    ev = q.events_frame()
    fence = ev[ev["event"] == "fence"]
    assert list(fence["detail"].map(lambda d: d["broker"])) == [2]
    last = fence.iloc[0]["detail"]["last_contact_ms"]
    r = requests_frame(log)
    hb = r[(r["api"] == "BrokerHeartbeat") & (r["client_id"] == "broker-2-heartbeat-channel-manager")]
    assert last < 3000 and last >= hb["sent_ms"].max()
    assert fence.iloc[0]["time_ms"] == pytest.approx(last + 9000, abs=1e-3)
    brc = records(q, "BrokerRegistrationChangeRecord")
    fenced = brc[brc["fields"].map(lambda f: f.get("Fenced") == 1)]
    assert list(fenced["fields"].map(lambda f: f["BrokerId"])) == [2]
    assert fenced.iloc[0]["decided_ms"] == pytest.approx(last + 9000, abs=0.2)


def test_fencing_moves_leaderships_shrinks_isrs_and_keeps_the_last_isr_member():
    """controller-fence-empties-isr, controller-fence-keeps-leader. ``handleBrokerFenced``: every partition whose ISR
    holds the broker changes in the same event: out of the ISR, a new leader (the first acceptable ISR member in
    assignment order) where it led; where it is the ISR's last member the ISR keeps it and the leader becomes -1
    (``PartitionChangeBuilder``: an ISR is never emptied without ELR)."""
    env, q, bs, _log = cluster(assignment={0: [2, 1, 3], 1: [1, 2, 3], 2: [2]})
    env.run(until=1000)
    bs[2].stop()
    env.run(until=15_000)
    pcr = records(q, "PartitionChangeRecord")
    by_p = {f["PartitionId"]: f for f in pcr["fields"]}
    assert by_p[0] == {"TopicId": by_p[0]["TopicId"], "PartitionId": 0, "Leader": 1, "Isr": [1, 3]}
    assert by_p[1] == {"TopicId": by_p[1]["TopicId"], "PartitionId": 1, "Isr": [1, 3]}
    assert by_p[2] == {"TopicId": by_p[2]["TopicId"], "PartitionId": 2, "Leader": -1}
    assert len(set(pcr["decided_ms"])) == 1  # one event
    img = q.active().controller.image
    assert img.partitions[(TOPIC, 2)].isr == [2] and img.partitions[(TOPIC, 2)].leader == -1
    assert img.partitions[(TOPIC, 0)].leader_epoch == 1 and img.partitions[(TOPIC, 1)].leader_epoch == 0


def test_stale_brokers_are_fenced_one_per_event():
    """controller-fence-all-at-once. ``maybeFenceOneStaleBroker``: "we will process fencing one at a time so that the
    effect of fencing each broker is visible to the system prior to processing the next one": two brokers whose
    sessions ended at the same instant are fenced by two events, the second after the first. Here the active
    controller stops with them: its successor touches every broker at its activation
    (``ClusterControlManager.activate``), so both sessions end 9 s after it, together."""
    env, q, bs, _log = cluster(brokers=(1, 2, 3, 4), assignment={0: [1, 2, 3]})
    env.run(until=2000)
    bs[2].stop()
    bs[3].stop()
    q.active().shut_down()
    env.run(until=20_000)
    ev = q.events_frame()
    fence = ev[ev["event"] == "fence"]
    assert sorted(fence["detail"].map(lambda d: d["broker"])) == [2, 3]
    assert fence.iloc[0]["detail"]["last_contact_ms"] == fence.iloc[1]["detail"]["last_contact_ms"]
    assert fence.iloc[0]["time_ms"] < fence.iloc[1]["time_ms"]
    brc = records(q, "BrokerRegistrationChangeRecord")
    fenced = brc[brc["fields"].map(lambda f: f.get("Fenced") == 1)]
    assert len(set(fenced["decided_ms"])) == 2


def test_a_stale_broker_epoch_is_refused():
    """controller-no-epoch-check. ``checkBrokerEpoch``: a heartbeat with another broker epoch fails
    ``STALE_BROKER_EPOCH`` (``Expected broker epoch <e>, but got broker epoch <e'>``) and changes nothing."""
    env, q, bs, log = cluster()
    env.run(until=100)
    bs[1].lifecycle.broker_epoch -= 1
    env.run(until=6000)
    r = requests_frame(log)
    hb = r[(r["api"] == "BrokerHeartbeat") & (r["client_id"] == "broker-1-heartbeat-channel-manager")]
    assert set(hb["error"]) == {"STALE_BROKER_EPOCH"}
    ev = q.events_frame()
    assert (ev["event"] == "heartbeat_failed").sum() >= 2
    reqs = [x for x in log if getattr(x, "api", None) == "BrokerHeartbeat" and x.error == "STALE_BROKER_EPOCH"]
    epoch = bs[1].epoch
    assert reqs[0].result["message"] == f"Expected broker epoch {epoch}, but got broker epoch {epoch - 1}"


def test_a_restarted_broker_is_unfenced_once_caught_up_to_its_registration():
    """controller-unfence-at-once. ``calculateNextBrokerState``: a fenced broker is unfenced on the first heartbeat whose
    ``CurrentMetadataOffset`` has reached the offset of its ``RegisterBrokerRecord`` (and that does not ask to stay
    fenced): until then its heartbeats leave it fenced."""
    env, q, bs, log = cluster(assignment={0: [1, 2, 3]})
    env.run(until=1000)
    bs[3].lifecycle.begin_controlled_shutdown()
    env.run(until=1150)
    assert bs[3].lifecycle.state == "SHUTTING_DOWN"
    bs[3].stop()
    env.run(until=1200)
    bs[3].restart()
    env.run(until=5000)
    reg = records(q, "RegisterBrokerRecord")
    offset = int(reg[reg["decided_ms"] > 1200].iloc[0]["offset"])
    r = requests_frame(log)
    hb = [
        x
        for x in log
        if getattr(x, "api", None) == "BrokerHeartbeat" and x.client_id.startswith("broker-3-") and x.sent > 1200
    ]
    before = [x for x in hb if x.payload["current_metadata_offset"] < offset]
    after = [x for x in hb if x.payload["current_metadata_offset"] >= offset]
    assert before and all(x.result["is_fenced"] for x in before)
    assert after and not after[0].result["is_fenced"]
    assert bs[3].lifecycle.state == "RUNNING"
    assert [s for _t, _f, s in bs[3].lifecycle.transitions][-3:] == ["STARTING", "RECOVERY", "RUNNING"]
    del r


def test_controlled_shutdown_moves_leadership_then_waits_for_the_lowest_active_offset():
    """controller-shutdown-no-offset-wait, controller-shutdown-leader-kept. ``WantShutDown``: the controller moves
    every partition the broker leads, takes it out of every ISR (``enterControlledShutdown``), and grants the
    shutdown only once it leads nothing and every active broker has reported an offset at or past the event's last
    offset; then it is fenced."""
    env, q, bs, log = cluster(assignment={0: [2, 1, 3], 1: [1, 2, 3]})
    env.run(until=1000)
    done = bs[2].lifecycle.begin_controlled_shutdown()
    env.run(until=8000)
    assert done.triggered and bs[2].lifecycle.state == "SHUTTING_DOWN"
    ml = records(q)
    cs = ml[ml["fields"].map(lambda f: f.get("InControlledShutdown") == 1)]
    assert len(cs) == 1
    cs_offset = int(ml[ml["decided_ms"] == cs.iloc[0]["decided_ms"]]["offset"].max())
    pcr = ml[(ml["record_type"] == "PartitionChangeRecord") & (ml["decided_ms"] == cs.iloc[0]["decided_ms"])]
    by_p = {f["PartitionId"]: f for f in pcr["fields"]}
    assert by_p[0]["Leader"] == 1 and by_p[0]["Isr"] == [1, 3] and by_p[1]["Isr"] == [1, 3]
    ev = q.events_frame()
    granted = ev[ev["event"] == "shutdown_granted"].iloc[0]
    assert granted["detail"]["offset"] == cs_offset and granted["detail"]["lowest_active_offset"] >= cs_offset
    hb = [
        x
        for x in log
        if getattr(x, "api", None) == "BrokerHeartbeat"
        and x.client_id.startswith(("broker-1-", "broker-3-"))
        and x.end <= granted["time_ms"]
        and x.sent >= cs.iloc[0]["decided_ms"]
    ]
    assert max(x.payload["current_metadata_offset"] for x in hb) >= cs_offset
    brc = ml[ml["record_type"] == "BrokerRegistrationChangeRecord"]
    fenced = brc[brc["fields"].map(lambda f: f.get("Fenced") == 1)]
    assert list(fenced["fields"].map(lambda f: f["BrokerId"])) == [2]
    assert fenced.iloc[0]["decided_ms"] == pytest.approx(granted["time_ms"], abs=0.2)


def test_the_controller_event_queue_records_its_wait():
    """controller-no-queue-time. ``EventQueueTimeMs`` = start of processing − enqueue, for every event but the
    deferred ones (fencing, NoOpRecord, activation: ``DOES_NOT_UPDATE_QUEUE_TIME``); ``EventQueueProcessingTimeMs``
    for every event."""
    env, q, _bs, _log = cluster()
    env.run(until=5000)
    m = q.metrics_frame()
    a = m[m["node_id"] == q.active().id]
    qt = a[a["metric"] == "EventQueueTimeMs"]
    pt = a[a["metric"] == "EventQueueProcessingTimeMs"]
    assert len(qt) >= 6 and (qt["value"] >= 0).all()
    assert len(pt) > len(qt)  # the NoOpRecord and activation events take time, and no queue time is recorded
    noops = records(q, "NoOpRecord")
    assert not set(np.round(qt["time_ms"], 6)) & set(np.round(noops["decided_ms"] - 0.055, 6))

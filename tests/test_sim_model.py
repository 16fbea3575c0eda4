"""The model's structure: built from Kafka properties through listener resolution, Kafka's defaults,
names and errors; distributions and records."""

import numpy as np
import pytest
import simpy

from kafka_lab.assignment import InvalidPartitionsException, InvalidReplicationFactorException
from kafka_lab.listeners import ConfigException as ListenerConfigException
from kafka_lab.sim import (
    TIMING_COLUMNS,
    Broker,
    BrokerConfig,
    CostModel,
    Deterministic,
    Empirical,
    Exponential,
    LogNormal,
    ModelSettings,
    Scenario,
    kip291_properties,
)
from kafka_lab.sim.experiments import lab_properties
from kafka_lab.sim.server.config import CONTROL_PLANE_QUEUE_CAPACITY, ConfigException


def broker(props, **kw):
    return Broker(simpy.Environment(), props, rng=np.random.default_rng(0), **kw)


def test_kafka_defaults():
    cfg = BrokerConfig.from_properties({})
    assert (cfg.num_network_threads, cfg.num_io_threads, cfg.queued_max_requests, cfg.request_timeout_ms) == (
        3,
        8,
        500,
        30000,
    )
    assert [e.name for e in cfg.data_plane_listeners] == ["PLAINTEXT"] and cfg.control_plane_listener is None
    b = broker({})
    assert set(b.planes) == {"data"}
    data = b.planes["data"]
    assert len(data.processors) == 3 and data.handlers.threads == 8 and data.request_queue.capacity == 500
    assert set(b.metrics.gauges) == {
        "RequestQueueSize",
        "ResponseQueueSize",
        "NetworkProcessorAvgIdlePercent",
        "RequestHandlerAvgIdlePercent",
        "NumDelayedOperations",
        "PurgatorySize",
    }


def test_the_control_plane_comes_from_listener_resolution():
    b = broker(kip291_properties(control_plane=True))
    cp = b.planes["control"]
    assert len(cp.processors) == 1 and cp.handlers.threads == 1
    assert cp.request_queue.capacity == CONTROL_PLANE_QUEUE_CAPACITY == 20
    # SocketServer.startup creates the control-plane processor first; data plane: 3 per listener (INTERNAL, EXTERNAL)
    assert cp.processors[0].id == 0 and [p.id for p in b.planes["data"].processors] == list(range(1, 7))
    assert {
        "ControlPlaneRequestQueueSize",
        "ControlPlaneResponseQueueSize",
        "ControlPlaneNetworkProcessorAvgIdlePercent",
        "ControlPlaneRequestHandlerAvgIdlePercent",
    } <= set(b.metrics.gauges)
    conn = b.controller_connection(b.config.controller_to_broker_listener_name, 1)
    assert (conn.listener, conn.plane) == ("CONTROLLER", "control")
    assert conn.connection_id.startswith("192.1.1.8:9091-")


def test_without_control_plane_the_controller_uses_the_inter_broker_listener():
    # the KIP's migration, round one: CONTROLLER is bound but control.plane.listener.name is not set
    b = broker(kip291_properties(control_plane=False))
    assert set(b.planes) == {"data"} and len(b.planes["data"].processors) == 9
    conn = b.controller_connection(b.config.controller_to_broker_listener_name, 1)
    assert (conn.listener, conn.plane) == ("INTERNAL", "data")


def test_listener_errors_are_kafkas():
    with pytest.raises(ListenerConfigException) as e:
        BrokerConfig.from_properties(kip291_properties(True, **{"control.plane.listener.name": "INTERNAL"}))
    assert str(e.value) == (
        "requirement failed: control.plane.listener.name, when defined, should have a different "
        "value from the inter broker listener name. Currently they both have the value "
        "ListenerName(INTERNAL)"
    )
    with pytest.raises(
        ListenerConfigException, match=r"Listener with NOPE defined in control\.plane\.listener\.name not found"
    ):
        BrokerConfig.from_properties(lab_properties(True, **{"control.plane.listener.name": "NOPE"}))


def test_a_kraft_nodes_properties_build_only_a_kraft_broker():
    """listeners.resolve reads process.roles as a 4.0 KRaft node (docs/kafka-reference.md §8.3): a broker-only node
    is the broker of a KRaft cluster (``Cluster(mode="kraft")``), its listeners all data plane, no control plane; a
    controller node is refused at the call (in the model a controller is a node of the cluster's quorum)."""
    props = {
        "process.roles": "broker",
        "node.id": "1",
        "listeners": "PLAINTEXT://:9092",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": "3000@localhost:9093",
    }
    cfg = BrokerConfig.from_properties(props)
    assert cfg.control_plane_listener is None and [x.name for x in cfg.data_plane_listeners] == ["PLAINTEXT"]
    controller = {**props, "process.roles": "controller", "node.id": "3000", "listeners": "CONTROLLER://:9093"}
    with pytest.raises(ValueError, match=r"a KRaft broker of the model has process\.roles=broker"):
        BrokerConfig.from_properties(controller)


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("num.io.threads", 0, "Invalid value 0 for configuration num.io.threads: Value must be at least 1"),
        ("queued.max.requests", "0", "Invalid value 0 for configuration queued.max.requests: Value must be at least 1"),
        (
            "num.network.threads",
            "three",
            "Invalid value three for configuration num.network.threads: Not a number of type INT",
        ),
    ],
)
def test_bad_thread_and_queue_settings_get_kafkas_message(key, value, message):
    with pytest.raises(ConfigException) as e:
        BrokerConfig.from_properties({key: value})
    assert str(e.value) == message


def test_connections_are_assigned_round_robin_per_listener():
    b = broker(lab_properties(False))
    conns = [b.connect("PLAINTEXT", "c") for _ in range(7)]
    assert [c.processor.id for c in conns] == [0, 1, 2, 0, 1, 2, 0]
    assert [b.connect("CONTROLLER", "c").processor.id for _ in range(4)] == [3, 4, 5, 3]
    with pytest.raises(ValueError, match="no listener 'EXTERNAL'"):
        b.connect("EXTERNAL", "c")


def test_one_request_in_flight_per_connection():
    """A connection is muted while its request is handled: the second waits in the socket."""
    sc = Scenario(
        lab_properties(False),
        seed=0,
        client_listener="PLAINTEXT",
        settings=ModelSettings(network_read_ms=0, network_send_ms=0, costs={"Produce": CostModel(2.0)}),
    )
    sc.producer(connections=1).burst(3)
    r = sc.run(20).requests
    assert r["dequeue_ms"].tolist() == [0.0, 2.0, 4.0]  # 8 idle handlers, yet one at a time
    assert r["socketWaitTime"].tolist() == [0.0, 2.0, 4.0]
    assert (r["requestQueueTime"] == 0).all() and r["connection_id"].nunique() == 1


def test_acks_0_gets_no_response_but_unmutes():
    sc = Scenario(seed=0, settings=ModelSettings(network_send_ms=0.5, costs={"Produce": CostModel(1.0)}))
    sc.producer(acks=0).burst(2)
    r = sc.run(10).requests
    assert (r["error"] == "NONE").all() and (r["sendTime"] == 0).all()
    assert r["dequeue_ms"].iloc[1] == pytest.approx(r["end_ms"].iloc[0] + 0.01)


def test_record_columns_use_kafkas_names():
    r = Scenario(seed=0).run(1).requests
    for col in TIMING_COLUMNS + [
        "api",
        "correlation_id",
        "client_id",
        "connection_id",
        "listener",
        "plane",
        "processor",
        "error",
        "sent_ms",
        "start_ms",
        "dequeue_ms",
        "end_ms",
    ]:
        assert col in r.columns


def test_distributions():
    rng = np.random.default_rng(3)
    for d, mean in [(Exponential(2.0), 2.0), (LogNormal(2.0, 0.5), 2.0), (Empirical([1, 2, 3, 6]), 3.0)]:
        s = d.sampler(rng)
        xs = np.array([s() for _ in range(40000)])
        assert xs.mean() == pytest.approx(mean, rel=0.03) and (xs >= 0).all()
    assert Deterministic(1.5).sampler(rng)() == 1.5
    ln = LogNormal(1.0, 0.5).sampler(np.random.default_rng(1))
    xs = np.array([ln() for _ in range(40000)])
    assert xs.std() / xs.mean() == pytest.approx(0.5, rel=0.05)  # the coefficient of variation asked for
    with pytest.raises(ValueError):
        Exponential(0)
    with pytest.raises(ValueError):
        Empirical([])
    with pytest.raises(ValueError, match="unknown API"):
        broker({}, settings=ModelSettings(costs={"Produse": CostModel(1.0)}))


@pytest.mark.parametrize(
    "module",
    ["kafka_lab.sim", "kafka_lab.sim.scenario", "kafka_lab.sim.common.theory", "kafka_lab.sim.common.distributions"],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_acks_is_a_produce_field():
    sc = Scenario(seed=0, replicas=2)
    sc.followers()
    sc.producer(acks=-1).burst(2)
    sc.consumer().burst(1)
    r = sc.run(5).requests
    assert r.loc[r["api"] == "Produce", "acks"].tolist() == [-1, -1]
    assert r.loc[r["api"] == "Fetch", "acks"].isna().all()


@pytest.mark.parametrize(
    "kw, error, message",
    [
        (dict(partitions=0), InvalidPartitionsException, "Number of partitions must be larger than 0."),
        (dict(partitions=-3), InvalidPartitionsException, "Number of partitions must be larger than 0."),
        (dict(replicas=-1), InvalidReplicationFactorException, "Replication factor must be larger than 0."),
        (dict(replicas=0), InvalidReplicationFactorException, "Replication factor must be larger than 0."),
        (dict(partitions=2.5), TypeError, "partitions must be a whole number, not float 2.5"),
        (dict(replicas=True), TypeError, "replicas must be a whole number, not bool True"),
    ],
)
def test_scenario_refuses_a_topic_kafka_would_refuse(kw, error, message):
    """Kafka's own checks at topic creation (AdminUtils), with its exception classes and messages."""
    with pytest.raises(error) as info:
        Scenario(seed=0, **kw)
    assert str(info.value) == message


def test_scenario_refuses_unknown_partitions():
    sc = Scenario(seed=0, partitions=4)
    with pytest.raises(
        ValueError,
        match=r"\('orders', 4\) is not a partition of this scenario: its topic 'orders' has "
        r"partitions 0 to 3.*UNKNOWN_TOPIC_OR_PARTITION",
    ):
        sc.producer(partitions=[("orders", 3), ("orders", 4)])
    with pytest.raises(ValueError, match="is not a partition"):
        sc.consumer(partitions=[("payments", 0)])
    assert sc.producer(partitions=[("orders", 3)]).partitions == (("orders", 3),)


def test_results_say_when_a_request_never_happened():
    sc = Scenario(seed=0)
    sc.producer(connections=2).burst(2)
    sc.controller.send(sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=2)], at_ms=1.0)
    res = sc.run(10.0)
    assert res.request("LeaderAndIsr")["api"] == "LeaderAndIsr" and res.request("Produce", -1)["api"] == "Produce"
    with pytest.raises(
        LookupError,
        match=r"this run sent no UpdateMetadata request \(its request log holds "
        r"LeaderAndIsr × 1, Produce × 2\)",
    ) as info:
        res.request("UpdateMetadata")
    assert not isinstance(info.value, IndexError)
    with pytest.raises(LookupError, match=r"this run sent 1 LeaderAndIsr request, so there is no n=1"):
        res.request("LeaderAndIsr", 1)


def test_scenario_takes_properties_text_as_resolve_does():
    text = (
        "listeners=PLAINTEXT://:9092,CONTROLLER://:9091\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        "control.plane.listener.name=CONTROLLER\nnum.io.threads=4\n"
    )
    sc = Scenario(text, seed=0)
    assert sc.broker.has_control_plane and sc.broker.config.num_io_threads == 4
    with pytest.raises(TypeError, match="not int"):
        Scenario(9092, seed=0)


def test_a_run_pauses_the_collector_and_restores_it():
    """``advance`` runs with the cyclic collector off and leaves it as it found it, after a failure too."""
    import gc

    from kafka_lab.sim.cluster import advance

    env = simpy.Environment()
    seen = []

    def watch():
        seen.append(gc.isenabled())
        yield env.timeout(1)

    env.process(watch())
    assert gc.isenabled()
    advance(env, 5)
    assert seen == [False] and gc.isenabled()

    def boom():
        yield env.timeout(1)
        raise RuntimeError("boom")

    env.process(boom())
    with pytest.raises(RuntimeError):
        advance(env, 10)
    assert gc.isenabled()
    gc.disable()
    try:
        advance(env, 15)
        assert not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()

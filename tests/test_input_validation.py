"""Every public entry point refuses bad input at the call (issue 31 item 7; docs/architecture.md, "Where input is
checked"): the right exception, a message that names the parameter and says what it accepts (Kafka's own message
for Kafka's configs), and nothing simulated before it. A good call of the same entry point still works.

The truth for Kafka's messages is Kafka 2.8's ``ConfigDef`` (``parseType`` for INT, ``Range.atLeast``) and
``ConfigException`` ("Invalid value <v> for configuration <name>: <message>"), as docs/kafka-reference.md lists
them; for the model's own options it is the range each entry point documents. The size limits are the measured
ones of ``kafka_lab/sim/common/options.py``.
"""

from __future__ import annotations

import math
import re

import pytest
import simpy

from kafka_lab.assignment import (
    KIP36_RACKS,
    add_partitions,
    brokers_from_racks,
    failure_impact,
    java_string_key,
    replica_table,
)
from kafka_lab.listeners import ConfigException, kip291_properties_text, parse_properties
from kafka_lab.sim import (
    Cluster,
    CostModel,
    Deterministic,
    Empirical,
    Exponential,
    LogNormal,
    ModelSettings,
    Scenario,
    broker_restart_race,
    controlled_shutdown,
    controller_election,
    controller_failover,
    kip291_properties,
    purgatory_incident,
    shutdown_in_cluster,
    truncation_incident,
)
from kafka_lab.sim.common import options
from kafka_lab.sim.common.options import ConfigTypeException, kafka_int
from kafka_lab.sim.controller_fencing import zombie_in_cluster
from kafka_lab.sim.experiments import backlog_table, controller_behind_backlog, load_sweep, steady_load
from kafka_lab.sim.last_isr import last_isr_member
from kafka_lab.sim.zk.controller_scale import calibration_table

NAN, INF = float("nan"), float("inf")
TOPIC = "t"


@pytest.fixture
def nothing_simulated(monkeypatch):
    """A refused call simulates nothing: running any simpy clock is an error here (and a check that went missing
    fails at once instead of running for hours)."""

    def refuse(self, *a, **k):
        raise AssertionError("the model simulated before refusing its input")

    monkeypatch.setattr(simpy.Environment, "run", refuse)
    monkeypatch.setattr(simpy.Environment, "step", refuse)


def cluster() -> Cluster:
    c = Cluster(3, seed=1)
    c.create_topic(TOPIC, partitions=6, replication_factor=3)
    return c


def producer(**kw):
    return cluster().producer("p", topic=TOPIC, **kw)


def scenario(**kw) -> Scenario:
    return Scenario(kip291_properties(control_plane=True), seed=1, **kw)


def mir(value) -> str:
    return f"Invalid value {value} for configuration min.insync.replicas: "


# (id, the call, exception, the message: a regular expression searched in str(exc))
BAD = [
    # -- seeds: a non-negative int, never a bool -------------------------------------------------------------------
    ("cluster-seed-negative", lambda: Cluster(3, seed=-1), ValueError, "seed is a non-negative int, got -1"),
    ("cluster-seed-float", lambda: Cluster(3, seed=1.5), TypeError, "seed is a non-negative int, got float 1.5"),
    ("cluster-seed-bool", lambda: Cluster(3, seed=True), TypeError, "seed is a non-negative int, got bool True"),
    ("cluster-seed-str", lambda: Cluster(3, seed="1"), TypeError, "seed is a non-negative int, got str '1'"),
    ("cluster-broker-epochs", lambda: Cluster(3, broker_epochs=1), TypeError, "broker_epochs must be True or False"),
    ("scenario-seed", lambda: Scenario(seed=-2), ValueError, "seed is a non-negative int, got -2"),
    ("incident-seed", lambda: purgatory_incident(control_plane=False, seed=-1), ValueError, "seed is a non-negative"),
    ("shutdown-seed", lambda: shutdown_in_cluster(version="1.1", control_plane=False, seed=-1), ValueError, "seed"),
    ("last-isr-seed", lambda: last_isr_member(seed=-1), ValueError, "seed is a non-negative int"),
    ("election-seed", lambda: controller_election(seed=-1), ValueError, "seed is a non-negative int"),
    ("zombie-seed", lambda: zombie_in_cluster(fencing=True, seed=2.0), TypeError, "seed is a non-negative int"),
    ("race-seed", lambda: broker_restart_race(broker_epoch=True, seed=True), TypeError, "seed is a non-negative"),
    ("shutdown-scale-seed", lambda: controlled_shutdown(partitions=100, version="1.1", seed=-1), ValueError, "seed"),
    ("failover-seed", lambda: controller_failover(partitions=100, version="1.1", seed="0"), TypeError, "seed"),
    ("calibration-seed", lambda: calibration_table(seed=-1), ValueError, "seed is a non-negative int"),
    ("backlog-seed", lambda: controller_behind_backlog(10, control_plane=False, seed=-1), ValueError, "seed"),
    ("sweep-seed", lambda: load_sweep([100.0], seed=-1, control_plane=False), ValueError, "seed is a non-negative"),
    # -- times: finite, at least 0 ---------------------------------------------------------------------------------
    ("zk-latency-negative", lambda: Cluster(3, zk_latency_ms=-5), ValueError, "zk_latency_ms must be at least 0"),
    ("zk-latency-nan", lambda: Cluster(3, zk_latency_ms=NAN), TypeError, "zk_latency_ms is a finite number"),
    ("restart-at-nan", lambda: cluster().restart_broker(2, at_ms=NAN, down_ms=10), TypeError, "at_ms is a finite"),
    ("restart-at-negative", lambda: cluster().restart_broker(2, at_ms=-5, down_ms=10), ValueError, "at_ms must be"),
    ("restart-down-inf", lambda: cluster().restart_broker(2, at_ms=5, down_ms=INF), TypeError, "down_ms is a finite"),
    ("move-controller-at-nan", lambda: cluster().move_controller(at_ms=NAN), TypeError, "at_ms is a finite number"),
    (
        "elect-at-nan",
        lambda: cluster().controller.elect_leader((TOPIC, 0), 2, at_ms=NAN),
        TypeError,
        "at_ms is a finite number, got nan",
    ),
    (
        "elect-at-negative",
        lambda: cluster().controller.elect_leader((TOPIC, 0), 2, at_ms=-5),
        ValueError,
        "at_ms must be at least 0, got -5",
    ),
    ("delete-at-nan", lambda: cluster().controller.delete_topic(TOPIC, at_ms=NAN), TypeError, "at_ms is a finite"),
    (
        "unclean-at-negative",
        lambda: cluster().enable_unclean_leader_election(TOPIC, at_ms=-1),
        ValueError,
        "at_ms must be at least 0",
    ),
    (
        "controller-send-at-nan",
        lambda: (sc := scenario()).controller.send(
            sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=2)], at_ms=NAN
        ),
        TypeError,
        "at_ms is a finite number",
    ),
    ("burst-at-negative", lambda: producer().burst(5, at_ms=-5), ValueError, "at_ms must be at least 0, got -5"),
    ("burst-at-nan", lambda: producer().burst(5, at_ms=NAN), TypeError, "at_ms is a finite number"),
    ("burst-n-fraction", lambda: producer().burst(2.5), ValueError, "n is a whole number, got 2.5"),
    ("burst-n-negative", lambda: producer().burst(-1), ValueError, "n must be at least 0"),
    ("open-loop-start-negative", lambda: producer().open_loop(100, start_ms=-5), ValueError, "start_ms must be at"),
    ("open-loop-stop-nan", lambda: producer().open_loop(100, stop_ms=NAN), TypeError, "stop_ms is a finite number"),
    ("lab03-burst-at-negative", lambda: scenario().producer().burst(5, at_ms=-5), ValueError, "at_ms must be at"),
    ("lab03-open-loop-start", lambda: scenario().producer().open_loop(100, start_ms=-1), ValueError, "start_ms"),
    ("cluster-settings-type", lambda: Cluster(3, settings=1.0), TypeError, "settings is a ModelSettings"),
    ("exponential-inf", lambda: Exponential(INF), TypeError, "mean is a finite number, got inf"),
    ("lognormal-cv-zero", lambda: LogNormal(1.0, 0.0), ValueError, "cv must be more than 0"),
    ("deterministic-nan", lambda: Deterministic(NAN), TypeError, "value_ms is a finite number"),
    ("empirical-nan", lambda: Empirical([1.0, NAN]), TypeError, r"values\[1\] is a finite number"),
    ("cost-per-partition-nan", lambda: CostModel(1.0, per_partition_ms=NAN), TypeError, "per_partition_ms is a finite"),
    ("model-settings-nan", lambda: ModelSettings(network_read_ms=NAN), TypeError, "network_read_ms is a finite"),
    ("model-settings-negative", lambda: ModelSettings(replica_append_ms=-1), ValueError, "replica_append_ms must"),
    (
        "backlog-controller-at-nan",
        lambda: controller_behind_backlog(10, control_plane=False, controller_at_ms=NAN),
        TypeError,
        "controller_at_ms is a finite number",
    ),
    ("steady-duration-zero", lambda: steady_load(100.0, control_plane=False, duration_ms=0), ValueError, "duration_ms"),
    (
        "consumer-poll-inf",
        lambda: cluster().consumer(topic=TOPIC, poll_interval_ms=INF),
        TypeError,
        "poll_interval_ms is a finite",
    ),
    (
        "consumer-poll-zero",
        lambda: cluster().consumer(topic=TOPIC, poll_interval_ms=0),
        ValueError,
        "poll_interval_ms must be more than 0",
    ),
    # -- rates: more than 0, finite, at most the measured limit ------------------------------------------------------
    ("open-loop-inf", lambda: producer().open_loop(INF), TypeError, "rate_per_s is a finite number, got inf"),
    ("open-loop-nan", lambda: producer().open_loop(NAN), TypeError, "rate_per_s is a finite number, got nan"),
    ("open-loop-zero", lambda: producer().open_loop(0), ValueError, "rate_per_s must be more than 0, got 0"),
    (
        "open-loop-huge",
        lambda: producer().open_loop(1e7),
        ValueError,
        r"rate_per_s is at most 1,000,000, got 10,000,000",
    ),
    ("lab03-open-loop-inf", lambda: scenario().producer().open_loop(INF), TypeError, "rate_per_s is a finite"),
    ("steady-rate-inf", lambda: steady_load(INF, control_plane=False), TypeError, "produce_rate_per_s is a finite"),
    ("steady-rate-huge", lambda: steady_load(1e7, control_plane=False), ValueError, "produce_rate_per_s is at most"),
    ("sweep-rate-nan", lambda: load_sweep([100.0, NAN], control_plane=False), TypeError, r"rates_per_s\[1\] is a"),
    ("incident-rate-huge", lambda: purgatory_incident(control_plane=False, rate_per_s=1e7), ValueError, "at most"),
    ("incident-rate-nan", lambda: purgatory_incident(control_plane=False, rate_per_s=NAN), TypeError, "rate_per_s"),
    (
        "shutdown-rate-inf",
        lambda: shutdown_in_cluster(version="1.1", control_plane=False, rate_per_s=INF),
        TypeError,
        "rate_per_s is a finite number",
    ),
    ("last-isr-rate-nan", lambda: last_isr_member(rate_per_s=NAN), TypeError, "rate_per_s is a finite number"),
    # -- run: until_ms finite and not before now, metrics_interval_ms more than 0 ------------------------------------
    ("run-until-nan", lambda: cluster().run(until_ms=NAN), TypeError, "until_ms is a finite number, got nan"),
    ("run-until-inf", lambda: cluster().run(until_ms=INF), TypeError, "until_ms is a finite number, got inf"),
    ("run-until-negative", lambda: cluster().run(until_ms=-1), ValueError, "until_ms must be at or after the current"),
    (
        "run-metrics-zero",
        lambda: cluster().run(100, metrics_interval_ms=0),
        ValueError,
        "metrics_interval_ms must be more than 0",
    ),
    (
        "run-metrics-negative",
        lambda: cluster().run(100, metrics_interval_ms=-1),
        ValueError,
        "metrics_interval_ms must",
    ),
    ("run-metrics-nan", lambda: cluster().run(100, metrics_interval_ms=NAN), TypeError, "metrics_interval_ms is a"),
    ("lab03-run-until-nan", lambda: scenario().run(until_ms=NAN), TypeError, "until_ms is a finite number"),
    ("lab03-run-until-zero", lambda: scenario().run(until_ms=0), ValueError, "until_ms must be after the current time"),
    (
        "incident-metrics-zero",
        lambda: purgatory_incident(control_plane=False, metrics_interval_ms=0),
        ValueError,
        "more than 0",
    ),
    # -- whole numbers -----------------------------------------------------------------------------------------------
    ("records-per-batch-fraction", lambda: producer(records_per_batch=2.5), ValueError, "records_per_batch is a whole"),
    (
        "records-per-batch-zero",
        lambda: producer(records_per_batch=0),
        ValueError,
        "records_per_batch must be at least 1",
    ),
    (
        "retries-fraction",
        lambda: producer(retries=1.5),
        ConfigTypeException,
        "^Invalid value 1.5 for configuration retries: Expected value to be a 32-bit integer, but it was a java.lang.Double$",
    ),
    (
        "max-in-flight-fraction",
        lambda: producer(max_in_flight_requests_per_connection=2.5),
        TypeError,
        "configuration max.in.flight.requests.per.connection: Expected value to be a 32-bit integer",
    ),
    (
        "incident-records-fraction",
        lambda: purgatory_incident(control_plane=False, records_per_batch=1.5),
        ValueError,
        "whole",
    ),
    ("lab03-records-fraction", lambda: scenario().producer(records=1.5), ValueError, "records is a whole number"),
    (
        "lab03-connections-zero",
        lambda: scenario().producer(connections=0),
        ValueError,
        "connections must be at least 1",
    ),
    ("backlog-negative", lambda: controller_behind_backlog(-5, control_plane=False), ValueError, "backlog must be at"),
    ("backlog-table-fraction", lambda: backlog_table([10, 2.5]), ValueError, r"backlogs\[1\] is a whole number"),
    # -- min.insync.replicas: Kafka's own messages (ConfigDef INT, Range.atLeast(1)) ---------------------------------
    (
        "min-isr-zero",
        lambda: cluster().create_topic("u", 1, 3, min_insync_replicas=0),
        ConfigException,
        "^" + mir(0) + "Value must be at least 1$",
    ),
    (
        "min-isr-negative",
        lambda: cluster().create_topic("u", 1, 3, min_insync_replicas=-1),
        ConfigException,
        mir(-1) + "Value must be at least 1",
    ),
    (
        "min-isr-nan",
        lambda: cluster().create_topic("u", 1, 3, min_insync_replicas=NAN),
        TypeError,
        "^" + mir("NaN") + "Expected value to be a 32-bit integer, but it was a java.lang.Double$",
    ),
    (
        "min-isr-text",
        lambda: cluster().create_topic("u", 1, 3, min_insync_replicas="two"),
        ConfigException,
        mir("two") + "Not a number of type INT",
    ),
    (
        "min-isr-bool",
        lambda: cluster().create_topic("u", 1, 3, min_insync_replicas=True),
        TypeError,
        mir("true") + ".*java.lang.Boolean",
    ),
    (
        "min-isr-broker",
        lambda: Cluster(3, broker_overrides={"min.insync.replicas": 0}),
        ConfigException,
        mir(0) + "Value must be at least 1",
    ),
    (
        "incident-min-isr-zero",
        lambda: truncation_incident(control_plane=False, min_insync_replicas=0),
        ConfigException,
        mir(0),
    ),
    (
        "incident-min-isr-nan",
        lambda: truncation_incident(control_plane=False, min_insync_replicas=NAN),
        TypeError,
        mir("NaN"),
    ),
    (
        "incident-min-isr-text",
        lambda: truncation_incident(control_plane=False, min_insync_replicas="x"),
        ConfigException,
        mir("x"),
    ),
    # -- jitter ----------------------------------------------------------------------------------------------------
    (
        "shutdown-jitter-nan",
        lambda: controlled_shutdown(partitions=100, version="1.1", jitter_cv=NAN),
        TypeError,
        "jitter_cv is a finite",
    ),
    (
        "shutdown-jitter-negative",
        lambda: controlled_shutdown(partitions=100, version="1.0", jitter_cv=-0.1),
        ValueError,
        "jitter_cv must be at least 0",
    ),
    (
        "failover-jitter-nan",
        lambda: controller_failover(partitions=100, version="1.1", jitter_cv=NAN),
        TypeError,
        "jitter_cv is a finite",
    ),
    # -- sizes that would run for hours: refused with the limit and why --------------------------------------------------
    (
        "run-until-huge",
        lambda: cluster().run(until_ms=1e12),
        ValueError,
        r"replicas x simulated seconds of one run is at most 1,000,000.*every follower fetches",
    ),
    ("lab03-run-until-huge", lambda: scenario().run(until_ms=1e12), ValueError, "replicas x simulated seconds"),
    (
        "run-metrics-samples",
        lambda: cluster().run(1000, metrics_interval_ms=1e-6),
        ValueError,
        "metric samples per broker",
    ),
    (
        "run-too-many-sends",
        lambda: _loaded(100_000).run(until_ms=10_000),
        ValueError,
        r"application sends of one run \(open loops and bursts\) is at most 500,000, got 10,000,000",
    ),
    (
        "partitions-huge",
        lambda: cluster().create_topic("u", 100_000, 3),
        ValueError,
        r"partitions \(every topic together\) is at most 10,000, got 100,006: the event model",
    ),
    (
        "partitions-huge-assignment",
        lambda: cluster().create_topic("u", assignment={p: [1] for p in range(10_000)}),
        ValueError,
        "is at most 10,000",
    ),
    ("lab03-partitions-huge", lambda: scenario(partitions=100_000), ValueError, "^partitions is at most 10,000"),
    (
        "incident-partitions-huge",
        lambda: purgatory_incident(control_plane=False, partitions=100_000),
        ValueError,
        "^partitions is at most 10,000, got 100,000: the event model",
    ),
    ("incident-until-huge", lambda: purgatory_incident(control_plane=False, until_ms=1e12), ValueError, "at most"),
    (
        "incident-producers-huge",
        lambda: purgatory_incident(control_plane=False, producers=1_000_000),
        ValueError,
        "producers is at most 10,000",
    ),
    (
        "shutdown-producers-huge",
        lambda: shutdown_in_cluster(version="1.1", control_plane=False, producers=10**6),
        ValueError,
        "producers is at most",
    ),
    (
        "shutdown-start-huge",
        lambda: shutdown_in_cluster(version="1.1", control_plane=False, start_ms=1e12),
        ValueError,
        "at most",
    ),
    ("last-isr-rate-huge", lambda: last_isr_member(rate_per_s=100_000), ValueError, "application sends of one run"),
    ("cluster-brokers-huge", lambda: Cluster(100_000), ValueError, "brokers is at most 1,000.*reserved.broker.max.id"),
    (
        "lab03-connections-huge",
        lambda: scenario().producer(connections=10**6),
        ValueError,
        "connections is at most 100,000",
    ),
    (
        "steady-connections-huge",
        lambda: steady_load(100.0, control_plane=False, connections=10**6),
        ValueError,
        "connections is at most",
    ),
    (
        "election-brokers-huge",
        lambda: controller_election(brokers=100_000),
        ValueError,
        "brokers is at most 1,000, got 100,000: the cluster's own limit",
    ),
    (
        "election-rounds-huge",
        lambda: controller_election(brokers=1000, crashes=200),
        ValueError,
        r"brokers x \(crashes \+ 1\) is at most 10,000",
    ),
    (
        "shutdown-scale-huge",
        lambda: controlled_shutdown(partitions=10**7, version="1.1"),
        ValueError,
        "partitions must be between 1 and 1000000",
    ),
    # -- the listeners and the assignment ----------------------------------------------------------------------------
    (
        "parse-properties-none",
        lambda: parse_properties(None),
        TypeError,
        "parse_properties takes the text of a server.properties file",
    ),
    (
        "add-partitions-empty-partition-0",
        lambda: add_partitions(brokers_from_racks(KIP36_RACKS), {0: []}, 3),
        ValueError,
        "partition 0 of topic 'topic' has no replicas",
    ),
    (
        "properties-text-none",
        lambda: kip291_properties_text(None),
        TypeError,
        "props is a mapping of Kafka property names",
    ),
    (
        "replica-table-none",
        lambda: replica_table(None, brokers_from_racks(KIP36_RACKS)),
        TypeError,
        r"assignment is \{partition",
    ),
    (
        "failure-impact-list",
        lambda: failure_impact([[0, 1]], brokers_from_racks(KIP36_RACKS)),
        TypeError,
        "assignment is",
    ),
    ("java-string-key-none", lambda: java_string_key(None), TypeError, "java_string_key takes a str"),
    (
        "add-partitions-not-a-mapping",
        lambda: add_partitions(brokers_from_racks(KIP36_RACKS), [[1, 2]], 3),
        TypeError,
        "existing is the topic's assignment",
    ),
]


def _loaded(rate: float) -> Cluster:
    c = cluster()
    for i in range(10):
        c.producer(f"p{i}", topic=TOPIC).open_loop(rate)
    return c


@pytest.mark.parametrize(("call", "exc", "message"), [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_input_is_refused_at_the_call(nothing_simulated, call, exc, message):
    with pytest.raises(exc) as info:
        call()
    assert re.search(message, str(info.value)), str(info.value)


def test_the_cases_are_distinct():
    assert len({case[0] for case in BAD}) == len(BAD)


# -- good calls of the same entry points still work ------------------------------------------------------------------
def test_a_good_cluster_run_still_runs():
    c = cluster()
    c.producer("p", topic=TOPIC, acks="all", records_per_batch=5, retries=3).open_loop(
        200.0, start_ms=0.0, stop_ms=400.0
    )
    c.producer("q", topic=TOPIC).burst(3, at_ms=10.0)
    c.controller.elect_leader((TOPIC, 0), 2, at_ms=100.0)
    c.restart_broker(3, at_ms=200.0, down_ms=50.0)
    res = c.run(until_ms=600.0, metrics_interval_ms=10.0)
    assert res.ledger["records"].sum() > 0
    assert c.env.now == 600.0
    assert c.run(until_ms=600.0).duration_ms == 600.0  # at the current time: the results as they stand


def test_kafka_reads_an_int_config_given_as_text():
    """ConfigDef.parseType(INT) trims and parses a string: "2" is 2 (and a topic takes it)."""
    assert kafka_int("min.insync.replicas", " 2 ", 1) == 2
    c = cluster()
    c.create_topic("u", 1, 3, min_insync_replicas="2")
    assert all(b.replica_manager.topic_min_isr["u"] == 2 for b in c.brokers.values())
    with pytest.raises(ConfigException, match="Not a number of type INT"):
        kafka_int("min.insync.replicas", "2.0", 1)
    with pytest.raises(ConfigException, match="Not a number of type INT"):  # beyond Java's int
        kafka_int("min.insync.replicas", str(2**31), 1)


def test_the_limits_are_inclusive():
    options.check_limit("x", 10, 10, "why")
    with pytest.raises(ValueError, match="x is at most 10, got 11: why"):
        options.check_limit("x", 11, 10, "why")
    options.check_number("r", options.MAX_RATE_PER_S, least=0, excluded=True, most=options.MAX_RATE_PER_S)
    assert options.check_seed(0) == 0
    import numpy as np

    assert options.check_seed(np.int64(7)) == 7


def test_good_scripted_runs_still_run():
    assert controller_election(brokers=5, crashes=1, seed=3).elections.shape[0] == 2
    assert controlled_shutdown(partitions=100, version="1.1", jitter_cv=0.0).duration_s > 0
    assert controller_failover(partitions=100, version="1.1", jitter_cv=0.2).load_s > 0
    assert not math.isnan(controller_behind_backlog(5, control_plane=True, controller_at_ms=0.5).duration_ms)
    assert parse_properties("num.io.threads=4") == {"num.io.threads": "4"}
    new = add_partitions(brokers_from_racks(KIP36_RACKS), {0: [0, 1]}, 2)
    assert list(new) == [1] and len(new[1]) == 2

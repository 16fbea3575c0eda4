"""Bad input to the KRaft runs and to lab 09's tables is refused at the call, with what is accepted (an adversary's
findings, each one a case): nothing is simulated before the refusal (the fixture turns any simpy run into an
error), and a run that cannot fail over says why instead of returning a bare NaN."""

from __future__ import annotations

import math

import pytest
import simpy

from kafka_lab.listeners.errors import ConfigException
from kafka_lab.sim import Cluster, kraft_controlled_shutdown, kraft_failover, truncation_incident
from kafka_lab.sim.kraft.config import KRaftConfig
from kafka_lab.sim.kraft.raft import QuorumConfig
from kafka_lab.ui import lab09 as ui


@pytest.fixture
def nothing_simulated(monkeypatch):
    def refuse(self, *a, **k):
        raise AssertionError("the model simulated before refusing its input")

    monkeypatch.setattr(simpy.Environment, "run", refuse)
    monkeypatch.setattr(simpy.Environment, "step", refuse)


@pytest.mark.parametrize(
    "call, error, text",
    [
        (lambda: kraft_failover(partitions=100, controllers=[1, 2, 3]), ValueError, "are broker ids too"),
        (lambda: kraft_controlled_shutdown(partitions=100, controllers=[5, 6, 7]), ValueError, "are broker ids too"),
        (lambda: kraft_failover(partitions=100, controllers=2), ValueError, "needs at least 3 controllers"),
        (lambda: kraft_failover(partitions=100, controllers=1), ValueError, "needs at least 3 controllers"),
        (lambda: kraft_failover(partitions=100, at_ms=1e12), ValueError, "at_ms is at most 600,000"),
        (lambda: kraft_failover(partitions=100, fault="pause", pause_ms=1e9), ValueError, "pause_ms is at most"),
        (lambda: kraft_failover(partitions=100, seed=1.0), TypeError, "seed is a non-negative int"),
        (lambda: kraft_controlled_shutdown(partitions=100, seed=-1), ValueError, "seed is a non-negative int"),
        (lambda: Cluster(3, mode="kraft", controllers=1001), ValueError, "controllers is at most 15"),
        (lambda: Cluster({1: {}, 2: {}, 3: {}}, mode="kraft"), ValueError, "must be a KRaft node's"),
        (lambda: Cluster(3, mode="kraft", kraft_config={"a": 1}), TypeError, "kraft_config is a KRaftConfig"),
        (lambda: Cluster(3, mode="kraft").restart_controller(3000, at_ms="x"), TypeError, "at_ms is a finite number"),
        (lambda: Cluster(3, mode="kraft").restart_controller(3000, at_ms=math.nan), TypeError, "at_ms"),
        (lambda: Cluster(3, mode="kraft").restart_controller(3000, at_ms=1.0, down_ms="5"), TypeError, "down_ms"),
        (lambda: Cluster(3, mode="kraft").restart_controller(3000, at_ms=1.0, down_ms=math.inf), TypeError, "down_ms"),
        (lambda: Cluster(3, mode="kraft").run(6e7), ValueError, "simulated seconds of one KRaft run is at most"),
        (lambda: KRaftConfig(broker_heartbeat_interval_ms=math.inf), ConfigException, "32-bit integer"),
        (lambda: KRaftConfig(broker_heartbeat_interval_ms=2000.5), ConfigException, "java.lang.Double"),
        (lambda: KRaftConfig(metadata_max_idle_interval_ms=-1), ConfigException, "Value must be at least 0"),
        (lambda: QuorumConfig(append_linger_ms=2**40), ConfigException, "java.lang.Long"),
        (lambda: ui.failover_table(100), TypeError, "sizes is a list of partition counts"),
        (lambda: ui.failover_table((True,)), ValueError, "whole numbers of partitions"),
        (lambda: ui.shutdown_table((100.9,)), ValueError, "whole numbers of partitions"),
        (lambda: ui.mode_runs(truncation_incident, modes="KRaft (3 controllers)"), TypeError, "not a string"),
        (lambda: ui.fencing_panel(pause_s=math.nan), ValueError, "pause_s is the pause the panel starts with"),
        (lambda: ui.fencing_panel(pause_s=None), ValueError, "pause_s"),
        (lambda: ui.fencing_panel(pause_s=-5), ValueError, "pause_s"),
        (lambda: ui.modes_table({}), TypeError, "runs is {label: run}"),
    ],
)
def test_refused_at_the_call(nothing_simulated, call, error, text):
    with pytest.raises(error, match=None) as e:
        call()
    assert text in str(e.value)


def test_a_pause_too_short_for_a_failover_says_so():
    """The active controller's 1.5 s pause ends before a voter's fetch times out: no election, and the result says
    why (an adversary found simpy's own error from inside the run)."""
    r = kraft_failover(partitions=100, fault="pause", pause_ms=1500.0)
    assert math.isnan(r.duration_s)
    assert r.note.startswith("no failover: the active controller's 1500 ms pause ended before a voter's fetch")
    assert kraft_failover(partitions=100).note == ""


def test_the_tables_show_no_nan_when_the_run_ends_before_the_brokers_act():
    """KRaft seed 5, 300 ms: no broker acts on the move before the run ends; the tables say so in words."""
    res = ui.cached_run(truncation_incident, control_plane=None, mode="kraft", seed=5, producers=100, **ui.PANEL_RUN)
    table = ui.modes_table({"k": res})
    assert ui.NOT_BY_THE_END in set(table["k"])
    assert not any(isinstance(v, float) and math.isnan(v) for v in table["k"])
    path = ui.commit_path(res)
    assert not any(isinstance(v, float) and math.isnan(v) for v in path["after the decision (ms)"])


def test_the_metadata_log_filters_take_a_type_name_and_a_broker_id(nothing_simulated):
    r = type("R", (), {"metadata_log": None, "results": type("Q", (), {"metadata_log": None})()})()
    with pytest.raises(ValueError, match="no metadata log"):
        ui.metadata_log_frame(r)


@pytest.mark.parametrize("until", ["20000", True, math.inf])
def test_broker_fencing_checks_until_ms(nothing_simulated, until):
    from kafka_lab.sim import broker_fencing

    with pytest.raises(TypeError, match="until_ms"):
        broker_fencing(until_ms=until)

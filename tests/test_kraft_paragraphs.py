"""Labs 01 and 03–07 teach Kafka 2.8 in ZooKeeper mode; each says in one cell, just before its takeaway, what
changes in Kafka 4.x (KRaft) for its lesson, and points to lab 09 (issue 33; the facts: docs/kafka-reference.md
§8). The settings, defaults, messages and calls those cells quote are checked here against the model's own."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from kafka_lab import sim
from kafka_lab.listeners import ConfigException, resolve
from kafka_lab.listeners.kraft import KAFKA_40_DEFAULT_LISTENERS, REMOVED_IN_30
from kafka_lab.sim.kraft.config import KRaftConfig
from kafka_lab.sim.kraft.raft import QuorumConfig

LABS_DIR = Path(__file__).resolve().parent.parent / "labs"
LABS = ("01", "03", "04", "05", "06", "07")
HEADING = "### In KRaft (4.x)"
# the labs' link to lab 09, beside them in labs/ (split so that tests/test_docs_links.py does not read it as this
# file's own link)
LINK = "[09 · KRaft](" + "09_kraft.ipynb)"


def _cells(nn: str) -> list[dict]:
    (path,) = LABS_DIR.glob(f"{nn}_*.ipynb")
    return json.loads(path.read_text())["cells"]


def kraft_text(nn: str) -> str:
    """The lab's KRaft cell, its lines joined (a code span may wrap)."""
    (cell,) = [c for c in _cells(nn) if "In KRaft (4.x)" in "".join(c["source"])]
    return " ".join("".join(cell["source"]).split())


@pytest.mark.parametrize("nn", LABS)
def test_one_kraft_cell_just_before_the_takeaway_links_to_lab09(nn):
    cells = _cells(nn)
    found = [i for i, c in enumerate(cells) if "In KRaft" in "".join(c["source"])]
    assert len(found) == 1, f"lab {nn}: {len(found)} cells mention KRaft's heading"
    (i,) = found
    cell, text = cells[i], "".join(cells[i]["source"])
    assert cell["cell_type"] == "markdown" and "outputs" not in cell
    assert text.startswith(HEADING + "\n\n"), text[:40]
    assert text.count(LINK) == 1, f"lab {nn}: the cell must link to lab 09 once as {LINK}"
    assert "".join(cells[i + 1]["source"]).startswith("## Takeaway"), f"lab {nn}: not just before the takeaway"
    # short: a paragraph, not a section (lab 01's is a list of four points, replacing its 3.x section)
    assert len(text.splitlines()) <= (22 if nn == "01" else 14)


def test_lab01_old_kraft_section_is_gone():
    assert not any("In Kafka 3.x and KRaft" in "".join(c["source"]) for c in _cells("01"))


# Every `setting` (N ms) a KRaft cell quotes, against the model's own default.
MODEL_DEFAULTS_MS = {
    "controller.quorum.append.linger.ms": QuorumConfig().append_linger_ms,
    "controller.quorum.fetch.timeout.ms": QuorumConfig().fetch_timeout_ms,
    "broker.heartbeat.interval.ms": KRaftConfig().broker_heartbeat_interval_ms,
    "broker.session.timeout.ms": KRaftConfig().broker_session_timeout_ms,
}


def test_every_default_the_cells_quote_is_the_models():
    quoted = [(nn, name, int(ms)) for nn in LABS for name, ms in re.findall(r"`([a-z.]+)` \((\d+) ms", kraft_text(nn))]
    assert {name for _, name, _ in quoted} == set(MODEL_DEFAULTS_MS), quoted
    for nn, name, ms in quoted:
        assert ms == MODEL_DEFAULTS_MS[name], (
            f"lab {nn} quotes {name}={ms}, the model's default is {MODEL_DEFAULTS_MS[name]}"
        )


def test_lab01_quotes_the_message_resolve_raises_for_a_control_plane_on_a_kraft_node():
    (quoted,) = re.findall(r"`(requirement failed: [^`]+)`", kraft_text("01"))
    node = {
        "process.roles": "broker",
        "node.id": "4",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": "1@c1:9093,2@c2:9093,3@c3:9093",
        "listeners": "PLAINTEXT://:9092,CONTROL://:9094",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,CONTROL:PLAINTEXT",
        "control.plane.listener.name": "CONTROL",
    }
    with pytest.raises(ConfigException) as exc:
        resolve(node)
    assert str(exc.value) == quoted
    assert "KAFKA-18353" in kraft_text("01") and "KAFKA-18353" in " ".join(exc.value.__notes__)
    del node["control.plane.listener.name"]
    assert resolve(node).control_plane_listener is None  # the same node without it starts


def test_lab01_quotes_the_models_3x_listener_facts():
    text = kraft_text("01")
    assert f"`listeners` defaults to `{KAFKA_40_DEFAULT_LISTENERS}`" in text
    assert re.findall(r"`((?:advertised\.)?(?:host\.name|port))`", text) == list(REMOVED_IN_30)


@pytest.mark.parametrize("nn", ("04", "05", "06"))
def test_the_incident_a_cell_names_takes_mode_kraft(nn):
    (call,) = re.findall(r"`(\w+)\(mode=\"kraft\"\)`", kraft_text(nn))
    assert inspect.signature(getattr(sim, call)).parameters["mode"].default == "zk"


# Metrics the cells name, and the model module that records each under that name.
METRICS = {
    "EventQueueTimeMs": "kraft/quorum_controller.py",
    "last-applied-record-lag-ms": "kraft_mode.py",
}


def test_the_metrics_the_cells_name_are_the_models():
    named = {m for nn in LABS for m in re.findall(r"`([A-Za-z-]+(?:Ms|-ms))`", kraft_text(nn))}
    assert named == set(METRICS), named
    sim_dir = Path(sim.__file__).parent
    for metric, module in METRICS.items():
        assert f'"{metric}"' in (sim_dir / module).read_text(), f"{module} records no {metric}"

"""Lab 08's pipeline on ``generate-logs --mode kraft``'s directories, against their ground truth.

The truth is the simulation's record of what the KRaft run did (docs/kafka-reference.md §8.10); the pipeline reads
only the lines. Small data: one KRaft run of 3 brokers and 3 controllers (about 150 lines).
"""

import json

import pandas as pd
import pytest

from kafka_lab.logs.parse import Parsed, parse_lines
from kafka_lab.logs.scenario import generate
from kafka_lab.spark import analyses
from kafka_lab.spark.pipeline import parse

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kraft_logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("kraft-spark")
    generate(root, hours=1.0, brokers=3, seed=0, mode="kraft")
    return root


@pytest.fixture(scope="module")
def tables(spark, kraft_logs):
    t = parse(spark, str(kraft_logs))
    t.records.cache()
    return t


def _truth(root):
    return json.loads((root / "ground-truth.json").read_text())


def _ms(ts, start):
    return round((pd.Timestamp(ts) - pd.Timestamp(start)) / pd.Timedelta(milliseconds=1))


def test_kraft_logs_read_back_round_trip(tables, kraft_logs):
    """Every line is a record; per file as many as the truth says; the reference parser agrees; each node's
    directory gives its id (controller-<id>/ too), and its loggers say KRaft."""
    truth = _truth(kraft_logs)
    c = tables.counts()
    assert c["lines_read"] == c["records"] == truth["lines"]["lines_read"] == truth["lines"]["records"]
    assert c["rejected"] == c["continuations"] == 0
    per_file = {r["file"]: r["count"] for r in tables.records.groupBy("file").count().collect()}
    assert per_file == {f: n for f, n in truth["files"].items() if n}
    ref = Parsed()
    for f in sorted(kraft_logs.glob("*-*/*.log")):
        parse_lines(f.read_text(), str(f.relative_to(kraft_logs)), ref)
    got = sorted((r["file"], r["line"], r["logger"], r["message"]) for r in tables.records.collect())
    assert got == sorted((r.file, r.line, r.logger, r.message) for r in ref.records)
    nodes = {r["file"].split("/")[0]: r["broker"] for r in tables.records.select("file", "broker").collect()}
    assert all(int(d.split("-")[1]) == b for d, b in nodes.items())
    modes = analyses.log_modes(tables.records)
    assert set(modes) == {1, 2, 3, 3000, 3001, 3002} and set(modes.values()) == {"kraft"}


def test_controller_events_hold_the_kraft_elections(tables, kraft_logs):
    """Each activation is an ``elected`` row (the controller's node, the epoch, the time); each ``In the new epoch``
    a ``leader_change`` with its epoch and leader."""
    truth = _truth(kraft_logs)
    start = truth["start"]
    ev = tables.controller_events.toPandas()
    el = ev[ev["event"] == "elected"].sort_values(["timestamp", "broker"])
    got = [
        (_ms(t, start), int(b), int(e), int(c))
        for t, b, e, c in el[["timestamp", "broker", "epoch", "controller_id"]].values
    ]
    want = [(e["time_ms"], e["controller"], e["epoch"], e["controller"]) for e in truth["elections"]]
    assert got == want
    lc = ev[ev["event"] == "leader_change"]
    got = sorted(
        (_ms(t, start), int(c), int(e), -1 if pd.isna(n) else int(n))  # -1: "(none)"
        for t, c, e, n in lc[["timestamp", "controller_id", "epoch", "new_leader"]].values
    )
    want = [
        (x["time_ms"], x["node"], x["epoch"], -1 if x["leader"] is None else x["leader"])
        for x in truth["leader_changes"]
    ]
    assert got == sorted(want)
    assert not (ev["event"] == "resigned").any() and truth["resignations"] == []


def test_controller_events_hold_fences_unfences_and_shutdowns(tables, kraft_logs):
    """Fences and unfences (the controller's grant and the broker's own line), controlled shutdowns (granted, and
    begun on the broker), registrations on both sides, and the partition changes they make, as the truth counts
    them; ``target_broker`` names the broker each is about."""
    truth = _truth(kraft_logs)
    start = truth["start"]
    ev = tables.controller_events.toPandas()

    def rows(name):
        r = ev[ev["event"] == name].sort_values(["timestamp", "file"])
        return [(_ms(t, start), int(b)) for t, b in r[["timestamp", "target_broker"]].values]

    assert rows("broker_fenced") == [(f["time_ms"], f["broker"]) for f in truth["fences"]]
    assert sorted(rows("broker_unfenced")) == sorted(
        [(u["time_ms"], u["broker"]) for u in truth["unfences"]]
        + [(u["time_ms"], u["broker"]) for u in truth["broker_unfenced"]]
    )
    shut = rows("controlled_shutdown")
    assert len(shut) == 2 * len(truth["controlled_shutdowns"])  # "granted" on the controller, "Beginning" on the broker
    assert sorted({b for _t, b in shut}) == sorted(s["broker"] for s in truth["controlled_shutdowns"])
    assert rows("shutdown_granted") == [(s["time_ms"], s["broker"]) for s in truth["shutdowns_granted"]]
    assert rows("broker_registration") == [(r["time_ms"], r["broker"]) for r in truth["registrations"]]
    assert sorted(rows("broker_registered")) == sorted((r["time_ms"], r["broker"]) for r in truth["broker_registered"])
    # each controlled shutdown, fence and unfence with partitions to move: a "changing N partition(s)" line
    assert (ev["event"] == "partitions_changed").sum() >= len(truth["controlled_shutdowns"]) + len(truth["fences"])
    # every line of the controllers' own loggers that the generator writes is named
    assert not ev[ev["logger"].str.startswith("org.apache.kafka.controller.")]["event"].eq("other").any()


def test_controller_changes_lists_kraft_elections_fences_and_unfences(tables, kraft_logs):
    truth = _truth(kraft_logs)
    ch = analyses.controller_changes(tables.controller_events)
    assert list(ch[ch["event"] == "elected"]["broker"]) == [e["controller"] for e in truth["elections"]]
    assert (ch["event"] == "broker_fenced").sum() == len(truth["fences"]) == 1
    assert (ch["event"] == "broker_unfenced").sum() == len(truth["unfences"]) + len(truth["broker_unfenced"])

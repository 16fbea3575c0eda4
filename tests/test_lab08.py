"""Lab 08: the committed sample is what the generator writes, and every number the lab teaches comes out
of the same Spark calls on it, against the simulation's ground truth (an independent record) or a
reference parse of the gzip files in plain Python."""

import gzip
import json
import re
from pathlib import Path

import pytest

from kafka_lab.exercises import check
from kafka_lab.exercises import lab08 as ex
from kafka_lab.logs.parse import Parsed, parse_lines
from kafka_lab.logs.sample import SAMPLE_DIR, SAMPLE_OPTIONS, ground_truth, sample_dir
from kafka_lab.logs.scenario import generate

LAB = Path(__file__).resolve().parent.parent / "labs" / "08_spark_logs.ipynb"
CELLS = json.loads(LAB.read_text())["cells"]
SRC = "\n".join("".join(c["source"]) for c in CELLS)
PROSE = " ".join(" ".join("".join(c["source"]).split()) for c in CELLS if c["cell_type"] == "markdown")


def test_the_committed_sample_is_what_the_generator_writes(tmp_path):
    truth = generate(tmp_path, **SAMPLE_OPTIONS)
    assert truth == ground_truth()
    ours = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(SAMPLE_DIR) for p in SAMPLE_DIR.rglob("*") if p.is_file())
    assert ours == committed
    for rel in ours:
        assert (tmp_path / rel).read_bytes() == (SAMPLE_DIR / rel).read_bytes(), rel
    # small enough to commit: data/README.md says a few MB at most
    assert sum((SAMPLE_DIR / rel).stat().st_size for rel in committed) < 2_000_000


def test_the_gzip_files_read_back_to_the_ground_truth_counts():
    """The reference parser (plain Python) on the gzip files gives the generator's counts."""
    out = Parsed()
    for path in sorted(sample_dir().rglob("*.log*")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines()
        parse_lines(lines, str(path.relative_to(SAMPLE_DIR)), out)
    t = ground_truth()["lines"]
    assert (out.lines_read, len(out.records), out.continuations, len(out.rejected)) == (
        t["lines_read"],
        t["records"],
        t["continuations"],
        t["rejected"],
    )


def test_the_prose_numbers_are_the_ground_truth():
    t = ground_truth()
    for key in ("lines_read", "records", "continuations", "rejected"):
        assert f"**{t['lines'][key]:,}**" in PROSE, key
    p99 = ex.lai_p99_truth()
    for b in (1, 2, 3):
        assert f"**{p99[b]:.2f} ms** on broker {b}" in PROSE, b
    waits = {(r["broker"], r["api"]): r for r in t["controller_requests"]}
    # broker 2 has a control plane, yet waited: while broker 1 (no control.plane.listener.name) was the controller
    assert t["control_plane"]["2"] and p99[2] > 1 and t["controller"] == 1 and not t["control_plane"]["1"]
    assert f"waited **{waits[(2, 'LEADER_AND_ISR')]['requestQueueTimeMs_max']:.2f} ms** in its spike" in PROSE
    um_max = max(waits[(b, "UPDATE_METADATA")]["requestQueueTimeMs_max"] for b in (1, 2, 3))
    assert f"(at most **{um_max:.2f} ms**)" in PROSE
    tr = ex.truncated_truth()
    assert f"**{tr['total']:,}** records" in PROSE
    per_broker = {}
    for r in tr["rows"]:
        per_broker[r["broker"]] = per_broker.get(r["broker"], 0) + r["records"]
    assert f"{per_broker[1]:,} on broker 1" in PROSE and f"{per_broker[3]:,} on broker 3" in PROSE
    assert f"{per_broker[2]:,} on broker 2" in PROSE
    assert ex.no_control_plane_truth() == [1, 3] and "broker 2's control plane served nothing" in PROSE
    # the request log shows the controller's choice: INTERNAL until broker 1 resigned, CONTROLLER after
    resigned = next(c["time_ms"] for c in t["controllers"] if c["event"] == "resigned")
    assert f"Until **{resigned / 1000:.1f} s** every broker" in PROSE
    lai = {(r["broker"], r["listener"]) for r in t["requests"] if r["api"] == "LEADER_AND_ISR"}
    assert lai == {(b, lst) for b in (1, 2, 3) for lst in ("INTERNAL", "CONTROLLER")}
    assert {r["listener"] for r in t["requests"] if r["api"] == "PRODUCE"} == {"EXTERNAL"}
    assert "artifact" not in PROSE  # the clients have a listener of their own (issue 31, item 6)
    # the rolling restart: every broker once, the controller's last; its restart moves the controller
    assert [r["broker"] for r in t["restarts"]] == [2, 3, 1] and t["controller"] == 1
    resigned, elected = [c for c in t["controllers"] if c["time_ms"] > 0]
    assert (resigned["event"], resigned["controller"], elected["event"]) == ("resigned", 1, "elected")
    gap = elected["time_ms"] - resigned["time_ms"]
    assert f"broker **{elected['controller']}** wins the election **{gap} ms** later" in PROSE
    assert f"with controller epoch **{elected['epoch']}**" in PROSE


def test_the_lab_makes_these_calls():
    for call in (
        "analyses.controller_changes(tables.controller_events)",
        "parse(spark, str(sample_dir()))",
        'lines_table(tables.counts(), ground_truth()["lines"])',
        "analyses.control_plane(tables.records)",
        "analyses.controller_request_waits(tables.requests)",
        'analyses.latency_over_time(tables.requests, every="1 second", phase="requestQueueTimeMs")',
        "analyses.truncated_records(tables.truncations)",
        'sweep.run({"backlog": [100, 400], "control_plane": [False, True]}, replications=3, seed=0, spark=spark)',
        "latency_panel(tables.requests, broker=1, per_second=per_second)",
    ):
        assert call in SRC, call


def test_every_exercise_solution_is_the_truth():
    assert check("08.lai_p99", [round(v, 2) for v in ex.lai_p99_truth().values()]).status == "correct"
    assert check("08.truncated", ex.truncated_truth()["total"]).status == "correct"
    assert check("08.no_control_plane", ex.no_control_plane_truth()).status == "correct"
    assert check("08.count_lines", "b").status == "correct"


@pytest.fixture(scope="module")
def tables(spark):
    """The lab's parse of the sample (the shared test session), records and requests cached."""
    from kafka_lab.spark.pipeline import parse

    t = parse(spark, str(sample_dir()))
    t.records.cache()
    t.requests.cache()
    yield t
    t.records.unpersist()
    t.requests.unpersist()
    t.unpersist()


@pytest.mark.slow
class TestOnSpark:
    """The lab's Spark calls on the sample."""

    def test_counts(self, tables):
        assert tables.counts() == {
            k: ground_truth()["lines"][k] for k in ("lines_read", "records", "continuations", "rejected")
        }

    def test_exercise_answers_from_spark(self, tables):
        from pyspark.sql import functions as F

        from kafka_lab.spark import analyses

        cp = analyses.control_plane(tables.records)
        assert check("08.no_control_plane", cp[~cp["control_plane"]]["broker"].tolist()).status == "correct"
        lai = (
            tables.requests.where("api = 'LEADER_AND_ISR'")
            .groupBy("broker")
            .agg(F.percentile("requestQueueTimeMs", 0.99).alias("p99"))
            .orderBy("broker")
            .toPandas()["p99"]
            .tolist()
        )
        assert check("08.lai_p99", lai).status == "correct"
        # per listener (the lab's table): broker 2's CONTROLLER, its control plane, never waits; its INTERNAL did
        w = analyses.controller_request_waits(tables.requests).set_index(["api", "broker", "listener"])
        assert w.loc[("LEADER_AND_ISR", 2, "CONTROLLER"), "requestQueueTimeMs_max"] == 0
        assert w.loc[("LEADER_AND_ISR", 2, "INTERNAL"), "requestQueueTimeMs_max"] > 1
        tr = analyses.truncated_records(tables.truncations)
        assert check("08.truncated", int(tr["acknowledged"].sum())).status == "correct"
        # the sample's follower copy (broker 1's orders-1, 70 records) is removed but was never acknowledged
        assert (int(tr["records"].sum()), int(tr["acknowledged"].sum())) == (5200, 5130)
        assert check("08.truncated", int(tr["records"].sum())).status == "incorrect"

    def test_the_panel_redraws_for_another_broker(self, tables):
        from kafka_lab.ui import PRIMARY_CONTROL, PRIMARY_OUTPUT
        from kafka_lab.ui.lab08 import latency_panel

        panel = latency_panel(tables.requests, broker=1)
        control = next(w for w in panel.children[0].children if PRIMARY_CONTROL in w._dom_classes)
        output = panel.children[1]
        assert PRIMARY_OUTPUT in output._dom_classes
        before = output.children[0].value
        assert "<b>broker 1</b>" in before
        control.value = 2
        after = output.children[0].value
        assert after != before and "<b>broker 2</b>" in after
        # given the lab's per-second frame, the panel shows the same without asking Spark again
        per_second = analyses_latency(tables.requests)
        again = latency_panel(tables.requests, broker=1, per_second=per_second)
        assert again.children[1].children[0].value == before
        # broker 2 has a control plane, but its LeaderAndIsr waited once, before the controller used it
        worst = next(
            r["requestQueueTimeMs_max"]
            for r in ground_truth()["controller_requests"]
            if (r["broker"], r["api"]) == (2, "LEADER_AND_ISR")
        )
        assert re.search(rf"LeaderAndIsr requests' worst p99 is <b>{worst:.2f} ms</b>", after)


def analyses_latency(requests):
    from kafka_lab.spark import analyses

    return analyses.latency_over_time(requests, every="1 second", phase="requestQueueTimeMs")


def test_blank_missing_shows_an_empty_cell_and_keeps_the_data():
    import pandas as pd

    from kafka_lab.ui.lab08 import blank_missing

    df = pd.DataFrame(
        {
            "timestamp": pd.to_datetime(["2024-03-04 00:00:00.000", "2024-03-04 00:00:30.500"]),
            "event": ["elected", "broker_startup"],
            "epoch": [2, None],
        }
    ).astype({"epoch": "Int64"})
    html = blank_missing(df).to_html()
    assert "&lt;NA&gt;" not in html and "<NA>" not in html and ">2<" in html and "broker_startup" in html
    assert ">2024-03-04 00:00:00.000<" in html and ">2024-03-04 00:00:30.500<" in html
    assert "<NA>" in df.to_html() or "&lt;NA&gt;" in df.to_html()  # what pandas alone would show
    assert blank_missing(df).data is df


def test_sweep_table_regroups_the_same_numbers():
    import pandas as pd

    from kafka_lab.spark.sweep import summarise
    from kafka_lab.ui.lab08 import sweep_table

    results = pd.DataFrame(
        {
            "backlog": [100, 100, 400, 400],
            "control_plane": [False, False, False, False],
            "replication": [0, 1, 0, 1],
            "lai_wait_ms": [10.0, 12.0, 50.0, 52.0],
            "produce_p50_ms": [5.0, 6.0, 24.0, 25.0],
            "produce_p99_ms": [12.0, 13.0, 51.0, 52.0],
            "produces": [10, 10, 10, 10],
        }
    )
    flat = summarise(results)
    t = sweep_table(flat)
    assert list(t.index.names) == ["backlog", "control_plane"]
    assert t.loc[(400, False), ("lai_wait_ms", "mean")] == 51.0 and t.loc[(100, False), ("", "replications")] == 2
    for _, row in flat.iterrows():
        for col in flat.columns.drop(["backlog", "control_plane"]):
            key = ("", col) if col == "replications" else tuple(col.rsplit("_", 1))
            assert t.loc[(row["backlog"], row["control_plane"]), key] == round(row[col], 2)


def test_waits_table_regroups_the_same_numbers_under_one_heading():
    """The waits table was cut at the notebook's right edge: its flat ``requestQueueTimeMs_p99`` names are now one
    heading over p50, p99 and max, with broker, listener and API as the row labels. The same numbers."""
    import pandas as pd

    from kafka_lab.ui.lab08 import waits_table

    flat = pd.DataFrame(
        {
            "broker": [1, 2],
            "listener": ["PLAINTEXT", "CONTROLLER"],
            "api": ["LEADER_AND_ISR", "LEADER_AND_ISR"],
            "count": [16, 17],
            "requestQueueTimeMs_p50": [0.0, 0.0],
            "requestQueueTimeMs_p99": [9.2734, 0.0],
            "requestQueueTimeMs_max": [9.27, 0.0],
        }
    )
    t = waits_table(flat)
    assert list(t.index.names) == ["broker", "listener", "api"]
    assert list(t.columns) == [("", "count"), *(("requestQueueTimeMs", s) for s in ("p50", "p99", "max"))]
    assert t.loc[(1, "PLAINTEXT", "LEADER_AND_ISR"), ("requestQueueTimeMs", "p99")] == 9.27
    assert t.loc[(2, "CONTROLLER", "LEADER_AND_ISR"), ("", "count")] == 17
    assert "waits_table(analyses.controller_request_waits(tables.requests))" in SRC


def test_queue_figure_draws_produce_over_fetch_in_a_line_of_its_own():
    """A follower fetches what was just produced, so FETCH's p99 follows PRODUCE's second by second; drawn after it
    in the same style it hid it. PRODUCE is drawn last of the lines, wider, and each line has its own dash; the
    legend keeps the lab's order."""
    import pandas as pd

    from kafka_lab.ui.lab08 import API_COLOURS, queue_figure

    t = pd.date_range("2024-03-04", periods=3, freq="s")
    rows = [(t[i], 1, api, v, 5) for api in API_COLOURS for i, v in enumerate((0.0, 6.7, 0.0))]
    per_second = pd.DataFrame(rows, columns=["window_start", "broker", "api", "requestQueueTimeMs_p99", "count"])
    fig = queue_figure(per_second, broker=1)
    lines = [tr for tr in fig.data if tr.mode == "lines"]
    assert [tr.name for tr in lines][-1] == "PRODUCE" and {tr.name for tr in lines} == {"PRODUCE", "FETCH", "METADATA"}
    assert len({tr.line.dash for tr in lines}) == 3 and max(lines, key=lambda tr: tr.line.width).name == "PRODUCE"
    assert [tr.name for tr in sorted(fig.data, key=lambda tr: tr.legendrank)] == list(API_COLOURS)

"""Simulations as a Spark job (kafka_lab.spark.sweep): the same table on Spark as in a local loop."""

import numpy as np
import pandas as pd
import pytest

from kafka_lab.cli import main
from kafka_lab.sim.experiments import controller_behind_backlog
from kafka_lab.spark import sweep

GRID = {"backlog": [50, 200], "control_plane": [False, True]}


def test_sweep_on_spark_equals_the_local_loop(spark):
    local = sweep.run(GRID, replications=3, seed=7)
    on_spark = sweep.run(GRID, replications=3, seed=7, spark=spark)
    assert len(local) == 2 * 2 * 3
    pd.testing.assert_frame_equal(on_spark, local)


def test_each_task_is_the_simulation_it_names():
    """A task's row is controller_behind_backlog run with its parameters and seed (an independent call)."""
    row = sweep.run({"backlog": [200], "control_plane": [False]}, replications=2, seed=3).iloc[1]
    res = controller_behind_backlog(200, control_plane=False, deterministic=False, seed=int(row["seed"]))
    lai = res.request("LeaderAndIsr")
    assert row["lai_wait_ms"] == pytest.approx(lai["dequeue_ms"] - lai["sent_ms"], abs=1e-6)
    assert row["seed"] == sweep.task_seed(3, 1)


def test_replications_differ_and_the_control_plane_does_not_wait():
    df = sweep.run({"backlog": [200], "control_plane": [False, True]}, replications=3, seed=0)
    data = df[~df["control_plane"]]["lai_wait_ms"]
    assert data.nunique() == 3  # random service times: each replication its own draw
    # lab 03's rule, backlog x mean service / handlers = 200 x 1 ms / 8 = 25 ms, within sampling noise
    assert 15 < data.mean() < 35
    assert (df[df["control_plane"]]["lai_wait_ms"] < 1.0).all()


def test_same_seed_same_table_and_seed_matters():
    a = sweep.run(GRID, replications=2, seed=1)
    pd.testing.assert_frame_equal(a, sweep.run(GRID, replications=2, seed=1))
    assert not a["lai_wait_ms"].equals(sweep.run(GRID, replications=2, seed=2)["lai_wait_ms"])


@pytest.mark.parametrize(
    "grid, reps, message",
    [
        ({"backlogs": [1]}, 1, "unknown sweep parameter 'backlogs'"),
        ({"backlog": []}, 1, "has no values"),
        ({"backlog": ["10"]}, 1, "takes int values"),
        ({"control_plane": [1]}, 1, "takes bool values"),
        # an int parameter's fraction was truncated: backlog 2.5 ran as 2
        ({"backlog": [100, 2.5]}, 1, "sweep parameter 'backlog' takes whole numbers, not 2.5"),
        ({"num_io_threads": [np.float64(7.9)]}, 1, "sweep parameter 'num_io_threads' takes whole numbers, not 7.9"),
        ({"backlog": [float("nan")]}, 1, "sweep parameter 'backlog' takes finite int values, not nan"),
        ({"service_ms": [float("inf")]}, 1, "sweep parameter 'service_ms' takes finite float values, not inf"),
        (GRID, 0, "replications must be a whole number of at least 1"),
    ],
)
def test_bad_grids_say_what_is_accepted(grid, reps, message):
    with pytest.raises(ValueError, match=message):
        sweep.tasks(grid, reps)


def test_whole_floats_are_taken_for_int_parameters():
    t = sweep.tasks({"backlog": [100.0], "num_io_threads": [np.int64(4)], "service_ms": [1]}, 1)
    assert t[0]["backlog"] == 100 and type(t[0]["backlog"]) is int and type(t[0]["num_io_threads"]) is int
    assert t[0]["service_ms"] == 1.0 and type(t[0]["service_ms"]) is float


def test_cli_sweep_without_spark(tmp_path, capsys):
    out = tmp_path / "runs.csv"
    assert (
        main(
            [
                "sweep",
                "--backlog",
                "50,100",
                "--control-plane",
                "off",
                "--replications",
                "2",
                "--no-spark",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    got = pd.read_csv(out)
    want = sweep.run({"backlog": [50, 100], "control_plane": [False]}, replications=2, seed=0)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert "replications" in capsys.readouterr().out


def test_cli_sweep_rejects_a_bad_backlog(capsys):
    with pytest.raises(SystemExit) as e:
        main(["sweep", "--backlog", "many", "--no-spark"])
    assert e.value.code == 2 and "whole numbers separated by commas" in capsys.readouterr().err


def test_cli_sweep_checks_where_it_writes_before_it_runs(tmp_path, capsys, monkeypatch):
    """--out into a directory that does not exist once failed with pandas' traceback after every simulation
    had run; now it is refused first, and nothing runs."""
    from kafka_lab.spark import sweep

    monkeypatch.setattr(sweep, "run", lambda *a, **k: pytest.fail("the sweep ran"))
    out = tmp_path / "missing" / "runs.csv"
    assert main(["sweep", "--no-spark", "--backlog", "100", "--replications", "1", "--out", str(out)]) == 2
    assert f"no directory '{tmp_path / 'missing'}' to write it in" in capsys.readouterr().err

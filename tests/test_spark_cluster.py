"""``kafka-lab analyze`` and ``kafka-lab sweep`` on a real Spark standalone cluster: a master and a worker
started on 127.0.0.1 with the ``spark-class`` pyspark ships. Same results as in local mode."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from kafka_lab.spark import sweep

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(log: Path, text: str, proc, timeout_s: float = 120):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"{text!r} never appeared in {log}:\n{log.read_text(errors='replace')[-3000:]}")


#: master URL -> the directory holding its workers' work directories (work-1, work-2)
_WORK: dict = {}


def standalone_work_dirs(url: str) -> Path:
    return _WORK[url]


def _env():
    return {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A Spark standalone master and two workers (1 core, 1 GiB each) on 127.0.0.1: a job's tasks run in two
    executor processes, as on a cluster of machines. Yields the master URL."""
    pyspark = pytest.importorskip("pyspark")
    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    tmp = tmp_path_factory.mktemp("standalone")
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        mlog = tmp / "master.log"
        procs.append(
            subprocess.Popen(
                [
                    str(spark_class),
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(_free_port()),
                ],
                stdout=mlog.open("w"),
                stderr=subprocess.STDOUT,
                env=_env(),
                start_new_session=True,
            )
        )
        _wait_for(mlog, "I have been elected leader", procs[0])
        for w in (1, 2):
            wlog = tmp / f"worker-{w}.log"
            procs.append(
                subprocess.Popen(
                    [
                        str(spark_class),
                        "org.apache.spark.deploy.worker.Worker",
                        url,
                        "--host",
                        "127.0.0.1",
                        "--cores",
                        "1",
                        "--memory",
                        "1g",
                        "--webui-port",
                        str(_free_port()),
                        "--work-dir",
                        str(tmp / f"work-{w}"),
                    ],
                    stdout=wlog.open("w"),
                    stderr=subprocess.STDOUT,
                    env=_env(),
                    start_new_session=True,
                )
            )
            _wait_for(wlog, "Successfully registered with master", procs[-1])
        _WORK[url] = tmp
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def _cli(*args, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "kafka_lab", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
        cwd=REPO,
    )


def test_analyze_on_a_standalone_cluster_equals_local_mode(standalone, spark, spark_tables, small_logs, tmp_path):
    """The full parse (every table, summary.json) with its tasks in two workers' executors: the same tables."""
    r = _cli("analyze", str(small_logs), "--out", str(tmp_path / "cluster"), "--master", standalone)
    assert r.returncode == 0, r.stderr[-3000:]
    # both workers ran the application's executors (each writes its stderr under its work directory)
    work = list(Path(standalone_work_dirs(standalone)).glob("work-*/app-*/*/stderr"))
    assert len({p.parents[2].name for p in work}) == 2, work
    on_cluster = json.loads((tmp_path / "cluster" / "summary.json").read_text())
    # local mode: the same pipeline on the test session (spark_tables); its counts are checked against the
    # ground truth in test_spark_pipeline.py, so both must equal the generator's own counts
    truth = json.loads((small_logs / "ground-truth.json").read_text())["lines"]
    assert {k: on_cluster[k] for k in truth} == truth == spark_tables.counts()
    # the same rows, not only the same counts
    for table in ("requests", "truncations"):
        a = spark.read.parquet(str(tmp_path / "cluster" / table))
        b = spark_tables.table(table)
        assert on_cluster["tables"][table] == b.count()
        assert a.exceptAll(b.select(*a.columns)).count() == 0, table


def test_sweep_on_a_standalone_cluster_equals_the_local_loop(standalone, tmp_path):
    out = tmp_path / "runs.csv"
    r = _cli(
        "sweep", "--backlog", "50,200", "--replications", "2", "--seed", "5", "--master", standalone, "--out", str(out)
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "on Spark (spark://127.0.0.1:" in r.stderr
    got = pd.read_csv(out)
    want = sweep.run({"backlog": [50, 200], "control_plane": [False, True]}, replications=2, seed=5)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)

"""The SparkSession factory keeps a notebook quiet without hiding errors (kafka_lab.spark.session)."""

import os
import subprocess
import sys
import threading

import pytest

from kafka_lab.spark.session import JVM_NOISE, _forward


def test_the_forwarder_drops_only_the_listed_noise():
    r, w = os.pipe()
    out_r, out_w = os.pipe()
    t = threading.Thread(target=_forward, args=(r, out_w))
    t.start()
    os.write(
        w, (JVM_NOISE[0] + "\nError: JAVA_HOME is not set\n" + JVM_NOISE[0] + "\r\nlast line, no newline").encode()
    )
    os.close(w)
    t.join(5)
    os.close(out_w)
    with os.fdopen(out_r, "rb") as f:
        got = f.read().decode()
    assert got == "Error: JAVA_HOME is not set\nlast line, no newline"


def test_a_new_session_shows_the_jvms_stderr_but_not_its_incubator_warning(tmp_path):
    """A fresh interpreter starts Spark as a notebook does; ``JAVA_TOOL_OPTIONS`` makes the JVM write a
    line of its own to stderr at start-up, which must still come through. A task that fails (a corrupt
    .gz) reaches the caller as one line, and the JVM prints no stack trace of it on stderr (its executor
    and scheduler loggers are off in ``log4j2.properties``: the error is the action's, not a log's)."""
    pytest.importorskip("pyspark")
    logs = tmp_path / "logs" / "broker-1"
    logs.mkdir(parents=True)
    (logs / "server.log.gz").write_bytes(b"this is not gzip\n" * 10)
    code = (
        "from kafka_lab.spark.session import get_session; from kafka_lab.spark.pipeline import analyze\n"
        "s = get_session(); print(s.range(5).count())\n"
        f"try: analyze(s, {str(tmp_path / 'logs')!r}, {str(tmp_path / 'out')!r})\n"
        "except ValueError as e: print(e)\n"
        "s.stop()"
    )
    env = dict(os.environ, JAVA_TOOL_OPTIONS="-Dkafka.lab.probe=1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    count, error = r.stdout.strip().splitlines()
    assert count == "5"
    assert error.startswith("cannot read the Kafka logs under ") and error.endswith(
        "(java.io.IOException: not a gzip file)"
    )
    assert "Picked up JAVA_TOOL_OPTIONS: -Dkafka.lab.probe=1" in r.stderr
    assert JVM_NOISE[0] not in r.stderr
    assert "\tat " not in r.stderr and "Exception" not in r.stderr, r.stderr[-2000:]


def test_describe_names_the_version_master_parallelism_and_memory(spark):
    from kafka_lab.spark.session import describe

    line = describe(spark)
    sc = spark.sparkContext
    assert line.startswith(f"Spark {spark.version} on {sc.master}: {sc.defaultParallelism} tasks at a time, ")
    assert "driver memory 1g" in line and line.endswith("time zone UTC")

"""The SparkSession factory: a quiet ``local[*]`` by default, any cluster when asked.

:func:`get_session` returns, in this order: the ``spark`` session given; the active session, when
there is one and no master is asked for; else a new session on ``master``, ``$SPARK_MASTER``, the
master ``spark-submit --master`` set (when it launched this program), or ``local[*]``. A new session is quiet (docs/recipes.md): loopback only (``SPARK_LOCAL_IP``), no web UI,
no console progress bars, errors only in the driver's log (``log4j2.properties`` beside this module),
``spark.sql.shuffle.partitions`` small, Python tasks in this interpreter (``PYSPARK_PYTHON``) when
local, and UTC as the session time zone, so that log4j's dates, which
carry no zone, read the same on every machine (the generator writes UTC).

The one line no setting silences is the JVM's own ``WARNING: Using incubator modules:
jdk.incubator.vector`` (Spark 4 starts Java with that module, and Java announces it on stderr before any
logging is configured). A notebook shows it under the cell that starts Spark, as if something were
wrong, so :func:`get_session` launches the JVM with its stderr through a pipe that drops exactly that
line and passes every other line on to this process's stderr, for the JVM's whole life (an error from
Java, or from Spark's own logging, still shows).
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["get_session", "describe", "LOG4J2", "DEFAULT_MASTER", "JVM_NOISE"]

LOG4J2 = Path(__file__).with_name("log4j2.properties")
DEFAULT_MASTER = "local[*]"
#: the JVM's stderr lines that carry no information for a learner (dropped; everything else passes)
JVM_NOISE = ("WARNING: Using incubator modules: jdk.incubator.vector",)


def _forward(read_fd: int, out_fd: int) -> None:
    """Copy lines from ``read_fd`` to ``out_fd`` until the writers close it, leaving out :data:`JVM_NOISE`."""
    with os.fdopen(read_fd, "rb") as r:
        for line in r:
            if line.rstrip(b"\r\n").decode("utf-8", "replace") not in JVM_NOISE:
                with suppress(OSError):  # this process's stderr is gone: nothing left to show the line on
                    os.write(out_fd, line)


@contextmanager
def _filtered_stderr():
    """While inside, file descriptor 2 is a pipe whose lines reach the real stderr without
    :data:`JVM_NOISE`; a child started inside (the JVM) keeps the pipe after the block."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable fd 2 (an embedded interpreter): launch as is
        yield
        return
    r, w = os.pipe()
    threading.Thread(target=_forward, args=(r, os.dup(saved)), name="jvm-stderr", daemon=True).start()
    os.dup2(w, 2)
    os.close(w)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _has_pyarrow() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def get_session(master: str | None = None, *, spark=None, app_name: str = "kafka-lab", driver_memory: str = "1g"):
    """A SparkSession (see the module)."""
    if spark is not None:
        return spark
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # under spark-submit, which has set the master
    master = master or os.environ.get("SPARK_MASTER") or (None if submitted else DEFAULT_MASTER)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if master is not None and master.startswith("local"):
        # Python tasks (kafka-lab sweep) run in this interpreter's environment, not whatever python3 is on PATH;
        # on a cluster, PYSPARK_PYTHON names the workers' interpreter
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder if master is None else SparkSession.builder.master(master)
    builder = (
        builder.appName(app_name)
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(max(2, os.cpu_count() or 2)))
        .config("spark.sql.session.timeZone", "UTC")
        # toPandas through Arrow when pyarrow is installed (it is pinned: requirements.in); without it, no
        # attempt and no warning
        .config("spark.sql.execution.arrow.pyspark.enabled", "true" if _has_pyarrow() else "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{LOG4J2}")
    )
    from pyspark import SparkContext

    if SparkContext._gateway is None:  # this call starts the JVM
        with _filtered_stderr():
            s = builder.getOrCreate()
    else:
        s = builder.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    return s


def describe(spark) -> str:
    """One line on where a session runs: Spark's version, the master, the parallelism (for ``local[*]``
    the cores) and the driver's memory. (A session's own display links to a web UI that the quiet
    session does not start.)"""
    sc = spark.sparkContext
    conf = sc.getConf()
    return (
        f"Spark {spark.version} on {sc.master}: {sc.defaultParallelism} tasks at a time, "
        f"driver memory {conf.get('spark.driver.memory', '1g')}, time zone {spark.conf.get('spark.sql.session.timeZone')}"
    )

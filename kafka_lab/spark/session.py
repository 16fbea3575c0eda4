"""The SparkSession factory: a quiet ``local[*]`` by default, any cluster when asked.

:func:`get_session` returns, in this order: the ``spark`` session given; the active session, when
there is one and no master is asked for; else a new session on ``master``, ``$SPARK_MASTER``, the
master ``spark-submit --master`` set (when it launched this program), or ``local[*]``. A new session is quiet (docs/recipes.md): loopback only (``SPARK_LOCAL_IP``), no web UI,
no console progress bars, errors only in the driver's log (``log4j2.properties`` beside this module),
``spark.sql.shuffle.partitions`` small, Python tasks in this interpreter (``PYSPARK_PYTHON``) when
local, and UTC as the session time zone, so that log4j's dates, which
carry no zone, read the same on every machine (the generator writes UTC).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["get_session", "LOG4J2", "DEFAULT_MASTER"]

LOG4J2 = Path(__file__).with_name("log4j2.properties")
DEFAULT_MASTER = "local[*]"


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
        # toPandas without pyarrow (not a dependency): no attempt, no warning
        .config("spark.sql.execution.arrow.pyspark.enabled", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{LOG4J2}")
    )
    s = builder.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    return s

"""Test-suite settings shared by every test module."""

import os

from hypothesis import HealthCheck, settings

# A 2-core CI machine runs notebooks and a browser beside these tests: wall-clock deadlines would
# only measure the neighbours. Speed is measured in benchmarks/, not here.
settings.register_profile(
    "kafka-lab",
    deadline=None,
    max_examples=int(os.environ.get("KAFKA_LAB_HYPOTHESIS_EXAMPLES", "100")),
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
)
settings.load_profile("kafka-lab")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def small_logs(tmp_path_factory):
    """A generated log directory: 3 brokers, 90 simulated seconds, seed 1: a leader move every 20 s (at 10,
    30 and 70 s: a spike on each broker) and the rolling restart from 45 s (brokers 2, 3, then 1, the
    controller). Shared by the log and Spark tests (small: a few thousand lines)."""
    from kafka_lab.logs.scenario import generate

    root = tmp_path_factory.mktemp("logs")
    generate(root, hours=90 / 3600, brokers=3, seed=1, event_every_s=20)
    return root


@pytest.fixture(scope="session")
def spark():
    """One quiet local Spark session for the whole test run (kafka_lab.spark.session)."""
    pytest.importorskip("pyspark")
    from kafka_lab.spark.session import get_session

    s = get_session("local[2]")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def spark_tables(spark, small_logs):
    """:func:`kafka_lab.spark.pipeline.parse` of ``small_logs``, records cached."""
    from kafka_lab.spark.pipeline import parse

    t = parse(spark, str(small_logs))
    t.records.cache()
    t.requests.cache()
    return t

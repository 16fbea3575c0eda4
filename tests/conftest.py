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

"""The committed sample of a cluster's logs (``data/sample-logs/``), lab 08's data, and how it was made.

:data:`SAMPLE_OPTIONS` are the :func:`kafka_lab.logs.scenario.generate` arguments that wrote it (the same
as ``kafka-lab generate-logs data/sample-logs --hours 0.016666666667 --event-every 10 --seed 8
--damage 0.002 --gzip --replace``): one simulated minute of three brokers half-way through KIP-291 (broker 2 has
the control plane, brokers 1 and 3 do not; the controller, broker 1, does not name it, so broker 2's control
plane serves nothing until the controller moves to broker 2), a leader move with a load spike on each broker
in turn, a rolling restart from the 30th second (brokers 2, 3, then 1, whose restart moves the controller to
broker 2),
0.2 % of the lines damaged, every file gzip-compressed (Spark reads them as text).
``tests/test_lab08.py`` regenerates it and compares every byte.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

__all__ = ["SAMPLE_DIR", "SAMPLE_OPTIONS", "sample_dir", "ground_truth"]

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "data" / "sample-logs"
SAMPLE_OPTIONS = {"hours": 0.016666666667, "brokers": 3, "seed": 8, "damage": 0.002, "event_every_s": 10, "gzip": True}


def sample_dir() -> Path:
    """The sample's directory; FileNotFoundError saying how to make it when it is missing."""
    if not (SAMPLE_DIR / "ground-truth.json").is_file():
        raise FileNotFoundError(
            f"no log sample at {SAMPLE_DIR}: it comes with the repository (data/sample-logs); to write it again, "
            "run kafka-lab generate-logs data/sample-logs --hours 0.016666666667 --event-every 10 --seed 8 "
            "--damage 0.002 --gzip --replace"
        )
    return SAMPLE_DIR


@cache
def ground_truth() -> dict:
    """The sample's ``ground-truth.json``: what the simulation wrote (counts, percentiles, truncations)."""
    return json.loads((sample_dir() / "ground-truth.json").read_text())

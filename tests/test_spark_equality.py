"""Issue 34's rewrite of the pipeline (each line classified once) gives today's tables, row for row.

The reference is the pipeline as it was before the rewrite, frozen in ``tests/legacy_pipeline.py`` with
that commit's layout patterns. Both parse the same directories: generated logs (damaged, stack traces, a
rolling restart, split across tasks), lab 08's sample, and the real and tricky lines of ``tests/data``;
every table must hold the same rows in the columns the old tables have (the new ones may add columns).
"""

import json
from pathlib import Path

import legacy_pipeline as legacy
import pytest

from kafka_lab.logs.sample import sample_dir
from kafka_lab.logs.scenario import generate
from kafka_lab.spark import pipeline

pytestmark = pytest.mark.slow
DATA = Path(__file__).parent / "data"


def _same_rows(old, new, name):
    cols = old.columns
    missing = [c for c in cols if c not in new.columns]
    assert not missing, f"{name}: the new table lacks {missing}"
    if name == "controller_events":  # the new one also reads KRaft's controller (other loggers)
        new = new.where(new.logger.startswith("kafka.controller"))
    if name == "requests":  # the new one keeps the body of the controller's requests only
        from pyspark.sql import functions as F

        old = old.withColumn("request", F.when(old.api.isin(*pipeline.CONTROLLER_APIS), old.request))
    a, b = old.select(*cols), new.select(*cols)
    only_old = a.exceptAll(b).limit(5).collect()
    only_new = b.exceptAll(a).limit(5).collect()
    assert not only_old and not only_new, f"{name}: only in the old table {only_old}; only in the new {only_new}"
    return a.count()


def _compare(spark, root, mode="auto"):
    old = legacy.parse(spark, str(root))
    new = pipeline.parse(spark, str(root), mode=mode)
    try:
        assert new.counts() == old.counts()
        sizes = {name: _same_rows(old.table(name), new.table(name), name) for name in pipeline.TABLES}
    finally:
        old.unpersist()
        new.unpersist()
    return sizes


def test_generated_logs_with_damage_and_a_restart(spark, tmp_path):
    generate(tmp_path, hours=40 / 3600, brokers=3, seed=11, damage=0.02, event_every_s=8)
    sizes = _compare(spark, tmp_path)
    assert sizes["records"] > 10_000 and sizes["rejects"] > 50 and sizes["requests"] > 10_000
    assert sizes["truncations"] > 0 and sizes["controller_events"] > 0 and sizes["state_changes"] > 0


def test_generated_logs_read_in_many_splits(spark, tmp_path):
    generate(tmp_path, hours=15 / 3600, brokers=2, seed=3, damage=0.03, event_every_s=5)
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(128 * 1024))
    try:
        assert spark.read.text(str(tmp_path / "broker-1" / "kafka-request.log")).rdd.getNumPartitions() > 1
        sizes = _compare(spark, tmp_path, mode="splits")
        assert _compare(spark, tmp_path, mode="files") == sizes
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)
    assert sizes["rejects"] > 0


def test_the_older_text_request_log(spark, tmp_path):
    generate(tmp_path, hours=6 / 3600, brokers=2, seed=4, request_format="text", damage=0.01, event_every_s=3)
    assert _compare(spark, tmp_path)["requests"] > 1000


def test_lab08_sample(spark):
    assert _compare(spark, sample_dir())["records"] > 17_000


#: tricky cases the rewrite reads differently on purpose: a record behind a prefix the old layout list did not know
CHANGED = {"non-ascii-compose-name"}


def test_real_and_tricky_lines(spark, tmp_path):
    for i, case in enumerate(json.loads((DATA / "real_log_lines.json").read_text())):
        if case.get("any_prefix"):  # a record behind a prefix the old layout list did not know
            continue
        (tmp_path / f"real-{i}").mkdir()
        (tmp_path / f"real-{i}" / "server.log").write_text("\n".join(case["lines"]) + "\n")
    for case in json.loads((DATA / "tricky_lines.json").read_text()):
        if case["id"] in CHANGED:
            continue
        (tmp_path / case["id"]).mkdir()
        (tmp_path / case["id"] / "server.log").write_bytes(case["text"].encode("utf-8"))
    assert _compare(spark, tmp_path)["records"] > 20

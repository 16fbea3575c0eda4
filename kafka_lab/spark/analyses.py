"""The questions lab 08 asks of a cluster's logs, on the tables of :mod:`.pipeline`.

Each function takes Spark DataFrames and returns a small pandas DataFrame (the answer, ordered), so a
notebook can show or plot it. Each agrees with the generator's ground truth (tests/test_spark_pipeline.py).

- :func:`request_percentiles`: count and exact percentiles (``percentile``, linear interpolation, as
  numpy's default) of each request-log phase, per broker, API and listener;
- :func:`latency_over_time`: the same per time bucket;
- :func:`control_plane`: which brokers have a control plane (KIP-291), from ``server.log``'s start-up lines
  (the request log cannot tell: the listener a LeaderAndIsr arrives on is the controller's choice, and no
  field names the plane that served it);
- :func:`controller_request_waits`: LeaderAndIsr and UpdateMetadata queue times per broker;
- :func:`staleness`: per controller decision and broker, how long the broker's metadata stayed stale
  (the decision's ``Changed partition`` line to the broker's ``UpdateMetadata`` that carried it);
- :func:`truncated_records`: records truncated per broker and partition;
- :func:`controller_timeline`: the controller's log and its partition decisions, in order;
- :func:`controller_changes`: elections, resignations, and brokers shutting down, leaving and joining.
"""

from __future__ import annotations

import math

#: the controller's requests (2.8's ``requestApiKeyName``): the ones whose body the pipeline keeps in
#: ``requests.request``, and the ones these questions ask about
CONTROLLER_APIS = ("LEADER_AND_ISR", "UPDATE_METADATA", "STOP_REPLICA")

__all__ = [
    "PHASES",
    "CONTROLLER_APIS",
    "request_percentiles",
    "latency_over_time",
    "control_plane",
    "controller_request_waits",
    "staleness",
    "staleness_by_broker",
    "truncated_records",
    "controller_timeline",
    "controller_changes",
]

PHASES = ("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "remoteTimeMs", "responseQueueTimeMs", "sendTimeMs")


def _check_quantiles(quantiles) -> tuple:
    qs = tuple(float(q) for q in quantiles)
    if not qs or any(not 0.0 <= q <= 1.0 for q in qs):
        raise ValueError(f"quantiles are numbers between 0 and 1, got {quantiles!r}")
    return qs


def _pname(phase: str, q: float) -> str:
    return f"{phase}_p{round(q * 100)}" if q * 100 == round(q * 100) else f"{phase}_p{q * 100:g}"


def request_percentiles(requests, by=("broker", "api", "listener"), phases=PHASES, quantiles=(0.5, 0.99)):
    """``count`` and ``<phase>_p<q>`` per group ``by`` (pandas, ordered by ``by``)."""
    from pyspark.sql import functions as F

    qs = _check_quantiles(quantiles)
    unknown = set(phases) - set(PHASES)
    if unknown:
        raise ValueError(f"unknown phase(s) {sorted(unknown)}; the request log's phases are {list(PHASES)}")
    aggs = [F.count("*").alias("count")]
    for p in phases:
        for q in qs:
            aggs.append(F.percentile(F.col(p), F.lit(q)).alias(_pname(p, q)))
    return requests.groupBy(*by).agg(*aggs).orderBy(*by).toPandas()


def latency_over_time(
    requests, every: str = "1 minute", phase: str = "requestQueueTimeMs", quantile: float = 0.99, apis=None
):
    """Per time bucket (``window_start``), broker and API: ``count`` and the ``quantile`` of ``phase``."""
    from pyspark.sql import functions as F

    (q,) = _check_quantiles([quantile])
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}; the request log's phases are {list(PHASES)}")
    df = requests if apis is None else requests.where(F.col("api").isin(list(apis)))
    return (
        df.groupBy(F.window("timestamp", every).start.alias("window_start"), "broker", "api")
        .agg(F.count("*").alias("count"), F.percentile(F.col(phase), F.lit(q)).alias(_pname(phase, q)))
        .orderBy("window_start", "broker", "api")
        .toPandas()
    )


#: SocketServer.startup's lines (2.8): one per listener, the control plane's first
_ACCEPTOR = r"Created (control|data)-plane acceptor and processors? for endpoint : ListenerName\((.+)\)"


def control_plane(records):
    """Per broker (pandas, by broker): ``control_plane_listener`` (None without one), ``data_plane_listeners`` and
    ``control_plane`` (True when it has one), from the ``SocketServer`` lines each broker writes to ``server.log``
    as it starts: ``Created control-plane acceptor and processor for endpoint : ListenerName(X)`` for the listener
    its own ``control.plane.listener.name`` names, ``Created data-plane acceptor and processors ...`` for each
    other one. For each listener, the broker's latest start-up counts.

    The request log cannot answer this (docs/kafka-reference.md §2): the listener a LeaderAndIsr arrives on is
    the one the *controller's* config names, the same for every broker, and no field says which plane served it.
    """
    from pyspark.sql import functions as F

    lines = records.where((F.col("logger") == "kafka.network.SocketServer") & F.col("message").rlike(_ACCEPTOR))
    planes = lines.select(
        "broker",
        "timestamp",
        F.regexp_extract("message", _ACCEPTOR, 1).alias("plane"),
        F.regexp_extract("message", _ACCEPTOR, 2).alias("listener"),
    )
    # each listener's plane as its broker's latest start-up logged it
    last = planes.groupBy("broker", "listener").agg(F.max_by("plane", "timestamp").alias("plane"))
    out = (
        last.groupBy("broker")
        .agg(
            F.max(F.when(F.col("plane") == "control", F.col("listener"))).alias("control_plane_listener"),
            F.array_sort(F.collect_list(F.when(F.col("plane") == "data", F.col("listener")))).alias(
                "data_plane_listeners"
            ),
        )
        .withColumn("control_plane", F.col("control_plane_listener").isNotNull())
        .orderBy("broker")
        .toPandas()
    )
    out["data_plane_listeners"] = out["data_plane_listeners"].map(list)
    return out


def controller_request_waits(requests, quantiles=(0.5, 0.99)):
    """LeaderAndIsr and UpdateMetadata per broker: count, percentiles and max of ``requestQueueTimeMs``."""
    from pyspark.sql import functions as F

    qs = _check_quantiles(quantiles)
    aggs = [F.count("*").alias("count")]
    aggs += [F.percentile("requestQueueTimeMs", F.lit(q)).alias(_pname("requestQueueTimeMs", q)) for q in qs]
    aggs.append(F.max("requestQueueTimeMs").alias("requestQueueTimeMs_max"))
    return (
        requests.where(F.col("api").isin("LEADER_AND_ISR", "UPDATE_METADATA"))
        .groupBy("broker", "listener", "api")
        .agg(*aggs)
        .orderBy("api", "broker")
        .toPandas()
    )


def _um_schema():
    from pyspark.sql import types as T

    ps = T.StructType([T.StructField("partitionIndex", T.IntegerType()), T.StructField("leaderEpoch", T.IntegerType())])
    ts = T.StructType([T.StructField("topicName", T.StringType()), T.StructField("partitionStates", T.ArrayType(ps))])
    return T.StructType([T.StructField("topicStates", T.ArrayType(ts))])


def staleness(state_changes, requests):
    """Spark DataFrame: per controller decision and broker, ``stale_ms`` = when the broker applied an
    UpdateMetadata carrying the partition at the decision's leader epoch (or newer) − the decision's time."""
    from pyspark.sql import functions as F

    decisions = state_changes.where(F.col("event") == "partition_changed").select(
        F.col("actor_id").alias("controller"),
        "topic",
        F.col("partition").cast("int").alias("partition"),
        "leader_epoch",
        F.unix_millis("timestamp").alias("decided_ms"),
    )
    applied = state_changes.where(F.col("event") == "update_metadata_applied").select(
        "broker",
        "correlation_id",
        F.col("controller_id").alias("controller"),
        F.unix_millis("timestamp").alias("applied_ms"),
    )
    j = F.from_json("request", _um_schema())
    carried = (
        requests.where((F.col("api") == "UPDATE_METADATA") & F.col("request").isNotNull())
        .select(
            "broker",
            F.col("client_id").cast("long").alias("controller"),
            "correlation_id",
            F.explode(j["topicStates"]).alias("t"),
        )
        .select(
            "broker",
            "controller",
            "correlation_id",
            F.col("t.topicName").alias("topic"),
            F.explode("t.partitionStates").alias("p"),
        )
        .select(
            "broker",
            "controller",
            "correlation_id",
            "topic",
            F.col("p.partitionIndex").alias("partition"),
            F.col("p.leaderEpoch").alias("epoch"),
        )
    )
    um = applied.join(carried, ["broker", "controller", "correlation_id"])
    cand = decisions.join(um, ["controller", "topic", "partition"]).where(
        (F.col("epoch") >= F.col("leader_epoch")) & (F.col("applied_ms") >= F.col("decided_ms"))
    )
    return cand.groupBy("broker", "topic", "partition", "leader_epoch", "decided_ms").agg(
        (F.min("applied_ms") - F.col("decided_ms")).alias("stale_ms")
    )


def staleness_by_broker(state_changes, requests):
    """Per broker: staleness ``windows``, ``p50_ms`` and ``max_ms`` (pandas)."""
    from pyspark.sql import functions as F

    return (
        staleness(state_changes, requests)
        .groupBy("broker")
        .agg(
            F.count("*").alias("windows"),
            F.percentile("stale_ms", F.lit(0.5)).alias("p50_ms"),
            F.max("stale_ms").alias("max_ms"),
        )
        .orderBy("broker")
        .toPandas()
    )


def truncated_records(truncations):
    """Per broker and partition (pandas): truncations, records removed, and of them ``acknowledged``: those the
    broker removed as the move's old leader (acks=1: acknowledged, then lost); a follower's are copies."""
    from pyspark.sql import functions as F

    return (
        truncations.groupBy("broker", "topic", "partition")
        .agg(
            F.count("*").alias("events"),
            F.sum("records").alias("records"),
            F.sum(F.when(F.col("old_leader"), F.col("records")).otherwise(0)).alias("acknowledged"),
        )
        .orderBy("broker", "topic", "partition")
        .toPandas()
    )


def controller_changes(controller_events):
    """pandas: who was controller when, and each broker leaving and joining, from ``controller.log`` alone.

    One row per election (``elected``: the broker that won and its ``epoch``), resignation, controlled
    shutdown, broker failure (its session gone) and broker start-up (``target_broker``: the broker the
    controller acted on), in time order; ``broker`` is the controller that wrote the line. A KRaft cluster's
    logs add its fences and unfences (``broker_fenced``, ``broker_unfenced``: a session timed out, a broker
    caught up), written by the active controller and by the broker's lifecycle manager; ``broker`` is then the
    node of the directory (``controller-<id>/`` or ``broker-<id>/``).
    """
    from pyspark.sql import functions as F

    kinds = [
        "elected",
        "resigned",
        "controlled_shutdown",
        "broker_failure",
        "broker_startup",
        "broker_fenced",
        "broker_unfenced",
    ]
    return (
        controller_events.where(F.col("event").isin(kinds))
        .select("timestamp", "broker", "event", "epoch", "target_broker")
        .orderBy("timestamp", "broker")
        .toPandas()
        .astype({"epoch": "Int64", "target_broker": "Int64"})  # whole numbers, blank where none
    )


def controller_timeline(controller_events, state_changes, limit: int | None = 200):
    """The controller's log (``controller.log``) and its partition decisions (``state-change.log``), in order."""
    from pyspark.sql import functions as F

    ev = controller_events.select("timestamp", "broker", "event", "message")
    dec = state_changes.where(
        F.col("event").isin("partition_changed", "leader_and_isr_sent", "update_metadata_sent")
    ).select("timestamp", "broker", "event", "message")
    df = ev.unionByName(dec).orderBy("timestamp", "event")
    return (df.limit(limit) if limit else df).toPandas()


#: loggers only a KRaft node writes (3.x/4.x: the Raft client, the quorum controller, the metadata image and
#: loader, the broker's lifecycle manager, the KRaft servers), and loggers only a ZooKeeper-mode broker writes
#: (its ZooKeeper client, the ZooKeeper controller, ``KafkaServer``); a broker in KIP-866's migration writes both
KRAFT_LOGGERS = (
    "org.apache.kafka.raft",
    "kafka.raft",
    "org.apache.kafka.controller",
    "org.apache.kafka.image",
    "org.apache.kafka.metadata",
    "kafka.server.BrokerLifecycleManager",
    "kafka.server.BrokerServer",
    "kafka.server.ControllerServer",
    "kafka.server.KafkaRaftServer",
    "kafka.server.SharedServer",
    "kafka.server.metadata",
)
ZOOKEEPER_LOGGERS = (
    "kafka.zookeeper",
    "kafka.zk",
    "org.apache.zookeeper",
    "kafka.controller",
    "kafka.server.KafkaServer",
)


def _starts_with_any(col, prefixes):
    c = None
    for p in prefixes:
        e = (col == p) | col.startswith(p + ".") | col.startswith(p + "$")
        c = e if c is None else c | e
    return c


def log_modes(records):
    """Per broker (``None``: the lines of files outside any ``broker-<id>/`` directory): ``mode``, from the
    loggers of its records: ``kraft``, ``zookeeper``, ``zookeeper+kraft`` (KIP-866's migration: both) or
    ``unknown`` (neither kind of logger seen). One aggregation over the records."""
    from pyspark.sql import functions as F

    logger = F.col("logger")
    kraft, zk = _starts_with_any(logger, KRAFT_LOGGERS), _starts_with_any(logger, ZOOKEEPER_LOGGERS)
    rows = (
        records.groupBy("broker")
        .agg(F.max(kraft.cast("int")).alias("kraft"), F.max(zk.cast("int")).alias("zookeeper"))
        .collect()
    )
    names = {(1, 1): "zookeeper+kraft", (1, 0): "kraft", (0, 1): "zookeeper", (0, 0): "unknown"}
    modes = {r.broker: names[(r.kraft or 0, r.zookeeper or 0)] for r in rows}
    return {b: modes[b] for b in sorted(modes, key=lambda b: (b is None, b))}


def broker_key(broker) -> str:
    """A broker's key in ``summary.json``: its id, or ``"None"`` for the lines of files outside any
    ``broker-<id>/`` directory (pandas gives that broker as NaN, and the ids beside it as floats)."""
    if broker is None or (isinstance(broker, float) and math.isnan(broker)):
        return "None"
    return str(int(broker))


def summary_answers(tables) -> dict:
    """Lab 08's answers from the tables (``{name: DataFrame}``), for ``summary.json``: each broker's log mode,
    whether it has the control plane and its LeaderAndIsr p99 queue time; the records truncated per partition
    and of them acknowledged (``acks=1``, lost); the controller's moves (elections and resignations, ZooKeeper
    mode or KRaft)."""
    import pandas as pd

    def num(v, digits=3):
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(float(v), digits)

    req = tables["requests"]
    brokers = {}
    for b, mode in log_modes(tables["records"]).items():
        brokers[broker_key(b)] = {"mode": mode, "control_plane": None, "leader_and_isr_queue_p99_ms": None}
    cp = control_plane(tables["records"])  # from server.log: the request log cannot say (docs/kafka-reference.md §2)
    for r in cp.itertuples():
        brokers.setdefault(broker_key(r.broker), {"mode": "unknown", "leader_and_isr_queue_p99_ms": None})
        brokers[broker_key(r.broker)]["control_plane"] = bool(r.control_plane)
    # per broker, whatever the listener: the controller's config chose it, and it changes when the controller moves
    from pyspark.sql import functions as F

    p99 = (
        req.where(F.col("api") == "LEADER_AND_ISR")
        .groupBy("broker")
        .agg(F.percentile("requestQueueTimeMs", F.lit(0.99)).alias("p99"))
        .toPandas()
    )
    for r in p99.itertuples():
        brokers.setdefault(broker_key(r.broker), {"mode": "unknown", "control_plane": None})
        brokers[broker_key(r.broker)]["leader_and_isr_queue_p99_ms"] = num(r.p99)
    tr = truncated_records(tables["truncations"])
    per_partition = (
        tr.groupby(["topic", "partition"])[["events", "records", "acknowledged"]].sum().reset_index() if len(tr) else tr
    )
    moves = controller_changes(tables["controller_events"])
    moves = moves[moves["event"].isin(["elected", "resigned"])]
    return {
        "brokers": brokers,
        # the broker ids, then None (the lines of files outside any broker-<id>/ directory) if its lines say so
        "brokers_without_control_plane": sorted(
            (None if b == "None" else int(b) for b, v in brokers.items() if v["control_plane"] is False),
            key=lambda b: (b is None, b),
        ),
        "truncated": [
            {
                "topic": r.topic,
                "partition": int(r.partition),
                "records": int(r.records),
                "acknowledged": int(r.acknowledged),
            }
            for r in per_partition.itertuples()
        ],
        "acknowledged_then_truncated": int(tr["acknowledged"].sum()) if len(tr) else 0,
        "controller_moves": [
            {
                "time": None if pd.isna(r.timestamp) else r.timestamp.isoformat(),
                "event": r.event,
                "broker": None if pd.isna(r.broker) else int(r.broker),
                "epoch": None if pd.isna(r.epoch) else int(r.epoch),
            }
            for r in moves.itertuples()
        ],
    }

"""The Spark pipeline: a cluster's Kafka logs into Parquet tables, and the analyses of lab 08.

- :mod:`.session`: the SparkSession factory (quiet ``local[*]``, or any master);
- :mod:`.pipeline`: parsing with Spark's native functions (the patterns of :mod:`kafka_lab.logs.layout`)
  into ``records``, ``rejects``, ``requests``, ``state_changes``, ``controller_events`` and
  ``truncations``; :func:`.pipeline.analyze` writes them as Parquet with ``summary.json``;
- :mod:`.analyses`: the questions lab 08 asks of those tables.
"""

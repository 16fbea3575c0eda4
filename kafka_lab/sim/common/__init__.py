"""What every part of the model uses; Kafka keeps its counterparts in ``org.apache.kafka.common`` and ``kafka.metrics``.

- :mod:`.metrics`: metrics on the simulated clock under Kafka's names (gauges, thread-pool idle ratios), each an
  exact change log, sampled as a JMX poller would (``KafkaMetricsGroup``, ``org.apache.kafka.common.metrics``);
- :mod:`.distributions`: the service-time and arrival distributions, each drawing from a seeded stream;
- :mod:`.theory`: the queueing formulas the model is tested against (Erlang C, M/M/c);
- :mod:`.options`: every input's check at the call: the model's options, seeds, times, rates, Kafka's INT configs as
  ConfigDef reads them, and the size limits measured on the project's machine.

Nothing here imports the rest of :mod:`kafka_lab.sim`.
"""

"""The clients of a cluster, as Kafka's ``org.apache.kafka.clients`` (the producer and the consumer).

- :mod:`.producer`: the producer (``KafkaProducer``: accumulator, sender, retries, its own metadata and
  connections) and the metadata client it shares with the consumer;
- :mod:`.consumer`: a consumer that reads each partition up to its high watermark (``KafkaConsumer``, reduced);
- :mod:`.ledger`: where every record a producer handed over ended up (committed, offline, truncated, ...);
  not a Kafka component: the model's account of the producers' batches;
- :mod:`.workloads`: lab 03's open-loop clients of one broker (fixed partitions, no metadata of their own).

The producer and the consumer reach brokers through the network layer only; the ledger reads a finished run's
cluster (the controller's partition state, the replicas' logs) as an observer. Nothing here imports the server
or the controller.
"""

"""A broker's server side, as Kafka's ``kafka.server``, ``kafka.cluster`` and ``kafka.log`` packages.

- :mod:`.broker`: one broker (``KafkaServer``): its listeners, its planes (data, and control with KIP-291) and
  everything below, built from its properties;
- :mod:`.node`: the broker's process, the one gate its threads and timers pass: when it stops, they stop;
- :mod:`.config`: the broker settings the model reads, under Kafka's names and defaults (``KafkaConfig``),
  and the model's own knobs;
- :mod:`.handlers`: the request handler pool (``KafkaRequestHandlerPool``);
- :mod:`.apis`: what each request does and costs (``KafkaApis``);
- :mod:`.purgatory`: delayed produce and fetch (``DelayedOperationPurgatory``);
- :mod:`.replica_manager`: the replication rules: LeaderAndIsr, StopReplica, appends, follower fetches, HW and
  ISR (``ReplicaManager``);
- :mod:`.partition`: one replica of a partition and what a leader knows of its followers
  (``kafka.cluster.Partition``, ``Replica``);
- :mod:`.metadata_cache`: what the broker tells clients about the cluster (``MetadataCache``);
- :mod:`.fetcher`: the follower's fetcher threads (``ReplicaFetcherManager``, ``ReplicaFetcherThread``);
- :mod:`.alter_isr`: a leader's ISR changes sent to the controller (``AlterIsrManager``);
- :mod:`.log`: a replica's log, batches and leader-epoch cache (``kafka.log.Log``);
- :mod:`.producer_state`: what a log knows of each idempotent producer (``ProducerStateManager``).

The server imports the network layer and the common pieces, never the controller (:mod:`kafka_lab.sim.zk`,
:mod:`kafka_lab.sim.kraft`) nor the clients. It meets the controller at run time, through the cluster it
belongs to: its AlterIsr sender connects to the controller's broker, and on that broker ``KafkaApis`` hands
ControlledShutdown and AlterIsr to the controller object, as Kafka's ``KafkaApis`` hands them to the
``KafkaController`` of its own process.
"""

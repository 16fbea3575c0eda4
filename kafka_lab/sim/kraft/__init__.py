"""KRaft (Kafka 4.0): the controller quorum and its metadata log (issue 33), as Kafka's ``org.apache.kafka.raft``,
``org.apache.kafka.controller`` and ``kafka.server.ControllerServer``.

In KRaft mode (Kafka 3.x, and the only mode from 4.0) a quorum of controllers keeps the cluster's metadata as a
replicated log, ``__cluster_metadata``, and the brokers fetch it instead of being sent LeaderAndIsr and
UpdateMetadata (docs/kafka-reference.md §8):

- :mod:`.records`: the records of the metadata log, the batches that hold them, and the image replaying them builds
  (``MetadataImage``);
- :mod:`.raft`: the Raft client of every node, voter or observer (``KafkaRaftClient``, KIP-595): Vote,
  BeginQuorumEpoch, EndQuorumEpoch, Fetch; the epoch fences an old leader;
- :mod:`.quorum_controller`: the quorum controller (``QuorumController``, KIP-631) and its one event thread:
  registrations, heartbeats and fencing (``BrokerHeartbeatManager``), controlled shutdown, partition changes,
  ``NoOpRecord``;
- :mod:`.controller_server`: a controller node (``ControllerServer``): its process, socket server and
  ``ControllerApis``;
- :mod:`.quorum`: the controller nodes of one cluster and the state they start from;
- :mod:`.control`: what the cluster and its scripts ask of the control plane, answered from the quorum;
- :mod:`.config`: Kafka's KRaft settings and the model's own costs;
- :mod:`.scale`: failover and controlled shutdown from 100 to 100k partitions (:func:`kraft_failover`,
  :func:`kraft_controlled_shutdown`), beside lab 07's ZooKeeper-mode runs.

It follows the same rules as :mod:`kafka_lab.sim.zk`: it may import the server's pieces and the network layer,
never the clients nor the ZooKeeper controller, and the server imports nothing from it (the broker's side of
KRaft, :mod:`kafka_lab.sim.server.broker_kraft`, is handed its Raft client and image by the cluster).
"""

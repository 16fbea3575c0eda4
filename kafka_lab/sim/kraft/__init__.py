"""Room for the KRaft controller (issue 33); nothing lives here yet.

In KRaft mode (Kafka 3.x, and the only mode from 4.0) a quorum of controllers keeps the cluster's metadata as a
replicated log, ``__cluster_metadata``, and the brokers fetch it instead of being sent LeaderAndIsr and
UpdateMetadata. What will live here, each under the name Kafka gives it:

- the Raft log and its elections (``org.apache.kafka.raft``, ``KafkaRaftClient``: Vote, BeginQuorumEpoch,
  Fetch; the leader epoch fences an old controller);
- the quorum controller (``org.apache.kafka.controller.QuorumController``) and its event queue;
- broker registration and heartbeats (``BrokerLifecycleManager`` on the broker, ``BrokerHeartbeatManager`` on
  the controller): a broker whose session times out is fenced;
- the broker's side of the log (``kafka.server.metadata.BrokerMetadataPublisher``): records applied to the
  metadata cache and the replica manager.

It will follow the same rules as :mod:`kafka_lab.sim.zk`: it may import the server's pieces and the network
layer, never the clients nor the ZooKeeper controller, and the server imports nothing from it.
"""

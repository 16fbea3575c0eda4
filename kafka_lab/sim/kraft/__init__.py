"""KRaft (Kafka 4.0): the controller quorum and its metadata log (issue 33).

- :mod:`.records`: the records of ``__cluster_metadata`` and the image replaying them builds;
- :mod:`.raft`: the Raft client of every node (KIP-595): elections, fetch, commit;
- :mod:`.quorum_controller`: the quorum controller (KIP-631): one event thread, registrations, heartbeats,
  fencing, controlled shutdown, partition changes;
- :mod:`.controller_server`: a controller node: its process, socket server and ``ControllerApis``;
- :mod:`.quorum`: the controller nodes of a cluster and the state they start from;
- :mod:`.config`: Kafka's KRaft settings and the model's own costs.
"""

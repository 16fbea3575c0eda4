"""The controller in ZooKeeper mode, as Kafka's ``kafka.controller`` and ``kafka.zk`` / ``kafka.zookeeper``.

- :mod:`.controller`: the controller of a cluster (``KafkaController``): partition state, its writes through the
  cluster's ZooKeeper data tree, its own election (raced there: ``/controller`` and ``/controller_epoch`` in one
  multi; lab 07's :mod:`kafka_lab.sim.controller_election` runs it), leader elections, AlterIsr, controlled shutdown, broker failure and start-up (a bounce
  told by the broker epoch, KIP-380), a deposed controller that still acts (the zombie, with the fences on or
  off), and its channel to the brokers (``ControllerChannelManager``);
- :mod:`.zookeeper`: ZooKeeper as the controller uses it: znodes with versions, sessions, watches, conditional
  writes and ``multi``; a serial (1.0) or pipelined (1.1+, ``ZooKeeperClient``) client;
- :mod:`.controller_scale`: the controller at 100 to 100k partitions, in arrays (lab 07): controlled shutdown and
  failover, 1.0 against 1.1+, with the calibration table;
- :mod:`.lifecycle`: a broker's restart in the cluster (controlled shutdown, down, start-up with a new broker
  epoch), the controller moving to another broker, a crash and a stop-the-world pause (``Cluster.crash``,
  ``Cluster.pause``);
- :mod:`.session`: each broker's ZooKeeper session: closed by a controlled shutdown, expired
  ``zookeeper.session.timeout.ms`` after a crash or a pause, and only then acted on by the controller.

The controller imports the network layer (connections, request records) and the server's request names and
costs (:mod:`kafka_lab.sim.server.apis`), never the clients. The KRaft controller will live beside it, in
:mod:`kafka_lab.sim.kraft`.
"""

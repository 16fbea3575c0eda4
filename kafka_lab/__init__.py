"""kafka-lab: Apache Kafka 2.8 broker and controller internals, as models you can run.

Modules, each one idea:

- :mod:`kafka_lab.listeners`  -- ``listeners`` / ``advertised.listeners`` / ``control.plane.listener.name``
  resolution and validation, exactly as ``KafkaConfig`` does it.
- :mod:`kafka_lab.assignment` -- KIP-36 rack-aware replica assignment, exactly as ``AdminUtils`` does it.
- :mod:`kafka_lab.replication` -- what replication factor and ``min.insync.replicas`` buy: replicas per
  broker, broker losses survived, Kafka's NOT_ENOUGH_REPLICAS message.
- :mod:`kafka_lab.sim`        -- a discrete-event (simpy) model of the broker request path, with and
  without KIP-291's dedicated control plane.
- :mod:`kafka_lab.exercises`  -- the self-checks behind the labs' guided exercises.
- :mod:`kafka_lab.ui`         -- the ipywidgets + plotly panels the notebooks show (the only module that
  knows about widgets and figures).
"""

__version__ = "0.1.0"
KAFKA_VERSION = "2.8"

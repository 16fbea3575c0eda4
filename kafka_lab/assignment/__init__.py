"""KIP-36 replica assignment, exactly as Kafka's ``AdminUtils.assignReplicasToBrokers`` does it.

When a topic is created without an explicit assignment, Kafka decides which brokers hold the
replicas of each partition. The first replica of a partition is its *preferred leader*.

Without racks, Kafka lays the partitions' leaders round-robin over the broker list, starting at a
random ``startIndex``, and places the followers after the leader with a gap (``nextReplicaShift``)
that grows by one each time the partition ids wrap around the list, so the same broker pairs do not
keep repeating.

With racks (KIP-36, Kafka 0.10.0, ``broker.rack``), it first builds the *rack-alternated* broker
list: brokers grouped by rack, ids ascending inside a rack, racks in sorted order, then one broker
from each rack in turn. For ``0 -> rack1, 1 -> rack3, 2 -> rack3, 3 -> rack2, 4 -> rack2, 5 -> rack1``
that list is ``0, 3, 1, 5, 4, 2``. Leaders go round-robin over it; each follower is the next broker
(after a shift of ``nextReplicaShift * numRacks``) that is neither on a rack nor a broker the
partition already uses, unless every rack (or every broker) is already used. The walk position
``k`` is *not* reset between the followers of one partition.

This package gives the same map Kafka gives for the same input, including Kafka's exception classes,
their messages, the order of its checks, and Java's 32-bit ``int`` arithmetic at the extremes
(docs/kafka-reference.md §1). One idea per module:

- :mod:`.errors`    -- Kafka's exception classes and messages;
- :mod:`.java`      -- Java's ``int`` arithmetic and ``String`` order, where they change the answer;
- :mod:`.brokers`   -- :class:`BrokerMetadata` and the rack-alternated broker list;
- :mod:`.reference` -- :func:`assign_replicas_to_brokers_reference`, a line-by-line transcription of
  Kafka's Java (checks, random draws, loops): the independent truth of the tests and the benchmark;
- :mod:`.fast`      -- :func:`assign_replicas_to_brokers`, the same algorithm vectorised with numpy
  (fast enough for 300k partitions), falling back on the reference where a Java ``int`` overflows;
- :mod:`.admin`     -- what ``AdminZkClient`` / ``kafka-topics.sh`` do around it: the rack-aware mode,
  brokers sorted by id (:func:`assign_for_topic`), adding partitions (:func:`add_partitions`);
- :mod:`.analysis`  -- the tables a lab shows: :func:`replica_table`, :func:`broker_balance`,
  :func:`rack_balance`, :func:`partition_racks`, :func:`failure_impact`, :func:`rack_failure_comparison`;
- :mod:`.examples`  -- KIP-36's worked clusters, :data:`KIP36_RACKS` and :data:`UNEVEN_RACKS`.

>>> from kafka_lab.assignment import KIP36_RACKS, assign_replicas_to_brokers, brokers_from_racks
>>> assign_replicas_to_brokers(brokers_from_racks(KIP36_RACKS), 12, 3, fixed_start_index=0)[6]
[0, 4, 2]
"""

from .admin import RackAwareMode, add_partitions, assign_for_topic
from .analysis import (
    RACK_MODES,
    broker_balance,
    failure_impact,
    failure_summary,
    partition_racks,
    rack_balance,
    rack_failure_comparison,
    rack_mode_assignments,
    replica_table,
)
from .brokers import (
    BrokerMetadata,
    as_brokers,
    brokers_by_rack,
    brokers_from_racks,
    rack_alternated_broker_list,
    rack_alternated_steps,
)
from .errors import (
    MSG_PARTITIONS,
    MSG_RACKS_INCOMPLETE,
    MSG_RACKS_INCOMPLETE_ZK,
    MSG_RF,
    AdminOperationException,
    ApiException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidRequestException,
    InvalidTopicException,
    KafkaException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
    msg_rf_too_large,
)
from .examples import KIP36_RACKS, UNEVEN_RACKS
from .fast import assign_replicas_array, assign_replicas_to_brokers
from .java import INT_MAX, INT_MIN, java_string_key
from .reference import assign_replicas_to_brokers_reference, check_counts

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "KIP36_RACKS",
    "MSG_PARTITIONS",
    "MSG_RACKS_INCOMPLETE",
    "MSG_RACKS_INCOMPLETE_ZK",
    "MSG_RF",
    "RACK_MODES",
    "UNEVEN_RACKS",
    "AdminOperationException",
    "ApiException",
    "BrokerMetadata",
    "InvalidPartitionsException",
    "InvalidReplicaAssignmentException",
    "InvalidReplicationFactorException",
    "InvalidRequestException",
    "InvalidTopicException",
    "KafkaException",
    "RackAwareMode",
    "TopicExistsException",
    "UnknownTopicOrPartitionException",
    "add_partitions",
    "as_brokers",
    "assign_for_topic",
    "assign_replicas_array",
    "assign_replicas_to_brokers",
    "assign_replicas_to_brokers_reference",
    "broker_balance",
    "check_counts",
    "brokers_by_rack",
    "brokers_from_racks",
    "failure_impact",
    "failure_summary",
    "java_string_key",
    "msg_rf_too_large",
    "partition_racks",
    "rack_alternated_broker_list",
    "rack_alternated_steps",
    "rack_balance",
    "rack_failure_comparison",
    "rack_mode_assignments",
    "replica_table",
]

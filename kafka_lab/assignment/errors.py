"""Kafka's exceptions and messages for replica assignment and topic creation (docs/kafka-reference.md §1).

The classes subclass ``ValueError``, so ordinary Python code can catch them as bad input; each
names the Java (or Scala) class Kafka throws in ``java_class``. The messages are Kafka 2.8's text,
character for character.
"""

from __future__ import annotations

__all__ = [
    "MSG_PARTITIONS",
    "MSG_RACKS_INCOMPLETE",
    "MSG_RACKS_INCOMPLETE_ZK",
    "MSG_RF",
    "AdminOperationException",
    "ApiException",
    "InvalidPartitionsException",
    "InvalidReplicaAssignmentException",
    "InvalidReplicationFactorException",
    "InvalidRequestException",
    "InvalidTopicException",
    "KafkaException",
    "TopicExistsException",
    "UnknownTopicOrPartitionException",
    "msg_rf_too_large",
]


class KafkaException(ValueError):
    """``org.apache.kafka.common.KafkaException``."""

    java_class = "org.apache.kafka.common.KafkaException"


class ApiException(KafkaException):
    """``org.apache.kafka.common.errors.ApiException``: an error with a Kafka protocol error code."""

    java_class = "org.apache.kafka.common.errors.ApiException"


class InvalidPartitionsException(ApiException):
    """``org.apache.kafka.common.errors.InvalidPartitionsException`` (error code 37, INVALID_PARTITIONS)."""

    java_class = "org.apache.kafka.common.errors.InvalidPartitionsException"


class InvalidReplicationFactorException(ApiException):
    """``org.apache.kafka.common.errors.InvalidReplicationFactorException`` (error code 38, INVALID_REPLICATION_FACTOR)."""

    java_class = "org.apache.kafka.common.errors.InvalidReplicationFactorException"


class InvalidRequestException(ApiException):
    """``org.apache.kafka.common.errors.InvalidRequestException`` (error code 42, INVALID_REQUEST): a request
    that breaks the protocol's rules, such as a CreateTopics that gives both an assignment and counts."""

    java_class = "org.apache.kafka.common.errors.InvalidRequestException"


class InvalidTopicException(ApiException):
    """``org.apache.kafka.common.errors.InvalidTopicException`` (error code 17, INVALID_TOPIC_EXCEPTION):
    a topic name ``Topic.validate`` refuses, or one that collides with an existing topic's."""

    java_class = "org.apache.kafka.common.errors.InvalidTopicException"


class TopicExistsException(ApiException):
    """``org.apache.kafka.common.errors.TopicExistsException`` (error code 36, TOPIC_ALREADY_EXISTS)."""

    java_class = "org.apache.kafka.common.errors.TopicExistsException"


class UnknownTopicOrPartitionException(ApiException):
    """``org.apache.kafka.common.errors.UnknownTopicOrPartitionException`` (error code 3,
    UNKNOWN_TOPIC_OR_PARTITION): e.g. a config change of a topic that does not exist
    (``AdminZkClient.validateTopicConfig``: ``Topic '<t>' does not exist.``)."""

    java_class = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"


class InvalidReplicaAssignmentException(ApiException):
    """``org.apache.kafka.common.errors.InvalidReplicaAssignmentException`` (error code 39, INVALID_REPLICA_ASSIGNMENT):
    an explicit assignment ``AdminZkClient.validateTopicCreate`` refuses."""

    java_class = "org.apache.kafka.common.errors.InvalidReplicaAssignmentException"


class AdminOperationException(ValueError):
    """``org.apache.kafka.server.common.AdminOperationException`` (a plain RuntimeException in Kafka).

    That is its 3.x name (docs/kafka-reference.md §1); Kafka 2.8 throws the same-named Scala class
    ``kafka.admin.AdminOperationException`` (``core/src/main/scala/kafka/admin/``) with the same messages.
    """

    java_class = "org.apache.kafka.server.common.AdminOperationException"


MSG_PARTITIONS = "Number of partitions must be larger than 0."
MSG_RF = "Replication factor must be larger than 0."
MSG_RACKS_INCOMPLETE = "Not all brokers have rack information for replica rack aware assignment."
MSG_RACKS_INCOMPLETE_ZK = (
    "Not all brokers have rack information. Add --disable-rack-aware in command line"
    " to make replica assignment without rack information."
)


def msg_rf_too_large(rf: int, size: int) -> str:
    """``InvalidReplicationFactorException``'s message for a replication factor above the broker count."""
    return f"Replication factor: {rf} larger than available brokers: {size}."

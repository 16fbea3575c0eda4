"""The lines a Kafka 4.0 KRaft cluster writes for what the model does: 4.0's own templates and loggers.

Each function returns ``(level, logger, message)``; the message starts with the ``logIdent`` (or ``LogContext``
prefix) of the class that logs it. Every template is quoted from the 4.0 development's source (apache/kafka trunk,
``4.0.0-SNAPSHOT``; the file is named in each docstring, docs/kafka-reference.md §8.10 lists them with the
layout). Which file a line goes to is 4.0's ``config/log4j2.yaml``: ``org.apache.kafka.controller`` to
``controller.log``, ``state.change.logger`` to ``state-change.log``, everything else (the Raft client, the
broker's lifecycle manager, the metadata publisher) to ``server.log`` (:data:`FILE_OF`).

A Java ``Set<Integer>`` (``Collectors.toSet()``, a ``HashSet``) prints in its hash table's order
(:func:`java_int_set`); a Kafka ``Uuid`` prints as its 16 bytes in URL-safe base64 without padding
(:func:`kafka_uuid`).
"""

from __future__ import annotations

import base64
import uuid

__all__ = [
    "QUORUM_CONTROLLER",
    "REPLICATION_CONTROL",
    "CLUSTER_CONTROL",
    "HEARTBEAT_MANAGER",
    "RAFT_CLIENT",
    "LIFECYCLE_MANAGER",
    "METADATA_PUBLISHER",
    "STATE_CHANGE",
    "METADATA_VERSION",
    "LONG_MAX",
    "java_int_set",
    "kafka_uuid",
    "becoming_active",
    "new_epoch_leader",
    "renouncing",
    "fencing_broker",
    "changing_partitions",
    "unfence_granted",
    "controlled_shutdown_granted",
    "shutdown_granted",
    "registering_new_incarnation",
    "become_candidate_fetch_timeout",
    "election_timed_out",
    "reelect_after_backoff",
    "insufficient_votes",
    "raft_truncated",
    "registered",
    "caught_up",
    "unfenced",
    "beginning_controlled_shutdown",
    "skipping_controlled_shutdown",
    "exit_controlled_shutdown",
    "transitioning_to_shutting_down",
    "publishing_initial_metadata",
    "transitioning_local",
    "fetchers_become_follower",
    "stopped_fetchers_controlled_shutdown",
]

QUORUM_CONTROLLER = "org.apache.kafka.controller.QuorumController"
REPLICATION_CONTROL = "org.apache.kafka.controller.ReplicationControlManager"
CLUSTER_CONTROL = "org.apache.kafka.controller.ClusterControlManager"
HEARTBEAT_MANAGER = "org.apache.kafka.controller.BrokerHeartbeatManager"
RAFT_CLIENT = "org.apache.kafka.raft.KafkaRaftClient"
LIFECYCLE_MANAGER = "kafka.server.BrokerLifecycleManager"
METADATA_PUBLISHER = "kafka.server.metadata.BrokerMetadataPublisher"
STATE_CHANGE = "state.change.logger"
#: the model's metadata.version: ``MetadataVersion.LATEST_PRODUCTION`` of the 4.0 development the model follows
#: (``IBP_4_0_IV0``, printed by its ``toString`` as ``4.0-IV0``; without ELR, docs/kafka-reference.md §8.1)
METADATA_VERSION = "4.0-IV0"
#: ``Long.MAX_VALUE``: ``BrokerHeartbeatManager.lowestActiveOffset`` when no broker is active
LONG_MAX = 9223372036854775807


def java_int_set(ids) -> str:
    """``HashSet<Integer>.toString()``: ``[a, b]`` in the table's order. An ``Integer`` hashes to itself and
    ``HashMap.hash`` spreads it with ``h ^ (h >>> 16)``; the table has 16 buckets up to 12 elements (doubled
    past each 0.75 load). Elements in one bucket come in insertion order: here, ascending (an approximation the
    model's few voter ids never reach)."""
    ids = sorted({int(i) for i in ids})
    cap = 16
    while len(ids) > cap * 3 // 4:
        cap *= 2
    order = sorted(ids, key=lambda i: ((i ^ (i >> 16)) & (cap - 1), i))
    return "[" + ", ".join(str(i) for i in order) + "]"


def kafka_uuid(value: str) -> str:
    """A ``Uuid`` as Kafka prints it (``Uuid.toString``: URL-safe base64 of its 16 bytes, no padding). The model's
    incarnation ids are UUID strings; a bootstrap registration's placeholder name is mapped to a version-5 UUID of
    itself (the same name, the same id)."""
    try:
        raw = uuid.UUID(value).bytes
    except ValueError:
        raw = uuid.uuid5(uuid.NAMESPACE_URL, f"kafka-lab:{value}").bytes
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# -- controller.log of a controller node (org.apache.kafka.controller.*, prefix of QuorumController's LogContext) ---
def _qc(c) -> str:
    return f"[QuorumController id={c}] "


def becoming_active(c, epoch, next_write_offset):
    """QuorumController.QuorumMetaLogListener.handleLeaderChange (metadata/.../controller/QuorumController.java)."""
    return (
        "INFO",
        QUORUM_CONTROLLER,
        f"{_qc(c)}Becoming the active controller at epoch {epoch}, next write offset {next_write_offset}.",
    )


def new_epoch_leader(c, epoch, leader):
    """QuorumController.QuorumMetaLogListener.handleLeaderChange, on a node that is not the new leader;
    ``leader`` None prints ``(none)``."""
    name = "(none)" if leader is None else str(leader)
    return ("INFO", QUORUM_CONTROLLER, f"{_qc(c)}In the new epoch {epoch}, the leader is {name}.")


def renouncing(c, epoch, new_epoch, leader, last_stable_offset):
    """QuorumController.QuorumMetaLogListener.handleLeaderChange, on the active controller that lost the lead."""
    name = "(none)" if leader is None else str(leader)
    return (
        "WARN",
        QUORUM_CONTROLLER,
        f"{_qc(c)}Renouncing the leadership due to a metadata log event. We were the leader at epoch {epoch}, but "
        f"in the new epoch {new_epoch}, the leader is {name}. Reverting to last stable offset {last_stable_offset}.",
    )


def fencing_broker(c, b):
    """ReplicationControlManager.maybeFenceOneStaleBroker (metadata/.../controller/ReplicationControlManager.java)."""
    return ("INFO", REPLICATION_CONTROL, f"{_qc(c)}Fencing broker {b} because its session has timed out.")


def changing_partitions(c, context, n):
    """ReplicationControlManager.generateLeaderAndIsrUpdates, at INFO (the DEBUG form lists the partitions);
    ``context``: ``handleBrokerFenced``, ``handleBrokerUnfenced``, ``handleBrokerUncleanShutdown``,
    ``enterControlledShutdown[<id>]``."""
    return ("INFO", REPLICATION_CONTROL, f"{_qc(c)}{context}: changing {n} partition(s)")


def unfence_granted(c, b, register_offset):
    """BrokerHeartbeatManager.calculateNextBrokerState, FENCED to UNFENCED
    (metadata/.../controller/BrokerHeartbeatManager.java)."""
    return (
        "INFO",
        HEARTBEAT_MANAGER,
        f"{_qc(c)}The request from broker {b} to unfence has been granted because it has caught up with the offset "
        f"of its register broker record {register_offset}.",
    )


def controlled_shutdown_granted(c, b):
    """BrokerHeartbeatManager.calculateNextBrokerState, UNFENCED to CONTROLLED_SHUTDOWN (it leads partitions)."""
    return (
        "INFO",
        HEARTBEAT_MANAGER,
        f"{_qc(c)}Unfenced broker {b} has requested and been granted a controlled shutdown.",
    )


def shutdown_granted(c, b, lowest_active_offset, shutdown_offset):
    """BrokerHeartbeatManager.calculateNextBrokerState, CONTROLLED_SHUTDOWN to SHUTDOWN_NOW."""
    return (
        "INFO",
        HEARTBEAT_MANAGER,
        f"{_qc(c)}The request from broker {b} to shut down has been granted since the lowest active offset "
        f"{lowest_active_offset} is now greater than the broker's controlled shutdown offset {shutdown_offset}.",
    )


def registering_new_incarnation(c, b, previous, new, cleanup_records, epoch):
    """ClusterControlManager.registerBroker, a known broker with a new incarnation
    (metadata/.../controller/ClusterControlManager.java)."""
    return (
        "INFO",
        CLUSTER_CONTROL,
        f"{_qc(c)}Registering a new incarnation of broker {b}. Previous incarnation ID was {previous}; new "
        f"incarnation ID is {new}. Generated {cleanup_records} record(s) to clean up previous incarnations. Broker "
        f"epoch will become {epoch}.",
    )


# -- server.log: the Raft client (prefix of RaftManager's LogContext, core/.../raft/RaftManager.scala) -------------
def _raft(n) -> str:
    return f"[RaftManager id={n}] "


def become_candidate_fetch_timeout(n):
    """KafkaRaftClient.pollFollowerAsVoter (raft/.../raft/KafkaRaftClient.java)."""
    return ("INFO", RAFT_CLIENT, f"{_raft(n)}Become candidate due to fetch timeout")


def election_timed_out(n, backoff_ms):
    """KafkaRaftClient.pollCandidate: the election timeout ended before a majority."""
    return (
        "INFO",
        RAFT_CLIENT,
        f"{_raft(n)}Election has timed out, backing off for {int(backoff_ms)}ms before becoming a candidate again",
    )


def reelect_after_backoff(n):
    """KafkaRaftClient.pollCandidate: the backoff is over."""
    return ("INFO", RAFT_CLIENT, f"{_raft(n)}Re-elect as candidate after election backoff has completed")


def insufficient_votes(n, rejected_by):
    """KafkaRaftClient.handleVoteResponse: too many rejections for a majority (``rejectingVoters()``, a set)."""
    return (
        "INFO",
        RAFT_CLIENT,
        f"{_raft(n)}Insufficient remaining votes to become leader (rejected by {java_int_set(rejected_by)}). "
        "We will backoff before retrying election again",
    )


def raft_truncated(n, offset, leader):
    """KafkaRaftClient.handleFetchResponse: a diverging epoch in the leader's answer."""
    return ("INFO", RAFT_CLIENT, f"{_raft(n)}Truncated to offset {offset} from Fetch response from leader {leader}")


# -- server.log of a broker: BrokerLifecycleManager (core/.../server/BrokerLifecycleManager.scala) ----------------
def _blm(b) -> str:
    return f"[BrokerLifecycleManager id={b}] "


def registered(b, epoch):
    """BrokerLifecycleManager.BrokerRegistrationResponseHandler, on success."""
    return ("INFO", LIFECYCLE_MANAGER, f"{_blm(b)}Successfully registered broker {b} with broker epoch {epoch}")


def caught_up(b):
    """BrokerLifecycleManager.BrokerHeartbeatResponseEvent, STARTING and ``isCaughtUp``."""
    return ("INFO", LIFECYCLE_MANAGER, f"{_blm(b)}The broker has caught up. Transitioning from STARTING to RECOVERY.")


def unfenced(b):
    """BrokerLifecycleManager.BrokerHeartbeatResponseEvent, RECOVERY and not ``isFenced``."""
    return (
        "INFO",
        LIFECYCLE_MANAGER,
        f"{_blm(b)}The broker has been unfenced. Transitioning from RECOVERY to RUNNING.",
    )


def beginning_controlled_shutdown(b):
    """BrokerLifecycleManager.BeginControlledShutdownEvent, from RUNNING."""
    return ("INFO", LIFECYCLE_MANAGER, f"{_blm(b)}Beginning controlled shutdown.")


def skipping_controlled_shutdown(b, state):
    """BrokerLifecycleManager.BeginControlledShutdownEvent, from any state but RUNNING and
    PENDING_CONTROLLED_SHUTDOWN."""
    return ("INFO", LIFECYCLE_MANAGER, f"{_blm(b)}Skipping controlled shutdown because we are in state {state}.")


def exit_controlled_shutdown(b):
    """BrokerLifecycleManager.BrokerHeartbeatResponseEvent, PENDING_CONTROLLED_SHUTDOWN and ``shouldShutDown``."""
    return ("INFO", LIFECYCLE_MANAGER, f"{_blm(b)}The controller has asked us to exit controlled shutdown.")


def transitioning_to_shutting_down(b, state):
    """BrokerLifecycleManager.ShutdownEvent."""
    return ("INFO", LIFECYCLE_MANAGER, f"{_blm(b)}Transitioning from {state} to SHUTTING_DOWN.")


# -- server.log of a broker: BrokerMetadataPublisher (core/.../server/metadata/BrokerMetadataPublisher.scala) -------
def publishing_initial_metadata(b, offset, epoch, metadata_version=METADATA_VERSION):
    """BrokerMetadataPublisher.onMetadataUpdate, the first publication of a process (``OffsetAndEpoch.toString``,
    raft/.../raft/OffsetAndEpoch.java)."""
    return (
        "INFO",
        METADATA_PUBLISHER,
        f"[BrokerMetadataPublisher id={b}] Publishing initial metadata at offset OffsetAndEpoch(offset={offset}, "
        f"epoch={epoch}) with metadata.version {metadata_version}.",
    )


# -- state-change.log of a broker: ReplicaManager.applyDelta (core/.../server/ReplicaManager.scala) ----------------
def transitioning_local(b, n, leaders: bool):
    """ReplicaManager.applyLocalLeadersDelta / applyLocalFollowersDelta."""
    kind = "leaders" if leaders else "followers"
    return ("INFO", STATE_CHANGE, f"[Broker id={b}] Transitioning {n} partition(s) to local {kind}.")


def fetchers_become_follower(b, n, started: bool):
    """ReplicaManager.applyLocalFollowersDelta: the partitions with a new leader epoch (their fetchers restarted)."""
    verb = "Started" if started else "Stopped"
    return ("INFO", STATE_CHANGE, f"[Broker id={b}] {verb} fetchers as part of become-follower for {n} partitions")


def stopped_fetchers_controlled_shutdown(b, n):
    """ReplicaManager.applyLocalFollowersDelta: in controlled shutdown, the partitions without a leader or without
    this broker in their ISR."""
    return ("INFO", STATE_CHANGE, f"[Broker id={b}] Stopped fetchers as part of controlled shutdown for {n} partitions")

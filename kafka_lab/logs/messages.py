"""The lines of ``state-change.log``, ``controller.log`` and ``server.log``: Kafka 2.8's own templates.

Each function returns ``(level, logger, message)``; the message starts with the ``logIdent`` of the
class that logs it. Every template is quoted from Kafka 2.8's source (the file is named in each
docstring; docs/kafka-reference.md §4 lists the main ones), with Scala's collection ``toString`` as
2.13 writes it (``HashSet(1, 2, 3)``, ``List(1, 2, 3)``, ``HashMap(k -> v)``).
"""

from __future__ import annotations

__all__ = [
    "STATE_CHANGE",
    "CONTROLLER",
    "LOG_DIR",
    "tp_name",
    "scala_list",
    "handling_leader_and_isr",
    "stopped_fetchers_become_leader",
    "leader_starts",
    "follower_starts",
    "stopped_fetchers_become_follower",
    "finished_leader_and_isr",
    "metadata_cache_updated",
    "handling_stop_replica",
    "changed_partition",
    "failed_state_change",
    "election_failed_exception",
    "new_partition_failed_exception",
    "sending_leader_and_isr",
    "sending_update_metadata",
    "removed_fetcher",
    "added_fetcher",
    "truncating_log",
    "truncating_no_effect",
    "loading_producer_state",
    "log_offset_metadata",
    "non_monotonic_high_watermark",
    "isr_updated",
    "controller_elected",
    "controller_failover",
    "controller_connected",
    "auto_rebalance",
    "preferred_election_started",
    "preferred_election_completed",
    "kafka_config",
    "socket_server_created",
    "kafka_server_started",
    "kafka_server_shutting_down",
    "controlled_shutdown_starting",
    "controlled_shutdown_succeeded",
    "controlled_shutdown_failed",
    "controlled_shutdown_retrying",
    "unclean_shutdown",
    "kafka_server_shut_down",
    "controller_shutting_down_broker",
    "controller_broker_change",
    "controller_broker_failure",
    "controller_broker_startup",
    "controller_resigned",
    "controller_unclean_enabled",
]

STATE_CHANGE = "state.change.logger"
CONTROLLER = "kafka.controller.KafkaController"
#: ``log.dirs`` of the generated brokers (Log's logIdent names the parent directory of a partition's log)
LOG_DIR = "/var/lib/kafka/data"


def tp_name(topic: str, partition: int) -> str:
    """``TopicPartition.toString``: ``orders-0``."""
    return f"{topic}-{partition}"


def scala_list(xs, kind: str = "List") -> str:
    """A Scala collection's ``toString``: ``List(1, 2, 3)``, ``HashSet(orders-0)``."""
    return f"{kind}({', '.join(str(x) for x in xs)})"


def _broker(b: int) -> str:
    return f"[Broker id={b}] "


# -- state-change.log, broker side (ReplicaManager, Partition, MetadataCache) ---------------------
def handling_leader_and_isr(b, correlation_id, controller_id, n):
    """ReplicaManager.becomeLeaderOrFollower."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Handling LeaderAndIsr request correlationId {correlation_id} from controller "
        f"{controller_id} for {n} partitions",
    )


def stopped_fetchers_become_leader(b, correlation_id, controller_id, controller_epoch, n):
    """ReplicaManager.makeLeaders."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Stopped fetchers as part of LeaderAndIsr request correlationId {correlation_id} from "
        f"controller {controller_id} epoch {controller_epoch} as part of the become-leader transition for {n} partitions",
    )


def leader_starts(b, tp, leader_epoch, start_offset, hw, isr, previous_epoch):
    """Partition.makeLeader."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Leader {tp} starts at leader epoch {leader_epoch} from offset {start_offset} with high "
        f"watermark {hw} ISR [{','.join(str(x) for x in isr)}] addingReplicas [] removingReplicas []. "
        f"Previous leader epoch was {previous_epoch}.",
    )


def follower_starts(b, tp, leader_epoch, end_offset, hw, previous_epoch):
    """Partition.makeFollower."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Follower {tp} starts at leader epoch {leader_epoch} from offset {end_offset} with high "
        f"watermark {hw}. Previous leader epoch was {previous_epoch}.",
    )


def stopped_fetchers_become_follower(b, controller_id, controller_epoch, correlation_id, n):
    """ReplicaManager.makeFollowers."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Stopped fetchers as part of become-follower request from controller {controller_id} epoch "
        f"{controller_epoch} with correlation id {correlation_id} for {n} partitions",
    )


def finished_leader_and_isr(b, elapsed_ms, correlation_id, controller_id, n):
    """ReplicaManager.becomeLeaderOrFollower."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Finished LeaderAndIsr request in {elapsed_ms}ms correlationId {correlation_id} from "
        f"controller {controller_id} for {n} partitions",
    )


def metadata_cache_updated(b, added, deleted, controller_id, controller_epoch, correlation_id):
    """MetadataCache.updateMetadata."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Add {added} partitions and deleted {deleted} partitions from metadata cache in response to "
        f"UpdateMetadata request sent by controller {controller_id} epoch {controller_epoch} with correlation id "
        f"{correlation_id}",
    )


def handling_stop_replica(b, correlation_id, controller_id, n):
    """ReplicaManager.stopReplicas."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_broker(b)}Handling StopReplica request correlationId {correlation_id} from controller {controller_id} "
        f"for {n} partitions",
    )


# -- state-change.log, controller side (PartitionStateMachine, ControllerChannelManager) -----------
def _controller_sc(c, epoch) -> str:
    return f"[Controller id={c} epoch={epoch}] "


def changed_partition(c, epoch, tp, leader, leader_epoch, isr, zk_version, from_state="OnlinePartition"):
    """ZkPartitionStateMachine.doHandleStateChanges: an election, from ``from_state`` (OnlinePartition: a
    preferred or controlled-shutdown election; OfflinePartition: its leader was gone) to OnlinePartition."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_controller_sc(c, epoch)}Changed partition {tp} from {from_state} to OnlinePartition with state "
        f"LeaderAndIsr(leader={leader}, leaderEpoch={leader_epoch}, isr={scala_list(isr)}, zkVersion={zk_version})",
    )


def failed_state_change(c, epoch, tp, from_state):
    """ZkPartitionStateMachine.logFailedStateChange: an election to OnlinePartition that found no leader, from
    ``from_state`` (OfflinePartition: no live replica in the ISR; OnlinePartition: a controlled shutdown's move
    with no other live ISR member; NewPartition: no live replica to initialize it with). Logged with its
    exception: see :func:`election_failed_exception` and :func:`new_partition_failed_exception`."""
    return (
        "ERROR",
        STATE_CHANGE,
        f"{_controller_sc(c, epoch)}Controller {c} epoch {epoch} failed to change state for partition {tp} "
        f"from {from_state} to OnlinePartition",
    )


def election_failed_exception(tp, strategy: str) -> list[str]:
    """The exception :func:`failed_state_change` is logged with, as log4j prints it after the record: its first
    line (``doElectLeaderForPartitions``), naming the election strategy by its ``toString``
    (``OfflinePartitionLeaderElectionStrategy(false)``: ``false`` is its ``allowUnclean`` argument, always
    false when the controller triggers it; the topic's ``unclean.leader.election.enable`` is read apart).
    Kafka prints the exception's stack frames below it; they are left out here: their names depend on the
    Scala build (2.12 or 2.13), and they say nothing more."""
    return [
        f"kafka.common.StateChangeFailedException: Failed to elect leader for partition {tp} under strategy {strategy}"
    ]


def new_partition_failed_exception(c, epoch, tp, live) -> list[str]:
    """The exception a NewPartition's failed initialization is logged with
    (``initializeLeaderAndIsrForPartitions``: no assigned replica is live). Kafka names the *live* replicas
    where its text says "assigned replicas" (so always ``[]``), and prints ``liveBrokerIds``, an immutable
    Scala set: ``Set(1, 2)`` up to four brokers, a ``HashSet`` beyond (whose order follows the hash; the
    model prints it sorted)."""
    live = sorted(live)
    brokers = scala_list(live, "Set" if len(live) <= 4 else "HashSet")
    return [
        f"kafka.common.StateChangeFailedException: Controller {c} epoch {epoch} encountered error during state "
        f"change of partition {tp} from New to Online, assigned replicas are [], live brokers are [{brokers}]. "
        "No assigned replica is alive."
    ]


def sending_leader_and_isr(c, epoch, broker, leaders, followers):
    """ControllerBrokerRequestBatch.sendLeaderAndIsrRequest."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_controller_sc(c, epoch)}Sending LeaderAndIsr request to broker {broker} with {leaders} become-leader "
        f"and {followers} become-follower partitions",
    )


def sending_update_metadata(c, epoch, brokers, n):
    """ControllerBrokerRequestBatch.sendUpdateMetadataRequests."""
    return (
        "INFO",
        STATE_CHANGE,
        f"{_controller_sc(c, epoch)}Sending UpdateMetadata request to brokers {scala_list(sorted(brokers), 'HashSet')} "
        f"for {n} partitions",
    )


# -- server.log (ReplicaFetcherManager, Log, ReplicaFetcherThread, Partition, KafkaServer) ----------
def removed_fetcher(b, tps):
    """AbstractFetcherManager.removeFetcherForPartitions."""
    return (
        "INFO",
        "kafka.server.ReplicaFetcherManager",
        f"[ReplicaFetcherManager on broker {b}] Removed fetcher for partitions {scala_list(tps, 'HashSet')}",
    )


def added_fetcher(b, leader, host, port, states):
    """AbstractFetcherManager.addPartitionsToFetcherThread; ``states``: ``[(tp, leader epoch, offset)]``."""
    inner = ", ".join(
        f"{tp} -> InitialFetchState(BrokerEndPoint(id={leader}, host={host}:{port}),{e},{o})" for tp, e, o in states
    )
    return (
        "INFO",
        "kafka.server.ReplicaFetcherManager",
        f"[ReplicaFetcherManager on broker {b}] Added fetcher to broker {leader} for partitions HashMap({inner})",
    )


def _log_ident(tp) -> str:
    return f"[Log partition={tp}, dir={LOG_DIR}] "


def truncating_log(tp, offset):
    """Log.truncateTo, when it removes records. ``ReplicaFetcherThread.truncate`` means to add a WARN
    (``Truncating <tp> to offset <o> below high watermark <hw>``) when a follower truncates below its high
    watermark, but since 2.1 it tests for it after ``truncateTo`` has lowered the high watermark to the new log
    end, so 2.8 never writes it (KAFKA-19474, fixed in 2025). What 2.8 does write for a truncation below the
    high watermark is :func:`non_monotonic_high_watermark`, from ``Log`` itself."""
    return ("INFO", "kafka.log.Log", f"{_log_ident(tp)}Truncating to offset {offset}")


def log_offset_metadata(offset, segment_base_offset=-1, position=-1) -> str:
    """``LogOffsetMetadata.toString``: ``(offset=1880 segment=[0:225661])``; an offset known by its number only
    (``messageOffsetOnly``) has -1 for both (``Log.UnknownOffset``, ``LogOffsetMetadata.UnknownFilePosition``)."""
    return f"(offset={offset} segment=[{segment_base_offset}:{position}])"


def non_monotonic_high_watermark(tp, old: str, new: str):
    """Log.updateHighWatermarkMetadata, when the new high watermark is below the old one (2.7.1 and 2.8.0 on,
    KAFKA-12153). A truncation below the high watermark reaches it at the end of ``Log.truncateTo``
    (``completeTruncation`` → ``updateHighWatermark(min(highWatermark, endOffset))``), after
    :func:`truncating_log` and :func:`loading_producer_state`: on a follower that lost acknowledged records
    (an unclean election), the one WARN of the truncation. ``old`` and ``new``: :func:`log_offset_metadata`."""
    return ("WARN", "kafka.log.Log", f"{_log_ident(tp)}Non-monotonic update of high watermark from {old} to {new}")


def loading_producer_state(tp, offset):
    """Log.rebuildProducerState, which every truncation that removes records ends with (``completeTruncation``);
    message format version 2 (the only one the model writes)."""
    return (
        "INFO",
        "kafka.log.Log",
        f"{_log_ident(tp)}Loading producer state till offset {offset} with message format version 2",
    )


def truncating_no_effect(tp, offset, leo):
    """Log.truncateTo, when the offset is at or past the log end."""
    return (
        "INFO",
        "kafka.log.Log",
        f"{_log_ident(tp)}Truncating to {offset} has no effect as the largest offset in the log is {leo - 1}",
    )


def isr_updated(b, tp, isr, zk_version):
    """Partition.handleAlterIsrResponse."""
    return (
        "INFO",
        "kafka.cluster.Partition",
        f"[Partition {tp} broker={b}] ISR updated to {','.join(str(x) for x in isr)} and version updated to "
        f"[{zk_version}]",
    )


def kafka_config(b, props: dict):
    """AbstractConfig.logAll: ``KafkaConfig values: `` then one ``\\tkey = value`` line per setting.

    The message ends with a newline, so the layout puts the logger on a line of its own (`` (kafka...)``).
    """
    body = "".join(f"\t{k} = {v}\n" for k, v in sorted(props.items()))
    return ("INFO", "kafka.server.KafkaConfig", f"KafkaConfig values: \n{body}")


def socket_server_created(b, listener: str, control_plane: bool):
    """SocketServer.createDataPlaneAcceptorsAndProcessors / createControlPlaneAcceptorAndProcessor."""
    what = "control-plane acceptor and processor" if control_plane else "data-plane acceptor and processors"
    return (
        "INFO",
        "kafka.network.SocketServer",
        f"[SocketServer listenerType=ZK_BROKER, nodeId={b}] Created {what} for endpoint : ListenerName({listener})",
    )


def kafka_server_started(b):
    """KafkaServer.startup."""
    return _server(b, "started")


def _server(b, message: str, level: str = "INFO"):
    return (level, "kafka.server.KafkaServer", f"[KafkaServer id={b}] {message}")


def kafka_server_shutting_down(b):
    """KafkaServer.shutdown."""
    return _server(b, "shutting down")


def controlled_shutdown_starting(b):
    """KafkaServer.controlledShutdown."""
    return _server(b, "Starting controlled shutdown")


def controlled_shutdown_succeeded(b):
    """KafkaServer.controlledShutdown: no error and no partition left to move."""
    return _server(b, "Controlled shutdown succeeded")


def controlled_shutdown_failed(b, remaining, error):
    """KafkaServer.controlledShutdown: the two lines of an attempt that left partitions or failed."""
    parts = ", ".join(f"RemainingPartition(topicName='{t}', partitionIndex={p})" for t, p in remaining)
    return [_server(b, f"Remaining partitions to move: [{parts}]"), _server(b, f"Error from controller: {error}")]


def controlled_shutdown_retrying(b):
    """KafkaServer.controlledShutdown, after ``controlled.shutdown.retry.backoff.ms``."""
    return _server(b, "Retrying controlled shutdown after the previous attempt failed...", "WARN")


def unclean_shutdown(b):
    """KafkaServer.controlledShutdown, every attempt failed."""
    return _server(b, "Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed", "WARN")


def kafka_server_shut_down(b):
    """KafkaServer.shutdown, at its end."""
    return _server(b, "shut down completed")


# -- controller.log (KafkaController, RequestSendThread) ---------------------------------------------
def _controller(c) -> str:
    return f"[Controller id={c}] "


def controller_elected(c, epoch, epoch_zk_version):
    """KafkaController.elect."""
    return (
        "INFO",
        CONTROLLER,
        f"{_controller(c)}{c} successfully elected as the controller. Epoch incremented to {epoch} and epoch zk "
        f"version is now {epoch_zk_version}",
    )


def controller_failover(c, epoch, live_brokers, topics):
    """KafkaController.onControllerFailover and initializeControllerContext, in order."""
    ident = _controller(c)
    return [
        ("INFO", CONTROLLER, f"{ident}Registering handlers"),
        ("INFO", CONTROLLER, f"{ident}Deleting log dir event notifications"),
        ("INFO", CONTROLLER, f"{ident}Deleting isr change notifications"),
        ("INFO", CONTROLLER, f"{ident}Initializing controller context"),
        (
            "INFO",
            CONTROLLER,
            f"{ident}Currently active brokers in the cluster: {scala_list(sorted(live_brokers), 'Set')}",
        ),
        ("INFO", CONTROLLER, f"{ident}Currently shutting brokers in the cluster: HashSet()"),
        ("INFO", CONTROLLER, f"{ident}Current list of topics in the cluster: {scala_list(sorted(topics), 'HashSet')}"),
        ("INFO", CONTROLLER, f"{ident}Fetching topic deletions in progress"),
        ("INFO", CONTROLLER, f"{ident}List of topics to be deleted: "),
        ("INFO", CONTROLLER, f"{ident}List of topics ineligible for deletion: "),
        ("INFO", CONTROLLER, f"{ident}Initializing topic deletion manager"),
        ("INFO", CONTROLLER, f"{ident}Sending update metadata request"),
        ("INFO", CONTROLLER, f"{ident}Ready to serve as the new controller with epoch {epoch}"),
        ("INFO", CONTROLLER, f"{ident}Starting the controller scheduler"),
    ]


def controller_shutting_down_broker(c, b):
    """KafkaController.doControlledShutdown."""
    return ("INFO", CONTROLLER, f"{_controller(c)}Shutting down broker {b}")


def controller_broker_change(c, new=(), dead=(), bounced=(), live=()):
    """KafkaController.processBrokerChange."""
    j = ",".join
    return (
        "INFO",
        CONTROLLER,
        f"{_controller(c)}Newly added brokers: {j(map(str, sorted(new)))}, deleted brokers: "
        f"{j(map(str, sorted(dead)))}, bounced brokers: {j(map(str, sorted(bounced)))}, all live brokers: "
        f"{j(map(str, sorted(live)))}",
    )


def controller_broker_failure(c, b, was_shutting_down: bool):
    """KafkaController.onBrokerFailure."""
    out = [("INFO", CONTROLLER, f"{_controller(c)}Broker failure callback for {b}")]
    if was_shutting_down:
        out.append(("INFO", CONTROLLER, f"{_controller(c)}Removed {b} from list of shutting down brokers."))
    return out


def controller_broker_startup(c, b):
    """KafkaController.onBrokerStartup."""
    return ("INFO", CONTROLLER, f"{_controller(c)}New broker startup callback for {b}")


def controller_unclean_enabled(c, topic):
    """KafkaController.processTopicUncleanLeaderElectionEnable: a topic's ``unclean.leader.election.enable`` was
    set to true while this controller is active (its offline partitions are tried at once)."""
    return ("INFO", CONTROLLER, f"{_controller(c)}Unclean leader election has been enabled for topic {topic}")


def controller_resigned(c):
    """KafkaController.onControllerResignation, at its end."""
    return ("INFO", CONTROLLER, f"{_controller(c)}Resigned")


def controller_connected(c, broker, host, port, rack=None):
    """RequestSendThread.brokerReady: the controller's connection to each broker (its listener's port)."""
    return (
        "INFO",
        "kafka.controller.RequestSendThread",
        f"[RequestSendThread controllerId={c}] Controller {c} connected to {host}:{port} (id: {broker} rack: "
        f"{rack if rack is not None else 'null'}) for sending state change requests",
    )


def auto_rebalance(c, ratios: dict):
    """KafkaController.processAutoPreferredReplicaLeaderElection and checkAndTriggerAutoLeaderRebalance.

    ``ratios``: ``{preferred broker: imbalance ratio}`` (the share of its preferred partitions it does not lead).
    """
    ident = _controller(c)
    out = [
        ("INFO", CONTROLLER, f"{ident}Processing automatic preferred replica leader election"),
        ("TRACE", CONTROLLER, f"{ident}Checking need to trigger auto leader balancing"),
    ]
    for b, r in sorted(ratios.items()):
        out.append(("TRACE", CONTROLLER, f"{ident}Leader imbalance ratio for broker {b} is {float(r)!r}"))
    return out


def preferred_election_started(c, tps, trigger="AutoTriggered"):
    """KafkaController.onReplicaElection."""
    return (
        "INFO",
        CONTROLLER,
        f"{_controller(c)}Starting replica leader election (PREFERRED) for partitions {','.join(tps)} triggered by "
        f"{trigger}",
    )


def preferred_election_completed(c, tp, leader):
    """KafkaController.removePartitionsFromPreferredReplicaElection."""
    return (
        "INFO",
        CONTROLLER,
        f"{_controller(c)}Partition {tp} completed preferred replica leader election. New leader is {leader}",
    )

"""``kafka-request.log``: one ``Completed request:`` line per request the broker answered.

Kafka 2.8 (KIP-673, ``RequestChannel.updateRequestMetrics`` and ``RequestConvertToJson``) writes, at
DEBUG on ``kafka.request.logger``, ``Completed request:`` followed by one JSON object whose keys come
in this order: ``isForwarded``, ``requestHeader`` (the header's fields and ``requestApiKeyName``),
``request``, ``response``, ``connection``, ``totalTimeMs``, ``requestQueueTimeMs``, ``localTimeMs``,
``remoteTimeMs``, ``throttleTimeMs`` (a long), ``responseQueueTimeMs``, ``sendTimeMs``,
``securityProtocol``, ``principal``, ``listener``, ``clientInformation`` (docs/kafka-reference.md §4).
Times are milliseconds with microsecond precision, truncated (``nanosToMs``). Jackson writes the
object compactly; a response that has no body (an ``acks=0`` produce) is the empty string.

The request and response bodies are the generated ``*DataJsonConverter`` output for the version a
2.8 client or broker sends (Produce v9, Fetch v12, Metadata v11, LeaderAndIsr v5, StopReplica v3,
UpdateMetadata v7, AlterIsr v0, InitProducerId v4): fields in the order of the message's JSON schema, tagged fields only
when they differ from their default, and record sets replaced by their size (``recordsSizeInBytes``).

Kafka 2.7 and earlier wrote a text line instead (``--format text``): ``Completed request:<header> --
<request>,response:<response> from connection <id>;totalTime:<ms>,...,clientInformation:ClientInformation(...)``.
Its bodies were ``Struct.toString`` (``{name=value,...}``); this module writes the same fields that
way.

Everything comes from the simulation's :class:`~kafka_lab.sim.network.request.Request` (its timestamps,
payload and result). Where the model has no value, the line says what a 2.8 broker would in a
cluster like the model's, and these choices are the module's (each is a named constant below): record
sets are :data:`RECORD_BYTES` bytes per record plus a batch header (the model counts records, not
bytes); fetches are session-less full fetches (no KIP-227 fetch sessions); a Metadata answer's ISR is
the replica list (the model's answer carries only leader and epoch); a client names itself
``apache-kafka-java`` :data:`CLIENT_VERSION`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math

from ..sim.server.log import RECORDS
from .slots import BROKER_EPOCH, LEADER_EPOCH, OFFSET, ZK_VERSION

__all__ = [
    "API_KEY_NAMES",
    "API_VERSIONS",
    "ERROR_CODES",
    "RECORD_BYTES",
    "BATCH_OVERHEAD_BYTES",
    "CLIENT_VERSION",
    "BrokerView",
    "topic_id",
    "batch_bytes",
    "segment_bytes",
    "phase_ms",
    "request_body",
    "response_body",
    "json_message",
    "text_message",
    "struct_string",
]

#: ``ApiKeys`` enum names (``requestApiKeyName``)
API_KEY_NAMES = {
    "Produce": "PRODUCE",
    "Fetch": "FETCH",
    "Metadata": "METADATA",
    "LeaderAndIsr": "LEADER_AND_ISR",
    "StopReplica": "STOP_REPLICA",
    "UpdateMetadata": "UPDATE_METADATA",
    "ControlledShutdown": "CONTROLLED_SHUTDOWN",
    "AlterIsr": "ALTER_ISR",
    "InitProducerId": "INIT_PRODUCER_ID",
}
#: the newest version of each API a 2.8 client or broker sends
API_VERSIONS = {
    "Produce": 9,
    "Fetch": 12,
    "Metadata": 11,
    "LeaderAndIsr": 5,
    "StopReplica": 3,
    "UpdateMetadata": 7,
    "ControlledShutdown": 3,
    "AlterIsr": 0,
    "InitProducerId": 4,
}
#: ``org.apache.kafka.common.protocol.Errors`` codes (2.8)
ERROR_CODES = {
    "NONE": 0,
    "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "LEADER_NOT_AVAILABLE": 5,
    "NOT_LEADER_OR_FOLLOWER": 6,
    "REQUEST_TIMED_OUT": 7,
    "BROKER_NOT_AVAILABLE": 8,
    "STALE_CONTROLLER_EPOCH": 11,
    "NETWORK_EXCEPTION": 13,
    "NOT_ENOUGH_REPLICAS": 19,
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 20,
    "NOT_CONTROLLER": 41,
    "OUT_OF_ORDER_SEQUENCE_NUMBER": 45,
    "INVALID_PRODUCER_EPOCH": 47,
    "FENCED_LEADER_EPOCH": 74,
    "UNKNOWN_LEADER_EPOCH": 75,
    "STALE_BROKER_EPOCH": 77,
    "INVALID_UPDATE_VERSION": 95,
}
#: bytes a record takes in a batch (the model counts records; the log shows bytes)
RECORD_BYTES = 120
#: a v2 record batch's header
BATCH_OVERHEAD_BYTES = 61
CLIENT_VERSION = "2.8.2"
_SOFTWARE = {"softwareName": "apache-kafka-java", "softwareVersion": CLIENT_VERSION}
_NO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID: a Metadata request names topics


def topic_id(topic: str) -> str:
    """A topic's id as ``Uuid.toString`` writes it (URL-safe base64, 22 characters), fixed per name."""
    return base64.urlsafe_b64encode(hashlib.md5(topic.encode()).digest()).decode().rstrip("=")


def batch_bytes(records: int) -> int:
    return BATCH_OVERHEAD_BYTES + RECORD_BYTES * int(records) if records else 0


def segment_bytes(batches: int, records: int) -> int:
    """The size of a log segment holding ``batches`` batches of ``records`` records in all (:func:`batch_bytes`
    each): a position in it, as ``LogOffsetMetadata.relativePositionInSegment`` gives it."""
    return BATCH_OVERHEAD_BYTES * int(batches) + RECORD_BYTES * int(records)


def phase_ms(t0: float, t1: float) -> float:
    """``nanosToMs(t1 - t0)``: milliseconds with the microseconds truncated, never negative."""
    d = t1 - t0
    if not d > 0:
        return 0.0
    return math.floor(d * 1000.0 + 1e-6) / 1000.0


class BrokerView:
    """What a request line needs to know about the broker that wrote it and its cluster."""

    def __init__(self, cluster, broker_id: int, *, hosts=None, cluster_id: str = "kafka-lab-cluster-0000", slots=None):
        self.cluster = cluster
        #: a :class:`.slots.Slots`: offsets and epochs written as its marks (a window's copies continue them)
        self.slots = slots
        self.broker_id = broker_id
        self.broker = cluster.brokers[broker_id]
        self.cluster_id = cluster_id
        self.hosts = hosts or {bid: f"kafka-{bid}" for bid in cluster.brokers}
        self.protocols = {lst.name: lst.security_protocol for lst in _listeners(self.broker)}
        self._ports = {bid: {lst.name: lst.port for lst in _listeners(b)} for bid, b in sorted(cluster.brokers.items())}
        self._client_listener = {bid: cluster.client_listener(b) for bid, b in cluster.brokers.items()}
        self._inter_broker = {bid: b.config.inter_broker_listener_name for bid, b in cluster.brokers.items()}

    def security_protocol(self, listener: str) -> str:
        return self.protocols.get(listener, "PLAINTEXT")

    def client_endpoint(self, bid: int) -> tuple[str, int]:
        return self.hosts[bid], self._ports[bid][self._client_listener[bid]]

    def inter_broker_endpoint(self, bid: int) -> tuple[str, int]:
        return self.hosts[bid], self._ports[bid][self._inter_broker[bid]]

    def endpoints(self, bid: int) -> list:
        b = self.cluster.brokers[bid]
        return [
            {
                "port": lst.port,
                "host": self.hosts[bid],
                "listener": lst.name,
                "securityProtocol": _PROTOCOL_IDS.get(lst.security_protocol, 0),
            }
            for lst in _listeners(b)
        ]

    def rack(self, bid: int):
        return self.cluster.brokers[bid].config.props.get("broker.rack")

    def replicas(self, tp) -> list:
        st = self.cluster.controller.state.get(tp)
        return list(st["replicas"]) if st is not None else []

    def offset(self, tp, value) -> int:
        """An offset of partition ``tp`` (a mark of :attr:`slots`, if any)."""
        return int(value) if self.slots is None else self.slots.mark(OFFSET, tp, value)

    def leader_epoch(self, tp, value) -> int:
        """A leader epoch of partition ``tp``."""
        return int(value) if self.slots is None else self.slots.mark(LEADER_EPOCH, tp, value)

    def zk_version(self, tp, value) -> int:
        """The version of partition ``tp``'s state znode (``zkVersion``, ``currentIsrVersion``)."""
        return int(value) if self.slots is None else self.slots.mark(ZK_VERSION, tp, value)

    def broker_epoch_at(self, t: float) -> int:
        """This broker's epoch at ``t`` ms, as the controller sends it: the one it registered with at its
        last start-up before ``t`` (``Broker.lifecycle``), or its first."""
        epoch = self.broker.first_broker_epoch
        for when, event, detail in self.broker.lifecycle:
            if event == "started" and when <= t:
                epoch = detail
        return epoch

    def broker_epoch(self, bid: int, value) -> int:
        """A broker epoch of broker ``bid``."""
        value = int(value)
        return value if self.slots is None else self.slots.mark(BROKER_EPOCH, (bid, value), value)


def _listeners(broker) -> list:
    cfg = broker.config
    return list(cfg.data_plane_listeners) + ([cfg.control_plane_listener] if cfg.control_plane_listener else [])


_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


def _by_topic(tps):
    """``[(topic, [partition, ...]), ...]`` in first-seen order (Kafka groups partitions by topic)."""
    out: dict = {}
    for t, p in tps:
        out.setdefault(t, []).append(p)
    return list(out.items())


def _code(error) -> int:
    return ERROR_CODES.get(error or "NONE", -1)


# -- request bodies --------------------------------------------------------------------------------
def request_body(req, view: BrokerView):
    """The request's ``*RequestDataJsonConverter`` object (a dict in field order)."""
    return _REQUESTS[req.api](req, view)


def _produce_request(req, view):
    batches = req.payload.get("batches") if isinstance(req.payload, dict) else None
    topics = []
    for topic, parts in _by_topic(req.partitions):
        pdata = []
        for p in parts:
            n = batches[(topic, p)][0] if batches is not None else req.records
            pdata.append({"index": p, "recordsSizeInBytes": batch_bytes(n)})
        topics.append({"name": topic, "partitionData": pdata})
    return {"transactionalId": None, "acks": int(req.acks), "timeoutMs": int(req.timeout_ms), "topicData": topics}


def _fetch_request(req, view):
    p = req.payload or {}
    rid = p.get("replica_id", -1)
    follower = rid >= 0
    topics = []
    for topic, parts in _by_topic(req.partitions):
        plist = []
        for part in parts:
            tp = (topic, part)
            if follower:
                offset, last_epoch, current = p["fetches"][tp]
                plist.append(
                    {
                        "partition": part,
                        "currentLeaderEpoch": view.leader_epoch(tp, current),
                        "fetchOffset": view.offset(tp, offset),
                        "lastFetchedEpoch": view.leader_epoch(tp, last_epoch),
                        "logStartOffset": 0,
                        "partitionMaxBytes": 1048576,
                    }
                )
            else:
                plist.append(
                    {
                        "partition": part,
                        "currentLeaderEpoch": -1,
                        "fetchOffset": view.offset(tp, (p.get("offsets") or {}).get(tp, 0)),
                        "lastFetchedEpoch": -1,
                        "logStartOffset": -1,
                        "partitionMaxBytes": 1048576,
                    }
                )
        topics.append({"topic": topic, "partitions": plist})
    return {
        "replicaId": int(rid),
        "maxWaitMs": 500,
        "minBytes": 1,
        "maxBytes": 10485760 if follower else 52428800,
        "isolationLevel": 0,
        "sessionId": 0,
        "sessionEpoch": -1,
        "topics": topics,
        "forgottenTopicsData": [],
        "rackId": "",
    }


def _metadata_request(req, view):
    return {
        "topics": [{"topicId": _NO_TOPIC_ID, "name": t} for t, _ in _by_topic(req.partitions)],
        "allowAutoTopicCreation": True,
        "includeTopicAuthorizedOperations": False,
    }


def _control_header(req, view):
    p = req.payload
    return {
        "controllerId": int(p["controller_id"]),
        "controllerEpoch": int(p["controller_epoch"]),
        "brokerEpoch": view.broker_epoch(view.broker_id, view.broker_epoch_at(req.sent)),
    }


def _states_by_topic(states):
    out: dict = {}
    for st in states:
        out.setdefault(st["topic"], []).append(st)
    return list(out.items())


def _partition_state(st, p, view) -> dict:
    """The fields a partition's state has in both LeaderAndIsr and UpdateMetadata (their JSON schemas, in
    this order); each request adds its own after them."""
    return {
        "partitionIndex": st["partition"],
        "controllerEpoch": int(st.get("controller_epoch", p["controller_epoch"])),
        "leader": int(st["leader"]),
        "leaderEpoch": view.leader_epoch((st["topic"], st["partition"]), st["leader_epoch"]),
        "isr": [int(x) for x in st.get("isr", ())],
        "zkVersion": view.zk_version((st["topic"], st["partition"]), st.get("zk_version", 0)),
        "replicas": [int(x) for x in st.get("replicas", ())],
    }


def _leader_and_isr_request(req, view):
    p = req.payload
    states = p["partition_states"]
    topics = []
    for topic, sts in _states_by_topic(states):
        topics.append(
            {
                "topicName": topic,
                "topicId": topic_id(topic),
                "partitionStates": [
                    {**_partition_state(st, p, view), "addingReplicas": [], "removingReplicas": [], "isNew": False}
                    for st in sts
                ],
            }
        )
    leaders = sorted({int(st["leader"]) for st in states if st["leader"] in view.cluster.brokers})
    live = []
    for bid in leaders:
        host, port = view.inter_broker_endpoint(bid)
        live.append({"brokerId": bid, "hostName": host, "port": port})
    return {**_control_header(req, view), "type": 0, "topicStates": topics, "liveLeaders": live}


def _update_metadata_request(req, view):
    p = req.payload
    topics = []
    for topic, sts in _states_by_topic(p["partition_states"]):
        topics.append(
            {
                "topicName": topic,
                "topicId": topic_id(topic),
                "partitionStates": [{**_partition_state(st, p, view), "offlineReplicas": []} for st in sts],
            }
        )
    live = [
        {"id": bid, "endpoints": view.endpoints(bid), "rack": view.rack(bid)}
        for bid in sorted(p.get("live_brokers") or view.cluster.brokers)
        if bid in view.cluster.brokers
    ]
    return {**_control_header(req, view), "topicStates": topics, "liveBrokers": live}


def _stop_replica_request(req, view):
    p = req.payload
    stop = p.get("stop") or {tp: (-1, p.get("delete_partitions", False)) for tp in req.partitions}
    topics = []
    for topic, parts in _by_topic(list(stop)):
        topics.append(
            {
                "topicName": topic,
                "partitionStates": [
                    {
                        "partitionIndex": part,
                        "leaderEpoch": view.leader_epoch((topic, part), stop[(topic, part)][0]),
                        "deletePartition": bool(stop[(topic, part)][1]),
                    }
                    for part in parts
                ],
            }
        )
    return {**_control_header(req, view), "topicStates": topics}


def _alter_isr_request(req, view):
    p = req.payload
    items = p["items"]
    topics = []
    for topic, parts in _by_topic(list(items)):
        topics.append(
            {
                "name": topic,
                "partitions": [
                    {
                        "partitionIndex": part,
                        "leaderEpoch": view.leader_epoch((topic, part), items[(topic, part)][0]),
                        "newIsr": [int(x) for x in items[(topic, part)][1]],
                        "currentIsrVersion": view.zk_version((topic, part), items[(topic, part)][2]),
                    }
                    for part in parts
                ],
            }
        )
    return {"brokerId": int(p["broker_id"]), "brokerEpoch": _broker_epoch(p, view), "topics": topics}


def _controlled_shutdown_request(req, view):
    p = req.payload
    return {"brokerId": int(p["broker_id"]), "brokerEpoch": _broker_epoch(p, view)}


def _broker_epoch(p, view) -> int:
    """The broker epoch a broker's own request (AlterIsr, ControlledShutdown) carries."""
    return view.broker_epoch(int(p["broker_id"]), p.get("broker_epoch", -1))


def _init_producer_id_request(req, view):
    """An idempotent producer's (``TransactionManager``: no transactional id, ``Integer.MAX_VALUE`` timeout)."""
    return {"transactionalId": None, "transactionTimeoutMs": 2147483647, "producerId": -1, "producerEpoch": -1}


_REQUESTS = {
    "Produce": _produce_request,
    "Fetch": _fetch_request,
    "Metadata": _metadata_request,
    "LeaderAndIsr": _leader_and_isr_request,
    "UpdateMetadata": _update_metadata_request,
    "StopReplica": _stop_replica_request,
    "AlterIsr": _alter_isr_request,
    "ControlledShutdown": _controlled_shutdown_request,
    "InitProducerId": _init_producer_id_request,
}


# -- response bodies -------------------------------------------------------------------------------
def response_body(req, view: BrokerView):
    """The response's ``*ResponseDataJsonConverter`` object, or ``""`` when no response was sent."""
    if req.no_response:
        return ""
    return _RESPONSES[req.api](req, view)


def _partition_error(req, tp) -> str:
    pe = req.partition_errors
    if pe and tp in pe:
        return pe[tp]
    return "NONE" if req.error in ("NONE", "IN_FLIGHT") else req.error


def _produce_response(req, view):
    bases = req.result if isinstance(req.result, dict) else {}
    topics = []
    for topic, parts in _by_topic(req.partitions):
        out = []
        for part in parts:
            tp = (topic, part)
            err = _partition_error(req, tp)
            ok = err == "NONE" and tp in bases
            out.append(
                {
                    "index": part,
                    "errorCode": _code(err),
                    "baseOffset": view.offset(tp, bases[tp]) if ok else -1,
                    "logAppendTimeMs": -1,
                    "logStartOffset": 0 if ok else -1,
                    "recordErrors": [],
                    "errorMessage": None,
                }
            )
        topics.append({"name": topic, "partitionResponses": out})
    return {"responses": topics, "throttleTimeMs": 0}


def _fetch_response(req, view):
    p = req.payload or {}
    follower = p.get("replica_id", -1) >= 0
    result = req.result or {}
    topics = []
    for topic, parts in _by_topic(req.partitions):
        out = []
        for part in parts:
            tp = (topic, part)
            r = result.get(tp)
            if follower:
                if r is None:
                    err, hw, batches, diverging = "NOT_LEADER_OR_FOLLOWER", -1, (), None
                else:
                    err, hw, batches, diverging = r
                size = sum(batch_bytes(b[RECORDS]) for b in batches)
            else:
                err = (req.partition_errors or {}).get(tp, "NONE")
                hw = r[0] if r is not None else -1
                size = batch_bytes(r[1]) if r is not None else 0
                diverging = None
            hw = view.offset(tp, hw)
            d = {
                "partition": part,
                "errorCode": _code(err),
                "highWatermark": hw,
                "lastStableOffset": hw,
                "logStartOffset": 0 if err == "NONE" else -1,
            }
            if diverging is not None:
                d["divergingEpoch"] = {
                    "epoch": view.leader_epoch(tp, diverging[0]),
                    "endOffset": view.offset(tp, diverging[1]),
                }
            d["abortedTransactions"] = None
            d["preferredReadReplica"] = -1
            d["recordSetSizeInBytes"] = int(size)
            out.append(d)
        topics.append({"topic": topic, "partitionResponses": out})
    return {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": topics}


def _metadata_response(req, view):
    result = req.result or {}
    brokers = []
    for bid in sorted(view.cluster.brokers):
        host, port = view.client_endpoint(bid)
        brokers.append({"nodeId": bid, "host": host, "port": port, "rack": view.rack(bid)})
    topics = []
    for topic, parts in _by_topic(req.partitions):
        plist = []
        for part in parts:
            err, leader, epoch = result.get((topic, part), ("UNKNOWN_TOPIC_OR_PARTITION", -1, -1))
            replicas = view.replicas((topic, part))
            plist.append(
                {
                    "errorCode": _code(err),
                    "partitionIndex": part,
                    "leaderId": int(leader),
                    "leaderEpoch": view.leader_epoch((topic, part), epoch),
                    "replicaNodes": replicas,
                    "isrNodes": replicas,
                    "offlineReplicas": [],
                }
            )
        topics.append(
            {
                "errorCode": 0,
                "name": topic,
                "topicId": topic_id(topic),
                "isInternal": False,
                "partitions": plist,
                "topicAuthorizedOperations": -2147483648,
            }
        )
    return {
        "throttleTimeMs": 0,
        "brokers": brokers,
        "clusterId": view.cluster_id,
        "controllerId": int(view.broker.metadata_cache.controller_id),
        "topics": topics,
    }


def _top_error(req) -> int:
    return _code(req.error if req.error not in ("IN_FLIGHT",) else "NONE")


def _leader_and_isr_response(req, view):
    pe = req.partition_errors or {}
    if _top_error(req):
        return {"errorCode": _top_error(req), "topics": []}
    topics = []
    for topic, parts in _by_topic(list(pe)):
        topics.append(
            {
                "topicId": topic_id(topic),
                "partitionErrors": [{"partitionIndex": part, "errorCode": _code(pe[(topic, part)])} for part in parts],
            }
        )
    return {"errorCode": 0, "topics": topics}


def _update_metadata_response(req, view):
    return {"errorCode": _top_error(req)}


def _stop_replica_response(req, view):
    pe = req.partition_errors or {}
    if _top_error(req):
        return {"errorCode": _top_error(req), "partitionErrors": []}
    return {
        "errorCode": 0,
        "partitionErrors": [
            {"topicName": t, "partitionIndex": part, "errorCode": _code(e)} for (t, part), e in pe.items()
        ],
    }


def _alter_isr_response(req, view):
    result = req.result
    if not result:
        return {"throttleTimeMs": 0, "errorCode": _top_error(req), "topics": []}
    topics = []
    for topic, parts in _by_topic(list(result)):
        plist = []
        for part in parts:
            err, isr, epoch, zkv = result[(topic, part)]
            leader = req.payload["broker_id"] if err == "NONE" else -1
            plist.append(
                {
                    "partitionIndex": part,
                    "errorCode": _code(err),
                    "leaderId": int(leader),
                    "leaderEpoch": view.leader_epoch((topic, part), epoch),
                    "isr": [int(x) for x in (isr or [])],
                    "currentIsrVersion": view.zk_version((topic, part), zkv),
                }
            )
        topics.append({"name": topic, "partitions": plist})
    return {"throttleTimeMs": 0, "errorCode": 0, "topics": topics}


def _controlled_shutdown_response(req, view):
    remaining = req.result or ()
    return {
        "errorCode": _top_error(req),
        "remainingPartitions": [{"topicName": t, "partitionIndex": int(part)} for t, part in remaining],
    }


def _init_producer_id_response(req, view):
    producer_id, epoch = req.result if req.result is not None else (-1, -1)
    return {"throttleTimeMs": 0, "errorCode": _top_error(req), "producerId": producer_id, "producerEpoch": epoch}


_RESPONSES = {
    "Produce": _produce_response,
    "Fetch": _fetch_response,
    "Metadata": _metadata_response,
    "LeaderAndIsr": _leader_and_isr_response,
    "UpdateMetadata": _update_metadata_response,
    "StopReplica": _stop_replica_response,
    "AlterIsr": _alter_isr_response,
    "ControlledShutdown": _controlled_shutdown_response,
    "InitProducerId": _init_producer_id_response,
}


# -- the whole line --------------------------------------------------------------------------------
def _client_id(req, view) -> str:
    """The client id Kafka's own clients use: the controller's and the AlterIsr channel's is the broker id."""
    if req.is_controller:
        return str(req.payload["controller_id"])
    if req.api in ("AlterIsr", "ControlledShutdown"):
        return str(req.payload["broker_id"])
    return req.client_id


def _timings(req) -> tuple:
    return (
        phase_ms(req.start, req.end),
        phase_ms(req.start, req.dequeue),
        phase_ms(req.dequeue, req.api_local_complete),
        phase_ms(req.api_local_complete, req.response_complete),
        phase_ms(req.response_complete, req.response_dequeue),
        phase_ms(req.response_dequeue, req.end),
    )


def json_message(req, view: BrokerView, correlation_id: int | None = None) -> str:
    """The 2.8 message: ``Completed request:{...}`` (no layout)."""
    total, queue, local, remote, respq, send = _timings(req)
    listener = req.connection.listener
    d = {
        "isForwarded": False,
        "requestHeader": {
            "requestApiKey": _API_KEYS[req.api],
            "requestApiVersion": API_VERSIONS[req.api],
            "correlationId": int(req.correlation_id if correlation_id is None else correlation_id),
            "clientId": _client_id(req, view),
            "requestApiKeyName": API_KEY_NAMES[req.api],
        },
        "request": request_body(req, view),
        "response": response_body(req, view),
        "connection": req.connection.connection_id,
        "totalTimeMs": total,
        "requestQueueTimeMs": queue,
        "localTimeMs": local,
        "remoteTimeMs": remote,
        "throttleTimeMs": 0,
        "responseQueueTimeMs": respq,
        "sendTimeMs": send,
        "securityProtocol": view.security_protocol(listener),
        "principal": "User:ANONYMOUS",
        "listener": listener,
        "clientInformation": _SOFTWARE,
    }
    return "Completed request:" + json.dumps(d, separators=(",", ":"), ensure_ascii=False)


def struct_string(value) -> str:
    """``Struct.toString``: ``{name=value,...}``, arrays in brackets, ``null`` for none."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={struct_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(struct_string(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def text_message(req, view: BrokerView, correlation_id: int | None = None) -> str:
    """The 2.7 message: ``Completed request:RequestHeader(...) -- {...},response:{...} from connection ...``."""
    total, queue, local, remote, respq, send = _timings(req)
    listener = req.connection.listener
    corr = int(req.correlation_id if correlation_id is None else correlation_id)
    header = (
        f"RequestHeader(apiKey={API_KEY_NAMES[req.api]}, apiVersion={API_VERSIONS[req.api]}, "
        f"clientId={_client_id(req, view)}, correlationId={corr})"
    )
    resp = response_body(req, view)
    return (
        f"Completed request:{header} -- {struct_string(request_body(req, view))},response:"
        f"{struct_string(resp) if resp != '' else ''} from connection {req.connection.connection_id};"
        f"totalTime:{total!r},requestQueueTime:{queue!r},localTime:{local!r},remoteTime:{remote!r},"
        f"throttleTime:0,responseQueueTime:{respq!r},sendTime:{send!r},"
        f"securityProtocol:{view.security_protocol(listener)},principal:User:ANONYMOUS,listener:{listener},"
        f"clientInformation:ClientInformation(softwareName={_SOFTWARE['softwareName']}, "
        f"softwareVersion={_SOFTWARE['softwareVersion']})"
    )


def _api_keys():
    from kafka_lab.sim.server.apis import API_KEYS

    return API_KEYS


_API_KEYS = _api_keys()

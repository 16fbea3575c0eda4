"""A client of a cluster with its own metadata: the producer (Kafka 2.8 defaults).

A :class:`KafkaProducer` is 2.8's producer, by default without idempotence (``enable.idempotence=false``):

- **the application** hands over records; keyless records go where 2.8's default partitioner puts
  them (the *sticky* partitioner, KIP-480: a new batch goes to a random partition that has a leader,
  not the previous one), or the producer writes one batch to each of a fixed list of partitions
  (``partitions=[...]``: keyed records spread over them, as in KIP-291's 20-partition example);
- **the accumulator** keeps a queue of batches per partition;
- **the sender** drains, for each broker its metadata names leader of some partitions, one batch per
  ready partition into one ``Produce`` request, while fewer than
  ``max.in.flight.requests.per.connection`` (5) are in flight on that connection;
- **answers**, per partition: ``NONE`` acknowledges the batch. A retriable error
  (``NOT_LEADER_OR_FOLLOWER``, ``REQUEST_TIMED_OUT``, ``NOT_ENOUGH_REPLICAS[_AFTER_APPEND]``,
  ``NETWORK_EXCEPTION``, ...) re-queues it at the head of its partition after ``retry.backoff.ms``, while
  ``retries`` and ``delivery.timeout.ms`` allow; an ``InvalidMetadataException`` among them
  (``NOT_LEADER_OR_FOLLOWER``, ``NETWORK_EXCEPTION``, ...) also asks for a metadata refresh;
  ``REQUEST_TIMED_OUT`` does not. Anything else, or a retry not allowed, fails the batch (an error
  returned to the application);
- **acks=0**: no response is expected (``Sender``: ``expectResponse = acks != 0``), so a batch is done,
  ``NONE`` with base offset -1, once its request is written (``NetworkClient.handleCompletedSends``): it
  holds no in-flight slot, and what the broker makes of it is never known to the producer;
- **client timeout**: a request unanswered after ``request.timeout.ms`` closes its connection
  (``NetworkClient.handleTimedOutRequests``); every request in flight on it fails ``NETWORK_EXCEPTION``.
  The broker may still append it: a retry then writes the batch twice (a *duplicate*);
- **connections** (``NetworkClient``, ``ClusterConnectionStates``): the sender drains batches only for a
  broker it has a connection to, or can open one to (``Sender.sendProducerData`` drops the nodes that are
  not ready). A broker whose process is not running refuses the connection: its batches stay in the
  accumulator, metadata is requested (``DefaultMetadataUpdater.handleServerDisconnect``; a refresh due
  then counts as failed, ``failedUpdate``), and the broker is not tried again for ``reconnect.backoff.ms``
  (50, doubling at each failure in a row up to ``reconnect.backoff.max.ms``, 1000, with ±20 % jitter). A
  connection the broker closes (its process stopped, or an ``acks=0`` produce failed) is a disconnection:
  every request in flight on it fails ``NETWORK_EXCEPTION`` (``handleDisconnections``), metadata is
  requested, and the same backoff applies before the next connection;
- **metadata**: a ``Metadata`` request to the least-loaded broker not in its reconnect backoff, answered
  from *that broker's* metadata cache, when asked for (``retry.backoff.ms`` after the last refresh at the earliest, and then at
  once: ``Metadata.timeToNextUpdate``) or after ``metadata.max.age.ms``;
  a partition whose leader epoch is older than the one already known is ignored (KIP-320);
- **idempotence** (``enable_idempotence=True``, 2.8's ``enable.idempotence``; the default from 3.0): the
  config checks of ``ProducerConfig`` and ``KafkaProducer`` with Kafka's messages (``acks`` must be ``all``,
  and becomes ``all`` when not set; ``retries`` > 0; at most 5 requests in flight); an ``InitProducerId`` to
  the least loaded broker before any batch is drained; per partition, each batch stamped with the producer
  id, epoch and a sequence advanced by its record count; a retry keeps its stamp, goes back in sequence order,
  and is sent only as the partition's first batch not done; ``OUT_OF_ORDER_SEQUENCE_NUMBER`` retried (a real
  gap, or a failure with retries left, bumps the epoch locally and numbers the partition's batches not done
  from 0 again). What the broker does with the stamp: :mod:`kafka_lab.sim.server.producer_state`. Not
  modelled: batches expiring in the accumulator (unresolved sequences), the epoch running out, transactions.

Every batch is one row of the **ledger** (:mod:`.ledger`). Defaults are 2.8's: ``acks=1``,
``retries=2147483647``, ``retry.backoff.ms=100``, ``request.timeout.ms=30000``,
``delivery.timeout.ms=120000``, ``max.in.flight.requests.per.connection=5``,
``metadata.max.age.ms=300000``, ``linger.ms=0`` (a batch is ready at once), ``reconnect.backoff.ms=50``,
``reconnect.backoff.max.ms=1000``.
"""

from __future__ import annotations

import math
import numbers
from collections import deque

import numpy as np

from kafka_lab.listeners.endpoint import java_trim

from ..common.distributions import Exponential
from ..common.options import check_number, check_open_loop, check_time, kafka_int
from ..network.request import NAN, Request
from ..network.socket_server import DISCONNECTED, ConnectionRefused

__all__ = ["KafkaProducer", "ProducerBatch", "PRODUCER_DEFAULTS", "RETRIABLE_ERRORS", "INVALID_METADATA_ERRORS"]

#: errors whose exception is a ``RetriableException`` (producer retries them)
RETRIABLE_ERRORS = frozenset(
    {
        "NOT_LEADER_OR_FOLLOWER",
        "REQUEST_TIMED_OUT",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "NETWORK_EXCEPTION",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "LEADER_NOT_AVAILABLE",
    }
)
#: ``InvalidMetadataException`` subclasses: the producer also refreshes its metadata
INVALID_METADATA_ERRORS = frozenset(
    {"NOT_LEADER_OR_FOLLOWER", "NETWORK_EXCEPTION", "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE"}
)

PRODUCER_DEFAULTS = {
    "acks": 1,
    "retries": 2147483647,
    "retry.backoff.ms": 100,
    "request.timeout.ms": 30000,
    "delivery.timeout.ms": 120000,
    "max.in.flight.requests.per.connection": 5,
    "metadata.max.age.ms": 300000,
    "linger.ms": 0,
}


#: ``reconnect.backoff.ms`` and ``reconnect.backoff.max.ms`` (CommonClientConfigs, 2.8 defaults), and
#: ClusterConnectionStates' exponential base and jitter: the n-th failure in a row (from 0) waits
#: ``50 * 2**min(n, log2(1000 / 50))`` ms times a uniform factor in [0.8, 1.2)
RECONNECT_BACKOFF_MS = 50.0
RECONNECT_BACKOFF_MAX_MS = 1000.0
RECONNECT_BACKOFF_JITTER = 0.2


def reconnect_backoff_ms(failures: int, jitter: float = 1.0) -> float:
    """``ExponentialBackoff.backoff(failures)`` for the reconnect backoff, ``jitter`` its random factor."""
    exp = min(failures, math.log(RECONNECT_BACKOFF_MAX_MS / RECONNECT_BACKOFF_MS) / math.log(2))
    return float(int(jitter * RECONNECT_BACKOFF_MS * 2**exp))


#: the lower bounds ProducerConfig (2.8) puts on these settings (``atLeast``, ``between(0, ...)``)
#: the settings above that ProducerConfig defines as INT (the rest are LONG: times the model takes as any number)
_INT_CONFIGS = ("retries", "max.in.flight.requests.per.connection")

_AT_LEAST = {
    "retries": 0,
    "retry.backoff.ms": 0,
    "request.timeout.ms": 0,
    "delivery.timeout.ms": 0,
    "max.in.flight.requests.per.connection": 1,
    "metadata.max.age.ms": 0,
    "linger.ms": 0,
}


#: ProducerConfig's ``acks`` (2.8): a STRING setting, ``ConfigDef.ValidString.in("all", "-1", "0", "1")``
_ACKS = {"all": -1, "-1": -1, "0": 0, "1": 1}


def _parse_acks(acks) -> int:
    """``acks`` as the int a ProduceRequest carries (``all`` is -1).

    Kafka takes the strings ``"all"``, ``"-1"``, ``"0"`` and ``"1"`` (trimmed first, as ConfigDef trims every
    string, and compared case-sensitively); the model takes those and the ints -1, 0 and 1. A bool is not an
    acks value (``True`` would otherwise pass as 1).
    """
    if isinstance(acks, str):
        value = java_trim(acks)
        if value not in _ACKS:
            raise ValueError(f"Invalid value {value} for configuration acks: String must be one of: all, -1, 0, 1")
        return _ACKS[value]
    if isinstance(acks, (bool, np.bool_)) or not isinstance(acks, numbers.Integral):
        raise TypeError(
            f"acks is one of the strings 'all', '-1', '0', '1' or the ints -1, 0, 1, got {type(acks).__name__} {acks!r}"
        )
    if acks not in (-1, 0, 1):
        raise ValueError(f"Invalid value {acks} for configuration acks: String must be one of: all, -1, 0, 1")
    return int(acks)


def _parse_idempotence(value) -> bool:
    """``enable.idempotence``, a BOOLEAN setting: a bool, or the strings ``true`` and ``false`` (trimmed, any case:
    ``ConfigDef.parseType``)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        v = java_trim(value).lower()
        if v in ("true", "false"):
            return v == "true"
        raise ValueError(
            f"Invalid value {value} for configuration enable.idempotence: Expected value to be either true or false"
        )
    raise TypeError(f"enable_idempotence is a bool (or 'true'/'false'), got {type(value).__name__} {value!r}")


#: the most requests in flight per connection an idempotent producer allows (``configureInflightRequests``)
MAX_IN_FLIGHT_IDEMPOTENT = 5


def _idempotence_rules(idempotent: bool, acks, cfg: dict) -> int:
    """``acks`` as a ProduceRequest carries it, after ``ProducerConfig.maybeOverrideAcksAndRetries`` (2.8).

    With idempotence, ``retries=0`` is refused, then an ``acks`` set to anything but ``all`` (Kafka's
    ``ConfigException`` messages); an ``acks`` not set becomes ``all`` ("Overriding the default acks to all
    since idempotence is enabled"). Without it, an ``acks`` not set is 2.8's default, 1."""
    if not idempotent:
        return _parse_acks(PRODUCER_DEFAULTS["acks"] if acks is None else acks)
    parsed = -1 if acks is None else _parse_acks(acks)
    if cfg["retries"] == 0:
        raise ValueError("Must set retries to non-zero when using the idempotent producer.")
    if parsed != -1:
        raise ValueError(
            "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."
        )
    return parsed


class _PartitionSequences:
    """``TopicPartitionEntry``: the producer id and epoch a partition's sequences belong to, the next sequence, the
    last acknowledged one, and the batches that have a sequence and are not done (in flight or queued for a
    retry), in sequence order (``inflightBatchesBySequence``)."""

    __slots__ = ("producer_id", "producer_epoch", "next_sequence", "last_acked", "in_flight")

    def __init__(self):
        self.producer_id = self.producer_epoch = -1  # ProducerIdAndEpoch.NONE
        self.next_sequence = 0
        self.last_acked = -1  # NO_LAST_ACKED_SEQUENCE_NUMBER
        self.in_flight: list = []

    def start_at_beginning(self, producer_id: int, producer_epoch: int) -> None:
        """``startSequencesAtBeginning``: the batches not done are numbered again from 0 under the new id and
        epoch (``resetProducerState``: their sequence *has been reset*), and the next sequence follows them."""
        seq = 0
        for b in self.in_flight:
            b.producer_id, b.producer_epoch, b.base_sequence = producer_id, producer_epoch, seq
            b.sequence_reset = True
            seq += b.records
        self.producer_id, self.producer_epoch = producer_id, producer_epoch
        self.next_sequence = seq
        self.last_acked = -1


class ProducerBatch:
    """One batch the application handed over, and what became of it (a row of the ledger)."""

    __slots__ = (
        "batch_id",
        "client_id",
        "topic",
        "partition",
        "records",
        "acks",
        "created_ms",
        "attempts",
        "retry_at",
        "outcome",
        "error",
        "done_ms",
        "base_offset",
        "broker_id",
        "wrong_leader_sends",
        "wrong_leader_ms",
        "first_sent_ms",
        "sent_ms",
        "refused_sent_ms",
        "in_flight",
        "request",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "sequence_reset",
    )

    def __init__(self, batch_id, client_id, tp, records, acks, now):
        self.batch_id = batch_id
        self.client_id = client_id
        self.topic, self.partition = tp
        self.records = records
        self.acks = acks
        self.created_ms = now
        self.attempts = 0
        self.retry_at = 0.0
        self.outcome = "pending"  # pending | acknowledged | failed (the ledger resolves acknowledged)
        self.error = ""
        self.done_ms = float("nan")
        self.base_offset = -1
        self.broker_id = -1
        self.wrong_leader_sends = 0
        self.wrong_leader_ms = 0.0  # time lost to wrong leaders: each refused send to the batch's next send
        self.first_sent_ms = NAN  # the producer's first send of it (latency is measured from here)
        self.sent_ms = NAN  # the send of the attempt in flight (or the last one)
        self.refused_sent_ms = NAN  # the send of an attempt refused NOT_LEADER_OR_FOLLOWER, until it is sent again
        self.in_flight = False
        self.request = None  # acks=0: the request that carried it (the ledger asks whether a broker handled it)
        # an idempotent producer's stamp, set when the batch is first drained (ProducerBatch.setProducerState)
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1  # RecordBatch.NO_SEQUENCE
        self.sequence_reset = False  # rewritten by an epoch bump since it was last drained (sequenceHasBeenReset)

    @property
    def last_sequence(self) -> int:
        return self.base_sequence + self.records - 1

    def wrong_leader_ms_at(self, now: float) -> float:
        """The time lost to wrong leaders as of ``now``: a refused batch not sent again yet is still losing it."""
        pending = self.refused_sent_ms
        return self.wrong_leader_ms + (now - pending if pending == pending else 0.0)

    @property
    def tp(self):
        return (self.topic, self.partition)


class _Leaders(dict):
    """``tp -> (leader, leader_epoch)`` as a client's metadata names them, counting its writes (``version``), so
    that what is derived from it (the sticky partitioner's available partitions) is rebuilt only after a
    change. Reads are a plain dict's."""

    __slots__ = ("version",)

    def __init__(self):
        super().__init__()
        self.version = 0

    def __setitem__(self, tp, value) -> None:
        self.version += 1
        super().__setitem__(tp, value)

    def __delitem__(self, tp) -> None:
        self.version += 1
        super().__delitem__(tp)

    def pop(self, *args):
        self.version += 1
        return super().pop(*args)

    def clear(self) -> None:
        self.version += 1
        super().clear()

    def update(self, *args, **kw) -> None:
        self.version += 1
        super().update(*args, **kw)

    def setdefault(self, tp, default=None):
        self.version += 1
        return super().setdefault(tp, default)


class _MetadataClient:
    """What every client of a cluster shares: connections per broker, metadata, its refresh."""

    def __init__(self, cluster, client_id: str, *, topic: str, retry_backoff_ms: float, metadata_max_age_ms: float):
        self.cluster = cluster
        self.env = cluster.env
        self.client_id = client_id
        self.topic = topic
        self.retry_backoff_ms = retry_backoff_ms
        self.metadata_max_age_ms = metadata_max_age_ms
        self.leaders = _Leaders()  # tp -> (leader, leader_epoch)
        self.last_refresh_ms = -float("inf")
        self.update_requested = True
        self.metadata_in_flight = False
        self.connections: dict = {}  # broker id -> Connection
        self.in_flight: dict = {}  # broker id -> number of requests in flight
        #: broker id -> (failures in a row, not before (ms)): ClusterConnectionStates after a disconnection
        self.reconnect: dict = {}
        self._reconnect_rng = None  # the jitter's own stream (drawn only when a connection is lost)
        self._correlation = 0
        self.sent = 0
        self._refresh_at = None  # when the earliest armed refresh timer fires (None: none armed)
        self.prefer = None  # a broker to ask for metadata (else the least loaded, NetworkClient.leastLoadedNode)
        self._known_partitions = cluster.partitions_of(topic)

    def topic_partitions(self) -> list:
        """The topic's partitions as the cluster lists them; once the topic is deleted, the last ones it had
        (the client keeps asking for them and is answered UNKNOWN_TOPIC_OR_PARTITION)."""
        tps = self.cluster.topics.get(self.topic)
        if tps is not None:
            self._known_partitions = tps
        return self._known_partitions

    def connection(self, bid: int):
        """The open connection to ``bid``, a new one, or None: in its reconnect backoff, or refused now
        (``NetworkClient.ready``)."""
        conn = self.connections.get(bid)
        if conn is not None and not conn.closed:
            return conn
        if self.blacked_out_until(bid) > self.env.now:
            return None
        b = self.cluster.brokers[bid]
        try:
            conn = b.connect(self.cluster.client_listener(b), self.client_id, on_disconnect=self._disconnected)
        except ConnectionRefused:
            self._connection_lost(bid)
            return None
        self.connections[bid] = conn
        self.reconnect.pop(bid, None)  # ClusterConnectionStates.ready: the backoff starts over
        self.in_flight[bid] = 0
        return conn

    def least_loaded_node(self):
        """``NetworkClient.leastLoadedNode``: a broker it may connect to, the fewest requests in flight first (the
        bootstrap broker on a tie); None when every broker is in its reconnect backoff."""
        now = self.env.now
        usable = [b for b in sorted(self.cluster.brokers) if self.blacked_out_until(b) <= now]
        return min(usable, key=lambda b: (self.in_flight.get(b, 0), b != self.cluster.bootstrap, b), default=None)

    def blacked_out_until(self, bid: int) -> float:
        """When ``bid`` may be connected to again (``isBlackedOut``); -inf when it may now."""
        state = self.reconnect.get(bid)
        return state[1] if state is not None else -math.inf

    def _connection_lost(self, bid: int) -> None:
        """``processDisconnection``: ``ClusterConnectionStates.disconnected`` (the node's reconnect backoff grows),
        then ``handleServerDisconnect``: a metadata refresh due now counts as failed (``failedUpdate``), and
        an update is requested ("The disconnect may be the result of stale metadata")."""
        now = self.env.now
        if self.connections.get(bid) is not None and self.connections[bid].closed:
            del self.connections[bid]
        failures = self.reconnect.get(bid, (0, 0.0))[0]
        if self._reconnect_rng is None:
            self._reconnect_rng = self.cluster.rng(f"reconnect:{self.client_id}")
        jitter = self._reconnect_rng.uniform(1 - RECONNECT_BACKOFF_JITTER, 1 + RECONNECT_BACKOFF_JITTER)
        self.reconnect[bid] = (failures + 1, now + reconnect_backoff_ms(failures, jitter))
        if not self.metadata_in_flight and now >= self._refresh_due():
            self.last_refresh_ms = now
        self.request_update()

    def _disconnected(self, conn) -> None:
        """The broker closed ``conn`` (``NetworkClient.handleDisconnections``); the requests in flight on it
        complete ``NETWORK_EXCEPTION`` next, each through its own handler."""
        if self.connections.get(conn.broker_id) is conn:
            self._connection_lost(conn.broker_id)
            self.maybe_refresh()  # NetworkClient.poll's next maybeUpdate (when retry.backoff.ms allows)

    def _send(self, bid: int, req: Request) -> bool:
        """Write ``req`` to ``bid``'s connection; False (nothing sent) when there is none to be had."""
        conn = self.connection(bid)  # first: a new connection starts with nothing in flight
        if conn is None:
            return False
        req.correlation_id = self._correlation
        self._correlation += 1
        self.sent += 1
        self.in_flight[bid] += 1
        self.cluster.log.append(req)
        conn.send(req)
        return True

    def request_update(self) -> None:
        self.update_requested = True

    def _refresh_due(self) -> float:
        """``Metadata.timeToNextUpdate`` as a time: the last refresh + ``retry.backoff.ms`` once an update is
        asked for, else + ``metadata.max.age.ms``."""
        return self.last_refresh_ms + (self.retry_backoff_ms if self.update_requested else self.metadata_max_age_ms)

    def maybe_refresh(self) -> None:
        """Send a Metadata request if one is due (asked for, or aged) and none is in flight."""
        now = self.env.now
        if self.metadata_in_flight:
            return
        due = self._refresh_due()
        if now < due:
            # Metadata.timeToNextUpdate: wake when the refresh is due. An update asked for (due at the last
            # refresh + retry.backoff.ms) comes before the age-based refresh already armed, so it gets a timer
            # of its own: the earliest armed timer is the one that matters
            self._wake_refresh(due)
            return
        bid = self.prefer if self.prefer is not None else self.least_loaded_node()
        if bid is None:  # every broker in its reconnect backoff: ask when the first one's ends
            self._wake_refresh(min(map(self.blacked_out_until, self.cluster.brokers)))
            return
        if self.blacked_out_until(bid) > now:
            self._wake_refresh(self.blacked_out_until(bid))
            return
        tps = self.topic_partitions()
        req = Request(
            "Metadata",
            0,
            self.client_id,
            partitions=tuple(tps),
            on_done=lambda r, bid=bid: self._metadata_answer(r, bid),
        )
        if self._send(bid, req):
            self.metadata_in_flight = True
            self._track_metadata(req, bid)
        else:  # refused: the refresh counted as failed (_connection_lost), due again retry.backoff.ms from now
            self.maybe_refresh()

    def _track_metadata(self, req, bid) -> None:
        """A client with request timeouts watches its Metadata request too (the producer: ``handleTimedOutRequests``
        covers every request in flight); the base client has none."""

    def _metadata_given_up(self, req) -> bool:
        """True when this client already gave up on ``req`` (it timed out and its connection was closed): its late
        answer is ignored, as NetworkClient ignores an answer on a closed connection."""
        return False

    def _metadata_failed(self) -> None:
        """``DefaultMetadataUpdater.handleFailedRequest``: ``failedUpdate`` (the refresh counts as done now) and the
        update is still wanted, retry.backoff.ms from now."""
        self.metadata_in_flight = False
        self.last_refresh_ms = self.env.now
        self.update_requested = True
        self.maybe_refresh()

    def _wake_refresh(self, at: float) -> None:
        """Call :meth:`maybe_refresh` at ``at``, unless a timer armed earlier fires before."""
        if self._refresh_at is None or at < self._refresh_at:
            self._refresh_at = at

            def fire(_e, at=at):
                if self._refresh_at == at:
                    self._refresh_at = None
                self.maybe_refresh()

            self.env.timeout(at - self.env.now).callbacks.append(fire)

    def _metadata_answer(self, req, bid) -> None:
        if self._metadata_given_up(req):
            return
        self.in_flight[bid] -= 1
        if req.error == DISCONNECTED:  # handleFailedRequest: failedUpdate, the update is still wanted
            self._metadata_failed()
            return
        self.metadata_in_flight = False
        self.last_refresh_ms = self.env.now
        self.update_requested = False
        for tp, (err, leader, epoch) in (req.result or {}).items():
            known = self.leaders.get(tp)
            if known is not None and epoch < known[1]:
                continue  # KIP-320: older than what this client has seen
            if err == "NONE":
                self.leaders[tp] = (leader, epoch)
            elif known is not None:
                self.leaders[tp] = (-1, max(epoch, known[1]))
        self.on_metadata()
        self.maybe_refresh()  # arm the age-based refresh

    def on_metadata(self) -> None:  # overridden
        pass


class KafkaProducer(_MetadataClient):
    """A producer of one topic (see the module docstring for what it models)."""

    def __init__(
        self,
        cluster,
        client_id: str,
        *,
        topic: str,
        acks=None,
        records_per_batch: int = 10,
        partitions=None,
        rng=None,
        enable_idempotence=False,
        **configs,
    ):
        unknown = set(configs) - {k.replace(".", "_") for k in PRODUCER_DEFAULTS}
        if unknown:
            raise TypeError(
                f"unknown producer setting(s) {sorted(unknown)}; known: "
                f"{sorted(k.replace('.', '_') for k in PRODUCER_DEFAULTS if k != 'acks')} and enable_idempotence"
            )
        cfg = {k: configs.get(k.replace(".", "_"), v) for k, v in PRODUCER_DEFAULTS.items()}
        for key, low in _AT_LEAST.items():  # ProducerConfig's ranges, with ConfigDef's message
            value = cfg[key]
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise TypeError(f"{key.replace('.', '_')} is a finite number, got {value!r}")
            if value < low:
                raise ValueError(f"Invalid value {value} for configuration {key}: Value must be at least {low}")
        for key in _INT_CONFIGS:  # INT settings (ProducerConfig): a whole number, as ConfigDef reads it
            cfg[key] = kafka_int(key, cfg[key])
        idempotent = _parse_idempotence(enable_idempotence)
        acks = _idempotence_rules(idempotent, acks, cfg)
        check_number("records_per_batch", records_per_batch, whole=True, least=1)
        if cfg["delivery.timeout.ms"] < cfg["linger.ms"] + cfg["request.timeout.ms"]:
            raise ValueError("delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms")
        if idempotent and cfg["max.in.flight.requests.per.connection"] > MAX_IN_FLIGHT_IDEMPOTENT:
            raise ValueError(
                "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."
            )
        super().__init__(
            cluster,
            client_id,
            topic=topic,
            retry_backoff_ms=cfg["retry.backoff.ms"],
            metadata_max_age_ms=cfg["metadata.max.age.ms"],
        )
        self.acks = acks
        self.cfg = cfg
        self.records_per_batch = records_per_batch
        self.fixed = None if partitions is None else self._fixed_partitions(partitions)
        self.rng = rng if rng is not None else cluster.rng(f"producer:{client_id}")
        self.accumulator: dict = {}  # tp -> deque of batches not in flight, in the order the partitions came
        self._position: dict = {}  # tp -> its place in the accumulator's order
        self._filled: set = set()  # partitions whose queue may hold a batch (drain looks at these only)
        self._available = None  # (topic partitions, leaders' version, the partitions that have a leader)
        self.batches: list[ProducerBatch] = []
        self.requests: dict = {}  # id(req) -> (req, broker id, batches)
        self._sticky = None
        self._wake_at = None
        self._timeout_armed = False
        #: enable.idempotence: the producer id and epoch (-1 until InitProducerId answers) and, per partition,
        #: its sequences (TransactionManager and its TopicPartitionBookkeeper)
        self.idempotent = idempotent
        self.producer_id = self.producer_epoch = -1
        self._sequences: dict = {}  # tp -> _PartitionSequences
        self._init_pid = None  # the InitProducerId in flight
        self._init_pid_at = 0.0  # not before (retry.backoff.ms after a failed one)
        self._epoch_bump_required = False
        self._rewrite: set = set()  # partitions whose sequences start again at the next epoch bump
        if idempotent:  # the Sender's first loop: InitProducerId, before the first produce
            self._init_producer_id()
        self.maybe_refresh()

    def _fixed_partitions(self, partitions) -> list:
        """``partitions=[...]`` as ``(topic, partition)`` pairs: partitions of this producer's topic, at least one.

        A partition the topic does not have is refused here. Kafka's producer would block in ``send`` for
        ``max.block.ms`` waiting for metadata that never names it, then fail the record with a
        TimeoutException; the model has no ``max.block.ms``, and its batches would wait forever.
        """
        topic = self.topic
        known = self.cluster.partitions_of(topic)
        out = []
        for tp in partitions:
            p = tp[1] if isinstance(tp, tuple) and len(tp) == 2 else tp
            if isinstance(p, bool) or not isinstance(p, numbers.Integral):
                raise TypeError(f"a partition is an int or a (topic, partition) pair, got {tp!r}")
            if isinstance(tp, tuple) and tp[0] != topic:
                raise ValueError(f"{tp!r} is not a partition of {topic!r}, the topic this producer writes to")
            if (topic, p) not in known:
                raise ValueError(
                    f"partition {p} of topic {topic!r} does not exist: its partitions are 0 to {len(known) - 1} "
                    f"(Kafka's producer would wait max.block.ms, then fail: Partition {p} of topic {topic} with "
                    f"partition count {len(known)} is not present in metadata after 60000 ms.)"
                )
            out.append((topic, int(p)))
        if not out:
            raise ValueError(
                "partitions is None (the sticky partitioner) or a non-empty list of the topic's partitions"
            )
        return out

    # -- the application ---------------------------------------------------------------------------
    def produce(self) -> list[ProducerBatch]:
        """The application hands over one batch (sticky) or one batch per fixed partition."""
        now = self.env.now
        if self.fixed is not None:
            tps = self.fixed
        else:
            tps = [self._sticky_partition()]
            if tps[0] is None:
                tps = [self.topic_partitions()[0]]
        out = []
        for tp in tps:
            b = ProducerBatch(self.cluster.next_batch_id(), self.client_id, tp, self.records_per_batch, self.acks, now)
            self.batches.append(b)
            self._queue(tp).append(b)
            out.append(b)
        self.drain()
        return out

    def _queue(self, tp) -> deque:
        """``tp``'s queue in the accumulator (made when first needed), marked as holding a batch."""
        queue = self.accumulator.get(tp)
        if queue is None:
            queue = self.accumulator[tp] = deque()
            self._position[tp] = len(self._position)
        self._filled.add(tp)
        return queue

    def _sticky_partition(self):
        """KIP-480 (``StickyPartitionCache.nextPartition``): a random partition with a leader other than the
        previous one; the only one if one alone has a leader; any partition, the previous one too, if none has."""
        tps, leaders = self.topic_partitions(), self.leaders
        known = self._available
        if known is None or known[0] is not tps or known[1] != leaders.version:
            available = [tp for tp in tps if tp in leaders and leaders[tp][0] >= 0]
            known = self._available = (tps, leaders.version, available)
        avail = known[2]
        if not avail:  # no partition has a leader (no metadata yet): random % partitions.size()
            self._sticky = tps[int(self.rng.integers(len(tps)))]
            return self._sticky
        if len(avail) > 1 and self._sticky in avail:
            avail = list(avail)
            avail.remove(self._sticky)  # a partition is listed once
        self._sticky = avail[int(self.rng.integers(len(avail)))]
        return self._sticky

    def open_loop(self, rate_per_s: float, start_ms: float = 0.0, stop_ms: float | None = None) -> None:
        """The application produces at Poisson times, ``rate_per_s`` per simulated second (more than 0, at most
        :data:`~kafka_lab.sim.common.options.MAX_RATE_PER_S`), from ``start_ms`` after now until ``stop_ms``."""
        check_open_loop(rate_per_s, start_ms, stop_ms)
        self.cluster.expect_handovers(rate_per_s=rate_per_s, start_ms=self.env.now + start_ms, stop_ms=stop_ms)
        gap = Exponential(1000.0 / rate_per_s).sampler(self.rng)

        def loop():
            if start_ms:
                yield self.env.timeout(start_ms)
            while True:
                yield self.env.timeout(gap())
                if stop_ms is not None and self.env.now > stop_ms:
                    return
                self.produce()

        self.env.process(loop())

    def burst(self, n: int, at_ms: float = 0.0) -> None:
        """The application hands over ``n`` times at once, ``at_ms`` from now."""
        check_number("n", n, whole=True, least=0)
        check_time("at_ms", at_ms)
        self.cluster.expect_handovers(sends=n, start_ms=self.env.now + at_ms)

        def go():
            if at_ms:
                yield self.env.timeout(at_ms)
            for _ in range(n):
                self.produce()

        self.env.process(go())

    # -- the sender ---------------------------------------------------------------------------------
    def on_metadata(self) -> None:
        self.drain()

    def drain(self) -> None:
        """Send what is ready: per leader, one batch per ready partition, within the in-flight limit."""
        now = self.env.now
        if self.idempotent:  # Sender.runOnce: bumpIdempotentEpochAndResetIdIfNeeded, before sendProducerData
            self._maybe_bump_epoch()
            if self.producer_id < 0:
                self._init_producer_id()
        if not self.leaders:
            self.maybe_refresh()
            return
        per_node: dict = {}
        next_wake = None
        filled, accumulator = self._filled, self.accumulator
        # the partitions with a batch, in the accumulator's order (those found empty are forgotten)
        for tp in sorted(filled, key=self._position.__getitem__) if len(filled) > 1 else tuple(filled):
            q = accumulator[tp]
            if not q:
                filled.discard(tp)
                continue
            b = q[0]
            leader = self.leaders.get(tp, (-1, 0))[0]
            if leader < 0:
                self.request_update()
                continue
            if b.retry_at > now:
                next_wake = b.retry_at if next_wake is None else min(next_wake, b.retry_at)
                continue
            if self.idempotent and self._stop_drain(tp, b):
                continue
            per_node.setdefault(leader, []).append(tp)
        limit = self.cfg["max.in.flight.requests.per.connection"]
        for bid, tps in per_node.items():
            if self.connection(bid) is None:  # not ready (Sender drops the node): its batches wait
                until = self.blacked_out_until(bid)
                next_wake = until if next_wake is None else min(next_wake, until)
                continue
            # one request at a time per connection slot: one batch (the head) per ready partition
            while tps and self.in_flight.get(bid, 0) < limit:
                batches = [self.accumulator[tp].popleft() for tp in tps]
                self._send_produce(bid, batches)
                tps = [
                    tp
                    for tp in tps
                    if self.accumulator[tp]
                    and self.accumulator[tp][0].retry_at <= now
                    and not (self.idempotent and self._stop_drain(tp, self.accumulator[tp][0]))
                ]
        if self.update_requested:
            self.maybe_refresh()
        if next_wake is not None and (self._wake_at is None or next_wake < self._wake_at):
            self._wake_at = next_wake

            def fire(_e):
                self._wake_at = None
                self.drain()

            self.env.timeout(next_wake - now).callbacks.append(fire)

    def _send_produce(self, bid: int, batches: list) -> None:
        now = self.env.now
        for b in batches:
            b.attempts += 1
            b.in_flight = True
            b.broker_id = bid
            if b.attempts == 1:
                b.first_sent_ms = now
            b.sent_ms = now
            refused = b.refused_sent_ms
            if refused == refused:  # sent again after a NOT_LEADER_OR_FOLLOWER: the time since that send is lost
                b.wrong_leader_ms += now - refused
                b.refused_sent_ms = NAN
            if self.idempotent:
                self._drained(b)
        tps = tuple(b.tp for b in batches)
        if self.idempotent:
            stamped = {b.tp: (b.records, b.batch_id, b.producer_id, b.producer_epoch, b.base_sequence) for b in batches}
        else:
            stamped = {b.tp: (b.records, b.batch_id) for b in batches}
        req = Request(
            "Produce",
            0,
            self.client_id,
            acks=self.acks,
            partitions=tps,
            records=self.records_per_batch,
            timeout_ms=self.cfg["request.timeout.ms"],
            payload={"batches": stamped},
            on_done=self._answered,
        )
        self.requests[id(req)] = (req, bid, batches)
        self._send(bid, req)  # drain has made sure of the connection
        if req.acks == 0:
            for b in batches:
                b.request = req
            # acks=0 expects no response (Sender: expectResponse = acks != 0): NetworkClient completes the request
            # once it is written (handleCompletedSends), and Sender completes each batch NONE, offset -1
            del self.requests[id(req)]
            self.in_flight[bid] -= 1
            for b in batches:
                self._complete_batch(b, "NONE", -1)
            return
        self._arm_timeout()

    def _arm_timeout(self) -> None:
        """One timer at the oldest request's deadline (``NetworkClient.poll`` checks the in-flight requests)."""
        if self._timeout_armed or not self.requests:
            return
        self._timeout_armed = True
        oldest = next(iter(self.requests.values()))[0]
        delay = max(0.0, oldest.sent + self.cfg["request.timeout.ms"] - self.env.now)
        self.env.timeout(delay).callbacks.append(self._timeouts)

    def _timeouts(self, _e=None) -> None:
        """``handleTimedOutRequests``: every request older than ``request.timeout.ms`` times out, oldest first."""
        self._timeout_armed = False
        now, timeout = self.env.now, self.cfg["request.timeout.ms"]
        while self.requests:
            req = next(iter(self.requests.values()))[0]  # in the order sent: the oldest first
            if req.sent + timeout > now:
                break
            self._client_timeout(req, req.connection)
        self._arm_timeout()

    def _answered(self, req) -> None:
        entry = self.requests.pop(id(req), None)
        if entry is None:
            return  # answered after the client gave up on it (its connection was closed)
        _, bid, batches = entry
        self.in_flight[bid] -= 1
        errors = req.partition_errors or {}
        bases = req.result or {}
        for b in batches:
            err = errors.get(b.tp, "NONE") if req.acks != 0 else "NONE"
            self._complete_batch(b, err, bases.get(b.tp, -1))
        self.drain()

    def _client_timeout(self, req, conn) -> None:
        if id(req) not in self.requests:
            return
        # NetworkClient.handleTimedOutRequests: close the connection; everything in flight on it fails
        conn.close()
        for key, (r, bid, batches) in list(self.requests.items()):
            if r.connection is conn:
                del self.requests[key]
                self.in_flight[bid] -= 1
                if r is self._init_pid:  # TxnRequestHandler: disconnected, retried after retry.backoff.ms
                    self._init_pid_failed()
                    continue
                if r.api == "Metadata":  # DefaultMetadataUpdater.handleFailedRequest
                    self._metadata_failed()
                    continue
                for b in batches:
                    self._complete_batch(b, "NETWORK_EXCEPTION", -1)
        self.request_update()
        self.drain()

    def _track_metadata(self, req, bid) -> None:
        """The Metadata request is in flight like any other: ``request.timeout.ms`` applies to it, and a timeout
        (its own or another request's on the same connection) closes the connection and fails it."""
        self.requests[id(req)] = (req, bid, ())
        self._arm_timeout()

    def _metadata_given_up(self, req) -> bool:
        return self.requests.pop(id(req), None) is None

    def _complete_batch(self, b: ProducerBatch, err: str, base_offset: int) -> None:
        now = self.env.now
        b.in_flight = False
        if err == "NONE":
            b.outcome, b.error, b.done_ms, b.base_offset = "acknowledged", "NONE", now, base_offset
            if self.idempotent:
                self._completed(b)
            return
        if err == "NOT_LEADER_OR_FOLLOWER":
            b.wrong_leader_sends += 1
            b.refused_sent_ms = b.sent_ms
        # Sender.canRetry: the delivery timeout and retries first, then (idempotent) TransactionManager.canRetry
        can_retry = b.attempts <= self.cfg["retries"] and now - b.created_ms < self.cfg["delivery.timeout.ms"]
        if can_retry:
            can_retry = self._can_retry_idempotent(b, err) if self.idempotent else err in RETRIABLE_ERRORS
        if err in INVALID_METADATA_ERRORS:
            self.request_update()
        if can_retry:
            b.retry_at = now + self.cfg["retry.backoff.ms"]
            b.error = err
            if self.idempotent:
                self._insert_in_sequence_order(b)
            else:
                self._queue(b.tp).appendleft(b)
        else:
            b.outcome, b.error, b.done_ms = "failed", err, now
            b.wrong_leader_ms = b.wrong_leader_ms_at(now)  # a refused batch that fails lost the time until then
            b.refused_sent_ms = NAN
            if self.idempotent:
                self._failed(b, err)

    # -- idempotence (TransactionManager, for a producer without a transactional.id) -----------------------
    def _init_producer_id(self) -> None:
        """``InitProducerId`` to the least loaded broker, unless one is in flight or a producer id is known; a
        broker that refuses the connection is tried again after ``retry.backoff.ms``."""
        now = self.env.now
        if self._init_pid is not None or self.producer_id >= 0 or now < self._init_pid_at:
            return
        bid = self.least_loaded_node()
        req = Request("InitProducerId", 0, self.client_id, on_done=self._init_pid_answer)
        if bid is not None and self._send(bid, req):
            self._init_pid = req
            self.requests[id(req)] = (req, bid, ())
            self._arm_timeout()
        else:
            self._init_pid_failed()

    def _init_pid_failed(self) -> None:
        self._init_pid = None
        self._init_pid_at = self.env.now + self.cfg["retry.backoff.ms"]
        self.env.timeout(self.cfg["retry.backoff.ms"]).callbacks.append(lambda _e: self.drain())

    def _init_pid_answer(self, req) -> None:
        entry = self.requests.pop(id(req), None)
        if entry is None:
            return  # answered after the client gave up on it (its connection was closed)
        self.in_flight[entry[1]] -= 1
        if req.error == DISCONNECTED or req.result is None:
            self._init_pid_failed()
            return
        self._init_pid = None
        self.producer_id, self.producer_epoch = req.result  # InitProducerIdHandler: setProducerIdAndEpoch
        self.drain()

    def _entry(self, tp) -> _PartitionSequences:
        entry = self._sequences.get(tp)
        if entry is None:
            entry = self._sequences[tp] = _PartitionSequences()
        return entry

    def _stop_drain(self, tp, first: ProducerBatch) -> bool:
        """``RecordAccumulator.shouldStopDrainBatchesForPartition`` for an idempotent producer."""
        if self.producer_id < 0:
            return True  # "we cannot send the batch until we have refreshed the producer id"
        entry = self._sequences.get(tp)
        if entry is None or not entry.in_flight:
            return False
        if first.base_sequence < 0:
            # no new batch while batches of an older producer id or epoch are not done: a new one, at sequence 0
            # of the new epoch, could be written before them
            return (entry.producer_id, entry.producer_epoch) != (self.producer_id, self.producer_epoch)
        # a retry goes only as the first batch not done, by sequence: one batch at a time until it is resolved
        return first.base_sequence != entry.in_flight[0].base_sequence

    def _drained(self, b: ProducerBatch) -> None:
        """``RecordAccumulator.drain`` for an idempotent producer. A batch drained for the first time:
        ``maybeUpdateProducerIdAndEpoch`` (a partition whose batches are all done starts again at 0 under a new
        epoch), then ``setProducerState`` and ``incrementSequenceNumber``; a retry keeps its stamp. Either way the
        batch is closed (``ProducerBatch.close``: a sequence rewritten by an epoch bump is now sent as such)."""
        if b.base_sequence < 0:
            entry = self._entry(b.tp)
            current = (self.producer_id, self.producer_epoch)
            if (entry.producer_id, entry.producer_epoch) != current and not entry.in_flight:
                entry.start_at_beginning(*current)
            b.producer_id, b.producer_epoch, b.base_sequence = current[0], current[1], entry.next_sequence
            entry.next_sequence += b.records
            entry.in_flight.append(b)  # drained in sequence order: the largest yet
        b.sequence_reset = False

    def _completed(self, b: ProducerBatch) -> None:
        """``handleCompletedBatch``: the last acknowledged sequence, and the batch is done."""
        entry = self._entry(b.tp)
        entry.last_acked = max(entry.last_acked, b.last_sequence)
        if b in entry.in_flight:
            entry.in_flight.remove(b)

    def _failed(self, b: ProducerBatch, err: str) -> None:
        """``handleFailedBatch`` for an idempotent producer: the batch is done; after ``OUT_OF_ORDER_SEQUENCE_NUMBER``
        (a gap in the log), or any failure with retries left, the partition's sequences start again at 0 under
        the next epoch (``requestEpochBumpForPartition``). Retries used up: its sequence may or may not be in the
        log, and nothing is adjusted."""
        entry = self._entry(b.tp)
        if b in entry.in_flight:
            entry.in_flight.remove(b)
        if err == "OUT_OF_ORDER_SEQUENCE_NUMBER" or b.attempts <= self.cfg["retries"]:
            self._request_epoch_bump(b.tp)

    def _can_retry_idempotent(self, b: ProducerBatch, err: str) -> bool:
        """``TransactionManager.canRetry`` (2.8), for a producer without a transactional id.

        ``OUT_OF_ORDER_SEQUENCE_NUMBER`` is always retried: without bumping the epoch when the batch is not the next
        after the last acknowledged sequence (or its sequence was reset: an earlier batch is still unresolved),
        with a bump when it is (a real gap). ``UNKNOWN_PRODUCER_ID`` never comes from a 2.8 broker. Anything else:
        retried if retriable."""
        if err == "OUT_OF_ORDER_SEQUENCE_NUMBER":
            entry = self._entry(b.tp)
            if not (b.sequence_reset or b.base_sequence - entry.last_acked != 1):
                self._request_epoch_bump(b.tp)
            return True
        return err in RETRIABLE_ERRORS

    def _request_epoch_bump(self, tp) -> None:
        self._epoch_bump_required = True
        self._rewrite.add(tp)

    def _maybe_bump_epoch(self) -> None:
        """``bumpIdempotentProducerEpoch``: the epoch goes up by one, locally (no request), and the partitions that
        asked for it number their batches not done from 0 again (the broker accepts sequence 0 of a new epoch)."""
        if not self._epoch_bump_required:
            return
        self.producer_epoch += 1
        for tp in sorted(self._rewrite, key=lambda t: (t[0], t[1])):
            self._entry(tp).start_at_beginning(self.producer_id, self.producer_epoch)
        self._rewrite.clear()
        self._epoch_bump_required = False

    def _insert_in_sequence_order(self, b: ProducerBatch) -> None:
        """``RecordAccumulator.insertInSequenceOrder``: a retried batch goes back before every queued batch with a
        larger sequence (or none yet), after those with a smaller one."""
        q = self._queue(b.tp)
        ahead = []
        while q and q[0].base_sequence >= 0 and q[0].base_sequence < b.base_sequence:
            ahead.append(q.popleft())
        q.appendleft(b)
        for other in reversed(ahead):
            q.appendleft(other)

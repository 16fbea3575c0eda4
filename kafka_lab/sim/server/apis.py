"""KafkaApis: what a request handler thread does with each request, and what it costs.

Cost model (``localTime``, the handler's own work): for each API a :class:`CostModel`, a base
service-time distribution plus a cost per partition and per record per partition:

    localTime = base + per_partition_ms × partitions + per_record_ms × records × partitions

The effects of a request apply when that work is done:

==================== ===========================================================================
``Produce``          append to each partition led here (others: ``NOT_LEADER_OR_FOLLOWER``).
                     ``acks=0``: no response is sent (the processor only unmutes the connection);
                     if any partition failed, the processor closes the connection instead
                     (``CloseConnectionResponse``: "so that the producer client will know that some
                     error has happened and will refresh its metadata");
                     ``acks=1``: answered at once; ``acks=all`` (-1): parked in produce purgatory
                     until the followers have the records (``remoteTime``), see :mod:`.purgatory`
``Fetch``            a consumer fetch is answered at once; a follower fetch (``replica_id`` ≥ 0)
                     reports the follower's log end offsets, which may advance the high watermark
                     and complete delayed produces; with nothing new it long-polls
``Metadata``         answered from the metadata cache
``InitProducerId``   an idempotent producer's (no ``transactional.id``): any broker answers it with the next
                     producer id of its block and epoch 0 (:meth:`~.broker.Broker.generate_producer_id`)
``LeaderAndIsr``     become leader / become follower per partition (``makeFollowers`` completes
                     pending acks=all produces with ``NOT_LEADER_OR_FOLLOWER``)
``UpdateMetadata``   updates the metadata cache
``StopReplica``      stops (and optionally deletes) replicas, completing their delayed operations
==================== ===========================================================================

A produce response's error is the first non-``NONE`` partition error in request order.

Simplifications, deliberate: a consumer fetch never long-polls (as with ``fetch.min.bytes`` satisfied at
once); a request's effects are applied at the end of its ``localTime`` rather than part-way through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..common.distributions import Distribution, Exponential, as_distribution
from ..common.options import check_number
from ..network.request import IN_FLIGHT

__all__ = ["CostModel", "KafkaApis", "default_costs", "API_KEYS", "CONTROLLER_APIS"]

#: Kafka's API keys for the requests the model knows
API_KEYS = {
    "Produce": 0,
    "Fetch": 1,
    "Metadata": 3,
    "InitProducerId": 22,
    "LeaderAndIsr": 4,
    "StopReplica": 5,
    "UpdateMetadata": 6,
    "ControlledShutdown": 7,
    "AlterIsr": 56,
}
CONTROLLER_APIS = frozenset({"LeaderAndIsr", "UpdateMetadata", "StopReplica"})


@dataclass(frozen=True)
class CostModel:
    """The handler time of one request: base + per partition + per record per partition (ms)."""

    base: Distribution
    per_partition_ms: float = 0.0
    per_record_ms: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "base", as_distribution(self.base))
        check_number("per_partition_ms", self.per_partition_ms, least=0)
        check_number("per_record_ms", self.per_record_ms, least=0)

    def mean_ms(self, partitions: int = 1, records: int = 0) -> float:
        return self.base.mean_ms + self.per_partition_ms * partitions + self.per_record_ms * records * partitions


def default_costs() -> dict:
    """Default cost models (ms), one per API; small numbers of the order a busy broker shows."""
    return {
        "Produce": CostModel(Exponential(0.5), per_partition_ms=0.01, per_record_ms=0.0005),
        "Fetch": CostModel(Exponential(0.3), per_partition_ms=0.01),
        "Metadata": CostModel(Exponential(0.2)),
        "InitProducerId": CostModel(Exponential(0.2)),
        "LeaderAndIsr": CostModel(1.0, per_partition_ms=0.05),
        "UpdateMetadata": CostModel(0.5, per_partition_ms=0.01),
        "StopReplica": CostModel(0.5, per_partition_ms=0.05),
        "AlterIsr": CostModel(0.2, per_partition_ms=0.01),
        "ControlledShutdown": CostModel(0.2),
    }


@dataclass
class _Bound:
    sample: object
    per_partition_ms: float
    per_record_ms: float


class KafkaApis:
    """Handles requests for one broker (both planes share it, as in Kafka)."""

    def __init__(self, broker, costs: dict, rng):
        unknown = set(costs) - set(API_KEYS)
        if unknown:
            raise ValueError(f"unknown API(s) in the cost models: {sorted(unknown)}; known: {sorted(API_KEYS)}")
        self.broker = broker
        self.env = broker.env
        self.replicas = broker.replica_manager
        self.metadata_cache = broker.metadata_cache
        self.replica_fetch_wait_max_ms = broker.config.replica_fetch_wait_max_ms
        self._costs = {
            api: _Bound(cm.base.sampler(rng), cm.per_partition_ms, cm.per_record_ms) for api, cm in costs.items()
        }
        self._apply = {api: getattr(self, "_" + api) for api in API_KEYS}  # "Produce" -> self._Produce, ...
        #: the appends in progress per partition (``Partition.leaderIsrUpdateLock``), kept only in KRaft mode, where
        #: the metadata loader waits for them (:mod:`.metadata_loader`); None otherwise
        self.locks = None

    def handle(self, req) -> float:
        """The handler time this request takes (its ``localTime``)."""
        c = self._costs[req.api]
        n = len(req.partitions)
        if self.locks is not None and req.api == "Produce":
            self.locks.begin(req)  # its appends hold each partition's lock (KRaft's loader waits for it)
        return c.sample() + c.per_partition_ms * n + c.per_record_ms * req.records * n

    def complete_local(self, req) -> None:
        """The handler's work on ``req`` is done: apply its effects and answer (or park) it."""
        req.api_local_complete = self.env.now
        if self.locks is not None and req.api == "Produce":
            self.locks.end(req)
        self._apply[req.api](req)

    def respond(self, req) -> None:
        if req.error == IN_FLIGHT:
            req.error = "NONE"
        req.connection.processor.enqueue_response(req)

    # -- data plane ------------------------------------------------------------------------------
    def _Produce(self, req):
        required, bases, errors = self.replicas.append(req)
        req.result = bases
        if req.acks == -1 and required:
            self.broker.produce_purgatory.try_complete_else_watch(req, required, errors)
            return
        req.partition_errors = errors
        req.error = next((errors[tp] for tp in req.partitions if tp in errors), "NONE")
        if req.acks == 0:
            req.no_response = True
            # KafkaApis.handleProduceRequest: "Closing connection due to error during produce request ... with ack=0"
            req.close_connection = req.error != "NONE"
        self.respond(req)

    def _Fetch(self, req):
        p = req.payload or {}
        replica_id = p.get("replica_id", -1)
        if replica_id < 0:
            return self._consumer_fetch(req, p)
        result, any_data = self.replicas.fetch_as_leader(replica_id, p["fetches"])
        if not any_data and self.replica_fetch_wait_max_ms > 0:
            req.result = result
            self.broker.fetch_purgatory.watch(req, self.replica_fetch_wait_max_ms)
        else:
            req.result = result
            self.respond(req)

    def respond_follower_fetch(self, req) -> None:
        """A long-polled follower fetch completes: read again what is there now (DelayedFetch.onComplete)."""
        p = req.payload
        req.result, _ = self.replicas.fetch_as_leader(
            p["replica_id"], p["fetches"], update_follower=False, check_divergence=False
        )
        self.respond(req)

    def _consumer_fetch(self, req, p):
        """A consumer reads what is below the high watermark (no long poll in this model)."""
        offsets = p.get("offsets") or {}
        errors, result = {}, {}
        for tp in req.partitions:
            part = self.replicas.leader_partition(tp)
            if part is None:
                errors[tp] = "NOT_LEADER_OR_FOLLOWER"
                continue
            start = offsets.get(tp, part.hw)
            result[tp] = (part.hw, max(0, part.hw - start))
        req.partition_errors = errors
        req.result = result
        req.error = next((errors[tp] for tp in req.partitions if tp in errors), "NONE")
        self.respond(req)

    def _Metadata(self, req):
        req.result = self.metadata_cache.describe(req.partitions)
        self.respond(req)

    def _InitProducerId(self, req):
        """``TransactionCoordinator.handleInitProducerId`` with no transactional id: "always blindly accept the
        request and return a new producerId from the producerId manager", epoch 0."""
        req.result = (self.broker.generate_producer_id(), 0)
        self.respond(req)

    # -- control plane requests ------------------------------------------------------------------
    def _stale_broker_epoch(self, req) -> bool:
        """``KafkaApis.isBrokerEpochStale`` (KIP-380, 2.2+), checked first by LeaderAndIsr, UpdateMetadata and
        StopReplica: a request carrying a broker epoch older than this broker's own was meant for a previous
        incarnation, and is answered ``STALE_BROKER_EPOCH`` with nothing applied; -1 (a controller before 2.2:
        ``UNKNOWN_BROKER_EPOCH``) is never stale, nor is a newer one (the controller may know it first). The
        model also notes, for the fencing experiments, whether the request was meant for an older incarnation
        and whether its controller epoch is older than the newest this broker has seen."""
        p = req.payload
        p["handled_by_broker_epoch"] = self.broker.broker_epoch
        p["newest_controller_epoch_seen"] = max(self.replicas.controller_epoch, self.metadata_cache.controller_epoch)
        sent = p.get("broker_epoch", -1)
        if sent != -1 and sent < self.broker.broker_epoch:
            req.error = "STALE_BROKER_EPOCH"
            self.respond(req)
            return True
        return False

    def _LeaderAndIsr(self, req):
        if self._stale_broker_epoch(req):
            return
        p = req.payload
        req.partition_errors = self.replicas.become_leader_or_follower(p["partition_states"], p.get("controller_epoch"))
        if (
            req.partition_errors
            and all(e == "STALE_CONTROLLER_EPOCH" for e in req.partition_errors.values())
            and p.get("controller_epoch") is not None
            and p["controller_epoch"] < self.replicas.controller_epoch
        ):
            req.error = "STALE_CONTROLLER_EPOCH"
        self.respond(req)

    def _UpdateMetadata(self, req):
        if self._stale_broker_epoch(req):
            return
        p = req.payload
        err = self.metadata_cache.update(
            p["partition_states"],
            req.correlation_id,
            req.sent,
            self.env.now,
            live_brokers=p.get("live_brokers"),
            controller_id=p.get("controller_id"),
            controller_epoch=p.get("controller_epoch"),
        )
        if err != "NONE":
            req.error = err
        self.respond(req)

    def _StopReplica(self, req):
        if self._stale_broker_epoch(req):
            return
        p = req.payload
        stop = p.get("stop") or {tp: (-1, p.get("delete_partitions", False)) for tp in req.partitions}
        req.partition_errors = self.replicas.stop_replicas(stop, p.get("controller_epoch"))
        if req.partition_errors and all(e == "STALE_CONTROLLER_EPOCH" for e in req.partition_errors.values()):
            req.error = "STALE_CONTROLLER_EPOCH"
        self.respond(req)

    def _active_controller(self, req):
        """The controller, if this broker is it; else ``req`` is answered ``NOT_CONTROLLER`` and None."""
        controller = self.broker.cluster.controller if self.broker.cluster is not None else None
        if controller is None or controller.id != self.broker.id:
            req.error = "NOT_CONTROLLER"
            self.respond(req)
            return None
        return controller

    def _ControlledShutdown(self, req):
        """Handed to the controller (``handleControlledShutdownRequest``); answered when its work is done. On a
        broker that is not the controller, 2.8's ``doControlledShutdown`` throws ``ControllerMovedException``
        ("Controller moved to another broker. Aborting controlled shutdown"), which ``Errors.forException``
        answers ``STALE_CONTROLLER_EPOCH`` (error 11), not ``NOT_CONTROLLER``."""
        controller = self.broker.cluster.controller if self.broker.cluster is not None else None
        if controller is None or controller.id != self.broker.id:
            req.error = "STALE_CONTROLLER_EPOCH"
            self.respond(req)
            return
        controller.handle_controlled_shutdown(req, self.respond)

    def _AlterIsr(self, req):
        if (controller := self._active_controller(req)) is not None:
            controller.handle_alter_isr(req, self.respond)

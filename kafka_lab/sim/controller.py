"""The controller (Kafka 2.8, ZooKeeper mode): partition state, its writes, and its channel to brokers.

One broker is the controller. It keeps every partition's ``LeaderAndIsr`` state (leader, leader epoch,
ISR, replicas and the znode's ``zkVersion``), writes every change to ZooKeeper first
(``/brokers/topics/<t>/partitions/<p>/state``; here a write takes ``zk_latency_ms``), and only then
tells the brokers:

- **a leader move** (:meth:`Controller.elect_leader`): leader epoch + 1, then ``LeaderAndIsr`` to every
  replica and ``UpdateMetadata`` to every live broker (``ControllerBrokerRequestBatch``);
- **AlterIsr** from a leader (:meth:`Controller.handle_alter_isr`, KIP-497): a stale leader epoch is
  ``FENCED_LEADER_EPOCH``, a wrong ``zkVersion`` ``INVALID_UPDATE_VERSION``, a request from a broker
  epoch the controller does not know ``STALE_BROKER_EPOCH``; accepted changes are written, answered,
  and published with ``UpdateMetadata`` (not LeaderAndIsr) to every live broker;
- **topic deletion** (:meth:`Controller.delete_topic`): ``StopReplica(deletePartition=false)`` then
  ``StopReplica(deletePartition=true)`` (leader epoch -2) to every replica; the topic is gone when every
  replica has answered the second.

The channel (``ControllerChannelManager``): one queue per broker and one request in flight; it connects
to the broker's ``control.plane.listener.name`` listener when the broker has one, else to its
inter-broker listener (KIP-291). Every request carries the controller's id and epoch, which brokers
use to fence an older controller.

Every decision is kept (:attr:`Controller.decisions`: time, partition, leader, leader epoch), so the
staleness of each broker's metadata can be measured from the moment the controller decided.
"""

from __future__ import annotations

from collections import deque

from .apis import CONTROLLER_APIS
from .records import Request

__all__ = ["Controller", "ControllerChannel"]


class ControllerChannel:
    """The controller's queue and connection to one broker (``RequestSendThread``: one in flight)."""

    def __init__(self, controller, broker):
        self.controller = controller
        self.broker = broker
        self.connection = broker.controller_connection(controller.id)
        self.queue: deque = deque()
        self.busy = False

    def enqueue(self, req: Request) -> None:
        self.queue.append(req)
        self.pump()

    def pump(self) -> None:
        if self.busy or not self.queue:
            return
        self.busy = True
        req = self.queue.popleft()
        self.controller.log.append(req)
        self.controller.sent += 1
        self.connection.send(req)

    def answered(self, req) -> None:
        self.busy = False
        cb = req.payload.get("callback") if isinstance(req.payload, dict) else None
        if cb is not None:
            cb(req)
        self.pump()


class Controller:
    """The active controller: its id and epoch, the partition states, and its channels to brokers."""

    def __init__(
        self, env, brokers: dict, log: list, *, controller_id: int, epoch: int = 1, zk_latency_ms: float = 2.0
    ):
        self.env = env
        self.brokers = brokers  # id -> Broker (the cluster's)
        self.log = log
        self.id = controller_id
        self.epoch = epoch
        self.zk_latency_ms = zk_latency_ms
        self.client_id = f"controller-{controller_id}"
        self.state: dict = {}  # tp -> {"leader", "leader_epoch", "isr", "replicas", "zk_version"}
        self.live_brokers: set = set(brokers)
        self.decisions: list = []  # (time_ms, topic, partition, leader, leader_epoch)
        self.deleted_topics: dict = {}  # topic -> time every replica had deleted it
        self._channels: dict = {}
        self._correlation = 0
        self.sent = 0

    # -- the channel ---------------------------------------------------------------------------------
    def channel(self, broker) -> ControllerChannel:
        ch = self._channels.get(broker.id)
        if ch is None:
            ch = self._channels[broker.id] = ControllerChannel(self, broker)
        return ch

    def send(
        self,
        broker,
        api: str,
        partition_states: list[dict] | None = None,
        *,
        at_ms: float = 0.0,
        partitions=None,
        delete_partitions: bool = False,
        callback=None,
        epoch: int | None = None,
    ) -> None:
        """Queue a control request for ``broker`` at ``at_ms``; sent when the previous one is answered."""
        if api not in CONTROLLER_APIS:
            raise ValueError(f"the controller sends {sorted(CONTROLLER_APIS)}, not {api!r}")
        states = [dict(s) for s in (partition_states or [])]
        if api == "StopReplica":
            tps = tuple(partitions) if partitions is not None else tuple((s["topic"], s["partition"]) for s in states)
            epochs = {(s["topic"], s["partition"]): s.get("leader_epoch", -1) for s in states}
            stop = {tp: (epochs.get(tp, -2 if delete_partitions else -1), delete_partitions) for tp in tps}
        else:
            tps = tuple(partitions) if partitions is not None else tuple((s["topic"], s["partition"]) for s in states)
            stop = None
        ch = self.channel(broker)
        payload = {
            "controller_id": self.id,
            "controller_epoch": self.epoch if epoch is None else epoch,
            "partition_states": states,
            "delete_partitions": delete_partitions,
            "stop": stop,
            "live_brokers": sorted(self.live_brokers),
            "callback": callback,
        }

        def enqueue(_e=None):
            req = Request(
                api,
                self._correlation,
                self.client_id,
                partitions=tps,
                payload=payload,
                is_controller=True,
                on_done=ch.answered,
            )
            self._correlation += 1
            ch.enqueue(req)

        if at_ms <= self.env.now:
            enqueue()
        else:
            self.env.timeout(at_ms - self.env.now).callbacks.append(enqueue)

    # -- partition state -----------------------------------------------------------------------------
    def partition_state(self, tp) -> dict:
        st = self.state[tp]
        return {
            "topic": tp[0],
            "partition": tp[1],
            "leader": st["leader"],
            "leader_epoch": st["leader_epoch"],
            "isr": list(st["isr"]),
            "replicas": list(st["replicas"]),
            "zk_version": st["zk_version"],
            "controller_epoch": self.epoch,
        }

    def add_partition(self, tp, replicas: list, leader: int | None = None) -> None:
        """A new partition's first state (as ``onNewPartitionCreation`` leaves it): leader = first live replica."""
        live = [r for r in replicas if r in self.live_brokers]
        self.state[tp] = {
            "leader": leader if leader is not None else (live[0] if live else -1),
            "leader_epoch": 0,
            "isr": live,
            "replicas": list(replicas),
            "zk_version": 0,
        }

    def _publish(self, tps, *, leader_and_isr: bool, at_ms: float | None = None) -> None:
        """LeaderAndIsr to each partition's replicas (batched per broker) and UpdateMetadata to all live brokers."""
        at = self.env.now if at_ms is None else at_ms
        if leader_and_isr:
            per_broker: dict = {}
            for tp in tps:
                for r in self.state[tp]["replicas"]:
                    if r in self.live_brokers:
                        per_broker.setdefault(r, []).append(self.partition_state(tp))
            for bid in sorted(per_broker):
                if bid not in self.brokers:
                    continue
                self.send(self.brokers[bid], "LeaderAndIsr", per_broker[bid], at_ms=at)
        states = [self.partition_state(tp) for tp in tps]
        for bid in sorted(self.live_brokers & set(self.brokers)):
            self.send(self.brokers[bid], "UpdateMetadata", states, at_ms=at)

    def elect_leader(self, tp, new_leader: int, *, at_ms: float = 0.0) -> None:
        """Move ``tp``'s leadership to ``new_leader`` at ``at_ms`` (e.g. a preferred-leader election)."""
        st = self.state[tp]
        if new_leader not in st["replicas"]:
            raise ValueError(f"broker {new_leader} holds no replica of {tp[0]}-{tp[1]}; replicas: {st['replicas']}")

        def decide():
            if at_ms > self.env.now:
                yield self.env.timeout(at_ms - self.env.now)
            yield self.env.timeout(self.zk_latency_ms)  # the state znode is written first
            st["leader"] = new_leader
            st["leader_epoch"] += 1
            st["zk_version"] += 1
            if new_leader not in st["isr"]:
                st["isr"] = [new_leader] + list(st["isr"])
            self.decisions.append((self.env.now, tp[0], tp[1], new_leader, st["leader_epoch"]))
            self._publish([tp], leader_and_isr=True)

        self.env.process(decide())

    # -- AlterIsr ------------------------------------------------------------------------------------
    def handle_alter_isr(self, req, respond) -> None:
        """``processAlterIsr``: validate, write, answer (``respond(req)``), then UpdateMetadata to all."""
        p = req.payload

        def work():
            broker = self.brokers.get(p["broker_id"])
            if broker is None or p.get("broker_epoch", 0) != broker.broker_epoch:
                req.error = "STALE_BROKER_EPOCH"
                req.result = None
                respond(req)
                return
            result, changed = {}, []
            for tp, (leader_epoch, isr, zk_version) in p["items"].items():
                st = self.state.get(tp)
                if st is None:
                    result[tp] = ("UNKNOWN_TOPIC_OR_PARTITION", None, leader_epoch, zk_version)
                elif leader_epoch < st["leader_epoch"]:
                    result[tp] = ("FENCED_LEADER_EPOCH", None, leader_epoch, zk_version)
                elif zk_version != st["zk_version"]:
                    result[tp] = ("INVALID_UPDATE_VERSION", None, leader_epoch, zk_version)
                else:
                    changed.append((tp, isr))
            if changed:
                yield self.env.timeout(self.zk_latency_ms)
            for tp, isr in changed:
                st = self.state[tp]
                st["isr"] = list(isr)
                st["zk_version"] += 1
                result[tp] = ("NONE", list(isr), st["leader_epoch"], st["zk_version"])
            req.result = result
            respond(req)
            if changed:
                self._publish([tp for tp, _ in changed], leader_and_isr=False)

        self.env.process(work())

    # -- topic deletion ------------------------------------------------------------------------------
    def delete_topic(self, topic: str, *, at_ms: float = 0.0) -> None:
        """StopReplica(delete=false), then StopReplica(delete=true) to every replica of ``topic``."""
        tps = [tp for tp in self.state if tp[0] == topic]
        if not tps:
            raise ValueError(f"unknown topic {topic!r}")
        per_broker: dict = {}
        for tp in tps:
            for r in self.state[tp]["replicas"]:
                per_broker.setdefault(r, []).append(tp)
        waiting = {bid for bid in per_broker if bid in self.live_brokers}

        def deleted(req, bid):
            waiting.discard(bid)
            if not waiting:
                self.deleted_topics[topic] = self.env.now
                for tp in tps:
                    self.state.pop(tp, None)

        for bid in sorted(waiting):
            b = self.brokers[bid]
            states = [{"topic": t, "partition": p, "leader_epoch": -2} for t, p in per_broker[bid]]
            self.send(b, "StopReplica", states, at_ms=at_ms, delete_partitions=False)
            self.send(
                b,
                "StopReplica",
                states,
                at_ms=at_ms,
                delete_partitions=True,
                callback=lambda req, bid=bid: deleted(req, bid),
            )
        gone = [{"topic": t, "partition": p, "leader": -2, "leader_epoch": -2} for t, p in tps]
        for bid in sorted(self.live_brokers & set(self.brokers)):
            self.send(self.brokers[bid], "UpdateMetadata", gone, at_ms=at_ms)

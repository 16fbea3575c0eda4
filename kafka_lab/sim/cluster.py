"""A Kafka cluster on one simulated clock: brokers, a controller, topics, producers and consumers.

    >>> from kafka_lab.sim import Cluster
    >>> c = Cluster(3, seed=1)
    >>> c.create_topic("orders", partitions=6, replication_factor=3)
    >>> c.producer("app-1", topic="orders", acks="all").open_loop(rate_per_s=500)
    >>> res = c.run(until_ms=1000)
    >>> sorted(set(res.ledger["outcome"].astype(str)))
    ['committed', 'pending']

Each broker is the broker model of lab 03 (:class:`~kafka_lab.sim.server.broker.Broker`) with its own
properties: its listeners, ``broker.rack``, and ``control.plane.listener.name`` or not, so a cluster
half-way through KIP-291's migration is a valid cluster. Topics are placed by Kafka's own assignment
(:func:`kafka_lab.assignment.assign_replicas_to_brokers`, rack-aware when brokers have racks). Followers
are brokers: they replicate through the leader's request path (:mod:`.server.fetcher`). One broker is the
controller (:mod:`.zk.controller`); it connects to every broker on the listener its own config names
(``control.plane.listener.name``, else the inter-broker listener), which each broker serves on its control
plane only if it names it too. Clients connect to their own listener (``client_listener``, KIP-291's
``EXTERNAL``), brokers fetch from each other on ``INTERNAL``.

**One random stream per component.** Every component draws from its own generator, seeded from the
run's seed and the component's name (:meth:`Cluster.rng`): broker ``n``'s service times, each
producer's arrivals and partitioner. Switching the control plane on changes nothing any client draws,
so a comparison with and without it is paired: same arrivals, same batches, only the broker differs.

:meth:`Cluster.run` returns :class:`ClusterResults`: the request log of every broker (``broker_id``
column), every broker's metrics, the ledger (:mod:`.clients.ledger`), the staleness of each broker's metadata
after each controller decision, and each partition's unavailability.
"""

from __future__ import annotations

import gc
import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import count

import numpy as np
import pandas as pd
import simpy

from kafka_lab.listeners.examples import CLIENT_LISTENER

from .clients.consumer import KafkaConsumer
from .clients.ledger import (
    leader_log_index,
    ledger_frame,
    replica_log_index,
    running_replica_log_index,
    written_batch_ids,
)
from .clients.producer import KafkaProducer
from .common.options import (
    MAX_CLUSTER_BROKERS,
    MAX_CLUSTER_PARTITIONS,
    MAX_HANDOVERS,
    MAX_KRAFT_SECONDS,
    MAX_METRIC_SAMPLES,
    MAX_REPLICA_SECONDS,
    PARTITIONS_WHY,
    check_bool,
    check_limit,
    check_number,
    check_seed,
    check_time,
    kafka_int,
)
from .network.request import RequestLog, requests_frame
from .server.broker import Broker
from .server.config import ModelSettings, boolean_setting
from .zk.controller import Controller
from .zk.zookeeper import ZooKeeper

__all__ = ["Cluster", "ClusterResults", "cluster_properties"]

#: ``Topic.MAX_NAME_LENGTH`` and ``Topic.LEGAL_CHARS`` (clients/.../common/internals/Topic.java, 2.8)
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")


def cluster_properties(
    broker_id: int,
    *,
    control_plane: bool = False,
    rack: str | None = None,
    num_io_threads: int = 8,
    num_network_threads: int = 3,
    queued_max_requests: int = 500,
    **overrides,
) -> dict:
    """One broker's properties: KIP-291's INTERNAL (other brokers), EXTERNAL (clients) and CONTROLLER (the
    controller, once named), from :func:`kafka_lab.listeners.cluster_broker`; ``broker.rack`` when given."""
    from kafka_lab.listeners import cluster_broker

    props = cluster_broker(
        control_plane,
        broker_id=broker_id,
        **{
            "num.io.threads": num_io_threads,
            "num.network.threads": num_network_threads,
            "queued.max.requests": queued_max_requests,
        },
    )
    if rack is not None:
        props["broker.rack"] = rack
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return props


@contextmanager
def collector_paused():
    """The cyclic garbage collector off inside the block (and as it was after it, also after an exception).

    A run allocates many objects that stay alive (batches, the request log, metrics) and many short-lived
    ones (events, requests) that reference counting frees: the collector finds almost nothing to free
    during a run, yet each of its passes walks every young survivor. Building a run's result frames is the
    same: tens of thousands of row tuples, each pass walking the whole simulation. Pausing it saves about a
    tenth of the benchmark's run and a sixth of lab 03's, and the peak memory of every lab's run together
    did not grow (tools/fingerprint.py: 553 MB before, 499 MB after). Whatever cycles a run leaves are freed
    by the next collection after it (the labs' panels collect after each answer: ``release_runs``)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def advance(env, until_ms: float) -> None:
    """Run the simulation to ``until_ms``, with the cyclic collector paused (:func:`collector_paused`)."""
    with collector_paused():
        env.run(until=until_ms)


@dataclass
class ClusterResults:
    """What a cluster run produced (all times in simulated ms)."""

    requests: pd.DataFrame
    metrics: pd.DataFrame
    ledger: pd.DataFrame
    staleness: pd.DataFrame
    unavailability: pd.DataFrame
    events: pd.DataFrame
    duration_ms: float
    cluster: Cluster = field(repr=False)
    #: KRaft mode only (None in ZooKeeper mode): every record of ``__cluster_metadata`` any leader wrote (offset,
    #: epoch, record_type, fields, controller_id, decided_ms, appended_ms, committed_ms, committed), and the KRaft
    #: metrics under Kafka's names (time_ms, node_id, metric, value: the controllers' and the raft clients'
    #: observations, and each broker's ``last-applied-record-lag-ms`` at every sample time)
    metadata_log: pd.DataFrame | None = None
    kraft_metrics: pd.DataFrame | None = None

    def time_average(self, metric: str, broker_id: int, t0: float = 0.0, t1: float | None = None) -> float:
        return self.cluster.brokers[broker_id].metrics.time_average(metric, t0, self.duration_ms if t1 is None else t1)

    def outcomes(self) -> pd.DataFrame:
        """Records per outcome (columns) and acks (rows): the ledger in one table."""
        t = self.ledger.pivot_table(
            index="acks", columns="outcome", values="records", aggfunc="sum", observed=False, fill_value=0
        )
        return t.astype(np.int64)

    @property
    def wrong_leader(self) -> pd.DataFrame:
        """Sends to a wrong leader per client and partition: the batches answered ``NOT_LEADER_OR_FOLLOWER``, how
        often, the time they lost (each refused send to that batch's next send) and their mean latency."""
        lg = self.ledger[self.ledger["wrong_leader_sends"] > 0]
        return lg.groupby(["client_id", "topic", "partition"], as_index=False).agg(
            wrong_leader_sends=("wrong_leader_sends", "sum"),
            batches=("batch_id", "count"),
            wrong_leader_ms=("wrong_leader_ms", "sum"),
            mean_latency_ms=("latency_ms", "mean"),
        )


_BROKERS_WHY = (
    "1,000 brokers took 1.8 s to build and 1.5 s more to start on the project's machine; Kafka's own broker ids "
    "stop at reserved.broker.max.id, 1000 by default"
)


def _control_plane_by_broker(control_plane, ids: list) -> dict:
    """``control_plane`` as ``{broker id: bool}``: one bool for every broker, or a dict of bools (a cluster
    half-way through the KIP-291 migration; brokers it does not name have no control plane)."""
    if isinstance(control_plane, (bool, np.bool_)):
        return dict.fromkeys(ids, bool(control_plane))
    if not isinstance(control_plane, dict):
        raise TypeError(
            f"control_plane is True, False or {{broker id: True/False}}, got {type(control_plane).__name__} "
            f"{control_plane!r}"
        )
    unknown = sorted(set(control_plane) - set(ids), key=str)
    if unknown:
        raise ValueError(f"control_plane names broker(s) {unknown} that are not in this cluster: {sorted(ids)}")
    bad = {b: v for b, v in control_plane.items() if not isinstance(v, (bool, np.bool_))}
    if bad:
        raise TypeError(f"control_plane's values are True or False, got {bad}")
    return {b: bool(v) for b, v in control_plane.items()}


class Cluster:
    """Brokers by id on one clock, a controller, topics and clients."""

    def __init__(
        self,
        brokers=3,
        *,
        seed: int = 0,
        settings: ModelSettings | None = None,
        control_plane=False,
        controller_id: int | None = None,
        zk_latency_ms: float = 2.0,
        controller_epoch: int = 1,
        racks=None,
        broker_overrides: dict | None = None,
        external_brokers=(),
        client_listener: str = CLIENT_LISTENER,
        mode: str = "zk",
        controllers=3,
        kraft_config=None,
        broker_epochs: bool = True,
        controller_fencing: bool = True,
    ):
        check_bool("broker_epochs", broker_epochs)
        check_bool("controller_fencing", controller_fencing)
        if mode not in ("zk", "kraft"):
            raise ValueError(f"mode is 'zk' (ZooKeeper, Kafka 2.8) or 'kraft' (Kafka 4.0), got {mode!r}")
        self.mode = mode
        if mode == "kraft":
            from .kraft.quorum import controller_ids

            if controller_id is not None:
                raise ValueError(
                    "in KRaft mode the controllers are nodes of their own (process.roles=controller): give "
                    f"controllers=<count or node ids>, not controller_id={controller_id!r}"
                )
            voters = ",".join(f"{c}@controller-{c}:9093" for c in controller_ids(controllers))
        if isinstance(brokers, bool) or not isinstance(brokers, (int, dict, list, tuple)):
            raise TypeError("brokers is a number of brokers, a list of broker ids, or {broker id: properties}")
        if isinstance(brokers, int):
            if brokers < 1:
                raise ValueError(f"a cluster needs at least one broker, got {brokers}")
            check_limit("brokers", brokers, MAX_CLUSTER_BROKERS, _BROKERS_WHY)
            brokers = list(range(1, brokers + 1))
        if not brokers:
            raise ValueError("a cluster needs at least one broker, got none")
        check_limit("brokers", len(brokers), MAX_CLUSTER_BROKERS, _BROKERS_WHY)
        if isinstance(brokers, (list, tuple)):
            ids = list(brokers)
            if len(set(ids)) != len(ids) or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in ids):
                raise ValueError(f"broker ids must be distinct non-negative ints, got {ids}")
            cp = _control_plane_by_broker(control_plane, ids)
            if racks is not None and not isinstance(racks, dict):
                raise TypeError(f"racks is {{broker id: broker.rack}}, got {type(racks).__name__}")
            rk = racks or {}
            brokers = {
                i: cluster_properties(i, control_plane=cp.get(i, False), rack=rk.get(i), **(broker_overrides or {}))
                for i in ids
            }
            if mode == "kraft":
                from .kraft_mode import kraft_broker_properties

                brokers = {i: kraft_broker_properties(props, voters) for i, props in brokers.items()}
        elif mode == "kraft":  # the user's own properties: a KRaft node's, or a clear refusal now
            for bid, props in brokers.items():
                if not isinstance(props, dict) or "process.roles" not in props:
                    raise ValueError(
                        f"in KRaft mode broker {bid!r}'s properties must be a KRaft node's (process.roles=broker, "
                        "node.id, controller.listener.names, controller.quorum.voters); or give a number of brokers "
                        "or a list of ids, and the cluster writes them"
                    )
        if not isinstance(client_listener, str):
            raise TypeError(f"client_listener is a listener name such as {CLIENT_LISTENER!r}, not {client_listener!r}")
        check_time("zk_latency_ms", zk_latency_ms)
        self.client_listener_name = client_listener.upper()  # listener names are upper-cased, as Kafka does
        self.seed = check_seed(seed)
        self.env = simpy.Environment()
        self.log = RequestLog()  # every request sent; answered Produce/Fetch kept as columns (network/request.py)
        if settings is not None and not isinstance(settings, ModelSettings):
            raise TypeError(
                f"settings is a ModelSettings (the model's own knobs) or None, got {type(settings).__name__}"
            )
        self.settings = settings or ModelSettings()
        self.brokers: dict[int, Broker] = {}
        self._producer_id_blocks = count()  # ZooKeeper's /latest_producer_id_block: the blocks handed out
        for bid, props in brokers.items():
            props = dict(props)
            props.setdefault("broker.id", str(bid))
            b = Broker(self.env, props, rng=self.rng(f"broker-{bid}"), settings=self.settings, cluster=self)
            if b.id != bid:
                raise ValueError(f"broker {bid}'s properties say broker.id={b.id}")
            self.brokers[bid] = b
        if mode == "kraft":
            self._init_kraft(controllers, kraft_config, external_brokers)
            return
        cid = min(self.brokers) if controller_id is None else controller_id
        if cid not in self.brokers:
            raise ValueError(f"controller {cid} is not a broker of this cluster: {sorted(self.brokers)}")
        if isinstance(controller_epoch, bool) or not isinstance(controller_epoch, int) or controller_epoch < 1:
            raise ValueError(f"controller_epoch is a whole number, at least 1, got {controller_epoch!r}")
        self._check_controller_routes()
        for bid, b in self.brokers.items():
            cp = b.config.control_plane_listener
            if cp is not None and cp.name == self.client_listener_name:
                raise ValueError(
                    f"the clients' listener {self.client_listener_name} is broker {bid}'s control plane "
                    "(control.plane.listener.name): clients use a listener of their own, such as "
                    f"{CLIENT_LISTENER}, never the control plane's"
                )
        self.controller = Controller(
            self.env, self.brokers, self.log, controller_id=cid, epoch=controller_epoch, zk_latency_ms=zk_latency_ms
        )
        from .zk.lifecycle import session_expired
        from .zk.session import ZkSessions

        #: every broker's ZooKeeper session (a crash or a long pause ends it after zookeeper.session.timeout.ms)
        self.zk_sessions = ZkSessions(self.env, self.brokers, lambda bid: session_expired(self, bid))
        self.controller.registered = self.zk_sessions.registered
        #: ZooKeeper's data tree: /controller, /controller_epoch and each partition's state znode, written by the
        #: controller (sim/zk/zookeeper.py); its sessions are still zk_sessions' (docs/architecture.md)
        self.zk = ZooKeeper()
        self.controller.sessions = self.zk_sessions
        self.controller.attach_zookeeper(self.zk)
        self.zk_sessions.on_ended = self.controller.zk_session_ended
        self.controller.broker_epoch_check = broker_epochs
        # the controller epoch's fences (2.1+ as a whole; lab 07's zombie switches them off to show what they stop)
        self.controller.fencing = controller_fencing
        for b in self.brokers.values():
            b.replica_manager.controller_epoch_fence = controller_fencing
            b.metadata_cache.controller_epoch_fence = controller_fencing
        # brokers known as alive but not simulated (lab 03's one-broker view moves leadership to one)
        self.controller.live_brokers |= set(external_brokers)
        self.bootstrap = min(self.brokers)
        self.topics: dict = {}  # name -> [(name, partition), ...]: created, and not yet deleted
        self.controller.topic_deleted_listeners.append(self._topic_deleted)
        self.clients: list = []
        #: what the applications will hand over, as the clients were told (:meth:`expect_handovers`)
        self.handovers: list = []
        self._batch_ids = count()
        for b in self.brokers.values():
            b.metadata_cache.load(
                [], live_brokers=self.controller.live_brokers, controller_id=cid, controller_epoch=self.controller.epoch
            )
            b.replica_manager.controller_epoch = self.controller.epoch

    def _init_kraft(self, controllers, kraft_config, external_brokers) -> None:
        """KRaft mode's controller quorum and the brokers' KRaft parts (:mod:`.kraft_mode`)."""
        from .kraft_mode import KRaftMode

        if external_brokers:
            raise ValueError("external_brokers (lab 03's one-broker view) is a ZooKeeper-mode knob")
        self.kraft = KRaftMode(self, controllers, kraft_config=kraft_config)
        self.controller = self.kraft.control
        self.bootstrap = min(self.brokers)
        self.topics: dict = {}
        self.clients: list = []
        self.handovers: list = []  # what the applications will hand over (:meth:`expect_handovers`)
        self._batch_ids = count()
        for b in self.brokers.values():
            b.metadata_cache.load([], live_brokers=set(self.brokers), controller_id=self.kraft.quorum.first_leader)

    # -- plumbing --------------------------------------------------------------------------------------
    def rng(self, name: str) -> np.random.Generator:
        """The component ``name``'s own random stream (same seed and name, same draws)."""
        return np.random.default_rng([self.seed, zlib.crc32(name.encode())])

    def next_batch_id(self) -> int:
        return next(self._batch_ids)

    def next_producer_id_block(self) -> int:
        """The number of the next block of producer ids a broker takes (its ``ProducerIdManager``)."""
        return next(self._producer_id_blocks)

    def controller_broker(self) -> Broker | None:
        return self.brokers.get(self.controller.id)

    def _check_controller_routes(self) -> None:
        """Every broker may become the controller (a move picks the first to reach ZooKeeper), and a controller
        reaches every broker on the listener *its* config names (``addNewBroker``): a broker that did not register
        that listener is refused here with Kafka's ``BrokerEndPointNotAvailableException`` and message, rather
        than deep inside a run (Kafka fails when that broker becomes the controller: "Error while electing or
        becoming controller on broker N. Trigger controller movement immediately")."""
        from .zk.controller import controller_route

        registered = {
            bid: {e.listener_name for e in b.config.listeners.advertised_listeners} for bid, b in self.brokers.items()
        }
        for cid, c in self.brokers.items():
            name = c.config.controller_to_broker_listener_name
            for bid, b in self.brokers.items():
                if name not in registered[bid]:
                    try:
                        controller_route(c, b)  # the one home of the rule, for Kafka's exception and message
                    except LookupError as exc:
                        exc.add_note(
                            f"broker {cid}'s config names {name} for the controller's connections "
                            f"(control.plane.listener.name, else inter.broker.listener.name), so as the controller "
                            f"it could not reach broker {bid}; KIP-291's migration publishes the endpoint on every "
                            "broker first (round 1), then names it (round 2)"
                        )
                        raise

    def client_listener(self, broker: Broker) -> str:
        """The listener clients connect to on ``broker``: the cluster's ``client_listener`` (EXTERNAL, as KIP-291's
        example broker) where the broker binds it, else the broker's inter-broker listener (a broker with one
        listener for clients and brokers, like lab 03's PLAINTEXT). Never a control-plane listener (refused at
        construction), and never CONTROLLER merely because it is bound: in Kafka a client uses the listener of
        the address it bootstrapped from, the same name on every broker."""
        cfg = broker.config
        if cfg.listener(self.client_listener_name) is not None:
            return self.client_listener_name
        return cfg.inter_broker_listener_name

    def partitions_of(self, topic: str) -> list:
        try:
            return self.topics[topic]
        except KeyError:
            raise ValueError(f"unknown topic {topic!r}; topics: {sorted(self.topics)}") from None

    # -- topics ----------------------------------------------------------------------------------------
    def create_topic(
        self,
        name: str,
        partitions: int | None = None,
        replication_factor: int | None = None,
        *,
        assignment: dict | None = None,
        min_insync_replicas: int | None = None,
        unclean_leader_election_enable: bool | str = False,
        fixed_start_index: int = 0,
    ) -> dict:
        """Create ``name`` at t=0 as the controller would; returns ``{partition: replicas}``.

        Either ``partitions`` and ``replication_factor`` or an ``assignment`` (``{partition: [broker ids]}``),
        not both: as Kafka's CreateTopics (``ZkAdminManager.createTopics``), a request with an assignment and
        a partition count or replication factor is refused (``InvalidRequestException``) rather than one of
        them silently ignored. (Kafka takes the broker's ``num.partitions`` / ``default.replication.factor``
        for a count not given; the model asks for both.)

        The assignment is Kafka's (rack-aware when the brokers have ``broker.rack``); with
        ``fixed_start_index=0`` (the default here) partition 0's leader is the first broker. The name and
        the assignment pass Kafka's checks first (:meth:`_validate_topic_create`, docs/kafka-reference.md §1):
        a topic Kafka would refuse is refused with its exception and message, and nothing of it is created.

        ``min_insync_replicas`` and ``unclean_leader_election_enable`` are the topic's configs
        ``min.insync.replicas`` and ``unclean.leader.election.enable`` (a bool, or ``"true"`` / ``"false"`` as
        Kafka reads it; false by default: an offline partition waits for an in-sync replica, see
        :meth:`enable_unclean_leader_election`).
        """
        from kafka_lab.assignment import (
            BrokerMetadata,
            InvalidRequestException,
            TopicExistsException,
            assign_replicas_to_brokers,
        )

        if isinstance(name, str) and name in self.topics:
            raise TopicExistsException(f"Topic '{name}' already exists.")
        if assignment is not None and (partitions is not None or replication_factor is not None):
            raise InvalidRequestException(
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time."
            )
        if assignment is None and (partitions is None or replication_factor is None):
            raise TypeError(
                "create_topic takes partitions and replication_factor, or an assignment {partition: [broker ids]}; "
                f"got partitions={partitions!r}, replication_factor={replication_factor!r} and no assignment"
            )
        if min_insync_replicas is not None:  # the topic config, as LogConfig reads it (INT, atLeast(1))
            min_insync_replicas = kafka_int("min.insync.replicas", min_insync_replicas, 1)
        new = len(assignment) if isinstance(assignment, dict) else partitions
        if isinstance(new, int):
            held = sum(len(tps) for tps in self.topics.values())
            check_limit(
                "a cluster's partitions (every topic together)",
                held + new,
                MAX_CLUSTER_PARTITIONS,
                PARTITIONS_WHY,
            )
        if assignment is None:
            metas = [BrokerMetadata(bid, b.config.props.get("broker.rack")) for bid, b in sorted(self.brokers.items())]
            assignment = assign_replicas_to_brokers(
                metas, partitions, replication_factor, fixed_start_index, rng=self.rng(f"assignment:{name}")
            )
        self._validate_topic_create(name, assignment)
        unclean = boolean_setting("unclean.leader.election.enable", unclean_leader_election_enable)
        if self.mode == "kraft" and unclean:
            raise ValueError(
                "unclean.leader.election.enable is not modelled in KRaft mode (docs/kafka-reference.md §7)"
            )
        for b in self.brokers.values():  # the topic's config, as every broker reads it (a name used before: reset)
            b.replica_manager.topic_min_isr.pop(name, None)
            if min_insync_replicas is not None:
                b.replica_manager.topic_min_isr[name] = min_insync_replicas
        if self.mode == "kraft":
            return self._create_topic_kraft(name, assignment)
        tps = []
        for p, replicas in sorted(assignment.items()):
            tp = (name, p)
            tps.append(tp)
            self.controller.add_partition(tp, list(replicas))
            st = self.controller.partition_state(tp)
            # a partition no live broker could take stays NewPartition: no replica hears of it until one is back;
            # a broker that is down hears of it at its start-up (the controller's LeaderAndIsr)
            for r in replicas if tp not in self.controller.new_partitions else ():
                if not self.brokers[r].online:
                    continue
                rm = self.brokers[r].replica_manager
                part = rm.add_partition(name, p, list(replicas), st["leader"], st["isr"], 0)  # its topic's min ISR
                if st["leader"] != r:
                    self.brokers[r].fetchers.add_partitions({tp: st["leader"]})
                del part
            for b in self.brokers.values():
                if b.online:
                    b.metadata_cache.load([st])
        self.topics[name] = tps
        if unclean:
            self.controller.unclean_topics.add(name)
        return {p: list(r) for p, r in assignment.items()}

    def _create_topic_kraft(self, name: str, assignment: dict) -> dict:
        """KRaft mode: the topic's records committed before t=0 (:mod:`.kraft_mode`), and every replica and broker
        with the state they replay to (the cluster starts in steady state)."""
        tps = []
        for st in self.kraft.create_topic(name, assignment):
            tp = (name, st["partition"])
            tps.append(tp)
            for r in st["replicas"]:
                self.brokers[r].replica_manager.add_partition(
                    name, tp[1], list(st["replicas"]), st["leader"], st["isr"], 0
                )
                if st["leader"] != r:
                    self.brokers[r].fetchers.add_partitions({tp: st["leader"]})
            for b in self.brokers.values():
                b.metadata_cache.load([st])
        self.topics[name] = tps
        return {p: list(r) for p, r in assignment.items()}

    def enable_unclean_leader_election(self, topic: str, *, at_ms: float = 0.0) -> None:
        """An operator sets ``unclean.leader.election.enable=true`` on ``topic`` at ``at_ms``
        (``kafka-configs --alter --entity-type topics --add-config unclean.leader.election.enable=true``).

        From then on an offline partition of the topic with no live in-sync replica elects the first live
        replica of its assignment, and the controller tries its offline partitions at once
        (:meth:`Controller.enable_unclean_leader_election`). The new leader may lack records the old ISR
        acknowledged: when a replica that has them returns, it follows, and truncates them (the ledger's
        ``truncated``). A topic that does not exist is refused as Kafka refuses it.
        """
        from kafka_lab.assignment import UnknownTopicOrPartitionException

        check_time("at_ms", at_ms)
        if topic not in self.topics:
            raise UnknownTopicOrPartitionException(f"Topic '{topic}' does not exist.")
        self.controller.enable_unclean_leader_election(topic, at_ms=at_ms)

    def _validate_topic_create(self, name, assignment) -> None:
        """What ``AdminZkClient.validateTopicCreate`` (2.8) refuses, in its order, with its messages; then what
        the model cannot hold. Nothing is created unless all of it passes.

        - the name (``Topic.validate``): not empty, not ``.`` or ``..``, at most 249 characters (Java's
          length: UTF-16 code units), only ASCII letters, digits, ``.``, ``_`` and ``-``
          (:class:`~kafka_lab.assignment.InvalidTopicException`);
        - a name with ``.`` or ``_`` that equals an existing topic's once ``.`` is read as ``_``
          (the two would share metric names): ``collides with existing topics``;
        - the assignment (:class:`~kafka_lab.assignment.InvalidReplicaAssignmentException`): every
          partition with the same number of replicas (so an empty assignment is refused too), no broker
          twice in one partition, partition ids ``0 .. n-1``. Kafka prints its Scala map after
          ``Duplicate replica assignment found:``; the model prints the assignment as a dict. (Kafka's
          id check compares the sum of the non-negative ids with ``0 + 1 + ... + n-1``, so a set such as
          ``{-1, 1}`` slips through it; the model asks for exactly ``0 .. n-1``.)

        Then the model's own limits: a partition with no replica is refused with the message Kafka's
        ``validateReplicaAssignment`` gives when partitions are added, and every replica must be a broker
        of this cluster (Kafka 2.8 creates a topic on unknown brokers with those replicas offline; the
        model simulates only its own brokers).
        """
        from kafka_lab.assignment import InvalidReplicaAssignmentException, InvalidTopicException

        if not isinstance(name, str):
            raise TypeError(f"a topic name is a string, got {type(name).__name__} {name!r}")
        if not name:
            raise InvalidTopicException("Topic name is illegal, it can't be empty")
        if name in (".", ".."):
            raise InvalidTopicException('Topic name cannot be "." or ".."')
        if len(name.encode("utf-16-le")) // 2 > MAX_TOPIC_NAME_LENGTH:
            raise InvalidTopicException(
                f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, topic name: {name}"
            )
        if not _LEGAL_TOPIC_NAME.fullmatch(name):
            raise InvalidTopicException(
                f'Topic name "{name}" is illegal, it contains a character other than '
                "ASCII alphanumerics, '.', '_' and '-'"
            )
        if "." in name or "_" in name:
            colliding = sorted(t for t in self.topics if t.replace(".", "_") == name.replace(".", "_"))
            if colliding:
                raise InvalidTopicException(f"Topic '{name}' collides with existing topics: {', '.join(colliding)}")
        if not isinstance(assignment, dict):
            raise TypeError(f"assignment is {{partition id: [broker ids]}}, got {type(assignment).__name__}")
        bad = [p for p in assignment if isinstance(p, bool) or not isinstance(p, (int, np.integer))]
        if bad:
            raise TypeError(f"partition ids are ints, got {bad[0]!r}")
        bad = [r for r in assignment.values() if isinstance(r, (str, bytes)) or not isinstance(r, (list, tuple))]
        if bad:
            raise TypeError(f"each partition's replicas are a list of broker ids, got {bad[0]!r}")
        replicas = {int(p): list(r) for p, r in assignment.items()}
        if len({len(r) for r in replicas.values()}) != 1:
            raise InvalidReplicaAssignmentException("All partitions should have the same number of replicas")
        if any(len(set(r)) != len(r) for r in replicas.values()):
            raise InvalidReplicaAssignmentException(
                f"Duplicate replica assignment found: {dict(sorted(replicas.items()))}"
            )
        if set(replicas) != set(range(len(replicas))):
            raise InvalidReplicaAssignmentException("partitions should be a consecutive 0-based integer sequence")
        for p, r in sorted(replicas.items()):
            if not r:
                raise InvalidReplicaAssignmentException(f"Cannot have replication factor of 0 for partition id {p}.")
            unknown = [b for b in r if b not in self.brokers]
            if unknown:
                raise ValueError(f"partition {p} names broker(s) {unknown} not in the cluster {sorted(self.brokers)}")

    def _topic_deleted(self, topic: str) -> None:
        """The controller finished deleting ``topic`` (every replica deleted its log): Kafka deletes
        ``/brokers/topics/<topic>`` then, so the topic is no longer listed and its name may be created again
        (until then :meth:`create_topic` finds it: ``Topic '<t>' already exists.``)."""
        self.topics.pop(topic, None)

    def leader_of(self, tp) -> int:
        return self.controller.state[tp]["leader"]

    # -- brokers and the controller over time ------------------------------------------------------------
    def restart_broker(self, broker_id: int, *, at_ms: float, down_ms: float) -> None:
        """Controlled shutdown of ``broker_id`` at ``at_ms``, down ``down_ms``, then start-up (:mod:`.zk.lifecycle`; in
        KRaft mode through ``WantShutDown`` heartbeats, :mod:`.server.broker_kraft`)."""
        if self.mode == "kraft":
            from .server.broker_kraft import restart_broker

            restart_broker(self, broker_id, at_ms=at_ms, down_ms=down_ms)
            return
        from .zk.lifecycle import restart_broker

        restart_broker(self, broker_id, at_ms=at_ms, down_ms=down_ms)

    def crash(self, broker_id: int, *, at_ms: float, down_ms: float | None = None) -> None:
        """``broker_id``'s process dies at ``at_ms`` (no controlled shutdown); the controller acts when its
        ZooKeeper session expires, ``zookeeper.session.timeout.ms`` later; it starts again ``down_ms`` after the
        crash, or never (None). See :mod:`.zk.lifecycle`."""
        if self.mode == "kraft":  # no session: the controller fences it when its heartbeats stop (server/broker_kraft)
            from .server.broker_kraft import crash_broker as crash_kraft_broker

            crash_kraft_broker(self, broker_id, at_ms=at_ms, down_ms=down_ms)
            return
        from .zk.lifecycle import crash_broker

        crash_broker(self, broker_id, at_ms=at_ms, down_ms=down_ms)

    def pause(self, broker_id: int, *, at_ms: float, for_ms: float) -> None:
        """A stop-the-world pause (a long GC) of ``broker_id``'s process from ``at_ms`` for ``for_ms``: it does
        nothing meanwhile, then carries on with what it had in hand; longer than its session timeout, the
        cluster moves on without it (see :mod:`.zk.lifecycle`)."""
        if self.mode == "kraft":
            from .server.broker_kraft import pause_broker as pause_kraft_broker

            pause_kraft_broker(self, broker_id, at_ms=at_ms, for_ms=for_ms)
            return
        from .zk.lifecycle import pause_broker

        pause_broker(self, broker_id, at_ms=at_ms, for_ms=for_ms)

    def move_controller(self, *, at_ms: float) -> None:
        """``/controller`` deleted at ``at_ms``: the brokers elect a new controller (:mod:`.zk.lifecycle`). In KRaft
        mode there is no ``/controller``: :meth:`restart_controller` stops a controller node instead."""
        if self.mode == "kraft":
            raise ValueError(
                "a KRaft cluster has no /controller znode to delete: stop the active controller with "
                "restart_controller('active', at_ms=..., down_ms=...)"
            )
        from .zk.lifecycle import move_controller

        move_controller(self, at_ms=at_ms)

    def restart_controller(self, node_id="active", *, at_ms: float, down_ms: float | None = None) -> None:
        """KRaft mode: controller node ``node_id`` (``"active"``: the active one at ``at_ms``) stops at ``at_ms``, and
        starts again ``down_ms`` later (None: never); the other voters elect a leader (:mod:`.kraft_mode`)."""
        if self.mode != "kraft":
            raise ValueError(
                "restart_controller is for KRaft mode (a controller node); in ZooKeeper mode, move_controller"
            )
        check_time("at_ms", at_ms)
        check_time("down_ms", down_ms, optional=True)
        self.kraft.restart_controller(node_id, at_ms=at_ms, down_ms=down_ms)

    # -- clients ---------------------------------------------------------------------------------------
    def producer(self, client_id: str | None = None, *, topic: str, **kw) -> KafkaProducer:
        self.partitions_of(topic)
        p = KafkaProducer(self, client_id or f"producer-{len(self.clients) + 1}", topic=topic, **kw)
        self.clients.append(p)
        return p

    def consumer(self, client_id: str | None = None, *, topic: str, **kw) -> KafkaConsumer:
        self.partitions_of(topic)
        c = KafkaConsumer(self, client_id or f"consumer-{len(self.clients) + 1}", topic=topic, **kw)
        self.clients.append(c)
        return c

    # -- run -------------------------------------------------------------------------------------------
    def run(self, until_ms: float, metrics_interval_ms: float | None = None) -> ClusterResults:
        """Simulate to ``until_ms`` (at or after the current time) and return the results; metrics are sampled
        every ``metrics_interval_ms`` (more than 0; 1/200 of the run when None). A run too big for the model is
        refused before anything is simulated (:meth:`check_run`)."""
        self.check_run(until_ms, metrics_interval_ms, allow_now=True)
        if until_ms > self.env.now:  # at the current time: the results as they stand, nothing more simulated
            advance(self.env, until_ms)
        with collector_paused():
            return self._results(until_ms, metrics_interval_ms or max(until_ms / 200.0, 1e-9))

    def expect_handovers(self, *, rate_per_s: float = 0.0, start_ms: float = 0.0, stop_ms=None, sends: int = 0) -> None:
        """A client's application will send ``sends`` times at ``start_ms``, or ``rate_per_s`` times a second
        from ``start_ms`` to ``stop_ms`` (absolute times): what :meth:`check_run` counts."""
        self.handovers.append((rate_per_s, start_ms, float("inf") if stop_ms is None else stop_ms, sends))

    def check_run(self, until_ms, metrics_interval_ms=None, *, allow_now: bool = False) -> None:
        """Refuse a run before it starts: ``until_ms`` a finite time after now (or now, when ``allow_now``),
        ``metrics_interval_ms`` None or more than 0, and a size the model does in reasonable time (the limits
        of :mod:`.common.options`, measured on the project's machine): at most :data:`MAX_METRIC_SAMPLES` metric
        samples, :data:`MAX_REPLICA_SECONDS` replicas x simulated seconds and :data:`MAX_HANDOVERS` sends of
        the clients' applications."""
        now = self.env.now
        check_number("until_ms", until_ms)
        if until_ms < now or (until_ms == now and not allow_now):
            raise ValueError(
                f"until_ms must be {'at or ' if allow_now else ''}after the current time {now}, got {until_ms!r}"
            )
        if metrics_interval_ms is not None:
            check_number("metrics_interval_ms", metrics_interval_ms, least=0, excluded=True)
            check_limit(
                "until_ms / metrics_interval_ms (metric samples per broker)",
                until_ms / metrics_interval_ms,
                MAX_METRIC_SAMPLES,
                "each sample is a row of every broker's metrics table; the labs use 100 to 300",
            )
        replicas = sum(len(st["replicas"]) for st in self.controller.state.values())
        check_limit(
            "replicas x simulated seconds of one run",
            max(replicas, len(self.brokers)) * (until_ms - now) / 1000.0,
            MAX_REPLICA_SECONDS,
            f"{max(replicas, len(self.brokers)):,} replicas for {(until_ms - now) / 1000.0:,g} s; every follower "
            "fetches every partition, about 55 us of wall time per replica and simulated second on the project's "
            "machine, so this limit is about a minute",
        )
        if self.mode == "kraft":
            check_limit(
                "simulated seconds of one KRaft run",
                (until_ms - now) / 1000.0,
                MAX_KRAFT_SECONDS,
                "the quorum's fetches, NoOpRecords and the brokers' heartbeats cost about 1.3 ms of CPU per simulated "
                "second on the project's machine (an idle cluster; ZooKeeper mode 0.14 ms), so this limit is about a "
                "minute",
            )
        batches = 0.0
        for rate, start, stop, n in self.handovers:
            if n and now <= start <= until_ms:
                batches += n
            if rate:
                batches += rate * max(0.0, min(until_ms, stop) - max(now, start)) / 1000.0
        check_limit(
            "application sends of one run (open loops and bursts)",
            round(batches),
            MAX_HANDOVERS,
            "each open loop's rate_per_s x its time in the run, and each burst's n; the model simulated 3,700 to "
            "10,000 sends a second of wall time on the project's machine, so this limit is one to two minutes",
        )

    def _results(self, until_ms: float, interval: float) -> ClusterResults:
        metrics = pd.concat(
            [b.metrics.frame(interval, until_ms).assign(broker_id=bid) for bid, b in sorted(self.brokers.items())],
            ignore_index=True,
        )
        batches = [b for c in self.clients if isinstance(c, KafkaProducer) for b in c.batches]
        return ClusterResults(
            requests=requests_frame(self.log),
            metrics=metrics,
            ledger=ledger_frame(
                batches,
                leader_log_index(self),
                now=until_ms,
                offline=replica_log_index(self),
                written=written_batch_ids(self) if any(b.acks == 0 for b in batches) else None,
                held=running_replica_log_index(self),
            ),
            staleness=self.staleness_frame(until_ms),
            unavailability=self.unavailability_frame(until_ms),
            events=self.events_frame(),
            **(self.kraft.results(until_ms, interval) if self.mode == "kraft" else {}),
            duration_ms=until_ms,
            cluster=self,
        )

    def events_frame(self) -> pd.DataFrame:
        """Every broker's replication state changes (become leader/follower, truncation, ISR changes)."""
        rows = [
            (t, bid, kind, topic, part, detail)
            for bid, b in sorted(self.brokers.items())
            for (t, kind, topic, part, detail) in b.replica_manager.events
        ]
        df = pd.DataFrame(rows, columns=["time_ms", "broker_id", "event", "topic", "partition", "detail"])
        return df.sort_values(["time_ms", "broker_id"], kind="stable", ignore_index=True)

    def staleness_frame(self, until_ms: float) -> pd.DataFrame:
        """Per controller decision and broker: how long that broker's metadata cache stayed stale.

        ``stale_ms`` = the time its cache applied the decision's leader epoch − the decision's time
        (to the end of the run, with ``applied`` False, if it never did).
        """
        rows = []
        for t, topic, part, leader, epoch, *_ in self.controller.decisions:
            for bid, b in sorted(self.brokers.items()):
                applied = next(
                    (
                        ta
                        for ta, tt, pp, _l, e in b.metadata_cache.applied
                        if tt == topic and pp == part and e >= epoch and ta >= t
                    ),
                    None,
                )
                rows.append(
                    (
                        bid,
                        topic,
                        part,
                        leader,
                        epoch,
                        t,
                        (applied if applied is not None else until_ms) - t,
                        applied is not None,
                    )
                )
        return pd.DataFrame(
            rows,
            columns=["broker_id", "topic", "partition", "leader", "leader_epoch", "decided_ms", "stale_ms", "applied"],
        )

    def unavailability_frame(self, until_ms: float) -> pd.DataFrame:
        """Per leader move: from the old leader giving up (become-follower) to the new leader taking over."""
        rows = []
        for t, topic, part, leader, epoch, *_ in self.controller.decisions:
            stop = start = None
            for bid, b in self.brokers.items():
                for te, kind, tt, pp, d in b.replica_manager.events:
                    if tt != topic or pp != part or te < t:
                        continue
                    if kind == "become_follower" and d.get("was_leader") and d.get("leader_epoch") == epoch:
                        stop = te if stop is None else min(stop, te)
                    if kind == "become_leader" and bid == leader and d.get("leader_epoch") == epoch:
                        start = te if start is None else min(start, te)
            if stop is None:
                stop = t
            end = start if start is not None else until_ms
            rows.append(
                (
                    topic,
                    part,
                    leader,
                    epoch,
                    t,
                    stop,
                    start if start is not None else np.nan,
                    max(0.0, end - stop),
                    max(0.0, stop - end) if start is not None else 0.0,
                )
            )
        return pd.DataFrame(
            rows,
            columns=[
                "topic",
                "partition",
                "new_leader",
                "leader_epoch",
                "decided_ms",
                "old_leader_stopped_ms",
                "new_leader_started_ms",
                "unavailable_ms",
                "two_leaders_ms",
            ],
        )

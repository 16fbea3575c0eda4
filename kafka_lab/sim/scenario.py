"""A scenario: a simpy clock, a broker, the processes that use it, and the incidents a test scripts.

    >>> sc = Scenario(kip291_properties(control_plane=True), seed=1)
    >>> sc.producer(acks=1).open_loop(rate_per_s=2000)
    >>> sc.controller.send(sc.broker, "LeaderAndIsr", [sc.leader_and_isr_state(0, leader=2)], at_ms=50)
    >>> res = sc.run(until_ms=100)
    >>> res.requests.query("api == 'LeaderAndIsr'")["plane"].tolist()
    ['control']

A scenario owns the one random generator (seeded) and the one request log. :meth:`Scenario.run`
returns :class:`Results`: the request log as a DataFrame (one row per request), the metrics sampled
on the simulated clock, and exact time averages. Later labs add brokers, ZooKeeper and a real
controller to the same environment; clients and controller already connect through listeners.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import pandas as pd

from .clients.workloads import Consumer, MetadataClient, Producer
from .cluster import advance
from .common.options import MAX_CLUSTER_PARTITIONS, PARTITIONS_WHY, check_limit
from .network.request import requests_frame
from .server.broker import Broker
from .server.config import ModelSettings

__all__ = ["Scenario", "Results", "kip291_properties"]


def kip291_properties(control_plane: bool = True, **overrides) -> dict:
    """The KIP-291 page's example broker: INTERNAL, EXTERNAL and a CONTROLLER listener.

    ``control_plane=False`` is the first round of the KIP's migration: the CONTROLLER listener is
    bound but ``control.plane.listener.name`` is not set, so the controller still uses INTERNAL.
    """
    from kafka_lab.listeners import kip291_broker

    stage = "round 2" if control_plane else "round 1"
    return kip291_broker(1, stage, **{"broker.id": None, **overrides})


def _check_topic(partitions, replicas) -> None:
    """Kafka's checks at topic creation (AdminUtils, 2.8): whole numbers, partitions and RF at least 1."""
    from kafka_lab.assignment import (
        MSG_PARTITIONS,
        MSG_RF,
        InvalidPartitionsException,
        InvalidReplicationFactorException,
    )

    for name, value in (("partitions", partitions), ("replicas", replicas)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be a whole number, not {type(value).__name__} {value!r}")
    if partitions < 1:
        raise InvalidPartitionsException(MSG_PARTITIONS)
    check_limit("partitions", partitions, MAX_CLUSTER_PARTITIONS, PARTITIONS_WHY)
    if replicas < 1:
        raise InvalidReplicationFactorException(MSG_RF)


@dataclass
class Results:
    """What a run produced for the scenario's broker: its request log and its metrics (every ``interval_ms``)."""

    requests: pd.DataFrame
    metrics: pd.DataFrame
    duration_ms: float
    broker: Broker
    sent: dict

    def time_average(self, metric: str, t0: float = 0.0, t1: float | None = None) -> float:
        """Exact time average of a metric over [t0, t1] (idle metrics: the idle fraction)."""
        return self.broker.metrics.time_average(metric, t0, self.duration_ms if t1 is None else t1)

    def changes(self) -> pd.DataFrame:
        return self.broker.metrics.changes()

    def request(self, api: str, n: int = 0) -> pd.Series:
        """The ``n``-th request of ``api`` (e.g. the LeaderAndIsr) as a row of the request log.

        Raises LookupError, saying what the log holds, when this run has no such request."""
        rows = self.requests[self.requests["api"] == api]
        if not -len(rows) <= n < len(rows):
            held = ", ".join(f"{k} × {v}" for k, v in self.requests["api"].value_counts().sort_index().items())
            what = (
                f"no {api} request"
                if rows.empty
                else f"{len(rows)} {api} request{'s' if len(rows) != 1 else ''}, so there is no n={n}"
            )
            raise LookupError(f"this run sent {what} (its request log holds {held or 'nothing'})")
        return rows.iloc[n]


class Scenario:
    """Lab 03's view of a cluster: one broker under study, with a topic it leads.

    A thin façade over :class:`~kafka_lab.sim.cluster.Cluster`: the broker built from ``props`` leads
    every partition of ``topic``; with ``replicas`` > 1 the other replicas are real brokers (same
    properties, the next broker ids) that fetch through its inter-broker listener. The controller is the
    cluster's, on the studied broker itself, so both sides of the control plane are that broker's config:
    requests a test scripts with ``sc.controller.send`` reach it through its control-plane listener when it
    has one. Results are the studied broker's: its request log and
    metrics. The broker one id above it is known as alive even when it is not simulated, so that a
    LeaderAndIsr can move leadership to it.
    """

    def __init__(
        self,
        props=None,
        *,
        seed: int = 0,
        settings: ModelSettings | None = None,
        topic: str = "orders",
        partitions: int = 20,
        replicas: int = 1,
        client_listener: str | None = None,
    ):
        """``props``: the broker's properties, a mapping or ``server.properties`` text (see
        :func:`kafka_lab.listeners.resolve`); ``partitions`` and ``replicas`` (the replication factor) of
        the topic it leads are refused as Kafka refuses them at topic creation."""
        _check_topic(partitions, replicas)
        from .cluster import Cluster
        from .server.config import BrokerConfig

        cfg = BrokerConfig.from_properties(props)  # a mapping or server.properties text, checked as Kafka does
        props = dict(cfg.props)
        bid = cfg.broker_id
        self.replica_ids = [bid] + [bid + 1 + i for i in range(replicas - 1)]
        brokers = {rid: {**props, "broker.id": str(rid)} for rid in self.replica_ids}
        self.cluster = Cluster(
            brokers,
            seed=seed,
            settings=settings,
            controller_id=bid,
            external_brokers=[bid + 1] if replicas == 1 else (),
        )
        self.env = self.cluster.env
        self.log = self.cluster.log
        self.log.keep_answered = True  # lab 03's runs are small; its request objects stay inspectable
        self.seed = seed
        self.broker = self.cluster.brokers[bid]
        self.topic = topic
        self.cluster.create_topic(topic, assignment={p: list(self.replica_ids) for p in range(partitions)})
        self.partitions = [(topic, p) for p in range(partitions)]
        self.controller = self.cluster.controller
        self.clients: list = []
        self._client_listener = client_listener

    def rng(self, name: str):
        """A component's own random stream (see :meth:`Cluster.rng`)."""
        return self.cluster.rng(name)

    # -- listeners -----------------------------------------------------------------------------------
    @property
    def client_listener(self) -> str:
        """The data-plane listener clients use: as given, else the first that is not the inter-broker listener."""
        if self._client_listener is not None:
            return self._client_listener
        return self.cluster.client_listener(self.broker)

    def _known_partitions(self, partitions):
        """``partitions`` as a tuple, refusing a partition this scenario's topic does not have."""
        if partitions is None:
            return self.partitions
        tps, known = tuple(partitions), set(self.partitions)
        unknown = [tp for tp in tps if tp not in known]
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not a partition of this scenario: its topic {self.topic!r} has "
                f"partitions 0 to {len(self.partitions) - 1}, given as ({self.topic!r}, n) "
                "(the broker would answer UNKNOWN_TOPIC_OR_PARTITION)"
            )
        return tps

    # -- processes -----------------------------------------------------------------------------------
    def producer(
        self, client_id: str | None = None, *, connections: int = 1, listener: str | None = None, partitions=None, **kw
    ) -> Producer:
        p = Producer(
            self,
            self.broker,
            client_id or f"producer-{len(self.clients) + 1}",
            listener=listener or self.client_listener,
            connections=connections,
            partitions=self._known_partitions(partitions),
            **kw,
        )
        self.clients.append(p)
        return p

    def consumer(
        self, client_id: str | None = None, *, connections: int = 1, listener: str | None = None, partitions=None
    ) -> Consumer:
        c = Consumer(
            self,
            self.broker,
            client_id or f"consumer-{len(self.clients) + 1}",
            listener=listener or self.client_listener,
            connections=connections,
            partitions=self._known_partitions(partitions),
        )
        self.clients.append(c)
        return c

    def metadata_client(self, client_id: str | None = None, *, connections: int = 1) -> MetadataClient:
        c = MetadataClient(
            self,
            self.broker,
            client_id or f"admin-{len(self.clients) + 1}",
            listener=self.client_listener,
            connections=connections,
            partitions=self.partitions,
        )
        self.clients.append(c)
        return c

    def followers(self) -> list:
        """The fetcher managers of the follower brokers (each can ``stop_fetching(tp)``)."""
        return [self.cluster.brokers[rid].fetchers for rid in self.replica_ids[1:]]

    def leader_and_isr_state(self, partition: int, *, leader: int, leader_epoch: int = 1, isr=None) -> dict:
        """One partition state of a LeaderAndIsr/UpdateMetadata request for this scenario's topic."""
        return {
            "topic": self.topic,
            "partition": partition,
            "leader": leader,
            "leader_epoch": leader_epoch,
            "isr": list(isr) if isr is not None else list(self.replica_ids),
            "replicas": list(self.replica_ids),
        }

    # -- run ------------------------------------------------------------------------------------------
    def run(self, until_ms: float, metrics_interval_ms: float | None = None) -> Results:
        self.cluster.check_run(until_ms, metrics_interval_ms)  # before anything is simulated
        advance(self.env, until_ms)
        interval = metrics_interval_ms or max(until_ms / 200.0, 1e-9)
        sent = {c.client_id: c.sent for c in self.clients}
        sent[self.controller.client_id] = self.controller.sent
        for rid in self.replica_ids[1:]:
            for t in self.cluster.brokers[rid].fetchers.threads.values():
                sent[t.client_id] = t.sent
        requests = requests_frame(self.log)
        mine = requests[requests["broker_id"].to_numpy() == self.broker.id].reset_index(drop=True)
        return Results(mine, self.broker.metrics.frame(interval, until_ms), until_ms, self.broker, sent)

"""The controller quorum of a KRaft cluster: its nodes, the metadata log they start from, and what they did.

:class:`Quorum` builds the controller nodes (:class:`~kafka_lab.sim.kraft.controller_server.ControllerServer`,
ids distinct from the brokers', 3000, 3001, 3002 unless told) on a clock and, before t=0, the state a running
cluster is in (docs/architecture.md: every run starts in steady state): the lowest id has led epoch 1 since the
log began (its ``LeaderChangeMessage`` at offset 0), and the records given to :meth:`Quorum.bootstrap` (the
brokers' registrations and unfencing, the topics) are committed on every voter and replayed by every
controller. From t=0 the quorum runs by Kafka's rules alone.

It also keeps the quorum-wide record of what happened (:class:`~kafka_lab.sim.kraft.raft.RaftHistory`):
transitions, every batch any leader wrote and when it was committed, the controllers' events and metrics;
:meth:`Quorum.metadata_log` is the log as a table (offset, epoch, record type, fields, decided, appended and
committed times), the committed records first and, for a run where a leader lost writes, those too.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..common.options import check_limit
from ..server.config import ModelSettings
from .config import KRaftConfig, KRaftCosts
from .controller_server import ControllerServer, controller_properties
from .raft import RaftHistory
from .records import MetadataImage, MetadataRecord, RecordBatch, topic_id

__all__ = ["Quorum", "DEFAULT_CONTROLLER_IDS"]

#: the model's controller ids when a count is given: 3000, 3001, ... (distinct from the brokers' 1, 2, 3)
DEFAULT_CONTROLLER_IDS = 3000


#: the most controllers a quorum takes here: Kafka's documentation recommends 3 or 5 (a majority answers every
#: commit); 1,001 took 16.6 s just to build, and 15 keeps a run within the model's limits
MAX_CONTROLLERS = 15


def controller_ids(controllers) -> list:
    """``controllers`` (a count, or a list of node ids) as a list of ids."""
    if isinstance(controllers, bool) or not isinstance(controllers, (int, list, tuple)):
        raise TypeError(f"controllers is a number of controllers or a list of node ids, got {controllers!r}")
    if isinstance(controllers, int):
        if controllers < 1:
            raise ValueError(f"a KRaft cluster needs at least one controller, got {controllers}")
        check_limit("controllers", controllers, MAX_CONTROLLERS, "Kafka's documentation recommends 3 or 5")
        return list(range(DEFAULT_CONTROLLER_IDS, DEFAULT_CONTROLLER_IDS + controllers))
    ids = list(controllers)
    if not ids or len(set(ids)) != len(ids) or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in ids):
        raise ValueError(f"controller ids must be distinct non-negative ints, at least one, got {ids}")
    check_limit("controllers", len(ids), MAX_CONTROLLERS, "Kafka's documentation recommends 3 or 5")
    return ids


class Quorum:
    """The controller nodes of one cluster, on one clock."""

    def __init__(
        self,
        env,
        controllers=3,
        *,
        request_log,
        rng,
        kraft_config: KRaftConfig | None = None,
        costs: KRaftCosts | None = None,
        settings: ModelSettings | None = None,
        leader: int | None = None,
    ):
        self.env = env
        self.ids = controller_ids(controllers)
        if kraft_config is not None and not isinstance(kraft_config, KRaftConfig):
            raise TypeError(
                f"kraft_config is a KRaftConfig (kafka_lab.sim.kraft.config), got {type(kraft_config).__name__} "
                f"{kraft_config!r}"
            )
        self.kraft_config = kraft_config or KRaftConfig()
        self.costs = costs or KRaftCosts()
        self.history = RaftHistory()
        self.nodes: dict = {}
        hosts = {i: f"controller-{i}" for i in self.ids}
        for i in self.ids:
            self.nodes[i] = ControllerServer(
                env,
                controller_properties(i, hosts),
                peers=self.nodes,
                request_log=request_log,
                history=self.history,
                rng=rng(f"controller-{i}-raft"),
                kraft_config=self.kraft_config,
                costs=self.costs,
                settings=settings or ModelSettings(),
            )
        self.first_leader = min(self.ids) if leader is None else leader
        if self.first_leader not in self.nodes:
            raise ValueError(f"leader {self.first_leader} is not a controller of this quorum: {self.ids}")
        self._bootstrap: list = []
        self.started = False
        # the steady state's periodic NoOpRecord task runs at a phase of its own, drawn once
        interval = self.kraft_config.metadata_max_idle_interval_ms
        self.first_noop_ms = float(rng("controller-noop-phase").uniform(0.0, interval)) if interval else None

    @property
    def voters_property(self) -> str:
        """``controller.quorum.voters`` as every node of the cluster names it."""
        return self.nodes[self.ids[0]].props["controller.quorum.voters"]

    def bootstrap(self, records: list) -> None:
        """Records committed before t=0 (in this order, after the first leader's ``LeaderChangeMessage``)."""
        if self.started:
            raise RuntimeError("the quorum has started: records before t=0 can no longer be added")
        for r in records:
            if not isinstance(r, MetadataRecord):
                raise TypeError(f"a bootstrap record is a MetadataRecord, got {r!r}")
        self._bootstrap.extend(records)

    def register_brokers(self, brokers: dict) -> dict:
        """Bootstrap records for brokers registered and unfenced before t=0 (``{broker id: rack or None}``): each
        one's ``RegisterBrokerRecord``, then its ``BrokerRegistrationChangeRecord(Fenced=-1)``; returns ``{broker
        id: (broker epoch, incarnation id)}``, the epoch being the registration's offset."""
        out, first = {}, self.next_offset()
        for i, (bid, rack) in enumerate(sorted(brokers.items())):
            epoch = first + i
            inc = f"bootstrap-incarnation-{bid}"
            out[bid] = (epoch, inc)
            self._bootstrap.append(
                MetadataRecord(
                    "RegisterBrokerRecord",
                    {
                        "BrokerId": bid,
                        "IncarnationId": inc,
                        "BrokerEpoch": epoch,
                        "Rack": rack,
                        "Fenced": True,
                        "InControlledShutdown": False,
                    },
                )
            )
        for bid in sorted(brokers):
            self._bootstrap.append(
                MetadataRecord(
                    "BrokerRegistrationChangeRecord", {"BrokerId": bid, "BrokerEpoch": out[bid][0], "Fenced": -1}
                )
            )
        return out

    def create_topic(self, name: str, assignment: dict) -> list:
        """Bootstrap records of a topic created before t=0: its ``TopicRecord`` and one ``PartitionRecord`` per
        partition (the ISR every replica, the first replica the leader, epochs 0); the partitions' states."""
        tid = topic_id(name)
        self._bootstrap.append(MetadataRecord("TopicRecord", {"Name": name, "TopicId": tid}))
        states = []
        for p, replicas in sorted(assignment.items()):
            replicas = list(replicas)
            self._bootstrap.append(
                MetadataRecord(
                    "PartitionRecord",
                    {
                        "PartitionId": p,
                        "TopicId": tid,
                        "Replicas": replicas,
                        "Isr": replicas,
                        "Leader": replicas[0],
                        "LeaderEpoch": 0,
                        "PartitionEpoch": 0,
                    },
                )
            )
            states.append(
                {
                    "topic": name,
                    "partition": p,
                    "leader": replicas[0],
                    "leader_epoch": 0,
                    "isr": list(replicas),
                    "replicas": replicas,
                    "zk_version": 0,
                }
            )
        return states

    def next_offset(self) -> int:
        """The offset the next bootstrap record gets (after the ``LeaderChangeMessage`` at 0)."""
        return 1 + len(self._bootstrap)

    def bootstrap_batches(self) -> list:
        lcm = MetadataRecord(
            "LeaderChangeMessage",
            {"LeaderId": self.first_leader, "Voters": list(self.ids), "GrantingVoters": list(self.ids)},
            decided_ms=-math.inf,
            controller_id=self.first_leader,
        )
        batches = [RecordBatch(0, 1, (lcm,), 0.0)]
        if self._bootstrap:
            for r in self._bootstrap:
                r.decided_ms, r.controller_id = 0.0, self.first_leader
            batches.append(RecordBatch(1, 1, tuple(self._bootstrap), 0.0))
        return batches

    def start(self) -> list:
        """Every node's process from t=0, in steady state (see the module); the bootstrap batches."""
        if self.started:
            raise RuntimeError("the quorum has already started")
        self.started = True
        batches = self.bootstrap_batches()
        image = MetadataImage()
        for b in batches:
            for i, r in enumerate(b.records):
                image.replay(r, b.base_offset + i)
        for b in batches:
            self.history.appended(b, self.first_leader)
            self.history.committed(b, 0.0)
        for srv in self.nodes.values():
            srv.raft.bootstrap(1, self.first_leader, batches)
            srv.controller.bootstrap(image.copy())
        for i, srv in self.nodes.items():
            srv.controller.new_active_controllers = 1  # the election that made the first leader, before t=0
            srv.start()
            if i == self.first_leader:
                srv.controller._claim(1, self.first_noop_ms)
        return batches

    # -- who leads ---------------------------------------------------------------------------------------------
    def active(self):
        """The active controller's node (its quorum controller claimed the current epoch), or None."""
        live = [s for s in self.nodes.values() if s.online and s.controller.active]
        if not live:
            return None
        return max(live, key=lambda s: s.controller.claim_epoch)

    def raft_leader(self):
        """The node whose Raft client leads the highest epoch among the running ones, or None."""
        live = [s for s in self.nodes.values() if s.online and s.raft.running and s.raft.role == "Leader"]
        return max(live, key=lambda s: s.raft.epoch) if live else None

    # -- what happened --------------------------------------------------------------------------------------------
    def metadata_log(self) -> pd.DataFrame:
        """Every record any leader wrote: offset, epoch, record type, fields, the controller that decided it, when
        (``decided_ms``: its event generated it; ``appended_ms``: the leader wrote its batch), ``committed_ms``
        (NaN: never committed), and ``committed`` (a bool)."""
        rows = []
        for (base, epoch), (batch, leader, committed) in sorted(self.history.batches.items()):
            for i, r in enumerate(batch.records):
                rows.append(
                    (
                        base + i,
                        epoch,
                        r.type,
                        dict(r.fields),
                        leader,
                        r.decided_ms,
                        batch.append_ms,
                        committed,
                        not math.isnan(committed),
                    )
                )
        df = pd.DataFrame(
            rows,
            columns=[
                "offset",
                "epoch",
                "record_type",
                "fields",
                "controller_id",
                "decided_ms",
                "appended_ms",
                "committed_ms",
                "committed",
            ],
        )
        if len(df):
            df["decided_ms"] = df["decided_ms"].replace(-np.inf, 0.0)
        return df.sort_values(["committed", "offset", "epoch"], ascending=[False, True, True], ignore_index=True)

    def metrics_frame(self) -> pd.DataFrame:
        """The controllers' and the raft clients' metric observations: time_ms, node_id, metric, value."""
        return pd.DataFrame(self.history.metrics, columns=["time_ms", "node_id", "metric", "value"])

    def events_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.history.events, columns=["time_ms", "node_id", "event", "detail"])

    def transitions_frame(self) -> pd.DataFrame:
        rows = [
            (t, node, b[0], b[1], b[2], a[0], a[1], a[2], end, voted)
            for t, node, b, a, end, voted in self.history.transitions
        ]
        return pd.DataFrame(
            rows,
            columns=[
                "time_ms",
                "node_id",
                "from_state",
                "from_epoch",
                "from_leader",
                "to_state",
                "epoch",
                "leader",
                "log_end_offset",
                "voted_for",
            ],
        )

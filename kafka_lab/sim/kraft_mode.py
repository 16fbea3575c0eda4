"""A cluster in KRaft mode (``Cluster(..., mode="kraft")``): the controller quorum beside the same brokers.

What :class:`~kafka_lab.sim.cluster.Cluster` does differently in KRaft mode (docs/kafka-reference.md §8), built
here so that the ZooKeeper-mode cluster stays as it was:

- the brokers' properties are a KRaft broker's (:func:`kraft_broker_properties`): ``process.roles=broker``,
  ``node.id``, ``controller.listener.names=CONTROLLER``, ``controller.quorum.voters`` naming the controllers, the
  same ``INTERNAL`` and ``EXTERNAL`` listeners and no listener of their own for the controllers; resolved by
  :func:`kafka_lab.listeners.resolve_kraft` with 4.0's rules (``control.plane.listener.name`` among the refused,
  with Kafka's message);
- a :class:`~kafka_lab.sim.kraft.quorum.Quorum` of controller nodes (ids distinct from the brokers');
- each broker's KRaft parts (:class:`~kafka_lab.sim.server.broker_kraft.BrokerKRaft`): a Raft observer, the metadata
  loader, the lifecycle manager, the ``AlterPartition`` sender, started with every process of the broker;
- ``cluster.controller`` is :class:`~kafka_lab.sim.kraft.control.KRaftControl` (the same questions, answered
  from the quorum).

At t=0 the cluster is in steady state, as in ZooKeeper mode: the lowest controller id has led epoch 1 from the
start of the log, every broker is registered and unfenced, the topics created before the run are committed at
the start of the log and every broker has applied them; each broker's first heartbeat comes at a phase drawn
from its own random stream in [0, ``broker.heartbeat.interval.ms``). The quorum and the brokers' KRaft threads
start when the clock first runs, so topics can be created until then (not after: a topic created during the run
would be a ``CreateTopics`` the model does not send).
"""

from __future__ import annotations

from .kraft.config import KRaftConfig, KRaftCosts
from .kraft.control import KRaftControl
from .kraft.quorum import Quorum
from .kraft.raft import RaftClient
from .kraft.records import MetadataImage
from .server.broker_kraft import BrokerKRaft
from .server.metadata_loader import PartitionLocks

__all__ = ["kraft_broker_properties", "KRaftMode"]


def kraft_broker_properties(props: dict, voters: str) -> dict:
    """A ZooKeeper-mode cluster broker's properties (:func:`~kafka_lab.sim.cluster.cluster_properties`) as a KRaft
    broker's: no listener for the controllers (a broker-only node must not bind the controller listener),
    ``process.roles=broker``, ``node.id`` = ``broker.id``, ``controller.listener.names=CONTROLLER`` (mapped to
    PLAINTEXT), ``controller.quorum.voters``."""
    out = dict(props)
    listeners = [e for e in str(out.get("listeners", "")).split(",") if e and not e.startswith("CONTROLLER:")]
    out["listeners"] = ",".join(listeners)
    out["process.roles"] = "broker"
    out["node.id"] = str(out.get("broker.id"))
    out["controller.listener.names"] = "CONTROLLER"
    out["controller.quorum.voters"] = voters
    return out


class KRaftMode:
    """The KRaft part of one cluster (see the module)."""

    def __init__(
        self, cluster, controllers, *, kraft_config: KRaftConfig | None = None, costs: KRaftCosts | None = None
    ):
        self.cluster = cluster
        self.env = env = cluster.env
        self.quorum = q = Quorum(
            env,
            controllers,
            request_log=cluster.log,
            rng=cluster.rng,
            kraft_config=kraft_config,
            costs=costs,
            settings=cluster.settings,
        )
        clash = sorted(set(q.ids) & set(cluster.brokers))
        if clash:
            raise ValueError(
                f"controller ids {clash} are broker ids too: a KRaft controller here is its own node "
                "(process.roles=controller), with an id no broker has"
            )
        self.registrations = q.register_brokers(
            {bid: b.config.props.get("broker.rack") for bid, b in sorted(cluster.brokers.items())}
        )
        self.control = KRaftControl(env, q, cluster.brokers)
        for bid, b in cluster.brokers.items():
            raft = RaftClient(
                env,
                bid,
                voters=q.ids,
                peers=q.nodes,
                node=b.node,
                rng=cluster.rng(f"broker-{bid}-raft"),
                request_log=cluster.log,
                history=q.history,
                listener_name=b.config.listeners.controller_listener_name,
                config=q.kraft_config.quorum,
                io_ms=q.costs.raft_io_ms,
                client_host=f"10.0.1.{bid % 250}",
            )
            b.partition_locks = b.apis.locks = PartitionLocks(env)
            b.kraft = BrokerKRaft(
                b,
                raft,
                nodes=q.nodes,
                new_image=MetadataImage,
                kraft_config=q.kraft_config,
                costs=q.costs,
                history=q.history,
                rng=cluster.rng(f"broker-{bid}-lifecycle"),
            )
        self.started = False
        env.process(self._start())

    def create_topic(self, name: str, assignment: dict) -> list:
        """A topic's records, committed before t=0; its partitions' states."""
        if self.started or self.env.now > 0:
            raise ValueError(
                f"in KRaft mode the model creates topics before the run starts (t=0), not at {self.env.now} ms: "
                "a topic created later would be a CreateTopics request, which the model does not send"
            )
        return self.quorum.create_topic(name, assignment)

    def _start(self):
        """At t=0, when the clock first runs: the quorum, then every broker's KRaft threads, in steady state."""
        self.started = True
        q = self.quorum
        batches = q.start()
        image = MetadataImage()
        for b in batches:
            for i, r in enumerate(b.records):
                image.replay(r, b.base_offset + i)
        phases = self.cluster.rng("heartbeat-phases").uniform(
            0.0, q.kraft_config.broker_heartbeat_interval_ms, len(self.cluster.brokers)
        )
        for (bid, b), phase in zip(sorted(self.cluster.brokers.items()), phases, strict=True):
            b.kraft.raft.leader_id = q.first_leader
            b.kraft.bootstrap(batches, image.copy(), self.registrations[bid], float(phase))
            if b.online:
                b.kraft.start()
            b.start_up_hooks.append(b.kraft.start)
        yield self.env.timeout(0)

    # -- results ---------------------------------------------------------------------------------------------------
    def results(self, until_ms: float, interval: float) -> dict:
        """The KRaft frames of :class:`~kafka_lab.sim.cluster.ClusterResults` (see its fields)."""
        import numpy as np
        import pandas as pd

        t = np.arange(1, int(until_ms // interval) + 1) * interval
        lags = [
            pd.DataFrame(
                {
                    "time_ms": t,
                    "node_id": bid,
                    "metric": "last-applied-record-lag-ms",
                    "value": b.kraft.loader.lag_ms(t),
                }
            )
            for bid, b in sorted(self.cluster.brokers.items())
        ]
        metrics = pd.concat([self.quorum.metrics_frame(), *lags], ignore_index=True)
        return {
            "metadata_log": self.quorum.metadata_log(),
            "kraft_metrics": metrics.sort_values(["time_ms", "node_id"], kind="stable", ignore_index=True),
        }

    # -- the controller nodes over time -----------------------------------------------------------------------------
    def restart_controller(self, node_id, *, at_ms: float, down_ms: float | None) -> None:
        """Stop controller ``node_id`` (``"active"``: the one active at ``at_ms``) at ``at_ms``, and start it again
        ``down_ms`` later (None: never)."""
        env = self.env

        def run():
            if at_ms > env.now:
                yield env.timeout(at_ms - env.now)
            nid = node_id
            if nid == "active":
                a = self.quorum.active()
                if a is None:
                    return
                nid = a.id
            srv = self.quorum.nodes[nid]
            if not srv.online:
                return
            srv.shut_down()
            if down_ms is None:
                return
            yield env.timeout(down_ms)
            srv.start_up()

        if node_id != "active" and node_id not in self.quorum.nodes:
            raise ValueError(f"{node_id!r} is not a controller of this cluster: {self.quorum.ids} (or 'active')")
        if down_ms is not None and not down_ms >= 0:
            raise ValueError(f"down_ms is a time in ms, at least 0, or None, got {down_ms!r}")
        env.process(run())

"""ZooKeeper's data tree in the cluster (kafka_lab/sim/zk/controller.py writing through sim/zk/zookeeper.py).

The truth: Kafka 2.8's controller writes every leader and ISR change to the partition's state znode
(``KafkaZkClient.updateLeaderAndIsr``: setData at the ``zkVersion`` it caches), creates it with a new partition
(``createTopicPartitionStatesRaw``, version 0), deletes it with its topic, and an election writes
``/controller`` and ``/controller_epoch`` (``registerControllerAndIncrementControllerEpoch``). So at every moment
the tree and the active controller's cache agree: the znode's version is the cached ``zkVersion`` and its data
the cached leader, leader epoch and ISR. (A zombie controller's write would break that; the model has none.)
"""

from __future__ import annotations

import pytest

from kafka_lab.sim import Cluster
from kafka_lab.sim.zk.controller import state_path
from kafka_lab.sim.zk.zookeeper import SetData


def _agree(c) -> None:
    ctl, zk = c.controller, c.zk
    for tp, st in ctl.state.items():
        z = zk.znodes.get(state_path(tp))
        if tp in ctl.new_partitions:
            assert z is None, tp  # NewPartition: no state znode until a replica is live
            continue
        assert z is not None, tp
        assert z.version == st["zk_version"], (tp, z.version, st["zk_version"])
        assert (z.data["leader"], z.data["leader_epoch"], z.data["isr"]) == (
            st["leader"],
            st["leader_epoch"],
            list(st["isr"]),
        ), tp
    assert zk.znodes["/controller_epoch"].data == ctl.epoch
    if ctl.id >= 0:
        assert zk.znodes["/controller"].data["brokerid"] == ctl.id
    else:
        assert "/controller" not in zk.znodes
    topics = {tp[0] for tp in ctl.state}
    for path in zk.znodes:
        if path.startswith("/brokers/topics/"):
            assert path.split("/")[3] in topics, path  # a deleted topic's znodes are gone


@pytest.mark.parametrize("seed", [1, 2])
def test_the_state_znodes_follow_every_controller_write(seed):
    """Restarts (controlled shutdown, start-up), a crash past its session, a pause of the controller past its
    session (a new controller, epoch 2), a preferred election, ISR shrinks and expansions (AlterIsr), a topic
    deleted: checked as the run goes and at its end."""
    c = Cluster(4, seed=seed)
    c.create_topic("t", partitions=6, replication_factor=3, min_insync_replicas=2)
    c.create_topic("gone", partitions=2, replication_factor=2)
    c.producer("p", topic="t", acks="all").open_loop(rate_per_s=300)
    c.restart_broker(2, at_ms=500, down_ms=800)
    c.controller.elect_leader(("t", 0), c.controller.state[("t", 0)]["replicas"][1], at_ms=300)
    c.crash(3, at_ms=2000, down_ms=19000)
    c.pause(1, at_ms=4000, for_ms=20000)
    epochs = []
    for t in (400, 1000, 1600, 1700, 21000, 23000, 30000):
        c.run(t)
        _agree(c)
        if t == 1600:  # broker 2 is back: every replica can answer the deletion's StopReplicas
            c.controller.delete_topic("gone", at_ms=t)
        epochs.append(c.zk.znodes["/controller_epoch"].data)
    assert epochs[-1] == 2 and c.controller.id in (2, 3, 4)  # the pause past the session moved the controller
    assert "gone" not in c.topics
    versions = [c.zk.znodes[state_path(tp)].version for tp in c.controller.state]
    assert max(versions) >= 3  # the tree saw writes, not only creates


def test_a_write_at_another_zk_version_is_refused_not_applied():
    """The controller's write is conditional: when the znode moved under it (what only a zombie's write could do),
    ZooKeeper answers BADVERSION and the model stops loudly rather than overwrite it."""
    c = Cluster(3, seed=0)
    c.create_topic("t", assignment={0: [1, 2, 3]})
    tp = ("t", 0)
    z = c.zk.znodes[state_path(tp)]
    c.zk.apply(SetData(state_path(tp), dict(z.data)))  # someone else writes the znode: version 1
    c.controller.elect_leader(tp, 2, at_ms=10)
    with pytest.raises(RuntimeError, match="only a zombie controller's write could do that"):
        c.run(50)

"""The cluster's controller election, raced through its ZooKeeper data tree (sim/zk/controller.py, ``_elect``).

The truths: 2.8's ``KafkaController.elect`` and ``KafkaZkClient.registerControllerAndIncrementControllerEpoch``
(docs/kafka-reference.md, "The controller's writes to ZooKeeper"): a broker reads ``/controller`` and stops when it
is there; else it reads ``/controller_epoch`` and sends one multi, create ``/controller`` (ephemeral, its session's)
and set ``/controller_epoch`` to epoch + 1 at the zkVersion it read; ZooKeeper applies multis one at a time, all or
nothing (``NODEEXISTS`` on the create, ``BADVERSION`` on the epoch); a loser reads ``/controller`` again
(``checkControllerAndEpoch``) and gives up. Before 2.1 the create came alone and the winner then wrote the epoch.
"""

from __future__ import annotations

import pandas as pd
import pytest

from kafka_lab.sim import Cluster, controller_election
from kafka_lab.sim.controller_election import ZK_REQUEST_MS


def _ops(c) -> pd.DataFrame:
    zk = pd.DataFrame(c.zk.applied, columns=["time_ms", "session", "op", "path", "result"])
    owner = {sid: s.owner for sid, s in c.zk.sessions.items()}
    zk["broker"] = zk["session"].map(owner)
    return zk


def _started(brokers: int, seed: int, within_ms: float) -> Cluster:
    c = Cluster(brokers, seed=seed, zk_latency_ms=ZK_REQUEST_MS)
    c.controller.startup_election(c.rng("controller-election"), within_ms=within_ms)
    c.run(50)
    return c


@pytest.mark.parametrize("seed", range(3))
def test_every_broker_that_races_sends_the_same_requests_and_one_multi_wins(seed):
    """Brokers starting within 0.2 ms all see no controller: each reads /controller, then /controller_epoch, then
    sends its multi; the first to reach ZooKeeper wins epoch 1 and every other multi fails NODEEXISTS, after which
    the loser reads /controller once more and finds the winner's id there."""
    c = _started(5, seed, 0.2)
    ops = _ops(c)
    ctl = c.controller
    won = [(b, d) for _t, b, outcome, d in ctl.election_log if outcome == "elected"]
    assert len(won) == 1 and won[0][0] == ctl.id and ctl.epoch == 1
    for bid in c.brokers:
        mine = ops[ops["broker"] == bid]
        seq = list(zip(mine["op"], mine["path"], mine["result"], strict=True))
        assert seq[:2] == [("GetData", "/controller", "NONODE"), ("GetData", "/controller_epoch", "OK")]
        if bid == ctl.id:
            assert seq[2:] == [("Multi", "/controller,/controller_epoch", "OK")]
        else:
            assert seq[2:] == [
                ("Multi", "/controller,/controller_epoch", "NODEEXISTS"),
                ("GetData", "/controller", "OK"),
            ]
    z = c.zk.znodes
    assert z["/controller"].data["brokerid"] == ctl.id and z["/controller_epoch"].data == 1
    assert c.zk.sessions[z["/controller"].ephemeral_owner].owner == ctl.id  # the winner's session owns it


def test_a_broker_that_finds_controller_there_stops_its_election():
    """A broker whose Reelect reads /controller after the winner created it stops there (``activeControllerId !=
    -1``): no epoch read, no multi."""
    c = _started(8, 0, 3.0)  # starts spread over 3 ms: the late ones find /controller created
    ops = _ops(c)
    late = [b for _t, b, outcome, _d in c.controller.election_log if outcome == "controller_exists"]
    assert late, "some broker should start after the election"
    for bid in late:
        mine = ops[ops["broker"] == bid]
        assert list(zip(mine["op"], mine["result"], strict=True)) == [("GetData", "OK")]
    assert (ops["op"] == "Multi").sum() == len(c.brokers) - len(late)


def test_overlapping_elections_give_each_epoch_one_controller():
    """/controller deleted again just after the first racer's multi won epoch 2: the slower racers' multis find no
    /controller (the create would pass) but the /controller_epoch version they read is gone, so the multi fails
    BADVERSION as a whole; they lose (ControllerMovedException) and the next round elects epoch 3. ZooKeeper and the
    controller agree at the end, and no epoch had two controllers."""
    dry = Cluster(3, seed=0)
    dry.move_controller(at_ms=100)
    dry.run(130)
    ops = _ops(dry)
    first = ops[(ops["op"] == "Multi") & (ops["result"] == "OK")]["time_ms"].iloc[0]
    c = Cluster(3, seed=0)
    c.move_controller(at_ms=100)
    c.move_controller(at_ms=first + 0.001)
    c.run(200)
    ops = _ops(c)
    lost = ops[(ops["op"] == "Multi") & (ops["result"] != "OK")]
    assert "BADVERSION" in set(lost["result"])
    ctl = c.controller
    z = c.zk.znodes
    assert z["/controller"].data["brokerid"] == ctl.id and z["/controller_epoch"].data == ctl.epoch == 3
    elected = [(d["epoch"], b) for _t, b, outcome, d in ctl.election_log if outcome == "elected"]
    assert [e for e, _b in elected] == [2, 3]  # one winner per epoch


def test_the_controller_znode_goes_with_its_brokers_session():
    """/controller is ephemeral: the controller's broker crashes, its session expires zookeeper.session.timeout.ms
    later, /controller goes with it, and the others elect epoch 2 at once; a clean shutdown closes the session at
    once."""
    c = Cluster(3, seed=0, broker_overrides={"zookeeper.session.timeout.ms": 6000})
    c.crash(1, at_ms=100)
    c.run(6099)
    assert c.zk.znodes["/controller"].data["brokerid"] == 1 and c.controller.id == 1  # its session lives on
    c.run(6200)
    assert c.controller.id in (2, 3) and c.controller.epoch == 2
    c = Cluster(3, seed=0)
    c.restart_broker(1, at_ms=100, down_ms=60_000)
    c.run(300)
    assert c.controller.id in (2, 3) and c.zk.znodes["/controller"].data["brokerid"] == c.controller.id


def test_a_broker_that_crashes_after_its_multi_won_is_not_the_controller_and_holds_the_znode_till_its_session_ends():
    """controller-elected-after-its-broker-stopped. Broker 1's multi wins epoch 2 at 107.09 ms; it crashes at 107.5,
    before the reply: it never acts as the controller. Its /controller stays, an ephemeral znode of a session that
    outlives the process by zookeeper.session.timeout.ms, so the others, who read it there, wait; when the session
    expires the znode goes and they elect epoch 3 (epoch 2 was taken by a broker that never led)."""
    c = Cluster(3, seed=0, broker_overrides={"zookeeper.session.timeout.ms": 6000})
    c.move_controller(at_ms=102)
    c.crash(1, at_ms=107.5)
    c.run(300)
    ops = _ops(c)
    won = ops[(ops["op"] == "Multi") & (ops["result"] == "OK")]
    assert list(won["broker"]) == [1] and 107 < won["time_ms"].iloc[0] < 107.5
    assert c.controller.id == -1 and c.zk.znodes["/controller"].data["brokerid"] == 1
    assert not [e for e in c.controller.events if e[2] == "elected"]
    c.run(6200)
    assert c.controller.id in (2, 3) and c.controller.epoch == 3 == c.zk.znodes["/controller_epoch"].data


def test_before_2_1_the_winner_writes_the_epoch_after_its_create_alone():
    """1.0: a broker reads /controller, then creates it alone; the winner reads /controller_epoch and writes it + 1
    at the version read (``incrementControllerEpoch``); losers fail NODEEXISTS on the create and read nothing else."""
    r = controller_election(brokers=4, crashes=0, seed=1, version="1.0")
    zk = r.zookeeper
    winner = r.elections["controller"].iloc[0]
    mine = zk[zk["broker"] == winner]
    assert list(zip(mine["op"], mine["path"], strict=True)) == [
        ("GetData", "/controller"),
        ("Create", "/controller"),
        ("GetData", "/controller_epoch"),
        ("SetData", "/controller_epoch"),
    ]
    others = zk[(zk["broker"] != winner) & zk["broker"].notna()]
    assert set(others["op"]) == {"GetData", "Create"} and set(others[others["op"] == "Create"]["result"]) == {
        "NODEEXISTS"
    }

"""Lab 07's last in-sync replica: a partition loses both its brokers, and who may lead it again (Kafka 2.8).

A scripted run on the cluster (:class:`~kafka_lab.sim.cluster.Cluster`), with two restarts
(:func:`~kafka_lab.sim.zk.lifecycle.restart_broker`): :func:`last_isr_member` says what it measures, and
:func:`last_isr_run` keeps one run per setting for the lab's table and its exercises.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .cluster import Cluster, advance
from .common.options import MAX_RATE_PER_S, RATE_WHY, check_number, check_seed
from .zk.lifecycle import CONTROLLED_SHUTDOWN_MAX_RETRIES, CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS

__all__ = ["LastIsrMember", "last_isr_member", "last_isr_run"]

#: the topic of the run
LAST_ISR_TOPIC = "orders"
#: :func:`last_isr_member`'s timeline (simulated ms): when the restarts start, and when the two brokers are back
#: (about: a broker is down for a fixed time after it stops, and broker 2's stop waits for its shutdown's retries)
LAST_ISR_RESTARTS_MS = {3: 1_000.0, 2: 2_000.0}
LAST_ISR_BACK_MS = (25_000.0, 35_000.0)


@dataclass
class LastIsrMember:
    """What :func:`last_isr_member` measured on ``orders-0`` (times in simulated ms)."""

    first_back: int  # the broker that came back first
    stopped_ms: dict  # broker -> when it stopped (2's is an unclean shutdown: it led, with no one to hand over to)
    back_ms: dict  # broker -> when it was registered again
    offline_ms: float  # when the controller wrote leader -1 (broker 2's session closed): its first failed election
    isr_while_offline: list  # the ISR the controller kept while there was no leader
    online_ms: float  # when the election that brought orders-0 back was decided (nan: it never was)
    leader: int  # the leader it elected (-1: none)
    from_state: str  # the state that election was made from, as state-change.log says it
    failed_ms: list  # each offline election the controller tried and could not make (ERROR in state-change.log)
    shutdown_failed_ms: list  # each attempt of broker 2's controlled shutdown to move its leadership (ERROR too)
    controller: tuple  # (id, epoch) of the controller that tried them (one all along: no controller moves here)
    leo_at_stop: dict  # broker -> its replica's log end offset when it stopped
    hw_at_stop: dict  # broker -> its replica's high watermark when it stopped
    outcomes: dict  # the ledger: batches per outcome (kafka_lab.sim.clients.ledger.OUTCOMES)
    unclean: bool = False  # the topic's unclean.leader.election.enable
    isr_elected: list = field(default_factory=list)  # the ISR the controller wrote with the election that ended it
    unclean_elections: int = 0  # of them, unclean: a leader from outside the ISR
    truncated_records: int = 0  # records acknowledged, then lost (the ledger's truncated batches, in records)
    #: broker 2's truncation of orders-0 as its replica manager recorded it (offset, hw before, batches left,
    #: removed_batches, ...): what its server.log writes for it (kafka_lab.logs.render); empty if it had none
    truncation: dict = field(default_factory=dict)

    @property
    def only_on_last(self) -> int:
        """Records broker 2 appended, and acknowledged to ``acks=all`` with the ISR down to itself, after broker 3
        left: the records broker 3's replica does not have."""
        return self.leo_at_stop[2] - self.leo_at_stop[3]


@functools.lru_cache(maxsize=8)
def last_isr_run(first_back: int = 3, seed: int = 0, unclean: bool = False) -> LastIsrMember:
    """:func:`last_isr_member` once per setting: lab 07's table and its exercises' checks share one run (about
    1.5 s). The result is shared: read it, do not change it."""
    return last_isr_member(first_back=first_back, seed=seed, unclean=unclean)


def last_isr_member(
    *, first_back: int = 3, seed: int = 0, rate_per_s: float = 200.0, unclean: bool = False
) -> LastIsrMember:
    """``orders-0`` (replicas ``[2, 3]``, ``acks=all``, ``min.insync.replicas=1``) loses both its brokers.

    Broker 3 restarts first (controlled: it leaves the ISR), then broker 2, the leader and the ISR's last
    member: no one can take over, so its controlled shutdown fails three times and it stops uncleanly. The
    controller keeps broker 2 in the ISR (an ISR of one keeps its member) with no leader. Then ``first_back``
    (2 or 3) comes back at about 25 s and the other at about 35 s. With ``unclean=False`` (the topic's
    ``unclean.leader.election.enable``, false by default) only broker 2 may lead again, whichever comes back
    first. With ``unclean=True``, broker 3 coming back first is elected at once, out of sync; broker 2 then
    returns as its follower and truncates what only it had: acknowledged records, lost.
    """
    if first_back not in (2, 3):
        raise ValueError(f"first_back is the broker that comes back first, 2 or 3, got {first_back!r}")
    if not isinstance(unclean, bool):
        raise TypeError(f"unclean is True or False (unclean.leader.election.enable), got {unclean!r}")
    check_seed(seed)
    check_number("rate_per_s", rate_per_s, least=0, excluded=True, most=MAX_RATE_PER_S, why=RATE_WHY)
    tp = (LAST_ISR_TOPIC, 0)
    c = Cluster(3, seed=seed)
    c.create_topic(LAST_ISR_TOPIC, assignment={0: [2, 3]}, unclean_leader_election_enable=unclean)
    c.producer("producer-1", topic=LAST_ISR_TOPIC, acks="all").open_loop(rate_per_s)
    ctl = c.controller
    # broker 2's controlled shutdown fails (it leads orders-0 and no one else is in the ISR), 3 times 5 s
    stop_2 = LAST_ISR_RESTARTS_MS[2] + CONTROLLED_SHUTDOWN_MAX_RETRIES * CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS
    back = dict(zip((first_back, 5 - first_back), LAST_ISR_BACK_MS, strict=True))
    c.restart_broker(3, at_ms=LAST_ISR_RESTARTS_MS[3], down_ms=back[3] - LAST_ISR_RESTARTS_MS[3])
    c.restart_broker(2, at_ms=LAST_ISR_RESTARTS_MS[2], down_ms=back[2] - stop_2)
    c.check_run(max(LAST_ISR_BACK_MS) + 5_000.0)  # the whole run's size, before any of it is simulated
    advance(c.env, min(LAST_ISR_BACK_MS))  # both are down now, and a stopped broker's log stands as it stopped
    parts = {b: c.brokers[b].replica_manager.partitions[tp] for b in (2, 3)}
    leo, hw = {b: p.log.leo for b, p in parts.items()}, {b: p.hw for b, p in parts.items()}
    isr_while_offline = list(ctl.state[tp]["isr"])  # no leader now (in either order): the ISR it kept
    res = c.run(max(LAST_ISR_BACK_MS) + 5_000.0)
    stopped = {b: next(t for t, e, _d in c.brokers[b].lifecycle if e == "shut_down") for b in (2, 3)}
    starts = {b: next(t for t, e, _d in c.brokers[b].lifecycle if e == "started") for b in (2, 3)}
    failed = [(t, was) for t, topic, part, was, _s in ctl.failed_state_changes if (topic, part) == tp]
    # the first offline election that failed is at broker 2's failure, when the controller also wrote leader -1
    offline_ms = next(t for t, was in failed if was == "OfflinePartition")
    after = [d for d in ctl.decisions if (d[1], d[2]) == tp and d[0] > offline_ms]
    return LastIsrMember(
        first_back=first_back,
        stopped_ms=stopped,
        back_ms=starts,
        offline_ms=offline_ms,
        isr_while_offline=isr_while_offline,
        online_ms=after[0][0] if after else float("nan"),
        leader=after[0][3] if after else -1,
        from_state=after[0][7] if after else "",
        failed_ms=[t for t, was in failed if was == "OfflinePartition"],
        shutdown_failed_ms=[t for t, was in failed if was == "OnlinePartition"],
        controller=ctl.controller_at(offline_ms),
        leo_at_stop=leo,
        hw_at_stop=hw,
        outcomes=res.ledger["outcome"].value_counts().to_dict(),
        unclean=unclean,
        isr_elected=list(after[0][5]) if after else [],
        unclean_elections=sum(1 for _t, topic, part, _b in ctl.unclean_elections if (topic, part) == tp),
        truncated_records=int(res.outcomes()["truncated"].sum()),
        truncation=next(
            (
                dict(d)
                for _t, kind, topic, part, d in c.brokers[2].replica_manager.events
                if kind == "truncated" and (topic, part) == tp and d["removed_records"]
            ),
            {},
        ),
    )

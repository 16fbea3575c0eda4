"""Lab 07's guided exercises: the shutdown time from ZooKeeper's latency, what doubling the cluster does to
1.0's shutdown in the model (its election log line: the lab's hypothesis for 1.0's minutes), why pipelining
only halves the failover (what the two figures allow; the model's choice is fitted), who rejects the zombie's
requests, which fence is left when /controller is deleted by hand, what the broker epoch protects
against, which replica an offline partition waits for, and what an unclean election costs.

Every check computes its truth with :mod:`kafka_lab.sim` (the closed form of the scale model, the fencing
experiments, the restarts of the cluster model) at the lab's settings and seed, so a check cannot drift from
the model.
"""

from __future__ import annotations

import re

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import Choices, choice, number, seconds
from kafka_lab.sim import broker_restart_race
from kafka_lab.sim.controller_fencing import zombie_in_cluster
from kafka_lab.sim.last_isr import last_isr_run
from kafka_lab.sim.zk.controller_scale import CALIBRATION, controlled_shutdown_closed_form, failover_closed_form

SEED = 1  # the lab's seed for the fencing experiments
PARTITIONS = 10_000  # the talk's broker
RTT = CALIBRATION["zk_rtt_ms"].value
REPLY = CALIBRATION["zk_reply_ms"].value
COMMIT = CALIBRATION["zk_commit_ms"].value
WINDOW = int(CALIBRATION["max_in_flight"].value)


@exercise(
    "07.shutdown_estimate",
    solution=2.75,
    wrong=[5.5, 9.7, 0.55, 2750, 390, 1.375],
    prompt=f"Kafka 1.1 shuts down a broker with {PARTITIONS:,} partitions: one ZooKeeper read and one write per "
    f"partition. A request's round trip is {RTT} ms, a write's quorum commit adds {COMMIT} ms, the client keeps "
    f"{WINDOW} requests in flight, and one thread spends {REPLY} ms handling each reply, in turn. About how many "
    "seconds does the controlled shutdown take?",
    explanation=f"With {WINDOW} in flight the round trips overlap; the replies' handling cannot: every reply costs "
    f"its thread {REPLY} ms, one after the other. 2 × {PARTITIONS:,} replies × {REPLY} ms = 2.75 s.",
)
def _(answer):
    truth = controlled_shutdown_closed_form(partitions=PARTITIONS, version="1.1")
    got = seconds(answer)
    if got is None:
        return incorrect(f"{answer!r} is not a number of seconds.", hint="answer with a number, like 1.5.")
    if abs(got - truth) <= 0.15 * truth:
        return correct(
            f"the model says {truth:.2f} s (the talk: about 3 s). Pipelining hid the round trips: what is left is "
            f"the {REPLY} ms of handling per reply, {2 * PARTITIONS:,} replies in a row on one thread."
        )
    if abs(got / 1000 - truth) <= 0.15 * truth:
        return incorrect(
            f"{got:g} is the right number of milliseconds; the question asks seconds.", hint="1 s = 1000 ms."
        )
    serial_no_commit = 2 * PARTITIONS * (RTT + REPLY) / 1000
    serial = PARTITIONS * (2 * (RTT + REPLY) + COMMIT) / 1000
    if abs(got - serial) <= 0.1 * serial or abs(got - serial_no_commit) <= 0.1 * serial_no_commit:
        return incorrect(
            "that is the time with one request at a time (zookeeper.max.in.flight.requests=1, or 1.0's ZkClient).",
            hint=f"with {WINDOW} in flight, the round trips overlap; which part cannot overlap?",
        )
    if got < 0.8 * truth:
        return incorrect(
            "too fast: that divides everything by the window, or leaves out the reads or the writes.",
            hint=f"the replies are handled by one thread, {REPLY} ms each, and there is a read and a write per partition.",
        )
    if got > 100:
        return incorrect(
            "that is 1.0's figure (6.5 minutes): one partition at a time, with its own requests and logging.",
            hint="the question is about 1.1's pipelined client and batched requests.",
        )
    return incorrect(
        f"{got:g} s is not what the model gives.",
        hint=f"compare what {WINDOW} overlapping round trips allow with what one thread at {REPLY} ms per reply allows.",
    )


BIGGER = 2 * PARTITIONS  # exercise 2: the cluster doubles


def _minutes(answer) -> float | None:
    """A number of minutes; "25 min", "25 minutes" and "25m" too."""
    if isinstance(answer, str):
        answer = re.sub(r"\s*(minutes?|mins?|m)\s*$", "", answer.strip(), flags=re.I)
    return number(answer)


@exercise(
    "07.quadratic_log",
    solution=25,
    wrong=[13, 6.5, 52, 1500, 104],
    prompt=f"Kafka 1.0 (as the talk measured it) shuts down a broker with {PARTITIONS:,} partitions in a cluster "
    "of 25,000 (the blog's setup) in 6.5 minutes: in the model (the lab's explanation, a hypothesis), 6 of them "
    "writing the election log line (each election logs every partition of the cluster), the other half minute "
    f"ZooKeeper and requests. The cluster doubles: {BIGGER:,} partitions on the broker, 50,000 in the cluster. "
    "About how many minutes does the controlled shutdown take now, in the model?",
    explanation="The ZooKeeper work and the requests are per partition: twice as many, 1 minute. The log line is "
    "per election and as long as the cluster: twice as many elections, each line twice as long, 4 x 6 = 24 "
    "minutes. 25 minutes in all, in the model: if the log line is what made 1.0 slow (the lab's hypothesis), "
    "doubling the cluster made the shutdown almost four times longer.",
)
def _(answer):
    truth = controlled_shutdown_closed_form(partitions=BIGGER, version="1.0") / 60
    base = controlled_shutdown_closed_form(partitions=PARTITIONS, version="1.0") / 60
    got = _minutes(answer)
    if got is None:
        return incorrect(f"{answer!r} is not a number of minutes.", hint="answer with a number, like 10.")
    if abs(got - truth) <= 0.15 * truth:
        return correct(
            f"the model says {truth:.1f} minutes. Twice the elections, each logging a cluster twice as big: the log "
            "line's share grows four times, the rest twice. A line that grows with the cluster makes the "
            "shutdown quadratic: at 100,000 partitions on the broker the model gives about 10 hours. (A prediction "
            "of the lab's hypothesis about the log line: no source measured 1.0 at these sizes.)"
        )
    if abs(got / 60 - truth) <= 0.15 * truth:
        return incorrect(
            f"{got:g} is the right number of seconds; the question asks minutes.", hint="1 minute = 60 seconds."
        )
    if abs(got - 2 * base) <= 0.15 * 2 * base:
        return incorrect(
            "that doubles everything. The ZooKeeper work and the requests do double, but the log line does not "
            "stay the same length.",
            hint="after each election the controller logs every partition of the cluster: how long is that line now?",
        )
    if abs(got - base) <= 0.15 * base:
        return incorrect(
            "that is the time before the cluster doubled.",
            hint="twice the partitions on the broker: twice the elections.",
        )
    if got > 1.5 * truth:
        return incorrect(
            "too slow: that multiplies the log line's cost by more than the two things that doubled.",
            hint="two factors doubled for the log line (elections, line length); one for the rest.",
        )
    return incorrect(
        f"{got:g} minutes is not what the model gives.",
        hint="split the 6.5 minutes into the log line's 6 and the rest's 0.5, and ask how each grows.",
    )


WHY_HALF_CHOICES = Choices(
    {
        "a": "ZooKeeper allows a client only 2 requests in flight, whatever Kafka asks",
        "b": "some of each read's work is still done one read at a time, and that cannot overlap",
        "c": "the new controller must first write every partition's state back",
        "d": "the pipelined client has to read each partition twice",
    }
)


@exercise(
    "07.why_half",
    solution="b",
    wrong=["a", "c", "d", "e"],
    prompt="The failover's load went from 28 s (1.0, one read at a time) to 14 s (1.1, 10 in flight): why only "
    "half, and not a tenth? Which explanation fits both figures? Answer with a letter: "
    + "; ".join(f"({k}) {v}" for k, v in WHY_HALF_CHOICES.items()),
    explanation="A serial read costs a round trip plus some work that pipelining cannot overlap; with 10 in "
    "flight only the round trips overlap. The two figures say only that this serial work is about half a serial "
    "read; which work it is they cannot tell. The model's choice, fitted from these same two figures, is the "
    "replies' handling in turn on one thread (ZooKeeper's client delivers each reply, the controller decodes "
    "each state); ZooKeeper serving one session's requests in order would fit them as well.",
)
def _(answer):
    got = choice(answer, WHY_HALF_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    n = 100_000
    serial = failover_closed_form(partitions=n, version="1.0")
    piped = failover_closed_form(partitions=n, version="1.1")
    reads = n + n // 50 + 6
    bound_by_replies = abs(piped - reads * REPLY / 1000) < 0.01 * piped
    truth = "b" if bound_by_replies else "a"
    if got == truth:
        return correct(
            "that is what the two figures allow: about half of each serial read is work done one request at a "
            f"time. In the model it is the replies' handling, {REPLY} ms each on one thread: it loads in "
            f"{serial:.1f} s serially and {piped:.1f} s pipelined, {reads:,} replies × {REPLY} ms. That cost is "
            "fitted from these same two figures, a hypothesis that explains them, not a measurement: ZooKeeper "
            "serving one session's requests in order would explain them as well."
        )
    if got == "a":
        return incorrect(
            "2 in flight would give exactly half, but ZooKeeper does not limit a client's outstanding requests: "
            "Kafka's own semaphore does, at zookeeper.max.in.flight.requests = 10.",
            hint="what does a serial read spend its time on, and which part of that can overlap?",
        )
    if got == "c":
        return incorrect(
            "failover reads the state; it writes only for the partitions whose leader it must change.",
            hint="the 14 s is the load alone.",
        )
    return incorrect("each partition's state znode is read once.", hint="look at what the client does with each reply.")


WHO_REJECTS_CHOICES = Choices(
    {
        "a": "ZooKeeper takes the write; brokers 2 and 3 reject its LeaderAndIsr (STALE_CONTROLLER_EPOCH)",
        "b": "ZooKeeper fails the write SESSIONEXPIRED; no LeaderAndIsr reaches a broker",
        "c": "ZooKeeper fails the write BADVERSION on /controller_epoch; brokers 2 and 3 reject its LeaderAndIsr",
        "d": "nobody: orders-1's state znode still has the zkVersion the zombie cached, so everything goes through",
    }
)


def zombie_outcome() -> dict:
    """The lab's GC zombie with fencing on (:func:`~kafka_lab.sim.controller_fencing.zombie_in_cluster`, seed 1):
    the write's error, the brokers that answered an epoch-1 request after the pause, and what took effect."""
    r = zombie_in_cluster(fencing=True, seed=SEED, pause_ms=8000.0)
    start = r.events[r.events["event"].str.startswith("paused")]["time_ms"].iloc[0]
    late = r.requests[(r.requests["controller_epoch"] == 1) & (r.requests["time_ms"] > start)]
    failed = r.events["event"].str.extract(r"write of orders-1 failed: (\w+)")[0].dropna().tolist()
    return {
        "requests_after_pause": len(late),
        "write_error": failed[0] if failed else None,
        "resigned": bool(r.events["event"].str.startswith("zombie_resigned").any()),
        "applied_stale": r.applied_stale,
    }


@exercise(
    "07.who_rejects",
    solution="b",
    wrong=["a", "c", "d", "A)x"],
    prompt="Kafka 2.1+, fencing on. Controller 1 (epoch 1) was writing orders-1's new state (leader 3) when a GC "
    "paused it for longer than its session timeout; broker 3 is now the controller with epoch 2. The zombie wakes "
    "in the same event: it writes the state, and would then send the LeaderAndIsr. Who rejects what? Answer with "
    "a letter: " + "; ".join(f"({k}) {v}" for k, v in WHO_REJECTS_CHOICES.items()),
    explanation="Since 1.1 the ZooKeeper client opens a new session only once the controller has processed its "
    "Expire event (beforeInitializingSession), which waits behind the event in progress: that event's write goes "
    "out on the expired session and fails. The controller sends a LeaderAndIsr only after its ZooKeeper write "
    "succeeded, so nothing reaches a broker; the brokers' epoch check would refuse it if it did. The check on "
    "/controller_epoch (KAFKA-6082) is for a deposed controller whose session is alive.",
)
def _(answer):
    got = choice(answer, WHO_REJECTS_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "b".')
    t = zombie_outcome()
    fenced = t["write_error"] == "SESSIONEXPIRED" and t["requests_after_pause"] == 0 and t["resigned"]
    truth = "b" if fenced and t["applied_stale"] == 0 else "?"
    if got == truth:
        return correct(
            f"in the model the write fails {t['write_error']}, the zombie sends no request after its pause "
            f"({t['requests_after_pause']}), and its Expire event makes it resign. Nothing from epoch 1 takes effect."
        )
    if got == "a":
        return incorrect(
            "the controller writes to ZooKeeper first and tells the brokers only what ZooKeeper took; and ZooKeeper "
            "does not take a write on a session it has ended.",
            hint="which session does the zombie's ZooKeeper client still hold when the write goes out?",
        )
    if got == "c":
        return incorrect(
            "the write would fail on the epoch check if it reached the data tree, but it never gets that far; and "
            "a failed write is never followed by a LeaderAndIsr.",
            hint="which session does the zombie's ZooKeeper client still hold when the write goes out?",
        )
    return incorrect(
        "that is 1.0, or fencing off: the ZooKeeper client reconnected with a new session and retried, and the "
        "zkVersion check alone let the zombie's write in.",
        hint="ZooKeeper checks the session of every request before anything else.",
    )


FENCE_LEFT_CHOICES = Choices(
    {
        "a": "the brokers' check of the controller epoch (STALE_CONTROLLER_EPOCH)",
        "b": "the session: ZooKeeper refuses a write from a session it has ended (SESSIONEXPIRED)",
        "c": "the check on /controller_epoch's version that goes in the same multi as the write (BADVERSION)",
        "d": "none: the write lands, and the new controller finds out later",
    }
)


def deleted_znode_outcome() -> dict:
    """The talk's second zombie, with fencing on: what refused the old controller's write, and what it did."""
    r = zombie_in_cluster(fencing=True, seed=SEED, cause="znode_deleted")
    failed = r.events["event"].str.extract(r"write of orders-1 failed: (\w+)")[0].dropna().tolist()
    return {
        "write_error": failed[0] if failed else None,
        "resigned": bool(r.events["event"].str.startswith("zombie_resigned").any()),
        "applied_stale": r.applied_stale,
    }


@exercise(
    "07.fence_left",
    solution="c",
    wrong=["a", "b", "d"],
    prompt="Kafka 2.1+, fencing on. An administrator deletes /controller; the other brokers elect a new controller "
    "(epoch 2) at once. Controller 1's session is alive, and it is in an event that writes orders-1's new state a "
    "few ms later. Which fence stops that write? Answer with a letter: "
    + "; ".join(f"({k}) {v}" for k, v in FENCE_LEFT_CHOICES.items()),
    explanation="With the session alive, ZooKeeper takes the request; since 2.1 (KAFKA-6082) every controller "
    "write is multi(check /controller_epoch at the version this controller set, write), and the new controller's "
    "election bumped that version. The talk's second kind of zombie.",
)
def _(answer):
    got = choice(answer, FENCE_LEFT_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    t = deleted_znode_outcome()
    truth = "c" if t["write_error"] == "BADVERSION" and t["resigned"] and t["applied_stale"] == 0 else "?"
    if got == truth:
        return correct(
            f"in the model the write fails {t['write_error']} on /controller_epoch's version (Kafka logs 'Controller "
            "epoch zkVersion check fails') and controller 1 resigns. Nothing from epoch 1 takes effect."
        )
    if got == "a":
        return incorrect(
            "the brokers check the requests the controller sends them; a ZooKeeper write never passes through a broker.",
            hint="which party receives the write?",
        )
    if got == "b":
        return incorrect(
            "deleting /controller by hand ends no session: controller 1's session is alive, so its write is accepted "
            "as far as the session goes.",
            hint="what else does a 2.1+ controller write carry?",
        )
    return incorrect(
        "that is what happens before 2.1, or with fencing off: only the state znode's zkVersion is checked, and it "
        "still matches.",
        hint="what did the new controller's election change in ZooKeeper?",
    )


BROKER_EPOCH_CHOICES = Choices(
    {
        "a": "a zombie controller that wakes up after a long GC pause",
        "b": "a request meant for a broker's previous incarnation",
        "c": "two brokers that were started with the same broker.id",
        "d": "a LeaderAndIsr that carries an older leader epoch",
    }
)


def restart_outcome() -> dict:
    off = broker_restart_race(broker_epoch=False, seed=SEED, restart_ms=100, backlog_ms=700)
    on = broker_restart_race(broker_epoch=True, seed=SEED, restart_ms=100, backlog_ms=700)
    stop_on = on.requests[on.requests["api"] == "StopReplica"]["error"].tolist()
    return {"off": off.damage["orders-0 on broker 3"], "on": on.damage["orders-0 on broker 3"], "stop_on": stop_on}


@exercise(
    "07.broker_epoch",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="KIP-380 (Kafka 2.2) gives every broker registration an epoch (the czxid of /brokers/ids/<id>), and "
    "control requests carry it. What does it protect against? Answer with a letter: "
    + "; ".join(f"({k}) {v}" for k, v in BROKER_EPOCH_CHOICES.items()),
    explanation="KIP-380: a broker that bounces during a controlled shutdown could process its previous "
    "incarnation's StopReplica and leave a replica offline; with the epoch it answers STALE_BROKER_EPOCH.",
)
def _(answer):
    got = choice(answer, BROKER_EPOCH_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    t = restart_outcome()
    truth = "b" if t["off"] == "stopped" and t["on"] == "fetching" and t["stop_on"] == ["STALE_BROKER_EPOCH"] else "?"
    if got == truth:
        return correct(
            f"in the model, without it the restarted broker applies the old StopReplica and its replica of orders-0 "
            f"stays {t['off']}; with it the request is answered {t['stop_on'][0]} and the replica keeps fetching."
        )
    if got == "a":
        return incorrect(
            "that is the controller epoch's job (and KAFKA-6082's conditional writes).",
            hint="the broker epoch is about the broker: what changes when it restarts?",
        )
    if got == "c":
        return incorrect(
            "a second broker with the same id cannot register: /brokers/ids/<id> already exists (NODEEXISTS).",
            hint="think of one broker, restarted quickly.",
        )
    return incorrect(
        "leader epochs already fence those, per partition.", hint="what could reach a broker that just restarted?"
    )


LAST_ISR_CHOICES = Choices(
    {
        "a": "at about 25 s, broker 3: it is back, alive and a replica of orders-0",
        "b": "at about 35 s, broker 2: the partition stays offline until then",
        "c": "at about 25 s, broker 3, once it has copied from broker 2's log what it missed",
        "d": "not by itself: an operator has to run a leader election",
    }
)


def last_isr_outcome() -> dict:
    r = last_isr_run(3, 0)  # the table's own run
    return {
        "leader": r.leader,
        "isr": r.isr_while_offline,
        "online_s": r.online_ms / 1000,
        "back_s": {b: t / 1000 for b, t in r.back_ms.items()},
        "lacks": r.only_on_last,
    }


@exercise(
    "07.last_isr",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="orders-0 has replicas [2, 3]; producers use acks=all, min.insync.replicas is 1. Broker 3 restarts "
    "(controlled: it leaves the ISR), then broker 2, the leader, stops too. Broker 3 is back at 25 s, broker 2 at "
    "35 s. When does orders-0 have a leader again, and which? Answer with a letter: "
    + "; ".join(f"({k}) {v}" for k, v in LAST_ISR_CHOICES.items()),
    explanation="unclean.leader.election.enable is false (the default since 0.11): an offline partition elects the "
    "first live replica of its assignment that is in the ISR. The controller never empties an ISR "
    "(ReplicaStateMachine keeps an ISR of one), so orders-0 waits for broker 2; onBrokerStartup's "
    "triggerOnlinePartitionStateChange elects it the moment it is back.",
)
def _(answer):
    got = choice(answer, LAST_ISR_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    t = last_isr_outcome()
    truth = "b" if t["leader"] == 2 and t["isr"] == [2] and abs(t["online_s"] - t["back_s"][2]) < 0.1 else "?"
    if got == truth:
        return correct(
            f"in the model orders-0 is offline from broker 2's stop, its ISR kept as {t['isr']}; broker 3's return "
            f"at {t['back_s'][3]:.1f} s changes nothing, and broker 2 leads again at {t['online_s']:.1f} s. Broker 3 "
            f"lacks {t['lacks']:,} records that only broker 2 has, acknowledged with the ISR down to broker 2: none "
            "is lost."
        )
    if got == "a":
        return incorrect(
            f"that is an unclean leader election, off by default: broker 3 left the ISR at 1 s and lacks "
            f"{t['lacks']:,} records that only broker 2 has, acknowledged; with broker 3 leading, broker 2 would "
            "truncate them when it came back as its follower.",
            hint="which replicas may an offline partition elect when unclean.leader.election.enable is false?",
        )
    if got == "c":
        return incorrect(
            "broker 2 is down at 25 s: there is no log to copy from. A follower only fetches from a live leader.",
            hint="who may lead, and is that broker up at 25 s?",
        )
    return incorrect(
        "when a broker registers again the controller calls triggerOnlinePartitionStateChange, which tries every "
        "offline partition: one that the returning broker may lead is elected then, with no operator.",
        hint="what does the controller do when a broker registers again?",
    )


UNCLEAN_CHOICES = Choices(
    {
        "a": "orders-0 still waits for broker 2 (35 s), and nothing is lost",
        "b": "broker 3 leads at about 25 s; when broker 2 is back, broker 3 copies from it the records it lacks, "
        "so nothing is lost",
        "c": "broker 3 leads at about 25 s; when broker 2 is back it follows broker 3 and deletes the records "
        "only it had: acknowledged records are lost",
        "d": "broker 3 leads at about 25 s; the producer is told those records failed and sends them again, so "
        "nothing is lost",
    }
)


def unclean_outcome() -> dict:
    r = last_isr_run(3, 0, True)  # the table's own run
    return {
        "leader": r.leader,
        "isr": r.isr_elected,
        "unclean": r.unclean_elections,
        "online_s": r.online_ms / 1000,
        "back_s": {b: t / 1000 for b, t in r.back_ms.items()},
        "truncated": r.truncated_records,
        "batches": r.outcomes.get("truncated", 0),
        "failed": r.outcomes.get("failed", 0),
        "to": r.leo_at_stop[3],
        "hw": r.hw_at_stop[2],
    }


@exercise(
    "07.unclean",
    solution="c",
    wrong=["a", "b", "d"],
    prompt="The same outage, but the topic has unclean.leader.election.enable=true. Broker 3 is back at 25 s, "
    "broker 2 at 35 s. What happens to orders-0, and to the records broker 2 acknowledged alone? Answer with a "
    "letter: " + "; ".join(f"({k}) {v}" for k, v in UNCLEAN_CHOICES.items()),
    explanation="With no live ISR member, an unclean topic elects the first live replica of its assignment "
    "(offlinePartitionLeaderElection), broker 3, with the ISR [3]. When broker 2 registers again it becomes its "
    "follower; its fetch finds that its log diverges from the leader's (by leader epoch) and it truncates to "
    "where broker 3's log ends: the records only it had, all acknowledged, are gone.",
)
def _(answer):
    got = choice(answer, UNCLEAN_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    t = unclean_outcome()
    lost = t["leader"] == 3 and t["unclean"] == 1 and t["truncated"] > 0 and t["failed"] == 0
    truth = "c" if lost and abs(t["online_s"] - t["back_s"][3]) < 0.1 else "?"
    if got == truth:
        return correct(
            f"in the model broker 3 leads at {t['online_s']:.1f} s with the ISR {t['isr']}: an unclean election. "
            f"When broker 2 is back ({t['back_s'][2]:.1f} s) it truncates to offset {t['to']:,}, below its own high "
            f"watermark {t['hw']:,}: {t['truncated']:,} records in {t['batches']:,} batches, every one acknowledged "
            "to acks=all, are gone, and the producer was never told."
        )
    if got == "a":
        return incorrect(
            "that is the default (false). With unclean.leader.election.enable=true an offline partition with no "
            "live ISR member elects a live replica outside the ISR: the first of its assignment.",
            hint="what does the topic's setting allow when no in-sync replica is alive?",
        )
    if got == "b":
        return incorrect(
            "a leader never fetches from its followers: replication goes one way, from the leader. The follower "
            "that disagrees with the leader's log is the one that truncates.",
            hint="which way do records flow between a leader and a follower?",
        )
    return incorrect(
        "the producer already had its acknowledgement (acks=all, with the ISR down to broker 2): for the producer "
        "those records are done. Nothing tells it they were lost later.",
        hint="what did the producer hear when broker 2 appended those records?",
    )

"""Lab 09's guided exercises: a broker's epoch in the metadata log, the failover's time without a reload, what sets
a controlled shutdown's pace, whether a busy broker hears of a leader move late, when a broker acts on a committed
record in 4.0, and when a silent broker is fenced.

Every check computes its truth with :mod:`kafka_lab.sim` (the KRaft cluster, :func:`~kafka_lab.sim.kraft_failover`,
:func:`~kafka_lab.sim.kraft_controlled_shutdown`, :func:`~kafka_lab.sim.broker_fencing`) at the lab's settings and
seed, so a check cannot drift from the model.
"""

from __future__ import annotations

import functools
import re

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import SECONDS, Choices, choice, number, number_in, seconds, whole_number
from kafka_lab.incident_stats import cached_run
from kafka_lab.sim import (
    broker_fencing,
    controller_failover,
    kraft_controlled_shutdown,
    kraft_failover,
    truncation_incident,
)
from kafka_lab.sim.kraft.config import KRaftConfig

__all__ = [
    "BUSY_CHOICES",
    "SHUTDOWN_CHOICES",
    "SEED",
    "FAILOVER_PARTITIONS",
    "SHUTDOWN_PARTITIONS",
    "kraft_run",
    "move_times",
    "fencing_run",
    "HWM_PROMPT_NUMBERS",
    "FENCE_PROMPT_NUMBERS",
]

SEED = 0
FAILOVER_PARTITIONS = 100_000  # lab 07's largest cluster
SHUTDOWN_PARTITIONS = 10_000  # the talk's broker
CONFIG = KRaftConfig()


def kraft_run():
    """Lab 05's incident (the KIP's 20 partitions, 200 producers, acks=1) on the KRaft cluster."""
    return cached_run(truncation_incident, control_plane=None, mode="kraft", seed=SEED)


def move_times(res=None) -> dict:
    """The move of orders-0 in a KRaft run (ms): decided, appended, committed, the next record's decision and
    append, and when each broker acted on it."""
    res = kraft_run() if res is None else res
    ml = res.metadata_log
    pcr = ml[(ml["record_type"] == "PartitionChangeRecord") & ml["fields"].map(lambda f: f.get("PartitionId") == 0)]
    r = pcr.iloc[0]
    nxt = ml[ml["offset"] > r["offset"]].iloc[0]
    ev = res.events
    acted = {
        b: float(
            ev[
                (ev["broker_id"] == b)
                & (ev["partition"] == 0)
                & (ev["topic"] == "orders")
                & ev["event"].isin(["become_leader", "become_follower"])
            ]["time_ms"].min()
        )
        for b in sorted(res.cluster.brokers)
    }
    return {
        "decided": float(r["decided_ms"]),
        "appended": float(r["appended_ms"]),
        "committed": float(r["committed_ms"]),
        "next_type": str(nxt["record_type"]),
        "next_decided": float(nxt["decided_ms"]),
        "next_appended": float(nxt["appended_ms"]),
        "acted": acted,
    }


@functools.cache
def fencing_run(fault: str = "pause"):
    """Broker 2 pauses for 15 s at 5 s (one producer: the timeline is the lesson)."""
    return broker_fencing(seed=SEED, fault=fault, producers=1)


def _shown(answer) -> str:
    """The answer as feedback quotes it: at most 40 characters."""
    text = repr(answer)
    return text if len(text) <= 40 else text[:37] + "..."


def _in_ms(answer) -> bool:
    """An answer written in milliseconds ("3000 ms")."""
    return isinstance(answer, str) and bool(re.search(r"\d\s*(ms|milliseconds?)\s*$", answer.strip(), flags=re.I))


def _in_s(answer) -> bool:
    """An answer written in seconds ("0.146 s")."""
    return isinstance(answer, str) and bool(re.search(r"\d\s*(s|secs?|seconds?)\s*$", answer.strip(), flags=re.I))


def _ms(answer) -> float | None:
    if isinstance(answer, str):
        answer = re.sub(r"\s*(milliseconds?|ms)\s*$", "", answer.strip(), flags=re.I)
    return number(answer)


# -- 1. the broker epoch ---------------------------------------------------------------------------------------------
@exercise(
    "09.broker_epoch",
    solution=3,
    wrong=[1, 0, 2, 4, 6],
    prompt="The model's new KRaft cluster (a real one first writes its bootstrap records, so its epochs are larger): "
    "the active controller's first record is its LeaderChangeMessage at offset 0; then it registers brokers 1, 2 and "
    "3, in that order, one RegisterBrokerRecord each, nothing in between. What is broker 3's broker epoch?",
    explanation="A broker's epoch is the offset at which the controller writes its registration, here the offset of "
    "its RegisterBrokerRecord: 1, 2 and 3 for brokers 1, 2 and 3. Unique and growing by construction: a broker that "
    "registers again gets a later offset.",
)
def _(answer):
    ml = kraft_run().metadata_log
    reg = ml[(ml["record_type"] == "RegisterBrokerRecord") & ml["fields"].map(lambda f: f.get("BrokerId") == 3)]
    truth = int(reg["offset"].iloc[0])
    got = whole_number(answer)
    if got is None:
        return incorrect(f"{_shown(answer)} is not a whole number.", hint="answer with an offset, like 7.")
    if abs(got) > 10**9:
        return incorrect("that is far more records than this log holds.", hint="count the records before it.")
    if got == truth:
        return correct(
            f"broker 3's epoch is {truth}, the offset of its RegisterBrokerRecord (filter the log below by "
            "RegisterBrokerRecord to see all three). ZooKeeper mode took the czxid of the broker's znode (KIP-380, lab "
            "07); KRaft takes the log's own offset."
        )
    if got == 1:
        return incorrect(
            "1 would be a count of broker 3's registrations, or an epoch that starts at 1 for every broker.",
            hint="the epoch is a position in the metadata log: which offset holds broker 3's registration?",
        )
    if got == truth - 1:
        return incorrect(
            "that counts from the first registration at 0; the LeaderChangeMessage takes offset 0.",
            hint="offset 0 is the LeaderChangeMessage; the registrations follow it.",
        )
    return incorrect(
        f"{got} is not the offset of broker 3's RegisterBrokerRecord.",
        hint="count the records before it: one LeaderChangeMessage, then brokers 1 and 2.",
    )


# -- 2. failover without a reload ------------------------------------------------------------------------------------
@exercise(
    "09.failover",
    solution=3.0,
    wrong=[14, 28, 18, 9, 0.025, 1],
    prompt=f"The active controller's node crashes in a KRaft cluster of {FAILOVER_PARTITIONS:,} partitions. The "
    f"other two voters notice when a fetch has not succeeded for controller.quorum.fetch.timeout.ms "
    f"({CONFIG.quorum.fetch_timeout_ms} ms: the crash comes at a random moment between two fetches), then hold an "
    f"election (controller.quorum.election.timeout.ms {CONFIG.quorum.election_timeout_ms} ms, a random backoff after "
    "a split vote). About how many seconds from the crash until a new controller is active?",
    explanation="The voters wait out the fetch timeout (less the time since their last fetch), then elect. The "
    "winner already has every committed record and has replayed them as a standby: it needs to load nothing, so "
    "the time does not depend on the number of partitions. In the model, 1.65 s to notice and 1.34 s to elect "
    "(one split vote), 2.98 s in all, at 100 partitions as at 100,000.",
)
def _(answer):
    truth = _kraft_failover().duration_s
    got = seconds(answer)
    if got is None:
        return incorrect(f"{_shown(answer)} is not a number of seconds.", hint="answer with a number, like 1.5.")
    if _in_ms(answer) or (got >= 1000 and 1.5 <= got / 1000 <= 4.5):
        return incorrect(
            f"{got:g} is the right number of milliseconds; the question asks seconds.", hint="1 s = 1000 ms."
        )
    z = _zk_failover()
    if 1.5 <= got <= 4.5:
        return correct(
            f"the model says {truth:.2f} s at {FAILOVER_PARTITIONS:,} partitions, and the same at 100: the new "
            "leader's log already holds every committed record, and it replayed them while it stood by. Lab 07's "
            f"ZooKeeper controller spent {z.load_s:.0f} s (1.1) just reading the state back. (The model leaves out "
            "4.0's pre-vote, which adds a round trip of a few ms before the vote.)"
        )
    if abs(got - z.load_s) <= 0.2 * z.load_s or abs(got - 28) <= 0.2 * 28:
        return incorrect(
            "that is lab 07's state load in ZooKeeper mode (14 s in 1.1, 28 s in 1.0).",
            hint="does a KRaft voter that wins the election have anything to read first?",
        )
    if abs(got - 18) <= 2 or abs(got - 9) <= 1:
        return incorrect(
            "that is a session timeout (ZooKeeper's 18 s, or a broker's broker.session.timeout.ms 9 s); a voter "
            "notices a missing leader by its own fetches.",
            hint=f"controller.quorum.fetch.timeout.ms is {CONFIG.quorum.fetch_timeout_ms} ms.",
        )
    if got < 1.5:
        return incorrect(
            "too fast: the voters first have to notice, and they wait for a fetch timeout to do so.",
            hint="how long does a follower wait without a successful fetch before it stands?",
        )
    return incorrect(
        f"{got:g} s is more than the model gives.",
        hint="add the fetch timeout (less the time since the last fetch) to an election of one or two rounds.",
    )


@functools.cache
def _kraft_failover():
    return kraft_failover(partitions=FAILOVER_PARTITIONS, seed=SEED)


@functools.cache
def _zk_failover():
    return controller_failover(partitions=FAILOVER_PARTITIONS, version="1.1", seed=SEED)


# -- 3. what sets a controlled shutdown's pace -----------------------------------------------------------------------
SHUTDOWN_CHOICES = Choices(
    {
        "a": "about 2.75 s, as 1.1: the controller still writes one record per partition, and each costs a ZooKeeper "
        "round trip's worth of work",
        "b": "well under a second: one event writes every record, and the broker leaves once they are committed",
        "c": "2 s or 4 s, at 1,000 partitions as at 10,000: heartbeats, not records, set the pace",
        "d": "about 6.5 minutes, as 1.0: one partition at a time",
    }
)


@exercise(
    "09.shutdown",
    solution="c",
    wrong=["a", "b", "d"],
    prompt=f"A broker with {SHUTDOWN_PARTITIONS:,} partition replicas (half of them led) shuts down in KRaft: its "
    "heartbeat asks WantShutDown; the controller moves its leaderships and takes it out of every ISR in one event "
    "(records handed to Raft 10,000 at a time). It decides only on the leaving broker's own heartbeats (at once, 50 "
    f"ms after the first answer, then every broker.heartbeat.interval.ms = {CONFIG.broker_heartbeat_interval_ms} ms), "
    "and lets it go once it leads nothing and every other active broker has reported, in its own heartbeat (every "
    "2000 ms, at its own phase), that it applied those records. How long does the shutdown take? Answer with a "
    "letter: " + "; ".join(f"({k}) {v}" for k, v in SHUTDOWN_CHOICES.items()),
    explanation="The records are written in one event and committed in tens of ms; what the controller then waits "
    "for is heartbeats: the other brokers' reports, every 2 s at their own phases, and the leaving broker's own "
    "third heartbeat, 2 s after its second, or its fourth if a report came too late. So the shutdown takes one or "
    "two heartbeat intervals, whatever the number of partitions, until the brokers' work on the records delays "
    "their reports.",
)
def _(answer):
    got = choice(answer, SHUTDOWN_CHOICES)
    if got is None:
        return incorrect(f"{_shown(answer)} is not one of the letters a, b, c, d.", hint='answer like "a".')
    small = _kraft_shutdown(1_000)
    big = _kraft_shutdown(SHUTDOWN_PARTITIONS)
    flat = abs(big.duration_s - small.duration_s) < 0.2 and (1.5 < big.duration_s < 2.5 or 3.5 < big.duration_s < 4.5)
    if not flat:  # the model no longer gives what the choices were written for: fail loudly, not a wrong answer
        raise RuntimeError(
            f"09.shutdown's choices assume a flat 2 s or 4 s shutdown; the model gives {small.duration_s:.2f} s at "
            f"1,000 partitions and {big.duration_s:.2f} s at {SHUTDOWN_PARTITIONS:,}"
        )
    if got == "c":
        wait = (big.phases["reported_ms"] - big.phases["committed_ms"]) / 1000
        return correct(
            f"the model says {big.duration_s:.2f} s at {SHUTDOWN_PARTITIONS:,} partitions and {small.duration_s:.2f} s "
            f"at 1,000. The records were committed {big.phases['committed_ms'] - big.phases['decided_ms']:.0f} ms "
            f"after the controller's decision ({big.phases['committed_ms']:.0f} ms after the heartbeat asked); the "
            f"next {wait:.2f} s went to waiting for heartbeats: the other brokers' reports, then the leaving "
            "broker's own next heartbeat. With other seeds (other heartbeat phases) it is 4.1 s about half the time: "
            "one report came after that heartbeat, and the grant waited for the next. At 100,000 partitions (11 "
            "appends of 10,000 records) it grows, to 4.6 s with this seed: the tables below."
        )
    if got == "b":
        return incorrect(
            "the records are committed that fast, but the controller does not let the broker go yet.",
            hint="who must have applied the records first, and how does the controller learn that they have?",
        )
    if got == "a":
        return incorrect(
            "there is no ZooKeeper: a record is an entry in the controller's own log, thousands of them per batch.",
            hint="which interval in the question is measured in seconds?",
        )
    return incorrect(
        "1.0's minutes were one partition at a time through ZooKeeper.", hint="KRaft writes them in one event."
    )


@functools.cache
def _kraft_shutdown(n: int):
    return kraft_controlled_shutdown(partitions=n, seed=SEED)


# -- 4. the busy broker ----------------------------------------------------------------------------------------------
BUSY_CHOICES = Choices(
    {
        "a": "later than brokers 2 and 3, by about as long as in ZooKeeper mode without the control plane: the "
        "change waits behind its queue of produce requests",
        "b": "at about the same time as brokers 2 and 3: it fetches the metadata log on its own connection and "
        "applies it on its metadata loader thread, not on a request handler",
        "c": "first: the controller sends the change to the busiest broker first",
        "d": "never in this run: a busy broker misses its heartbeats and is fenced",
    }
)


@exercise(
    "09.busy_broker",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="Lab 05's incident on the KRaft cluster: 200 producers keep broker 1's request queue full, and the "
    "controller moves orders-0's leadership from broker 1 to broker 2. When does busy broker 1 act on the move? "
    "Answer with a letter: " + "; ".join(f"({k}) {v}" for k, v in BUSY_CHOICES.items()),
    explanation="A KRaft broker is an observer of the metadata log: its Raft client fetches from the active "
    "controller over controller.listener.names, on a connection of its own, and the metadata loader applies what "
    "it fetched. No request handler is involved, so the produce backlog is not in the way. What it does wait for is "
    "each partition's lock against an append in progress: in the model, a fraction of a millisecond (an upper "
    "bound).",
)
def _(answer):
    got = choice(answer, BUSY_CHOICES)
    if got is None:
        return incorrect(f"{_shown(answer)} is not one of the letters a, b, c, d.", hint='answer like "a".')
    t = move_times()
    late = t["acted"][1] - min(t["acted"][2], t["acted"][3])
    truth = "b" if 0 <= late < 5 else "a"
    if got == truth:
        return correct(
            f"broker 1 acted {late:.2f} ms after brokers 2 and 3 (in ZooKeeper mode without the control plane, "
            "16.7 ms later: lab 05). The fraction of a millisecond is the partition's lock (the model's upper bound), held by an append in "
            "progress. But look at when they all acted: the next exercise."
        )
    if got == "a":
        return incorrect(
            "that is ZooKeeper mode without KIP-291: the LeaderAndIsr queued behind the produce requests. In KRaft "
            "there is no LeaderAndIsr.",
            hint="which thread applies the metadata log on a KRaft broker?",
        )
    if got == "c":
        return incorrect(
            "the controller sends nothing: the brokers fetch the log.", hint="who fetches from whom in KRaft?"
        )
    return incorrect(
        "broker 1 keeps heartbeating: heartbeats do not queue behind produce requests either (they go to the "
        "controller, on the controller listener).",
        hint="a fence needs 9 s without a heartbeat; the run is 300 ms.",
    )


# -- 5. when does a broker act on a committed record (4.0) ---------------------------------------------------------
#: the numbers the prompt gives, from :func:`move_times` (tests/test_lab09.py checks them against the model)
HWM_PROMPT_NUMBERS = {"decided": 2.1, "linger": 25, "committed": 27.1, "appended": 27.1, "next_decided": 121.0}


@exercise(
    "09.hwm",
    solution=146.1,
    wrong=[27.1, 121.0, 2.1, 527.1, 29.1],
    prompt="The same run. The controller decides orders-0's move at 2.1 ms; the batch is appended 25 ms later "
    "(controller.quorum.append.linger.ms) and committed at 27.1 ms. The brokers' fetches were parked at the leader, "
    "waiting for new records; they returned with the batch at 27.1 ms, before it was committed, and fetched again. "
    "In 4.0 a parked fetch returns when the leader's log grows, or after 500 ms: the high watermark moving does not "
    "return it, and a broker applies only records below the high watermark it was told. The controller's next "
    "record, a NoOpRecord, is decided at 121.0 ms. At about what time (ms) does broker 2 become orders-0's leader?",
    explanation="The commit is at 27.1 ms, but no broker knows it: their fetches are parked again until the log "
    "grows. The next record is decided at 121.0 ms and appended 25 ms later, at 146.0 ms; the parked fetches return "
    "with it and with the new high watermark, and the brokers apply orders-0's move at once: 146.1 ms.",
)
def _(answer):
    t = move_times()
    truth = t["acted"][2]
    secs = number_in(answer, SECONDS)
    if secs is not None:
        close = abs(secs * 1000 - truth) <= 3
        return incorrect(
            "the question asks milliseconds" + (f": {secs:g} s is the right time." if close else "."),
            hint="1 s = 1000 ms.",
        )
    got = _ms(answer)
    if got is None:
        return incorrect(f"{_shown(answer)} is not a number of ms.", hint="answer with a number, like 50.")
    if _in_s(answer) or (0 < got < 1 and abs(got * 1000 - truth) <= 3):
        return incorrect(
            f"{got:g} s is the right time in seconds; the question asks milliseconds.", hint="1 s = 1000 ms."
        )
    if abs(got - truth) <= 3:
        return correct(
            f"broker 2 became leader at {truth:.1f} ms, {truth - t['decided']:.0f} ms after the decision: the commit "
            f"at {t['committed']:.1f} ms reached the brokers only with the next record, appended at "
            f"{t['next_appended']:.1f} ms. With a NoOpRecord every 500 ms, busy or idle, a change waits at most about "
            "half a second (and the linger) in 4.0. KAFKA-14145 (KIP-1166, merged in 2025, after 4.0) makes the leader return "
            "parked fetches when the high watermark moves."
        )
    if abs(got - t["committed"]) <= 3:
        return incorrect(
            "that is when the record was committed; a broker learns of a commit only from a fetch response.",
            hint="when does the brokers' next fetch response come back?",
        )
    if abs(got - t["next_decided"]) <= 3:
        return incorrect(
            "the next record is decided then, but it reaches the log only after the linger.",
            hint="controller.quorum.append.linger.ms applies to every batch.",
        )
    if abs(got - t["decided"]) <= 3 or got < t["committed"]:
        return incorrect(
            "a broker never applies a record before it is committed.",
            hint="committed is not enough either: the broker must be told.",
        )
    if 400 < got <= 600:
        return incorrect(
            "that is the 500 ms bound of a parked fetch; here something returns the fetch earlier.",
            hint="what makes the leader's log grow before then?",
        )
    if got > 600:
        return incorrect(
            f"{got:g} ms is far too late: the run itself lasts 300 ms.",
            hint="follow the next record: decided, appended after the linger, fetched.",
        )
    return incorrect(
        f"{got:g} ms is not what the model gives.",
        hint="follow the next record: decided, appended after the linger, fetched.",
    )


# -- 6. fencing a silent broker ------------------------------------------------------------------------------------
#: the numbers the prompt gives, from :func:`fencing_run` (tests/test_lab09.py checks them against the model)
FENCE_PROMPT_NUMBERS = {"fault_s": 5.0, "pause_s": 15, "last_contact_s": 3.23}


@exercise(
    "09.fenced_at",
    solution=12.23,
    wrong=[14.0, 7.0, 5.0, 20.0, 11.23, 12232],
    prompt="Broker 2 pauses (a long GC) at 5.0 s, for 15 s. Its heartbeats go every 2 s; the last one the controller "
    "handled reached it at 3.23 s. broker.session.timeout.ms is 9000. At what time (s) does the controller fence "
    "broker 2?",
    explanation="The session counts from the last heartbeat the controller handled, not from the pause: "
    "3.23 s + 9 s = 12.23 s, 7.23 s into the pause. The controller fences the broker in one event: its ISRs "
    "shrink, its leaderships move, and a BrokerRegistrationChangeRecord says Fenced.",
)
def _(answer):
    r = fencing_run()
    truth = r.fenced_ms / 1000
    got = seconds(answer)
    if got is None:
        return incorrect(f"{_shown(answer)} is not a number of seconds.", hint="answer with a number, like 10.")
    if _in_ms(answer):
        close = abs(got - r.fenced_ms) <= 100
        return incorrect(
            "the question asks seconds" + (f": {got / 1000:.2f} s is the right time." if close else "."),
            hint="1 s = 1000 ms.",
        )
    if abs(got - truth) <= 0.1:
        return correct(
            f"fenced at {truth:.2f} s: {r.fenced_after_ms / 1000:.2f} s after the last contact, "
            f"{(r.fenced_ms - r.fault_ms) / 1000:.2f} s into the pause. A pause shorter than that is never noticed."
        )
    if abs(got - (r.fault_ms / 1000 + 9)) <= 0.1:
        return incorrect(
            "that counts the session from the pause; the controller does not know when a broker paused.",
            hint="what does the controller know? When it last heard from the broker.",
        )
    if got > 1000 and abs(got - r.fenced_ms) <= 100:
        return incorrect("the question asks seconds.", hint="1 s = 1000 ms.")
    if got < r.fault_ms / 1000 + 1:
        return incorrect(
            "too early: the controller waits the whole session timeout after the last heartbeat it handled.",
            hint=f"broker.session.timeout.ms = {CONFIG.broker_session_timeout_ms}.",
        )
    if got >= (r.fault_ms + r.pause_ms) / 1000:
        return incorrect(
            "by then the broker is awake again: the controller fences it during the pause.",
            hint="add the session timeout to the last contact.",
        )
    return incorrect(f"{got:g} s is not what the model gives.", hint="last contact + broker.session.timeout.ms.")

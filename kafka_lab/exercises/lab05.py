"""Lab 05's guided exercises: acks=1 records acknowledged by the old leader, then truncated.

Each check runs :func:`kafka_lab.sim.truncation_incident` (or, for acks=all, :func:`purgatory_incident`)
with the lab's settings and seed, through :func:`kafka_lab.incident_stats.cached_run`.
"""

from __future__ import annotations

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import Choices, choice, number
from kafka_lab.exercises.lab04 import LOAD
from kafka_lab.incident_stats import (
    cached_run,
    duplicate_summary,
    incident_summary,
    truncated_acks,
    truncated_records,
)
from kafka_lab.sim import purgatory_incident, truncation_incident

__all__ = [
    "KIP",
    "LATE_MS",
    "DUPLICATES",
    "kip_run",
    "late_run",
    "acks_all_run",
    "strict_run",
    "acks_window",
    "duplicates_run",
]

#: the KIP's example: 20 partitions per produce request, all led by broker 1; 300 simulated ms
KIP = {**LOAD, "partitions": 20}
#: step 3's later move: the controller moves orders-0 at 10 ms (its LeaderAndIsr leaves at 12 ms), when broker 1 has
#: been acknowledging orders-0 records for a while and its followers' fetches wait in its queue
LATE_MS = 10.0


def kip_run(control_plane):
    """acks=1, the lab's main runs."""
    return cached_run(truncation_incident, control_plane=control_plane, **KIP)


def late_run(control_plane):
    """acks=1, the leader moved at :data:`LATE_MS` instead of 2 ms."""
    return cached_run(truncation_incident, control_plane=control_plane, decision_ms=LATE_MS, **KIP)


def acks_all_run():
    """The same incident with acks=all (lab 04's), no control plane, 150 simulated ms."""
    return cached_run(purgatory_incident, control_plane=False, until_ms=150, **KIP)


def strict_run():
    """acks=1 with min.insync.replicas=2, no control plane, 150 simulated ms."""
    return cached_run(truncation_incident, control_plane=False, min_insync_replicas=2, until_ms=150, **KIP)


#: step 6: lab 04's acks=all incident with 50 producers and request.timeout.ms=10 (300 simulated ms): requests the
#: producers give up on after orders-0 moves, and retry
DUPLICATES = {"producers": 50, "burst": 1, "rate_per_s": 20, "partitions": 20, "request_timeout_ms": 10}


def duplicates_run(enable_idempotence: bool):
    """acks=all, no control plane, :data:`DUPLICATES`, without or with the idempotent producer."""
    return cached_run(purgatory_incident, control_plane=False, enable_idempotence=enable_idempotence, **DUPLICATES)


def acks_window(res) -> dict:
    """The Produce requests broker 1 handled between the followers' LeaderAndIsr and its own: how many, how long."""
    s = incident_summary(res)
    start, end = s["lai_applied_ms"][2], s["lai_applied_ms"][1]
    r = res.requests
    p = r[
        (r["api"] == "Produce")
        & (r["broker_id"] == 1)
        & (r["api_local_complete_ms"] > start)
        & (r["api_local_complete_ms"] <= end)
    ]
    return {"start_ms": start, "end_ms": end, "requests": len(p), "mean_local_ms": float(p["localTime"].mean())}


WHICH_CHOICES = Choices(
    {
        "a": "every orders-0 record of the run, broker 2's own acknowledgements included",
        "b": "the orders-0 records broker 1 acknowledged that broker 2 never fetched",
        "c": "none: with acks=1 the followers fetch every record sooner or later",
        "d": "every record of all 20 partitions broker 1 handled after the decision",
    }
)


@exercise(
    "05.which_records",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="acks=1, no control plane. Which records does the incident lose (acknowledged, then truncated)? "
    + "; ".join(f"({k}) {v}" for k, v in WHICH_CHOICES.items()),
    explanation="The new leader's log is the truth. When broker 1 becomes a follower of broker 2, it truncates "
    "to where its log diverges from broker 2's (the end of leader epoch 0 on broker 2): everything "
    "it appended that broker 2 never fetched is gone, acknowledged or not.",
)
def _(answer):
    got = choice(answer, WHICH_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    acks = truncated_acks(kip_run(False))
    if got == "b":
        return correct(
            "the new leader's log is the truth: when broker 1 follows broker 2 it truncates to where their logs "
            "diverge, and whatever broker 2 never fetched goes, acknowledged or not. In the model, "
            f"{acks['records'].sum()} records in {len(acks)} batches, acknowledged by broker 1 between "
            f"{acks['done_ms'].min():.1f} and {acks['done_ms'].max():.1f} ms, are truncated when it follows "
            "broker 2. Nothing else is lost."
        )
    if got == "a":
        o0 = kip_run(False).ledger
        kept = int(o0[(o0["partition"] == 0) & (o0["outcome"] == "committed")]["records"].sum())
        return incorrect(
            f"broker 2's log is the truth from its election on: the {kept} orders-0 records it acknowledged "
            "as leader are committed. Only broker 1's old log is cut.",
            hint="which of broker 1's records are missing from the new leader's log?",
        )
    if got == "c":
        return incorrect(
            "the followers stopped fetching orders-0 from broker 1 when they applied their LeaderAndIsr; "
            "broker 1's later records are never fetched.",
            hint="who is the truth for orders-0 once broker 2 leads?",
        )
    return incorrect(
        "only orders-0 moves: the other 19 partitions keep their leader and their followers.",
        hint="which partition changes leader?",
    )


@exercise(
    "05.how_many",
    solution=1700,
    wrong=[0, 8110, 170, 34000, 16.6],
    prompt="No control plane, acks=1. Brokers 2 and 3 stop fetching orders-0 at 5.1 ms; broker 1 applies its "
    "LeaderAndIsr at 21.7 ms. Its 8 handlers take about 0.76 ms per Produce, and each Produce carries one "
    "10-record batch for orders-0. Estimate how many orders-0 records broker 1 acknowledges in that "
    "window, records that are then truncated.",
    explanation="(21.7 − 5.1) ms × 8 handlers / 0.76 ms ≈ 175 requests, × 10 records ≈ 1750; the model counts 1700.",
)
def _(answer):
    truth = truncated_records(kip_run(False), 0)
    w = acks_window(kip_run(False))
    got = number(answer)
    if got is None:
        return incorrect(f"{answer!r} is not a number of records.", hint="answer with a number, like 1234.")
    estimate = (w["end_ms"] - w["start_ms"]) * 8 / w["mean_local_ms"] * 10
    if abs(got - truth) <= 0.2 * truth:
        return correct(
            f"the ledger counts {truth} records ({w['requests']} requests of one 10-record batch) "
            f"acknowledged, then truncated; the estimate (end − start) × handlers / service time × 10 = "
            f"{estimate:.0f}. All of them had been acknowledged to their producers."
        )
    if got == 0:
        return incorrect(
            "with the control plane it would be 0; without it, broker 1 goes on acknowledging.",
            hint="how many Produce requests do 8 handlers finish in 16.6 ms at 0.76 ms each?",
        )
    if abs(got * 10 - truth) <= 0.2 * truth:
        return incorrect("that is the number of batches (requests); each carries 10 records.", hint="multiply by 10.")
    if abs(got / 20 - truth) <= 0.2 * truth:
        return incorrect(
            "only orders-0 moves; the other 19 partitions' records are replicated and kept.",
            hint="count only the orders-0 batch of each request.",
        )
    if got > 5 * truth:
        return incorrect(
            "that is more than broker 1's handlers can append in that window.",
            hint="8 handlers × 16.6 ms / 0.76 ms per request, one 10-record batch each.",
        )
    return incorrect(
        f"{got:g} is not within 20 % of what the model counts.",
        hint="(21.7 − 5.1) ms × 8 handlers / 0.76 ms per request, × 10 records per request.",
    )


COST_CHOICES = Choices(
    {
        "a": "nothing: they are acknowledged by broker 1 as before",
        "b": "NOT_LEADER_OR_FOLLOWER, then a retry at broker 2",
        "c": "REQUEST_TIMED_OUT, after request.timeout.ms (30 s)",
        "d": "broker 1 drops them without telling the producer",
    }
)


@exercise(
    "05.price",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="With control.plane.listener.name=CONTROLLER, broker 1 applies its LeaderAndIsr at 5.1 ms. What do "
    "the producers get for the orders-0 batches they go on sending to broker 1? "
    + "; ".join(f"({k}) {v}" for k, v in COST_CHOICES.items()),
    explanation="KIP-291: 'if we can change the behavior and process the LeaderAndISR request immediately, an "
    "error code corresponding to NotLeaderForPartition will be returned to the clients, causing the "
    "clients to retry and avoid the data loss.'",
)
def _(answer):
    got = choice(answer, COST_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    off, on = incident_summary(kip_run(False)), incident_summary(kip_run(True))
    if got == "b":
        return correct(
            "a follower answers a Produce with NOT_LEADER_OR_FOLLOWER; the producer refreshes its metadata and "
            "retries at broker 2 after retry.backoff.ms: the records arrive later, but they arrive. "
            f"In the model: {on['truncated_records']} records lost instead of {off['truncated_records']}, "
            f"{on['not_leader_answers']} NOT_LEADER_OR_FOLLOWER answers instead of "
            f"{off['not_leader_answers']}, and orders-0's mean batch latency {on['mean_latency_ms']:.0f} ms "
            f"instead of {off['mean_latency_ms']:.0f} ms. Latency for durability."
        )
    if got == "a":
        return incorrect(
            "a broker that has applied the LeaderAndIsr is a follower of orders-0: it cannot append.",
            hint="what does a follower answer to a Produce?",
        )
    if got == "c":
        return incorrect(
            "the answer comes at once, when a handler takes the request.",
            hint="what does a follower answer to a Produce?",
        )
    return incorrect(
        "Kafka never drops an acks=1 produce silently; it answers with an error.",
        hint="what does a follower answer to a Produce?",
    )


LATE_CHOICES = Choices(
    {
        "a": "none: the control plane closes the window, so every record is saved",
        "b": "those broker 1 acknowledged that its followers had not fetched when they stopped",
        "c": "as many as without the control plane: a late move is beyond its reach",
        "d": "those broker 1 acknowledged after it applied its own LeaderAndIsr",
    }
)


@exercise(
    "05.late_move",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="acks=1, the control plane on every broker, but the controller moves orders-0 at 10 ms (its "
    "LeaderAndIsr leaves at 12 ms), when broker 1 has been acknowledging orders-0 records since about 5.7 ms "
    "and its followers' fetches wait in its busy queue. Which records are acknowledged, then truncated? "
    + "; ".join(f"({k}) {v}" for k, v in LATE_CHOICES.items()),
    explanation="With acks=1 the leader acknowledges a record once it is in its own log, before any follower "
    "has it. The control plane makes the old leader stop when the followers stop fetching; it cannot make "
    "the new leader fetch what it had not fetched by then, and the old leader truncates that.",
)
def _(answer):
    got = choice(answer, LATE_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    on, off = incident_summary(late_run(True)), incident_summary(late_run(False))
    acks = truncated_acks(late_run(True))
    if got == "b":
        return correct(
            f"the control plane stops broker 1 at {on['lai_applied_ms'][1]:.1f} ms, when the followers stop "
            "fetching too, but with acks=1 it had acknowledged records before any follower had them. In the "
            f"model {on['truncated_records']} records are lost with the control plane (acknowledged between "
            f"{acks['done_ms'].min():.1f} and {acks['done_ms'].max():.1f} ms), {off['truncated_records']} "
            "without it."
        )
    if got == "a":
        return incorrect(
            "the control plane ends the window when the followers stop fetching; what broker 1 acknowledged "
            "before that and they had not fetched is still not on the new leader.",
            hint="when did the followers last fetch orders-0 from broker 1, and what did broker 1 acknowledge since?",
        )
    if got == "c":
        return incorrect(
            f"without the control plane broker 1 goes on acknowledging until {off['lai_applied_ms'][1]:.1f} ms; "
            f"with it, it stops at {on['lai_applied_ms'][1]:.1f} ms. The control plane still shortens the window.",
            hint="until when does broker 1 acknowledge orders-0 records, with and without the control plane?",
        )
    return incorrect(
        "once broker 1 has applied its LeaderAndIsr it is a follower: it refuses orders-0 produces "
        "(NOT_LEADER_OR_FOLLOWER) and acknowledges none.",
        hint="what were broker 1's followers doing before they stopped fetching?",
    )


@exercise(
    "05.acks_all",
    solution=0,
    wrong=[1700, 170, 8110],
    prompt="Same incident, no control plane, but acks=all (lab 04's). Broker 1's log still loses its unreplicated "
    "orders-0 records when it follows broker 2. How many records are acknowledged, then truncated?",
    explanation="With acks=all a record is acknowledged only once every in-sync replica has it, and the followers "
    "had stopped fetching: none of the truncated records had been acknowledged. Log truncation is "
    "data loss only for records someone was told were written.",
)
def _(answer):
    res = acks_all_run()
    lost = truncated_records(res)
    removed = int(
        res.events.loc[res.events["event"] == "truncated", "detail"].map(lambda d: d.get("removed_records", 0)).sum()
    )
    got = number(answer)
    if got is None:
        return incorrect(f"{answer!r} is not a number of records.", hint="answer with a number, like 1234.")
    if got == lost:
        return correct(
            f"{lost}: broker 1's log drops {removed} orders-0 records when it follows broker 2, but none of "
            "them had been acknowledged (they were parked in purgatory, then answered "
            "NOT_LEADER_OR_FOLLOWER, and the producers retried them at broker 2)."
        )
    if got == removed:
        return incorrect(
            f"{removed} records do leave broker 1's log, but were they ever acknowledged?",
            hint="when does an acks=all produce get its acknowledgement?",
        )
    return incorrect(
        f"{got:g} is not what the ledger counts.",
        hint="an acks=all record is acknowledged only when every in-sync replica has it.",
    )


@exercise(
    "05.min_insync",
    solution=1700,
    wrong=[0, 850],
    prompt="acks=1, no control plane, but the topic has min.insync.replicas=2. How many records are "
    "acknowledged, then truncated?",
    explanation="min.insync.replicas is checked only for acks=all produces: acks=1 is acknowledged by the "
    "leader alone, whatever the ISR.",
)
def _(answer):
    strict, base = truncated_records(strict_run()), truncated_records(kip_run(False))
    got = number(answer)
    if got is None:
        return incorrect(f"{answer!r} is not a number of records.", hint="answer with a number, like 1234.")
    if got == strict:
        return correct(
            f"{strict}, as with min.insync.replicas=1 ({base}): the setting applies to acks=all only. To "
            "make a write wait for the followers, the producer must ask for it (acks=all)."
        )
    if got == 0:
        return incorrect(
            "min.insync.replicas does not protect acks=1 writes.",
            hint="for which acks setting does the leader check min.insync.replicas?",
        )
    return incorrect(
        f"{got:g} is not what the ledger counts.", hint="does min.insync.replicas change anything for acks=1?"
    )


DUPLICATE_CHOICES = Choices(
    {
        "a": "every record once: with acks=all nothing is written that the producer was not told about",
        "b": "some records twice: a request broker 2 had read is appended, and its retry appends it again",
        "c": "fewer records: what the producer gave up on is lost",
        "d": "every record once: a request that timed out is never retried",
    }
)


@exercise(
    "05.duplicates",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="acks=all, no control plane, 50 producers, request.timeout.ms=10, enable.idempotence=false (2.8's "
    "default). After orders-0 moves, each producer sends its waiting orders-0 batches to broker 2 at once, up to "
    "five requests on its one connection; broker 2 reads one request per connection at a time, and each waits "
    "for the followers. A producer that has waited 10 ms for an answer closes the connection and retries every "
    "batch of every request in flight on it. What do the leaders' logs hold at the end? "
    + "; ".join(f"({k}) {v}" for k, v in DUPLICATE_CHOICES.items()),
    explanation="Closing the connection does not undo what the broker has already read: it appends the request and "
    "answers into the closed socket. The producer cannot know, and its retry (NETWORK_EXCEPTION is retriable) "
    "appends the same batch a second time. Kafka's answer is enable.idempotence.",
)
def _(answer):
    got = choice(answer, DUPLICATE_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    plain, idem = duplicate_summary(duplicates_run(False)), duplicate_summary(duplicates_run(True))
    if got == "b":
        return correct(
            f"in the model {plain['duplicate_records']} records ({plain['duplicate_batches']} batches, all of "
            f"{', '.join(plain['duplicate_partitions'])}) are in broker 2's log twice: the broker appended the "
            "request it had read, answered into a closed socket, and the retry appended it again. With "
            f"enable.idempotence=true: {idem['duplicate_records']}."
        )
    if got == "a":
        return incorrect(
            "acks=all decides when the producer hears 'written', not whether the broker appends: broker 2 appends "
            "what it reads, whether or not the producer is still listening.",
            hint="what happens to a request broker 2 has already read when the producer closes the connection?",
        )
    if got == "c":
        return incorrect(
            "the producer retries NETWORK_EXCEPTION (retries is 2147483647, delivery.timeout.ms 120 s): nothing "
            "it gave up on is lost.",
            hint="is a request the producer gave up on retried?",
        )
    return incorrect(
        "a request that times out closes the connection, and every batch in flight on it fails NETWORK_EXCEPTION, "
        "a retriable error: each is retried.",
        hint="what does the producer do with a batch that failed NETWORK_EXCEPTION?",
    )

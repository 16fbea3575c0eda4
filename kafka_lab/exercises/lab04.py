"""Lab 04's guided exercises: acks=all produces in purgatory while a LeaderAndIsr waits.

Each check runs :func:`kafka_lab.sim.purgatory_incident` with the lab's settings and seed (through
:func:`kafka_lab.incident_stats.cached_run`, so the lab and its checks share runs) and grades the
answer against what the model measures.
"""

from __future__ import annotations

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import Choices, choice, number
from kafka_lab.incident_stats import (
    cached_run,
    incident_summary,
    leader_and_isr_wait_ms,
    metric_peak,
    queue_ahead,
)
from kafka_lab.sim import purgatory_incident

__all__ = ["LOAD", "HANDLERS", "one_partition", "parked_produces", "twenty_partitions"]

#: the lab's load: 200 producers (one connection each) hand over one batch at t=0, then 20 per second each
LOAD = {"producers": 200, "burst": 1, "rate_per_s": 20}
HANDLERS = 8  # num.io.threads, Kafka's default


def one_partition(control_plane, **extra):
    """The lab's first run: ``orders`` has one partition, led by busy broker 1."""
    return cached_run(purgatory_incident, control_plane=control_plane, partitions=1, **LOAD, **extra)


def twenty_partitions(control_plane):
    """The KIP's example: each produce request carries 20 partitions, all led by broker 1 (150 simulated ms)."""
    return cached_run(purgatory_incident, control_plane=control_plane, partitions=20, until_ms=150, **LOAD)


def parked_produces(res, broker_id: int = 1):
    """Broker ``broker_id``'s Produce requests that waited in purgatory (remoteTime > 0)."""
    r = res.requests
    return r[(r["api"] == "Produce") & (r["broker_id"] == broker_id) & (r["remoteTime"] > 0)]


END_CHOICES = Choices(
    {
        "a": "the high watermark reaches its offset, and the produce succeeds",
        "b": "broker 1 handles its LeaderAndIsr and answers NOT_LEADER_OR_FOLLOWER",
        "c": "request.timeout.ms (30 s) passes: the produce gets REQUEST_TIMED_OUT",
        "d": "the ISR shrinks to broker 1 alone, and the produce succeeds",
    }
)


@exercise(
    "04.what_ends_the_wait",
    solution="b",
    wrong=["a", "c", "d", "e"],
    prompt="Brokers 2 and 3 have applied their LeaderAndIsr and stopped fetching orders-0 from broker 1. "
    "Broker 1 has appended an acks=all produce to orders-0 and parked it in purgatory. Without the "
    "control plane, what ends its wait? " + "; ".join(f"({k}) {v}" for k, v in END_CHOICES.items()),
    explanation="KIP-291: 'the produce requests will still be pending in the purgatory until the LeaderAndISR "
    "request is processed to mark partition0 as no longer being the leader, or the produce request "
    "time out is triggered'. The LeaderAndIsr comes first: it waits milliseconds, the timeout is 30 s.",
)
def _(answer):
    got = choice(answer, END_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    res = one_partition(False)
    parked = parked_produces(res)
    applied = incident_summary(res)["lai_applied_ms"][1]
    if got == "b":
        return correct(
            f"in the model all {len(parked)} produces broker 1 parked for orders-0 are answered "
            f"{parked['error'].iloc[0]} at {applied:.1f} ms, the moment broker 1 applies its LeaderAndIsr "
            "(ReplicaManager.makeFollowers completes the delayed produces). The producer then refreshes "
            "its metadata and retries at the new leader."
        )
    if got == "a":
        return incorrect(
            "the followers that could advance the high watermark have stopped fetching orders-0 "
            "from broker 1: they now follow broker 2.",
            hint="which request tells broker 1 that it is no longer the leader?",
        )
    if got == "c":
        return incorrect(
            "the timeout would end it, but only after 30 s; something else comes much sooner.",
            hint="the controller has already sent broker 1 a request about orders-0.",
        )
    return incorrect(
        "the ISR shrinks only after replica.lag.time.max.ms (30 s in 2.8) without the followers "
        "catching up, and through the controller (AlterIsr): far too slow to matter here.",
        hint="which request tells broker 1 that it is no longer the leader?",
    )


def lai_wait_truth() -> dict:
    res = one_partition(False)
    ahead = queue_ahead(res, 1)
    return {"wait": leader_and_isr_wait_ms(res, 1), **ahead}


@exercise(
    "04.lai_wait",
    solution=11,
    wrong=[0, 0.011, 90, 24, 1],
    prompt="When broker 1's LeaderAndIsr is put in its request queue (at about 4 ms), 191 requests are "
    "ahead of it (171 Produce, 20 Metadata), taking 0.47 ms of a handler each on average, and broker 1 "
    f"has {HANDLERS} request handler threads. No control plane. Estimate how many ms the LeaderAndIsr "
    "waits before a handler takes it.",
    explanation="Lab 03's rule: backlog × service time / handlers = 191 × 0.47 ms / 8 ≈ 11 ms.",
)
def _(answer):
    t = lai_wait_truth()
    got = number(answer)
    if got is None:
        return incorrect(f"{answer!r} is not a number of milliseconds.", hint="answer with a number, like 12.5.")
    estimate = t["requests"] * t["mean_local_ms"] / HANDLERS
    # an estimate: within 20 % of what the model measures (service times are random, so is the wait)
    if abs(got - t["wait"]) <= 0.2 * t["wait"]:
        return correct(
            f"the model measures {t['wait']:.2f} ms; backlog × service time / handlers = "
            f"{t['requests']} × {t['mean_local_ms']:.2f} / {HANDLERS} = {estimate:.1f} ms. Every orders-0 "
            "produce broker 1 appends in that time waits in purgatory until it is over."
        )
    if got <= 0.1:
        return incorrect(
            "that would be true with the control plane: its own queue and handler.",
            hint="without control.plane.listener.name the LeaderAndIsr queues behind the data requests.",
        )
    if abs(got * 1000 - t["wait"]) <= 0.2 * t["wait"]:
        return incorrect(
            f"{got:g} is the right number of seconds, but the answer is asked in milliseconds.", hint="1 s = 1000 ms."
        )
    if abs(got - t["requests"] * t["mean_local_ms"]) <= 0.2 * t["requests"] * t["mean_local_ms"]:
        return incorrect("that is the time one handler would need.", hint=f"{HANDLERS} handlers work in parallel.")
    if abs(got - t["requests"] / HANDLERS) <= 2:
        return incorrect(
            "that is 191 / 8 rounds of 1 ms; here a request takes about 0.47 ms, not 1.",
            hint="backlog × service time / handlers.",
        )
    return incorrect(
        f"{got:g} ms is not within 20 % of what the model measures.", hint="lab 03: backlog × service time / handlers."
    )


TWENTY_CHOICES = Choices(
    {
        "a": "yes: broker 1's PurgatorySize stays near 0, as with one partition",
        "b": "half way: the orders-0 entries go, the other entries stay",
        "c": "hardly: the produces still wait for their other 19 partitions",
        "d": "no: it grows until request.timeout.ms expires the produces",
    }
)


def twenty_truth() -> dict:
    off, on = twenty_partitions(False), twenty_partitions(True)
    return {
        "peak_off": metric_peak(off, "PurgatorySize", 1),
        "peak_on": metric_peak(on, "PurgatorySize", 1),
        "ops_off": metric_peak(off, "NumDelayedOperations", 1),
        "ops_on": metric_peak(on, "NumDelayedOperations", 1),
    }


@exercise(
    "04.twenty_partitions",
    solution="c",
    wrong=["a", "b", "d"],
    prompt="Now the KIP's example: every produce request carries 20 partitions of orders, all led by broker 1, "
    "and only orders-0 moves. Does the control plane still keep broker 1's purgatory nearly empty? "
    + "; ".join(f"({k}) {v}" for k, v in TWENTY_CHOICES.items()),
    explanation="A delayed produce completes when every partition is done. The other 19 wait for the "
    "followers, and the followers' Fetch requests wait in broker 1's request queue behind the same "
    "backlog as the LeaderAndIsr: replication finishes about when the LeaderAndIsr would have.",
)
def _(answer):
    got = choice(answer, TWENTY_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    t = twenty_truth()
    if got == "c":
        return correct(
            "a delayed produce completes only when all its partitions are done, and the other 19 wait for the "
            "followers, whose fetches queue behind the same backlog as the LeaderAndIsr. "
            f"Peak PurgatorySize {t['peak_off']:.0f} without and {t['peak_on']:.0f} with the control "
            f"plane; at most {t['ops_off']:.0f} and {t['ops_on']:.0f} delayed operations (PurgatorySize counts "
            "watch entries, and a completed operation's entries stay until a check of their partition or the "
            "purge drops them, so it can exceed 20 per parked request)."
        )
    if got == "a":
        return incorrect(
            "with one partition, refusing orders-0 left nothing to wait for; here each request has "
            "19 more partitions that must reach the followers first.",
            hint="how do the followers fetch the other 19 partitions from busy broker 1?",
        )
    if got == "b":
        return incorrect(
            "orders-0 is one watch entry in 20 per request, and a request leaves purgatory only "
            "when all of its partitions are done.",
            hint="when do the other 19 partitions reach the followers?",
        )
    return incorrect(
        "the purgatory empties within tens of ms, far from the 30 s timeout.",
        hint="the followers fetch through broker 1's request queue: when do their fetches get served?",
    )


ISR_CHOICES = Choices(
    {
        "a": "it is refused at once with NOT_ENOUGH_REPLICAS",
        "b": "it is appended and parked in purgatory, as before",
        "c": "it is appended, then answered NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "d": "it waits in purgatory until request.timeout.ms expires it",
    }
)


@exercise(
    "04.min_insync",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="Same one-partition incident, no control plane, but min.insync.replicas=3 (acks=all). Brokers 2 "
    "and 3 have stopped fetching orders-0 from broker 1. What happens to a produce broker 1 handles at "
    "8 ms? " + "; ".join(f"({k}) {v}" for k, v in ISR_CHOICES.items()),
    explanation="min.insync.replicas is checked against the ISR, and the ISR changes only when the leader "
    "shrinks it after replica.lag.time.max.ms (30 s in 2.8). For those 30 s the leader cannot tell "
    "a slow follower from one that has left.",
)
def _(answer):
    got = choice(answer, ISR_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    base, strict = one_partition(False), one_partition(False, min_insync_replicas=3)
    same = base.metrics.equals(strict.metrics) and base.ledger.equals(strict.ledger)
    errors = set(strict.ledger["error"])
    if got == "b":
        return correct(
            f"the model's run with min.insync.replicas=3 is {'identical to' if same else 'unlike'} the one "
            f"with 1 (errors seen: {', '.join(sorted(e for e in errors if e)) or 'none'}): the ISR is "
            "still {1, 2, 3}, so nothing is refused and the produce waits for the LeaderAndIsr. The ISR "
            "changes only when the leader shrinks it, after replica.lag.time.max.ms (30 s) without the "
            "followers catching up."
        )
    if got in ("a", "c"):
        return incorrect(
            "broker 1 checks min.insync.replicas against the ISR, and the ISR has not changed.",
            hint="what removes a follower from the ISR, and after how long (replica.lag.time.max.ms)?",
        )
    return incorrect(
        "the LeaderAndIsr still ends the wait, long before 30 s.",
        hint="does min.insync.replicas change anything while the ISR is {1, 2, 3}?",
    )

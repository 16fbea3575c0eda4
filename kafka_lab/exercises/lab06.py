"""Lab 06's guided exercises: stale metadata on a busy broker, and a leader change half-way through the migration.

Each check runs :func:`kafka_lab.sim.stale_metadata_incident` or :func:`kafka_lab.sim.unavailability_incident`
with the lab's settings and seed, through :func:`kafka_lab.incident_stats.cached_run`.
"""

from __future__ import annotations

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import Choices, choice
from kafka_lab.exercises.lab04 import LOAD
from kafka_lab.incident_stats import cached_run, controller_requests, incident_summary
from kafka_lab.sim import stale_metadata_incident, unavailability_incident

__all__ = ["RUNS", "MOVES", "stale_run", "unavailable_run", "metadata_answers_between"]

#: the lab's runs: the KIP's 20 partitions, 150 simulated ms (the leader moves: 60 ms, all they need)
RUNS = {**LOAD, "partitions": 20, "until_ms": 150}
MOVES = {**RUNS, "until_ms": 60}


def stale_run(control_plane, producers: int = 200):
    """The producers ask busy broker 1, the old leader, for metadata."""
    return cached_run(stale_metadata_incident, control_plane=control_plane, **{**RUNS, "producers": producers})


def unavailable_run(control_plane):
    """Busy broker 2 is the new leader (KIP-291 case 1.2); 60 simulated ms."""
    return cached_run(unavailability_incident, control_plane=control_plane, **MOVES)


def metadata_answers_between(res, broker_id: int, start_ms: float, end_ms: float, clients: str = "") -> int:
    """How many Metadata requests ``broker_id`` answered in (start_ms, end_ms), from clients whose id starts
    with ``clients`` (``"producer-"``; the incident's other clients are ``"admin-"``; ``""``: every client)."""
    r = res.requests
    return int(
        (
            (r["api"] == "Metadata")
            & (r["broker_id"] == broker_id)
            & r["client_id"].str.startswith(clients)
            & (r["api_local_complete_ms"] > start_ms)
            & (r["api_local_complete_ms"] < end_ms)
        ).sum()
    )


def _broker1(res) -> dict:
    c = controller_requests(res)
    c = c[c["broker_id"] == 1].set_index("api")
    return {api: c.loc[api] for api in ("LeaderAndIsr", "UpdateMetadata")}


LONGER_CHOICES = Choices(
    {
        "a": "0: the UpdateMetadata is applied as soon as it arrives",
        "b": "about the LeaderAndIsr's wait: the two wait side by side",
        "c": "longer: it waits its own turn, after the LeaderAndIsr",
        "d": "until metadata.max.age.ms (5 minutes) expires broker 1's cache",
    }
)


@exercise(
    "06.why_longer",
    solution="c",
    wrong=["a", "b", "d"],
    prompt="No control plane. Broker 1's LeaderAndIsr waits 16.8 ms behind its backlog. How long does broker 1's "
    "metadata cache still name itself leader of orders-0, counted from the controller's decision (at 4 ms: "
    "its ZooKeeper write done, its LeaderAndIsr sent)? " + "; ".join(f"({k}) {v}" for k, v in LONGER_CHOICES.items()),
    explanation="The controller keeps one request in flight per broker (its RequestSendThread): the "
    "UpdateMetadata leaves only when the LeaderAndIsr is answered, then it waits in the same queue.",
)
def _(answer):
    got = choice(answer, LONGER_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    res = stale_run(False)
    b1, stale = _broker1(res), incident_summary(res)["stale_ms"][1]
    if got == "c":
        return correct(
            "the controller keeps one request in flight per broker, so the UpdateMetadata leaves only when "
            "broker 1 has answered the LeaderAndIsr, and then it queues behind the backlog again. "
            f"In the model the LeaderAndIsr waits {b1['LeaderAndIsr']['waited_ms']:.1f} ms and is applied at "
            f"{b1['LeaderAndIsr']['applied_ms']:.1f} ms; the UpdateMetadata leaves at "
            f"{b1['UpdateMetadata']['sent_ms']:.1f} ms, waits {b1['UpdateMetadata']['waited_ms']:.1f} ms "
            f"more, and broker 1's cache is stale for {stale:.1f} ms in all."
        )
    if got == "a":
        return incorrect(
            "the UpdateMetadata is a request like the others: without the control plane it queues.",
            hint="when does the controller send it, and where does it wait?",
        )
    if got == "b":
        return incorrect(
            "the controller does not send them together.",
            hint="how many requests does the controller keep in flight to one broker?",
        )
    return incorrect(
        "metadata.max.age.ms is the clients' refresh interval; a broker's cache changes only on UpdateMetadata.",
        hint="when does the UpdateMetadata reach broker 1, and how long does it wait?",
    )


REFRESH_CHOICES = Choices(
    {
        "a": "they ask another broker, whose cache is already fresh",
        "b": "retry.backoff.ms: too soon after their last refresh",
        "c": "the NOT_LEADER_OR_FOLLOWER answer names the new leader",
        "d": "they do get stale metadata, and send to broker 1 again",
    }
)


@exercise(
    "06.refresh",
    solution="b",
    wrong=["a", "c", "d"],
    prompt="No control plane. Producers get NOT_LEADER_OR_FOLLOWER from broker 1 from 21.8 ms on, and each then "
    "wants fresh metadata from broker 1, whose cache is stale until 32.6 ms. Why does none of the refreshes "
    "these errors trigger get a stale answer? " + "; ".join(f"({k}) {v}" for k, v in REFRESH_CHOICES.items()),
    explanation="Kafka 2.8's Metadata.timeToNextUpdate: an update requested after an error may go out only "
    "retry.backoff.ms after the last refresh. The produce response carries no leader in 2.8 "
    "(KIP-951 added that in 3.7).",
)
def _(answer):
    got = choice(answer, REFRESH_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    res = stale_run(False)
    b1 = _broker1(res)
    window = (b1["LeaderAndIsr"]["applied_ms"], b1["UpdateMetadata"]["applied_ms"])
    n = metadata_answers_between(res, 1, *window, clients="producer-")
    others = metadata_answers_between(res, 1, *window, clients="admin-")
    if got == "b":
        r = res.requests
        m = r[(r["api"] == "Metadata") & r["client_id"].str.startswith("producer-")].sort_values("sent_ms")
        first, second = m.groupby("client_id")["end_ms"].min(), m.groupby("client_id").nth(1)["sent_ms"]
        return correct(
            f"each producer's last refresh was its first Metadata request, answered by {first.max():.1f} ms; "
            f"the next may leave only retry.backoff.ms (100 ms) later: the first goes at {second.min():.1f} ms. "
            f"Between {window[0]:.1f} and {window[1]:.1f} ms broker 1 answers {n} Metadata requests from "
            "producers. The incident's 20 other "
            f"clients, which ask every 5 ms, get {others} stale answers in that window: stale metadata hurts the "
            "clients that ask inside it."
        )
    if got == "a":
        return incorrect(
            "in this incident the producers ask broker 1 (the incident pins them to it).",
            hint="when may a producer send its next Metadata request?",
        )
    if got == "c":
        return incorrect(
            "in Kafka 2.8 a produce response carries no leader (KIP-951 added it in 3.7).",
            hint="when may a producer send its next Metadata request?",
        )
    return incorrect(
        f"the model counts {n} Metadata answers from broker 1 to producers in that window.",
        hint="when may a producer send its next Metadata request (retry.backoff.ms)?",
    )


HALF_CHOICES = Choices(
    {
        "a": "shorter: broker 1 resigns sooner",
        "b": "the same: the control plane on broker 1 changes nothing for broker 2",
        "c": "longer: broker 1 resigns at once, broker 2 takes over late",
        "d": "0: one control plane is enough",
    }
)


@exercise(
    "06.half_migrated",
    solution="c",
    wrong=["a", "b", "d"],
    prompt="KIP-291 case 1.2: busy broker 2 is the new leader of orders-0; broker 1 (the old leader, and the "
    "controller's broker) is busy too, a little less. Without any control plane orders-0 has no leader for 3.1 ms. "
    "With control.plane.listener.name set on broker 1 only (half-way through the migration), is orders-0 "
    "without a leader for longer or shorter? " + "; ".join(f"({k}) {v}" for k, v in HALF_CHOICES.items()),
    explanation="No leader = from the old leader resigning to the new one taking over. The controller's broker "
    "names CONTROLLER, so the controller sends on it everywhere; broker 1 serves it on its control plane and "
    "resigns at once, broker 2 (which does not name it) on its data plane, behind its backlog. Speeding up only "
    "the resignation widens the gap.",
)
def _(answer):
    got = choice(answer, HALF_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    none = incident_summary(unavailable_run(False))["unavailable_ms"]
    half_run = unavailable_run({1: True})
    half = incident_summary(half_run)["unavailable_ms"]
    route_2 = incident_summary(half_run)["lai_route"][2]
    if got == "c":
        return correct(
            f"{half:.1f} ms instead of {none:.1f} ms: broker 1 gives up leadership at 5.1 ms, broker 2 takes "
            "it only when its LeaderAndIsr gets through its own backlog. Half a migration can be worse "
            "than none."
        )
    if got == "a":
        return incorrect(
            "broker 1 does resign sooner, but that is when the gap starts, not when it ends.",
            hint="the gap runs from the old leader resigning to the new leader taking over.",
        )
    if got == "b":
        return incorrect(
            f"for broker 2 it changes the listener, not the wait: the controller, whose broker now names "
            f"CONTROLLER, sends broker 2's LeaderAndIsr on {route_2[0]}, which broker 2 serves on its "
            f"{route_2[1]} plane, behind the same backlog. It changes broker 1: {half:.1f} ms without a leader, "
            f"not {none:.1f}.",
            hint="which of the two moments does broker 1's setting move: the resignation or the take-over?",
        )
    return incorrect(
        f"broker 2 does not name CONTROLLER, so it serves the controller's requests on its data plane: the model "
        f"measures {half:.1f} ms with the control plane on broker 1, {none:.1f} ms without.",
        hint="the gap runs from the old leader resigning to the new leader taking over.",
    )


WHICH_CHOICES = Choices(
    {
        "a": "broker 1, the old leader (and the controller's broker)",
        "b": "broker 2, the new leader",
        "c": "brokers 1 and 2, both",
        "d": "all three: a control plane works only once every broker has it",
    }
)


@exercise(
    "06.which_brokers",
    solution="c",
    wrong=["a", "b", "d"],
    prompt="Same incident, the controller on broker 1. Which brokers need control.plane.listener.name for orders-0 "
    "to be neither without a leader nor with two leaders at any moment? "
    + "; ".join(f"({k}) {v}" for k, v in WHICH_CHOICES.items()),
    explanation="The new leader's LeaderAndIsr ends the leaderless gap; the old leader's ends the time with two "
    "leaders (and the acks=1 writes it would truncate). Both must skip their queues, and a broker's does only if "
    "the controller's broker names the control plane too: here that is broker 1, the old leader. Broker 3, idle, "
    "handles its LeaderAndIsr at once on either plane.",
)
def _(answer):
    got = choice(answer, WHICH_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    s = {
        k: incident_summary(unavailable_run(cp))
        for k, cp in (("1", {1: True}), ("2", {2: True}), ("both", {1: True, 2: True}), ("all", True))
    }
    if got == "c":
        return correct(
            f"only with both is it {s['both']['unavailable_ms']:.1f} ms without a leader and "
            f"{s['both']['two_leaders_ms']:.1f} ms with two. Broker 1 alone: {s['1']['unavailable_ms']:.1f} ms "
            "without a leader; broker 2 alone: exactly as with no control plane "
            f"({s['2']['unavailable_ms']:.1f} ms without a leader, {s['2']['truncated_records']} records truncated), "
            "because the controller's broker 1 does not name CONTROLLER and so never uses it."
        )
    if got == "a":
        return incorrect(
            f"then broker 2 still takes over late: {s['1']['unavailable_ms']:.1f} ms without a leader. The "
            "controller sends on CONTROLLER, but broker 2 serves it on its data plane.",
            hint="which broker's LeaderAndIsr ends the gap, and which one ends the time with two leaders?",
        )
    if got == "b":
        return incorrect(
            "with the controller on broker 1, broker 2's setting alone is never used: the controller picks the "
            "listener from its own broker's config, INTERNAL, which broker 2 serves on its data plane. "
            f"{s['2']['unavailable_ms']:.1f} ms without a leader and {s['2']['truncated_records']} records "
            "truncated, exactly as with no control plane.",
            hint="whose config picks the listener the controller connects to?",
        )
    return incorrect(
        f"broker 3 is not needed: with brokers 1 and 2 it is already {s['both']['unavailable_ms']:.1f} ms without a "
        f"leader and {s['both']['two_leaders_ms']:.1f} ms with two. Broker 3 takes the controller's requests on its "
        "data plane, and, idle, handles them at once. A half-migrated cluster works for every pair of the "
        "controller's broker and a broker that both have the setting.",
        hint="which brokers apply a LeaderAndIsr for orders-0 that matters here, and whose config picks the listener?",
    )

"""Lab 00's warm-up exercises: learn how a check answers, on three small facts about replication.

The truth comes from :func:`kafka_lab.replication.replication_budget`, the same function the lab's
panel shows, so what the panel says and what the check accepts cannot drift apart.
"""

from __future__ import annotations

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import BROKERS, REPLICAS, number_in, whole_number
from kafka_lab.replication import KIP36_BROKERS, replication_budget

#: KIP-36's worked example topic: 12 partitions, replication factor 3, on 6 brokers
_KIP36 = dict(partitions=12, replication_factor=3, brokers=KIP36_BROKERS)


_NOT_A_NUMBER = "answer with a whole number, for example answer_1 = 7 (no quotes needed)."


def _count(answer, units: tuple[str, ...]) -> int | None:
    """A whole number, bare (``36``, ``"36"``) or with the unit the question counts in (``"36 replicas"``), so
    that a wrong count with its unit ("12 replicas") gets the same feedback as the bare number."""
    n = whole_number(answer)
    if n is None:
        with_unit = number_in(answer, units)
        n = None if with_unit is None else whole_number(with_unit)
    return n


@exercise(
    "00.replicas",
    solution=36,
    wrong=[12, 15, 3, 24, "twelve", "12 replicas", "36 brokers"],
    prompt="A topic has 12 partitions with replication factor 3 (KIP-36's worked example). "
    "How many replicas does the cluster hold for it?",
    explanation="Each partition has replication-factor copies: one leader and RF - 1 followers, "
    "so 12 x 3 = 36 replicas.",
)
def _(answer):
    truth = replication_budget(**_KIP36).replicas
    n = _count(answer, REPLICAS)
    if n is None:
        return incorrect(f"{answer!r} is not a whole number of replicas.", hint=_NOT_A_NUMBER)
    if n == truth:
        return correct(
            f"{truth} replicas: each of the 12 partitions has one leader and two followers, each on a different broker."
        )
    if n == _KIP36["partitions"]:
        return incorrect(
            "12 is the number of partitions, and so the number of leaders.",
            hint="every partition also has followers: replication factor 3 means 3 copies of each.",
        )
    if n == _KIP36["partitions"] * (_KIP36["replication_factor"] - 1):
        return incorrect(
            f"{n} counts the followers only.",
            hint="the leader is a replica too: each partition has replication-factor copies in all.",
        )
    if n == _KIP36["partitions"] + _KIP36["replication_factor"]:
        return incorrect(
            "partitions and replication factor do not add up.",
            hint="each partition has 3 copies; how many copies do 12 partitions have?",
        )
    return incorrect(
        f"{n} is not it.", hint="each of the 12 partitions has replication factor 3 copies: count all the copies."
    )


@exercise(
    "00.per_broker",
    solution=6,
    wrong=[2, 4, 36, 12],
    prompt="Spread evenly over KIP-36's 6 brokers, how many of those replicas does each broker hold?",
    explanation="36 replicas / 6 brokers = 6 per broker (2 leaders and 4 followers each).",
)
def _(answer):
    b = replication_budget(**_KIP36)
    n = _count(answer, REPLICAS)
    if n is None:
        return incorrect(f"{answer!r} is not a whole number of replicas.", hint=_NOT_A_NUMBER)
    if n == b.replicas_per_broker:
        return correct(
            f"{b.replicas} replicas over {b.brokers} brokers is {n} each: "
            f"{b.leaders_per_broker:.0f} leaders and {n - b.leaders_per_broker:.0f} followers. "
            "A broker does work for every replica it holds, not only for its leaders."
        )
    if n == b.leaders_per_broker:
        return incorrect(
            f"{n} per broker counts the leaders only (12 partitions / 6 brokers).",
            hint="followers are replicas too: divide all the replicas by the brokers.",
        )
    if n == b.replicas_per_broker - b.leaders_per_broker:
        return incorrect(
            f"{n} per broker counts the followers only.",
            hint="a broker holds its leader replicas too: divide all the replicas by the brokers.",
        )
    if n == b.replicas:
        return incorrect(f"{n} is the whole cluster's count.", hint="share it out over the 6 brokers.")
    return incorrect(f"{n} is not it.", hint="divide the cluster's replicas (the previous exercise) by the brokers.")


@exercise(
    "00.acks_all_losses",
    solution=1,
    wrong=[2, 0, 3],
    prompt="With replication factor 3, min.insync.replicas=2 and acks=all: how many of a partition's "
    "brokers can fail while acks=all producers still get their writes accepted?",
    explanation="The ISR must keep at least min.insync.replicas = 2 members: 3 - 2 = 1 broker may fail. "
    "After 2 losses the one replica left still serves reads, but acks=all appends fail "
    "with NOT_ENOUGH_REPLICAS.",
)
def _(answer):
    b = replication_budget(partitions=1, replication_factor=3, min_insync_replicas=2)
    n = _count(answer, BROKERS)
    if n is None:
        return incorrect(f"{answer!r} is not a whole number of brokers.", hint=_NOT_A_NUMBER)
    if n == b.losses_writable:
        return correct(
            f"{n}: after one loss the ISR still has 2 members, enough for min.insync.replicas=2. "
            "After a second loss the leader refuses acks=all appends with NOT_ENOUGH_REPLICAS, "
            f"though the last replica still has all committed data ({b.losses_readable} losses "
            "before data is offline)."
        )
    if n == b.losses_readable:
        return incorrect(
            f"after {n} losses a single replica is left: the data is still there, but is that enough for acks=all?",
            hint="acks=all needs the ISR to have at least min.insync.replicas members.",
        )
    if n == 0:
        return incorrect(
            "one broker may fail: 2 replicas are then left, which is still min.insync.replicas.",
            hint="count the replicas left after one loss and compare with min.insync.replicas=2.",
        )
    return incorrect(
        f"a partition with 3 replicas cannot lose {n} brokers and keep accepting acks=all writes.",
        hint="replicas left = 3 - losses; writes need at least min.insync.replicas = 2 left.",
    )

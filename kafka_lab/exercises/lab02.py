"""Lab 02's guided exercises: predict KIP-36's assignment, explain the penalized broker, lose a rack.

Each check computes its truth with :mod:`kafka_lab.assignment` (Kafka-exact), on KIP-36's own
worked examples (docs/kafka-reference.md §1), so a check cannot drift from the model or from the KIP.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_lab import assignment as asg
from kafka_lab.assignment import KIP36_RACKS, UNEVEN_RACKS
from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import whole_numbers

FAILED_RACK = "rack1"
#: how a replica list is written, shown to the learner (lab 02's Exercise 1 and the checks' hint): made-up broker
#: ids, not in KIP-36's cluster (0 to 5), so that the example is no partition's assignment and gives nothing away
REPLICA_LIST_FORMAT = "[7, 8, 9]"


def _kip_assignment(partitions: int = 12, rf: int = 3):
    return asg.assign_replicas_to_brokers(asg.brokers_from_racks(KIP36_RACKS), partitions, rf, 0)


def _replica_list_mistake(got, truth, partition: int):
    """What is wrong with a wrong list of the right length, in the order a learner should fix it (or None)."""
    order = asg.rack_alternated_broker_list(KIP36_RACKS)
    unknown = [b for b in got if b not in KIP36_RACKS]
    if unknown:
        return incorrect(
            f"there is no broker {unknown[0]}: the brokers are 0 to 5.",
            hint="answer with broker ids, not positions in the list.",
        )
    if len(set(got)) < len(got):
        return incorrect(
            "a broker appears twice: Kafka never puts two replicas of a partition on one broker.",
            hint="each follower must be a broker the partition does not use yet.",
        )
    if got[0] != truth[0]:
        return incorrect(
            f"the leader is not {got[0]}: partition {partition}'s leader is position "
            f"{partition} % 6 = {partition % 6} of the rack-alternated list {order}.",
            hint="with start index 0, partition p's leader is list[p % 6].",
        )
    for i, b in enumerate(got):
        for c in got[:i]:
            if KIP36_RACKS[c] == KIP36_RACKS[b]:
                return incorrect(
                    f"brokers {c} and {b} are both on {KIP36_RACKS[b]}: with 3 replicas and 3 racks, "
                    "Kafka puts every replica on a rack of its own.",
                    hint="walking the list, skip a broker whose rack the partition already uses.",
                )
    if sorted(got) == sorted(truth):
        return incorrect(
            "the right brokers, in the wrong order.",
            hint="the leader comes first, then the followers in the order of the rack-alternated list.",
        )
    return None


def _check_replicas(answer, partition: int, *, why: str, known: dict, hint: str):
    """The two "which brokers hold partition p" checks: KIP-36's truth, ``known`` mistakes
    (``{replica tuple: verdict}``) first, then the general diagnosis, then ``hint``."""
    truth = _kip_assignment()[partition]
    if isinstance(answer, Mapping) and partition in answer:  # {partition: [replicas]}, e.g. a whole assignment
        answer = answer[partition]
    got = whole_numbers(answer)
    if got is None:
        return incorrect(
            f"{answer!r} is not a list of broker ids.",
            hint=f"answer like {REPLICA_LIST_FORMAT}: the leader first, then the followers.",
        )
    if got == truth:
        return correct(f"{truth}: {why}")
    if len(got) != len(truth):
        return incorrect(
            f"replication factor 3 means 3 brokers, you gave {len(got)}.", hint="list the leader and both followers."
        )
    return (
        known.get(tuple(got))
        or _replica_list_mistake(got, truth, partition)
        or incorrect(f"{got} is not Kafka's choice.", hint=hint)
    )


@exercise(
    "02.partition0",
    solution=[0, 3, 1],
    wrong=[[0, 1, 2], [0, 5, 3], [0, 3], [0, 1, 3], "0, 3"],
    prompt="KIP-36's cluster (0 -> rack1, 1 -> rack3, 2 -> rack3, 3 -> rack2, 4 -> rack2, 5 -> rack1), "
    "12 partitions, replication factor 3, start index 0. Which brokers hold partition 0, leader first?",
    explanation="The rack-alternated list is 0, 3, 1, 5, 4, 2. Partition 0's leader is position 0 (broker 0); "
    "its followers are the next brokers in the list, on racks not used yet: 3 (rack2), 1 (rack3).",
)
def _(answer):
    unaware = incorrect(
        "that is the rack-unaware answer (broker ids in order): brokers 1 and 2 share rack3.",
        hint="build the rack-alternated list first: one broker from rack1, rack2, rack3, then again.",
    )
    return _check_replicas(
        answer,
        0,
        known={(0, 1, 2): unaware},
        why=f"leader = first broker of the rack-alternated list {asg.rack_alternated_broker_list(KIP36_RACKS)}, "
        "followers = the next ones, each on a new rack.",
        hint="the rack-alternated list is the key: racks in sorted order, one broker from each in turn.",
    )


@exercise(
    "02.partition6",
    solution=[0, 4, 2],
    wrong=[[0, 3, 1], [0, 5, 4], [0, 2, 4], [0, 4], (3, 2, 0)],
    prompt="Same cluster and topic: partition 6 starts the second round of leaders, so its leader is "
    "broker 0 again. Which brokers hold partition 6, leader first?",
    explanation="From partition 6 on, nextReplicaShift is 1, and the first follower is shifted by "
    "1 x numRacks = 3 positions: positions 0 + 1 + (3 + k) % 5 give 4 (rack2) then 2 (rack3).",
)
def _(answer):
    kip = _kip_assignment()
    known = {
        tuple(kip[0]): incorrect(
            "that repeats partition 0. KIP-36: 'instead of repeating 0,3,1 as partition 0, "
            "as shift of 3 is added to the first follower'.",
            hint="after the first round the first follower moves 3 more places along the list.",
        ),
        tuple(kip[7]): incorrect("that is partition 7 (leader 3).", hint="partition 6's leader is broker 0 again."),
    }
    return _check_replicas(
        answer,
        6,
        known=known,
        why="the follower shift grew by the number of racks (3), so partition 6 does not repeat partition 0's set; "
        "that spreads each broker's followers over more brokers.",
        hint="the leader is 0; walk the list 0, 3, 1, 5, 4, 2 starting 1 + 3 places after it.",
    )


@exercise(
    "02.penalized",
    solution=[3, 2, 1],
    wrong=[[2, 2, 2], [1, 2, 3], [3, 1, 2], [1, 1, 1], 3],
    prompt="KIP-36's uneven example: 0 -> rack1, 1 -> rack2, 2 -> rack2; 3 partitions, replication factor 2, "
    "start index 0. How many replicas does each broker hold? Answer [broker 0, broker 1, broker 2].",
    explanation="The assignment is 0 -> (0,1), 1 -> (1,0), 2 -> (2,0). Partition 1's leader is broker 1 "
    "(rack2): the next broker, 2, is in rack2 too, so Kafka skips to broker 0. Partition 2's leader is broker 2 "
    "(rack2), and the next broker is already broker 0. Broker 0, alone in rack1, gets 3 replicas.",
)
def _(answer):
    brokers = asg.brokers_from_racks(UNEVEN_RACKS)
    a = asg.assign_replicas_to_brokers(brokers, 3, 2, 0)
    balance = asg.broker_balance(a, brokers)
    truth, leaders = balance["replicas"].tolist(), balance["leaders"].tolist()
    got = whole_numbers(answer)
    if got is None or len(got) != 3:
        return incorrect(f"{answer!r} is not three counts.", hint="answer like [1, 1, 4]: broker 0, 1, 2.")
    if got == truth:
        return correct(
            f"{truth}: leaders are even (one each), but every partition led from rack2 must put its "
            "follower in rack1, and broker 0 is rack1's only broker. KIP-36 calls it 'penalized'."
        )
    if got == leaders:
        return incorrect(
            f"{got} counts the leaders only: one partition each.",
            hint="count every replica a broker holds, followers included: 3 partitions x 2 = 6 in all.",
        )
    if sum(got) != sum(truth):
        return incorrect(
            f"your counts add up to {sum(got)}, but 3 partitions x 2 replicas = 6.",
            hint="write the three partitions' replica lists down first.",
        )
    if got == [2, 2, 2]:
        return incorrect(
            "that is what a rack-unaware assignment would give, not KIP-36.",
            hint="partition 1's leader is broker 1 (rack2); can its follower be broker 2?",
        )
    if got[::-1] == truth:
        return incorrect(
            "the right counts, but in reverse: give them in the order [broker 0, broker 1, broker 2].",
            hint="which broker is alone in its rack? It holds the most.",
        )
    return incorrect(f"{got} is not it.", hint="partitions: 0 -> (0,1); what are partitions 1 and 2?")


def _by_label(answer: Mapping) -> list | None:
    """``{"rack-unaware": n, "rack-aware": m}`` (any case, ``_`` or a space for ``-``) as ``[n, m]``; None when
    the two keys do not name the two assignments."""
    unaware = [v for k, v in answer.items() if "unaware" in str(k).lower()]
    aware = [v for k, v in answer.items() if "aware" in str(k).lower() and "unaware" not in str(k).lower()]
    return [unaware[0], aware[0]] if len(answer) == 2 and len(unaware) == len(aware) == 1 else None


@exercise(
    "02.rack_failure",
    solution=(1, 0),
    wrong=[(0, 0), (2, 0), (0, 1), (1, 1), 1, "1", {"rack-aware": 1, "rack-unaware": 0}, {"a": 1, "b": 0}],
    prompt="KIP-36's 6 brokers in 3 racks, 12 partitions, replication factor 2, start index 0. Rack rack1 "
    "(brokers 0 and 5) fails. How many partitions go offline (no replica left)? Answer "
    "(rack-unaware, rack-aware).",
    explanation="Rack-unaware (ids in order) puts partition 5 on (5, 0): both in rack1, so it goes offline. "
    "Rack-aware puts the two replicas of every partition on two different racks: none goes offline.",
)
def _(answer):
    brokers = asg.brokers_from_racks(KIP36_RACKS)
    offline = asg.rack_failure_comparison(brokers, 12, 2, failed_rack=FAILED_RACK)["offline"]
    truth = (int(offline["rack-unaware"]), int(offline["rack-aware"]))
    if isinstance(answer, Mapping):  # labelled counts: read them by their labels, not in key order
        answer = _by_label(answer)
        if answer is None:
            return incorrect(
                "a dict answer needs two keys, one for each assignment.",
                hint="use {'rack-unaware': ..., 'rack-aware': ...}, or a pair (rack-unaware, rack-aware).",
            )
    got = whole_numbers(answer)
    if got is None or len(got) != 2:
        return incorrect(
            f"{answer!r} is not two counts.",
            hint="answer with a pair like (3, 2): the rack-unaware count first, then the rack-aware one.",
        )
    got = tuple(got)
    if got == truth:
        return correct(
            f"{truth}: without racks, Kafka happily puts both replicas of a partition in one rack "
            "(here partition 5 on brokers 5 and 0); with racks, RF 2 <= 3 racks means at most one "
            "replica per rack, so one rack can never take a whole partition away."
        )
    if got[::-1] == truth:
        return incorrect(
            "the right numbers, swapped: give them in the order (rack-unaware, rack-aware).",
            hint="which of the two assignments can put both replicas of a partition in rack1?",
        )
    if got[1] != truth[1]:
        return incorrect(
            f"rack-aware: {got[1]} is not right.",
            hint="with RF 2 and 3 racks, how many replicas of one partition can share a rack?",
        )
    return incorrect(
        f"rack-unaware: {got[0]} is not right.",
        hint="rack-unaware walks brokers 0..5 in id order: partitions 0-5 get (0, 1), (1, 2), ... (5, 0), "
        "and from partition 6 the follower is two places on; which have both replicas in {0, 5}?",
    )

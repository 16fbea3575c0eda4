"""Lab 08's guided exercises: a cluster's logs, read with Spark.

The truth is the simulation's own record of what it wrote (the sample's ``ground-truth.json``,
:func:`kafka_lab.logs.sample.ground_truth`) and the reference parser (:mod:`kafka_lab.logs.parse`),
never the Spark pipeline the learner uses: a check cannot agree with a bug in the query it grades.
"""

from __future__ import annotations

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import Choices, choice, number, whole_number, whole_numbers
from kafka_lab.logs.parse import parse_lines
from kafka_lab.logs.sample import ground_truth

__all__ = [
    "STACK_TRACE",
    "COUNT_CHOICES",
    "lai_p99_truth",
    "no_control_plane_truth",
    "truncated_truth",
    "new_controller_truth",
]

#: an ERROR record with a 4-line stack trace, as server.log holds them
STACK_TRACE = [
    "[2024-03-04 00:00:12,345] ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error for partition "
    "orders-1 at offset 4521 (kafka.server.ReplicaFetcherThread)",
    "org.apache.kafka.common.errors.NotLeaderOrFollowerException: This server is not the leader for that "
    "topic-partition.",
    "\tat kafka.server.ReplicaFetcherThread.processPartitionData(ReplicaFetcherThread.scala:182)",
    "\tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:339)",
    "\tat kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:118)",
]

COUNT_CHOICES = Choices(
    {
        "a": "5 records: every line of a log file is a record",
        "b": "1 record and 4 continuation lines, attached to it",
        "c": "1 record and 4 rejected lines: they have no date",
        "d": "nothing: stack traces are dropped before counting",
    }
)


@exercise(
    "08.count_lines",
    solution="b",
    wrong=["a", "c", "d", "e"],
    prompt="An ERROR record in server.log is followed by its 4-line stack trace (STACK_TRACE). In "
    "lines read = records + continuations + rejected, how do these 5 lines count? "
    + "; ".join(f"({k}) {v}" for k, v in COUNT_CHOICES.items()),
    explanation="log4j writes one event as one record; a Throwable's lines follow its message without a "
    "layout prefix. A reader attaches them to the record, else a trace would look like garbage.",
)
def _(answer):
    got = choice(answer, COUNT_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    parsed = parse_lines(STACK_TRACE, "server.log")
    n_rec, n_cont, n_rej = len(parsed.records), parsed.continuations, len(parsed.rejected)
    if got == "b":
        return correct(
            f"the reference parser reads {n_rec} record with {n_cont} continuation lines and {n_rej} rejected. "
            "The exception's class and its 'at' lines carry no date: they belong to the record before them, "
            "so a query on records sees one ERROR with its trace, and every line is still counted once."
        )
    if got == "a":
        return incorrect(
            "only the first line has log4j's layout ([date] LEVEL message (logger)); the others have none.",
            hint="what does a record start with?",
        )
    if got == "c":
        return incorrect(
            "rejecting them would count a healthy stack trace as damage; they have a recognisable shape "
            "(an exception class, indented 'at' lines) and follow a record.",
            hint="rejected lines are those that fit nothing: garbage, a line cut short.",
        )
    return incorrect(
        "then lines read would not add up: every line read is counted once, as a record, a continuation "
        "or a rejected line.",
        hint="look at the conservation rule: lines read = records + continuations + rejected.",
    )


def no_control_plane_truth() -> list[int]:
    return sorted(int(b) for b, cp in ground_truth()["control_plane"].items() if not cp)


@exercise(
    "08.no_control_plane",
    solution=[1, 3],
    wrong=[[2], [1, 2, 3], [1]],
    prompt="From the brokers' logs, which brokers run without the control plane (no control.plane.listener.name)? "
    "Answer with a list of broker ids.",
    explanation="A broker says at start-up which plane serves each of its listeners: server.log's SocketServer "
    "lines, 'Created control-plane acceptor and processor for endpoint : ListenerName(CONTROLLER)' on a broker "
    "that names it, 'Created data-plane acceptor and processors ...' for every other listener. The request log "
    "cannot tell: the listener a LeaderAndIsr arrives on is the controller's choice, the same for every broker.",
)
def _(answer):
    got = whole_numbers(answer) if not isinstance(answer, int) else [answer]
    if got is None:
        return incorrect(f"{answer!r} is not a list of broker ids.", hint="answer like [1, 2].")
    truth = no_control_plane_truth()
    with_cp = sorted(int(b) for b, cp in ground_truth()["control_plane"].items() if cp)
    if sorted(set(got)) == truth:
        return correct(
            f"brokers {truth} logged only data-plane acceptors, CONTROLLER among them (bound in the migration's first "
            f"round); broker {with_cp[0]} logged a control-plane acceptor for CONTROLLER. The cluster is half-way "
            "through KIP-291's migration, and the controller's broker decides whether a broker's control plane is "
            "used at all."
        )
    if sorted(set(got)) == with_cp:
        return incorrect(
            f"broker {with_cp[0]} is the one *with* the control plane.",
            hint="the question asks for the brokers without it.",
        )
    if sorted(set(got)) in ([1, 2, 3], []):
        first, last = ground_truth()["controller"], new_controller_truth()[0]
        return incorrect(
            "that is what the request log suggests, but it shows the controller's choice of listener: every broker got "
            f"LeaderAndIsr on INTERNAL while broker {first} was the controller and on CONTROLLER after broker {last} "
            "took over. Which plane serves a listener is each broker's own config.",
            hint="tables.records.where(\"message like 'Created %acceptor%'\") (server.log, at each start-up)",
        )
    return incorrect(
        "not quite: which of each broker's start-up lines names a control-plane acceptor?",
        hint="tables.records.where(\"message like 'Created %acceptor%'\")",
    )


def lai_p99_truth() -> dict[int, float]:
    """p99 of requestQueueTimeMs of LeaderAndIsr per broker, on whatever listener it came (the simulation's exact
    percentile: the ground truth's ``controller_requests``)."""
    out = {}
    for r in ground_truth()["controller_requests"]:
        if r["api"] == "LEADER_AND_ISR":
            out[r["broker"]] = r["requestQueueTimeMs_p99"]
    return dict(sorted(out.items()))


def _ms_list(answer):
    if isinstance(answer, dict):
        try:
            answer = [answer[k] for k in sorted(answer)]
        except TypeError:
            return None
    if isinstance(answer, (list, tuple)):
        vals = [number(a) for a in answer]
        return None if None in vals else vals
    return None


@exercise(
    "08.lai_p99",
    solution=[9.27, 5.52, 4.72],
    wrong=[[0, 0, 0], [0.00927, 0.00552, 0.00472], [1.05, 1.05, 1.05], [9.27, 6.57, 5.62], [9.27, 0.0, 4.72]],
    prompt="The p99 of LeaderAndIsr's requestQueueTimeMs on each broker, in ms, whatever the listener: a list in "
    "broker order [broker 1, broker 2, broker 3] (two decimals are enough).",
    explanation="percentile('requestQueueTimeMs', 0.99) grouped by broker, on LEADER_AND_ISR rows: a LeaderAndIsr "
    "that goes through a broker's data plane queues behind the spike's requests, and while broker 1 (no "
    "control.plane.listener.name) was the controller, every broker's did, broker 2's too.",
)
def _(answer):
    got = _ms_list(answer)
    truth = lai_p99_truth()
    want = list(truth.values())
    if got is None:
        return incorrect(f"{answer!r} is not a list of numbers.", hint="answer like [1.5, 0.0, 2.25].")
    if len(got) != len(want):
        return incorrect(f"the cluster has {len(want)} brokers: give one number each.", hint="[broker 1, 2, 3]")

    def close(a, b):
        return abs(a - b) <= max(0.02, 0.01 * b)

    first, last = ground_truth()["controller"], new_controller_truth()[0]
    with_cp = sorted(int(b) for b, cp in ground_truth()["control_plane"].items() if cp)
    if all(close(g, w) for g, w in zip(got, want)):
        return correct(
            "the log says "
            + ", ".join(f"broker {b}: {v:.2f} ms" for b, v in truth.items())
            + f". Every broker queued a LeaderAndIsr behind its spike: while broker {first} was the controller it "
            f"sent on INTERNAL, so broker {with_cp[0]}'s control plane served nothing; after broker {last} took over "
            f"it sent on CONTROLLER, which brokers {no_control_plane_truth()} serve on their data plane."
        )
    if all(close(g * 1000, w) for g, w in zip(got, want)):
        return incorrect("those are seconds; the request log's times are in ms.", hint="multiply by 1000.")
    if all(g == 0 for g in got):
        return incorrect("the LeaderAndIsr waits on every broker.", hint="look at the spikes' seconds.")
    if all(close(g, w) or (b in with_cp and g == 0) for (b, w), g in zip(truth.items(), got)):
        return incorrect(
            f"broker {with_cp[0]} has a control plane, but its LeaderAndIsr still waited: while broker {first} was the "
            f"controller it sent on INTERNAL, which broker {with_cp[0]} serves on its data plane. Compute it from the "
            "log, not from the config.",
            hint="requests.where(\"api = 'LEADER_AND_ISR'\").groupBy('broker').agg(F.percentile('requestQueueTimeMs', 0.99))",
        )
    if any(not close(g, w) for g, w in zip(got, want)) and all(g >= w - 0.02 for g, w in zip(got, want)):
        return incorrect(
            "close, but higher than the p99 on some broker: is that the maximum? The 99th percentile of a few "
            "values interpolates between the two largest.",
            hint="percentile(col, 0.99), not max(col).",
        )
    return incorrect(
        "not these numbers. Take LEADER_AND_ISR rows, group by broker (not by listener), and the 99th percentile of "
        "requestQueueTimeMs (not localTimeMs or totalTimeMs).",
        hint="requests.where(\"api = 'LEADER_AND_ISR'\").groupBy('broker').agg(F.percentile('requestQueueTimeMs', 0.99))",
    )


def truncated_truth() -> dict:
    """Records acknowledged, then truncated (the old leaders'), per (broker, partition) and in all; and every
    replica's removed records in all (followers' copies included)."""
    rows = ground_truth()["truncations"]
    return {
        "total": sum(r["acknowledged"] for r in rows),
        "removed": sum(r["records"] for r in rows),
        "rows": [r for r in rows if r["acknowledged"]],
    }


@exercise(
    "08.truncated",
    solution=5130,
    wrong=[4, 1480, 0, 3, 5200],
    prompt="How many records, in the whole sample, did an old leader acknowledge (acks=1) and then truncate "
    "when it became a follower? Answer with one whole number.",
    explanation="Each truncation line in server.log says where a replica truncates to; the records between that "
    "offset and its log end offset when it became a follower are gone from it. A move truncates the old leader "
    "and may truncate a follower that had fetched some of the same records: only the old leader's (the move's "
    "largest) had been acknowledged.",
)
def _(answer):
    got = whole_number(answer)
    t = truncated_truth()
    if got is None:
        return incorrect(f"{answer!r} is not a whole number of records.", hint="answer like 1200.")
    per = ", ".join(f"broker {r['broker']} {r['topic']}-{r['partition']}: {r['acknowledged']}" for r in t["rows"])
    if got == t["total"]:
        return correct(
            f"{t['total']} records were acknowledged and thrown away ({per}). An old leader keeps appending until "
            "its late LeaderAndIsr is handled; broker 2 has a control plane, but its spike came while broker 1, "
            "which does not name CONTROLLER, was the controller: its LeaderAndIsr queued like the others'."
        )
    if got == t["removed"]:
        return incorrect(
            f"that is every replica's removed records: {t['removed'] - t['total']} of them are a follower's copies "
            "of records the old leader removed too, counted twice.",
            hint="in each move, count only the old leader: the truncation that removed the most "
            "(truncated_records(tables.truncations)['acknowledged']).",
        )
    if got == len(t["rows"]) or got == sum(r["events"] for r in ground_truth()["truncations"]):
        return incorrect("that counts truncation events, not records.", hint="each event removes many records.")
    if got in {r["acknowledged"] for r in t["rows"]}:
        return incorrect("that is one partition on one broker; the question asks for the whole sample.", hint=per)
    if got == 0:
        return incorrect("acks=1 records were lost here.", hint="look for 'Truncating' in server.log.")
    return incorrect(
        "not this number. For each truncation, the log end offset at become-follower minus the offset truncated "
        "to; then, per leader move, only the old leader's.",
        hint="truncated_records(tables.truncations)['acknowledged'].sum()",
    )


def new_controller_truth() -> tuple[int, int]:
    """``(controller id, controller epoch)`` at the end of the sample: the last election the simulation logged."""
    last = [c for c in ground_truth()["controllers"] if c["event"] == "elected"][-1]
    return int(last["controller"]), int(last["epoch"])


@exercise(
    "08.new_controller",
    solution=(2, 2),
    wrong=[(1, 1), (1, 2), (2, 1), (3, 2)],
    prompt="At the end of the sample, which broker is the controller, and under which controller epoch? "
    "Answer with a pair (broker id, epoch).",
    explanation="Each election increments /controller_epoch; the broker that wins logs 'successfully elected as "
    "the controller' on its own controller.log. A broker that restarts does not take the controller back.",
)
def _(answer):
    got = whole_numbers(answer)
    if got is None or len(got) != 2:
        return incorrect(f"{answer!r} is not a pair of whole numbers.", hint="answer like (3, 1).")
    cid, epoch = got
    truth_id, truth_epoch = new_controller_truth()
    first = ground_truth()["controller"]
    if (cid, epoch) == (truth_id, truth_epoch):
        return correct(
            f"broker {truth_id}, epoch {truth_epoch}. Broker {first} restarted last; its ZooKeeper session, and "
            f"/controller with it, went away as it shut down, and broker {truth_id} won the race to create "
            f"/controller again, incrementing the epoch. When broker {first} came back, /controller existed: it "
            "stayed an ordinary broker."
        )
    if (cid, epoch) == (first, 1):
        return incorrect(
            "that is the controller at the start of the minute. What happens to /controller when its broker restarts?",
            hint="look for 'Resigned' and 'successfully elected' in controller.log.",
        )
    if cid == first:
        return incorrect(
            f"broker {first} came back, but /controller already had an owner: a restarted broker does not take "
            "the controller back.",
            hint="which broker's controller.log says 'successfully elected' last?",
        )
    others = [b for b in range(1, ground_truth()["brokers"] + 1) if b not in (first, truth_id)]
    if cid in others and epoch == truth_epoch:
        return incorrect(
            f"the right epoch, and broker {cid} could have won: the brokers still up race to create /controller, "
            f"and here broker {truth_id}'s create reached ZooKeeper first. A prediction cannot know the winner; "
            "the log can.",
            hint="which broker's controller.log says 'successfully elected' last?",
        )
    if cid == truth_id:
        return incorrect(
            "the right broker, but every election increments the controller epoch.",
            hint="controller_changes shows the epoch of each election.",
        )
    return incorrect(
        "not this broker: the winner writes 'successfully elected as the controller' on its own controller.log.",
        hint="analyses.controller_changes(tables.controller_events)",
    )

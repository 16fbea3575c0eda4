"""Lab 03's guided exercises: saturation, Little's law past it, the controller request behind a backlog, the
rejected alternative.

Each check computes its truth by running :mod:`kafka_lab.sim` (or its queueing theory), with the
same settings and seed as the lab, so a check cannot drift from the model.
"""

from __future__ import annotations

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import PER_MILLISECOND, SECONDS, Choices, choice, number, number_in
from kafka_lab.sim.common.theory import saturation_rate
from kafka_lab.sim.experiments import controller_behind_backlog, wait_for_handler_ms

BACKLOG = 400  # 03.backlog_wait: Produce requests ahead of the LeaderAndIsr
HANDLERS = 8  # num.io.threads (Kafka's default)
SERVICE_MS = 1.0  # each Produce takes 1 ms of a handler (deterministic in the KIP scenario)
SWEEP_SERVICE_MS = 2.0  # 03.saturation and 03.littles_law: mean Produce handler time
OVERLOAD_RATE = 6000  # 03.littles_law: Produce requests per second offered, past saturation
FULL_BACKLOG = 1500  # 03.priority_full: a backlog that overflows queued.max.requests = 500
QUEUE = 500


def backlog_wait() -> float:
    row = controller_behind_backlog(
        BACKLOG, control_plane=False, num_io_threads=HANDLERS, service_ms=SERVICE_MS
    ).request("LeaderAndIsr")
    return wait_for_handler_ms(row)


@exercise(
    "03.backlog_wait",
    solution=50,
    wrong=[400, 0, 1, 49, 51, 62.5, 0.05, "0.05 s", "50 s"],
    prompt=f"{BACKLOG} Produce requests are queued ahead of a LeaderAndIsr; {HANDLERS} request handler threads "
    f"each take {SERVICE_MS:g} ms per Produce; no control plane. How many ms does the LeaderAndIsr "
    "wait before a handler takes it?",
    explanation="The handlers drain the FIFO 8 at a time, one round per millisecond: 400 / 8 × 1 ms = 50 ms.",
)
def _(answer):
    truth = backlog_wait()
    got = number(answer)
    seconds = number_in(answer, SECONDS)
    if seconds is not None:  # "0.05 s" gets the seconds feedback below; "50 s" is 50000 ms
        got = seconds if abs(seconds * 1000 - truth) <= 0.25 * SERVICE_MS else seconds * 1000
    if got is None:
        return incorrect(f"{answer!r} is not a number of milliseconds.", hint="answer with a number, like 12.5.")
    rounds = BACKLOG / HANDLERS
    # exact with deterministic service: 50 rounds of 1 ms (the model's 49.999 is 50 minus the 0.001 ms it
    # was sent after the backlog); a round more or less is a real mistake, so the tolerance is below one round
    if abs(got - truth) <= 0.25 * SERVICE_MS:
        return correct(
            f"the model says {truth:.3f} ms: the backlog of {BACKLOG} drains {HANDLERS} requests per "
            f"{SERVICE_MS:g} ms, so backlog × service time / handlers. That is Kafka's FIFO queue: a "
            "controller request is just one more request in line."
        )
    if abs(got - BACKLOG * SERVICE_MS) < 1:
        return incorrect(
            "that is the time one handler would need.",
            hint=f"{HANDLERS} handlers work on the backlog at the same time.",
        )
    if abs(got * 1000 - truth) <= 0.25 * SERVICE_MS:
        return incorrect(
            f"{got:g} is the right number of seconds, but the answer is asked in milliseconds.", hint="1 s = 1000 ms."
        )
    if got <= SERVICE_MS:
        return incorrect(
            "that would be true with the dedicated control plane, not without it.",
            hint="without control.plane.listener.name the LeaderAndIsr joins the back of the data queue.",
        )
    if abs(abs(got - truth) - SERVICE_MS) <= 0.25 * SERVICE_MS:
        return incorrect(
            f"one round of {HANDLERS} requests off.",
            hint=f"{BACKLOG} requests ahead are {rounds:g} full rounds of {HANDLERS}; the LeaderAndIsr "
            "is taken when the last of those rounds ends, and its own work is not part of the wait.",
        )
    if abs(got - QUEUE / HANDLERS * SERVICE_MS) < 0.5:
        return incorrect(
            f"that is {QUEUE} (queued.max.requests) / {HANDLERS}: a full queue's worth.",
            hint=f"here {BACKLOG} requests are ahead, and they all fit in the queue.",
        )
    return incorrect(
        f"{got:g} ms is not what the model measures.",
        hint="how many rounds of 8 requests does it take to clear 400, and how long is a round?",
    )


@exercise(
    "03.saturation",
    solution=4000,
    wrong=[500, 16000, 8000, 4, "4 per ms", "4000 per ms", 3900, 4050],
    prompt=f"num.io.threads={HANDLERS}, and each Produce takes {SWEEP_SERVICE_MS:g} ms of a handler on average. "
    "Above how many Produce requests per second does the data plane saturate (ρ = 1)?",
    explanation="ρ = λ × service time / handlers = 1 gives λ = 8 / 2 ms = 4000 requests per second.",
)
def _(answer):
    truth = saturation_rate(HANDLERS, SWEEP_SERVICE_MS)
    got = number(answer)
    per_ms = number_in(answer, PER_MILLISECOND)
    if got is None and per_ms is not None:
        got = per_ms  # "4 per ms": the per-millisecond feedback below
    if got is None:
        return incorrect(f"{answer!r} is not a rate.", hint="answer in requests per second, like 1234.")
    # exact: 8 handlers / 2 ms; a rounding of it is not the learner's to make
    if abs(got - truth) < 1 and per_ms is None:
        return correct(
            f"{truth:.0f}/s: {HANDLERS} handlers can each do 1000 / {SWEEP_SERVICE_MS:g} = "
            f"{1000 / SWEEP_SERVICE_MS:.0f} requests per second. Beyond that the queue grows until "
            "queued.max.requests stops the network processors."
        )
    if abs(got - 1000 / SWEEP_SERVICE_MS) < 1:
        return incorrect("that is what one handler thread can do.", hint=f"there are {HANDLERS} of them.")
    if abs(got * 1000 - truth) < 1:
        return incorrect(
            f"{got:g} is the rate per millisecond; the question asks per second.", hint="multiply by 1000."
        )
    if abs(got - HANDLERS * 1000) < 1:
        return incorrect(
            f"that would be right for 1 ms per request; here each takes {SWEEP_SERVICE_MS:g} ms.",
            hint="one handler does 1000 ms / 2 ms = 500 requests per second.",
        )
    if abs(got - truth * 4) < 1:
        return incorrect(
            "that multiplies by the service time instead of dividing by it.",
            hint="one handler does 1000 ms / 2 ms = 500 requests per second.",
        )
    return incorrect(
        f"{got:g}/s is not where utilisation reaches 1.",
        hint="utilisation ρ = rate × service time / handlers; solve ρ = 1.",
    )


def full_queue_wait_ms() -> float:
    """Little's law past saturation: W = L / λ, a full queue of ``QUEUE`` requests passed on at the rate the
    handlers take them (:func:`~kafka_lab.sim.theory.saturation_rate`), whatever the clients offer."""
    throughput_per_ms = saturation_rate(HANDLERS, SWEEP_SERVICE_MS) / 1000.0
    return QUEUE / throughput_per_ms


@exercise(
    "03.littles_law",
    solution=125,
    wrong=[83.3, 62.5, 0.125, "0.125 s", 127, 500, 250, 2],
    prompt=f"Past saturation, at {OVERLOAD_RATE} Produce requests per second with {HANDLERS} handlers of "
    f"{SWEEP_SERVICE_MS:g} ms, the request queue is always full: RequestQueueSize = queued.max.requests = {QUEUE}. "
    "By Little's law, how many ms does a request wait in the queue (its requestQueueTime)?",
    explanation="L = λW, so W = L / λ. Past saturation the queue passes on only what the handlers take, "
    f"{HANDLERS} / {SWEEP_SERVICE_MS:g} ms = 4000 requests per second = 4 per ms, whatever the clients offer: "
    f"W = {QUEUE} / 4 = 125 ms.",
)
def _(answer):
    truth = full_queue_wait_ms()
    tol = 1.5  # the model's sweep measures 125.8 ms; a mistake of a service time (127) is not within it
    got = number(answer)
    seconds = number_in(answer, SECONDS)
    if seconds is not None:  # "0.125 s" gets the seconds feedback below; "125 s" is 125000 ms
        got = seconds if abs(seconds * 1000 - truth) <= tol else seconds * 1000
    if got is None:
        return incorrect(f"{answer!r} is not a number of milliseconds.", hint="answer with a number, like 12.5.")
    lam_per_ms = saturation_rate(HANDLERS, SWEEP_SERVICE_MS) / 1000.0
    if abs(got - truth) <= tol:
        return correct(
            f"W = L / λ = {QUEUE} requests / {lam_per_ms:g} per ms = {truth:g} ms. Past ρ = 1 the queue hands on only "
            f"what the handlers take, {lam_per_ms * 1000:.0f}/s, not the {OVERLOAD_RATE}/s offered: the other "
            f"{OVERLOAD_RATE - lam_per_ms * 1000:.0f}/s wait in the sockets, where requestQueueTime does not count "
            "them. The sweep below measures it."
        )
    if abs(got * 1000 - truth) <= tol:
        return incorrect(
            f"{got:g} is the right number of seconds, but the answer is asked in milliseconds.", hint="1 s = 1000 ms."
        )
    if abs(got - QUEUE / (OVERLOAD_RATE / 1000.0)) < 1:
        return incorrect(
            f"that divides by the {OVERLOAD_RATE} requests per second offered; but only what the handlers take "
            "goes through the queue.",
            hint="λ in Little's law is the rate requests pass through the queue: past saturation, Exercise 1's rate.",
        )
    if abs(got - QUEUE / HANDLERS * SERVICE_MS) < 1:
        return incorrect(
            f"that is {QUEUE} / {HANDLERS}: right for 1 ms per request; here each takes {SWEEP_SERVICE_MS:g} ms.",
            hint=f"how many requests per ms do {HANDLERS} handlers of {SWEEP_SERVICE_MS:g} ms take?",
        )
    if abs(got - truth - SWEEP_SERVICE_MS) <= 0.5:
        return incorrect(
            f"that adds the request's own {SWEEP_SERVICE_MS:g} ms of handler time.",
            hint="the question asks how long it waits in the queue, before a handler takes it.",
        )
    if abs(got - QUEUE) < 1:
        return incorrect(
            f"{QUEUE} is L, the number of requests in the queue, not how long each waits.",
            hint="Little's law: L = λ × W, so W = L / λ.",
        )
    return incorrect(
        f"{got:g} ms is not what Little's law gives.",
        hint=f"W = L / λ, with L = {QUEUE} requests and λ in requests per ms.",
    )


def priority_full_wait() -> dict:
    row = controller_behind_backlog(
        FULL_BACKLOG,
        control_plane=False,
        prioritise=True,
        queued_max_requests=QUEUE,
        num_io_threads=HANDLERS,
        service_ms=SERVICE_MS,
    ).request("LeaderAndIsr")
    return {
        "wait": wait_for_handler_ms(row),
        "socket": float(row["socketWaitTime"]),
        "queue": float(row["requestQueueTime"]),
        "error": row["error"],
    }


@exercise(
    "03.priority_full",
    solution=125,
    wrong=[0, 1, 187.5, 62.5, 0.125, 126, 124],
    prompt=f"The rejected alternative: controller requests jump the data queue. Backlog {FULL_BACKLOG}, "
    f"queued.max.requests={QUEUE}, {HANDLERS} handlers of {SERVICE_MS:g} ms. How many ms does the "
    "LeaderAndIsr wait before a handler takes it?",
    explanation="The queue is full, so the processors are blocked putting the backlog; the LeaderAndIsr "
    "is read only after the 1000 requests beyond the queue have been put, one slot per handler "
    "completion: (1500 − 500) / 8 × 1 ms = 125 ms. Once read, it jumps the queue.",
)
def _(answer):
    truth = priority_full_wait()
    got = number(answer)
    if got is None:
        return incorrect(f"{answer!r} is not a number of milliseconds.", hint="answer with a number, like 12.5.")
    # (1500 − 500) / 8 = 125 rounds of 1 ms, exact up to the 0.001 ms it was sent after the backlog
    if abs(got - truth["wait"]) <= 0.5 * SERVICE_MS:
        return correct(
            f"the model says {truth['wait']:.1f} ms, of which {truth['socket']:.1f} ms in the socket "
            f"and only {truth['queue']:.1f} ms in the queue: priority helps only once the request is "
            "read, and a blocked processor cannot read it."
        )
    if abs(got * 1000 - truth["wait"]) <= 0.5 * SERVICE_MS:
        return incorrect(
            f"{got:g} is the right number of seconds, but the answer is asked in milliseconds.", hint="1 s = 1000 ms."
        )
    if got <= SERVICE_MS:
        return incorrect(
            "that would hold if the queue had room: then priority works.",
            hint="the queue is full, so the processor is blocked before it reads the LeaderAndIsr.",
        )
    if abs(got - FULL_BACKLOG / HANDLERS) < 1:
        return incorrect(
            "that is the plain FIFO wait for the whole backlog.",
            hint=f"once in the queue it jumps ahead of the {QUEUE} waiting there.",
        )
    if abs(got - QUEUE / HANDLERS * SERVICE_MS) < 1:
        return incorrect(
            f"that is the time to drain a full queue of {QUEUE}; but once read, the LeaderAndIsr jumps that queue.",
            hint="what stops it from being read in the first place?",
        )
    if abs(got - truth["wait"] - SERVICE_MS) <= 0.5 * SERVICE_MS:
        return incorrect(
            f"that includes the LeaderAndIsr's own {SERVICE_MS:g} ms of work.",
            hint="the question asks how long it waits before a handler takes it.",
        )
    if abs(truth["wait"] - got - SERVICE_MS) <= 0.5 * SERVICE_MS:
        return incorrect(
            f"one round of {HANDLERS} requests short.",
            hint=f"{FULL_BACKLOG - QUEUE} requests must be put after the queue fills: how many rounds "
            f"of {HANDLERS} handler completions is that?",
        )
    return incorrect(
        f"{got:g} ms is not what the model measures.",
        hint="how many requests must the processors put before the LeaderAndIsr can be read?",
    )


WHY_REJECTED_CHOICES = Choices(
    {
        "a": "the request queue drops the controller request when it is full",
        "b": "the controller's network processor is blocked, so its request is not read",
        "c": "the handler threads serve the priority queue in FIFO order anyway",
        "d": "the controller sends its requests to the wrong listener",
    }
)


@exercise(
    "03.why_rejected",
    solution="b",
    wrong=["a", "c", "d", "A", "e"],
    prompt="Why did KIP-291 reject prioritising controller requests inside the data request queue? "
    "Answer with a letter: " + "; ".join(f"({k}) {v}" for k, v in WHY_REJECTED_CHOICES.items()),
    explanation="KIP-291: 'When the request queue is full, the processor thread will be blocked first when "
    "trying to enqueue the data request from connection0 ... even though the controller request "
    "is ready to be enqueued.'",
)
def _(answer):
    got = choice(answer, WHY_REJECTED_CHOICES)
    if got is None:
        return incorrect(f"{answer!r} is not one of the letters a, b, c, d.", hint='answer like "a".')
    t = priority_full_wait()
    blocked = t["socket"] > t["queue"]  # the model's verdict: where the time went
    answered = t["error"] == "NONE"  # it was not dropped: it completed
    truth = "b" if blocked and answered else ("a" if not answered else "c")
    if got == truth:
        return correct(
            "the network processor that owns the controller's connection is blocked on the full queue, so the "
            "controller request is not even read: priority inside the queue cannot help a request outside it. "
            f"In the model the LeaderAndIsr spent {t['socket']:.1f} ms waiting to be read and only "
            f"{t['queue']:.1f} ms in the queue: the dedicated listener, processor and queue are what "
            "KIP-291 adds so that nothing data-related stands in front of it."
        )
    if got == "a":
        return incorrect(
            "Kafka never drops a request for a full queue: the processor's put blocks.",
            hint="while its put blocks, what happens to the other connections that processor owns?",
        )
    if got == "c":
        return incorrect(
            "once read, the controller request does jump ahead: its requestQueueTime is about 1 ms.",
            hint="where did the rest of its wait go?",
        )
    return incorrect(
        "without control.plane.listener.name the controller correctly uses the inter-broker listener.",
        hint="the problem is a thread, not an address.",
    )

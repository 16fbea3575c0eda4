"""The controller at scale: controlled shutdown and failover, 100 to 100k partitions, Kafka 1.0 vs 1.1+.

Everything here is built from per-operation mechanisms, with partition state in arrays:

- ZooKeeper requests go through one client, serial (1.0's ZkClient) or pipelined with
  ``zookeeper.max.in.flight.requests`` = 10 (1.1+), with the timing of :mod:`.zookeeper`
  (:func:`~kafka_lab.sim.zk.zookeeper.pipeline_completions`: each request's latency drawn per request);
- **controlled shutdown** (``KafkaController.doControlledShutdown``): for each partition the broker
  leads, read its state znode, write the new leader (the next live replica) conditionally, then
  ``LeaderAndIsr`` to the replicas and ``UpdateMetadata`` to every live broker; for each partition it
  follows, ``StopReplica`` to it, then read and write the shrunk ISR, ``LeaderAndIsr`` to the leader and
  ``UpdateMetadata`` to all. 1.0 does this **one partition at a time** (its own reads, writes, its own
  requests: the two costs the talk names, about half a minute at its 10,000 partitions), and, in the
  model, after each leader election logs the state of *every* partition of the cluster, a line that grows
  with the cluster, so the shutdown is quadratic in its size. That line is the project's explanation of
  the rest of 1.0's 6.5 minutes, a hypothesis, not a fact: it is in the code the 1.1 work was compared
  against (trunk of October 2017) and in 0.11.0.1, and its fix (apache/kafka PR #4075) calls it
  "quadratic logging behavior"; but the talk blames only the serial writes and the per-partition requests,
  the line left the 1.0 branch before the 1.0.0 release, and the cost it needs (2.88 µs per partition
  logged, fitted) is 4.5 to 7 times a Java replica's (``benchmarks/election_log.py``). 1.1+ (KAFKA-5642)
  reads all, writes all (pipelined),
  and sends **one** ``LeaderAndIsr`` per broker and one ``UpdateMetadata`` round, for the led partitions,
  then the same for the followed ones. The reply goes once the writes are done and the requests queued;
- **failover** (``onControllerFailover``): after the dead controller's session times out, an election, then
  the new controller reads every broker, topic and partition state (serially or pipelined) before it
  acts, then elects leaders for the partitions the dead broker led (1.0: one after another, 1.1+:
  pipelined; either way the new leaders hear of it in one batch of requests at the end);
- controller-to-broker requests: one per broker in flight (``ControllerChannelManager``), each costing
  the receiving broker's handler the request's :func:`~kafka_lab.sim.server.apis.default_costs` (the same cost
  models as the broker model of lab 03).

:data:`CALIBRATION` lists every number with its source; :func:`calibration_table` sets the model beside
the published figures. :func:`controlled_shutdown_closed_form` and :func:`failover_closed_form` are the
same mechanisms with constant latencies (:func:`~kafka_lab.sim.zk.zookeeper.pipeline_time`); the simulation
matches them exactly without jitter and closely with it (tests/test_controller_scale.py).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..common.options import check_number, check_seed
from ..server.apis import default_costs
from .zookeeper import pipeline_completions, pipeline_time

__all__ = [
    "BEHAVIOUR",
    "CALIBRATION",
    "FailoverResult",
    "Parameter",
    "ShutdownResult",
    "TALK_FIGURES",
    "BROKER_SHUTDOWN_DEFAULTS",
    "broker_side",
    "VERSIONS",
    "calibration_table",
    "cluster_partitions",
    "controlled_shutdown",
    "controlled_shutdown_closed_form",
    "controller_failover",
    "shutdown_schedule",
    "failover_closed_form",
]

VERSIONS = ("1.0", "1.1", "2.8")


@dataclass(frozen=True)
class Parameter:
    """One number of the model, with where it comes from and whether a published figure fixed it."""

    name: str
    value: float
    unit: str
    source: str
    role: str  #: "Kafka default", "anchor" (solved from a published figure, named), "model" (our choice)


_BLOG = 'Confluent blog, J. Rao, "Apache Kafka Supports 200K Partitions Per Cluster" (2018)'

CALIBRATION: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter(
            "zk_rtt_ms",
            0.1375,
            "ms",
            f"{_BLOG}: failover of 2,000 topics x 50 partitions loads in 28 s on 1.0.0 (serial) and 14 s on "
            "1.1.0 (pipelined). 1.0 waits for each of 102,000 reads: rtt + reply = 28 s / 102,000 = 0.275 ms; "
            "the reply share is fixed below, the rest is the round trip. No source gives a ZooKeeper latency.",
            "anchor",
        ),
        Parameter(
            "zk_reply_ms",
            0.1375,
            "ms",
            f"{_BLOG}: pipelined, the model takes the replies' handling in turn on one thread (ZooKeeper's client "
            "reads and delivers each reply, ZooKeeperClient.handleRequests; the controller decodes each state) as "
            "the bottleneck: 14 s / 102,000 replies. A hypothesis fitted to this figure, not a measurement.",
            "anchor",
        ),
        Parameter(
            "zk_commit_ms",
            0.42,
            "ms",
            "PR #3860 (KAFKA-5894): the 10k-partition controlled shutdown takes ~9.7 s with "
            "zookeeper.max.in.flight.requests=1, i.e. 10,000 reads + 10,000 writes one by one: "
            "9.7 s / 10,000 = 0.97 ms = 2 x 0.275 ms + the write's quorum commit.",
            "anchor",
        ),
        Parameter(
            "max_in_flight",
            10,
            "requests",
            "zookeeper.max.in.flight.requests default (KafkaConfig, 1.1+; KAFKA-5894); 1.0's ZkClient: 1",
            "Kafka default",
        ),
        Parameter(
            "request_build_ms_1_0",
            0.29,
            "ms per request",
            "1.0 only: the controller thread builds and queues each single-partition request itself (7 per "
            "partition on 5 brokers). A translated copy of the Confluent blog post gives ~30 s for 1.0 "
            "with only the logging fixed: (30 s - 9.7 s of serial ZooKeeper) / 70,000 requests. "
            "That intermediate figure is not confirmed in English.",
            "anchor",
        ),
        Parameter(
            "election_log_us_per_entry_1_0",
            2.88,
            "µs per partition state logged",
            f"{_BLOG}: 1.0.0 takes 6.5 min, and the blog credits 'fixing a logging overhead' first. The project's "
            "hypothesis (not a fact: the talk blames only serial ZooKeeper writes and per-partition requests) is "
            "that the overhead is this: until apache/kafka PR #4075 (16 October 2017, linked from KAFKA-6116: "
            "'quadratic logging behavior'), "
            "PartitionStateMachine.electLeaderForPartition logged the leader cache of the whole cluster after each "
            "election ('After leader election, leader cache is updated to ...'), and Kafka's config/log4j.properties "
            "sets kafka.controller to TRACE, so the line was built and written. The fix reached 0.11.0.2 and the "
            "1.0.0 release; the October 2017 trunk that the KAFKA-5642 experiments measured as the old controller "
            "(PR #3765, 91517e8) still had the line: for the hypothesis to hold, the blog's '1.0.0' must be that code. The shutdown "
            "elects the broker's 5,000 led partitions of a 25,000-partition cluster: (390 s - 30 s) / (5,000 x "
            "25,000 entries). benchmarks/election_log.py times a Java replica of the line with Kafka 1.0's JVM "
            "flags: 0.4 to 0.65 µs per entry on this lab's machine, so this fitted cost is 4.5 to 7 times the "
            "replica's (an older machine, Java 8, a loaded broker around it; or time the hypothesis does not "
            "account for).",
            "anchor",
        ),
        Parameter(
            "zk_jitter_cv",
            0.25,
            "",
            "model: each ZooKeeper request's latency is log-normal with this coefficient of variation "
            "(same mean), so runs differ by seed; 0 gives the closed form exactly.",
            "model",
        ),
        Parameter(
            "controller_network_ms",
            0.2,
            "ms",
            "model: one way, controller to broker, in the fencing experiments (sim/fencing.py); small "
            "against the ZooKeeper times and the session timeouts that decide those experiments",
            "model",
        ),
        Parameter(
            "session_timeout_ms_1_x",
            6000,
            "ms",
            "zookeeper.session.timeout.ms default, 1.0 to 2.4 (KafkaConfig)",
            "Kafka default",
        ),
        Parameter(
            "session_timeout_ms_2_8",
            18000,
            "ms",
            "zookeeper.session.timeout.ms default from 2.5 (KIP-537)",
            "Kafka default",
        ),
    )
}


@dataclass(frozen=True)
class Behaviour:
    """What a Kafka version does differently here."""

    max_in_flight: int
    batched: bool  #: one LeaderAndIsr per broker and one UpdateMetadata round per event (KAFKA-5642)
    #: 1.0 as the model explains it (a hypothesis): each election logs every partition's state (PR #4075)
    election_log_us_per_entry: float
    request_build_ms: float
    session_timeout_ms: float
    epoch_checked_writes: bool  #: KAFKA-6082 (2.1+): multi(check /controller_epoch, write)


def _p(name: str) -> float:
    return CALIBRATION[name].value


BEHAVIOUR = {
    "1.0": Behaviour(
        1, False, _p("election_log_us_per_entry_1_0"), _p("request_build_ms_1_0"), _p("session_timeout_ms_1_x"), False
    ),
    "1.1": Behaviour(int(_p("max_in_flight")), True, 0.0, 0.0, _p("session_timeout_ms_1_x"), False),
    "2.8": Behaviour(int(_p("max_in_flight")), True, 0.0, 0.0, _p("session_timeout_ms_2_8"), True),
}

#: the published figures: the Confluent blog's, which the talk (seed 001) presents too, but for 1.0's 6.5 minutes
#: (the talk: "more than six minutes"): (what, version, partitions, seconds)
TALK_FIGURES = (
    ("controlled shutdown, 10k partitions on the broker", "1.0", 10_000, 390.0),
    ("controlled shutdown, 10k partitions on the broker", "1.1", 10_000, 3.0),
    ("failover load, 2k topics x 50 partitions", "1.0", 100_000, 28.0),
    ("failover load, 2k topics x 50 partitions", "1.1", 100_000, 14.0),
)
#: the shutting-down broker's side (KafkaServer.controlledShutdown; the same defaults in 1.0 and 2.8)
BROKER_SHUTDOWN_DEFAULTS = {
    "controlled.shutdown.max.retries": 3,
    "controlled.shutdown.retry.backoff.ms": 5000,
    "request.timeout.ms": 30000,
}
BROKERS = 5  # the talk's and the blog's setup: 5 brokers, 5 ZooKeeper nodes
REPLICATION_FACTOR = 2  # the blog's controlled-shutdown topics (25,000 x 1 partition x 2 replicas)


def cluster_partitions(replicas_on_broker: int) -> int:
    """The partitions of the talk's shutdown cluster for a broker hosting ``replicas_on_broker`` replicas: every
    broker alike, replication factor 2 on 5 brokers (10,000 replicas a broker: 25,000 partitions)."""
    return replicas_on_broker * BROKERS // REPLICATION_FACTOR


def _election_log_ms(beh: Behaviour, cluster: int) -> float:
    """The 1.0 debug line after each leader election (before PR #4075): all ``cluster`` partitions' states, at
    the fitted cost per entry (the project's hypothesis for most of 1.0's 6.5 minutes; see the module)."""
    return beh.election_log_us_per_entry * cluster / 1000


def _version(version: str) -> Behaviour:
    if version not in BEHAVIOUR:
        raise ValueError(f"version must be one of {VERSIONS}, got {version!r}")
    return BEHAVIOUR[version]


def _count(name: str, n, lo: int = 1, hi: int = 1_000_000) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if not lo <= n <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, got {n}")
    return int(n)


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(name.encode())])


def _jitter_cv(jitter_cv) -> float:
    """``jitter_cv`` as given (a finite number, at least 0: 0 is no jitter), or the calibrated one when None."""
    if jitter_cv is None:
        return _p("zk_jitter_cv")
    check_number("jitter_cv", jitter_cv, least=0)
    return float(jitter_cv)


def _latencies(rng, n: int, mean: float, cv: float) -> np.ndarray:
    if cv <= 0 or n == 0:
        return np.full(n, mean)
    s2 = math.log1p(cv * cv)
    return mean * rng.lognormal(-s2 / 2, math.sqrt(s2), n)


def _cost(api: str, partitions) -> np.ndarray:
    cm = default_costs()[api]
    return cm.base.mean_ms + cm.per_partition_ms * np.asarray(partitions, dtype=float)


def _broker_fifo(broker: np.ndarray, arrive: np.ndarray, service: np.ndarray) -> np.ndarray:
    """Each broker handles the controller's requests one at a time, in the order sent (one in flight)."""
    done = np.empty_like(arrive)
    order = np.lexsort((arrive, broker))
    b, a, s = broker[order], arrive[order], service[order]
    for bid in np.unique(b):
        m = b == bid
        cs = np.cumsum(s[m])
        # done_i = max_j<=i (a_j + sum s_j..i) = cs_i + max_j<=i (a_j - cs_{j-1})
        done_m = cs + np.maximum.accumulate(a[m] - (cs - s[m]))
        done[order[m]] = done_m
    return done


# -- controlled shutdown --------------------------------------------------------------------------------------
def broker_side(reply_ms: float, **overrides) -> dict:
    """What the shutting-down broker sees (``KafkaServer.controlledShutdown``): each attempt waits up to
    ``request.timeout.ms`` for the reply, then sleeps ``controlled.shutdown.retry.backoff.ms``; after
    ``controlled.shutdown.max.retries`` failures it logs ``Proceeding to do an unclean shutdown as all the
    controlled shutdown attempts failed`` and stops anyway. A retried request waits in the controller's
    event queue behind the first, so its reply comes when the first is done (``reply_ms``).

        >>> broker_side(3_000)["clean"], broker_side(390_000)["stopped_ms"]
        (True, 105000.0)
    """
    cfg = {**BROKER_SHUTDOWN_DEFAULTS, **overrides}
    timeout, backoff = float(cfg["request.timeout.ms"]), float(cfg["controlled.shutdown.retry.backoff.ms"])
    t = 0.0
    for attempt in range(1, int(cfg["controlled.shutdown.max.retries"]) + 1):
        answered = max(float(reply_ms), t)
        if answered - t <= timeout:
            return {"clean": True, "stopped_ms": answered, "attempts": attempt}
        t += timeout + backoff
    return {"clean": False, "stopped_ms": t, "attempts": int(cfg["controlled.shutdown.max.retries"])}


@dataclass
class ShutdownResult:
    """A controlled shutdown: ``duration_s`` from the ControlledShutdown request to its reply."""

    partitions: int
    version: str
    duration_s: float
    timeline: pd.DataFrame = field(repr=False)  #: per partition: role, new_leader, zk_written_ms, leader_moved_ms
    phases: dict = field(
        repr=False
    )  #: seconds spent per mechanism (ZooKeeper, 1.0's request building and election log)
    closed_form_s: float = 0.0
    broker: dict = field(default_factory=dict)  #: :func:`broker_side`: clean or not, when the broker stopped

    @property
    def left_leaderless(self) -> int:
        """Led partitions whose new leader was not acting yet when the broker stopped (an unclean shutdown)."""
        led = self.timeline[self.timeline["role"] == "leader"]
        return int((led["leader_moved_ms"] > self.broker["stopped_ms"]).sum())

    def moved_over_time(self, points: int = 200) -> pd.DataFrame:
        """How many of the broker's led partitions have a new leader acting, over time (for a figure)."""
        led = np.sort(self.timeline.loc[self.timeline["role"] == "leader", "leader_moved_ms"].to_numpy())
        t = np.linspace(0, max(float(led[-1]) if led.size else 0.0, self.duration_s * 1000), points)
        return pd.DataFrame({"time_s": t / 1000, "moved": np.searchsorted(led, t, side="right")})


def _shutdown_layout(partitions: int, rng) -> dict:
    """The broker's partitions (RF 2 on 5 brokers): half it leads, half it follows, in a hash-like order."""
    n_lead = (partitions + 1) // 2
    role = np.zeros(partitions, dtype=bool)
    role[:n_lead] = True
    rng.shuffle(role)
    other = 1 + rng.integers(0, BROKERS - 1, partitions)  # the other replica (broker 0 is shutting down)
    return {"leads": role, "other": other}


def controlled_shutdown(*, partitions: int, version: str, seed: int = 0, jitter_cv: float | None = None):
    """Controlled shutdown of a broker hosting ``partitions`` replicas (half led), as ``version`` does it.

    The talk's setup: 5 brokers, replication factor 2 (25,000 single-partition topics put 10,000 replicas
    on each broker). ``duration_s``: the controller receives ControlledShutdown → it replies.

        >>> round(controlled_shutdown(partitions=10_000, version="1.1").duration_s, 2)
        2.75
    """
    n = _count("partitions", partitions)
    beh = _version(version)
    check_seed(seed)
    _jitter_cv(jitter_cv)
    rng = _rng(seed, f"shutdown-{version}-{n}")
    lay = _shutdown_layout(n, rng)
    leads, other = lay["leads"], lay["other"]
    sched = shutdown_schedule(leads, version, rng, jitter_cv)
    written, sent = sched["written_ms"], sched["sent_ms"]
    if not beh.batched:
        # LeaderAndIsr for one partition to the new leader (led) or to the leader (followed), then UM
        service = _cost("LeaderAndIsr", 1) + _cost("UpdateMetadata", 1)
        moved = _broker_fifo(other, sent, np.full(n, service))
    else:
        moved = np.empty(n)
        for role_mask in (leads, ~leads):
            idx = np.flatnonzero(role_mask)
            if idx.size:
                # one LeaderAndIsr per broker with all its partitions, then one UpdateMetadata round
                per_broker = np.bincount(other[idx], minlength=BROKERS)
                batch = _cost("LeaderAndIsr", per_broker) + _cost("UpdateMetadata", idx.size)
                moved[idx] = sent[idx] + batch[other[idx]]
    duration, phases = sched["duration_ms"], sched["phases"]
    timeline = pd.DataFrame(
        {
            "partition": np.arange(n),
            "role": np.where(leads, "leader", "follower"),
            "new_leader": other,
            "zk_written_ms": written,
            "leader_moved_ms": moved,
        }
    )
    return ShutdownResult(
        n,
        version,
        duration / 1000,
        timeline,
        phases,
        controlled_shutdown_closed_form(partitions=n, version=version),
        broker_side(duration),
    )


def shutdown_schedule(
    leads, version: str, rng, jitter_cv: float | None = None, cluster_size: int | None = None
) -> dict:
    """When the controller has written each partition's new state, and when it sends its requests.

    ``leads``: per partition, whether the shutting-down broker leads it (else it follows). 1.0: one
    partition after another (read, write, its own requests, and for a led one the election's log line of the
    whole cluster's state); 1.1+: the
    led partitions' reads, then their writes, pipelined, then one batch of requests; then the followed
    ones. ``cluster_size``: the partitions of the whole cluster, each logged after a 1.0 election (by
    default the talk's layout, :func:`cluster_partitions`). Returns ``written_ms``, ``sent_ms`` (arrays, from
    the ControlledShutdown request),
    ``duration_ms`` (to the reply) and ``phases`` (seconds per mechanism).
    """
    leads = np.asarray(leads, dtype=bool)
    n = leads.size
    beh = _version(version)
    cv = _jitter_cv(jitter_cv)
    rtt, reply, commit = _p("zk_rtt_ms"), _p("zk_reply_ms"), _p("zk_commit_ms")
    read_lat = _latencies(rng, n, rtt, cv)
    write_lat = _latencies(rng, n, rtt + commit, cv)
    if not beh.batched:
        requests = 2 + BROKERS  # led: LeaderAndIsr to both replicas; followed: StopReplica + LeaderAndIsr; + UM to all
        step_zk = read_lat + reply + write_lat + reply
        # a led partition's election logs the state of every partition of the cluster (KAFKA-6116)
        cluster = cluster_partitions(n) if cluster_size is None else int(cluster_size)
        election_log = _election_log_ms(beh, cluster)
        step_cpu = requests * beh.request_build_ms + np.where(leads, election_log, 0.0)
        end = np.cumsum(step_zk + step_cpu)
        phases = {
            "zookeeper_s": float(step_zk.sum()) / 1000,
            "requests_built_s": float(n * requests * beh.request_build_ms) / 1000,
            "election_log_s": float(leads.sum() * election_log) / 1000,
        }
        return {"written_ms": end - step_cpu, "sent_ms": end, "duration_ms": float(end[-1]), "phases": phases}
    written, sent = np.empty(n), np.empty(n)
    t, phases = 0.0, {}
    for role_mask, name in ((leads, "leaders"), (~leads, "followers")):
        idx = np.flatnonzero(role_mask)
        if idx.size == 0:
            continue
        t0 = t
        r_done = pipeline_completions(read_lat[idx], reply, beh.max_in_flight, t)
        w_done = pipeline_completions(write_lat[idx], reply, beh.max_in_flight, float(r_done[-1]))
        written[idx] = w_done
        t = float(w_done[-1])
        sent[idx] = t
        phases[f"zookeeper_{name}_s"] = (t - t0) / 1000
    return {"written_ms": written, "sent_ms": sent, "duration_ms": t, "phases": phases}


def controlled_shutdown_closed_form(*, partitions: int, version: str) -> float:
    """:func:`controlled_shutdown`'s duration (s) with every latency at its mean (no jitter), in one formula.

    1.0: ``N × (2·rtt + commit + 2·reply + 7·build) + led × cluster partitions × log cost per entry``: the
    last term, one election's log line per led partition, each as long as the cluster, is quadratic in N;
    1.1+: for the led and then the followed partitions, ``pipeline_time(reads) + pipeline_time(writes)``.
    """
    n = _count("partitions", partitions)
    beh = _version(version)
    rtt, reply, commit = _p("zk_rtt_ms"), _p("zk_reply_ms"), _p("zk_commit_ms")
    if not beh.batched:
        per = 2 * rtt + commit + 2 * reply + (2 + BROKERS) * beh.request_build_ms
        return (n * per + (n + 1) // 2 * _election_log_ms(beh, cluster_partitions(n))) / 1000
    total = 0.0
    for k in ((n + 1) // 2, n // 2):
        if k:
            total += pipeline_time(k, rtt, reply, beh.max_in_flight)
            total += pipeline_time(k, rtt + commit, reply, beh.max_in_flight)
    return total / 1000


# -- failover ------------------------------------------------------------------------------------------------
@dataclass
class FailoverResult:
    """The controller's broker dies (no clean shutdown): how long until the cluster is whole again."""

    partitions: int
    topics: int
    version: str
    load_s: float  #: the new controller reading the cluster's state
    unavailable_s: float  #: the crash → the last leaderless partition has a leader acting again
    phases: dict = field(repr=False)  #: the crash → session expiry → elected → loaded → leaders (ms)
    leader_back_ms: np.ndarray = field(repr=False)  #: per partition the dead broker led
    closed_form_load_s: float = 0.0

    def unavailable_over_time(self, points: int = 200) -> pd.DataFrame:
        back = np.sort(self.leader_back_ms)
        t = np.linspace(0, float(back[-1]) * 1.05 if back.size else 1.0, points)
        return pd.DataFrame({"time_s": t / 1000, "unavailable": back.size - np.searchsorted(back, t, side="right")})


def _failover_reads(partitions: int, topics: int) -> int:
    """ZooKeeper reads before the new controller can act: broker ids + each broker, the topic list,
    each topic's assignment, each partition's state (onControllerFailover → initializeControllerContext)."""
    return 1 + (BROKERS - 1) + 1 + topics + partitions


def controller_failover(
    *, partitions: int, version: str, seed: int = 0, topics: int | None = None, jitter_cv: float | None = None
):
    """The controller broker crashes; ``load_s`` is the new controller's state load, ``unavailable_s`` the time
    until the partitions the dead broker led have leaders again. The talk's setup: 50 partitions per topic
    (``topics`` = partitions / 50), 5 brokers, replication factor 2.

        >>> round(controller_failover(partitions=100_000, version="1.0").load_s)
        28
    """
    n = _count("partitions", partitions)
    beh = _version(version)
    t_count = max(1, n // 50) if topics is None else _count("topics", topics, 1, n)
    check_seed(seed)
    cv = _jitter_cv(jitter_cv)
    rng = _rng(seed, f"failover-{version}-{n}-{t_count}")
    rtt, reply, commit = _p("zk_rtt_ms"), _p("zk_reply_ms"), _p("zk_commit_ms")
    w = beh.max_in_flight
    expired = beh.session_timeout_ms
    notified = expired + rtt / 2  # the /controller deletion reaches the brokers' watches
    # election: read /controller, create it (2.1+: in one multi with /controller_epoch), 1.0/1.1 then bump the epoch
    ops = [rtt, rtt + commit] + ([] if beh.epoch_checked_writes else [rtt, rtt + commit])
    elected = float(pipeline_completions(_latencies(rng, len(ops), 1.0, cv) * np.array(ops), reply, 1, notified)[-1])
    reads = _failover_reads(n, t_count)
    loaded = float(pipeline_completions(_latencies(rng, reads, rtt, cv), reply, w, elected)[-1])
    # the partitions the dead broker led (1/5) are offline: elect the other replica, as a shutdown's leaders
    dead_led = max(1, n // BROKERS)
    new_leader = 1 + rng.integers(0, BROKERS - 1, dead_led)
    r_lat = _latencies(rng, dead_led, rtt, cv)
    w_lat = _latencies(rng, dead_led, rtt + commit, cv)
    if not beh.batched:
        # PartitionStateMachine.startup -> triggerOnlinePartitionStateChange: one election after another (a
        # read and a write, waited for; and, in the code the talk measured, the election's log line of all n
        # partitions), all into one batch of requests, sent when every election is done
        step = r_lat + reply + w_lat + reply + _election_log_ms(beh, n)
        t = loaded + float(step.sum())
    else:
        r_done = pipeline_completions(r_lat, reply, w, loaded)
        w_done = pipeline_completions(w_lat, reply, w, float(r_done[-1]))
        t = float(w_done[-1])
    # one LeaderAndIsr per new leader with all its partitions: they come back together
    per_broker = np.bincount(new_leader, minlength=BROKERS)
    back = t + _cost("LeaderAndIsr", per_broker)[new_leader]
    phases = {
        "session_expired_ms": expired,
        "elected_ms": elected,
        "loaded_ms": loaded,
        "leaders_ms": float(back.max()),
    }
    return FailoverResult(
        n,
        t_count,
        version,
        (loaded - elected) / 1000,
        float(back.max()) / 1000,
        phases,
        back,
        failover_closed_form(partitions=n, version=version, topics=t_count),
    )


def failover_closed_form(*, partitions: int, version: str, topics: int | None = None) -> float:
    """:func:`controller_failover`'s ``load_s`` with constant latencies: ``pipeline_time`` of every read."""
    n = _count("partitions", partitions)
    beh = _version(version)
    t_count = max(1, n // 50) if topics is None else topics
    return pipeline_time(_failover_reads(n, t_count), _p("zk_rtt_ms"), _p("zk_reply_ms"), beh.max_in_flight) / 1000


# -- the talk's table ----------------------------------------------------------------------------------------
def calibration_table(seed: int = 0) -> pd.DataFrame:
    """The talk's figures beside the model's, with the relative error and whether the row fixed a parameter."""
    check_seed(seed)
    rows = []
    for what, version, n, published in TALK_FIGURES:
        if what.startswith("controlled"):
            model = controlled_shutdown(partitions=n, version=version, seed=seed).duration_s
        else:
            model = controller_failover(partitions=n, version=version, seed=seed).load_s
        anchors = [p.name for p in CALIBRATION.values() if p.role == "anchor" and _anchored_by(p, what, version)]
        rows.append(
            {
                "figure": what,
                "version": version,
                "partitions": n,
                "talk_s": published,
                "model_s": round(model, 2),
                "error": round(model / published - 1, 3),
                "fixes": ", ".join(anchors) or "nothing (a prediction)",
            }
        )
    return pd.DataFrame(rows)


def _anchored_by(p: Parameter, what: str, version: str) -> bool:
    if what.startswith("failover"):
        return p.name in ("zk_rtt_ms", "zk_reply_ms") and version in ("1.0", "1.1")
    return version == "1.0" and p.name in ("request_build_ms_1_0", "election_log_us_per_entry_1_0")

"""KRaft's Raft (KIP-595): the metadata log, its leader election and its commit, as Kafka 4.0's ``KafkaRaftClient``.

Every controller is a *voter* and every broker an *observer* of the one Raft partition ``__cluster_metadata-0``
(docs/kafka-reference.md §8.4). Each node runs one :class:`RaftClient` on its own thread
(``kafka-<id>-raft-io-thread``): requests and responses arrive in its queue, and after each it *polls* its
state (``KafkaRaftClient.poll``), sending what that state sends and waiting until the next of its timers.

**The states** (``QuorumState``), the epoch and the vote persisted (``quorum-state``) before each transition:

- *Unattached* (no leader known in the epoch, a vote perhaps cast): a voter stands when its election timeout
  ends, uniform in [``election.timeout.ms``, 2 × it) = [1000, 2000) ms, drawn anew for each state (but a voter
  already Candidate or Unattached that sees a higher epoch keeps the time it had left, and a vote granted draws
  anew: ``transitionToUnattached``, ``transitionToUnattachedVotedState``); an observer has no election timeout
  (``Long.MAX_VALUE``) and fetches from a voter at random to find the leader;
- *Candidate*: epoch + 1, votes for itself, sends ``Vote`` (its last epoch and end offset) to every other voter;
  a majority of granted votes makes it leader. Rejected by too many to win, or its election timeout ended,
  it backs off ``min(100 × random.nextInt(2**retries), election.backoff.max.ms)`` ms and stands again at the
  next epoch;
- *Leader*: appends a ``LeaderChangeMessage`` at once (its epoch's start offset), sends ``BeginQuorumEpoch`` to
  every other voter and again every ``fetch.timeout.ms / 2`` = 1000 ms; records handed to it wait
  ``append.linger.ms`` (25 ms) in its accumulator and are then written as one batch. It *resigns* when a
  majority of the voters (itself counted) has not fetched from it within 1.5 × ``fetch.timeout.ms`` = 3000 ms
  (check-quorum), sending ``EndQuorumEpoch`` with its preferred successors;
- *Follower*: fetches from the leader; a voter stands when no fetch has succeeded for ``fetch.timeout.ms``
  (2000, not randomised), an observer then fetches from any voter to find the new leader;
- *Resigned*: the old leader, until its election timeout ends (then it stands).

**Vote**: a voter grants one vote per epoch (a higher epoch first moves it to Unattached in that epoch), to a
candidate whose log (last epoch, end offset) is at least as up to date as its own, and none while it knows
a leader of that epoch (``UnattachedState``/``FollowerState.canGrantVote``). Every response carries the
sender's epoch and leader: an older one is ignored, a newer one moves the receiver to it
(``maybeHandleCommonResponse``).

**Fetch and commit**: a follower's ``Fetch`` names its end offset and last fetched epoch; the leader answers
a *diverging epoch* where its log disagrees (the follower truncates, ``truncateToEndOffset``), else the
records from there on, and with nothing new parks the fetch up to 500 ms (``MAX_FETCH_WAIT_MS``). A parked
fetch completes when the leader's log grows, or at 500 ms with the answer it would have had when it was
parked: in 4.0 a high watermark that moves does not complete it (KAFKA-14145, KIP-1166, merged in 2025
after 4.0, changed that), so followers and observers learn of a commit with the next write, or at most 500 ms later. The leader's high
watermark is the end offset at index ``voters / 2`` of the voters' end offsets in descending order (the
largest offset a majority has), once it is past the epoch's start offset; observers do not count. A
follower's is ``min(leader's, own end offset)``. Listeners (the quorum controller, a broker's metadata
loader) get committed batches in order (``handleCommit``); a new leader's own listener hears of its
leadership only once it has caught up to the epoch's start offset (``maybeFireLeaderChange``).

**Requests** travel through the network model: one connection per destination over the controller
listener, at most one request in flight on it (``RequestManager``), ``request.timeout.ms`` 2000 (the
connection closes, ``REQUEST_TIMED_OUT``), ``retry.backoff.ms`` 20 after a failure or a refused connection.

**Persistent and not**: the log and the quorum state (epoch, vote, leader) are on disk and survive the
node's process; everything else (the role, timers, the accumulator, parked fetches, connections) is the
process's (``start`` builds it again). A restarted voter starts Unattached in its persisted epoch (its vote
kept), with its high watermark unknown until a leader tells it.

Simplifications, each said in docs/kafka-reference.md §7: 4.0's pre-vote (KIP-996, the *Prospective* state,
§8.1) is not modelled: a voter whose fetch timeout ends stands at once, as in 3.9; the voter set is static
(``controller.quorum.voters``), no snapshots (``FetchSnapshot``), no byte limits (a fetch returns every batch
from its offset, a batch holds at most 10,000 records); the raft thread's own work is ``io_ms`` per message.
"""

from __future__ import annotations

import contextlib
import math
from collections import deque
from dataclasses import dataclass, field
from itertools import count

from ..common.options import kafka_int
from ..network.request import Request
from ..network.socket_server import DISCONNECTED, ConnectionRefused
from .records import METADATA_TOPIC, MetadataRecord, RecordBatch

__all__ = [
    "RaftClient",
    "RaftLog",
    "QuorumConfig",
    "MAX_FETCH_WAIT_MS",
    "RETRY_BACKOFF_BASE_MS",
    "MAX_RECORDS_PER_BATCH",
    "RAFT_APIS",
]

#: ``KafkaRaftClient.MAX_FETCH_WAIT_MS``: a fetch with nothing new waits at most this long at the leader
MAX_FETCH_WAIT_MS = 500.0
#: ``KafkaRaftClient.RETRY_BACKOFF_BASE_MS``: the base of the binary exponential election backoff
RETRY_BACKOFF_BASE_MS = 100
#: ``QuorumController.MAX_RECORDS_PER_BATCH``: the most records the model puts in one Raft batch
MAX_RECORDS_PER_BATCH = 10_000
#: the requests of the Raft protocol (Kafka's API names)
RAFT_APIS = frozenset({"Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch"})


@dataclass(frozen=True)
class QuorumConfig:
    """``controller.quorum.*`` (``QuorumConfig``, 4.0 defaults, docs/kafka-reference.md §8.2)."""

    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    append_linger_ms: int = 25
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20

    def __post_init__(self):
        for name in (*self.__dataclass_fields__,):  # INT settings: Kafka's message for a Double, a Long, a bool
            v = getattr(self, name)
            if not isinstance(v, str):
                kafka_int(f"controller.quorum.{name[:-3].replace('_', '.')}.ms", v)
        for name in ("election_timeout_ms", "fetch_timeout_ms", "election_backoff_max_ms", "request_timeout_ms"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(
                    f"controller.quorum.{name[:-3].replace('_', '.')}.ms is a whole number of ms, at least 1, got {v!r}"
                )
        for name in ("append_linger_ms", "retry_backoff_ms"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(
                    f"controller.quorum.{name[:-3].replace('_', '.')}.ms is a whole number of ms, at least 0, got {v!r}"
                )

    @property
    def check_quorum_timeout_ms(self) -> float:
        """``LeaderState``: 1.5 × the fetch timeout."""
        return 1.5 * self.fetch_timeout_ms

    @property
    def begin_quorum_epoch_timeout_ms(self) -> float:
        """``LeaderState.beginQuorumEpochTimeoutMs``: half the fetch timeout."""
        return self.fetch_timeout_ms / 2


class RaftLog:
    """A node's replica of ``__cluster_metadata-0``: batches, their epochs, the high watermark (on disk, the log
    outlives the process; the high watermark is the process's, as ``KafkaMetadataLog``'s)."""

    def __init__(self):
        self.batches: list[RecordBatch] = []
        self.hw = 0

    @property
    def end_offset(self) -> int:
        return self.batches[-1].next_offset if self.batches else 0

    @property
    def last_epoch(self) -> int:
        """``lastFetchedEpoch``: the epoch of the last batch (0 when empty)."""
        return self.batches[-1].epoch if self.batches else 0

    def epochs(self) -> list:
        """The leader-epoch cache: ``[(epoch, start offset), ...]`` in order."""
        out = []
        for b in self.batches:
            if not out or out[-1][0] != b.epoch:
                out.append((b.epoch, b.base_offset))
        return out

    def end_offset_for_epoch(self, epoch: int) -> tuple:
        """``(epoch, end offset)`` as ``KafkaMetadataLog.endOffsetForEpoch`` (through ``LeaderEpochFileCache``):
        the largest epoch at or below ``epoch`` and where it ends; the log's end for its latest epoch or one
        above every epoch it has."""
        cache = self.epochs()
        if not cache or epoch >= cache[-1][0]:
            return (self.last_epoch if epoch > (cache[-1][0] if cache else 0) else epoch, self.end_offset)
        higher = next(((e, s) for e, s in cache if e > epoch), None)
        floor = [(e, s) for e, s in cache if e <= epoch]
        return (floor[-1][0] if floor else epoch, higher[1])

    def validate(self, offset: int, epoch: int):
        """``ReplicatedLog.validateOffsetAndEpoch``: None when a fetch at ``offset`` after ``epoch`` agrees with this
        log, else the diverging ``(epoch, end offset)`` to send back."""
        if offset == 0:
            return None
        e, end = self.end_offset_for_epoch(epoch)
        if e != epoch or end < offset:
            return (e, end)
        return None

    def append(self, batch: RecordBatch) -> None:
        if batch.base_offset != self.end_offset:
            raise RuntimeError(f"batch at {batch.base_offset} appended to a log ending at {self.end_offset}")
        self.batches.append(batch)

    def read(self, offset: int) -> tuple:
        """The batches from ``offset`` (a batch boundary) on."""
        return tuple(b for b in self.batches if b.base_offset >= offset)

    def truncate_to(self, offset: int) -> list:
        """Drop every batch at or after ``offset``; never below the high watermark (committed records stay)."""
        if offset < self.hw:
            raise RuntimeError(f"truncation to {offset}, below the high watermark {self.hw}: committed records lost")
        kept = [b for b in self.batches if b.next_offset <= offset]
        gone = self.batches[len(kept) :]
        self.batches = kept
        return gone

    def truncate_to_end_offset(self, epoch: int, end: int) -> int:
        """``truncateToEndOffset`` for a diverging epoch ``(epoch, end)``; the offset truncated to."""
        local_epoch, local_end = self.end_offset_for_epoch(epoch)
        offset = min(local_end, end) if local_epoch == epoch else local_end
        offset = min(offset, self.end_offset)
        self.truncate_to(offset)
        return offset

    def entries(self, upto: int | None = None) -> list:
        """``[(offset, epoch), ...]`` of every record below ``upto`` (all when None)."""
        out = []
        for b in self.batches:
            for i in range(len(b.records)):
                o = b.base_offset + i
                if upto is not None and o >= upto:
                    return out
                out.append((o, b.epoch))
        return out


@dataclass
class _Destination:
    """``RequestManager``'s state of one destination: its connection, the request in flight, the backoff."""

    connection: object = None
    in_flight: Request | None = None
    sent_ms: float = 0.0
    backoff_until: float = -math.inf


@dataclass
class _Listener:
    listener: object
    next_offset: int = 0
    fired: tuple = (None, -1)  # the (leader, epoch) last told


@dataclass
class _LeaderState:
    epoch_start: int
    voter_end: dict  # voter id -> its end offset (-1 until it fetches)
    check_quorum_deadline: float
    bqe_deadline: float = -math.inf
    fetched_voters: set = field(default_factory=set)
    pending: list = field(default_factory=list)  # records waiting in the accumulator
    pending_since: float | None = None
    uncommitted: deque = field(default_factory=deque)  # batches written, not yet committed
    resign_requested: bool = False


class RaftClient:
    """One node's ``KafkaRaftClient``: a voter (``voter=True``) or an observer, on its node's raft IO thread.

    ``peers`` maps each voter id to the object its connections go to (a controller node's ``connect``);
    ``node`` is this node's process gate (:class:`~kafka_lab.sim.server.node.Node`); ``rng`` its random stream (the
    election timeouts and backoffs, an observer's choice of voter); ``log`` the cluster's request log;
    ``history`` the quorum-wide :class:`RaftHistory` the checks and results read.
    """

    def __init__(
        self,
        env,
        node_id: int,
        *,
        voters: list,
        peers: dict,
        node,
        rng,
        request_log,
        history,
        listener_name: str = "CONTROLLER",
        config: QuorumConfig | None = None,
        io_ms: float = 0.01,
        client_host: str | None = None,
    ):
        self.env = env
        self.id = node_id
        self.voters = sorted(voters)
        self.is_voter = node_id in self.voters
        self.peers = peers
        self.node = node
        self.rng = rng
        self.request_log = request_log
        self.history = history
        self.listener_name = listener_name
        self.config = config or QuorumConfig()
        self.io_ms = io_ms
        self.client_id = f"raft-client-{node_id}"
        self.client_host = client_host or f"10.0.2.{node_id % 250}"
        # on disk: the log and the quorum state
        self.log = RaftLog()
        self.epoch = 0
        self.voted_for: int | None = None
        self.leader_id: int | None = None
        self._correlation = count()  # continued by the next process (as the brokers' clients, sim/fetcher.py)
        self.listeners: list[_Listener] = []
        self.role = "Unattached"
        self.running = False

    # -- the process -------------------------------------------------------------------------------------
    def bootstrap(self, epoch: int, leader_id: int, batches) -> None:
        """The state before t=0 (the cluster in steady state): ``batches`` committed, ``leader_id`` leading
        ``epoch``. Call before :meth:`start`."""
        for b in batches:
            self.log.append(b)
        self.log.hw = self.log.end_offset
        self.epoch, self.leader_id, self.voted_for = epoch, leader_id, leader_id
        self._epoch_start = next((b.base_offset for b in batches if b.epoch == epoch), 0)

    def start(self) -> None:
        """A new process: in-memory state from the persisted quorum state, then the raft IO thread."""
        self.running = True
        self.incarnation = self.node.incarnation
        self.inbound: deque = deque()
        self.destinations: dict = {}
        self.purgatory: list = []  # parked fetches: [req, respond, fetch offset, deadline, answer if it times out]
        self._wake = None
        self.lead: _LeaderState | None = None
        self.election_deadline = math.inf
        self.backoff_until: float | None = None
        self.fetch_deadline = math.inf
        self.retries = 0
        self.votes_granted: set = set()
        self.votes_rejected: set = set()
        self.unacked: set = set()
        self.preferred_successors: list = []
        self.election_started: float | None = None
        if getattr(self, "_started_once", False):
            for lst in self.listeners:  # a new process's listeners load the log from its start
                lst.next_offset, lst.fired = 0, (None, -1)
                reset = getattr(lst.listener, "handle_load_from_start", None)
                if reset is not None:
                    reset()
            self.log.hw = 0  # a restarted process knows no high watermark until a leader tells it
            self._become("Unattached", self.epoch, None, keep_vote=True)
        else:
            self._started_once = True
            if self.leader_id == self.id:
                self.role = "Leader"
                self._start_leading(bootstrapped=True)
            elif self.leader_id is not None:
                self.role = "Follower"
                self.fetch_deadline = self.env.now + self.config.fetch_timeout_ms
            else:
                self._become("Unattached", self.epoch, None, keep_vote=True)
            if self.leader_id is not None:  # the state it starts the run in, as its last transition left it
                self.history.transition(
                    self.env.now,
                    self.id,
                    ("Unattached", 0, None),
                    (self.role, self.epoch, self.leader_id),
                    self.log.end_offset,
                )
            for lst in self.listeners:
                lst.next_offset = self.log.hw
                lst.fired = (self.leader_id, self.epoch)
        self.node.on_stop.append(self._stopped)
        self.node.thread(self._run())

    def _stopped(self) -> None:
        """The process ended: its connections close (its peers see disconnections)."""
        self.running = False
        for d in self.destinations.values():
            if d.connection is not None:
                d.connection.close()
        self.destinations = {}
        with contextlib.suppress(ValueError):
            self.node.on_stop.remove(self._stopped)

    # -- entry points from other threads of the node ---------------------------------------------------------
    def register(self, listener) -> None:
        """``register``: ``listener.handle_commit(batches)`` and ``listener.handle_leader_change(leader, epoch)``
        are called on the raft thread; a listener hands them to its own thread."""
        self.listeners.append(_Listener(listener, self.log.hw, (self.leader_id, self.epoch)))

    def handle_request(self, req, respond) -> None:
        """An inbound request (``RaftManager.handleRequest``): answered by ``respond(req)`` from the raft thread."""
        self.inbound.append(("request", req, respond))
        self.wake()

    def next_write_offset(self) -> int:
        """The offset the next record handed to :meth:`prepare_append` gets (the controller's ``nextWriteOffset``)."""
        st = self.lead
        return self.log.end_offset + (len(st.pending) if st is not None else 0)

    def prepare_append(self, epoch: int, records: list) -> int:
        """``prepareAppend`` + ``schedulePreparedAppend``: ``records`` into the leader's accumulator, written at
        most ``append.linger.ms`` later; the offset of the last of them. ``NotLeaderException`` (a
        ``RuntimeError`` here) when this node does not lead ``epoch``."""
        if self.role != "Leader" or epoch != self.epoch or self.lead is None:
            raise NotLeader(f"node {self.id} is not the leader of epoch {epoch} (it is {self.role} in {self.epoch})")
        st = self.lead
        if not st.pending:
            st.pending_since = self.env.now
        st.pending.extend(records)
        self.wake()
        return self.log.end_offset + len(st.pending) - 1

    def resign(self, epoch: int) -> None:
        """``resign``: the controller renounces its leadership of ``epoch`` (at the next poll)."""
        if self.role == "Leader" and self.epoch == epoch and self.lead is not None:
            self.lead.resign_requested = True
            self.wake()

    def wake(self) -> None:
        w = getattr(self, "_wake", None)
        if w is not None and not w.triggered:
            w.succeed()

    @property
    def leader_and_epoch(self) -> tuple:
        return (self.leader_id, self.epoch)

    # -- the raft IO thread --------------------------------------------------------------------------------
    def _run(self):
        env = self.env
        timeout = env.timeout
        while True:
            while self.inbound:
                msg = self.inbound.popleft()
                if self.io_ms:
                    yield timeout(self.io_ms)
                if msg[0] == "request":
                    self._handle_request(msg[1], msg[2])
                else:
                    self._handle_response(msg[1], msg[2])
            wait = self._poll()
            self._poll_listeners()
            if self.inbound:
                continue
            self._wake = env.event()
            if wait == math.inf:
                yield self._wake
            else:
                yield env.any_of([self._wake, timeout(max(wait, 0.0))])
            self._wake = None

    # -- transitions ---------------------------------------------------------------------------------------
    def _become(self, role: str, epoch: int, leader: int | None, *, keep_vote: bool = False) -> None:
        """A durable transition (``QuorumState``): the new epoch, vote and leader, then the role's timers."""
        old = (self.role, self.epoch, self.leader_id)
        old_deadline = self.election_deadline
        if epoch != self.epoch and not keep_vote:
            self.voted_for = None
        self.role, self.epoch, self.leader_id = role, epoch, leader
        now = self.env.now
        self.election_deadline = math.inf
        self.fetch_deadline = math.inf
        self.backoff_until = None
        if role == "Unattached" and not self.is_voter:
            pass  # an observer never stands: its election timeout is Long.MAX_VALUE (transitionToUnattached)
        elif role == "Unattached" and epoch > old[1] and old[0] in ("Candidate", "Unattached"):
            self.election_deadline = old_deadline  # a higher epoch seen: the election time left is kept
        elif role in ("Unattached", "Candidate", "Resigned"):
            self.election_deadline = now + self._random_election_timeout()
        if role == "Follower":
            self.fetch_deadline = now + self.config.fetch_timeout_ms
        if role != "Leader":
            if self.lead is not None:
                self._fail_parked_fetches("NOT_LEADER_OR_FOLLOWER")
            self.lead = None
        self.destinations_reset()
        self.history.transition(now, self.id, old, (role, epoch, leader), self.log.end_offset)

    def _random_election_timeout(self) -> float:
        """``QuorumState.randomElectionTimeoutMs``: ``electionTimeoutMs + random.nextInt(electionTimeoutMs)``."""
        t = self.config.election_timeout_ms
        return float(t + int(self.rng.integers(t)))

    def destinations_reset(self) -> None:
        """``resetConnections``: no request is expected back any more (connections stay open)."""
        for d in self.destinations.values():
            d.in_flight = None
            d.backoff_until = -math.inf

    def _transition_to_candidate(self) -> None:
        self.retries = self.retries + 1 if self.role == "Candidate" else 1
        self._become("Candidate", self.epoch + 1, None)
        self.voted_for = self.id
        self.votes_granted, self.votes_rejected = {self.id}, set()
        if not self._maybe_become_leader() and self.election_started is None:
            self.election_started = self.env.now

    def _maybe_become_leader(self) -> bool:
        if self.role == "Candidate" and len(self.votes_granted) > len(self.voters) // 2:
            self._become("Leader", self.epoch, self.id, keep_vote=True)
            self._start_leading()
            return True
        return False

    def _start_leading(self, bootstrapped: bool = False) -> None:
        """``onBecomeLeader``: the epoch starts at the log's end with a ``LeaderChangeMessage``."""
        now = self.env.now
        start = self.log.end_offset if not bootstrapped else self._epoch_start
        self.lead = _LeaderState(
            epoch_start=start,
            voter_end={v: (-1 if v != self.id else self.log.end_offset) for v in self.voters},
            check_quorum_deadline=now + self.config.check_quorum_timeout_ms,
        )
        if bootstrapped:
            for v in self.voters:
                self.lead.voter_end[v] = self.log.end_offset
            return
        self._update_election_latency()
        granting = sorted(self.votes_granted)
        msg = MetadataRecord(
            "LeaderChangeMessage",
            {"LeaderId": self.id, "Voters": list(self.voters), "GrantingVoters": granting},
            decided_ms=now,
            controller_id=self.id,
        )
        self._write_batch([msg])

    def _update_election_latency(self) -> None:
        """``maybeUpdateElectionLatency``: from becoming candidate to becoming leader or follower."""
        if self.election_started is not None:
            self.history.metric(self.env.now, self.id, "election-latency", self.env.now - self.election_started)
            self.election_started = None

    def _transition_to_follower(self, epoch: int, leader: int) -> None:
        self._become("Follower", epoch, leader)
        self._update_election_latency()

    def _maybe_transition(self, leader: int | None, epoch: int) -> None:
        """``maybeTransition``: a newer epoch (with or without a leader), or a leader of this epoch learnt."""
        if epoch > self.epoch:
            if leader is not None and leader >= 0:
                self._transition_to_follower(epoch, leader)
            else:
                self._become("Unattached", epoch, None)
        elif leader is not None and leader >= 0 and self.leader_id is None and epoch == self.epoch:
            self._transition_to_follower(epoch, leader)

    # -- the leader's writes -------------------------------------------------------------------------------
    def _write_batch(self, records: list) -> RecordBatch:
        """Append ``records`` to the log as one batch of this epoch (``appendAsLeader``), then the leader's own
        end offset, the high watermark, and the parked fetches."""
        now = self.env.now
        batch = RecordBatch(self.log.end_offset, self.epoch, tuple(records), now)
        self.log.append(batch)
        self.history.appended(batch, self.id)
        st = self.lead
        st.uncommitted.append(batch)
        st.voter_end[self.id] = self.log.end_offset
        self._maybe_update_hw()
        self._complete_parked_fetches()
        return batch

    def _drain(self) -> float:
        """``maybeAppendBatches``: write the accumulator once it has lingered; ms until it must be drained."""
        st = self.lead
        if not st.pending:
            return math.inf
        due = st.pending_since + self.config.append_linger_ms
        if self.env.now < due:
            return due - self.env.now
        records, st.pending, st.pending_since = st.pending, [], None
        for i in range(0, len(records), MAX_RECORDS_PER_BATCH):
            self._write_batch(records[i : i + MAX_RECORDS_PER_BATCH])
        return math.inf

    def _maybe_update_hw(self) -> None:
        """``LeaderState.maybeUpdateHighWatermark``: index ``voters // 2`` of the voters' end offsets, descending,
        once past the epoch's start offset; only forward."""
        st = self.lead
        ends = sorted(st.voter_end.values(), reverse=True)
        candidate = ends[len(self.voters) // 2]
        if candidate > st.epoch_start and candidate > self.log.hw:
            self.log.hw = candidate
            now = self.env.now
            while st.uncommitted and st.uncommitted[0].next_offset <= candidate:
                b = st.uncommitted.popleft()
                self.history.committed(b, now)
                # commit-latency: (commit time - append time) / the batch's records (appendBatch)
                self.history.metric(now, self.id, "commit-latency", (now - b.append_ms) / len(b.records))

    # -- poll -----------------------------------------------------------------------------------------------
    def _poll(self) -> float:
        """``pollCurrentState``: act on the state's timers; ms until the next one."""
        self._expire_requests()
        role = self.role
        if role == "Leader":
            return self._poll_leader()
        if role == "Candidate":
            return self._poll_candidate()
        if role == "Follower":
            return self._poll_follower()
        if role == "Unattached":
            return self._poll_unattached()
        return self._poll_resigned()

    def _poll_leader(self) -> float:
        now, st = self.env.now, self.lead
        single = len(self.voters) == 1
        if st.resign_requested or (not single and now >= st.check_quorum_deadline):
            if not st.resign_requested:
                self.history.event(now, self.id, "check_quorum_resign", {"epoch": self.epoch})
            self._resign()
            return 0.0
        wait = self._drain()
        wait = min(wait, self._complete_expired_fetches())
        if now >= st.bqe_deadline:
            for v in self.voters:
                if v != self.id:
                    self._send(v, "BeginQuorumEpoch", {"leader_id": self.id, "leader_epoch": self.epoch})
            st.bqe_deadline = now + self.config.begin_quorum_epoch_timeout_ms
        wait = min(wait, st.bqe_deadline - now)
        if not single:
            wait = min(wait, st.check_quorum_deadline - now)
        return wait

    def _resign(self) -> None:
        """``transitionToResigned``: parked fetches fail, ``EndQuorumEpoch`` to the others with the preferred
        successors (the voters by descending fetched offset)."""
        st = self.lead
        successors = sorted((v for v in self.voters if v != self.id), key=lambda v: (-st.voter_end[v], v))
        self._fail_parked_fetches("NOT_LEADER_OR_FOLLOWER")
        self.preferred_successors = successors
        self._become("Resigned", self.epoch, self.id, keep_vote=True)
        self.unacked = set(successors)

    def _poll_resigned(self) -> float:
        now = self.env.now
        for v in sorted(self.unacked):
            self._send(
                v,
                "EndQuorumEpoch",
                {"leader_id": self.id, "leader_epoch": self.epoch, "preferred_successors": self.preferred_successors},
            )
        if now >= self.election_deadline:
            self._transition_to_candidate()
            return 0.0
        return self.election_deadline - now

    def _poll_candidate(self) -> float:
        now = self.env.now
        if self.backoff_until is not None:
            if now >= self.backoff_until:
                self.history.event(now, self.id, "reelect_after_backoff", {"epoch": self.epoch})
                self._transition_to_candidate()
                return 0.0
            return self.backoff_until - now
        if now >= self.election_deadline:
            backoff = self._binary_exponential_backoff()
            self.history.event(now, self.id, "election_timed_out", {"epoch": self.epoch, "backoff_ms": backoff})
            self.backoff_until = now + backoff
            return backoff
        if not self._vote_rejected():
            last_epoch, end = self.log.last_epoch, self.log.end_offset
            for v in self.voters:
                if v not in self.votes_granted and v not in self.votes_rejected and v != self.id:
                    self._send(
                        v,
                        "Vote",
                        {
                            "candidate_id": self.id,
                            "candidate_epoch": self.epoch,
                            "last_offset_epoch": last_epoch,
                            "last_offset": end,
                        },
                    )
        return min(self.election_deadline - now, self._next_retry(now))

    def _vote_rejected(self) -> bool:
        """``CandidateState.isVoteRejected``: too many rejections left for a majority."""
        return len(self.voters) - len(self.votes_rejected) <= len(self.voters) // 2

    def _binary_exponential_backoff(self) -> float:
        """``binaryExponentialElectionBackoffMs``: ``min(100 × nextInt(2 << min(20, retries − 1)), max)``."""
        bound = 2 << min(20, self.retries - 1)
        return float(min(RETRY_BACKOFF_BASE_MS * int(self.rng.integers(bound)), self.config.election_backoff_max_ms))

    def _poll_follower(self) -> float:
        now = self.env.now
        if self.is_voter:
            if now >= self.fetch_deadline:
                self.history.event(now, self.id, "fetch_timeout", {"epoch": self.epoch, "leader": self.leader_id})
                self._transition_to_candidate()
                return 0.0
            self._send_fetch(self.leader_id)
            return min(self.fetch_deadline - now, self._next_retry(now))
        # an observer
        if now >= self.fetch_deadline:
            return self._send_any_voter_fetch()
        d = self.destinations.get(self.leader_id)
        if d is not None and d.backoff_until > now:
            return min(self._send_any_voter_fetch(), self.fetch_deadline - now)
        if not any(x.in_flight is not None for x in self.destinations.values()):
            self._send_fetch(self.leader_id)
        return min(self.fetch_deadline - now, self._next_retry(now))

    def _poll_unattached(self) -> float:
        now = self.env.now
        if self.is_voter:
            if now >= self.election_deadline:
                self._transition_to_candidate()
                return 0.0
            return self.election_deadline - now
        return min(self._send_any_voter_fetch(), self.election_deadline - now)

    def _send_any_voter_fetch(self) -> float:
        """``maybeSendAnyVoterFetch``: an observer asks a random ready voter (to find the leader)."""
        now = self.env.now
        if any(d.in_flight is not None for d in self.destinations.values()):
            return self._next_retry(now)
        ready = [v for v in self.voters if self._ready(v, now)]
        if not ready:
            return self._next_retry(now)
        self._send_fetch(ready[int(self.rng.integers(len(ready)))])
        return self._next_retry(now)

    def _send_fetch(self, dest: int) -> None:
        self._send(
            dest,
            "Fetch",
            {
                "replica_id": self.id,
                "fetch_offset": self.log.end_offset,
                "last_fetched_epoch": self.log.last_epoch,
                "current_leader_epoch": self.epoch,
                "max_wait_ms": MAX_FETCH_WAIT_MS,
            },
        )

    # -- requests out ------------------------------------------------------------------------------------------
    def _ready(self, dest: int, now: float) -> bool:
        d = self.destinations.get(dest)
        return d is None or (d.in_flight is None and d.backoff_until <= now)

    def _next_retry(self, now: float) -> float:
        """The time until some destination's backoff or request timeout ends."""
        t = math.inf
        for d in self.destinations.values():
            if d.in_flight is not None:
                t = min(t, d.sent_ms + self.config.request_timeout_ms - now)
            elif d.backoff_until > now:
                t = min(t, d.backoff_until - now)
        return max(t, 0.0)

    def _send(self, dest: int, api: str, payload: dict) -> None:
        """``maybeSendRequest``: to ``dest`` if it is ready (nothing in flight, not backing off)."""
        now = self.env.now
        if not self._ready(dest, now):
            return
        d = self.destinations.setdefault(dest, _Destination())
        if d.connection is None or d.connection.closed:
            try:
                d.connection = self.peers[dest].connect(
                    self.listener_name, self.client_id, client_host=self.client_host
                )
            except ConnectionRefused:
                d.connection = None
                d.backoff_until = now + self.config.retry_backoff_ms
                return
        inc = self.incarnation
        req = Request(
            api,
            next(self._correlation),
            self.client_id,
            partitions=(METADATA_TOPIC,),
            payload={**payload, "epoch": self.epoch, "source": self.id},
            on_done=lambda r, inc=inc, dest=dest: self._response_arrived(r, dest, inc),
        )
        d.in_flight, d.sent_ms = req, now
        self.request_log.append(req)
        d.connection.send(req)

    def _response_arrived(self, req, dest: int, incarnation: int) -> None:
        """A response (or a lost connection) on a connection of ``incarnation``: queued for the raft thread."""
        if incarnation != self.node.incarnation or not self.running:
            return
        self.inbound.append(("response", req, dest))
        self.wake()

    def _expire_requests(self) -> None:
        """``request.timeout.ms``: an unanswered request closes its connection and fails (REQUEST_TIMED_OUT)."""
        now = self.env.now
        for dest, d in self.destinations.items():
            if d.in_flight is not None and now >= d.sent_ms + self.config.request_timeout_ms:  # as _next_retry adds
                d.in_flight = None
                if d.connection is not None:
                    d.connection.close()
                    d.connection = None
                d.backoff_until = now + self.config.retry_backoff_ms
                self.history.event(now, self.id, "request_timed_out", {"destination": dest})

    # -- responses -------------------------------------------------------------------------------------------
    def _handle_response(self, req, dest: int) -> None:
        d = self.destinations.get(dest)
        if d is None or d.in_flight is not req:
            return  # not expected any more (resetConnections since it was sent)
        d.in_flight = None
        now = self.env.now
        if req.error == DISCONNECTED or req.result is None:
            d.backoff_until = now + self.config.retry_backoff_ms
            if d.connection is not None and d.connection.closed:
                d.connection = None
            return
        ok = self._handle_response_body(req.api, req.result, dest)
        if not ok:
            d.backoff_until = now + self.config.retry_backoff_ms

    def _common(self, error: str, leader: int | None, epoch: int) -> bool | None:
        """``maybeHandleCommonResponse``: True/False when handled here, None when the caller goes on."""
        if epoch < self.epoch or error == "UNKNOWN_LEADER_EPOCH":
            return True
        if epoch > self.epoch or error in ("FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER"):
            self._maybe_transition(leader, epoch)
            return True
        if epoch == self.epoch and leader is not None and leader >= 0 and self.leader_id is None:
            self._transition_to_follower(epoch, leader)
            return None if error == "NONE" else True
        if error == "BROKER_NOT_AVAILABLE":
            return False
        return None

    def _handle_response_body(self, api: str, r: dict, dest: int) -> bool:
        handled = self._common(r["error"], r.get("leader_id"), r["epoch"])
        if handled is not None:
            return handled
        if r["error"] != "NONE":
            return False
        if api == "Vote":
            if self.role == "Candidate":
                if r["vote_granted"]:
                    self.votes_granted.add(dest)
                    self._maybe_become_leader()
                else:
                    self.votes_rejected.add(dest)
                    if self._vote_rejected() and self.backoff_until is None:
                        backoff = self._binary_exponential_backoff()
                        self.history.event(
                            self.env.now,
                            self.id,
                            "votes_rejected",
                            {"epoch": self.epoch, "rejected_by": sorted(self.votes_rejected), "backoff_ms": backoff},
                        )
                        self.backoff_until = self.env.now + backoff
            return True
        if api == "BeginQuorumEpoch":
            return True
        if api == "EndQuorumEpoch":
            self.unacked.discard(dest)
            return True
        # Fetch
        if self.role != "Follower":
            return True
        div = r.get("diverging")
        if div is not None:
            offset = self.log.truncate_to_end_offset(*div)
            self.history.event(self.env.now, self.id, "truncated", {"offset": offset, "leader": self.leader_id})
        else:
            for b in r["batches"]:
                if b.base_offset == self.log.end_offset:
                    self.log.append(b)
            hw = r["hw"]
            if hw >= 0:
                new = min(self.log.end_offset, hw)
                if new > self.log.hw:
                    self.log.hw = new
        self.fetch_deadline = self.env.now + self.config.fetch_timeout_ms
        return True

    # -- requests in ----------------------------------------------------------------------------------------
    def _answer(self, req, respond, error: str, **extra) -> None:
        req.result = {"error": error, "epoch": self.epoch, "leader_id": self.leader_id, **extra}
        respond(req)

    def _handle_request(self, req, respond) -> None:
        p, api = req.payload, req.api
        if api == "Fetch":
            self._handle_fetch(req, respond)
            return
        if api == "Vote":
            cid, cepoch = p["candidate_id"], p["candidate_epoch"]
            if cepoch < self.epoch:
                self._answer(req, respond, "FENCED_LEADER_EPOCH", vote_granted=False)
                return
            if cepoch > self.epoch:
                self._become("Unattached", cepoch, None)
            up_to_date = (p["last_offset_epoch"], p["last_offset"]) >= (self.log.last_epoch, self.log.end_offset)
            granted = self._can_grant_vote(cid, up_to_date)
            if granted and self.role == "Unattached" and self.voted_for is None:
                self.voted_for = cid  # transitionToUnattachedVotedState: persisted, a fresh election timeout
                self.election_deadline = self.env.now + self._random_election_timeout()
                self.history.transition(
                    self.env.now,
                    self.id,
                    ("Unattached", self.epoch, None),
                    ("Unattached", self.epoch, None),
                    self.log.end_offset,
                    voted_for=cid,
                )
            self.history.event(self.env.now, self.id, "vote", {"candidate": cid, "epoch": cepoch, "granted": granted})
            self._answer(req, respond, "NONE", vote_granted=granted)
            return
        if api in ("BeginQuorumEpoch", "EndQuorumEpoch"):
            lid, lepoch = p["leader_id"], p["leader_epoch"]
            if lepoch < self.epoch:
                self._answer(req, respond, "FENCED_LEADER_EPOCH")
                return
            self._maybe_transition(lid, lepoch)
            if api == "EndQuorumEpoch" and self.role == "Follower" and self.leader_id == lid:
                backoff = self._end_epoch_backoff(p.get("preferred_successors", []))
                self.fetch_deadline = self.env.now + backoff  # overrideFetchTimeout
            self._answer(req, respond, "NONE")
            return
        raise ValueError(f"the raft client does not handle {api}")

    def _can_grant_vote(self, candidate: int, up_to_date: bool) -> bool:
        """``canGrantVote`` of the current state."""
        if self.role == "Unattached":
            if self.voted_for is not None:
                return self.voted_for == candidate
            return up_to_date
        if self.role == "Candidate":
            return candidate == self.id
        return False  # Follower (it knows a leader), Leader, Resigned

    def _end_epoch_backoff(self, successors: list) -> float:
        """``strictExponentialElectionBackoffMs``: at once when first, else ``max >> (n − 1) << (position − 1)``."""
        n = len(successors)
        pos = successors.index(self.id) if self.id in successors else n
        if pos == 0:
            return 0.0
        if pos >= n:
            return float(self.config.election_backoff_max_ms)
        base = self.config.election_backoff_max_ms >> (n - 1)
        return float(min(self.config.election_backoff_max_ms, base << (pos - 1)))

    def _handle_fetch(self, req, respond) -> None:
        """``handleFetchRequest``: validate the epoch, answer a divergence or the records, or park the fetch."""
        p = req.payload
        answer = self._try_complete_fetch(p)
        if answer["error"] != "NONE" or answer["batches"] or answer.get("diverging") is not None:
            req.result = answer
            respond(req)
            return
        self.purgatory.append([req, respond, p["fetch_offset"], self.env.now + p["max_wait_ms"], answer])

    def _try_complete_fetch(self, p: dict) -> dict:
        """``tryCompleteFetchRequest``: the answer to a fetch now (and the leader's record of the replica)."""
        base = {"epoch": self.epoch, "leader_id": self.leader_id, "hw": -1, "batches": (), "diverging": None}
        ce = p["current_leader_epoch"]
        if ce < self.epoch:
            return {**base, "error": "FENCED_LEADER_EPOCH"}
        if ce > self.epoch:
            return {**base, "error": "UNKNOWN_LEADER_EPOCH"}
        if self.role != "Leader":
            return {**base, "error": "NOT_LEADER_OR_FOLLOWER"}
        st, rid, offset = self.lead, p["replica_id"], p["fetch_offset"]
        diverging = self.log.validate(offset, p["last_fetched_epoch"])
        if diverging is not None:
            return {**base, "error": "NONE", "hw": self.log.hw, "diverging": diverging}
        if rid in st.voter_end and rid != self.id:
            self._update_check_quorum(rid)
            if offset != st.voter_end[rid]:
                st.voter_end[rid] = offset
                self._maybe_update_hw()
        return {**base, "error": "NONE", "hw": self.log.hw, "batches": self.log.read(offset)}

    def _update_check_quorum(self, voter: int) -> None:
        """``updateCheckQuorumForFollowingVoter``: a majority of the others fetched → the timer starts again."""
        st = self.lead
        st.fetched_voters.add(voter)
        majority = len(self.voters) // 2 + 1 - 1  # the leader counts itself
        if len(st.fetched_voters) >= majority:
            st.fetched_voters.clear()
            st.check_quorum_deadline = self.env.now + self.config.check_quorum_timeout_ms

    def _complete_parked_fetches(self) -> None:
        """``fetchPurgatory.maybeComplete(endOffset)``: parked fetches below the new end offset complete."""
        if not self.purgatory:
            return
        end = self.log.end_offset
        keep = []
        for entry in self.purgatory:
            req, respond, offset, _deadline, _answer = entry
            if offset < end:
                req.result = self._try_complete_fetch(req.payload)
                respond(req)
            else:
                keep.append(entry)
        self.purgatory = keep

    def _complete_expired_fetches(self) -> float:
        """Parked fetches whose 500 ms ended get the answer built when they were parked; ms to the next."""
        now = self.env.now
        keep, nxt = [], math.inf
        for entry in self.purgatory:
            req, respond, _offset, deadline, answer = entry
            if deadline <= now:
                req.result = answer
                respond(req)
            else:
                keep.append(entry)
                nxt = min(nxt, deadline - now)
        self.purgatory = keep
        return nxt

    def _fail_parked_fetches(self, error: str) -> None:
        for req, respond, _o, _d, _a in self.purgatory:
            req.result = {
                "error": error,
                "epoch": self.epoch,
                "leader_id": self.leader_id,
                "hw": -1,
                "batches": (),
                "diverging": None,
            }
            respond(req)
        self.purgatory = []

    # -- listeners --------------------------------------------------------------------------------------------
    def _poll_listeners(self) -> None:
        """``pollListeners``: committed batches not yet delivered, then a leader change not yet told (for this
        node's own leadership, only once the listener has caught up to the epoch's start)."""
        hw = self.log.hw
        for lst in self.listeners:
            if lst.next_offset < hw:
                batches = [b for b in self.log.batches if b.base_offset >= lst.next_offset and b.next_offset <= hw]
                if batches:
                    lst.listener.handle_commit(batches)
                    lst.next_offset = batches[-1].next_offset
            if self.role == "Resigned":
                continue  # a resigned leader tells no one (KAFKA-17333): the next epoch does
            current = (self.leader_id, self.epoch) if self.role in ("Leader", "Follower") else (None, self.epoch)
            if current != lst.fired:
                if self.role == "Leader" and lst.next_offset < self.lead.epoch_start:
                    continue
                lst.fired = current
                lst.listener.handle_leader_change(current[0], current[1])


class NotLeader(RuntimeError):
    """``NotLeaderException``: an append to a node that does not lead the epoch."""


class RaftHistory:
    """What the quorum did, for the results, the logs and the checks (kept outside any node: a record, not state).

    - ``transitions``: (time_ms, node, (role, epoch, leader) before, after, log end offset, voted_for);
    - ``batches``: every batch any leader wrote: ``{(base offset, epoch): [batch, leader, committed_ms]}``;
    - ``events``: (time_ms, node, event, detail) (fetch timeouts, votes, truncations, resignations, ...);
    - ``metrics``: (time_ms, node, metric, value) for the raft metrics that are observations
      (``election-latency``, ``commit-latency``).
    """

    def __init__(self):
        self.transitions: list = []
        self.batches: dict = {}
        self.events: list = []
        self.metrics: list = []

    def transition(self, t, node, before, after, end_offset, voted_for=None) -> None:
        self.transitions.append((t, node, before, after, end_offset, voted_for))

    def appended(self, batch, leader) -> None:
        self.batches[(batch.base_offset, batch.epoch)] = [batch, leader, math.nan]

    def committed(self, batch, t) -> None:
        entry = self.batches.get((batch.base_offset, batch.epoch))
        if entry is not None and math.isnan(entry[2]):
            entry[2] = t

    def event(self, t, node, kind, detail) -> None:
        self.events.append((t, node, kind, detail))

    def metric(self, t, node, name, value) -> None:
        self.metrics.append((t, node, name, value))

    def leaders(self) -> dict:
        """``{epoch: {node ids that became its leader}}``."""
        out: dict = {}
        for _t, node, _b, (role, epoch, _l), _e, _v in self.transitions:
            if role == "Leader":
                out.setdefault(epoch, set()).add(node)
        return out

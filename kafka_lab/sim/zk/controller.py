"""The controller (Kafka 2.8, ZooKeeper mode): partition state, its writes, and its channel to brokers.

One broker is the controller. It keeps every partition's ``LeaderAndIsr`` state (leader, leader epoch,
ISR, replicas and the znode's ``zkVersion``), writes every change to ZooKeeper first
(``/brokers/topics/<t>/partitions/<p>/state``; here a write takes ``zk_latency_ms``), and only then
tells the brokers:

- **a leader move** (:meth:`Controller.elect_leader`): leader epoch + 1, then ``LeaderAndIsr`` to every
  replica and ``UpdateMetadata`` to every live broker (``ControllerBrokerRequestBatch``);
- **AlterIsr** from a leader (:meth:`Controller.handle_alter_isr`, KIP-497): a stale leader epoch is
  ``FENCED_LEADER_EPOCH``, a wrong ``zkVersion`` ``INVALID_UPDATE_VERSION``, a request from a broker
  epoch the controller does not know ``STALE_BROKER_EPOCH``; accepted changes are written, answered,
  and published with ``UpdateMetadata`` (not LeaderAndIsr) to every live broker;
- **topic deletion** (:meth:`Controller.delete_topic`): ``StopReplica(deletePartition=false)`` then
  ``StopReplica(deletePartition=true)`` (leader epoch -2) to every replica; the topic is gone when every
  replica has answered the second (Kafka then deletes ``/brokers/topics/<topic>``: the cluster stops
  listing it, and its name may be created again).

- **a broker leaving** (:meth:`Controller.handle_controlled_shutdown`, ``doControlledShutdown``): each
  partition it leads moves to the first replica of its assignment that is in the ISR, live and not
  shutting down (``ControlledShutdownPartitionLeaderElectionStrategy``; the ISR loses the broker), then
  ``StopReplica(deletePartition=false)`` to it for the partitions it follows, which leave their ISR
  (``OfflineReplica``: leader epoch + 1, LeaderAndIsr to the other replicas); the reply names the
  partitions it still leads. When its session is gone (:meth:`Controller.on_broker_failure`) it leaves
  the live brokers and every broker hears so with ``UpdateMetadata``. A partition it still led is
  *offline* and elects the first replica of its assignment that is live and in the ISR
  (``OfflinePartitionLeaderElectionStrategy``); its replicas leave their ISRs (``OfflineReplica``), except
  where it is the ISR's last member: that replica stays, and a partition with no one to elect stays
  offline (leader -1) until it comes back. Only a topic with ``unclean.leader.election.enable=true``
  (false by default, :meth:`Controller.enable_unclean_leader_election`) elects a live replica outside
  the ISR instead: an *unclean* election, whose leader may lack acknowledged records;
- **a broker joining** (:meth:`Controller.on_broker_startup`, ``onBrokerStartup``): ``UpdateMetadata``
  without partitions to the others, with every partition to it, ``LeaderAndIsr`` for each replica
  it holds, then an election for each offline partition it can lead (``triggerOnlinePartitionStateChange``);
- **a new controller** (:meth:`Controller.fail_over`): the old one resigns (its queued requests are
  dropped with its channels), the brokers race through the ZooKeeper data tree (:meth:`Controller._elect`:
  read ``/controller``, read ``/controller_epoch``, one multi that creates ``/controller``, ephemeral, and
  sets the epoch + 1 at the version read; the first multi wins, the others fail ``NODEEXISTS``), the
  winner reads the cluster's state and sends ``UpdateMetadata`` and ``LeaderAndIsr``
  for every partition (``onControllerFailover``; brokers ignore a leader epoch they already have); then
  the replicas of brokers that are gone go offline and offline partitions elect, as above.

Each of these is kept in :attr:`Controller.events` (time, controller id, event, broker or epoch), the
record the controller's log is written from.

The channel (``ControllerChannelManager``): one queue per broker and one request in flight. The control
plane has two sides (KIP-291, docs/kafka-reference.md §2): the controller picks the listener it connects
to on every broker from *its own* config (``addNewBroker``: ``control.plane.listener.name``, else its
inter-broker listener; :func:`controller_route`), and the broker serves that listener on its dedicated
control plane only if *it* names it too, else on its data plane, behind its clients' requests. A new
controller builds its channels again (``onControllerFailover``), so after a controller move the new
controller's config decides. Every request carries the controller's id and epoch, which brokers use to
fence an older controller.
A send that fails (the broker refuses the connection, or closes it with the request in flight: its
process stopped) is tried again on a new connection 100 ms later (``RequestSendThread``: "Reconnecting to
broker", ``backoff()``), the same request, until the broker answers or the channel is removed
(``onBrokerFailure``'s ``removeBroker``, a new controller).

Every decision is kept (:attr:`Controller.decisions`: time, partition, leader, leader epoch, the ISR and
znode version it wrote, and the partition's state before it), so the staleness of each broker's metadata
can be measured from the moment the controller decided, and its ``Changed partition`` line written as it
stood then.
"""

from __future__ import annotations

import math
from collections import deque

from ..common.options import check_time
from ..network.request import Request
from ..network.socket_server import DISCONNECTED, ConnectionRefused
from ..server.apis import CONTROLLER_APIS
from .zookeeper import Check, Create, Delete, GetData, Multi, SetData, ZkError, Znode

#: ``RequestSendThread.backoff()``: ``pause(100, TimeUnit.MILLISECONDS)`` before a failed send is tried again
CONTROLLER_SEND_RETRY_MS = 100.0

#: the ``toString`` of the election strategies, as a failed election's exception names them
#: (``triggerOnlinePartitionStateChange`` passes ``allowUnclean = false``; the topic's own setting is read apart)
OFFLINE_STRATEGY = "OfflinePartitionLeaderElectionStrategy(false)"
SHUTDOWN_STRATEGY = "ControlledShutdownPartitionLeaderElectionStrategy"

__all__ = [
    "Controller",
    "ControllerChannel",
    "controller_route",
    "state_path",
    "OFFLINE_STRATEGY",
    "SHUTDOWN_STRATEGY",
]


def state_path(tp) -> str:
    """A partition's state znode (``TopicPartitionStateZNode.path``)."""
    return f"/brokers/topics/{tp[0]}/partitions/{tp[1]}/state"


def controller_route(controller_broker, broker):
    """How the controller running on ``controller_broker`` reaches ``broker`` (``addNewBroker``): a
    :class:`~kafka_lab.listeners.ControllerRoute` whose listener comes from the controller's config and whose
    endpoint comes from the broker's registration; :class:`~kafka_lab.listeners.BrokerEndPointNotAvailableException`
    (Kafka's message) when the broker registered no such listener."""
    from kafka_lab.listeners import broker_registration, controller_endpoint

    registration = broker_registration(broker.config.listeners, timestamp_ms=0)
    return controller_endpoint(controller_broker.config.listeners, registration, broker.id)


class ControllerDeposed(Exception):
    """Thrown into controller work whose controller (``controller_id`` at ``epoch``) was deposed while it waited."""

    def __init__(self, controller_id: int, epoch: int):
        super().__init__(f"controller {controller_id} (epoch {epoch}) was deposed")
        self.controller_id, self.epoch = controller_id, epoch


class ControllerChannel:
    """The controller's queue and connection to one broker (``RequestSendThread``: one in flight).

    The connection goes to the listener the *controller's* config names (:func:`controller_route`); the
    broker's own config decides which plane serves it (its acceptor for that listener)."""

    def __init__(self, controller, broker, *, owner_id: int | None = None, epoch: int | None = None):
        self.controller = controller
        self.broker = broker
        owner_id = controller.id if owner_id is None else owner_id
        #: the broker whose controller owns this channel (its RequestSendThread is a thread of that process)
        self.owner = controller.brokers[owner_id]
        self.epoch = controller.epoch if epoch is None else epoch  # the controller epoch it was built under
        self.route = controller_route(self.owner, broker)
        self.connection = None
        self._connect()
        self.queue: deque = deque()
        self.busy = False
        self.removed = False  # removeBroker: the thread is shut down, its queue dropped
        self._retry_armed = False

    def _connect(self):
        try:
            self.connection = self.broker.controller_connection(self.route.listener_name, self.controller.id)
        except ConnectionRefused:
            self.connection = None
        return self.connection

    def enqueue(self, req: Request) -> None:
        self.queue.append(req)
        self.pump()

    def pump(self) -> None:
        if self.busy or not self.queue or self.removed or self._retry_armed:
            return
        own = self.owner
        if not own.online or own.node.paused:
            # the controller's broker stopped (its RequestSendThreads with it: the resignation removes us), or
            # is paused: the queue waits, and is sent when it wakes (Controller._owner_resumed)
            return
        if (self.connection is None or self.connection.closed) and self._connect() is None:
            self._retry()  # refused: the broker's process is not running
            return
        self.busy = True
        req = self.queue.popleft()
        self.controller.log.append(req)
        self.controller.sent += 1
        self.connection.send(req)

    def _retry(self) -> None:
        """``backoff()``, then the same request again (``pump``), unless the channel is removed meanwhile."""
        self._retry_armed = True

        def again(_e):
            self._retry_armed = False
            self.pump()

        self.controller.env.timeout(CONTROLLER_SEND_RETRY_MS).callbacks.append(again)

    def answered(self, req) -> None:
        self.busy = False
        if req.error == DISCONNECTED:  # lost with its connection: sent again, as a new request, after the backoff
            ctl = self.controller
            again = Request(
                req.api,
                ctl._correlation,
                req.client_id,
                partitions=req.partitions,
                payload=req.payload,
                is_controller=True,
                on_done=self.owner.node.deferred(self.answered),
            )
            ctl._correlation += 1
            self.queue.appendleft(again)
            self._retry()
            return
        cb = req.payload.get("callback") if isinstance(req.payload, dict) else None
        if cb is not None:
            cb(req)
        self.pump()


class Controller:
    """The active controller: its id and epoch, the partition states, and its channels to brokers."""

    def __init__(
        self, env, brokers: dict, log: list, *, controller_id: int, epoch: int = 1, zk_latency_ms: float = 2.0
    ):
        self.env = env
        self.brokers = brokers  # id -> Broker (the cluster's)
        self.log = log
        self.id = controller_id
        self.epoch = epoch
        self.zk_latency_ms = zk_latency_ms
        self.client_id = f"controller-{controller_id}"
        self.state: dict = {}  # tp -> {"leader", "leader_epoch", "isr", "replicas", "zk_version"}
        self.live_brokers: set = set(brokers)
        #: (time_ms, topic, partition, leader, leader_epoch, isr, zk_version, from_state): each new leader, as
        #: written; ``from_state`` is the partition's state before it, ``"OnlinePartition"`` (its leader was
        #: live: a preferred or controlled-shutdown election) or ``"OfflinePartition"`` (no live leader)
        self.decisions: list = []
        #: (time_ms, topic, partition, wanted leader, isr, Kafka's error): elections that changed nothing
        self.failed_elections: list = []
        #: (time_ms, topic, partition, from_state, strategy): an election the state machine tried and could not
        #: make, logged at ERROR in state-change.log (``logFailedStateChange``): an offline partition with no
        #: live ISR member (``OfflinePartitionLeaderElectionStrategy(false)``), or a controlled shutdown's
        #: move with no other live ISR member (``ControlledShutdownPartitionLeaderElectionStrategy``); for a
        #: NewPartition with no live replica, ``strategy`` is the live brokers (its exception lists them)
        self.failed_state_changes: list = []
        #: the topics whose ``unclean.leader.election.enable`` is true (a topic config; false, 2.8's default, for
        #: every other): an offline partition of one, with no live ISR member, elects a live replica outside it
        self.unclean_topics: set = set()
        #: (time_ms, topic, partition, leader): each unclean election (what ``ControllerStats``'
        #: ``UncleanLeaderElectionsPerSec`` meter counts)
        self.unclean_elections: list = []
        #: partitions created when none of their replicas was live: NewPartition, no state znode and no leader
        #: until one is (``initializeLeaderAndIsrForPartitions`` failed; the controller tries again at each trigger)
        self.new_partitions: set = set()
        self.deleting: set = set()  # topics being deleted (StopReplicas sent, not every replica answered)
        self.deleted_topics: dict = {}  # topic -> time every replica had deleted it
        #: called with the topic's name when a deletion completes (the cluster's topic table follows)
        self.topic_deleted_listeners: list = []
        self._channels: dict = {}
        self._correlation = 0
        self.sent = 0
        self.shutting_down: set = set()
        #: (time_ms, controller id, event, detail dict): "elected", "ready", "resigned" ({"epoch"}, and for
        #: "ready" the live brokers and topics it read), "controlled_shutdown", "broker_failure",
        #: "broker_startup" ({"broker"}, and the live brokers after the change)
        self.events: list = []
        self._first = (controller_id, epoch)
        self._batches = 0
        #: the channels of a controller deposed while its broker was paused: they send what they hold when it
        #: wakes, until its Expire event resigns it (:meth:`zombie_resigns`)
        self.zombie_channels: list = []
        #: KIP-380 (2.2+): the controller reads each broker's epoch (the czxid of ``/brokers/ids/<id>``) with its
        #: registration, sends it in every LeaderAndIsr, UpdateMetadata and StopReplica, and tells a broker that
        #: registered again from one that never left (a *bounce*). False: as before 2.2 (no epoch sent, -1, and a
        #: broker registered again before its BrokerChange was handled is the same broker as before)
        self.broker_epoch_check = True
        #: ``ControllerContext.liveBrokerIdAndEpochs``: each broker's epoch as this controller last read it
        self.broker_epochs: dict = {bid: b.broker_epoch for bid, b in brokers.items()}
        #: whether ``/brokers/ids/<id>`` exists now (the cluster's ZooKeeper sessions); what a BrokerChange reads
        self.registered = lambda bid: False
        #: the controller fences of 2.1+ (``Cluster(controller_fencing=...)``): a deposed controller's write fails (its
        #: session expired: SESSIONEXPIRED; else the /controller_epoch check, KAFKA-6082: BADVERSION). False: its
        #: ZooKeeper client retries on a new session (1.0's ZkClient), the state znode's zkVersion the only check
        self.fencing = True
        #: how long a deposed controller's ZooKeeper client takes to reconnect with a new session (fencing off)
        self.zk_reconnect_ms = zk_latency_ms
        #: the cluster's ZooKeeper sessions (:class:`~.session.ZkSessions`), to tell whether a session ended
        self.sessions = None
        #: what each deposed controller knew (id -> its epoch, partition states, live brokers, session), kept at
        #: its deposition: the zombie acts on that, not on the new controller's cache
        self.zombies: dict = {}
        #: (time_ms, controller id, its epoch, partition, error or "NONE"): writes a deposed controller attempted
        self.zombie_writes: list = []
        self._zombie_busy: dict = {}  # controller id -> the event its in-progress write ends with (fencing off)
        #: the ensemble's data tree (:class:`~.zookeeper.ZooKeeper`) the controller writes through, once the cluster
        #: attaches one (:meth:`attach_zookeeper`): ``/controller``, ``/controller_epoch`` and every partition's state
        #: znode, whose version is the ``zk_version`` the controller caches. None: the cache alone (a bare Controller)
        self.zk = None
        #: each broker's session in that tree (:meth:`tree_session`): ``/controller`` is an ephemeral znode of the
        #: winner's, and goes when the session ends (:meth:`zk_session_ended`)
        self._tree_sessions: dict = {}
        #: the election as 2.1+ makes it (KAFKA-6082): ``/controller`` and ``/controller_epoch`` in one multi. False:
        #: as 1.0 to 2.0, the create alone, then the winner's conditional write of the epoch
        self.election_multi = True
        #: (time_ms, broker, outcome, detail): every broker's part in every election (:meth:`_elect`): "elected",
        #: "controller_exists" (it read /controller: someone won), "controller_moved" (its create or epoch write
        #: failed: ``ControllerMovedException``, then ``maybeResign``)
        self.election_log: list = []
        #: the zkVersion of ``/controller_epoch`` the active controller set (``ControllerContext.epochZkVersion``)
        self.epoch_zk_version = 0
        for b in brokers.values():
            b.node.on_resume.append(lambda bid=b.id: self._owner_resumed(bid))

    def _owner_resumed(self, bid: int) -> None:
        """Broker ``bid`` woke from a pause: the channels its controller owns send what they queued meanwhile."""
        for ch in [*self._channels.values(), *self.zombie_channels]:
            if ch.owner.id == bid:
                ch.pump()

    def deposed(self, bid: int) -> bool:
        """Whether broker ``bid`` holds a controller deposed while it was paused (its channels, or what it knew), not
        yet resigned."""
        z = self.zombies.get(bid)
        return any(ch.owner.id == bid for ch in self.zombie_channels) or (z is not None and not z["resigned"])

    def zombie_resigns(self, bid: int) -> None:
        """The controller that broker ``bid`` was, deposed while it was paused, processes its ``Expire`` event
        (``processExpire``: ``onControllerResignation``): its channels stop and their queues are dropped."""
        keep, epochs = [], set()
        z = self.zombies.get(bid)
        if z is not None and not z["resigned"]:
            z["resigned"] = True
            epochs.add(z["epoch"])
        for ch in self.zombie_channels:
            if ch.owner.id == bid:
                ch.removed = True
                ch.queue.clear()
                epochs.add(ch.epoch)
            else:
                keep.append(ch)
        self.zombie_channels = keep
        for epoch in sorted(epochs):
            self.events.append((self.env.now, bid, "zombie_resigned", {"epoch": epoch}))

    # -- a deposed controller that still acts (the zombie) ---------------------------------------------
    def _keep_zombie(self) -> None:
        """At its deposition, what the resigning controller knows: it goes on from that if it is mid-event."""
        sessions = self.sessions
        self.zombies[self.id] = {
            "epoch": self.epoch,
            "state": {
                tp: {**st, "isr": list(st["isr"]), "replicas": list(st["replicas"])} for tp, st in self.state.items()
            },
            "live": set(self.live_brokers),
            "session": None if sessions is None else sessions.session[self.id],
            # its ZooKeeper session and the /controller_epoch version it set (what its writes are conditional on)
            "tree_session": None if self.zk is None else self.tree_session(self.id),
            "epoch_zk_version": self.epoch_zk_version,
            "resigned": False,
        }

    def _session_ended(self, bid: int, zombie: dict) -> bool:
        s = self.sessions
        return s is not None and (s.session[bid] != zombie["session"] or s.expired[bid])

    def zombie_busy(self, bid: int):
        """A generator that waits until the deposed controller on broker ``bid`` has finished the event it was in
        (its Expire or Reelect event comes after it: one event thread)."""
        ev = self._zombie_busy.get(bid)
        if ev is not None and not ev.triggered:
            yield ev

    def _zombie_write(self, deposed: ControllerDeposed, tp, change: dict) -> None:
        """The write a deposed controller was making when it woke (or went on) deposed, from what it knew.

        Fencing on (2.1+): the write goes to the data tree as ``multi(check /controller_epoch at the version this
        controller set, setData)`` on its own session: once that session ended (a pause past the timeout) ZooKeeper
        answers ``SESSIONEXPIRED``; with it alive (``/controller`` deleted), once a newer controller has set the
        epoch, the check fails ``BADVERSION`` (``Controller epoch zkVersion check fails``:
        ``ControllerMovedException``), and nothing is written; a write that reaches ZooKeeper before the new
        controller's election lands, and the new controller reads it when it starts. Fencing off: a ZooKeeper
        client whose session ended reconnects with a new one (``zk_reconnect_ms``) and retries; the write is
        conditional on the state znode's zkVersion alone, and when it lands the zombie sends LeaderAndIsr to the
        partition's replicas and UpdateMetadata to the brokers it knew live, under its old controller epoch."""
        zid, epoch = deposed.controller_id, deposed.epoch
        zombie = self.zombies.get(zid)
        if zombie is None or tp not in zombie["state"]:
            return
        done = None
        if not self.fencing:
            done = self._zombie_busy[zid] = self.env.event()

        def run():
            ended = self._session_ended(zid, zombie)
            st = zombie["state"][tp]
            new = {**st, **change, "leader_epoch": st["leader_epoch"] + 1}
            data = {"leader": new["leader"], "leader_epoch": new["leader_epoch"], "isr": list(new["isr"])}
            write = SetData(state_path(tp), {**data, "controller_epoch": epoch}, version=st["zk_version"])
            if self.fencing:
                # KafkaZkClient.updateLeaderAndIsr, 2.1+: multi(check /controller_epoch at the version it set, setData)
                # on its own session: SESSIONEXPIRED once that ended, else BADVERSION once a newer controller set the
                # epoch (ControllerMovedException); before that (a short event after /controller was deleted) it lands
                yield self.env.timeout(self.zk_latency_ms)
                op, session = (
                    Multi((Check("/controller_epoch", zombie["epoch_zk_version"]), write)),
                    zombie["tree_session"],
                )
            else:
                if ended:
                    yield self.env.timeout(self.zk_reconnect_ms)  # 1.0's ZkClient: a new session, the write retried
                yield self.env.timeout(self.zk_latency_ms)
                op, session = write, None
            try:
                self.zk.apply(op, session, self.env.now)
            except ZkError as e:
                self.zombie_writes.append((self.env.now, zid, epoch, tp, e.code))
                if done is not None:
                    done.succeed()
                return
            new["zk_version"] = st["zk_version"] + 1
            zombie["state"][tp] = new
            self.zombie_writes.append((self.env.now, zid, epoch, tp, "NONE"))
            state = {
                "topic": tp[0],
                "partition": tp[1],
                **data,
                "replicas": list(new["replicas"]),
                "zk_version": new["zk_version"],
                "controller_epoch": epoch,
            }
            for bid in new["replicas"]:
                if bid in zombie["live"] and bid in self.brokers:
                    self._zombie_send(zid, epoch, zombie, self.brokers[bid], "LeaderAndIsr", [state])
            for bid in sorted(zombie["live"] & set(self.brokers)):
                self._zombie_send(zid, epoch, zombie, self.brokers[bid], "UpdateMetadata", [state])
            if done is not None:
                done.succeed()

        self.env.process(run())

    def _zombie_send(self, zid: int, epoch: int, zombie: dict, broker, api: str, states: list) -> None:
        """A request from the deposed controller on broker ``zid``: through its own channel to ``broker`` (kept
        from its reign, or opened again), with its id, its old epoch, and the broker epoch it knew."""
        ch = next((c for c in self.zombie_channels if c.owner.id == zid and c.broker is broker and not c.removed), None)
        if ch is None:
            ch = ControllerChannel(self, broker, owner_id=zid, epoch=epoch)
            self.zombie_channels.append(ch)
        known = self.broker_epochs.get(broker.id, -1)
        payload = {
            "controller_id": zid,
            "controller_epoch": epoch,
            "broker_epoch": known if self.broker_epoch_check else -1,
            "meant_for_broker_epoch": known,
            "partition_states": [dict(s) for s in states],
            "delete_partitions": False,
            "stop": None,
            "live_brokers": sorted(zombie["live"]),
            "callback": None,
            "batch": self.new_batch(),
            "queued_ms": self.env.now,
        }
        req = Request(
            api,
            self._correlation,
            f"controller-{zid}",
            partitions=tuple((s["topic"], s["partition"]) for s in states),
            payload=payload,
            is_controller=True,
            on_done=ch.owner.node.deferred(ch.answered),
        )
        self._correlation += 1
        ch.enqueue(req)

    # -- its work runs in its broker's process ---------------------------------------------------------
    def _process(self, gen, at_ms: float = -math.inf):
        """Start controller work (a simpy generator). From ``at_ms`` on (when it is the controller's to do: an
        admin request, a ZooKeeper notification arriving then) it belongs to the active controller's broker
        process (:mod:`kafka_lab.sim.server.node`): it does nothing if that process has stopped, and stops where it waits if the
        process stops meanwhile, as the controller's event thread does with its JVM. Before ``at_ms``, or with
        no active controller, it runs unbound (and its steps check for a controller themselves)."""
        return self.env.process(self._owned(gen, at_ms))

    def _owned(self, gen, at_ms: float):
        node = incarnation = bound = None
        value = None
        try:
            while True:
                if node is None and self.env.now >= at_ms:
                    owner = self.brokers.get(self.id)
                    if owner is not None:
                        if not owner.online:
                            return  # the controller's broker is not running: nobody does this work
                        node, incarnation = owner.node, owner.node.incarnation
                        bound = (self.id, self.epoch)
                        if node.paused:  # its event comes to a frozen controller: handled when it wakes
                            yield from node.gate()
                            if node.incarnation != incarnation or (self.id, self.epoch) != bound:
                                return  # it crashed, or was deposed, meanwhile: the next controller does this
                event = gen.send(value)
                value = yield event
                if node is not None and node.incarnation != incarnation:
                    return  # the controller's broker stopped while this waited: the work stops with it
                if node is not None and node.paused:
                    # its broker is paused (a GC): the event thread holds, and goes on when it wakes
                    yield from node.gate()
                    if node.incarnation != incarnation:
                        return
                    if (self.id, self.epoch) != bound:
                        # deposed while it was paused: the event goes on in the old controller, whose next ZooKeeper
                        # write meets the fences, or, with them off, lands (ControllerDeposed: the work says what it
                        # was about to write). (Deposed under a live session, /controller deleted, the model still
                        # lets the work finish as the new controller's: docs/architecture.md)
                        self._deposed(gen, bound)
                        return
        except StopIteration:
            return
        finally:
            gen.close()

    def _deposed(self, gen, bound) -> None:
        """Tell work whose controller was deposed mid-event (``bound``: its id and epoch) by throwing
        :class:`ControllerDeposed` into it; work that writes catches it (:meth:`_zombie_write`), other work ends."""
        try:
            gen.throw(ControllerDeposed(*bound))
        except (ControllerDeposed, StopIteration):
            return
        raise RuntimeError("controller work must end once its controller is deposed (it yielded again)")

    # -- the channel ---------------------------------------------------------------------------------
    def new_batch(self) -> int:
        """A new request batch's id (the requests one ``sendRequestsToBrokers`` call sends)."""
        self._batches += 1
        return self._batches

    def _remove_channel(self, bid: int) -> None:
        """``ControllerChannelManager.removeBroker``: the broker's queue is dropped and its thread stops."""
        ch = self._channels.pop(bid, None)
        if ch is not None:
            ch.removed = True
            ch.queue.clear()

    def channel(self, broker) -> ControllerChannel:
        ch = self._channels.get(broker.id)
        if ch is None:
            ch = self._channels[broker.id] = ControllerChannel(self, broker)
        return ch

    def send(
        self,
        broker,
        api: str,
        partition_states: list[dict] | None = None,
        *,
        at_ms: float = 0.0,
        partitions=None,
        delete_partitions: bool = False,
        callback=None,
        epoch: int | None = None,
        batch: int | None = None,
    ) -> None:
        """Queue a control request for ``broker`` at ``at_ms``; sent when the previous one is answered.

        ``batch``: the ``ControllerBrokerRequestBatch`` it belongs to (:meth:`new_batch`; one of its own when
        None). Kafka logs a batch's UpdateMetadata once, for all its brokers."""
        if api not in CONTROLLER_APIS:
            raise ValueError(f"the controller sends {sorted(CONTROLLER_APIS)}, not {api!r}")
        check_time("at_ms", at_ms)
        if self.id < 0:
            return  # no active controller (it resigned, the next is not elected): nothing is sent
        states = [dict(s) for s in (partition_states or [])]
        if api == "StopReplica":
            tps = tuple(partitions) if partitions is not None else tuple((s["topic"], s["partition"]) for s in states)
            epochs = {(s["topic"], s["partition"]): s.get("leader_epoch", -1) for s in states}
            stop = {tp: (epochs.get(tp, -2 if delete_partitions else -1), delete_partitions) for tp in tps}
        else:
            tps = tuple(partitions) if partitions is not None else tuple((s["topic"], s["partition"]) for s in states)
            stop = None
        ch = self.channel(broker)
        known_epoch = self.broker_epochs.get(broker.id, -1)
        payload = {
            "controller_id": self.id,
            "controller_epoch": self.epoch if epoch is None else epoch,
            # KIP-380: the broker epoch it is meant for (AbstractControlRequest.UNKNOWN_BROKER_EPOCH, -1, before 2.2)
            "broker_epoch": known_epoch if self.broker_epoch_check else -1,
            "meant_for_broker_epoch": known_epoch,  # the model's own record: the incarnation the controller knew
            "partition_states": states,
            "delete_partitions": delete_partitions,
            "stop": stop,
            "live_brokers": sorted(self.live_brokers),
            "callback": callback,
            "batch": self.new_batch() if batch is None else batch,
        }

        def enqueue(_e=None):
            payload["queued_ms"] = self.env.now  # when the batch was handed to the channel (its log line's time)
            req = Request(
                api,
                self._correlation,
                self.client_id,
                partitions=tps,
                payload=payload,
                is_controller=True,
                on_done=ch.owner.node.deferred(ch.answered),
            )
            self._correlation += 1
            ch.enqueue(req)

        if at_ms <= self.env.now:
            enqueue()
        else:
            self.env.timeout(at_ms - self.env.now).callbacks.append(enqueue)

    # -- ZooKeeper's data tree ---------------------------------------------------------------------------
    def attach_zookeeper(self, zk) -> None:
        """Write through ``zk`` from now on: ``/controller_epoch`` and ``/controller`` as they stand, then every
        partition state the controller holds (the cluster attaches it before any topic exists)."""
        self.zk = zk
        zk.apply(Create("/controller_epoch", self.epoch))
        if self.id >= 0:
            zk.apply(
                Create("/controller", {"version": 1, "brokerid": self.id}, ephemeral=True), self.tree_session(self.id)
            )

    def tree_session(self, bid: int):
        """Broker ``bid``'s session in the data tree: the one of its registration now (the cluster's
        :class:`~.session.ZkSessions` numbers them), opened at its first request; an ended one stays ended."""
        key = (bid, self.sessions.session[bid] if self.sessions is not None else 1)
        s = self._tree_sessions.get(key)
        if s is None:
            timeout = float(self.brokers[bid].config.zk_session_timeout_ms)
            s = self._tree_sessions[key] = self.zk.open_session(bid, timeout, self.env.now)
        return s

    def zk_session_ended(self, bid: int) -> None:
        """Broker ``bid``'s ZooKeeper session ended (closed, or expired): its ephemeral znodes go with it, and
        ``/controller`` too when it holds it (the cluster's :class:`~.session.ZkSessions` calls this)."""
        if self.zk is None:
            return
        for (b, _n), s in self._tree_sessions.items():
            if b == bid and s.alive:
                self.zk.close_session(s, self.env.now)

    def _zk_data(self, tp) -> dict:
        """A state znode's data, as ``LeaderIsrAndControllerEpoch`` is written: the controller epoch of the writer."""
        st = self.state[tp]
        return {
            "leader": st["leader"],
            "leader_epoch": st["leader_epoch"],
            "isr": list(st["isr"]),
            "controller_epoch": self.epoch,
        }

    def _read_states(self) -> None:
        """``onControllerFailover`` reads every partition's state znode: what a deposed controller wrote before
        this read is what the new controller knows (the tree and the cache agree unless a zombie wrote)."""
        if self.zk is None:
            return
        for tp, st in self.state.items():
            z = self.zk.znodes.get(state_path(tp))
            if z is not None and z.version != st["zk_version"]:
                d = z.data
                st.update(leader=d["leader"], leader_epoch=d["leader_epoch"], isr=list(d["isr"]), zk_version=z.version)

    def _zk_create_state(self, tp) -> None:
        """``createTopicPartitionStatesRaw``: the partition's state znode, version 0."""
        if self.zk is not None:
            self.zk.apply(Create(state_path(tp), self._zk_data(tp)), None, self.env.now)

    def _zk_set_state(self, tp) -> None:
        """``updateLeaderAndIsr``: setData at the version the controller cached (``zkVersion``), which must match.

        It always does in the model: only a deposed controller still writing (a zombie) could move the znode under
        the active one, and the cluster has none that writes (docs/architecture.md). A mismatch is refused loudly,
        never silently overwritten."""
        if self.zk is None:
            return
        st = self.state[tp]
        try:
            version = self.zk.apply(
                SetData(state_path(tp), self._zk_data(tp), version=st["zk_version"] - 1), None, self.env.now
            )
        except ZkError as e:
            raise RuntimeError(
                f"controller {self.id} wrote {tp[0]}-{tp[1]} at zkVersion {st['zk_version'] - 1}, but ZooKeeper has "
                f"another ({e}): only a zombie controller's write could do that, and the model has none that writes"
            ) from e
        assert version == st["zk_version"]

    def _zk_delete_state(self, tp) -> None:
        if self.zk is not None and state_path(tp) in self.zk.znodes:
            self.zk.apply(Delete(state_path(tp)), None, self.env.now)

    # -- the election (KafkaController.elect, KafkaZkClient.registerControllerAndIncrementControllerEpoch) -------
    def _race_for_controller(self, rng, *, delays=None):
        """The brokers race for ``/controller`` until one wins: ``(winner, its epoch)``, or ``(None, None)`` when no
        broker is left to race. Every round, each running registered broker hears that ``/controller`` went (its
        watch fires) and runs its ``Reelect`` after a delay of its own: ``rng`` draws it, uniform up to one ZooKeeper
        round trip (the notification's way and the broker's event queue, together), or ``delays`` gives it, by
        broker, for the first round. A round nobody wins waits for ``/controller`` to go when it is still there (a
        crashed broker's session holds it), else a round trip (its winner's process stopped before the reply, and
        its session with it; or no racer was running), and they race again."""
        first = delays
        while True:
            # the brokers that race: every registered one (a paused one's Reelect runs when it wakes, :meth:`_zk_request`)
            live = sorted(self.live_brokers & set(self.brokers))
            if not live:
                return None, None
            if first is None:
                starts = dict(zip(live, rng.uniform(0.0, self.zk_latency_ms, size=len(live)).tolist(), strict=True))
            else:
                starts, first = {b: first[b] for b in live if b in first}, None
            won = self.env.event()
            left = [len(starts)]

            def racer(bid, delay, won=won, left=left):
                got = yield from self._elect(bid, delay)
                if got is not None and not won.triggered:
                    won.succeed(got)
                left[0] -= 1
                if left[0] == 0 and not won.triggered:
                    won.succeed(None)

            for bid, delay in starts.items():
                self.env.process(racer(bid, delay))
            got = yield won
            if got is not None:
                return got
            if "/controller" in self.zk.znodes:  # held by a session that has not ended yet: wait for it to go
                gone = self.env.event()
                self.zk.watch("/controller", lambda _p, _e, gone=gone: gone.triggered or gone.succeed())
                yield gone
            else:  # its winner stopped before it heard, or every racer's process had stopped: again, a round trip on
                yield self.env.timeout(self.zk_latency_ms)

    def _zk_request(self, broker, incarnation: int, op):
        """One request of ``broker``'s controller event thread to ZooKeeper, on its session: sent when its process
        runs, applied half a round trip later, its reply handled half a round trip after that once the process runs
        again. ``(result, error code or None)``; None when its process stopped (nothing sent, or no one to read)."""
        node = broker.node
        yield from node.gate()
        if not broker.online or node.incarnation != incarnation:
            return None
        yield self.env.timeout(self.zk_latency_ms / 2)
        try:
            out = (self.zk.apply(op, self.tree_session(broker.id), self.env.now), None)
        except ZkError as e:
            out = (None, e.code)
        yield self.env.timeout(self.zk_latency_ms / 2)
        yield from node.gate()
        if not broker.online or node.incarnation != incarnation:
            return None
        return out

    def _elect(self, bid: int, delay: float):
        """``KafkaController.elect`` on broker ``bid`` (a ``Reelect``, or its start-up), ``delay`` from now: read
        ``/controller`` (there: someone won, stop); read ``/controller_epoch``; then, 2.1+, one multi: create
        ``/controller`` (ephemeral, its session's) and set ``/controller_epoch`` to epoch + 1 at the version read.
        ``NODEEXISTS`` or ``BADVERSION``: ``checkControllerAndEpoch`` reads ``/controller``, finds another broker's, and
        throws ``ControllerMovedException`` (``maybeResign``). Before 2.1 (:attr:`election_multi` False): the create
        alone, then the winner's conditional write of the epoch (``BADVERSION``: ``ControllerMovedException``).
        Returns ``(bid, new epoch)`` for the winner (and sets :attr:`epoch_zk_version`), else None."""
        broker = self.brokers[bid]
        inc = broker.node.incarnation
        log = self.election_log
        if delay > 0:
            yield self.env.timeout(delay)
        got = yield from self._zk_request(broker, inc, GetData("/controller"))
        if got is None:
            return None
        if got[1] is None:
            log.append((self.env.now, bid, "controller_exists", {"controller": got[0][0]["brokerid"]}))
            return None
        me = {"version": 1, "brokerid": bid}
        if self.election_multi:
            got = yield from self._zk_request(broker, inc, GetData("/controller_epoch"))
            if got is None:
                return None
            epoch, version = got[0]
            op = Multi((Create("/controller", me, ephemeral=True), SetData("/controller_epoch", epoch + 1, version)))
            got = yield from self._zk_request(broker, inc, op)
            if got is None:
                return None
            if got[1] is not None:  # NODEEXISTS or BADVERSION: checkControllerAndEpoch
                error = got[1]
                got = yield from self._zk_request(broker, inc, GetData("/controller"))
                holder = got[0][0]["brokerid"] if got is not None and got[1] is None else -1
                log.append((self.env.now, bid, "controller_moved", {"error": error, "controller": holder}))
                return None
            self.epoch_zk_version = got[0][1]
        else:
            got = yield from self._zk_request(broker, inc, Create("/controller", me, ephemeral=True))
            if got is None:
                return None
            if got[1] is not None:  # NODEEXISTS: another broker's (1.0 reads it, and watches it)
                log.append((self.env.now, bid, "controller_exists", {"error": got[1]}))
                return None
            # onControllerFailover: read the epoch, then write it + 1 at the version read
            got = yield from self._zk_request(broker, inc, GetData("/controller_epoch"))
            if got is None:
                return None
            epoch, version = got[0]
            got = yield from self._zk_request(broker, inc, SetData("/controller_epoch", epoch + 1, version))
            if got is None:
                return None
            if got[1] is not None:
                log.append((self.env.now, bid, "controller_moved", {"error": got[1], "controller": -1}))
                return None
            self.epoch_zk_version = got[0]
        log.append((self.env.now, bid, "elected", {"epoch": epoch + 1, "epoch_zk_version": self.epoch_zk_version}))
        return bid, epoch + 1

    def startup_election(self, rng, *, within_ms: float = 0.2) -> None:
        """The cluster's first election, replayed: every broker starts (``KafkaController.startup``) within
        ``within_ms`` of time 0 (``rng`` draws each one's instant) and races as :meth:`_elect` does. The model's
        cluster starts with its first controller elected; this undoes that, before anything has happened: no
        controller, ``/controller_epoch`` at 0 (``InitialControllerEpoch``, what ``maybeCreateControllerEpochZNode``
        writes), no ``/controller``."""
        if self.env.now != 0 or self.state or self.events or self.zk is None:
            raise RuntimeError("startup_election is the cluster's first event: call it on a new cluster, before run")
        self.zk_session_ended(self.id)  # its /controller goes; its session is opened again at its first request
        del self._tree_sessions[(self.id, self.sessions.session[self.id] if self.sessions is not None else 1)]
        self.zk.znodes["/controller_epoch"] = Znode(0)
        self.zk.applied = [a for a in self.zk.applied if a[3] != "/controller"]  # the setup's create, undone
        self.id, self.epoch = -1, 0
        self._first = (-1, 0)
        live = sorted(self.live_brokers & set(self.brokers))
        starts = dict(zip(live, rng.uniform(0.0, within_ms, size=len(live)).tolist(), strict=True))
        self.env.process(self._take_over(rng, 5, delays=starts))

    # -- partition state -----------------------------------------------------------------------------
    def partition_state(self, tp) -> dict:
        st = self.state[tp]
        return {
            "topic": tp[0],
            "partition": tp[1],
            "leader": st["leader"],
            "leader_epoch": st["leader_epoch"],
            "isr": list(st["isr"]),
            "replicas": list(st["replicas"]),
            "zk_version": st["zk_version"],
            "controller_epoch": self.epoch,
        }

    def add_partition(self, tp, replicas: list, leader: int | None = None) -> None:
        """A new partition's first state (as ``onNewPartitionCreation`` leaves it): leader = first live replica,
        ISR = the live replicas (``initializeLeaderAndIsrForPartitions``).

        With no live replica the partition stays *NewPartition*: no state znode, no leader, nothing sent to any
        broker, and the attempt is kept in :attr:`failed_state_changes` (Kafka's ERROR ends *No assigned
        replica is alive.*). Every later ``triggerOnlinePartitionStateChange`` (a broker's start-up or failure,
        a new controller) tries it again, and the first time a replica is live it is initialized as above,
        leader epoch 0, logged ``from NewPartition to OnlinePartition``. (Live: ``isReplicaOnline``, so a broker in
        controlled shutdown is not.)"""
        live = [r for r in replicas if r in self._online()]
        self.state[tp] = {
            "leader": leader if leader is not None else (live[0] if live else -1),
            "leader_epoch": 0,
            "isr": live,
            "replicas": list(replicas),
            "zk_version": 0,
        }
        if leader is None and not live:
            self.new_partitions.add(tp)
            self.failed_state_changes.append((self.env.now, *tp, "NewPartition", tuple(sorted(self._online()))))
        else:
            self._zk_create_state(tp)

    def _initialize(self, tp, online: set) -> bool:
        """``initializeLeaderAndIsrForPartitions`` for a partition still NewPartition: True when a replica is
        live and it was initialized (its state znode created: leader epoch 0, version 0), else the failure is
        kept as at creation."""
        st = self.state[tp]
        live = [r for r in st["replicas"] if r in online]
        if not live:
            self.failed_state_changes.append((self.env.now, *tp, "NewPartition", tuple(sorted(online))))
            return False
        self.new_partitions.discard(tp)
        st["leader"], st["isr"] = live[0], live
        self._zk_create_state(tp)
        self.decisions.append(
            (self.env.now, *tp, live[0], st["leader_epoch"], tuple(live), st["zk_version"], "NewPartition")
        )
        return True

    def _publish(self, tps, *, leader_and_isr: bool, at_ms: float | None = None, exclude=()) -> None:
        """LeaderAndIsr to each partition's replicas (batched per broker) and UpdateMetadata to all live brokers."""
        at = self.env.now if at_ms is None else at_ms
        tps = [tp for tp in tps if tp not in self.new_partitions]  # a NewPartition has no leadership to send
        batch = self.new_batch()
        if leader_and_isr:
            per_broker: dict = {}
            for tp in tps:
                for r in self.state[tp]["replicas"]:
                    if r in self.live_brokers and r not in exclude:
                        per_broker.setdefault(r, []).append(self.partition_state(tp))
            for bid in sorted(per_broker):
                if bid not in self.brokers:
                    continue
                self.send(self.brokers[bid], "LeaderAndIsr", per_broker[bid], at_ms=at, batch=batch)
        states = [self.partition_state(tp) for tp in tps]
        for bid in sorted(self.live_brokers & set(self.brokers)):
            self.send(self.brokers[bid], "UpdateMetadata", states, at_ms=at, batch=batch)

    def elect_leader(self, tp, new_leader: int, *, at_ms: float = 0.0) -> None:
        """Move ``tp``'s leadership to ``new_leader`` at ``at_ms`` (a preferred-replica election).

        Everything is checked *when the controller decides*, at ``at_ms``, against the partitions and
        brokers as they are then (a topic may be created, or deleted, between the call and ``at_ms``), in
        ``KafkaController.processReplicaLeaderElection``'s order, each with Kafka's error:

        - there must be a controller (none while one is being elected): ``NOT_CONTROLLER``;
        - the partition must exist (never created, or deleted: ``UNKNOWN_TOPIC_OR_PARTITION``, "The
          partition does not exist.") and its topic must not be being deleted (``INVALID_TOPIC_EXCEPTION``,
          "The topic is being deleted"); ``new_leader`` must be one of its replicas;
        - as ``PreferredReplicaPartitionLeaderElectionStrategy``: the new leader must be a live member of
          the ISR (``PREFERRED_LEADER_NOT_AVAILABLE``).

        A failed election changes nothing and is kept in :attr:`failed_elections` with its error. When
        the controller decides at once (``at_ms`` not after now), a request whose partition is unknown or
        being deleted, or whose ``new_leader`` is no replica, is refused there and then (ValueError, with
        Kafka's error and message) instead. The ISR stays as it is; the leader epoch and the znode version grow.
        """
        if not (isinstance(tp, tuple) and len(tp) == 2):
            raise TypeError(f"a partition is a (topic, partition) pair, got {tp!r}")
        check_time("at_ms", at_ms)
        if at_ms <= self.env.now:
            refused = self._election_refusal(tp, new_leader)
            if refused is not None:
                raise ValueError(refused[1])

        def decide():
            if at_ms > self.env.now:
                yield self.env.timeout(at_ms - self.env.now)
            st = self.state.get(tp)
            if self.id < 0:
                self._election_failed(tp, new_leader, st, "NOT_CONTROLLER")
                return
            refused = self._election_refusal(tp, new_leader)
            if refused is not None:
                self._election_failed(tp, new_leader, st, refused[0])
                return
            if new_leader not in st["isr"] or new_leader not in self.live_brokers:
                self._election_failed(tp, new_leader, st, "PREFERRED_LEADER_NOT_AVAILABLE")
                return
            try:
                yield self.env.timeout(self.zk_latency_ms)  # the state znode is written first
            except ControllerDeposed as deposed:  # it wakes, or goes on, deposed: the write it was making
                self._zombie_write(deposed, tp, {"leader": new_leader})
                return
            if self.state.get(tp) is not st:  # the topic's deletion completed meanwhile: the znode is gone
                self._election_failed(tp, new_leader, st, "UNKNOWN_TOPIC_OR_PARTITION")
                return
            self._write_state(tp, leader=new_leader)
            self._publish([tp], leader_and_isr=True)

        self._process(decide(), at_ms)

    def _election_refusal(self, tp, new_leader) -> tuple | None:
        """Why an election of ``new_leader`` for ``tp`` is refused now, as ``(Kafka's error, message)``; None
        when it is not (whether the leader is a live ISR member is the election's own outcome)."""
        st = self.state.get(tp)
        if st is None:
            ids = sorted(p for t, p in self.state if t == tp[0])
            where = f"{tp[0]!r} has partitions 0 to {ids[-1]}" if ids else f"there is no topic {tp[0]!r}"
            return (
                "UNKNOWN_TOPIC_OR_PARTITION",
                f"UNKNOWN_TOPIC_OR_PARTITION: The partition does not exist. ({tp[0]}-{tp[1]}: {where})",
            )
        if tp[0] in self.deleting:
            return "INVALID_TOPIC_EXCEPTION", f"INVALID_TOPIC_EXCEPTION: The topic is being deleted ({tp[0]}-{tp[1]})"
        if new_leader not in st["replicas"]:
            return (
                "PREFERRED_LEADER_NOT_AVAILABLE",
                f"broker {new_leader} holds no replica of {tp[0]}-{tp[1]}; replicas: {st['replicas']}",
            )
        return None

    def _election_failed(self, tp, new_leader, st, error: str) -> None:
        isr = list(st["isr"]) if st is not None else []
        self.failed_elections.append((self.env.now, tp[0], tp[1], new_leader, isr, error))

    def _write_state(self, tp, *, leader: int | None = None, isr: list | None = None) -> None:
        """A new leader and/or ISR of ``tp`` written to its state znode (the caller has waited the write's
        ZooKeeper round trip): the controller's every such write gives the partition a new leader epoch,
        and the znode's version grows. A new leader (``-1``: none, offline) is kept in :attr:`decisions`
        when there is one. (AlterIsr, the leader's own ISR change, keeps the epoch: ``handle_alter_isr``.)"""
        st = self.state[tp]
        was = "OnlinePartition" if st["leader"] in self.live_brokers else "OfflinePartition"
        if isr is not None:
            st["isr"] = isr
        if leader is not None:
            st["leader"] = leader
        st["leader_epoch"] += 1
        st["zk_version"] += 1
        self._zk_set_state(tp)
        if leader is not None and leader >= 0:
            self.decisions.append(
                (self.env.now, tp[0], tp[1], leader, st["leader_epoch"], tuple(st["isr"]), st["zk_version"], was)
            )

    # -- OfflinePartitionLeaderElectionStrategy and OfflineReplica ------------------------------------
    def _offline_leader(self, tp) -> tuple:
        """``Election.leaderForOffline``: ``(leader, unclean)``. The first replica *in assignment order* that is
        online and in the ISR; if there is none and the topic has ``unclean.leader.election.enable=true``, the
        first that is online (an *unclean* election: it may lack records the ISR acknowledged); else
        ``(None, False)``: the partition stays offline. A broker in controlled shutdown is not online here
        (``ControllerContext.isReplicaOnline``: ``liveBrokerIds`` leaves out the shutting-down brokers)."""
        st = self.state[tp]
        online, isr = self._online(), st["isr"]
        leader = next((r for r in st["replicas"] if r in online and r in isr), None)
        if leader is not None or tp[0] not in self.unclean_topics:
            return leader, False
        leader = next((r for r in st["replicas"] if r in online), None)
        return leader, leader is not None

    def _online(self) -> set:
        """The brokers an offline election may use: live, and not shutting down."""
        return self.live_brokers - self.shutting_down

    def _offline(self, topic: str | None = None) -> list:
        """The partitions ``triggerOnlinePartitionStateChange`` tries (all, or ``topic``'s): no live leader
        (OfflinePartition), and not of a topic queued for deletion."""
        live, deleting = self.live_brokers, self.deleting
        return [
            tp
            for tp, st in self.state.items()
            if st["leader"] not in live and tp[0] not in deleting and (topic is None or tp[0] == topic)
        ]

    def _elect_offline(self, topic: str | None = None) -> list:
        """``triggerOnlinePartitionStateChange``: elect a leader for every offline partition (of ``topic``, when
        given). The new ISR is the old one's live members (``Election.leaderForOffline``), or the leader alone
        after an unclean election. A partition with no one to elect stays offline, and the attempt is kept in
        :attr:`failed_state_changes` (Kafka: ``failed to change state ... from OfflinePartition to
        OnlinePartition``, at every attempt until one succeeds). Returns the partitions elected; the caller
        has waited the ZooKeeper round trip and publishes them."""
        elected, online = [], self._online()
        for tp in self._offline(topic):
            st = self.state[tp]
            if tp in self.new_partitions:  # NewPartition: initialized, not elected
                if self._initialize(tp, online):
                    elected.append(tp)
                continue
            leader, unclean = self._offline_leader(tp)
            if leader is None:
                self.failed_state_changes.append((self.env.now, *tp, "OfflinePartition", OFFLINE_STRATEGY))
            elif unclean:  # the ISR is the new leader alone (leaderForOffline: List(leader))
                self._write_state(tp, leader=leader, isr=[leader])
                self.unclean_elections.append((self.env.now, *tp, leader))
                elected.append(tp)
            else:
                self._write_state(tp, leader=leader, isr=[r for r in st["isr"] if r in online])
                elected.append(tp)
        return elected

    def _offline_replica(self, tp, bid: int) -> bool:
        """``ReplicaStateMachine.removeReplicasFromIsr`` for broker ``bid``'s replica of ``tp`` gone offline:
        out of the ISR, *unless it is the ISR's last member* (Kafka keeps it, so that only a replica that
        has every acknowledged record can lead again), and no leader if it led. True when written."""
        st = self.state[tp]
        if bid not in st["isr"]:
            return False
        isr = st["isr"] if len(st["isr"]) == 1 else [r for r in st["isr"] if r != bid]
        self._write_state(tp, leader=-1 if st["leader"] == bid else None, isr=isr)
        return True

    # -- AlterIsr ------------------------------------------------------------------------------------
    def handle_alter_isr(self, req, respond) -> None:
        """``processAlterIsr``: validate, write, answer (``respond(req)``), then UpdateMetadata to all."""
        p = req.payload

        def work():
            broker = self.brokers.get(p["broker_id"])
            if (
                broker is None
                or p["broker_id"] not in self.live_brokers  # "Ignoring AlterIsr due to unknown broker"
                or p.get("broker_epoch", 0) != broker.broker_epoch
            ):
                req.error = "STALE_BROKER_EPOCH"
                req.result = None
                respond(req)
                return
            result, changed = {}, []
            for tp, (leader_epoch, isr, zk_version) in p["items"].items():
                st = self.state.get(tp)
                if st is None:
                    result[tp] = ("UNKNOWN_TOPIC_OR_PARTITION", None, leader_epoch, zk_version)
                elif leader_epoch < st["leader_epoch"]:
                    result[tp] = ("FENCED_LEADER_EPOCH", None, leader_epoch, zk_version)
                elif zk_version != st["zk_version"]:
                    result[tp] = ("INVALID_UPDATE_VERSION", None, leader_epoch, zk_version)
                else:
                    changed.append((tp, isr))
            if changed:
                epoch = self.epoch
                yield self.env.timeout(self.zk_latency_ms)
                if self.epoch != epoch or self.id < 0:  # the write is conditioned on the controller epoch
                    req.error = "NOT_CONTROLLER"
                    req.result = None
                    respond(req)
                    return
            for tp, isr in changed:
                st = self.state[tp]
                st["isr"] = list(isr)
                st["zk_version"] += 1
                self._zk_set_state(tp)
                result[tp] = ("NONE", list(isr), st["leader_epoch"], st["zk_version"])
            req.result = result
            respond(req)
            if changed:
                self._publish([tp for tp, _ in changed], leader_and_isr=False)

        self._process(work())

    # -- topic deletion ------------------------------------------------------------------------------
    def delete_topic(self, topic: str, *, at_ms: float = 0.0) -> None:
        """StopReplica(delete=false), then StopReplica(delete=true) to every replica of ``topic``.

        When every replica has answered the second (``TopicDeletionManager.completeDeleteTopic``), the
        partitions leave the controller's state, the time is kept in :attr:`deleted_topics`, and
        :attr:`topic_deleted_listeners` are told (the cluster forgets the topic, as ZooKeeper's
        ``/brokers/topics/<topic>`` goes then). Until then the topic exists.
        """
        check_time("at_ms", at_ms)
        tps = [tp for tp in self.state if tp[0] == topic]
        if not tps:
            raise ValueError(f"unknown topic {topic!r}")
        per_broker: dict = {}
        for tp in tps:
            for r in self.state[tp]["replicas"]:
                per_broker.setdefault(r, []).append(tp)
        waiting = {bid for bid in per_broker if bid in self.live_brokers}

        def deleted(req, bid):
            waiting.discard(bid)
            if not waiting:
                self.deleting.discard(topic)
                self.unclean_topics.discard(topic)  # /config/topics/<topic> goes with it
                self.new_partitions.difference_update(tps)
                self.deleted_topics[topic] = self.env.now
                for tp in tps:
                    self.state.pop(tp, None)
                    self._zk_delete_state(tp)
                for listener in self.topic_deleted_listeners:
                    listener(topic)

        # queued for deletion (TopicDeletionManager.enqueueTopicsForDeletion) from at_ms until it completes
        if at_ms <= self.env.now:
            self.deleting.add(topic)
        else:
            self.env.timeout(at_ms - self.env.now).callbacks.append(lambda _e: self.deleting.add(topic))
        for bid in sorted(waiting):
            b = self.brokers[bid]
            states = [{"topic": t, "partition": p, "leader_epoch": -2} for t, p in per_broker[bid]]
            self.send(b, "StopReplica", states, at_ms=at_ms, delete_partitions=False)
            self.send(
                b,
                "StopReplica",
                states,
                at_ms=at_ms,
                delete_partitions=True,
                callback=lambda req, bid=bid: deleted(req, bid),
            )
        gone = [{"topic": t, "partition": p, "leader": -2, "leader_epoch": -2} for t, p in tps]
        batch = self.new_batch()
        for bid in sorted(self.live_brokers & set(self.brokers)):
            self.send(self.brokers[bid], "UpdateMetadata", gone, at_ms=at_ms, batch=batch)

    # -- a topic config change ----------------------------------------------------------------------
    def enable_unclean_leader_election(self, topic: str, *, at_ms: float = 0.0) -> None:
        """``unclean.leader.election.enable=true`` set on ``topic`` at ``at_ms`` (``kafka-configs --alter``).

        The topic's config znode is written then: every later offline election of its partitions may be
        unclean. The change notification reaches the controller's broker a ZooKeeper round trip later
        (``TopicConfigHandler``), and an active controller then tries the topic's offline partitions at once
        (``processTopicUncleanLeaderElectionEnable``, which logs *Unclean leader election has been enabled
        for topic <t>*, then ``triggerOnlinePartitionStateChange(topic)``: a round trip to read their state).
        Kept in :attr:`events` as ``"unclean_enabled"``. No controller then: no trigger (the next one reads
        the config at its next election).
        """
        check_time("at_ms", at_ms)

        def work():
            if at_ms > self.env.now:
                yield self.env.timeout(at_ms - self.env.now)
            if not any(t == topic for t, _p in self.state):
                return  # gone by then: Kafka refuses the change (Topic '<t>' does not exist.)
            self.unclean_topics.add(topic)
            yield self.env.timeout(self.zk_latency_ms)
            if self.id < 0 or topic not in self.unclean_topics:
                return  # no active controller, or the topic was deleted meanwhile (its config with it)
            self.events.append((self.env.now, self.id, "unclean_enabled", {"topic": topic}))
            if self._offline(topic):
                yield self.env.timeout(self.zk_latency_ms)
                elected = self._elect_offline(topic)
                if elected:
                    self._publish(elected, leader_and_isr=True)

        self._process(work(), at_ms)

    # -- brokers leaving and joining -----------------------------------------------------------------
    def handle_controlled_shutdown(self, req, respond) -> None:
        """``doControlledShutdown``: move leadership off the broker, stop its follower replicas, answer.

        ``req.result`` is the partitions it still leads (``remainingPartitions``: none when every one it
        leads had another live ISR member). A stale broker epoch is ``STALE_BROKER_EPOCH`` and a broker the
        controller does not know as live ``BROKER_NOT_AVAILABLE``; nothing changes then.
        """
        p = req.payload

        def work():
            bid = p["broker_id"]
            broker = self.brokers.get(bid)
            if broker is not None and p.get("broker_epoch", 0) < broker.broker_epoch:
                req.error = "STALE_BROKER_EPOCH"
                respond(req)
                return
            if broker is None or bid not in self.live_brokers:
                req.error = "BROKER_NOT_AVAILABLE"
                respond(req)
                return
            self.events.append((self.env.now, self.id, "controlled_shutdown", {"broker": bid}))
            self.shutting_down.add(bid)
            led, followed = [], []
            for tp, st in self.state.items():
                if bid in st["replicas"] and len(st["replicas"]) > 1:
                    (led if st["leader"] == bid else followed).append(tp)
            moves = []
            for tp in led:
                st = self.state[tp]
                new = next(
                    (
                        r
                        for r in st["replicas"]
                        if r in st["isr"] and r in self.live_brokers and r not in self.shutting_down
                    ),
                    None,
                )
                if new is not None:
                    moves.append((tp, new))
                else:  # it stays here, and the attempt is logged (the model folds its ZooKeeper read away)
                    self.failed_state_changes.append((self.env.now, *tp, "OnlinePartition", SHUTDOWN_STRATEGY))
            if moves:
                yield self.env.timeout(self.zk_latency_ms)  # the state znodes, written together (pipelined)
                for tp, new in moves:
                    isr = [r for r in self.state[tp]["isr"] if r not in self.shutting_down]
                    self._write_state(tp, leader=new, isr=isr)
                self._publish([tp for tp, _ in moves], leader_and_isr=True)
            if followed:
                self.send(broker, "StopReplica", partitions=followed, delete_partitions=False, at_ms=self.env.now)
                shrink = [tp for tp in followed if bid in self.state[tp]["isr"]]
                if shrink:  # OfflineReplica: out of the ISR, a new leader epoch, LeaderAndIsr to the others
                    yield self.env.timeout(self.zk_latency_ms)
                    for tp in shrink:
                        self._write_state(tp, isr=[r for r in self.state[tp]["isr"] if r != bid])
                    self._publish(shrink, leader_and_isr=True, exclude=(bid,))
            req.result = tuple(tp for tp in led if self.state[tp]["leader"] == bid)
            respond(req)

        self._process(work())

    def on_broker_failure(self, bid: int, *, at_ms: float) -> None:
        """``onBrokerFailure``: the broker's registration znode is gone (its session closed) at ``at_ms``.

        Partitions it led elect the first live ISR member in assignment order (none: leader -1, offline);
        it leaves every ISR it is not the last member of; the changes are written together (Kafka writes the
        elections, then reads and writes the ISR removals: a few more round trips), then LeaderAndIsr to the
        live replicas and UpdateMetadata (which no longer lists it) to every live broker. A topic being
        deleted is left as it is (``onReplicasBecomeOffline``: its replicas fail their deletion instead).
        """

        def work():
            if at_ms > self.env.now:
                yield self.env.timeout(at_ms - self.env.now)
            known, now_epoch = self.broker_epochs.get(bid, -1), self.brokers[bid].broker_epoch
            if self.id >= 0 and bid in self.live_brokers and self.registered(bid) and now_epoch > known:
                # processBrokerChange reads /brokers/ids: the broker registered again (a new session, a new czxid)
                # before this was handled
                if not self.broker_epoch_check:
                    return  # the same ids as before (before 2.2, no epochs): nothing changed, as far as it can tell
                # a bounce (KIP-380): its channel goes (removeBroker), then onBrokerFailure, then onBrokerStartup
                # (the start-up that registration scheduled)
                self.events.append(
                    (self.env.now, self.id, "broker_bounced", {"broker": bid, "from": known, "to": now_epoch})
                )
            was_shutting_down = bid in self.shutting_down
            self.live_brokers.discard(bid)
            self.shutting_down.discard(bid)
            self._remove_channel(bid)
            if self.id < 0:
                return  # no controller: the next one reads the live brokers when it starts
            live = sorted(self.live_brokers & set(self.brokers))
            detail = {"broker": bid, "live": live, "was_shutting_down": was_shutting_down}
            self.events.append((self.env.now, self.id, "broker_failure", detail))
            affected = [tp for tp, st in self.state.items() if bid in st["replicas"]]
            changed = [
                tp
                for tp in affected
                if (self.state[tp]["leader"] == bid or bid in self.state[tp]["isr"]) and tp[0] not in self.deleting
            ]
            if changed:
                yield self.env.timeout(self.zk_latency_ms)
                # onReplicasBecomeOffline: the partitions it led are offline and elect a live ISR member (in
                # assignment order); then its replicas go offline (out of the ISR, or leader -1 where no one
                # could be elected: the partition stays offline). Every election made is sent: most are of
                # partitions it led, but one made electable meanwhile (a broker that just registered, a topic
                # whose unclean election was just enabled) is elected, and sent, here too
                elected = self._elect_offline()
                changed = [tp for tp in changed if tp in elected or self._offline_replica(tp, bid)]
                self._publish(list(dict.fromkeys(changed + elected)), leader_and_isr=True)
            rest = [tp for tp in affected if tp not in changed]
            if rest:
                self._publish(rest, leader_and_isr=False)
            if not changed and self._offline():
                # onReplicasBecomeOffline triggers the offline partitions' elections all the same (a ZooKeeper
                # read of their state); a failure makes none of them electable, so each attempt fails, unless
                # something else made one electable meanwhile (as above): that election is sent
                yield self.env.timeout(self.zk_latency_ms)
                elected = self._elect_offline()
                if elected:
                    self._publish(elected, leader_and_isr=True)

        self._process(work(), at_ms)

    def on_broker_startup(self, bid: int, *, at_ms: float) -> None:
        """``onBrokerStartup``: the broker registered again at ``at_ms`` (with its new broker epoch)."""

        def work():
            if at_ms > self.env.now:
                yield self.env.timeout(at_ms - self.env.now)
            while self.id < 0:  # an election in progress: the new controller finds it live
                yield self.env.timeout(self.zk_latency_ms)
            if bid in self.live_brokers and (
                not self.broker_epoch_check or self.broker_epochs.get(bid) == self.brokers[bid].broker_epoch
            ):
                # already live when this BrokerChange reads /brokers/ids: before 2.2 a bounce whose failure was never
                # handled looks like nothing (the same ids); or this incarnation's start-up already ran
                return
            self.broker_epochs[bid] = self.brokers[bid].broker_epoch  # read with its registration
            existing = sorted(self.live_brokers & set(self.brokers))
            self.live_brokers.add(bid)
            live = sorted(self.live_brokers & set(self.brokers))
            self.events.append((self.env.now, self.id, "broker_startup", {"broker": bid, "live": live}))
            batch = self.new_batch()
            for other in existing:
                self.send(self.brokers[other], "UpdateMetadata", [], at_ms=self.env.now, batch=batch)
            # the partitions with a leadership (a NewPartition has none: its replicas hear of it when it gets one)
            known = [tp for tp in self.state if tp not in self.new_partitions]
            tps = [tp for tp in known if bid in self.state[tp]["replicas"]]
            self.send(self.brokers[bid], "UpdateMetadata", [self.partition_state(tp) for tp in known])
            if tps:  # replicaStateMachine.handleStateChanges(OnlineReplica): its replicas' LeaderAndIsr, and (as
                # every LeaderAndIsr batch does: addLeaderAndIsrRequestForBrokers) UpdateMetadata to all for them
                states, batch = [self.partition_state(tp) for tp in tps], self.new_batch()
                self.send(self.brokers[bid], "LeaderAndIsr", states, batch=batch)
                for other in sorted(self.live_brokers & set(self.brokers)):
                    self.send(self.brokers[other], "UpdateMetadata", states, batch=batch)
            # triggerOnlinePartitionStateChange: every offline partition is tried (one whose ISR holds this
            # broker can lead again; the others fail again)
            if self._offline():
                yield self.env.timeout(self.zk_latency_ms)
                elected = self._elect_offline()
                if elected:
                    self._publish(elected, leader_and_isr=True)

        self._process(work(), at_ms)

    # -- a new controller ----------------------------------------------------------------------------
    def fail_over(self, *, at_ms: float, rng, load_round_trips: int = 5, by_hand: bool = False) -> None:
        """The controller changes at ``at_ms``: ``/controller`` is gone (with its broker's session, or deleted
        by an admin: ``by_hand``, the delete is made then), the old controller resigns and every live broker
        races to create it again.

        The winner is the live broker whose multi reaches ZooKeeper first (:meth:`_race_for_controller`; ``rng``
        draws each one's delay); it reads the cluster's state
        (``load_round_trips`` pipelined reads: broker registrations, topics, assignments, partition
        states) and then sends UpdateMetadata without partitions to every live broker, LeaderAndIsr and
        UpdateMetadata for every partition (``onControllerFailover``).
        """

        def work():
            if at_ms > self.env.now:
                yield self.env.timeout(at_ms - self.env.now)
            if self.id >= 0:
                self.events.append((self.env.now, self.id, "resigned", {"epoch": self.epoch}))
            old = self.brokers.get(self.id)
            if old is not None and old.online and old.node.paused:
                self._keep_zombie()
                # deposed while paused: it does not know yet. Its channels keep what they hold and send it when
                # it wakes, until its Expire event (zombie_resigns); the new controller builds channels of its own
                self.zombie_channels.extend(self._channels.values())
                self._channels = {}
            for bid in list(self._channels):
                self._remove_channel(bid)
            self.id = -1
            if by_hand and self.zk is not None and "/controller" in self.zk.znodes:  # an admin's delete
                self.zk.apply(Delete("/controller"), None, self.env.now)
            yield from self._take_over(rng, load_round_trips)

        self.env.process(work())

    def _take_over(self, rng, load_round_trips: int, delays=None):
        """The brokers race (:meth:`_race_for_controller`); the winner reads the cluster's state and tells every
        broker (``onControllerFailover``)."""
        winner, epoch = yield from self._race_for_controller(rng, delays=delays)
        if winner is None:
            return
        self.id, self.epoch = winner, epoch
        self.client_id = f"controller-{winner}"
        self._correlation = 0
        self.shutting_down = set()
        self.events.append((self.env.now, winner, "elected", {"epoch": self.epoch}))
        yield self.env.timeout(load_round_trips * self.zk_latency_ms)
        if (self.id, self.epoch) != (winner, epoch):
            return  # it resigned while it read the cluster's state (its broker stopped): the next one does this
        live = sorted(self.live_brokers & set(self.brokers))
        for bid in live:  # it read every registration, and each broker's epoch with it
            self.broker_epochs[bid] = self.brokers[bid].broker_epoch
        self._read_states()
        topics = sorted({tp[0] for tp in self.state})
        self.events.append((self.env.now, winner, "ready", {"epoch": self.epoch, "live": live, "topics": topics}))
        batch = self.new_batch()
        for bid in live:
            self.send(self.brokers[bid], "UpdateMetadata", [], at_ms=self.env.now, batch=batch)
        self._publish(list(self.state), leader_and_isr=True)
        # ReplicaStateMachine.startup, then PartitionStateMachine.startup: the replicas of brokers that are
        # gone (the old controller's own, when its broker stopped) go offline, then offline partitions elect
        gone = [(tp, r) for tp, st in self.state.items() for r in st["isr"] if r not in self.live_brokers]
        if gone or self._offline():
            yield self.env.timeout(self.zk_latency_ms)
            changed = [tp for tp, r in gone if self._offline_replica(tp, r)]
            elected = self._elect_offline()
            # a topic being deleted gets its ISR written but no LeaderAndIsr (ReplicaStateMachine, OfflineReplica)
            changed = [tp for tp in dict.fromkeys(changed + elected) if tp[0] not in self.deleting]
            if changed:
                self._publish(changed, leader_and_isr=True)

    @property
    def history(self) -> list:
        """``(from time_ms, controller id, epoch)`` of each controller in turn, id -1 from a resignation to the
        next election (read from :attr:`events`)."""
        out = [(0.0, *self._first)]
        for t, cid, ev, d in self.events:
            if ev in ("resigned", "elected"):
                out.append((t, -1 if ev == "resigned" else cid, d["epoch"]))
        return out

    def controller_at(self, t: float) -> tuple:
        """``(controller id, epoch)`` at simulated time ``t`` (id -1 while an election is in progress)."""
        cid, epoch = self.history[0][1], self.history[0][2]
        for t0, c, e in self.history:
            if t0 > t:
                break
            cid, epoch = c, e
        return cid, epoch

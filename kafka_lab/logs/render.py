"""From a simulated cluster to its brokers' log lines: one source of truth, the simulation's own records.

:func:`render` reads what a finished :class:`~kafka_lab.sim.cluster.Cluster` run kept and writes, for a
window of simulated time, the lines each broker's log4j would have written (docs/kafka-reference.md §4):

================== ====================================================================================
``kafka-request``  one ``Completed request:`` line per request a broker finished, at its ``end`` (the
                   request log: ``cluster.log``, :mod:`.requestlog`)
``state-change``   on each broker, the LeaderAndIsr it handles (``Handling ...`` when a handler takes it,
                   the become-leader / become-follower lines and ``Finished ...`` when its work is done),
                   each UpdateMetadata applied to its metadata cache and each StopReplica; on the
                   controller's broker, each decision (``Changed partition ...``) and what it sends
                   (the controller's decisions and its requests)
``server``         truncation (``Truncating to offset ...``, ``Loading producer state ...``, and below the
                   high watermark ``Non-monotonic update of high watermark ...``), the fetcher changes of a
                   become-follower (the replica managers' events);
                   a restart's steps: shutting down, the controlled shutdown, shut down, the start-up
                   (``Broker.lifecycle``, :func:`lifecycle_messages`)
``controller``     the controller's events (``Controller.events``): a broker shutting down, leaving and
                   joining, the old controller resigning, the new one elected and ready, its connections;
                   the scenario (:mod:`.scenario`) adds the start-up election and auto-rebalance checks
================== ====================================================================================

A :class:`Line` keeps its time in simulated ms and its text without the ``[%d]`` date, so that the
writer can place a window anywhere on the clock. Request lines keep their correlation id apart
(``head``, ``correlation_id``, ``tail``), so that a window written more than once continues each
client's correlation ids instead of repeating them. Rendered with a :class:`.slots.Slots`, every
offset, leader epoch, zkVersion and broker epoch in a line is a mark (``marked``), which each copy
fills with the value continued from the copies before it.

A position in a log segment (``Non-monotonic update of high watermark from (offset=33870 segment=[0:4066541])
...``) is the bytes of the batches before it (:func:`.requestlog.segment_bytes`: the request log's sizes),
in one segment from offset 0: the model's logs never roll (``segment.bytes`` is 1 GiB) and start at 0. The
old high watermark's position is known when it was the log end (as after a restart's log load, or on a
follower that had caught up: ``Log.updateHighWatermark`` keeps the log end's metadata); otherwise it is an
offset alone, ``segment=[-1:-1]``, as a follower's high watermark from a fetch response is in Kafka (a
former leader keeps its position there too, which the model does not track).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kafka_lab.sim.network.socket_server import DISCONNECTED

from . import messages as m
from .requestlog import BrokerView, json_message, segment_bytes, text_message
from .slots import LEADER_EPOCH, MARK, OFFSET, POSITION, ZK_VERSION, fill

__all__ = ["FILES", "Line", "render", "render_request", "MARKER", "lifecycle_messages", "server_startup"]

#: the four files of a broker's log directory, as Kafka's ``config/log4j.properties`` names them
FILES = ("server", "state-change", "kafka-request", "controller")
SERVER, STATE, REQUEST, CONTROLLER = range(4)

#: a correlation id no request has: rendered, then cut out of the text
MARKER = 1987654321


@dataclass(slots=True)
class Line:
    """One log line: when (simulated ms), which broker and file, and its text after ``[%d]``."""

    time_ms: float
    broker: int
    file: int  # index into FILES
    head: str  # " LEVEL message (logger)", or for a request line the text before the correlation id
    client: str | None = None  # a request line: the client whose correlation ids continue
    correlation_id: int = 0
    tail: str = ""  # a request line: the text after the correlation id
    seq: int = 0  # order among lines of the same time (a window keeps the order it wrote them in)
    marked: bool = False  # head or tail holds marks (:mod:`.slots`): offsets and epochs a copy shifts

    def text(self, correlation_id: int | None = None, shifts=None) -> str:
        """The text after ``[%d]``; ``correlation_id`` in place of the line's own, and each mark's value
        shifted by ``shifts[its key index]`` (:func:`.slots.fill`)."""
        if self.client is None:
            text = self.head
        else:
            text = f"{self.head}{self.correlation_id if correlation_id is None else correlation_id}{self.tail}"
        return fill(text, shifts) if self.marked else text


def _fmt(level: str, logger: str, message: str) -> str:
    return f" {level} {message} ({logger})"


def render_request(req, view: BrokerView, fmt: str = "json") -> tuple[str, str]:
    """``(head, tail)`` of a request line around its correlation id."""
    if fmt == "json":
        msg = json_message(req, view, correlation_id=MARKER)
    elif fmt == "text":
        msg = text_message(req, view, correlation_id=MARKER)
    else:
        raise ValueError(f"request log format is 'json' (2.8) or 'text' (2.7 and earlier), got {fmt!r}")
    head, tail = _fmt("DEBUG", "kafka.request.logger", msg).split(str(MARKER), 1)
    return head, tail


def _plain(_tp, value) -> int:
    return value


def _ok(t) -> bool:
    return t == t and not math.isinf(t)


#: a restart's one-line steps on the broker's server.log (``Broker.lifecycle`` events)
_BROKER_STEPS = {
    "shutting_down": m.kafka_server_shutting_down,
    "controlled_shutdown_started": m.controlled_shutdown_starting,
    "controlled_shutdown_succeeded": m.controlled_shutdown_succeeded,
    "controlled_shutdown_retry": m.controlled_shutdown_retrying,
    "unclean_shutdown": m.unclean_shutdown,
    "shut_down": m.kafka_server_shut_down,
}


def lifecycle_messages(cluster) -> list:
    """``(time_ms, "broker" | "controller", broker id, [(level, logger, message), ...])`` for every restart
    step a broker kept (``Broker.lifecycle``) and every controller event (``Controller.events``), in order."""
    out = []
    for bid, b in sorted(cluster.brokers.items()):
        for t, ev, d in b.lifecycle:
            if ev == "controlled_shutdown_failed":
                err, remaining = d if d is not None else ("NETWORK_EXCEPTION", ())
                lmms = m.controlled_shutdown_failed(bid, remaining, err)
            elif ev == "started":
                lmms = server_startup(cluster, bid)
            elif ev in _BROKER_STEPS:
                lmms = [_BROKER_STEPS[ev](bid)]
            else:
                continue  # "starting": nothing logged yet
            out.append((t, "broker", bid, lmms))
    ctl = cluster.controller
    for t, cid, ev, d in ctl.events:
        if ev == "controlled_shutdown":
            lmms = [m.controller_shutting_down_broker(cid, d["broker"])]
        elif ev == "broker_failure":
            lmms = [m.controller_broker_change(cid, dead=[d["broker"]], live=d["live"])]
            lmms += m.controller_broker_failure(cid, d["broker"], d["was_shutting_down"])
        elif ev == "broker_startup":
            b = d["broker"]
            lmms = [m.controller_broker_change(cid, new=[b], live=d["live"]), m.controller_broker_startup(cid, b)]
            lmms.append(controller_channel(cluster, cid, b, BrokerView(cluster, cid)))
        elif ev == "unclean_enabled":
            lmms = [m.controller_unclean_enabled(cid, d["topic"])]
        elif ev == "resigned":
            lmms = [m.controller_resigned(cid)]
        elif ev == "elected":
            lmms = [m.controller_elected(cid, d["epoch"], d["epoch"])]
        elif ev == "ready":
            lmms = m.controller_failover(cid, d["epoch"], d["live"], d["topics"])
            view = BrokerView(cluster, cid)
            lmms += [controller_channel(cluster, cid, b, view) for b in d["live"]]
        else:
            continue
        out.append((t, "controller", cid, lmms))
    out.sort(key=lambda x: x[0])
    return out


def server_startup(cluster, b: int) -> list:
    """server.log as a broker starts: its configuration, its socket servers, started. ``SocketServer.startup``
    (2.8) creates the control plane's acceptor and processor first, if this broker's own
    ``control.plane.listener.name`` names one, then one data-plane acceptor per other listener: the lines that
    tell an operator which plane serves which listener on this broker."""
    broker = cluster.brokers[b]
    cfg = broker.config
    out = [m.kafka_config(b, dict(cfg.props))]
    if cfg.control_plane_listener:
        out.append(m.socket_server_created(b, cfg.control_plane_listener.name, True))
    for lst in cfg.data_plane_listeners:
        out.append(m.socket_server_created(b, lst.name, False))
    out.append(m.kafka_server_started(b))
    return out


def controller_channel(cluster, c: int, b: int, view):
    """``RequestSendThread``'s line as controller ``c`` connects to broker ``b``: on the listener controller
    ``c``'s own config names (:func:`~kafka_lab.sim.zk.controller.controller_route`), at broker ``b``'s port for it."""
    from kafka_lab.sim.zk.controller import controller_route

    route = controller_route(cluster.brokers[c], cluster.brokers[b])
    port = cluster.brokers[b].config.listener(route.listener_name).port
    return m.controller_connected(c, b, view.hosts[b], port)


def _non_monotonic_hw(name: str, tp, d: dict, leo_before: int, off, pos):
    """``Log.updateHighWatermarkMetadata``'s WARN for a truncation (event ``d``) below the high watermark: from
    the old high watermark (its position when it was the log end, else the offset alone) to the new log end."""
    hw, offset = d["hw"], d["offset"]
    if hw == leo_before:
        old = m.log_offset_metadata(off(tp, hw), 0, pos(tp, segment_bytes(d["batches"] + d["removed_batches"], hw)))
    else:
        old = m.log_offset_metadata(off(tp, hw))
    new = m.log_offset_metadata(off(tp, offset), 0, pos(tp, segment_bytes(d["batches"], offset)))
    return m.non_monotonic_high_watermark(name, old, new)


def render(
    cluster, t0: float, t1: float, *, request_format: str = "json", views: dict | None = None, slots=None
) -> list[Line]:
    """Every line the cluster's brokers wrote in ``[t0, t1)`` simulated ms, in time order per broker and file.

    ``slots``: a :class:`.slots.Slots`; every offset, leader epoch, zkVersion and broker epoch is then
    written as its mark (``views``, when given, must carry the same), for the scenario's copies to shift.

    The cluster must have kept its requests whole (``cluster.log.keep_answered = True`` before the run, as
    :mod:`.scenario` does): a request line needs more of a request than the request log's columns."""
    views = views or {bid: BrokerView(cluster, bid, slots=slots) for bid in cluster.brokers}
    if slots is None:
        off = lep = zkv = pos = _plain
    else:

        def off(tp, v):
            return slots.mark(OFFSET, tp, v)

        def lep(tp, v):
            return slots.mark(LEADER_EPOCH, tp, v)

        def zkv(tp, v):
            return slots.mark(ZK_VERSION, tp, v)

        def pos(tp, v):
            return slots.mark(POSITION, tp, v)

    lines: list[Line] = []
    seq = 0

    def add(t, broker, f, lmm, req=None, trace=()):
        """One line; ``req``: the controller request whose correlation id the message names (rendered as
        :data:`MARKER` and cut out, so that a window written again continues the controller's ids);
        ``trace``: the lines of the exception the record is logged with (written after it)."""
        nonlocal seq
        if t0 <= t < t1:
            text = _fmt(*lmm) + "".join("\n" + x for x in trace)
            if req is None:
                lines.append(Line(t, broker, f, text, seq=seq))
            else:
                head, tail = text.split(str(MARKER), 1)
                lines.append(Line(t, broker, f, head, req.client_id, req.correlation_id, tail, seq))
            seq += 1

    # -- replica-manager events, per broker in time order: what LeaderAndIsr did and what the fetcher truncated
    epochs: dict = {}  # (broker, tp) -> last leader epoch seen (all partitions start at epoch 0)
    events_at: dict = {}  # (broker, time) -> [(kind, tp, detail)]
    for bid, b in sorted(cluster.brokers.items()):
        for t, kind, topic, part, d in b.replica_manager.events:
            events_at.setdefault((bid, t), []).append((kind, (topic, part), d))

    requests = [r for r in cluster.log if _ok(r.end)]
    # handled controller requests on each broker, by the time their work was done
    lai_at = {}
    for r in requests:
        if r.api == "LeaderAndIsr" and _ok(r.api_local_complete):
            lai_at[(r.connection.broker_id, r.api_local_complete)] = r

    for (bid, t), evs in sorted(events_at.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        req = lai_at.get((bid, t))
        leaders = [(tp, d) for kind, tp, d in evs if kind == "become_leader"]
        followers = [(tp, d) for kind, tp, d in evs if kind == "become_follower"]
        if req is not None:
            p = req.payload
            ctl, cep = p["controller_id"], p["controller_epoch"]
            add(req.dequeue, bid, STATE, m.handling_leader_and_isr(bid, MARKER, ctl, len(req.partitions)), req)
            if leaders:
                add(t, bid, STATE, m.stopped_fetchers_become_leader(bid, MARKER, ctl, cep, len(leaders)), req)
        for tp, d in leaders:
            prev = epochs.get((bid, tp), 0)
            add(
                t,
                bid,
                STATE,
                m.leader_starts(
                    bid,
                    m.tp_name(*tp),
                    lep(tp, d["leader_epoch"]),
                    off(tp, d["leo"]),
                    off(tp, d["hw"]),
                    d["isr"],
                    lep(tp, prev),
                ),
            )
            epochs[(bid, tp)] = d["leader_epoch"]
        for tp, d in followers:
            prev = epochs.get((bid, tp), 0)
            add(
                t,
                bid,
                STATE,
                m.follower_starts(
                    bid, m.tp_name(*tp), lep(tp, d["leader_epoch"]), off(tp, d["leo"]), off(tp, d["hw"]), lep(tp, prev)
                ),
            )
            epochs[(bid, tp)] = d["leader_epoch"]
        if followers:
            add(t, bid, SERVER, m.removed_fetcher(bid, [m.tp_name(*tp) for tp, _ in followers]))
            if req is not None:
                p = req.payload
                add(
                    t,
                    bid,
                    STATE,
                    m.stopped_fetchers_become_follower(
                        bid, p["controller_id"], p["controller_epoch"], MARKER, len(followers)
                    ),
                    req,
                )
            per_leader: dict = {}
            for tp, d in followers:
                per_leader.setdefault(d["leader"], []).append(
                    (m.tp_name(*tp), lep(tp, d["leader_epoch"]), off(tp, d["leo"]))
                )
            for leader, states in sorted(per_leader.items()):
                if leader in views:
                    host, port = views[bid].inter_broker_endpoint(leader)
                    add(t, bid, SERVER, m.added_fetcher(bid, leader, host, port, states))
        if req is not None:
            p = req.payload
            elapsed = math.floor(req.api_local_complete) - math.floor(req.dequeue)
            add(
                t,
                bid,
                STATE,
                m.finished_leader_and_isr(bid, elapsed, MARKER, p["controller_id"], len(req.partitions)),
                req,
            )
        for kind, tp, d in evs:
            if kind != "truncated":
                continue
            name = m.tp_name(*tp)
            leo_before = d["leo"] + d["removed_records"]
            if d["offset"] >= leo_before:
                add(t, bid, SERVER, m.truncating_no_effect(name, off(tp, d["offset"]), off(tp, leo_before)))
            else:  # (no WARN "... below high watermark": 2.8 tests for it after the HW has been lowered)
                add(t, bid, SERVER, m.truncating_log(name, off(tp, d["offset"])))
                add(t, bid, SERVER, m.loading_producer_state(name, off(tp, d["offset"])))
                if d["hw"] > d["offset"]:  # completeTruncation lowers the high watermark to the new log end
                    add(t, bid, SERVER, _non_monotonic_hw(name, tp, d, leo_before, off, pos))

    # -- controller requests handled on each broker (other than LeaderAndIsr, done above)
    for r in requests:
        bid = r.connection.broker_id
        if r.api == "UpdateMetadata" and _ok(r.api_local_complete) and r.error == "NONE":
            p = r.payload
            states = p["partition_states"]
            deleted = sum(1 for s in states if s["leader"] == -2)
            add(
                r.api_local_complete,
                bid,
                STATE,
                m.metadata_cache_updated(
                    bid, len(states) - deleted, deleted, p["controller_id"], p["controller_epoch"], MARKER
                ),
                r,
            )
        elif r.api == "StopReplica" and _ok(r.dequeue):
            p = r.payload
            add(r.dequeue, bid, STATE, m.handling_stop_replica(bid, MARKER, p["controller_id"], len(r.partitions)), r)
        elif r.api == "LeaderAndIsr" and (bid, r.api_local_complete) not in events_at and _ok(r.dequeue):
            p = r.payload  # a LeaderAndIsr that changed nothing (stale epochs): handled and finished all the same
            add(r.dequeue, bid, STATE, m.handling_leader_and_isr(bid, MARKER, p["controller_id"], len(r.partitions)), r)
            if not _ok(r.api_local_complete):
                continue  # its broker stopped while handling it: it never finished
            elapsed = math.floor(r.api_local_complete) - math.floor(r.dequeue)
            add(
                r.api_local_complete,
                bid,
                STATE,
                m.finished_leader_and_isr(bid, elapsed, MARKER, p["controller_id"], len(r.partitions)),
                r,
            )

    # -- the controller's side: its decisions and what it sends, on its own broker's state-change.log
    ctl = cluster.controller
    if any(c in cluster.brokers for _t, c, _e in ctl.history):
        # an attempt's failures are logged before its elections (electLeaderForPartitions, then
        # doHandleStateChanges' "Changed partition" lines): at one instant, they come first
        for t, topic, part, was, strategy in ctl.failed_state_changes:  # each attempt, with its exception
            cb, cep = ctl.controller_at(t)
            if cb in cluster.brokers:
                name = m.tp_name(topic, part)
                if was == "NewPartition":  # its "strategy" is the live brokers its exception lists
                    trace = m.new_partition_failed_exception(cb, cep, name, strategy)
                else:
                    trace = m.election_failed_exception(name, strategy)
                add(t, cb, STATE, m.failed_state_change(cb, cep, name, was), trace=trace)
        for t, topic, part, leader, epoch, isr, zk, was in ctl.decisions:  # the ISR and version it wrote then
            cb, cep = ctl.controller_at(t)
            if cb in cluster.brokers:
                tp = (topic, part)
                add(
                    t,
                    cb,
                    STATE,
                    m.changed_partition(cb, cep, m.tp_name(*tp), leader, lep(tp, epoch), isr, zkv(tp, zk), was),
                )
        # ControllerBrokerRequestBatch logs a batch when it hands it to the channels, which may send it later
        # (one request in flight per broker): a broker that comes back gets the state decided before, but its
        # requests are written when it returns. Within a batch the LeaderAndIsr lines come first, one per
        # broker, then one UpdateMetadata line for all its brokers; batches in the order they were queued
        # (the controller's correlation ids)
        entries, um_groups, batched = [], {}, set()
        for r in cluster.log:
            if not r.is_controller or not _ok(r.sent) or id(r.payload) in batched:
                continue  # a request sent again after its connection was lost is the batch's, logged once
            p = r.payload
            batched.add(id(p))
            cb, cep = p["controller_id"], p["controller_epoch"]
            states = p["partition_states"]
            order = (p["queued_ms"], cep, r.correlation_id)
            if r.api == "LeaderAndIsr":
                n_lead = sum(1 for s in states if s["leader"] == r.connection.broker_id)
                line = m.sending_leader_and_isr(cb, cep, r.connection.broker_id, n_lead, len(states) - n_lead)
                entries.append((order, cb, line))
            elif r.api == "UpdateMetadata":  # one line per batch, for all its brokers
                group = um_groups.setdefault(p["batch"], [order, [], cb, len(states)])
                group[0] = min(group[0], order)
                group[1].append(r.connection.broker_id)
        for order, brokers, cb, n in um_groups.values():
            entries.append((order, cb, m.sending_update_metadata(cb, order[1], brokers, n)))
        for order, cb, line in sorted(entries, key=lambda e: e[0]):
            add(order[0], cb, STATE, line)

    # -- restarts and controller changes: server.log of the broker, controller.log of the controller
    for t, kind, cid, lmms in lifecycle_messages(cluster):
        for lmm in lmms:
            add(t, cid, SERVER if kind == "broker" else CONTROLLER, lmm)

    # -- the request log: a request is logged when its response is done (RequestChannel.updateRequestMetrics); one
    # lost with its connection (DISCONNECTED: its broker stopped, or the client closed it first) never is
    for r in requests:
        if t0 <= r.end < t1 and r.error != DISCONNECTED:
            bid = r.connection.broker_id
            head, tail = render_request(r, views[bid], request_format)
            lines.append(Line(r.end, bid, REQUEST, head, r.client_id, r.correlation_id, tail, seq))
            seq += 1

    lines.sort(key=lambda ln: (ln.time_ms, ln.seq))
    if slots is not None:
        for ln in lines:
            ln.marked = MARK.search(ln.head) is not None or MARK.search(ln.tail) is not None
    return lines

"""A cluster over hours, written as its brokers' log directories, and the ground truth beside them.

The simulation is exact but slow (tens of thousands of requests per second of CPU), and a day of a
cluster's logs holds millions of lines. So the scenario simulates a handful of **windows**, each one
second of one cluster, renders each once (:func:`.render.render`), and writes the hours as a sequence
of those windows, one after another on the clock:

- ``steady-<level>``: the daily load shape's level (``low``, ``mid``, ``high``: :data:`LEVELS`
  producers at :data:`RATE_PER_S` sends a second each, acks=1, and one consumer);
- ``move-<broker>``: every :data:`EVENT_EVERY_S` seconds, a load spike on one broker (a burst of
  :data:`SPIKE_PRODUCERS` producers writing to the partitions it leads), and the controller moves
  leadership of one of them to another replica (a preferred-replica election). The broker hit turns
  round the cluster, so each broker is hit in turn.

The cluster is **half-way through KIP-291's migration**: brokers with an even id have
``control.plane.listener.name`` (the controller reaches them on ``CONTROLLER``), the others do not (it
uses the inter-broker ``PLAINTEXT`` listener, behind the clients' requests). That is what the logs let
a learner find: the spike on a broker without the control plane holds its LeaderAndIsr (a long
``requestQueueTimeMs``), its acks=1 writes to the moved partition are acknowledged and later truncated,
and its metadata stays stale longer.

Every window copy continues each client's correlation ids (:class:`.render.Line`), so request ids do
not repeat. Known simplifications, each a consequence of the replay: offsets and leader epochs inside
a window restart with each copy; the controller never fails over and no broker restarts (the cluster
model has no controller election yet: :func:`controller_startup` writes the election at the start).

:func:`generate` streams: memory is the windows' lines plus counters, whatever the hours. Each copy of
a window is written as one block per file (:func:`_write_copy`: the window's text, prepared once, with
each copy's dates and correlation ids put in), byte for byte what writing it line by line gives; a
copy with a damaged line, or whose lines straddle a second, is written line by line. The ground
truth (:func:`generate`'s return value, also written as ``ground-truth.json``) is computed from the
simulation's own records of what was written: lines per file, per broker/API/listener request counts
and exact percentiles of each phase, truncated records per partition, metadata staleness windows.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import messages as m
from .damage import Damage
from .render import CONTROLLER, REQUEST, SERVER, Line, render
from .requestlog import API_KEY_NAMES, BrokerView, phase_ms
from .writer import LogWriter

__all__ = [
    "WINDOW_MS",
    "LEVELS",
    "RATE_PER_S",
    "EVENT_EVERY_S",
    "SPIKE_PRODUCERS",
    "PHASES",
    "DEFAULT_START",
    "Window",
    "build_windows",
    "schedule",
    "load_level",
    "controller_startup",
    "generate",
    "weighted_quantile",
]

WINDOW_MS = 1000
#: producers per load level (the daily shape picks the level per window)
LEVELS = {"low": 2, "mid": 5, "high": 10}
RATE_PER_S = 20.0
EVENT_EVERY_S = 300
SPIKE_PRODUCERS = 150
TOPIC = "orders"
#: the request log's phases (JSON keys) and the ground truth's names for them
PHASES = {
    "totalTimeMs": ("start", "end"),
    "requestQueueTimeMs": ("start", "dequeue"),
    "localTimeMs": ("dequeue", "api_local_complete"),
    "remoteTimeMs": ("api_local_complete", "response_complete"),
    "responseQueueTimeMs": ("response_complete", "response_dequeue"),
    "sendTimeMs": ("response_dequeue", "end"),
}
DEFAULT_START = "2024-03-04T00:00:00"
QUANTILES = (0.5, 0.99)


def load_level(hour_of_day: float) -> str:
    """The daily load shape: low at night (around 04:00), high in the afternoon (around 16:00)."""
    x = 0.5 - 0.5 * math.cos(2 * math.pi * (hour_of_day - 4.0) / 24.0)
    return "low" if x < 1 / 3 else ("mid" if x < 2 / 3 else "high")


@dataclass
class Window:
    """One simulated second, rendered: its lines and what the ground truth needs of it."""

    name: str
    lines: list[Line]
    corr_span: dict  # client -> correlation ids one copy uses (its max + 1)
    requests: dict  # (broker, API_KEY_NAME, listener) -> {phase: np.ndarray of logged ms}
    truncations: dict  # (broker, topic, partition) -> (records, events)
    staleness: list  # (broker, topic, partition, leader epoch, decided_ms, stale_ms, applied)
    end_state: dict = field(default_factory=dict)  # (topic, partition) -> (leader, replicas)


def _cluster(n_brokers: int, seed: int):
    from kafka_lab.sim import Cluster

    cluster = Cluster(n_brokers, seed=seed, control_plane={b: b % 2 == 0 for b in range(1, n_brokers + 1)})
    # a log line needs the whole request (its payload, its response, who sent it), not the columns the
    # request log streams answered Produce/Fetch requests into; a window is one simulated second, so it fits
    cluster.log.keep_answered = True
    cluster.create_topic(TOPIC, 2 * n_brokers, min(3, n_brokers))
    return cluster


def _window(name: str, n_brokers: int, seed: int, *, producers: int, spike_on: int | None, fmt: str = "json") -> Window:
    cluster = _cluster(n_brokers, seed)
    tps = cluster.partitions_of(TOPIC)
    for i in range(producers):
        cluster.producer(f"producer-{i + 1}", topic=TOPIC, acks=1).open_loop(RATE_PER_S)
    cluster.consumer("consumer-1", topic=TOPIC)
    if spike_on is not None:
        led = [tp for tp in tps if cluster.leader_of(tp) == spike_on]
        for i in range(SPIKE_PRODUCERS):
            p = cluster.producer(f"spike-{i + 1}", topic=TOPIC, acks=1, partitions=led)
            p.burst(1, at_ms=0.0)
        moved = led[0]
        new_leader = next(r for r in cluster.controller.state[moved]["replicas"] if r != spike_on)
        cluster.controller.elect_leader(moved, new_leader, at_ms=2.0)
    res = cluster.run(float(WINDOW_MS))
    views = {bid: BrokerView(cluster, bid) for bid in cluster.brokers}
    lines = render(cluster, 0.0, float(WINDOW_MS), request_format=fmt, views=views)
    if spike_on is not None:  # the election as the controller logs it (KafkaController.onReplicaElection)
        ctl = cluster.controller
        for t, topic, part, leader, _epoch in ctl.decisions:
            tp = m.tp_name(topic, part)
            start = max(0.0, t - ctl.zk_latency_ms)
            lines.append(
                Line(
                    start, ctl.id, CONTROLLER, _fmt(m.preferred_election_started(ctl.id, [tp], "AdminClientTriggered"))
                )
            )
            lines.append(Line(t, ctl.id, CONTROLLER, _fmt(m.preferred_election_completed(ctl.id, tp, leader))))
        lines.sort(key=lambda ln: ln.time_ms)
    span: dict = {}
    for ln in lines:
        if ln.client is not None:
            span[ln.client] = max(span.get(ln.client, 0), ln.correlation_id + 1)
    # the requests written (render writes a request line at its end, inside the window)
    groups: dict = {}
    for r in cluster.log:
        if not (r.end == r.end and 0.0 <= r.end < WINDOW_MS):
            continue
        key = (r.connection.broker_id, API_KEY_NAMES[r.api], r.connection.listener)
        g = groups.setdefault(key, {k: [] for k in PHASES})
        for k, (a, b) in PHASES.items():
            g[k].append(phase_ms(getattr(r, a), getattr(r, b)))
    requests = {k: {p: np.asarray(v) for p, v in g.items()} for k, g in groups.items()}
    trunc: dict = {}
    for bid, b in cluster.brokers.items():
        for t, kind, topic, part, d in b.replica_manager.events:
            if kind == "truncated" and t < WINDOW_MS and d["removed_records"] > 0:
                rec, ev = trunc.get((bid, topic, part), (0, 0))
                trunc[(bid, topic, part)] = (rec + int(d["removed_records"]), ev + 1)
    stale = [
        (
            int(r.broker_id),
            r.topic,
            int(r.partition),
            int(r.leader_epoch),
            float(r.decided_ms),
            float(r.stale_ms),
            bool(r.applied),
        )
        for r in res.staleness.itertuples()
    ]
    end_state = {tp: (st["leader"], list(st["replicas"])) for tp, st in cluster.controller.state.items()}
    return Window(name, lines, span, requests, trunc, stale, end_state)


def _fmt(lmm) -> str:
    level, logger, msg = lmm
    return f" {level} {msg} ({logger})"


def build_windows(n_brokers: int = 3, seed: int = 0, *, request_format: str = "json") -> dict:
    """Every window the scenario uses, simulated and rendered (seeded: same seed, same windows)."""
    if isinstance(n_brokers, bool) or not isinstance(n_brokers, int) or n_brokers < 1:
        raise ValueError(f"--brokers is a whole number of brokers, at least 1, got {n_brokers!r}")
    out = {}
    for i, (level, n) in enumerate(LEVELS.items()):
        out[f"steady-{level}"] = _window(
            f"steady-{level}", n_brokers, seed * 1000 + i, producers=n, spike_on=None, fmt=request_format
        )
    if n_brokers >= 2:
        for b in range(1, n_brokers + 1):
            out[f"move-{b}"] = _window(
                f"move-{b}", n_brokers, seed * 1000 + 100 + b, producers=LEVELS["mid"], spike_on=b, fmt=request_format
            )
    return out


def schedule(hours: float, n_brokers: int, start: _dt.datetime, event_every_s: int = EVENT_EVERY_S):
    """``(offset ms, window name)`` of each second of the run, in order (a generator)."""
    n = round(hours * 3600_000 / WINDOW_MS)
    every = max(1, int(event_every_s) * 1000 // WINDOW_MS)
    event = 0
    for k in range(n):
        t = k * WINDOW_MS
        if n_brokers >= 2 and k % every == every // 2:
            event += 1
            yield t, f"move-{(event - 1) % n_brokers + 1}"
        else:
            hod = (start.hour + start.minute / 60 + t / 3600_000) % 24
            yield t, f"steady-{load_level(hod)}"


def controller_startup(cluster_like, controller_id: int, epoch: int = 1) -> list:
    """controller.log at start-up: the election (``KafkaController.elect``), the failover sequence, and the
    channel to each broker (``RequestSendThread``). ``cluster_like``: a simulated cluster (its brokers)."""
    brokers = sorted(cluster_like.brokers)
    out = [m.controller_elected(controller_id, epoch, epoch)]
    out += m.controller_failover(controller_id, epoch, brokers, [TOPIC])
    view = BrokerView(cluster_like, controller_id)
    for b in brokers:
        cfg = cluster_like.brokers[b].config
        name = cfg.control_plane_listener.name if cfg.control_plane_listener else cfg.inter_broker_listener_name
        port = next(
            lst.port
            for lst in (list(cfg.data_plane_listeners) + [cfg.control_plane_listener])
            if lst and lst.name == name
        )
        out.append(m.controller_connected(controller_id, b, view.hosts[b], port))
    return out


def _startup_server(cluster_like, b: int) -> list:
    broker = cluster_like.brokers[b]
    cfg = broker.config
    out = [m.kafka_config(b, dict(broker.config.props))]
    for lst in cfg.data_plane_listeners:
        out.append(m.socket_server_created(b, lst.name, False))
    if cfg.control_plane_listener:
        out.append(m.socket_server_created(b, cfg.control_plane_listener.name, True))
    out.append(m.kafka_server_started(b))
    return out


def weighted_quantile(values_weights, q: float) -> float:
    """numpy's default (linear) quantile of the multiset where each value repeats its weight times.

    ``values_weights``: ``[(values array, weight), ...]``; exact, without expanding the multiset.
    """
    vals = np.concatenate([v for v, _ in values_weights]) if values_weights else np.array([])
    wts = (
        np.concatenate([np.full(len(v), w, dtype=np.int64) for v, w in values_weights])
        if values_weights
        else np.array([])
    )
    keep = wts > 0
    vals, wts = vals[keep], wts[keep]
    if len(vals) == 0:
        return float("nan")
    order = np.argsort(vals, kind="stable")
    vals, cum = vals[order], np.cumsum(wts[order])
    n = int(cum[-1])
    h = (n - 1) * q
    lo, hi = math.floor(h), math.ceil(h)

    def at(i):  # the i-th smallest (0-based) of the expanded multiset
        return float(vals[np.searchsorted(cum, i + 1)])

    return at(lo) + (h - lo) * (at(hi) - at(lo))


def _parse_start(start) -> _dt.datetime:
    if isinstance(start, _dt.datetime):
        t = start
    else:
        try:
            t = _dt.datetime.fromisoformat(str(start))
        except ValueError:
            raise ValueError(f"--start is an ISO 8601 time such as {DEFAULT_START!r}, got {start!r}") from None
    return t.replace(tzinfo=_dt.UTC) if t.tzinfo is None else t.astimezone(_dt.UTC)


def generate(
    out_dir,
    *,
    hours: float = 1.0,
    brokers: int = 3,
    seed: int = 0,
    damage: float = 0.0,
    start=DEFAULT_START,
    request_format: str = "json",
    roll: bool = True,
    event_every_s: int = EVENT_EVERY_S,
    progress=None,
    gzip: bool = False,
) -> dict:
    """Write the cluster's log directories under ``out_dir`` and ``ground-truth.json``; return the truth.

    ``event_every_s``: seconds between leader moves (each with a load spike on the broker that loses
    leadership). ``gzip``: each file gzip-compressed (:class:`.writer.LogWriter`). ``progress``: called with the number of windows written since the last call (a tqdm's ``update``).
    """
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not hours > 0:
        raise ValueError(f"--hours is a positive number of hours, got {hours!r}")
    if request_format not in ("json", "text"):
        raise ValueError(f"request log format is 'json' (2.8) or 'text' (2.7 and earlier), got {request_format!r}")
    if isinstance(event_every_s, bool) or not isinstance(event_every_s, int) or event_every_s < 2:
        raise ValueError(f"--event-every is a whole number of seconds, at least 2, got {event_every_s!r}")
    t0 = _parse_start(start)
    windows = build_windows(brokers, seed, request_format=request_format)
    any_w = next(iter(windows.values()))
    sample = _cluster(brokers, seed)  # the cluster's brokers and configs, for the start-up lines
    controller_id = sample.controller.id
    start_ms = int(t0.timestamp() * 1000)
    dmg = Damage(damage, seed=seed)
    bases: dict = {}  # client -> next correlation id
    copies: dict = dict.fromkeys(windows, 0)
    plans: dict = {}  # window name -> _CopyPlan
    with LogWriter(out_dir, sorted(sample.brokers), roll=roll, gzip=gzip) as w:
        for b in sorted(sample.brokers):
            for lmm in _startup_server(sample, b):
                text = _fmt(lmm)
                w.write(b, SERVER, start_ms, text, continuations=text.count("\n"))
        for lmm in controller_startup(sample, controller_id):
            w.write(controller_id, CONTROLLER, start_ms, _fmt(lmm))
        last_check = 0
        for off, name in schedule(hours, brokers, t0, event_every_s):
            win = windows[name]
            copies[name] += 1
            base_ms = start_ms + off
            if off - last_check >= EVENT_EVERY_S * 1000:  # leader.imbalance.check.interval.seconds = 300
                last_check = off
                ratios = _imbalance(any_w.end_state, brokers)
                for lmm in m.auto_rebalance(controller_id, ratios):
                    w.write(controller_id, CONTROLLER, base_ms, _fmt(lmm))
            if not _write_copy(w, dmg, win, base_ms, bases, plans):
                for ln in win.lines:
                    t = base_ms + ln.time_ms
                    text = ln.text(None if ln.client is None else bases.get(ln.client, 0) + ln.correlation_id)
                    _write(w, dmg, ln, t, text)
            for c, n in win.corr_span.items():
                bases[c] = bases.get(c, 0) + n
            if progress is not None:
                progress(1)
        files = w.close()
    truth = _truth(
        windows,
        copies,
        w,
        files,
        dmg,
        hours=hours,
        brokers=brokers,
        seed=seed,
        start=t0,
        sample=sample,
        event_every_s=event_every_s,
    )
    Path(out_dir, "ground-truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    return truth


class _CopyPlan:
    """What every copy of one window writes, prepared once: per file, its lines' positions, and the
    pieces of the file's block (``"".join``-ed per copy): each line's date up to the second and a
    request's correlation id go into empty slots between constant pieces, made for the milliseconds
    the lines fall on."""

    __slots__ = ("times", "files", "clients", "pieces")

    def __init__(self, win: Window):
        lines = win.lines
        self.times = np.array([ln.time_ms for ln in lines], dtype=np.float64)
        self.clients = sorted({ln.client for ln in lines if ln.client is not None})
        client_index = {c: i for i, c in enumerate(self.clients)}
        by_file: dict = {}
        for i, ln in enumerate(lines):
            by_file.setdefault((ln.broker, ln.file), []).append(i)
        self.files = []
        for key, idx in by_file.items():
            req = [i for i in idx if lines[i].client is not None]
            dates, ids, k = [], [], 0  # slots: each line is date, text[, id, tail]
            for i in idx:
                dates.append(k)
                k += 2
                if lines[i].client is not None:
                    ids.append(k)
                    k += 2
            self.files.append(
                (
                    key,
                    idx,
                    np.array(dates, dtype=np.int64),
                    np.array(ids, dtype=np.int64),
                    np.array([client_index[lines[i].client] for i in req], dtype=np.int64),
                    np.array([lines[i].correlation_id for i in req], dtype=np.int64),
                )
            )
        self.pieces: tuple = (None, None)  # (milliseconds of each line, {file key: object array of pieces})

    def pieces_for(self, lines: list, millis: np.ndarray) -> dict:
        if self.pieces[0] is None or not np.array_equal(self.pieces[0], millis):
            out = {}
            for key, idx, _d, _i, _c, _n in self.files:
                parts = []
                for i in idx:
                    ln = lines[i]
                    parts += [None, f"{int(millis[i]):03d}]{ln.head}"]
                    if ln.client is not None:
                        parts += [None, ln.tail]
                    parts[-1] += "\n"
                arr = np.empty(len(parts), dtype=object)
                arr[:] = parts
                out[key] = arr
            self.pieces = (millis, out)
        return self.pieces[1]


def _write_copy(w: LogWriter, dmg: Damage, win: Window, base_ms: int, bases: dict, plans: dict) -> bool:
    """Write one copy of ``win`` at ``base_ms`` a block per file, byte for byte what the line-by-line loop
    of :func:`generate` writes; False (nothing written, no random draw consumed) when the copy needs that
    loop: a damaged line in it, or lines in more than one second (a start between whole seconds)."""
    if not win.lines:
        return True
    plan = plans.get(win.name)
    if plan is None:
        plan = plans[win.name] = _CopyPlan(win)
    ms = np.floor(base_ms + plan.times).astype(np.int64)  # the loop's int((base_ms + time_ms) // 1), per line
    second = int(ms.min()) // 1000
    if int(ms.max()) // 1000 != second:
        return False
    if dmg.fraction > 0.0:  # the loop draws one number per line, and more for a damaged one
        state = dmg.rng.getstate()
        rnd, f = dmg.rng.random, dmg.fraction
        if any(rnd() < f for _ in range(len(win.lines))):
            dmg.rng.setstate(state)
            return False
    pieces = plan.pieces_for(win.lines, ms - second * 1000)
    date = w.fmt.second(second)
    base = np.array([bases.get(c, 0) for c in plan.clients], dtype=np.int64)
    for key, idx, dates, ids, clients, corr in plan.files:
        block = pieces[key].copy()
        block[dates] = date
        if len(ids):
            block[ids] = list(map(str, (base[clients] + corr).tolist()))
        w.write_block(key[0], key[1], second * 1000, "".join(block.tolist()), len(idx))
    return True


def _write(w: LogWriter, dmg: Damage, ln: Line, t: float, text: str) -> None:
    kind = dmg.roll()
    if kind == 0:
        w.write(ln.broker, ln.file, t, text)
    elif kind == 1:
        full = w.fmt(int(t // 1)) + text
        w.write_raw(ln.broker, ln.file, t, dmg.cut(full))
        if ln.file == REQUEST:
            key = _request_key(text, ln.broker)
            dmg.counts["cut_requests"][key] = dmg.counts["cut_requests"].get(key, 0) + 1
    elif kind == 2:
        w.write_raw(ln.broker, ln.file, t, dmg.garbage())
        w.write(ln.broker, ln.file, t, text)
    else:
        other = ln.broker + 1 if ln.broker + 1 in {k[0] for k in w.files} else 1
        _level, head, trace = dmg.stack_trace(ln.broker, other)
        w.write(ln.broker, SERVER, t, head + "\n" + "\n".join(trace), continuations=len(trace))
        w.write(ln.broker, ln.file, t, text)


def _request_key(text: str, broker: int):
    i = text.index('"requestApiKeyName":"') + 21 if '"requestApiKeyName":"' in text else -1
    if i >= 0:
        api = text[i : text.index('"', i)]
        j = text.index('"listener":"') + 12
        return (broker, api, text[j : text.index('"', j)])
    api = text[text.index("apiKey=") + 7 : text.index(",", text.index("apiKey="))]
    j = text.index(",listener:") + 10
    return (broker, api, text[j : text.index(",", j)])


def _imbalance(end_state: dict, brokers: int) -> dict:
    """``{broker: share of the partitions it is preferred leader of that it does not lead}`` (window start state)."""
    pref: dict = {}
    for _tp, (leader, replicas) in end_state.items():
        p = replicas[0]
        n, off = pref.get(p, (0, 0))
        pref[p] = (n + 1, off + (leader != p))
    return {b: (off / n if n else 0.0) for b, (n, off) in pref.items()}


def _truth(windows, copies, w, files, dmg, *, hours, brokers, seed, start, sample, event_every_s) -> dict:
    used = {k: v for k, v in copies.items() if v}
    req: dict = {}
    for name, k in used.items():
        for key, phases in windows[name].requests.items():
            req.setdefault(key, []).append((phases, k))
    requests = []
    for (b, api, lst), parts in sorted(req.items()):
        row = {"broker": b, "api": api, "listener": lst, "count": int(sum(len(p["totalTimeMs"]) * k for p, k in parts))}
        for ph in PHASES:
            vw = [(p[ph], k) for p, k in parts]
            for q in QUANTILES:
                row[f"{ph}_p{round(q * 100)}"] = weighted_quantile(vw, q)
        requests.append(row)
    trunc: dict = {}
    for name, k in used.items():
        for key, (rec, ev) in windows[name].truncations.items():
            r0, e0 = trunc.get(key, (0, 0))
            trunc[key] = (r0 + rec * k, e0 + ev * k)
    stale: dict = {}
    for name, k in used.items():
        for b, _t, _p, _e, _d, ms, applied in windows[name].staleness:
            stale.setdefault(b, []).append((np.array([ms]), k, applied))
    staleness = [
        {
            "broker": b,
            "windows": int(sum(k for _, k, _a in v)),
            "never_applied": int(sum(k for _, k, a in v if not a)),
            "max_ms": float(max(float(x[0]) for x, _k, _a in v)),
            "p50_ms": weighted_quantile([(x, k) for x, k, _a in v], 0.5),
        }
        for b, v in sorted(stale.items())
    ]
    return {
        "seed": seed,
        "hours": hours,
        "event_every_s": event_every_s,
        "brokers": brokers,
        "start": start.strftime("%Y-%m-%d %H:%M:%S"),
        "controller": sample.controller.id,
        "control_plane": {
            str(b): sample.brokers[b].config.control_plane_listener is not None for b in sorted(sample.brokers)
        },
        "windows": used,
        "lines": {
            "lines_read": w.lines,
            "records": w.records,
            "continuations": w.continuations,
            "rejected": w.rejected,
        },
        "files": files,
        "bytes": w.bytes,
        "requests": requests,
        "truncations": [
            {"broker": b, "topic": t, "partition": p, "records": rec, "events": ev}
            for (b, t, p), (rec, ev) in sorted(trunc.items())
        ],
        "staleness": staleness,
        "damage": dmg.summary(),
    }

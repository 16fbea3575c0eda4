"""How fast do the labs' live panels answer? The time from moving a control to a redrawn panel.

Labs 03-07's and 09's panels that run the model. Each panel is built (its first run), then every setting a learner
reaches in a step or two is set in turn: each slider over its range (at most a dozen values), then every
other value of each toggle, dropdown and checkbox (in labs 04-06: acks, request.timeout.ms,
min.insync.replicas, the control plane broker by broker, lab 06's busy broker; in lab 03: the control
plane and the rejected alternative). Labs 04-06's panels serve a setting they have seen from the run
cache: the *cold* column is a setting seen for the first time (a model run, the statistics, the figures
as plotly JSON), the *warm* one is a setting seen before. Lab 03's panels keep no cache, and lab 07's keep
only their closed-form runs (``functools.lru_cache``), not the figures: every move of theirs is counted cold. Both as wall time and as CPU time of this process (on a shared machine the CPU time
is the one that does not measure the neighbours). The aim: every cold answer under 0.5 s.

    .venv/bin/python benchmarks/panels.py
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

import plotly.io as pio

from kafka_lab.incident_stats import cached_runs


def _find(widget, test):
    if test(widget):
        return widget
    for child in getattr(widget, "children", ()):
        hit = _find(child, test)
        if hit is not None:
            return hit
    return None


def _moves(panel):
    """(widget, value) pairs a learner reaches: every widget's other values, one at a time, then back."""
    moves = []
    for w in _all(panel):  # sliders over their range, at most a dozen values, then back
        if type(w).__name__ in ("IntSlider", "FloatSlider"):
            steps = round((w.max - w.min) / w.step)
            every = max(1, -(-steps // 12))
            moves += [(w, w.min + i * w.step) for i in range(0, steps + 1, every)] + [(w, w.value)]
    for w in _all(panel):
        if type(w).__name__ in ("IntSlider", "FloatSlider", "Button") or (
            not hasattr(w, "options") and type(w).__name__ != "Checkbox"
        ):
            continue
        start = w.value
        others = (
            [not start] if type(w).__name__ == "Checkbox" else [o[1] if isinstance(o, tuple) else o for o in w.options]
        )
        moves += [(w, v) for v in others if v != start] + [(w, start)]
    return moves


def _all(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _all(child)


def measure(name, build) -> str:
    pio.renderers.default = "json"  # what a notebook gets: the figure as JSON (no browser here)
    with contextlib.redirect_stdout(io.StringIO()):  # the JSON the renderer prints
        t0, c0 = time.perf_counter(), time.process_time()
        runs = set(cached_runs())
        panel = build()
        first = (time.perf_counter() - t0, time.process_time() - c0)
        # the panel serves settings it has seen from the run cache when its first draw put a run there (a
        # new key: with the cache full, an older one made room)
        cached = not set(cached_runs()) <= runs
        cold, warm, slow = [], [], []
        for w, v in _moves(panel):
            runs = set(cached_runs())
            t0, c0 = time.perf_counter(), time.process_time()
            w.value = v
            dt = (time.perf_counter() - t0, time.process_time() - c0)
            # a cache hit only reorders the keys; a miss adds one (and evicts the oldest once the cache is full)
            (cold if not cached or not set(cached_runs()) <= runs else warm).append(dt)
            if dt[1] > 0.5:
                slow.append(f"{getattr(w, 'description', '') or type(w).__name__}={v!r}: {dt[1]:.2f} s CPU")

    def fmt(xs, i):
        return f"median {statistics.median(x[i] for x in xs):.2f} s, max {max(x[i] for x in xs):.2f} s" if xs else "-"

    return (
        f"{name}: first draw {first[0]:.2f} s wall / {first[1]:.2f} s CPU; {len(cold)} cold moves: wall "
        f"{fmt(cold, 0)}, CPU {fmt(cold, 1)}; {len(warm)} warm: wall {fmt(warm, 0)}"
        + (f"\n  over 0.5 s: {'; '.join(slow)}" if slow else "")
    )


def main() -> None:
    from kafka_lab.exercises.lab09 import kraft_run
    from kafka_lab.ui.lab03 import backlog_panel, request_path_panel
    from kafka_lab.ui.lab04 import purgatory_panel
    from kafka_lab.ui.lab05 import truncation_panel
    from kafka_lab.ui.lab06 import staleness_panel
    from kafka_lab.ui.lab07 import election_panel, failover_panel, shutdown_panel, zombie_panel
    from kafka_lab.ui.lab09 import fencing_panel, incidents_panel, metadata_log_panel

    for name, build in (
        ("lab 03 request_path_panel", lambda: request_path_panel(rate=10000)),
        ("lab 03 backlog_panel", lambda: backlog_panel(backlog=1500)),
        ("lab 04 purgatory_panel", purgatory_panel),
        ("lab 05 truncation_panel", truncation_panel),
        ("lab 06 staleness_panel", staleness_panel),
        ("lab 07 election_panel", election_panel),
        ("lab 07 shutdown_panel", shutdown_panel),
        ("lab 07 failover_panel", failover_panel),
        ("lab 07 zombie_panel", zombie_panel),
        ("lab 09 metadata_log_panel", lambda: metadata_log_panel(kraft_run())),
        ("lab 09 incidents_panel", incidents_panel),
        ("lab 09 fencing_panel", fencing_panel),
    ):
        print(measure(name, build), flush=True)


if __name__ == "__main__":
    main()

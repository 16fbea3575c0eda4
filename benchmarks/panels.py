"""How fast do labs 04-06's live panels answer? The time from moving a control to a redrawn panel.

Each panel is built (its first run), then every setting a learner reaches in a step or two is set in
turn: the producers slider over its range, acks, request.timeout.ms, min.insync.replicas, the control
plane broker by broker (and, in lab 06, the busy broker). A setting the panel has seen is served from the
run cache; the *cold* column is a setting seen for the first time (a model run, the statistics, the
figures as plotly JSON), the *warm* one is a setting seen before. Both as wall time and as CPU time of
this process (on a shared machine the CPU time is the one that does not measure the neighbours).
The aim: every cold answer under 0.5 s.

    .venv/bin/python benchmarks/panels.py
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

import plotly.io as pio

from kafka_lab.incident_stats import CACHE_SIZE, cached_runs


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
    slider = _find(panel, lambda w: "kl-primary-control" in getattr(w, "_dom_classes", ()))
    moves += [(slider, v) for v in range(slider.min, slider.max + 1, slider.step * 2)] + [(slider, slider.value)]
    for w in _all(panel):
        if w is slider or (not hasattr(w, "options") and type(w).__name__ != "Checkbox"):
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
        panel = build()
        first = (time.perf_counter() - t0, time.process_time() - c0)
        cold, warm, slow = [], [], []
        for w, v in _moves(panel):
            runs = len(cached_runs())
            t0, c0 = time.perf_counter(), time.process_time()
            w.value = v
            dt = (time.perf_counter() - t0, time.process_time() - c0)
            (cold if len(cached_runs()) > runs or len(cached_runs()) == CACHE_SIZE else warm).append(dt)
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
    from kafka_lab.ui.lab04 import purgatory_panel
    from kafka_lab.ui.lab05 import truncation_panel
    from kafka_lab.ui.lab06 import staleness_panel

    for name, build in (
        ("lab 04 purgatory_panel", purgatory_panel),
        ("lab 05 truncation_panel", truncation_panel),
        ("lab 06 staleness_panel", staleness_panel),
    ):
        print(measure(name, build), flush=True)


if __name__ == "__main__":
    main()

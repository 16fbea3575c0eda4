"""Broker metrics on the simulated clock, under Kafka's names.

Each metric is kept as an exact *change log*: a piecewise-constant function of simulated time
(the value after every change, with the time of the change). From it come

- exact time averages (the integral of a piecewise-constant function, not an average of samples),
  which is what Little's law needs: time-average queue size = arrival rate × mean time in queue;
- the sampled table a learner plots (:meth:`Metrics.frame`), taken every ``interval_ms`` of
  simulated time like a JMX poller would.

Gauges (``RequestQueueSize``, ``ControlPlaneRequestQueueSize``, ``ResponseQueueSize``,
``ControlPlaneResponseQueueSize``, ``PurgatorySize``) are sampled as their value at the sample time.
``*AvgIdlePercent`` metrics are kept as the number of *busy* threads of a pool; a sample is the
fraction of the pool's thread time that was idle over the preceding interval, a number in 0..1
("percent" in name only, in Kafka too). What counts as idle is Kafka's: a request handler is idle
while it polls an empty request queue (``RequestHandlerAvgIdlePercent`` is a meter each handler
marks with its poll time / the number of handlers, an exponentially weighted rate); a network
processor is idle only while it waits in its selector (``NetworkProcessorAvgIdlePercent`` averages
the processors' ``io-wait-ratio``, a windowed rate), so a processor blocked putting a request into
a full queue is *busy*. Here the window is exact rather than weighted or windowed.
"""

from __future__ import annotations

from array import array

import numpy as np
import pandas as pd

__all__ = ["Gauge", "Metrics"]


class Gauge:
    """A piecewise-constant quantity of simulated time, recorded at each change."""

    __slots__ = ("name", "env", "_times", "_values", "_last", "value", "threads")

    def __init__(self, env, name: str, threads: int = 0):
        self.env = env
        self.name = name
        # the change log as typed arrays (16 bytes a change, not a float object and two list slots)
        self._times = array("d", [0.0])
        self._values = array("q", [0])
        self._last = 0.0  # the time of the last change (_times[-1], kept as a float to compare with)
        self.value = 0
        self.threads = threads  # > 0: a busy-thread count of a pool of that size (an idle-percent metric)

    @property
    def times(self) -> list:
        """The times of the changes (ms), the first at 0."""
        return self._times.tolist()

    @property
    def values(self) -> list:
        """The value after each change."""
        return self._values.tolist()

    def add(self, delta: int) -> None:
        self.value = v = self.value + delta
        t = self.env.now
        if self._last == t:  # a later change at the same instant: the value after it is what counts
            self._values[-1] = v
        else:
            self._last = t
            self._times.append(t)
            self._values.append(v)

    def pulse(self) -> None:
        """One in and one out at the same instant (``add(1)`` then ``add(-1)``): the value stays, and the
        change log records the instant exactly as the two changes would."""
        t = self.env.now
        if self._last != t:
            self._last = t
            self._times.append(t)
            self._values.append(self.value)

    def integral(self, t) -> np.ndarray:
        """∫₀ᵗ value dt for each t in ``t`` (exact)."""
        times = np.array(self._times, dtype=float)
        values = np.array(self._values, dtype=float)
        cum = np.concatenate(([0.0], np.cumsum(values[:-1] * np.diff(times))))
        t = np.asarray(t, dtype=float)
        i = np.searchsorted(times, t, side="right") - 1
        return cum[i] + values[i] * (t - times[i])

    def at(self, t) -> np.ndarray:
        """The value in force at each time in ``t`` (after every change at that time)."""
        times = np.array(self._times, dtype=float)
        i = np.searchsorted(times, np.asarray(t, dtype=float), side="right") - 1
        return np.array(self._values, dtype=float)[i]

    def time_average(self, t0: float, t1: float) -> float:
        """The exact time average over [t0, t1]."""
        a, b = self.integral([t0, t1])
        return float((b - a) / (t1 - t0))


class Metrics:
    """The registry of a broker's metrics."""

    def __init__(self, env):
        self.env = env
        self.gauges: dict[str, Gauge] = {}

    def gauge(self, name: str, threads: int = 0) -> Gauge:
        if name in self.gauges:
            raise ValueError(f"metric {name} registered twice")
        g = self.gauges[name] = Gauge(self.env, name, threads)
        return g

    def time_average(self, name: str, t0: float = 0.0, t1: float | None = None) -> float:
        """Exact time average of a gauge; for an idle-percent metric, the idle fraction of the pool."""
        g = self.gauges[name]
        t1 = self.env.now if t1 is None else t1
        avg = g.time_average(t0, t1)
        return 1.0 - avg / g.threads if g.threads else avg

    def frame(self, interval_ms: float, until: float | None = None) -> pd.DataFrame:
        """Samples every ``interval_ms`` up to ``until``: one row per sample time, one column per metric."""
        until = self.env.now if until is None else until
        n = int(until // interval_ms)
        t = np.arange(1, n + 1) * interval_ms
        cols = {"time_ms": t}
        for name, g in self.gauges.items():
            if g.threads:
                busy = np.diff(g.integral(np.concatenate(([0.0], t))))
                cols[name] = 1.0 - busy / (g.threads * interval_ms)
            else:
                cols[name] = g.at(t)
        return pd.DataFrame(cols)

    def changes(self) -> pd.DataFrame:
        """Every metric's change log (long format: metric, time_ms, value)."""
        parts = [
            pd.DataFrame({"metric": name, "time_ms": g.times, "value": g.values}) for name, g in self.gauges.items()
        ]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["metric", "time_ms", "value"])

"""Service-time distributions, drawn from a seeded numpy Generator.

Every random number in the model comes from one ``numpy.random.Generator`` handed to the scenario,
so the same seed gives the same run. Draws are taken in blocks (a numpy call per block, not per
request), which keeps the cost per simulated request close to that of simpy itself.

A distribution is described once, independently of the generator, and bound to a generator with
:meth:`Distribution.sampler`, which returns a zero-argument callable. Means are in milliseconds:

    >>> import numpy as np

from .options import check_number
    >>> service = Exponential(2.0)                 # a mean of 2 ms
    >>> service.mean_ms
    2.0
    >>> draw = service.sampler(np.random.default_rng(0))
    >>> round(draw(), 3), round(draw(), 3)
    (1.36, 2.039)
    >>> Deterministic(1.0).sampler(np.random.default_rng(0))()
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .options import check_number

__all__ = ["Distribution", "Deterministic", "Exponential", "LogNormal", "Empirical", "as_distribution"]

_BLOCK = 4096
_CHUNK = 64


class Distribution:
    """A non-negative random duration in milliseconds."""

    mean_ms: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        raise NotImplementedError

    def sampler(self, rng: np.random.Generator) -> Callable[[], float]:
        """A callable returning the next draw; draws ``_BLOCK`` values at a time from ``rng``."""
        # The rng is consumed a block at a time, at the first draw after the last block ran out.
        state = {"block": None, "at": _BLOCK}
        buf: list[float] = []

        def sample() -> float:
            if not buf:
                at = state["at"]
                if at >= _BLOCK:
                    state["block"] = self.draw(rng, _BLOCK)
                    at = 0
                # A sampler often serves only a few draws (a producer in a short run): convert the
                # block to Python floats a chunk at a time instead of all 4096 at once.
                buf.extend(state["block"][at : at + _CHUNK].tolist()[::-1])
                state["at"] = at + _CHUNK
            return buf.pop()

        return sample


@dataclass(frozen=True)
class Deterministic(Distribution):
    """Always ``value_ms``: the exact case, used where a test wants a number, not a distribution."""

    value_ms: float

    def __post_init__(self):
        check_number("value_ms", self.value_ms, least=0)  # a time: finite, at least 0

    @property
    def mean_ms(self) -> float:
        return self.value_ms

    def draw(self, rng, n):
        return np.full(n, float(self.value_ms))

    def sampler(self, rng):
        v = float(self.value_ms)
        return lambda: v


@dataclass(frozen=True)
class Exponential(Distribution):
    """Memoryless service with the given mean: the M in M/M/c."""

    mean: float

    def __post_init__(self):
        check_number("mean", self.mean, least=0, excluded=True)  # an exponential's mean, in ms

    @property
    def mean_ms(self) -> float:
        return self.mean

    def draw(self, rng, n):
        return rng.exponential(self.mean, n)


@dataclass(frozen=True)
class LogNormal(Distribution):
    """Right-skewed service times (most requests fast, a long tail), given by mean and coefficient of variation."""

    mean: float
    cv: float = 1.0

    def __post_init__(self):
        check_number("mean", self.mean, least=0, excluded=True)  # a lognormal's mean, in ms
        check_number("cv", self.cv, least=0, excluded=True)

    @property
    def mean_ms(self) -> float:
        return self.mean

    def draw(self, rng, n):
        sigma2 = math.log1p(self.cv**2)
        mu = math.log(self.mean) - sigma2 / 2
        return rng.lognormal(mu, math.sqrt(sigma2), n)


@dataclass(frozen=True)
class Empirical(Distribution):
    """Resampling (with replacement) of measured durations, e.g. ``localTime`` values from a real request log."""

    values: tuple

    def __init__(self, values: Sequence[float]):
        vals = tuple(values)
        if not vals:
            raise ValueError("an empirical distribution needs at least one value")
        for i, v in enumerate(vals):
            check_number(f"values[{i}]", v, least=0)  # each a measured time: finite, at least 0
        vals = tuple(float(v) for v in vals)
        object.__setattr__(self, "values", vals)

    @property
    def mean_ms(self) -> float:
        return sum(self.values) / len(self.values)

    def draw(self, rng, n):
        return np.asarray(self.values)[rng.integers(0, len(self.values), n)]


def as_distribution(x) -> Distribution:
    """A number means a deterministic time; a Distribution stays as it is."""
    if isinstance(x, Distribution):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return Deterministic(float(x))
    raise TypeError(f"expected a Distribution or a number of milliseconds, got {x!r}")

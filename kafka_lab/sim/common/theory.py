"""Queueing theory the broker model is checked against.

A plane of the broker (its request queue and its pool of request handler threads) is, under the
textbook assumptions, an M/M/c queue: requests arrive as a Poisson process at rate ``lam``, each
handler serves one at a time with exponentially distributed service of rate ``mu``, there are ``c``
handlers (``num.io.threads``) and the queue never fills (``queued.max.requests`` large enough).
Erlang's C formula then gives the probability that a request has to wait for a handler and the
mean time it waits in the queue, which is what Kafka's request log calls ``requestQueueTime``.

    >>> round(erlang_c(8, 6.4, 1.0), 5), round(mm_c_wait(8, 6.4, 1.0), 5)
    (0.45764, 0.28603)
"""

from __future__ import annotations

__all__ = ["erlang_c", "mm_c_wait", "mm_c_utilisation", "saturation_rate"]


def _check(c: int, lam: float, mu: float) -> None:
    if not isinstance(c, int) or c < 1:
        raise ValueError(f"the number of servers must be a positive integer, got {c!r}")
    if lam <= 0 or mu <= 0:
        raise ValueError(f"arrival and service rates must be positive, got lam={lam!r}, mu={mu!r}")
    if lam >= c * mu:
        raise ValueError(f"the queue is unstable: lam={lam!r} >= c*mu={c * mu!r} (utilisation >= 1)")


def erlang_c(c: int, lam: float, mu: float) -> float:
    """P(wait) in an M/M/c queue: the probability that an arriving request finds every server busy.

    Computed with the Erlang B recursion (B(0)=1, B(k)=a·B(k-1)/(k+a·B(k-1)), a=lam/mu), which is
    numerically stable for any c, then C = B / (1 - rho·(1 - B)).
    """
    _check(c, lam, mu)
    a = lam / mu
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    rho = a / c
    return b / (1.0 - rho * (1.0 - b))


def mm_c_wait(c: int, lam: float, mu: float) -> float:
    """Mean time in the queue (Wq) of an M/M/c queue: C(c, a) / (c·mu - lam)."""
    return erlang_c(c, lam, mu) / (c * mu - lam)


def mm_c_utilisation(c: int, lam: float, mu: float) -> float:
    """Fraction of time each server is busy: rho = lam / (c·mu). The idle fraction is 1 - rho."""
    _check(c, lam, mu)
    return lam / (c * mu)


def saturation_rate(handlers: int, mean_service_ms: float) -> float:
    """Requests per second at which a plane saturates (rho = 1): handlers / service time."""
    if handlers < 1 or mean_service_ms <= 0:
        raise ValueError("need at least one handler and a positive service time")
    return handlers * 1000.0 / mean_service_ms

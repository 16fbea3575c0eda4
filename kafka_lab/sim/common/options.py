"""Every input of the model checked at the call: the one home of what each kind of input accepts.

A public entry point of :mod:`kafka_lab.sim` (the cluster and its methods, the clients' ``open_loop`` and
``burst``, the scripted runs of labs 03-07) checks what it is given here, *before* anything is simulated, so
a bad value is refused at once with a message that names the parameter and says what it accepts, never a
traceback from deep inside a run, a hang, or a silently wrong result (docs/architecture.md, "Where input is
checked"). The kinds:

- **a number** (:func:`check_number`; :func:`check_options` for several): a whole number or any finite
  number, at least ``least`` (more than it when ``excluded``), at most ``most``. A value that is not a finite
  number (a string, a bool, None, NaN, an infinity) is a TypeError, ``<name> is a finite number, got ...``;
  one out of range a ValueError that says the range, ``<name> must be at least 0`` / ``more than 0`` /
  ``is a whole number``;
- **a time** (:func:`check_time`): a number of simulated ms, at least 0;
- **a switch** (:func:`check_bool`): True or False (numpy's bool too), else a TypeError;
- **a seed** (:func:`check_seed`): a non-negative int (a bool is not one here), as numpy's generators take it;
- **a size limit** (:func:`check_limit`): what would run for hours is refused up front, with the limit and
  why; the limits below were measured on the project's 2-core machine (docs/architecture.md has the table);
- **a Kafka INT config given as a Python value** (:func:`kafka_int`): as ``ConfigDef.parseType`` and
  ``Range.atLeast`` read it, with Kafka's ``ConfigException`` message (``Invalid value 0 for configuration
  min.insync.replicas: Value must be at least 1``).

The model's own options (not Kafka settings) are listed by each experiment as ``{name: (whole, least,
excluded)}`` or ``{name: (whole, least, excluded, most, why)}``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from kafka_lab.listeners.errors import ConfigException

__all__ = [
    "ConfigTypeException",
    "CLIENTS_WHY",
    "MAX_CLIENTS",
    "RATE_WHY",
    "MAX_CLUSTER_BROKERS",
    "MAX_CLUSTER_PARTITIONS",
    "PARTITIONS_WHY",
    "MAX_CONNECTIONS",
    "MAX_ELECTION_BROKER_ROUNDS",
    "MAX_ELECTION_BROKERS",
    "MAX_HANDOVERS",
    "MAX_METRIC_SAMPLES",
    "MAX_RATE_PER_S",
    "MAX_REPLICA_SECONDS",
    "MAX_KRAFT_SECONDS",
    "check_bool",
    "check_limit",
    "check_number",
    "check_open_loop",
    "check_options",
    "check_seed",
    "check_time",
    "kafka_int",
]

# -- the size limits, from what the model did on this machine (2 shared cores; docs/architecture.md) -------------
#: partitions of one event-model cluster, every topic together: an idle 3-broker cluster with RF 3 took 0.65 s per
#: simulated second at 5,000 partitions and 3.6 s at 20,000 (every follower fetches every partition). Lab 07's
#: controller at scale (:mod:`kafka_lab.sim.zk.controller_scale`) models up to 1,000,000 in arrays instead.
MAX_CLUSTER_PARTITIONS = 10_000
#: why :data:`MAX_CLUSTER_PARTITIONS`, in the message
PARTITIONS_WHY = (
    "the event model simulates every replica and every fetch: an idle cluster of 20,000 partitions took 3.6 s a "
    "simulated second on the project's machine (lab 07's controlled_shutdown and controller_failover model up to "
    "1,000,000 partitions in arrays)"
)
#: brokers of one event-model cluster: 1,000 took 1.8 s to build and 1.5 s to start (then idle brokers cost little)
MAX_CLUSTER_BROKERS = 1_000
#: replicas x simulated seconds of one ``run``: the idle cluster costs about 55 us of wall time per replica and
#: simulated second (18 replicas for 300 s took 0.29 s; 60,000 for 1 s, 3.6 s), so this is about a minute
MAX_REPLICA_SECONDS = 1_000_000
#: the simulated seconds of one KRaft-mode ``run``: an idle KRaft cluster (3 controllers, 3 brokers) cost 1.28 ms of
#: CPU per simulated second (ZooKeeper mode 0.14 ms), whatever its replicas, so this is about a minute
MAX_KRAFT_SECONDS = 50_000
#: the applications' sends in one ``run`` (each hands over one batch, or one per fixed partition; open loops and
#: bursts): 10,000 sends with acks=all took 2.7 s, 20,000 with acks=1 1.9 s, lab 07's shutdown in the cluster
#: 13,543 sends of 10 partitions each 2.7 s, so this is one to two minutes
MAX_HANDOVERS = 500_000
#: one open loop's rate: at 1,000,000 a second, half a simulated second is already :data:`MAX_HANDOVERS` sends
MAX_RATE_PER_S = 1_000_000
#: metric samples per broker in one result (``until_ms / metrics_interval_ms``); the labs use 100 to 300
MAX_METRIC_SAMPLES = 100_000
#: clients a scripted run builds (producers, metadata clients): 10,000 producers took 2.2 s to build
MAX_CLIENTS = 10_000
#: why :data:`MAX_CLIENTS`, in the message
CLIENTS_WHY = (
    "10,000 producers took 2.2 s to build on the project's machine, before any of them ran; the labs use up to 400"
)
#: why :data:`MAX_RATE_PER_S`, in the message
RATE_WHY = (
    "one open loop's Poisson rate: at 1,000,000 a second, half a simulated second is already the most sends one run "
    "may make (500,000; the model simulated 3,700 to 10,000 a second of wall time on the project's machine)"
)
#: :func:`~kafka_lab.sim.controller_election.controller_election`'s brokers: the cluster's own limit
#: (:data:`MAX_CLUSTER_BROKERS`), the election being the cluster's
MAX_ELECTION_BROKERS = MAX_CLUSTER_BROKERS
#: one client's connections in lab 03 (a backlog there is one request per connection): 100,000 took 0.7 s to open
#: and 0.9 s more to write a request on each; the labs use up to 1,000
MAX_CONNECTIONS = 100_000
#: brokers x rounds (crashes + 1) of one election run, on the cluster: 100 brokers x 100 rounds took 11 s, 1,000 x 10
#: took 10 s (most of it the idle cluster's time between rounds, a session timeout each)
MAX_ELECTION_BROKER_ROUNDS = 10_000


class ConfigTypeException(ConfigException, TypeError):
    """Kafka's ``ConfigException`` for a value of a type the config cannot take (a float for an INT): Kafka's
    exception and message, and a TypeError too, as every wrong type is in the model."""


def _is_number(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, numbers.Real)


def check_number(
    name: str,
    v,
    *,
    whole: bool = False,
    least=None,
    excluded: bool = False,
    most=None,
    why: str = "",
) -> None:
    """``v`` is a finite number (TypeError), whole when ``whole``, ``>= least`` (``> least`` when ``excluded``) and
    ``<= most`` (ValueError; the message says the range, and ``why`` the limit's reason)."""
    if not _is_number(v) or not math.isfinite(v):
        raise TypeError(f"{name} is a finite number, got {v!r}")
    if whole and v != int(v):
        raise ValueError(f"{name} is a whole number, got {v!r}")
    if least is not None and (v < least or (excluded and v == least)):
        raise ValueError(f"{name} must be {'more than' if excluded else 'at least'} {least}, got {v!r}")
    if most is not None and v > most:
        check_limit(name, v, most, why)


def check_options(values: Mapping, ranges: Mapping) -> None:
    """Check each of ``values`` (name → value) against its entry in ``ranges``: (whole, least, excluded), or
    (whole, least, excluded, most, why) for an option with a size limit."""
    for name, v in values.items():
        whole, low, excluded, *limit = ranges[name]
        most, why = limit if limit else (None, "")
        check_number(name, v, whole=whole, least=low, excluded=excluded, most=most, why=why)


def check_time(name: str, v, *, optional: bool = False) -> None:
    """``v`` is a time in simulated ms: a finite number, at least 0 (None too, when ``optional``)."""
    if optional and v is None:
        return
    check_number(name, v, least=0)


def check_open_loop(rate_per_s, start_ms, stop_ms) -> None:
    """An open loop's (every client's): a rate more than 0 and at most :data:`MAX_RATE_PER_S`, times in ms."""
    check_number(
        "rate_per_s",
        rate_per_s,
        least=0,
        excluded=True,
        most=MAX_RATE_PER_S,
        why=RATE_WHY,
    )
    check_time("start_ms", start_ms)
    check_time("stop_ms", stop_ms, optional=True)


def check_bool(name: str, v) -> bool:
    """``v`` is a switch: True or False (a numpy bool too; not 0/1, None or a string)."""
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(v).__name__} {v!r}")
    return bool(v)


def check_seed(seed) -> int:
    """A run's seed: a non-negative int (numpy's integers too; not a bool, a float or a string)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed is a non-negative int, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"seed is a non-negative int, got {seed!r}")
    return int(seed)


def check_limit(name: str, v, most, why: str) -> None:
    """``v`` is at most ``most``: else a ValueError that says the limit and why (what the model would take)."""
    if v > most:
        got = f"{v:,.0f}" if isinstance(v, float) and abs(v) < 1e15 else f"{v:,}" if isinstance(v, int) else f"{v:g}"
        raise ValueError(f"{name} is at most {most:,}, got {got}" + (f": {why}" if why else ""))


#: a Python value's class as Java would hold it (ConfigDef's messages name the class)
_JAVA_CLASS = {bool: "java.lang.Boolean", float: "java.lang.Double", int: "java.lang.Long"}


def _java_text(v) -> str:
    """``v`` as Java's ``toString`` prints it in ConfigException's message (``true``, ``NaN``, ``Infinity``)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
    return str(v)


def kafka_int(name: str, raw, least: int | None = None) -> int:
    """An INT config as Kafka 2.8 reads it (``ConfigDef.parseType``, then ``Range.atLeast``), Kafka's messages:

    - an int within Java's int range is taken (a Python int beyond it would be a ``java.lang.Long``);
    - a string is trimmed and parsed (``Integer.parseInt``): ``Not a number of type INT`` if it is not one;
    - any other type (a bool, a float, NaN too): ``Expected value to be a 32-bit integer, but it was a
      java.lang.Double`` (:class:`ConfigTypeException`, also a TypeError);
    - then ``Value must be at least <least>``.
    """
    if isinstance(raw, numbers.Integral) and not isinstance(raw, bool) and -(2**31) <= raw < 2**31:
        value = int(raw)
    elif isinstance(raw, str):
        text = raw.strip()
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not text.lstrip("+-").isdigit() or not -(2**31) <= value < 2**31:
            raise ConfigException(
                f"Invalid value {raw} for configuration {name}: Not a number of type INT",
                kafka_exception="ConfigException",
                config_key=name,
            )
    else:
        cls = next(
            (c for t, c in _JAVA_CLASS.items() if isinstance(raw, t)), f"{type(raw).__module__}.{type(raw).__name__}"
        )
        raise ConfigTypeException(
            f"Invalid value {_java_text(raw)} for configuration {name}: Expected value to be a 32-bit integer, "
            f"but it was a {cls}",
            kafka_exception="ConfigException",
            config_key=name,
        )
    if least is not None and value < least:
        raise ConfigException(
            f"Invalid value {value} for configuration {name}: Value must be at least {least}",
            kafka_exception="ConfigException",
            config_key=name,
        )
    return value

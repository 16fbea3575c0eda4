"""Kafka's ``assignReplicasToBrokers``, transcribed loop for loop: the tests' independent truth.

:func:`prepare` runs Kafka's checks in Kafka's order and draws the two start values; the loops of
``assignReplicasToBrokersRackUnaware`` and ``...RackAware`` follow, line by line, with Java's
``int`` arithmetic (:mod:`.java`). It is slow (a Python loop per replica) and exact at every input,
overflow included; :mod:`.fast` computes the same map vectorised and falls back on :func:`reference_loop`
where a Java ``int`` would overflow. docs/kafka-reference.md §1 has the algorithm.

Randomness: with a negative ``fixed_start_index`` Kafka draws ``startIndex`` and then
``nextReplicaShift`` as two independent ``Random.nextInt(n)``. Here they are drawn, in that order,
from ``rng``: a ``numpy.random.Generator`` (``rng.integers(n)``) or a ``random.Random``
(``rng.randrange(n)``); an ``int`` is taken as a seed for ``numpy.random.default_rng``. With
``rng=None`` the draws are unseeded, like Kafka's.
"""

from __future__ import annotations

import random

import numpy as np

from .brokers import alternate, as_brokers, broker_rack_map
from .errors import (
    MSG_PARTITIONS,
    MSG_RACKS_INCOMPLETE,
    MSG_RF,
    AdminOperationException,
    InvalidPartitionsException,
    InvalidReplicationFactorException,
    msg_rf_too_large,
)
from .java import i32, java_int, jget, jrem

__all__ = ["assign_replicas_to_brokers_reference", "check_counts", "prepare", "reference_loop"]


def _draw(rng, n: int) -> int:
    """One ``Random.nextInt(n)``: uniform in ``[0, n)``."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(n))
    if isinstance(rng, random.Random):
        return rng.randrange(n)
    raise TypeError(f"rng must be a numpy Generator, a random.Random, an int seed or None, not {rng!r}")


def _as_rng(rng):
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    return rng


def check_counts(n_partitions: int, replication_factor: int, n_brokers: int) -> None:
    """The first checks of ``assignReplicasToBrokers``, in Kafka's order, with Kafka's exceptions and messages.

    Creating a topic runs them before anything else, so whatever models a topic (not only the
    assignment) refuses an impossible one the way Kafka does.
    """
    if n_partitions <= 0:
        raise InvalidPartitionsException(MSG_PARTITIONS)
    if replication_factor <= 0:
        raise InvalidReplicationFactorException(MSG_RF)
    if replication_factor > n_brokers:
        raise InvalidReplicationFactorException(msg_rf_too_large(replication_factor, n_brokers))


def prepare(brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng):
    """Kafka's checks, in Kafka's order, then the list the algorithm walks and its two start values."""
    bl = as_brokers(brokers)
    n_partitions = java_int("n_partitions", n_partitions)
    replication_factor = java_int("replication_factor", replication_factor)
    fixed_start_index = java_int("fixed_start_index", fixed_start_index)
    start_partition_id = java_int("start_partition_id", start_partition_id)
    check_counts(n_partitions, replication_factor, len(bl))
    if all(b.rack is None for b in bl):
        rack_map = None
        order = [b.id for b in bl]
    else:
        if any(b.rack is None for b in bl):
            raise AdminOperationException(MSG_RACKS_INCOMPLETE)
        rack_map = broker_rack_map(bl)
        order = alternate(rack_map)
    n = len(order)
    if fixed_start_index >= 0:
        start_index = shift = fixed_start_index
    else:
        rng = _as_rng(rng)
        start_index = _draw(rng, n)
        shift = _draw(rng, n)
    return order, rack_map, n_partitions, replication_factor, start_index, shift, max(0, start_partition_id)


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
    shift = 1 + jrem(i32(second_replica_shift + replica_index), n_brokers - 1)  # int, then widened to long
    return jrem(first_replica_index + shift, n_brokers)


def assign_replicas_to_brokers_reference(
    brokers,
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng=None,
) -> dict[int, list[int]]:
    """Kafka's ``assignReplicasToBrokers``, transcribed loop for loop (slow; the tests' truth)."""
    return reference_loop(
        *prepare(brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng)
    )


def reference_loop(order, rack_map, n_parts, rf, start_index, next_shift, pid) -> dict[int, list[int]]:
    """``assignReplicasToBrokersRackUnaware`` / ``...RackAware`` after the checks and the draws."""
    n = len(order)
    ret: dict[int, list[int]] = {}
    if rack_map is None:
        for _ in range(n_parts):
            if pid > 0 and jrem(pid, n) == 0:
                next_shift = i32(next_shift + 1)
            first = jrem(i32(pid + start_index), n)
            buf = [jget(order, first)]
            for j in range(rf - 1):
                buf.append(jget(order, _replica_index(first, next_shift, j, n)))
            ret[pid] = buf
            pid = i32(pid + 1)
        return ret
    num_racks = len(set(rack_map.values()))
    num_brokers = n
    for _ in range(n_parts):
        if pid > 0 and jrem(pid, n) == 0:
            next_shift = i32(next_shift + 1)
        first = jrem(i32(pid + start_index), n)
        leader = jget(order, first)
        buf = [leader]
        racks_used = {rack_map[leader]}
        brokers_used = {leader}
        k = 0
        for _j in range(rf - 1):
            done = False
            while not done:
                broker = jget(order, _replica_index(first, i32(next_shift * num_racks), k, n))
                rack = rack_map[broker]
                if (rack not in racks_used or len(racks_used) == num_racks) and (
                    broker not in brokers_used or len(brokers_used) == num_brokers
                ):
                    buf.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    done = True
                k = i32(k + 1)
        ret[pid] = buf
        pid = i32(pid + 1)
    return ret

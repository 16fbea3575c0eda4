"""The fast path: Kafka's assignment vectorised over partitions with numpy.

The same algorithm as :mod:`.reference`, computed for all partitions at once: fast enough for
300,000 partitions. Where a Java ``int`` in Kafka's loop could overflow it hands the input to
:func:`~.reference.reference_loop` instead, so the result is Kafka's at every input.
"""

from __future__ import annotations

import gc

import numpy as np

from .java import INT_MAX, java_string_key
from .reference import prepare, reference_loop

__all__ = ["assign_replicas_array", "assign_replicas_to_brokers"]


def _positions(order, rack_map, n_parts, rf, start_index, shift0, pid0) -> np.ndarray:
    """Positions in ``order`` of every replica, shape ``(n_parts, rf)``; column 0 is the leader.

    Valid only where Java's int arithmetic cannot overflow (the caller checks); there all values are
    non-negative and Java's ``%`` is Python's.
    """
    n = len(order)
    p = pid0 + np.arange(n_parts, dtype=np.int64)
    # nextReplicaShift grows by one at every partition id p > 0 with p % n == 0, up to and including p
    done_before = (pid0 - 1) // n if pid0 >= 1 else 0
    shift = shift0 + (p // n - done_before)
    first = (p + start_index) % n
    pos = np.empty((n_parts, rf), dtype=np.int64)
    pos[:, 0] = first
    if rf == 1:
        return pos
    if rack_map is None:
        base = shift % (n - 1)
        for j in range(rf - 1):
            pos[:, j + 1] = (first + 1 + (base + j) % (n - 1)) % n
        return pos
    # rack-aware: walk k over candidates, skipping used racks (until all are used) and used brokers
    rack_names = sorted(set(rack_map.values()), key=java_string_key)
    rack_code = {r: i for i, r in enumerate(rack_names)}
    num_racks = len(rack_names)
    rack_of = np.array([rack_code[rack_map[b]] for b in order], dtype=np.int64)
    base = (shift * num_racks) % (n - 1)
    k = np.zeros(n_parts, dtype=np.int64)
    racks_used = np.ones(n_parts, dtype=np.int64)
    used_rack = np.zeros((n_parts, num_racks), dtype=bool) if num_racks <= 64 else None
    if used_rack is not None:
        used_rack[np.arange(n_parts), rack_of[first]] = True
    for j in range(1, rf):
        all_brokers_used = min(j, n) == n
        active = np.arange(n_parts)
        while active.size:
            kk = k[active]
            cand = (first[active] + 1 + (base[active] + kk) % (n - 1)) % n
            rk = rack_of[cand]
            if used_rack is not None:
                rack_seen = used_rack[active, rk]
            else:
                rack_seen = (rack_of[pos[active, :j]] == rk[:, None]).any(axis=1)
            ok = ~rack_seen | (racks_used[active] == num_racks)
            if not all_brokers_used:
                ok &= ~(pos[active, :j] == cand[:, None]).any(axis=1)
            k[active] = kk + 1
            acc = active[ok]
            pos[acc, j] = cand[ok]
            new_rack = ok & ~rack_seen
            racks_used[active[new_rack]] += 1
            if used_rack is not None:
                used_rack[acc, rk[ok]] = True
            active = active[~ok]
    return pos


def _fast_path_is_exact(n, rf, num_racks, n_parts, start_index, shift0, pid0) -> bool:
    """True when no Java int in the loop can overflow (then numpy's int64 gives Java's values)."""
    last_pid = pid0 + n_parts - 1
    if last_pid + start_index > INT_MAX:
        return False
    max_shift = shift0 + last_pid // n
    if num_racks is None:
        return max_shift + rf <= INT_MAX
    if n == 1 and rf > 1:  # only with repeated broker ids; Java divides by zero
        return False
    return max_shift * num_racks + rf * n <= INT_MAX  # k never exceeds (rf - 1) * (n - 1)


def assign_replicas_array(
    brokers, n_partitions, replication_factor, fixed_start_index=-1, start_partition_id=-1, rng=None
):
    """:func:`assign_replicas_to_brokers` as numpy: ``(first partition id, broker ids of shape (n_partitions, rf))``.

    Where a Java ``int`` would overflow, ``(None, the reference's dict)`` instead.
    """
    prepared = prepare(brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng)
    order, rack_map, n_parts, rf, start_index, shift0, pid0 = prepared
    num_racks = None if rack_map is None else len(set(rack_map.values()))
    if not _fast_path_is_exact(len(order), rf, num_racks, n_parts, start_index, shift0, pid0):
        return None, reference_loop(*prepared)  # a Java int overflows: replay Kafka's own arithmetic
    pos = _positions(order, rack_map, n_parts, rf, start_index, shift0, pid0)
    return pid0, np.asarray(order, dtype=np.int64)[pos]


def assign_replicas_to_brokers(
    brokers,
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng=None,
) -> dict[int, list[int]]:
    """Which brokers hold each partition's replicas: ``{partition id: [leader, follower, ...]}``.

    Exactly ``AdminUtils.assignReplicasToBrokers(brokerMetadatas, nPartitions, replicationFactor,
    fixedStartIndex, startPartitionId)``:

    - checks, in Kafka's order: partitions > 0 (:class:`InvalidPartitionsException`), replication
      factor > 0 and <= number of brokers (:class:`InvalidReplicationFactorException`), then, if some
      but not all brokers have a rack, :class:`AdminOperationException`;
    - no rack anywhere: rack-unaware, over the broker ids **in the order given**;
    - otherwise rack-aware over the rack-alternated list (input order does not matter);
    - ``fixed_start_index >= 0`` fixes both ``startIndex`` and ``nextReplicaShift`` (deterministic);
      negative draws both from ``rng`` (see the module docstring);
    - the first partition id is ``max(0, start_partition_id)``; the follower shift depends on the
      absolute partition id, which is what makes adding partitions line up with the first ones.
    """
    pid0, ids = assign_replicas_array(
        brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng
    )
    if pid0 is None:
        return ids
    gc_was_on = gc.isenabled()
    gc.disable()  # hundreds of thousands of small lists and no cycles: collector passes would only cost time
    try:
        return dict(zip(range(pid0, pid0 + len(ids)), ids.tolist()))
    finally:
        if gc_was_on:
            gc.enable()

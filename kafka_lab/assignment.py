"""KIP-36 replica assignment, exactly as Kafka's ``AdminUtils.assignReplicasToBrokers`` does it.

When a topic is created without an explicit assignment, Kafka decides which brokers hold the
replicas of each partition. The first replica of a partition is its *preferred leader*.

Without racks, Kafka lays the partitions' leaders round-robin over the broker list, starting at a
random ``startIndex``, and places the followers after the leader with a gap (``nextReplicaShift``)
that grows by one each time the partition ids wrap around the list, so the same broker pairs do not
keep repeating.

With racks (KIP-36, Kafka 0.10.0, ``broker.rack``), it first builds the *rack-alternated* broker
list: brokers grouped by rack, ids ascending inside a rack, racks in sorted order, then one broker
from each rack in turn. For ``0 -> rack1, 1 -> rack3, 2 -> rack3, 3 -> rack2, 4 -> rack2, 5 -> rack1``
that list is ``0, 3, 1, 5, 4, 2``. Leaders go round-robin over it; each follower is the next broker
(after a shift of ``nextReplicaShift * numRacks``) that is neither on a rack nor a broker the
partition already uses, unless every rack (or every broker) is already used. The walk position
``k`` is *not* reset between the followers of one partition.

This module gives the same map Kafka gives for the same input, including Kafka's exception classes,
their messages, the order of its checks, and Java's 32-bit ``int`` arithmetic at the extremes. It
has two implementations of the same algorithm:

- :func:`assign_replicas_to_brokers` -- vectorised with numpy (fast enough for 300k partitions),
- :func:`assign_replicas_to_brokers_reference` -- a line-by-line transcription of Kafka's Java,
  used by the tests and the benchmark as the independent truth.

Around it, :func:`assign_for_topic` does what ``AdminZkClient`` / ``kafka-topics.sh`` do before
calling it (rack-aware mode, brokers sorted by id, adding partitions to an existing topic), and
:func:`replica_table`, :func:`broker_balance`, :func:`rack_balance`, :func:`partition_racks` and
:func:`failure_impact` turn an assignment into the tables the lab shows (pandas).

Randomness: with a negative ``fixed_start_index`` Kafka draws ``startIndex`` and then
``nextReplicaShift`` as two independent ``Random.nextInt(n)``. Here they are drawn, in that order,
from ``rng``: a ``numpy.random.Generator`` (``rng.integers(n)``) or a ``random.Random``
(``rng.randrange(n)``); an ``int`` is taken as a seed for ``numpy.random.default_rng``. With
``rng=None`` the draws are unseeded, like Kafka's.
"""

from __future__ import annotations

import gc
import random as _random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "AdminOperationException",
    "ApiException",
    "BrokerMetadata",
    "InvalidPartitionsException",
    "InvalidReplicationFactorException",
    "KafkaException",
    "RackAwareMode",
    "add_partitions",
    "assign_for_topic",
    "assign_replicas_to_brokers",
    "assign_replicas_to_brokers_reference",
    "broker_balance",
    "brokers_from_racks",
    "failure_impact",
    "partition_racks",
    "rack_alternated_broker_list",
    "rack_alternated_steps",
    "rack_balance",
    "replica_table",
]

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)


# --------------------------------------------------------------------------------------------
# Kafka's exceptions (ValueError subclasses, so ordinary Python code can catch them as bad input)
# --------------------------------------------------------------------------------------------


class KafkaException(ValueError):
    """``org.apache.kafka.common.KafkaException``."""

    java_class = "org.apache.kafka.common.KafkaException"


class ApiException(KafkaException):
    """``org.apache.kafka.common.errors.ApiException``: an error with a Kafka protocol error code."""

    java_class = "org.apache.kafka.common.errors.ApiException"


class InvalidPartitionsException(ApiException):
    """``org.apache.kafka.common.errors.InvalidPartitionsException`` (error code 37, INVALID_PARTITIONS)."""

    java_class = "org.apache.kafka.common.errors.InvalidPartitionsException"


class InvalidReplicationFactorException(ApiException):
    """``org.apache.kafka.common.errors.InvalidReplicationFactorException`` (error code 38, INVALID_REPLICATION_FACTOR)."""

    java_class = "org.apache.kafka.common.errors.InvalidReplicationFactorException"


class AdminOperationException(ValueError):
    """``org.apache.kafka.server.common.AdminOperationException`` (a plain RuntimeException in Kafka).

    That is its 3.x name, as KAFKA_REFERENCE.md gives it; Kafka 2.8 throws the same-named Scala class
    ``kafka.admin.AdminOperationException`` (``core/src/main/scala/kafka/admin/``) with the same messages.
    """

    java_class = "org.apache.kafka.server.common.AdminOperationException"


MSG_PARTITIONS = "Number of partitions must be larger than 0."
MSG_RF = "Replication factor must be larger than 0."
MSG_RACKS_INCOMPLETE = "Not all brokers have rack information for replica rack aware assignment."
MSG_RACKS_INCOMPLETE_ZK = (
    "Not all brokers have rack information. Add --disable-rack-aware in command line"
    " to make replica assignment without rack information."
)


def _msg_rf_too_large(rf: int, size: int) -> str:
    return f"Replication factor: {rf} larger than available brokers: {size}."


# --------------------------------------------------------------------------------------------
# Brokers and the rack-alternated list
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerMetadata:
    """A broker as the assignment sees it: its ``broker.id`` and its ``broker.rack`` (or ``None``)."""

    id: int
    rack: str | None = None

    def __post_init__(self):
        if isinstance(self.id, bool) or not isinstance(self.id, (int, np.integer)):
            raise TypeError(f"broker id must be an int, not {type(self.id).__name__}: {self.id!r}")
        if not INT_MIN <= int(self.id) <= INT_MAX:
            raise ValueError(f"broker id {self.id} is outside Java's int range")
        object.__setattr__(self, "id", int(self.id))
        if self.rack is not None and not isinstance(self.rack, str):
            raise TypeError(f"broker.rack must be a string or None, not {type(self.rack).__name__}: {self.rack!r}")


def brokers_from_racks(racks: Mapping[int, str | None] | Sequence[str | None]) -> list[BrokerMetadata]:
    """Brokers from ``{id: rack}`` (in the mapping's order), or from a list of racks (ids 0, 1, ...)."""
    items = racks.items() if isinstance(racks, Mapping) else enumerate(racks)
    return [BrokerMetadata(i, r) for i, r in items]


def _as_brokers(brokers: Iterable) -> list[BrokerMetadata]:
    out = brokers_from_racks(brokers) if isinstance(brokers, Mapping) else []
    for b in [] if isinstance(brokers, Mapping) else brokers:
        if isinstance(b, BrokerMetadata):
            out.append(b)
        elif isinstance(b, tuple) and len(b) == 2:
            out.append(BrokerMetadata(*b))
        else:
            raise TypeError(f"expected BrokerMetadata(id, rack) or an (id, rack) pair, got {b!r}")
    ids = [b.id for b in out]  # each broker registers /brokers/ids/<broker.id>: ids are distinct and >= 0
    if any(i < 0 for i in ids) or len(set(ids)) < len(ids):
        bad = next(i for i in ids if i < 0 or ids.count(i) > 1)
        raise ValueError(
            f"broker ids are distinct and at least 0 (each broker registers /brokers/ids/<id>); "
            f"{bad} is {'negative' if bad < 0 else 'there twice'}"
        )
    return out


def _java_string_key(s: str) -> bytes:
    """Sort key giving ``String.compareTo`` order: UTF-16 code units (big-endian bytes compare the same)."""
    return s.encode("utf-16-be", "surrogatepass")


def _broker_rack_map(brokers: Sequence[BrokerMetadata]) -> dict[int, str]:
    """Kafka's ``brokerRackMap``: a map by id, so a repeated id keeps its last rack."""
    m: dict[int, str] = {}
    for b in brokers:
        m[b.id] = b.rack  # type: ignore[assignment]
    return m


def _alternate(broker_rack: Mapping[int, str]) -> list[int]:
    by_rack: dict[str, list[int]] = {}
    for bid, rack in broker_rack.items():
        by_rack.setdefault(rack, []).append(bid)
    racks = sorted(by_rack, key=_java_string_key)
    iters = [sorted(by_rack[r]) for r in racks]
    out: list[int] = []
    depth = 0
    while len(out) < len(broker_rack):
        for ids in iters:
            if depth < len(ids):
                out.append(ids[depth])
        depth += 1
    return out


def rack_alternated_broker_list(brokers) -> list[int]:
    """``AdminUtils.getRackAlternatedBrokerList``: one broker from each rack in turn.

    Racks are taken in Java ``String`` order (so ``"rack10"`` comes before ``"rack2"``), brokers in
    id order inside a rack; a rack that has run out is skipped. ``brokers`` is a list of
    :class:`BrokerMetadata` (all with a rack) or a ``{id: rack}`` mapping.
    """
    bl = _as_brokers(brokers)
    missing = [b.id for b in bl if b.rack is None]
    if missing:
        raise AdminOperationException(MSG_RACKS_INCOMPLETE)
    return _alternate(_broker_rack_map(bl))


def rack_alternated_steps(brokers) -> pd.DataFrame:
    """How the rack-alternated list is built, one row per pick: which rack's turn it is, and whom it gives."""
    bl = _as_brokers(brokers)
    if any(b.rack is None for b in bl):
        raise AdminOperationException(MSG_RACKS_INCOMPLETE)
    rmap = _broker_rack_map(bl)
    by_rack: dict[str, list[int]] = {}
    for bid, rack in rmap.items():
        by_rack.setdefault(rack, []).append(bid)
    racks = sorted(by_rack, key=_java_string_key)
    queues = {r: sorted(by_rack[r]) for r in racks}
    rows, taken, rack_index = [], dict.fromkeys(racks, 0), 0
    while len(rows) < len(rmap):
        r = racks[rack_index]
        if taken[r] < len(queues[r]):
            bid = queues[r][taken[r]]
            taken[r] += 1
            rows.append(
                {
                    "position": len(rows),
                    "rack": r,
                    "broker": bid,
                    "left in rack": ", ".join(map(str, queues[r][taken[r] :])) or "-",
                }
            )
        rack_index = (rack_index + 1) % len(racks)
    return pd.DataFrame(rows).set_index("position")


# --------------------------------------------------------------------------------------------
# Argument checks and random draws
# --------------------------------------------------------------------------------------------


def _java_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}: {value!r}")
    value = int(value)
    if not INT_MIN <= value <= INT_MAX:
        raise ValueError(f"{name}={value} is outside Java's int range [{INT_MIN}, {INT_MAX}]")
    return value


def _draw(rng, n: int) -> int:
    """One ``Random.nextInt(n)``: uniform in ``[0, n)``."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(n))
    if isinstance(rng, _random.Random):
        return rng.randrange(n)
    raise TypeError(f"rng must be a numpy Generator, a random.Random, an int seed or None, not {rng!r}")


def _as_rng(rng):
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    return rng


def _prepare(brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng):
    """Kafka's checks, in Kafka's order, then the list the algorithm walks and its two start values."""
    bl = _as_brokers(brokers)
    n_partitions = _java_int("n_partitions", n_partitions)
    replication_factor = _java_int("replication_factor", replication_factor)
    fixed_start_index = _java_int("fixed_start_index", fixed_start_index)
    start_partition_id = _java_int("start_partition_id", start_partition_id)
    if n_partitions <= 0:
        raise InvalidPartitionsException(MSG_PARTITIONS)
    if replication_factor <= 0:
        raise InvalidReplicationFactorException(MSG_RF)
    if replication_factor > len(bl):
        raise InvalidReplicationFactorException(_msg_rf_too_large(replication_factor, len(bl)))
    if all(b.rack is None for b in bl):
        rack_map = None
        order = [b.id for b in bl]
    else:
        if any(b.rack is None for b in bl):
            raise AdminOperationException(MSG_RACKS_INCOMPLETE)
        rack_map = _broker_rack_map(bl)
        order = _alternate(rack_map)
    n = len(order)
    if fixed_start_index >= 0:
        start_index = shift = fixed_start_index
    else:
        rng = _as_rng(rng)
        start_index = _draw(rng, n)
        shift = _draw(rng, n)
    return order, rack_map, n_partitions, replication_factor, start_index, shift, max(0, start_partition_id)


# --------------------------------------------------------------------------------------------
# The reference: Kafka's Java, line by line, with Java int arithmetic
# --------------------------------------------------------------------------------------------


def _i32(x: int) -> int:
    """Java ``int`` overflow: wrap to 32 bits."""
    return (x + 2**31) % 2**32 - 2**31


def _jrem(a: int, b: int) -> int:
    """Java ``%``: the remainder takes the sign of the dividend."""
    if b == 0:
        raise ZeroDivisionError("/ by zero")  # java.lang.ArithmeticException
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _jget(seq: Sequence[int], index: int) -> int:
    if not 0 <= index < len(seq):  # java.lang.IndexOutOfBoundsException
        raise IndexError(f"Index {index} out of bounds for length {len(seq)}")
    return seq[index]


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
    shift = 1 + _jrem(_i32(second_replica_shift + replica_index), n_brokers - 1)  # int, then widened to long
    return _jrem(first_replica_index + shift, n_brokers)


def assign_replicas_to_brokers_reference(
    brokers,
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng=None,
) -> dict[int, list[int]]:
    """Kafka's ``assignReplicasToBrokers``, transcribed loop for loop (slow; the tests' truth)."""
    return _reference_loop(
        *_prepare(brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng)
    )


def _reference_loop(order, rack_map, n_parts, rf, start_index, next_shift, pid) -> dict[int, list[int]]:
    """``assignReplicasToBrokersRackUnaware`` / ``...RackAware`` after the checks and the draws."""
    n = len(order)
    ret: dict[int, list[int]] = {}
    if rack_map is None:
        for _ in range(n_parts):
            if pid > 0 and _jrem(pid, n) == 0:
                next_shift = _i32(next_shift + 1)
            first = _jrem(_i32(pid + start_index), n)
            buf = [_jget(order, first)]
            for j in range(rf - 1):
                buf.append(_jget(order, _replica_index(first, next_shift, j, n)))
            ret[pid] = buf
            pid = _i32(pid + 1)
        return ret
    num_racks = len(set(rack_map.values()))
    num_brokers = n
    for _ in range(n_parts):
        if pid > 0 and _jrem(pid, n) == 0:
            next_shift = _i32(next_shift + 1)
        first = _jrem(_i32(pid + start_index), n)
        leader = _jget(order, first)
        buf = [leader]
        racks_used = {rack_map[leader]}
        brokers_used = {leader}
        k = 0
        for _j in range(rf - 1):
            done = False
            while not done:
                broker = _jget(order, _replica_index(first, _i32(next_shift * num_racks), k, n))
                rack = rack_map[broker]
                if (rack not in racks_used or len(racks_used) == num_racks) and (
                    broker not in brokers_used or len(brokers_used) == num_brokers
                ):
                    buf.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    done = True
                k = _i32(k + 1)
        ret[pid] = buf
        pid = _i32(pid + 1)
    return ret


# --------------------------------------------------------------------------------------------
# The fast path: the same algorithm, vectorised over partitions
# --------------------------------------------------------------------------------------------


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
    rack_names = sorted(set(rack_map.values()), key=_java_string_key)
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


def _assign_array(brokers, n_partitions, replication_factor, fixed_start_index=-1, start_partition_id=-1, rng=None):
    """``(first partition id, broker ids of shape (n_partitions, rf))``; ``(None, reference dict)`` at int overflow."""
    prepared = _prepare(brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng)
    order, rack_map, n_parts, rf, start_index, shift0, pid0 = prepared
    num_racks = None if rack_map is None else len(set(rack_map.values()))
    if not _fast_path_is_exact(len(order), rf, num_racks, n_parts, start_index, shift0, pid0):
        return None, _reference_loop(*prepared)  # a Java int overflows: replay Kafka's own arithmetic
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
    pid0, ids = _assign_array(brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng)
    if pid0 is None:
        return ids
    gc_was_on = gc.isenabled()
    gc.disable()  # hundreds of thousands of small lists and no cycles: collector passes would only cost time
    try:
        return dict(zip(range(pid0, pid0 + len(ids)), ids.tolist()))
    finally:
        if gc_was_on:
            gc.enable()


# --------------------------------------------------------------------------------------------
# What the tools do around it: AdminZkClient / kafka-topics.sh
# --------------------------------------------------------------------------------------------

RackAwareMode = Literal["enforced", "disabled", "safe"]


def _zk_broker_metadatas(brokers, rack_aware_mode: str) -> list[BrokerMetadata]:
    """``AdminZkClient.getBrokerMetadatas``: the rack check for the mode, then brokers sorted by id."""
    if rack_aware_mode not in ("enforced", "disabled", "safe"):
        raise ValueError(f"rack_aware_mode must be 'enforced', 'disabled' or 'safe', not {rack_aware_mode!r}")
    bl = _as_brokers(brokers)
    with_rack = [b for b in bl if b.rack is not None]
    if rack_aware_mode == "enforced" and with_rack and len(with_rack) < len(bl):
        raise AdminOperationException(MSG_RACKS_INCOMPLETE_ZK)
    if rack_aware_mode == "disabled" or (rack_aware_mode == "safe" and len(with_rack) < len(bl)):
        bl = [BrokerMetadata(b.id, None) for b in bl]
    return sorted(bl, key=lambda b: b.id)


def assign_for_topic(
    brokers,
    partitions: int,
    replication_factor: int,
    *,
    rack_aware_mode: RackAwareMode = "enforced",
    rng=None,
    fixed_start_index: int = -1,
) -> dict[int, list[int]]:
    """The assignment ``kafka-topics.sh --create --zookeeper`` makes (``AdminZkClient.createTopic``).

    ``rack_aware_mode`` is Kafka's ``RackAwareMode``:

    - ``"enforced"`` (the default): if only some brokers have ``broker.rack``, fail with
      AdminZkClient's own message, which tells you to add ``--disable-rack-aware``;
    - ``"disabled"`` (``--disable-rack-aware``, KIP-36's ``--ignore-racks``): forget every rack;
    - ``"safe"``: forget the racks if any broker lacks one (KIP-36's rule for auto-created topics).

    Brokers are sorted by id first, as ``getBrokerMetadatas`` does, so a rack-unaware result does
    not depend on the order you list them in. ``fixed_start_index`` is not a tool option (Kafka
    always draws it here); it is exposed so a lab can show one reproducible draw.
    """
    metas = _zk_broker_metadatas(brokers, rack_aware_mode)
    return assign_replicas_to_brokers(metas, partitions, replication_factor, fixed_start_index, -1, rng)


def add_partitions(
    brokers,
    existing: Mapping[int, Sequence[int]],
    num_partitions: int,
    *,
    topic: str = "topic",
    rack_aware_mode: RackAwareMode = "enforced",
) -> dict[int, list[int]]:
    """``kafka-topics.sh --alter --partitions``: the new partitions' assignment (``AdminZkClient.addPartitions``).

    Kafka keeps the existing partitions where they are, takes the replication factor from
    partition 0, and calls the assignment with ``fixedStartIndex`` = the index, in the id-sorted
    broker list, of the first broker whose id >= partition 0's leader, and ``startPartitionId`` = the
    current partition count. So the result is deterministic, and the follower shift continues from
    the absolute partition ids.

    Errors are Kafka's (``AdminZkClient`` 2.8), except that the missing-partition-0 message stops
    before the ``Assignment: <Scala map>`` Kafka appends to it.
    """
    metas = _zk_broker_metadatas(brokers, rack_aware_mode)
    if 0 not in existing:
        raise AdminOperationException(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing."
        )
    partitions_to_add = _java_int("num_partitions", num_partitions) - len(existing)
    if partitions_to_add <= 0:
        raise InvalidPartitionsException(
            f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
            f"{len(existing)} partitions, {num_partitions} would not be an increase."
        )
    p0 = list(existing[0])
    start_index = next((i for i, b in enumerate(metas) if b.id >= p0[0]), 0)
    return assign_replicas_to_brokers(metas, partitions_to_add, len(p0), start_index, len(existing))


# --------------------------------------------------------------------------------------------
# Analysis: balance, rack spread, losing brokers or racks
# --------------------------------------------------------------------------------------------


def _rack_lookup(brokers) -> dict[int, str | None]:
    return {b.id: b.rack for b in _as_brokers(brokers)}


def replica_table(assignment: Mapping[int, Sequence[int]], brokers) -> pd.DataFrame:
    """One row per replica: partition, position in the replica list (0 = preferred leader), broker, rack."""
    racks = _rack_lookup(brokers)
    rows = [(p, i, b, racks.get(b), i == 0) for p, reps in sorted(assignment.items()) for i, b in enumerate(reps)]
    return pd.DataFrame(rows, columns=["partition", "replica", "broker", "rack", "leader"])


def broker_balance(assignment: Mapping[int, Sequence[int]], brokers) -> pd.DataFrame:
    """Per broker: its rack, how many partitions it leads (preferred leader) and how many replicas it holds."""
    bl = _as_brokers(brokers)
    t = replica_table(assignment, bl)
    ids = sorted({b.id for b in bl})
    out = pd.DataFrame({"rack": [_rack_lookup(bl)[i] for i in ids]}, index=pd.Index(ids, name="broker"))
    out["leaders"] = t[t.leader].groupby("broker").size().reindex(ids, fill_value=0).astype(int)
    out["replicas"] = t.groupby("broker").size().reindex(ids, fill_value=0).astype(int)
    return out


def rack_balance(assignment: Mapping[int, Sequence[int]], brokers) -> pd.DataFrame:
    """Per rack (Kafka's rack order): brokers, leaders and replicas it holds, and replicas per broker."""
    bb = broker_balance(assignment, brokers)
    if bb["rack"].isna().any():
        bb = bb.assign(rack=bb["rack"].fillna("(no rack)"))
    g = bb.groupby("rack").agg(brokers=("leaders", "size"), leaders=("leaders", "sum"), replicas=("replicas", "sum"))
    g = g.loc[sorted(g.index, key=_java_string_key)]
    g["replicas per broker"] = g["replicas"] / g["brokers"]
    return g


def partition_racks(assignment: Mapping[int, Sequence[int]], brokers) -> pd.DataFrame:
    """Per partition: its replicas, their racks, and how many distinct racks they span."""
    racks = _rack_lookup(brokers)
    rows = []
    for p, reps in sorted(assignment.items()):
        rr = [racks.get(b) for b in reps]
        rows.append({"partition": p, "replicas": list(reps), "racks": rr, "racks spanned": len(set(rr))})
    return pd.DataFrame(rows).set_index("partition")


def failure_impact(
    assignment: Mapping[int, Sequence[int]],
    brokers,
    *,
    failed_racks: Iterable[str] = (),
    failed_brokers: Iterable[int] = (),
    min_insync_replicas: int = 1,
) -> pd.DataFrame:
    """What happens to each partition when some brokers (or whole racks) go down at once.

    Assumes every replica was in sync before the failure. Per partition:

    - ``alive``: replicas left;
    - ``offline``: no replica left -- the partition is unavailable for reads and writes;
    - ``leader_lost``: its preferred leader (first replica) is down, so the controller elects a new
      one: the first replica, in assignment order, that is alive and in the ISR (``new_leader``);
    - ``below_min_isr``: alive but fewer than ``min.insync.replicas`` in sync, so ``acks=all``
      produce requests fail with NOT_ENOUGH_REPLICAS (reads still work).
    """
    if isinstance(failed_racks, str):
        failed_racks = [failed_racks]
    min_isr = _java_int("min_insync_replicas", min_insync_replicas)
    if min_isr < 1:
        raise ValueError("min.insync.replicas must be at least 1")
    racks = _rack_lookup(brokers)
    failed_racks = set(failed_racks)
    unknown = failed_racks - set(racks.values())
    if unknown:
        raise ValueError(f"no broker is in rack(s) {sorted(unknown)}")
    failed_brokers = set(failed_brokers)
    unknown_brokers = failed_brokers - set(racks)
    if unknown_brokers:
        raise ValueError(f"no broker has id(s) {sorted(unknown_brokers)}; the brokers are {sorted(racks)}")
    down = set(failed_brokers) | {b for b, r in racks.items() if r in failed_racks}
    rows = []
    for p, reps in sorted(assignment.items()):
        alive = [b for b in reps if b not in down]
        rows.append(
            {
                "partition": p,
                "replicas": list(reps),
                "alive": len(alive),
                "offline": not alive,
                "leader_lost": reps[0] in down,
                "new_leader": alive[0] if alive else None,
                "below_min_isr": bool(alive) and len(alive) < min_isr,
            }
        )
    return pd.DataFrame(rows).set_index("partition")


def failure_summary(assignment: Mapping[int, Sequence[int]], brokers, **kw) -> dict[str, int]:
    """Counts from :func:`failure_impact`: partitions, offline, leader lost, below min ISR, still writable."""
    t = failure_impact(assignment, brokers, **kw)
    return {
        "partitions": len(t),
        "offline": int(t["offline"].sum()),
        "leader_lost": int(t["leader_lost"].sum()),
        "below_min_isr": int(t["below_min_isr"].sum()),
        "writable (acks=all)": int((~t["offline"] & ~t["below_min_isr"]).sum()),
    }

"""The tables a lab shows about an assignment: replicas, balance, rack spread, and losing brokers or racks.

Each takes an assignment (``{partition: [leader, follower, ...]}``) and the brokers, and returns a
pandas DataFrame; none draws or prints. An empty assignment (a cluster with no partitions yet) gives
the same tables with no partition in them: no rows per partition or replica, zeros per broker and rack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from .admin import assign_for_topic
from .brokers import as_brokers
from .errors import InvalidReplicaAssignmentException
from .java import java_int, java_string_key

__all__ = [
    "RACK_MODES",
    "broker_balance",
    "failure_impact",
    "failure_summary",
    "partition_racks",
    "rack_balance",
    "rack_failure_comparison",
    "rack_mode_assignments",
    "replica_table",
]


def _assignment(assignment) -> Mapping:
    """``assignment`` as the tables take it, ``{partition: [broker ids]}`` (a TypeError that says so, else)."""
    if not isinstance(assignment, Mapping):
        raise TypeError(f"assignment is {{partition: [broker ids]}}, got {type(assignment).__name__} {assignment!r}")
    return assignment


def _rack_lookup(brokers) -> dict[int, str | None]:
    return {b.id: b.rack for b in as_brokers(brokers)}


def replica_table(assignment: Mapping[int, Sequence[int]], brokers) -> pd.DataFrame:
    """One row per replica: partition, position in the replica list (0 = preferred leader), broker, rack."""
    racks = _rack_lookup(brokers)
    rows = [
        (p, i, b, racks.get(b), i == 0)
        for p, reps in sorted(_assignment(assignment).items())
        for i, b in enumerate(reps)
    ]
    df = pd.DataFrame(rows, columns=["partition", "replica", "broker", "rack", "leader"])
    if not rows:  # the columns' types, which pandas cannot infer from no rows
        df = df.astype({"partition": "int64", "replica": "int64", "broker": "int64", "leader": bool})
    return df


def broker_balance(assignment: Mapping[int, Sequence[int]], brokers) -> pd.DataFrame:
    """Per broker: its rack, how many partitions it leads (preferred leader) and how many replicas it holds."""
    bl = as_brokers(brokers)
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
    g = g.loc[sorted(g.index, key=java_string_key)]
    g["replicas per broker"] = g["replicas"] / g["brokers"]
    return g


def partition_racks(assignment: Mapping[int, Sequence[int]], brokers) -> pd.DataFrame:
    """Per partition: its replicas, their racks, and how many distinct racks they span."""
    racks = _rack_lookup(brokers)
    rows = []
    for p, reps in sorted(_assignment(assignment).items()):
        rr = [racks.get(b) for b in reps]
        rows.append({"partition": p, "replicas": list(reps), "racks": rr, "racks spanned": len(set(rr))})
    df = pd.DataFrame(rows, columns=["partition", "replicas", "racks", "racks spanned"])
    if not rows:
        df = df.astype({"partition": "int64", "racks spanned": "int64"})
    return df.set_index("partition")


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

    A partition with no replica is no assignment Kafka makes or takes: it is refused as
    ``AdminZkClient.validateReplicaAssignment`` refuses it (:class:`~.errors.InvalidReplicaAssignmentException`,
    ``Cannot have replication factor of 0 for partition id <p>.``).
    """
    if isinstance(failed_racks, str):
        failed_racks = [failed_racks]
    min_isr = java_int("min_insync_replicas", min_insync_replicas)
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
    down = failed_brokers | {b for b, r in racks.items() if r in failed_racks}
    rows = []
    for p, reps in sorted(_assignment(assignment).items()):
        if len(reps) == 0:
            raise InvalidReplicaAssignmentException(f"Cannot have replication factor of 0 for partition id {p}.")
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
    columns = ["partition", "replicas", "alive", "offline", "leader_lost", "new_leader", "below_min_isr"]
    df = pd.DataFrame(rows, columns=columns)
    if not rows:
        df = df.astype(
            {"partition": "int64", "alive": "int64", "offline": bool, "leader_lost": bool, "below_min_isr": bool}
        )
    return df.set_index("partition")


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


#: Kafka's two ways of placing one topic on the same cluster: KIP-36's rack-aware assignment, and
#: the tools' ``--disable-rack-aware`` (racks ignored, brokers sorted by id)
RACK_MODES = {"rack-aware": "enforced", "rack-unaware": "disabled"}


def rack_mode_assignments(
    racks, partitions: int, replication_factor: int, *, start_index: int = 0
) -> dict[str, dict[int, list[int]]]:
    """The same topic assigned both ways (:data:`RACK_MODES`), with one fixed start index: ``{mode: assignment}``."""
    brokers = as_brokers(racks)
    return {
        label: assign_for_topic(
            brokers, partitions, replication_factor, rack_aware_mode=mode, fixed_start_index=start_index
        )
        for label, mode in RACK_MODES.items()
    }


def rack_failure_comparison(
    racks,
    partitions: int,
    replication_factor: int,
    *,
    failed_rack: str | None = None,
    min_insync_replicas: int = 1,
    start_index: int = 0,
) -> pd.DataFrame:
    """Rack-aware against rack-unaware for the same cluster: what losing ``failed_rack`` does to each.

    One row per mode: the counts of :func:`failure_summary`, and the fewest racks any partition's
    replicas span (1 means some partition lives in a single rack, which one rack failure can take away).
    ``failed_rack`` None means no rack down; any string is a rack name (``""`` is one, as in Kafka), and a
    rack no broker is in is refused as :func:`failure_impact` refuses it.
    """
    brokers = as_brokers(racks)
    rows = {}
    for label, a in rack_mode_assignments(brokers, partitions, replication_factor, start_index=start_index).items():
        s = failure_summary(
            a,
            brokers,
            failed_racks=[] if failed_rack is None else [failed_rack],
            min_insync_replicas=min_insync_replicas,
        )
        s["min racks spanned"] = int(partition_racks(a, brokers)["racks spanned"].min())
        rows[label] = s
    return pd.DataFrame(rows).T

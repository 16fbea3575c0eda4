"""Brokers as the assignment sees them, and Kafka's rack-alternated broker list.

A broker is its ``broker.id`` and its ``broker.rack`` (or none). With racks, Kafka first rearranges
the brokers so that neighbours in the list sit in different racks
(``AdminUtils.getRackAlternatedBrokerList``, docs/kafka-reference.md §1): brokers grouped by rack,
ids ascending inside a rack, racks in Java string order, then one broker from each rack in turn,
skipping racks that have run out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import MSG_RACKS_INCOMPLETE, AdminOperationException
from .java import INT_MAX, INT_MIN, java_string_key

__all__ = [
    "BrokerMetadata",
    "alternate",
    "as_brokers",
    "broker_rack_map",
    "brokers_by_rack",
    "brokers_from_racks",
    "rack_alternated_broker_list",
    "rack_alternated_steps",
]


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


def as_brokers(brokers: Iterable) -> list[BrokerMetadata]:
    """Every form the package accepts for a cluster, as a list of :class:`BrokerMetadata`.

    Accepted: a ``{id: rack}`` mapping, or an iterable of :class:`BrokerMetadata` or ``(id, rack)`` pairs.
    """
    if isinstance(brokers, Mapping):
        return brokers_from_racks(brokers)
    out = []
    for b in brokers:
        if isinstance(b, BrokerMetadata):
            out.append(b)
        elif isinstance(b, tuple) and len(b) == 2:
            out.append(BrokerMetadata(*b))
        else:
            raise TypeError(f"expected BrokerMetadata(id, rack) or an (id, rack) pair, got {b!r}")
    return out


def broker_rack_map(brokers: Sequence[BrokerMetadata]) -> dict[int, str]:
    """Kafka's ``brokerRackMap``: a map by id, so a repeated id keeps its last rack."""
    m: dict[int, str] = {}
    for b in brokers:
        m[b.id] = b.rack  # type: ignore[assignment]
    return m


def brokers_by_rack(brokers) -> dict[str, list[int]]:
    """Rack -> broker ids, racks in Java string order, ids ascending: the groups Kafka alternates over.

    ``brokers`` in any form :func:`as_brokers` accepts; every broker needs a rack.
    """
    rack_of = broker_rack_map(as_brokers(brokers))
    if any(r is None for r in rack_of.values()):
        raise AdminOperationException(MSG_RACKS_INCOMPLETE)
    return _groups(rack_of)


def alternate(rack_of: Mapping[int, str]) -> list[int]:
    """The rack-alternated list of a ``brokerRackMap`` whose every broker has a rack (no checks)."""
    return [b for _, b in _picks(_groups(rack_of))]


def _groups(rack_of: Mapping[int, str]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for bid, rack in rack_of.items():
        groups.setdefault(rack, []).append(bid)
    return {r: sorted(groups[r]) for r in sorted(groups, key=java_string_key)}


def _picks(groups: Mapping[str, list[int]]):
    """``(rack, broker)`` in the order ``getRackAlternatedBrokerList`` takes them: one rack after another."""
    depth, total, taken = 0, sum(map(len, groups.values())), 0
    while taken < total:
        for rack, ids in groups.items():
            if depth < len(ids):
                taken += 1
                yield rack, ids[depth]
        depth += 1


def rack_alternated_broker_list(brokers) -> list[int]:
    """``AdminUtils.getRackAlternatedBrokerList``: one broker from each rack in turn.

    Racks are taken in Java ``String`` order (so ``"rack10"`` comes before ``"rack2"``), brokers in
    id order inside a rack; a rack that has run out is skipped. ``brokers`` is a list of
    :class:`BrokerMetadata` (all with a rack) or a ``{id: rack}`` mapping.
    """
    return [b for _, b in _picks(brokers_by_rack(brokers))]


def rack_alternated_steps(brokers) -> pd.DataFrame:
    """How the rack-alternated list is built, one row per pick: which rack's turn it is, and whom it gives."""
    groups = brokers_by_rack(brokers)
    rows = []
    for rack, bid in _picks(groups):
        ids = groups[rack]
        rows.append(
            {
                "position": len(rows),
                "rack": rack,
                "broker": bid,
                "left in rack": ", ".join(map(str, ids[ids.index(bid) + 1 :])) or "-",
            }
        )
    return pd.DataFrame(rows).set_index("position")

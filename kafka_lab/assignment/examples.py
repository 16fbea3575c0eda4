"""KIP-36's worked examples: the clusters the labs, the exercises and the tests all use.

KIP-36 ("Rack aware replica assignment") explains the algorithm on two clusters; both are here,
once, as ``{broker id: rack}`` (docs/kafka-reference.md §1).
"""

from __future__ import annotations

__all__ = ["KIP36_RACKS", "UNEVEN_RACKS"]

#: KIP-36's first worked example: 6 brokers in 3 racks (rack-alternated list 0, 3, 1, 5, 4, 2)
KIP36_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
#: KIP-36's uneven example: 3 brokers in 2 racks, where broker 0 is "penalized"
UNEVEN_RACKS = {0: "rack1", 1: "rack2", 2: "rack2"}

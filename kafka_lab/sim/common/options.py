"""The experiments' own options (not Kafka settings): what each accepts, and the one check they all pass.

An experiment lists its numeric options as ``{name: (whole, least, excluded)}``: a whole number or any
finite number, at least ``least`` (more than it when ``excluded``). A value that is not a finite number
(a string, a bool, NaN, an infinity) is a TypeError, ``<name> is a finite number``; one out of range
is a ValueError that says the range, ``<name> must be at least 0`` / ``more than 0``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

__all__ = ["check_options"]


def check_options(values: Mapping, ranges: Mapping) -> None:
    """Check each of ``values`` (name → value) against its entry in ``ranges`` (name → (whole, least, excluded))."""
    for name, v in values.items():
        whole, low, excluded = ranges[name]
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise TypeError(f"{name} is a finite number, got {v!r}")
        if whole and v != int(v):
            raise ValueError(f"{name} is a whole number, got {v!r}")
        if v < low or (excluded and v == low):
            raise ValueError(f"{name} must be {'more than' if excluded else 'at least'} {low}, got {v!r}")

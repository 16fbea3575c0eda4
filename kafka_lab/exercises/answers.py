"""Reading a learner's answer: a number with or without its unit, or a letter of a multiple choice.

Shared by the labs' checks (lab 03 passes its own units: rates per second).
"""

from __future__ import annotations

import math
import numbers

__all__ = ["number", "letter"]

_UNITS = ("milliseconds", "ms", "records", "entries", "sends", "answers", "requests")


def number(answer, units=_UNITS) -> float | None:
    """A finite number from an int, a float (numpy's too) or a string like "11", "11 ms", "1,700 records".

    ``units``: the suffixes a string may end with (the first that matches is dropped), longest first.
    """
    if isinstance(answer, bool):
        return None
    if isinstance(answer, numbers.Real):
        value = float(answer)
        return value if math.isfinite(value) else None
    if isinstance(answer, str):
        text = answer.strip().lower().replace(",", "").replace("_", "")
        for unit in units:
            if text.endswith(unit):
                text = text[: -len(unit)].strip()
                break
        try:
            value = float(text)
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    return None


def letter(answer, choices) -> str | None:
    """``"b"`` from "b", "B", "(b)", "b." or "b)"; None when it is not one of ``choices``."""
    if not isinstance(answer, str):
        return None
    got = answer.strip().lower().strip("()[].:'\" ")
    return got if got in choices else None

"""Java's semantics where they change the answer: 32-bit ``int`` arithmetic and ``String`` order.

Kafka's assignment runs on Java ``int``\\s: sums wrap at 32 bits, ``%`` keeps the sign of the
dividend, and a list index out of range throws. Rack names sort as Java strings (UTF-16 code
units), so ``"rack10"`` comes before ``"rack2"``. The reference transcription uses these helpers
line for line; the rest of the package uses the argument check and the sort key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["INT_MAX", "INT_MIN", "i32", "java_int", "java_string_key", "jget", "jrem"]

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)


def java_int(name: str, value) -> int:
    """``value`` as a Python int, refused unless it is an int (not a bool) within Java's ``int`` range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}: {value!r}")
    value = int(value)
    if not INT_MIN <= value <= INT_MAX:
        raise ValueError(f"{name}={value} is outside Java's int range [{INT_MIN}, {INT_MAX}]")
    return value


def java_string_key(s: str) -> bytes:
    """Sort key giving ``String.compareTo`` order: UTF-16 code units (big-endian bytes compare the same)."""
    if not isinstance(s, str):
        raise TypeError(f"java_string_key takes a str, got {type(s).__name__} {s!r}")
    return s.encode("utf-16-be", "surrogatepass")


def i32(x: int) -> int:
    """Java ``int`` overflow: wrap to 32 bits."""
    return (x + 2**31) % 2**32 - 2**31


def jrem(a: int, b: int) -> int:
    """Java ``%``: the remainder takes the sign of the dividend."""
    if b == 0:
        raise ZeroDivisionError("/ by zero")  # java.lang.ArithmeticException
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def jget(seq: Sequence[int], index: int) -> int:
    """``List.get``: an index out of range throws (``IndexOutOfBoundsException``) instead of wrapping."""
    if not 0 <= index < len(seq):
        raise IndexError(f"Index {index} out of bounds for length {len(seq)}")
    return seq[index]

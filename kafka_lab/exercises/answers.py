"""Reading a learner's answer: numbers, lists of numbers, a letter among choices.

Learners answer in many shapes (``36``, ``36.0``, ``"36"``, ``"50 ms"``, ``"4,000/s"``, ``[0, 3, 1]``,
``"0 3 1"``, ``"b)"``). Every check reads its answer with one of these functions, so that one shape is
accepted alike by every exercise, and a check only has to decide what the value means. Each returns
``None`` when the answer is not of that kind; the check then says what it expected.

:class:`Choices` holds a multiple-choice question's options: a notebook shows them from here (the
object's display is the lettered list) rather than retyping them.
"""

from __future__ import annotations

import html
import math
import numbers
import re
from collections.abc import Mapping

__all__ = ["Choices", "choice", "number", "whole_number", "whole_numbers"]

_WHOLE_TEXT = re.compile(r"[+-]?[0-9]+(\.0*)?")
_SEPARATORS = re.compile(r"[\s,;()\[\]{}]+")
#: units a number may carry, longest first (they are stripped, not converted)
UNITS = (
    "requests per second",
    "milliseconds",
    "requests/s",
    "req/s",
    "per second",
    "requests",
    "records",
    "entries",
    "answers",
    "sends",
    "/s",
    "rps",
    "ms",
)


def whole_number(answer) -> int | None:
    """The answer as an int, or None when it is not a whole number (bools are not numbers here).

    Accepts Python and numpy integers, whole floats (``36 / 6`` is ``6.0``) and their text (``"36"``, ``" 6.0 "``).
    """
    if isinstance(answer, bool):
        return None
    if isinstance(answer, numbers.Integral):
        return int(answer)
    if isinstance(answer, numbers.Real) and float(answer).is_integer():
        return int(answer)
    if isinstance(answer, str) and _WHOLE_TEXT.fullmatch(answer.strip()):
        return int(float(answer.strip()))
    return None


def whole_numbers(answer) -> list[int] | None:
    """The answer as a non-empty list of whole numbers, or None.

    Accepts a list, tuple or array of whole numbers (digit strings too), a ``{key: number}`` mapping
    (read in key order), or text such as ``"[0, 3, 1]"``, ``"(0,3,1)"`` or ``"0 3 1"``.
    """
    if isinstance(answer, str):
        items = [x for x in _SEPARATORS.split(answer) if x]
    elif isinstance(answer, Mapping):
        try:
            items = [answer[k] for k in sorted(answer)]
        except TypeError:
            return None
    elif isinstance(answer, bytes) or not hasattr(answer, "__iter__"):
        return None
    else:
        items = list(answer)
    out = [whole_number(x) for x in items]
    return out if out and None not in out else None


#: digits with a comma before each group of three (``1,700``, ``12,000.5``); and one decimal comma (``12,23``)
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,(?:\d{1,2}|\d{4,})")


def number(answer) -> float | None:
    """A finite number from an int or float (numpy's too) or from text like ``"50"``, ``"50 ms"``, ``"4,000/s"``.

    Thousands separators (``_``, and ``,`` before each group of three digits: ``"1,700"``) and one trailing unit
    of :data:`UNITS` are dropped; the unit is not converted, so a check that wants milliseconds can still tell
    a learner who answered in seconds. A single comma before fewer or more than three digits is a decimal
    comma (``"12,23"`` is 12.23, as a European learner writes it, not 1223); any other comma makes the text
    no number.
    """
    if isinstance(answer, bool):
        return None
    if isinstance(answer, numbers.Real):
        try:
            value = float(answer)
        except OverflowError:  # an int too large for a float: no answer any lab asks for
            return None
        return value if math.isfinite(value) else None
    if not isinstance(answer, str):
        return None
    text = answer.strip().lower().replace("_", "")
    for unit in UNITS:
        if text.endswith(unit):
            text = text[: -len(unit)].strip()
            break
    if "," in text:
        if _THOUSANDS.fullmatch(text):
            text = text.replace(",", "")
        elif _DECIMAL_COMMA.fullmatch(text):
            text = text.replace(",", ".")
        else:
            return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


SECONDS = ("seconds", "second", "secs", "sec", "s")
PER_MILLISECOND = ("per millisecond", "per ms", "/ms")
#: a count of replicas or of brokers, as lab 00 asks for them ("36 replicas", "1 broker")
REPLICAS = ("replicas", "replica")
BROKERS = ("brokers", "broker")


def seconds(answer) -> float | None:
    """A number of seconds: :func:`number`, with "2.8 s", "2.8 seconds" and "2.8s" read too (a trailing "ms" is
    left as :func:`number` reads it, so a check can tell an answer given in milliseconds)."""
    if isinstance(answer, str) and not answer.strip().lower().endswith("ms"):
        answer = re.sub(r"\s*(seconds?|secs?|s)\s*$", "", answer.strip(), flags=re.I)
    return number(answer)


def number_in(answer, units: tuple[str, ...]) -> float | None:
    """The number of a text answer that ends with one of ``units`` (``"0.05 s"`` with :data:`SECONDS`,
    ``"4 per ms"`` with :data:`PER_MILLISECOND`, ``"36 replicas"`` with :data:`REPLICAS`), else None: how a
    check recognises an answer given in another unit than the one it asks for, and says so, or a count
    given with the unit it asks for."""
    if not isinstance(answer, str):
        return None
    text = answer.strip().lower()
    for unit in units:
        if text.endswith(unit):
            return number(text[: -len(unit)])
    return None


class Choices(dict):
    """A multiple-choice question's options, ``{letter: text}``; shown in a notebook as a lettered list."""

    def __repr__(self) -> str:
        return "\n".join(f"({key}) {text}" for key, text in self.items())

    def _repr_html_(self) -> str:
        items = "".join(f"<li><b>({html.escape(str(k))})</b> {html.escape(t)}</li>" for k, t in self.items())
        return f"<ul class='kl-choices' style='list-style:none;padding-left:0'>{items}</ul>"


def choice(answer, choices: Mapping[str, str]) -> str | None:
    """The key of ``choices`` the answer names, or None.

    A letter in any case and dress (``"b"``, ``"B."``, ``"(b)"``, ``"b)"``, ``"'b'"``) names its choice,
    and so does the full text of a choice (a final period optional).
    """
    if not isinstance(answer, str):
        return None
    text = answer.strip()
    by_text = {t.rstrip(".").casefold(): key for key, t in choices.items()}
    if text.rstrip(".").casefold() in by_text:
        return by_text[text.rstrip(".").casefold()]
    token = text.strip("()[].:'\" ").casefold()
    return next((key for key in choices if str(key).casefold() == token), None)

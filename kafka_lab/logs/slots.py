"""Numbers a window's copies continue: each partition's offsets, leader epoch and ZooKeeper version, and
each broker's epoch.

The scenario (:mod:`.scenario`) renders a window once and writes it many times. A partition's offsets
and epochs only grow in Kafka, so each copy must start where the copies before it ended. While a window
is rendered, every such number is written as a **mark** (:meth:`Slots.mark`): a 19-digit number that
names the counter (its index in :attr:`Slots.keys`, one per ``(kind, subject)``) and the window's own
value. The writer cuts the marks out once (:func:`split`) and, per copy, writes each one's value plus
the counter's shift for that copy (:func:`fill`). A mark stays a number, so a message template, ``json``
and the 2.7 text format write it as they would the value, and a template's arithmetic on it (``leo - 1``)
is arithmetic on the value.

Kinds: :data:`OFFSET`, :data:`LEADER_EPOCH`, :data:`ZK_VERSION` and :data:`POSITION` (a byte position in the
partition's log segment) of a partition ``(topic, partition)``;
:data:`BROKER_EPOCH` of a broker, per value: ``(broker, epoch in the window)`` (a restart gives the
broker a new epoch, one above every other: the copy's shift depends on the value, not only the broker).
"""

from __future__ import annotations

import re

__all__ = ["OFFSET", "LEADER_EPOCH", "ZK_VERSION", "POSITION", "BROKER_EPOCH", "Slots", "split", "fill", "MARK"]

OFFSET, LEADER_EPOCH, ZK_VERSION, BROKER_EPOCH = "offset", "leader_epoch", "zk_version", "broker_epoch"
POSITION = "position"

_BASE = 7 * 10**18  # 19 digits, the first a 7: no other number a line holds is that long
_KEY = 10**12  # a mark is _BASE + key * _KEY + _BIAS + value
_BIAS = 10**11  # values down to -_BIAS (a template's "leo - 1" of an empty log)
#: a mark in a line's text (no lookaround: 7 times faster, and no number a line holds has 19 digits, nor
#: touches a mark)
MARK = re.compile(r"(7\d{18})")


class Slots:
    """The counters one window's marks name, in the order first marked (:attr:`keys`)."""

    __slots__ = ("keys", "_index")

    def __init__(self):
        self.keys: list = []  # (kind, subject)
        self._index: dict = {}

    def mark(self, kind: str, subject, value: int) -> int:
        """``value`` of the counter ``(kind, subject)``, as a mark; a negative value (Kafka's "none": -1,
        -2) is a constant and stays itself."""
        value = int(value)
        if value < 0:
            return value
        key = (kind, subject)
        k = self._index.get(key)
        if k is None:
            k = self._index[key] = len(self.keys)
            self.keys.append(key)
        return _BASE + k * _KEY + _BIAS + value


def decode(mark):
    """``(key index, value)`` of a mark (an int, or a numpy array of them: two arrays)."""
    rest = mark - _BASE
    return rest // _KEY, rest % _KEY - _BIAS


def split(text: str) -> tuple[list, list]:
    """``(pieces, marks)``: the text between the marks (one more piece than marks) and each mark's
    ``(key index, value)``."""
    parts = MARK.split(text)
    return parts[::2], [decode(int(x)) for x in parts[1::2]]


def fill(text: str, shifts) -> str:
    """``text`` with each mark replaced by its value plus its counter's shift (``shifts[key index]``; a
    sequence, or None for none)."""
    parts = MARK.split(text)
    for i in range(1, len(parts), 2):
        k, v = decode(int(parts[i]))
        parts[i] = str(v if shifts is None else v + int(shifts[k]))
    return "".join(parts)

"""The Java coordinator's nondeterministic picks as explicit choice points (R11 and the leader picks).

Kafka 4.x decides three things by HashMap iteration order: the protocol among tied votes
(ClassicGroup.java:1006-1026, a ``HashMap<String, Integer>`` of protocol names), the new leader when the
leader is removed and the new leader among joined members (ClassicGroup.java:477-538, a HashMap keyed by
member ids that end in a random UUID). kgc makes each a *choice point*: the runtime asks ``Choices.pick``
with the options in default order, the default is taken unless the driver scripted a pick, and every
choice point with more than one option is logged with its alternatives, so that a world can re-run the
step with each alternative (``force``) and enumerate every outcome Kafka could produce.
The script and the log are driving aids, not coordinator state: snapshots leave them out.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChoicePoint:
    kind: str                  # "protocol-tie" | "leader-on-remove" | "joined-leader"
    options: tuple[str, ...]   # options[0] is the default
    picked: str


class Choices:
    """Picks for the choice points of the next calls: scripted indices first, then the default (0)."""

    __slots__ = ("script", "log")

    def __init__(self) -> None:
        self.script: list[int] = []
        self.log: list[ChoicePoint] = []

    def pick(self, kind: str, options: tuple[str, ...]) -> str:
        if not options:
            raise ValueError(f"choice point {kind} has no options")
        if len(options) == 1:
            return options[0]
        index = self.script.pop(0) if self.script else 0
        if not 0 <= index < len(options):
            raise ValueError(f"scripted pick {index} for {kind} is out of range for {options!r}")
        self.log.append(ChoicePoint(kind, options, options[index]))
        return options[index]

    def pick_protocol(self, tied: tuple[str, ...]) -> str:
        """``tied`` in vote insertion order; the default is the one Java's HashMap iterates first."""
        return self.pick("protocol-tie", java_hashmap_order(tied))


def java_string_hash(s: str) -> int:
    """String.hashCode as an unsigned 32-bit value (UTF-16 code units, 31-polynomial, int overflow)."""
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def java_hashmap_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The iteration order of a java.util.HashMap holding ``keys`` inserted in this order: bucket index
    (spread hash masked by the table size, 16 doubling past 3/4 load), insertion order within a bucket."""
    size = 16
    while len(keys) > size * 3 // 4:
        size *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & (size - 1)
    return tuple(sorted(keys, key=lambda k: (bucket(k), keys.index(k))))

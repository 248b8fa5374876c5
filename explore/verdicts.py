"""Reusing the catalog's verdicts on an edge whose inputs were seen before (explore/space.py uses two of these).

A ``Verdicts`` splits the checked properties, monitors and witnesses by a predicate over their declared reads
(properties/reads.py): those it accepts get, for equal inputs, the same verdict, the same monitor run state after
and the same witness outcome — so ``first`` evaluates everything and returns an ``Entry`` to keep, and ``reuse``
takes the accepted ones from it and evaluates only the others. Which inputs count as equal is the caller's key:
a step that does not call the coordinator, from one coordinator state and monitor run state; or one coordinator
call from one coordinator state and monitor run state (``harness.calls``). Violations come out in catalog order
either way (runs of accepted and other properties are taken in turn), so reports cannot tell the difference.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from core.trace import Step, Violation
from properties.catalog import Monitor, Property
from properties.check import check_world_step
from properties.checker_side import unobservable
from properties.observation import Observation

@dataclass(frozen=True, slots=True)
class Entry:
    """What ``first`` found: per run of properties its violations (None: a run evaluated every time), per monitor
    its run state after (None: evaluated), per witness True/False or the message of its exception (None: evaluated)."""

    violations: tuple[tuple[Violation, ...] | None, ...]
    monitors: tuple[bytes | None, ...]
    witnesses: tuple[bool | str | None, ...]
    complete: bool      # everything is in it: reusing it needs no observation after the step
    reached: frozenset[str] = frozenset()         # the witnesses reached (when all are in it)
    raised: tuple[tuple[str, str], ...] = ()      # (witness, message) of those that raised, in catalog order

    @staticmethod
    def of(violations: tuple[tuple[Violation, ...] | None, ...], monitors: tuple[bytes | None, ...],
           witnesses: tuple[bool | str | None, ...], names: tuple[str, ...]) -> "Entry":
        parts = violations + monitors + witnesses
        reached = frozenset(n for n, w in zip(names, witnesses, strict=True) if w is True)
        raised = tuple((n, w) for n, w in zip(names, witnesses, strict=True) if isinstance(w, str))
        return Entry(violations, monitors, witnesses, all(x is not None for x in parts), reached, raised)


class Verdicts:
    def __init__(self, checked: Sequence[Property], monitors: Mapping[str, Monitor], witnesses: Sequence[Property],
                 by_name: Mapping[str, Property], reusable: Callable[[Property], bool]) -> None:
        self.segments = tuple((ok, tuple(run)) for ok, run in itertools.groupby(checked, key=reusable))
        self.monitors = monitors
        self.monitor_ok = tuple(reusable(by_name[name]) for name in monitors)
        self.witnesses = tuple(witnesses)
        self.witness_ok = tuple(reusable(p) for p in witnesses)
        self.witness_names = tuple(p.name for p in witnesses)

    def first(self, before: Observation, step: Step, after: Observation) -> tuple[list[Violation], tuple[bytes, ...],
                                                                                 Entry]:
        """Evaluate everything: the violations in catalog order, the monitors' run states after, the entry to keep."""
        found: list[Violation] = []
        stored: list[tuple[Violation, ...] | None] = []
        for ok, props in self.segments:
            got = check_world_step(props, before, step, after, self.monitors)
            found.extend(got)
            stored.append(tuple(got) if ok else None)
        states = tuple(m.run_state() for m in self.monitors.values())
        witnesses = tuple(witness(p, after) if ok else None for p, ok in zip(self.witnesses, self.witness_ok,
                                                                             strict=True))
        monitors = tuple(s if ok else None for s, ok in zip(states, self.monitor_ok, strict=True))
        return found, states, Entry.of(tuple(stored), monitors, witnesses, self.witness_names)

    def reuse(self, entry: Entry, before: Observation, step: Step, after: Observation | None,
              node_monitors: tuple[bytes, ...]) -> tuple[list[Violation], tuple[bytes, ...]]:
        """The violations and run states after, from ``entry`` where it has them (``node_monitors``: the monitors'
        run states before the step, what they hold now); the rest evaluated on ``after`` (None if ``complete``)."""
        found: list[Violation] = []
        for (_ok, props), stored in zip(self.segments, entry.violations, strict=True):
            if stored is None:
                assert after is not None
                stored = check_world_step(props, before, step, after, self.monitors)   # type: ignore[assignment]
            found.extend(stored)   # type: ignore[arg-type]
        states = []
        for monitor, was, now in zip(self.monitors.values(), node_monitors, entry.monitors, strict=True):
            if now is None:
                now = monitor.run_state()
            elif now != was:
                monitor.set_run_state(now)   # the run state the step leaves it in, as if it had observed the step
            states.append(now)
        return found, tuple(states)

    def witnessed(self, entry: Entry | None, after: Observation | None, seen: set[str]) -> list[str]:
        """Add the witnesses reached after the step to ``seen`` (those already in it are not evaluated again, as
        ``Checker`` does); the messages of the witnesses whose evaluation raised."""
        if entry is not None and entry.complete:    # names reached and names that raised are apart: any order
            messages = [message for name, message in entry.raised if name not in seen]
            seen |= entry.reached
            return messages
        raised: list[str] = []
        for j, p in enumerate(self.witnesses):
            if p.name in seen:
                continue
            outcome = entry.witnesses[j] if entry is not None else None
            if outcome is None:
                assert after is not None
                outcome = witness(p, after)
            if outcome is True:
                seen.add(p.name)
            elif outcome is not False:
                raised.append(outcome)
        return raised


def witness(p: Property, after: Observation) -> bool | str:
    """Whether ``after`` reaches witness ``p``; the violation message if evaluating it raised."""
    try:
        return p.fn(after) is not None   # type: ignore[misc]  # = p.check
    except Exception as exc:   # noqa: BLE001 — as check_world_step does: reported, the edge goes on
        return unobservable(f"checking {p.name}", exc, -1).message

"""How the explorer judges an edge of a release the catalog and the model do not judge yet (4.1: the runtime's rules).

``release(profile).runnable`` decides, as kgc/runs.py's ``CheckedRun`` does (never the profile's name): a runnable
release is judged by the catalog, the monitors and the labelled refinement (explore/space.py); any other one the
World drives (profile 4.1, the Java coordinator) by the runtime's own rules (properties/runtime_4x.py, those whose
release fact holds), plus ``coordinator-raises-no-exception`` (the step raised) and ``checker-observes-every-state``
(reading the world before the step, or judging it after, raised). No abstract state, edge or ``sometimes``
witness is collected on such a release: there is no abstraction of its coordinator. When the release becomes
runnable the Expander takes the catalog's path with no change here.

The rules read the world before the step (``properties.runtime_4x.before``) and after it; none keeps state across
steps (no monitors), so a node of such a release carries an empty monitor tuple. The documented findings R9 and R10
stand for two of the rules (``sync-in-stable-extends-the-session``, ``max-size-refusal-completes-the-join``): the
rules read ``harness.excuses`` on every check, so they are excused by default, as in the gate's walks, and found
afresh by a search run inside ``harness.excuses.unexcused`` (in one process: the local engine without workers).
"""
from __future__ import annotations

from typing import Any, Callable

from core.actions import Action
from harness.world import World, plain_bytes
from model.releases import release
from properties.checker_side import OBSERVES, RAISES, unobservable
from properties.runtime_4x import RuntimeRule, before, rules_for

__all__ = ["judged_by_rules", "rules_of", "step_by_rules"]

#: what the Expander's result says of a release judged by its rules (ExploreResult.judged_by)
BY_RULES = "runtime rules (properties/runtime_4x.py): the catalog and the model do not judge this release yet"
BY_CATALOG = "catalog, monitors and labelled refinement"


def judged_by_rules(profile: str) -> bool:
    """Whether ``profile``'s edges are judged by the runtime's rules rather than the catalog (not runnable)."""
    return not release(profile).runnable


def rules_of(profile: str) -> tuple[RuntimeRule, ...]:
    """The rules that judge ``profile``'s edges (the runtime rules whose release fact holds)."""
    return rules_for(profile)


def step_by_rules(world: World, index: int, action: Action, rules: tuple[RuntimeRule, ...],
                  found: Callable[[str, int, str], None]) -> tuple[bytes, tuple[Any, ...]] | None:
    """Take ``action`` and judge it by ``rules``; each violation goes to ``found(property, index, message)``. A
    recording world keeps the step (the Expander clears it, a counterexample's replay keeps it).
    Returns (world bytes, world state) of the target, or None when the step raised or its target could not be
    judged (then it is not explored further, as on the catalog's path)."""
    try:
        seen = before(world, action)
    except Exception as exc:   # noqa: BLE001 — the checker cannot read the state: a violation on the node's edge
        found(OBSERVES, index, unobservable("observing", exc, index).message)
        return None
    try:
        world.step(action)
        world_state = world.to_state()
        world_bytes = plain_bytes(world_state)     # = world.snapshot()
    except Exception as exc:   # noqa: BLE001 — a coordinator that throws inside a step is a violation
        found(RAISES, index, f"{RAISES}: {action} raised {type(exc).__name__}: {exc}")
        return None
    stage = "checking"
    try:
        for rule in rules:
            stage = f"checking {rule.name}"
            reason = rule.check(world, seen, action)
            if reason is not None:
                found(rule.name, index, reason)
    except Exception as exc:   # noqa: BLE001 — an unjudgeable target: a violation, not explored further
        found(OBSERVES, index, unobservable(stage, exc, index).message)
        return None
    return world_bytes, world_state

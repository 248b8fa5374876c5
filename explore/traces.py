"""From a path of action indexes (what the engines keep) to a replayable kgc ``Trace`` ending at the violation.

The path is re-executed on a fresh recording World with the catalog ``Checker`` and the refinement
check, so the trace carries real recorded steps and the violation its witness values; a path that
does not reproduce its property is an error (the engines and the checker would disagree).
"""
from __future__ import annotations

import dataclasses

from core.actions import Action
from core.trace import Trace, Violation
from explore.result import Found
from explore.space import RAISES, REFINES, ExploreSpec
from harness.refinement import NonRefiningStep, RefinementChecker
from harness.world import World
from properties.check import Checker
from properties.findings import undocumented


class PathDoesNotReproduce(AssertionError):
    """Re-executing an engine's counterexample path did not violate its property."""


def actions_along(spec: ExploreSpec, path: tuple[int, ...]) -> list[Action]:
    """The actions a path of ``enabled()`` indexes stands for."""
    world = World(spec.profile, spec.scope, clients=spec.kinds, record=False, mutant=spec.mutant)
    actions = []
    for index in path:
        action = world.enabled()[index]
        actions.append(action)
        if len(actions) < len(path):
            world.step(action)
    return actions


def counterexample(spec: ExploreSpec, found: Found, name: str = "") -> Trace:
    """The trace of ``found`` (its path re-executed and checked), with the violation attached."""
    world = World(spec.profile, spec.scope, clients=spec.kinds, seed=0, record=True, mutant=spec.mutant)
    checker = Checker(world)
    refinement = RefinementChecker(world)
    violation: Violation | None = None
    if not found.path:
        violation = next((v for v in checker.violations if v.property == found.property), None)
    for i, index in enumerate(found.path):
        action = world.enabled()[index]
        last = i == len(found.path) - 1
        before = refinement.capture()
        try:
            seen = checker.step(action)
        except Exception as exc:   # noqa: BLE001 — the coordinator raising is the RAISES property
            if last and found.property == RAISES:
                trace = world.trace(name or f"explore {found.property}")
                violation = Violation(RAISES, len(world.steps), f"{action} raised {type(exc).__name__}: {exc}")
                return dataclasses.replace(trace, violation=violation,
                                           meta={**trace.meta, "raising_action": action.to_json()})
            raise
        if not last:
            continue
        if found.property == REFINES:
            try:
                refinement.verify(before, action)
            except NonRefiningStep as exc:
                violation = Violation(REFINES, len(world.steps) - 1, str(exc))
        else:
            violation = next((v for v in undocumented(spec.profile, world.steps, seen) if v.property == found.property),
                             None)
    if violation is None:
        raise PathDoesNotReproduce(f"path {list(found.path)} does not violate {found.property} when re-executed.")
    trace = world.trace(name or f"explore {found.property}")
    return dataclasses.replace(trace, violation=violation)

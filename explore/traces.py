"""From a path of action indexes (what the engines keep) to a replayable kgc ``Trace`` ending at the violation.

The path is re-executed on a fresh recording World with the catalog ``Checker`` and the refinement
check, so the trace carries real recorded steps and the violation its witness values; a path that
does not reproduce its property is an error (the engines and the checker would disagree). A
``checker-observes-every-state`` violation is looked for in everything the explorer does with the
last state: observing and checking it, abstracting it, and restoring its snapshot.
"""
from __future__ import annotations

import dataclasses

from core.actions import Action
from core.trace import Trace, Violation
from explore.result import Found
from explore.rules import judged_by_rules, rules_of, step_by_rules
from explore.space import OBSERVES, RAISES, REFINES, RESTORING, ExploreSpec
from harness.refinement import RefinementChecker
from harness.world import World
from properties.check import Checker
from properties.checker_side import unobservable, verify_step
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
    if judged_by_rules(spec.profile):
        return _by_rules(spec, world, found, name)
    checker = Checker(world)
    try:
        refinement = RefinementChecker(world)
    except Exception as exc:   # noqa: BLE001 — the initial state has no abstract image (Expander.__init__)
        if found.path or found.property != OBSERVES:
            raise
        return dataclasses.replace(world.trace(name or f"explore {found.property}"),
                                   violation=unobservable("abstracting", exc, -1))
    violation: Violation | None = None
    if not found.path:
        violation = next((v for v in checker.violations if v.property == found.property), None)
    for i, index in enumerate(found.path):
        action = world.enabled()[index]
        last = i == len(found.path) - 1
        before = refinement.capture(action)
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
        seen = undocumented(spec.profile, world.steps, seen)
        if found.property in (REFINES, OBSERVES):
            seen += verify_step(refinement, before, action, len(world.steps) - 1)
        if found.property == OBSERVES:
            seen += _unobservable_after(spec, world, checker)
        violation = _matching(found, seen)
    if violation is None:
        raise PathDoesNotReproduce(f"path {list(found.path)} does not violate {found.property} when re-executed.")
    trace = world.trace(name or f"explore {found.property}")
    return dataclasses.replace(trace, violation=violation)


def _by_rules(spec: ExploreSpec, world: World, found: Found, name: str) -> Trace:
    """``counterexample`` on a release judged by its runtime rules (explore/rules.py), by the Expander's own step."""
    rules = rules_of(spec.profile)
    seen: list[Violation] = []
    for i, index in enumerate(found.path):
        action = world.enabled()[index]
        if i < len(found.path) - 1:
            world.step(action)
            continue
        taken = len(world.steps)
        step_by_rules(world, i, action, rules,
                      lambda prop, _i, message, at=taken: seen.append(Violation(prop, at, message)))
        violation = _matching(found, seen)
        if len(world.steps) == taken and violation is not None:   # the step raised, or the state before was unread
            trace = world.trace(name or f"explore {found.property}")
            return dataclasses.replace(trace, violation=violation,
                                       meta={**trace.meta, "raising_action": action.to_json()})
    violation = _matching(found, seen)
    if violation is None:
        raise PathDoesNotReproduce(f"path {list(found.path)} does not violate {found.property} when re-executed.")
    return dataclasses.replace(world.trace(name or f"explore {found.property}"), violation=violation)


def _matching(found: Found, seen: list[Violation]) -> Violation | None:
    """The violation of ``found.property`` among ``seen``: the one with the engine's message if there is one."""
    candidates = [v for v in seen if v.property == found.property]
    return next((v for v in candidates if v.message == found.message), candidates[0] if candidates else None)


def _unobservable_after(spec: ExploreSpec, world: World, checker: Checker) -> list[Violation]:
    """What else the explorer does with the state a step reached, as ``checker-observes-every-state``
    violations: every ``sometimes`` predicate (the Checker skips those already reached on the path; an
    expansion starts afresh) and a restore of its snapshot (an explorer stores every state that way)."""
    index = len(world.steps) - 1
    out = []
    if checker.obs is not None:
        for p in checker.witnesses:
            try:
                p.check(checker.obs)
            except Exception as exc:   # noqa: BLE001 — as Expander._step reports it
                out.append(unobservable(f"checking {p.name}", exc, index))
    scratch = World(spec.profile, spec.scope, clients=spec.kinds, seed=0, record=True, mutant=spec.mutant)
    try:
        scratch.restore(world.snapshot())
    except Exception as exc:   # noqa: BLE001 — as Expander.expand reports it
        out.append(unobservable(RESTORING, exc, index))
    return out

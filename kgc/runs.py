"""A checked run of the world, its counterexample, and delta-debugging shrinking of that counterexample."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

from core.actions import Action
from core.trace import Trace, Violation
from harness.refinement import NonRefiningStep, RefinementChecker
from harness.replay import world_for
from harness.world import World
from properties.check import Checker
from properties.findings import undocumented

RAISES = "coordinator-raises-no-exception"
REFINES = "refines-the-abstract-model"


@dataclass
class Found:
    """A counterexample: the primary violation, its trace (ending at it), and what else the run broke."""

    violation: Violation
    trace: Trace
    phase: str
    also: tuple[str, ...] = ()


class CheckedRun:
    """The world, the catalog Checker and the refinement check, stepped together.

    Every undocumented violation of the run is kept; a step that raises inside the coordinator ends
    the run (Kafka would log the exception and the world is left half-way through the step).
    """

    def __init__(self, world: World, refine: bool = True) -> None:
        self.world = world
        self.checker = Checker(world)
        self.refinement = RefinementChecker(world) if refine else None
        self.violations: list[Violation] = []
        self.raising: Action | None = None

    @property
    def over(self) -> bool:
        return self.raising is not None

    def step(self, action: Action) -> list[Violation]:
        world = self.world
        before = self.refinement.capture() if self.refinement else None
        try:
            found = undocumented(world.profile.name, world.steps, self.checker.step(action))
        except Exception as exc:   # noqa: BLE001 — a coordinator that throws inside a step is a finding
            self.raising = action
            found = [Violation(RAISES, len(world.steps), f"{action} raised {type(exc).__name__}: {exc}")]
        if self.refinement is not None and before is not None and not self.over:
            try:
                self.refinement.verify(before, action)
            except NonRefiningStep as exc:
                found.append(Violation(REFINES, len(world.steps) - 1, str(exc)))
        self.violations.extend(found)
        return found

    def result(self, phase: str, preferred: tuple[str, ...] = ()) -> Found | None:
        """The run's counterexample: the first violation of a preferred property, else the first one."""
        if not self.violations:
            return None
        primary = next((v for v in self.violations if v.property in preferred), self.violations[0])
        trace = self.world.trace(phase)
        trace = dataclasses.replace(trace, steps=trace.steps[:primary.step + 1], violation=primary)
        if primary.property == RAISES and self.raising is not None:
            # the raising step is not recorded; keep its action so that shrinking and replay reach it
            trace = dataclasses.replace(trace, meta={**trace.meta, "raising_action": self.raising.to_json()})
        also = tuple(sorted({v.property for v in self.violations} - {primary.property}))
        return Found(primary, trace, phase, also)


def actions_of(trace: Trace) -> list[Action]:
    actions = list(trace.actions)
    raising = trace.meta.get("raising_action")
    if raising is not None:
        actions.append(Action.from_json(raising))
    return actions


def replay_checked(trace: Trace, actions: Sequence[Action], prop: str) -> CheckedRun | None:
    """Replay ``actions`` on a fresh world like ``trace``'s; the run if ``prop`` fails on the way, else None."""
    run = CheckedRun(world_for(dataclasses.replace(trace, steps=()), record=True), refine=prop == REFINES)
    for action in actions:
        if run.over or not run.world.is_enabled(action):
            return None
        if any(v.property == prop for v in run.step(action)):
            return run
    return None


def shrink(found: Found, expired: Callable[[], bool]) -> Found:
    """Delta debugging: drop ever smaller chunks of actions while the same property still fails."""
    prop = found.violation.property
    actions = actions_of(found.trace)
    chunk = max(1, len(actions) // 2)
    while chunk >= 1 and not expired():
        i, progressed = 0, False
        while i < len(actions) and not expired():
            candidate = actions[:i] + actions[i + chunk:]
            if candidate and replay_checked(found.trace, candidate, prop) is not None:
                actions, progressed = candidate, True
            else:
                i += chunk
        if not progressed:
            chunk //= 2
    run = replay_checked(found.trace, actions, prop)
    shrunk = run.result(found.trace.name, (prop,)) if run is not None else None
    return dataclasses.replace(shrunk, phase=found.phase, also=found.also) if shrunk else found

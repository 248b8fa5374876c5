"""A checked run of the world, its counterexample, and delta-debugging shrinking of that counterexample."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

from core.actions import Action
from core.trace import Trace, Violation
from harness.refinement import RefinementChecker
from harness.refinement_4x import StateRefinement4x, reason as refinement_reason
from harness.replay import world_for
from harness.world import World
from properties.check import Checker
from properties.checker_side import OBSERVES, RAISES, REFINES, unobservable, verify_step
from properties.findings import undocumented
from properties.runtime_4x import RuntimeRule, before as runtime_before, rules_for
from model.releases import release

__all__ = ["Allowance", "CheckedRun", "Found", "OBSERVES", "RAISES", "REFINES", "actions_of", "replay_checked",
           "shrink"]


@dataclass
class Allowance:
    """How many replayed steps a shrink may spend. A count, not a clock: the same counterexample shrinks to the same
    trace (and report bytes) however loaded the machine is — a wall-clock limit made a loaded CI machine's reports
    differ from a quiet one's."""

    steps: int
    used: int = 0

    def charge(self, steps: int) -> None:
        self.used += steps

    def __call__(self) -> bool:
        return self.used >= self.steps


@dataclass
class Found:
    """A counterexample: the primary violation, its trace (ending at it), and what else the run broke."""

    violation: Violation
    trace: Trace
    phase: str
    also: tuple[str, ...] = ()


class CheckedRun:
    """The world, the catalog Checker and the refinement check, stepped together.

    Every undocumented violation of the run is kept. A step that raises inside the coordinator ends
    the run (Kafka would log the exception and the world is left half-way through the step), and so
    does a state the checker cannot observe or abstract (``checker-observes-every-state``): nothing
    after it can be checked.
    """

    def __init__(self, world: World, refine: bool = True) -> None:
        self.world = world
        #: a release the labelled refinement does not judge yet (4.1) is checked by its runtime rules
        #: (properties/runtime_4x.py) beside the catalog; None: the catalog and the labelled refinement judge it
        self.rules: tuple[RuntimeRule, ...] | None = None
        #: a release the model has a profile for but the labelled refinement does not judge yet (4.1): every step's
        #: abstract states are judged against the model (harness/refinement_4x.py) beside the rules and the catalog
        self.states: StateRefinement4x | None = None
        if not release(world.profile.name).runnable:
            self.rules = rules_for(world.profile.name)
            self.refinement: RefinementChecker | None = None
            self.raising: Action | None = None
            # the catalog judges every step (properties/observation_4x.py reads the Java runtime for it)
            self.checker = Checker(world)
            self.violations: list[Violation] = [v for v in self.checker.violations if v.property == OBSERVES]
            self.unobservable = bool(self.violations)
            if refine and release(world.profile.name).modelled:
                self.states = StateRefinement4x(world)
            return
        self.checker = Checker(world)
        self.violations = [v for v in self.checker.violations if v.property == OBSERVES]
        self.refinement = None
        if refine:
            try:
                self.refinement = RefinementChecker(world)
            except Exception as exc:   # noqa: BLE001 — the initial state has no abstract image
                self.violations.append(unobservable("abstracting", exc, -1))
        self.raising = None
        self.unobservable = bool(self.violations)

    @property
    def over(self) -> bool:
        return self.raising is not None or self.unobservable

    def step(self, action: Action) -> list[Violation]:
        world = self.world
        if self.rules is not None:
            return self._step_by_rules(action)
        # the state before was abstracted when it was reached (a state that could not be ended the run)
        before = self.refinement.capture(action) if self.refinement else None
        try:
            found = undocumented(world.profile.name, world.steps, self.checker.step(action))
        except Exception as exc:   # noqa: BLE001 — a coordinator that throws inside a step is a finding
            self.raising = action
            found = [Violation(RAISES, len(world.steps), f"{action} raised {type(exc).__name__}: {exc}")]
        if self.refinement is not None and before is not None and not self.over:
            found += verify_step(self.refinement, before, action, len(world.steps) - 1)
        self.unobservable |= any(v.property == OBSERVES for v in found)
        self.violations.extend(found)
        return found

    def _step_by_rules(self, action: Action) -> list[Violation]:
        """A step of a release its runtime rules judge (4.1): the rules, the catalog and the state refinement."""
        assert self.rules is not None
        world = self.world
        taken = self.states.before_step(action) if self.states is not None else None
        seen = runtime_before(world, action)
        try:
            found = undocumented(world.profile.name, world.steps, self.checker.step(action))
        except Exception as exc:   # noqa: BLE001 — a coordinator that throws inside a step is a finding
            self.raising = action
            found = [Violation(RAISES, len(world.steps), f"{action} raised {type(exc).__name__}: {exc}")]
        if self.raising is None:
            step = len(world.steps) - 1
            found += [Violation(r.name, step, why) for r in self.rules if (why := r.check(world, seen, action))]
            if self.states is not None and taken is not None:
                why = refinement_reason(self.states.after_step(action, taken), action, step, world.profile.name)
                if why is not None:
                    found.append(Violation(REFINES, step, why))
        self.unobservable |= any(v.property == OBSERVES for v in found)
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
    run = CheckedRun(world_for(dataclasses.replace(trace, steps=()), record=True), refine=prop in (REFINES, OBSERVES))
    for action in actions:
        if run.over or not run.world.is_enabled(action):
            return None
        if any(v.property == prop for v in run.step(action)):
            return run
    return None


def shrink(found: Found, expired: Callable[[], bool]) -> Found:
    """Delta debugging: drop ever smaller chunks of actions while the same property still fails — first with the
    kept steps' request and timer references renamed (kgc/shrinking.py), then as they are. ``expired`` says when to
    stop; an ``Allowance`` is charged the steps of every replayed candidate."""
    from kgc.shrinking import ddmin, shrink_renamed   # they build on CheckedRun
    prop = found.violation.property
    charge = expired.charge if isinstance(expired, Allowance) else (lambda _steps: None)

    renamed = shrink_renamed(found.trace, actions_of(found.trace), prop, expired, charge)
    short = renamed.result(found.trace.name, (prop,)) if renamed is not None else None
    if short is not None and len(short.trace.steps) < len(found.trace.steps):
        found = dataclasses.replace(short, phase=found.phase, also=found.also)
    trace = found.trace

    def replayed(candidate: list[Action]) -> list[Action] | None:
        charge(len(candidate))
        return candidate if replay_checked(trace, candidate, prop) is not None else None

    actions = ddmin(actions_of(trace), replayed, expired)
    run = replay_checked(found.trace, actions, prop)
    shrunk = run.result(found.trace.name, (prop,)) if run is not None else None
    return dataclasses.replace(shrunk, phase=found.phase, also=found.also) if shrunk else found

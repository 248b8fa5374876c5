"""Evaluating the catalog on a running World: ``check_world_step`` for one step, ``Checker`` for a run.

The Checker takes the applicable concrete properties from the catalog for the world's profile (nobody
lists them by hand), observes the world before and after every step it performs, and returns the
violations of that step; ``sometimes`` witnesses are recorded as seen. Stepping the world behind the
Checker's back, or restoring a snapshot into it, breaks the before/after pairing: use one Checker per
straight run (explorers that restore call ``observe`` and ``check_world_step`` themselves, with a
``transitions_from`` taken on the coordinator they step).

Nothing the checker does on a step crashes a run: a predicate that raises is a violation of
``checker-observes-every-state`` naming that property (the others are still evaluated), and a state
the Checker cannot observe is one too, after which the Checker checks nothing more of the run (a
state it could not read cannot be paired with the next). An exception inside ``world.step`` itself
is the coordinator's and propagates: the caller reports ``coordinator-raises-no-exception``.
"""
from __future__ import annotations

import dataclasses
import random
from typing import Mapping, Sequence

from core.actions import Action
from core.trace import Step, Violation
from harness.world import World
from properties.catalog import Monitor, Property, message
from properties.findings import concrete_properties
from properties.checker_side import unobservable
from properties.observation import Observation, observe, observe_after


def check_world_step(props: Sequence[Property], before: Observation, step: Step, after: Observation,
                     monitors: Mapping[str, Monitor] | None = None) -> list[Violation]:
    """Violations of ``props`` at ``step``: always on ``after``, always_step on the triple, and
    eventually_within through ``monitors`` (name -> monitor; those without one are skipped).
    Each violation carries its one-line message and the witness values (``Property.explain``)."""
    out: list[Violation] = []
    for p in props:
        kind = p.kind
        try:   # free unless it raises (CPython 3.11 zero-cost exceptions)
            if kind == "always":
                found = p.fn(after)                  # type: ignore[misc]  # = p.explain(after), one call fewer
            elif kind == "always_step":
                found = p.fn(before, step, after)    # type: ignore[misc]
            elif kind == "eventually_within" and monitors is not None and p.name in monitors:
                monitor = monitors[p.name]
                found = p.explain(monitor) if monitor.observe(before, step, after) is not None else {}
            else:
                continue
        except Exception as exc:   # noqa: BLE001 — a predicate the state breaks is a finding, not a crash
            out.append(unobservable(f"checking {p.name}", exc, step.index))
            continue
        if found:
            out.append(Violation(p.name, step.index, message(p.name, p.claim, found), witness=found))
    return out


def initial_violations(props: Sequence[Property], obs: Observation) -> list[Violation]:
    """Violations of the ``always`` properties among ``props`` in an initial read-out (step -1)."""
    out: list[Violation] = []
    for p in props:
        if p.kind != "always":
            continue
        try:
            found = p.explain(obs)
        except Exception as exc:   # noqa: BLE001 — as in check_world_step
            out.append(unobservable(f"checking {p.name}", exc, -1))
            continue
        if found:
            out.append(Violation(p.name, -1, message(p.name, p.claim, found), witness=found))
    return out


class Checker:
    """Wraps a recording World: ``checker.step(action)`` instead of ``world.step(action)``."""

    def __init__(self, world: World, props: Sequence[Property] | None = None) -> None:
        if not world.record:
            raise ValueError("Checker needs a World created with record=True (properties read the step's events).")
        self.world = world
        self.props = tuple(props) if props is not None else concrete_properties(world.profile.name)
        self.checked = tuple(p for p in self.props if p.kind != "sometimes")
        self.witnesses = tuple(p for p in self.props if p.kind == "sometimes")
        self.monitors: dict[str, Monitor] = {p.name: p.check() for p in self.props if p.kind == "eventually_within"}
        self.seen: dict[str, int] = {}                  # witness name -> index of the first step that reached it
        self.violations: list[Violation] = []
        self.obs: Observation | None = None             # None once a state could not be observed
        #: the read-out before the last step: a ``Choose`` runs that step again with other picks from the state it
        #: started in (harness/world.py ``_step_with_choices``, the 4.1 runtime's choice points), so it is judged
        #: against that state, not the one the first run reached
        self.prior: Observation | None = None
        self.prior_action: Action | None = None          # the action of the step a Choose runs again
        try:
            self.obs = observe(world)
        except Exception as exc:   # noqa: BLE001 — see the module doc
            self.violations.append(unobservable("observing", exc, -1))
            return
        self.violations.extend(initial_violations(self.checked, self.obs))

    @property
    def blind(self) -> bool:
        """True once a state could not be observed: later steps are stepped but not checked."""
        return self.obs is None

    def step(self, action: Action) -> list[Violation]:
        before, world = self.obs, self.world
        again = action.kind == "Choose" and self.prior is not None and before is not None
        if again:
            before = self.prior
        else:
            self.prior, self.prior_action = before, action
        world.step(action)   # an exception here is the coordinator's: it propagates (see the module doc)
        if before is None:
            return []
        step = world.steps[-1]
        try:
            after = observe_after(before, world, step)
            if after.events is not step.events:
                # the Java runtime logs no step events: the adapter read the ones its state shows
                # (properties/observation_4x.py ``_events``), which the properties read from the step
                step = dataclasses.replace(step, events=after.events)
            if again and self.prior_action is not None:
                # judged as the step it runs again (what it delivered or fired), with this run's outcome
                step = dataclasses.replace(step, action=self.prior_action)
                after = dataclasses.replace(after, action=self.prior_action)
        except Exception as exc:   # noqa: BLE001 — see the module doc
            self.obs = None
            found = [unobservable("observing", exc, step.index)]
            self.violations.extend(found)
            return found
        found = check_world_step(self.checked, before, step, after, self.monitors)
        for p in self.witnesses:
            try:
                if p.name not in self.seen and p.check(after):
                    self.seen[p.name] = step.index
            except Exception as exc:   # noqa: BLE001 — as in check_world_step
                found.append(unobservable(f"checking {p.name}", exc, step.index))
        self.obs = after
        self.violations.extend(found)
        return found

    def run(self, actions: Sequence[Action]) -> list[Violation]:
        """Step through ``actions``; every violation found on the way."""
        found: list[Violation] = []
        for action in actions:
            found.extend(self.step(action))
        return found

    def random_walk(self, steps: int, rng: random.Random | None = None) -> list[Violation]:
        """Up to ``steps`` uniformly random enabled actions (like World.random_walk), checked."""
        r = rng if rng is not None else random.Random(self.world.seed)
        found: list[Violation] = []
        for _ in range(steps):
            choices = self.world.enabled()
            if not choices:
                break
            found.extend(self.step(choices[r.randrange(len(choices))]))
        return found

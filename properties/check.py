"""Evaluating the catalog on a running World: ``check_world_step`` for one step, ``Checker`` for a run.

The Checker takes the applicable concrete properties from the catalog for the world's profile (nobody
lists them by hand), observes the world before and after every step it performs, and returns the
violations of that step; ``sometimes`` witnesses are recorded as seen. Stepping the world behind the
Checker's back, or restoring a snapshot into it, breaks the before/after pairing: use one Checker per
straight run (explorers that restore call ``observe`` and ``check_world_step`` themselves, with a
``transitions_from`` taken on the coordinator they step).
"""
from __future__ import annotations

import random
from typing import Mapping, Sequence

from core.actions import Action
from core.trace import Step, Violation
from harness.world import World
from properties.catalog import Monitor, Property, for_profile, message
from properties.observation import Observation, observe, observe_after


def check_world_step(props: Sequence[Property], before: Observation, step: Step, after: Observation,
                     monitors: Mapping[str, Monitor] | None = None) -> list[Violation]:
    """Violations of ``props`` at ``step``: always on ``after``, always_step on the triple, and
    eventually_within through ``monitors`` (name -> monitor; those without one are skipped).
    Each violation carries its one-line message and the witness values (``Property.explain``)."""
    out: list[Violation] = []
    for p in props:
        kind = p.kind
        if kind == "always":
            found = p.fn(after)                  # type: ignore[misc]  # = p.explain(after), one call fewer
        elif kind == "always_step":
            found = p.fn(before, step, after)    # type: ignore[misc]
        elif kind == "eventually_within" and monitors is not None and p.name in monitors:
            monitor = monitors[p.name]
            found = p.explain(monitor) if monitor.observe(before, step, after) is not None else {}
        else:
            continue
        if found:
            out.append(Violation(p.name, step.index, message(p.name, p.claim, found), witness=found))
    return out


class Checker:
    """Wraps a recording World: ``checker.step(action)`` instead of ``world.step(action)``."""

    def __init__(self, world: World, props: Sequence[Property] | None = None) -> None:
        if not world.record:
            raise ValueError("Checker needs a World created with record=True (properties read the step's events).")
        self.world = world
        self.props = tuple(props) if props is not None else for_profile(world.profile.name, level="concrete")
        self.checked = tuple(p for p in self.props if p.kind != "sometimes")
        self.witnesses = tuple(p for p in self.props if p.kind == "sometimes")
        self.monitors: dict[str, Monitor] = {p.name: p.check() for p in self.props if p.kind == "eventually_within"}
        self.seen: dict[str, int] = {}                  # witness name -> index of the first step that reached it
        self.violations: list[Violation] = []
        self.obs = observe(world)
        self.violations.extend(Violation(p.name, -1, message(p.name, p.claim, found), witness=found)
                               for p in self.checked if p.kind == "always" and (found := p.explain(self.obs)))

    def step(self, action: Action) -> list[Violation]:
        before, world = self.obs, self.world
        world.step(action)
        step = world.steps[-1]
        after = observe_after(before, world, step)
        found = check_world_step(self.checked, before, step, after, self.monitors)
        for p in self.witnesses:
            if p.name not in self.seen and p.check(after):
                self.seen[p.name] = step.index
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

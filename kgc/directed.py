"""The gate's coverage of the abstract graph and its directed phase: the map sweep (explore/sweep.py) over checked runs.

``fork`` copies a CheckedRun so that a search can continue from a concrete state many times: the world
is restored from its canonical snapshot (its recorded steps shared, they are immutable), the checker's
monitors get their run state, and refinement starts afresh from the same abstract state with a copy of the run's
shadow (harness/shadow.py: what the request history says the coordinator holds). A fork checks
every later step exactly as the original would have, and its trace starts at the initial state.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Sequence

from explore.coverage import (CoverageMap, CoverageReport, EdgeKey, coverage_key, coverage_map, measure, run_state,
                              scope_edges, source_timings, timed_map)
from explore.runs import Runs
from explore.sweep import SweepResult, sweep
from harness.abstraction import abstract
from harness.puppets import KINDS as PUPPETS, same_millisecond_matters
from harness.refinement import RefinementChecker
from harness.scope import Scope
from harness.world import World
from kgc.runs import CheckedRun
from model.state import State
from properties.observation import observe


def fork(run: CheckedRun) -> CheckedRun:
    old = run.world
    world = World(old.profile.name, old.scope, clients=old.kinds, seed=old.seed, record=True, mutant=old.mutant)
    world.restore(old.snapshot())
    world.steps, world.skipping_joins = list(old.steps), set(old.skipping_joins)
    checker = copy.copy(run.checker)
    checker.world = world
    checker.monitors = {}
    for name, monitor in run.checker.monitors.items():
        twin = next(p for p in checker.props if p.name == name).check()
        twin.set_run_state(monitor.run_state())
        checker.monitors[name] = twin
    checker.seen, checker.violations = dict(run.checker.seen), list(run.checker.violations)
    if checker.obs is not None:   # read again: an observation counts the transitions of *its* coordinator's log
        checker.obs = observe(world)
    twin_run = copy.copy(run)
    twin_run.world, twin_run.checker, twin_run.violations = world, checker, list(run.violations)
    twin_run.refinement = RefinementChecker(world, halfway=run.refinement.halfway, shadow=run.refinement.shadow) \
        if run.refinement is not None else None
    return twin_run


def run_edges(run: CheckedRun) -> set[EdgeKey]:
    """The abstract edges a run's refinement recorded, as coverage keys (explore.coverage.coverage_key)."""
    if not run.refinement:
        return set()
    profile = run.world.profile.name
    keys = (coverage_key(profile, b, a, t) for b, a, t in run.refinement.coverage.edges)
    return {k for k in keys if k is not None}


def run_states(run: CheckedRun) -> set[State]:
    profile = run.world.profile.name
    return {run_state(profile, s) for s in run.refinement.coverage.states} if run.refinement else set()


def _state(run: CheckedRun) -> State:
    if run.refinement is None:
        return State()
    return run_state(run.world.profile.name, abstract(run.world.coord, run.world.group_id))


@dataclass
class Coverage:
    """What the gate's checked runs covered so far (coverage keys), for one profile."""

    states: set[State]
    edges: set[EdgeKey]
    tried: set[EdgeKey] = field(default_factory=set)   # edges the sweep went for (their uncovered reason)

    def add(self, run: CheckedRun) -> None:
        self.states |= run_states(run)
        self.edges |= run_edges(run)


def profile_map(profile: str, scopes: dict[str, Scope], kinds: tuple[str, ...]) -> CoverageMap:
    return coverage_map(profile, tuple((scopes[name], kinds) for name in sorted(scopes)))


def report(cmap: CoverageMap, cov: Coverage) -> CoverageReport:
    return measure(cmap, cov.states, cov.edges, cov.tried)


def swept(profile: str, scopes: Sequence[Scope], kinds: tuple[str, ...], cmap: CoverageMap, cov: Coverage,
          steps: int, seed: int, mutant: str | None = None, maps: Sequence[frozenset[EdgeKey]] | None = None
          ) -> SweepResult[CheckedRun]:
    """The map sweep (explore/sweep.py) with puppet clients, one world per scope, toward ``cmap``'s reachable edges
    not in ``cov``; adds what it covers to ``cov``. ``kinds``: the client kinds whose requests the puppets stand for
    (each scope's map is the one those clients could take); ``maps``: each scope's edges, where they are not a walk
    scope's (the static map, explore/static_coverage.py)."""
    def start(scope: Scope) -> Callable[[], CheckedRun]:
        return lambda: CheckedRun(World(profile, scope, clients=PUPPETS, seed=seed, record=True, mutant=mutant))
    runs: Runs[CheckedRun] = Runs(starts=[start(s) for s in scopes], fork=fork, enabled=lambda r: r.world.enabled(),
                                  state=_state, edges=run_edges, failed=lambda r: bool(r.violations),
                                  world=lambda r: r.world)
    by_timing = same_millisecond_matters(profile)
    if maps is not None:
        found = sweep(runs, [m & cmap.reachable_edges for m in maps], cov.edges, steps, seed, by_timing=by_timing)
    else:
        found = sweep(runs, [scope_edges(profile, scope, kinds) & cmap.reachable_edges for scope in scopes],
                      cov.edges, steps, seed, timings=[source_timings(profile, s, kinds) for s in scopes],
                      plans=[timed_map(profile, s, kinds) for s in scopes], by_timing=by_timing)
    cov.edges |= found.edges
    cov.tried |= found.tried
    cov.states |= found.states
    return found


__all__ = ["swept", "Coverage", "fork", "profile_map", "report", "run_edges", "run_states"]

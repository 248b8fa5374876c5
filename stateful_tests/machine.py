"""Hypothesis state machines over the harness world (DESIGN.md §7, issue "Hypothesis state machines…").

One rule per action family (joins, syncs, heartbeats, leaves, commits, deliveries, losses, clock,
timers, appends, crashes, unload/load); each test case first draws its world (scope, clients) and a
*swarm* — the subset of families it may use — so that rare orderings are not drowned by common
ones. Every step goes through the property Checker (the whole catalog for the profile, nobody
lists properties here) and the refinement check; `target()` steers towards more abstract-graph
edges. A failing example is shrunk by Hypothesis and its world trace — a replayable kgc Trace —
is kept in ``FAILURES`` (the last entry is the shrunk one).
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

from hypothesis import HealthCheck, settings, target
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from core.actions import Action
from core.trace import Trace, Violation
from harness.refinement import RefinementChecker
from harness.scope import Scope
from harness.world import World
from properties.check import Checker
from properties.checker_side import OBSERVES, RAISES, unobservable, verify_step
from properties.findings import undocumented

FAMILIES: dict[str, tuple[str, ...]] = {
    "join": ("JoinGroup",), "sync": ("SyncGroup",), "heartbeat": ("Heartbeat",), "leave": ("LeaveGroup",),
    "commit": ("OffsetCommit",), "deliver": ("DeliverRequest", "DeliverResponse"),
    "loss": ("DropRequest", "DropResponse"), "clock": ("AdvanceClock", "AdvanceToNextDeadline"),
    "timer": ("FireTimer",), "append": ("CompleteAppend",), "crash": ("Crash", "Restart"),
    "partition": ("UnloadGroup", "LoadGroup"),
}
#: families every swarm keeps, or nothing could ever happen
CORE_FAMILIES = ("join", "deliver", "clock", "timer")

for _name, _kw in {
    "ci": dict(max_examples=60, stateful_step_count=40, derandomize=True),
    "dev": dict(max_examples=300, stateful_step_count=60),
    "nightly": dict(max_examples=5000, stateful_step_count=120),
}.items():
    settings.register_profile(_name, database=None, deadline=None, print_blob=False,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
                              **_kw)   # type: ignore[arg-type]

#: traces of failing examples, newest last (Hypothesis replays the shrunk example last)
FAILURES: list[Trace] = []


class MachineFailure(AssertionError):
    """A property violation or a non-refining step found by a machine; carries the kgc Trace."""

    def __init__(self, message: str, trace: Trace) -> None:
        super().__init__(message)
        self.trace = trace


worlds = st.fixed_dictionaries({
    "append_mode": st.sampled_from(("sync", "deferred")),
    "commits": st.booleans(),
    "initial_delay": st.sampled_from((0, 3000)),
    "sessions": st.lists(st.sampled_from((6000, 10000, 20000)), min_size=2, max_size=3),
    "adversarial": st.booleans(),
    "advance": st.sampled_from(((1000,), (1000, 7000), (3000,))),
})


class CoordinatorMachine(RuleBasedStateMachine):
    """Drives a World of one profile (and optionally a mutant); set by ``machine_for``."""

    profile = "3.9"
    mutant: str | None = None
    steps_taken: list[int] = []   # per machine class (``machine_for`` makes a fresh one): steps of each run

    def __init__(self) -> None:
        super().__init__()
        self.world: World | None = None
        self.swarm: frozenset[str] = frozenset(FAMILIES)

    @initialize(cfg=worlds, swarm=st.sets(st.sampled_from(sorted(set(FAMILIES) - set(CORE_FAMILIES)))))
    def build_world(self, cfg: dict[str, Any], swarm: set[str]) -> None:
        self.swarm = frozenset(swarm) | frozenset(CORE_FAMILIES)
        scope = Scope(append_mode=cfg["append_mode"], commits=cfg["commits"], faults="loss" in self.swarm,
                      crashes="crash" in self.swarm, unload="partition" in self.swarm,
                      leaves="leave" in self.swarm, advance_ms=cfg["advance"],
                      session_timeout_ms=tuple(cfg["sessions"]),
                      group_initial_rebalance_delay_ms=cfg["initial_delay"])
        kinds = ["java"] * len(cfg["sessions"])
        if cfg["adversarial"]:
            kinds[-1] = "adversarial"
        self.world = World(self.profile, scope, clients=kinds, seed=0, record=True, mutant=self.mutant)
        self.checker = Checker(self.world)
        try:
            self.refinement = RefinementChecker(self.world)
        except Exception as exc:   # noqa: BLE001 — an initial state with no abstract image is a finding
            self._fail(unobservable("abstracting", exc, -1))
        unseen = [v for v in self.checker.violations if v.property == OBSERVES]
        if unseen:
            self._fail(unseen[0])

    def candidates(self, family: str) -> list[Action]:
        if self.world is None or family not in self.swarm:
            return []
        kinds = FAMILIES[family]
        return [a for a in self.world.enabled() if a.kind in kinds]

    def take(self, family: str, data: st.DataObject) -> None:
        assert self.world is not None
        action = data.draw(st.sampled_from(self.candidates(family)), label=family)
        before = self.refinement.capture(action)
        world = self.world
        try:
            found = undocumented(world.profile.name, world.steps, self.checker.step(action))
        except Exception as exc:   # noqa: BLE001 — a coordinator that throws inside a request is a finding
            self._fail(Violation(RAISES, len(world.steps), f"{action} raised {type(exc).__name__}: {exc}"),
                       recorded=False)
        # checking or abstracting a state that raises is checker-observes-every-state (properties/checker_side.py)
        found += verify_step(self.refinement, before, action, len(world.steps) - 1)
        if found:
            self._fail(found[0])

    def _fail(self, violation: Violation, recorded: bool = True) -> None:
        """Stop with a replayable trace (a step that raised is not recorded; the trace ends before it)."""
        assert self.world is not None
        trace = dataclasses.replace(self.world.trace(f"hypothesis-{self.profile}"), violation=violation)
        FAILURES.append(trace)
        raise MachineFailure(violation.message, trace)

    def teardown(self) -> None:
        """Coverage targeting: prefer runs that cover more abstract-graph edges."""
        if self.world is not None:
            self.steps_taken.append(len(self.world.steps))
            target(float(len(self.refinement.coverage.edges)), label="abstract edges covered")

    @invariant()
    def no_violation_so_far(self) -> None:
        if self.world is not None:
            world = self.world
            found = undocumented(world.profile.name, world.steps, self.checker.violations)
            if found:   # a MachineFailure with its trace (a bare assertion would carry none)
                self._fail(found[0])


def _family_rule(family: str) -> Callable[..., None]:
    @precondition(lambda self: bool(self.candidates(family)))
    @rule(data=st.data())
    def take_family(self: CoordinatorMachine, data: st.DataObject) -> None:
        self.take(family, data)
    take_family.__name__ = f"take_{family}"
    return take_family


for _family in FAMILIES:
    setattr(CoordinatorMachine, f"take_{_family}", _family_rule(_family))


def machine_for(profile: str, mutant: str | None = None) -> type[CoordinatorMachine]:
    """A machine class bound to a profile (and mutant); ``.TestCase`` runs it under pytest."""
    name = f"Machine_{profile.replace('.', '_')}" + (f"_{mutant.replace('-', '_')}" if mutant else "")
    return type(name, (CoordinatorMachine,), {"profile": profile, "mutant": mutant, "steps_taken": []})


def settings_profile() -> str:
    return os.environ.get("KGC_HYPOTHESIS_PROFILE", "ci")


def run_machine(profile: str, mutant: str | None, examples: int, steps: list[int] | None = None) -> Trace | None:
    """Run the machine under the `ci` settings with ``examples`` examples; the shrunk failing trace, or None.
    ``steps``, when given, gets the number of world steps of every run that reached its teardown."""
    from hypothesis.stateful import run_state_machine_as_test

    FAILURES.clear()
    machine = machine_for(profile, mutant)
    if steps is not None:
        machine.steps_taken = steps
    try:
        # one counterexample is what the gate reports: with several distinct failures Hypothesis would
        # otherwise raise an ExceptionGroup instead of the MachineFailure caught below
        run_state_machine_as_test(machine,
                                  settings=settings(settings.get_profile("ci"), max_examples=examples,
                                                    report_multiple_bugs=False))
    except MachineFailure:
        return FAILURES[-1]
    return None

"""Shared helpers of the property tests: seeded, biased random walks under a Checker, the scopes they
use, and the (before, step, after) triples of the seed scenarios."""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Iterator, Sequence

from core.actions import Action
from core.trace import Step, Violation
from harness.scenarios import CLOCK_STEPS, SCENARIOS, Driver, Scenario, ScenarioError
from harness.scope import Scope
from harness.world import World
from properties.catalog import Property
from properties.check import Checker
from properties.observation import Observation

PROFILES = ("0.10.0", "3.9")
TIMEOUTS = dict(session_timeout_ms=(10000, 6000, 20000), rebalance_timeout_ms=(15000, 6000, 30000),
                group_min_session_timeout_ms=1000)
#: scopes of the long walks: every family of environment actions appears in at least one
SCOPES: dict[str, Scope] = {
    "steady": Scope(append_mode="deferred", commits=True, leaves=False, advance_ms=(100, 1000),
                    group_initial_rebalance_delay_ms=0, **TIMEOUTS),  # type: ignore[arg-type]
    "faults": Scope(faults=True, crashes=True, commits=True, advance_ms=(100, 1000, 7000),
                    group_initial_rebalance_delay_ms=0, **TIMEOUTS),  # type: ignore[arg-type]
    "crashes": Scope(append_mode="deferred", faults=True, crashes=True, commits=True, advance_ms=(100, 1000),
                     **TIMEOUTS),  # type: ignore[arg-type]
    "unload": Scope(append_mode="deferred", faults=True, crashes=True, unload=True, commits=True,
                    advance_ms=(100, 1000), group_initial_rebalance_delay_ms=0, **TIMEOUTS),  # type: ignore[arg-type]
}
CLIENTS: dict[str, int | tuple[str, ...]] = {"java": 3, "mixed": ("java", "adversarial", "java")}
#: relative weight of an action kind in a biased walk (others weigh 1): the clock, crashes and partition moves
#: are rarer than requests so that rebalances get to finish
WEIGHTS = {"AdvanceClock": 0.1, "AdvanceToNextDeadline": 0.1, "Crash": 0.05, "Restart": 0.3,
           "UnloadGroup": 0.02, "LoadGroup": 0.3, "DropRequest": 0.2, "DropResponse": 0.2, "LeaveGroup": 0.2}


def biased_walk(checker: Checker, steps: int, rng: random.Random, stop_on: str | None = None) -> list[Violation]:
    """Up to ``steps`` random enabled actions, weighted by WEIGHTS; stops at the first violation of ``stop_on``."""
    found: list[Violation] = []
    for _ in range(steps):
        choices = checker.world.enabled()
        if not choices:
            break
        action = rng.choices(choices, [WEIGHTS.get(a.kind, 1.0) for a in choices])[0]
        new = checker.step(action)
        found.extend(new)
        if stop_on is not None and any(v.property == stop_on for v in new):
            break
    return found


def walk(profile: str, scope: str, clients: str, seed: int, steps: int = 2000, stop_on: str | None = None,
         mutant: str | None = None, props: Sequence[Property] | None = None) -> tuple[Checker, list[Violation]]:
    checker = Checker(World(profile, SCOPES[scope], clients=CLIENTS[clients], seed=seed, mutant=mutant), props)
    return checker, biased_walk(checker, steps, random.Random(seed), stop_on)


Triple = tuple[Observation, Step, Observation]


class CheckedDriver(Driver):
    """A scenario Driver whose every action goes through a Checker; records the (before, step, after) triples.

    Besides the Driver's instructions it takes ("do", Action) for an action the script names directly."""

    def __init__(self, checker: Checker) -> None:
        super().__init__(checker.world)
        self.checker = checker
        self.triples: list[Triple] = []

    def act(self, action: Action) -> None:
        if action not in self.world.enabled():
            raise ScenarioError(f"step {len(self.world.steps)}: {action} is not enabled")
        before = self.checker.obs
        self.checker.step(action)
        self.triples.append((before, self.world.steps[-1], self.checker.obs))

    def do_do(self, action: Action) -> None:
        self.act(action)


def run_script(profile: str, scope: Scope, script: Sequence[tuple], clients: int | tuple[str, ...] = 3,
               props: Sequence[Property] | None = None, mutant: str | None = None) -> CheckedDriver:
    """Run instructions on a fresh recording world under a Checker (all applicable properties, or ``props``)."""
    world = World(profile, scope, clients=clients, seed=0, record=True, mutant=mutant)
    driver = CheckedDriver(Checker(world, props))
    for instr in script:
        driver.run(instr)  # type: ignore[arg-type]
    return driver


def scenario_triples(scenario: Scenario, profile: str, props: Sequence[Property] | None = None) -> CheckedDriver:
    """A seed scenario run under a Checker."""
    return run_script(profile, scenario.scope, scenario.script, scenario.clients, props)


def all_scenario_runs(profile: str) -> Iterator[tuple[str, CheckedDriver]]:
    for scenario in SCENARIOS:
        if profile in scenario.profiles:
            yield scenario.name, scenario_triples(scenario, profile)


# --- short scripts (harness.scenarios.Driver instructions) for situations the seed scenarios do not reach ----
SCRIPT_SCOPE = Scope(advance_ms=CLOCK_STEPS, group_initial_rebalance_delay_ms=0)
#: c0 (leader) and c1 form a generation whose join responses are delivered at t = 0; both sync at t = 1 s
TWO_STABLE: tuple[tuple, ...] = (
    ("member_id", 0), ("call", 0, "JoinGroup"), ("member_id", 1), ("request", 1, "JoinGroup"),
    ("call", 0, "SyncGroup"), ("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"),
    ("wait", 1000), ("call", 0, "SyncGroup"), ("call", 1, "SyncGroup"))
#: c0's assignment append is pending when c1's JoinGroup restarts the rebalance; generation 2 forms; the append
#: then completes for generation 1 (SPEC.md §5.2 ordering (a))
STALE_APPEND: tuple[tuple, ...] = (
    ("member_id", 0), ("call", 0, "JoinGroup"), ("request", 0, "SyncGroup"), ("member_id", 1),
    ("request", 1, "JoinGroup"), ("respond", 0, "SyncGroup"), ("request", 0, "JoinGroup"), ("append",))


@dataclass(frozen=True)
class Script:
    profiles: tuple[str, ...]
    scope: Scope
    instructions: tuple[tuple, ...]
    clients: int | tuple[str, ...] = 2


def _keep_alive(client: int, times: int, every_ms: int) -> tuple[tuple, ...]:
    return tuple(i for _ in range(times) for i in (("call", client, "Heartbeat"), ("wait", every_ms)))


#: witness name -> a script that reaches it (besides the seed scenarios and the walks)
#: two static consumers (KIP-345): c0 (session 30 s) does not rejoin the rebalance c1's join starts and survives its
#: completion; then c0 restarts with its instance id while a Heartbeat of its old incarnation is still in flight,
#: which the coordinator answers FENCED_INSTANCE_ID
STATIC_SCRIPT = (("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"), ("call", 0, "SyncGroup"),
                 ("request", 1, "JoinGroup"), ("wait", 10001), ("respond", 1, "JoinGroup"),
                 ("send", 0, "Heartbeat"), ("do", Action("Crash", 0, 0)), ("do", Action("Restart", 0, 0)),
                 ("request", 0, "JoinGroup"), ("deliver", 0, "Heartbeat"))
#: c1 restarts while its first JoinGroup is parked: the old incarnation's join is fenced (SPEC.md §3.1 J5a step 4)
STATIC_RESTART_PARKED = (("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"), ("call", 0, "SyncGroup"),
                         ("request", 1, "JoinGroup"), ("do", Action("Crash", 1, 0)), ("do", Action("Restart", 1, 0)),
                         ("request", 1, "JoinGroup"))
WITNESS_SCRIPTS: dict[str, Script] = {
    "an-instance-id-moves-to-a-new-member-id": Script(
        ("2.4.1", "2.7.0", "3.9"), replace(SCRIPT_SCOPE, crashes=True), STATIC_RESTART_PARKED, ("static", "static")),
    "a-static-member-that-did-not-rejoin-survives-join-completion": Script(
        ("2.4.1", "2.7.0", "3.9"), replace(SCRIPT_SCOPE, crashes=True, session_timeout_ms=(30000, 10000),
                                           rebalance_timeout_ms=(10000, 10000)), STATIC_SCRIPT, ("static", "static")),
    "a-store-callback-is-ignored-for-an-old-generation": Script(
        PROFILES, replace(SCRIPT_SCOPE, append_mode="deferred"), STALE_APPEND),
    "a-store-callback-fails-and-the-group-rebalances": Script(
        PROFILES, replace(SCRIPT_SCOPE, append_mode="deferred", faults=True),
        (("member_id", 0), ("call", 0, "JoinGroup"), ("request", 0, "SyncGroup"),
         ("do", Action("CompleteAppend", -1, "REQUEST_TIMED_OUT")))),
    "a-parked-request-is-answered-not-coordinator-on-unload": Script(
        PROFILES, replace(SCRIPT_SCOPE, unload=True),
        (("member_id", 0), ("call", 0, "JoinGroup"), ("member_id", 1), ("request", 1, "JoinGroup"),
         ("do", Action("UnloadGroup")))),
    "a-fresh-heartbeat-is-completed-at-birth": Script(
        ("3.9",), SCRIPT_SCOPE, TWO_STABLE[:8] + (("request", 1, "SyncGroup"), ("call", 1, "Heartbeat"))),
    "a-member-that-never-syncs-is-removed-by-the-delayed-sync": Script(
        ("3.9",), replace(SCRIPT_SCOPE, rebalance_timeout_ms=(6000, 6000)),
        TWO_STABLE[:8] + (("call", 0, "SyncGroup"), ("wait", 7000))),
    "a-pending-member-expires": Script(("3.9",), SCRIPT_SCOPE, (("member_id", 0), ("wait", 11000))),
    "a-new-member-is-removed-by-the-new-member-timeout": Script(
        ("3.9",), replace(SCRIPT_SCOPE, rebalance_timeout_ms=(600000, 10000)),
        (("member_id", 0), ("call", 0, "JoinGroup"), ("call", 0, "SyncGroup"), ("member_id", 1),
         ("request", 1, "JoinGroup")) + _keep_alive(0, 62, 5000),
        clients=("adversarial", "java")),
}


def run(script: Script, profile: str, props: Sequence[Property] | None = None,
        mutant: str | None = None) -> CheckedDriver:
    return run_script(profile, script.scope, script.instructions, script.clients, props, mutant)

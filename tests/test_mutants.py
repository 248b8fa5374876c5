"""The seeded mutants: each is registered with its mistake and catcher, runs, and changes behaviour."""
from __future__ import annotations

import random
import re

import pytest

from harness.replay import replay
from harness.scenarios import SCENARIOS, Driver, Scenario, ScenarioError
from harness.scope import Scope
from harness.world import World
from impl.java_gc.coordinator import JavaGroupCoordinator
from model.releases import RUNNABLE
from impl.mutants import UnknownMutantError, all_mutants, coordinator_class, get_mutant
from impl.coordinator import GroupCoordinator

MUTANTS = all_mutants()
RICH = Scope(append_mode="deferred", faults=True, commits=True, unload=True, group_initial_rebalance_delay_ms=0,
             session_timeout_ms=(6000, 9000, 12000), advance_ms=(1000, 4000))
CALM = Scope(append_mode="deferred", commits=True, leaves=False, group_initial_rebalance_delay_ms=0,
             session_timeout_ms=(6000, 9000, 12000), advance_ms=(1000, 4000))
SCOPES = (CALM, RICH, Scope(commits=True, advance_ms=(1000, 3000)),
          Scope(unload=True, leaves=False, advance_ms=(1000,)))
#: the profiles added in issue 11 run their mutant cases in the slow tier (the default tier keeps 0.10.0 and 3.9;
#: bench/mutants.py and tests/test_gate_mutants.py show every mutant killed on them)
NEW_PROFILES = ("2.4.1", "2.7.0")
#: the one mutant this file's 90 walks do not tell apart on a new profile; the gate's calm walks with an adversarial
#: client do (tests/test_gate_mutants.py, bench/results/mutants-new-profiles-*.json), so it stays in the gate's set
HIDDEN_HERE = pytest.mark.xfail(strict=True, reason="the gate's calm walks find it (seed 6 on 2.4.1); these 90 do not")
HIDDEN = {("store-callback-ignores-generation", "2.4.1")}
#: the answer mutants (impl/mutants/answer_bugs.py) change only an answer field at a seam random walks seldom reach
#: (a static restart in a Stable group, a v9 follower); tests/test_output_rules.py drives a session to each seam and
#: shows the mutant's answer rejected there while the reference's passes — their differential witness
ANSWER_MUTANTS = "impl.mutants.answer_bugs"
#: mutants whose seam needs a deferred store overtaken by a second restart of the same instance, which these walks do
#: not reach; their differential witness replays a recorded finding on the mutant (the test named)
WITNESSED_ELSEWHERE = {"re-keyed-store-answers-with-the-current-id":
                       "tests/test_finding_static_rekeyed.py::test_the_mutant_answers_the_re_keyed_restart_otherwise"}
CASES = [pytest.param(m.name, p, marks=([pytest.mark.slow] if p in NEW_PROFILES else [])
                      + ([HIDDEN_HERE] if (m.name, p) in HIDDEN else []))
         for m in MUTANTS if m.cls.__module__ != ANSWER_MUTANTS and m.name not in WITNESSED_ELSEWHERE
         for p in m.profiles if p in RUNNABLE]
#: (the 4.1 runtime's mutants, impl/mutants/runtime_bugs.py, run on 4.1 walks: tests/test_runtime_4x.py)


def test_at_least_fifteen_mutants_with_documentation() -> None:
    assert len(MUTANTS) >= 15
    for m in MUTANTS:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", m.name), m.name
        assert m.mistake.strip() and m.catches and m.profiles
        assert issubclass(m.cls, (GroupCoordinator, JavaGroupCoordinator))
        assert m.cls not in (GroupCoordinator, JavaGroupCoordinator)


def test_lookup_and_unknown_names() -> None:
    assert coordinator_class(None) is GroupCoordinator
    assert coordinator_class(MUTANTS[0].name) is MUTANTS[0].cls
    with pytest.raises(UnknownMutantError, match="unknown mutant 'nope'"):
        get_mutant("nope")


#: a static-membership mutant (impl/mutants/static_bugs.py) changes a seam only static members reach
STATIC_CLIENTS = ("static", "static-adversarial", "static")


def clients_for(name: str) -> tuple[str, ...]:
    static = get_mutant(name).cls.__module__ == "impl.mutants.static_bugs"
    return STATIC_CLIENTS if static else ("java", "java", "adversarial")


def digests(profile: str, mutant: str | None, scope: Scope, seed: int, steps: int = 250,
            clients: tuple[str, ...] = ("java", "java", "adversarial")) -> list[str]:
    world = World(profile, scope, clients=clients, seed=seed, record=True, mutant=mutant)
    rng = random.Random(seed)
    for _ in range(steps):
        choices = world.enabled()
        if not choices:
            break
        world.step(choices[rng.randrange(len(choices))])
    return [s.digest for s in world.steps]


@pytest.mark.parametrize("name,profile", CASES)
def test_each_mutant_changes_behaviour_somewhere(name: str, profile: str) -> None:
    """Differential check: on some seeded walk the mutant's world diverges from the reference."""
    for scenario in SCENARIOS:   # the seed scenarios first: they reach the orderings the seeds describe
        if profile in scenario.profiles and scenario_digests(scenario, profile, name) != scenario_digests(
                scenario, profile, None):
            return
    clients = clients_for(name)
    for seed in range(30):
        for scope in SCOPES:
            if digests(profile, name, scope, seed, clients=clients) != digests(profile, None, scope, seed,
                                                                               clients=clients):
                return
    pytest.fail(f"mutant {name} behaved like the reference in every scenario and on 90 seeded walks of {profile}")


def scenario_digests(scenario: Scenario, profile: str, mutant: str | None) -> list[str]:
    world = World(profile, scenario.scope, clients=scenario.clients, seed=0, record=True, mutant=mutant)
    driver = Driver(world)
    try:
        for instr in scenario.script:
            driver.run(instr)
    except ScenarioError:
        pass   # the mutant took the world somewhere the script no longer fits: that is a divergence too
    return [s.digest for s in world.steps]


def test_a_mutant_trace_replays_on_the_mutant() -> None:
    world = World("3.9", RICH, clients=3, seed=3, record=True, mutant="rebalance-timeout-min")
    rng = random.Random(3)
    for _ in range(120):
        world.step(world.enabled()[rng.randrange(len(world.enabled()))])
    trace = world.trace("m")
    assert trace.mutant == "rebalance-timeout-min"
    replay(trace)   # re-executes on the mutant, identically

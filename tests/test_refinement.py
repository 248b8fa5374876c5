"""Refinement: every world step maps to an edge of the abstract model or to a stutter (DESIGN.md §6)."""
from __future__ import annotations

import importlib
import random

import pytest

import model.rules
from harness.abstraction import abstract
from harness.refinement import NonRefiningStep, RefinementChecker
from harness.scope import Scope
from harness.world import World
from model.state import COMPLETING, MEMBER, STABLE

SCOPES = {
    "default": Scope(),
    "faults-deferred-crashes": Scope(append_mode="deferred", faults=True, commits=True, crashes=True,
                                     advance_ms=(1000, 5000)),
    "no-initial-delay": Scope(append_mode="deferred", faults=True, commits=True,
                              group_initial_rebalance_delay_ms=0, advance_ms=(1000, 7000)),
    "busy": Scope(leaves=False, commits=True, advance_ms=(3000,)),
}
CLIENTS = {"java": 3, "mixed": ("java", "java", "adversarial")}


def walk(profile: str, scope: Scope, clients: object, seed: int, steps: int) -> RefinementChecker:
    world = World(profile, scope, clients=clients, seed=seed, record=True)   # type: ignore[arg-type]
    checker = RefinementChecker(world)
    rng = random.Random(seed)
    for _ in range(steps):
        choices = world.enabled()
        if not choices:
            break
        checker.step(choices[rng.randrange(len(choices))])
    return checker


@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
@pytest.mark.parametrize("scope_name", sorted(SCOPES))
@pytest.mark.parametrize("clients", sorted(CLIENTS))
def test_long_random_walks_refine_the_model(profile: str, scope_name: str, clients: str) -> None:
    moved = 0
    for seed in range(3):
        checker = walk(profile, SCOPES[scope_name], CLIENTS[clients], seed, 1500)
        moved += len(checker.coverage.edges)
    assert moved > 0   # the walks really moved the abstract state, not only stuttered


def test_abstraction_of_a_stable_group() -> None:
    world = World("3.9", Scope(group_initial_rebalance_delay_ms=0), clients=2, seed=0)
    from harness.scenarios import Driver
    d = Driver(world)
    for instr in (("member_id", 0), ("call", 0, "JoinGroup"), ("call", 0, "SyncGroup")):
        d.run(instr)   # type: ignore[arg-type]
    state = abstract(world.coord, "g", 3)
    assert state.group == STABLE and len(state.slots) == 3
    leader = state.slots[state.leader]
    assert leader.status == MEMBER and leader.watch == 1 and not leader.awaiting_sync


def test_a_planted_model_error_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose delayed join never completes early cannot explain the coordinator's join."""
    monkeypatch.setattr(model.rules, "_all_joined", lambda p, w: False)
    with pytest.raises(NonRefiningStep) as exc:
        for seed in range(20):
            walk("0.10.0", SCOPES["default"], 3, seed, 300)
    message = str(exc.value)
    # every request is labelled now (issue 27), so the step is judged as the action it is and the message names it
    assert "is JoinGroup/" in message and "the coordinator reached" in message and "the model allows" in message
    assert message.endswith("(profile 0.10.0)")
    assert exc.value.trace.steps   # the counterexample comes with its trace


def test_a_planted_sync_rule_error_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model in which the leader's SyncGroup never appends cannot explain a group becoming Stable."""
    step_module = importlib.import_module("model.step")   # `model.step` the attribute is the function
    monkeypatch.setattr(step_module, "_append", lambda p, w: [w])
    with pytest.raises(NonRefiningStep) as exc:
        for seed in range(20):
            walk("3.9", SCOPES["no-initial-delay"], 3, seed, 300)
    assert exc.value.before.group == COMPLETING


def test_coverage_is_reported() -> None:
    checker = walk("3.9", SCOPES["faults-deferred-crashes"], 3, 1, 400)
    cov = checker.coverage
    assert cov.steps == 400 or cov.steps > 0
    assert len(cov.states) > 5 and len(cov.edges) > 5 and cov.stutters > 0

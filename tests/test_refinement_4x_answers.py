"""The answers half of the 4.1 refinement (harness/answers_4x.py): the reference's seeded walks answer as the model
says on every step (non-vacuous: every API's answers and failed writes' answers are judged), a hand-built step with a
wrong answer is flagged with the model's answer in the message, a held answer released other than judged is flagged
(R3), and the seeded mutant sync-checks-generation-before-member is killed by the answer check alone — the catalog,
the runtime rules and the state half of the refinement pass its walk."""
from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

from core.actions import Action
from core.responses import Response
from harness.refinement_4x import StateRefinement4x, reason
from harness.world import World
from impl.mutants import get_mutant
from kgc.gate import walk_configs
from kgc.runs import REFINES, CheckedRun
from properties.runtime_4x import checked_walk

CONFIGS = walk_configs("4.1")
MUTANT = "sync-checks-generation-before-member"


def _walk(refinement: StateRefinement4x, seed: int, steps: int) -> None:
    world, rng = refinement.world, random.Random(seed)
    for _ in range(steps):
        enabled = world.enabled()
        if not enabled:
            return
        action = enabled[rng.randrange(len(enabled))]
        judged = refinement.step(action)
        why = reason(judged, action, len(world.steps) - 1, "4.1")
        assert why is None, why


def test_the_reference_answers_as_the_model_says_on_every_walk_step() -> None:
    judged: Counter[str] = Counter()
    for _, scope, clients in CONFIGS:
        for seed in (0, 1):
            refinement = StateRefinement4x(World("4.1", scope, clients=clients, seed=seed, record=True))
            _walk(refinement, seed, 300)
            assert refinement.answers is not None
            judged.update(refinement.answers.judged)
    # every API's answers are compared, and the answers of failed writes (R2: failed flushes, write timeouts)
    assert {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"} <= set(judged), judged
    assert any(k.endswith("/failed-write") for k in judged), judged
    assert sum(judged.values()) > 2000, judged


def _world_at_sync() -> tuple[World, StateRefinement4x, Action]:
    """A calm 4.1 world stepped (seed 0, uniform picks) up to the delivery of a SyncGroup from a member of a
    CompletingRebalance group, with the refinement that judged it so far."""
    _, scope, clients = CONFIGS[0]
    world = World("4.1", scope, clients=clients, seed=0, record=True)
    refinement = StateRefinement4x(world)
    rng = random.Random(0)
    for _ in range(400):
        enabled = world.enabled()
        action = enabled[rng.randrange(len(enabled))]
        req = world.net.requests.get((action.client, action.arg)) if action.kind == "DeliverRequest" else None
        group = world.coord.describe(world.group_id)
        if (req is not None and req.api == "SyncGroup" and group is not None
                and group.state.value == "CompletingRebalance" and req.member_id in group.members
                and req.member_id != group.leader_id and req.generation_id == group.generation_id):
            return world, refinement, action
        assert reason(refinement.step(action), action, len(world.steps) - 1, "4.1") is None
    pytest.fail("the calm walk delivered no follower's SyncGroup")


def test_a_step_with_a_wrong_answer_is_flagged() -> None:
    world, refinement, action = _world_at_sync()
    taken = refinement.before_step(action)
    world.step(action)
    # the follower's SyncGroup is parked (no answer): an answer REBALANCE_IN_PROGRESS slipped in is no model outcome
    assert not [r for r in world.answered if r.api == "SyncGroup"]
    world.answered.append(Response("SyncGroup", action.client, int(action.arg), "REBALANCE_IN_PROGRESS"))
    why = reason(refinement.after_step(action, taken), action, len(world.steps) - 1, "4.1")
    assert why is not None and "SyncGroup" in why and "REBALANCE_IN_PROGRESS" in why, why
    assert "no model outcome" in why and "SyncGroup(" in why


def test_the_same_step_with_its_own_answers_is_not_flagged() -> None:
    world, refinement, action = _world_at_sync()
    assert reason(refinement.step(action), action, len(world.steps) - 1, "4.1") is None


def test_a_join_answer_with_a_wrong_leader_is_flagged() -> None:
    """A JoinGroup answer whose API, error and generation are the model's but whose leader id is not."""
    _, scope, clients = CONFIGS[0]
    world = World("4.1", scope, clients=clients, seed=0, record=True)
    refinement = StateRefinement4x(world)
    rng = random.Random(0)
    for _ in range(400):
        enabled = world.enabled()
        action = enabled[rng.randrange(len(enabled))]
        taken = refinement.before_step(action)
        world.step(action)
        joins = [r for r in world.answered if r.api == "JoinGroup" and r.error == "NONE" and r.leader_id]
        if joins:
            k = world.answered.index(joins[0])
            world.answered[k] = dataclasses.replace(joins[0], leader_id="nobody")
            why = reason(refinement.after_step(action, taken), action, len(world.steps) - 1, "4.1")
            assert why is not None and "leader=nobody" in why and "rule join-leader-id" in why, why
            return
        assert reason(refinement.after_step(action, taken), action, len(world.steps) - 1, "4.1") is None
    pytest.fail("the calm walk completed no join")


def test_a_held_answer_released_other_than_judged_is_flagged() -> None:
    """R3: a Heartbeat's answer is judged when its operation decides it; the commit must release that answer."""
    _, scope, clients = CONFIGS[0]
    world = World("4.1", scope, clients=clients, seed=0, record=True)
    refinement = StateRefinement4x(world)
    rng = random.Random(0)
    for _ in range(600):
        enabled = world.enabled()
        action = enabled[rng.randrange(len(enabled))]
        taken = refinement.before_step(action)
        world.step(action)
        held = refinement.answers.held if refinement.answers is not None else {}
        released = [r for r in world.answered if r.key in held and r.api == "Heartbeat"]
        if released and action.kind == "CommitBatch":
            k = world.answered.index(released[0])
            wrong = "REBALANCE_IN_PROGRESS" if released[0].error == "NONE" else "NONE"
            world.answered[k] = dataclasses.replace(released[0], error=wrong)
            why = reason(refinement.after_step(action, taken), action, len(world.steps) - 1, "4.1")
            assert why is not None and "(R3)" in why and "had decided" in why, why
            return
        assert reason(refinement.after_step(action, taken), action, len(world.steps) - 1, "4.1") is None
    pytest.fail("the calm walk released no held Heartbeat answer at a commit")


def test_the_sync_mutant_is_killed_by_the_answer_check_alone() -> None:
    assert get_mutant(MUTANT).catches == (REFINES,) and get_mutant(MUTANT).profiles == ("4.1",)
    _, scope, clients = CONFIGS[0]
    for seed in range(10):
        run = CheckedRun(World("4.1", scope, clients=clients, seed=seed, record=True, mutant=MUTANT))
        rng, picks = random.Random(seed), []
        for _ in range(300):
            enabled = run.world.enabled()
            if not enabled or run.over:
                break
            picks.append(enabled[rng.randrange(len(enabled))])
            found = run.step(picks[-1])
            if not found:
                continue
            # killed by the refinement's answers: the catalog and the runtime rules see nothing on that walk
            assert [v.property for v in found] == [REFINES], found
            assert "ILLEGAL_GENERATION" in found[0].message and "UNKNOWN_MEMBER_ID" in found[0].message, found
            again = World("4.1", scope, clients=clients, seed=seed, mutant=MUTANT)
            assert checked_walk(again, len(picks), _replayer(picks)) == []
            # the state half of the refinement passes it too: only the answers differ
            states = StateRefinement4x(World("4.1", scope, clients=clients, seed=seed, mutant=MUTANT), answers=False)
            for action in picks:
                assert states.step(action).path is not None
            return
    pytest.fail(f"mutant {MUTANT} was not killed in 10 walks")


def _replayer(picks: list[Action]):   # type: ignore[no-untyped-def]
    it = iter(picks)
    return lambda _enabled: next(it)

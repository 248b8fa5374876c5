"""Labelled, output-checking refinement (harness/labels.py, model/outputs.py; issue 10 item 1).

Each class of wrong answer is planted in the reference and must be caught by refinement alone — no
catalog property runs here: a wrong error code, a wrong generation, a wrong member-list shape, an
answer where the request must be parked, and a timer armed with a delay of the wrong source. The
same walks on the unpatched reference are clean, so the catch is the plant's.
"""
from __future__ import annotations

import dataclasses
import random
import types
from typing import Any, Callable

import pytest

from core.types import Errors, GroupState
from harness.labels import capture, label, mismatch
from harness.refinement import NonRefiningStep, RefinementChecker
from harness.scope import Scope
from harness.world import World
from impl.results import SyncGroupResult
from model.outputs import Answer, Outputs
from model.state import AbstractAction, Scope as ModelScope, initial
from model.step import outcomes

SCOPE = Scope(append_mode="deferred", commits=True, faults=True, advance_ms=(1000, 5000))
CALM = Scope(append_mode="deferred", leaves=False)
#: session and rebalance timeouts that differ, so a delay names its source
TIMED = dataclasses.replace(CALM, session_timeout_ms=(10000, 10000, 10000), rebalance_timeout_ms=(25000, 25000, 25000))
CLIENTS = ("java", "java", "adversarial")


def walk(world: World, seed: int, steps: int = 400) -> str | None:
    """Random walk under refinement alone; the NonRefiningStep message, or None when every step refined."""
    checker = RefinementChecker(world)
    rng = random.Random(seed)
    try:
        for _ in range(steps):
            choices = world.enabled()
            if not choices:
                break
            checker.step(choices[rng.randrange(len(choices))])
    except NonRefiningStep as exc:
        return str(exc)
    return None


def first_catch(profile: str, plant: Callable[[World], None], scope: Scope = SCOPE, seeds: int = 12) -> str:
    for seed in range(seeds):
        world = World(profile, scope, clients=CLIENTS, seed=seed, record=True)
        plant(world)
        found = walk(world, seed)
        if found is not None:
            return found
    raise AssertionError(f"the planted bug passed {seeds} refinement walks on {profile}")


def set_profile(world: World, **changes: Any) -> None:
    world.coord.profile = dataclasses.replace(world.coord.profile, **changes)


# -- the plants -------------------------------------------------------------------------------------
def heartbeat_rip_in_completing(world: World) -> None:
    """Error code: 3.9 answers a Heartbeat in CompletingRebalance as ≤2.6.0 did (RIP, no reset)."""
    answers = dict(world.coord.profile.heartbeat_answers)
    answers[GroupState.COMPLETING_REBALANCE] = (Errors.REBALANCE_IN_PROGRESS, False)
    set_profile(world, heartbeat_answers=answers)


def join_error_generation_zero(world: World) -> None:
    """Generation: join errors carry generation 0 (as before 2.2) instead of -1."""
    set_profile(world, join_error_generation=0)


def member_list_for_everyone(world: World) -> None:
    """Member-list shape: every member's JoinGroup answer carries the member list, not only the leader's."""
    original = world.coord._join_result

    def join_result(self: Any, group: Any, member: Any, with_members: bool) -> Any:
        return original(group, member, True)
    world.coord._join_result = types.MethodType(join_result, world.coord)   # type: ignore[method-assign]


def follower_sync_answered_at_once(world: World) -> None:
    """Answer vs park: a follower's SyncGroup in CompletingRebalance is answered REBALANCE_IN_PROGRESS."""
    original = world.coord._park_sync

    def park_sync(self: Any, group: Any, member: Any, generation_id: int, assignments: Any, future: Any) -> None:
        if not group.is_leader(member.member_id):
            future.complete(SyncGroupResult(Errors.REBALANCE_IN_PROGRESS))
            return
        original(group, member, generation_id, assignments, future)
    world.coord._park_sync = types.MethodType(park_sync, world.coord)   # type: ignore[method-assign]


def heartbeat_with_rebalance_timeout(world: World) -> None:
    """Delay source: liveness ops armed with the member's rebalance timeout instead of its session timeout."""
    original = world.coord.complete_and_schedule_next_expiration

    def schedule(self: Any, group: Any, member: Any, timeout_ms: int | None = None) -> None:
        original(group, member, member.rebalance_timeout_ms if timeout_ms is None else timeout_ms)
    world.coord.complete_and_schedule_next_expiration = types.MethodType(   # type: ignore[method-assign]
        schedule, world.coord)


PLANTS = {
    "error-code": (heartbeat_rip_in_completing, ("3.9",), CALM, "Heartbeat"),
    "generation": (join_error_generation_zero, ("3.9",), SCOPE, "gen=0"),
    "member-list-shape": (member_list_for_everyone, ("0.10.0", "3.9"), CALM, "rule join-member-list"),
    "answer-vs-park": (follower_sync_answered_at_once, ("0.10.0", "3.9"), CALM, "SyncGroup"),
    # (0.10.0's JoinGroup v0 has no rebalance timeout: the two are equal there, nothing to tell apart)
    "delay-source": (heartbeat_with_rebalance_timeout, ("3.9",), TIMED, "delay=25000"),
}


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_each_class_of_wrong_answer_is_caught_by_refinement_alone(name: str) -> None:
    plant, profiles, scope, evidence = PLANTS[name]
    for profile in profiles:
        message = first_catch(profile, plant, scope)
        assert evidence in message, message


@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
@pytest.mark.parametrize("scope", [SCOPE, CALM, TIMED], ids=["faults", "calm", "timed"])
def test_the_unpatched_reference_refines_with_outputs(profile: str, scope: Scope) -> None:
    for seed in range(6):
        assert walk(World(profile, scope, clients=CLIENTS, seed=seed, record=True), seed) is None


def test_a_step_is_labelled_with_the_one_action_it_is() -> None:
    world = World("3.9", SCOPE, clients=CLIENTS, seed=0, record=True)
    first = next(a for a in world.enabled() if a.kind == "JoinGroup")
    world.step(first)
    deliver = next(a for a in world.enabled() if a.kind == "DeliverRequest")
    before = capture(world, deliver)
    world.step(deliver)
    act, why = mismatch(world, before, deliver)
    assert why is None
    # a Java client of 3.9 sends JoinGroup v4+: the first join is the pending-id handshake (KIP-394)
    assert act == AbstractAction("JoinGroup/new-pending", 0)


def test_the_model_gives_outputs_from_spec() -> None:
    """A few cells of SPEC.md §3.8–§3.9 read straight off the model."""
    scope = ModelScope(members=2)
    s0 = initial(scope)
    (state, out), = outcomes(s0, AbstractAction("JoinGroup/new-pending", 0), "3.9", scope)
    assert out.answers == (Answer(0, "JoinGroup", "MEMBER_ID_REQUIRED", "none", "error+id"),)
    assert [str(a) for a in out.arms] == ["pending(0) <- session"]
    (_, out), = outcomes(state, AbstractAction("Heartbeat", 0, "loading"), "3.9", scope)
    assert out == Outputs((Answer(0, "Heartbeat", "NONE"),))          # §3.0: loading → NONE for Heartbeat
    (_, out), = outcomes(state, AbstractAction("Heartbeat", 0, "loading"), "0.10.0", scope)
    assert out.answers[0].error == "NOT_COORDINATOR"                  # ≤1.x: not coordinator first
    (_, out), = outcomes(state, AbstractAction("SyncGroup", 0), "3.9", scope)
    assert out.answers[0].error == "UNKNOWN_MEMBER_ID"                # a pending id is not a member


def test_label_of_a_client_side_action_is_none() -> None:
    world = World("3.9", SCOPE, clients=CLIENTS, seed=0, record=True)
    send = next(a for a in world.enabled() if a.kind == "JoinGroup")
    before = capture(world, send)
    world.step(send)
    assert label(world, before, send, before.state) is None
    assert mismatch(world, before, send) == (None, None)

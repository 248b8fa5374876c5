"""OffsetCommit answers are judged in every group state (issue 27 item 4): the model answers a member's commit in
PreparingRebalance, CompletingRebalance and Stable (SPEC.md §3.5, §3.9), a generation −1 commit to an absent or
Empty group (the "simple" consumer), and an unknown member's; a commit the coordinator answers otherwise in any of
those states is a step refinement rejects — a stutter in Stable included (its answer is compared like any other)."""
from __future__ import annotations

import dataclasses
import types
from typing import Any

import pytest

from core.types import Errors, GroupState
from harness.scope import Scope
from harness.world import World
from tests.test_refinement_outputs import CLIENTS, first_catch

COMMITS = Scope(append_mode="deferred", commits=True, advance_ms=(1000, 4000))
STATES = {"Stable": GroupState.STABLE, "PreparingRebalance": GroupState.PREPARING_REBALANCE,
          "CompletingRebalance": GroupState.COMPLETING_REBALANCE}


def _wrong_answer_in(state: GroupState) -> Any:
    def plant(world: World) -> None:
        original = world.coord._do_commit

        def do_commit(self: Any, group: Any, *args: Any, **kw: Any) -> Any:
            error = original(group, *args, **kw)
            return Errors.UNKNOWN_SERVER_ERROR if group.is_(state) else error
        world.coord._do_commit = types.MethodType(do_commit, world.coord)   # type: ignore[method-assign]
    return plant


@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
@pytest.mark.parametrize("state", sorted(STATES))
def test_a_wrong_commit_answer_in_each_state_is_caught(profile: str, state: str) -> None:
    message = first_catch(profile, _wrong_answer_in(STATES[state]), COMMITS, seeds=20)
    assert "OffsetCommit" in message and "UNKNOWN_SERVER_ERROR" in message, message


def test_a_wrong_simple_commit_answer_is_caught() -> None:
    """A generation −1 commit from a non-member to an absent group creates it Empty and is answered NONE (§3.5)."""
    def plant(world: World) -> None:
        original = world.coord.commit_offsets

        def commit(self: Any, group_id: str, member_id: str, generation_id: int, *args: Any, **kw: Any) -> Any:
            absent = group_id not in self.groups
            future = original(group_id, member_id, generation_id, *args, **kw)
            if absent and generation_id < 0:
                future.result = dataclasses.replace(future.result, error=Errors.ILLEGAL_GENERATION)
                self._outbox[-1] = (future.key, future.api, future.result)
            return future
        world.coord.commit_offsets = types.MethodType(commit, world.coord)   # type: ignore[method-assign]
    message = first_catch("3.9", plant, COMMITS, seeds=20)
    assert "OffsetCommit" in message, message


def test_commits_in_every_state_refine_on_the_reference() -> None:
    from tests.test_refinement_outputs import walk
    for seed in range(4):
        assert walk(World("3.9", COMMITS, clients=CLIENTS, seed=seed, record=True), seed) is None

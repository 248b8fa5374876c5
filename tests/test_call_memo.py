"""harness/calls.py: a World with a call memo steps exactly like one without — also when it steps on from a
memoised call without a restore (it takes a private copy of the kept coordinator first), and on every scope option."""
from __future__ import annotations

import random

import pytest

from harness.scope import Scope
from harness.world import World

ALL_OPTIONS = Scope(append_mode="deferred", faults=True, crashes=True, unload=True, commits=True,
                    advance_ms=(1000, 7000))


def _worlds(profile: str, mutant: str | None) -> tuple[World, World]:
    memo = World(profile, ALL_OPTIONS, clients=("java", "java", "adversarial"), mutant=mutant)
    plain = World(profile, ALL_OPTIONS, clients=("java", "java", "adversarial"), mutant=mutant)
    memo.reuse_coordinator = True      # as explorers run it: the memo keys calls by the state restored from
    memo.step_digests = plain.step_digests = False
    memo.call_memo = {}
    return memo, plain


@pytest.mark.parametrize("profile,mutant", [("3.9", None), ("0.10.0", None), ("3.9", "leader-not-reelected")])
def test_a_world_with_a_call_memo_steps_like_one_without(profile: str, mutant: str | None) -> None:
    rng = random.Random(11)
    hits = walks_on = 0
    for _walk in range(6):
        memo, plain = _worlds(profile, mutant)
        made: set[int] = set()                  # the Calls this memo handed out (a hit hands one out again)
        for _ in range(80):
            here = memo.snapshot()
            assert here == plain.snapshot()
            choices = memo.enabled()
            assert choices == plain.enabled()
            if not choices:
                break
            for action in choices[:3]:          # the same calls from the same state: the second time they are hits
                memo.restore(here)
                plain.restore(here)
                try:
                    plain.step(action)
                except Exception:               # noqa: BLE001 — a mutant may throw; so must the memo world
                    with pytest.raises(Exception):  # noqa: B017
                        memo.step(action)
                    continue
                memo.step(action)
                if memo.last_call is not None:
                    hits += id(memo.last_call) in made
                    made.add(id(memo.last_call))
                assert memo.steps[-1] == plain.steps[-1], action
                assert memo.snapshot() == plain.snapshot(), action
                assert (memo.coord.errors, memo.coord.transitions) == (plain.coord.errors, plain.coord.transitions)
            memo.restore(here)
            plain.restore(here)
            # two steps without a restore between them: the second one steps on from a kept coordinator
            for _ in range(2):
                options = memo.enabled()
                if not options:
                    break
                action = options[rng.randrange(len(options))]
                try:
                    plain.step(action)
                except Exception:               # noqa: BLE001
                    memo, plain = _worlds(profile, mutant)
                    break
                walks_on += memo._kept is not None
                memo.step(action)
                assert memo.steps[-1] == plain.steps[-1], action
                assert memo.snapshot() == plain.snapshot(), action
    assert hits > 20 and walks_on > 5

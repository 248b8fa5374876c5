"""harness/calls.py: a World with a call memo steps exactly like one without — also when it steps on from a
memoised call without a restore (it takes a private copy of the kept coordinator first), on every scope option, and
with a bounded memo (``Recent``) that keeps forgetting; ``Recent`` itself."""
from __future__ import annotations

import random

import pytest

from harness.calls import Recent
from harness.scope import Scope
from harness.world import World

ALL_OPTIONS = Scope(append_mode="deferred", faults=True, crashes=True, unload=True, commits=True,
                    advance_ms=(1000, 7000))


def _worlds(profile: str, mutant: str | None, bounded: bool = False) -> tuple[World, World]:
    memo = World(profile, ALL_OPTIONS, clients=("java", "java", "adversarial"), mutant=mutant)
    plain = World(profile, ALL_OPTIONS, clients=("java", "java", "adversarial"), mutant=mutant)
    memo.reuse_coordinator = True      # as explorers run it: the memo keys calls by the state restored from
    memo.step_digests = plain.step_digests = False
    memo.call_memo = Recent(3) if bounded else {}      # Recent(3): forgets most states while stepping
    return memo, plain


@pytest.mark.parametrize("profile,mutant,bounded", [("3.9", None, False), ("0.10.0", None, False),
                                                     ("3.9", "leader-not-reelected", False), ("3.9", None, True)])
def test_a_world_with_a_call_memo_steps_like_one_without(profile: str, mutant: str | None, bounded: bool) -> None:
    rng = random.Random(11)
    hits = walks_on = 0
    for _walk in range(6):
        memo, plain = _worlds(profile, mutant, bounded)
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
                    memo, plain = _worlds(profile, mutant, bounded)
                    break
                walks_on += memo._kept is not None
                memo.step(action)
                assert memo.steps[-1] == plain.steps[-1], action
                assert memo.snapshot() == plain.snapshot(), action
    assert hits > 20 and walks_on > 5


def test_recent_forgets_the_generation_not_read_since_the_last_turn_over() -> None:
    cache: Recent[int, str] = Recent(2)
    cache[1], cache[2] = "a", "b"
    cache[3] = "c"                       # young {1, 2} turns old; young {3}
    assert cache.get(1) == "a"           # read again: back into the young generation
    cache[4] = "d"                       # young {3, 1} turns old; 2 (not read since) is dropped
    assert cache.get(2) is None and (cache.get(3), cache.get(1), cache.get(4)) == ("c", "a", "d")
    assert len(cache) <= 2 * cache.size

"""The explorer's reuse is exact: verdicts on steps that do not call the coordinator (``Expander.reuse_quiet``,
properties/reads.py) and memoised coordinator calls with what is derived from them (``Expander.memo_calls``,
harness/calls.py, explore/verdicts.py). Exploring with each of them on and off gives the same states, edges,
levels, violations (names, counts, paths, messages, in order within each expansion), witnesses and coverage sets —
on several scopes, with faults and crashes, with POR, with mutants that are caught (by state, step and
checker-side properties, and by the coordinator raising) and with an adversarial client."""
from __future__ import annotations

from dataclasses import replace

import pytest

from explore.local import bfs, dfs
from explore.pct import pct
from explore.space import Expander, ExploreSpec
from tests.expansions import SPECS, compare_expansions, spec_id, summary

def _off(monkeypatch: pytest.MonkeyPatch, quiet: bool = True, calls: bool = True) -> None:
    monkeypatch.setattr(Expander, "reuse_quiet", not quiet)
    monkeypatch.setattr(Expander, "memo_calls", not calls)


@pytest.mark.parametrize("off", [(True, True), (True, False), (False, True)], ids=["both", "quiet", "calls"])
@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_every_expansion_is_the_same_without_reuse(spec: ExploreSpec, off: tuple[bool, bool],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fast = Expander(spec)
    _off(monkeypatch, *off)
    slow = Expander(spec)
    monkeypatch.undo()
    assert (fast.reuse_quiet, fast.memo_calls) == (True, True)
    assert (slow.reuse_quiet, slow.memo_calls) == (not off[0], not off[1])
    assert compare_expansions(fast, slow.expand, spec.depth, spec.por) > 100
    assert fast._states and fast.world.call_memo       # the reuse was taken on one side only
    assert bool(slow._states) != off[0] and bool(slow.world.call_memo) != off[1]


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_searches_give_the_same_result_without_reuse(spec: ExploreSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    with_reuse = (summary(bfs(spec)), summary(dfs(replace(spec, por=False))), pct(spec, runs=20, seed=3))
    _off(monkeypatch)
    without = (summary(bfs(spec)), summary(dfs(replace(spec, por=False))), pct(spec, runs=20, seed=3))
    assert with_reuse[0] == without[0]
    assert with_reuse[1] == without[1]
    assert summary(with_reuse[2]) == summary(without[2])
    if spec.mutant is not None:
        assert with_reuse[0]["violations"]          # the mutant is caught, with the same paths and messages


def test_the_mutants_here_are_caught_on_quiet_edges_too() -> None:
    """The verdicts reused are not only 'holds': a broken state invariant is reported again on the client steps
    out of a broken state (the same property, with a longer path each), so reuse is exercised on violations."""
    result = bfs(SPECS[1])
    assert result.violations["leader-is-a-member"].count > 1

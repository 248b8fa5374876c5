"""The explorer's reuse is exact: verdicts on steps that do not call the coordinator (``Expander.reuse_quiet``,
properties/reads.py) and memoised coordinator calls with what is derived from them (``Expander.memo_calls``,
harness/calls.py, explore/verdicts.py). Exploring with each of them on and off gives the same states, edges,
levels, violations (names, counts, paths, messages, in order within each expansion), witnesses and coverage sets —
on several scopes, with faults and crashes, with POR, with mutants that are caught (by state, step and
checker-side properties, and by the coordinator raising) and with an adversarial client."""
from __future__ import annotations

from dataclasses import asdict, replace

import pytest

from explore.local import bfs, dfs
from explore.pct import pct
from explore.scopes import get_scope
from explore.space import Expander, ExploreSpec
from tests.expansions import compare_expansions

SPECS = [
    ExploreSpec("3.9", 3, 8, get_scope("basic")),
    ExploreSpec("3.9", 2, 7, get_scope("faults"), mutant="leader-not-reelected"),
    ExploreSpec("0.10.0", 2, 8, get_scope("crashes"), mutant="fresh-heartbeat-completes-at-birth"),
    ExploreSpec("0.10.0", 2, 7, get_scope("unload"), por=True),
    ExploreSpec("0.10.0", 2, 7, get_scope("basic"), mutant="delayed-op-completes-twice"),
    ExploreSpec("0.10.0", 2, 7, get_scope("faults"), mutant="leader-not-reelected"),
    ExploreSpec("3.9", 2, 5, replace(get_scope("basic"), append_mode="deferred", timed=True),
                clients=("java", "adversarial")),
]


def _ids(s: ExploreSpec) -> str:
    return f"{s.profile}-{s.members}-{s.mutant}-{s.por}-{'-'.join(s.kinds)}"


def _summary(result) -> dict:  # type: ignore[no-untyped-def]
    out = {k: v for k, v in asdict(result).items() if k not in ("seconds", "level_seconds", "spec")}
    return out


def _off(monkeypatch: pytest.MonkeyPatch, quiet: bool = True, calls: bool = True) -> None:
    monkeypatch.setattr(Expander, "reuse_quiet", not quiet)
    monkeypatch.setattr(Expander, "memo_calls", not calls)


@pytest.mark.parametrize("off", [(True, True), (True, False), (False, True)], ids=["both", "quiet", "calls"])
@pytest.mark.parametrize("spec", SPECS, ids=_ids)
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


@pytest.mark.parametrize("spec", SPECS, ids=_ids)
def test_searches_give_the_same_result_without_reuse(spec: ExploreSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    with_reuse = (_summary(bfs(spec)), _summary(dfs(replace(spec, por=False))), pct(spec, runs=20, seed=3))
    _off(monkeypatch)
    without = (_summary(bfs(spec)), _summary(dfs(replace(spec, por=False))), pct(spec, runs=20, seed=3))
    assert with_reuse[0] == without[0]
    assert with_reuse[1] == without[1]
    assert _summary(with_reuse[2]) == _summary(without[2])
    if spec.mutant is not None:
        assert with_reuse[0]["violations"]          # the mutant is caught, with the same paths and messages


def test_the_mutants_here_are_caught_on_quiet_edges_too() -> None:
    """The verdicts reused are not only 'holds': a broken state invariant is reported again on the client steps
    out of a broken state (the same property, with a longer path each), so reuse is exercised on violations."""
    result = bfs(SPECS[1])
    assert result.violations["leader-is-a-member"].count > 1

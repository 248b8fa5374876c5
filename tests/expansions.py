"""Shared by the exactness tests of the explorer's shortcuts and its worker processes: the specs they explore, a
search's result without its timings, and a BFS frontier walked with two expanders that must expand every node
alike (tests/test_explore_reuse.py, tests/test_world_reuse.py, tests/test_explore_workers.py)."""
from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any, Callable

from explore.scopes import get_scope
from explore.space import ExploreSpec


def compare_expansions(fast: Any, expand_slow: Callable[[Any, Any], Any], depth: int, por: bool) -> int:
    """Expand every node to ``depth`` with ``fast.expand`` and ``expand_slow``; assert identical results;
    the number of edges compared."""
    frontier, seen, compared = [(fast.root, frozenset() if por else None)], {fast.root}, 0
    for _depth in range(depth):
        nxt = []
        for node, sleep in frontier:
            got, want = fast.expand(node, sleep), expand_slow(node, sleep)
            assert (got.children, got.violations, got.edges, got.pruned) == \
                   (want.children, want.violations, want.edges, want.pruned)
            assert (got.witnesses, got.abstract_states, got.abstract_edges) == \
                   (want.witnesses, want.abstract_states, want.abstract_edges)
            compared += got.edges
            for _i, _fp, child, child_sleep in got.children:
                if child not in seen:
                    seen.add(child)
                    nxt.append((child, child_sleep))
        frontier = nxt
    return compared


#: the specs the exactness tests explore: several scopes, faults and crashes, POR, mutants that are caught (by state,
#: step and checker-side properties, and by the coordinator raising) and an adversarial client
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


def spec_id(s: ExploreSpec) -> str:
    return f"{s.profile}-{s.members}-{s.mutant}-{s.por}-{'-'.join(s.kinds)}"


def summary(result) -> dict:  # type: ignore[no-untyped-def]
    """Everything a search reports but its timings."""
    out = {k: v for k, v in asdict(result).items() if k not in ("seconds", "level_seconds", "spec")}
    return out

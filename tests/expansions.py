"""Shared by the exactness tests of the explorer's shortcuts: walk a BFS frontier with two expanders and
require the same expansion of every node (tests/test_explore_reuse.py, tests/test_world_reuse.py)."""
from __future__ import annotations

from typing import Any, Callable


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

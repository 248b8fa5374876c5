"""The timed graph (explore/deadlines.py) projected on what a run shows of it — its abstract state and its timing
(``harness.puppets.timing``) — with nodes numbered, and each node's distance to a set of targets: the map the sweep's
planning runs on (explore/plan.py). Built in the same walk as the coverage map's timed edges (explore/coverage.py).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from explore.deadlines import Timing
from model.state import State

Proj = tuple[State, Timing]      # what a run shows of a timed node: its abstract state (unpadded) and its timing
TICK = ""                        # the label of a clock move (a timed step with no abstract action)
EdgeKey = tuple[State, str, State]


@dataclass(frozen=True)
class TimedMap:
    """The timed graph of one scope projected on (state, timing), nodes numbered: each node's moves (an edge label —
    the coverage key's action, stutters included — or ``TICK``, and the node it leads to) in a fixed order, and the
    nodes each node is entered from; ``project`` takes what ``harness.puppets.timing`` reads of a run to the timing
    the map's nodes are written in (None: the same — 0.10; 2.4.1's map counts only the new members' op times,
    explore/new_member_timing.py)."""

    index: Mapping[Proj, int]
    succ: tuple[tuple[tuple[str, int], ...], ...]
    pred: tuple[tuple[int, ...], ...]
    project: Callable[[Timing], Timing] | None = None
    #: how often an uncovered edge is tried from runs in one timing it is taken from (by the sweep's tries or the
    #: planning's arrivals) before that (source, timing) stops being a planning target (explore/plan.py)
    spend: int = 1

    def distances(self, targets: Iterable[int]) -> list[int]:
        """Every node's number of moves to the nearest of ``targets`` (-1: it reaches none)."""
        dist = [-1] * len(self.succ)
        queue: deque[int] = deque()
        for t in sorted(set(targets)):
            dist[t] = 0
            queue.append(t)
        pred = self.pred
        while queue:
            node = queue.popleft()
            d = dist[node] + 1
            for before in pred[node]:
                if dist[before] < 0:
                    dist[before] = d
                    queue.append(before)
        return dist


class TimedMapBuilder:
    """Collects a timed walk's projected nodes and moves (explore/coverage.py ``_timed`` walks once for both)."""

    def __init__(self) -> None:
        self.index: dict[Proj, int] = {}
        self.projs: list[Proj] = []
        self.moves: list[dict[tuple[str, int], None]] = []

    def node(self, proj: Proj) -> int:
        got = self.index.get(proj)
        if got is None:
            got = self.index[proj] = len(self.projs)
            self.projs.append(proj)
            self.moves.append({})
        return got

    def move(self, here: int, label: str, there: int) -> None:
        if here != there:
            self.moves[here][(label, there)] = None

    def done(self, project: Callable[[Timing], Timing] | None = None, spend: int = 1) -> TimedMap:
        pred: list[dict[int, None]] = [{} for _ in self.projs]
        for here, moves in enumerate(self.moves):
            for _, there in moves:
                pred[there][here] = None
        return TimedMap(self.index, tuple(tuple(m) for m in self.moves), tuple(tuple(p) for p in pred), project,
                        spend)


def target_table(tmap: TimedMap, out: Mapping[State, list[EdgeKey]], timings: Mapping[EdgeKey, frozenset[Timing]]
                 ) -> list[tuple[EdgeKey, tuple[tuple[Timing, int], ...]]]:
    """Per edge of ``out`` that time decides, the nodes (its source in each timing it is taken from) it is taken
    from — looked up once, for ``targets``."""
    index = tmap.index
    table = []
    for edges in out.values():
        for edge in edges:
            nodes = tuple((t, index[(edge[0], t)]) for t in sorted(timings.get(edge, ())) if (edge[0], t) in index)
            if nodes:
                table.append((edge, nodes))
    return table


def targets(table: list[tuple[EdgeKey, tuple[tuple[Timing, int], ...]]], covered: set[EdgeKey],
            spent: Mapping[EdgeKey, Mapping[object, int]], limit: int) -> list[int]:
    """The nodes of every uncovered edge of ``table`` but those it was tried from in that timing ``limit`` times."""
    found: list[int] = []
    for edge, nodes in table:
        if edge in covered:
            continue
        tried = spent.get(edge)
        found.extend(node for t, node in nodes if not tried or tried.get(t, 0) < limit)
    return found


__all__ = ["EdgeKey", "Proj", "TICK", "TimedMap", "TimedMapBuilder", "target_table", "targets"]

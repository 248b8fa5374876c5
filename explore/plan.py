"""Timed planning for the map sweep: the way, in the timed graph, from a kept run's timing to one an uncovered edge is
taken from.

Where time decides edges (0.10: explore/deadlines.py) an edge is taken only from some *timings* of its source —
where each slot's heartbeat ops and the DelayedJoin stand (armed this millisecond, later, due). A kept run of the
source in another timing cannot take it, and re-timing the source in place (harness.puppets.retimings) cannot give a
timing that needs another history: a follower's op armed after the DelayedJoin came due, a removed member's ops not
yet due when the group moved on. The sweep plans on the timed graph *projected* on what a run shows — its abstract
state and its timing (``harness.puppets.timing``; explore/timedmap.py) — with each node's distance to the nearest
*target* (an uncovered edge's source in a timing it is taken from). This module is that planning: a best-first search
with concrete runs. A pool holds a few runs per node (the sweep's kept runs first); a unit takes the pooled run
nearest a target; at a target it tries the edges taken from there, elsewhere it realises moves toward one on forks —
an abstract action by ``harness.puppets.moves``, a clock move just past a deadline by ``harness.puppets.ticks`` — and
pools each fork that lands on a node still on the way. The timing counts a slot's ops to three (an expiry leaves the
slot MANY only from three), so a third op armed in the same millisecond is a move of the map like any other. Every
step is a try of the sweep's: checked, its edges counted.

The projection forgets which ops were armed before the DelayedJoin, so a node's distance is the least over the timed
nodes behind it, and a move the timed graph allows may be one a run cannot make (it forgets too whose deadline comes
first): planning only orders the tries, and every step is the world's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic

from explore.runs import R, parse_label
from explore.timedmap import TICK, EdgeKey, TimedMap, target_table, targets
from harness.puppets import moves, ticks, timing
from model.state import State

if TYPE_CHECKING:       # the sweep's own types (explore/sweep.py mixes Planning in)
    from explore.sweep import _Config

#: tries per expansion, candidates per move; units between new distances
STEP_TRIES = 12
STEP_CAP = 8
REPLAN = 64
#: runs pooled per timed node (ever), and forks landed nearer per expansion
POOL = 3
LANDINGS = 2
#: candidates tried per edge at a target
ARRIVE_CAP = 3


class PlanState(Generic[R]):
    """One configuration's planning: its timed map, the distances to the targets, the pool."""

    def __init__(self, tmap: TimedMap) -> None:
        self.tmap = tmap
        self.dist: list[int] = []                         # each node's distance to the targets
        self.since = -1                                   # units since the distances were computed (-1: never)
        self.fresh: list[tuple[State, Any]] = []          # (state, _Kept) kept since the planning last pooled them
        self.spent_at: dict[EdgeKey, dict[object, int]] = {}   # edge -> timing -> arrivals that tried it there
        self.table: list[tuple[EdgeKey, tuple[tuple[Any, int], ...]]] | None = None   # its targets (timedmap.py)
        self.planned = 0                                  # steps spent by the planning, a unit counted as one more
        self.pool: dict[int, list[R]] = {}                # timed node -> runs there not expanded yet
        self.pooled: dict[int, int] = {}                  # timed node -> runs ever pooled there

    def node(self, runs: Any, run: R) -> int:
        """The timed node a run is at (-1: none of the map's)."""
        return self.tmap.index.get((runs.state(run), self.seen(timing(runs.world(run)))), -1)

    def seen(self, sign: Any) -> Any:
        """A run's timing (``harness.puppets.timing``) as the map's nodes write it (explore/timedmap.py ``project``)."""
        return sign if self.tmap.project is None else self.tmap.project(sign)


class Planning(Generic[R]):
    """The sweep's planning (mixed into explore/sweep.py's ``_Sweep``): runs moved, best first, toward the timings
    uncovered edges are taken from, each step realised on a fork and checked like any try."""

    runs: Any
    covered: set[EdgeKey]
    cap: int
    result: Any

    def descend(self, config: "_Config[R]") -> bool:
        """One unit of a best-first search over the timed graph: the pooled run nearest to a target — at a target its
        edges tried, else its moves toward one realised on forks, each run landing on a node still on the way pooled.
        The pool starts with the kept runs. False when no pooled run is on the way to any target."""
        plan = config.plan
        assert plan is not None
        if plan.since < 0 or plan.since >= REPLAN:
            self.replan(config)
        best = self.nearest(config)
        if best is None:
            self.replan(config)
            best = self.nearest(config)
            if best is None:
                return False
        plan.since += 1
        node = best
        run = plan.pool[node].pop(0)
        if not plan.pool[node]:
            del plan.pool[node]
        if plan.dist[node] == 0:
            self.arrive(config, run, node)
        else:
            self.expand(config, run, node)
        return True

    def replan(self, config: "_Config[R]") -> None:
        """The distances to the targets anew (what is covered and tried changed), and the kept runs not pooled yet
        pooled."""
        plan = config.plan
        assert plan is not None
        tmap = plan.tmap
        table = plan.table if plan.table is not None else \
            target_table(tmap, config.out, config.timings)     # type: ignore[arg-type]
        plan.table = table = [(e, n) for e, n in table if e not in self.covered]
        spent: dict[EdgeKey, dict[object, int]] = {}
        for edge, _ in table:
            counts = dict(plan.spent_at.get(edge, {}))
            for number in config.attempts.get(edge, ()):
                sign = plan.seen(config.signs.get(number))
                counts[sign] = counts.get(sign, 0) + 1
            if counts:
                spent[edge] = counts
        plan.dist = tmap.distances(targets(table, self.covered, spent, tmap.spend))
        plan.since = 0
        fresh, plan.fresh = plan.fresh, []
        for state, k in fresh:
            self.pool(config, k.run, tmap.index.get((state, plan.seen(k.sign)), -1))

    def pool(self, config: "_Config[R]", run: R, node: int) -> bool:
        """Pool ``run`` for ``node`` unless ``POOL`` runs were pooled there already; whether it was."""
        plan = config.plan
        assert plan is not None
        if node < 0 or plan.pooled.get(node, 0) >= POOL:
            return False
        plan.pooled[node] = plan.pooled.get(node, 0) + 1
        plan.pool.setdefault(node, []).append(run)
        return True

    def nearest(self, config: "_Config[R]") -> int | None:
        plan = config.plan
        assert plan is not None
        dist = plan.dist
        found = [(dist[n], n) for n in plan.pool if dist[n] >= 0]
        return min(found)[1] if found else None

    def expand(self, config: "_Config[R]", run: R, node: int) -> None:
        """The moves of ``node`` toward a target, realised on forks of ``run`` (``STEP_TRIES`` tries at most, until
        ``LANDINGS`` forks landed nearer); every fork landing on a node on the way is pooled."""
        plan = config.plan
        assert plan is not None
        tmap, dist = plan.tmap, plan.dist
        d, tries, landed = dist[node], 0, 0
        world = self.runs.world(run)
        for label, there in tmap.succ[node]:
            if not 0 <= dist[there] < d:
                continue
            candidates = ticks(world) if label == TICK else moves(world, *parse_label(label))[:STEP_CAP]
            for sequence in candidates:
                if tries >= STEP_TRIES or landed >= LANDINGS:
                    return
                tries += 1
                twin, _, edges = self.fork_and_take(config, run, sequence, through=label == TICK)  # type: ignore
                if self.runs.failed(twin):
                    return
                if twin.over:
                    continue
                if edges:
                    self.keep(config, twin, edges[0] if len(edges) == 1 else None)     # type: ignore
                got = plan.node(self.runs, twin)
                if got >= 0 and 0 <= dist[got] and self.pool(config, twin, got):
                    if dist[got] < d:
                        landed += 1
                        break      # the next move: another way toward the targets

    def arrive(self, config: "_Config[R]", run: R, node: int) -> None:
        """A run in a timing uncovered edges of its state are taken from: kept, and each such edge tried from it."""
        plan = config.plan
        assert plan is not None
        state, sign = self.runs.state(run), plan.seen(timing(self.runs.world(run)))
        if not any(k.run is run for k in config.kept.get(state, ())):
            self.keep(config, run)       # type: ignore[attr-defined]
        for edge in config.out.get(state, ()):
            if edge in self.covered or sign not in config.timings.get(edge, ()):
                continue
            counts = plan.spent_at.setdefault(edge, {})
            counts[sign] = counts.get(sign, 0) + 1
            self.result.tried.add(edge)
            for sequence in moves(self.runs.world(run), *parse_label(edge[1]))[:ARRIVE_CAP]:
                if self.result.failed is not None or \
                        self.try_one(config, run, sequence, edge) is not None:     # type: ignore[attr-defined]
                    break
            if self.result.failed is not None:
                return


__all__ = ["PlanState", "Planning"]

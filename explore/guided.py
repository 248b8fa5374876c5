"""Model-guided search toward uncovered abstract edges: plan a path in the abstract graph, realise it step by step.

The abstract graph is the map. The search keeps, per (world configuration, abstract state), a few concrete
runs that reached it (forks: the world, its checker and its recorded steps). The configurations take turns;
each turn finds, by a shortest-path search over the configuration's own scope map (explore/coverage.py
``scope_edges``: an edge of another scope may need what this world's coordinator does not do) from every state
it kept at once, the nearest uncovered edge, and follows the path to it. Each abstract edge of the path is
*realised* from the current concrete run by the few concrete sequences that can take its action — a request of
the edge's API sent by some client and delivered, or one already in flight delivered; a timer fired, or the
clock moved and a timer that became due fired; an append completed; a partition move — each tried on a fork,
first as the run is and then after the responses on the wire are delivered (what a client learnt decides
what it sends), until the refinement check records exactly that edge. Every state reached on the way is
kept and every edge any try records is covered, so the frontier moves outward with every turn.

What the abstraction forgets (which heartbeat deadline comes first, what a client knows) can make a path edge
impossible from the kept run: it then costs ``FAIL_COST`` more in the configuration's next plans, a short
seeded walk from that run keeps other concrete situations behind nearby states, and an uncovered edge a
configuration tried ``MAX_TRIES`` times is given up by it. Deterministic for a seed (the maps are sorted,
ties broken in order, the walks seeded).

Runs go through the caller's checked runs (explore/directed.py ``Runs``), so a violation found here is
reported (and shrunk) like any other.
"""
from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from typing import Generic, Sequence

from core.actions import Action
from explore.coverage import EdgeKey
from explore.directed import _APIS, R, Runs, abstract_kind
from model.state import State

#: how often an uncovered edge is attempted before the search gives it up
MAX_TRIES = 3
#: concrete runs kept per (configuration, abstract state)
KEEP = 2
#: the extra cost of planning through an edge, per failed realisation of it
FAIL_COST = 3
#: the length of the seeded walk taken after a failed realisation (a different concrete situation)
SHAKE = 4
_TIME = ("FireTimer", "AdvanceToNextDeadline", "AdvanceClock")
_MOVES = ("AdvanceToNextDeadline", "AdvanceClock")
_ENVIRONMENT = {"ExpireHeartbeat": _TIME, "ExpireJoin": _TIME, "ExpireSync": _TIME,
                "CompleteAppend": ("CompleteAppend",), "UnloadGroup": ("UnloadGroup",), "LoadGroup": ("LoadGroup",)}


@dataclass
class GuidedResult(Generic[R]):
    steps: int = 0
    rounds: int = 0
    kept_states: int = 0
    edges: set[EdgeKey] = field(default_factory=set)
    states: set[State] = field(default_factory=set)
    failed: R | None = None
    tried: set[EdgeKey] = field(default_factory=set)      # the uncovered edges a plan went for


class _Search(Generic[R]):
    def __init__(self, runs: Runs[R], maps: Sequence[frozenset[EdgeKey]], covered: set[EdgeKey], seed: int) -> None:
        self.runs = runs
        self.rng = random.Random(seed)
        self.result: GuidedResult[R] = GuidedResult()
        self.covered = set(covered)
        self.out: list[dict[State, list[EdgeKey]]] = []
        for edges in maps:
            out: dict[State, list[EdgeKey]] = {}
            for edge in sorted(edges, key=_order):
                out.setdefault(edge[0], []).append(edge)
            self.out.append(out)
        self.pool: list[dict[State, list[R]]] = [{} for _ in maps]
        self.members: dict[EdgeKey, list[int]] = {}        # edge -> the configurations whose map has it
        for index, edges in enumerate(maps):
            for edge in edges:
                self.members.setdefault(edge, []).append(index)
        self.open = [len(edges - self.covered) for edges in maps]   # uncovered edges per configuration
        self.fails: dict[tuple[int, EdgeKey], int] = {}
        self.tries: dict[tuple[int, EdgeKey], int] = {}
        self.kept: set[State] = set()

    # --- the pool of concrete runs -------------------------------------------------------------------
    def keep(self, config: int, run: R) -> None:
        if run.over:
            return
        state = self.runs.state(run)
        self.result.states.add(state)
        self.kept.add(state)
        kept = self.pool[config].setdefault(state, [])
        if len(kept) < KEEP:
            kept.append(self.runs.fork(run))

    def credit(self, run: R) -> list[EdgeKey]:
        """The edges ``run`` recorded (since it was forked), in order; covered from now on."""
        edges = sorted(self.runs.edges(run), key=_order)
        self.result.edges.update(edges)
        for edge in edges:
            if edge not in self.covered:
                self.covered.add(edge)
                for config in self.members.get(edge, ()):
                    self.open[config] -= 1
        return edges

    # --- planning ---------------------------------------------------------------------------------------
    def plan(self, config: int) -> tuple[State, list[EdgeKey]] | None:
        """The cheapest path from a state ``config`` kept to an uncovered edge it has not given up (the edge last)."""
        out = self.out[config]
        dist: dict[State, int] = {}
        back: dict[State, EdgeKey | None] = {}
        heap: list[tuple[int, int, State]] = []
        counter = 0
        for state in self.pool[config]:
            dist[state], back[state] = 0, None
            heap.append((0, counter, state))
            counter += 1
        heapq.heapify(heap)
        best: tuple[int, int, EdgeKey] | None = None
        while heap:
            d, _, state = heapq.heappop(heap)
            if d > dist[state]:
                continue
            if best is not None and d >= best[0]:
                break
            for edge in out.get(state, ()):
                cost = d + 1 + FAIL_COST * self.fails.get((config, edge), 0)
                if edge not in self.covered and self.tries.get((config, edge), 0) < MAX_TRIES:
                    if best is None or cost < best[0]:
                        best = (cost, counter, edge)
                        counter += 1
                    continue
                target = edge[2]
                if cost < dist.get(target, 1 << 30):
                    dist[target], back[target] = cost, edge
                    heapq.heappush(heap, (cost, counter, target))
                    counter += 1
        if best is None:
            return None
        path = [best[2]]
        state = best[2][0]
        step = back[state]
        while step is not None:
            path.append(step)
            state = step[0]
            step = back[state]
        path.reverse()
        return state, path

    # --- realising one abstract edge ----------------------------------------------------------------------
    def candidates(self, run: R, edge: EdgeKey) -> list[list[Action]]:
        """The concrete sequences that can take ``edge``'s action from ``run`` (tried in this order)."""
        kind = abstract_kind(edge[1])
        world = self.runs.world(run)
        enabled = self.runs.enabled(run)
        out: list[list[Action]] = []
        api = _APIS.get(kind)
        if api is not None:
            for (client, corr), request in sorted(world.net.requests.items()):
                if request.api == api:
                    out.append([Action("DeliverRequest", client, corr)])
            for action in enabled:
                if action.kind == api:
                    corr = world.clients[action.client].next_corr
                    out.append([action, Action("DeliverRequest", action.client, corr)])
            return out
        kinds = _ENVIRONMENT.get(kind, ())
        for action in enabled:
            if action.kind in kinds:
                out.append([action])
        return out

    def realise(self, config: int, run: R, edge: EdgeKey) -> R | None:
        """A fork of ``run`` that took ``edge`` (None: no candidate did). Every try's edges are covered.

        First from ``run`` as it is, then after each response on the wire is delivered, then after all of them
        (what a client learnt from a response decides what it sends next; the abstraction forgets it)."""
        world = self.runs.world(run)
        pending = [Action("DeliverResponse", c, corr) for c, corr in sorted(world.net.responses)]
        prefixes: list[list[Action]] = [[]] + [[action] for action in pending] + ([pending] if len(pending) > 1 else [])
        for prefix in prefixes:
            base = run
            if prefix:
                base = self.runs.fork(run)
                if not self._take(base, prefix) or self.credit(base):
                    continue
            got = self._realise_from(config, base, edge)
            if got is not None or self.result.failed is not None:
                return got
        return None

    def _realise_from(self, config: int, run: R, edge: EdgeKey) -> R | None:
        for sequence in self.candidates(run, edge):
            twin = self.runs.fork(run)
            taken = self._take(twin, sequence)
            edges = self.credit(twin)
            if self.runs.failed(twin):
                self.result.failed = twin
                return None
            if not taken:
                continue
            if not edges:
                if sequence[-1].kind in _MOVES:   # the clock moved: fire each timer that became due
                    got = self._fire_due(config, twin, edge)
                    if got is not None or self.result.failed is not None:
                        return got
                continue
            self.keep(config, twin)
            if edges[0] == edge and len(edges) == 1:
                return twin
        return None

    def _fire_due(self, config: int, run: R, edge: EdgeKey) -> R | None:
        for action in [a for a in self.runs.enabled(run) if a.kind == "FireTimer"]:
            twin = self.runs.fork(run)
            taken = self._take(twin, [action])
            edges = self.credit(twin)
            if self.runs.failed(twin):
                self.result.failed = twin
                return None
            if taken and edges:
                self.keep(config, twin)
                if edges == [edge]:
                    return twin
        return None

    def _take(self, run: R, sequence: list[Action]) -> bool:
        for action in sequence:
            if run.over:
                return False
            if action not in self.runs.enabled(run):
                return False
            run.step(action)
            self.result.steps += 1
            if self.runs.failed(run) or self.runs.edges(run):
                return True
        return True

    def shake(self, config: int, run: R) -> None:
        """A short seeded walk from ``run``: other concrete situations behind the same abstract states."""
        twin = self.runs.fork(run)
        for _ in range(SHAKE):
            choices = self.runs.enabled(twin)
            if not choices or twin.over:
                break
            twin.step(choices[self.rng.randrange(len(choices))])
            self.result.steps += 1
            if self.runs.failed(twin):
                self.result.failed = twin
                return
            self.keep(config, twin)
        self.credit(twin)

    # --- one round -----------------------------------------------------------------------------------------
    def round(self, config: int) -> bool:
        """One planned path of ``config``; False when it has nothing left to try."""
        planned = self.plan(config)
        if planned is None:
            return False
        start, path = planned
        target = path[-1]
        self.tries[(config, target)] = self.tries.get((config, target), 0) + 1
        self.result.tried.add(target)
        reps = self.pool[config][start]
        run = reps[self.rng.randrange(len(reps))]
        for edge in path:
            nxt = self.realise(config, run, edge)
            if self.result.failed is not None:
                return False
            if nxt is None:
                self.fails[(config, edge)] = self.fails.get((config, edge), 0) + 1
                self.shake(config, run)
                return self.result.failed is None
            run = nxt
        return True


def _order(edge: EdgeKey) -> tuple[str, str, str]:
    return edge[0].short(), edge[1], edge[2].short()


def guided_search(runs: Runs[R], maps: Sequence[frozenset[EdgeKey]], covered: set[EdgeKey], budget_steps: int,
                  seed: int, kept: dict[tuple[int, State], list[R]] | None = None) -> GuidedResult[R]:
    """Spend about ``budget_steps`` steps covering edges not in ``covered`` (which is not changed).

    ``maps[i]``: the abstract edges configuration ``i`` (a world ``runs.starts[i]`` starts) can take — its scope's
    map; its paths are planned over these only and its targets are the uncovered ones among them.
    """
    search: _Search[R] = _Search(runs, maps, covered, seed)
    for (config, state), reps in sorted((kept or {}).items(), key=lambda item: (item[0][0], item[0][1].short())):
        search.pool[config][state] = list(reps[:KEEP])
        search.kept.add(state)
    for index, start in enumerate(runs.starts):
        run = start()
        if runs.failed(run):
            search.result.failed = run
            return search.result
        search.keep(index, run)
    active = set(range(len(runs.starts)))
    turns = [0] * len(runs.starts)
    while search.result.steps < budget_steps and active and search.result.failed is None:
        # turns in proportion to the uncovered edges of each configuration's map (faults' map holds most)
        config = max(sorted(active), key=lambda c: search.open[c] / (turns[c] + 1))
        turns[config] += 1
        if search.round(config):
            search.result.rounds += 1
        else:
            active.discard(config)
    search.result.kept_states = len(search.kept)
    return search.result

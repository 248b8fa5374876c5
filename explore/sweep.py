"""The map sweep: every edge of the abstract map realised concretely, in breadth-first order, by puppet clients.

The abstract graph is the map (explore/coverage.py). Per world configuration — a scope whose clients are
puppets (harness/puppets.py: every request chosen here) — the sweep keeps up to ``KEEP`` concrete runs of each
abstract state it reached (forks: world, checker, recorded steps) and walks the configuration's map breadth
first: for each reached state, each outgoing edge not yet covered (or whose target this configuration has not
reached yet, to get there) is *realised* from a kept run of its source — the candidate step sequences of
``harness.puppets.moves`` tried on forks, request variants in a seeded order, until the labelled refinement
check records exactly that edge. Every state any try reaches is kept (so a try that misses its edge still
widens the frontier), and every edge any try records is covered.

What the abstraction forgets — whose heartbeat deadline comes first, how many heartbeat ops a member holds,
a timer left due by the last clock move — can make an edge impossible from the runs kept so far; an edge that
failed is tried again from each run of its source kept later (a later run is another concrete situation), and
runs with fewer timers left due and runs in a situation not kept yet (harness.puppets.situation: the order of
the deadlines, how many heartbeat ops each member holds) are preferred. A first pass tries each edge from one run, so
that the frontier moves out fast; the other runs are tried once the configuration has no new state left.
Configurations take turns in proportion to the edges their maps still have uncovered.
Where time decides edges (0.10: explore/deadlines.py) a run's situation is its *timing* (harness.puppets.timing:
where each slot's ops and the DelayedJoin stand — armed this millisecond, later, due): runs are kept for the timings the
state's uncovered edges are taken from in the timed graph, and an edge is tried first from a run whose timing fits;
when no kept run of its source fits, one is derived from a kept run by a short prefix that comes back to the same
abstract state (harness.puppets.retimings: the clock moved just past a deadline, members' ops armed anew in that
millisecond), checked step by step like any try, and kept.
Where a timed graph exists the sweep also *plans* (explore/plan.py): a best-first search over the timed graph projected
on (state, timing) drives pooled runs toward the timings uncovered edges are taken from — the timings that need another
history, which re-timing in place cannot give.
Deterministic for a seed: maps sorted, runs numbered in the order they are kept, request variants shuffled by
``random.Random`` seeded by (seed, run, edge), so a second pass goes on where the first stopped.

Runs are the caller's checked runs (explore/runs.py ``Runs``): catalog + refinement check every step of
every try, so a violation found here is reported (and shrunk) like any other and ends the sweep.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Generic, Mapping, Sequence

from core.actions import Action
from explore.coverage import EdgeKey
from explore.runs import R, Runs, parse_label
from explore.plan import Planning, PlanState
from explore.timedmap import TimedMap
from harness.puppets import moves, probes, retimings, situation, timing
from model.state import State

#: concrete runs kept per (configuration, abstract state)
KEEP = 4
#: request sequences tried per kept run and edge (of the shuffled candidates; timers and appends: all)
CAP = 24
#: ... in the first pass over a new state (one run per edge): the frontier moves out before the hard edges are tried
FIRST_CAP = 6
#: ... where timings decide (0.10): a first try fits a timing only by chance, so the frontier moves on sooner and the
#: edges wait for the runs kept for their timings (measured, sweep alone on 0.10.0 at 40,000 steps: 6 → 3,881 edges,
#: 3 → 4,873, 2 → 4,928, 1 → 4,844)
FIRST_CAP_TIMED = 2
#: how often the source of an edge still uncovered is reached anew by another route in a round (``_Sweep.reroute``)
REROUTES = 6
#: where timings decide: when no kept run of an edge's source has a timing it is taken from, derive one from a kept run
#: by a stutter prefix (harness.puppets.retimings) — from at most this many kept runs per try of the edge
RETIME_RUNS = 1
#: ... and at most this many prefixes (whose guessed timing fits) per kept run
RETIME_PREFIXES = 2
#: where a timed graph plans (0.10): the planning (explore/plan.py) takes a configuration's turn while its steps, each
#: of its units counted as one more, are at most this share of the configuration's steps — at 1.0 the sweep's own units
#: run when the planning has nothing left or its units outnumber the sweep's own steps (measured, gate phases on 0.10.0
#: at 40,000 steps: 0.5 → 75.3 %, 0.8 → 74.7 %, 0.95 → 82.4 %, 1.0 → 85.2 % of reachable edges)
PLAN_SHARE = 1.0
#: edges remembered per state as ways into it (for routes that are not the first one)
INTO = 8


@dataclass
class SweepResult(Generic[R]):
    steps: int = 0
    tries: int = 0
    edges: set[EdgeKey] = field(default_factory=set)
    states: set[State] = field(default_factory=set)
    tried: set[EdgeKey] = field(default_factory=set)    # edges a try went for (their uncovered reason)
    failed: R | None = None
    kept_states: int = 0


@dataclass
class _Kept(Generic[R]):
    number: int
    due: int             # timers left due (the clock cannot move until they fire): fewer is better
    run: R
    sign: object = None  # its concrete situation behind the abstract state (harness.puppets.situation)


class _Config(Generic[R]):
    """One configuration's breadth-first sweep of its map."""

    def __init__(self, index: int, edges: frozenset[EdgeKey], timings: Mapping[EdgeKey, frozenset[object]],
                 plan: TimedMap | None = None) -> None:
        self.index, self.spent = index, 0
        #: the planning's state where time decides edges (explore/plan.py), else None
        self.plan: PlanState[R] | None = PlanState(plan) if plan is not None else None
        self.signs: dict[int, object] = {}                # kept run number -> its situation
        #: per edge, the timings of its source it can be taken from (explore/deadlines.py; empty: time rules nothing)
        self.timings = timings
        #: a kept run's timing (harness.puppets.timing) as the timed graph writes it (explore/timedmap.py ``project``)
        self.project: Callable[[object], object] = plan.project if plan is not None and plan.project else _same
        self.out: dict[State, list[EdgeKey]] = {}
        for edge in sorted(edges, key=_order):
            self.out.setdefault(edge[0], []).append(edge)
        self.states = {e[0] for e in edges} | {e[2] for e in edges}     # the map's states (others are not kept)
        self.kept: dict[State, list[_Kept[R]]] = {}
        self.queue: deque[State] = deque()
        self.attempts: dict[EdgeKey, dict[int, int]] = {}   # edge -> kept run number -> candidates tried from it
        self.processed: set[State] = set()
        self.parent: dict[State, EdgeKey | None] = {}     # the edge a state was first reached by (None: the start)
        self.into: dict[State, dict[EdgeKey, None]] = {}  # edges it was reached by since (a few, in order)
        self.rerouted: dict[EdgeKey, int] = {}            # uncovered edge -> how often its source was reached anew
        self.turn = 0
        self.revisit: dict[State, None] = {}              # processed states with a run kept since (in order)
        self.retimed: dict[EdgeKey, set[int]] = {}        # edge -> kept run numbers a stutter prefix was tried from
        self.done = False

    def untried(self, edge: EdgeKey, cap: int) -> list[_Kept[R]]:
        """The kept runs of the edge's source it was tried from with fewer than ``cap`` candidates, best first."""
        seen = self.attempts.get(edge, {})
        fits = self.timings.get(edge, ())
        return sorted((k for k in self.kept.get(edge[0], ()) if seen.get(k.number, 0) < cap),
                      key=lambda k: (self.project(k.sign) not in fits if fits else False, k.due, k.number))

    def useful(self, state: State, covered: set[EdgeKey]) -> dict[object, int]:
        """Per timing of ``state``: how many of its uncovered edges a timed run takes from it."""
        out: dict[object, int] = {}
        for edge in self.out.get(state, ()):
            if edge not in covered:
                for t in self.timings.get(edge, ()):
                    out[t] = out.get(t, 0) + 1
        return out


class _Sweep(Planning[R], Generic[R]):
    def __init__(self, runs: Runs[R], covered: set[EdgeKey], seed: int, keep: int, cap: int,
                 by_timing: bool = False) -> None:
        self.runs, self.covered, self.keep_n, self.cap = runs, set(covered), keep, cap
        #: keep runs apart by their timing (harness.puppets.timing) where no timed graph says which one an edge needs
        self.by_timing = by_timing
        self.seed = seed
        self.members: dict[EdgeKey, list[int]] = {}     # edge -> the configurations whose map has it
        self.open: list[int] = []                        # uncovered edges per configuration's map
        self.result: SweepResult[R] = SweepResult()
        self.numbers = 0
        self.probed: set[State] = set()

    def keep(self, config: _Config[R], run: R, via: EdgeKey | None = None, evict: random.Random | None = None
             ) -> None:
        """Keep ``run`` for its abstract state (reached by ``via``): while fewer than ``keep`` are kept, or instead
        of one with more timers left due — or, with ``evict``, instead of one it picks (a new route's run)."""
        state = self.runs.state(run)
        self.result.states.add(state)
        if state not in config.states and config.kept:
            return          # beyond the map (a third pending append, a fourth member): nothing to sweep from there
        world = self.runs.world(run)
        due = len(world.coord.due_timers())
        sign = timing(world) if config.timings or self.by_timing else situation(world)
        kept = config.kept.get(state)
        if kept is None:
            kept = config.kept[state] = []
            config.queue.append(state)
            config.parent[state] = via
        if via is not None and len(config.into.setdefault(state, {})) < INTO:
            config.into[state][via] = None
        if len(kept) >= self.keep_n:
            signs = [k.sign for k in kept]
            twins = [i for i, k in enumerate(kept) if signs.count(k.sign) > 1]
            useful = config.useful(state, self.covered) if config.timings and sign not in signs else {}
            need = [useful.get(config.project(s), 0) for s in signs]
            if useful.get(config.project(sign), 0) > min(need):
                # a timing some uncovered edge needs, instead of the run whose timing fewest need
                worst = min(range(len(kept)), key=lambda i: (need[i], -kept[i].number))
            elif evict is not None:
                worst = evict.randrange(len(kept))
            elif sign not in signs and twins:      # a situation not kept yet, instead of a second copy of one
                worst = max(twins, key=lambda i: (kept[i].due, kept[i].number))
            else:
                worst = max(range(len(kept)), key=lambda i: (kept[i].due, kept[i].number))
                if kept[worst].due <= due:
                    return
            del kept[worst]
        self.numbers += 1
        kept.append(_Kept(self.numbers, due, self.runs.fork(run), sign))
        config.signs[self.numbers] = sign
        if config.plan is not None:
            config.plan.fresh.append((state, kept[-1]))
        if state in config.processed:
            config.revisit[state] = None

    def cover(self, edges: Sequence[EdgeKey]) -> None:
        for edge in edges:
            if edge not in self.covered:
                self.covered.add(edge)
                for index in self.members.get(edge, ()):
                    self.open[index] -= 1

    def take(self, run: R, sequence: Sequence[Action], through: bool = False) -> bool:
        """Step ``run`` through ``sequence`` until a step fails or records an abstract edge (``through``: on to the
        end — a retiming prefix may leave its state and come back); False if a step is not enabled."""
        world = self.runs.world(run)
        for action in sequence:
            if run.over or not world.is_enabled(action):
                return False
            run.step(action)
            self.result.steps += 1
            if self.runs.failed(run) or (not through and self.runs.edges(run)):
                return True
        return True

    def fork_and_take(self, config: _Config[R], run: R, sequence: Sequence[Action], through: bool = False
                      ) -> tuple[R, bool, list[EdgeKey]]:
        """A fork of ``run`` stepped by ``take``, its steps and edges counted (a failure recorded): (fork, whether
        every step was enabled, the edges it recorded in order)."""
        twin = self.runs.fork(run)
        before = self.result.steps
        taken = self.take(twin, sequence, through)
        config.spent += self.result.steps - before
        self.result.tries += 1
        edges = sorted(self.runs.edges(twin), key=_order)
        self.result.edges.update(edges)
        self.cover(edges)
        if self.runs.failed(twin):
            self.result.failed = twin
        return twin, taken, edges

    def attempt(self, config: _Config[R], edge: EdgeKey, runs: int, cap: int) -> bool:
        """Realise ``edge`` from up to ``runs`` runs of its source not yet tried for it, ``cap`` candidates each;
        True once one did."""
        kind, acting, arg = parse_label(edge[1])
        self.result.tried.add(edge)
        seen = config.attempts.setdefault(edge, {})
        chosen = config.untried(edge, cap)[:runs]
        fits = config.timings.get(edge, ())
        if fits and not any(config.project(k.sign) in fits for k in config.kept.get(edge[0], ())):
            chosen = self.retime(config, edge, fits) + chosen
            if self.result.failed is not None:      # a retiming prefix found a violation: the sweep ends
                return False
        for kept in chosen:
            candidates = moves(self.runs.world(kept.run), kind, acting, arg)
            if candidates and candidates[0][-1].kind == "Receive":
                random.Random(f"{self.seed}/{kept.number}/{edge[1]}").shuffle(candidates)   # the same order each pass
            start, seen[kept.number] = seen.get(kept.number, 0), cap
            for sequence in candidates[start:cap]:
                if self.result.failed is not None or self.try_one(config, kept.run, sequence, edge) is not None:
                    return self.result.failed is None
        return False

    def retime(self, config: _Config[R], edge: EdgeKey, fits: frozenset[object]) -> list[_Kept[R]]:
        """A run of the edge's source in a timing it is taken from, derived from a kept run by a stutter prefix whose
        guessed timing fits (kept like any run; [] when none did)."""
        state = edge[0]
        done = config.retimed.setdefault(edge, set())
        tried = 0
        for kept in sorted(config.kept.get(state, ()), key=lambda k: (k.due, k.number)):
            if tried >= RETIME_RUNS:
                break
            if kept.number in done:
                continue
            done.add(kept.number)
            tried += 1
            world = self.runs.world(kept.run)
            for _, prefix in [g for g in retimings(world) if config.project(g[0]) in fits][:RETIME_PREFIXES]:
                twin, _, _ = self.fork_and_take(config, kept.run, prefix, through=True)
                if self.runs.failed(twin):
                    return []
                if twin.over or self.runs.state(twin) != state:
                    continue
                sign = timing(self.runs.world(twin))
                if config.project(sign) not in fits:
                    continue
                number = self.numbers
                self.keep(config, twin)
                got = config.kept.get(state, [])
                if self.numbers > number and got and got[-1].number == self.numbers:
                    return [got[-1]]
                self.numbers += 1
                return [_Kept(self.numbers, len(self.runs.world(twin).coord.due_timers()), twin, sign)]
        return []

    def try_one(self, config: _Config[R], run: R, sequence: Sequence[Action], edge: EdgeKey | None,
                evict: random.Random | None = None) -> R | None:
        """The fork of ``run`` that took ``sequence`` if it realised ``edge`` exactly (kept either way when it
        reached another state)."""
        twin, taken, edges = self.fork_and_take(config, run, sequence)
        if self.runs.failed(twin):
            return None
        if edges and not twin.over:
            self.keep(config, twin, edges[0] if len(edges) == 1 else None, evict)
        return twin if taken and edges == [edge] and not twin.over else None

    def work(self, config: _Config[R]) -> None:
        """One unit of ``config``'s sweep: the next reached state's edges, else the uncovered edges of a state
        that has a run kept since they were tried."""
        if config.plan is not None and config.plan.planned <= config.spent * PLAN_SHARE:
            before = config.spent
            if self.descend(config):    # the planning's share of the steps (explore/plan.py)
                config.plan.planned += config.spent - before + 1
                return
        first = bool(config.queue)
        if first:
            state = config.queue.popleft()
            config.processed.add(state)
            self.probe(config, state)
            edges = [e for e in config.out.get(state, ()) if not (e in self.covered and e[2] in config.kept)]
        elif config.plan is not None and not config.revisit and self.descend(config):
            return
        elif config.revisit:
            state = next(iter(config.revisit))
            del config.revisit[state]
            edges = [e for e in config.out.get(state, ()) if self.wanted(config, e)]
        else:
            config.done = not self.reroute(config)
            return
        for edge in edges:
            if edge in self.covered and edge[2] in config.kept:
                continue
            # the frontier first: one run per edge while states are new, the others once it is explored
            first_cap = FIRST_CAP_TIMED if config.timings else FIRST_CAP
            if not self.attempt(config, edge, *((1, first_cap) if first else (self.keep_n, self.cap))) \
                    and first and self.wanted(config, edge) and config.untried(edge, self.cap):
                config.revisit[state] = None
            if self.result.failed is not None:
                return


    def probe(self, config: _Config[R], state: State) -> None:
        """Once per abstract state (over all configurations): each request of ``harness.puppets.probes`` from a run
        of it — the answers no map edge asks for, checked by the labelled refinement like every step."""
        if state in self.probed:
            return
        self.probed.add(state)
        run = config.kept[state][0].run
        for sequence in probes(self.runs.world(run)):
            self.try_one(config, run, sequence, None)
            if self.result.failed is not None:
                return

    def wanted(self, config: _Config[R], edge: EdgeKey) -> bool:
        """Uncovered, or the way into a state this configuration has not reached that has uncovered edges of its
        map (another configuration covered the edge itself)."""
        if edge not in self.covered:
            return True
        return edge[2] not in config.kept and any(e not in self.covered for e in config.out.get(edge[2], ()))

    def reroute(self, config: _Config[R]) -> bool:
        """Reach the source of an uncovered edge anew (each in turn, ``REROUTES`` times a round): from a run of
        one of its ancestors — on the route it was first reached by, or a few steps back along ways seen into each
        state — realise the rest of the route with the
        candidates in another order, keeping the runs met instead of ones picked at random — the history the
        abstraction forgets (the first member's rebalance timeout, who was scheduled when) comes out another way.
        False when no edge is left to reroute (the budget ends the rest)."""
        uncovered = [e for source in config.kept for e in config.out.get(source, ()) if self.wanted(config, e)]
        if not uncovered:
            return False
        limit = REROUTES
        stuck = [e for e in uncovered if config.rerouted.get(e, 0) < limit]
        while not stuck:        # every edge had its share: another round each, while the budget lasts
            limit *= 2
            stuck = [e for e in uncovered if config.rerouted.get(e, 0) < limit]
        # edges into states not reached yet first: everything beyond them waits on them
        frontier = [e for e in stuck if e[2] not in config.kept]
        edge = (frontier or stuck)[config.turn % len(frontier or stuck)]
        config.turn += 1
        config.rerouted[edge] = config.rerouted.get(edge, 0) + 1
        rng = random.Random(f"{self.seed}/reroute/{config.index}/{config.turn}")
        route = _route(config, edge[0]) if rng.random() < 0.5 else _back(config, edge[0], rng)
        start = rng.randrange(len(route)) if route and rng.random() < 0.5 else 0   # half the time all of it
        run = rng.choice(config.kept[route[start][0]]).run if route else config.kept[edge[0]][0].run
        for step in route[start:]:
            kind, acting, arg = parse_label(step[1])
            candidates = moves(self.runs.world(run), kind, acting, arg)
            rng.shuffle(candidates)
            for sequence in candidates[:self.cap]:
                got = self.try_one(config, run, sequence, step, rng)
                if self.result.failed is not None:
                    return True
                if got is not None:
                    run = got
                    break
            else:
                return True
        config.revisit[edge[0]] = None
        return True


def _route(config: _Config[R], state: State) -> list[EdgeKey]:
    """The edges ``state`` was first reached by, from the configuration's start."""
    route: list[EdgeKey] = []
    via = config.parent.get(state)
    while via is not None and len(route) < len(config.parent):
        route.append(via)
        via = config.parent.get(via[0])
    return route[::-1]


def _back(config: _Config[R], state: State, rng: random.Random) -> list[EdgeKey]:
    """A route of up to 4 edges into ``state`` picked at random among those seen to reach each state on it."""
    route: list[EdgeKey] = []
    for _ in range(rng.randint(1, 4)):
        ways = list(config.into.get(state, ()))
        if not ways:
            break
        via = ways[rng.randrange(len(ways))]
        route.append(via)
        state = via[0]
    return route[::-1]


def _same(timing: object) -> object:
    return timing


def _order(edge: EdgeKey) -> tuple[str, str, str]:
    return edge[0].short(), edge[1], edge[2].short()


def sweep(runs: Runs[R], maps: Sequence[frozenset[EdgeKey]], covered: set[EdgeKey], budget_steps: int, seed: int,
          keep: int = KEEP, cap: int = CAP, timings: Sequence[Mapping[EdgeKey, frozenset[object]]] = (),
          plans: Sequence[TimedMap | None] = (), by_timing: bool = False) -> SweepResult[R]:
    """Spend about ``budget_steps`` steps realising the edges of ``maps`` not in ``covered`` (not changed).

    ``maps[i]``: the abstract edges configuration ``i`` (a world ``runs.starts[i]`` starts, puppet clients) can take;
    ``timings[i]`` (optional): per edge, the timings of its source a timed run takes it from (explore/deadlines.py) —
    runs are then kept for the timings the uncovered edges need and tried first where the timing fits."""
    search: _Sweep[R] = _Sweep(runs, covered, seed, keep, cap, by_timing)
    configs: list[_Config[R]] = [_Config(i, edges, timings[i] if timings else {}, plans[i] if plans else None)
                                 for i, edges in enumerate(maps)]
    for index, edges in enumerate(maps):
        for edge in edges:
            search.members.setdefault(edge, []).append(index)
        search.open.append(len(edges - search.covered))
    for config, start in zip(configs, runs.starts, strict=True):
        run = start()
        if runs.failed(run):
            search.result.failed = run
            return search.result
        search.keep(config, run)
    while search.result.steps < budget_steps and search.result.failed is None:
        active = [c for c in configs if not c.done and search.open[c.index] > 0]
        if not active:
            break
        # turns in proportion to what each map still has uncovered
        search.work(min(active, key=lambda c: (c.spent / search.open[c.index], c.index)))
    search.result.kept_states = len({s for c in configs for s in c.kept})
    search.result.tried -= search.result.edges
    return search.result


__all__ = ["CAP", "KEEP", "SweepResult", "parse_label", "sweep"]

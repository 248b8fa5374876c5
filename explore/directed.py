"""Directed search toward uncovered abstract edges: restore a concrete state that reached an edge's source, step on.

A Go-Explore-shaped loop, deterministic for a seed. It keeps, per (world configuration, abstract state
reached), up to ``keep`` concrete runs (forks: the world, its checker and its recorded steps). Each round
it picks the least-visited kept state that is the source of a still-uncovered reachable edge (when none
is, the least-visited kept state of all, to find new sources), forks one of its runs, and takes a short
seeded walk from there that prefers, at each step, the concrete action least often taken from the
abstract state it is in (abstract-edge novelty; now and then only among actions that can produce a
missing edge's kind); every abstract state the walk reaches is kept in turn. So a group that
once stabilised is restarted from Stable again and again, and faults and partition moves are tried
there — what plain walks from the initial state rarely reach. Walks go through the caller's checked
runs, so a violation found here is reported (and shrunk) like any other.

The run type is the caller's (kgc.runs.CheckedRun in the gate); this module only needs the ``Runs``
operations below, so it stays below kgc in the layers.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Collection, Generic, Protocol, Sequence, TypeVar

from core.actions import Action
from explore.coverage import EdgeKey
from harness.world import World
from model.state import State

#: the concrete action kinds that can take (or prepare) each abstract action kind: a request is sent,
#: then delivered; a timer fires when it is due or when the clock moves past it
_APIS = {"JoinGroup/new": "JoinGroup", "JoinGroup/new-pending": "JoinGroup", "JoinGroup/known": "JoinGroup",
         "JoinGroup/changed": "JoinGroup", "SyncGroup": "SyncGroup", "Heartbeat": "Heartbeat",
         "OffsetCommit": "OffsetCommit", "OffsetCommit/simple": "OffsetCommit", "LeaveGroup": "LeaveGroup"}
_ENVIRONMENT = {"ExpireHeartbeat": ("FireTimer", "AdvanceClock", "AdvanceToNextDeadline"),
                "ExpireJoin": ("FireTimer", "AdvanceClock", "AdvanceToNextDeadline"),
                "ExpireSync": ("FireTimer", "AdvanceClock", "AdvanceToNextDeadline"),
                "CompleteAppend": ("CompleteAppend",), "UnloadGroup": ("UnloadGroup",), "LoadGroup": ("LoadGroup",)}
#: how often a step of a directed walk is chosen among the actions that serve a wanted abstract kind (the rest
#: of the time, and among those, the action least often taken from the abstract state is preferred: novelty)
FOCUS = 0.15


def abstract_kind(label: str) -> str:
    """``LeaveGroup(MLw)`` -> ``LeaveGroup``, ``CompleteAppend[ok]`` -> ``CompleteAppend``."""
    return label.split("(")[0].split("[")[0]


def serves(world: World, action: Action, apis: frozenset[str], environment: frozenset[str]) -> bool:
    """Whether ``action`` sends or delivers a request of one of ``apis``, or is one of ``environment``."""
    if action.kind in apis or action.kind in environment:
        return True
    if action.kind == "DeliverRequest":
        request = world.net.requests.get((action.client, action.arg))   # type: ignore[arg-type]
        return request is not None and request.api in apis
    return False


class Runnable(Protocol):
    @property
    def over(self) -> bool: ...

    def step(self, action: Action) -> Sequence[object]: ...


R = TypeVar("R", bound=Runnable)


@dataclass(frozen=True)
class Runs(Generic[R]):
    """What the search needs of a run type."""

    starts: Sequence[Callable[[], R]]            # one fresh run per world configuration
    fork: Callable[[R], R]                       # an independent copy that continues from the same point
    enabled: Callable[[R], tuple[Action, ...]]
    state: Callable[[R], State]                  # the run's abstract state now (unpadded)
    edges: Callable[[R], set[EdgeKey]]           # the abstract edges the run covered (coverage keys)
    failed: Callable[[R], bool]                  # the run found a violation: stop and report it
    world: Callable[[R], World]                  # the run's world (to read which request a delivery carries)


@dataclass
class DirectedResult(Generic[R]):
    steps: int = 0
    walks: int = 0
    kept_states: int = 0
    edges: set[EdgeKey] = field(default_factory=set)
    states: set[State] = field(default_factory=set)
    failed: R | None = None
    pool: dict[tuple[int, State], list[R]] = field(default_factory=dict)   # the kept runs, per (configuration, state)
    stalled: bool = False


def directed_search(runs: Runs[R], targets: frozenset[EdgeKey], covered: set[EdgeKey], budget_steps: int,
                    seed: int, walk_length: int = 12, keep: int = 3, stall: tuple[int, int] | None = None
                    ) -> DirectedResult[R]:
    """Spend about ``budget_steps`` steps covering edges of ``targets`` not in ``covered`` (which is not changed).

    ``stall = (steps, edges)``: stop early (``stalled``) once a stretch of ``steps`` steps covered fewer than
    ``edges`` new target edges — the search has levelled off and the caller has a better use for the rest."""
    mark = (0, 0)
    rng = random.Random(seed)
    result: DirectedResult[R] = DirectedResult()
    pool: dict[tuple[int, State], list[R]] = {}
    visits: dict[tuple[int, State], int] = {}
    ids: dict[State, int] = {}                        # abstract state -> a small number (cheap to hash)
    tried: dict[tuple[int, Action], int] = {}         # (abstract state id, concrete action) -> times taken
    for index, start in enumerate(runs.starts):
        run = start()
        if runs.failed(run):
            result.failed = run
            return result
        _keep(pool, visits, (index, runs.state(run)), run, runs, keep, rng)
    by_source: dict[State, set[EdgeKey]] = {}     # source -> its edges still uncovered (emptied ones removed)
    for edge in targets - covered:
        by_source.setdefault(edge[0], set()).add(edge)
    sources = by_source.keys()
    while result.steps < budget_steps and result.walks < budget_steps:   # (walks: a world with nothing enabled)
        entry = _pick(pool, visits, sources, rng)
        visits[entry] += 1
        wanted = sorted({abstract_kind(e[1]) for e in by_source.get(entry[1], ())})
        apis = frozenset(_APIS[k] for k in wanted if k in _APIS)
        environment = frozenset(c for k in wanted for c in _ENVIRONMENT.get(k, ()))
        run = runs.fork(rng.choice(pool[entry]))
        result.walks += 1
        state = entry[1]
        for _ in range(walk_length):
            choices = runs.enabled(run)
            if not choices or run.over:
                break
            if wanted and rng.random() < FOCUS:
                world = runs.world(run)
                choices = tuple(a for a in choices if serves(world, a, apis, environment)) or choices
            action = _novel(choices, tried, ids.setdefault(state, len(ids)), rng)
            run.step(action)
            result.steps += 1
            if runs.failed(run):
                result.failed = run
                break
            state = runs.state(run)
            result.states.add(state)
            if not run.over:   # a run that cannot go on (its coordinator raised) is no place to restart from
                _keep(pool, visits, (entry[0], state), run, runs, keep, rng)
        new = runs.edges(run) - result.edges
        result.edges |= new
        if stall is not None and result.steps >= mark[0] + stall[0]:
            gained = len(result.edges & targets) - mark[1]
            if gained < stall[1]:
                result.stalled = True
                break
            mark = (result.steps, len(result.edges & targets))
        for edge in new:
            remaining = by_source.get(edge[0])
            if remaining is not None and edge in remaining:
                remaining.discard(edge)
                if not remaining:
                    del by_source[edge[0]]
        if result.failed is not None:
            break
    result.kept_states = len(pool)
    result.pool = pool
    return result


def _keep(pool: dict[tuple[int, State], list[R]], visits: dict[tuple[int, State], int], key: tuple[int, State],
          run: R, runs: Runs[R], keep: int, rng: random.Random) -> None:
    """Keep a fork of ``run`` for ``key``: while fewer than ``keep`` are kept, then now and then (reservoir-like)."""
    kept = pool.get(key)
    if kept is None:
        pool[key] = [runs.fork(run)]
        visits[key] = 0
    elif len(kept) < keep:
        kept.append(runs.fork(run))
    elif rng.random() < 0.05:
        kept[rng.randrange(keep)] = runs.fork(run)


def _novel(choices: Sequence[Action], tried: dict[tuple[int, Action], int], state: int,
           rng: random.Random) -> Action:
    """Abstract-edge novelty: among ``choices``, one least often taken from this abstract state (seeded ties)."""
    counts = [tried.get((state, a), 0) for a in choices]
    least = min(counts)
    tied = [a for a, n in zip(choices, counts, strict=True) if n == least]
    action = tied[rng.randrange(len(tied))]
    tried[(state, action)] = least + 1
    return action


def _pick(pool: dict[tuple[int, State], list[R]], visits: dict[tuple[int, State], int], sources: Collection[State],
          rng: random.Random) -> tuple[int, State]:
    """The least-visited kept state that is an uncovered edge's source (else of all); ties by a seeded choice."""
    keys = [k for k in pool if k[1] in sources] or list(pool)
    least = min(visits[k] for k in keys)
    tied = [k for k in keys if visits[k] == least]
    return tied[rng.randrange(len(tied))]

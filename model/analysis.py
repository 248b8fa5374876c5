"""Analyses of a model graph: deadlocks, settling, fair non-progress cycles, unused actions (DESIGN.md §6).

Every finding carries a BFS-shortest path from the initial state (read off the BFS tree that
``model.graph.build`` records), so it can be replayed by hand. The analyses read only the scalar
node/edge attributes (``label``, ``group``, ``depth``, ``parent``, ``via``, ``cut_actions``;
``kind``, ``arg``), so they work the same on a graph loaded back from JSON or built by hand.

Fairness, precisely. The environment's actions — the timer expiries ``ExpireJoin``,
``ExpireSync``, ``ExpireHeartbeat`` and the log's ``CompleteAppend`` (either outcome) — are
*weakly fair per action kind*: a kind that stays enabled from some point on is eventually taken.
(Per kind, not per member: a slot index is a position in a canonical state and does not name the
same member from one state to the next, so per-member fairness cannot be stated on the
symmetry-reduced graph. Per-kind fairness is weaker, so a reported cycle is a candidate that a
reader checks.) Client requests are not fair: a client may send nothing at all (every state can
stutter). A run *makes no progress* when it never visits a Stable, Empty or Absent state.

A non-progress SCC is a strongly connected set C of PreparingRebalance/CompletingRebalance states
(over the moves a client assumption allows; a single state counts, since it can stutter). A run
can stay in C forever, fairly, iff every fair kind that is enabled in *all* states of C has an
edge that stays in C: then the run that walks all of C forever is fair (a kind disabled somewhere
in C is not continuously enabled; the others are taken), and otherwise a continuously enabled
kind is never taken inside C. The analysis repeats this under nested client assumptions
(``ASSUMPTIONS``), so each cycle found says what it takes to keep a group from settling.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable

import networkx as nx

from model.analysis_report import FairCycle, Finding, Path, Report
from model.state import ABSENT_GROUP, COMPLETING, EMPTY, PREPARING, STABLE
from model.step import SLOT_ACTIONS

TIMERS = frozenset({"ExpireJoin", "ExpireSync", "ExpireHeartbeat"})
FAIR = TIMERS | {"CompleteAppend"}
#: group states a run must visit to count as progress; SETTLED ones are what "can still settle" means
PROGRESS = frozenset({STABLE, EMPTY, ABSENT_GROUP})
SETTLED = frozenset({STABLE, EMPTY})
#: every action name the model knows (kind, plus the outcome for CompleteAppend), in a fixed order
ACTION_NAMES: tuple[str, ...] = tuple(SLOT_ACTIONS) + (
    "ExpireJoin", "ExpireSync", "CompleteAppend[ok]", "CompleteAppend[error]", "OffsetCommit/simple")
#: the actions only a scope with static members offers (model/static.py)
STATIC_ACTIONS = frozenset({"JoinGroup/static-new", "JoinGroup/static-rejoin"})


def _offered(g: nx.MultiDiGraph) -> tuple[str, ...]:
    """The action names the graph's scope can offer at all: without ``static`` the static ones are not asked for."""
    scope = g.graph.get("scope")
    static = bool(getattr(scope, "static", False))
    return tuple(n for n in ACTION_NAMES if static or n not in STATIC_ACTIONS)


@dataclass(frozen=True, slots=True)
class Assumption:
    """Which client requests may happen during a run, and whether log appends may fail."""

    name: str
    clients: frozenset[str] | None   # None: every client request
    healthy_log: bool
    claim: str

    def allows(self, kind: str, arg: str) -> bool:
        if kind in FAIR:
            return not (self.healthy_log and kind == "CompleteAppend" and arg == "error")
        return self.clients is None or kind in self.clients


COOPERATIVE = frozenset({"JoinGroup/known", "SyncGroup", "Heartbeat", "OffsetCommit", "LeaveGroup"})
ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption("any-clients", None, False, "clients send any request; new members may keep arriving; appends may fail"),
    Assumption("cooperative-clients", COOPERATIVE, False,
               "no new member joins and no member changes its metadata; members rejoin, sync, heartbeat, "
               "commit or leave; appends may fail"),
    Assumption("cooperative-healthy-log", COOPERATIVE, True, "as cooperative-clients, and every append succeeds"),
    Assumption("quiet-clients", frozenset({"Heartbeat", "OffsetCommit"}), True,
               "members only heartbeat and commit (or stay silent); every append succeeds"),
)


def edge_name(data: dict[str, object]) -> str:
    return f"{data['kind']}[{data['arg']}]" if data.get("arg") else str(data["kind"])


def path_to(g: nx.MultiDiGraph, node: int) -> Path:
    """The BFS-shortest path from the initial state to ``node``, from the recorded BFS tree."""
    nodes, actions = [node], []
    while g.nodes[nodes[-1]]["parent"] >= 0:
        actions.append(g.nodes[nodes[-1]]["via"])
        nodes.append(g.nodes[nodes[-1]]["parent"])
    nodes.reverse()
    actions.reverse()
    return Path(tuple(nodes), tuple(g.nodes[n]["label"] for n in nodes), tuple(actions))


def _cut_kinds(g: nx.MultiDiGraph, node: int) -> set[str]:
    text = g.nodes[node].get("cut_actions", "")
    return {a.split("(")[0].split("[")[0] for a in text.split(",")} if text else set()


# -- deadlocks ----------------------------------------------------------------------------------
def deadlocks(g: nx.MultiDiGraph) -> tuple[list[int], list[int]]:
    """(dead, timer_only): states no action changes; states only a timer expiry changes.

    A self-loop does not count as a way out; an action whose successor the scope cut off does
    (it would change the state), so a scope boundary is never reported as a deadlock.
    """
    dead, timer_only = [], []
    for u in g.nodes:
        moves = {k for _, v, k in g.out_edges(u, data="kind") if v != u} | _cut_kinds(g, u)
        if not moves:
            dead.append(u)
        elif moves <= TIMERS:
            timer_only.append(u)
    return dead, timer_only


def cannot_settle(g: nx.MultiDiGraph) -> list[int]:
    """States from which no Stable or Empty state is reachable (within the scope)."""
    settled = [u for u, group in g.nodes(data="group") if group in SETTLED]
    can = set(settled)
    queue = deque(settled)
    while queue:
        v = queue.popleft()
        for u in g.predecessors(v):
            if u not in can:
                can.add(u)
                queue.append(u)
    return [u for u in g.nodes if u not in can]


# -- fair non-progress cycles -------------------------------------------------------------------
def _restricted(g: nx.MultiDiGraph, assumption: Assumption) -> nx.MultiDiGraph:
    h = nx.MultiDiGraph()
    h.add_nodes_from(u for u, group in g.nodes(data="group") if group not in PROGRESS)
    h.add_edges_from((u, v, k, d) for u, v, k, d in g.edges(keys=True, data=True)
                     if u in h and v in h and assumption.allows(d["kind"], d["arg"]))
    return h


def _fair_enabled(g: nx.MultiDiGraph, u: int) -> set[str]:
    return {k for _, _, k in g.out_edges(u, data="kind") if k in FAIR} | (_cut_kinds(g, u) & FAIR)


def fair_cycles(g: nx.MultiDiGraph, assumption: Assumption) -> list[FairCycle]:
    """The non-progress SCCs a weakly fair run can stay in forever under ``assumption``."""
    h = _restricted(g, assumption)
    found = []
    for comp in sorted(nx.strongly_connected_components(h), key=min):
        everywhere = set.intersection(*(_fair_enabled(g, u) for u in comp))
        inside = {d["kind"] for _, v, d in h.out_edges(comp, data=True) if v in comp and d["kind"] in FAIR}
        if everywhere - inside:
            continue
        entry = min(comp, key=lambda u: (g.nodes[u]["depth"], u))
        moves = sorted({edge_name(d) for _, v, d in h.out_edges(comp, data=True) if v in comp})
        groups = tuple(s for s in (PREPARING, COMPLETING) if any(g.nodes[u]["group"] == s for u in comp))
        found.append(FairCycle(assumption.name, tuple(sorted(comp)), groups, tuple(moves),
                               _lasso(g, h, comp, entry, everywhere)))
    return found


def _lasso(g: nx.MultiDiGraph, h: nx.MultiDiGraph, comp: set[int], entry: int, everywhere: set[str]) -> Path:
    """A fair witness: the path to ``entry``, then a loop in ``comp`` that takes every fair kind enabled
    everywhere in it and visits, for every other fair kind enabled somewhere, a state where it is not."""
    somewhere = set().union(*(_fair_enabled(g, u) for u in comp)) - everywhere
    steps: list[tuple[int, str, int]] = []
    at = entry
    for kind in sorted(everywhere):
        steps += _walk(h, comp, at, _taking(kind))
        at = steps[-1][2]
    for kind in sorted(somewhere):
        if kind in _fair_enabled(g, at):
            steps += _walk(h, comp, at, _avoiding(g, kind))
            at = steps[-1][2]
    if at != entry or not steps:
        if len(comp) == 1 and not h.has_edge(entry, entry):   # a lone state: the run stutters there
            prefix = path_to(g, entry)
            return Path(prefix.nodes, prefix.states, prefix.actions, loop_from=len(prefix.nodes) - 1, stutter=True)
        steps += _walk(h, comp, at, _reaching(entry))
    prefix = path_to(g, entry)
    nodes = prefix.nodes + tuple(v for _, _, v in steps)
    return Path(nodes, tuple(g.nodes[n]["label"] for n in nodes), prefix.actions + tuple(a for _, a, _ in steps),
                loop_from=len(prefix.nodes) - 1)


Goal = Callable[[int, dict[str, object]], bool]   # (edge target, edge data) -> the walk may end here


def _taking(kind: str) -> Goal:
    return lambda v, d: d["kind"] == kind


def _avoiding(g: nx.MultiDiGraph, kind: str) -> Goal:
    return lambda v, d: kind not in _fair_enabled(g, v)


def _reaching(node: int) -> Goal:
    return lambda v, d: v == node


def _walk(h: nx.MultiDiGraph, comp: set[int], start: int, goal: Goal) -> list[tuple[int, str, int]]:
    """BFS inside ``comp``: the shortest edge list from ``start`` whose last edge (target, data) meets ``goal``.
    Edges are tried in (action, target) order, so the walk is the same on every run."""
    back: dict[int, tuple[int, str]] = {}
    queue, seen = deque([start]), {start}
    while queue:
        u = queue.popleft()
        for _, v, key, d in sorted(h.out_edges(u, keys=True, data=True), key=lambda e: (e[2], e[1])):
            if v not in comp:
                continue
            if goal(v, d):
                steps = [(u, key, v)]
                while u != start:
                    u, key = back[u]
                    steps.append((u, key, steps[-1][0]))
                return steps[::-1]
            if v not in seen:
                seen.add(v)
                back[v] = (u, key)
                queue.append(v)
    raise AssertionError(f"no walk from {start} inside its strongly connected component")   # impossible in an SCC


# -- actions ------------------------------------------------------------------------------------
def used_actions(g: nx.MultiDiGraph) -> tuple[set[str], set[str]]:
    """(names on any edge, names on an edge that changes the state)."""
    on_edges, effective = set(), set()
    for u, v, d in g.edges(data=True):
        name = edge_name(d)
        on_edges.add(name)
        if u != v:
            effective.add(name)
    return on_edges, effective


def analyse(g: nx.MultiDiGraph, assumptions: Iterable[Assumption] = ASSUMPTIONS, limit: int | None = None) -> Report:
    """Every analysis on one graph."""
    dead, timer_only = deadlocks(g)
    stuck = cannot_settle(g)
    on_edges, effective = used_actions(g)

    def findings(kind: str, nodes: list[int]) -> tuple[Finding, ...]:
        return tuple(Finding(kind, n, path_to(g, n)) for n in nodes[:limit])

    return Report(
        profile=g.graph.get("profile", "?"), scope=g.graph.get("scope"), states=g.number_of_nodes(),
        edges=g.number_of_edges(), truncated=bool(g.graph.get("truncated", False)),
        dead=findings("dead", dead), timer_only=findings("timer-only", timer_only),
        cannot_settle=findings("cannot-settle", stuck), cannot_settle_count=len(stuck),
        cycles=tuple((a, tuple(fair_cycles(g, a))) for a in assumptions),
        unreachable=tuple(n for n in _offered(g) if n not in on_edges),
        effect_free=tuple(n for n in _offered(g) if n in on_edges and n not in effective),
        unknown=tuple(sorted(on_edges - set(ACTION_NAMES))))


__all__ = ["ACTION_NAMES", "ASSUMPTIONS", "Assumption", "FAIR", "TIMERS", "analyse", "cannot_settle", "deadlocks",
           "fair_cycles", "path_to"]

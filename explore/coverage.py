"""Coverage of the abstract graph: which of its states and edges an exploration's steps mapped to.

The denominator is the model graph (``model.graph.build``) for the exploration's member count, with
the model scope that matches its coordinator configuration (deferred appends, initial delay, unload).
The explored abstract states and edges are compared without free slots (``explore.space.unpadded``);
an abstract state with more slots than members (E0 keeps heartbeat ops of removed members) is
counted as covered but lies outside the N-slot graph, so the fraction only counts the intersection.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import AbstractSet as Set

import networkx as nx

from explore import new_member_timing
from explore.deadlines import REASON as UNTIMED, Timing, timed_walk, timing
from explore.timedmap import TICK, TimedMap, TimedMapBuilder
from explore.space import ExploreSpec, unpadded
from harness.client_versions import client_version_for
from harness.scope import Scope as HarnessScope
from harness.world import World
from model.graph import build
from model.quotient import applies as coarse, build_quotient, coarse_slots, quotient
from model.state import FREE, AbstractAction, Scope, State


@lru_cache(maxsize=16)
def model_graph_sets(spec: ExploreSpec) -> tuple[frozenset[State], frozenset[tuple[State, str, State]]]:
    world = World(spec.profile, spec.scope, clients=spec.kinds, record=False)
    config = world.coord.config
    scope = Scope(members=spec.members, deferred_appends=config.append_mode == "deferred",
                  initial_delay=config.group_initial_rebalance_delay_ms > 0, max_appends=2,
                  unload=spec.scope.unload)
    g = build(scope, spec.profile)
    states = {n: unpadded(s) for n, s in g.nodes(data="state")}
    edges = frozenset((states[u], kind, states[v]) for u, v, kind in g.edges(data="kind"))
    return frozenset(states.values()), edges


def coverage(spec: ExploreSpec, states: set[State], edges: set[tuple[State, str, State]]) -> dict[str, int]:
    """Covered abstract states/edges of the N-slot model graph, and the graph's sizes."""
    g_states, g_edges = model_graph_sets(spec)
    return {"model_states": len(g_states), "model_edges": len(g_edges),
            "covered_states": len(states & g_states), "covered_edges": len(edges & g_edges)}


# --- the gate's coverage map: reachable abstract edges per profile, and why the others are not ----------------
#
# The denominator (DESIGN.md §6 "Coverage"), chosen so that 100 % is possible and every edge left out has
# a reason a reader can check:
#
# * the model graph is ``model.graph.build`` with 3 member slots — the gate's worlds have 3 clients — and
#   each walk scope's coordinator switches (deferred appends, initial delay, unload), ``max_appends=2``
#   (every scope's graph is cut there; a concrete state with more pending appends lies outside the map,
#   as does one with more than 3 member identities, which crashes and fresh adversarial joins can make);
# * edges are counted up to slot symmetry: the label names the acting slot by its contents, not its
#   index, because two slots with equal contents are interchangeable (the model's symmetry reduction),
#   and the refinement check credits a step to whichever of them comes first;
# * stutters (self-loops) are left out: refinement records a step as an edge only when the abstract
#   state changes;
# * an edge whose action no client or environment action of the scope can produce is *not offered*
#   (``not_offered`` argues each case from what the clients send); edges that lie only beyond such
#   edges are *not offered* too (their source is unreachable with the offered actions);
# * where liveness is deadline arithmetic with fixed session timeouts (0.10.0), an edge no run takes once each
#   timer's place in time is counted is *not reachable* (``explore.deadlines``: a member's ops share one deadline,
#   the clock waits for due timers, the DelayedJoin outlasts the ops of the members it waits for — each from
#   SPEC.md); the model forgets time and offers it, no concrete coordinator can take it;
# * edges are labelled by the action a step *is* (harness/labels.py names it), so two actions between
#   the same two abstract states are two edges, each creditable.
# The profile's map is the union of its scopes' maps; the reachable edges are the denominator, and the
# uncovered ones are listed as "not reached in budget".

EdgeKey = tuple[State, str, State]   # (unpadded before, action up to symmetry, unpadded after)
_GROUP_LEVEL = frozenset({"OffsetCommit/simple"})
NOT_REACHED = "not reached in budget"
#: what the search knows of a reachable edge it did not cover (the reason column reads "NOT_REACHED: <this>")
SOURCE_UNREACHED = "its source state was never reached"
NOT_REALISED = ("tried from kept runs of its source, never realised (a concrete situation the abstract state does not "
                "record: op counts, deadline order, what was stored)")
NOT_TRIED = "its source state was reached, no search tried the edge"


def edge_key(before: State, action: object, after: State) -> EdgeKey:
    """The coverage key of a refinement edge (padded states, ``model.state.AbstractAction``) — of a model graph's edge
    where the states are already in the coverage quotient (``coverage_key`` for a step of a run)."""
    kind, slot, arg = action.kind, action.slot, action.arg   # type: ignore[attr-defined]
    label = kind
    # a simple commit is the group's, not a slot's: the model's action has none, while the labelled refinement
    # names the free slot its requester would take (harness/labels.py) — one key for both
    if slot >= 0 and kind not in _GROUP_LEVEL:
        acting = before.slots[slot] if slot < len(before.slots) else FREE
        label += f"({acting.short()})"
    if arg:
        label += f"[{arg}]"
    return unpadded(before), label, unpadded(after)


def coverage_key(profile: str, before: State, action: object, after: State) -> EdgeKey | None:
    """The coverage key of a refinement edge of a run on ``profile``: its states and acting slot in the coverage
    quotient (model/quotient.py: liveness-op bookkeeping that nothing depends on, forgotten on the releases where it is
    inert); None when the step only changed that bookkeeping (a stutter of the quotient)."""
    if not coarse(profile):
        return edge_key(before, action, after)
    q_before, q_after = quotient(before, profile), quotient(after, profile)
    if q_before == q_after:
        return None
    in_place = replace(before, slots=coarse_slots(before.slots, profile))   # the acting slot keeps its index
    _, label, _ = edge_key(in_place, action, q_after)
    return unpadded(q_before), label, unpadded(q_after)


def run_state(profile: str, state: State) -> State:
    """A run's abstract state as coverage counts it (unpadded, in the coverage quotient)."""
    return unpadded(quotient(state, profile))


def not_offered(kind: str, arg: str, scope: HarnessScope, kinds: tuple[str, ...], profile: str) -> str | None:
    """Why no run of ``scope`` with clients of ``kinds`` can take abstract action ``kind[arg]``, or None.

    Argued from what the clients send (harness/clients.py) and what the world offers (harness/world.py):
    """
    version = client_version_for(profile)
    if kind == "JoinGroup/changed" and not scope.resubscribes:
        # a Java consumer (and a puppet, harness/puppets.py) changes its subscription only where the scope lets it
        # (harness/clients.py); an adversarial client always sends ClientConfig.protocols
        return "the scope has resubscribes=False: no client changes its protocol metadata"
    if kind == "JoinGroup/new" and version.join_group_v4:
        # Client._request sets require_known_member_id = join_group_v4 for every JoinGroup, so a first
        # join always goes pending (MEMBER_ID_REQUIRED, KIP-394) and no static member exists
        return f"every {version.name} client's first JoinGroup requires a known member id (KIP-394)"
    if kind in ("LeaveGroup",) and not scope.leaves:
        return "the scope has leaves=False: no client sends LeaveGroup"
    if kind == "OffsetCommit" and not scope.commits:
        return "the scope has commits=False: no client sends OffsetCommit"
    if kind == "OffsetCommit/simple":
        if not scope.commits:
            return "the scope has commits=False: no client sends OffsetCommit"
        if "adversarial" not in kinds:
            # a Java consumer commits only in STABLE, with the generation (>= 1) it joined
            return "only an adversarial client commits with generation -1, and the scope has none"
    if kind == "CompleteAppend" and arg == "error" and not scope.faults:
        return "the scope has faults=False: every log append succeeds"
    return None


@dataclass(frozen=True)
class CoverageMap:
    """One profile's map: the reachable edges and states, and every other model edge with its reason."""

    profile: str
    reachable_edges: frozenset[EdgeKey]
    reachable_states: frozenset[State]
    excluded: dict[EdgeKey, str]          # model edges outside the denominator -> why
    model_edges: int                      # distinct model edges of the union (up to symmetry, no stutters)


_EXCLUSION_RANK = ("its source", "")   # which reason a multi-scope edge keeps (first match wins)


@lru_cache(maxsize=16)
def _graph(profile: str, mscope: Scope) -> nx.MultiDiGraph:
    """The model graph the map is made of: the coverage quotient's where liveness-op bookkeeping is inert (2.4.1,
    model/quotient.py; tests/test_quotient.py checks that every step from a fine state and from its quotient says the
    same), else the model's own."""
    return build_quotient(mscope, profile) if coarse(profile) else build(mscope, profile)


def _model_scope(profile: str, scope: HarnessScope) -> Scope:
    config = World(profile, scope, clients=3, record=False).coord.config   # its coordinator configuration only
    return Scope(members=3, deferred_appends=config.append_mode == "deferred",
                 initial_delay=config.group_initial_rebalance_delay_ms > 0, max_appends=2, unload=scope.unload)


def _scope_map(profile: str, scope: HarnessScope, kinds: tuple[str, ...]
               ) -> tuple[set[EdgeKey], set[State], dict[EdgeKey, str]]:
    mscope = _model_scope(profile, scope)
    g = _graph(profile, mscope)
    state = dict(g.nodes(data="state"))
    reasons: dict[EdgeKey, str] = {}
    offered: dict[int, list[tuple[int, EdgeKey]]] = {}
    for u, v, d in g.edges(data=True):
        if u == v:
            continue
        key = edge_key(state[u], _Label(d["kind"], d["slot"], d["arg"]), state[v])
        why = not_offered(d["kind"], d["arg"], scope, kinds, profile)
        if why is not None:
            reasons.setdefault(key, why)
        else:
            offered.setdefault(u, []).append((v, key))
    seen, queue = {0}, [0]
    for u in queue:                       # BFS over the offered edges only
        for v, _ in offered.get(u, ()):
            if v not in seen:
                seen.add(v)
                queue.append(v)
    edges = {key for u in seen for _, key in offered.get(u, ())}
    states = {unpadded(state[u]) for u in seen}
    for u, items in sorted(offered.items()):
        for _, key in items:
            if u not in seen and key not in edges:
                reasons.setdefault(key, "its source state lies beyond actions the world does not offer")
    mscope, kinds_offered = _offered_kinds(profile, scope, kinds)
    if new_member_timing.applies(profile):
        # 2.4: only what no run takes whatever came before (explore/new_member_timing.py ``ruled_out``); the timed
        # walk's other exclusions hold only for runs within the map's member slots, so they only guide the sweep
        out = new_member_timing.ruled_out(profile, mscope, lambda a: (a.kind, a.arg) in kinds_offered,
                                          [state[u] for u in seen]) & edges
        for key in sorted(out, key=lambda k: (k[0].short(), k[1], k[2].short())):
            reasons.setdefault(key, new_member_timing.REASON)
        return edges - out, states, reasons
    timed = _timed(profile, mscope, kinds_offered)
    if timed is not None:        # 0.10: what time rules out (explore/deadlines.py argues it)
        keys, reached, _ = timed
        for key in sorted(edges - keys.keys(), key=lambda k: (k[0].short(), k[1], k[2].short())):
            reasons.setdefault(key, UNTIMED)
        edges &= keys.keys()
        states &= reached
    return edges, states, reasons


@lru_cache(maxsize=16)
def _timed(profile: str, mscope: Scope, kinds_offered: frozenset[tuple[str, str]]
           ) -> tuple[dict[EdgeKey, frozenset[Timing]], frozenset[State], TimedMap] | None:
    """The edge keys (with the timings of their sources) and states of the timed graph (explore/deadlines.py), and the
    graph projected on (state, timing) for the sweep's planning (explore/plan.py) — one walk, once per coordinator
    scope and offered actions: the coverage map and the sweep's per-scope targets ask for the same."""
    def offered(action: AbstractAction) -> bool:
        return (action.kind, action.arg) in kinds_offered

    got, project, seen, spend = timed_walk(profile, mscope, offered), timing, None, 1
    if got is None:              # 2.4: the new members' op times (explore/new_member_timing.py)
        got, project = new_member_timing.timed_walk(profile, mscope, offered), new_member_timing.timing
        seen, spend = new_member_timing.seen, new_member_timing.SPEND
    if got is None:
        return None
    states, walk = got
    keys: dict[EdgeKey, set[Timing]] = {}
    builder = TimedMapBuilder()
    plain: dict[int, State] = {}
    # (state, the action object's id (the walk holds it), successor) -> label, source timings (None: a stutter)
    labels: dict[tuple[int, int, int], tuple[str, set[Timing] | None]] = {}
    numbers: dict[tuple[int, tuple[int, ...], int], int] = {}     # timed node -> its projection's number

    def number(node: tuple[int, tuple[int, ...], int]) -> int:
        found = numbers.get(node)
        if found is None:
            sid, codes, join = node
            state = states[sid]
            found = numbers[node] = builder.node((plain.setdefault(sid, unpadded(state)), project(state, codes, join)))
        return found

    for node, moves in walk:
        sid = node[0]
        here_state = states[sid]
        here = number(node)
        for action, after in moves:
            nid = after[0]
            there_state = states[nid]
            there = number(after)
            if action is None:
                builder.move(here, TICK, there)
                continue
            got = labels.get((sid, id(action), nid))
            if got is None:
                key = edge_key(here_state, action, there_state)
                got = labels[(sid, id(action), nid)] = key[1], keys.setdefault(key, set()) if nid != sid else None
            label, sources = got
            if sources is not None:
                sources.add(builder.projs[here][1])
            builder.move(here, label, there)
    return ({k: frozenset(v) for k, v in keys.items()}, frozenset(plain[n] for n in plain), builder.done(seen, spend))


def _offered_kinds(profile: str, scope: HarnessScope, kinds: tuple[str, ...]
                   ) -> tuple[Scope, frozenset[tuple[str, str]]]:
    """The model scope of ``scope``'s coordinator and the (kind, arg) of the model actions its clients offer."""
    mscope = _model_scope(profile, scope)
    kinds = tuple(sorted(set(kinds)))
    g = _graph(profile, mscope)
    return mscope, frozenset((d["kind"], d["arg"]) for _, _, d in g.edges(data=True)
                             if not_offered(d["kind"], d["arg"], scope, kinds, profile) is None)


@lru_cache(maxsize=64)
def source_timings(profile: str, scope: HarnessScope, kinds: tuple[str, ...]) -> dict[EdgeKey, frozenset[Timing]]:
    """Per reachable edge of one scope's map, the timings of its source (``explore.deadlines.timing``) a timed run
    takes it from — empty where time rules nothing out (no timed graph for the profile)."""
    timed = _timed(profile, *_offered_kinds(profile, scope, kinds))
    return {} if timed is None else timed[0]


def timed_map(profile: str, scope: HarnessScope, kinds: tuple[str, ...]) -> TimedMap | None:
    """The timed graph of one scope's map projected on (state, timing) (explore/plan.py); None where time rules
    nothing out."""
    timed = _timed(profile, *_offered_kinds(profile, scope, kinds))
    return None if timed is None else timed[2]


@lru_cache(maxsize=64)
def scope_edges(profile: str, scope: HarnessScope, kinds: tuple[str, ...]) -> frozenset[EdgeKey]:
    """The reachable edges of one scope's map, for a world with clients of ``kinds`` (a directed search's targets
    for that world: an edge of another scope's map may need what this world's coordinator does not do)."""
    return frozenset(_scope_map(profile, scope, tuple(sorted(set(kinds))))[0])


@dataclass(frozen=True)
class _Label:
    kind: str
    slot: int
    arg: str


def _rank(why: str) -> int:
    return next(i for i, prefix in enumerate(_EXCLUSION_RANK) if why.startswith(prefix))


@lru_cache(maxsize=8)
def coverage_map(profile: str, scopes: tuple[tuple[HarnessScope, tuple[str, ...]], ...]) -> CoverageMap:
    """The union of the scopes' maps (each scope with the union of the client kinds its walks use)."""
    edges: set[EdgeKey] = set()
    states: set[State] = set()
    reasons: dict[EdgeKey, str] = {}
    for scope, kinds in scopes:
        e, s, r = _scope_map(profile, scope, kinds)
        edges |= e
        states |= s
        for key, why in r.items():
            reasons[key] = min((reasons.get(key, why), why), key=_rank)
    excluded = {k: v for k, v in reasons.items() if k not in edges}
    return CoverageMap(profile, frozenset(edges), frozenset(states), excluded, len(edges) + len(excluded))


def _not_reached(edge: EdgeKey, states: set[State], tried: Set[EdgeKey]) -> str:
    detail = SOURCE_UNREACHED if edge[0] not in states else NOT_REALISED if edge in tried else NOT_TRIED
    return f"{NOT_REACHED}: {detail}"


@dataclass(frozen=True)
class CoverageReport:
    """Covered / reachable abstract states and edges of one profile, and every uncovered edge with its reason."""

    profile: str
    covered_states: int
    reachable_states: int
    covered_edges: int
    reachable_edges: int
    model_edges: int
    outside_map: int                          # covered abstract edges outside the 3-slot, 2-append map
    uncovered: tuple[tuple[str, str, str, str], ...]   # (before, action, after, reason), sorted

    @property
    def missing(self) -> int:
        """Reachable edges not reached in budget (the gate warns about these)."""
        return self.reachable_edges - self.covered_edges

    def to_json(self) -> dict[str, float]:
        return {"abstract_states_covered": float(self.covered_states),
                "abstract_states_reachable": float(self.reachable_states),
                "abstract_edges_covered": float(self.covered_edges),
                "abstract_edges_reachable": float(self.reachable_edges),
                "abstract_edges_model": float(self.model_edges),
                "abstract_edges_not_reached": float(self.missing),
                "abstract_edges_not_offered": float(self.model_edges - self.reachable_edges),
                "abstract_edges_outside_map": float(self.outside_map)}


def measure(cmap: CoverageMap, states: set[State], edges: set[EdgeKey], tried: Set[EdgeKey] = frozenset()
            ) -> CoverageReport:
    """Compare what the steps covered (unpadded states, ``edge_key`` edges) with the map; ``tried``: the edges a
    sweep went for (explore/sweep.py), which tells an uncovered edge's reason apart."""
    covered = edges & cmap.reachable_edges
    rows = [(b.short(), a, t.short(), _not_reached((b, a, t), states, tried))
            for b, a, t in cmap.reachable_edges - covered]
    rows += [(b.short(), a, t.short(), why) for (b, a, t), why in cmap.excluded.items()]
    rows.sort(key=lambda r: (not r[3].startswith(NOT_REACHED), r[3], r[0], r[1], r[2]))
    return CoverageReport(cmap.profile, len(states & cmap.reachable_states), len(cmap.reachable_states),
                          len(covered), len(cmap.reachable_edges), cmap.model_edges,
                          len(edges - cmap.reachable_edges - set(cmap.excluded)), tuple(rows))

"""The reachable abstract transition graph of one (scope, profile): BFS over model.step (DESIGN.md §6).

The graph is a ``networkx.MultiDiGraph`` because two different actions may lead from one state to
the same state (a member's Heartbeat and its OffsetCommit often do). Its parts:

nodes   ``0 … n-1`` in BFS discovery order (successors visited sorted by action, then by target
        text), so the numbering is the same on every run. Attributes: ``state`` (the canonical
        ``State``), ``label`` (its one-line text), ``group`` (group state), ``depth`` (BFS depth),
        ``parent``/``via`` (the BFS-tree predecessor and the action from it: -1/"" at the root, so
        a BFS-shortest path is read back without search), ``cut`` (how many successors the scope's
        ``max_appends`` cut off here) and ``cut_actions`` (the actions that lost them, comma-separated,
        so an analysis still knows such an action was enabled).
edges   ``(u, v, key)`` with key = the action text, e.g. ``Heartbeat(1)``, ``CompleteAppend[ok]``;
        attributes ``kind``, ``slot``, ``arg``. There is one edge per (state, action, successor)
        triple that ``model.step.successors`` returns — symmetric slots give separate edges, and an
        action that leaves the state unchanged is a self-loop — so ``edges`` pins ``successors``
        itself.
graph   ``profile`` (name), ``scope`` (the ``Scope``), ``distinct_states``, ``edges``, ``depth`` (max
        BFS depth), ``truncated`` (True when any successor was cut by ``max_appends``).

Truncation is detected by stepping with a scope of much larger ``max_appends`` (nothing else in
the rules reads it) and dropping, ourselves, the successors the real scope would drop.
"""
from __future__ import annotations

from dataclasses import replace

import networkx as nx

from model.profiles import ModelProfile, get_model_profile
from model.state import GROUP_STATES, AbstractAction, Scope, State, initial
from model.step import enabled, step

#: how many more pending appends the comparison scope allows (an action adds one at most today)
_HEADROOM = 8


def _profile(profile: str | ModelProfile) -> ModelProfile:
    return profile if isinstance(profile, ModelProfile) else get_model_profile(profile)


def expand(state: State, p: ModelProfile, scope: Scope,
           wide: Scope) -> tuple[list[tuple[AbstractAction, State]], list[AbstractAction]]:
    """Successors of ``state`` sorted by (action, target text), and one action per successor the scope cut."""
    out: list[tuple[AbstractAction, State]] = []
    cut: list[AbstractAction] = []
    for action in sorted(enabled(state, p, scope)):
        for target in step(state, action, p, wide):
            if len(target.appends) <= scope.max_appends:
                out.append((action, target))
            else:
                cut.append(action)
    return out, cut


def build(scope: Scope, profile: str | ModelProfile) -> nx.MultiDiGraph:
    """Every state reachable from ``initial(scope)`` and every transition between them."""
    p = _profile(profile)
    wide = replace(scope, max_appends=scope.max_appends + _HEADROOM)
    g = nx.MultiDiGraph(profile=p.name, scope=scope)
    start = initial(scope)
    ids: dict[State, int] = {start: 0}
    order = [start]
    g.add_node(0, state=start, label=start.short(), group=start.group, depth=0, parent=-1, via="", cut=0,
               cut_actions="")
    edges = 0
    for u, state in enumerate(order):   # `order` grows while we walk it: a FIFO queue
        succ, cut = expand(state, p, scope, wide)
        g.nodes[u]["cut"] = len(cut)
        g.nodes[u]["cut_actions"] = ",".join(sorted({str(a) for a in cut}))
        depth = g.nodes[u]["depth"]
        for action, target in succ:
            v = ids.get(target)
            if v is None:
                v = ids[target] = len(order)
                order.append(target)
                g.add_node(v, state=target, label=target.short(), group=target.group, depth=depth + 1,
                           parent=u, via=str(action), cut=0, cut_actions="")
            g.add_edge(u, v, key=str(action), kind=action.kind, slot=action.slot, arg=action.arg)
            edges += 1
    g.graph.update(distinct_states=len(order), edges=edges, depth=max(d for _, d in g.nodes(data="depth")),
                   truncated=any(c for _, c in g.nodes(data="cut")))
    return g


def node_of(g: nx.MultiDiGraph, state: State) -> int | None:
    """The node of ``state`` (canonical form expected), or None when it is not reachable."""
    return next((n for n, s in g.nodes(data="state") if s == state), None)


def group_counts(g: nx.MultiDiGraph) -> dict[str, int]:
    """How many states have each group state, in the order of ``model.state.GROUP_STATES``."""
    counts = {name: 0 for name in GROUP_STATES}
    for _, group in g.nodes(data="group"):
        counts[group] += 1
    return counts


def quotient(g: nx.MultiDiGraph) -> dict[tuple[str, str], dict[str, int]]:
    """The group-state quotient: (from group, to group) -> {action name without slot: model edges}.

    Keys and inner keys are sorted (GROUP_STATES order, then by name), so exports are stable.
    """
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for u, v, d in g.edges(data=True):
        pair = (g.nodes[u]["group"], g.nodes[v]["group"])
        name = f"{d['kind']}[{d['arg']}]" if d.get("arg") else str(d["kind"])
        inner = counts.setdefault(pair, {})
        inner[name] = inner.get(name, 0) + 1
    rank = {s: i for i, s in enumerate(GROUP_STATES)}
    return {pair: dict(sorted(counts[pair].items()))
            for pair in sorted(counts, key=lambda p: (rank[p[0]], rank[p[1]]))}

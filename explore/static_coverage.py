"""The static scope's coverage map (KIP-345): the reachable abstract edges of a world whose members are all static,
with its own denominator beside the walk scopes' map (explore/coverage.py), and why the other edges are left out.

The world is the gate's static walk (kgc/gate.py ``STATIC_WALKS["static"]``): three clients that hold two
group.instance.ids between them — two static consumers ("i0", "i2") and an adversary that forges the first one's
("i0") — so a state has at most two static members, every JoinGroup carries an instance id, and restarts, fencing and
the KAFKA-10284 persist path are what there is to reach. The model graph is the coverage quotient's
(model/quotient.py) with the scope's coordinator switches and ``static``, 3 member slots (two members and the ops a
replaced id leaves behind, which the quotient forgets where they are inert) and at most ``STATIC_APPENDS`` pending
appends: a static store beside the leader's group record is already two, and each more multiplies the states by the
pairs of append kinds without a rule that is not met with one. Edges are counted as in the walk scopes' map (up to
slot symmetry, stutters out, labelled by the action the step is); it is walked only along offered actions, so an edge
left out is listed with its reason only where its source is reached.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from explore.coverage import CoverageMap, EdgeKey, _Label, _model_scope, edge_key, not_offered
from explore.space import unpadded
from harness.scope import Scope as HarnessScope
from model.graph import expand
from model.profiles import get_model_profile
from model.quotient import quotient
from model.state import FREE, AbstractAction, State, initial

#: the group.instance.ids the static world's clients hold between them
STATIC_INSTANCES = 2
#: pending appends the static map grows to (see the module doc)
STATIC_APPENDS = 1
#: the client kinds of the static world (kgc/gate.py STATIC_WALKS["static"])
STATIC_KINDS = ("static", "static-adversarial", "static")


def static_not_offered(state: State, action: AbstractAction, scope: HarnessScope, profile: str) -> str | None:
    """Why no run of the static world takes ``action`` from ``state``, or None (explore.coverage.not_offered for what
    the scope switches off)."""
    kind = action.kind
    if kind in ("JoinGroup/new", "JoinGroup/new-pending"):
        # StaticConsumer and StaticAdversary send their group.instance.id with every JoinGroup (harness/clients.py)
        return "every client of the static world joins with a group.instance.id"
    if kind == "JoinGroup/static-new" and sum(s.static for s in state.slots) >= STATIC_INSTANCES:
        return f"the static world's clients hold {STATIC_INSTANCES} group.instance.ids, each already a member's"
    return not_offered(kind, action.arg, scope, ("adversarial", "java"), profile)


def _in_use(state: State) -> int:
    return sum(s != FREE for s in state.slots)


def _successors(state: State, profile: str, mscope: object) -> list[tuple[AbstractAction, State]]:
    """The model's successors in the quotient, stepped with a spare slot (model/quotient.py ``build_quotient``)."""
    p = get_model_profile(profile)
    wide = replace(mscope, members=mscope.members + 1, max_appends=mscope.max_appends + 8)  # type: ignore[attr-defined]
    succ, _ = expand(replace(state, slots=state.slots + (FREE,)), p, wide, wide)
    out = []
    for action, target in succ:
        after = quotient(target, profile)
        if len(after.appends) <= mscope.max_appends and _in_use(after) <= mscope.members:  # type: ignore[attr-defined]
            out.append((action, replace(after, slots=after.slots[:mscope.members])))  # type: ignore[attr-defined]
    return out


@lru_cache(maxsize=8)
def static_map(profile: str, scope: HarnessScope) -> CoverageMap:
    """The static world's map on ``profile`` (breadth first from the empty group along offered actions)."""
    mscope = replace(_model_scope(profile, scope), static=True, max_appends=STATIC_APPENDS)
    start = initial(mscope)
    seen, queue = {start}, [start]
    edges: set[EdgeKey] = set()
    reasons: dict[EdgeKey, str] = {}
    for state in queue:
        for action, after in _successors(state, profile, mscope):
            if after == state:
                continue
            key = edge_key(state, _Label(action.kind, action.slot, action.arg), after)
            why = static_not_offered(state, action, scope, profile)
            if why is not None:
                reasons.setdefault(key, why)
                continue
            edges.add(key)
            if after not in seen:
                seen.add(after)
                queue.append(after)
    excluded = {k: v for k, v in sorted(reasons.items(), key=lambda kv: (kv[0][0].short(), kv[0][1], kv[0][2].short()))
                if k not in edges}
    return CoverageMap(profile, frozenset(edges), frozenset(unpadded(s) for s in seen), excluded,
                       len(edges) + len(excluded))


__all__ = ["STATIC_APPENDS", "STATIC_INSTANCES", "STATIC_KINDS", "static_map", "static_not_offered"]

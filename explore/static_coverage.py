"""The static scope's coverage map (KIP-345): the reachable abstract edges of a world whose members are all static,
with its own denominator beside the walk scopes' map (explore/coverage.py), and why the other edges are left out.

The world is the gate's static walk (kgc/gate.py ``STATIC_WALKS["static"]``): three clients that hold two
group.instance.ids between them — two static consumers ("i0", "i2") and an adversary that forges the first one's
("i0") — so a state has at most two static members, every JoinGroup carries an instance id, and restarts, fencing and
the KAFKA-10284 persist path are what there is to reach. A client may restart with the other assignor list
(``Scope.assignor_upgrades``): that restart — like any restart with other metadata — is the ``changed`` cell of
JoinGroup/static-rejoin, which the graph's own actions do not carry, so its edges are judged by the labelled refinement
but are not in this map's denominator. The model graph is the coverage quotient's (model/quotient.py) with the
scope's coordinator switches and ``static``, 3 member slots (two members and the ops a replaced id leaves behind,
which the quotient forgets where they are inert) and at most ``STATIC_APPENDS`` pending appends: a static store
beside the leader's group record is already two, and each more multiplies the states by the pairs of append kinds
without a rule that is not met with one. Edges are counted as in the walk scopes' map (up to slot symmetry, stutters
out, labelled by the action the step is); it is walked only along offered actions, so an edge left out is listed with
its reason only where its source is reached.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from explore.coverage import CoverageMap, EdgeKey, _Label, _model_scope, edge_key, not_offered
from explore.space import unpadded
from harness.scope import Scope as HarnessScope
from model.graph import expand
from model.profiles import get_model_profile
from model.releases import fact
from model.quotient import quotient
from model.state import FREE, AbstractAction, State, initial

#: the group.instance.ids the static world's clients hold between them
STATIC_INSTANCES = 2
#: pending appends the static map grows to (see the module doc)
STATIC_APPENDS = 1
#: the client kinds of the static world (kgc/gate.py STATIC_WALKS["static"])
STATIC_KINDS = ("static", "static-adversarial", "static")


#: why the static map leaves out a state in which a Stable group's leader owes a SyncGroup (``leader_owes_sync``)
LEADER_OWES_SYNC = ("not reachable: a Stable group's leader owes no SyncGroup (its own SyncGroup took it out of "
                    "pendingSyncMembers, only a join completion puts members in, and a static replacement keeps the "
                    "set; the model's revert of a failed store cannot tell which gone id was the old one)")


def leader_owes_sync(state: State) -> bool:
    """A Stable group whose leader is in pendingSyncMembers [3.x] — a state of the model graph no run reaches.

    The model's revert of a failed static store (model/static.py ``_revert``) does not know which gone id was the old
    one, so it also hands back the pending sync of an id an earlier replacement left behind (SPEC.md Corrections 3).
    In Kafka (GroupCoordinator.scala / GroupMetadata.scala 3.9.0-rc3) the leader never owes a SyncGroup in Stable:
    pendingSyncMembers gains members only at a join completion (onCompleteJoin, GC 1596), every member then; the group
    turns Stable only in the callback of the leader's SyncGroup (doSyncGroup), which took the leader out first
    (removePendingSyncMember, GC 602); every rebalance clears the set (prepareRebalance → removeSyncExpiration, GC
    1484, 1613-1617); and the leader changes in Stable only by a removal (which rebalances, GC 1514) or a static
    replacement (replaceStaticMember, GM 319-340), whose new id is in no set — and whose revert restores an old id that
    was the leader when it was replaced, so, by the same argument, owed no SyncGroup then (nor later: it was no member
    at any join completion since)."""
    return state.group == "Stable" and any(s.member and s.leader and s.pending_sync for s in state.slots)


def static_not_offered(state: State, action: AbstractAction, scope: HarnessScope, profile: str) -> str | None:
    """Why no run of the static world takes ``action`` from ``state``, or None (explore.coverage.not_offered for what
    the scope switches off)."""
    kind = action.kind
    if kind in ("JoinGroup/new", "JoinGroup/new-pending"):
        # StaticConsumer and StaticAdversary send their group.instance.id with every JoinGroup (harness/clients.py)
        return "every client of the static world joins with a group.instance.id"
    if kind == "JoinGroup/static-new" and sum(s.static for s in state.slots) >= STATIC_INSTANCES:
        return f"the static world's clients hold {STATIC_INSTANCES} group.instance.ids, each already a member's"
    if kind == "JoinGroup/changed":
        return _changed_not_offered(state, profile)
    return not_offered(kind, action.arg, scope, ("adversarial", "java"), profile)


def _changed_not_offered(state: State, profile: str) -> str | None:
    """JoinGroup/changed — a member's own id with metadata other than the member's. No client of the static world
    changes its subscription, but a member's metadata can stop being its client's: a failed store of a static restart
    in Stable (KAFKA-10284, 2.6.1+) reverts the id and keeps the restart's protocols (SPEC.md Corrections 2;
    GroupCoordinator.scala 2.7.0 lines 1045-1061, 3.9.0-rc3 lines 1367-1383: ``oldProtocols`` is read after
    updateMember). Client 0 and the adversary share "i0" with other metadata ("c0", "c1"; an assignor upgrade too), so
    the one whose restart's store failed leaves the other's id with its own metadata, and the other's next JoinGroup
    with that id is this action. Before 2.6.1 a restart is answered at once (no store, no revert); and before the
    group's first join completion (generation 0) no store has been taken."""
    if not fact("static-rejoin-persisted-in-stable", profile):
        return "no revert before 2.6.1 (a static restart is answered at once): a member's metadata is its client's"
    if state.fresh:
        return "no revert before the first generation (no static store yet): a member's metadata is its client's"
    return None


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
            why = LEADER_OWES_SYNC if leader_owes_sync(after) else static_not_offered(state, action, scope, profile)
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


__all__ = ["LEADER_OWES_SYNC", "STATIC_APPENDS", "STATIC_INSTANCES", "STATIC_KINDS", "leader_owes_sync", "static_map",
           "static_not_offered"]

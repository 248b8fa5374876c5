"""model/step.py's UnloadGroup and LoadGroup over Z3 terms: the partition emigrates and comes back (SPEC.md §3.7;
``scope.unload``, a vocabulary with ``unload``). Read side by side with model/step.py ``_unload`` / ``_load``.

Differences of form, not of meaning:
(1) The model loads the first k slots as members (slot 0 the leader; with static members, the leader static or not
    and the next j followers static, j = 0..k−1). Here the loaded members are a choice *field* (any non-empty set),
    the leader a choice among them, the static ones a choice field among them (any subset). Followers are
    interchangeable, so the canonical successors are the same.
(2) The orphan append's callback (APPEND_ORPHAN) changes no state; its answer (a JoinGroup of the dead group object,
    model/static.py ``complete_orphan_append``) is to no slot and has no term in outputs.py: the state relation is
    exact, the outputs of an orphan callback are not recorded.
"""
from __future__ import annotations

import z3

from model.outputs import ERROR_ID, HEARTBEAT_OP, NONE_GEN, SESSION
from model.profiles import ModelProfile
from model.state import ABSENT, ABSENT_GROUP, APPEND_ORPHAN, APPEND_STATIC, COMPLETING, EMPTY, MEMBER, NO_JOIN, \
    PREPARING, STABLE
from properties.z3.domain import GROUP, JOIN_OP, KIND, STATUS
from properties.z3.outputs import ERROR, GEN, SHAPE, SOURCE
from properties.z3.rules import FALSE, TRUE, W0, W1, leave_completing
from properties.z3.symbolic import SW, Ws

#: the per-member fields a free slot has False (status and watch aside)
_FLAGS = ("leader", "awaiting_join", "awaiting_sync", "is_new", "pending_sync")


def unload(p: ModelProfile, w: SW) -> Ws:
    """onGroupUnloaded: the cached group dies; its ops and appends are inert for the new one. Parked JoinGroups
    (PreparingRebalance) and SyncGroups (Stable, CompletingRebalance) get NOT_COORDINATOR (§3.7)."""
    b = w.snapshot()
    w.outs.bulk(lambda x: z3.And(b.get("awaiting_join", x), b.is_group(PREPARING)), **{
        "JoinGroup.answered": lambda x: TRUE, "JoinGroup.error": lambda x: ERROR["NOT_COORDINATOR"],
        "JoinGroup.generation": lambda x: GEN[NONE_GEN], "JoinGroup.shape": lambda x: SHAPE[ERROR_ID]})
    w.outs.bulk(lambda x: z3.And(b.get("awaiting_sync", x), b.is_group(STABLE, COMPLETING)), **{
        "SyncGroup.answered": lambda x: TRUE, "SyncGroup.error": lambda x: ERROR["NOT_COORDINATOR"]})
    leave_completing(w)
    w.appends = w.appends.map(lambda k: z3.If(k == KIND[APPEND_STATIC], KIND[APPEND_ORPHAN], k))
    w.group, w.join_op, w.sync_op, w.fresh, w.nma = GROUP[ABSENT_GROUP], JOIN_OP[NO_JOIN], FALSE, TRUE, FALSE
    w.fill("status", STATUS[ABSENT])
    w.fill("watch", W0)
    for f in _FLAGS + (("static", "persist") if w.voc.static else ()):
        w.fill(f, FALSE)
    return [w]


def load(p: ModelProfile, w: SW) -> Ws:
    """onGroupLoaded from the last stored record: nothing, Empty (2.x+), or Stable with its members, each with a
    fresh session (§3.7) — with static members, any of them static."""
    out = [w.copy()]
    if not p.emptied_group_dies:   # an empty-group record (2.x+) loads as Empty
        empty = w.copy()
        empty.group, empty.fresh = GROUP[EMPTY], FALSE
        out.append(empty)
    if p.fresh_is_initial_rebalance:   # 4.x: a group known by its offsets only loads Empty at generation 0
        simple = w.copy()
        simple.group, simple.fresh = GROUP[EMPTY], TRUE
        out.append(simple)
    loaded = w.ctx.choose_field(w.dom, z3.BoolSort())
    leader = w.ctx.choose(w.dom.sort)

    def member(x: z3.ExprRef) -> z3.ExprRef:
        return w.dom.get(loaded, x)
    w.guards.append(member(leader))
    w.group, w.fresh = GROUP[STABLE], FALSE
    w.bulk("status", lambda x: z3.If(member(x), STATUS[MEMBER], STATUS[ABSENT]))
    w.bulk("watch", lambda x: z3.If(member(x), W1, W0))
    w.bulk("leader", lambda x: x == leader)
    for f in _FLAGS[1:] + (("persist",) if w.voc.static else ()):
        w.fill(f, FALSE)
    if w.voc.static:
        static = w.ctx.choose_field(w.dom, z3.BoolSort()) if p.static_members else w.dom.const(FALSE)

        def is_static(x: z3.ExprRef) -> z3.ExprRef:
            return z3.And(member(x), w.dom.get(static, x))
        w.bulk("static", is_static)
    w.outs.bulk(member, **{HEARTBEAT_OP: lambda x: SOURCE[SESSION]})
    return out + [w]

"""model/static.py over Z3 terms: an instance's first join, its restart with member id "", and the store callback
of a persisted id replacement (SPEC.md §3.1 J5a step 4 / step 6, §4.4, §4.6; KIP-345).

Read side by side with model/static.py (same names, same order of effects). Differences of form, not of meaning:
(1) "a free slot takes the old id's heartbeat ops" is a choice of any free member (the model takes the first;
    slots are interchangeable, so the canonical successors are the same); with no free member there is no
    successor, as in the model.
(2) A callback's target ("each slot marked persist") is a choice among the marked members; "the old id's own op,
    if still armed, completes" is a choice of at most one such op.
(3) Which static append is stale is decided with ghost tickets (domain.py): each static append carries the member
    whose replacement it persists. The model counts (stale iff more static appends are pending than slots are
    marked); the encoding allows stale exactly when the tickets can be read as "each marked member has its own
    static append" (``owned``) and the popped append is not the only one of a marked member — or another append,
    re-ticketed to that member, is spare. Over a finite domain, with the pre-state's tickets free, that is the
    model's count exactly (tests/test_z3_static.py); over the unbounded one it is what a proof can state per member.
    A callback for marked member j hands j's other appends' tickets to the popped append's member (j needs none
    any more): the tickets follow every step the model takes.
"""
from __future__ import annotations

import z3

from model.outputs import CURRENT, ERROR_ID, ERROR_PRIOR, NONE_GEN, STATIC, STATIC_FORMER
from model.profiles import ModelProfile
from model.state import ABSENT, ABSENT_GROUP, APPEND_STATIC, COMPLETING, PREPARING
from properties.z3.domain import GROUP, KIND, STATUS, Appends, Expr
from properties.z3.encoding import Terms, free_slot
from properties.z3.outputs import ERROR, GEN, SHAPE, STORE_ERROR
from properties.z3.rules import FALSE, TRUE, W0, W1, WMANY, add_member, check_join, each, maybe_prepare, prepare, \
    reschedule
from properties.z3.symbolic import SW, Ws


def join_static_new(p: ModelProfile, w: SW, i: Expr) -> Ws:
    """J5a step 6: an unknown instance id joins with member id "": addMemberAndRebalance, and the static map
    records it (SPEC.md §3.1)."""
    if w.holds(w.is_group(ABSENT_GROUP)):
        w.group, w.fresh, w.nma = GROUP[p.created_state], TRUE, FALSE
    w.set(i, static=TRUE)
    return each(add_member(p, w, i), lambda x: check_join(p, x))


def _leave_ops_behind(w: SW, i: Expr) -> None:
    """The old member id's heartbeat ops stay armed under that id, and so does its place in pendingSyncMembers
    (SPEC.md Corrections 3): some free member takes them."""
    watch, owed = w.get("watch", i), w.get("pending_sync", i)
    j = w.ctx.choose(w.dom.sort)
    moved = z3.Or(watch != W0, owed)
    w.guards.append(z3.Implies(moved, z3.And(free_slot(w, j), j != i)))
    w.slots["watch"] = w.dom.ite(moved, w.dom.put(w.slots["watch"], j, watch), w.slots["watch"])
    w.slots["pending_sync"] = w.dom.ite(moved, w.dom.put(w.slots["pending_sync"], j, owed), w.slots["pending_sync"])
    w.set(i, watch=W0, pending_sync=FALSE)


def static_rejoin(p: ModelProfile, w: SW, i: Expr, changed: bool = False) -> Ws:
    """J5a step 4: the known instance of member ``i`` restarted and joins with member id "" (``changed``: with
    other protocol metadata). Its parked requests are fenced, its ops left behind, its heartbeat rescheduled, the
    new join parked; then by state (PreparingRebalance waits; otherwise the release's rule)."""
    w.answer(i, "JoinGroup", ERROR["FENCED_INSTANCE_ID"], GEN[NONE_GEN], SHAPE[ERROR_ID],
             when=w.get("awaiting_join", i))
    w.answer(i, "SyncGroup", ERROR["FENCED_INSTANCE_ID"], when=w.get("awaiting_sync", i))
    _leave_ops_behind(w, i)
    w.set(i, awaiting_join=FALSE, awaiting_sync=FALSE, persist=FALSE)
    if not p.static_replacement_keeps_new:   # 4.x (SPEC-4x.md R12): a new member object, never new
        w.set(i, is_new=FALSE)
    ws = [x.set(i, awaiting_join=TRUE) for x in reschedule(p, w, i)]
    if w.holds(w.is_group(PREPARING)):
        return each(ws, lambda x: check_join(p, x))
    rule = p.static_rejoin_completing if w.holds(w.is_group(COMPLETING)) else p.static_rejoin_stable
    return each(ws, lambda x: _outside_join_phase(p, x, i, rule, changed))


def _answer_current(w: SW, i: Expr, when: Expr | None = None) -> SW:
    """The current generation, NONE, in the ``static`` shape (model.outputs.join_layout)."""
    w.answer(i, "JoinGroup", ERROR["NONE"], GEN[CURRENT], SHAPE[STATIC], when=when)
    return w.set(i, awaiting_join=FALSE)


def _outside_join_phase(p: ModelProfile, w: SW, i: Expr, rule: str, changed: bool) -> Ws:
    if rule == "answer":         # 2.3–2.4 (CompletingRebalance), 2.3.0–2.6.0 (Stable)
        return [_answer_current(w, i)]
    if rule == "rebalance":      # CompletingRebalance, 2.5.0+ (KAFKA-9801)
        return each(prepare(p, w), lambda x: check_join(p, x))
    # "persist" (Stable, 2.6.1+, KAFKA-10284): changed metadata may rebalance; otherwise the group is stored
    out = each(maybe_prepare(p, w.copy()), lambda x: check_join(p, x)) if changed else []
    if not w.holds(w.voc.deferred):   # a synchronous append's callback runs at once, successfully
        return out + [_answer_current(w, i)]
    w.appends = w.appends.push(KIND[APPEND_STATIC], ticket=i)
    return out + [w.set(i, persist=TRUE)]


def owned(v: Terms, appends: Appends | None = None) -> Expr:
    """Each member marked ``persist`` has a static append (of ``appends``, default ``v``'s) whose ticket is it:
    distinct members, distinct appends, so no fewer static appends than marked members."""
    a = v.appends if appends is None else appends
    return v.forall(lambda x: z3.Implies(v.get("persist", x), _has_ticket(a, x)))


def _has_ticket(a: Appends, x: Expr, but: Expr | None = None) -> Expr:
    return a.any_ticket(lambda i, k, t: z3.And(k == KIND[APPEND_STATIC], t == x,
                                               z3.BoolVal(True) if but is None else i != but))


def stale_guard(w: SW, before: Appends) -> Expr:
    """When the popped static append (``before``'s oldest; ``w.appends`` is the rest) may be stale: the tickets own
    the marked members, and the popped one's member needs it not — or some other static append ``k`` is spare and
    takes its ticket (``w.appends`` re-ticketed)."""
    t, rest = before.ticket(0), w.appends
    needy = z3.And(w.get("persist", t), z3.Not(_has_ticket(rest, t)))
    k = w.ctx.choose(z3.IntSort())
    u = rest.ticket(k)
    spare = z3.And(0 <= k, k < rest.n, rest.kind(k) == KIND[APPEND_STATIC],
                   z3.Or(z3.Not(w.get("persist", u)), _has_ticket(rest, u, but=k)))
    w.appends = rest.retick(lambda i, old: z3.If(z3.And(needy, i == k), t, old))
    return z3.And(owned(w, before), z3.Or(z3.Not(needy), spare))


def complete_static_append(p: ModelProfile, w: SW, ok: bool, before: Appends) -> Ws:
    """The store callback of a persisted id replacement (no state or generation guard, SPEC.md §3.1 J5a step 4):
    for the current id of a member marked ``persist``, or (stale) for an id gone since: then nothing happens."""
    stale = w.copy()
    stale.guards.append(STALE_GUARD(stale, before))
    gone = [stale] + _rekeyed(p, stale, ok)
    if not w.holds(w.exists(lambda x: w.get("persist", x))):
        return gone
    t = before.ticket(0)
    j = w.ctx.choose(w.dom.sort)
    w.guards.append(w.get("persist", j))
    w.set(j, persist=FALSE)
    w.appends = w.appends.retick(lambda _, old: z3.If(old == j, t, old))   # j's other appends now stand for t
    if ok:   # success answers the member's parked JoinGroup (whichever it is) with the current generation
        out = gone
        if p.static_store_lists_members:   # KIP-814: a v9 leader's member list throws in PreparingRebalance
            silent = w.copy()
            silent.guards.append(z3.And(silent.group == GROUP[PREPARING], silent.get("leader", j),
                                        silent.get("awaiting_join", j)))
            out.append(silent)
        return out + [_answer_current(w, j, when=w.get("awaiting_join", j))]
    return gone + _revert(p, w, j)


def _rekeyed(p: ModelProfile, w: SW, ok: bool) -> Ws:
    """A stale callback whose member object a later restart re-keyed acts on that restart's member: some static
    member whose JoinGroup is parked — success answers it (the earlier id's answer), failure clears it unanswered."""
    if not p.replacement_rekeys_member:
        return []
    x = w.copy()
    j = x.ctx.choose(x.dom.sort)
    x.guards.append(z3.And(x.is_member(j), x.get("static", j), x.get("awaiting_join", j), z3.Not(x.get("is_new", j))))
    if ok:
        x.answer(j, "JoinGroup", ERROR["NONE"], GEN[CURRENT], SHAPE[STATIC_FORMER])
    x.set(j, awaiting_join=FALSE)
    return [x]


#: the stale path's guard (a seam: tests/test_z3_static.py replaces it with a mutant)
STALE_GUARD = stale_guard


def _revert(p: ModelProfile, w: SW, i: Expr) -> Ws:
    """Failure: the parked join is dropped, the id goes back (a parked SyncGroup is fenced), the heartbeat is
    rescheduled under the old id — whose own op, if still armed, may complete, and whose pending sync (Corrections 3)
    comes back with it — and the JoinGroup is answered the store error with member id "" and the prior leader."""
    w.answer(i, "SyncGroup", ERROR["FENCED_INSTANCE_ID"], when=w.get("awaiting_sync", i))
    w.answer(i, "JoinGroup", ERROR[STORE_ERROR], GEN[CURRENT], SHAPE[ERROR_PRIOR])
    w.set(i, awaiting_join=FALSE, awaiting_sync=FALSE)
    b = w.snapshot()
    _leave_ops_behind(w, i)
    done, k = w.ctx.choose(z3.BoolSort()), w.ctx.choose(w.dom.sort)
    w.guards.append(z3.Implies(done, z3.And(b.get("status", k) == STATUS[ABSENT],
                                            z3.Or(b.get("watch", k) != W0, b.get("pending_sync", k)))))
    fewer = z3.If(b.get("watch", k) == WMANY, W1, W0)
    w.slots["watch"] = w.dom.ite(done, w.dom.put(w.slots["watch"], k, fewer), w.slots["watch"])
    owed = z3.And(done, b.get("pending_sync", k))
    w.slots["pending_sync"] = w.dom.ite(owed, w.dom.put(w.dom.put(w.slots["pending_sync"], k, FALSE), i, TRUE),
                                        w.slots["pending_sync"])
    return reschedule(p, w, i)

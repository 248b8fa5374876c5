"""model/rules.py over Z3 terms, rule by rule (same names, same order of effects).

Each function mirrors the model function of the same name; read them side by side (steps.py
does the same for model/step.py). Differences of form, not of meaning:
(1) A loop over members becomes one bulk update (``SW.bulk``), because members are an
    uninterpreted sort; per-member nondeterminism inside such a loop (E0's same-millisecond
    reschedule) becomes a choice *field*: one free Boolean per member.
(2) Sequential removals with "any remaining member becomes leader" become one bulk removal and one
    choice among the survivors: removing the leader and re-choosing whenever the chosen one is
    removed later ends on any survivor — the set the model's loop produces (given at most one
    leader, which the proof set includes).
(3) A few branches whose arms differ only in data are data: the leadership hand-over, the leader
    flag of an added member, the DelayedSync settling, the E0 reschedule (a free choice instead of
    two successors). Fewer paths; the same successor sets (tests/test_z3_encoding.py).
(4) Outputs (outputs.py) are recorded where the model records them (``W.answer/arm/disarm``); a
    conditional one (a parked join answered only if the removed member had one) is data too.
    Same (successor, outputs) pairs: tests/test_z3_outputs.py.
Profile switches are read from ``ModelProfile`` exactly where the model reads them.
"""
from __future__ import annotations

from typing import Callable

import z3

from model.outputs import JOIN_OP as DELAYED_JOIN
from model.outputs import (ERROR_NO_ID, FOLLOWER, HEARTBEAT_OP, INITIAL, INITIAL_JOIN_OP, LEADER_LIST, NEW, NEW_MEMBER,
                           NONE_GEN, PENDING_OP, REBALANCE, SESSION, SYNC_OP)
from model.profiles import ModelProfile
from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, APPEND_EMPTY, APPEND_STALE, COMPLETING, EMPTY,
                         INITIAL_JOIN, JOIN, MANY, MEMBER, NO_JOIN, PENDING, PREPARING)
from properties.z3.domain import GROUP, JOIN_OP, KIND, STATUS, WATCH, Expr
from properties.z3.encoding import Terms
from properties.z3.outputs import ERROR, GEN, SHAPE, SOURCE
from properties.z3.symbolic import SW, Ws

TRUE, FALSE = z3.BoolVal(True), z3.BoolVal(False)
W0, W1, WMANY = WATCH[0], WATCH[1], WATCH[MANY]


def each(ws: Ws, fn: Callable[[SW], Ws]) -> Ws:
    return [y for x in ws for y in fn(x)]


def leave_completing(w: SW) -> None:
    """The store callback's guard fails from now on: appends of this generation become no-ops."""
    w.appends = w.appends.map(lambda k: z3.If(k == KIND[APPEND_CURRENT], KIND[APPEND_STALE], k))


def exists_member(w: Terms) -> Expr:
    return w.exists(w.is_member)


# -- liveness ------------------------------------------------------------------------------------
def _rescheduled(p: ModelProfile, aj: Expr, as_: Expr, is_new: Expr, watch: Expr, choice: Expr | None,
                 source: str = SESSION) -> Expr:
    """The watch after completeAndScheduleNextHeartbeatExpiration (SPEC.md §4.6), as a term."""
    awaiting = z3.Or(aj, as_)
    if p.keyed_timers:     # 4.x (SPEC-4x.md R1): the key's task is replaced, none completes at birth
        return W1
    if p.satisfied_flag:   # old ops complete; the new one completes at birth for an awaiting, not-new member
        return z3.If(z3.Or(is_new, z3.Not(awaiting)), W1, W0)
    assert choice is not None
    # deadline arithmetic: awaiting → all complete; none live → one; else older ops survive iff in the same ms
    old = z3.If(awaiting, W0, z3.If(watch == W0, W1, z3.If(choice, W1, WMANY)))
    if not p.new_member_first:
        return old
    # 2.4.1 (KAFKA-9232): a new member's 5-minute op is armed when it is added; a session-delay op completes at
    # birth and completes the 5-minute one unless that was armed in the same millisecond (model/rules.py)
    new = W1 if source == NEW_MEMBER else z3.If(z3.Or(watch == W0, choice), W0, watch)
    return z3.If(is_new, new, old)


def _rearmed(p: ModelProfile, aj: Expr, as_: Expr, is_new: Expr, source: str) -> Expr:
    """The heartbeat op a reschedule leaves armed: ``source``, or none when the new op completes at birth
    (3.9: an awaiting, not-new member; E0: an awaiting member, whose ops all complete; 2.4.1: also a new member
    unless ``source`` is the new-member timeout)."""
    awaiting = z3.Or(aj, as_)
    if p.keyed_timers:
        return SOURCE[source]
    if p.satisfied_flag:
        survives = z3.Or(is_new, z3.Not(awaiting))
    elif p.new_member_first:
        survives = z3.If(is_new, z3.BoolVal(source == NEW_MEMBER), z3.Not(awaiting))
    else:
        survives = z3.Not(awaiting)
    return z3.If(survives, SOURCE[source], SOURCE["-"])


def reschedule(p: ModelProfile, w: SW, i: Expr, source: str = SESSION) -> Ws:
    """completeAndScheduleNextHeartbeatExpiration (SPEC.md §4.6); the new op's delay is ``source``."""
    choice = None if p.satisfied_flag or p.keyed_timers else w.ctx.choose(z3.BoolSort())
    aj, as_, is_new = w.get("awaiting_join", i), w.get("awaiting_sync", i), w.get("is_new", i)
    w.arm(HEARTBEAT_OP, i, _rearmed(p, aj, as_, is_new, source))
    w.set(i, watch=_rescheduled(p, aj, as_, is_new, w.get("watch", i), choice, source))
    return [w]


def resync_all(p: ModelProfile, w: SW, error: Expr) -> None:
    """for each member awaiting sync: answer its SyncGroup with ``error``, clear awaiting_sync, then
    reschedule (prepare: REBALANCE_IN_PROGRESS, SPEC.md §3.1; _store: the append's outcome, §3.2)."""
    b = w.snapshot()
    choice = None if p.satisfied_flag or p.keyed_timers else w.ctx.choose_field(w.dom, z3.BoolSort())

    def sel(x: Expr) -> Expr:
        return z3.And(b.is_member(x), b.get("awaiting_sync", x))
    w.outs.bulk(sel, **{"SyncGroup.answered": lambda x: TRUE, "SyncGroup.error": lambda x: error,
                        HEARTBEAT_OP: lambda x: _rearmed(p, b.get("awaiting_join", x), FALSE, b.get("is_new", x),
                                                         SESSION)})
    w.bulk("watch", lambda x: z3.If(sel(x), _rescheduled(p, b.get("awaiting_join", x), FALSE, b.get("is_new", x),
                                                         b.get("watch", x), _pick(w, choice, x)), b.get("watch", x)))
    w.bulk("awaiting_sync", lambda x: z3.If(sel(x), FALSE, b.get("awaiting_sync", x)))


def _pick(w: SW, choice: object, x: Expr) -> Expr | None:
    return None if choice is None else w.dom.get(choice, x)   # type: ignore[arg-type]


def remove(p: ModelProfile, w: SW, i: Expr, complete_ops: bool) -> Ws:
    """group.remove: the slot empties; a removed leader is replaced by any remaining member.

    removeMemberAndUpdateGroup answers a parked JoinGroup UNKNOWN_MEMBER_ID with member id "" [2.2.0+,
    SPEC.md §3.4]; a parked SyncGroup of the removed member is never answered."""
    was_leader = w.get("leader", i)
    if p.removal_answers_parked_join:
        w.answer(i, "JoinGroup", ERROR["UNKNOWN_MEMBER_ID"], GEN[NONE_GEN], SHAPE[ERROR_NO_ID],
                 when=w.get("awaiting_join", i))
    if complete_ops:
        w.disarm(HEARTBEAT_OP, i)
    w.set(i, status=STATUS[ABSENT], leader=FALSE, awaiting_join=FALSE, awaiting_sync=FALSE, is_new=FALSE,
          pending_sync=FALSE, watch=W0 if complete_ops else w.get("watch", i))
    if w.voc.static:   # the slot becomes model.state.FREE: no instance maps to it any more
        w.set(i, static=FALSE, persist=FALSE)
    _hand_over_leadership(w, was_leader)
    return [w]


def remove_where(p: ModelProfile, w: SW, sel: Callable[[Terms, Expr], Expr], complete_ops: bool) -> Ws:
    """remove() of every member with ``sel`` (decided on the state before the first removal)."""
    b = w.snapshot()
    leader_gone = b.exists(lambda x: z3.And(sel(b, x), b.get("leader", x)))
    if p.removal_answers_parked_join:
        w.outs.bulk(lambda x: z3.And(sel(b, x), b.get("awaiting_join", x)), **{
            "JoinGroup.answered": lambda x: TRUE, "JoinGroup.error": lambda x: ERROR["UNKNOWN_MEMBER_ID"],
            "JoinGroup.generation": lambda x: GEN[NONE_GEN], "JoinGroup.shape": lambda x: SHAPE[ERROR_NO_ID]})
    if complete_ops:
        w.outs.bulk(lambda x: sel(b, x), **{HEARTBEAT_OP: lambda x: SOURCE["-"]})
    static = (("static", FALSE), ("persist", FALSE)) if w.voc.static else ()
    for f, free in (("status", STATUS[ABSENT]), ("leader", FALSE), ("awaiting_join", FALSE),
                    ("awaiting_sync", FALSE), ("is_new", FALSE), ("pending_sync", FALSE)) + static:
        w.bulk(f, lambda x, f=f, free=free: z3.If(sel(b, x), free, b.get(f, x)))   # type: ignore[misc]
    if complete_ops:
        w.bulk("watch", lambda x: z3.If(sel(b, x), W0, b.get("watch", x)))
    _hand_over_leadership(w, leader_gone)
    return [w]


def _hand_over_leadership(w: SW, leader_gone: Expr) -> None:
    """Kafka: members.keys.headOption — any remaining member, or none (model: one successor per member).

    As data, not as a branch: a chosen member ``j`` must be a member whenever the leader left and
    some member remains, and becomes leader exactly then (no member left: no leader).
    """
    j = w.ctx.choose(w.dom.sort)
    w.guards.append(z3.Implies(z3.And(leader_gone, exists_member(w)), w.is_member(j)))
    handed = w.dom.put(w.slots["leader"], j, TRUE)
    w.slots["leader"] = w.dom.ite(z3.And(leader_gone, w.is_member(j)), handed, w.slots["leader"])


# -- the join phase ------------------------------------------------------------------------------
def add_member(p: ModelProfile, w: SW, i: Expr) -> Ws:
    """addMemberAndRebalance (SPEC.md §3.1)."""
    if p.initial_delay and w.holds(w.is_group(PREPARING)) and w.holds(w.fresh):
        w.nma = TRUE
    # the pending-member op completes once the id is a member (§4.7)
    pending_op = w.outs.get(PENDING_OP, i)
    w.arm(PENDING_OP, i, z3.If(w.get("status", i) == STATUS[PENDING], SOURCE["-"], pending_op))
    leader = z3.Not(exists_member(w))   # the first member becomes leader
    w.set(i, status=STATUS[MEMBER], awaiting_join=TRUE, is_new=z3.BoolVal(p.new_member_timeout), leader=leader)
    ws = reschedule(p, w, i, NEW_MEMBER) if p.new_member_timeout else [w.set(i, watch=W0)]
    return each(ws, lambda x: maybe_prepare(p, x))


def maybe_prepare(p: ModelProfile, w: SW) -> Ws:
    return prepare(p, w) if w.holds(w.is_group(*sorted(p.previous[PREPARING]))) else [w]


def prepare(p: ModelProfile, w: SW) -> Ws:
    """prepareRebalance: parked SyncGroups get REBALANCE_IN_PROGRESS; a DelayedJoin is armed and tried."""
    if w.holds(w.is_group(COMPLETING)):
        leave_completing(w)
        resync_all(p, w, ERROR["REBALANCE_IN_PROGRESS"])   # parked SyncGroups get REBALANCE_IN_PROGRESS (§3.1)
    return _arm_join(p, w)


def _arm_join(p: ModelProfile, w: SW) -> Ws:
    initial = p.initial_delay and w.holds(w.is_group(EMPTY))
    if p.fresh_is_initial_rebalance:   # 4.x: fresh = this rebalance started from Empty (GMM@4.1.1:6819-6822)
        w.fresh = z3.BoolVal(initial)
    if p.delayed_sync:
        w.sync_op = FALSE
        w.disarm(SYNC_OP)
        w.fill("pending_sync", FALSE)
    w.group = GROUP[PREPARING]
    if initial and (p.keyed_timers or w.holds(w.voc.initial_delay)):   # 4.x: a delay-0 task still waits (R1)
        w.join_op = JOIN_OP[INITIAL_JOIN]
        w.arm(INITIAL_JOIN_OP, None, SOURCE[INITIAL])
        return [w]
    if initial:   # a zero delay fires at creation; an extension of delay 0 fires too, then the join completes
        w.nma = FALSE
        return complete_join(p, w)
    w.join_op = JOIN_OP[JOIN]
    w.arm(DELAYED_JOIN, None, SOURCE[REBALANCE])
    if not p.keyed_timers and not w.holds(exists_member(w)):   # no members: timeout 0, fires at creation (3.x)
        return complete_join(p, w)
    return check_join(p, w)


def _all_joined(p: ModelProfile, w: SW) -> Expr:
    joined = w.forall(lambda x: z3.Implies(w.is_member(x), w.get("awaiting_join", x)))
    if not p.pending_members:
        return joined
    return z3.And(joined, z3.Not(w.exists(lambda x: w.get("status", x) == STATUS[PENDING])))


def check_join(p: ModelProfile, w: SW, expiry: bool = False) -> Ws:
    """checkAndComplete(GroupJoinKey): a DelayedJoin completes once every member rejoined (``expiry``: after a removal
    by session expiry, which on 4.x completes an initial-delay join too)."""
    op = w.join_op == JOIN_OP[JOIN]
    if expiry and p.expiry_completes_initial_join:
        op = z3.Or(op, w.join_op == JOIN_OP[INITIAL_JOIN])
    if w.holds(w.is_group(PREPARING)) and w.holds(op) and w.holds(_all_joined(p, w)):
        return complete_join(p, w)
    return [w]


def complete_join(p: ModelProfile, w: SW) -> Ws:
    """onCompleteJoin (SPEC.md §4.4): remove the dynamic members that did not rejoin (step 1: static ones stay,
    2.3+), elect a joined leader (step 3, static scope only), then a new generation."""
    w.join_op = JOIN_OP[NO_JOIN]
    w.disarm(DELAYED_JOIN).disarm(INITIAL_JOIN_OP)
    ws = remove_where(p, w, lambda b, x: z3.And(b.is_member(x), z3.Not(b.get("awaiting_join", x)),
                                                z3.Not(b.get("static", x))),
                      complete_ops=p.removal_completes_ops)
    if not w.voc.static:   # every member left awaits join: the leader did, nothing to elect
        return each(ws, lambda x: _next_generation(p, x))
    ws = each(ws, _elect_joined_leader)
    return each(ws, lambda x: _next_generation(p, x) if x.holds(x.join_op == JOIN_OP[NO_JOIN]) else [x])


def _elect_joined_leader(w: SW) -> Ws:
    """maybeElectNewJoinedLeader (SPEC.md §4.4 step 3): a leader that did not rejoin (a static member) hands over
    to any member awaiting join (a choice among them, as data); with none, a new DelayedJoin of the rebalance
    timeout waits for the static members that did not rejoin (same generation, still PreparingRebalance)."""
    b = w.snapshot()

    def idle(x: Expr) -> Expr:
        return z3.And(b.is_member(x), z3.Not(b.get("awaiting_join", x)))

    def joined(x: Expr) -> Expr:
        return z3.And(b.is_member(x), b.get("awaiting_join", x))
    if not w.holds(b.exists(lambda x: z3.And(idle(x), b.get("leader", x)))):
        return [w]
    if not w.holds(b.exists(joined)):
        w.join_op = JOIN_OP[JOIN]
        w.arm(DELAYED_JOIN, None, SOURCE[REBALANCE])
        return [w]
    j = w.ctx.choose(w.dom.sort)
    w.guards.append(joined(j))
    w.bulk("leader", lambda x: z3.If(x == j, TRUE, z3.If(idle(x), FALSE, b.get("leader", x))))
    return [w]


def _next_generation(p: ModelProfile, w: SW) -> Ws:
    leave_completing(w)
    w.fresh = FALSE
    has_members = w.holds(exists_member(w))
    if not has_members and p.emptied_group_dies:   # E0: the group dies and leaves the cache
        w.group, w.join_op, w.sync_op, w.fresh, w.nma = GROUP[ABSENT_GROUP], JOIN_OP[NO_JOIN], FALSE, TRUE, FALSE
        for f, free in (("status", STATUS[ABSENT]), ("leader", FALSE), ("awaiting_join", FALSE),
                        ("awaiting_sync", FALSE), ("is_new", FALSE), ("pending_sync", FALSE), ("watch", W0)):
            w.fill(f, free)
        for op in (HEARTBEAT_OP, PENDING_OP):   # the dead group's ops are inert: nothing it armed stays armed
            w.outs.member[op] = w.dom.const(SOURCE["-"])
        for op in (DELAYED_JOIN, INITIAL_JOIN_OP, SYNC_OP):
            w.disarm(op)
        return [w]
    if not has_members:
        w.group = GROUP[EMPTY]
        if w.holds(w.voc.deferred):
            w.appends = w.appends.push(KIND[APPEND_EMPTY])   # the empty-group record; its callback only logs
        return [w]
    w.group = GROUP[COMPLETING]
    _answer_join_all(p, w)
    if p.delayed_sync:
        w.sync_op = TRUE
        w.arm(SYNC_OP, None, SOURCE[REBALANCE])
    return [w]


def _answer_join_all(p: ModelProfile, w: SW) -> None:
    """_answer_join for every member: join response (the member list for the leader, SPEC.md §4.4 step 5),
    reschedule with the session timeout, clear isNew."""
    b = w.snapshot()
    choice = None if p.satisfied_flag or p.keyed_timers else w.ctx.choose_field(w.dom, z3.BoolSort())
    if w.voc.static:   # a static member that did not rejoin gets no join response
        w.outs.bulk(lambda x: z3.And(b.is_member(x), z3.Not(b.get("awaiting_join", x))), **{
            HEARTBEAT_OP: lambda x: _rearmed(p, FALSE, b.get("awaiting_sync", x), b.get("is_new", x), SESSION)})
    answered = (lambda x: z3.And(b.is_member(x), b.get("awaiting_join", x))) if w.voc.static else b.is_member
    w.outs.bulk(answered, **{
        "JoinGroup.answered": lambda x: TRUE, "JoinGroup.error": lambda x: ERROR["NONE"],
        "JoinGroup.generation": lambda x: GEN[NEW],
        "JoinGroup.shape": lambda x: z3.If(b.get("leader", x), SHAPE[LEADER_LIST], SHAPE[FOLLOWER]),
        HEARTBEAT_OP: lambda x: _rearmed(p, FALSE, b.get("awaiting_sync", x), b.get("is_new", x), SESSION)})
    w.bulk("watch", lambda x: z3.If(b.is_member(x), _rescheduled(p, FALSE, b.get("awaiting_sync", x),
                                                                  b.get("is_new", x), b.get("watch", x),
                                                                  _pick(w, choice, x)), b.get("watch", x)))
    for f, value in (("awaiting_join", FALSE), ("pending_sync", z3.BoolVal(p.delayed_sync)), ("is_new", FALSE)):
        w.bulk(f, lambda x, f=f, value=value: z3.If(b.is_member(x), value, b.get(f, x)))   # type: ignore[misc]

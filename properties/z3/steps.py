"""model/step.py over Z3 terms: one transition formula per abstract action kind.

``branches(profile, voc, kind, arg, m)`` runs the symbolic step of one action kind (acting member
``m`` for slot actions) on a declared pre-state and returns its paths; ``transition(...)`` turns
them into the formula T_a(v, v') = ∨ (guard ∧ v' = post), with the choices left free (and
``transition_outputs`` into T_a(v, v', o') = ∨ (guard ∧ v' = post ∧ o' = outputs)). The enabling
condition of ``model.step.enabled`` is the first guard of every path (a disabled action has no
successor), and a successor with more appends than the vocabulary's bound is cut off, as in
``model.step.step``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import z3

from model.outputs import (CURRENT, ERROR_ID, FOLLOWER, INITIAL, INITIAL_JOIN_OP, LEADER_LIST,
                           NONE_GEN, PENDING_OP, SESSION, SYNC_OP)
from model.profiles import ModelProfile, get_model_profile
from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, APPEND_STATIC, COMPLETING, EMPTY, INITIAL_JOIN, MEMBER,
                         NO_JOIN, PENDING, PREPARING, STABLE)
from properties.z3.domain import GROUP, JOIN_OP, KIND, STATUS, Expr
from properties.z3.encoding import Terms, Vocabulary, equal, free_slot
from properties.z3.outputs import ERROR, GEN, SHAPE, SOURCE, STORE_ERROR, UNDEFINED, Outs, Unrecorded, equal_outs
from properties.z3.rules import (FALSE, TRUE, W0, W1, WMANY, add_member, check_join, complete_join, each,
                                 leave_completing, maybe_prepare, prepare, remove, remove_where, reschedule,
                                 resync_all)
from properties.z3.partition import load, unload
from properties.z3.static import complete_static_append, join_static_new, static_rejoin
from properties.z3.symbolic import SW, Branch, Ctx, Ws, explore


def _join_new(p: ModelProfile, w: SW, i: Expr) -> Ws:
    if w.holds(w.is_group(ABSENT_GROUP)):
        w.group, w.fresh, w.nma = GROUP[p.created_state], TRUE, FALSE
    return each(add_member(p, w, i), lambda x: check_join(p, x))


def _join_new_pending(p: ModelProfile, w: SW, i: Expr) -> Ws:
    if w.holds(w.is_group(ABSENT_GROUP)):
        w.group, w.fresh, w.nma = GROUP[p.created_state], TRUE, FALSE
    w.answer(i, "JoinGroup", ERROR["MEMBER_ID_REQUIRED"], GEN[NONE_GEN], SHAPE[ERROR_ID])
    w.arm(PENDING_OP, i, SOURCE[SESSION])
    return [w.set(i, status=STATUS[PENDING], watch=W1)]   # its pending-member expiration is armed


def _join_known(p: ModelProfile, w: SW, i: Expr) -> Ws:
    if w.holds(w.get("status", i) == STATUS[PENDING]):
        return each(add_member(p, w, i), lambda x: check_join(p, x))
    if w.holds(w.is_group(PREPARING)):
        return check_join(p, w.set(i, awaiting_join=TRUE))
    if w.holds(w.is_group(STABLE)) and w.holds(w.get("leader", i)):   # the leader's JoinGroup always rebalances
        return each(prepare(p, w.set(i, awaiting_join=TRUE)), lambda x: check_join(p, x))
    # unchanged metadata in CompletingRebalance/Stable: answered with the current generation, the member
    # list only for the leader (SPEC.md §3.1 J5b)
    shape = z3.If(w.get("leader", i), SHAPE[LEADER_LIST], SHAPE[FOLLOWER])
    return [w.answer(i, "JoinGroup", ERROR["NONE"], GEN[CURRENT], shape)]


def _join_changed(p: ModelProfile, w: SW, i: Expr) -> Ws:
    """updateMemberAndRebalance: new metadata parks the join and (outside PreparingRebalance) rebalances."""
    w.set(i, awaiting_join=TRUE)
    ws = [w] if w.holds(w.is_group(PREPARING)) else prepare(p, w)
    return each(ws, lambda x: check_join(p, x))


def _sync(p: ModelProfile, w: SW, i: Expr) -> Ws:
    if w.holds(w.is_group(COMPLETING)):
        w.set(i, awaiting_sync=TRUE, pending_sync=FALSE)
        _settle_sync_op(w)
        ws = reschedule(p, w, i) if p.sync_park_reschedules else [w]
        if w.holds(w.get("leader", i)):
            ws = each(ws, lambda x: _append(p, x))
        return ws
    if w.holds(w.is_group(STABLE)):
        w.answer(i, "SyncGroup", ERROR["NONE"]).set(i, pending_sync=FALSE)
        _settle_sync_op(w)
        return reschedule(p, w, i) if p.stable_sync_reschedules else [w]   # 4.x: R9
    return [w.answer(i, "SyncGroup", ERROR["REBALANCE_IN_PROGRESS"])]   # PreparingRebalance (SPEC.md §3.2)


def _settle_sync_op(w: SW) -> None:
    """A SyncGroup re-checks GroupSyncKey: the DelayedSync completes once everyone synced."""
    pending = w.exists(lambda x: w.get("pending_sync", x))
    w.arm(SYNC_OP, None, z3.If(z3.And(w.sync_op, z3.Not(pending)), SOURCE["-"], w.outs.group[SYNC_OP]))
    w.sync_op = z3.And(w.sync_op, pending)


def _append(p: ModelProfile, w: SW) -> Ws:
    if w.holds(w.voc.deferred):
        w.appends = w.appends.push(KIND[APPEND_CURRENT])
        return [w]
    return _store(p, w, ok=True)


def _store(p: ModelProfile, w: SW, ok: bool) -> Ws:
    """The store callback of an append for the current generation (still CompletingRebalance)."""
    resync_all(p, w, ERROR["NONE"] if ok else ERROR[STORE_ERROR])
    if ok:
        leave_completing(w)
        w.group = GROUP[STABLE]
        return [w]
    return maybe_prepare(p, w)


def _liveness(api: str, resets: Callable[[ModelProfile], frozenset[str]],
              answers: Callable[[ModelProfile], Mapping[str, str]]) -> Callable[[ModelProfile, SW, Expr], Ws]:
    def handle(p: ModelProfile, w: SW, i: Expr) -> Ws:
        w.answer(i, api, answer_by_group(w, answers(p)))
        return reschedule(p, w, i) if w.holds(w.is_group(*sorted(resets(p)))) else [w]
    return handle


def answer_by_group(w: SW, table: Mapping[str, str]) -> Expr:
    """``table[w.group]`` as a term (UNDEFINED outside the table, where the model has no answer)."""
    out = ERROR[UNDEFINED]
    for group, error in sorted(table.items()):
        out = z3.If(w.is_group(group), ERROR[error], out)
    return out


def _leave(p: ModelProfile, w: SW, i: Expr) -> Ws:
    w.answer(i, "LeaveGroup", ERROR["NONE"])
    if w.holds(w.get("status", i) == STATUS[PENDING]):   # the pending id is dropped and its op completes (§3.4)
        w.disarm(PENDING_OP, i).set(i, status=STATUS[ABSENT], watch=W0)
        return _after_removal(p, w) if p.pending_leave_rebalances else check_join(p, w)   # 4.x: rebalances
    return each(remove(p, w, i, complete_ops=True), lambda x: _after_removal(p, x))


def _after_removal(p: ModelProfile, w: SW, expiry: bool = False) -> Ws:
    """removeMemberAndUpdateGroup / onMemberFailure: rebalance, or re-check the join phase."""
    if w.holds(w.is_group(STABLE, COMPLETING)):
        return maybe_prepare(p, w)
    return check_join(p, w, expiry)


def _expire_heartbeat(p: ModelProfile, w: SW, i: Expr) -> Ws:
    if w.holds(w.get("watch", i) == W1):
        ws = [w.set(i, watch=W0)]
    else:
        ws = [w.copy().set(i, watch=W1), w.set(i, watch=WMANY)]
    return each(ws, lambda x: _on_expire(p, x, i))


def _on_expire(p: ModelProfile, w: SW, i: Expr) -> Ws:
    status = w.get("status", i)
    if w.holds(status == STATUS[PENDING]):
        w.set(i, status=STATUS[ABSENT])
        return check_join(p, w, expiry=True)
    if w.holds(status == STATUS[ABSENT]):   # E0: an op that outlived its member still runs onMemberFailure
        return _after_removal(p, w) if p.removed_op_runs_failure else [w]   # 2.3.1+: it only logs
    awaiting = z3.Or(w.get("awaiting_join", i), w.get("awaiting_sync", i))
    keep = z3.And(awaiting, z3.Not(z3.And(z3.BoolVal(p.new_member_first), w.get("is_new", i))))
    if w.holds(keep):
        return [w]
    # the member's other ops outlive the removal (none with the flag; same-ms ones with deadline arithmetic)
    return each(remove(p, w, i, complete_ops=p.removal_completes_ops and p.satisfied_flag),
                lambda x: _after_removal(p, x, expiry=True))


def _expire_join(p: ModelProfile, w: SW) -> Ws:
    if w.holds(w.join_op == JOIN_OP[INITIAL_JOIN]) and w.holds(w.nma):   # extend while new members keep arriving
        extended = w.copy()
        extended.nma = FALSE
        extended.arm(INITIAL_JOIN_OP, None, SOURCE[INITIAL])
        return [extended] + complete_join(p, w)
    return complete_join(p, w)


def _expire_sync(p: ModelProfile, w: SW) -> Ws:
    w.sync_op = FALSE

    def laggard(b: Terms, x: Expr) -> Expr:   # members that never sent SyncGroup within the rebalance timeout, and
        return b.get("pending_sync", x)       # ids a static restart left in pendingSyncMembers (Corrections 3)
    if not w.holds(w.is_group(COMPLETING, STABLE)) or not w.holds(w.exists(lambda x: laggard(w, x))):
        return [w]
    return each(remove_where(p, w, laggard, complete_ops=True), lambda x: prepare(p, x))


def _simple_commit(p: ModelProfile, w: SW) -> Ws:
    """A generation -1 commit from a non-member: an absent group is created Empty (2.x+) and the offsets
    stored; an Empty group stores them; any other group does not know the member (SPEC.md §3.5)."""
    if p.commit_creates_group and w.holds(w.is_group(ABSENT_GROUP)):
        w.group, w.fresh, w.nma = GROUP[EMPTY], TRUE, FALSE
        return [_anonymous(w, "NONE")]
    if w.holds(w.is_group(ABSENT_GROUP, EMPTY)):
        return [_anonymous(w, "NONE")]
    if p.commit_state_first and w.holds(w.is_group(COMPLETING)):
        return [_anonymous(w, "REBALANCE_IN_PROGRESS")]
    return [_anonymous(w, "UNKNOWN_MEMBER_ID")]


def _anonymous(w: SW, error: str) -> SW:
    """The answer to a requester without a slot (W.answer with slot -1)."""
    w.outs.group["anonymous.answered"], w.outs.group["anonymous.error"] = TRUE, ERROR[error]
    return w


def _complete_append(p: ModelProfile, w: SW, ok: bool) -> Ws:
    before = w.appends
    kind, w.appends = w.appends.pop()
    if w.holds(kind == KIND[APPEND_CURRENT]):
        return _store(p, w, ok)
    if w.voc.static and w.holds(kind == KIND[APPEND_STATIC]):
        return complete_static_append(p, w, ok, before)
    return [w]   # a stale or empty-group record; an orphan (partition.py (2)): no state change


SLOT_ACTIONS: dict[str, Callable[[ModelProfile, SW, Expr], Ws]] = {
    "JoinGroup/new": _join_new, "JoinGroup/new-pending": _join_new_pending, "JoinGroup/known": _join_known,
    "JoinGroup/changed": _join_changed,
    "SyncGroup": _sync,
    "Heartbeat": _liveness("Heartbeat", lambda p: p.heartbeat_resets, lambda p: p.heartbeat_answers),
    "OffsetCommit": _liveness("OffsetCommit", lambda p: p.commit_resets, lambda p: p.commit_answers),
    "LeaveGroup": _leave, "ExpireHeartbeat": _expire_heartbeat,
    "JoinGroup/static-new": join_static_new,
    "JoinGroup/static-rejoin": static_rejoin,
}
GROUP_ACTIONS: dict[tuple[str, str], Callable[[ModelProfile, SW], Ws]] = {
    ("ExpireJoin", ""): _expire_join, ("ExpireSync", ""): _expire_sync,
    ("CompleteAppend", "ok"): lambda p, w: _complete_append(p, w, True),
    ("CompleteAppend", "error"): lambda p, w: _complete_append(p, w, False),
    ("OffsetCommit/simple", ""): _simple_commit,
    ("UnloadGroup", ""): unload, ("LoadGroup", ""): load,   # a vocabulary with ``unload`` only (partition.py)
}
#: every abstract action kind, as (kind, arg): slot actions first, in model.step's order
ACTION_KINDS: tuple[tuple[str, str], ...] = tuple((k, "") for k in SLOT_ACTIONS) + tuple(GROUP_ACTIONS)
#: labelled variants the graph does not take but a proof covers: a static restart with other protocol metadata
#: (model.step's request cell "changed", 2.6.1+ Stable: it may rebalance)
VARIANT_KINDS: tuple[tuple[str, str], ...] = (("JoinGroup/static-rejoin", "changed"),)


def enabled(p: ModelProfile, w: Terms, kind: str, arg: str, i: Expr | None) -> Expr:
    """model.step.enabled for one action kind (free slots are not told apart: symmetry is the caller's)."""
    if i is not None:
        status, watch = w.get("status", i), w.get("watch", i)
        free = free_slot(w, i)   # model.state.FREE: an id left in pendingSyncMembers is no free slot
        static = z3.BoolVal(w.voc.static and p.static_members)   # scope.static and a release with KIP-345
        return {"JoinGroup/static-new": z3.And(static, free),
                "JoinGroup/static-rejoin": z3.And(static, w.get("static", i)),
                "JoinGroup/new": free, "JoinGroup/new-pending": z3.And(z3.BoolVal(p.pending_members), free),
                "JoinGroup/known": z3.Or(status == STATUS[PENDING], status == STATUS[MEMBER]),
                "LeaveGroup": z3.Or(status == STATUS[PENDING], status == STATUS[MEMBER]),
                "ExpireHeartbeat": z3.And(watch != W0, z3.Not(w.is_group(ABSENT_GROUP)))
                }.get(kind, status == STATUS[MEMBER])
    moves = z3.BoolVal(w.voc.unload)
    return {"ExpireJoin": w.join_op != JOIN_OP[NO_JOIN], "ExpireSync": w.sync_op,
            "CompleteAppend": w.appends.n > 0,
            "OffsetCommit/simple": z3.And(z3.BoolVal(p.commit_creates_group), w.is_group(ABSENT_GROUP)),
            "UnloadGroup": z3.And(moves, z3.Not(w.is_group(ABSENT_GROUP))),
            "LoadGroup": z3.And(moves, w.is_group(ABSENT_GROUP))}[kind]


@dataclass(frozen=True)
class Branches:
    """The paths of one action kind from the declared pre-state ``pre`` (acting member ``m``)."""

    profile: str
    kind: str
    arg: str
    pre: Terms
    m: Expr | None
    paths: tuple[Branch, ...]

    @property
    def choices(self) -> tuple[Expr, ...]:
        seen: dict[int, Expr] = {}
        for _, _, cs, _ in self.paths:
            seen.update((c.get_id(), c) for c in cs)
        return tuple(seen.values())


_CACHE: dict[tuple[object, ...], Branches] = {}


def branches(profile: str | ModelProfile, voc: Vocabulary, kind: str, arg: str = "", m: Expr | None = None,
             pre: Terms | None = None, outputs: bool = True) -> Branches:
    """Symbolically execute one action kind from ``pre`` (default: the declared state ``pre``); with
    ``outputs=False`` the paths' outputs are not recorded (cheaper, for users of the state relation only)."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    slot_action = kind in SLOT_ACTIONS
    if (kind, arg) not in ACTION_KINDS + VARIANT_KINDS:
        raise ValueError(f"unknown abstract action {kind}[{arg}]")
    pre = pre if pre is not None else voc.state("pre")
    m = (m if m is not None else voc.dom.member("m")) if slot_action else None
    key = (repr(p), voc.key, kind, arg, None if m is None else m.get_id(), pre.group.get_id(), outputs)
    if key in _CACHE:
        return _CACHE[key]

    def run(ctx: Ctx) -> Ws:
        w = SW(pre, ctx, outs=None if outputs else Unrecorded.of(pre.dom))
        if not w.holds(enabled(p, w, kind, arg, m)):
            return []
        if kind == "JoinGroup/static-rejoin":
            return static_rejoin(p, w, m, changed=arg == "changed")
        return SLOT_ACTIONS[kind](p, w, m) if m is not None else GROUP_ACTIONS[(kind, arg)](p, w)
    paths = []
    atoms = [pre.group, pre.join_op, pre.sync_op, pre.fresh, pre.nma, voc.deferred, voc.initial_delay]
    atoms = [a for a in atoms if not z3.is_true(a) and not z3.is_false(a)]
    if m is not None:
        atoms += [pre.get(f, m) for f in pre.slots]
    for guard, post, choices, outs in explore(run, atoms):
        if voc.max_appends is not None:   # model.step: successors with more appends than the scope allows are cut
            guard = z3.And(guard, post.appends.n <= voc.max_appends)
        paths.append((guard, post, choices, outs))
    out = Branches(p.name, kind, arg, pre, m, tuple(paths))
    _CACHE[key] = out
    return out


_BODIES: dict[int, tuple[Branches, Terms, Expr]] = {}


def transition(b: Branches, v: Terms, v2: Terms, m: Expr | None = None, tag: str = "") -> Expr:
    """T_a(v, v'): some path of ``b`` is taken from ``v`` (acting member ``m``) and ends in ``v2``.

    Built once per ``b`` over its own pre-state and a declared post-state, then renamed by
    substitution (one native call), so an unrolling of many steps stays cheap. ``tag`` renames the
    choice constants (each step of an unrolling makes its own choices)."""
    hit = _BODIES.get(id(b))
    if hit is None:
        post_vars = b.pre.voc.state("post!")
        body = z3.Or([z3.And(guard, equal(post_vars, post)) for guard, post, _, _ in b.paths])
        hit = _BODIES[id(b)] = (b, post_vars, body)
    _, post_vars, body = hit
    pairs = zip(b.pre.leaves() + post_vars.leaves(), v.leaves() + v2.leaves(), strict=True)
    subst = [(a, c) for a, c in pairs if not a.eq(c)]
    if b.m is not None and m is not None and not b.m.eq(m):
        subst.append((b.m, m))
    if tag:
        subst += [(c, z3.Const(f"{tag}.{c}", c.sort())) for c in b.choices]
    return z3.substitute(body, *subst) if subst else body


def transition_outputs(b: Branches, v2: Terms, o: Outs) -> Expr:
    """T_a(pre, v', o'): some path of ``b`` is taken from its own pre-state, ends in ``v2`` and says ``o``
    (declared copies over the same domain; the agreement test of outputs, tests/test_z3_outputs.py)."""
    return z3.Or([z3.And(guard, equal(v2, post), equal_outs(o, outs)) for guard, post, _, outs in b.paths])

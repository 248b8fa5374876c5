"""Static membership (KIP-345) at the abstract level: an instance's first join, its restart with member id "",
and the store callback of a persisted id replacement. Written from SPEC.md §3.1 J5a step 4 / step 6, §4.4 and
§4.6 (core only; model/profiles.py says which release does what, from model/releases.py).

A slot with ``static`` is a member some group.instance.id maps to. The abstraction has no instance ids: the
instance *is* the slot, so a restart keeps the slot (leader and all) and only its member id — which the model does
not name — changes. What the old id leaves behind is its DelayedHeartbeat ops (keyed by the old member id, they
expire harmlessly, §3.1 J5a step 4) and its place in pendingSyncMembers [3.0+]: replaceStaticMember leaves that set
untouched, so an old id that owed a SyncGroup stays in it and the new id cannot clear it (SPEC.md Corrections 3;
GroupMetadata.scala 3.9.0-rc3 lines 319-340). Both move to a free slot, an id that is no member.
"""
from __future__ import annotations

from model.outputs import (APPEND_GEN, CURRENT, ERROR_ID, ERROR_PRIOR, FROM_MEMBERS, NONE_GEN, STATIC, STATIC_FORMER,
                           WRITE_STATIC, store_error)
from model.profiles import ModelProfile
from model.rules import W, Ws, add_member, check_join, each, maybe_prepare, prepare, reschedule
from model.state import ABSENT, ABSENT_GROUP, APPEND_STATIC, COMPLETING, FREE, PREPARING, Slot


def join_static_new(p: ModelProfile, w: W, i: int, created: str) -> Ws:
    """J5a step 6: an unknown instance id joins with member id "": addMemberAndRebalance, and the static map
    records it (SPEC.md §3.1)."""
    if w.group == ABSENT_GROUP:
        w.group, w.fresh, w.nma = created, True, False
    w.set(i, static=True)
    return each(add_member(p, w, i), lambda x: check_join(p, x))


def _free_slot(w: W) -> int:
    return next((j for j, s in enumerate(w.slots) if s == FREE), -1)


def _leave_ops_behind(w: W, i: int) -> bool:
    """The old member id's heartbeat ops stay armed under that id, and so does its place in pendingSyncMembers: a
    free slot takes them (False: no free slot in this scope, so the outcome is not representable and is dropped)."""
    watch, owed = w.slots[i].watch, w.slots[i].pending_sync
    if not watch and not owed:
        return True
    j = _free_slot(w)
    if j < 0:
        return False
    w.slots[j] = Slot(status=ABSENT, watch=watch, pending_sync=owed)
    w.set(i, watch=0, pending_sync=False)
    return True


def static_rejoin(p: ModelProfile, w: W, i: int, changed: bool = False) -> Ws:
    """J5a step 4: the known instance of slot ``i`` restarted and joins with member id "" (``changed``: with
    protocol metadata other than its member's).

    replaceStaticMember: a parked JoinGroup of the old incarnation is answered FENCED_INSTANCE_ID (old member id,
    NoGeneration), a parked SyncGroup FENCED_INSTANCE_ID; leadership and the static map follow the new id. The
    heartbeat is rescheduled (session timeout) under the new id, then updateMember parks the new JoinGroup. By
    state: PreparingRebalance waits; CompletingRebalance and Stable act by the release's rule."""
    slot = w.slots[i]
    if slot.awaiting_join:
        w.answer(i, "JoinGroup", "FENCED_INSTANCE_ID", NONE_GEN, ERROR_ID)
    if slot.awaiting_sync:
        w.answer(i, "SyncGroup", "FENCED_INSTANCE_ID")
    if not _leave_ops_behind(w, i):
        return []
    w.set(i, awaiting_join=False, awaiting_sync=False, persist=False)
    if not p.static_replacement_keeps_new:   # 4.x (SPEC-4x.md R12): a new member object, never new
        w.set(i, is_new=False)
    ws = [x.set(i, awaiting_join=True) for x in reschedule(p, w, i)]
    if w.group == PREPARING:
        return each(ws, lambda x: check_join(p, x))
    rule = p.static_rejoin_completing if w.group == COMPLETING else p.static_rejoin_stable
    return each(ws, lambda x: _outside_join_phase(p, x, i, rule, changed))


def _answer_current(w: W, i: int) -> W:
    """The current generation, NONE, in the ``static`` shape (model.outputs.join_layout: the leader id of when the
    replacement was taken and no member list — or, KIP-814, the real leader and skipAssignment = is the leader)."""
    return w.answer(i, "JoinGroup", "NONE", CURRENT, STATIC).set(i, awaiting_join=False)


def _outside_join_phase(p: ModelProfile, w: W, i: int, rule: str, changed: bool) -> Ws:
    if rule == "answer":         # 2.3–2.4 (CompletingRebalance), 2.3.0–2.6.0 (Stable)
        return [_answer_current(w, i)]
    if rule == "rebalance":      # CompletingRebalance, 2.5.0+ (KAFKA-9801)
        return each(prepare(p, w), lambda x: check_join(p, x))
    # "persist" (Stable, 2.6.1+, KAFKA-10284): a protocol change rebalances — the model does not track protocols,
    # so changed metadata may or may not change the selection — otherwise the group is stored
    out = each(maybe_prepare(p, w.copy()), lambda x: check_join(p, x)) if changed else []
    w.write(WRITE_STATIC, assignments=FROM_MEMBERS)   # every member with its current assignment, the new id
    if not w.deferred:           # a synchronous append's callback runs at once, successfully
        return out + [_answer_current(w, i)]
    w.appends.append(APPEND_STATIC)
    return out + [w.set(i, persist=True)]


def complete_static_append(p: ModelProfile, w: W, ok: bool, pending_static: int) -> Ws:
    """The store callback of a persisted id replacement (no state or generation guard, SPEC.md §3.1 J5a step 4).

    It is for the current member id of one slot marked ``persist``, or — when more static appends were pending
    than slots are marked (``pending_static`` counts them before this one was taken) — for an id that is gone
    since (replaced again, or removed): then success does nothing and failure cannot revert (IllegalState)."""
    targets = [i for i, s in enumerate(w.slots) if s.persist]
    out: Ws = [w.copy()] + _rekeyed(p, w, ok) if pending_static > len(targets) else []
    for i in targets:
        x = w.copy().set(i, persist=False)
        out += _store_ok(p, x, i) if ok else _revert(p, x, i)
    return out


def _rekeyed(p: ModelProfile, w: W, ok: bool) -> Ws:
    """The callback of an id gone since, when a later restart of the same instance re-keyed the member object
    (replaceStaticMember keeps the object, GroupMetadata.scala 3.9.0-rc3 lines 319-340): the callback closes over the
    object, so it acts on that restart's member — some static member now. Success answers its parked JoinGroup NONE
    with the earlier replacement's member id (GroupCoordinator.scala 3.9.0-rc3 lines 1410-1440, 2.7.0 lines
    1074-1082); failure clears it unanswered (updateMember with no callback, 3.9.0-rc3 line 1383, 2.7.0 line 1061)
    before the revert's replaceStaticMember throws (findings static-store-answers-the-next-restart-with-its-old-id,
    failed-static-store-drops-the-next-restarts-join)."""
    if not p.replacement_rekeys_member:
        return []
    out: Ws = []
    # the re-keyed object was a Stable member when its first restart was taken: never new since (isNew is set only
    # when a member is added and cleared by its join answer; a replacement keeps it, 2.x and 3.x)
    for j in [j for j, s in enumerate(w.slots) if s.member and s.static and s.awaiting_join and not s.is_new]:
        x = w.copy()
        if ok:
            x.answer(j, "JoinGroup", "NONE", CURRENT, STATIC_FORMER)
        out.append(x.set(j, awaiting_join=False))
    return out


def complete_orphan_append(p: ModelProfile, w: W, ok: bool) -> Ws:
    """The callback of a static append whose group object left the cache acts on that object: it answers the
    JoinGroup it still holds parked (success: NONE; failure: the store error with member id ""), with that
    object's generation (with an earlier replacement's id where a later restart re-keyed the member, ``_rekeyed``)
    — or nothing, when that member's join was answered already or its id is gone, and on
    success for a leader whose v9 restart asked to skip the assignment (KIP-814): the answer to it would list the
    members, which a Dead group cannot give (model/outputs.py ``answerable_on_a_dead_group``: the success answer's
    ``static`` shape has no layout for it, so only "nothing" fits) and the join stays parked."""
    answered = w.copy()
    if ok:
        answered.answer(-1, "JoinGroup", "NONE", APPEND_GEN, STATIC)
    else:
        answered.answer(-1, "JoinGroup", store_error(w.detail, p.store_errors), APPEND_GEN, ERROR_PRIOR)
    if not (ok and p.replacement_rekeys_member):
        return [w, answered]
    # a later restart re-keyed the object's member: its join is answered with the earlier id (``_rekeyed``)
    return [w, answered, w.copy().answer(-1, "JoinGroup", "NONE", APPEND_GEN, STATIC_FORMER)]


def _store_ok(p: ModelProfile, w: W, i: int) -> Ws:
    """Success answers the member's parked JoinGroup (whichever it is) with the current generation — except, KIP-814,
    a v9 leader's in PreparingRebalance: the member list for it throws there (GroupCoordinator.scala 3.9.0-rc3 lines
    1409-1414, GroupMetadata.scala 591-593), nothing is answered and the join waits for the rebalance (finding
    v9-leader-store-throws-in-a-new-rebalance). The model does not know the request's version: either may happen."""
    if not w.slots[i].awaiting_join:
        return [w]
    if p.static_store_lists_members and w.group == PREPARING and w.slots[i].leader:
        return [_answer_current(w.copy(), i), w]
    return [_answer_current(w, i)]


def _revert(p: ModelProfile, w: W, i: int) -> Ws:
    """Failure: updateMember with no callback (the parked join is dropped; the metadata stays the restart's, SPEC.md
    Corrections 2), the id goes back to the old one (a SyncGroup parked meanwhile is fenced), the heartbeat is
    rescheduled under the old id — whose own op, if still armed, completes — and the JoinGroup is answered the store
    error with member id "" and the leader of when the replacement was taken. The old id is a member again: if it
    still owed a SyncGroup (Corrections 3) it owes it as that member."""
    if w.slots[i].awaiting_sync:
        w.answer(i, "SyncGroup", "FENCED_INSTANCE_ID")
    w.answer(i, "JoinGroup", store_error(w.detail, p.store_errors), CURRENT, ERROR_PRIOR)
    w.set(i, awaiting_join=False, awaiting_sync=False)
    old_ids = [j for j, s in enumerate(w.slots) if s.status == ABSENT and (s.watch or s.pending_sync)]
    if not _leave_ops_behind(w, i):
        return []
    outs = [w] + [_take_back(w.copy(), i, j) for j in old_ids]
    return each(outs, lambda x: reschedule(p, x, i))


def _take_back(w: W, i: int, j: int) -> W:
    """Slot ``j`` was the old id: one of its ops completes (if armed) and its pending sync returns to slot ``i``."""
    old = w.slots[j]
    w.slots[j] = Slot(status=ABSENT, watch=max(old.watch - 1, 0))
    return w.set(i, pending_sync=old.pending_sync) if old.pending_sync else w


def loaded_static_variants(w: W, loaded: int) -> Ws:
    """A load restores the static map from the record (SPEC.md §3.7): the first ``loaded`` slots are members (slot 0
    the leader), any subset of them static — up to the followers' symmetry, whether the leader is static and how
    many followers are (a stored group may have a dynamic leader and static followers)."""
    out = []
    for leader in (False, True):
        for followers in range(loaded):
            x = w.copy()
            for j in ([0] if leader else []) + list(range(1, 1 + followers)):
                x.set(j, static=True)
            out.append(x)
    return out


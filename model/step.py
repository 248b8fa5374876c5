"""enabled(state) and step(state, action): one short function per abstract action.

Actions are named after the Kafka APIs a member sends (with the *current* generation and its
own, unchanged protocol metadata) and after the coordinator's timers and log appends:

JoinGroup/new          a member without an id joins (v≤3 client, or 3.9 with a known-id-free join)
JoinGroup/new-pending  a 3.x client's first join: a pending id and MEMBER_ID_REQUIRED (KIP-394)
JoinGroup/known        a pending id or a member rejoins with its id and unchanged protocol metadata
JoinGroup/changed      a member rejoins with changed metadata (always a rebalance, SPEC.md §3.1 J5b)
SyncGroup, Heartbeat, OffsetCommit, LeaveGroup   by a member (LeaveGroup also by a pending id)
ExpireHeartbeat        one of the slot's live DelayedHeartbeat ops expires
ExpireJoin, ExpireSync the DelayedJoin / InitialDelayedJoin or the DelayedSync times out
CompleteAppend[ok|error]  the oldest pending log append completes
OffsetCommit/simple    a commit with generation -1 from a non-member (a "simple" consumer group)
UnloadGroup, LoadGroup the partition emigrates (the group dies, parked requests get NOT_COORDINATOR) and
                       comes back from its last durable record: nothing, Empty, or Stable with its
                       members (the model does not track the log, so any of these) — scope.unload only
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from model.profiles import ModelProfile, get_model_profile
from model.rules import (W, Ws, add_member, check_join, complete_join, each, maybe_prepare, prepare, remove,
                         reschedule)
from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, COMPLETING, EMPTY, FREE, INITIAL_JOIN, JOIN, MANY,
                         MEMBER, NO_JOIN, PENDING, PREPARING, STABLE, AbstractAction, Scope, State)


def _join_new(p: ModelProfile, w: W, i: int) -> Ws:
    if w.group == ABSENT_GROUP:
        w.group, w.fresh, w.nma = p.created_state, True, False
    return each(add_member(p, w, i), lambda x: check_join(p, x))


def _join_new_pending(p: ModelProfile, w: W, i: int) -> Ws:
    if w.group == ABSENT_GROUP:
        w.group, w.fresh, w.nma = p.created_state, True, False
    return [w.set(i, status=PENDING, watch=1)]   # its pending-member expiration is armed


def _join_known(p: ModelProfile, w: W, i: int) -> Ws:
    slot = w.slots[i]
    if slot.status == PENDING:
        return each(add_member(p, w, i), lambda x: check_join(p, x))
    if w.group == PREPARING:
        return check_join(p, w.set(i, awaiting_join=True))
    if w.group == STABLE and slot.leader:   # the leader's JoinGroup always rebalances
        return each(prepare(p, w.set(i, awaiting_join=True)), lambda x: check_join(p, x))
    return [w]   # unchanged metadata in CompletingRebalance/Stable: answered with the current generation


def _join_changed(p: ModelProfile, w: W, i: int) -> Ws:
    """updateMemberAndRebalance: new metadata parks the join and (outside PreparingRebalance) rebalances."""
    w.set(i, awaiting_join=True)
    ws = [w] if w.group == PREPARING else prepare(p, w)
    return each(ws, lambda x: check_join(p, x))


def _sync(p: ModelProfile, w: W, i: int) -> Ws:
    if w.group == COMPLETING:
        w.set(i, awaiting_sync=True, pending_sync=False)
        _settle_sync_op(w)
        ws = reschedule(p, w, i) if p.sync_park_reschedules else [w]
        if w.slots[i].leader:
            ws = each(ws, lambda x: _append(p, x))
        return ws
    if w.group == STABLE:
        w.set(i, pending_sync=False)
        _settle_sync_op(w)
        return reschedule(p, w, i)
    return [w]   # PreparingRebalance: REBALANCE_IN_PROGRESS


def _settle_sync_op(w: W) -> None:
    """A SyncGroup re-checks GroupSyncKey: the DelayedSync completes once everyone synced."""
    if w.sync_op and not any(s.pending_sync for s in w.slots):
        w.sync_op = False


def _append(p: ModelProfile, w: W) -> Ws:
    if w.deferred:
        w.appends.append(APPEND_CURRENT)
        return [w]
    return _store(p, w, ok=True)


def _store(p: ModelProfile, w: W, ok: bool) -> Ws:
    """The store callback of an append for the current generation (still CompletingRebalance)."""
    ws = [w]
    for i in w.members():
        if w.slots[i].awaiting_sync:
            ws = each(ws, lambda x, i=i: reschedule(p, x.set(i, awaiting_sync=False), i))
    if ok:
        for x in ws:
            x.leave_completing()
            x.group = STABLE
        return ws
    return each(ws, lambda x: maybe_prepare(p, x))


def _liveness(resets: Callable[[ModelProfile], frozenset[str]]) -> Callable[[ModelProfile, W, int], Ws]:
    def handle(p: ModelProfile, w: W, i: int) -> Ws:
        return reschedule(p, w, i) if w.group in resets(p) else [w]
    return handle


def _leave(p: ModelProfile, w: W, i: int) -> Ws:
    if w.slots[i].status == PENDING:
        w.set(i, status=ABSENT, watch=0)
        return check_join(p, w)
    return each(remove(w, i, complete_ops=True), lambda x: _after_removal(p, x))


def _after_removal(p: ModelProfile, w: W) -> Ws:
    """removeMemberAndUpdateGroup / onMemberFailure: rebalance, or re-check the join phase."""
    if w.group in (STABLE, COMPLETING):
        return maybe_prepare(p, w)
    return check_join(p, w)


def _expire_heartbeat(p: ModelProfile, w: W, i: int) -> Ws:
    watch = w.slots[i].watch
    ws = [w.set(i, watch=watch - 1)] if watch == 1 else [w.copy().set(i, watch=1), w.set(i, watch=MANY)]
    return each(ws, lambda x: _on_expire(p, x, i))


def _on_expire(p: ModelProfile, w: W, i: int) -> Ws:
    slot = w.slots[i]
    if slot.status == PENDING:
        w.set(i, status=ABSENT)
        return check_join(p, w)
    if slot.status == ABSENT:   # E0: an op that outlived its member still runs onMemberFailure (KAFKA-7196)
        return _after_removal(p, w)
    awaiting = slot.awaiting_join or slot.awaiting_sync
    keep = awaiting and not (p.satisfied_flag and slot.is_new)
    if keep:
        return [w]
    return each(remove(w, i, complete_ops=p.removal_completes_ops), lambda x: _after_removal(p, x))


def _expire_join(p: ModelProfile, w: W) -> Ws:
    if w.join_op == INITIAL_JOIN and w.nma:   # extend while new members keep arriving, if time remains
        extended = w.copy()
        extended.nma = False
        return [extended] + complete_join(p, w)
    return complete_join(p, w)


def _expire_sync(p: ModelProfile, w: W) -> Ws:
    w.sync_op = False
    laggards = [i for i in w.members() if w.slots[i].pending_sync]
    if w.group not in (COMPLETING, STABLE) or not laggards:
        return [w]
    ws = [w]
    for i in laggards:   # members that never sent SyncGroup within the rebalance timeout
        ws = each(ws, lambda x, i=i: remove(x, i, complete_ops=True))
    return each(ws, lambda x: prepare(p, x))


def _simple_commit(p: ModelProfile, w: W) -> Ws:
    """A generation -1 commit to an absent group creates it Empty (2.x+); otherwise nothing changes."""
    if w.group == ABSENT_GROUP and p.commit_creates_group:
        w.group, w.fresh, w.nma = EMPTY, True, False
    return [w]


def _unload(p: ModelProfile, w: W) -> Ws:
    """onGroupUnloaded: the cached group dies; its ops and appends are inert for the new one."""
    w.leave_completing()
    return [W(ABSENT_GROUP, NO_JOIN, False, list(w.appends), True, False, [FREE] * len(w.slots), w.deferred,
              w.initial_delay)]


def _load(p: ModelProfile, w: W) -> Ws:
    """onGroupLoaded from the last stored record: Stable with 1..n members (each rescheduled), Empty, or none."""
    out = [w.copy()]                      # no record: the group stays absent
    if not p.emptied_group_dies:          # an empty-group record (2.x+) loads as Empty
        empty = w.copy()
        empty.group, empty.fresh = EMPTY, False
        out.append(empty)
    for k in range(1, len(w.slots) + 1):
        x = w.copy()
        x.group, x.fresh = STABLE, False
        x.slots = [replace(FREE, status=MEMBER, leader=i == 0, watch=1) if i < k else FREE
                   for i in range(len(w.slots))]
        out.append(x)
    return out


def _complete_append(p: ModelProfile, w: W, ok: bool) -> Ws:
    kind = w.appends.pop(0)
    return _store(p, w, ok) if kind == APPEND_CURRENT else [w]


SLOT_ACTIONS: dict[str, Callable[[ModelProfile, W, int], Ws]] = {
    "JoinGroup/new": _join_new, "JoinGroup/new-pending": _join_new_pending, "JoinGroup/known": _join_known,
    "JoinGroup/changed": _join_changed,
    "SyncGroup": _sync, "Heartbeat": _liveness(lambda p: p.heartbeat_resets),
    "OffsetCommit": _liveness(lambda p: p.commit_resets), "LeaveGroup": _leave, "ExpireHeartbeat": _expire_heartbeat,
}


def _slot_actions(p: ModelProfile, s: State) -> list[AbstractAction]:
    out: list[AbstractAction] = []
    free_seen = False
    for i, slot in enumerate(s.slots):
        if slot.status == ABSENT and not slot.watch and not free_seen:   # free slots are interchangeable
            free_seen = True
            out.append(AbstractAction("JoinGroup/new", i))
            if p.pending_members:
                out.append(AbstractAction("JoinGroup/new-pending", i))
        if slot.status == PENDING:
            out += [AbstractAction("JoinGroup/known", i), AbstractAction("LeaveGroup", i)]
        if slot.status == MEMBER:
            out += [AbstractAction(k, i) for k in ("JoinGroup/known", "JoinGroup/changed", "SyncGroup", "Heartbeat",
                                                   "OffsetCommit", "LeaveGroup")]
        if slot.watch and s.group != ABSENT_GROUP:
            out.append(AbstractAction("ExpireHeartbeat", i))
    return out


def enabled(state: State, profile: str | ModelProfile, scope: Scope) -> list[AbstractAction]:
    """Every abstract action possible in ``state``, in a fixed order."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    out = _slot_actions(p, state)
    if state.join_op != NO_JOIN:
        out.append(AbstractAction("ExpireJoin"))
    if state.sync_op:
        out.append(AbstractAction("ExpireSync"))
    if state.appends:
        out += [AbstractAction("CompleteAppend", arg="ok"), AbstractAction("CompleteAppend", arg="error")]
    if state.group == ABSENT_GROUP and p.commit_creates_group:
        out.append(AbstractAction("OffsetCommit/simple"))
    if scope.unload:
        out.append(AbstractAction("LoadGroup" if state.group == ABSENT_GROUP else "UnloadGroup"))
    return out


def step(state: State, action: AbstractAction, profile: str | ModelProfile, scope: Scope) -> tuple[State, ...]:
    """The canonical successors of ``state`` under ``action`` (sorted, without duplicates).

    Successors with more pending appends than ``scope.max_appends`` are cut off: the graph of a
    scope is truncated there, and says so in its manifest.
    """
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    w = W.of(state, scope)
    if action.kind in SLOT_ACTIONS:
        ws = SLOT_ACTIONS[action.kind](p, w, action.slot)
    elif action.kind == "ExpireJoin":
        ws = _expire_join(p, w)
    elif action.kind == "ExpireSync":
        ws = _expire_sync(p, w)
    elif action.kind == "CompleteAppend":
        ws = _complete_append(p, w, action.arg == "ok")
    elif action.kind == "OffsetCommit/simple":
        ws = _simple_commit(p, w)
    elif action.kind == "UnloadGroup":
        ws = _unload(p, w)
    elif action.kind == "LoadGroup":
        ws = _load(p, w)
    else:
        raise ValueError(f"unknown abstract action {action}")
    out = {x.freeze() for x in ws if len(x.appends) <= scope.max_appends}
    return tuple(sorted(out, key=State.short))


def successors(state: State, profile: str | ModelProfile, scope: Scope) -> list[tuple[AbstractAction, State]]:
    return [(a, t) for a in enabled(state, profile, scope) for t in step(state, a, profile, scope)]


__all__ = ["enabled", "step", "successors", "JOIN", "INITIAL_JOIN"]

"""enabled(state) and step(state, action): one short function per abstract action.

Actions are named after the Kafka APIs a member sends (with the *current* generation and its
own, unchanged protocol metadata) and after the coordinator's timers and log appends:

JoinGroup/new          a member without an id joins (v≤3 client, or 3.9 with a known-id-free join)
JoinGroup/new-pending  a 3.x client's first join: a pending id and MEMBER_ID_REQUIRED (KIP-394)
JoinGroup/known        a pending id or a member rejoins with its id and unchanged protocol metadata
JoinGroup/changed      a member rejoins with changed metadata (always a rebalance, SPEC.md §3.1 J5b)
JoinGroup/static-new   an unknown group.instance.id joins with member id "" (J5a step 6) — scope.static only
JoinGroup/static-rejoin  the known instance of a static slot restarts: member id "", its id is replaced (J5a
                       step 4; model/static.py) — scope.static only
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
from typing import Callable, Mapping

from model.outputs import (CURRENT, ERROR_ID, ERROR_NO_ID, FOLLOWER, FROM_REQUEST, HEARTBEAT_OP, INITIAL,
                           INITIAL_JOIN_OP, LEADER_LIST, NONE_GEN, PENDING_OP, SESSION, SYNC_OP, WRITE_ASSIGNMENT,
                           Outputs, Write, store_error)
from model.profiles import ModelProfile, get_model_profile
from model.rules import (W, Ws, add_member, check_join, complete_join, each, maybe_prepare, prepare, remove,
                         reschedule)
from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, APPEND_ORPHAN, APPEND_STATIC, COMPLETING, EMPTY,
                         FREE, INITIAL_JOIN, JOIN, MANY, MEMBER, NO_JOIN, PENDING, PREPARING, STABLE, AbstractAction,
                         Scope, State)
from model.static import (complete_orphan_append, complete_static_append, join_static_new, loaded_static_variants,
                          static_rejoin)


def _join_new(p: ModelProfile, w: W, i: int) -> Ws:
    if w.group == ABSENT_GROUP:
        w.group, w.fresh, w.nma = p.created_state, True, False
    return each(add_member(p, w, i), lambda x: check_join(p, x))


def _join_new_pending(p: ModelProfile, w: W, i: int) -> Ws:
    if w.group == ABSENT_GROUP:
        w.group, w.fresh, w.nma = p.created_state, True, False
    w.answer(i, "JoinGroup", "MEMBER_ID_REQUIRED", NONE_GEN, ERROR_ID).arm(PENDING_OP, i, SESSION)
    return [w.set(i, status=PENDING, watch=1)]   # its pending-member expiration is armed


def _join_known(p: ModelProfile, w: W, i: int) -> Ws:
    slot = w.slots[i]
    if slot.status == PENDING:
        return each(add_member(p, w, i), lambda x: check_join(p, x))
    if w.group == PREPARING:
        return check_join(p, w.set(i, awaiting_join=True))
    if w.group == STABLE and slot.leader:   # the leader's JoinGroup always rebalances
        return each(prepare(p, w.set(i, awaiting_join=True)), lambda x: check_join(p, x))
    # unchanged metadata in CompletingRebalance/Stable: answered with the current generation, the member
    # list only for the leader (SPEC.md §3.1 J5b)
    return [w.answer(i, "JoinGroup", "NONE", CURRENT, LEADER_LIST if slot.leader else FOLLOWER)]


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
        w.answer(i, "SyncGroup", "NONE").set(i, pending_sync=False)
        _settle_sync_op(w)
        # 4.x (SPEC-4x.md R9): the stored assignment is answered and the session timer left as it is
        return reschedule(p, w, i) if p.stable_sync_reschedules else [w]
    return [w.answer(i, "SyncGroup", "REBALANCE_IN_PROGRESS")]   # PreparingRebalance (SPEC.md §3.2)


def _settle_sync_op(w: W) -> None:
    """A SyncGroup re-checks GroupSyncKey: the DelayedSync completes once everyone synced."""
    if w.sync_op and not any(s.pending_sync for s in w.slots):
        w.sync_op = False
        w.disarm(SYNC_OP)


def _append(p: ModelProfile, w: W) -> Ws:
    """storeGroup of the leader's assignment: the record lists every member, with the leader's SyncGroup's map."""
    w.write(WRITE_ASSIGNMENT, assignments=FROM_REQUEST)
    if w.deferred:
        w.appends.append(APPEND_CURRENT)
        return [w]
    return _store(p, w, ok=True)


def _store(p: ModelProfile, w: W, ok: bool) -> Ws:
    """The store callback of an append for the current generation (still CompletingRebalance)."""
    ws = [w]
    error = "NONE" if ok else store_error(w.detail, p.store_errors)
    for i in w.members():
        if w.slots[i].awaiting_sync:
            ws = each(ws, lambda x, i=i: reschedule(p, x.answer(i, "SyncGroup", error).set(i, awaiting_sync=False), i))
    if ok:
        for x in ws:
            x.leave_completing()
            x.group = STABLE
        return ws
    return each(ws, lambda x: maybe_prepare(p, x))


def _liveness(api: str, resets: Callable[[ModelProfile], frozenset[str]],
              answers: Callable[[ModelProfile], Mapping[str, str]]) -> Callable[[ModelProfile, W, int], Ws]:
    def handle(p: ModelProfile, w: W, i: int) -> Ws:
        w.answer(i, api, answers(p)[w.group])
        return reschedule(p, w, i) if w.group in resets(p) else [w]
    return handle


def _leave(p: ModelProfile, w: W, i: int) -> Ws:
    w.answer(i, "LeaveGroup", "NONE")
    if w.slots[i].status == PENDING:   # the pending id is dropped and its op completes (SPEC.md §3.4)
        w.disarm(PENDING_OP, i).set(i, status=ABSENT, watch=0)
        # 4.x: it counts as a member that left (GMM@4.1.1:7898-7950): Stable/CompletingRebalance rebalance
        return _after_removal(p, w) if p.pending_leave_rebalances else check_join(p, w)
    return each(remove(p, w, i, complete_ops=True), lambda x: _after_removal(p, x))


def _after_removal(p: ModelProfile, w: W, expiry: bool = False) -> Ws:
    """removeMemberAndUpdateGroup / onMemberFailure: rebalance, or re-check the join phase."""
    if w.group in (STABLE, COMPLETING):
        return maybe_prepare(p, w)
    return check_join(p, w, expiry)


def _expire_heartbeat(p: ModelProfile, w: W, i: int) -> Ws:
    watch = w.slots[i].watch
    ws = [w.set(i, watch=watch - 1)] if watch == 1 else [w.copy().set(i, watch=1), w.set(i, watch=MANY)]
    return each(ws, lambda x: _on_expire(p, x, i))


def _on_expire(p: ModelProfile, w: W, i: int) -> Ws:
    slot = w.slots[i]
    if slot.status == PENDING:
        w.set(i, status=ABSENT)
        return check_join(p, w, expiry=True)
    if slot.status == ABSENT:   # E0: an op that outlived its member still runs onMemberFailure (KAFKA-7196)
        return _after_removal(p, w) if p.removed_op_runs_failure else [w]   # 2.3.1+: it only logs
    awaiting = slot.awaiting_join or slot.awaiting_sync
    keep = awaiting and not (p.new_member_first and slot.is_new)
    if keep:
        return [w]
    # removeMemberAndUpdateGroup leaves the member's other ops: with the flag there are none (each reschedule
    # completed them); with deadline arithmetic ops of the same millisecond outlive it and expire idly
    return each(remove(p, w, i, complete_ops=p.removal_completes_ops and p.satisfied_flag),
                lambda x: _after_removal(p, x, expiry=True))


def _expire_join(p: ModelProfile, w: W) -> Ws:
    if w.join_op == INITIAL_JOIN and w.nma:   # extend while new members keep arriving, if time remains
        extended = w.copy()
        extended.nma = False
        extended.arm(INITIAL_JOIN_OP, -1, INITIAL)
        return [extended] + complete_join(p, w)
    return complete_join(p, w)


def _expire_sync(p: ModelProfile, w: W) -> Ws:
    """onExpirePendingSync: every id still in pendingSyncMembers is removed — a member that never sent SyncGroup
    within the rebalance timeout, or an id a static restart left there, which is no member (its removal only drops
    it from the set and completes its heartbeat ops: SPEC.md Corrections 3) — and the group rebalances."""
    w.sync_op = False
    laggards = [i for i, slot in enumerate(w.slots) if slot.pending_sync]
    if w.group not in (COMPLETING, STABLE) or not laggards:
        return [w]
    ws = [w]
    for i in laggards:
        ws = each(ws, lambda x, i=i: remove(p, x, i, complete_ops=True))
    return each(ws, lambda x: prepare(p, x))


def _simple_commit(p: ModelProfile, w: W, i: int = -1) -> Ws:
    """A generation -1 commit from a non-member: an absent group is created Empty (2.x+) and the offsets
    stored; an Empty group stores them; any other group does not know the member (SPEC.md §3.5)."""
    if w.group == ABSENT_GROUP and p.commit_creates_group:
        w.group, w.fresh, w.nma = EMPTY, True, False
        return [w.answer(i, "OffsetCommit", "NONE")]
    if w.group in (ABSENT_GROUP, EMPTY):
        return [w.answer(i, "OffsetCommit", "NONE")]
    if p.commit_state_first and w.group == COMPLETING:
        return [w.answer(i, "OffsetCommit", "REBALANCE_IN_PROGRESS")]
    return [w.answer(i, "OffsetCommit", "UNKNOWN_MEMBER_ID")]


def _unload(p: ModelProfile, w: W) -> Ws:
    """onGroupUnloaded: the cached group dies; its ops and appends are inert for the new one. Parked
    JoinGroups (PreparingRebalance) and SyncGroups (Stable, CompletingRebalance) get NOT_COORDINATOR (§3.7)."""
    for i, slot in enumerate(w.slots):
        if slot.awaiting_join and w.group == PREPARING:
            w.answer(i, "JoinGroup", "NOT_COORDINATOR", NONE_GEN, ERROR_ID)
        if slot.awaiting_sync and w.group in (STABLE, COMPLETING):
            w.answer(i, "SyncGroup", "NOT_COORDINATOR")
    w.leave_completing()
    w.appends = [APPEND_ORPHAN if a == APPEND_STATIC else a for a in w.appends]   # the dead object's callback
    return [w.died()]


def _load(p: ModelProfile, w: W) -> Ws:
    """onGroupLoaded from the last stored record: Stable with 1..n members (each rescheduled), Empty, or none."""
    out = [w.copy()]                      # no record: the group stays absent
    if not p.emptied_group_dies:          # an empty-group record (2.x+) loads as Empty
        empty = w.copy()
        empty.group, empty.fresh = EMPTY, False
        out.append(empty)
    if p.fresh_is_initial_rebalance:      # 4.x: a group known by its offsets only loads Empty at generation 0
        simple = w.copy()
        simple.group, simple.fresh = EMPTY, True
        out.append(simple)
    for k in range(1, len(w.slots) + 1):
        x = w.copy()
        x.group, x.fresh = STABLE, False
        x.slots = [replace(FREE, status=MEMBER, leader=i == 0, watch=1) if i < k else FREE
                   for i in range(len(w.slots))]
        for i in range(k):   # every loaded member gets a fresh session (SPEC.md §3.7)
            x.arm(HEARTBEAT_OP, i, SESSION)
        loaded = loaded_static_variants(x, k) if w.static and p.static_members else [x]
        if w.max_size and p.max_size_rule != "off" and k > w.max_size:   # over capacity: rebalance (§3.7)
            loaded = each(loaded, lambda y: prepare(p, y))
        out += loaded
    return out


def _complete_append(p: ModelProfile, w: W, ok: bool) -> Ws:
    pending_static = w.appends.count(APPEND_STATIC)
    kind = w.appends.pop(0)
    if kind == APPEND_STATIC:
        return complete_static_append(p, w, ok, pending_static)
    if kind == APPEND_ORPHAN:
        return complete_orphan_append(p, w, ok)
    return _store(p, w, ok) if kind == APPEND_CURRENT else [w]


SLOT_ACTIONS: dict[str, Callable[[ModelProfile, W, int], Ws]] = {
    "JoinGroup/new": _join_new, "JoinGroup/new-pending": _join_new_pending, "JoinGroup/known": _join_known,
    "JoinGroup/changed": _join_changed,
    "SyncGroup": _sync,
    "Heartbeat": _liveness("Heartbeat", lambda p: p.heartbeat_resets, lambda p: p.heartbeat_answers),
    "OffsetCommit": _liveness("OffsetCommit", lambda p: p.commit_resets, lambda p: p.commit_answers),
    "LeaveGroup": _leave, "ExpireHeartbeat": _expire_heartbeat,
    "JoinGroup/static-new": lambda p, w, i: join_static_new(p, w, i, p.created_state),
    "JoinGroup/static-rejoin": static_rejoin,
}


def _slot_actions(p: ModelProfile, s: State, static: bool = False) -> list[AbstractAction]:
    out: list[AbstractAction] = []
    free_seen = False
    for i, slot in enumerate(s.slots):
        if slot == FREE and not free_seen:   # free slots are interchangeable
            free_seen = True
            out.append(AbstractAction("JoinGroup/new", i))
            if p.pending_members:
                out.append(AbstractAction("JoinGroup/new-pending", i))
            if static:
                out.append(AbstractAction("JoinGroup/static-new", i))
        if static and slot.static:
            out.append(AbstractAction("JoinGroup/static-rejoin", i))
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
    out = _slot_actions(p, state, scope.static and p.static_members)
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


#: the JoinGroup kinds, and those with member id "" (isUnknownMember)
JOIN_KINDS = frozenset({"JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/known", "JoinGroup/changed",
                        "JoinGroup/static-new", "JoinGroup/static-rejoin"})
_UNKNOWN_ID = frozenset({"JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/static-new", "JoinGroup/static-rejoin"})
#: the refusals that come before the capacity check (SPEC.md §3.0, §3.1 J1–J2, KafkaApis)
_BEFORE_CAPACITY = frozenset({"not-coordinator", "loading", "unsupported", "bad-session"})


def _refuses_capacity(p: ModelProfile, w: W, action: AbstractAction) -> bool:
    """group.max.size (SPEC.md §3.1 J4): 2.2–2.5 refuse an unknown id when |members| ≥ max and, in an over-capacity
    group, a member not awaiting join; 2.6.0+ (acceptJoiningMember) accept anything in Empty, in PreparingRebalance
    a member awaiting join or while fewer than max await, in CompletingRebalance/Stable a member or while
    |members| < max."""
    slot, size = w.slots[action.slot], len(w.members())
    has = action.kind not in _UNKNOWN_ID and slot.status == MEMBER
    if p.max_size_rule == "over-capacity":
        return (size > w.max_size and has and not slot.awaiting_join) or (
            action.kind in _UNKNOWN_ID and size >= w.max_size)
    if w.group == PREPARING:
        awaiting = sum(1 for i in w.members() if w.slots[i].awaiting_join)
        return not ((has and slot.awaiting_join) or awaiting < w.max_size)
    return w.group in (COMPLETING, STABLE) and not (has or size < w.max_size)


def _at_capacity(p: ModelProfile, w: W, action: AbstractAction) -> Ws | None:
    """A JoinGroup refused at capacity: GROUP_MAX_SIZE_REACHED with member id "", and group.remove of its member id —
    no callback, no heartbeat op cancelled, no rebalance, then J6's join check. Before 3.0 remove leaves a pending id
    pending; before 2.8 a refused request's group.instance.id loses its mapping (its member stays, no longer static).
    None: not refused here."""
    if not (w.max_size and p.max_size_rule != "off" and w.group != ABSENT_GROUP) or action.kind not in JOIN_KINDS \
            or action.arg in _BEFORE_CAPACITY or not _refuses_capacity(p, w, action):
        return None
    i, slot = action.slot, w.slots[action.slot]
    w.answer(i, "JoinGroup", "GROUP_MAX_SIZE_REACHED", NONE_GEN, ERROR_NO_ID)
    ws = [w]
    if action.kind not in _UNKNOWN_ID and slot.status == MEMBER:
        ws = remove(p, w, i, complete_ops=False)
    elif action.kind not in _UNKNOWN_ID and slot.status == PENDING and p.remove_drops_pending:
        w.set(i, status=ABSENT)   # its pending expiration stays armed and later expires idly
    elif action.kind == "JoinGroup/static-rejoin" and p.refusal_drops_instance:
        w.set(i, static=False)
    if not p.refusal_checks_join:   # 4.x (SPEC-4x.md R10): GroupMetadataManager.java@4.1.1:6134-6139 stops here
        return ws
    return each(ws, lambda x: check_join(p, x))


def _apply(p: ModelProfile, w: W, action: AbstractAction) -> Ws:
    capacity = _at_capacity(p, w, action)
    if capacity is not None:
        return capacity
    if action.kind in REQUEST_CELLS_KINDS and (action.arg or not _valid_requester(w, action)):
        answered = _refused(p, w, action)
        if answered is not None:
            return answered
    if action.kind == "JoinGroup/static-rejoin":
        return static_rejoin(p, w, action.slot, changed=action.arg == "changed")
    if action.kind in SLOT_ACTIONS:
        return SLOT_ACTIONS[action.kind](p, w, action.slot)
    if action.kind == "ExpireJoin":
        return _expire_join(p, w)
    if action.kind == "ExpireSync":
        return _expire_sync(p, w)
    if action.kind == "CompleteAppend":
        return _complete_append(p, w, action.arg == "ok")
    if action.kind == "OffsetCommit/simple":
        return _simple_commit(p, w, action.slot)
    if action.kind == "UnloadGroup":
        return _unload(p, w)
    if action.kind == "LoadGroup":
        return _load(p, w)
    raise ValueError(f"unknown abstract action {action}")


def step(state: State, action: AbstractAction, profile: str | ModelProfile, scope: Scope) -> tuple[State, ...]:
    """The canonical successors of ``state`` under ``action`` (sorted, without duplicates).

    Successors with more pending appends than ``scope.max_appends`` are cut off: the graph of a
    scope is truncated there, and says so in its manifest.
    """
    return tuple(sorted({t for t, _ in outcomes(state, action, profile, scope)}, key=State.short))


def outcomes(state: State, action: AbstractAction, profile: str | ModelProfile, scope: Scope,
             detail: str = "", canonical: bool = True) -> tuple[tuple[State, Outputs], ...]:
    """Every (successor, outputs) pair of ``action`` in ``state``: what the coordinator must answer and
    which timers it leaves armed (model/outputs.py), slots numbered as in ``state``. ``detail`` is the raw
    append error of a failed CompleteAppend. ``canonical=False`` leaves the successors' slots where they
    were, so that slot i of a successor is the identity the outputs call i (for step properties)."""
    found = outcomes_written(state, action, profile, scope, detail, canonical)
    return tuple(sorted({(t, o) for t, o, _ in found}, key=lambda o: (o[0].short(), str(o[1]))))


def outcomes_written(state: State, action: AbstractAction | tuple[AbstractAction, ...], profile: str | ModelProfile,
                     scope: Scope, detail: str = "", canonical: bool = True
                     ) -> tuple[tuple[State, Outputs, tuple[Write, ...]], ...]:
    """``outcomes`` with, for each, the group records the step appends (``model.outputs.Write``, slots numbered as
    in ``state``): what the model says each append stores. A tuple of actions is one request the coordinator handles
    as those actions in turn under one lock — a LeaveGroup v3+ naming several identities (SPEC.md §3.4: each identity
    independently, in request order) — whose outputs are theirs together."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    w = W.of(state, scope)
    w.detail = detail
    ws = [w]
    for one in action if isinstance(action, tuple) else (action,):
        ws = each(ws, lambda x, one=one: _apply(p, x, one))
    out = {(x.freeze(canonical), x.outputs(), tuple(x.writes)) for x in ws if len(x.appends) <= scope.max_appends}
    return tuple(sorted(out, key=lambda o: (o[0].short(), str(o[1]), str(o[2]))))


# -- requests the coordinator refuses (SPEC.md §3.0, §3.8): an answer and no state change ------------
#: request cells a labelled step can carry in AbstractAction.arg (the graph's own actions carry none):
#:   not-coordinator / loading   the pre-check fails (the partition emigrated / is still loading)
#:   bad-session                 JoinGroup: session timeout outside the broker's bounds (J2)
#:   bad-protocol                JoinGroup to an existing group: protocol type/names not supported (§3.6)
#:   stale                       a member's SyncGroup/Heartbeat/OffsetCommit with another generation
#:   unsupported                 JoinGroup with a group.instance.id to a release without KIP-345 (§3.1)
#:   fenced                      the request's group.instance.id maps to another member id (§3.8, KIP-345)
#:   unknown-instance            its group.instance.id maps to nothing: UNKNOWN_MEMBER_ID in 3.x, and in 2.x for
#:                               JoinGroup only (J5b step 5; other 2.x APIs ignore it)
#:   changed                     (JoinGroup/static-rejoin only) the restart carries other protocol metadata
#:   static-pending              (JoinGroup/known; LeaveGroup in 2.x) a pending member id sent with a
#:                               group.instance.id (J5b 3; §3.4 [2.4], GroupCoordinator.scala@2.4.1 L471-474)
#: and a request whose slot is not a member (nor, for JoinGroup/LeaveGroup, a pending id) is from an
#: unknown member id.
REQUEST_CELLS_KINDS = frozenset({"JoinGroup/known", "JoinGroup/changed", "JoinGroup/new", "JoinGroup/new-pending",
                                 "SyncGroup", "Heartbeat", "OffsetCommit", "LeaveGroup", "OffsetCommit/simple",
                                 "JoinGroup/static-new", "JoinGroup/static-rejoin"})
_API = {"JoinGroup/known": "JoinGroup", "JoinGroup/changed": "JoinGroup", "JoinGroup/new": "JoinGroup",
        "JoinGroup/new-pending": "JoinGroup", "OffsetCommit/simple": "OffsetCommit",
        "JoinGroup/static-new": "JoinGroup", "JoinGroup/static-rejoin": "JoinGroup"}


def _valid_requester(w: W, action: AbstractAction) -> bool:
    if action.kind in ("JoinGroup/new", "JoinGroup/new-pending", "OffsetCommit/simple", "JoinGroup/static-new"):
        return True
    if action.kind == "JoinGroup/static-rejoin":
        return w.slots[action.slot].static and w.slots[action.slot].member
    status = w.slots[action.slot].status
    return status == MEMBER or (status == PENDING and action.kind in ("JoinGroup/known", "LeaveGroup"))


def _refused(p: ModelProfile, w: W, action: AbstractAction) -> Ws | None:
    """The error answer of a refused request, in SPEC.md's order of checks; None = not refused here."""
    api, i, cell = _API.get(action.kind, action.kind), action.slot, action.arg
    join_shape = ERROR_ID if action.kind in ("JoinGroup/known", "JoinGroup/changed") else ERROR_NO_ID

    def refuse(error: str) -> Ws:
        if api == "JoinGroup":
            return [w.answer(i, api, error, NONE_GEN, join_shape)]
        return [w.answer(i, api, error)]

    if cell == "not-coordinator":
        return refuse("NOT_COORDINATOR")
    if cell == "loading":
        return refuse(p.loading_answers[api])
    if cell == "unsupported":   # KafkaApis: no KIP-345 in this release
        return refuse("UNSUPPORTED_VERSION")
    if cell == "bad-session":
        return refuse("INVALID_SESSION_TIMEOUT")
    if cell == "bad-protocol":   # J5a/J5b step 2, before the member id is looked at (§3.1, §3.6)
        return refuse("INCONSISTENT_GROUP_PROTOCOL")
    if cell == "static-pending":   # J5b step 3: a pending id never is static, so Kafka throws IllegalStateException
        # and the request handler sends the API's error response (no member id, generation −1); nothing changed
        if api == "JoinGroup":
            return [w.answer(i, api, "UNKNOWN_SERVER_ERROR", NONE_GEN, ERROR_NO_ID)]
        return refuse("UNKNOWN_SERVER_ERROR")
    # §3.4 [3.x]: a LeaveGroup from a pending member id removes it before validateCurrentMember reads the
    # instance id ([2.4]: the fencing check comes first)
    pending_leave = api == "LeaveGroup" and p.validate_current_member and w.slots[i].status == PENDING
    if cell == "fenced" and w.group != ABSENT_GROUP and not pending_leave:   # J5b 4, §3.2 2, §3.3, §3.4, §3.5
        return refuse("FENCED_INSTANCE_ID")
    unknown_instance = cell == "unknown-instance" and (p.validate_current_member or api == "JoinGroup")
    if unknown_instance and w.group != ABSENT_GROUP and not pending_leave:
        return refuse("UNKNOWN_MEMBER_ID")
    if api == "JoinGroup":
        return None if _valid_requester(w, action) else refuse("UNKNOWN_MEMBER_ID")
    if w.group == ABSENT_GROUP:
        return refuse("ILLEGAL_GENERATION" if api == "OffsetCommit" else "UNKNOWN_MEMBER_ID")
    if api == "Heartbeat" and p.heartbeat_state_first and w.group != STABLE:
        return refuse(p.heartbeat_answers[w.group])
    if api == "OffsetCommit" and p.commit_state_first and w.group == COMPLETING:
        return refuse("REBALANCE_IN_PROGRESS")
    if not _valid_requester(w, action):
        return refuse("UNKNOWN_MEMBER_ID")
    if cell == "stale":
        return refuse("ILLEGAL_GENERATION")
    return None


def successors(state: State, profile: str | ModelProfile, scope: Scope) -> list[tuple[AbstractAction, State]]:
    return [(a, t) for a in enabled(state, profile, scope) for t in step(state, a, profile, scope)]


__all__ = ["enabled", "step", "outcomes", "successors", "JOIN", "INITIAL_JOIN"]

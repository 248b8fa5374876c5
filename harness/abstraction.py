"""The abstraction function: a concrete coordinator (or world) → a model.State (DESIGN.md §6).

This is the one place where impl and model meet. A slot is made for every member id, every
pending id, and every id that still has a live DelayedHeartbeat of the cached group object (E0
keeps ops of removed members); ops and appends of a group object that left the cache are inert
for the model and are left out.
"""
from __future__ import annotations

from core.types import GroupState
from impl.coordinator import GroupCoordinator
from impl.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync, InitialDelayedJoin
from impl.group import GroupMetadata
from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, APPEND_EMPTY, APPEND_ORPHAN, APPEND_STALE,
                         APPEND_STATIC, FREE, INITIAL_JOIN, JOIN, MANY, MEMBER, NO_JOIN, PENDING, Scope, Slot, State)

_GROUP = {GroupState.EMPTY: "Empty", GroupState.PREPARING_REBALANCE: "PreparingRebalance",
          GroupState.COMPLETING_REBALANCE: "CompletingRebalance", GroupState.STABLE: "Stable"}


def _append_kind(coord: GroupCoordinator, group: GroupMetadata | None, index: int) -> str:
    pending = coord.appends[index]
    if pending.kind == "empty":
        return APPEND_EMPTY
    if pending.kind == "static":   # its callback has no guard: it acts on its group object whatever the state
        return APPEND_STATIC if pending.group is group and group is not None else APPEND_ORPHAN
    current = (pending.group is group and group is not None and group.is_(GroupState.COMPLETING_REBALANCE)
               and pending.generation_id == group.generation_id)
    return APPEND_CURRENT if current else APPEND_STALE


def slots_by_id(coord: GroupCoordinator, group: GroupMetadata) -> dict[str, Slot]:
    """Each member id, pending id and id with a live DelayedHeartbeat of ``group`` → its abstract slot."""
    watches: dict[str, int] = {}
    for op in coord.timer.entries.values():
        if isinstance(op, DelayedHeartbeat) and op.group is group:
            watches[op.member_id] = min(watches.get(op.member_id, 0) + 1, MANY)
    # a static id replacement whose store callback is pending names the member id it stored (2.6.1+)
    persisting = {p.rejoin.new_member_id for p in coord.appends
                  if p.kind == "static" and p.group is group and p.rejoin is not None}
    out = {}
    # an id in pendingSyncMembers that is no member: a static restart left it there (SPEC.md Corrections 3)
    for mid in sorted(set(group.members) | group.pending_members | set(watches) | group.pending_sync_members):
        member = group.members.get(mid)
        if member is not None:
            static = member.group_instance_id is not None and group.static_members.get(member.group_instance_id) == mid
            out[mid] = Slot(MEMBER, group.leader_id == mid, member.awaiting_join is not None,
                            member.awaiting_sync is not None, member.is_new, mid in group.pending_sync_members,
                            watches.get(mid, 0), static, mid in persisting)
        else:
            out[mid] = Slot(PENDING if mid in group.pending_members else ABSENT, watch=watches.get(mid, 0),
                            pending_sync=mid in group.pending_sync_members)
    return out


def abstract_slots(coord: GroupCoordinator, group: GroupMetadata) -> list[Slot]:
    return list(slots_by_id(coord, group).values())


def abstract(coord: GroupCoordinator, group_id: str, members: int | None = None) -> State:
    """The model state of ``group_id`` in ``coord``, padded with free slots to ``members``."""
    group = coord.groups.get(group_id)
    appends = tuple(_append_kind(coord, group, i) for i in range(len(coord.appends)))
    if group is None:
        slots: list[Slot] = []
        state = State(ABSENT_GROUP, NO_JOIN, False, appends, True, False)
    else:
        join_op, sync_op = NO_JOIN, False
        for op in coord.timer.entries.values():
            if getattr(op, "group", None) is not group:
                continue
            if isinstance(op, InitialDelayedJoin):
                join_op = INITIAL_JOIN
            elif isinstance(op, DelayedJoin):
                join_op = JOIN
            elif isinstance(op, DelayedSync):
                sync_op = True
        slots = abstract_slots(coord, group)
        state = State(_GROUP[group.state], join_op, sync_op, appends, group.generation_id == 0,
                      group.new_member_added)
    pad = max(members or 0, len(slots)) - len(slots)
    return State(state.group, state.join_op, state.sync_op, state.appends, state.fresh, state.new_member_added,
                 tuple(slots) + (FREE,) * pad).canonical()


def model_scope(coord: GroupCoordinator, members: int, static: bool = False) -> Scope:
    """The model scope matching a coordinator's configuration, unbounded in pending appends (``static``: with the
    static-membership actions — the caller says so when a state it compares has a static slot)."""
    max_size = coord.config.group_max_size
    return Scope(members=members, deferred_appends=coord.config.append_mode == "deferred",
                 initial_delay=coord.config.group_initial_rebalance_delay_ms > 0, max_appends=1 << 30, unload=True,
                 static=static, max_size=max_size if max_size < 2**31 - 1 else 0)   # Int.MaxValue: unbounded


__all__ = ["abstract", "abstract_slots", "slots_by_id", "model_scope", "ABSENT"]

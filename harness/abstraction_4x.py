"""The abstraction function of the Java runtime (impl/java_gc, profile 4.1) → a model.State (DESIGN.md §6).

The sibling of harness/abstraction.py for Kafka 4.x's coordinator (SPEC-4x.md), read as model/profiles.py says 4.1's
model stands for it:

- the group is the classic group in its partition's group map (a group the map lost to a failed batch, R5, is
  Absent); its state, newMemberAdded, leader, members, pending and pending-sync ids and static map as in 3.9;
  ``fresh`` is what 4.1's model reads it as (``fresh_is_initial_rebalance``): in PreparingRebalance, that the
  rebalance started from Empty (ClassicGroup.previousState, GMM@4.1.1:6819-6822), elsewhere generation 0;
- a slot's liveness watch is the keyed timer task under the member id's heartbeat key (R1: at most one; a task whose
  event is queued but not yet run is still the key's task, a stale event whose key moved on is nobody's), for every
  id with such a task, member or not; the join and sync ops are the tasks under the group's join and sync keys. Tasks
  of a group object that left the map (``inert``: the caller names them, harness/refinement_4x.py) are left out, as
  harness/abstraction.py leaves out a dead group's ops: keyed by group id, they find the successor object and fire
  idly (its members are other ids);
- ``appends`` are the pending writes of the partition whose completion runs a callback the model knows, oldest first:
  the leader's assignment (``current`` while its group object is the cached one, CompletingRebalance, same
  generation; else ``stale``), a static replacement (``static``, or ``orphan`` once its group object left the map)
  and the Empty group's record (``empty``). A new group's creation record (R5) is not a model append: its success does
  nothing the model sees, its failure (a batch revert) is the step the model does not have yet (model/profiles.py).
"""
from __future__ import annotations

from typing import Any

from core.types import GroupState
from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, APPEND_EMPTY, APPEND_ORPHAN, APPEND_STALE,
                         APPEND_STATIC, FREE, INITIAL_JOIN, JOIN, MEMBER, NO_JOIN, PENDING, Slot, State)

_GROUP = {GroupState.EMPTY: "Empty", GroupState.PREPARING_REBALANCE: "PreparingRebalance",
          GroupState.COMPLETING_REBALANCE: "CompletingRebalance", GroupState.STABLE: "Stable"}
#: the callback kinds of impl/java_gc/runtime.py that stand for a model append
_MODELLED_CALLBACKS = frozenset({"assignment", "static", "empty"})


def _partition(coord: Any, group_id: str) -> Any:
    return coord.partitions.get(coord.partition_for(group_id))


def _append_kind(write: Any, group: Any) -> str:
    kind = write.callback[0]
    if kind == "empty":
        return APPEND_EMPTY
    target = write.callback[1]
    if kind == "static":   # no guard: it acts on its group object whatever the state
        return APPEND_STATIC if group is not None and target is group else APPEND_ORPHAN
    current = (group is not None and target is group and group.state is GroupState.COMPLETING_REBALANCE
               and int(write.callback[2]) == group.generation_id)
    return APPEND_CURRENT if current else APPEND_STALE


def pending_appends(coord: Any, group_id: str) -> list[Any]:
    """The partition's writes not done whose callback stands for a model append, oldest first."""
    part = _partition(coord, group_id)
    if part is None:
        return []
    return [w for _, w in sorted(part.log.writes.items())
            if not w.done and w.callback and w.callback[0] in _MODELLED_CALLBACKS]


def _watches(part: Any, group_id: str, inert: frozenset[int]) -> dict[str, int]:
    prefix = f"heartbeat-{group_id}-"   # GMM.classicGroupHeartbeatKey (impl/java_gc/base.py heartbeat_key)
    return {key[len(prefix):]: 1 for key, task in part.timer.tasks.items()
            if key.startswith(prefix) and task.seq not in inert}


def slots_by_id(coord: Any, group: Any, inert: frozenset[int] = frozenset()) -> dict[str, Slot]:
    """Each member id, pending id, id owing a SyncGroup and id with a live heartbeat task → its abstract slot."""
    part = _partition(coord, group.group_id)
    watches = _watches(part, group.group_id, inert)
    persisting = {str(w.callback[4]) for w in pending_appends(coord, group.group_id)
                  if w.callback[0] == "static" and w.callback[1] is group}
    out = {}
    for mid in sorted(set(group.members) | group.pending_join_members | set(watches) | group.pending_sync_members):
        member = group.members.get(mid)
        if member is not None:
            instance = member.group_instance_id
            static = instance is not None and group.static_members.get(instance) == mid
            out[mid] = Slot(MEMBER, group.leader_id == mid, member.awaiting_join is not None,
                            member.awaiting_sync is not None, member.is_new, mid in group.pending_sync_members,
                            watches.get(mid, 0), static, mid in persisting)
        else:
            out[mid] = Slot(PENDING if mid in group.pending_join_members else ABSENT, watch=watches.get(mid, 0),
                            pending_sync=mid in group.pending_sync_members)
    return out


def fresh(group: Any) -> bool:
    if group.state is GroupState.PREPARING_REBALANCE:
        return group.previous_state is GroupState.EMPTY
    return group.generation_id == 0


def abstract(coord: Any, group_id: str, members: int | None = None, inert: frozenset[int] = frozenset()) -> State:
    """The model state of ``group_id`` in the Java coordinator ``coord``, padded with free slots to ``members``;
    ``inert``: timer task seqs of group objects that left the map."""
    part = _partition(coord, group_id)
    group = None if part is None else part.groups.get(group_id)
    if group is not None and group.state is GroupState.DEAD:
        group = None
    appends = tuple(_append_kind(w, group) for w in pending_appends(coord, group_id))
    if group is None:
        slots: list[Slot] = []
        state = State(ABSENT_GROUP, NO_JOIN, False, appends, True, False)
    else:
        tasks = {k: t for k, t in part.timer.tasks.items() if t.seq not in inert}
        join = tasks.get(f"join-{group_id}")   # GMM.classicGroupJoinKey, shared by both join timers
        join_op = NO_JOIN if join is None else INITIAL_JOIN if join.op[0] == "initial-join" else JOIN
        sync_op = f"sync-{group_id}" in tasks
        slots = list(slots_by_id(coord, group, inert).values())
        state = State(_GROUP[group.state], join_op, sync_op, appends, fresh(group), group.new_member_added)
    pad = max(members or 0, len(slots)) - len(slots)
    return State(state.group, state.join_op, state.sync_op, state.appends, state.fresh, state.new_member_added,
                 tuple(slots) + (FREE,) * pad).canonical()


__all__ = ["abstract", "slots_by_id", "pending_appends"]

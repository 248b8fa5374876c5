"""The observation adapter of Kafka 4.x's Java runtime (impl/java_gc, profile 4.1): the same frozen read-out
(properties/observation.py) the catalog reads on the Scala profiles, filled from the runtime's partitions.

What plays what (SPEC-4x.md R1-R3):

- a *delayed operation* is a live keyed timer task (R1; CoordinatorRuntime.java@4.1.1:356-425): the task under a
  member's heartbeat key is its DelayedHeartbeat, the join key's a DelayedJoin (an "initial-join" task an
  InitialDelayedJoin), the sync key's a DelayedSync. A task whose event waits in the queue is still its key's task (it
  runs when the loop takes it); a queued task whose key moved on is nobody's and is not read. Its ``deadline_ms`` is
  the task's; the heartbeat task *is* the session deadline, so ``heartbeat_deadline_ms`` is the same number.
  ``delay_ms`` has no counterpart (a task keeps only its deadline): -1. ``complete_count`` is 0 (a task runs once:
  ``tasks.remove(key, this)``);
- a *pending append* is a write not yet done whose append callback the catalog knows (the leader's assignment, a
  static replacement, the Empty group's record — the same three harness/abstraction_4x.py reads), oldest first;
- a *parked* request is a member's awaiting JoinGroup/SyncGroup future (ClassicGroupMember.awaitingJoinFuture /
  awaitingSyncFuture). A future a write timeout already answered (R2) stays on its member (Kafka completes the
  member's future; a later completion is a no-op): ``done``/``completions`` say so;
- a *held* request (``Observation.held``, with the release fact ``answers-wait-for-commit``, R3) is one whose answer
  the runtime holds behind uncommitted writes: its write is not done and its future not completed. Held is not
  parked: it has no member, and the commit or the write's end (failure, timeout) answers it;
- the fields 4.x does not have: ``latest_heartbeat_ms`` (-1: no deadline arithmetic), ``is_leaving`` (False: no
  leave flag), ``stale_member`` (False: a task holds ids, not member objects); ``transitions`` is what the step did
  to each group object's state, from the group's ``moves`` (the runtime keeps no transitions log);
  the runtime emits no step events: ``events`` carries the two the state shows (``_events``: HeartbeatScheduled,
  GenerationStarted); the properties that read other events see nothing on 4.1 (README "Kafka 4.x").
"""
from __future__ import annotations

from typing import Any

from core.events import GenerationStarted, HeartbeatScheduled, StepEvent
from core.trace import Step
from properties.observation import (AppendObs, GroupObs, MemberObs, Observation, OpObs, ParkedObs, RequestKey,
                                    inflight)

#: timer operation kind (impl/java_gc/timers.py) -> the delayed operation it plays
OP_KINDS = {"heartbeat": "DelayedHeartbeat", "join": "DelayedJoin", "initial-join": "InitialDelayedJoin",
            "sync": "DelayedSync"}
#: write callbacks that play a pending append (harness/abstraction_4x.py reads the same three)
APPEND_KINDS = ("assignment", "static", "empty")
#: a task keeps no delay, only its deadline
NO_DELAY = -1
#: 4.x has no latestHeartbeat: liveness is the heartbeat task's deadline (R1, R13)
NO_LATEST_HEARTBEAT = -1


def is_java_runtime(coord: Any) -> bool:
    """The coordinator is Kafka 4.x's runtime (partitions, each with a keyed timer and a log), not the Scala one."""
    return hasattr(coord, "partitions") and hasattr(coord, "partition_for")


def _key(future: Any) -> RequestKey | None:
    return None if future is None else tuple(future.key)


def _member(m: Any) -> MemberObs:
    return MemberObs(m.member_id, m.session_timeout_ms, m.rebalance_timeout_ms, _key(m.awaiting_join),
                     _key(m.awaiting_sync), m.is_new, NO_LATEST_HEARTBEAT, m.has_satisfied_heartbeat(), False,
                     m.protocol_names, m.group_instance_id)


def _group(g: Any, cached: bool) -> GroupObs:
    return GroupObs(g.group_id, g.incarnation, cached, g.state, g.generation_id, g.leader_id, g.protocol_type,
                    g.protocol_name, tuple(_member(m) for m in g.all_members()),
                    frozenset(g.pending_join_members), frozenset(g.pending_sync_members), g.num_members_awaiting_join,
                    tuple(sorted(g.supported_protocols.items())), g.new_member_added,
                    tuple(sorted(g.static_members.items())))


def _op(task: Any, group: Any) -> OpObs:
    kind = OP_KINDS[str(task.op[0])]
    if kind == "DelayedHeartbeat":
        member_id = str(task.op[2])
        return OpObs(task.seq, kind, task.key, group.incarnation, member_id, task.deadline_ms, NO_DELAY,
                     task.deadline_ms, group.is_pending_member(member_id))
    if kind == "InitialDelayedJoin":
        return OpObs(task.seq, kind, task.key, group.incarnation, "", task.deadline_ms, int(task.op[2]),
                     remaining_ms=int(task.op[3]))
    if kind == "DelayedSync":   # the task reads the generation when it runs (GMM@4.1.1:6646-6653): the current one
        return OpObs(task.seq, kind, task.key, group.incarnation, "", task.deadline_ms, NO_DELAY,
                     generation_id=group.generation_id)
    return OpObs(task.seq, kind, task.key, group.incarnation, "", task.deadline_ms, NO_DELAY)


def _ops(coord: Any) -> list[OpObs]:
    """Every live keyed task of a group the partition holds, by seq. A task of a group id the map does not hold
    (its group reverted by a failed batch, R5) fires idly: nothing to read it against, it is left out."""
    out = []
    for index in sorted(coord.partitions):
        part = coord.partitions[index]
        for task in part.timer.tasks.values():
            group = part.groups.get(str(task.op[1]))
            if str(task.op[0]) in OP_KINDS and group is not None:
                out.append(_op(task, group))
    return sorted(out, key=lambda op: op.seq)


def _pending_writes(coord: Any) -> list[Any]:
    return [w for i in sorted(coord.partitions) for _, w in sorted(coord.partitions[i].log.writes.items())
            if not w.done]


def _append(write: Any, groups: dict[str, Any]) -> AppendObs | None:
    kind = str(write.callback[0]) if write.callback else ""
    if kind not in APPEND_KINDS:
        return None
    if kind == "assignment":
        group, generation = write.callback[1], int(write.callback[2])
        return AppendObs(write.seq, group.incarnation, generation, kind)
    if kind == "static":   # (kind, group, instance id, old id, new id, old member, leader, skip): static.py
        group = write.callback[1]
        return AppendObs(write.seq, group.incarnation, group.generation_id, kind, str(write.callback[4]))
    group = groups.get(write.group_id or "")
    return None if group is None else AppendObs(write.seq, group.incarnation, group.generation_id, kind)


def _parked(world: Any, groups: list[tuple[Any, bool]]) -> tuple[ParkedObs, ...]:
    found: dict[RequestKey, ParkedObs] = {}
    for g, in_table in groups:
        for m in g.all_members():
            for api, future in (("JoinGroup", m.awaiting_join), ("SyncGroup", m.awaiting_sync)):
                key = _key(future)
                if key is not None:
                    found.setdefault(key, ParkedObs(key, api, g.incarnation, m.member_id, in_table,
                                                    future.completions, future.done,
                                                    api == "JoinGroup" and world.asks_to_skip_assignment(key)))
    return tuple(found[k] for k in sorted(found))


def _held(writes: list[Any]) -> tuple[RequestKey, ...]:
    """R3: the requests whose answer the runtime holds until their write (and every write before it) commits: a write
    not done carrying the answer its completion releases (Heartbeat, LeaveGroup, OffsetCommit: runtime.py
    ``Write.response``) for a future not yet completed. A JoinGroup/SyncGroup write carries none: its future is
    parked on the member and answered by the join or sync phase (or overwritten there, SPEC.md §3.1 J5b.6)."""
    return tuple(sorted(key for w in writes
                        if w.response is not None and (key := _key(w.future)) is not None and not w.future.done))


def _transitions(before: Observation | None, objects: list[tuple[Any, bool]],
                 choose: bool) -> tuple[tuple[str, str, str], ...]:
    """What the step did to each group object's state: its ``moves`` past the count ``before`` saw (a group object
    new in this step: all of them)."""
    if before is None:
        return ()
    # a Choose restored the group objects from a snapshot (no history) before running the step again
    seen = dict(before.move_counts) if not choose else {}
    return tuple((g.group_id, a.value, b.value) for g, _ in objects for a, b in g.moves[seen.get(g.incarnation, 0):])


def _in_write(writes: list[Any]) -> tuple[RequestKey, ...]:
    """Every request whose write event is not done and whose future is not completed: the held ones, and a
    JoinGroup/SyncGroup whose future its member let go of (overwritten or removed) while its write waited — the
    write's end may still answer it: a timeout or a failed batch fails the event and the service answers its future
    with the error (GroupCoordinatorService.java@4.1.1:880-891); a commit answers nothing."""
    return tuple(sorted(key for w in writes if (key := _key(w.future)) is not None and not w.future.done))


def _events(before: Observation | None, groups: tuple[GroupObs, ...], ops: tuple[OpObs, ...]) -> tuple[StepEvent, ...]:
    """The step events the Scala coordinator logs that the catalog reads and the runtime's state shows: a member's
    heartbeat task newly scheduled (HeartbeatScheduled: a heartbeat-key task with a seq the step before did not
    have) and a group object's generation moved on (GenerationStarted, once per step, carrying the new generation: a
    jump of two reads as one event and breaks each-new-generation-increments-the-generation-id)."""
    if before is None:
        return ()
    was = {g.incarnation: g.generation_id for g in before.groups}
    out: list[StepEvent] = [GenerationStarted(g.generation_id, g.state.value, g.leader_id, g.protocol_name)
                            for g in groups if g.generation_id != was.get(g.incarnation, g.generation_id)]
    had = {op.seq for op in before.ops}   # after the generation, as onCompleteJoin reschedules after initNextGeneration
    out += [HeartbeatScheduled(op.member_id, op.deadline_ms) for op in ops
            if op.kind == "DelayedHeartbeat" and op.seq not in had]
    return tuple(out)


def observe_java(world: Any, step: Step | None, before: Observation | None, held: bool) -> Observation:
    """``observe`` for a world whose coordinator is the Java runtime; ``before`` is the read-out before ``step``
    (its group states give the step's transitions), ``held`` the release fact ``answers-wait-for-commit``."""
    coord, gid = world.coord, world.group_id
    part = coord.partitions.get(coord.partition_for(gid))
    writes = _pending_writes(coord)
    objects: dict[int, tuple[Any, bool]] = {}
    for index in sorted(coord.partitions):
        for g in coord.partitions[index].groups.values():
            objects[g.incarnation] = (g, True)
    for w in writes:   # a group object an assignment or a static write still holds after it left the map
        if w.callback and str(w.callback[0]) in ("assignment", "static"):
            objects.setdefault(w.callback[1].incarnation, (w.callback[1], False))
    ordered = [objects[i] for i in sorted(objects)]
    groups = tuple(_group(g, cached) for g, cached in ordered)
    cached = None if part is None else part.groups.get(gid)
    by_id = {g.group_id: g for g, c in ordered if c}
    parked = _parked(world, ordered)
    ops = tuple(_ops(coord))
    return Observation(
        profile=world.profile.name, previous_states=world.profile.previous_states, time_ms=coord.now_ms,
        group_id=gid, group=None if cached is None else next(g for g in groups if g.incarnation == cached.incarnation),
        groups=groups, ops=ops,
        appends=tuple(a for w in writes if (a := _append(w, by_id)) is not None),
        parked=parked, held=_held(writes) if held else (), in_write=_in_write(writes) if held else (),
        inflight=inflight(world),
        errors=coord.illegal_state_errors(), last_error=_last_illegal(coord),
        unloaded=part is None, loading=part is not None and part.state != "active",
        new_member_join_timeout_ms=coord.config.new_member_join_timeout_ms,
        initial_rebalance_delay_ms=coord.config.group_initial_rebalance_delay_ms,
        step_index=-1 if step is None else step.index, action=None if step is None else step.action,
        events=() if step is None else step.events + _events(before, groups, ops),
        responses=() if step is None else step.responses,
        transitions=_transitions(before if step is not None else None, ordered,
                                 step is not None and step.action.kind == "Choose"), transition_count=0,
        move_counts=tuple((g.incarnation, len(g.moves)) for g, _ in ordered))


def _last_illegal(coord: Any) -> str:
    """The last logged IllegalStateException: the runtime types those lines (a str subclass, IllegalStateLog in
    impl/java_gc/runtime.py, which properties may not import); its other lines log failed timer writes."""
    lines = [line for line in coord.errors if type(line) is not str]
    return str(lines[-1]) if lines else ""

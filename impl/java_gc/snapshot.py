"""The Java coordinator as canonical plain data (tuples of ints, strs, bytes, bools, None) and back.

Equal states give equal tuples: groups by id, members by id, timer tasks by key and seq, writes by seq.
References become data: a parked future is its key (one future object per key on restore, shared by the
member that parks it and the write that may answer it), a group an append callback holds is its incarnation
(written out even if the group left the map: a reverted or unloaded group). Choice scripts and logs, the
errors and events lists are driving aids and history, not state.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Hashable

from core.types import Errors, GroupState
from impl.java_gc.base import Partition
from impl.java_gc.group import ClassicGroup, ClassicGroupMember
from impl.java_gc.log import Batch, PartitionLog, Write
from impl.java_gc.timers import KeyedTimer, TimerTask
from impl.results import CommitResult, CoordinatorConfig, HeartbeatResult, LeaveGroupResult, ResponseFuture

if TYPE_CHECKING:
    from impl.java_gc.coordinator import JavaGroupCoordinator

_STATES = {s.value: s for s in GroupState}


def _key(future: ResponseFuture | None) -> Hashable:
    return None if future is None else future.key


def _member(m: ClassicGroupMember) -> tuple[Any, ...]:
    return (m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
            m.session_timeout_ms, m.protocol_type, m.protocols, m.assignment, _key(m.awaiting_join),
            _key(m.awaiting_sync), m.is_new)


def _group(g: ClassicGroup) -> tuple[Any, ...]:
    return (g.incarnation, g.group_id, g.state.value, g.previous_state.value, g.protocol_type, g.protocol_name,
            g.generation_id, g.leader_id, tuple(_member(g.members[k]) for k in sorted(g.members)),
            tuple(sorted(g.static_members.items())), tuple(sorted(g.pending_join_members)),
            g.num_members_awaiting_join, tuple(sorted(g.supported_protocols.items())),
            tuple(sorted(g.pending_sync_members)), g.new_member_added)


def _response(r: object) -> tuple[Any, ...] | None:
    if r is None:
        return None
    if isinstance(r, LeaveGroupResult):
        return ("LeaveGroup", int(r.error), tuple((m, i, int(e)) for m, i, e in r.member_errors))
    assert isinstance(r, (HeartbeatResult, CommitResult)), r
    return (type(r).__name__, int(r.error))


def _callback(cb: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    if cb is None or cb[0] not in ("assignment", "static"):
        return cb
    return (cb[0], cb[1].incarnation) + cb[2:]


def _write(w: Write) -> tuple[Any, ...]:
    return (w.seq, w.partition, w.api, _key(w.future), _response(w.response), w.group_id, w.record, w.has_record,
            _callback(w.callback), w.created, w.timeout_seq, w.done)


def _task(t: TimerTask) -> tuple[Any, ...]:
    return (t.seq, t.key, t.deadline_ms, t.op, t.expired)


def _partition(p: Partition) -> tuple[Any, ...]:
    timer, log = p.timer, p.log
    open_batch = None if log.open is None else (log.open.base, tuple(log.open.writes), log.open.records)
    return (p.index, p.state, tuple(_group(p.groups[k]) for k in sorted(p.groups)),
            tuple(sorted(p.visible_at.items(), key=lambda kv: kv[0])),
            tuple(_task(timer.tasks[k]) for k in sorted(timer.tasks)),
            tuple(_task(timer.unkeyed[s]) for s in sorted(timer.unkeyed)), tuple(_task(t) for t in timer.queue),
            tuple(_write(log.writes[s]) for s in sorted(log.writes)), open_batch,
            tuple((end, tuple(seqs)) for end, seqs in log.written), tuple(log.waiting), log.end, log.committed)


def coordinator_to_state(c: "JavaGroupCoordinator") -> tuple[Any, ...]:
    cached = {g.incarnation for p in c.partitions.values() for g in p.groups.values()}
    detached: dict[int, ClassicGroup] = {}
    for part in c.partitions.values():
        for w in part.log.writes.values():
            if w.callback and w.callback[0] in ("assignment", "static") and w.callback[1].incarnation not in cached:
                detached[w.callback[1].incarnation] = w.callback[1]
    futures: dict[Hashable, tuple[str, bool]] = {}
    for part in c.partitions.values():
        for g in list(part.groups.values()) + list(detached.values()):
            for m in g.members.values():
                for f in (m.awaiting_join, m.awaiting_sync):
                    if f is not None:
                        futures[f.key] = (f.api, f.done)
        for w in part.log.writes.values():
            if w.future is not None:
                futures[w.future.key] = (w.future.api, w.future.done)
    return (dataclasses.astuple(c.config), c.offsets_commit_timeout_ms, c.num_partitions, c.now_ms, c.counter,
            c.incarnations, c.active,
            tuple((i, tuple(sorted(c.durable[i].items()))) for i in sorted(c.durable)),
            tuple(_partition(c.partitions[i]) for i in sorted(c.partitions)),
            tuple(_group(detached[i]) for i in sorted(detached)),
            tuple(sorted(futures.items(), key=lambda kv: repr(kv[0]))))


def coordinator_from_state(cls: type["JavaGroupCoordinator"], state: tuple[Any, ...],
                           record_events: bool = False) -> "JavaGroupCoordinator":
    (config, timeout_ms, num_partitions, now_ms, counter, incarnations, active, durable, partitions, detached,
     futures) = state
    c = cls(CoordinatorConfig(*config), record_events, timeout_ms, num_partitions)
    c.now_ms, c.counter, c.incarnations, c.active = now_ms, counter, incarnations, active
    c.durable = {i: dict(records) for i, records in durable}
    made = {key: ResponseFuture(key, api, c._outbox) for key, (api, _) in futures}
    for key, (_, done) in futures:
        made[key].done = done
    groups = {s[0]: _group_from(s, made) for s in detached}
    c.partitions = {}
    for s in partitions:
        part = _partition_from(s, made, groups)
        c.partitions[part.index] = part
    for part in c.partitions.values():
        for w in part.log.writes.values():
            if w.callback and w.callback[0] in ("assignment", "static"):
                w.callback = (w.callback[0], groups[w.callback[1]]) + w.callback[2:]
    return c


def _group_from(s: tuple[Any, ...], made: dict[Hashable, ResponseFuture]) -> ClassicGroup:
    (inc, gid, state, previous, ptype, pname, gen, leader, members, static, pending, awaiting, supported,
     pending_sync, new_added) = s
    g = ClassicGroup(gid, inc, _STATES[state], gen, ptype, pname, leader)
    g.previous_state = _STATES[previous]
    for (mid, iid, client_id, host, rebalance, session, mtype, protocols, assignment, join_key, sync_key,
         is_new) in members:
        m = ClassicGroupMember(mid, iid, client_id, host, rebalance, session, mtype, protocols, assignment)
        m.awaiting_join = None if join_key is None else made[join_key]
        m.awaiting_sync = None if sync_key is None else made[sync_key]
        m.is_new = is_new
        g.members[mid] = m
    g.static_members, g.pending_join_members = dict(static), set(pending)
    g.num_members_awaiting_join, g.supported_protocols = awaiting, dict(supported)
    g.pending_sync_members, g.new_member_added = set(pending_sync), new_added
    return g


def _response_from(s: tuple[Any, ...] | None) -> object:
    if s is None:
        return None
    if s[0] == "LeaveGroup":
        return LeaveGroupResult(Errors(s[1]), tuple((m, i, Errors(e)) for m, i, e in s[2]))
    return (HeartbeatResult if s[0] == "HeartbeatResult" else CommitResult)(Errors(s[1]))


def _partition_from(s: tuple[Any, ...], made: dict[Hashable, ResponseFuture],
                    groups: dict[int, ClassicGroup]) -> Partition:
    (index, status, group_states, visible, tasks, unkeyed, queue, writes, open_batch, written, waiting, end,
     committed) = s
    part = Partition(index, status)
    for gs in group_states:
        group = _group_from(gs, made)
        groups[group.incarnation] = group
        part.groups[group.group_id] = group
    part.visible_at = dict(visible)
    timer = KeyedTimer()
    live = {t[0]: TimerTask(*t) for t in tasks + unkeyed}
    timer.tasks = {t[1]: live[t[0]] for t in tasks}
    timer.unkeyed = {t[0]: live[t[0]] for t in unkeyed}
    timer.queue = [live.get(t[0]) or TimerTask(*t) for t in queue]
    part.timer = timer
    log = PartitionLog(end)
    log.committed = committed
    for w in writes:
        (seq, partition, api, fkey, response, group_id, record, has_record, callback, created, timeout_seq,
         done) = w
        log.writes[seq] = Write(seq, partition, api, None if fkey is None else made[fkey], _response_from(response),
                                group_id, record, has_record, callback, created, timeout_seq, done)
    log.open = None if open_batch is None else Batch(open_batch[0], list(open_batch[1]), open_batch[2])
    log.written = [(e, list(seqs)) for e, seqs in written]
    log.waiting = list(waiting)
    part.log = log
    return part

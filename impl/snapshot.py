"""Coordinator state as canonical plain data (tuples of ints/strs/bytes/bools/None) and back.

Equal coordinator states give equal tuples: members, keys and ops are emitted in sorted order and
every reference (op → group, op → member, member → parked future) is written as data. Group
objects that left the cache but are still referenced by an op or a pending append (a stale,
Dead group) and members that left their group but are still held by a heartbeat op (E0's
KAFKA-7196 behaviour) are written out too, so a restored coordinator behaves identically.
The ``errors``/``events`` logs are history, not state, and are not part of a snapshot.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.types import GroupState
from impl.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync, InitialDelayedJoin
from impl.group import GroupMetadata, MemberMetadata
from impl.purgatory import DelayedOperation
from impl.results import CoordinatorConfig, ResponseFuture
from impl.static_members import StaticRejoin

if TYPE_CHECKING:
    from impl.coordinator import GroupCoordinator

_STATES = {s.value: s for s in GroupState}
_REKEYED = "rekeyed:"


def _future_key(future: ResponseFuture | None) -> Any:
    return None if future is None else future.key


def _member_state(m: MemberMetadata) -> tuple[Any, ...]:
    return (m.member_id, m.group_instance_id, m.client_id, m.client_host, m.session_timeout_ms,
            m.rebalance_timeout_ms, m.protocol_type, m.protocols, m.assignment, _future_key(m.awaiting_join),
            _future_key(m.awaiting_sync), m.latest_heartbeat_ms, m.is_leaving, m.is_new, m.heartbeat_satisfied)


def _group_state(g: GroupMetadata) -> tuple[Any, ...]:
    return (g.incarnation, g.group_id, g.state.value, g.state_timestamp_ms, g.protocol_type, g.protocol_name,
            g.generation_id, g.leader_id, tuple(_member_state(g.members[k]) for k in sorted(g.members)),
            tuple(sorted(g.pending_members)), tuple(sorted(g.pending_sync_members)),
            g.num_members_awaiting_join, tuple(sorted(g.supported_protocols.items())), g.new_member_added,
            tuple(sorted(g.static_members.items())))


def _rejoin_state(rejoin: StaticRejoin | None) -> tuple[Any, ...] | None:
    if rejoin is None:
        return None
    return (rejoin.group_instance_id, rejoin.old_member_id, rejoin.new_member_id, rejoin.old_protocols,
            rejoin.old_rebalance_timeout_ms, rejoin.old_session_timeout_ms, rejoin.leader_id, rejoin.future_key,
            rejoin.skip_assignment) + ((rejoin.holder_id,) if rejoin.holder_id else ())   # older snapshots stay


def _op_state(op: DelayedOperation) -> tuple[Any, ...]:
    head = (op.seq, op.kind, op.delay_ms, op.deadline_ms)
    if isinstance(op, InitialDelayedJoin):
        return head + (op.group.incarnation, op.configured_delay_ms, op.remaining_ms)
    if isinstance(op, DelayedJoin):
        return head + (op.group.incarnation,)
    if isinstance(op, DelayedSync):
        return head + (op.group.incarnation, op.generation_id)
    assert isinstance(op, DelayedHeartbeat)
    if op.member is None:
        ref: Any = None
    elif op.group.members.get(op.member_id) is op.member:
        ref = "live"
    elif op.group.members.get(op.member.member_id) is op.member:
        ref = _REKEYED + op.member.member_id   # a static member re-keyed since the op was armed (KIP-345)
    else:
        ref = _member_state(op.member)   # a removed member the op still holds
    return head + (op.group.incarnation, op.member_id, op.heartbeat_deadline_ms, op.is_pending, ref)


def coordinator_to_state(c: "GroupCoordinator") -> tuple[Any, ...]:
    ops = sorted(c.timer.entries.values(), key=lambda op: op.seq)
    referenced = [op.group for op in ops] + [a.group for a in c.appends]   # type: ignore[attr-defined]
    cached = {g.incarnation for g in c.groups.values()}
    detached = {g.incarnation: g for g in referenced if g.incarnation not in cached}
    watchers = tuple((key, tuple(op.seq for op in lst if not op.completed))
                     for purgatory in (c.join_purgatory, c.heartbeat_purgatory)
                     for key, lst in sorted(purgatory.watchers.items()))
    return (
        c.config.to_tuple(), c.now_ms, c.counter, c.incarnations,
        tuple(_group_state(c.groups[k]) for k in sorted(c.groups)),
        tuple(_group_state(detached[i]) for i in sorted(detached)),
        tuple(sorted(c.log.items())), tuple(sorted(c.unloaded)), tuple(sorted(c.loading)),
        tuple(_op_state(op) for op in ops), tuple(w for w in watchers if w[1]),
        tuple((a.seq, a.group.incarnation, a.generation_id, a.kind, tuple(sorted(a.assignment.items())), a.record,
               _rejoin_state(a.rejoin)) for a in c.appends),
    )


def _member_from(s: tuple[Any, ...], outbox: list[Any]) -> MemberMetadata:
    (mid, iid, client_id, host, session, rebalance, ptype, protocols, assignment, join_key, sync_key,
     latest, leaving, new, satisfied) = s
    m = MemberMetadata(mid, client_id, host, session, rebalance, ptype, protocols, iid)
    m.assignment = assignment
    m.awaiting_join = None if join_key is None else ResponseFuture(join_key, "JoinGroup", outbox)
    m.awaiting_sync = None if sync_key is None else ResponseFuture(sync_key, "SyncGroup", outbox)
    m.latest_heartbeat_ms, m.is_leaving, m.is_new, m.heartbeat_satisfied = latest, leaving, new, satisfied
    return m


def _group_from(c: "GroupCoordinator", s: tuple[Any, ...]) -> GroupMetadata:
    (inc, gid, state, ts, ptype, pname, gen, leader, members, pending, pending_sync, awaiting, supported,
     new_added, static_members) = s
    g = c.group_class(gid, c.profile, inc, ts, ptype)
    g.state, g.protocol_name, g.generation_id, g.leader_id = _STATES[state], pname, gen, leader
    g.members = {m[0]: _member_from(m, c._outbox) for m in members}
    g.pending_members, g.pending_sync_members = set(pending), set(pending_sync)
    g.num_members_awaiting_join, g.supported_protocols = awaiting, dict(supported)
    g.new_member_added = new_added
    g.static_members = dict(static_members)
    g.on_callback_failure = c._log_guard
    return g


def _op_from(c: "GroupCoordinator", s: tuple[Any, ...], groups: dict[int, GroupMetadata]) -> DelayedOperation:
    seq, kind, delay, deadline, inc = s[:5]
    group = groups[inc]
    op: DelayedOperation
    if kind == "InitialDelayedJoin":
        op = c.initial_join_class(c, group, s[5], delay, s[6], seq)
    elif kind == "DelayedJoin":
        op = c.join_class(c, group, delay, seq)
    elif kind == "DelayedSync":
        op = DelayedSync(c, group, s[5], delay, seq)
    else:
        member_id, hb_deadline, pending, ref = s[5:9]
        if ref is None:
            member = None
        elif ref == "live":
            member = group.members[member_id]
        elif isinstance(ref, str) and ref.startswith(_REKEYED):
            member = group.members[ref[len(_REKEYED):]]
        else:
            member = _member_from(ref, c._outbox)
        op = DelayedHeartbeat(c, group, member, member_id, hb_deadline, delay, seq, pending)
    op.deadline_ms = deadline
    op._timer = c.timer
    return op


def coordinator_from_state(cls: type["GroupCoordinator"], state: tuple[Any, ...],
                           record_events: bool = False) -> "GroupCoordinator":
    (config, now, counter, incarnations, groups, detached, log, unloaded, loading, ops, watchers, appends) = state
    c = cls(CoordinatorConfig(*config), record_events)
    c.timer.now_ms, c.counter, c.incarnations = now, counter, incarnations
    by_inc: dict[int, GroupMetadata] = {}
    for s in groups:
        g = _group_from(c, s)
        c.groups[g.group_id] = by_inc[g.incarnation] = g
        if record_events:
            g.history = c.transitions
    for s in detached:
        g = _group_from(c, s)
        by_inc[g.incarnation] = g
    c.log, c.unloaded, c.loading = dict(log), set(unloaded), set(loading)
    by_seq = {s[0]: _op_from(c, s, by_inc) for s in ops}
    c.timer.entries = dict(sorted(by_seq.items()))
    for key, seqs in watchers:
        purgatory = c.heartbeat_purgatory if key.startswith("member:") else c.join_purgatory
        purgatory.watchers[key] = [by_seq[q] for q in seqs]
    from impl.coordinator import PendingAppend
    c.appends = [PendingAppend(seq, by_inc[inc], gen, kind, dict(assignment), record,
                               None if rejoin is None else StaticRejoin(*rejoin))
                 for seq, inc, gen, kind, assignment, record, rejoin in appends]
    return c

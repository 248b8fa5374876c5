"""Observation: a cheap, immutable read-out of a World after a step — what concrete properties read.

Properties may look inside the coordinator (groups, member flags, live delayed operations, pending
appends); the coordinator never knows about them. ``observe`` is the one function that reads a
World; everything a property needs is copied into frozen values here, so a property never holds a
reference into live coordinator state. It needs a World created with ``record=True``: the events
and responses of a step, and the coordinator's transitions log, are only kept when recording.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from core.actions import Action
from core.events import StepEvent
from core.responses import Response
from core.trace import Step
from core.types import GroupState
from harness.external import WireRequest
from harness.world import World
from model.releases import fact

RequestKey = tuple[int, int]   # (client index, correlation id), as on the network


@dataclass(frozen=True, slots=True)
class MemberObs:
    """One member's fields; ``awaiting_join``/``awaiting_sync`` are the keys of the parked requests."""

    member_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    awaiting_join: RequestKey | None
    awaiting_sync: RequestKey | None
    is_new: bool
    latest_heartbeat_ms: int      # ≤ 2.4 deadline arithmetic (0.10.0 profile)
    heartbeat_satisfied: bool     # 2.5+ flag (3.9 profile)
    is_leaving: bool
    protocols: tuple[str, ...]
    group_instance_id: str | None = None   # KIP-345 (2.3+)

    @property
    def awaiting(self) -> bool:
        return self.awaiting_join is not None or self.awaiting_sync is not None


@dataclass(frozen=True, slots=True)
class GroupObs:
    """One group object. ``cached``: the coordinator's group cache holds it; a stale (detached)
    group is one that left the cache but is still referenced by a delayed op or a pending append."""

    group_id: str
    incarnation: int
    cached: bool
    state: GroupState
    generation_id: int
    leader_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    members: tuple[MemberObs, ...]          # sorted by member id
    pending_members: frozenset[str]
    pending_sync_members: frozenset[str]
    num_members_awaiting_join: int
    supported_protocols: tuple[tuple[str, int], ...]
    new_member_added: bool
    static_members: tuple[tuple[str, str], ...] = ()   # staticMembers: (group.instance.id, member id), sorted

    @property
    def member_ids(self) -> frozenset[str]:
        return frozenset(m.member_id for m in self.members)

    def member(self, member_id: str) -> MemberObs | None:
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None


@dataclass(frozen=True, slots=True)
class OpObs:
    """A live (uncompleted) delayed operation. ``deadline_ms`` is the timer deadline (fires when
    deadline < now); ``heartbeat_deadline_ms`` the DelayedHeartbeat's own deadline (-1 otherwise)."""

    seq: int
    kind: str                 # DelayedJoin | InitialDelayedJoin | DelayedHeartbeat | DelayedSync
    key: str
    incarnation: int          # the group object it belongs to
    member_id: str            # DelayedHeartbeat only
    deadline_ms: int
    delay_ms: int
    heartbeat_deadline_ms: int = -1
    pending: bool = False     # a KIP-394 pending-member expiration
    remaining_ms: int = -1    # InitialDelayedJoin only
    generation_id: int = -1   # DelayedSync only
    stale_member: bool = False   # holds a member object its group no longer has (0.10.0, KAFKA-7196)
    complete_count: int = 0      # how often its onComplete ran (exactly-once: 0 while it is live)


@dataclass(frozen=True, slots=True)
class AppendObs:
    seq: int
    incarnation: int
    generation_id: int
    kind: str                 # "assignment" | "empty" | "static" (a static member's id replacement, 2.6.1+)
    member_id: str = ""       # "static": the new member id it stores
    skips: bool = False       # "static": the restart's JoinGroup asked to skip the assignment and the release lets it


@dataclass(frozen=True, slots=True)
class ParkedObs:
    """A parked JoinGroup/SyncGroup response future and who holds it."""

    key: RequestKey
    api: str
    incarnation: int
    member_id: str
    in_table: bool            # the holder is (this very object) in its group's member table
    completions: int
    done: bool
    #: a JoinGroup whose client asked to skip the assignment (v9+, KIP-814): what the store callback of a static
    #: restart answers depends on it (SPEC.md §3.1 J5a step 4, Corrections 1)
    asked_to_skip: bool = False


@dataclass(frozen=True, slots=True)
class RequestObs:
    """A request in flight on the network (not yet delivered)."""

    key: RequestKey
    api: str
    member_id: str
    generation_id: int
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None = None
    asked_to_skip: bool = False   # a JoinGroup v9+ (KIP-814: supportSkippingAssignment)


@dataclass(frozen=True, slots=True)
class Observation:
    profile: str
    previous_states: Mapping[GroupState, frozenset[GroupState]]   # the profile's §1.2 table, as impl has it
    time_ms: int
    group_id: str
    group: GroupObs | None                  # the cached group of the world's group id
    groups: tuple[GroupObs, ...]            # every reachable group object (cached and stale), by incarnation
    ops: tuple[OpObs, ...]                  # live delayed operations, by seq
    appends: tuple[AppendObs, ...]          # pending log appends, oldest first
    parked: tuple[ParkedObs, ...]           # parked responses, by key
    inflight: tuple[RequestObs, ...]        # requests on the network, by key
    errors: int                             # IllegalStateErrors the coordinator caught so far
    last_error: str                         # the text of the last one ("" if none)
    unloaded: bool                          # this broker does not lead the group's partition
    loading: bool
    new_member_join_timeout_ms: int
    initial_rebalance_delay_ms: int
    step_index: int                         # index of the step that produced it; -1 for an initial read-out
    action: Action | None = None            # the action of that step
    events: tuple[StepEvent, ...] = ()      # events of that step (core/events.py)
    responses: tuple[Response, ...] = ()    # responses of that step
    transitions: tuple[tuple[str, str, str], ...] = ()   # (group, from, to) of that step
    transition_count: int = 0               # length of the coordinator's transitions log
    #: requests whose answer waits behind uncommitted writes (release fact answers-wait-for-commit, SPEC-4x.md R3;
    #: properties/observation_4x.py); always empty on the Scala coordinator, which answers under the group lock
    held: tuple[RequestKey, ...] = ()
    #: requests whose write event has not ended (``held`` ones and JoinGroup/SyncGroup ones): the write's end may answer
    #: them (batched-log-writes, write-timeout; properties/observation_4x.py); empty on the Scala coordinator
    in_write: tuple[RequestKey, ...] = ()
    #: the Java runtime's (group incarnation, transitions so far), whence the next step's ``transitions``
    move_counts: tuple[tuple[int, int], ...] = ()

    def group_by_incarnation(self, incarnation: int) -> GroupObs | None:
        for g in self.groups:
            if g.incarnation == incarnation:
                return g
        return None

    def ops_of(self, incarnation: int, kinds: tuple[str, ...]) -> list[OpObs]:
        return [op for op in self.ops if op.incarnation == incarnation and op.kind in kinds]

    def op(self, seq: int) -> OpObs | None:
        for op in self.ops:
            if op.seq == seq:
                return op
        return None

    def request(self, key: RequestKey) -> RequestObs | None:
        for r in self.inflight:
            if r.key == key:
                return r
        return None

    @property
    def parked_keys(self) -> frozenset[RequestKey]:
        return frozenset(p.key for p in self.parked)


def _key(future: Any) -> RequestKey | None:
    return None if future is None else tuple(future.key)


def _member(m: Any) -> MemberObs:
    return MemberObs(m.member_id, m.session_timeout_ms, m.rebalance_timeout_ms, _key(m.awaiting_join),
                     _key(m.awaiting_sync), m.is_new, m.latest_heartbeat_ms, m.heartbeat_satisfied, m.is_leaving,
                     tuple(name for name, _ in m.protocols), m.group_instance_id)


def _group(g: Any, cached: bool) -> GroupObs:
    return GroupObs(g.group_id, g.incarnation, cached, g.state, g.generation_id, g.leader_id, g.protocol_type,
                    g.protocol_name, tuple(_member(g.members[k]) for k in sorted(g.members)),
                    frozenset(g.pending_members), frozenset(g.pending_sync_members), g.num_members_awaiting_join,
                    tuple(sorted(g.supported_protocols.items())), g.new_member_added,
                    tuple(sorted(g.static_members.items())))


def _op(op: Any) -> OpObs:
    kind, count = op.kind, op.complete_count
    if kind == "DelayedHeartbeat":
        member = op.member
        stale = member is not None and op.group.members.get(op.member_id) is not member
        return OpObs(op.seq, kind, op.key, op.group.incarnation, op.member_id, op.deadline_ms, op.delay_ms,
                     op.heartbeat_deadline_ms, op.is_pending, stale_member=stale, complete_count=count)
    if kind == "InitialDelayedJoin":
        return OpObs(op.seq, kind, op.key, op.group.incarnation, "", op.deadline_ms, op.delay_ms,
                     remaining_ms=op.remaining_ms, complete_count=count)
    if kind == "DelayedSync":
        return OpObs(op.seq, kind, op.key, op.group.incarnation, "", op.deadline_ms, op.delay_ms,
                     generation_id=op.generation_id, complete_count=count)
    return OpObs(op.seq, kind, op.key, op.group.incarnation, "", op.deadline_ms, op.delay_ms, complete_count=count)


def _live_ops(coord: Any) -> list[Any]:
    live = {op.seq: op for op in coord.timer.entries.values() if not op.completed}
    for purgatory in (coord.join_purgatory, coord.heartbeat_purgatory):
        for ops in purgatory.watchers.values():
            for op in ops:
                if not op.completed:
                    live.setdefault(op.seq, op)
    return [live[s] for s in sorted(live)]


def _parked(world: World, groups: list[tuple[Any, bool]], ops: list[Any]) -> tuple[ParkedObs, ...]:
    found: dict[RequestKey, ParkedObs] = {}
    holders = [(g, m, True) for g, _ in groups for m in g.members.values()]
    # an op of an id that a static member was re-keyed away from (KIP-345) still points at the member object; Kafka's
    # DelayedHeartbeat holds only the id, so such an op holds nothing of the new incarnation
    holders += [(op.group, op.member, op.group.members.get(op.member_id) is op.member)
                for op in ops if getattr(op, "member", None) is not None and op.member.member_id == op.member_id]
    for g, m, in_table in holders:
        for api, future in (("JoinGroup", m.awaiting_join), ("SyncGroup", m.awaiting_sync)):
            if future is not None:
                key = _key(future)
                assert key is not None
                found.setdefault(key, ParkedObs(key, api, g.incarnation, m.member_id, in_table,
                                                future.completions, future.done,
                                                api == "JoinGroup" and world.asks_to_skip_assignment(key)))
    return tuple(found[k] for k in sorted(found))


def observe(world: World, step: Step | None = None, transitions_from: int | None = None) -> Observation:
    """Read ``world`` now. ``step`` is the recorded step that led here (None for an initial read-out);
    ``transitions_from`` is the length of the coordinator's transitions log before that step."""
    if not world.record:
        raise ValueError("observe() needs a World created with record=True (events are only kept when recording).")
    if is_java_runtime(world.coord):
        return observe_java(world, step, None, fact("answers-wait-for-commit", world.profile.name))
    coord = world.coord
    gid = world.group_id
    cached_group = coord.groups.get(gid)
    ops = _live_ops(coord)
    raw: dict[int, tuple[Any, bool]] = {g.incarnation: (g, True) for g in coord.groups.values()}
    for obj in [op.group for op in ops] + [a.group for a in coord.appends]:
        raw.setdefault(obj.incarnation, (obj, coord.groups.get(obj.group_id) is obj))
    ordered = [raw[i] for i in sorted(raw)]
    groups = tuple(_group(g, cached) for g, cached in ordered)
    by_inc = {g.incarnation: g for g in groups}
    log = coord.transitions
    start = len(log) if transitions_from is None or transitions_from > len(log) else transitions_from
    return Observation(
        profile=world.profile.name, previous_states=world.profile.previous_states, time_ms=coord.now_ms,
        group_id=gid, group=None if cached_group is None else by_inc[cached_group.incarnation], groups=groups,
        ops=tuple(_op(op) for op in ops),
        appends=tuple(AppendObs(a.seq, a.group.incarnation, a.generation_id, a.kind,
                                a.rejoin.new_member_id if a.rejoin is not None else "",
                                a.rejoin is not None and a.rejoin.skip_assignment) for a in coord.appends),
        parked=_parked(world, ordered, ops),
        inflight=_inflight(world),
        errors=len(coord.errors), last_error=coord.errors[-1] if coord.errors else "",
        unloaded=gid in coord.unloaded, loading=gid in coord.loading,
        new_member_join_timeout_ms=coord.config.new_member_join_timeout_ms,
        initial_rebalance_delay_ms=coord.config.group_initial_rebalance_delay_ms,
        step_index=-1 if step is None else step.index, action=None if step is None else step.action,
        events=() if step is None else step.events, responses=() if step is None else step.responses,
        transitions=tuple(log[start:]) if step is not None else (), transition_count=len(log),
    )


def observe_again(seen: Observation, world: World) -> Observation:
    """``observe(world)`` for a world whose coordinator is in the state an initial read-out ``seen`` was taken in
    (equal coordinator states read the same): only the requests in flight are read again."""
    return replace(seen, inflight=_inflight(world))


def inflight(world: World) -> tuple[RequestObs, ...]:
    """The requests on the network, by key."""
    return _inflight(world)


def _inflight(world: World) -> tuple[RequestObs, ...]:
    return tuple(RequestObs(k, r.api, r.member_id, r.generation_id, r.session_timeout_ms, r.rebalance_timeout_ms,
                            r.group_instance_id, r.support_skipping_assignment)
                 for k, r in sorted(world.net.requests.items()))


def delivered_key(action: Action) -> tuple[int, int] | None:
    """The request key a DeliverRequest (or a real client's Receive) action hands to the coordinator."""
    if action.kind == "DeliverRequest" and isinstance(action.arg, int):
        return (action.client, action.arg)
    if action.kind == "Receive":
        return (action.client, WireRequest.from_payload(str(action.arg)).corr)
    return None


def delivered_request(before: Observation, step: Step) -> RequestObs | None:
    """The request ``step`` handed to the coordinator: the one it took off the network (DeliverRequest),
    or the one a real client sent (Receive, which never sits on the simulated network)."""
    action = step.action
    if action.kind == "Receive":
        r = WireRequest.from_payload(str(action.arg))
        return RequestObs((action.client, r.corr), r.api, r.member_id, r.generation_id, r.session_timeout_ms,
                          r.rebalance_timeout_ms, r.group_instance_id, r.support_skipping_assignment)
    if action.kind == "DeliverRequest" and isinstance(action.arg, int):
        return before.request((action.client, action.arg))
    return None


def observe_after(before: Observation, world: World, step: Step) -> Observation:
    """``observe(world, step, before.transition_count)`` for the step just taken from the world ``before``
    was read in. When the step did not call into the coordinator (``world.touched_coordinator`` is False)
    only the requests in flight and the step's own fields can differ from ``before``, so they are all that
    is read again; otherwise this is ``observe``."""
    if world.touched_coordinator:
        if is_java_runtime(world.coord):
            return observe_java(world, step, before, fact("answers-wait-for-commit", world.profile.name))
        return observe(world, step, before.transition_count)
    return replace(before, inflight=_inflight(world), step_index=step.index, action=step.action,
                   events=step.events, responses=step.responses, transitions=())



from properties.observation_4x import is_java_runtime, observe_java   # noqa: E402 — it builds on the values above

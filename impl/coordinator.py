"""GroupCoordinator: the public driver surface of DESIGN.md §4 — request entry points with their
pre-checks, the clock, log appends, load/unload and read-only views."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Hashable, Iterator

from core.events import IllegalState, MemberLeaves, StepEvent, Unloaded
from core.types import Errors, GroupState
from impl.delayed import DelayedHeartbeat, member_key
from impl.group import GroupMetadata, MemberMetadata
from impl.guards import GuardError
from impl.liveness import STORE_ERRORS, LivenessMixin
from impl.profiles import Profile, get_profile, sibling_runtime
from impl.purgatory import DelayedOperationPurgatory, MockTimer
from impl.rebalance import RebalanceMixin
from impl.static_members import StaticMembershipMixin, StaticRejoin
from impl.results import (AppendView, CommitResult, CoordinatorConfig, DelayedOpView, GroupSummary, GroupView,
                          HeartbeatResult, JoinGroupResult, LeaveGroupResult, MemberSummary, MemberView,
                          ResponseFuture, SyncGroupResult, TimerView)

PR, CR, S, E, D = (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE,
                   GroupState.EMPTY, GroupState.DEAD)


@dataclass(frozen=True, slots=True)
class JoinRequest:
    member_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    require_known_member_id: bool
    client_id: str
    client_host: str
    group_instance_id: str | None = None
    support_skipping_assignment: bool = False


@dataclass(slots=True)
class PendingAppend:
    """A log append whose completion (and callback) is still to come — held as data (SPEC.md §5.2)."""

    seq: int
    group: GroupMetadata
    generation_id: int
    kind: str                            # "assignment" | "empty" | "static" (a static id replacement)
    assignment: dict[str, bytes]
    record: tuple[Any, ...]              # what becomes durable if the append succeeds
    rejoin: StaticRejoin | None = None   # kind "static": what its callback answers or reverts


class GroupCoordinator(RebalanceMixin, LivenessMixin, StaticMembershipMixin):
    """Kafka's classic GroupCoordinator for one broker, on a mock clock, one request at a time."""

    #: the group class (a seam: seeded mutants may subclass it; snapshots restore through it)
    group_class: type[GroupMetadata] = GroupMetadata

    def __new__(cls, config: CoordinatorConfig | None = None, *args: Any, **kwargs: Any) -> Any:
        """A profile a sibling runtime serves (impl/profiles.py SIBLING_RUNTIMES) gets that runtime's coordinator;
        subclasses (seeded mutants) are Scala-shaped and never redirected."""
        runtime = sibling_runtime(config.profile) if cls is GroupCoordinator and config is not None else None
        if runtime is not None:
            return runtime(config, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, config: CoordinatorConfig | None = None, record_events: bool = False) -> None:
        self.config = config or CoordinatorConfig()
        self.profile: Profile = get_profile(self.config.profile)
        self.timer = MockTimer()
        self.heartbeat_purgatory = DelayedOperationPurgatory("Heartbeat", self.timer)
        self.join_purgatory = DelayedOperationPurgatory("Rebalance", self.timer)
        self.groups: dict[str, GroupMetadata] = {}
        self.log: dict[str, tuple[Any, ...]] = {}        # last durable group record per group id
        self.unloaded: set[str] = set()                   # partitions this broker no longer leads
        self.loading: set[str] = set()
        self.appends: list[PendingAppend] = []
        self.errors: list[str] = []                       # guards that fired (impl/guards.py), as logged
        self.events: list[StepEvent] = []                 # what each step did (core/events.py), only if record_events
        self.transitions: list[tuple[str, str, str]] = []  # (group, from, to), only if record_events
        self.record_events = record_events
        self.counter = 0                                  # seq numbers of ops, appends and generated ids
        self.incarnations = 0
        self._outbox: list[tuple[Hashable, str, Any]] = []

    # -- small helpers -----------------------------------------------------------------------------
    def _future(self, request_key: Hashable | None, api: str) -> ResponseFuture:
        return ResponseFuture(("req", self._seq()) if request_key is None else request_key, api, self._outbox)

    def take_responses(self) -> list[tuple[Hashable, str, Any]]:
        """Every future completion since the last call, in completion order."""
        out, self._outbox[:] = list(self._outbox), []
        return out

    @contextmanager
    def _guard(self, future: ResponseFuture | None) -> Iterator[None]:
        """Like Kafka's request handler and timer executor: one of the coordinator's own guards (impl/guards.py)
        is logged, not fatal, and the request in progress is answered UNKNOWN_SERVER_ERROR."""
        try:
            yield
        except GuardError as exc:
            self._log_guard(exc)
            if future is not None and not future.done:
                future.complete(_error_result(future.api, Errors.UNKNOWN_SERVER_ERROR))

    def _log_guard(self, exc: GuardError) -> None:
        """Record a guard that fired — thrown up to a handler, or caught by the group (a response callback that
        failed, 3.3.2+): the gate reports every one (property no-illegal-state-error)."""
        self.errors.append(f"{self.now_ms} {exc.describe()}")
        self._event(IllegalState, exc.describe())

    def _precheck(self, group_id: str | None, api: str) -> Errors | None:
        """validateGroupStatus (SPEC.md §3.0); the order of the last two checks depends on the release."""
        if group_id is None or (group_id == "" and api not in ("OffsetCommit", "DescribeGroups")):
            return Errors.INVALID_GROUP_ID   # isValidGroupId: "" is a group for commits and describes only
        checks = [(group_id in self.unloaded, Errors.NOT_COORDINATOR)]
        if api != "SyncGroup" or self.profile.sync_checks_loading:
            checks.append((group_id in self.loading, Errors.COORDINATOR_LOAD_IN_PROGRESS))
        if not self.profile.not_coordinator_before_loading:
            checks.reverse()
        return next((error for failed, error in checks if failed), None)

    def _new_group(self, group_id: str, protocol_type: str | None) -> GroupMetadata:
        self.incarnations += 1
        group = self.group_class(group_id, self.profile, self.incarnations, self.now_ms,
                              protocol_type if self.profile.protocol_type_at_creation else None)
        if self.record_events:
            group.history = self.transitions
        group.on_callback_failure = self._log_guard
        self.groups[group_id] = group
        return group

    def _remove_group(self, group: GroupMetadata) -> None:
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]
        self.log.pop(group.group_id, None)   # E0 writes a tombstone for a dead group

    # -- requests ----------------------------------------------------------------------------------
    def join_group(self, group_id: str, member_id: str, session_timeout_ms: int, rebalance_timeout_ms: int,
                   protocol_type: str, protocols: list[tuple[str, bytes]], group_instance_id: str | None = None,
                   require_known_member_id: bool = False, client_id: str = "client",
                   client_host: str = "/127.0.0.1", request_key: Hashable | None = None,
                   support_skipping_assignment: bool = False) -> ResponseFuture:
        """``support_skipping_assignment``: the request is JoinGroup v9+ (KIP-814, 3.2)."""
        future = self._future(request_key, "JoinGroup")
        req = JoinRequest(member_id, session_timeout_ms, rebalance_timeout_ms, protocol_type,
                          tuple((str(n), bytes(m)) for n, m in protocols), require_known_member_id,
                          client_id, client_host, group_instance_id, support_skipping_assignment)
        with self._guard(future):
            error = self._precheck(group_id, "JoinGroup")
            if error is None and self.static_join_unsupported(group_instance_id):
                error = Errors.UNSUPPORTED_VERSION   # no KIP-345 in this release
            if error is None and not (self.config.group_min_session_timeout_ms <= session_timeout_ms
                                      <= self.config.group_max_session_timeout_ms):
                error = Errors.INVALID_SESSION_TIMEOUT
            group = self.groups.get(group_id)
            if error is None and group is None:
                if member_id != "":
                    error = Errors.UNKNOWN_MEMBER_ID
                else:
                    group = self._new_group(group_id, protocol_type)
            if error is not None or group is None:
                future.complete(self.join_error(member_id, error or Errors.UNKNOWN_MEMBER_ID))
            else:
                self.do_join_group(group, req, future)
        return future

    def sync_group(self, group_id: str, generation_id: int, member_id: str,
                   assignments: dict[str, bytes] | None = None, group_instance_id: str | None = None,
                   protocol_type: str | None = None, protocol_name: str | None = None,
                   request_key: Hashable | None = None) -> ResponseFuture:
        future = self._future(request_key, "SyncGroup")
        with self._guard(future):
            error = self._precheck(group_id, "SyncGroup")
            if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                error = Errors.REBALANCE_IN_PROGRESS   # older clients do not know the load error
            group = self.groups.get(group_id)
            if error is None and group is None:
                error = Errors.UNKNOWN_MEMBER_ID
            if error is not None or group is None:
                future.complete(SyncGroupResult(error or Errors.UNKNOWN_MEMBER_ID))
            else:
                self.do_sync_group(group, generation_id, member_id, dict(assignments or {}), protocol_type,
                                   protocol_name, future, group_instance_id)
        return future

    def heartbeat(self, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None = None,
                  request_key: Hashable | None = None) -> ResponseFuture:
        future = self._future(request_key, "Heartbeat")
        with self._guard(future):
            error = self._precheck(group_id, "Heartbeat")
            if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                error = Errors.NONE   # the group is still loading: answer blindly
            elif error is None:
                group = self.groups.get(group_id)
                error = Errors.UNKNOWN_MEMBER_ID if group is None else self._do_heartbeat(
                    group, member_id, generation_id, group_instance_id)
            future.complete(HeartbeatResult(error))
        return future

    def _do_heartbeat(self, group: GroupMetadata, member_id: str, generation_id: int,
                      group_instance_id: str | None = None) -> Errors:
        p = self.profile
        if group.is_(D):
            return p.dead_group_error
        if p.heartbeat_state_check_first and not group.is_(S):
            return p.heartbeat_answers[group.state][0]   # 0.9–2.2 switched on state first (SPEC.md §3.3)
        member_error = self.current_member_error(group, member_id, group_instance_id)   # fenced, then unknown
        if member_error is not None:
            return member_error
        if generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        error, resets = p.heartbeat_answers[group.state]
        if resets:
            self.complete_and_schedule_next_expiration(group, group.get(member_id))
        return error

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]],
                    request_key: Hashable | None = None) -> ResponseFuture:
        future = self._future(request_key, "LeaveGroup")
        with self._guard(future):
            identities = list(members) if self.profile.batch_leave else list(members)[:1]
            error = self._precheck(group_id, "LeaveGroup")
            group = self.groups.get(group_id)
            if error is not None:
                future.complete(LeaveGroupResult(error))
            elif group is None:
                per = tuple((m, i, Errors.UNKNOWN_MEMBER_ID) for m, i in identities)
                future.complete(LeaveGroupResult(Errors.NONE if self.profile.batch_leave
                                                 else Errors.UNKNOWN_MEMBER_ID, per))
            elif group.is_(D):
                future.complete(LeaveGroupResult(self.profile.dead_group_error))
            else:
                future.complete(self.leave_result(tuple((m, i, self.leave_identity(group, m, i))
                                                        for m, i in identities)))
        return future

    def leave_result(self, per: tuple[tuple[str, str | None, Errors], ...]) -> LeaveGroupResult:
        """The answer to a LeaveGroup whose identities were judged (``per``): 2.4+ (v3, KAFKA-8221) a NONE top level
        with each identity's error; before, the one identity's error (SPEC.md §3.4)."""
        top = Errors.NONE if self.profile.batch_leave or not per else per[0][2]
        return LeaveGroupResult(top, per)

    def _leave_member(self, group: GroupMetadata, member_id: str) -> Errors:
        key = member_key(group.group_id, member_id)
        if self.profile.pending_members and group.is_pending_member(member_id):
            self.remove_pending_member_and_update_group(group, member_id)
            self.heartbeat_purgatory.check_and_complete(key)
            return Errors.NONE
        if not group.has(member_id):
            return Errors.UNKNOWN_MEMBER_ID
        member = group.get(member_id)
        self._event(MemberLeaves, member_id)
        if self.profile.missing_member_heartbeat != "complete":   # ≤ 2.4: isLeaving lets the op complete first
            member.is_leaving = True
            self.heartbeat_purgatory.check_and_complete(key)
            self.remove_member_and_update_group(group, member)
        else:
            self.remove_member_and_update_group(group, member)
            self.heartbeat_purgatory.check_and_complete(key)
        return Errors.NONE

    def commit_offsets(self, group_id: str, member_id: str, generation_id: int, offsets: object = None,
                       group_instance_id: str | None = None, request_key: Hashable | None = None,
                       api_version: int | None = None) -> ResponseFuture:
        """OffsetCommit, only as far as it touches membership: offsets are not stored (SPEC.md §3.5). ``api_version``
        is the Java runtime's surface (R15); up to 3.9 the answer does not depend on it."""
        future = self._future(request_key, "OffsetCommit")
        with self._guard(future):
            error = self._precheck(group_id, "OffsetCommit")
            group = self.groups.get(group_id)
            if error is None and group is None:
                if generation_id >= 0:
                    error = Errors.ILLEGAL_GENERATION
                elif self.profile.commit_creates_group:
                    self._new_group(group_id, None)   # a "simple" group that only stores offsets
            elif error is None and group is not None:
                error = self._do_commit(group, member_id, generation_id, group_instance_id)
            future.complete(CommitResult(error or Errors.NONE))
        return future

    def _do_commit(self, group: GroupMetadata, member_id: str, generation_id: int,
                   group_instance_id: str | None = None) -> Errors | None:
        p = self.profile
        if group.is_(D):
            return p.dead_group_error
        if p.commit_state_check_first and group.is_(CR):
            return Errors.REBALANCE_IN_PROGRESS   # 0.9–2.3 checked the state before member/generation
        if p.static_membership is not None and group.is_static_member_fenced(member_id, group_instance_id):
            return Errors.FENCED_INSTANCE_ID      # SPEC.md §3.5: fencing comes before the Empty-group shortcut
        if not p.commit_state_check_first and generation_id < 0 and group.is_(E):
            return None   # the group only uses Kafka to store offsets (SPEC.md §3.5, before the member check)
        member_error = self.current_member_error(group, member_id, group_instance_id)
        if member_error is not None:
            return member_error   # so generation -1 to a non-empty group is refused too
        if generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if group.is_(CR):
            return Errors.REBALANCE_IN_PROGRESS
        if group.state in (S, PR):
            self.complete_and_schedule_next_expiration(group, group.get(member_id))   # KAFKA-3470
        return None

    # -- log appends -------------------------------------------------------------------------------
    def _append(self, group: GroupMetadata, kind: str, assignment: dict[str, bytes],
                rejoin: StaticRejoin | None = None) -> None:
        pending = PendingAppend(self._seq(), group, group.generation_id, kind, assignment,
                                self.group_record(group, assignment), rejoin)
        if self.config.append_mode == "sync":
            self._finish_append(pending, Errors.NONE)
        else:
            self.appends.append(pending)

    def group_record(self, group: GroupMetadata, assignment: dict[str, bytes]) -> tuple[Any, ...]:
        """What storeGroup writes (SPEC.md §3.7): generation, protocol type and name, leader and every member with
        its assignment — and its group.instance.id, so that a load restores the static map."""
        members = tuple((m.member_id, m.client_id, m.client_host, m.session_timeout_ms, m.rebalance_timeout_ms,
                         m.protocol_type, m.protocols, assignment.get(m.member_id, b""), m.group_instance_id)
                        for m in group.all_members())
        return (group.generation_id, group.protocol_type, group.protocol_name, group.leader_id, members)

    def _finish_append(self, pending: PendingAppend, error: Errors) -> None:
        if error is Errors.NONE:
            self.log[pending.group.group_id] = pending.record
        if pending.kind == "assignment":
            self.on_store_group(pending.group, pending.generation_id, pending.assignment,
                                STORE_ERRORS.get(error, error))
        elif pending.kind == "static" and pending.rejoin is not None:
            self.on_store_static_member(pending.group, pending.rejoin, STORE_ERRORS.get(error, error))
        # "empty": a failed write of the empty-group record is only logged (SPEC.md §4.4)

    def complete_append(self, error: Errors | None = None) -> None:
        """Finish the oldest pending append, successfully or with ``error``."""
        if not self.appends:
            raise ValueError("there is no pending log append to complete.")
        pending = self.appends.pop(0)
        with self._guard(None):
            self._finish_append(pending, Errors.NONE if error is None else Errors(error))

    def complete_appends(self, ok: bool = True, error: Errors | None = None) -> None:
        """Deferred mode: finish every pending append, oldest first."""
        while self.appends:
            self.complete_append(None if ok else (error or Errors.REQUEST_TIMED_OUT))

    def pending_appends(self) -> list[AppendView]:
        return [AppendView(a.seq, a.group.group_id, a.generation_id, a.kind) for a in self.appends]

    # -- clock and timers --------------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Move the clock, then fire every due task in (deadline, seq) order (DESIGN.md §4)."""
        self.timer.advance_time(ms)
        while True:
            due = self.timer.due()
            if not due:
                return
            self.fire_timer(due[0].seq)

    def advance_time(self, ms: int) -> None:
        self.timer.advance_time(ms)

    def fire_timer(self, seq: int) -> None:
        with self._guard(None):
            self.timer.fire(seq)

    def due_timers(self) -> list[TimerView]:
        return [TimerView(op.seq, op.deadline_ms, op.kind, _op_key(op)) for op in self.timer.due()]

    def next_deadline(self) -> int | None:
        return self.timer.next_deadline()

    # -- partition load / unload (SPEC.md §3.7) ------------------------------------------------------
    def set_loading(self, group_id: str, loading: bool) -> None:
        """Open or close the COORDINATOR_LOAD_IN_PROGRESS window.

        While a partition loads it is in loadingPartitions but not yet in ownedPartitions (GMM), so an
        unloaded group stays "not coordinator" too: ≤ 1.1 answers NOT_COORDINATOR, 2.0+ the load error.
        """
        (self.loading.add if loading else self.loading.discard)(group_id)

    def unload_group(self, group_id: str) -> None:
        self.unloaded.add(group_id)
        group = self.groups.pop(group_id, None)
        if group is not None:
            with self._guard(None):
                self._on_group_unloaded(group)

    def _on_group_unloaded(self, group: GroupMetadata) -> None:
        previous = group.state
        group.transition_to(D, self.now_ms)
        self._event(Unloaded, self.profile.state_name(previous))
        if previous is PR:
            for member in group.all_members():
                group.invoke_join_callback(member, self.join_error(member.member_id, Errors.NOT_COORDINATOR))
            self.join_purgatory.check_and_complete(f"join:{group.group_id}")
        elif previous in (S, CR):
            for member in group.all_members():
                group.invoke_sync_callback(member, SyncGroupResult(Errors.NOT_COORDINATOR))
                self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))
        self.remove_sync_expiration(group)

    def load_group(self, group_id: str) -> None:
        """Immigration: the group comes back from its last durable record, Stable or Empty."""
        self.unloaded.discard(group_id)
        self.loading.discard(group_id)
        record = self.log.get(group_id)
        if record is None or group_id in self.groups:
            return
        generation_id, protocol_type, protocol_name, leader_id, members = record
        group = self._new_group(group_id, protocol_type)
        group.protocol_type, group.protocol_name, group.generation_id = protocol_type, protocol_name, generation_id
        for (mid, client_id, host, session, rebalance, ptype, protocols, assignment, instance_id) in members:
            member = MemberMetadata(mid, client_id, host, session, rebalance, ptype, protocols, instance_id)
            member.assignment = assignment
            group.add(member, None)
        group.leader_id = leader_id if members else None
        group.state = S if members else E
        with self._guard(None):
            if self.profile.max_group_size != "off" and len(group.members) > self.config.group_max_size:
                self.prepare_rebalance(group)
            for member in group.all_members():   # a fresh session to find the new coordinator
                self.complete_and_schedule_next_expiration(group, member)

    # -- views -------------------------------------------------------------------------------------
    def describe(self, group_id: str) -> GroupView | None:
        group = self.groups.get(group_id)
        if group is None:
            return None
        members = {m.member_id: MemberView(
            m.member_id, m.group_instance_id, m.session_timeout_ms, m.rebalance_timeout_ms,
            m.awaiting_join is not None, m.awaiting_sync is not None, m.is_new, m.assignment, m.protocols,
            m.latest_heartbeat_ms, m.heartbeat_satisfied, m.is_leaving) for m in group.all_members()}
        return GroupView(group.group_id, group.state, group.generation_id, group.leader_id, group.protocol_type,
                         group.protocol_name, members, frozenset(group.pending_members),
                         frozenset(group.pending_sync_members), group.num_members_awaiting_join,
                         tuple(sorted(group.supported_protocols.items())), group.new_member_added,
                         tuple(sorted(group.static_members.items())))

    def describe_group(self, group_id: str, api_version: int = 0) -> GroupSummary:
        """DescribeGroups: the pre-check, then an absent group as Dead, else the group's summary, whose protocol and
        member metadata/assignment show only when Stable (GroupCoordinator.scala@2.4.1 L778-790, GroupMetadata.scala
        @2.4.1 L549-561; the same at 2.7.0 and 3.9.0). Every version is answered alike (``api_version`` is the
        request's: the 4.x runtime's answer depends on it, R16)."""
        error = self._precheck(group_id, "DescribeGroups")
        if error is not None:
            return GroupSummary(error, "", "", "")
        group = self.groups.get(group_id)
        if group is None:
            return GroupSummary(Errors.NONE, self.profile.state_name(D), "", "")
        protocol = group.protocol_name if group.is_(S) else None
        members = tuple(MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                      b"" if protocol is None else m.metadata(protocol),
                                      b"" if protocol is None else m.assignment) for m in group.all_members())
        return GroupSummary(Errors.NONE, self.profile.state_name(group.state), group.protocol_type or "",
                            protocol or "", members)

    def delayed_operations(self) -> list[DelayedOpView]:
        """Every uncompleted operation watched in either purgatory, by key then seq."""
        watched = self.join_purgatory.watched() + self.heartbeat_purgatory.watched()
        return [DelayedOpView(op.kind, key, op.deadline_ms, op.completed, op.seq,
                              getattr(op, "member_id", ""), getattr(op, "is_pending", False))
                for key, op in sorted(watched, key=lambda kv: (kv[0], kv[1].seq))]

    # -- snapshots ---------------------------------------------------------------------------------
    def to_state(self) -> tuple[Any, ...]:
        from impl.snapshot import coordinator_to_state
        return coordinator_to_state(self)

    @classmethod
    def from_state(cls, state: tuple[Any, ...], record_events: bool = False) -> "GroupCoordinator":
        from impl.snapshot import coordinator_from_state
        return coordinator_from_state(cls, state, record_events)


def _op_key(op: object) -> str:
    key = getattr(op, "key", "")
    return key if isinstance(key, str) else ""


def _error_result(api: str, error: Errors) -> object:
    if api == "JoinGroup":
        return JoinGroupResult(error, -1, None, None, "", "")
    if api == "SyncGroup":
        return SyncGroupResult(error)
    if api == "LeaveGroup":
        return LeaveGroupResult(error)
    if api == "OffsetCommit":
        return CommitResult(error)
    return HeartbeatResult(error)


__all__ = ["GroupCoordinator", "JoinRequest", "PendingAppend", "DelayedHeartbeat"]

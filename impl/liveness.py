"""Member liveness (DelayedHeartbeat, SPEC.md §2, §4.6–4.7) and the sync phase (SyncGroup, store
callback, DelayedSync — SPEC.md §3.2, §4.8), as a mixin of GroupCoordinator."""
from __future__ import annotations

from typing import Callable

from core.events import (GenerationStable, HeartbeatCompletedAtBirth, HeartbeatScheduled, MemberExpired,
                         MemberNotSynced, PendingMemberExpired, StoreCallbackIgnored)
from core.types import Errors, GroupState
from impl.base import CoordinatorBase
from impl.delayed import DelayedHeartbeat, DelayedSync, member_key, sync_key
from impl.group import GroupMetadata, IllegalStateError, MemberMetadata
from impl.results import ResponseFuture, SyncGroupResult


PR, CR, S, E, D = (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE,
                   GroupState.EMPTY, GroupState.DEAD)

#: GroupMetadataManager's mapping of a log-append error to the SyncGroup error (SPEC.md §3.2)
STORE_ERRORS = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.REQUEST_TIMED_OUT: Errors.REBALANCE_IN_PROGRESS,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.INVALID_FETCH_SIZE: Errors.UNKNOWN_SERVER_ERROR,
}


class LivenessMixin(CoordinatorBase):
    # -- heartbeat scheduling ------------------------------------------------------------------
    def complete_and_schedule_next_expiration(self, group: GroupMetadata,
                                              member: MemberMetadata, timeout_ms: int | None = None) -> None:
        """completeAndScheduleNextHeartbeatExpiration: complete the current op, arm a new one.

        ≤ 2.4 stamps latestHeartbeat and gives the op a deadline; 2.5+ sets heartbeatSatisfied around
        the checkAndComplete (SPEC.md §4.6). Either way the new op goes through try_complete_else_watch.
        """
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        key = member_key(group.group_id, member.member_id)
        if self.profile.liveness == "satisfied":
            member.heartbeat_satisfied = True
            self.heartbeat_purgatory.check_and_complete(key)
            member.heartbeat_satisfied = False
        else:
            member.latest_heartbeat_ms = self.now_ms
            self.heartbeat_purgatory.check_and_complete(key)
        op = DelayedHeartbeat(self, group, member, member.member_id, self.now_ms + timeout, timeout, self._seq())
        self._event(HeartbeatScheduled, member.member_id, op.heartbeat_deadline_ms)
        if self.heartbeat_purgatory.try_complete_else_watch(op, [key]):
            self._event(HeartbeatCompletedAtBirth, member.member_id)

    def add_pending_member_expiration(self, group: GroupMetadata, member_id: str,
                                      timeout_ms: int) -> None:
        """KIP-394: a pending member id expires after the session timeout of its first JoinGroup (§4.7)."""
        op = DelayedHeartbeat(self, group, None, member_id, self.now_ms + timeout_ms, timeout_ms, self._seq(),
                              is_pending=True)
        self.heartbeat_purgatory.try_complete_else_watch(op, [member_key(group.group_id, member_id)])

    def should_keep_member_alive(self, member: MemberMetadata, deadline_ms: int) -> bool:
        """The keep-alive predicate of the profile (SPEC.md §2 table)."""
        liveness = self.profile.liveness
        awaiting = member.awaiting_join is not None or member.awaiting_sync is not None
        if liveness == "deadline":   # ≤ 2.1.0
            return awaiting or member.latest_heartbeat_ms + member.session_timeout_ms > deadline_ms
        if member.is_new:   # 2.4.1+ test isNew first (KAFKA-9232), so a parked JoinGroup does not keep it
            if liveness == "new_member_deadline":
                return member.latest_heartbeat_ms + self.config.new_member_join_timeout_ms > deadline_ms
            return member.heartbeat_satisfied
        if awaiting:
            return True
        if liveness == "new_member_deadline":
            return member.latest_heartbeat_ms + member.session_timeout_ms > deadline_ms
        return member.heartbeat_satisfied

    def try_complete_heartbeat(self, op: DelayedHeartbeat,
                               force_complete: Callable[[], bool]) -> bool:
        group = op.group
        missing = self.profile.missing_member_heartbeat
        if missing == "held":   # E0: the op's own member object, even if removed
            assert op.member is not None
            if self.should_keep_member_alive(op.member, op.heartbeat_deadline_ms) or op.member.is_leaving:
                return force_complete()
            return False
        if group.is_(D):
            # an unloaded group's ops complete when checked: 2.2.2, 2.3.1, 2.4.0+ (KAFKA-8896; SPEC.md §4.6 and its
            # Corrections 4; GroupCoordinator.scala at 2.4.1, lines 1113-1118)
            return force_complete()
        if op.is_pending:
            # complete once the id became a member, or stopped being pending (its LeaveGroup "completes
            # the op", SPEC.md §4.7; the Scala check tests membership only, leaving the op to expire idly)
            done = group.has(op.member_id) or op.member_id not in group.pending_members
            return force_complete() if done else False
        if not group.has(op.member_id):   # 2.5+: "not found" completes; 2.4: false, the op expires idly
            return force_complete() if missing == "complete" else False
        member = group.get(op.member_id)
        if self.should_keep_member_alive(member, op.heartbeat_deadline_ms) or member.is_leaving:
            return force_complete()
        return False

    def on_expire_heartbeat(self, op: DelayedHeartbeat) -> None:
        group = op.group
        if self.profile.missing_member_heartbeat == "held":
            assert op.member is not None
            if not self.should_keep_member_alive(op.member, op.heartbeat_deadline_ms):
                # 0.10: onMemberFailure even if the member was already removed (KAFKA-7196)
                self._event(MemberExpired, op.member_id)
                self.remove_member_and_update_group(group, op.member)
            return
        if group.is_(D):
            return
        if op.is_pending:
            self._event(PendingMemberExpired, op.member_id)
            self.remove_pending_member_and_update_group(group, op.member_id)
        elif group.has(op.member_id):
            member = group.get(op.member_id)
            if not self.should_keep_member_alive(member, op.heartbeat_deadline_ms):
                self._event(MemberExpired, op.member_id)
                self.remove_member_and_update_group(group, member)

    # -- SyncGroup -------------------------------------------------------------------------------
    def do_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str,
                      assignments: dict[str, bytes], protocol_type: str | None, protocol_name: str | None,
                      future: ResponseFuture, group_instance_id: str | None = None) -> None:
        error = self._validate_sync(group, generation_id, member_id, protocol_type, protocol_name, group_instance_id)
        if error is not None:
            future.complete(SyncGroupResult(error))
        elif group.is_(E):
            future.complete(SyncGroupResult(Errors.UNKNOWN_MEMBER_ID))
        elif group.is_(PR):
            future.complete(SyncGroupResult(Errors.REBALANCE_IN_PROGRESS))   # seed 004: SyncGroup in PR
        elif group.is_(CR):
            self._park_sync(group, group.get(member_id), generation_id, assignments, future)
        elif group.is_(S):
            self._remove_pending_sync_member(group, member_id)
            member = group.get(member_id)
            future.complete(SyncGroupResult(Errors.NONE, self.stored_assignment(member),
                                            *self._sync_protocol(group, Errors.NONE)))
            self.complete_and_schedule_next_expiration(group, member)
        else:
            raise IllegalStateError(f"reached unexpected condition for Dead group {group.group_id}")

    def stored_assignment(self, member: MemberMetadata) -> bytes:
        """What a SyncGroup in Stable answers: the member's stored assignment (SPEC.md §3.2 Stable branch)."""
        return member.assignment

    def _validate_sync(self, group: GroupMetadata, generation_id: int, member_id: str,
                       protocol_type: str | None, protocol_name: str | None,
                       group_instance_id: str | None = None) -> Errors | None:
        p = self.profile
        if p.dead_check_first and group.is_(D):
            return p.dead_group_error
        member_error = self.current_member_error(group, member_id, group_instance_id)   # fenced, then unknown
        if member_error is not None:
            return member_error
        if generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if group.is_(D):
            return p.dead_group_error
        if p.join_response_has_protocol_type and (   # KIP-559, SyncGroup v5 (2.5+)
                (protocol_type is not None and protocol_type != group.protocol_type)
                or (protocol_name is not None and protocol_name != group.protocol_name)):
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _park_sync(self, group: GroupMetadata, member: MemberMetadata, generation_id: int,
                   assignments: dict[str, bytes], future: ResponseFuture) -> None:
        member.awaiting_sync = future   # overwrites an earlier parked SyncGroup, which stays unanswered
        self._remove_pending_sync_member(group, member.member_id)
        if self.profile.sync_park_reschedules_heartbeat:   # seed 000 (1): after setting the callback
            self.complete_and_schedule_next_expiration(group, member)
        if group.is_leader(member.member_id):
            # fill any missing member with an empty assignment; extra keys are ignored later
            assignment = {m: assignments.get(m, b"") for m in sorted(group.members)}
            self._append(group, "assignment", assignment)

    def on_store_group(self, group: GroupMetadata, generation_id: int,
                       assignment: dict[str, bytes], error: Errors) -> None:
        """The store callback: acts only if the group is still CompletingRebalance in that generation."""
        if not (group.is_(CR) and generation_id == group.generation_id):
            self._event(StoreCallbackIgnored, generation_id, group.state.value, group.generation_id)
            return
        if error is not Errors.NONE:
            self._reset_and_propagate_assignment_error(group, error)
            self.maybe_prepare_rebalance(group)
        else:
            for member in group.all_members():
                member.assignment = assignment.get(member.member_id, b"")
            self._propagate_assignment(group, Errors.NONE)
            group.transition_to(S, self.now_ms)
            self._event(GenerationStable, generation_id)

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata,
                                              error: Errors) -> None:
        for member in group.all_members():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _sync_protocol(self, group: GroupMetadata, error: Errors) -> tuple[str | None, str | None]:
        """[2.5+, KIP-559] a successful SyncGroup answer names the group's protocol type and name; an error answer
        names neither (GroupCoordinator.scala@2.7.0 L444, L936-945; @3.9.0-rc3 L641, L1259-1268)."""
        if error is Errors.NONE and self.profile.join_response_has_protocol_type:
            return group.protocol_type, group.protocol_name
        return None, None

    def _propagate_assignment(self, group: GroupMetadata, error: Errors) -> None:
        protocol = self._sync_protocol(group, error)
        for member in group.all_members():
            result = SyncGroupResult(error, member.assignment if error is Errors.NONE else b"", *protocol)
            if group.invoke_sync_callback(member, result):
                # reset the session timeout of each member whose parked SyncGroup was answered
                self.complete_and_schedule_next_expiration(group, member)

    # -- DelayedSync (3.0+) ------------------------------------------------------------------------
    def schedule_pending_sync(self, group: GroupMetadata) -> None:
        op = DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms(), self._seq())
        self.join_purgatory.try_complete_else_watch(op, [sync_key(group.group_id)])

    def _remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        if self.profile.delayed_sync:
            group.remove_pending_sync_member(member_id)
            self.join_purgatory.check_and_complete(sync_key(group.group_id))

    def remove_sync_expiration(self, group: GroupMetadata) -> None:
        if self.profile.delayed_sync:
            group.pending_sync_members.clear()
            self.join_purgatory.check_and_complete(sync_key(group.group_id))

    def try_complete_pending_sync(self, group: GroupMetadata, generation_id: int,
                                  force_complete: Callable[[], bool]) -> bool:
        if generation_id != group.generation_id or group.state in (D, E, PR) or not group.pending_sync_members:
            return force_complete()
        return False

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        if generation_id != group.generation_id or group.state not in (CR, S) or not group.pending_sync_members:
            return
        for member_id in sorted(group.pending_sync_members):
            self._event(MemberNotSynced, member_id)
            group.remove(member_id)
            self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))
        self.prepare_rebalance(group)

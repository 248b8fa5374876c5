"""SyncGroup for classic groups in Kafka 4.x: classicGroupSync, the leader's assignment write and its append
callback, assignment propagation (GMM:6977-7039, 7303-7430, 7498-7572 at tag 4.1.1)."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.group import IllegalStateError
from impl.java_gc.base import EMPTY_RESULT, JavaBase, Result, sync_key
from impl.java_gc.group import ClassicGroup, RequestError, answer
from impl.java_gc.log import append_error
from impl.java_gc.rebalance import group_record
from impl.results import ResponseFuture, SyncGroupResult

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


def _inconsistent(requested: str | None, current: str | None) -> bool:
    """isProtocolInconsistent (GMM:8440-8447): only a value given on both sides and different."""
    return requested is not None and current is not None and requested != current


class SyncMixin(JavaBase):
    def classic_group_sync(self, group_id: str, generation_id: int, member_id: str, assignments: dict[str, bytes],
                           group_instance_id: str | None, protocol_type: str | None, protocol_name: str | None,
                           future: ResponseFuture) -> Result:
        """classicGroupSync / classicGroupSyncToClassicGroup (GMM:7303-7430)."""
        group = self._group(group_id)
        if group is None or group.is_(E):
            answer(future, SyncGroupResult(Errors.UNKNOWN_MEMBER_ID))
            return EMPTY_RESULT
        error = self._validate_sync(group, generation_id, member_id, group_instance_id, protocol_type, protocol_name)
        if error is not None:
            answer(future, SyncGroupResult(error))
        elif group.is_(PR):
            answer(future, SyncGroupResult(Errors.REBALANCE_IN_PROGRESS))
        elif group.is_(CR):
            group.members[member_id].awaiting_sync = future
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                return self._store_assignment(group, generation_id, assignments)
        elif group.is_(S):
            # R9 (GMM:7415-7424): the stored assignment is returned; the session timer is NOT rescheduled
            self._remove_pending_sync_member(group, member_id)
            answer(future, SyncGroupResult(Errors.NONE, group.members[member_id].assignment, group.protocol_type,
                                           group.protocol_name))
        else:
            raise IllegalStateError(f"Reached unexpected condition for Dead group {group_id}")
        return EMPTY_RESULT

    def _validate_sync(self, group: ClassicGroup, generation_id: int, member_id: str, group_instance_id: str | None,
                       protocol_type: str | None, protocol_name: str | None) -> Errors | None:
        """validateSyncGroup (GMM:7519-7549)."""
        if group.is_(D):
            return Errors.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(member_id, group_instance_id)
        except RequestError as refused:
            return refused.error
        if generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if _inconsistent(protocol_type, group.protocol_type) or _inconsistent(protocol_name, group.protocol_name):
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        """removePendingSyncMember (GMM:7551-7572): the sync timer goes once every member synced."""
        group.remove_pending_sync_member(member_id)
        if group.state in (D, E, PR) or group.has_received_sync_from_all_members():
            self._cancel(group.group_id, sync_key(group.group_id))

    def _store_assignment(self, group: ClassicGroup, generation_id: int, assignments: dict[str, bytes]) -> Result:
        """The leader's assignment, completed with empty ones, written as the group record (GMM:7364-7410)."""
        assignment = {m: assignments.get(m, b"") for m in sorted(group.members)}
        return Result(group.group_id, group_record(group, assignment),
                      ("assignment", group, generation_id, tuple(sorted(assignment.items()))))

    def on_assignment_appended(self, group: ClassicGroup, generation_id: int, assignment: dict[str, bytes],
                               error: Errors | None) -> None:
        """The assignment write's callback (GMM:7391-7408): only if the group is still in CompletingRebalance
        of that generation; a failure answers every parked SyncGroup with the mapped error and rebalances (R8)."""
        if not (group.is_(CR) and group.generation_id == generation_id):
            return
        if error is not None:
            mapped = append_error(error)
            self.reset_and_propagate_assignment_with_error(group, mapped)
            self.maybe_prepare_rebalance_or_complete_join(group)
        else:
            self.set_and_propagate_assignment(group, assignment)
            group.transition_to(S)

    def reset_and_propagate_assignment_with_error(self, group: ClassicGroup, error: Errors) -> None:
        if not group.is_(CR):
            raise IllegalStateError(f"Group {group.group_id} must be in CompletingRebalance state but is in "
                                    f"{group.state.value}.")
        for member in group.all_members():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def set_and_propagate_assignment(self, group: ClassicGroup, assignment: dict[str, bytes]) -> None:
        if not group.is_(CR):
            raise IllegalStateError("The group must be in CompletingRebalance state to set and propagate assignment.")
        for member in group.all_members():
            member.assignment = assignment.get(member.member_id, b"")
        self._propagate_assignment(group, Errors.NONE)

    def _propagate_assignment(self, group: ClassicGroup, error: Errors) -> None:
        """propagateAssignment (GMM:7011-7039): every parked SyncGroup answered; its member's session timer
        rescheduled."""
        ok = error is Errors.NONE
        for member in group.all_members():
            result = SyncGroupResult(error, member.assignment, group.protocol_type if ok else None,
                                     group.protocol_name if ok else None)
            if group.complete_sync_future(member, result):
                self.reschedule_heartbeat(group, member)

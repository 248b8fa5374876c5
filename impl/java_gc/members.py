"""Heartbeat, LeaveGroup and OffsetCommit (as far as membership goes) for classic groups in Kafka 4.x
(GMM:7582-7684, 7769-7992; OffsetMetadataManager.java:452-616; ClassicGroup.validateOffsetCommit
ClassicGroup.java:829-870 at tag 4.1.1). These operations return their answer in the result: the runtime
releases it when the write completes (R3)."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.java_gc.base import EMPTY_RESULT, JavaBase, Result, heartbeat_key, join_error
from impl.java_gc.group import ClassicGroup, RequestError
from impl.results import CommitResult, HeartbeatResult, LeaveGroupResult

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)

#: OffsetCommit v9+ answers GROUP_ID_NOT_FOUND for an unknown group (R15)
GROUP_ID_NOT_FOUND_SINCE_COMMIT_VERSION = 9


class MembersMixin(JavaBase):
    def classic_group_heartbeat(self, group_id: str, member_id: str, generation_id: int,
                                group_instance_id: str | None) -> Result:
        """classicGroupHeartbeatToClassicGroup (GMM:7615-7684): refusals are thrown (answered at once)."""
        group = self._group(group_id)
        if group is None:
            raise RequestError(Errors.UNKNOWN_MEMBER_ID)
        if group.is_(D):
            raise RequestError(Errors.COORDINATOR_NOT_AVAILABLE)
        group.validate_member(member_id, group_instance_id)
        if generation_id != group.generation_id:
            raise RequestError(Errors.ILLEGAL_GENERATION)
        if group.is_(E):
            return Result(response=HeartbeatResult(Errors.UNKNOWN_MEMBER_ID))
        self.reschedule_heartbeat(group, group.members[member_id])
        error = Errors.REBALANCE_IN_PROGRESS if group.is_(PR) else Errors.NONE
        return Result(response=HeartbeatResult(error))

    def classic_group_leave(self, group_id: str, members: list[tuple[str, str | None]]) -> Result:
        """classicGroupLeaveToClassicGroup (GMM:7860-7961): per-member answers, then one rebalance decision."""
        group = self._group(group_id)
        if group is None:
            raise RequestError(Errors.UNKNOWN_MEMBER_ID)
        if group.is_(D):
            return Result(response=LeaveGroupResult(Errors.COORDINATOR_NOT_AVAILABLE))
        answers = tuple((m, i, self._leave_one(group, m, i)) for m, i in members)
        result = EMPTY_RESULT
        if any(error is Errors.NONE for _, _, error in answers):
            if group.state in (S, CR):
                result = self.maybe_prepare_rebalance_or_complete_join(group)
            elif group.is_(PR):
                result = self.maybe_complete_join_phase(group)
        return Result(result.group_id, result.record, result.callback, LeaveGroupResult(Errors.NONE, answers))

    def _leave_one(self, group: ClassicGroup, member_id: str, group_instance_id: str | None) -> Errors:
        if member_id == "":   # removal by group.instance.id (an admin's LeaveGroup)
            owner = group.static_member_id(group_instance_id)
            if owner is None:
                return Errors.UNKNOWN_MEMBER_ID
            self._remove_current_member(group, owner)
            return Errors.NONE
        if group.is_pending_member(member_id):
            group.remove(member_id, self.choices)
            self._cancel(group.group_id, heartbeat_key(group.group_id, member_id))
            return Errors.NONE
        try:
            group.validate_member(member_id, group_instance_id)
        except RequestError as refused:
            return refused.error
        self._remove_current_member(group, member_id)
        return Errors.NONE

    def _remove_current_member(self, group: ClassicGroup, member_id: str) -> None:
        """removeCurrentMemberFromClassicGroup (GMM:7972-7992)."""
        member = group.members[member_id]
        self._cancel(group.group_id, heartbeat_key(group.group_id, member_id))
        group.complete_join_future(member, join_error("", Errors.UNKNOWN_MEMBER_ID))
        group.remove(member_id, self.choices)

    def commit_offset(self, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None,
                      api_version: int, has_offsets: bool) -> Result:
        """OffsetMetadataManager.commitOffset, membership part: validation, the session kept alive in
        Stable/PreparingRebalance (OffsetMetadataManager.java:606-616), then one offset write if any offsets."""
        group = self._group(group_id)
        if group is None:
            if generation_id >= 0:   # R15 (OffsetMetadataManager.java:456-479)
                raise RequestError(Errors.GROUP_ID_NOT_FOUND if api_version >= GROUP_ID_NOT_FOUND_SINCE_COMMIT_VERSION
                                   else Errors.ILLEGAL_GENERATION)
            group = self._create_group(group_id)   # a "simple" group that only stores offsets
        self._validate_offset_commit(group, member_id, generation_id, group_instance_id)
        if group.state in (S, PR):
            self.reschedule_heartbeat(group, group.members[member_id])
        response = CommitResult(Errors.NONE)
        # kgc keeps no offsets; the offset records are stood for by a record-less marker of the group
        return Result(group_id, None, ("offsets",), response) if has_offsets else Result(response=response)

    @staticmethod
    def _validate_offset_commit(group: ClassicGroup, member_id: str, generation_id: int,
                                group_instance_id: str | None) -> None:
        """ClassicGroup.validateOffsetCommit (ClassicGroup.java:829-870), non-transactional."""
        if group.is_(D):
            raise RequestError(Errors.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and group.is_(E):
            return
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            group.validate_member(member_id, group_instance_id)
            if generation_id != group.generation_id:
                raise RequestError(Errors.ILLEGAL_GENERATION)
        elif not group.is_(E):
            raise RequestError(Errors.UNKNOWN_MEMBER_ID)
        if group.is_(CR):
            raise RequestError(Errors.REBALANCE_IN_PROGRESS)

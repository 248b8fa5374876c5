"""JoinGroup for classic groups in Kafka 4.x: GroupMetadataManager.classicGroupJoin and the paths under it
(GMM:6070-6516, 6769-6836, 7140-7165 at tag 4.1.1).

JoinGroup answers are completed by these operations directly (GMM completes the request's future inside the
write), not when the write commits: a JoinGroup answer can go out before earlier writes of the partition
commit. Only a failed write answers through the service's error mapping (GCS:873-893).
"""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.coordinator import JoinRequest
from impl.group import IllegalStateError
from impl.java_gc.base import EMPTY_RESULT, JavaBase, Result, heartbeat_key, join_error
from impl.java_gc.group import ClassicGroup, ClassicGroupMember, RequestError, answer
from impl.results import JoinGroupResult, ResponseFuture

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)

#: GroupCoordinatorRecordHelpers.newEmptyGroupMetadataRecord: generation 0, no type, protocol, leader or member
EMPTY_GROUP_RECORD = (0, "", None, None, ())


class JoinMixin(JavaBase):
    def classic_group_join(self, req: JoinRequest, group_id: str, future: ResponseFuture) -> Result:
        """classicGroupJoinToClassicGroup (GMM:6105-6178)."""
        is_new_group = self._group(group_id) is None
        group = self._group(group_id)
        if group is None:
            if req.member_id != "":
                answer(future, join_error(req.member_id, Errors.UNKNOWN_MEMBER_ID))
                return EMPTY_RESULT
            group = self._create_group(group_id)
        if not self.accept_joining_member(group, req.member_id):
            # R10 (GMM:6134-6139): the member is dropped and refused; nothing re-checks the join phase here
            group.remove(req.member_id, self.choices)
            answer(future, join_error("", Errors.GROUP_MAX_SIZE_REACHED))
            result = EMPTY_RESULT
        elif req.member_id == "":
            result = self._join_new_member(req, group, future)
        else:
            result = self._join_existing_member(req, group, future)
        if is_new_group and result is EMPTY_RESULT:
            # R5 (GMM:6156-6177): a new group is written to the log at once; if that write fails the group map
            # is reverted and the JoinGroup, if still unanswered, gets the mapped append error
            return Result(group_id, EMPTY_GROUP_RECORD, ("new-group",))
        return result

    def accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        """acceptJoiningMember (GMM:7140-7165): PreparingRebalance counts members awaiting join."""
        max_size = self.config.group_max_size
        if group.state in (E, D):
            return True
        if group.is_(PR):
            member = group.members.get(member_id)
            return (member is not None and member.awaiting_join is not None) or \
                group.num_members_awaiting_join < max_size
        return group.has_member(member_id) or len(group.members) < max_size

    def _join_new_member(self, req: JoinRequest, group: ClassicGroup, future: ResponseFuture) -> Result:
        """classicGroupJoinNewMember (GMM:6221-6265)."""
        if group.is_(D):
            answer(future, join_error("", Errors.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(req.protocol_type, tuple(n for n, _ in req.protocols)):
            answer(future, join_error("", Errors.INCONSISTENT_GROUP_PROTOCOL))
        else:
            # Kafka: groupInstanceId or clientId, "-", a random UUID; a counter keeps runs deterministic
            new_member_id = f"{req.group_instance_id or req.client_id}-{self._seq()}"
            if req.group_instance_id is None:
                return self._join_new_dynamic_member(req, group, new_member_id, future)
            existing = group.static_member_id(req.group_instance_id)
            if existing is not None:
                return self.update_static_member_then_rebalance_or_complete_join(
                    req, group, existing, new_member_id, future)
            return self.add_member_then_rebalance_or_complete_join(req, group, new_member_id, future)
        return EMPTY_RESULT

    def _join_new_dynamic_member(self, req: JoinRequest, group: ClassicGroup, new_member_id: str,
                                 future: ResponseFuture) -> Result:
        """classicGroupJoinNewDynamicMember (GMM:6325-6363): v4+ gets MEMBER_ID_REQUIRED and a pending id
        whose session timer is the request's session timeout."""
        if not req.require_known_member_id:
            return self.add_member_then_rebalance_or_complete_join(req, group, new_member_id, future)
        group.add_pending_member(new_member_id)
        self._schedule(group.group_id, heartbeat_key(group.group_id, new_member_id), req.session_timeout_ms,
                       ("heartbeat", group.group_id, new_member_id))
        answer(future, join_error(new_member_id, Errors.MEMBER_ID_REQUIRED))
        return EMPTY_RESULT

    def _join_existing_member(self, req: JoinRequest, group: ClassicGroup, future: ResponseFuture) -> Result:
        """classicGroupJoinExistingMember (GMM:6375-6516)."""
        member_id = req.member_id
        if group.is_(D):
            answer(future, join_error(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(req.protocol_type, tuple(n for n, _ in req.protocols)):
            answer(future, join_error(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
        elif group.is_pending_member(member_id):
            if req.group_instance_id is not None:
                raise IllegalStateError(f"Received unexpected JoinGroup with groupInstanceId="
                                        f"{req.group_instance_id} for pending member with memberId={member_id}")
            return self.add_member_then_rebalance_or_complete_join(req, group, member_id, future)
        else:
            try:
                group.validate_member(member_id, req.group_instance_id)
            except RequestError as refused:
                answer(future, join_error(member_id, refused.error))
                return EMPTY_RESULT
            return self._rejoin(req, group, group.members[member_id], future)
        return EMPTY_RESULT

    def _rejoin(self, req: JoinRequest, group: ClassicGroup, member: ClassicGroupMember,
                future: ResponseFuture) -> Result:
        """A known member's JoinGroup by group state (GMM:6446-6513)."""
        if group.is_(PR):
            return self.update_member_then_rebalance_or_complete_join(req, group, member, future)
        if group.is_(CR):
            if member.matches(req.protocols):   # a lost JoinGroup answer, sent again
                answer(future, self._current_generation(group, member.member_id,
                                                        group.is_leader(member.member_id)))
                return EMPTY_RESULT
            return self.update_member_then_rebalance_or_complete_join(req, group, member, future)
        if group.is_(S):
            if group.is_leader(member.member_id) or not member.matches(req.protocols):
                return self.update_member_then_rebalance_or_complete_join(req, group, member, future)
            answer(future, self._current_generation(group, member.member_id, False))
            return EMPTY_RESULT
        answer(future, join_error(member.member_id, Errors.UNKNOWN_MEMBER_ID))   # Empty: reset and rejoin
        return EMPTY_RESULT

    @staticmethod
    def _current_generation(group: ClassicGroup, member_id: str, with_members: bool) -> JoinGroupResult:
        return JoinGroupResult(Errors.NONE, group.generation_id, group.protocol_type, group.protocol_name,
                               group.leader_id or "", member_id, group.current_members() if with_members else ())

    def update_member_then_rebalance_or_complete_join(self, req: JoinRequest, group: ClassicGroup,
                                                      member: ClassicGroupMember, future: ResponseFuture) -> Result:
        """updateMemberThenRebalanceOrCompleteJoin (GMM:6769-6785)."""
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, future)
        return self.maybe_prepare_rebalance_or_complete_join(group)

    def add_member_then_rebalance_or_complete_join(self, req: JoinRequest, group: ClassicGroup, member_id: str,
                                                   future: ResponseFuture) -> Result:
        """addMemberThenRebalanceOrCompleteJoin (GMM:6798-6836): a new member's session timer is the
        new-member join timeout (5 minutes, GroupCoordinatorConfig.java:354)."""
        member = ClassicGroupMember(member_id, req.group_instance_id, req.client_id, req.client_host,
                                    req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type, req.protocols)
        member.is_new = True
        if group.is_(PR) and group.previous_state is E:
            group.new_member_added = True   # the initial rebalance may be delayed further
        group.add(member, future)
        self.reschedule_heartbeat(group, member, self.config.new_member_join_timeout_ms)
        return self.maybe_prepare_rebalance_or_complete_join(group)

"""A static member's restart with member id "" in Kafka 4.x (R12): updateStaticMemberThenRebalanceOrCompleteJoin
and the callback of its persisting write (GMM:7179-7292 at tag 4.1.1; ClassicGroup.replaceStaticMember
ClassicGroup.java:549-597, which builds a new member object, so the replacement is never ``is_new``)."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.coordinator import JoinRequest
from impl.group import IllegalStateError
from impl.java_gc.base import JavaBase, Result
from impl.java_gc.group import ClassicGroup, answer
from impl.java_gc.log import append_error
from impl.java_gc.rebalance import group_record
from impl.results import JoinGroupResult, ResponseFuture

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


class StaticMixin(JavaBase):
    def update_static_member_then_rebalance_or_complete_join(
            self, req: JoinRequest, group: ClassicGroup, old_member_id: str, new_member_id: str,
            future: ResponseFuture) -> Result:
        current_leader = group.leader_id
        member = group.replace_static_member(req.group_instance_id or "", old_member_id, new_member_id)
        # the old id's session timer expires without effect: the group no longer knows that id
        self.reschedule_heartbeat(group, member)
        old = (member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms)
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, future)
        if group.is_(S):
            if (group.protocol_name or "") == group.select_protocol(self.choices):
                # the next generation's protocol stays: persist the new member id, no rebalance
                return Result(group.group_id, group_record(group, group.group_assignment()),
                              ("static", group, req.group_instance_id, old_member_id, new_member_id, old,
                               current_leader, req.support_skipping_assignment))
            return self.maybe_prepare_rebalance_or_complete_join(group)
        if group.is_(CR):
            # the leader may already hold the old member id in its assignment: rebalance
            return self.prepare_rebalance(group)
        if group.state in (E, D):
            raise IllegalStateError(f"Group {group.group_id} was not supposed to be in the state {group.state.value}"
                                    f" when the unknown static member {req.group_instance_id} rejoins.")
        return self.maybe_complete_join_phase(group)

    def on_static_member_appended(self, write_future: ResponseFuture | None, callback: tuple[object, ...],
                                  error: Errors | None) -> None:
        """The persisting write's callback (GMM:7218-7261): on failure put the old member back and answer the
        JoinGroup with the mapped error and no member id; on success answer the new member (a v9+ leader is told to
        skip the assignment). A member replaced again before this write completed is left alone (Java's closure
        would update the detached member; the client sees the service's mapped error either way)."""
        _, group, instance_id, old_member_id, new_member_id, old, current_leader, skip = callback
        assert isinstance(group, ClassicGroup) and isinstance(old, tuple)
        member = group.members.get(str(new_member_id))
        if member is None:
            return   # replaced or removed since: the Java closure would act on a detached member
        if error is not None:
            protocols, rebalance_timeout_ms, session_timeout_ms = old
            group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, None)
            restored = group.replace_static_member(str(instance_id), str(new_member_id), str(old_member_id))
            self.reschedule_heartbeat(group, restored)
            answer(write_future, JoinGroupResult(
                append_error(error), group.generation_id, group.protocol_type, group.protocol_name,
                str(current_leader or ""), ""))
        elif skip:
            is_leader = group.is_leader(str(new_member_id))
            group.complete_join_future(member, JoinGroupResult(
                Errors.NONE, group.generation_id, group.protocol_type, group.protocol_name, group.leader_id or "",
                str(new_member_id), group.current_members() if is_leader else (), is_leader))
        else:
            group.complete_join_future(member, JoinGroupResult(
                Errors.NONE, group.generation_id, group.protocol_type, group.protocol_name,
                str(current_leader or ""), str(new_member_id)))

"""The join phase and member expiry of classic groups in Kafka 4.x: prepareRebalance, the (initial) join
timers, completeClassicGroupJoin, the session and pending-sync timers (GMM:6188-6209, 6523-6756, 6847-6969,
7082-7130 at tag 4.1.1). Timer operations look their group up by id when they run, as GMM's lambdas do."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.java_gc.base import EMPTY_RESULT, JavaBase, Result, heartbeat_key, join_error, join_key, sync_key
from impl.java_gc.group import ClassicGroup, ClassicGroupMember
from impl.java_gc.log import Record
from impl.results import JoinGroupResult

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


def group_record(group: ClassicGroup, assignment: dict[str, bytes]) -> Record:
    """GroupCoordinatorRecordHelpers.newGroupMetadataRecord: each member's subscription to the selected
    protocol and its assignment (the record a load rebuilds the group from)."""
    members = tuple((m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                     m.session_timeout_ms, m.metadata(group.protocol_name), assignment[m.member_id])
                    for m in group.all_members())
    return (group.generation_id, group.protocol_type or "", group.protocol_name, group.leader_id, members)


class RebalanceMixin(JavaBase):
    def maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup) -> Result:
        """maybePrepareRebalanceOrCompleteJoin (GMM:6847-6856)."""
        if group.can_rebalance():
            return self.prepare_rebalance(group)
        return self.maybe_complete_join_phase(group)

    def maybe_complete_join_phase(self, group: ClassicGroup) -> Result:
        """maybeCompleteJoinPhase (GMM:6188-6209): never during the initial rebalance."""
        if not group.is_(PR) or group.previous_state is E or not group.has_all_members_joined():
            return EMPTY_RESULT
        return self.complete_join(group)

    def prepare_rebalance(self, group: ClassicGroup) -> Result:
        """prepareRebalance (GMM:6868-6901); from Empty the join waits group.initial.rebalance.delay.ms,
        extensible up to the rebalance timeout (R13)."""
        if group.is_(CR):
            self.reset_and_propagate_assignment_with_error(group, Errors.REBALANCE_IN_PROGRESS)
        self.remove_sync_expiration(group)
        initial = group.is_(E)
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule(group.group_id, join_key(group.group_id), delay,
                           ("initial-join", group.group_id, delay, remaining))
        group.transition_to(PR)
        return EMPTY_RESULT if initial else self._maybe_complete_join_else_schedule(group)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> Result:
        if group.has_all_members_joined():
            return self.complete_join(group)
        self._schedule(group.group_id, join_key(group.group_id), group.rebalance_timeout_ms(),
                       ("join", group.group_id))
        return EMPTY_RESULT

    def on_initial_join_timer(self, group_id: str, delay_ms: int, remaining_ms: int) -> Result:
        """tryCompleteInitialRebalanceElseSchedule (GMM:6937-6969)."""
        group = self._group(group_id)
        if group is None:
            return EMPTY_RESULT
        if group.new_member_added and remaining_ms != 0:
            group.new_member_added = False
            new_delay = min(self.config.group_initial_rebalance_delay_ms, remaining_ms)
            new_remaining = max(remaining_ms - delay_ms, 0)
            self._schedule(group_id, join_key(group_id), new_delay,
                           ("initial-join", group_id, new_delay, new_remaining))
            return EMPTY_RESULT
        return self.complete_join(group)

    def on_join_timer(self, group_id: str) -> Result:
        group = self._group(group_id)
        return EMPTY_RESULT if group is None else self.complete_join(group)

    def complete_join(self, group: ClassicGroup) -> Result:
        """completeClassicGroupJoin (GMM:6547-6639): drop dynamic members that did not rejoin, then start the
        next generation (answer every parked JoinGroup) or, with no members, write the Empty group."""
        group_id = group.group_id
        self._cancel(group_id, join_key(group_id))
        for failed in group.not_yet_rejoined_members():
            if failed.group_instance_id is None:
                group.remove(failed.member_id, self.choices)
                self._cancel(group_id, heartbeat_key(group_id, failed.member_id))
        if group.is_(D):
            return EMPTY_RESULT
        if not group.maybe_elect_new_joined_leader(self.choices) and group.members:
            self._schedule(group_id, join_key(group_id), group.rebalance_timeout_ms(), ("join", group_id))
            return EMPTY_RESULT
        group.init_next_generation(self.choices)
        if group.is_(E):
            return Result(group_id, group_record(group, {}), ("empty",))
        for member in group.all_members():
            members = group.current_members() if group.is_leader(member.member_id) else ()
            group.complete_join_future(member, JoinGroupResult(
                Errors.NONE, group.generation_id, group.protocol_type, group.protocol_name, group.leader_id or "",
                member.member_id, members))
            self.reschedule_heartbeat(group, member)
            member.is_new = False
            group.add_pending_sync_member(member.member_id)
        # the sync timer's operation reads the generation when it runs, as GMM's lambda does (GMM:6646-6653)
        self._schedule(group_id, sync_key(group_id), group.rebalance_timeout_ms(), ("sync", group_id))
        return EMPTY_RESULT

    # -- session timers -------------------------------------------------------------------------
    def on_heartbeat_timer(self, group_id: str, member_id: str) -> Result:
        """expireClassicGroupMemberHeartbeat (GMM:6664-6702): only a member without a satisfied heartbeat goes."""
        group = self._group(group_id)
        if group is None or group.is_(D):
            return EMPTY_RESULT
        if group.is_pending_member(member_id):
            return self.remove_pending_member_and_update_group(group, member_id)
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return EMPTY_RESULT
        return self.remove_member_and_update_group(group, member)

    def remove_member_and_update_group(self, group: ClassicGroup, member: ClassicGroupMember) -> Result:
        """removeMemberAndUpdateClassicGroup (GMM:6714-6735)."""
        group.complete_join_future(member, join_error("", Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id, self.choices)
        if group.state in (S, CR):
            return self.maybe_prepare_rebalance_or_complete_join(group)
        if group.is_(PR) and group.has_all_members_joined():
            return self.complete_join(group)
        return EMPTY_RESULT

    def remove_pending_member_and_update_group(self, group: ClassicGroup, member_id: str) -> Result:
        """removePendingMemberAndUpdateClassicGroup (GMM:6745-6756)."""
        group.remove(member_id, self.choices)
        if group.is_(PR) and group.has_all_members_joined():
            return self.complete_join(group)
        return EMPTY_RESULT

    # -- the sync phase's timer -----------------------------------------------------------------
    def remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.pending_sync_members.clear()
        self._cancel(group.group_id, sync_key(group.group_id))

    def on_sync_timer(self, group_id: str) -> Result:
        """expirePendingSync (GMM:7095-7130): members that sent no SyncGroup within the rebalance timeout are
        removed and the group rebalances. The generation compared is read when the timer runs, so the
        stale-generation branch cannot be taken; a stale firing is dropped by the timer's key check instead."""
        group = self._group(group_id)
        if group is None or group.state not in (CR, S) or group.has_received_sync_from_all_members():
            return EMPTY_RESULT
        for member_id in sorted(group.pending_sync_members):
            group.remove(member_id, self.choices)
            self._cancel(group_id, heartbeat_key(group_id, member_id))
        return self.prepare_rebalance(group)

"""JoinGroup and the join phase: new/known members, prepareRebalance, DelayedJoin completion
(SPEC.md §3.1, §4.4–4.5), as a mixin of GroupCoordinator."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from core.events import GenerationStarted, GroupEmptied, MemberAdded, MemberNotRejoined, RebalancePrepared
from core.types import Errors, GroupState
from impl.base import CoordinatorBase
from impl.delayed import DelayedJoin, InitialDelayedJoin, join_key, member_key
from impl.group import GroupMetadata, IllegalStateError, MemberMetadata
from impl.results import JoinGroupResult, ResponseFuture

if TYPE_CHECKING:
    from impl.coordinator import JoinRequest

PR, CR, S, E, D = (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE,
                   GroupState.EMPTY, GroupState.DEAD)


class RebalanceMixin(CoordinatorBase):
    #: delayed-join classes (seams: seeded mutants may subclass them; snapshots restore through them)
    join_class: type[DelayedJoin] = DelayedJoin
    initial_join_class: type[InitialDelayedJoin] = InitialDelayedJoin

    def do_join_group(self, group: GroupMetadata, req: "JoinRequest",
                      future: ResponseFuture) -> None:
        p = self.profile
        names = tuple(name for name, _ in req.protocols)
        if p.max_group_size != "off" and not self._accept_joining_member(group, req.member_id):
            self._refuse_at_capacity(group, req)
            future.complete(self.join_error("", Errors.GROUP_MAX_SIZE_REACHED))
        elif p.dead_check_first and group.is_(D):
            future.complete(self.join_error(req.member_id, p.dead_group_error))
        elif not group.supports_protocols(req.protocol_type, names):
            future.complete(self.join_error(req.member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
        elif req.member_id == "":
            self._do_new_member_join(group, req, future)
        elif p.pending_members and group.is_pending_member(req.member_id):
            if req.group_instance_id is not None and p.static_membership is not None:
                raise IllegalStateError(f"unexpected JoinGroup with group instance id {req.group_instance_id} "
                                        f"for pending member {req.member_id}")   # a pending id is never static
            self.add_member_and_rebalance(group, req.member_id, req, future)
        elif (member_error := self.current_member_error(group, req.member_id, req.group_instance_id,
                                                        join=True)) is not None:
            future.complete(self.join_error(req.member_id, member_error))   # J5b 4–5: fenced, unknown
        elif group.is_(D):
            future.complete(self.join_error(req.member_id, p.dead_group_error))
        else:
            self._do_current_member_join(group, group.get(req.member_id), req, future)
        if group.is_(PR):   # J6: attempt to complete the join phase
            self.join_purgatory.check_and_complete(join_key(group.group_id))

    def _refuse_at_capacity(self, group: GroupMetadata, req: "JoinRequest") -> None:
        """group.remove of the refused member id: no callback, no heartbeat cancelled, no rebalance (§3.1 J4).
        Before 3.0 remove left pendingMembers alone (group_keeps_id_sets); before 2.8 it left the static map alone and
        handleJoinGroup dropped the mapping of the *request's* instance id instead
        (GroupCoordinator.scala 2.4.1 lines 161-167)."""
        rules = self.profile.static_membership
        mapping = dict(group.static_members)
        group.remove(req.member_id)
        if rules is not None and rules.refusal_drops_request_instance:
            group.static_members = {i: m for i, m in mapping.items() if i != req.group_instance_id}

    def _accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        """The group.max.size rule of the profile (SPEC.md §3.1 J4)."""
        limit = self.config.group_max_size
        if self.profile.max_group_size == "over_capacity":   # 2.2–2.5
            shed = (len(group.members) > limit and group.has(member_id)
                    and group.get(member_id).awaiting_join is None)   # oversized: shed members not rejoining
            return not (shed or (member_id == "" and len(group.members) >= limit))
        # 2.6.0+ acceptJoiningMember (KAFKA-9885)
        if group.state in (E, D):
            return True
        if group.is_(PR):
            return ((group.has(member_id) and group.get(member_id).awaiting_join is not None)
                    or group.num_members_awaiting_join < limit)
        return group.has(member_id) or len(group.members) < limit

    def _do_new_member_join(self, group: GroupMetadata, req: "JoinRequest",
                            future: ResponseFuture) -> None:
        # Kafka: clientId-UUID, or groupInstanceId-UUID for a static member (SPEC.md §2)
        new_member_id = self._generate_member_id(req.group_instance_id or req.client_id)
        if self.is_known_static_instance(group, req.group_instance_id):
            self.static_member_rejoin(group, req, new_member_id, future)   # J5a step 4: a restart
        elif self.profile.pending_members and req.require_known_member_id and req.group_instance_id is None:
            # KIP-394: remember the id, answer MEMBER_ID_REQUIRED; no state change, no rebalance. Only a dynamic
            # member goes pending (KafkaApis: requireKnownMemberId = v4+ and no instance id; 3.x tests the id)
            group.add_pending_member(new_member_id)
            self.add_pending_member_expiration(group, new_member_id, req.session_timeout_ms)
            future.complete(self.join_error(new_member_id, Errors.MEMBER_ID_REQUIRED))
        else:
            self.add_member_and_rebalance(group, new_member_id, req, future)

    def _do_current_member_join(self, group: GroupMetadata, member: MemberMetadata,
                                req: "JoinRequest", future: ResponseFuture) -> None:
        if group.is_(PR):
            self.update_member_and_rebalance(group, member, req, future)
        elif group.is_(CR) and member.matches(req.protocols):
            # a rejoin with unchanged metadata (it missed its join response): answer the current generation
            future.complete(self._join_result(group, member, with_members=group.is_leader(member.member_id)))
        elif group.is_(S) and not group.is_leader(member.member_id) and member.matches(req.protocols):
            future.complete(self._join_result(group, member, with_members=False))
        elif group.state in (CR, S):
            # changed metadata, or the leader rejoining a Stable group: always rebalance
            self.update_member_and_rebalance(group, member, req, future)
        else:   # Empty (a member cannot be there) or Dead
            future.complete(self.join_error(req.member_id, Errors.UNKNOWN_MEMBER_ID))

    def _join_result(self, group: GroupMetadata, member: MemberMetadata,
                     with_members: bool) -> JoinGroupResult:
        protocol_type = group.protocol_type if self.profile.join_response_has_protocol_type else None
        return JoinGroupResult(Errors.NONE, group.generation_id, protocol_type, group.protocol_name,
                               group.leader_id or "", member.member_id,
                               group.current_member_metadata() if with_members else ())

    def add_member_and_rebalance(self, group: GroupMetadata, member_id: str,
                                 req: "JoinRequest", future: ResponseFuture) -> None:
        p = self.profile
        member = MemberMetadata(member_id, req.client_id, req.client_host, req.session_timeout_ms,
                                req.rebalance_timeout_ms, req.protocol_type, req.protocols, req.group_instance_id)
        if p.new_member_join_timeout:
            member.is_new = True
        if p.initial_rebalance_delay and group.is_(PR) and group.generation_id == 0:
            group.new_member_added = True   # lets InitialDelayedJoin extend (never-rebalanced groups only)
        group.add(member, future)
        if not p.group_keeps_id_sets and req.group_instance_id is None:
            group.remove_pending_member(member_id)   # 2.4.1 GC 970-973 (3.x: add() does it, for everyone)
        self._event(MemberAdded, member_id)
        if p.new_member_join_timeout:
            # a new member cannot heartbeat yet: bound its parked JoinGroup by the 5-minute timeout
            self.complete_and_schedule_next_expiration(group, member, self.config.new_member_join_timeout_ms)
        self.maybe_prepare_rebalance(group)

    def update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata,
                                    req: "JoinRequest", future: ResponseFuture) -> None:
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, future)
        self.maybe_prepare_rebalance(group)

    def maybe_prepare_rebalance(self, group: GroupMetadata) -> None:
        if group.can_rebalance:
            self.prepare_rebalance(group)

    def prepare_rebalance(self, group: GroupMetadata) -> None:
        if group.is_(CR):   # parked SyncGroups learn that the rebalance restarted
            self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        self.remove_sync_expiration(group)
        op: DelayedJoin
        if group.is_(E) and self.profile.initial_rebalance_delay:
            delay = self.config.group_initial_rebalance_delay_ms
            op = self.initial_join_class(self, group, delay, delay, max(group.rebalance_timeout_ms() - delay, 0),
                                         self._seq())
        else:
            # the timeout is fixed now: later joiners with bigger timeouts do not extend it (§4.4)
            op = self.join_class(self, group, group.rebalance_timeout_ms(), self._seq())
        previous = group.state
        group.transition_to(PR, self.now_ms)
        self._event(RebalancePrepared, self.profile.state_name(previous), op.kind, op.delay_ms)
        self.join_purgatory.try_complete_else_watch(op, [join_key(group.group_id)])

    def remove_member_and_update_group(self, group: GroupMetadata,
                                       member: MemberMetadata) -> None:
        """removeMemberAndUpdateGroup (2.2+) / onMemberFailure (0.10)."""
        if self.profile.remove_answers_parked_join:
            group.invoke_join_callback(member, self.join_error("", Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (S, CR):
            self.maybe_prepare_rebalance(group)
        elif group.is_(PR):
            self.join_purgatory.check_and_complete(join_key(group.group_id))

    def remove_pending_member_and_update_group(self, group: GroupMetadata,
                                               member_id: str) -> None:
        group.remove_pending_member(member_id)
        if group.is_(PR):
            self.join_purgatory.check_and_complete(join_key(group.group_id))

    # -- the delayed join ------------------------------------------------------------------------
    def try_complete_join(self, group: GroupMetadata,
                          force_complete: Callable[[], bool]) -> bool:
        """tryCompleteJoin: complete once every member has rejoined (seed 001: notYetRejoinedMembers empty)."""
        return force_complete() if group.has_all_members_joined() else False

    def on_complete_initial_join(self, op: InitialDelayedJoin) -> None:
        group = op.group
        if group.new_member_added and op.remaining_ms != 0:
            group.new_member_added = False
            delay = min(op.configured_delay_ms, op.remaining_ms)
            remaining = max(op.remaining_ms - op.delay_ms, 0)
            nxt = self.initial_join_class(self, group, op.configured_delay_ms, delay, remaining, self._seq())
            self.join_purgatory.try_complete_else_watch(nxt, [join_key(group.group_id)])
        else:
            self.on_complete_join(group)

    def on_complete_join(self, group: GroupMetadata) -> None:
        p = self.profile
        self._remove_not_rejoined(group)
        if not group.members and p.emptied_group_state is D:
            group.transition_to(D, self.now_ms)   # E0: an emptied group dies (IllegalState if already Dead)
            self._event(GroupEmptied)
            self._remove_group(group)
            return
        if group.is_(D):
            return
        if group.members and not group.maybe_elect_new_joined_leader():
            # only static members that did not rejoin are left: wait another rebalance timeout for them
            self.join_purgatory.try_complete_else_watch(
                self.join_class(self, group, group.rebalance_timeout_ms(), self._seq()), [join_key(group.group_id)])
            return
        self._init_next_generation(group)
        if group.is_(E):
            self._append(group, "empty", {})
            return
        for member in group.all_members():
            group.invoke_join_callback(
                member, self._join_result(group, member, with_members=group.is_leader(member.member_id)))
            # reschedule with the session timeout, *then* clear isNew (the order matters, §4.4 step 5)
            self._reschedule_after_join(group, member)
            member.is_new = False
            if p.delayed_sync:
                group.add_pending_sync_member(member.member_id)
        if p.delayed_sync:
            self.schedule_pending_sync(group)

    def _remove_not_rejoined(self, group: GroupMetadata) -> None:
        """Members that did not rejoin are removed before any join response is sent (seed 000) — except
        static members (2.3+, SPEC.md §4.4 step 1): they keep their id and get no response."""
        complete = self.profile.complete_removed_heartbeats   # KAFKA-7196 (2.1.0)
        leaving_first = self.profile.missing_member_heartbeat != "complete"
        for failed in group.not_yet_rejoined_members():
            if failed.group_instance_id is not None:
                continue
            self._event(MemberNotRejoined, failed.member_id)
            key = member_key(group.group_id, failed.member_id)
            if complete and leaving_first:   # ≤ 2.4: isLeaving completes the op while the member is still there
                failed.is_leaving = True
                self.heartbeat_purgatory.check_and_complete(key)
            group.remove(failed.member_id)
            if complete and not leaving_first:   # 2.5+: an op whose member is gone completes
                self.heartbeat_purgatory.check_and_complete(key)

    def _reschedule_after_join(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """Every member that gets a join response has its heartbeat rescheduled (seed 000)."""
        self.complete_and_schedule_next_expiration(group, member)

    def _init_next_generation(self, group: GroupMetadata) -> None:
        group.init_next_generation(self.now_ms)
        self._event(GenerationStarted, group.generation_id, self.profile.state_name(group.state), group.leader_id,
                    group.protocol_name)

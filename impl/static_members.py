"""Static membership (KIP-345) in the coordinator: fencing by instance id, the id replacement of a static
member that restarts, the store of that replacement and LeaveGroup by instance id — as a mixin of
GroupCoordinator. Per-release differences are read from ``profile.static_membership`` (impl/static.py).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Hashable

from core.events import StaticMemberReplaced
from core.types import Errors, GroupState
from impl.base import CoordinatorBase
from impl.group import GroupMetadata, IllegalArgumentError, IllegalStateError, MemberMetadata
from impl.results import JoinGroupResult, ResponseFuture
from impl.static import StaticRules

if TYPE_CHECKING:
    from impl.coordinator import JoinRequest

PR, CR, S = GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE


@dataclass(frozen=True, slots=True)
class StaticRejoin:
    """What the store callback of a static id replacement needs (2.6.1+, SPEC.md §3.1 J5a step 4): enough to
    answer the JoinGroup, or to revert the replacement if the append fails. Plain data, so it snapshots."""

    group_instance_id: str
    old_member_id: str
    new_member_id: str
    #: what a revert gives the member back as its protocols: Kafka reads ``oldProtocols`` *after* updateMember, so
    #: these are the restart's own protocols (SPEC.md Corrections 2; GroupCoordinator.scala 2.7.0 lines 1045-1046,
    #: 3.9.0-rc3 lines 1366-1368) — the revert keeps the new metadata and restores only the id and the timeouts
    old_protocols: tuple[tuple[str, bytes], ...]
    old_rebalance_timeout_ms: int
    old_session_timeout_ms: int
    leader_id: str | None            # the leader before the replacement: the answer names it
    future_key: Hashable             # the JoinGroup the answer goes to
    skip_assignment: bool = False    # KIP-814: the client can skip the assignment and the release lets it
    #: the id the replaced member object holds now ("" = ``new_member_id``): Kafka's callback closes over the object
    #: (knownStaticMember), and a later restart of the same instance re-keys that object (replaceStaticMember keeps
    #: it, GroupMetadata.scala 3.9.0-rc3 lines 319-340, 2.7.0 lines 305-326) — the callback then acts on the newer
    #: restart's member (GroupCoordinator.scala 3.9.0-rc3 lines 1383-1384, 1410-1440; 2.7.0 lines 1061-1062, 1074-1082)
    holder_id: str = ""

    @property
    def holder(self) -> str:
        return self.holder_id or self.new_member_id


class StaticMembershipMixin(CoordinatorBase):
    def static_rules(self) -> StaticRules | None:
        return self.profile.static_membership

    def static_join_unsupported(self, group_instance_id: str | None) -> bool:
        """A release without KIP-345 cannot take a group.instance.id (KafkaApis: UNSUPPORTED_VERSION)."""
        return group_instance_id is not None and self.static_rules() is None

    def current_member_error(self, group: GroupMetadata, member_id: str,
                             group_instance_id: str | None, join: bool = False) -> Errors | None:
        """Is (member_id, instance id) a current member? SPEC.md §3.1 J5b 4–5, §3.2 2, §3.3, §3.5.

        2.3+: an instance id that maps to another member id → FENCED_INSTANCE_ID; an instance id that maps to
        nothing → UNKNOWN_MEMBER_ID for a JoinGroup (``join``) in every release (J5b step 5; 2.x doJoinGroup's
        groupInstanceIdNotFound, GroupCoordinator.scala@2.4.1 L287-291, @2.7.0 L276-280) and for every API in 3.x
        (validateCurrentMember); then the member id must be a member. Without KIP-345 the instance id is not part
        of the request and only the member id counts.
        """
        rules = self.static_rules()
        if rules is not None and group_instance_id is not None:
            owner = group.static_member_id(group_instance_id)
            if owner is not None and owner != member_id:
                return Errors.FENCED_INSTANCE_ID
            if owner is None and (rules.validate_current_member or join):
                return Errors.UNKNOWN_MEMBER_ID
        return None if group.has(member_id) else Errors.UNKNOWN_MEMBER_ID

    def is_known_static_instance(self, group: GroupMetadata, group_instance_id: str | None) -> bool:
        return self.static_rules() is not None and group.static_member_id(group_instance_id) is not None

    # -- JoinGroup of a known instance with an unknown member id (SPEC.md §3.1 J5a step 4) ----------------
    def static_member_rejoin(self, group: GroupMetadata, req: "JoinRequest", new_member_id: str,
                             future: ResponseFuture) -> None:
        """A static member restarted: re-key it to ``new_member_id``, fence the old id, then act by state."""
        rules = self.static_rules()
        instance_id = req.group_instance_id
        assert rules is not None and instance_id is not None
        old_member_id = group.static_members[instance_id]
        leader_id = group.leader_id
        # the replacement comes first (2.4.1 GC 211, 3.9 GC 1359): an instance id mapped to an id that is no member
        # is the guard's IllegalArgumentException (GroupMetadata.scala 2.4.1 302-303, 3.9 324-325), before any change
        member = self._replace_static_member(group, instance_id, old_member_id, new_member_id)
        old_timeouts = member.rebalance_timeout_ms, member.session_timeout_ms   # read before updateMember
        # the old id's heartbeat op completes or expires harmlessly: that id is gone
        self.complete_and_schedule_next_expiration(group, member)
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, future)
        rejoin = StaticRejoin(instance_id, old_member_id, new_member_id, member.protocols,   # read after it
                              *old_timeouts, leader_id, future.key,
                              rules.skip_assignment and req.support_skipping_assignment)
        if group.is_(PR):
            return   # waits for the join phase like everyone else
        if group.is_(CR):
            self._static_rejoin_outside_join_phase(group, member, rejoin, rules.rejoin_in_completing_rebalance)
        elif group.is_(S):
            self._static_rejoin_outside_join_phase(group, member, rejoin, rules.rejoin_in_stable)
        else:
            raise IllegalStateError(f"static member {instance_id} rejoined group {group.group_id} "
                                    f"in unexpected state {group.state.value}")

    def _replace_static_member(self, group: GroupMetadata, instance_id: str, old_member_id: str,
                               new_member_id: str) -> MemberMetadata:
        self._event(StaticMemberReplaced, instance_id, old_member_id, new_member_id)
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        self._follow_rekeyed(group, old_member_id, new_member_id)
        return member

    def _follow_rekeyed(self, group: GroupMetadata, old_member_id: str, new_member_id: str) -> None:
        """The pending static appends of ``group`` whose member object was just re-keyed follow it to its new id."""
        for pending in self.appends:
            r = pending.rejoin
            if r is not None and pending.group is group and r.holder == old_member_id:
                pending.rejoin = replace(r, holder_id=new_member_id)

    def _static_rejoin_outside_join_phase(self, group: GroupMetadata, member: MemberMetadata,
                                          rejoin: StaticRejoin, rule: str) -> None:
        if rule == "rebalance":          # KAFKA-9801 (2.5.0)
            self.prepare_rebalance(group)
        elif rule == "persist":          # KAFKA-10284 (2.6.1/2.7.0)
            self._persist_static_rejoin(group, rejoin)
        else:                            # 2.3–2.4: no rebalance, no log write
            group.invoke_join_callback(member, self._static_rejoin_result(group, rejoin))

    def _static_rejoin_result(self, group: GroupMetadata, rejoin: StaticRejoin) -> JoinGroupResult:
        """The current generation, with the *old* leader id and no member list (the new id is unknown
        to the others, so the leader must not reassign now) — or, for a KIP-814 client, the real leader,
        the member list if it is the leader, and skip_assignment = is the leader (SPEC.md §3.1 J5a step 4 and
        Corrections 1; GroupCoordinator.scala 3.9.0-rc3 lines 1407-1422: a follower gets false and no list)."""
        protocol_type = group.protocol_type if self.profile.join_response_has_protocol_type else None
        if rejoin.skip_assignment:
            is_leader = group.is_leader(rejoin.new_member_id)
            return JoinGroupResult(Errors.NONE, group.generation_id, protocol_type, group.protocol_name,
                                   group.leader_id or "", rejoin.new_member_id,
                                   group.current_member_metadata() if is_leader else (), is_leader)
        return JoinGroupResult(Errors.NONE, group.generation_id, protocol_type, group.protocol_name,
                               rejoin.leader_id or "", rejoin.new_member_id, ())

    def _persist_static_rejoin(self, group: GroupMetadata, rejoin: StaticRejoin) -> None:
        """Stable, 2.6.1+: rebalance if the member's new metadata would change the group's protocol, else
        store the group with the new member id and answer from the store callback."""
        if group.select_protocol() != group.protocol_name:
            self.maybe_prepare_rebalance(group)
            return
        assignment = {m.member_id: m.assignment for m in group.all_members()}
        self._append(group, "static", assignment, rejoin)

    def on_store_static_member(self, group: GroupMetadata, rejoin: StaticRejoin, error: Errors) -> None:
        """The store callback of a static id replacement. Unlike the SyncGroup callback it has no
        state/generation guard (Kafka's has none); success answers the member's parked JoinGroup, failure
        reverts the replacement and answers the store error with member id "" (SPEC.md §3.1 J5a step 4).

        It acts on the member *object* of the replacement wherever it is now: re-keyed by a later restart of the
        instance, success answers that restart's parked JoinGroup (with this replacement's member id), and failure
        clears that restart's parked JoinGroup unanswered (updateMember with no callback) before the revert's
        replaceStaticMember(new → old) throws — GroupCoordinator.scala 3.9.0-rc3 lines 1383-1384 and 1410-1440, 2.7.0
        lines 1061-1062 and 1074-1082. A member that left the group is detached: its parked join was answered when it
        left, so success does nothing and failure only throws (Kafka's updateMember on the detached object moves the
        group's protocol counts by its protocols and back; not restated: it nets out unless the member rejoined with
        other protocols before it left)."""
        member = group.members.get(rejoin.holder)
        if error is Errors.NONE:
            if member is not None:
                group.invoke_join_callback(member, self._static_rejoin_result(group, rejoin))
            return
        if member is None:   # the revert's replaceStaticMember(new → old) throws (3.9 GC 1384, GM 324-325)
            raise IllegalArgumentError(f"cannot replace non-existing member id {rejoin.new_member_id}")
        parked = member.awaiting_join
        group.update_member(member, rejoin.old_protocols, rejoin.old_rebalance_timeout_ms,
                            rejoin.old_session_timeout_ms, None)
        if member.member_id != rejoin.new_member_id:   # re-keyed by a later restart: its join is dropped, then throw
            raise IllegalArgumentError(f"cannot replace non-existing member id {rejoin.new_member_id}")
        self._replace_static_member(group, rejoin.group_instance_id, rejoin.new_member_id, rejoin.old_member_id)
        self.complete_and_schedule_next_expiration(group, member)
        future = parked if parked is not None and parked.key == rejoin.future_key else self._future(
            rejoin.future_key, "JoinGroup")
        protocol_type = group.protocol_type if self.profile.join_response_has_protocol_type else None
        future.complete(JoinGroupResult(error, group.generation_id, protocol_type, group.protocol_name,
                                        rejoin.leader_id or "", "", ()))

    # -- LeaveGroup, one identity of the batch (SPEC.md §3.4) ------------------------------------------
    def leave_identity(self, group: GroupMetadata, member_id: str, group_instance_id: str | None) -> Errors:
        rules = self.static_rules()
        if rules is None:
            return self._leave_member(group, member_id)
        owner = group.static_member_id(group_instance_id)
        if rules.validate_current_member:   # [3.x]
            if member_id == "":              # admin removal by instance id
                return Errors.UNKNOWN_MEMBER_ID if owner is None else self._leave_member(group, owner)
            if self.profile.pending_members and group.is_pending_member(member_id):
                return self._leave_member(group, member_id)
            return self.current_member_error(group, member_id, group_instance_id) or self._leave_member(
                group, member_id)
        # [2.4]
        if member_id != "" and group.is_static_member_fenced(member_id, group_instance_id):
            return Errors.FENCED_INSTANCE_ID
        if self.profile.pending_members and group.is_pending_member(member_id):
            if group_instance_id is not None:   # 2.4.1 GC 471-474, 2.7.0 GC 477-480: a pending id is never static
                raise IllegalStateError(f"static member {group_instance_id} was not expected to leave group "
                                        f"{group.group_id} from the pending members with member id {member_id}")
            return self._leave_member(group, member_id)
        if owner is None and not group.has(member_id):
            return Errors.UNKNOWN_MEMBER_ID
        return self._leave_member(group, owner or member_id)   # found by instance id if known

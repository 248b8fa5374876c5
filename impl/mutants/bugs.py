"""The seeded bugs. Each class overrides exactly one seam of the reference coordinator."""
from __future__ import annotations

from typing import Callable

from core.types import Errors, GroupState
from impl.coordinator import GroupCoordinator
from impl.delayed import DelayedHeartbeat, DelayedJoin, InitialDelayedJoin, join_key
from impl.group import GroupMetadata, MemberMetadata
from impl.mutants import SINCE_2_2, mutant
from impl.results import ResponseFuture

PR, CR = GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE


@mutant("join-completes-before-all-rejoined", catches="delayed-join-completes-only-when-all-rejoined",
        mistake="tryCompleteJoin completes as soon as one member has rejoined, not when notYetRejoinedMembers is empty")
class JoinCompletesEarly(GroupCoordinator):
    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        return force_complete() if group.num_members_awaiting_join > 0 else False


@mutant("non-rejoined-members-kept", catches="join-completion-removes-every-member-that-did-not-rejoin",
        mistake="onCompleteJoin forgets to remove the members that did not rejoin before answering")
class NonRejoinedKept(GroupCoordinator):
    def _remove_not_rejoined(self, group: GroupMetadata) -> None:
        """The removal loop is missing."""


@mutant("keep-alive-ignores-pending-callbacks", catches="member-kept-alive-while-callback-pending",
        mistake="the keep-alive predicate forgets that a parked JoinGroup or SyncGroup keeps a member alive")
class KeepAliveIgnoresCallbacks(GroupCoordinator):
    def should_keep_member_alive(self, member: MemberMetadata, deadline_ms: int) -> bool:
        if self.profile.liveness == "satisfied":
            return member.heartbeat_satisfied
        timeout = member.session_timeout_ms
        if member.is_new and self.profile.liveness == "new_member_deadline":
            timeout = self.config.new_member_join_timeout_ms
        return member.latest_heartbeat_ms + timeout > deadline_ms


@mutant("heartbeat-not-rescheduled-after-join", catches="join-response-reschedules-the-heartbeat",
        mistake="members that get a join response keep their old heartbeat deadline")
class NoRescheduleAfterJoin(GroupCoordinator):
    def _reschedule_after_join(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """No reschedule."""


@mutant("fresh-heartbeat-completes-at-birth", catches="fresh-heartbeat-not-completed-by-its-own-watch",
        mistake="tryCompleteHeartbeat compares the deadline with '>=', so the op it just created completes at once",
        # 2.4.1's own sessions op completes at birth (the no-liveness-op-after-the-join-response finding), so
        # the property that names this mistake is off there
        profiles=("0.10.0", "2.7.0", "3.9"))
class FreshHeartbeatCompletes(GroupCoordinator):
    def try_complete_heartbeat(self, op: DelayedHeartbeat, force_complete: Callable[[], bool]) -> bool:
        if not op.is_pending and op.deadline_ms < 0:   # being created: not yet handed to the timer
            return force_complete()
        return super().try_complete_heartbeat(op, force_complete)


class _TwiceJoin(DelayedJoin):
    def force_complete(self) -> bool:   # no compare-and-set: a racing completer runs onComplete again
        self.complete_count += 1
        self.on_complete()
        return True


@mutant("delayed-op-completes-twice", catches="delayed-operation-completes-at-most-once",
        mistake="forceComplete lacks its compare-and-set, so a DelayedJoin completed by a request runs again on expiry")
class DelayedOpTwice(GroupCoordinator):
    join_class = _TwiceJoin


@mutant("store-callback-ignores-generation", catches="store-callback-generation-guard",
        mistake="the SyncGroup store callback checks that the group is CompletingRebalance but not that it is "
                "still the same generation, so an old assignment lands in a new generation")
class StoreIgnoresGeneration(GroupCoordinator):
    def on_store_group(self, group: GroupMetadata, generation_id: int, assignment: dict[str, bytes],
                       error: Errors) -> None:
        super().on_store_group(group, group.generation_id, assignment, error)


@mutant("generation-not-bumped", catches="each-new-generation-increments-the-generation-id",
        mistake="initNextGeneration forgets generationId += 1")
class GenerationNotBumped(GroupCoordinator):
    def _init_next_generation(self, group: GroupMetadata) -> None:
        super()._init_next_generation(group)
        group.generation_id -= 1


class _NoReelectGroup(GroupMetadata):
    __slots__ = ()

    def remove(self, member_id: str) -> None:
        leader = self.leader_id
        super().remove(member_id)
        self.leader_id = leader   # the leader id survives its member


@mutant("leader-not-reelected", catches="leader-is-a-member",
        mistake="removing the leader leaves leaderId pointing at the removed member")
class LeaderNotReelected(GroupCoordinator):
    group_class = _NoReelectGroup


@mutant("sync-accepted-in-preparing-rebalance", catches="sync-in-preparing-rebalance-answers-rebalance-in-progress",
        mistake="SyncGroup in PreparingRebalance is parked as if the group were CompletingRebalance")
class SyncAcceptedInPreparing(GroupCoordinator):
    def do_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str,
                      assignments: dict[str, bytes], protocol_type: str | None, protocol_name: str | None,
                      future: ResponseFuture, group_instance_id: str | None = None) -> None:
        if group.is_(PR) and group.has(member_id) and generation_id == group.generation_id:
            group.get(member_id).awaiting_sync = future
            return
        super().do_sync_group(group, generation_id, member_id, assignments, protocol_type, protocol_name, future,
                              group_instance_id)


class _MinTimeoutGroup(GroupMetadata):
    __slots__ = ()

    def rebalance_timeout_ms(self) -> int:
        source = "session" if self.profile.rebalance_timeout_source == "session" else "rebalance"
        return min((getattr(m, f"{source}_timeout_ms") for m in self.members.values()), default=0)


@mutant("rebalance-timeout-min", catches="rebalance-timeout-is-the-maximum",
        mistake="the DelayedJoin waits the smallest member timeout instead of the largest (seed 000: 10 s, not 5 s)")
class RebalanceTimeoutMin(GroupCoordinator):
    group_class = _MinTimeoutGroup


class _PendingIgnoredGroup(GroupMetadata):
    __slots__ = ()

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join   # KIP-394's pending check forgotten


@mutant("pending-member-does-not-block", catches="delayed-join-completes-only-when-all-rejoined",
        mistake="hasAllMembersJoined ignores pending members, so a rebalance ends without a member that got "
                "MEMBER_ID_REQUIRED", profiles=SINCE_2_2)
class PendingDoesNotBlock(GroupCoordinator):
    group_class = _PendingIgnoredGroup


class _EagerInitialJoin(InitialDelayedJoin):
    def try_complete(self) -> bool:
        return self.coordinator.try_complete_join(self.group, self.force_complete)


@mutant("initial-delay-ends-early", catches="initial-rebalance-waits-the-initial-delay",
        mistake="InitialDelayedJoin completes as soon as everyone joined instead of always waiting the delay",
        profiles=SINCE_2_2)
class InitialDelayEndsEarly(GroupCoordinator):
    initial_join_class = _EagerInitialJoin


@mutant("expiry-removes-member-awaiting-join", catches="member-kept-alive-while-callback-pending",
        mistake="heartbeat expiry removes a member even while its JoinGroup is parked")
class ExpiryRemovesAwaiting(GroupCoordinator):
    def on_expire_heartbeat(self, op: DelayedHeartbeat) -> None:
        group = op.group
        member = group.members.get(op.member_id)
        if member is not None and member.awaiting_join is not None and not group.is_(GroupState.DEAD):
            self.remove_member_and_update_group(group, member)
            return
        super().on_expire_heartbeat(op)


@mutant("leave-does-not-recheck-join", catches="delayed-join-completes-once-all-rejoined",
        mistake="LeaveGroup in PreparingRebalance removes the member but does not re-check the delayed join")
class LeaveDoesNotRecheck(GroupCoordinator):
    def remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata) -> None:
        if group.is_(PR):
            if self.profile.remove_answers_parked_join:
                group.invoke_join_callback(member, self.join_error("", Errors.UNKNOWN_MEMBER_ID))
            group.remove(member.member_id)
            return
        super().remove_member_and_update_group(group, member)


@mutant("prepare-keeps-parked-syncs", catches="parked-sync-only-in-completing-rebalance",
        mistake="prepareRebalance from CompletingRebalance leaves the parked SyncGroups unanswered")
class PrepareKeepsParkedSyncs(GroupCoordinator):
    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> None:
        if error is Errors.REBALANCE_IN_PROGRESS:
            return
        super()._reset_and_propagate_assignment_error(group, error)


@mutant("commit-in-completing-rebalance-accepted",
        catches="commit-in-completing-rebalance-answers-rebalance-in-progress",
        mistake="OffsetCommit in CompletingRebalance is stored and resets the heartbeat instead of answering "
                "REBALANCE_IN_PROGRESS")
class CommitAcceptedInCompleting(GroupCoordinator):
    def _do_commit(self, group: GroupMetadata, member_id: str, generation_id: int,
                   group_instance_id: str | None = None) -> Errors | None:
        if group.is_(CR) and group.has(member_id) and generation_id == group.generation_id:
            self.complete_and_schedule_next_expiration(group, group.get(member_id))
            return None
        return super()._do_commit(group, member_id, generation_id, group_instance_id)


@mutant("unload-keeps-parked-joins", catches="parked-join-only-in-preparing-rebalance",
        mistake="unloading a PreparingRebalance group does not answer the parked JoinGroups with NOT_COORDINATOR")
class UnloadKeepsParkedJoins(GroupCoordinator):
    def _on_group_unloaded(self, group: GroupMetadata) -> None:
        if group.is_(PR):
            group.transition_to(GroupState.DEAD, self.now_ms)
            self.join_purgatory.check_and_complete(join_key(group.group_id))
            return
        super()._on_group_unloaded(group)


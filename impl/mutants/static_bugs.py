"""Seeded bugs in static membership (KIP-345): each class overrides exactly one seam of impl/static_members.py or
impl/rebalance.py, and names the static property of properties/concrete_static.py that must catch it."""
from __future__ import annotations

from dataclasses import replace

from core.events import MemberNotRejoined
from impl.coordinator import GroupCoordinator
from impl.delayed import member_key
from impl.group import GroupMetadata, MemberMetadata
from impl.mutants import mutant
from impl.results import JoinGroupResult
from impl.static_members import StaticRejoin

#: the releases with static members (KIP-345, 2.3.0)
STATIC_RELEASES = ("2.4.1", "2.7.0", "3.9")


@mutant("static-restart-added-as-new-member", catches="at-most-one-member-per-instance-id",
        mistake="the JoinGroup of a restarted static member (member id \"\", known group.instance.id) does not look "
                "the instance id up and adds a second member carrying it",
        # 3.x's GroupMetadata.add refuses that second member itself (IllegalStateException, 3.9 GroupMetadata.scala
        # 242-246), so on 3.9 the mistake is Kafka's guard's to catch: no-illegal-state-error reports it there
        # (tests/test_guards_reported.py); 2.x adds the member and at-most-one-member-per-instance-id reports it
        profiles=("2.4.1", "2.7.0"))
class StaticRestartAdded(GroupCoordinator):
    def is_known_static_instance(self, group: GroupMetadata, group_instance_id: str | None) -> bool:
        return False


@mutant("replacement-keeps-old-incarnation-parked", catches="fenced-instance-id-never-succeeds",
        mistake="replaceStaticMember re-keys the member but does not fence the JoinGroup and SyncGroup its old "
                "incarnation had parked: they stay parked on the member under its new id",
        profiles=STATIC_RELEASES)
class ReplacementKeepsParked(GroupCoordinator):
    def _replace_static_member(self, group: GroupMetadata, instance_id: str, old_member_id: str,
                               new_member_id: str) -> MemberMetadata:
        member = group.members[old_member_id]
        parked = member.awaiting_join, member.awaiting_sync
        member.awaiting_join = member.awaiting_sync = None   # hidden from the fencing, counters untouched
        try:
            return super()._replace_static_member(group, instance_id, old_member_id, new_member_id)
        finally:
            member.awaiting_join, member.awaiting_sync = parked


@mutant("static-member-removed-at-join-completion", catches="static-member-survives-join-completion",
        mistake="onCompleteJoin removes every member that did not rejoin, static ones included (the pre-2.3 rule)",
        profiles=STATIC_RELEASES)
class StaticRemovedAtCompletion(GroupCoordinator):
    def _remove_not_rejoined(self, group: GroupMetadata) -> None:
        complete = self.profile.complete_removed_heartbeats
        leaving_first = self.profile.missing_member_heartbeat != "complete"
        for failed in group.not_yet_rejoined_members():   # the static members' exemption is missing
            self._event(MemberNotRejoined, failed.member_id)
            key = member_key(group.group_id, failed.member_id)
            if complete and leaving_first:
                failed.is_leaving = True
                self.heartbeat_purgatory.check_and_complete(key)
            group.remove(failed.member_id)
            if complete and not leaving_first:
                self.heartbeat_purgatory.check_and_complete(key)


@mutant("re-keyed-store-answers-with-the-current-id", catches="refines-the-abstract-model",
        mistake="the store callback of a static restart whose member a later restart re-keyed answers that restart's "
                "JoinGroup with the member's current id, as if it were its own store's answer (Kafka names the id the "
                "earlier replacement gave: GroupCoordinator.scala 3.9.0-rc3 lines 1410-1440)",
        profiles=("2.7.0", "3.9"))
class RekeyedStoreAnswersCurrentId(GroupCoordinator):
    def _static_rejoin_result(self, group: GroupMetadata, rejoin: StaticRejoin) -> JoinGroupResult:
        holder = rejoin.holder
        return super()._static_rejoin_result(group, replace(rejoin, new_member_id=holder, holder_id=""))

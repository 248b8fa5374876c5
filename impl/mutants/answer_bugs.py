"""Seeded bugs in what an answer or a stored record *says* (issue 27 item 4): each class overrides one seam, and the
labelled refinement catches it through one output rule (harness/answers.py RULES; the rule is named in its
violation) — no catalog property looks at these fields, so each one is the only check that sees its mistake."""
from __future__ import annotations

from typing import Any

from core.types import Errors
from impl.coordinator import GroupCoordinator
from impl.group import GroupMetadata, MemberMetadata
from impl.mutants import mutant
from core.events import StaticMemberReplaced
from impl.results import JoinGroupResult, LeaveGroupResult, SyncGroupResult
from impl.static_members import StaticRejoin

#: the refinement property, which every one of these violates (with its rule named in the message)
REFINES = "refines-the-abstract-model"
#: the releases with static members (KIP-345, 2.3.0) and with the protocol type in JoinGroup answers (KIP-559, 2.5)
STATIC_RELEASES = ("2.4.1", "2.7.0", "3.9")
TYPED_RELEASES = ("2.7.0", "3.9")
BATCH_RELEASES = ("2.4.1", "2.7.0", "3.9")


@mutant("static-answer-names-the-new-leader-id", catches=REFINES,
        mistake="the answer to a restarted static member names the group's leader *after* the id replacement — the "
                "restarted leader's own new id — instead of the leader of when the replacement was taken, so the "
                "leader believes it must assign in a group that will not broadcast it (rule join-leader-id)",
        profiles=("2.4.1",))
class StaticAnswerNamesNewLeader(GroupCoordinator):
    def _static_rejoin_result(self, group: GroupMetadata, rejoin: StaticRejoin) -> JoinGroupResult:
        result = super()._static_rejoin_result(group, rejoin)
        return JoinGroupResult(result.error, result.generation_id, result.protocol_type, result.protocol_name,
                               group.leader_id or "", result.member_id, result.members, result.skip_assignment)


@mutant("fenced-join-without-its-member-id", catches=REFINES,
        mistake="the JoinGroup a restarted static member's old incarnation had parked is answered FENCED_INSTANCE_ID "
                "with member id \"\" instead of the old member id it carried (rule join-member-id)",
        profiles=STATIC_RELEASES)
class FencedJoinWithoutItsId(GroupCoordinator):
    def _replace_static_member(self, group: GroupMetadata, instance_id: str, old_member_id: str,
                               new_member_id: str) -> MemberMetadata:
        self._event(StaticMemberReplaced, instance_id, old_member_id, new_member_id)
        return group.replace_static_member(instance_id, old_member_id, new_member_id,
                                           self.join_error("", Errors.FENCED_INSTANCE_ID),
                                           SyncGroupResult(Errors.FENCED_INSTANCE_ID))


@mutant("skip-assignment-for-every-static-member", catches=REFINES,
        mistake="a v9 static restart in Stable is answered skipAssignment = true whatever its role — SPEC.md's "
                "passage before Corrections 1 (KIP-814 sets it for the leader only; rule join-skip-assignment)",
        profiles=("3.9",))
class SkipForEveryStaticMember(GroupCoordinator):
    def _static_rejoin_result(self, group: GroupMetadata, rejoin: StaticRejoin) -> JoinGroupResult:
        result = super()._static_rejoin_result(group, rejoin)
        return JoinGroupResult(result.error, result.generation_id, result.protocol_type, result.protocol_name,
                               result.leader_id, result.member_id, result.members,
                               result.skip_assignment or rejoin.skip_assignment)


@mutant("static-restart-rebalances-on-own-choice", catches=REFINES,
        mistake="a static restart in Stable rebalances when its own first-choice protocol is not the group's, "
                "instead of re-running the election (KAFKA-10284 stores it while the selection keeps the protocol; "
                "rule static-protocol-selection)",
        profiles=("2.7.0", "3.9"))
class StaticRestartPrefersItsProtocol(GroupCoordinator):
    def _persist_static_rejoin(self, group: GroupMetadata, rejoin: StaticRejoin) -> None:
        if rejoin.old_protocols and rejoin.old_protocols[0][0] != group.protocol_name:
            self.maybe_prepare_rebalance(group)
            return
        super()._persist_static_rejoin(group, rejoin)


@mutant("member-list-without-instance-ids", catches=REFINES,
        mistake="the leader's member list leaves out each member's group.instance.id (the JoinGroup v5 field), so "
                "the leader's assignor cannot keep static members' partitions (rule join-member-list)",
        profiles=STATIC_RELEASES)
class MemberListWithoutInstanceIds(GroupCoordinator):
    class group_class(GroupMetadata):   # noqa: N801 — the seam is the coordinator's group class
        __slots__ = ()

        def current_member_metadata(self) -> tuple[tuple[str, str | None, bytes], ...]:
            return tuple((m, None, meta) for m, _, meta in super().current_member_metadata())


@mutant("join-answer-without-protocol-type", catches=REFINES,
        mistake="a successful JoinGroup answer leaves the protocol type out although the release answers it "
                "(KIP-559, JoinGroup v7+; rule join-protocol)",
        profiles=TYPED_RELEASES)
class JoinAnswerWithoutProtocolType(GroupCoordinator):
    def _join_result(self, group: GroupMetadata, member: MemberMetadata, with_members: bool) -> JoinGroupResult:
        result = super()._join_result(group, member, with_members)
        return JoinGroupResult(result.error, result.generation_id, None, result.protocol_name, result.leader_id,
                               result.member_id, result.members, result.skip_assignment)


@mutant("stable-sync-answers-no-assignment", catches=REFINES,
        mistake="a SyncGroup in Stable is answered NONE with an empty assignment instead of the member's stored one "
                "(rule sync-assignment)")
class StableSyncAnswersNoAssignment(GroupCoordinator):
    def stored_assignment(self, member: MemberMetadata) -> bytes:
        return b""


@mutant("leave-error-folded-into-the-top-level", catches=REFINES,
        mistake="a LeaveGroup v3+ answer puts the first identity's error at the top level and lists no identity, as "
                "a v0-2 answer would (rule leave-member-errors)",
        profiles=BATCH_RELEASES)
class LeaveErrorFolded(GroupCoordinator):
    def leave_result(self, per: tuple[tuple[str, str | None, Errors], ...]) -> LeaveGroupResult:
        return LeaveGroupResult(per[0][2] if per else Errors.NONE)


@mutant("group-record-of-the-previous-generation", catches=REFINES,
        mistake="the group record an append writes carries the generation before the current one, so a reload "
                "brings the group back a generation too early (rule stored-record)")
class RecordOfPreviousGeneration(GroupCoordinator):
    def group_record(self, group: GroupMetadata, assignment: dict[str, bytes]) -> tuple[Any, ...]:
        generation, *rest = super().group_record(group, assignment)
        return (generation - 1, *rest)


__all__ = ["JoinAnswerWithoutProtocolType", "LeaveErrorFolded", "MemberListWithoutInstanceIds",
           "RecordOfPreviousGeneration", "SkipForEveryStaticMember", "StableSyncAnswersNoAssignment",
           "StaticAnswerNamesNewLeader", "FencedJoinWithoutItsId", "StaticRestartPrefersItsProtocol"]

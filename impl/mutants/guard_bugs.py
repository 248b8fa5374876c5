"""Seeded bugs that Kafka's own guards catch (impl/guards.py): each class overrides one seam, and the gate must report
the guard it trips as it reports any IllegalStateError — property ``no-illegal-state-error``."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.types import GroupState
from impl.coordinator import GroupCoordinator
from impl.group import GroupMetadata
from impl.mutants import SINCE_2_2, mutant
from impl.results import ResponseFuture

if TYPE_CHECKING:
    from impl.coordinator import JoinRequest


@mutant("member-id-is-client-id", catches="no-illegal-state-error",
        mistake="member ids are the client id without Kafka's unique suffix, so a client that joins again with "
                "member id \"\" is handed the id its current member holds; 3.x's addPendingMember refuses to make a "
                "member's id pending (GroupMetadata.scala 3.9 344-350)",
        profiles=("3.9",))
class MemberIdIsClientId(GroupCoordinator):
    def _generate_member_id(self, client_id: str) -> str:
        return client_id


@mutant("sync-unpends-before-validation", catches="no-illegal-state-error",
        mistake="SyncGroup takes its sender off pendingSyncMembers before checking that the sender is a member; a "
                "SyncGroup from an unknown member id trips removePendingSyncMember's check (GroupMetadata.scala 3.9 "
                "360-366, KAFKA-12890)",
        profiles=("3.9",))
class SyncUnpendsBeforeValidation(GroupCoordinator):
    def do_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str, *args: Any, **kw: Any) -> None:
        if self.profile.delayed_sync and group.is_(GroupState.COMPLETING_REBALANCE):
            group.remove_pending_sync_member(member_id)
        super().do_sync_group(group, generation_id, member_id, *args, **kw)


@mutant("member-added-without-protocol-type", catches="no-illegal-state-error",
        mistake="the JoinGroup handler builds the new member without the request's protocol type; GroupMetadata.add's "
                "assertions refuse a member whose protocol type is not the group's (GroupMetadata.scala 2.4.1 "
                "237-239, 3.9 252-253)",
        profiles=SINCE_2_2)   # the gate does not check no-illegal-state-error on 0.10.0 (its Dead → Dead finding)
class MemberAddedWithoutProtocolType(GroupCoordinator):
    def add_member_and_rebalance(self, group: GroupMetadata, member_id: str, req: "JoinRequest",
                                 future: ResponseFuture) -> None:
        super().add_member_and_rebalance(group, member_id, replace(req, protocol_type=""), future)

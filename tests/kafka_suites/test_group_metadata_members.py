"""Kafka's GroupMetadataTest.scala, second half (the ``SUITE`` of test_group_metadata.py): the replacement of a static
member's id, the parked JoinGroup/SyncGroup callbacks (and, from 3.3.2, a callback that throws), pending members and
pending-sync members — against impl's GroupMetadata (impl/group.py) at 2.4.1, 2.7.0 and 3.9.0.

The guards these tests assert (an IllegalStateException or IllegalArgumentException from the group's own checks) are
impl/guards.py's; tests/test_guards.py shows each guard per release and that the gate reports one that fires.
"""
from __future__ import annotations

import pytest

from core.types import Errors
from impl.group import IllegalArgumentError, IllegalStateError
from impl.results import JoinGroupResult, SyncGroupResult
from tests.failing_callbacks import FailingFuture
from tests.kafka_suites.registry import restates
from tests.kafka_suites.test_group_metadata import ALL, PR, SHARED_INSTANCE, SUITE, new_group, new_member, parked

__all__ = ["SUITE"]

OK_JOIN = JoinGroupResult(Errors.NONE, -1, None, None, "", "memberId")   # JoinGroupResult(memberId, Errors.NONE)


# -- replacing a static member's id (KIP-345) --------------------------------------------------------------------
@restates("testReplaceGroupInstanceWithEmptyGroupInstanceId", "2.4.1", "2.7.0")
def test_a_replacement_without_an_instance_id_is_an_illegal_argument(profile: str) -> None:
    group = new_group(profile)
    group.add(new_member(instance_id="groupInstanceId"))
    assert group.is_leader("memberId") and group.static_member_id("groupInstanceId") == "memberId"
    with pytest.raises(IllegalArgumentError):
        group.replace_static_member(None, "memberId", "newMemberId")
    assert group.has("memberId")   # the id is checked first (2.4.1 GM 299-303): nothing was touched


@restates("testReplaceGroupInstanceWithNonExistingMember", *ALL)
def test_replacing_a_member_id_the_group_does_not_have_is_an_illegal_argument(profile: str) -> None:
    with pytest.raises(IllegalArgumentError):
        new_group(profile).replace_static_member("groupInstanceId", "memberId", "newMemberId")


@restates("testReplaceGroupInstance", *ALL)
def test_a_replacement_moves_leader_and_instance_and_fences_the_old_parked_requests(profile: str) -> None:
    group, member = new_group(profile), new_member(instance_id="groupInstanceId")
    join, sync = parked("JoinGroup"), parked("SyncGroup")
    group.add(member, join)
    member.awaiting_sync = sync
    assert group.is_leader("memberId") and group.static_member_id("groupInstanceId") == "memberId"
    group.replace_static_member("groupInstanceId", "memberId", "newMemberId")
    assert group.is_leader("newMemberId") and group.static_member_id("groupInstanceId") == "newMemberId"
    assert join.result.error is Errors.FENCED_INSTANCE_ID and sync.result.error is Errors.FENCED_INSTANCE_ID
    assert member.awaiting_join is None and member.awaiting_sync is None


# -- the parked JoinGroup and SyncGroup callbacks ----------------------------------------------------------------------
@restates("testInvokeJoinCallback", *ALL)
def test_a_parked_join_is_answered_once_and_unparked(profile: str) -> None:
    group, member = new_group(profile), new_member(instance_id=SHARED_INSTANCE[profile])
    join = parked()
    group.add(member, join)
    assert group.has_all_members_joined()
    group.invoke_join_callback(member, OK_JOIN)
    assert join.done and join.result == OK_JOIN and member.awaiting_join is None


@restates("testNotInvokeJoinCallback", *ALL)
def test_no_join_is_answered_when_none_is_parked(profile: str) -> None:
    group, member = new_group(profile), new_member(instance_id=SHARED_INSTANCE[profile])
    group.add(member)
    assert member.awaiting_join is None
    assert not group.invoke_join_callback(member, OK_JOIN)
    assert member.awaiting_join is None


@restates("testInvokeSyncCallback", *ALL)
def test_a_parked_sync_is_answered_and_unparked(profile: str) -> None:
    group, member = new_group(profile), new_member(instance_id=SHARED_INSTANCE[profile])
    group.add(member)
    member.awaiting_sync = sync = parked("SyncGroup")
    assert group.invoke_sync_callback(member, SyncGroupResult(Errors.NONE))
    assert sync.done and member.awaiting_sync is None


@restates("testNotInvokeSyncCallback", *ALL)
def test_no_sync_is_answered_when_none_is_parked(profile: str) -> None:
    group, member = new_group(profile), new_member(instance_id=SHARED_INSTANCE[profile])
    group.add(member)
    assert not group.invoke_sync_callback(member, SyncGroupResult(Errors.NONE))
    assert member.awaiting_sync is None


@restates("testInvokeJoinCallbackFails", "3.9.0")   # 3.3.2+ (#12910, SPEC.md correction 5)
def test_a_join_callback_that_throws_is_answered_unknown_server_error(profile: str) -> None:
    group, member = new_group(profile), new_member()
    join = FailingFuture(("req", 1), "JoinGroup", [])
    group.add(member, join)
    group.invoke_join_callback(member, OK_JOIN)
    assert join.result.error is Errors.UNKNOWN_SERVER_ERROR
    assert member.awaiting_join is None


@restates("testInvokeSyncCallbackFails", "3.9.0")
def test_a_sync_callback_that_throws_is_answered_unknown_server_error(profile: str) -> None:
    group, member = new_group(profile), new_member()
    group.add(member)
    member.awaiting_sync = sync = FailingFuture(("req", 1), "SyncGroup", [])
    assert group.invoke_sync_callback(member, SyncGroupResult(Errors.NONE))
    assert sync.result.error is Errors.UNKNOWN_SERVER_ERROR
    assert member.awaiting_sync is None


# -- pending members (KIP-394) and the 3.x guards ---------------------------------------------------------------------
@restates("testCannotAddPendingMemberIfStable", "3.9.0")
def test_a_member_id_cannot_become_pending(profile: str) -> None:
    group = new_group(profile)
    group.add(new_member())
    with pytest.raises(IllegalStateError):
        group.add_pending_member("memberId")


@restates("testRemovalFromPendingAfterMemberIsStable", "3.9.0")
def test_a_pending_id_added_as_a_member_is_no_longer_pending(profile: str) -> None:
    group = new_group(profile)
    group.add_pending_member("memberId")
    assert not group.has("memberId") and group.is_pending_member("memberId")
    group.add(new_member())
    assert group.has("memberId") and not group.is_pending_member("memberId")


@restates("testRemovalFromPendingWhenMemberIsRemoved", "3.9.0")
def test_a_removed_pending_id_is_no_longer_pending(profile: str) -> None:
    group = new_group(profile)
    group.add_pending_member("memberId")
    assert not group.has("memberId") and group.is_pending_member("memberId")
    group.remove("memberId")
    assert not group.has("memberId") and not group.is_pending_member("memberId")


@restates("testCannotAddStaticMemberIfAlreadyPresent", "3.9.0")
def test_a_static_member_cannot_be_added_twice(profile: str) -> None:
    group, member = new_group(profile), new_member(protocols=(("range", b""),), instance_id="groupInstanceId")
    group.add(member)
    assert group.has("memberId") and group.static_member_id("groupInstanceId") == "memberId"
    with pytest.raises(IllegalStateError):
        group.add(member)


# -- pending-sync members (KAFKA-12890) -------------------------------------------------------------------------------
def _static_member_in(profile: str):   # type: ignore[no-untyped-def]
    group = new_group(profile)
    group.add(new_member(protocols=(("range", b""),), instance_id="groupInstanceId"))
    return group


@restates("testCannotAddPendingSyncOfUnknownMember", "3.9.0")
def test_a_non_member_cannot_owe_a_sync(profile: str) -> None:
    with pytest.raises(IllegalStateError):
        new_group(profile).add_pending_sync_member("memberId")


@restates("testCannotRemovePendingSyncOfUnknownMember", "3.9.0")
def test_a_non_member_cannot_be_relieved_of_a_sync(profile: str) -> None:
    with pytest.raises(IllegalStateError):
        new_group(profile).remove_pending_sync_member("memberId")


@restates("testCanAddAndRemovePendingSyncMember", "3.9.0")
def test_a_member_owes_a_sync_until_it_is_removed_from_the_set(profile: str) -> None:
    group = _static_member_in(profile)
    group.add_pending_sync_member("memberId")
    assert group.pending_sync_members == {"memberId"}
    group.remove_pending_sync_member("memberId")
    assert group.pending_sync_members == set()


@restates("testRemovalFromPendingSyncWhenMemberIsRemoved", "3.9.0")
def test_a_removed_member_owes_no_sync(profile: str) -> None:
    group = _static_member_in(profile)
    group.add_pending_sync_member("memberId")
    assert group.pending_sync_members == {"memberId"}
    group.remove("memberId")
    assert group.pending_sync_members == set()


@restates("testNewGenerationClearsPendingSyncMembers", "3.9.0")
def test_a_new_generation_forgets_who_owed_a_sync(profile: str) -> None:
    group = _static_member_in(profile)
    group.transition_to(PR, 0)
    group.add_pending_sync_member("memberId")
    assert group.pending_sync_members == {"memberId"}
    group.init_next_generation(0)
    assert group.pending_sync_members == set()

"""Kafka's GroupCoordinatorTest.scala, LeaveGroup and pending members: single and batch leaves (v3+: a top-level
error and one error per identity), leaves by instance id, and members that are still pending (KIP-394) when the
join phase wants to complete — restated over the reference, per release tag."""
from __future__ import annotations

from core.types import Errors
from impl.results import JoinGroupResult, LeaveGroupResult
from tests.kafka_suites.group_coordinator_harness import (CR, DEAD, DEAD_GROUP, FOLLOWER, LEADER, MEMBER_ID,
                                                          OTHER_GROUP, PR, PROTOCOL_SUPERSET, STABLE, Kafka, done)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")


def _errors(result: LeaveGroupResult) -> list[Errors]:
    return [error for _, _, error in result.member_errors]


@restates("testLeaveGroupWrongCoordinator", *ALL)
def test_leave_of_a_group_this_broker_does_not_lead(profile: str) -> None:
    assert Kafka(profile).leave(("", None), group_id=OTHER_GROUP).error is Errors.NOT_COORDINATOR


@restates("testLeaveGroupUnknownGroup", *ALL)
def test_leave_of_an_absent_group_answers_unknown_member_per_identity(profile: str) -> None:
    result = Kafka(profile).leave((MEMBER_ID, None))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.UNKNOWN_MEMBER_ID])


@restates("testLeaveGroupUnknownConsumerExistingGroup", *ALL)
def test_leave_of_an_unknown_member(profile: str) -> None:
    k = Kafka(profile)
    assert k.dynamic_join().error is Errors.NONE
    result = k.leave(("consumerId", None))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.UNKNOWN_MEMBER_ID])


@restates("testSingleLeaveDeadGroup", *ALL)
def test_single_leave_of_a_dead_group(profile: str) -> None:
    k = Kafka(profile)
    k.poke_add_group(DEAD_GROUP, DEAD)
    assert k.leave((MEMBER_ID, None), group_id=DEAD_GROUP).error is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testBatchLeaveDeadGroup", *ALL)
def test_batch_leave_of_a_dead_group(profile: str) -> None:
    k = Kafka(profile)
    k.poke_add_group(DEAD_GROUP, DEAD)
    result = k.leave((MEMBER_ID, None), (MEMBER_ID, None), group_id=DEAD_GROUP)
    assert result.error is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testValidLeaveGroup", *ALL)
def test_a_member_leaves(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    assert k.leave((joined.member_id, None)).error is Errors.NONE


@restates("testLeaveGroupWithFencedInstanceId", *ALL)
def test_leave_with_a_known_instance_and_another_member_id_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    assert k.static_join("", LEADER, PROTOCOL_SUPERSET).error is Errors.NONE
    result = k.leave(("some_member", LEADER))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.FENCED_INSTANCE_ID])


@restates("testLeaveGroupStaticMemberWithUnknownMemberId", *ALL)
def test_leave_by_instance_id_alone(profile: str) -> None:
    k = Kafka(profile)
    assert k.static_join("", LEADER, PROTOCOL_SUPERSET).error is Errors.NONE
    result = k.leave(("", LEADER))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.NONE])


@restates("testStaticMembersValidBatchLeaveGroup", *ALL)
def test_both_static_members_leave_by_instance_id(profile: str) -> None:
    k = Kafka(profile)
    k.static_rebalance()
    result = k.leave(("", LEADER), ("", FOLLOWER))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.NONE, Errors.NONE])


@restates("testStaticMembersWrongCoordinatorBatchLeaveGroup", *ALL)
def test_batch_leave_of_a_group_this_broker_does_not_lead(profile: str) -> None:
    k = Kafka(profile)
    k.static_rebalance()
    k.c.unload_group("invalid-group")      # Kafka's "invalid-group" maps to the partition the broker does not own
    result = k.leave(("", LEADER), ("", FOLLOWER), group_id="invalid-group")
    assert result.error is Errors.NOT_COORDINATOR


@restates("testStaticMembersUnknownGroupBatchLeaveGroup", *ALL)
def test_batch_leave_of_an_absent_group(profile: str) -> None:
    result = Kafka(profile).leave(("", LEADER), ("", FOLLOWER))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID])


@restates("testStaticMembersFencedInstanceBatchLeaveGroup", *ALL)
def test_batch_leave_with_one_fenced_identity(profile: str) -> None:
    k = Kafka(profile)
    k.static_rebalance()
    result = k.leave(("", LEADER), ("invalid-member", FOLLOWER))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.NONE, Errors.FENCED_INSTANCE_ID])


@restates("testStaticMembersUnknownInstanceBatchLeaveGroup", *ALL)
def test_batch_leave_with_one_unknown_instance(profile: str) -> None:
    k = Kafka(profile)
    k.static_rebalance()
    result = k.leave(("", "unknown-instance"), ("", FOLLOWER))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.NONE])


def _group_with_pending_member(k: Kafka) -> JoinGroupResult:
    """setupGroupWithPendingMember: two members in generation 2 (Stable), the first rejoins (PreparingRebalance),
    a third member is pending (its first JoinGroup, session 100), the second rejoins: the join phase waits only
    for the pending member."""
    first = k.dynamic_join()
    assert k.state() is CR
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    assert k.state() is STABLE
    second_future = k.send_join()
    first_rejoin = done(k.send_join(first.member_id))
    second = done(second_future)
    assert k.state() is CR
    assert k.sync_leader(first_rejoin.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    assert k.state() is STABLE
    k.send_join(first_rejoin.member_id)
    assert k.state() is PR
    pending = k.join_partial(session=100)
    assert len(k.view().pending_members) == 1
    k.send_join(second.member_id)
    assert k.state() is PR and len(k.view().pending_members) == 1
    return pending


@restates("testJoinGroupCompletionWhenPendingMemberJoins", *ALL)
def test_the_pending_member_joining_completes_the_join_phase(profile: str) -> None:
    k = Kafka(profile)
    pending = _group_with_pending_member(k)
    done(k.send_join(pending.member_id))
    assert k.state() is CR and len(k.view().members) == 3 and not k.view().pending_members


@restates("testJoinGroupCompletionWhenPendingMemberTimesOut", *ALL)
def test_the_pending_member_expiring_completes_the_join_phase(profile: str) -> None:
    k = Kafka(profile)
    _group_with_pending_member(k)
    k.advance(120)
    assert k.state() is CR and len(k.view().members) == 2 and not k.view().pending_members


@restates("testPendingMembersLeavesGroup", *ALL)
def test_the_pending_member_leaving_completes_the_join_phase(profile: str) -> None:
    k = Kafka(profile)
    pending = _group_with_pending_member(k)
    assert k.leave((pending.member_id, None)).error is Errors.NONE
    assert k.state() is CR and len(k.view().members) == 2 and not k.view().pending_members
    if profile != "2.4.1":
        assert len(k.dynamic_members()) == 2


@restates("testPendingMemberBatchLeaveGroup", *ALL)
def test_batch_leave_of_an_unknown_instance_and_a_pending_member(profile: str) -> None:
    k = Kafka(profile)
    pending = _group_with_pending_member(k)
    result = k.leave(("", "unknown-instance"), (pending.member_id, None))
    assert (result.error, _errors(result)) == (Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.NONE])


@restates("testPendingMemberWithUnexpectedInstanceIdBatchLeaveGroup", "2.4.1", "2.7.0")
def test_leave_of_a_pending_member_id_carrying_an_instance_id_is_an_illegal_state(profile: str) -> None:
    """Kafka's test maps an instance id to the pending member id (``addStaticMember``) to get past the fencing."""
    k = Kafka(profile)
    pending = _group_with_pending_member(k)
    k.group().static_members["instanceId"] = pending.member_id
    k.leave(("", "unknown-instance"), (pending.member_id, "instanceId"))
    message = k.last_illegal_state()
    assert "instanceId" in message and pending.member_id in message


@restates("testSecondMemberPartiallyJoinAndTimeout", *ALL)
def test_a_member_that_never_completes_its_join_expires_from_pending(profile: str) -> None:
    k = Kafka(profile)
    first = k.dynamic_join()
    assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    k.advance(100)
    view = k.view()
    assert set(view.members) == {first.member_id} and not view.pending_members and view.state is STABLE
    if profile != "2.4.1":
        assert k.dynamic_members() == {first.member_id}
    assert k.join_partial().error is Errors.MEMBER_ID_REQUIRED
    assert len(k.view().pending_members) == 1 and k.state() is STABLE
    k.advance(300)
    assert k.heartbeat(first.member_id, 1) is Errors.NONE
    k.advance(300)
    view = k.view()
    assert set(view.members) == {first.member_id} and not view.pending_members and view.state is STABLE

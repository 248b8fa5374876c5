"""GroupMetadataManagerTest (Kafka 4.1.1), restated: LeaveGroup (single and batch, by member and by instance id),
DescribeGroups over the committed group map (R4, R16), and a partition's unload."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl import GroupSummary, LeaveGroupResult, MemberSummary
from tests.kafka_suites.gmm_context import (GROUP, INITIAL_DELAY_MS, context, create_group, group, join,
                                            join_and_complete, join_as_dynamic_and_complete_join,
                                            setup_group_with_pending_member, static_members_join_and_rebalance,
                                            sync)
from tests.kafka_suites.gmm_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]
E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)
OK = Errors.NONE


def leave(c: object, *members: tuple[str, str | None], group_id: str = GROUP) -> LeaveGroupResult:
    f = c.leave_group(group_id, list(members))
    assert f.done
    return f.result


@restates("testDescribeGroupStable", "4.1.1")
def test_describe_a_stable_group_once_its_creation_is_committed(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    f = join(c)
    assert c.describe_group(GROUP) == GroupSummary(Errors.GROUP_ID_NOT_FOUND, "Dead", "", "")
    c.complete_appends()
    c.advance(INITIAL_DELAY_MS)
    member_id = f.result.member_id
    s = sync(c, member_id, 1, assignments={member_id: b"\x00"})
    c.complete_appends()
    assert s.result.error is OK
    assert c.describe_group(GROUP) == GroupSummary(
        OK, "Stable", "consumer", "range", (MemberSummary(member_id, None, "client", "/127.0.0.1", b"foo", b"\x00"),))


@restates("testDescribeGroupRebalancing", "4.1.1")
def test_describe_a_rebalancing_group_omits_protocol_and_metadata(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    f = join(c)
    assert c.describe_group(GROUP) == GroupSummary(Errors.GROUP_ID_NOT_FOUND, "Dead", "", "")
    c.complete_appends()
    member_id = group(c).leader_id
    assert not f.done and group(c).state is PR
    assert c.describe_group(GROUP) == GroupSummary(
        OK, "PreparingRebalance", "consumer", "", (MemberSummary(member_id, None, "client", "/127.0.0.1", b"", b""),))


@restates("testDescribeGroupsGroupIdNotFoundException", "4.1.1")
def test_describe_an_unknown_group_v6(profile: str) -> None:
    assert context(profile).describe_group(GROUP) == GroupSummary(Errors.GROUP_ID_NOT_FOUND, "Dead", "", "")


@restates("testDescribeGroupsBeforeV6GroupIdNotFoundException", "4.1.1")
def test_describe_an_unknown_group_before_v6(profile: str) -> None:
    assert context(profile).describe_group(GROUP, api_version=5) == GroupSummary(OK, "Dead", "", "")


@restates("testGroupStuckInRebalanceTimeoutDueToNonjoinedStaticMember", "4.1.1")
def test_a_group_waits_for_its_static_leader_that_never_rejoins(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, "leader-instance-id", "follower-instance-id", rebalance=5000,
                                          session=10000)
    g = group(c)
    f = join(c, names=("range", "roundrobin"), session=10000)
    c.advance(5000)
    new_id = f.result.member_id
    assert f.result.error is OK and f.result.leader_id == new_id and len(f.result.members) == 3
    assert f.result.generation_id == 2 and g.state is CR
    assert set(g.members) == {r.leader_id, r.follower_id, new_id}
    assert set(g.static_members.values()) == {r.leader_id, r.follower_id}
    assert leave(c, (r.follower_id, "follower-instance-id")) == \
        LeaveGroupResult(OK, ((r.follower_id, "follower-instance-id", OK),))
    assert g.state is PR
    c.advance(5000)
    assert set(g.members) == {r.leader_id} and (g.generation_id, g.state) == (2, PR)


@restates("testPendingMembersLeaveGroup", "4.1.1")
def test_a_pending_member_leaving_completes_the_join_phase(profile: str) -> None:
    c = context(profile)
    create_group(c)
    p = setup_group_with_pending_member(c)
    assert leave(c, (p.pending_member_id, None)) == LeaveGroupResult(OK, ((p.pending_member_id, None, OK),))
    assert c.pending_appends() == []
    g = group(c)
    assert g.state is CR and len(g.members) == 2 and not g.static_members and not g.pending_join_members


@restates("testLeaveGroupInvalidGroup", "4.1.1")
def test_leave_of_another_group_without_members(profile: str) -> None:
    c = context(profile)
    create_group(c)
    assert leave(c, group_id="invalid-group-id") == LeaveGroupResult(OK, ())


@restates("testLeaveGroupUnknownGroup", "4.1.1")
def test_leave_of_a_group_that_does_not_exist(profile: str) -> None:
    c = context(profile)
    assert leave(c, ("member-id", None), group_id="unknown-group-id") == \
        LeaveGroupResult(OK, (("member-id", None, Errors.UNKNOWN_MEMBER_ID),))


@restates("testLeaveGroupUnknownMemberIdExistingGroup", "4.1.1")
def test_leave_of_an_unknown_member(profile: str) -> None:
    c = context(profile)
    create_group(c)
    join_as_dynamic_and_complete_join(c, session=500, rebalance=500)
    assert leave(c, ("unknown-member-id", None)) == \
        LeaveGroupResult(OK, (("unknown-member-id", None, Errors.UNKNOWN_MEMBER_ID),))
    assert c.pending_appends() == []


@restates("testLeaveDeadGroup", "4.1.1")
def test_leave_of_a_dead_group(profile: str) -> None:
    c = context(profile)
    create_group(c).transition_to(D)
    assert leave(c, ("member-id", None)) == LeaveGroupResult(Errors.COORDINATOR_NOT_AVAILABLE)


@restates("testValidLeaveGroup", "4.1.1")
def test_the_last_member_leaving_writes_the_empty_group(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    create_group(c)
    member_id = join_as_dynamic_and_complete_join(c, session=500, rebalance=500).member_id
    f = c.leave_group(GROUP, [(member_id, None)])
    assert [a.kind for a in c.pending_appends()] == ["empty"] and not f.done   # the answer waits for its write
    c.complete_appends()
    assert f.result == LeaveGroupResult(OK, ((member_id, None, OK),))
    assert c.group_record(GROUP) == (2, "consumer", None, None, ())
    assert group(c).state is E and group(c).generation_id == 2


@restates("testLeaveGroupWithFencedInstanceId", "4.1.1")
def test_leave_with_a_wrong_member_id_under_a_known_instance_id_is_fenced(profile: str) -> None:
    c = context(profile)
    create_group(c)
    join_and_complete(c, known=True, skip=True, instance="group-instance-id")
    assert leave(c, ("other-member-id", "group-instance-id")) == \
        LeaveGroupResult(OK, (("other-member-id", "group-instance-id", Errors.FENCED_INSTANCE_ID),))


@restates("testLeaveGroupStaticMemberWithUnknownMemberId", "4.1.1")
def test_leave_by_instance_id_alone(profile: str) -> None:
    c = context(profile)
    create_group(c)
    join_and_complete(c, known=True, skip=True, instance="group-instance-id")
    assert leave(c, ("", "group-instance-id")) == LeaveGroupResult(OK, (("", "group-instance-id", OK),))


@restates("testStaticMembersValidBatchLeaveGroup", "4.1.1")
def test_a_batch_leave_of_two_static_members(profile: str) -> None:
    c = context(profile)
    static_members_join_and_rebalance(c, "leader-instance-id", "follower-instance-id")
    assert leave(c, ("", "leader-instance-id"), ("", "follower-instance-id")) == \
        LeaveGroupResult(OK, (("", "leader-instance-id", OK), ("", "follower-instance-id", OK)))


@restates("testStaticMembersLeaveUnknownGroup", "4.1.1")
def test_a_batch_leave_to_another_group(profile: str) -> None:
    c = context(profile)
    static_members_join_and_rebalance(c, "leader-instance-id", "follower-instance-id")
    result = leave(c, ("", "leader-instance-id"), ("", "follower-instance-id"), group_id="invalid-group-id")
    assert result == LeaveGroupResult(OK, (("", "leader-instance-id", Errors.UNKNOWN_MEMBER_ID),
                                           ("", "follower-instance-id", Errors.UNKNOWN_MEMBER_ID)))


@restates("testStaticMembersFencedInstanceBatchLeaveGroup", "4.1.1")
def test_a_batch_leave_with_one_fenced_member(profile: str) -> None:
    c = context(profile)
    static_members_join_and_rebalance(c, "leader-instance-id", "follower-instance-id")
    assert leave(c, ("", "leader-instance-id"), ("invalid-member-id", "follower-instance-id")) == \
        LeaveGroupResult(OK, (("", "leader-instance-id", OK),
                              ("invalid-member-id", "follower-instance-id", Errors.FENCED_INSTANCE_ID)))


@restates("testStaticMembersUnknownInstanceBatchLeaveGroup", "4.1.1")
def test_a_batch_leave_with_one_unknown_instance_id(profile: str) -> None:
    c = context(profile)
    static_members_join_and_rebalance(c, "leader-instance-id", "follower-instance-id")
    assert leave(c, ("", "unknown-instance-id"), ("", "follower-instance-id")) == \
        LeaveGroupResult(OK, (("", "unknown-instance-id", Errors.UNKNOWN_MEMBER_ID), ("", "follower-instance-id", OK)))
    assert c.pending_appends() == []


@restates("testPendingMemberBatchLeaveGroup", "4.1.1")
def test_a_batch_leave_of_a_pending_member_and_an_unknown_instance(profile: str) -> None:
    c = context(profile)
    create_group(c)
    p = setup_group_with_pending_member(c)
    assert leave(c, ("", "unknown-instance-id"), (p.pending_member_id, None)) == \
        LeaveGroupResult(OK, (("", "unknown-instance-id", Errors.UNKNOWN_MEMBER_ID), (p.pending_member_id, None, OK)))


@restates("testJoinedMemberPendingMemberBatchLeaveGroup", "4.1.1")
def test_a_batch_leave_of_every_member(profile: str) -> None:
    c = context(profile)
    create_group(c)
    p = setup_group_with_pending_member(c)
    ids = (p.leader_id, p.follower_id, p.pending_member_id)
    assert leave(c, *((m, None) for m in ids)) == LeaveGroupResult(OK, tuple((m, None, OK) for m in ids))


@restates("testJoinedMemberPendingMemberBatchLeaveGroupWithUnknownMember", "4.1.1")
def test_a_batch_leave_of_every_member_and_an_unknown_one(profile: str) -> None:
    c = context(profile)
    create_group(c)
    p = setup_group_with_pending_member(c)
    ids = (p.leader_id, p.follower_id, p.pending_member_id)
    result = leave(c, *((m, None) for m in ids), ("unknown-member-id", None))
    assert result == LeaveGroupResult(OK, tuple((m, None, OK) for m in ids) +
                                      (("unknown-member-id", None, Errors.UNKNOWN_MEMBER_ID),))


@restates("testClassicGroupOnUnloadedEmptyAndPreparingRebalance", "4.1.1")
def test_unloading_answers_parked_joins_not_coordinator(profile: str) -> None:
    c = context(profile)
    empty = create_group(c, "empty-group")
    assert empty.state is E
    preparing = create_group(c, "preparing-group")
    first, second = join(c, group_id="preparing-group"), join(c, group_id="preparing-group")
    assert not first.done and not second.done and preparing.state is PR and len(preparing.members) == 2
    c.unload_group("empty-group")   # both groups live on the one offsets partition
    assert empty.state is D and preparing.state is D
    for f in (first, second):
        assert (f.result.error, f.result.members, f.result.member_id) == \
            (Errors.NOT_COORDINATOR, (), f.result.member_id)
        assert f.result.member_id.startswith("client-")


@restates("testClassicGroupOnUnloadedCompletingRebalance", "4.1.1")
def test_unloading_answers_parked_syncs_not_coordinator(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    p = setup_group_with_pending_member(c)
    f = join(c, p.pending_member_id)
    assert f.result.error is OK and len(g.members) == 3 and not g.pending_join_members
    generation = f.result.generation_id
    follower, pending = sync(c, p.follower_id, generation), sync(c, p.pending_member_id, generation)
    assert not follower.done and not pending.done and g.state is CR
    c.unload_group(GROUP)
    assert g.state is D
    for s in (follower, pending):
        assert (s.result.error, s.result.assignment) == (Errors.NOT_COORDINATOR, b"")

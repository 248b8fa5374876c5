"""GroupMetadataManagerTest (Kafka 4.1.1), restated: SyncGroup of classic groups — protocol checks, unknown
groups and members, generations, the leader's assignment write and its failure (R8), followers before and
after the leader, pending members completing the join phase."""
from __future__ import annotations

from core.types import Errors, GroupState
from tests.kafka_suites.gmm_context import (GROUP, context, create_group, group, join, join_and_complete,
                                            join_as_dynamic_and_complete_rebalance, setup_group_with_pending_member,
                                            sync, written)
from tests.kafka_suites.gmm_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]
E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


def _protocol_check(profile: str, protocol_type: str | None, protocol_name: str | None, error: Errors,
                    answered_type: str | None, answered_name: str | None) -> None:
    """testSyncGroupProtocolTypeAndNameWith: two static members, the leader then the follower sync with the
    given protocol type and name."""
    c = context(profile)
    create_group(c)
    leader = join(c, instance="leader-instance-id", names=("range", "roundrobin"))
    follower = join(c, instance="follower-instance-id", names=("range", "roundrobin"))
    assert not leader.done and not follower.done
    c.advance(10000)
    assert leader.result.error is Errors.NONE and follower.result.error is Errors.NONE
    generation = leader.result.generation_id
    for member_id in (leader.result.member_id, follower.result.member_id):
        f = sync(c, member_id, generation, assignments={leader.result.member_id: b""},
                 protocol_type=protocol_type, protocol_name=protocol_name)
        written(c)
        assert (f.result.error, f.result.protocol_type, f.result.protocol_name) == \
            (error, answered_type, answered_name)


@restates("testSyncGroupReturnsAnErrorWhenProtocolTypeIsInconsistent", "4.1.1")
def test_sync_with_another_protocol_type(profile: str) -> None:
    _protocol_check(profile, "protocolType", None, Errors.INCONSISTENT_GROUP_PROTOCOL, None, None)


@restates("testSyncGroupReturnsAnErrorWhenProtocolNameIsInconsistent", "4.1.1")
def test_sync_with_another_protocol_name(profile: str) -> None:
    _protocol_check(profile, None, "protocolName", Errors.INCONSISTENT_GROUP_PROTOCOL, None, None)


@restates("testSyncGroupSucceedWhenProtocolTypeAndNameAreNotProvided", "4.1.1")
def test_sync_without_protocol_type_and_name(profile: str) -> None:
    _protocol_check(profile, None, None, Errors.NONE, "consumer", "range")


@restates("testSyncGroupSucceedWhenProtocolTypeAndNameAreConsistent", "4.1.1")
def test_sync_with_the_groups_protocol_type_and_name(profile: str) -> None:
    _protocol_check(profile, "consumer", "range", Errors.NONE, "consumer", "range")


@restates("testSyncGroupFromUnknownGroup", "4.1.1")
def test_sync_to_a_group_that_does_not_exist(profile: str) -> None:
    c = context(profile)
    assert sync(c, "member-id", 1).result.error is Errors.UNKNOWN_MEMBER_ID


@restates("testSyncGroupFromUnknownMember", "4.1.1")
def test_sync_from_an_unknown_member(profile: str) -> None:
    c = context(profile)
    create_group(c)
    response = join_and_complete(c, known=True, skip=True, instance="leader-instance-id")
    f = sync(c, response.member_id, response.generation_id, assignments={response.member_id: b""})
    assert f.result.error is Errors.NONE and f.result.assignment == b""
    f = sync(c, "unknown-member-id", response.generation_id, assignments={response.member_id: b""})
    assert f.result.error is Errors.UNKNOWN_MEMBER_ID and f.result.assignment == b""


@restates("testSyncGroupFromIllegalGeneration", "4.1.1")
def test_sync_with_another_generation(profile: str) -> None:
    c = context(profile)
    create_group(c)
    response = join_and_complete(c, known=True, skip=True, instance="leader-instance-id")
    assert sync(c, response.member_id, response.generation_id + 1).result.error is Errors.ILLEGAL_GENERATION


@restates("testSyncGroupAsLeaderAppendFailureTransformsError", "4.1.1")
def test_a_failed_assignment_write_answers_the_mapped_error(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    create_group(c)
    response = join_and_complete(c, known=True, skip=True, instance="leader-instance-id")
    f = sync(c, response.member_id, 1)
    assert not f.done
    c.complete_appends(ok=False, error=Errors.NOT_LEADER_OR_FOLLOWER)
    assert f.result.error is Errors.NOT_COORDINATOR


def _two_members(c: object, leader_id: str) -> tuple[int, str]:
    follower = join(c, session=5000, rebalance=10000)
    assert not follower.done
    leader = join(c, leader_id, session=5000, rebalance=10000)
    assert leader.result.error is Errors.NONE and follower.result.error is Errors.NONE
    assert leader.result.generation_id == follower.result.generation_id
    assert leader.result.leader_id == follower.result.leader_id == leader_id
    return leader.result.generation_id, follower.result.member_id


@restates("testJoinGroupFromUnchangedFollowerDoesNotRebalance", "4.1.1")
def test_an_unchanged_follower_rejoining_in_completing_rebalance_does_not_rebalance(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    generation, follower_id = _two_members(c, leader.member_id)
    f = join(c, follower_id, session=5000, rebalance=10000)
    assert f.result.error is Errors.NONE and f.result.generation_id == generation


@restates("testLeaderFailureInSyncGroup", "4.1.1")
def test_a_leader_that_never_syncs_expires_and_the_follower_is_told_to_rejoin(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    generation, follower_id = _two_members(c, leader.member_id)
    assert group(c).state is CR
    f = sync(c, follower_id, generation)
    assert not f.done
    c.take_fired()
    c.advance(10000)
    assert len([k for k, _, live in c.take_fired() if live]) <= 2
    g = group(c)
    assert f.result.error is Errors.REBALANCE_IN_PROGRESS
    assert list(g.members) == [follower_id] and g.state is PR


@restates("testSyncGroupFollowerAfterLeader", "4.1.1")
def test_a_follower_syncing_after_the_leader_gets_its_assignment(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    generation, follower_id = _two_members(c, leader.member_id)
    assignment = {leader.member_id: b"\x00", follower_id: b"\x01"}
    f = sync(c, leader.member_id, generation, assignments=assignment)
    assert f.result.error is Errors.NONE and f.result.assignment == b"\x00"
    f = sync(c, follower_id, generation, assignments=assignment)
    assert f.result.error is Errors.NONE and f.result.assignment == b"\x01" and group(c).state is S


@restates("testSyncGroupLeaderAfterFollower", "4.1.1")
def test_a_follower_syncing_before_the_leader_waits_for_the_assignment(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    leader = join_as_dynamic_and_complete_rebalance(c)
    generation, follower_id = _two_members(c, leader.member_id)
    follower = sync(c, follower_id, generation)
    assert not follower.done
    assignment = {leader.member_id: b"\x00", follower_id: b"\x01"}
    f = sync(c, leader.member_id, generation, assignments=assignment)
    assert [a.kind for a in c.pending_appends()] == ["assignment"] and not f.done
    c.complete_appends()
    assert c.group_record(GROUP)[4] == tuple(
        (m.member_id, None, m.client_id, m.client_host, m.rebalance_timeout_ms, m.session_timeout_ms, b"foo",
         assignment[m.member_id]) for m in group(c).all_members())
    assert f.result.error is Errors.NONE and f.result.assignment == b"\x00"
    assert follower.result.error is Errors.NONE and follower.result.assignment == b"\x01" and group(c).state is S


@restates("testJoinGroupFromUnchangedLeaderShouldRebalance", "4.1.1")
def test_the_unchanged_leader_rejoining_rebalances(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    f = join(c, leader.member_id)
    assert f.result.error is Errors.NONE and f.result.generation_id == leader.generation_id + 1


@restates("testJoinGroupCompletionWhenPendingMemberJoins", "4.1.1")
def test_the_pending_member_joining_completes_the_join_phase(profile: str) -> None:
    c = context(profile)
    create_group(c)
    pending = setup_group_with_pending_member(c)
    f = join(c, pending.pending_member_id)
    g = group(c)
    assert f.result.error is Errors.NONE and g.state is CR and len(g.members) == 3 and not g.pending_join_members


@restates("testJoinGroupCompletionWhenPendingMemberTimesOut", "4.1.1")
def test_the_pending_member_expiring_completes_the_join_phase(profile: str) -> None:
    c = context(profile)
    create_group(c)
    setup_group_with_pending_member(c)
    c.advance(3000)
    g = group(c)
    assert g.state is CR and len(g.members) == 2 and not g.pending_join_members


@restates("testGenerationIdIncrementsOnRebalance", "4.1.1")
def test_the_generation_increments_on_a_rebalance(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    f = join(c, leader.member_id)
    assert f.result.error is Errors.NONE and f.result.generation_id == 2

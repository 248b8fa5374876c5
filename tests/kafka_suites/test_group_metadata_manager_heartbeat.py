"""GroupMetadataManagerTest (Kafka 4.1.1), restated: Heartbeat and session timers of classic groups, pending
members timing out, and the pending-sync timer (rebalance timeout without SyncGroup)."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.java_gc.group import ClassicGroupMember
from tests.kafka_suites.gmm_context import (GROUP, context, create_group, group, heartbeat, hb_key, join,
                                            join_and_complete, join_as_dynamic_and_complete_join,
                                            join_as_dynamic_and_complete_rebalance, join_with_n_members, protocols,
                                            static_members_join_and_rebalance, sync)
from tests.kafka_suites.gmm_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]
E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


@restates("testStaticMemberHeartbeatLeaderWithInvalidMemberId", "4.1.1")
def test_a_heartbeat_with_an_invalid_id_under_a_known_instance_id_is_fenced(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, "leader-instance-id", "follower-instance-id")
    assert sync(c, r.leader_id, r.generation_id, instance="leader-instance-id").result.error is Errors.NONE
    assert heartbeat(c, r.leader_id, r.generation_id) is Errors.NONE
    assert heartbeat(c, "invalid-member-id", r.generation_id, instance="leader-instance-id") is \
        Errors.FENCED_INSTANCE_ID


@restates("testHeartbeatUnknownGroup", "4.1.1")
def test_a_heartbeat_to_a_group_that_does_not_exist(profile: str) -> None:
    assert heartbeat(context(profile), "member-id", -1) is Errors.UNKNOWN_MEMBER_ID


@restates("testHeartbeatDeadGroup", "4.1.1")
def test_a_heartbeat_to_a_dead_group(profile: str) -> None:
    c = context(profile)
    create_group(c).transition_to(D)
    assert heartbeat(c, "member-id", -1) is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testHeartbeatEmptyGroup", "4.1.1")
def test_a_heartbeat_of_a_member_of_an_empty_group(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    g.add(ClassicGroupMember("member-id", None, "client-id", "client-host", 10000, 5000, "consumer",
                             tuple(protocols("range"))))
    assert heartbeat(c, "member-id", 0) is Errors.UNKNOWN_MEMBER_ID


@restates("testHeartbeatUnknownMemberExistingGroup", "4.1.1")
def test_a_heartbeat_from_an_unknown_member(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    assert heartbeat(c, "unknown-member-id", leader.generation_id) is Errors.UNKNOWN_MEMBER_ID


@restates("testHeartbeatDuringPreparingRebalance", "4.1.1")
def test_a_heartbeat_in_preparing_rebalance(profile: str) -> None:
    c = context(profile)
    create_group(c)
    member_id = join(c, known=True).result.member_id
    join(c, member_id)
    assert group(c).state is PR
    assert heartbeat(c, member_id, 0) is Errors.REBALANCE_IN_PROGRESS


@restates("testHeartbeatDuringCompletingRebalance", "4.1.1")
def test_a_heartbeat_in_completing_rebalance(profile: str) -> None:
    c = context(profile)
    create_group(c)
    leader = join_as_dynamic_and_complete_join(c, session=500, rebalance=500)
    assert leader.generation_id == 1 and group(c).state is CR
    assert heartbeat(c, leader.member_id, leader.generation_id) is Errors.NONE


@restates("testHeartbeatIllegalGeneration", "4.1.1")
def test_a_heartbeat_of_another_generation(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    assert heartbeat(c, leader.member_id, leader.generation_id + 1) is Errors.ILLEGAL_GENERATION


@restates("testValidHeartbeat", "4.1.1")
@restates("testSyncGroupEmptyAssignment", "4.1.1")
def test_a_valid_heartbeat(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    assert heartbeat(c, leader.member_id, leader.generation_id) is Errors.NONE


@restates("testClassicGroupMemberSessionTimeout", "4.1.1")
def test_a_silent_member_expires_at_its_session_timeout(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    c.take_fired()
    c.advance(5000)
    assert [k for k, _, live in c.take_fired() if live] == [hb_key(leader.member_id)]
    assert c.group_record(GROUP) == (2, "consumer", None, None, ())   # the Empty group after one more generation
    assert group(c).state is E and not group(c).members
    assert heartbeat(c, leader.member_id, leader.generation_id) is Errors.UNKNOWN_MEMBER_ID


@restates("testClassicGroupMemberHeartbeatMaintainsSession", "4.1.1")
def test_heartbeats_keep_the_session(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    for _ in range(2):
        c.advance(2500)
        assert heartbeat(c, leader.member_id, leader.generation_id) is Errors.NONE


@restates("testClassicGroupMemberSessionTimeoutDuringRebalance", "4.1.1")
def test_a_member_that_does_not_rejoin_expires_during_the_rebalance(profile: str) -> None:
    c = context(profile)
    leader = join_as_dynamic_and_complete_rebalance(c)
    other = join(c, rebalance=10000, session=5000)
    assert not other.done and group(c).state is PR
    c.advance(2500)
    assert heartbeat(c, leader.member_id, leader.generation_id) is Errors.REBALANCE_IN_PROGRESS
    c.advance(5000)
    assert heartbeat(c, leader.member_id, leader.generation_id) is Errors.UNKNOWN_MEMBER_ID
    c.advance(2500)
    g = group(c)
    assert other.result.error is Errors.NONE and (len(g.members), g.generation_id, g.state) == (1, 2, CR)


@restates("testRebalanceCompletesBeforeMemberJoins", "4.1.1")
def test_a_static_member_that_did_not_rejoin_stays_until_its_session_expires(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    req = {"rebalance": 10000, "session": 5000}
    first = join_and_complete(c, known=True, skip=True, instance="leader-instance-id", **req)
    first_id = first.member_id
    assert first.generation_id == 1 and g.state is CR
    assert sync(c, first_id, 1).result.error is Errors.NONE and g.state is S
    second = join(c, **{**req, "session": 2500})
    assert not second.done and g.state is PR
    for _ in range(2):
        c.advance(2500)
        assert heartbeat(c, first_id, 1) is Errors.REBALANCE_IN_PROGRESS
    c.advance(8000)
    other_id = second.result.member_id
    assert second.result.error is Errors.NONE and (len(g.members), g.generation_id, g.state) == (2, 2, CR)
    assert sync(c, other_id, 2).result.error is Errors.NONE and g.state is S
    assert heartbeat(c, first_id, 1) is Errors.ILLEGAL_GENERATION
    for expected in (Errors.NONE, Errors.NONE, Errors.REBALANCE_IN_PROGRESS):
        c.advance(2000)
        assert heartbeat(c, other_id, 2) is expected
    assert len(g.members) == 1 and g.state is PR
    again = join(c, other_id, **{**req, "session": 2500})
    assert again.result.error is Errors.NONE and again.result.generation_id == 3 and g.state is CR
    assert sync(c, other_id, 3).result.error is Errors.NONE and g.state is S
    for _ in range(20):
        c.advance(2000)
        assert heartbeat(c, other_id, 3) is Errors.NONE


@restates("testSecondMemberPartiallyJoinAndTimeout", "4.1.1")
def test_a_pending_member_that_never_rejoins_leaves_the_group_stable(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    first = join_and_complete(c, known=True, skip=True, instance="leader-instance-id", rebalance=10000, session=5000)
    assert first.generation_id == 1 and g.state is CR
    assert sync(c, first.member_id, 1).result.error is Errors.NONE and g.state is S
    f = join(c, rebalance=10000, session=5000, known=True, skip=True)
    assert f.result.error is Errors.MEMBER_ID_REQUIRED and len(g.pending_join_members) == 1 and g.state is S
    for _ in range(2):
        c.advance(2500)
        assert heartbeat(c, first.member_id, 1) is Errors.NONE
    assert list(g.members) == [first.member_id] and (g.generation_id, g.state) == (1, S)


@restates("testRebalanceTimesOutWhenSyncRequestIsNotReceived", "4.1.1")
def test_members_that_never_sync_are_removed_at_the_rebalance_timeout(profile: str) -> None:
    c = context(profile)
    responses = join_with_n_members(c, 3, 5000, 5000)
    c.advance(2500)
    assert all(heartbeat(c, r.member_id, r.generation_id) is Errors.NONE for r in responses)
    c.take_fired()
    c.advance(2500)
    assert [(k, live) for k, _, live in c.take_fired()] == [(f"sync-{GROUP}", True)]
    assert c.group_record(GROUP) == (2, "consumer", None, None, ())   # the Empty group after one more generation
    assert all(heartbeat(c, r.member_id, r.generation_id) is Errors.UNKNOWN_MEMBER_ID for r in responses)
    assert group(c).state is E


@restates("testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromFollowers", "4.1.1")
def test_followers_that_never_sync_are_removed_at_the_rebalance_timeout(profile: str) -> None:
    c = context(profile)
    responses = join_with_n_members(c, 3, 5000, 5000)
    c.advance(2500)
    assert all(heartbeat(c, r.member_id, r.generation_id) is Errors.NONE for r in responses)
    assert sync(c, responses[0].member_id, 1).result.error is Errors.NONE and group(c).state is S
    assert heartbeat(c, responses[0].member_id, 1) is Errors.NONE
    c.take_fired()
    c.advance(2500)
    assert [(k, live) for k, _, live in c.take_fired()] == [(f"sync-{GROUP}", True)]
    assert heartbeat(c, responses[0].member_id, 1) is Errors.REBALANCE_IN_PROGRESS
    assert all(heartbeat(c, r.member_id, 1) is Errors.UNKNOWN_MEMBER_ID for r in responses[1:])
    assert group(c).state is PR


@restates("testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromLeaders", "4.1.1")
def test_a_leader_that_never_syncs_is_removed_at_the_rebalance_timeout(profile: str) -> None:
    c = context(profile)
    responses = join_with_n_members(c, 3, 5000, 5000)
    c.advance(2500)
    assert all(heartbeat(c, r.member_id, r.generation_id) is Errors.NONE for r in responses)
    followers = [sync(c, r.member_id, 1) for r in responses[1:]]
    assert not any(f.done for f in followers)
    c.take_fired()
    c.advance(2500)
    assert [(k, live) for k, _, live in c.take_fired()] == [(f"sync-{GROUP}", True)]
    assert all(f.result.error is Errors.REBALANCE_IN_PROGRESS for f in followers)
    assert heartbeat(c, responses[0].member_id, 1) is Errors.UNKNOWN_MEMBER_ID
    assert all(heartbeat(c, r.member_id, 1) is Errors.REBALANCE_IN_PROGRESS for r in responses[1:])
    assert group(c).state is PR


@restates("testRebalanceDoesNotTimeOutWhenAllSyncAreReceived", "4.1.1")
def test_nobody_is_removed_once_everyone_synced(profile: str) -> None:
    c = context(profile)
    responses = join_with_n_members(c, 3, 5000, 5000)
    leader_id = responses[0].member_id
    assert responses[0].leader_id == leader_id
    c.advance(2500)
    assert all(heartbeat(c, r.member_id, r.generation_id) is Errors.NONE for r in responses)
    futures = [sync(c, r.member_id, 1) for r in responses]
    assert all(f.done and f.result.error is Errors.NONE for f in futures)
    for _ in range(2):
        c.advance(2500)
        assert all(heartbeat(c, r.member_id, 1) is Errors.NONE for r in responses)
    assert group(c).state is S


@restates("testHeartbeatDuringRebalanceCausesRebalanceInProgress", "4.1.1")
def test_a_heartbeat_during_a_rebalance_is_rebalance_in_progress(profile: str) -> None:
    c = context(profile)
    create_group(c)
    leader = join_as_dynamic_and_complete_join(c, session=5000, rebalance=10000)
    assert leader.generation_id == 1 and group(c).state is CR
    assert not join(c, rebalance=10000, session=5000).done
    assert heartbeat(c, leader.member_id, leader.generation_id) is Errors.REBALANCE_IN_PROGRESS

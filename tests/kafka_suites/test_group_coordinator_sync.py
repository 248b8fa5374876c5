"""Kafka's GroupCoordinatorTest.scala, SyncGroup: pre-checks and errors, the leader's assignment reaching the
followers in either order, a leader that never syncs, the protocol type and name of SyncGroup v5 (2.7.0+) and the
DelayedSync of 3.0+ — restated over the reference, per release tag."""
from __future__ import annotations

from core.types import Errors
from impl.results import JoinGroupResult
from tests.kafka_suites.group_coordinator_harness import (DEAD, DEAD_GROUP, FOLLOWER, GROUP_INITIAL_REBALANCE_DELAY,
                                                          LEADER, MEMBER_ID, OTHER_GROUP, PROTOCOL_NAME,
                                                          PROTOCOL_SUPERSET, PROTOCOL_TYPE, Kafka, done)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")


@restates("testSyncDeadGroup", *ALL)
def test_sync_of_a_dead_group(profile: str) -> None:
    k = Kafka(profile)
    k.poke_add_group(DEAD_GROUP, DEAD)
    assert k.sync_follower(1, MEMBER_ID, group_id=DEAD_GROUP).error is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testSyncGroupEmptyAssignment", *ALL)
def test_leader_sync_without_assignments_gets_an_empty_one(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    sync = k.sync_leader(joined.generation_id, joined.member_id, {})
    assert sync.error is Errors.NONE and sync.assignment == b""
    assert k.heartbeat(joined.member_id, 1) is Errors.NONE


@restates("testSyncGroupNotCoordinator", *ALL)
def test_sync_to_a_group_this_broker_does_not_lead(profile: str) -> None:
    assert Kafka(profile).sync_follower(1, MEMBER_ID, group_id=OTHER_GROUP).error is Errors.NOT_COORDINATOR


@restates("testSyncGroupFromUnknownGroup", *ALL)
def test_sync_to_an_absent_group_is_unknown_member(profile: str) -> None:
    assert Kafka(profile).sync_follower(1, MEMBER_ID).error is Errors.UNKNOWN_MEMBER_ID


@restates("testSyncGroupFromUnknownMember", *ALL)
def test_sync_of_an_unknown_member(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    assert k.sync_leader(joined.generation_id, joined.member_id, {joined.member_id: b""}).error is Errors.NONE
    assert k.sync_follower(joined.generation_id, "blah").error is Errors.UNKNOWN_MEMBER_ID


@restates("testSyncGroupFromIllegalGeneration", *ALL)
def test_sync_of_another_generation(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    sync = k.sync_leader(joined.generation_id + 1, joined.member_id, {joined.member_id: b""})
    assert sync.error is Errors.ILLEGAL_GENERATION


def _two_member_generation(k: Kafka) -> tuple[JoinGroupResult, JoinGroupResult]:
    """A one-member group syncs, a second member joins, the first rejoins: generation 2 with both."""
    first = k.dynamic_join()
    assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    other_future = k.send_join()
    join = done(k.send_join(first.member_id))
    other = done(other_future)
    assert join.error is Errors.NONE and other.error is Errors.NONE
    assert join.generation_id == other.generation_id
    assert join.leader_id == first.member_id and other.leader_id == first.member_id
    return join, other


@restates("testLeaderFailureInSyncGroup", *ALL)
def test_follower_sync_is_answered_rebalance_in_progress_when_the_leader_never_syncs(profile: str) -> None:
    k = Kafka(profile)
    join, other = _two_member_generation(k)
    follower_sync = k.send_sync_follower(join.generation_id, other.member_id)
    k.advance(500 + 100)
    assert done(follower_sync).error is Errors.REBALANCE_IN_PROGRESS


@restates("testSyncGroupFollowerAfterLeader", *ALL)
def test_follower_syncing_after_the_leader_gets_its_assignment(profile: str) -> None:
    k = Kafka(profile)
    join, other = _two_member_generation(k)
    assignment = {join.member_id: b"\x00", other.member_id: b"\x01"}
    leader_sync = k.sync_leader(join.generation_id, join.member_id, assignment)
    assert (leader_sync.error, leader_sync.assignment) == (Errors.NONE, b"\x00")
    follower_sync = k.sync_follower(join.generation_id, other.member_id)
    assert (follower_sync.error, follower_sync.assignment) == (Errors.NONE, b"\x01")


@restates("testSyncGroupLeaderAfterFollower", *ALL)
def test_follower_syncing_before_the_leader_gets_its_assignment(profile: str) -> None:
    k = Kafka(profile)
    join, other = _two_member_generation(k)
    follower_sync = k.send_sync_follower(join.generation_id, other.member_id)
    assignment = {join.leader_id: b"\x00", other.member_id: b"\x01"}
    leader_sync = k.sync_leader(join.generation_id, join.leader_id, assignment)
    assert (leader_sync.error, leader_sync.assignment) == (Errors.NONE, b"\x00")
    assert (done(follower_sync).error, done(follower_sync).assignment) == (Errors.NONE, b"\x01")


def _sync_with_protocol(profile: str, protocol_type: str | None, protocol_name: str | None, error: Errors,
                        expected_type: str | None, expected_name: str | None) -> None:
    """testSyncGroupProtocolTypeAndNameWith: two static members join; leader and follower sync with the given
    protocol type and name; both answers carry ``error`` and the expected type and name."""
    k = Kafka(profile)
    leader_future = k.send_join("", PROTOCOL_SUPERSET, LEADER)
    follower_future = k.send_join("", PROTOCOL_SUPERSET, FOLLOWER)
    k.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
    k.advance(500 + 1)
    leader, follower = done(leader_future), done(follower_future)
    answers = [k.sync_leader(leader.generation_id, leader.member_id, {leader.member_id: b""}, protocol_type,
                             protocol_name),
               k.sync_follower(leader.generation_id, follower.member_id, protocol_type, protocol_name)]
    for answer in answers:
        assert (answer.error, answer.protocol_type, answer.protocol_name) == (error, expected_type, expected_name)


@restates("testSyncGroupReturnsAnErrorWhenProtocolTypeIsInconsistent", "2.7.0", "3.9.0")
def test_sync_with_another_protocol_type_is_inconsistent(profile: str) -> None:
    _sync_with_protocol(profile, "whatever", None, Errors.INCONSISTENT_GROUP_PROTOCOL, None, None)


@restates("testSyncGroupReturnsAnErrorWhenProtocolNameIsInconsistent", "2.7.0", "3.9.0")
def test_sync_with_another_protocol_name_is_inconsistent(profile: str) -> None:
    _sync_with_protocol(profile, None, "whatever", Errors.INCONSISTENT_GROUP_PROTOCOL, None, None)


@restates("testSyncGroupSucceedWhenProtocolTypeAndNameAreNotProvided", "2.7.0", "3.9.0")
def test_sync_without_protocol_type_and_name_is_answered_with_them(profile: str) -> None:
    _sync_with_protocol(profile, None, None, Errors.NONE, PROTOCOL_TYPE, PROTOCOL_NAME)


@restates("testSyncGroupSucceedWhenProtocolTypeAndNameAreConsistent", "2.7.0", "3.9.0")
def test_sync_with_the_group_protocol_type_and_name_succeeds(profile: str) -> None:
    _sync_with_protocol(profile, PROTOCOL_TYPE, PROTOCOL_NAME, Errors.NONE, PROTOCOL_TYPE, PROTOCOL_NAME)


def _three_members(k: Kafka) -> list[JoinGroupResult]:
    """joinWithNMembers(3): three pending members join with their ids; the two initial delays run out."""
    member_ids = [done(k.send_join(require_known=True)).member_id for _ in range(3)]
    futures = [k.send_join(m, require_known=True) for m in member_ids]
    k.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
    k.advance(500 + 1)
    results = [done(f) for f in futures]
    assert {r.error for r in results} == {Errors.NONE}
    k.advance(500 // 2)
    for r in results:     # heartbeats do not hold off the DelayedSync
        assert k.heartbeat(r.member_id, r.generation_id) is Errors.NONE
    return results


def _sync_all(k: Kafka, leader: JoinGroupResult, members: list[JoinGroupResult]) -> None:
    assignment = {r.member_id: b"" for r in members}
    sync = k.sync_leader(leader.generation_id, leader.member_id, assignment, PROTOCOL_TYPE, PROTOCOL_NAME)
    assert sync.error is Errors.NONE


@restates("testRebalanceTimesOutWhenSyncRequestIsNotReceived", "3.9.0")
def test_delayed_sync_removes_every_member_that_did_not_sync(profile: str) -> None:
    k = Kafka(profile)
    results = _three_members(k)
    k.advance(500 // 2 + 1)
    for r in results:
        assert k.heartbeat(r.member_id, r.generation_id) is Errors.UNKNOWN_MEMBER_ID


@restates("testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromFollowers", "3.9.0")
def test_delayed_sync_removes_the_followers_that_did_not_sync(profile: str) -> None:
    k = Kafka(profile)
    leader, *followers = _three_members(k)
    _sync_all(k, leader, [leader, *followers])
    assert k.heartbeat(leader.member_id, leader.generation_id) is Errors.NONE
    k.advance(500 // 2 + 1)
    assert k.heartbeat(leader.member_id, leader.generation_id) is Errors.REBALANCE_IN_PROGRESS
    for r in followers:
        assert k.heartbeat(r.member_id, r.generation_id) is Errors.UNKNOWN_MEMBER_ID


@restates("testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromLeaders", "3.9.0")
def test_delayed_sync_removes_a_leader_that_did_not_sync(profile: str) -> None:
    k = Kafka(profile)
    leader, *followers = _three_members(k)
    syncs = [k.send_sync_follower(r.generation_id, r.member_id, PROTOCOL_TYPE, PROTOCOL_NAME) for r in followers]
    k.advance(500 // 2 + 1)
    assert {done(s).error for s in syncs} == {Errors.REBALANCE_IN_PROGRESS}
    assert k.heartbeat(leader.member_id, leader.generation_id) is Errors.UNKNOWN_MEMBER_ID
    for r in followers:
        assert k.heartbeat(r.member_id, r.generation_id) is Errors.REBALANCE_IN_PROGRESS


@restates("testRebalanceDoesNotTimeOutWhenAllSyncAreReceived", "3.9.0")
def test_delayed_sync_removes_nobody_once_everyone_synced(profile: str) -> None:
    k = Kafka(profile)
    results = _three_members(k)
    leader, *followers = results
    _sync_all(k, leader, results)
    syncs = [k.send_sync_follower(r.generation_id, r.member_id, PROTOCOL_TYPE, PROTOCOL_NAME) for r in followers]
    assert {done(s).error for s in syncs} == {Errors.NONE}
    for step in (500 // 2 + 1, 500 // 2):
        k.advance(step)
        for r in results:
            assert k.heartbeat(r.member_id, r.generation_id) is Errors.NONE

"""Kafka's GroupCoordinatorTest.scala, static membership (KIP-345) with known member ids: fencing of old and
duplicate incarnations, rejoins with the current id, mismatched or unknown instance ids, the coordinator's
IllegalStateExceptions, and static members that miss a rebalance — restated over the reference, per release tag.
(A static member that rejoins with an unknown member id: test_group_coordinator_static_rejoin.py.)"""
from __future__ import annotations

from core.types import Errors
from tests.kafka_suites.group_coordinator_harness import (CR, DEAD, EMPTY, FOLLOWER, GROUP, INSTANCE, INVALID_MEMBER,
                                                          LEADER, PR, PROTOCOL_NAME, PROTOCOL_SUPERSET, PROTOCOL_TYPE,
                                                          PROTOCOLS, STABLE, Kafka, done, parked)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")
#: SyncGroup v5 carries the protocol type and name (KIP-559): Kafka's 2.7.0+ tests send them where 2.4.1's cannot
SENDS_PROTOCOL = {"2.4.1": False, "2.7.0": True, "3.9": True}


@restates("staticMemberJoinAsFirstMember", *ALL)
def test_static_member_joins_an_absent_group(profile: str) -> None:
    assert Kafka(profile).static_join("", INSTANCE).error is Errors.NONE


@restates("staticMemberReJoinWithExplicitUnknownMemberId", *ALL)
def test_static_member_with_a_made_up_member_id_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    assert k.static_join("", INSTANCE).error is Errors.NONE
    assert k.static_join("unknown_member", INSTANCE).error is Errors.FENCED_INSTANCE_ID


@restates("staticMemberFenceDuplicateRejoinedFollower", *ALL)
def test_old_follower_parked_in_the_join_phase_is_fenced_by_its_duplicate(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    k.send_join()                              # a third member starts a rebalance
    k.advance(1)
    assert k.state() is PR
    k.advance(1)
    old_follower = k.send_join(r.follower_id, PROTOCOLS, FOLLOWER)
    k.advance(1)
    duplicate = k.send_join("", PROTOCOLS, FOLLOWER)
    k.advance(1)
    k.check_join(done(old_follower), Errors.FENCED_INSTANCE_ID, -1, set(), PR, None)
    parked(duplicate)


@restates("staticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged", *ALL)
def test_old_follower_parked_in_sync_is_fenced_by_its_duplicate(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    leader_future = k.send_join(r.leader_id, PROTOCOLS, LEADER)
    k.advance(1)
    assert k.state() is PR
    k.advance(1)
    old_follower_future = k.send_join(r.follower_id, PROTOCOLS, FOLLOWER)
    k.advance(1)
    leader, old_follower = done(leader_future), done(old_follower_future)
    k.check_join(leader, Errors.NONE, 2, {LEADER, FOLLOWER}, CR, PROTOCOL_TYPE)
    assert leader.member_id == r.leader_id and leader.leader_id == r.leader_id
    k.check_join(old_follower, Errors.NONE, 2, set(), CR, PROTOCOL_TYPE, leader_id=leader.member_id)
    assert old_follower.member_id == r.follower_id and k.state() is CR
    protocol = (PROTOCOL_TYPE, PROTOCOL_NAME) if SENDS_PROTOCOL[profile] else (None, None)
    old_sync = k.send_sync_follower(old_follower.generation_id, old_follower.member_id, *protocol, FOLLOWER)
    duplicate_future = k.send_join("", PROTOCOLS, FOLLOWER)
    k.advance(1)
    assert done(old_sync).error is Errors.FENCED_INSTANCE_ID
    if profile == "2.4.1":
        # 2.3-2.4: the duplicate is answered at once with the current generation and the old leader id
        k.check_join(done(duplicate_future), Errors.NONE, 2, set(), CR, None, leader_id=leader.member_id)
        return
    # 2.5.0+ (KAFKA-9801): the replacement starts a rebalance; the old leader's session runs out first, so the
    # duplicate ends up alone, the leader of generation 3
    assert k.state() is PR
    k.advance(50 + 1)
    k.advance(500 + 1)
    duplicate = done(duplicate_future)
    k.check_join(duplicate, Errors.NONE, 3, {FOLLOWER}, CR, PROTOCOL_TYPE, leader_id=duplicate.member_id)
    assert k.state() is CR


@restates("staticMemberFenceDuplicateRejoiningFollowerAfterMemberIdChanged", *ALL)
def test_old_follower_rejoining_after_its_duplicate_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    leader_future = k.send_join(r.leader_id, PROTOCOLS, LEADER)
    k.advance(1)
    assert k.state() is PR
    duplicate_future = k.send_join("", PROTOCOLS, FOLLOWER)
    k.advance(1)
    old_follower_future = k.send_join(r.follower_id, PROTOCOLS, FOLLOWER)
    k.check_join(done(leader_future), Errors.NONE, 2, {LEADER, FOLLOWER}, CR, PROTOCOL_TYPE)
    duplicate = done(duplicate_future)
    k.check_join(duplicate, Errors.NONE, 2, set(), CR, PROTOCOL_TYPE)
    assert duplicate.member_id != r.follower_id
    k.check_join(done(old_follower_future), Errors.FENCED_INSTANCE_ID, -1, set(), CR, None)


@restates("staticMemberRejoinWithKnownMemberId", *ALL)
def test_static_member_rejoining_with_its_id_while_completing_rebalance(profile: str) -> None:
    k = Kafka(profile)
    joined = k.static_join("", INSTANCE)
    assert joined.error is Errors.NONE
    member_id = joined.member_id
    rejoin_future = k.send_join(member_id, PROTOCOLS, INSTANCE)
    k.advance(1)
    rejoin = done(rejoin_future)
    assert rejoin.error is Errors.NONE and k.state() is CR
    protocol = (PROTOCOL_TYPE, PROTOCOL_NAME) if SENDS_PROTOCOL[profile] else (None, None)
    sync_future = k.send_sync_leader(rejoin.generation_id, member_id, {member_id: b""}, *protocol, INSTANCE)
    k.advance(1)
    assert done(sync_future).error is Errors.NONE and k.state() is STABLE


@restates("staticMemberRejoinWithLeaderIdAndKnownMemberId", *ALL)
def test_static_leader_rejoining_with_its_id_rebalances(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance(session=500 // 2)
    joined = k.static_join(r.leader_id, LEADER, PROTOCOL_SUPERSET, clock_advance=500 + 1)
    assert FOLLOWER not in k.static_ids()     # the follower's session ran out meanwhile
    k.check_join(joined, Errors.NONE, 2, {LEADER}, CR, PROTOCOL_TYPE, leader_id=r.leader_id, member_id=r.leader_id)


@restates("staticMemberRejoinWithLeaderIdAndUnexpectedDeadGroup", *ALL)
def test_static_leader_rejoining_a_dead_group(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    k.poke_transition(DEAD)
    assert k.static_join(r.leader_id, LEADER, clock_advance=1).error is Errors.COORDINATOR_NOT_AVAILABLE


@restates("staticMemberRejoinWithLeaderIdAndUnexpectedEmptyGroup", *ALL)
def test_static_leader_rejoining_a_group_forced_empty(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    k.poke_transition(PR)
    k.poke_transition(EMPTY)
    assert k.static_join(r.leader_id, LEADER, clock_advance=1).error is Errors.UNKNOWN_MEMBER_ID


@restates("staticMemberRejoinWithFollowerIdAndChangeOfProtocol", *ALL)
def test_static_follower_changing_protocol_rebalances_and_leads(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance(session=500 * 2)
    joined = k.static_join(r.follower_id, FOLLOWER, (("roundrobin", b""),), clock_advance=500 + 1)
    assert joined.member_id == r.follower_id
    assert LEADER in k.static_ids() and k.view().leader_id == r.follower_id
    k.check_join(joined, Errors.NONE, 2, {LEADER, FOLLOWER}, CR, PROTOCOL_TYPE, leader_id=r.follower_id,
                 member_id=r.follower_id)


@restates("staticMemberRejoinWithKnownLeaderIdToTriggerRebalanceAndFollowerWithChangeofProtocol", *ALL)
def test_static_rejoin_of_both_then_the_follower_changes_protocol(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    leader_future = k.send_join(r.leader_id, PROTOCOL_SUPERSET, LEADER)
    follower_future = k.send_join(r.follower_id, PROTOCOL_SUPERSET, FOLLOWER)
    k.advance(1)
    k.check_join(done(leader_future), Errors.NONE, 2, {LEADER, FOLLOWER}, CR, PROTOCOL_TYPE, leader_id=r.leader_id,
                 member_id=r.leader_id)
    k.check_join(done(follower_future), Errors.NONE, 2, set(), CR, PROTOCOL_TYPE, leader_id=r.leader_id,
                 member_id=r.follower_id)
    changed = k.send_join(r.follower_id, PROTOCOLS, FOLLOWER)
    assert k.state() is PR
    k.advance(500 + 1)
    k.check_join(done(changed), Errors.NONE, 3, {FOLLOWER}, CR, PROTOCOL_TYPE, leader_id=r.follower_id,
                 member_id=r.follower_id)


@restates("staticMemberRejoinAsFollowerWithKnownMemberIdAndNoProtocolChange", *ALL)
def test_static_follower_rejoining_unchanged_gets_the_current_generation(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join(r.follower_id, FOLLOWER, PROTOCOL_SUPERSET, clock_advance=1)
    assert LEADER in k.static_ids()
    k.check_join(joined, Errors.NONE, 1, set(), STABLE, PROTOCOL_TYPE, leader_id=r.leader_id,
                 member_id=r.follower_id)


@restates("staticMemberRejoinAsFollowerWithMismatchedMemberId", *ALL)
def test_follower_id_with_the_leader_instance_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join(r.follower_id, LEADER, PROTOCOL_SUPERSET, clock_advance=1)
    assert joined.error is Errors.FENCED_INSTANCE_ID


@restates("staticMemberRejoinAsLeaderWithMismatchedMemberId", *ALL)
def test_leader_id_with_the_follower_instance_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join(r.leader_id, FOLLOWER, PROTOCOL_SUPERSET, clock_advance=1)
    assert joined.error is Errors.FENCED_INSTANCE_ID


@restates("staticMemberSyncAsLeaderWithInvalidMemberId", *ALL)
def test_sync_with_the_leader_instance_and_another_id_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    assert k.sync_leader(r.generation, "invalid", {}, instance=LEADER).error is Errors.FENCED_INSTANCE_ID


@restates("staticMemberHeartbeatLeaderWithInvalidMemberId", *ALL)
def test_heartbeat_with_the_leader_instance_and_another_id_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    assert k.sync_leader(r.generation, r.leader_id, {}).error is Errors.NONE
    assert k.heartbeat(r.leader_id, r.generation) is Errors.NONE
    assert k.heartbeat(INVALID_MEMBER, r.generation, LEADER) is Errors.FENCED_INSTANCE_ID


@restates("staticMemberCommitOffsetWithInvalidMemberId", *ALL)
def test_commit_with_the_leader_instance_and_another_id_is_fenced(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    assert k.sync_leader(r.generation, r.leader_id, {}).error is Errors.NONE
    assert k.commit(r.leader_id, r.generation) is Errors.NONE
    assert k.commit(INVALID_MEMBER, r.generation, LEADER) is Errors.FENCED_INSTANCE_ID


@restates("staticMemberJoinWithUnknownInstanceIdAndKnownMemberId", *ALL)
def test_known_member_id_with_an_unknown_instance_id_is_unknown(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join(r.leader_id, "unknown_instance", PROTOCOL_SUPERSET, clock_advance=1)
    assert joined.error is Errors.UNKNOWN_MEMBER_ID


def _follower_left_pending(k: Kafka, follower_id: str) -> None:
    """``group.addPendingMember(followerId); group.remove(followerId)``: 2.x's remove leaves the pending set and
    the instance-id map alone, so the follower's id is pending and its instance id still maps to it."""
    group = k.group()
    group.remove(follower_id)
    group.pending_members.add(follower_id)
    group.static_members[FOLLOWER] = follower_id


@restates("staticMemberJoinWithIllegalStateAsPendingMember", "2.4.1", "2.7.0")
def test_join_of_a_pending_member_id_with_an_instance_id_is_an_illegal_state(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    _follower_left_pending(k, r.follower_id)
    k.send_join(r.follower_id, PROTOCOL_SUPERSET, FOLLOWER)
    message = k.last_illegal_state()
    assert r.follower_id in message and FOLLOWER in message


@restates("staticMemberLeaveWithIllegalStateAsPendingMember", "2.4.1", "2.7.0")
def test_leave_of_a_pending_member_id_with_an_instance_id_is_an_illegal_state(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    _follower_left_pending(k, r.follower_id)
    k.leave((r.follower_id, FOLLOWER))
    message = k.last_illegal_state()
    assert r.follower_id in message and FOLLOWER in message


@restates("staticMemberReJoinWithIllegalStateAsUnknownMember", *ALL)
def test_static_rejoin_in_a_group_forced_empty_is_an_illegal_state(profile: str) -> None:
    k = Kafka(profile)
    k.static_rebalance()
    k.poke_transition(PR)
    k.poke_transition(EMPTY)
    k.send_join("", PROTOCOL_SUPERSET, FOLLOWER)
    message = k.last_illegal_state()
    assert GROUP in message and FOLLOWER in message


@restates("staticMemberReJoinWithIllegalArgumentAsMissingOldMember", "2.4.1", "2.7.0")
def test_static_rejoin_whose_instance_maps_to_no_member_is_refused(profile: str) -> None:
    """``group.addStaticMember(follower, "invalid_member_id")``; Kafka throws IllegalArgumentException from
    replaceGroupInstance, which impl raises as its IllegalStateError."""
    k = Kafka(profile)
    k.static_rebalance()
    k.group().static_members[FOLLOWER] = "invalid_member_id"
    k.send_join("", PROTOCOL_SUPERSET, FOLLOWER)
    assert "invalid_member_id" in k.last_illegal_state()

"""Kafka's GroupCoordinatorTest.scala, Heartbeat and sessions: answers by state and release, what keeps a session
alive (heartbeats, commits), session expiry during and after a rebalance, and the heartbeat operation's completion
hooks — restated over the reference, per release tag."""
from __future__ import annotations

from core.types import Errors
from impl.delayed import DelayedHeartbeat
from tests.kafka_suites.group_coordinator_harness import (DEAD, DEAD_GROUP, DEFAULT_SESSION_TIMEOUT, EMPTY, GROUP,
                                                          INSTANCE, LEADER, MEMBER_ID, OTHER_GROUP, PROTOCOL_SUPERSET,
                                                          Kafka, done)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")


def _stable_member(k: Kafka, session: int = 500) -> tuple[str, int]:
    joined = k.dynamic_join(session=session, rebalance=session)
    assert joined.error is Errors.NONE
    member_id = joined.member_id
    assert k.sync_leader(joined.generation_id, member_id, {member_id: b""}).error is Errors.NONE
    return member_id, joined.generation_id


@restates("testHeartbeatWrongCoordinator", *ALL)
def test_heartbeat_to_a_group_this_broker_does_not_lead(profile: str) -> None:
    assert Kafka(profile).heartbeat(MEMBER_ID, -1, group_id=OTHER_GROUP) is Errors.NOT_COORDINATOR


@restates("testHeartbeatUnknownGroup", *ALL)
def test_heartbeat_to_an_absent_group_is_unknown_member(profile: str) -> None:
    assert Kafka(profile).heartbeat(MEMBER_ID, -1) is Errors.UNKNOWN_MEMBER_ID


@restates("testheartbeatDeadGroup", "2.4.1", "2.7.0")
@restates("testHeartbeatDeadGroup", "3.9.0")
def test_heartbeat_to_a_dead_group(profile: str) -> None:
    k = Kafka(profile)
    k.poke_add_group(DEAD_GROUP, DEAD)
    assert k.heartbeat(MEMBER_ID, 1, group_id=DEAD_GROUP) is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testheartbeatEmptyGroup", "2.4.1", "2.7.0")
@restates("testHeartbeatEmptyGroup", "3.9.0")
def test_heartbeat_to_an_empty_group_is_unknown_member(profile: str) -> None:
    """Kafka's test adds a static member to an Empty GroupMetadata directly, then heartbeats as it."""
    k = Kafka(profile)
    group = k.poke_add_group(GROUP, EMPTY)
    k.poke_add_member(group, MEMBER_ID, INSTANCE, PROTOCOL_SUPERSET, session=500, rebalance=500)
    assert k.heartbeat(MEMBER_ID, 0) is Errors.UNKNOWN_MEMBER_ID


@restates("testHeartbeatUnknownConsumerExistingGroup", *ALL)
def test_heartbeat_of_an_unknown_member(profile: str) -> None:
    k = Kafka(profile)
    _stable_member(k)
    assert k.heartbeat("memberId", 1) is Errors.UNKNOWN_MEMBER_ID


#: a heartbeat in CompletingRebalance: REBALANCE_IN_PROGRESS until 2.6.0, NONE from 2.6.1/2.7.0 (KAFKA-10134)
HEARTBEAT_IN_COMPLETING_REBALANCE = {"2.4.1": Errors.REBALANCE_IN_PROGRESS, "2.7.0": Errors.NONE, "3.9": Errors.NONE}


@restates("testHeartbeatRebalanceInProgress", *ALL)
def test_heartbeat_while_completing_rebalance(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    assert k.heartbeat(joined.member_id, 1) is HEARTBEAT_IN_COMPLETING_REBALANCE[profile]


@restates("testHeartbeatIllegalGeneration", *ALL)
def test_heartbeat_of_another_generation(profile: str) -> None:
    k = Kafka(profile)
    member_id, _ = _stable_member(k)
    assert k.heartbeat(member_id, 2) is Errors.ILLEGAL_GENERATION


@restates("testValidHeartbeat", *ALL)
def test_heartbeat_of_a_stable_member(profile: str) -> None:
    k = Kafka(profile)
    member_id, _ = _stable_member(k)
    assert k.heartbeat(member_id, 1) is Errors.NONE


@restates("testSessionTimeout", *ALL)
def test_a_silent_member_expires(profile: str) -> None:
    k = Kafka(profile)
    member_id, _ = _stable_member(k)
    k.advance(DEFAULT_SESSION_TIMEOUT + 100)
    assert k.heartbeat(member_id, 1) is Errors.UNKNOWN_MEMBER_ID


@restates("testHeartbeatMaintainsSession", *ALL)
def test_heartbeats_keep_the_session(profile: str) -> None:
    k = Kafka(profile)
    session = 1000
    member_id, _ = _stable_member(k, session)
    k.advance(session // 2)
    assert k.heartbeat(member_id, 1) is Errors.NONE
    k.advance(session // 2 + 100)
    assert k.heartbeat(member_id, 1) is Errors.NONE


@restates("testCommitMaintainsSession", *ALL)
def test_a_commit_keeps_the_session(profile: str) -> None:
    k = Kafka(profile)
    session = 1000
    member_id, generation = _stable_member(k, session)
    k.advance(session // 2)
    assert k.commit(member_id, generation) is Errors.NONE
    k.advance(session // 2 + 100)
    assert k.heartbeat(member_id, 1) is Errors.NONE


@restates("testSessionTimeoutDuringRebalance", *ALL)
def test_a_member_that_stops_heartbeating_during_a_rebalance_falls_out(profile: str) -> None:
    k = Kafka(profile)
    first = k.dynamic_join(rebalance=2000, session=1000)
    assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    other = k.send_join()
    k.advance(500)
    assert k.heartbeat(first.member_id, first.generation_id) is Errors.REBALANCE_IN_PROGRESS
    k.advance(1100)
    assert k.heartbeat(first.member_id, first.generation_id) is Errors.UNKNOWN_MEMBER_ID
    assert done(other).error is Errors.NONE


@restates("testRebalanceCompletesBeforeMemberJoins", *ALL)
def test_a_static_member_that_misses_the_rebalance_stays_until_its_session_ends(profile: str) -> None:
    k = Kafka(profile)
    first = k.static_join("", LEADER, rebalance=1200, session=1000)
    assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    other_session = DEFAULT_SESSION_TIMEOUT
    other_future = k.send_join()
    for _ in range(2):
        k.advance(other_session)
        assert k.heartbeat(first.member_id, first.generation_id) is Errors.REBALANCE_IN_PROGRESS
    k.advance(other_session)       # the rebalance times out without the static member
    other = done(other_future)
    assert k.sync_leader(other.generation_id, other.member_id, {other.member_id: b""}).error is Errors.NONE
    assert other.error is Errors.NONE
    assert k.heartbeat(first.member_id, first.generation_id) is Errors.ILLEGAL_GENERATION
    for expected in (Errors.NONE, Errors.NONE, Errors.REBALANCE_IN_PROGRESS):
        k.advance(other_session)   # the static member's session ends on the third step
        assert k.heartbeat(other.member_id, other.generation_id) is expected
    rejoin = done(k.send_join(other.member_id))
    assert rejoin.error is Errors.NONE
    assert k.sync_leader(rejoin.generation_id, other.member_id, {other.member_id: b""}).error is Errors.NONE
    for _ in range(20):
        k.advance(500)
        assert k.heartbeat(other.member_id, rejoin.generation_id) is Errors.NONE


@restates("testHeartbeatDuringRebalanceCausesRebalanceInProgress", *ALL)
def test_heartbeat_while_preparing_rebalance(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    k.send_join()
    assert k.heartbeat(joined.member_id, joined.generation_id) is Errors.REBALANCE_IN_PROGRESS


def _heartbeat_op(k: Kafka, member_id: str, member: object) -> DelayedHeartbeat:
    """The operation Kafka's test completes by hand: ``tryCompleteHeartbeat(group, memberId, isPending = false,
    ...)``; 2.4.1's signature also takes a heartbeat deadline, which the test passes as DefaultSessionTimeout."""
    return DelayedHeartbeat(k.c, k.group(), member, member_id, DEFAULT_SESSION_TIMEOUT, DEFAULT_SESSION_TIMEOUT, 0)


@restates("testCompleteHeartbeatWithGroupDead", *ALL)
def test_heartbeat_op_of_a_dead_group_completes_and_expires_harmlessly(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    k.heartbeat(r.leader_id, r.generation)
    k.poke_transition(DEAD)
    op = _heartbeat_op(k, r.leader_id, k.group().members[r.leader_id])
    assert k.c.try_complete_heartbeat(op, lambda: True) is True
    k.c.on_expire_heartbeat(op)
    assert r.leader_id in k.group().members


#: tryCompleteHeartbeat of a member no longer in the group: false at 2.4.1 (the op expires idly, KAFKA-8896's
#: form), true from 2.5.0 ("not found" completes, KAFKA-9752)
COMPLETES_REMOVED_MEMBER = {"2.4.1": False, "2.7.0": True, "3.9": True}


@restates("testCompleteHeartbeatWithMemberAlreadyRemoved", *ALL)
def test_heartbeat_op_of_a_removed_member(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    k.heartbeat(r.leader_id, r.generation)
    member = k.group().members[r.leader_id]
    k.group().remove(r.leader_id)
    op = _heartbeat_op(k, r.leader_id, member)
    assert k.c.try_complete_heartbeat(op, lambda: True) is COMPLETES_REMOVED_MEMBER[profile]
    if profile == "2.4.1":
        k.c.on_expire_heartbeat(op)   # 2.4.1's test also expires it: nothing to remove, no error
        assert not k.c.errors

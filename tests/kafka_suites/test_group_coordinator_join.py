"""Kafka's GroupCoordinatorTest.scala, JoinGroup: pre-checks and errors, the protocol checks, generations, the
protocol type in answers (2.7.0+) and the initial rebalance delay — restated over the reference, per release tag.

Each test says what Kafka's test asserts; the expected values are those assertions at the tag named in
``@restates``. Timelines follow Kafka's MockTimer (a task fires once the clock is past its deadline).
"""
from __future__ import annotations

from core.types import Errors
from tests.kafka_suites.group_coordinator_harness import (DEAD, DEAD_GROUP, GROUP_INITIAL_REBALANCE_DELAY,
                                                          GROUP_MAX_SESSION_TIMEOUT, GROUP_MIN_SESSION_TIMEOUT,
                                                          INSTANCE, LEADER, FOLLOWER, MEMBER_ID, OTHER_GROUP,
                                                          PROTOCOL_SUPERSET, PROTOCOL_TYPE, PROTOCOLS, Kafka, done,
                                                          parked)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")
DELAY = GROUP_INITIAL_REBALANCE_DELAY


@restates("testJoinGroupWrongCoordinator", *ALL)
def test_join_of_a_group_this_broker_does_not_lead_is_not_coordinator(profile: str) -> None:
    k = Kafka(profile)
    assert k.dynamic_join(group_id=OTHER_GROUP).error is Errors.NOT_COORDINATOR
    assert k.static_join("", INSTANCE, group_id=OTHER_GROUP).error is Errors.NOT_COORDINATOR


@restates("testJoinGroupSessionTimeoutTooSmall", *ALL)
def test_session_timeout_below_the_broker_minimum_is_refused(profile: str) -> None:
    result = Kafka(profile).dynamic_join(session=GROUP_MIN_SESSION_TIMEOUT - 1)
    assert result.error is Errors.INVALID_SESSION_TIMEOUT


@restates("testJoinGroupSessionTimeoutTooLarge", *ALL)
def test_session_timeout_above_the_broker_maximum_is_refused(profile: str) -> None:
    result = Kafka(profile).dynamic_join(session=GROUP_MAX_SESSION_TIMEOUT + 1)
    assert result.error is Errors.INVALID_SESSION_TIMEOUT


@restates("testJoinGroupUnknownConsumerNewGroup", *ALL)
def test_known_member_id_to_an_absent_group_is_unknown(profile: str) -> None:
    k = Kafka(profile)
    assert k.dynamic_join(MEMBER_ID).error is Errors.UNKNOWN_MEMBER_ID
    assert k.static_join(MEMBER_ID, INSTANCE).error is Errors.UNKNOWN_MEMBER_ID


@restates("testInvalidGroupId", *ALL)
def test_empty_group_id_is_invalid_for_join(profile: str) -> None:
    assert Kafka(profile).dynamic_join(group_id="").error is Errors.INVALID_GROUP_ID


@restates("testValidJoinGroup", *ALL)
def test_first_member_joins_after_the_member_id_bounce(profile: str) -> None:
    assert Kafka(profile).dynamic_join().error is Errors.NONE


@restates("testJoinGroupInconsistentProtocolType", *ALL)
def test_other_protocol_type_is_inconsistent(profile: str) -> None:
    k = Kafka(profile)
    assert k.dynamic_join().error is Errors.NONE
    assert done(k.send_join(protocol_type="connect")).error is Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testJoinGroupWithEmptyProtocolType", *ALL)
def test_empty_protocol_type_is_inconsistent(profile: str) -> None:
    k = Kafka(profile)
    assert k.dynamic_join(protocol_type="").error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert k.static_join("", INSTANCE, protocol_type="").error is Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testJoinGroupWithEmptyGroupProtocol", *ALL)
def test_no_protocols_is_inconsistent(profile: str) -> None:
    assert Kafka(profile).dynamic_join(protocols=()).error is Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testJoinGroupInconsistentGroupProtocol", *ALL)
def test_a_protocol_no_member_supports_is_refused_before_the_member_id_bounce(profile: str) -> None:
    """The second member's first (unknown-id) JoinGroup is already refused, so the helper returns without moving
    the clock; the first member's join completes once the test moves it past the initial delay."""
    k = Kafka(profile)
    first = k.send_join(protocols=(("range", b""),))
    other = k.dynamic_join(protocols=(("roundrobin", b""),))
    k.advance(DELAY + 1)
    assert done(first).error is Errors.NONE
    assert other.error is Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testJoinGroupUnknownConsumerExistingGroup", *ALL)
def test_unknown_member_id_to_an_existing_group_is_unknown(profile: str) -> None:
    k = Kafka(profile)
    assert k.dynamic_join().error is Errors.NONE
    assert done(k.send_join("memberId")).error is Errors.UNKNOWN_MEMBER_ID


@restates("testJoinGroupUnknownConsumerNewDeadGroup", *ALL)
def test_join_of_a_dead_group_is_coordinator_not_available(profile: str) -> None:
    k = Kafka(profile)
    k.poke_add_group(DEAD_GROUP, DEAD)
    assert k.dynamic_join(group_id=DEAD_GROUP).error is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testJoinGroupSecondJoinInconsistentProtocol", *ALL)
def test_pending_member_with_no_protocols_is_refused_then_accepted(profile: str) -> None:
    k = Kafka(profile)
    first = done(k.send_join(require_known=True))
    assert first.error is Errors.MEMBER_ID_REQUIRED
    assert done(k.send_join(first.member_id, (), require_known=True)).error is Errors.INCONSISTENT_GROUP_PROTOCOL
    future = k.send_join(first.member_id, PROTOCOLS, require_known=True)
    k.advance(DELAY + 1)
    assert done(future).error is Errors.NONE


def _stable_single_member(k: Kafka) -> tuple[str, int]:
    first = k.dynamic_join()
    assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    return first.member_id, first.generation_id


@restates("testJoinGroupFromUnchangedFollowerDoesNotRebalance", *ALL)
def test_follower_rejoining_with_unchanged_metadata_gets_the_current_generation(profile: str) -> None:
    k = Kafka(profile)
    first_id, _ = _stable_single_member(k)
    other_future = k.send_join()
    join = done(k.send_join(first_id))
    other = done(other_future)
    assert join.error is Errors.NONE and other.error is Errors.NONE
    assert join.generation_id == other.generation_id
    assert join.leader_id == first_id and other.leader_id == first_id
    follower = done(k.send_join(other.member_id))
    assert follower.error is Errors.NONE and follower.generation_id == join.generation_id


@restates("testJoinGroupFromUnchangedLeaderShouldRebalance", *ALL)
def test_leader_rejoining_a_stable_group_starts_a_new_generation(profile: str) -> None:
    k = Kafka(profile)
    first_id, generation = _stable_single_member(k)
    second = done(k.send_join(first_id))
    assert second.error is Errors.NONE and second.generation_id != generation


@restates("testGenerationIdIncrementsOnRebalance", *ALL)
def test_generation_increments_on_rebalance(profile: str) -> None:
    k = Kafka(profile)
    first_id, generation = _stable_single_member(k)
    assert generation == 1
    rejoin = done(k.send_join(first_id))
    assert (rejoin.error, rejoin.generation_id) == (Errors.NONE, 2)


@restates("testJoinGroupProtocolTypeIsNotProvidedWhenAnErrorOccurs", "2.7.0", "3.9.0")
def test_error_answer_carries_no_protocol_type(profile: str) -> None:
    result = done(Kafka(profile).send_join("fake-id", PROTOCOL_SUPERSET, LEADER))
    assert result.error is Errors.UNKNOWN_MEMBER_ID and result.protocol_type is None


@restates("testJoinGroupReturnsTheProtocolType", "2.7.0", "3.9.0")
def test_join_answers_carry_the_protocol_type(profile: str) -> None:
    k = Kafka(profile)
    leader = k.send_join("", PROTOCOL_SUPERSET, LEADER)
    follower = k.send_join("", PROTOCOL_SUPERSET, FOLLOWER)
    k.advance(DELAY + 1)
    k.advance(500 + 1)
    for future in (leader, follower):
        assert done(future).error is Errors.NONE and done(future).protocol_type == PROTOCOL_TYPE


@restates("shouldDelayInitialRebalanceByGroupInitialRebalanceDelayOnEmptyGroup", *ALL)
def test_first_rebalance_waits_the_initial_delay(profile: str) -> None:
    k = Kafka(profile)
    future = k.send_join()
    k.advance(DELAY // 2)
    parked(future)
    k.advance(DELAY // 2 + 1)
    assert done(future).error is Errors.NONE


@restates("shouldResetRebalanceDelayWhenNewMemberJoinsGroupInInitialRebalance", *ALL)
def test_a_member_joining_in_the_initial_delay_extends_it(profile: str) -> None:
    k = Kafka(profile)
    rebalance = DELAY * 3
    first = k.send_join(rebalance=rebalance)
    k.advance(DELAY - 1)
    second = k.send_join(rebalance=rebalance)
    k.advance(2)
    k.advance(DELAY // 2 + 1)     # past the first delay: a second one started when it ran out
    parked(first)
    parked(second)
    k.advance(DELAY // 2)
    assert done(first).error is Errors.NONE and done(second).error is Errors.NONE


@restates("shouldDelayRebalanceUptoRebalanceTimeout", *ALL)
def test_initial_delay_is_bounded_by_the_rebalance_timeout(profile: str) -> None:
    k = Kafka(profile)
    rebalance = DELAY * 2
    first, second = k.send_join(rebalance=rebalance), k.send_join(rebalance=rebalance)
    k.advance(DELAY + 1)
    third = k.send_join(rebalance=rebalance)
    k.advance(DELAY)
    for future in (first, second, third):
        parked(future)
    k.advance(1)
    for future in (first, second, third):
        assert done(future).error is Errors.NONE


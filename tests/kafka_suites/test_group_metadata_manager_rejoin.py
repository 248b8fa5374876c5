"""GroupMetadataManagerTest (Kafka 4.1.1), restated: the initial rebalance delay, known members rejoining,
join completion, new-member expiry and a static member replaced in Stable (R12)."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl import JoinGroupResult
from impl.java_gc.log import append_error
from tests.kafka_suites.gmm_context import (GROUP, INITIAL_DELAY_MS, context, create_group, group, hb_key, join,
                                            join_and_complete, join_as_dynamic_and_complete_join, protocols, sync,
                                            timer)
from tests.kafka_suites.gmm_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]
E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


@restates("testJoinGroupProtocolTypeIsNotProvidedWhenAnErrorOccurs", "4.1.1")
def test_an_error_answer_carries_no_protocol_type(profile: str) -> None:
    c = context(profile)
    f = join(c, "member-id")
    assert f.result.error is Errors.UNKNOWN_MEMBER_ID and f.result.protocol_type is None


@restates("testJoinGroupReturnsTheProtocolType", "4.1.1")
def test_join_answers_carry_the_protocol_type(profile: str) -> None:
    c = context(profile)
    create_group(c)
    leader, member = join(c), join(c)
    assert not leader.done and not member.done
    c.advance(INITIAL_DELAY_MS)
    for f in (leader, member):
        assert f.result.error is Errors.NONE and f.result.protocol_type == "consumer"


@restates("testDelayInitialRebalanceByGroupInitialRebalanceDelayOnEmptyGroup", "4.1.1")
def test_the_first_join_waits_the_initial_rebalance_delay(profile: str) -> None:
    c = context(profile)
    create_group(c)
    f = join(c)
    c.advance(INITIAL_DELAY_MS // 2)
    assert not f.done
    c.advance(INITIAL_DELAY_MS // 2 + 1)
    assert f.result.error is Errors.NONE


@restates("testResetRebalanceDelayWhenNewMemberJoinsGroupDuringInitialRebalance", "4.1.1")
def test_a_member_joining_during_the_initial_delay_extends_it(profile: str) -> None:
    c = context(profile)
    create_group(c)
    first = join(c, rebalance=INITIAL_DELAY_MS * 3)
    c.advance(INITIAL_DELAY_MS - 1)
    second = join(c, rebalance=INITIAL_DELAY_MS * 3)
    c.advance(2)
    c.advance(INITIAL_DELAY_MS // 2 + 1)
    assert not first.done and not second.done
    c.advance(INITIAL_DELAY_MS // 2)
    assert first.result.error is Errors.NONE and second.result.error is Errors.NONE


@restates("testDelayRebalanceUptoRebalanceTimeout", "4.1.1")
def test_the_initial_delay_is_extended_up_to_the_rebalance_timeout(profile: str) -> None:
    c = context(profile)
    create_group(c)
    first, second = join(c, rebalance=INITIAL_DELAY_MS * 2), join(c, rebalance=INITIAL_DELAY_MS * 2)
    c.advance(INITIAL_DELAY_MS + 1)
    third = join(c, rebalance=INITIAL_DELAY_MS * 2)
    c.advance(INITIAL_DELAY_MS - 1)
    assert not any(f.done for f in (first, second, third))
    c.advance(1)
    assert all(f.result.error is Errors.NONE for f in (first, second, third))


@restates("testJoinGroupReplaceStaticMember", "4.1.1")
def test_a_static_member_restarting_while_it_joins_fences_its_old_join(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    old = join(c, instance="group-instance-id", session=5000)
    assert not old.done and (g.num_members_awaiting_join, len(g.members)) == (1, 1)
    new = join(c, instance="group-instance-id", session=5000)
    assert not new.done and old.result.error is Errors.FENCED_INSTANCE_ID
    assert (g.num_members_awaiting_join, len(g.members)) == (1, 1)
    c.advance(INITIAL_DELAY_MS)
    assert new.result.error is Errors.NONE and (g.num_members_awaiting_join, len(g.members)) == (0, 1)


@restates("testHeartbeatExpirationShouldRemovePendingMember", "4.1.1")
def test_a_pending_member_goes_when_its_session_expires(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    f = join(c, session=1000, known=True)
    assert f.result.error is Errors.MEMBER_ID_REQUIRED and (len(g.members), len(g.pending_join_members)) == (0, 1)
    c.advance(1000)
    assert not g.pending_join_members


@restates("testHeartbeatExpirationShouldRemoveMember", "4.1.1")
def test_a_new_member_expiring_empties_the_group_and_writes_it(profile: str) -> None:
    c = context(profile, group_initial_rebalance_delay_ms=10 * 60 * 1000)
    g = create_group(c)
    f = join(c)
    assert not f.done and len(g.members) == 1
    member_id = g.leader_id
    c.take_fired()
    c.advance(c.config.new_member_join_timeout_ms)
    assert c.take_fired() == [(hb_key(member_id), "heartbeat", True)]
    assert c.group_record(GROUP) == (1, "consumer", None, None, ())   # the Empty group's record, generation 1
    assert f.result.error is Errors.UNKNOWN_MEMBER_ID and not g.members


@restates("testExistingMemberJoinDeadGroup", "4.1.1")
def test_a_known_member_joining_a_dead_group_is_coordinator_not_available(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    member_id = join_as_dynamic_and_complete_join(c, session=500, rebalance=500).member_id
    assert g.has_member(member_id)
    g.transition_to(D)
    assert join(c).result.error is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testJoinGroupExistingPendingMemberWithGroupInstanceIdThrowsException", "4.1.1")
def test_a_pending_member_joining_with_an_instance_id_is_an_illegal_state(profile: str) -> None:
    c = context(profile)
    create_group(c)
    member_id = join(c, known=True).result.member_id
    f = join(c, member_id, instance="group-instance-id")
    # GMM throws IllegalStateException; through the service it is UNKNOWN_SERVER_ERROR, and logged
    assert f.result.error is Errors.UNKNOWN_SERVER_ERROR
    assert any("unexpected JoinGroup with groupInstanceId=group-instance-id" in e for e in c.errors)


@restates("testJoinGroupExistingMemberUpdatedMetadataTriggersRebalance", "4.1.1")
def test_new_metadata_in_completing_rebalance_starts_the_next_generation(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    member_id = join_as_dynamic_and_complete_join(c, session=500, rebalance=500).member_id
    assert g.members[member_id].protocols == tuple(protocols("range")) and g.state is CR and g.generation_id == 1
    f = join(c, member_id, names=("range", "roundrobin"))
    assert f.result.error is Errors.NONE and g.state is CR and g.generation_id == 2
    assert g.members[member_id].protocols == tuple(protocols("range", "roundrobin"))


@restates("testJoinGroupAsExistingLeaderTriggersRebalanceInStableState", "4.1.1")
def test_the_leader_rejoining_a_stable_group_rebalances(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    member_id = join_as_dynamic_and_complete_join(c, session=500, rebalance=500).member_id
    assert g.state is CR and g.is_leader(member_id) and g.generation_id == 1
    g.transition_to(S)
    f = join(c, member_id)
    assert f.result.error is Errors.NONE and g.state is CR and g.generation_id == 2


def _two_member_group(c: object) -> tuple[object, str, str]:
    g = create_group(c)
    leader_id = join_as_dynamic_and_complete_join(c, session=500, rebalance=500).leader_id
    assert g.generation_id == 1
    member = join(c)
    assert not member.done
    leader = join(c, leader_id)
    assert leader.result.error is Errors.NONE and member.result.error is Errors.NONE
    assert (g.state, len(g.members), g.generation_id) == (CR, 2, 2)
    return g, leader_id, member.result.member_id


@restates("testJoinGroupAsExistingMemberWithUpdatedMetadataTriggersRebalanceInStableState", "4.1.1")
def test_a_follower_with_new_metadata_in_stable_rebalances(profile: str) -> None:
    c = context(profile)
    g, leader_id, member_id = _two_member_group(c)
    g.transition_to(S)
    member = join(c, member_id, names=("range", "roundrobin"))
    assert not member.done
    leader = join(c, leader_id)
    assert leader.done and member.result.error is Errors.NONE
    assert (g.state, g.generation_id, len(g.members)) == (CR, 3, 2)


@restates("testJoinGroupExistingMemberDoesNotTriggerRebalanceInStableState", "4.1.1")
def test_a_follower_with_the_same_metadata_in_stable_gets_the_current_generation(profile: str) -> None:
    c = context(profile)
    g, _, member_id = _two_member_group(c)
    g.transition_to(S)
    f = join(c, member_id)
    assert f.result.error is Errors.NONE and f.result.generation_id == 2 and g.state is S


@restates("testJoinGroupExistingMemberInEmptyState", "4.1.1")
def test_a_known_member_joining_an_empty_group_is_unknown(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    member_id = join_as_dynamic_and_complete_join(c, session=500, rebalance=500).member_id
    g.transition_to(PR)
    g.transition_to(E)
    f = join(c, member_id)
    assert f.result.error is Errors.UNKNOWN_MEMBER_ID and f.result.generation_id == -1


@restates("testCompleteJoinRemoveNotYetRejoinedDynamicMembers", "4.1.1")
def test_join_completion_drops_dynamic_members_that_did_not_rejoin(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    assert join_as_dynamic_and_complete_join(c, session=1000, rebalance=1000).error is Errors.NONE
    member = join(c, session=1000, rebalance=1000)
    assert not member.done and len(g.members) == 2 and g.state is PR
    c.advance(1000)
    assert member.result.error is Errors.NONE and list(g.members) == [member.result.member_id]
    assert g.generation_id == 2


@restates("testCompleteJoinPhaseInEmptyStateSkipsRebalance", "4.1.1")
def test_join_completion_of_a_dead_group_does_nothing(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    f = join(c, session=1000, rebalance=1000)
    assert not f.done and g.generation_id == 0 and g.state is PR
    g.transition_to(D)
    c.advance(INITIAL_DELAY_MS)
    assert g.generation_id == 0


@restates("testCompleteJoinPhaseNoMembersRejoinedExtendsJoinPhase", "4.1.1")
def test_join_completion_with_nobody_rejoined_waits_another_rebalance_timeout(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    req = {"session": 30000, "rebalance": 10000}
    first_id = join_and_complete(c, known=True, skip=True, instance="first-instance-id", **req).member_id
    second = join(c, instance="second-instance-id", **req)
    assert not second.done
    first = join(c, first_id, instance="first-instance-id", **req)
    assert first.result.error is Errors.NONE and second.result.error is Errors.NONE
    assert (len(g.members), g.generation_id) == (2, 2)
    c.prepare_rebalance(g)   # Kafka's test triggers a rebalance directly
    assert (len(g.members), g.state, g.num_members_awaiting_join) == (2, PR, 0)
    for _ in range(2):
        c.advance(10000)
        assert timer(c, f"join-{GROUP}").deadline_ms - c.now_ms == 10000
    assert (g.state, len(g.members), g.generation_id) == (PR, 2, 2)
    first = join(c, first_id, instance="first-instance-id", **req)
    assert not first.done and g.state is PR
    second = join(c, second.result.member_id, instance="second-instance-id", **req)
    assert first.result.error is Errors.NONE and second.result.error is Errors.NONE
    assert (g.state, len(g.members), g.generation_id) == (CR, 2, 3)


def _static_member_in_stable(c: object, skip: bool, **req: object) -> tuple[object, str]:
    g = create_group(c)
    response = join_and_complete(c, known=True, skip=skip, instance="group-instance-id", **req)
    assert (len(g.members), g.generation_id, g.state) == (1, 1, CR)
    g.transition_to(S)   # as if the sync phase had succeeded
    return g, response.member_id


@restates("testReplaceStaticMemberInStableStateNoError", "4.1.1")
def test_a_static_member_replaced_in_stable_is_persisted_and_answered(profile: str) -> None:
    for skip in (True, False):
        c = context(profile, append_mode="deferred")
        g, old_id = _static_member_in_stable(c, skip)
        c.complete_appends()
        f = join(c, instance="group-instance-id", names=("range", "roundrobin"), rebalance=7000, session=4500,
                 known=True, skip=skip)
        assert [a.kind for a in c.pending_appends()] == ["static"] and not f.done
        c.complete_appends()
        new_id = g.static_member_id("group-instance-id")
        members = ((new_id, "group-instance-id", b"foo"),) if skip else ()
        assert f.result == JoinGroupResult(Errors.NONE, 1, "consumer", "range", new_id if skip else old_id, new_id,
                                           members, skip)
        m = g.members[new_id]
        assert (m.group_instance_id, m.rebalance_timeout_ms, m.session_timeout_ms) == ("group-instance-id", 7000, 4500)
        assert m.protocols == tuple(protocols("range", "roundrobin"))
        assert (len(g.members), g.generation_id, g.state) == (1, 1, S)


@restates("testReplaceStaticMemberInStableStateWithUpdatedProtocolTriggersRebalance", "4.1.1")
def test_a_static_member_replaced_with_a_new_protocol_rebalances(profile: str) -> None:
    c = context(profile)
    g, _ = _static_member_in_stable(c, True, names=("range", "roundrobin"))
    f = join(c, instance="group-instance-id", names=("roundrobin",))
    assert f.result.error is Errors.NONE and (len(g.members), g.generation_id, g.state) == (1, 2, CR)


@restates("testReplaceStaticMemberInStableStateErrors", "4.1.1")
def test_a_failed_static_replacement_write_reverts_the_member(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    g, old_id = _static_member_in_stable(c, False, rebalance=4000, session=3000)
    c.complete_appends()
    f = join(c, instance="group-instance-id", names=("range", "roundrobin"), rebalance=7000, session=6000)
    assert [a.kind for a in c.pending_appends()] == ["static"] and not f.done
    c.complete_appends(ok=False, error=Errors.UNKNOWN_TOPIC_OR_PARTITION)
    assert f.result == JoinGroupResult(Errors.COORDINATOR_NOT_AVAILABLE, 1, "consumer", "range", old_id, "")
    m = g.members[g.static_member_id("group-instance-id")]
    # Kafka's test compares with the protocol collection it mutated after the first join (Java aliasing): what
    # the coordinator restores is the member's old protocols
    assert (m.member_id, m.group_instance_id, m.rebalance_timeout_ms, m.session_timeout_ms) == \
        (old_id, "group-instance-id", 4000, 3000)
    assert m.protocols == tuple(protocols("range"))
    assert (len(g.members), g.generation_id, g.state) == (1, 1, S)


@restates("testReplaceStaticMemberInStableStateSucceeds", "4.1.1")
def test_a_successful_static_replacement_write_keeps_the_new_member(profile: str) -> None:
    for skip in (True, False):
        c = context(profile, append_mode="deferred")
        g, old_id = _static_member_in_stable(c, skip)
        c.complete_appends()
        f = join(c, instance="group-instance-id", names=("range", "roundrobin"), rebalance=7000, session=6000,
                 known=True, skip=skip)
        assert not f.done
        c.complete_appends()
        new_id = f.result.member_id
        members = group(c).current_members() if skip else ()
        assert f.result == JoinGroupResult(Errors.NONE, 1, "consumer", "range", new_id if skip else old_id, new_id,
                                           members, skip)
        m = g.members[g.static_member_id("group-instance-id")]
        assert m.member_id != old_id and (m.rebalance_timeout_ms, m.session_timeout_ms) == (7000, 6000)
        assert m.protocols == tuple(protocols("range", "roundrobin"))
        assert (len(g.members), g.generation_id, g.state) == (1, 1, S)


@restates("testReplaceStaticMemberInCompletingRebalanceStateTriggersRebalance", "4.1.1")
def test_a_static_member_replaced_in_completing_rebalance_rebalances(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    assert join_and_complete(c, known=True, skip=True, instance="group-instance-id").error is Errors.NONE
    assert (len(g.members), g.generation_id, g.state) == (1, 1, CR)
    f = join(c, instance="group-instance-id")
    assert f.result.error is Errors.NONE and (len(g.members), g.generation_id, g.state) == (1, 2, CR)


@restates("testJoinGroupAppendErrorConversion", "4.1.1")
def test_append_errors_map_to_coordinator_errors(profile: str) -> None:
    expected = {Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
                Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
                Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
                Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
                Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
                Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
                Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
                Errors.INVALID_FETCH_SIZE: Errors.UNKNOWN_SERVER_ERROR,
                Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND}
    assert {e: append_error(e) for e in expected} == expected
    # and through the runtime: a leader's assignment write failing with each error answers the mapped error
    for error, mapped in expected.items():
        c = context(profile, append_mode="deferred")
        leader = join_as_dynamic_and_complete_join(c)
        f = sync(c, leader.member_id, leader.generation_id)
        c.complete_appends(ok=False, error=error)
        assert f.result.error is mapped


@restates("testNewMemberTimeoutCompletion", "4.1.1")
def test_the_new_member_timeout_ends_with_the_join_phase(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    timeout = c.config.new_member_join_timeout_ms
    f = join(c, session=timeout + 5000)
    c.advance(INITIAL_DELAY_MS)
    assert f.result.error is Errors.NONE and (g.generation_id, g.state) == (1, CR)
    assert not any(m.is_new for m in g.members.values())
    assert sync(c, f.result.member_id, f.result.generation_id).result.error is Errors.NONE
    c.advance(timeout)
    assert len(g.members) == 1   # the 5-minute new-member timer was replaced by the session timer
    c.take_fired()
    c.advance(5000)
    assert c.take_fired() == [(hb_key(f.result.member_id), "heartbeat", True)]
    assert c.group_record(GROUP) == (2, "consumer", None, None, ())
    assert not g.members and g.state is E


@restates("testNewMemberFailureAfterJoinGroupCompletion", "4.1.1")
def test_a_member_new_at_join_completion_then_expires_by_its_session(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    response = join_and_complete(c, known=False, skip=False, session=5000, rebalance=10000)
    assert response.leader_id == response.member_id and response.generation_id == 1
    assert sync(c, response.member_id, 1).result.error is Errors.NONE and (g.state, g.generation_id) == (S, 1)
    other = join(c, session=5000, rebalance=10000)
    again = join(c, response.member_id, session=5000, rebalance=10000)
    assert other.result.error is Errors.NONE and again.result.error is Errors.NONE
    # verifySessionExpiration: every member's session timer fires; the last removal writes the Empty group
    keys = {hb_key(m) for m in g.members}
    c.take_fired()
    c.advance(5000)
    assert {k for k, _, live in c.take_fired() if live} == keys
    assert c.group_record(GROUP) == (g.generation_id, "consumer", None, None, ())
    assert g.state is E and not g.members

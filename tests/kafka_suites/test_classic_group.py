"""classic/ClassicGroupTest.java (Kafka 4.1.1), restated against impl/java_gc/group.py: the state table, protocol
selection (R11), members, pending and pending-sync members, leader election, static replacement (R12) and the
offset-commit validation of a classic group. Kafka's asserted values; our code."""
from __future__ import annotations

import pytest

from core.types import Errors, GroupState
from impl.group import IllegalStateError
from impl.java_gc.choices import Choices
from impl.java_gc.group import ClassicGroup, ClassicGroupMember, RequestError
from impl.java_gc.members import MembersMixin
from impl.results import JoinGroupResult, ResponseFuture, SyncGroupResult
from tests.kafka_suites.registry import Suite, restates

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)

_NAMES = (
    "testCanRebalanceWhenStable", "testCanRebalanceWhenCompletingRebalance",
    "testCannotRebalanceWhenPreparingRebalance", "testCannotRebalanceWhenDead",
    "testStableToPreparingRebalanceTransition", "testStableToDeadTransition",
    "testAwaitingRebalanceToPreparingRebalanceTransition", "testPreparingRebalanceToDeadTransition",
    "testPreparingRebalanceToEmptyTransition", "testEmptyToDeadTransition", "testAwaitingRebalanceToStableTransition",
    "testEmptyToStableIllegalTransition", "testStableToStableIllegalTransition",
    "testEmptyToAwaitingRebalanceIllegalTransition", "testPreparingRebalanceToPreparingRebalanceIllegalTransition",
    "testPreparingRebalanceToStableIllegalTransition", "testAwaitingRebalanceToAwaitingRebalanceIllegalTransition",
    "testDeadToDeadIllegalTransition", "testDeadToStableIllegalTransition",
    "testDeadToPreparingRebalanceIllegalTransition", "testDeadToAwaitingRebalanceIllegalTransition",
    "testSelectProtocol", "testSelectProtocolRaisesIfNoMembers", "testSelectProtocolChoosesCompatibleProtocol",
    "testSupportsProtocols", "testSubscribedTopics", "testSubscribedTopicsNonConsumerGroup", "testInitNextGeneration",
    "testInitNextGenerationEmptyGroup", "testUpdateMember", "testReplaceGroupInstanceWithNonExistingMember",
    "testReplaceGroupInstance", "testCompleteJoinFuture", "testNotCompleteJoinFuture", "testCompleteSyncFuture",
    "testNotCompleteSyncFuture", "testCannotAddPendingMemberIfStable", "testRemovalFromPendingAfterMemberIsStable",
    "testRemovalFromPendingWhenMemberIsRemoved", "testCannotAddStaticMemberIfAlreadyPresent",
    "testCannotAddPendingSyncOfUnknownMember", "testCannotRemovePendingSyncOfUnknownMember",
    "testCanAddAndRemovePendingSyncMember", "testRemovalFromPendingSyncWhenMemberIsRemoved",
    "testNewGenerationClearsPendingSyncMembers", "testElectNewJoinedLeader",
    "testMaybeElectNewJoinedLeaderChooseExisting", "testValidateOffsetCommit", "testValidateOffsetDelete",
    "testValidateDeleteGroup", "testOffsetExpirationCondition", "testIsSubscribedToTopic", "testIsInStates",
    "testCompleteAllJoinFutures", "testCompleteAllSyncFutures", "testFromConsumerGroupWithJoiningMember",
    "testFromConsumerGroupWithoutJoiningMember",
)
_SUBSCRIPTIONS = "decodes the consumer protocol's subscriptions (for offset expiration): the 4.1 runtime keeps no " \
                 "offsets and decodes no subscription"
_ADMIN = "OffsetDelete / DeleteGroups validation: kgc models the membership protocol, not the admin APIs"
_MIXED = "converts a KIP-848 consumer group to a classic group, or completes every parked request at such a " \
         "conversion (SPEC-4x.md M3/M5): out of scope for profile 4.1 at first"
SUITE = Suite(
    "group-coordinator/src/test/java/org/apache/kafka/coordinator/group/classic/ClassicGroupTest.java",
    {"4.1.1": _NAMES},
    {"testSubscribedTopics": _SUBSCRIPTIONS, "testSubscribedTopicsNonConsumerGroup": _SUBSCRIPTIONS,
     "testOffsetExpirationCondition": _SUBSCRIPTIONS, "testIsSubscribedToTopic": _SUBSCRIPTIONS,
     "testValidateOffsetDelete": _ADMIN, "testValidateDeleteGroup": _ADMIN,
     "testIsInStates": "the ListGroups state filter: not part of kgc's classic runtime",
     "testCompleteAllJoinFutures": _MIXED, "testCompleteAllSyncFutures": _MIXED,
     "testFromConsumerGroupWithJoiningMember": _MIXED, "testFromConsumerGroupWithoutJoiningMember": _MIXED})

MEMBER_ID, INSTANCE_ID = "memberId", "groupInstanceId"


def member(member_id: str = MEMBER_ID, names: tuple[str, ...] = ("roundrobin",), instance: str | None = None,
           protocol_type: str = "consumer") -> ClassicGroupMember:
    return ClassicGroupMember(member_id, instance, "clientId", "clientHost", 60000, 10000, protocol_type,
                              tuple((n, b"") for n in names))


def future(api: str = "JoinGroup") -> ResponseFuture:
    return ResponseFuture(("test", api), api, [])


@pytest.fixture
def g() -> ClassicGroup:
    return ClassicGroup("groupId", 1)


def walk(group: ClassicGroup, *states: GroupState) -> ClassicGroup:
    for state in states:
        group.transition_to(state)
    return group


LEGAL = {
    "testStableToPreparingRebalanceTransition": ((PR,), PR),
    "testStableToDeadTransition": ((D,), D),
    "testAwaitingRebalanceToPreparingRebalanceTransition": ((PR, CR, PR), PR),
    "testPreparingRebalanceToDeadTransition": ((PR, D), D),
    "testPreparingRebalanceToEmptyTransition": ((PR, E), E),
    "testEmptyToDeadTransition": ((PR, E, D), D),
    "testAwaitingRebalanceToStableTransition": ((PR, CR, S), S),
    "testDeadToDeadIllegalTransition": ((PR, D, D), D),   # Dead -> Dead is legal, despite the name
}
ILLEGAL = {
    "testEmptyToStableIllegalTransition": ((), S),
    "testStableToStableIllegalTransition": ((PR, CR, S), S),
    "testEmptyToAwaitingRebalanceIllegalTransition": ((), CR),
    "testPreparingRebalanceToPreparingRebalanceIllegalTransition": ((PR,), PR),
    "testPreparingRebalanceToStableIllegalTransition": ((PR,), S),
    "testAwaitingRebalanceToAwaitingRebalanceIllegalTransition": ((PR, CR), CR),
    "testDeadToStableIllegalTransition": ((PR, D), S),
    "testDeadToPreparingRebalanceIllegalTransition": ((PR, D), PR),
    "testDeadToAwaitingRebalanceIllegalTransition": ((PR, D), CR),
}


@restates("testStableToPreparingRebalanceTransition", "4.1.1")
@restates("testStableToDeadTransition", "4.1.1")
@restates("testAwaitingRebalanceToPreparingRebalanceTransition", "4.1.1")
@restates("testPreparingRebalanceToDeadTransition", "4.1.1")
@restates("testPreparingRebalanceToEmptyTransition", "4.1.1")
@restates("testEmptyToDeadTransition", "4.1.1")
@restates("testAwaitingRebalanceToStableTransition", "4.1.1")
@restates("testDeadToDeadIllegalTransition", "4.1.1")
def test_legal_transitions(profile: str) -> None:
    for path, end in LEGAL.values():
        assert walk(ClassicGroup("groupId", 1), *path).state is end


@restates("testEmptyToStableIllegalTransition", "4.1.1")
@restates("testStableToStableIllegalTransition", "4.1.1")
@restates("testEmptyToAwaitingRebalanceIllegalTransition", "4.1.1")
@restates("testPreparingRebalanceToPreparingRebalanceIllegalTransition", "4.1.1")
@restates("testPreparingRebalanceToStableIllegalTransition", "4.1.1")
@restates("testAwaitingRebalanceToAwaitingRebalanceIllegalTransition", "4.1.1")
@restates("testDeadToStableIllegalTransition", "4.1.1")
@restates("testDeadToPreparingRebalanceIllegalTransition", "4.1.1")
@restates("testDeadToAwaitingRebalanceIllegalTransition", "4.1.1")
def test_illegal_transitions(profile: str) -> None:
    for path, target in ILLEGAL.values():
        with pytest.raises(IllegalStateError):
            walk(ClassicGroup("groupId", 1), *path).transition_to(target)


@restates("testCanRebalanceWhenStable", "4.1.1")
@restates("testCanRebalanceWhenCompletingRebalance", "4.1.1")
@restates("testCannotRebalanceWhenPreparingRebalance", "4.1.1")
@restates("testCannotRebalanceWhenDead", "4.1.1")
def test_which_states_can_rebalance(profile: str) -> None:
    assert ClassicGroup("groupId", 1).can_rebalance()   # an Empty group (Kafka's test name says Stable)
    assert walk(ClassicGroup("groupId", 1), PR, CR).can_rebalance()
    assert not walk(ClassicGroup("groupId", 1), PR).can_rebalance()
    assert not walk(ClassicGroup("groupId", 1), PR, E, D).can_rebalance()


@restates("testSelectProtocol", "4.1.1")
def test_select_protocol_by_votes(profile: str, g: ClassicGroup) -> None:
    choices = Choices()
    g.add(member(names=("range", "roundrobin")))
    g.add(member("member2", names=("roundrobin", "range")))
    assert g.select_protocol(choices) in ("range", "roundrobin")   # a tie: either (R11)
    g.add(member("member3", names=("roundrobin", "range")))
    assert g.select_protocol(choices) == "roundrobin"


@restates("testSelectProtocolRaisesIfNoMembers", "4.1.1")
def test_select_protocol_of_an_empty_group(profile: str, g: ClassicGroup) -> None:
    with pytest.raises(IllegalStateError):
        g.select_protocol(Choices())


@restates("testSelectProtocolChoosesCompatibleProtocol", "4.1.1")
def test_select_protocol_among_common_ones(profile: str, g: ClassicGroup) -> None:
    g.add(member(names=("range", "roundrobin")))
    g.add(member("member2", names=("roundrobin", "foo")))
    assert g.select_protocol(Choices()) == "roundrobin"


@restates("testSupportsProtocols", "4.1.1")
def test_supports_protocols(profile: str, g: ClassicGroup) -> None:
    assert g.supports_protocols("consumer", ("range", "roundrobin"))
    g.add(member(names=("range", "roundrobin")))
    g.transition_to(PR)
    assert g.supports_protocols("consumer", ("roundrobin", "foo"))
    assert g.supports_protocols("consumer", ("range", "bar"))
    assert not g.supports_protocols("consumer", ("foo", "bar"))


@restates("testInitNextGeneration", "4.1.1")
def test_init_next_generation(profile: str, g: ClassicGroup) -> None:
    g.transition_to(PR)
    g.add(member(), future())
    assert (g.generation_id, g.protocol_name) == (0, None)
    g.init_next_generation(Choices())
    assert (g.generation_id, g.protocol_name) == (1, "roundrobin")


@restates("testInitNextGenerationEmptyGroup", "4.1.1")
def test_init_next_generation_of_an_empty_group(profile: str, g: ClassicGroup) -> None:
    assert (g.state, g.generation_id, g.protocol_name) == (E, 0, None)
    g.transition_to(PR)
    g.init_next_generation(Choices())
    assert (g.generation_id, g.protocol_name) == (1, None)


@restates("testUpdateMember", "4.1.1")
def test_update_member(profile: str, g: ClassicGroup) -> None:
    m = member()
    g.add(m)
    new_protocols = (("range", b""), ("roundrobin", b""))
    g.update_member(m, new_protocols, 120000, 20000, None)
    assert (g.rebalance_timeout_ms(), m.session_timeout_ms, m.protocols) == (120000, 20000, new_protocols)


@restates("testReplaceGroupInstanceWithNonExistingMember", "4.1.1")
def test_replacing_a_member_that_does_not_exist(profile: str, g: ClassicGroup) -> None:
    with pytest.raises(IllegalStateError):   # Kafka: IllegalArgumentException
        g.replace_static_member(INSTANCE_ID, MEMBER_ID, "newMemberId")


@restates("testReplaceGroupInstance", "4.1.1")
def test_replacing_a_static_member_fences_its_parked_requests(profile: str, g: ClassicGroup) -> None:
    m = member(instance=INSTANCE_ID)
    join, sync = future("JoinGroup"), future("SyncGroup")
    g.add(m, join)
    m.awaiting_sync = sync
    assert g.is_leader(MEMBER_ID) and g.static_member_id(INSTANCE_ID) == MEMBER_ID
    g.replace_static_member(INSTANCE_ID, MEMBER_ID, "newMemberId")
    assert g.is_leader("newMemberId") and g.static_member_id(INSTANCE_ID) == "newMemberId"
    assert join.result.error is Errors.FENCED_INSTANCE_ID and sync.result.error is Errors.FENCED_INSTANCE_ID
    assert m.awaiting_join is None and m.awaiting_sync is None


@restates("testCompleteJoinFuture", "4.1.1")
def test_complete_a_parked_join(profile: str, g: ClassicGroup) -> None:
    m, f = member(), future()
    g.add(m, f)
    assert g.has_all_members_joined()
    assert g.complete_join_future(m, JoinGroupResult(Errors.NONE, -1, None, None, "", MEMBER_ID))
    assert f.result.error is Errors.NONE and f.result.member_id == MEMBER_ID
    assert m.awaiting_join is None and g.num_members_awaiting_join == 0


@restates("testNotCompleteJoinFuture", "4.1.1")
def test_complete_a_join_that_is_not_parked(profile: str, g: ClassicGroup) -> None:
    m = member()
    g.add(m)
    assert not g.complete_join_future(m, JoinGroupResult(Errors.NONE, -1, None, None, "", MEMBER_ID))
    assert m.awaiting_join is None


@restates("testCompleteSyncFuture", "4.1.1")
def test_complete_a_parked_sync(profile: str, g: ClassicGroup) -> None:
    m, f = member(), future("SyncGroup")
    g.add(m)
    m.awaiting_sync = f
    assert g.complete_sync_future(m, SyncGroupResult(Errors.NONE))
    assert g.num_members_awaiting_join == 0 and m.awaiting_sync is None and f.result.error is Errors.NONE


@restates("testNotCompleteSyncFuture", "4.1.1")
def test_complete_a_sync_that_is_not_parked(profile: str, g: ClassicGroup) -> None:
    m = member()
    g.add(m)
    assert not g.complete_sync_future(m, SyncGroupResult(Errors.NONE)) and m.awaiting_sync is None


@restates("testCannotAddPendingMemberIfStable", "4.1.1")
def test_a_member_cannot_become_pending(profile: str, g: ClassicGroup) -> None:
    g.add(member())
    with pytest.raises(IllegalStateError):
        g.add_pending_member(MEMBER_ID)


@restates("testRemovalFromPendingAfterMemberIsStable", "4.1.1")
def test_adding_a_pending_member_ends_its_pending(profile: str, g: ClassicGroup) -> None:
    g.add_pending_member(MEMBER_ID)
    assert not g.has_member(MEMBER_ID) and g.is_pending_member(MEMBER_ID)
    g.add(member())
    assert g.has_member(MEMBER_ID) and not g.is_pending_member(MEMBER_ID)


@restates("testRemovalFromPendingWhenMemberIsRemoved", "4.1.1")
def test_removing_a_pending_member(profile: str, g: ClassicGroup) -> None:
    g.add_pending_member(MEMBER_ID)
    g.remove(MEMBER_ID, Choices())
    assert not g.has_member(MEMBER_ID) and not g.is_pending_member(MEMBER_ID)


@restates("testCannotAddStaticMemberIfAlreadyPresent", "4.1.1")
def test_a_static_member_cannot_be_added_twice(profile: str, g: ClassicGroup) -> None:
    m = member(instance=INSTANCE_ID)
    g.add(m)
    assert g.has_member(MEMBER_ID) and INSTANCE_ID in g.static_members
    with pytest.raises(IllegalStateError):
        g.add(m)


@restates("testCannotAddPendingSyncOfUnknownMember", "4.1.1")
@restates("testCannotRemovePendingSyncOfUnknownMember", "4.1.1")
def test_pending_sync_of_an_unknown_member(profile: str, g: ClassicGroup) -> None:
    with pytest.raises(IllegalStateError):
        g.add_pending_sync_member(MEMBER_ID)
    with pytest.raises(IllegalStateError):
        g.remove_pending_sync_member(MEMBER_ID)


@restates("testCanAddAndRemovePendingSyncMember", "4.1.1")
def test_add_and_remove_a_pending_sync_member(profile: str, g: ClassicGroup) -> None:
    g.add(member())
    g.add_pending_sync_member(MEMBER_ID)
    assert g.pending_sync_members == {MEMBER_ID}
    g.remove_pending_sync_member(MEMBER_ID)
    assert g.pending_sync_members == set()


@restates("testRemovalFromPendingSyncWhenMemberIsRemoved", "4.1.1")
def test_removing_a_member_ends_its_pending_sync(profile: str, g: ClassicGroup) -> None:
    g.add(member(instance=INSTANCE_ID))
    g.add_pending_sync_member(MEMBER_ID)
    g.remove(MEMBER_ID, Choices())
    assert g.pending_sync_members == set()


@restates("testNewGenerationClearsPendingSyncMembers", "4.1.1")
def test_a_new_generation_clears_pending_sync(profile: str, g: ClassicGroup) -> None:
    g.add(member())
    g.transition_to(PR)
    g.add_pending_sync_member(MEMBER_ID)
    g.init_next_generation(Choices())
    assert g.pending_sync_members == set()


@restates("testElectNewJoinedLeader", "4.1.1")
def test_a_joined_member_becomes_leader(profile: str, g: ClassicGroup) -> None:
    g.add(member())
    assert g.is_leader(MEMBER_ID) and g.members[MEMBER_ID].awaiting_join is None
    g.add(member("new-leader"), future())
    g.add(member("new-member"))
    assert g.maybe_elect_new_joined_leader(Choices()) and g.is_leader("new-leader")


@restates("testMaybeElectNewJoinedLeaderChooseExisting", "4.1.1")
def test_a_joined_leader_stays(profile: str, g: ClassicGroup) -> None:
    g.add(member(), future())
    assert g.is_leader(MEMBER_ID)
    g.add(member("new-member"))
    assert g.maybe_elect_new_joined_leader(Choices()) and g.is_leader(MEMBER_ID)


def _validate(group: ClassicGroup, member_id: str, instance: str | None, generation: int) -> Errors:
    try:
        MembersMixin._validate_offset_commit(group, member_id, generation, instance)
    except RequestError as refused:
        return refused.error
    return Errors.NONE


@restates("testValidateOffsetCommit", "4.1.1")
def test_validate_offset_commit(profile: str, g: ClassicGroup) -> None:
    """Non-transactional commits (the version does not matter to a classic group); Kafka's one transactional
    assertion (TxnOffsetCommit without member id accepted) is not part of kgc's API."""
    assert _validate(g, "", "", -1) is Errors.NONE
    g.add(ClassicGroupMember("member-id", "instance-id", "", "", 100, 100, "consumer", (("roundrobin", b""),)))
    g.transition_to(PR)
    g.init_next_generation(Choices())
    assert _validate(g, "", "", -1) is Errors.UNKNOWN_MEMBER_ID
    assert _validate(g, "unknown", "unknown", -1) is Errors.UNKNOWN_MEMBER_ID
    assert _validate(g, "member-id", "unknown", -1) is Errors.UNKNOWN_MEMBER_ID
    assert _validate(g, "member-id", "instance-id", 0) is Errors.ILLEGAL_GENERATION
    assert _validate(g, "member-id", "instance-id", 1) is Errors.REBALANCE_IN_PROGRESS
    g.transition_to(S)
    assert _validate(g, "member-id", "instance-id", 1) is Errors.NONE
    g.replace_static_member("instance-id", "member-id", "new-member-id")
    assert _validate(g, "member-id", "instance-id", 1) is Errors.FENCED_INSTANCE_ID
    g.remove("new-instance-id", Choices())
    g.transition_to(D)
    assert _validate(g, "member-id", "new-instance-id", 1) is Errors.COORDINATOR_NOT_AVAILABLE

"""Kafka's GroupMetadataTest.scala restated against impl's GroupMetadata (impl/group.py) at 2.4.1, 2.7.0 and 3.9.0:
the state machine, protocol selection and support, and a new generation. The member bookkeeping (replacement of a
static member, response callbacks, pending and pending-sync members) is restated in test_group_metadata_members.py;
both modules share this ``SUITE``.

Kafka's tests build a group in Empty and drive its methods directly; so do these, on the profile of the tag (the
group's profile holds the release's state table and guards). The expected values are Kafka's assertions. Where a
test's setup differs by tag it is said at the test (2.x's shared member carries a group.instance.id, 3.x's not).
"""
from __future__ import annotations

import pytest

from core.types import GroupState
from impl.group import GroupMetadata, IllegalStateError, MemberMetadata
from impl.profiles import get_profile
from impl.results import ResponseFuture
from tests.kafka_suites.registry import Suite, restates

_OFFSETS = ("offset bookkeeping: the reference stores no offsets (SPEC.md §3.5 — OffsetCommit only as far as it "
            "touches membership), so its GroupMetadata keeps no committed, pending or transactional offsets")
_TOPICS = ("the subscribed-topics cache (parsed from the consumer protocol's metadata, read by offset expiry): the "
           "reference keeps protocol metadata as opaque bytes and expires no offsets")

SUITE = Suite(
    "core/src/test/scala/unit/kafka/coordinator/group/GroupMetadataTest.scala",
    tests={
        "2.4.1": (  # 43 tests
            'testCanRebalanceWhenStable', 'testCanRebalanceWhenCompletingRebalance',
            'testCannotRebalanceWhenPreparingRebalance', 'testCannotRebalanceWhenDead',
            'testStableToPreparingRebalanceTransition', 'testStableToDeadTransition',
            'testAwaitingRebalanceToPreparingRebalanceTransition', 'testPreparingRebalanceToDeadTransition',
            'testPreparingRebalanceToEmptyTransition', 'testEmptyToDeadTransition',
            'testAwaitingRebalanceToStableTransition', 'testEmptyToStableIllegalTransition',
            'testStableToStableIllegalTransition', 'testEmptyToAwaitingRebalanceIllegalTransition',
            'testPreparingRebalanceToPreparingRebalanceIllegalTransition',
            'testPreparingRebalanceToStableIllegalTransition',
            'testAwaitingRebalanceToAwaitingRebalanceIllegalTransition', 'testDeadToStableIllegalTransition',
            'testDeadToPreparingRebalanceIllegalTransition', 'testDeadToAwaitingRebalanceIllegalTransition',
            'testSelectProtocol', 'testSelectProtocolRaisesIfNoMembers', 'testSelectProtocolChoosesCompatibleProtocol',
            'testSupportsProtocols', 'testSubscribedTopics', 'testSubscribedTopicsNonConsumerGroup',
            'testInitNextGeneration', 'testInitNextGenerationEmptyGroup', 'testOffsetCommit', 'testOffsetCommitFailure',
            'testOffsetCommitFailureWithAnotherPending', 'testOffsetCommitWithAnotherPending',
            'testConsumerBeatsTransactionalOffsetCommit', 'testTransactionBeatsConsumerOffsetCommit',
            'testTransactionalCommitIsAbortedAndConsumerCommitWins', 'testFailedTxnOffsetCommitLeavesNoPendingState',
            'testReplaceGroupInstanceWithEmptyGroupInstanceId', 'testReplaceGroupInstanceWithNonExistingMember',
            'testReplaceGroupInstance', 'testInvokeJoinCallback', 'testNotInvokeJoinCallback',
            'testInvokeSyncCallback', 'testNotInvokeSyncCallback',
        ),
        "2.7.0": (  # 45 tests: 2.4.1's and two offset tests
            'testCanRebalanceWhenStable', 'testCanRebalanceWhenCompletingRebalance',
            'testCannotRebalanceWhenPreparingRebalance', 'testCannotRebalanceWhenDead',
            'testStableToPreparingRebalanceTransition', 'testStableToDeadTransition',
            'testAwaitingRebalanceToPreparingRebalanceTransition', 'testPreparingRebalanceToDeadTransition',
            'testPreparingRebalanceToEmptyTransition', 'testEmptyToDeadTransition',
            'testAwaitingRebalanceToStableTransition', 'testEmptyToStableIllegalTransition',
            'testStableToStableIllegalTransition', 'testEmptyToAwaitingRebalanceIllegalTransition',
            'testPreparingRebalanceToPreparingRebalanceIllegalTransition',
            'testPreparingRebalanceToStableIllegalTransition',
            'testAwaitingRebalanceToAwaitingRebalanceIllegalTransition', 'testDeadToStableIllegalTransition',
            'testDeadToPreparingRebalanceIllegalTransition', 'testDeadToAwaitingRebalanceIllegalTransition',
            'testSelectProtocol', 'testSelectProtocolRaisesIfNoMembers', 'testSelectProtocolChoosesCompatibleProtocol',
            'testSupportsProtocols', 'testSubscribedTopics', 'testSubscribedTopicsNonConsumerGroup',
            'testInitNextGeneration', 'testInitNextGenerationEmptyGroup', 'testOffsetCommit', 'testOffsetCommitFailure',
            'testOffsetCommitFailureWithAnotherPending', 'testOffsetCommitWithAnotherPending',
            'testConsumerBeatsTransactionalOffsetCommit', 'testTransactionBeatsConsumerOffsetCommit',
            'testTransactionalCommitIsAbortedAndConsumerCommitWins', 'testFailedTxnOffsetCommitLeavesNoPendingState',
            'testReplaceGroupInstanceWithEmptyGroupInstanceId', 'testReplaceGroupInstanceWithNonExistingMember',
            'testReplaceGroupInstance', 'testInvokeJoinCallback', 'testNotInvokeJoinCallback',
            'testInvokeSyncCallback', 'testNotInvokeSyncCallback', 'testHasPendingNonTxnOffsets',
            'testHasPendingTxnOffsets',
        ),
        "3.9.0": (  # 58 tests (3.9.0-rc3; equal to 3.9.1)
            'testCanRebalanceWhenStable', 'testCanRebalanceWhenCompletingRebalance',
            'testCannotRebalanceWhenPreparingRebalance', 'testCannotRebalanceWhenDead',
            'testStableToPreparingRebalanceTransition', 'testStableToDeadTransition',
            'testAwaitingRebalanceToPreparingRebalanceTransition', 'testPreparingRebalanceToDeadTransition',
            'testPreparingRebalanceToEmptyTransition', 'testEmptyToDeadTransition',
            'testAwaitingRebalanceToStableTransition', 'testEmptyToStableIllegalTransition',
            'testStableToStableIllegalTransition', 'testEmptyToAwaitingRebalanceIllegalTransition',
            'testPreparingRebalanceToPreparingRebalanceIllegalTransition',
            'testPreparingRebalanceToStableIllegalTransition',
            'testAwaitingRebalanceToAwaitingRebalanceIllegalTransition', 'testDeadToDeadIllegalTransition',
            'testDeadToStableIllegalTransition', 'testDeadToPreparingRebalanceIllegalTransition',
            'testDeadToAwaitingRebalanceIllegalTransition', 'testSelectProtocol',
            'testSelectProtocolRaisesIfNoMembers', 'testSelectProtocolChoosesCompatibleProtocol',
            'testSupportsProtocols', 'testOffsetRemovalDuringTransitionFromEmptyToNonEmpty', 'testSubscribedTopics',
            'testSubscribedTopicsNonConsumerGroup', 'testInitNextGeneration', 'testInitNextGenerationEmptyGroup',
            'testOffsetCommit', 'testOffsetCommitFailure', 'testOffsetCommitFailureWithAnotherPending',
            'testOffsetCommitWithAnotherPending', 'testConsumerBeatsTransactionalOffsetCommit',
            'testTransactionBeatsConsumerOffsetCommit', 'testTransactionalCommitIsAbortedAndConsumerCommitWins',
            'testFailedTxnOffsetCommitLeavesNoPendingState', 'testUpdateMember',
            'testReplaceGroupInstanceWithNonExistingMember', 'testReplaceGroupInstance', 'testInvokeJoinCallback',
            'testInvokeJoinCallbackFails', 'testNotInvokeJoinCallback', 'testInvokeSyncCallbackFails',
            'testInvokeSyncCallback', 'testNotInvokeSyncCallback', 'testHasPendingNonTxnOffsets',
            'testHasPendingTxnOffsets', 'testCannotAddPendingMemberIfStable',
            'testRemovalFromPendingAfterMemberIsStable', 'testRemovalFromPendingWhenMemberIsRemoved',
            'testCannotAddStaticMemberIfAlreadyPresent', 'testCannotAddPendingSyncOfUnknownMember',
            'testCannotRemovePendingSyncOfUnknownMember', 'testCanAddAndRemovePendingSyncMember',
            'testRemovalFromPendingSyncWhenMemberIsRemoved', 'testNewGenerationClearsPendingSyncMembers',
        ),
    },
    not_applicable={
        **{name: _OFFSETS for name in (
            "testOffsetCommit", "testOffsetCommitFailure", "testOffsetCommitFailureWithAnotherPending",
            "testOffsetCommitWithAnotherPending", "testConsumerBeatsTransactionalOffsetCommit",
            "testTransactionBeatsConsumerOffsetCommit", "testTransactionalCommitIsAbortedAndConsumerCommitWins",
            "testFailedTxnOffsetCommitLeavesNoPendingState", "testHasPendingNonTxnOffsets",
            "testHasPendingTxnOffsets", "testOffsetRemovalDuringTransitionFromEmptyToNonEmpty")},
        **{name: _TOPICS for name in ("testSubscribedTopics", "testSubscribedTopicsNonConsumerGroup")},
    },
)

ALL = ("2.4.1", "2.7.0", "3.9.0")
E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)
RANGE_FIRST = (("range", b""), ("roundrobin", b""))
ROUNDROBIN_FIRST = (("roundrobin", b""), ("range", b""))
#: the group.instance.id of the test file's members: 2.x's setUp builds one shared member with Some("groupInstanceId")
#: (and its protocol tests reuse that id for every member); 3.x builds each member with None unless it says so
SHARED_INSTANCE = {"2.4.1": "groupInstanceId", "2.7.0": "groupInstanceId", "3.9": None}


def new_group(profile: str) -> GroupMetadata:
    """``new GroupMetadata("groupId", Empty, time)``."""
    group = GroupMetadata("groupId", get_profile(profile), incarnation=1)
    assert group.is_(E)
    return group


def new_member(member_id: str = "memberId", protocols: tuple[tuple[str, bytes], ...] = RANGE_FIRST,
               instance_id: str | None = None, protocol_type: str = "consumer") -> MemberMetadata:
    """clientId, clientHost, rebalance timeout 60000, session timeout 10000, as in the test file."""
    return MemberMetadata(member_id, "clientId", "clientHost", 10000, 60000, protocol_type, protocols, instance_id)


def parked(api: str = "JoinGroup") -> ResponseFuture:
    return ResponseFuture(("req", api), api, [])


def walk(group: GroupMetadata, *targets: GroupState) -> GroupMetadata:
    for target in targets:
        group.transition_to(target, 0)
    return group


def assert_state(group: GroupMetadata, target: GroupState) -> None:
    """The test file's assertState: ``is`` holds for the target and for none of Stable, PR, CR, Dead besides."""
    for other in (S, PR, CR, D):
        assert group.is_(other) == (other is target), (other, group.state)


# -- canRebalance ------------------------------------------------------------------------------------------------
@restates("testCanRebalanceWhenStable", *ALL)   # the group is Empty: the name is older than the Empty state
def test_an_empty_group_can_rebalance(profile: str) -> None:
    assert new_group(profile).can_rebalance


@restates("testCanRebalanceWhenCompletingRebalance", *ALL)
def test_a_completing_group_can_rebalance(profile: str) -> None:
    assert walk(new_group(profile), PR, CR).can_rebalance


@restates("testCannotRebalanceWhenPreparingRebalance", *ALL)
def test_a_preparing_group_cannot_rebalance(profile: str) -> None:
    assert not walk(new_group(profile), PR).can_rebalance


@restates("testCannotRebalanceWhenDead", *ALL)
def test_a_dead_group_cannot_rebalance(profile: str) -> None:
    assert not walk(new_group(profile), PR, E, D).can_rebalance


# -- legal transitions ---------------------------------------------------------------------------------------------
@restates("testStableToPreparingRebalanceTransition", *ALL)
def test_empty_to_preparing(profile: str) -> None:
    assert_state(walk(new_group(profile), PR), PR)


@restates("testStableToDeadTransition", *ALL)
def test_empty_to_dead(profile: str) -> None:
    assert_state(walk(new_group(profile), D), D)


@restates("testAwaitingRebalanceToPreparingRebalanceTransition", *ALL)
def test_completing_to_preparing(profile: str) -> None:
    assert_state(walk(new_group(profile), PR, CR, PR), PR)


@restates("testPreparingRebalanceToDeadTransition", *ALL)
def test_preparing_to_dead(profile: str) -> None:
    assert_state(walk(new_group(profile), PR, D), D)


@restates("testPreparingRebalanceToEmptyTransition", *ALL)
def test_preparing_to_empty(profile: str) -> None:
    assert_state(walk(new_group(profile), PR, E), E)


@restates("testEmptyToDeadTransition", *ALL)
def test_empty_again_to_dead(profile: str) -> None:
    assert_state(walk(new_group(profile), PR, E, D), D)


@restates("testAwaitingRebalanceToStableTransition", *ALL)
def test_completing_to_stable(profile: str) -> None:
    assert_state(walk(new_group(profile), PR, CR, S), S)


@restates("testDeadToDeadIllegalTransition", "3.9.0")   # despite its name: Dead → Dead is legal (asserts Dead)
def test_dead_to_dead_is_legal(profile: str) -> None:
    assert_state(walk(new_group(profile), PR, D, D), D)


# -- illegal transitions: IllegalStateException ---------------------------------------------------------------------
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


@pytest.mark.parametrize("kafka_test", sorted(ILLEGAL))
@restates("testEmptyToStableIllegalTransition", *ALL)
@restates("testStableToStableIllegalTransition", *ALL)
@restates("testEmptyToAwaitingRebalanceIllegalTransition", *ALL)
@restates("testPreparingRebalanceToPreparingRebalanceIllegalTransition", *ALL)
@restates("testPreparingRebalanceToStableIllegalTransition", *ALL)
@restates("testAwaitingRebalanceToAwaitingRebalanceIllegalTransition", *ALL)
@restates("testDeadToStableIllegalTransition", *ALL)
@restates("testDeadToPreparingRebalanceIllegalTransition", *ALL)
@restates("testDeadToAwaitingRebalanceIllegalTransition", *ALL)
def test_an_illegal_transition_throws_and_leaves_the_state(profile: str, kafka_test: str) -> None:
    path, target = ILLEGAL[kafka_test]
    group = walk(new_group(profile), *path)
    before = group.state
    with pytest.raises(IllegalStateError):
        group.transition_to(target, 0)
    assert group.state is before


# -- protocols --------------------------------------------------------------------------------------------------
@restates("testSelectProtocol", *ALL)
def test_the_protocol_most_members_prefer_is_selected(profile: str) -> None:
    group, instance = new_group(profile), SHARED_INSTANCE[profile]   # 2.x: three members, one instance id
    group.add(new_member("memberId", RANGE_FIRST, instance))
    assert group.select_protocol() == "range"
    group.add(new_member("otherMemberId", ROUNDROBIN_FIRST, instance))
    assert group.select_protocol() in {"range", "roundrobin"}   # a tie: "could be either"
    group.add(new_member("lastMemberId", ROUNDROBIN_FIRST, instance))
    assert group.select_protocol() == "roundrobin"


@restates("testSelectProtocolRaisesIfNoMembers", *ALL)
def test_selecting_a_protocol_without_members_throws(profile: str) -> None:
    with pytest.raises(IllegalStateError):
        new_group(profile).select_protocol()


@restates("testSelectProtocolChoosesCompatibleProtocol", *ALL)
def test_the_selected_protocol_is_one_every_member_supports(profile: str) -> None:
    group, instance = new_group(profile), SHARED_INSTANCE[profile]
    group.add(new_member("memberId", RANGE_FIRST, instance))
    group.add(new_member("otherMemberId", (("roundrobin", b""), ("blah", b"")), instance))
    assert group.select_protocol() == "roundrobin"


@restates("testSupportsProtocols", *ALL)
def test_a_non_empty_group_supports_a_protocol_all_its_members_support(profile: str) -> None:
    group, instance = new_group(profile), SHARED_INSTANCE[profile]
    assert group.supports_protocols("consumer", ("roundrobin", "range"))   # an Empty group supports everything
    group.add(new_member("memberId", RANGE_FIRST, instance))
    walk(group, PR)
    assert group.supports_protocols("consumer", ("roundrobin", "foo"))
    assert group.supports_protocols("consumer", ("range", "foo"))
    assert not group.supports_protocols("consumer", ("foo", "bar"))
    group.add(new_member("otherMemberId", (("roundrobin", b""), ("blah", b"")), instance))
    assert group.supports_protocols("consumer", ("roundrobin", "foo"))
    assert not group.supports_protocols("invalid_type", ("roundrobin", "foo"))
    assert not group.supports_protocols("consumer", ("range", "foo"))


# -- a new generation --------------------------------------------------------------------------------------------
@restates("testInitNextGeneration", *ALL)
def test_a_new_generation_selects_the_protocol_and_completes_the_rebalance(profile: str) -> None:
    group = new_group(profile)
    member = new_member(instance_id=SHARED_INSTANCE[profile])
    member.protocols = (("roundrobin", b""),)   # the test narrows the member's protocols before adding it
    walk(group, PR)
    group.add(member, parked())
    assert (group.generation_id, group.protocol_name) == (0, None)
    group.init_next_generation(0)
    assert (group.generation_id, group.protocol_name) == (1, "roundrobin")


@restates("testInitNextGenerationEmptyGroup", *ALL)
def test_a_new_generation_of_an_empty_group_has_no_protocol(profile: str) -> None:
    group = new_group(profile)
    assert (group.state, group.generation_id, group.protocol_name) == (E, 0, None)
    walk(group, PR)
    group.init_next_generation(0)
    assert (group.generation_id, group.protocol_name) == (1, None)


@restates("testUpdateMember", "3.9.0")   # KAFKA-14009 (3.3.2): updateMember copies both timeouts
def test_an_update_copies_the_new_timeouts(profile: str) -> None:
    group, member = new_group(profile), new_member()
    group.add(member)
    group.update_member(member, (("roundrobin", b""),), 120000, 20000, None)
    assert group.rebalance_timeout_ms() == 120000
    assert member.session_timeout_ms == 20000

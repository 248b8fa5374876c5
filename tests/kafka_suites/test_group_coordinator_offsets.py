"""Kafka's GroupCoordinatorTest.scala, OffsetCommit as far as it touches membership (the reference stores no
offsets, SPEC.md §3.5): the answer of a commit by group, state, member and generation — restated over the reference,
per release tag. Kafka's commit answers one error per partition; every test commits one partition."""
from __future__ import annotations

from core.types import Errors
from tests.kafka_suites.group_coordinator_harness import DEAD, DEAD_GROUP, MEMBER_ID, Kafka
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")


@restates("testCommitOffsetFromUnknownGroup", *ALL)
def test_commit_with_a_generation_to_an_absent_group_is_illegal_generation(profile: str) -> None:
    assert Kafka(profile).commit(MEMBER_ID, 1) is Errors.ILLEGAL_GENERATION


@restates("testCommitOffsetWithDefaultGeneration", *ALL)
def test_commit_without_group_management_is_accepted(profile: str) -> None:
    assert Kafka(profile).commit("", -1) is Errors.NONE


@restates("testCommitOffsetsAfterGroupIsEmpty", *ALL)
def test_commit_without_group_management_after_the_group_emptied(profile: str) -> None:
    """Not restated: the committed offset read back with OffsetFetch (the reference stores no offsets)."""
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    assert k.leave((joined.member_id, None)).error is Errors.NONE
    assert k.commit("", -1) is Errors.NONE


@restates("testCommitAndFetchOffsetsWithEmptyGroup", *ALL)
def test_commit_and_describe_with_the_empty_group_id(profile: str) -> None:
    """The empty group id is accepted by OffsetCommit and DescribeGroups (backwards compatibility), and the group it
    creates is Empty. Not restated: OffsetFetch and DeleteGroups of that group (the reference has neither)."""
    k = Kafka(profile)
    assert k.commit("", -1, group_id="") is Errors.NONE
    described = k.c.describe_group("")
    assert (described.error, described.state) == (Errors.NONE, "Empty")


@restates("testCommitOffsetInCompletingRebalance", *ALL)
def test_commit_while_completing_rebalance(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    assert k.commit(joined.member_id, joined.generation_id) is Errors.REBALANCE_IN_PROGRESS


@restates("testCommitOffsetInCompletingRebalanceFromUnknownMemberId", *ALL)
def test_commit_of_an_unknown_member_while_completing_rebalance(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    assert k.commit("", joined.generation_id) is Errors.UNKNOWN_MEMBER_ID


@restates("testCommitOffsetInCompletingRebalanceFromIllegalGeneration", *ALL)
def test_commit_of_another_generation_while_completing_rebalance(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    assert k.commit(joined.member_id, joined.generation_id + 1) is Errors.ILLEGAL_GENERATION


@restates("testManualCommitOffsetShouldNotValidateMemberIdAndInstanceId", "3.9.0")
def test_commit_without_group_management_ignores_member_and_instance_ids(profile: str) -> None:
    k = Kafka(profile)
    assert k.commit("", -1, instance="instance-id") is Errors.NONE
    assert k.commit("unknown", -1) is Errors.NONE


@restates("testOffsetCommitDeadGroup", *ALL)
def test_commit_to_a_dead_group(profile: str) -> None:
    k = Kafka(profile)
    k.poke_add_group(DEAD_GROUP, DEAD)
    assert k.commit(MEMBER_ID, 1, group_id=DEAD_GROUP) is Errors.COORDINATOR_NOT_AVAILABLE

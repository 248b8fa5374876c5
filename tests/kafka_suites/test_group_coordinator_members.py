"""Kafka's GroupCoordinatorTest.scala, how many members a group takes and how long a new member lives:
group.max.size (2.4.1's over-capacity rule, 2.7.0+'s acceptJoiningMember) and the new-member join timeout —
restated over the reference, per release tag."""
from __future__ import annotations

from core.types import Errors
from impl.results import JoinGroupResult
from tests.kafka_suites.group_coordinator_harness import (EMPTY, GROUP, GROUP_INITIAL_REBALANCE_DELAY,
                                                          GROUP_MAX_SESSION_TIMEOUT, GROUP_MAX_SIZE,
                                                          NEW_MEMBER_JOIN_TIMEOUT, PROTOCOLS, STABLE, Kafka, done,
                                                          parked)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")
DELAY = GROUP_INITIAL_REBALANCE_DELAY


def _counts(errors: list[Errors]) -> tuple[int, int]:
    return errors.count(Errors.NONE), errors.count(Errors.GROUP_MAX_SIZE_REACHED)


@restates("testJoinGroupShouldReceiveErrorIfGroupOverMaxSize", *ALL)
def test_a_new_member_of_a_full_group_is_refused(profile: str) -> None:
    k = Kafka(profile)
    rebalance = DELAY * 2
    futures = []
    for i in range(1, GROUP_MAX_SIZE + 1):
        futures.append(k.send_join(rebalance=rebalance))
        if i != 1:
            k.advance(DELAY)
    k.advance(DELAY + 1)
    assert [done(f).error for f in futures] == [Errors.NONE] * GROUP_MAX_SIZE
    assert done(k.send_join(rebalance=rebalance)).error is Errors.GROUP_MAX_SIZE_REACHED


def _join_all(k: Kafka, member_ids: list[str], instances: list[str | None], require_known: bool) -> list:
    return [k.send_join(m, instance=i, require_known=require_known) for m, i in zip(member_ids, instances, strict=True)]


def _complete_two_initial_delays(k: Kafka) -> None:
    k.advance(DELAY + 1)
    k.advance(DELAY + 1)


@restates("testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember", "2.7.0", "3.9.0")
def test_pending_members_beyond_the_max_size_are_refused_and_stay_refused(profile: str) -> None:
    k = Kafka(profile)
    n = GROUP_MAX_SIZE + 1
    member_ids = [done(k.send_join(require_known=True)).member_id for _ in range(n)]
    futures = _join_all(k, member_ids, [None] * n, True)
    _complete_two_initial_delays(k)
    errors = [done(f).error for f in futures]
    assert _counts(errors) == (GROUP_MAX_SIZE, n - GROUP_MAX_SIZE)
    rejoins = _join_all(k, member_ids, [None] * n, True)     # CompletingRebalance: accepted members rejoin
    assert [done(f).error for f in rejoins] == errors


@restates("testDynamicMembersJoinGroupWithMaxSize", "2.7.0", "3.9.0")
def test_new_members_beyond_the_max_size_are_refused_and_stay_refused(profile: str) -> None:
    k = Kafka(profile)
    n = GROUP_MAX_SIZE + 1
    futures = _join_all(k, [""] * n, [None] * n, False)
    _complete_two_initial_delays(k)
    results: list[JoinGroupResult] = [done(f) for f in futures]
    errors = [r.error for r in results]
    assert _counts(errors) == (GROUP_MAX_SIZE, n - GROUP_MAX_SIZE)
    rejoins = _join_all(k, [r.member_id for r in results], [None] * n, False)
    assert [done(f).error for f in rejoins] == errors


@restates("testStaticMembersJoinGroupWithMaxSize", "2.7.0", "3.9.0")
def test_static_members_beyond_the_max_size_are_refused_and_stay_refused(profile: str) -> None:
    k = Kafka(profile)
    n = GROUP_MAX_SIZE + 1
    instances: list[str | None] = [f"instance-id-{i}" for i in range(1, n + 1)]
    futures = _join_all(k, [""] * n, instances, False)
    _complete_two_initial_delays(k)
    results: list[JoinGroupResult] = [done(f) for f in futures]
    errors = [r.error for r in results]
    assert _counts(errors) == (GROUP_MAX_SIZE, n - GROUP_MAX_SIZE)
    rejoins = _join_all(k, [r.member_id for r in results], instances, False)
    assert [done(f).error for f in rejoins] == errors


@restates("testDynamicMembersCanReJoinGroupWithMaxSizeWhileRebalancing", "2.7.0", "3.9.0")
def test_accepted_members_rejoin_while_rebalancing_others_are_refused(profile: str) -> None:
    k = Kafka(profile)
    n = GROUP_MAX_SIZE + 1
    member_ids = [done(k.send_join(require_known=True)).member_id for _ in range(n)]
    _join_all(k, member_ids, [None] * n, True)
    futures = _join_all(k, member_ids, [None] * n, True)      # again, while PreparingRebalance
    _complete_two_initial_delays(k)
    assert _counts([done(f).error for f in futures]) == (GROUP_MAX_SIZE, n - GROUP_MAX_SIZE)


@restates("testLastJoiningMembersAreKickedOutWhenReJoiningGroupWithMaxSize", "2.7.0", "3.9.0")
def test_the_last_members_to_rejoin_an_oversized_group_are_removed(profile: str) -> None:
    """Kafka's test builds a Stable group of six members in GroupMetadata (no coordinator calls) and calls
    prepareRebalance itself; then all six rejoin in order."""
    k = Kafka(profile)
    group = k.poke_add_group(GROUP, STABLE)
    member_ids = [f"consumer-test-{i}" for i in range(1, GROUP_MAX_SIZE + 3)]
    for member_id in member_ids:
        k.poke_add_member(group, member_id, None, PROTOCOLS, session=GROUP_MAX_SESSION_TIMEOUT, rebalance=500)
    k.c.prepare_rebalance(group)
    futures = [k.send_join(m, session=GROUP_MAX_SESSION_TIMEOUT) for m in member_ids]
    k.advance(500 + 1)
    errors = [done(f).error for f in futures]
    assert set(errors[:GROUP_MAX_SIZE]) == {Errors.NONE}
    assert set(errors[GROUP_MAX_SIZE:]) == {Errors.GROUP_MAX_SIZE_REACHED}
    assert not set(member_ids[GROUP_MAX_SIZE:]) & set(k.view().members)


def _new_members(k: Kafka) -> int:
    return sum(m.is_new for m in k.view().members.values())


@restates("testNewMemberTimeoutCompletion", *ALL)
def test_a_new_member_that_joined_is_bound_by_its_session_not_the_new_member_timeout(profile: str) -> None:
    k = Kafka(profile)
    session = NEW_MEMBER_JOIN_TIMEOUT + 5000
    future = k.send_join(session=session)
    k.advance(DELAY + 1)
    joined = done(future)
    assert joined.error is Errors.NONE and _new_members(k) == 0
    member_id = joined.member_id
    assert k.sync_leader(joined.generation_id, member_id, {member_id: b""}).error is Errors.NONE
    assert len(k.view().members) == 1
    k.advance(NEW_MEMBER_JOIN_TIMEOUT + 100)
    assert len(k.view().members) == 1
    k.advance(session + 100)
    assert len(k.view().members) == 0


@restates("testNewMemberJoinExpiration", *ALL)
def test_a_new_member_waiting_in_a_long_rebalance_expires_after_the_new_member_timeout(profile: str) -> None:
    k = Kafka(profile)
    session, rebalance = NEW_MEMBER_JOIN_TIMEOUT + 5000, NEW_MEMBER_JOIN_TIMEOUT * 2
    first = k.dynamic_join(session=session, rebalance=rebalance)
    assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
    assert _new_members(k) == 0
    future = k.send_join(session=session, rebalance=rebalance)
    parked(future)
    assert len(k.view().members) == 2 and _new_members(k) == 1
    (new_id,) = [m for m, v in k.view().members.items() if v.is_new]
    assert new_id != first.member_id
    k.advance(NEW_MEMBER_JOIN_TIMEOUT + 1)
    assert done(future).error is Errors.UNKNOWN_MEMBER_ID
    assert list(k.view().members) == [first.member_id] and _new_members(k) == 0


def _two_member_generation(k: Kafka) -> tuple[JoinGroupResult, JoinGroupResult]:
    first = k.dynamic_join()
    assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error is Errors.NONE
    other_future = k.send_join()
    join = done(k.send_join(first.member_id))
    other = done(other_future)
    assert join.error is Errors.NONE and other.error is Errors.NONE
    return join, other


def _sessions_expire(k: Kafka) -> None:
    """verifySessionExpiration: a session timeout later the group is Empty."""
    k.advance(500 + 1)
    assert k.state() is EMPTY and not k.view().members


@restates("testNewMemberFailureAfterJoinGroupCompletion", "2.7.0", "3.9.0")
def test_after_the_join_phase_a_new_member_expires_by_its_session(profile: str) -> None:
    k = Kafka(profile)
    _two_member_generation(k)
    _sessions_expire(k)


@restates("testNewMemberFailureAfterSyncGroupCompletion", "2.7.0", "3.9.0")
def test_after_the_sync_phase_a_new_member_expires_by_its_session(profile: str) -> None:
    k = Kafka(profile)
    join, other = _two_member_generation(k)
    k.send_sync_follower(join.generation_id, other.member_id)
    sync = k.sync_leader(join.generation_id, join.member_id, {join.member_id: b"", other.member_id: b""})
    assert sync.error is Errors.NONE
    _sessions_expire(k)

"""Kafka's GroupCoordinatorTest.scala, a static member that restarts (rejoins with an unknown member id) and static
members that miss a rebalance: 2.4.1 answers at once, 2.7.0+ stores the new id first (KAFKA-10284) and rebalances
when the group's protocol would change, 3.9.0 lets a JoinGroup v9 leader skip the assignment (KIP-814) —
restated over the reference, per release tag."""
from __future__ import annotations

import pytest

from core.types import Errors
from impl.results import JoinGroupResult
from tests.kafka_suites.group_coordinator_harness import (CR, EMPTY, FOLLOWER, LEADER, PR, PROTOCOL_SUPERSET,
                                                          PROTOCOL_TYPE, PROTOCOLS, STABLE, Kafka, done)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")
ROUNDROBIN = (("roundrobin", b""),)


def _restart(k: Kafka, instance: str, protocols: tuple[tuple[str, bytes], ...]) -> JoinGroupResult:
    """The restart of a static member in a Stable group: 2.4.1's test joins plainly (no log write); 2.7.0+'s test
    answers the store of the new member id (staticJoinGroupWithPersistence)."""
    if k.profile == "2.4.1":
        return k.static_join("", instance, protocols, clock_advance=1)
    return k.static_join_persisted("", instance, protocols, clock_advance=1)


def _old_leader_is_fenced(k: Kafka, old_leader_id: str, sync_as: str) -> None:
    assert k.static_join(old_leader_id, LEADER, PROTOCOL_SUPERSET, clock_advance=1).error is Errors.FENCED_INSTANCE_ID
    assert k.sync_leader(1, old_leader_id, {}, instance=LEADER).error is Errors.FENCED_INSTANCE_ID
    assert k.sync_leader(1, sync_as, {}).error is Errors.UNKNOWN_MEMBER_ID


@restates("staticMemberRejoinWithLeaderIdAndUnknownMemberId", "2.4.1", "2.7.0")
def test_restarted_static_leader_is_answered_with_the_old_leader_id(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = _restart(k, LEADER, PROTOCOL_SUPERSET)
    k.check_join(joined, Errors.NONE, 1, set(), STABLE, PROTOCOL_TYPE, leader_id=r.leader_id)
    # 2.4.1's test syncs as the leader id the answer named (the old one); 2.7.0's as the old leader id itself
    _old_leader_is_fenced(k, r.leader_id, joined.leader_id)


@pytest.mark.parametrize("skip", [True, False], ids=["skip-assignment", "no-skip-assignment"])
@restates("staticMemberRejoinWithLeaderIdAndUnknownMemberId", "3.9.0")
def test_restarted_static_leader_may_skip_the_assignment(profile: str, skip: bool) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join_persisted("", LEADER, PROTOCOL_SUPERSET, clock_advance=1, skip=skip)
    k.check_join(joined, Errors.NONE, 1, {LEADER, FOLLOWER} if skip else set(), STABLE, PROTOCOL_TYPE,
                 leader_id=joined.member_id if skip else r.leader_id, skip_assignment=skip)
    _old_leader_is_fenced(k, r.leader_id, r.leader_id)


@restates("staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocol", "2.4.1")
def test_restarted_follower_changing_protocol_is_answered_at_once(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join("", FOLLOWER, ROUNDROBIN, clock_advance=1)
    k.check_join(joined, Errors.NONE, 1, set(), STABLE, None)
    assert joined.member_id != r.follower_id
    assert k.static_join(r.follower_id, FOLLOWER, ROUNDROBIN, clock_advance=1).error is Errors.FENCED_INSTANCE_ID
    assert k.sync_follower(1, r.follower_id, instance=FOLLOWER).error is Errors.FENCED_INSTANCE_ID
    sync = k.sync_follower(1, joined.member_id, instance=FOLLOWER)
    assert (sync.error, sync.assignment) == (Errors.NONE, r.follower_assignment)


@restates("staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged", "2.7.0", "3.9.0")
def test_restarted_follower_whose_protocol_changes_the_group_protocol_rebalances(profile: str) -> None:
    """The rebalance's DelayedJoin and the leader's heartbeat expiration fall due in the same millisecond; Kafka's
    MockTimer heap runs the DelayedJoin first (its assertion depends on it: the leader, which did not rejoin, is in
    the new generation's member list, kept as a static member), so that is the order here."""
    k = Kafka(profile)
    r = k.static_rebalance()
    future = k.send_join("", ROUNDROBIN, FOLLOWER)
    k.advance_firing_first(500 + 1, "DelayedJoin")
    joined = done(future)
    k.check_join(joined, Errors.NONE, 2, {LEADER, FOLLOWER}, CR, PROTOCOL_TYPE)
    assert k.view().leader_id == joined.member_id and joined.member_id != r.follower_id
    assert joined.protocol_name == "roundrobin"


@restates("staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchangedPersistenceFailure",
          "2.7.0", "3.9.0")
def test_failed_store_of_a_restart_reverts_the_id_but_keeps_the_new_protocols(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join_persisted("", FOLLOWER, PROTOCOLS, clock_advance=1, append_error=Errors.MESSAGE_TOO_LARGE)
    k.check_join(joined, Errors.UNKNOWN_SERVER_ERROR, 1, set(), STABLE, PROTOCOL_TYPE)
    assert joined.member_id != r.follower_id
    # the old id is still the member's: it rejoins with the protocols of the failed restart, unchanged for it now
    assert k.static_join(r.follower_id, FOLLOWER, PROTOCOLS, clock_advance=1).error is Errors.NONE
    assert k.sync_follower(1, r.follower_id, instance=FOLLOWER).error is Errors.NONE


@restates("staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsButCannotPersistChange", "3.9.0")
def test_failed_store_of_a_restart_keeps_the_old_timeouts(profile: str) -> None:
    k = Kafka(profile)
    k.static_rebalance()
    joined = k.static_join_persisted("", FOLLOWER, PROTOCOL_SUPERSET, clock_advance=1, session=1000, rebalance=1000,
                                     append_error=Errors.MESSAGE_TOO_LARGE)
    k.check_join(joined, Errors.UNKNOWN_SERVER_ERROR, 1, set(), STABLE, PROTOCOL_TYPE)
    for member in k.view().members.values():
        assert (member.session_timeout_ms, member.rebalance_timeout_ms) == (500, 500)


@restates("staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsAndPersistChange", "3.9.0")
def test_stored_restart_takes_the_new_timeouts(profile: str) -> None:
    k = Kafka(profile)
    k.static_rebalance()
    follower = k.static_join_persisted("", FOLLOWER, PROTOCOL_SUPERSET, clock_advance=1, session=1000, rebalance=1000)
    k.check_join(follower, Errors.NONE, 1, set(), STABLE, PROTOCOL_TYPE)
    leader = k.static_join_persisted("", LEADER, PROTOCOL_SUPERSET, clock_advance=1, session=1000, rebalance=1000)
    k.check_join(leader, Errors.NONE, 1, {LEADER, FOLLOWER}, STABLE, PROTOCOL_TYPE, leader_id=leader.leader_id,
                 member_id=leader.member_id, skip_assignment=True)
    for member in k.view().members.values():
        assert (member.session_timeout_ms, member.rebalance_timeout_ms) == (1000, 1000)


def _restart_keeping_the_group_protocol(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = k.static_join_persisted("", FOLLOWER, PROTOCOLS, clock_advance=1)
    k.check_join(joined, Errors.NONE, 1, set(), STABLE, PROTOCOL_TYPE)
    assert joined.member_id != r.follower_id
    assert k.static_join(r.follower_id, FOLLOWER, PROTOCOLS, clock_advance=1).error is Errors.FENCED_INSTANCE_ID
    assert k.sync_follower(1, r.follower_id, instance=FOLLOWER).error is Errors.FENCED_INSTANCE_ID
    sync = k.sync_follower(1, joined.member_id, instance=FOLLOWER)
    assert (sync.error, sync.assignment) == (Errors.NONE, r.follower_assignment)


@restates("staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged", "2.7.0", "3.9.0")
def test_restarted_follower_keeping_the_group_protocol_is_stored(profile: str) -> None:
    _restart_keeping_the_group_protocol(profile)   # 3.9.0: a follower's answer has skipAssignment false (Corrections 1)


def _restarted_follower_gets_its_assignment(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance()
    joined = _restart(k, FOLLOWER, PROTOCOL_SUPERSET)
    assert LEADER in k.static_ids()
    k.check_join(joined, Errors.NONE, 1, set(), STABLE, PROTOCOL_TYPE)
    assert joined.member_id != r.follower_id
    sync = k.sync_follower(1, joined.member_id)
    assert (sync.error, sync.assignment) == (Errors.NONE, r.follower_assignment)


@restates("staticMemberRejoinAsFollowerWithUnknownMemberId", "2.4.1", "2.7.0", "3.9.0")
def test_restarted_follower_syncs_with_its_new_id(profile: str) -> None:
    _restarted_follower_gets_its_assignment(profile)   # 3.9.0: skipAssignment false for a follower (Corrections 1)


@restates("shouldGetDifferentStaticMemberIdAfterEachRejoin", *ALL)
def test_each_restart_gets_a_new_member_id_prefixed_by_the_instance_id(profile: str) -> None:
    k = Kafka(profile)
    last = k.static_rebalance().leader_id
    for _ in range(5):
        joined = _restart(k, LEADER, PROTOCOLS)
        assert joined.member_id.startswith(LEADER) and joined.member_id != last
        last = joined.member_id


def _stuck_on_a_static_leader(k: Kafka) -> str:
    """groupStuckInRebalanceTimeoutDueToNonjoinedStaticMember: a dynamic member leads generation 2 while neither
    static member rejoined; the follower leaves; the next join phase ends with only the static leader, which did
    not rejoin, so the group waits another rebalance timeout in PreparingRebalance."""
    r = k.static_rebalance(session=500 * 2)
    dynamic_future = k.send_join("", PROTOCOL_SUPERSET, session=500 * 2)
    k.advance(500 + 1)
    dynamic = done(dynamic_future)
    assert (dynamic.error, dynamic.leader_id, len(dynamic.members), dynamic.generation_id) == (
        Errors.NONE, dynamic.member_id, 3, 2)
    assert k.state() is CR
    if k.profile != "2.4.1":
        assert set(k.view().members) == {r.leader_id, r.follower_id, dynamic.member_id}
        assert k.static_ids() == {LEADER, FOLLOWER} and k.dynamic_members() == {dynamic.member_id}
    assert k.leave((r.follower_id, None)).error is Errors.NONE
    assert k.state() is PR
    k.advance(500 + 1)
    assert set(k.view().members) == {r.leader_id} and not k.dynamic_members()
    assert k.view().generation_id == 2 and k.state() is PR
    return r.leader_id


@restates("testLeaderFailToRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout", *ALL)
def test_static_leader_that_never_rejoins_expires_and_empties_the_group(profile: str) -> None:
    k = Kafka(profile)
    _stuck_on_a_static_leader(k)
    k.advance(500 + 1)
    view = k.view()
    assert (set(view.members), view.leader_id, view.generation_id, view.state) == (set(), None, 3, EMPTY)


@restates("testLeaderRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout", *ALL)
def test_static_leader_that_restarts_in_time_completes_the_rebalance(profile: str) -> None:
    k = Kafka(profile)
    _stuck_on_a_static_leader(k)
    joined = k.static_join("", LEADER, PROTOCOLS)
    k.check_join(joined, Errors.NONE, 3, {LEADER}, CR, PROTOCOL_TYPE)
    view = k.view()
    assert set(view.members) == {joined.member_id} and view.leader_id is not None and view.generation_id == 3


@restates("testStaticMemberFollowerFailToRejoinBeforeRebalanceTimeout", *ALL)
def test_static_follower_missing_the_rebalance_stays_in_the_next_generation(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance(session=500 * 2)
    new_future = k.send_join("", PROTOCOL_SUPERSET, "newMember")
    assert k.state() is PR
    leader = k.static_join(r.leader_id, LEADER, PROTOCOL_SUPERSET, clock_advance=500 + 1)
    k.check_join(leader, Errors.NONE, 2, {LEADER, FOLLOWER, "newMember"}, CR, PROTOCOL_TYPE, leader_id=r.leader_id,
                 member_id=r.leader_id)
    new = done(new_future)
    k.check_join(new, Errors.NONE, 2, set(), CR, PROTOCOL_TYPE, leader_id=r.leader_id)


@restates("testStaticMemberLeaderFailToRejoinBeforeRebalanceTimeout", *ALL)
def test_static_leader_missing_the_rebalance_loses_the_leadership(profile: str) -> None:
    k = Kafka(profile)
    r = k.static_rebalance(session=500 * 2)
    new_future = k.send_join("", PROTOCOL_SUPERSET, "newMember")
    k.advance(1)
    assert k.state() is PR
    follower = k.static_join(r.follower_id, FOLLOWER, PROTOCOL_SUPERSET, clock_advance=500 + 1)
    new = done(new_future)
    leader, other = (follower, new) if follower.leader_id == follower.member_id else (new, follower)
    k.check_join(leader, Errors.NONE, 2, {LEADER, FOLLOWER, "newMember"}, CR, PROTOCOL_TYPE)
    k.check_join(other, Errors.NONE, 2, set(), CR, PROTOCOL_TYPE, leader_id=leader.member_id)

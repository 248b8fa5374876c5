"""GroupMetadataManagerTest (Kafka 4.1.1), restated: static members (KIP-345) — fencing duplicates, rejoins with
known and unknown member ids, protocol changes, leaders and followers that do not rejoin (R12)."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl import JoinGroupResult
from tests.kafka_suites.gmm_context import (GROUP, check_join, context, create_group, group, join,
                                            join_and_complete, response_members, static_members_join_and_rebalance,
                                            sync)
from tests.kafka_suites.gmm_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]
E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)
SUPERSET = ("range", "roundrobin")
LEADER, FOLLOWER = "leader-instance-id", "follower-instance-id"


def _ok(generation: int, member_id: str, leader_id: str, members: tuple = (), name: str = "range",
        skip: bool = False) -> JoinGroupResult:
    return JoinGroupResult(Errors.NONE, generation, "consumer", name, leader_id, member_id, members, skip)


def _fenced(member_id: str) -> JoinGroupResult:
    return JoinGroupResult(Errors.FENCED_INSTANCE_ID, -1, None, None, "", member_id)


@restates("testStaticMemberJoinAsFirstMember", "4.1.1")
def test_a_static_member_can_be_the_first_member(profile: str) -> None:
    c = context(profile)
    create_group(c)
    assert join_and_complete(c, known=False, skip=True, instance="group-instance-id").error is Errors.NONE


@restates("testStaticMemberRejoinWithExplicitUnknownMemberId", "4.1.1")
def test_a_static_member_with_a_wrong_member_id_is_fenced(profile: str) -> None:
    c = context(profile)
    create_group(c)
    join_and_complete(c, known=False, skip=True, instance="group-instance-id", session=5000, rebalance=5000)
    f = join(c, "unknown-member-id", instance="group-instance-id", session=5000, rebalance=5000)
    assert f.result.error is Errors.FENCED_INSTANCE_ID


@restates("testStaticMemberFenceDuplicateRejoinedFollower", "4.1.1")
def test_a_duplicate_follower_fences_the_rejoined_one(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    join(c)
    assert group(c).state is PR
    old = join(c, r.follower_id, instance=FOLLOWER)
    assert not old.done
    join(c, instance=FOLLOWER)
    check_join(old.result, _fenced(r.follower_id), c, PR, set())


@restates("testStaticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged", "4.1.1")
def test_a_duplicate_follower_fences_the_syncing_one(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    leader = join(c, r.leader_id, instance=LEADER, names=SUPERSET, rebalance=10000)
    assert not leader.done and group(c).state is PR
    old = join(c, r.follower_id, instance=FOLLOWER, names=SUPERSET, rebalance=10000)
    assert old.done and leader.done
    check_join(leader.result, _ok(2, r.leader_id, r.leader_id, response_members(c)), c, CR, {LEADER, FOLLOWER})
    check_join(old.result, _ok(2, r.follower_id, r.leader_id), c, CR, set())
    old_sync = sync(c, r.follower_id, old.result.generation_id, instance=FOLLOWER)
    assert not old_sync.done
    duplicate = join(c, instance=FOLLOWER, names=SUPERSET, rebalance=10000)
    assert group(c).state is PR and not duplicate.done
    assert old_sync.result.error is Errors.FENCED_INSTANCE_ID
    c.take_fired()
    c.advance(10000)
    # two session timers run live (the leader's, which removes it, and the old follower id's, without effect);
    # the duplicate's expired task was replaced at the join completion and is dropped as stale (R1)
    fired = c.take_fired()
    assert len([k for k, kind, live in fired if kind == "heartbeat" and live]) == 2
    assert [live for k, _, live in fired if k == f"heartbeat-{GROUP}-{duplicate.result.member_id}"] == [False]
    g = group(c)
    assert duplicate.done and (g.state, g.generation_id, len(g.members)) == (CR, 3, 1)
    assert g.has_member(duplicate.result.member_id) and duplicate.result.leader_id == duplicate.result.member_id


@restates("testStaticMemberFenceDuplicateRejoiningFollowerAfterMemberIdChanged", "4.1.1")
def test_the_old_follower_is_fenced_after_its_duplicate_replaced_it(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    leader = join(c, r.leader_id, instance=LEADER, rebalance=10000)
    assert not leader.done and group(c).state is PR
    duplicate = join(c, instance=FOLLOWER, rebalance=10000)
    assert duplicate.done
    old = join(c, r.follower_id, instance=FOLLOWER, rebalance=10000)
    assert old.done and leader.done
    check_join(leader.result, _ok(2, r.leader_id, r.leader_id, response_members(c)), c, CR, {LEADER, FOLLOWER})
    check_join(duplicate.result, _ok(2, duplicate.result.member_id, r.leader_id), c, CR, set())
    check_join(old.result, _fenced(r.follower_id), c, CR, set())


@restates("testStaticMemberRejoinWithKnownMemberId", "4.1.1")
def test_a_static_member_rejoining_with_the_same_metadata_in_completing_rebalance(profile: str) -> None:
    c = context(profile)
    create_group(c)
    response = join_and_complete(c, known=False, skip=False, instance="group-instance-id")
    again = join(c, response.member_id, instance="group-instance-id")
    assert group(c).state is CR and again.result.error is Errors.NONE
    f = sync(c, response.member_id, response.generation_id, instance="group-instance-id")
    assert f.result.error is Errors.NONE and group(c).state is S


@restates("testStaticMemberRejoinWithLeaderIdAndUnknownMemberId", "4.1.1")
def test_a_static_leader_restarting_in_stable_keeps_the_generation(profile: str) -> None:
    for skip in (True, False):
        c = context(profile, append_mode="deferred")
        r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
        c.complete_appends()
        f = join(c, instance=LEADER, names=SUPERSET, known=True, skip=skip)
        assert [a.kind for a in c.pending_appends()] == ["static"]
        c.complete_appends()
        new_id = f.result.member_id
        members = response_members(c) if skip else ()
        check_join(f.result, _ok(r.generation_id, new_id, new_id if skip else r.leader_id, members, skip=skip),
                   c, S, {LEADER, FOLLOWER} if skip else set())
        old = join(c, r.leader_id, instance=LEADER, names=SUPERSET, known=True, skip=skip)
        assert old.result.error is Errors.FENCED_INSTANCE_ID
        assert sync(c, r.leader_id, r.generation_id, instance=LEADER).result.error is Errors.FENCED_INSTANCE_ID
        assert sync(c, r.leader_id, r.generation_id).result.error is Errors.UNKNOWN_MEMBER_ID


@restates("testStaticMemberRejoinWithLeaderIdAndKnownMemberId", "4.1.1")
def test_a_static_leader_rejoining_rebalances_and_the_silent_follower_expires(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    response = join_and_complete(c, known=True, skip=True, instance=LEADER, advance=10000, member_id=r.leader_id,
                                 rebalance=10000)
    assert not group(c).has_member(r.follower_id)   # its session expired while the leader rejoined
    check_join(response, _ok(2, r.leader_id, r.leader_id, response_members(c)), c, CR, {LEADER})


@restates("testStaticMemberRejoinWithLeaderIdAndUnexpectedDeadGroup", "4.1.1")
def test_a_static_leader_joining_a_dead_group(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    group(c).transition_to(D)
    assert join(c, r.leader_id, instance=LEADER, skip=True).result.error is Errors.COORDINATOR_NOT_AVAILABLE


@restates("testStaticMemberRejoinWithLeaderIdAndUnexpectedEmptyGroup", "4.1.1")
def test_a_static_leader_joining_an_empty_group(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    group(c).transition_to(PR)
    group(c).transition_to(E)
    assert join(c, r.leader_id, instance=LEADER, skip=True).result.error is Errors.UNKNOWN_MEMBER_ID


@restates("testStaticMemberRejoinWithFollowerIdAndChangeOfProtocol", "4.1.1")
def test_a_static_follower_changing_protocol_becomes_leader_if_the_leader_stays_away(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER, rebalance=10000, session=15000)
    f = join(c, r.follower_id, instance=FOLLOWER, names=("roundrobin",), rebalance=10000, session=15000)
    assert not f.done
    c.advance(10000)
    g = group(c)
    assert f.result.error is Errors.NONE and LEADER in g.static_members and g.is_leader(r.follower_id)
    check_join(f.result, _ok(2, r.follower_id, r.follower_id, response_members(c), "roundrobin"), c, CR,
               {LEADER, FOLLOWER})


@restates("testStaticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged", "4.1.1")
def test_a_static_follower_restarting_with_a_protocol_that_changes_the_selection(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER, rebalance=10000, session=15000)
    g = group(c)
    assert g.select_protocol(c.choices) != "roundrobin"
    f = join(c, instance=FOLLOWER, names=("roundrobin",), rebalance=10000, session=15000)
    assert not f.done and g.select_protocol(c.choices) == "roundrobin"
    c.advance(10000)
    new_id = f.result.member_id
    assert f.result.error is Errors.NONE and LEADER in g.static_members and g.is_leader(new_id)
    assert new_id != r.follower_id
    check_join(f.result, _ok(2, new_id, new_id, response_members(c), "roundrobin"), c, CR, {LEADER, FOLLOWER})


@restates("testStaticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchangedPersistenceFailure",
          "4.1.1")
def test_a_static_follower_restart_whose_write_fails_keeps_the_old_id(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    c.complete_appends()
    names = (group(c).select_protocol(c.choices),)
    f = join(c, instance=FOLLOWER, names=names, known=True, skip=True)
    assert [a.kind for a in c.pending_appends()] == ["static"]
    c.complete_appends(ok=False, error=Errors.MESSAGE_TOO_LARGE)
    check_join(f.result, JoinGroupResult(Errors.UNKNOWN_SERVER_ERROR, r.generation_id, "consumer", "range",
                                         r.leader_id, ""), c, S, set())
    assert f.result.member_id != r.follower_id
    follower = join(c, r.follower_id, instance=FOLLOWER, names=names)   # the old id still works
    leader = join(c, r.leader_id, instance=LEADER, names=names)
    assert leader.result.error is Errors.NONE and follower.result.error is Errors.NONE
    leader_sync = sync(c, r.leader_id, r.generation_id + 1, instance=LEADER)
    c.complete_appends()
    assert leader_sync.result.error is Errors.NONE and group(c).state is S
    old_sync = sync(c, r.follower_id, r.generation_id + 1, instance=FOLLOWER)
    assert old_sync.result.error is Errors.NONE and group(c).state is S


@restates("testStaticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged", "4.1.1")
def test_a_static_follower_restart_that_keeps_the_selection_is_persisted(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    c.complete_appends()
    names = (group(c).select_protocol(c.choices),)
    f = join(c, instance=FOLLOWER, names=names, known=True, skip=True)
    assert [a.kind for a in c.pending_appends()] == ["static"]
    c.complete_appends()
    new_id = f.result.member_id
    check_join(f.result, _ok(r.generation_id, new_id, r.leader_id), c, S, set())
    assert new_id != r.follower_id
    assert join(c, r.follower_id, instance=FOLLOWER, names=names).result.error is Errors.FENCED_INSTANCE_ID
    assert sync(c, r.follower_id, r.generation_id, instance=FOLLOWER).result.error is Errors.FENCED_INSTANCE_ID
    ok = sync(c, new_id, r.generation_id, instance=FOLLOWER)
    assert ok.result.error is Errors.NONE and ok.result.assignment == r.follower_assignment


@restates("testStaticMemberRejoinWithKnownLeaderIdToTriggerRebalanceAndFollowerWithChangeofProtocol", "4.1.1")
def test_a_static_leader_rebalance_then_a_follower_protocol_change(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    req = {"names": SUPERSET, "rebalance": 10000, "session": 5000, "known": True, "skip": True}
    leader = join(c, r.leader_id, instance=LEADER, **req)
    assert not leader.done
    follower = join(c, r.follower_id, instance=FOLLOWER, **req)
    assert leader.done and follower.done and (group(c).state, group(c).generation_id) == (CR, 2)
    check_join(leader.result, _ok(2, r.leader_id, r.leader_id, response_members(c)), c, CR, {LEADER, FOLLOWER})
    check_join(follower.result, _ok(2, r.follower_id, r.leader_id), c, CR, set())
    follower = join(c, r.follower_id, instance=FOLLOWER, **{**req, "names": ("range",)})
    assert not follower.done and group(c).state is PR
    c.take_fired()
    c.advance(5000)
    assert len(c.take_fired()) <= 2 and follower.done
    new_id = follower.result.member_id
    check_join(follower.result, _ok(3, new_id, new_id, response_members(c)), c, CR, {FOLLOWER})


@restates("testStaticMemberRejoinAsFollowerWithUnknownMemberId", "4.1.1")
def test_a_static_follower_restart_without_change_keeps_its_assignment(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    c.complete_appends()
    f = join(c, instance=FOLLOWER, names=SUPERSET, known=True, skip=True)
    assert [a.kind for a in c.pending_appends()] == ["static"]
    c.complete_appends()
    assert LEADER in group(c).static_members
    new_id = f.result.member_id
    check_join(f.result, _ok(r.generation_id, new_id, r.leader_id), c, S, set())
    assert new_id != r.follower_id
    s = sync(c, new_id, r.generation_id, instance=FOLLOWER)
    assert s.result.error is Errors.NONE and s.result.assignment == r.follower_assignment


@restates("testStaticMemberRejoinAsFollowerWithKnownMemberIdAndNoProtocolChange", "4.1.1")
def test_a_static_follower_rejoining_unchanged_gets_the_current_generation(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    c.complete_appends()
    f = join(c, r.follower_id, instance=FOLLOWER, names=SUPERSET, known=True, skip=True)
    assert c.pending_appends() == [] and LEADER in group(c).static_members
    check_join(f.result, _ok(r.generation_id, r.follower_id, r.leader_id), c, S, set())


@restates("testStaticMemberRejoinAsFollowerWithMismatchedInstanceId", "4.1.1")
def test_a_follower_id_under_the_leaders_instance_id_is_fenced(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    f = join(c, r.follower_id, instance=LEADER, names=SUPERSET, known=True, skip=True)
    assert f.result.error is Errors.FENCED_INSTANCE_ID


@restates("testStaticMemberRejoinAsLeaderWithMismatchedInstanceId", "4.1.1")
def test_a_leader_id_under_the_followers_instance_id_is_fenced(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    f = join(c, r.leader_id, instance=FOLLOWER, names=SUPERSET, known=True, skip=True)
    assert f.result.error is Errors.FENCED_INSTANCE_ID


@restates("testStaticMemberSyncAsLeaderWithInvalidMemberId", "4.1.1")
def test_a_sync_with_an_invalid_id_under_a_known_instance_id_is_fenced(profile: str) -> None:
    c = context(profile)
    static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    assert sync(c, "invalid-member-id", 0, instance=FOLLOWER).result.error is Errors.FENCED_INSTANCE_ID


@restates("testGetDifferentStaticMemberIdAfterEachRejoin", "4.1.1")
def test_each_static_restart_gets_a_new_member_id(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    c.complete_appends()
    last = r.leader_id
    for _ in range(5):
        f = join(c, instance=LEADER, names=SUPERSET, known=True, skip=True)
        assert [a.kind for a in c.pending_appends()] == ["static"]
        c.complete_appends()
        assert f.result.error is Errors.NONE and f.result.member_id == group(c).static_member_id(LEADER)
        assert f.result.member_id != last
        last = f.result.member_id


@restates("testStaticMemberJoinWithUnknownInstanceIdAndKnownMemberId", "4.1.1")
def test_a_known_member_id_under_an_unknown_instance_id_is_unknown(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    f = join(c, r.leader_id, instance="unknown-instance-id", names=SUPERSET, known=True, skip=True)
    assert f.result.error is Errors.UNKNOWN_MEMBER_ID


@restates("testStaticMemberReJoinWithIllegalStateAsUnknownMember", "4.1.1")
def test_a_static_restart_into_an_empty_group_with_members_is_an_illegal_state(profile: str) -> None:
    c = context(profile)
    static_members_join_and_rebalance(c, LEADER, FOLLOWER)
    group(c).transition_to(PR)
    group(c).transition_to(E)
    f = join(c, instance=FOLLOWER, names=SUPERSET, known=True, skip=True)
    # GMM throws IllegalStateException; the service answers UNKNOWN_SERVER_ERROR and logs it
    assert f.result.error is Errors.UNKNOWN_SERVER_ERROR
    assert any(GROUP in e and FOLLOWER in e for e in c.errors)


@restates("testStaticMemberFollowerFailToRejoinBeforeRebalanceTimeout", "4.1.1")
def test_a_static_follower_that_does_not_rejoin_stays_a_member(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER, rebalance=10000, session=15000)
    new = join(c, instance="new-member-instance-id", names=SUPERSET, known=True, skip=True)
    assert not new.done and group(c).state is PR
    leader = join(c, r.leader_id, instance=LEADER, names=SUPERSET, known=True, skip=True)
    assert not leader.done
    c.advance(10000)
    check_join(leader.result, _ok(2, r.leader_id, r.leader_id, response_members(c)), c, CR,
               {LEADER, FOLLOWER, "new-member-instance-id"})
    check_join(new.result, _ok(2, new.result.member_id, r.leader_id), c, CR, set())


@restates("testStaticMemberLeaderFailToRejoinBeforeRebalanceTimeout", "4.1.1")
def test_a_static_leader_that_does_not_rejoin_loses_the_leadership(profile: str) -> None:
    c = context(profile)
    r = static_members_join_and_rebalance(c, LEADER, FOLLOWER, rebalance=10000, session=15000)
    new = join(c, instance="new-member-instance-id", names=SUPERSET, known=True, skip=True)
    assert not new.done and group(c).state is PR
    old = join(c, r.follower_id, instance=FOLLOWER, names=SUPERSET, known=True, skip=True)
    assert not old.done
    c.advance(10000)
    # Kafka elects the first joined member in HashMap order: either one (a choice point here)
    leader, follower = (old.result, new.result) if old.result.leader_id == old.result.member_id else \
        (new.result, old.result)
    check_join(leader, _ok(2, leader.member_id, leader.member_id, response_members(c)), c, CR,
               {LEADER, FOLLOWER, "new-member-instance-id"})
    check_join(follower, _ok(2, follower.member_id, leader.member_id), c, CR, set())


def test_the_static_leader_election_is_a_choice_point_with_both_joined_members() -> None:
    """R11's sibling: the new leader among joined members is picked by HashMap order in Kafka; kgc logs the
    choice with both alternatives, and scripting the other pick elects the other member."""
    picks = {}
    for pick in (0, 1):
        c = context("4.1")
        r = static_members_join_and_rebalance(c, LEADER, FOLLOWER, rebalance=10000, session=15000)
        new = join(c, instance="new-member-instance-id", names=SUPERSET, known=True, skip=True)
        old = join(c, r.follower_id, instance=FOLLOWER, names=SUPERSET, known=True, skip=True)
        c.take_choices()
        c.force_choices([pick])
        c.advance(10000)
        points = [p for p in c.take_choices() if p.kind == "joined-leader"]
        assert len(points) == 1 and set(points[0].options) == {r.follower_id, new.result.member_id}
        picks[pick] = old.result.leader_id
    assert picks[0] != picks[1]

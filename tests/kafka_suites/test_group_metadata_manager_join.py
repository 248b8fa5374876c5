"""GroupMetadataManagerTest (Kafka 4.1.1), restated: JoinGroup of classic groups — a new group's record, the
group size limit, protocols, unknown members. Kafka's asserted values; our code (tests/kafka_suites/gmm_context.py)."""
from __future__ import annotations

from core.types import Errors, GroupState
from tests.kafka_suites.gmm_context import (GROUP, INITIAL_DELAY_MS, context, create_group, group, join,
                                            join_as_dynamic_and_complete_join, join_errors, load_record, protocols,
                                            timer)
from tests.kafka_suites.gmm_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]
E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


@restates("testGenerateRecordsOnNewClassicGroup", "4.1.1")
def test_a_new_group_is_written_as_an_empty_group_record(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    f = join(c, known=True)
    assert f.done and f.result.error is Errors.MEMBER_ID_REQUIRED   # answered before its write commits
    assert [(a.group_id, a.kind) for a in c.pending_appends()] == [(GROUP, "new-group")]
    c.complete_appends()
    assert c.group_record(GROUP) == (0, "", None, None, ())   # newEmptyGroupMetadataRecord


@restates("testGenerateRecordsOnNewClassicGroupFailureTransformsError", "4.1.1")
def test_a_failed_new_group_write_answers_the_join_with_the_mapped_error(profile: str) -> None:
    c = context(profile, append_mode="deferred")
    f = join(c, instance="group-instance-id", known=True)
    assert not f.done
    c.complete_appends(ok=False, error=Errors.NOT_LEADER_OR_FOLLOWER)
    assert f.result.error is Errors.NOT_COORDINATOR
    assert c.describe(GROUP) is None   # the group map was reverted


@restates("testReplayGroupMetadataRecords", "4.1.1")
def test_a_loaded_group_record_rebuilds_a_stable_group(profile: str) -> None:
    for default_rebalance in (True, False):
        c = context(profile)
        members = tuple((f"member-{i}", f"group-instance-id-{i}", f"client-{i}", f"host-{i}",
                         -1 if default_rebalance else 9000, 4000, b"foo", b"\x02") for i in range(2))
        load_record(c, GROUP, (1, "consumer", "range", "member-0", members))
        view = c.describe(GROUP)
        assert (view.state, view.generation_id, view.protocol_type, view.protocol_name, view.leader_id) == \
            (S, 1, "consumer", "range", "member-0")
        for i in range(2):
            m = view.members[f"member-{i}"]
            assert (m.group_instance_id, m.session_timeout_ms, m.assignment, m.protocols) == \
                (f"group-instance-id-{i}", 4000, b"\x02", (("range", b"foo"),))
            assert m.rebalance_timeout_ms == (4000 if default_rebalance else 9000)
        assert group(c).current_members() == (("member-0", "group-instance-id-0", b"foo"),
                                               ("member-1", "group-instance-id-1", b"foo"))


def _two_member_record() -> tuple[object, ...]:
    members = tuple((f"member-{i}", f"group-instance-id-{i}", f"client-{i}", f"host-{i}", 9000, 4000, b"foo",
                     b"\x02") for i in range(2))
    return (1, "consumer", "range", "member-0", members)


@restates("testOnLoadedExceedGroupMaxSizeTriggersRebalance", "4.1.1")
def test_a_group_loaded_over_capacity_rebalances(profile: str) -> None:
    c = context(profile, group_max_size=1)
    load_record(c, GROUP, _two_member_record())
    assert c.describe(GROUP).state is PR and len(c.describe(GROUP).members) == 2


@restates("testOnLoadedSchedulesClassicGroupMemberHeartbeats", "4.1.1")
def test_a_load_schedules_every_members_session_timer(profile: str) -> None:
    c = context(profile)
    load_record(c, GROUP, _two_member_record())
    for i in range(2):
        assert timer(c, f"heartbeat-{GROUP}-member-{i}").deadline_ms == c.now_ms + 4000


@restates("testJoinGroupShouldReceiveErrorIfGroupOverMaxSize", "4.1.1")
def test_the_eleventh_member_of_a_group_of_ten_is_refused(profile: str) -> None:
    c = context(profile, group_max_size=10)
    create_group(c)
    for _ in range(10):
        assert not join(c).done
    f = join(c)
    assert f.done and f.result.error is Errors.GROUP_MAX_SIZE_REACHED


@restates("testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember", "4.1.1")
def test_max_size_with_v4_members(profile: str) -> None:
    c = context(profile, group_max_size=10, group_initial_rebalance_delay_ms=50)
    create_group(c)
    ids = join_errors([join(c, known=True) for _ in range(11)], 0, Errors.MEMBER_ID_REQUIRED)
    g = group(c)
    assert (len(g.members), g.state, len(g.pending_join_members)) == (0, E, 11)
    second = [join(c, m, known=True) for m in ids]
    c.advance(50)
    c.advance(50)
    join_errors(second, 10, Errors.GROUP_MAX_SIZE_REACHED)
    assert (len(g.members), len(g.pending_join_members), g.state) == (10, 0, CR)
    join_errors([join(c, m, known=True) for m in ids], 10, Errors.GROUP_MAX_SIZE_REACHED)


@restates("testDynamicMembersJoinGroupWithMaxSizeAndNotRequiredKnownMember", "4.1.1")
def test_max_size_with_v3_members(profile: str) -> None:
    c = context(profile, group_max_size=10, group_initial_rebalance_delay_ms=50)
    create_group(c)
    first = [join(c) for _ in range(11)]
    g = group(c)
    assert (len(g.members), g.num_members_awaiting_join, g.state) == (10, 10, PR)
    c.advance(50)
    c.advance(50)
    ids = join_errors(first, 10, Errors.GROUP_MAX_SIZE_REACHED)
    join_errors([join(c, m) for m in ids], 10, Errors.GROUP_MAX_SIZE_REACHED)
    assert (len(g.members), g.num_members_awaiting_join, g.state) == (10, 0, CR)


@restates("testStaticMembersJoinGroupWithMaxSize", "4.1.1")
def test_max_size_with_static_members(profile: str) -> None:
    c = context(profile, group_max_size=10, group_initial_rebalance_delay_ms=50)
    create_group(c)
    instances = [f"instance-id-{i}" for i in range(11)]
    first = [join(c, instance=i) for i in instances]
    g = group(c)
    assert (len(g.members), g.num_members_awaiting_join, g.state) == (10, 10, PR)
    c.advance(50)
    c.advance(50)
    ids = join_errors(first, 10, Errors.GROUP_MAX_SIZE_REACHED)
    rejoins = [join(c, m, instance=i) for m, i in zip(ids, instances, strict=True)]
    join_errors(rejoins, 10, Errors.GROUP_MAX_SIZE_REACHED)
    assert (len(g.members), g.num_members_awaiting_join, g.state) == (10, 0, CR)


@restates("testDynamicMembersCanRejoinGroupWithMaxSizeWhileRebalancing", "4.1.1")
def test_members_can_rejoin_a_full_group_while_it_rebalances(profile: str) -> None:
    c = context(profile, group_max_size=10, group_initial_rebalance_delay_ms=50)
    create_group(c)
    ids = join_errors([join(c, known=True) for _ in range(11)], 0, Errors.MEMBER_ID_REQUIRED)
    g = group(c)
    assert (len(g.members), len(g.pending_join_members), g.state) == (0, 11, E)
    for m in ids:
        join(c, m, known=True)
    assert (len(g.members), g.num_members_awaiting_join, g.state) == (10, 10, PR)
    third = [join(c, m, known=True) for m in ids]
    c.advance(50)
    c.advance(50)
    join_errors(third, 10, Errors.GROUP_MAX_SIZE_REACHED)
    assert (len(g.members), g.num_members_awaiting_join, g.state) == (10, 0, CR)


@restates("testLastJoiningMembersAreKickedOutWhenRejoiningGroupWithMaxSize", "4.1.1")
def test_the_last_rejoining_members_of_an_over_capacity_group_are_refused(profile: str) -> None:
    from impl.java_gc.group import ClassicGroupMember
    c = context(profile, group_max_size=10, group_initial_rebalance_delay_ms=50)
    g = create_group(c)
    ids = [f"client-id-{i}" for i in range(12)]
    for m in ids:
        g.add(ClassicGroupMember(m, None, "client-id", "client-host", 10000, 5000, "consumer",
                                 tuple(protocols("range"))))
    c.prepare_rebalance(g)   # Kafka's test calls prepareRebalance on the over-full group
    futures = [join(c, m, rebalance=10000) for m in ids]
    assert (len(g.members), g.num_members_awaiting_join, g.state) == (10, 10, PR)
    c.advance(10000)
    join_errors(futures, 10, Errors.GROUP_MAX_SIZE_REACHED)
    assert len(g.members) == 10 and g.state is CR
    assert not any(g.has_member(m) for m in ids[10:]) and all(g.has_member(m) for m in ids[:10])


@restates("testJoinGroupUnknownMemberNewGroup", "4.1.1")
def test_a_member_id_for_a_group_that_does_not_exist_is_unknown(profile: str) -> None:
    c = context(profile)
    assert join(c, "member-id").result.error is Errors.UNKNOWN_MEMBER_ID
    assert join(c, "member-id", instance="group-instance-id").result.error is Errors.UNKNOWN_MEMBER_ID
    assert c.pending_appends() == [] and c.describe(GROUP) is None


@restates("testClassicGroupJoinInconsistentProtocolType", "4.1.1")
def test_a_join_with_another_protocol_type_is_refused(profile: str) -> None:
    c = context(profile)
    create_group(c)
    join_as_dynamic_and_complete_join(c, session=500, rebalance=500)
    assert join(c, protocol_type="connect").result.error is Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testJoinGroupWithEmptyProtocolType", "4.1.1")
def test_an_empty_protocol_type_is_refused(profile: str) -> None:
    c = context(profile)
    create_group(c)
    assert join(c, protocol_type="").result.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert join(c, protocol_type="", instance="group-instance-id", skip=True).result.error is \
        Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testJoinGroupWithEmptyGroupProtocol", "4.1.1")
def test_an_empty_protocol_list_is_refused(profile: str) -> None:
    c = context(profile)
    create_group(c)
    assert join(c, protocol_list=[]).result.error is Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testNewMemberJoinExpiration", "4.1.1")
def test_a_new_member_expires_after_the_new_member_join_timeout(profile: str) -> None:
    c = context(profile)
    g = create_group(c)
    timeout = c.config.new_member_join_timeout_ms
    first = join_as_dynamic_and_complete_join(c, session=5000 + timeout, rebalance=2 * timeout)
    assert first.leader_id == first.member_id and first.error is Errors.NONE
    assert not any(m.is_new for m in g.members.values())
    second = join(c, session=5000, rebalance=5000)
    assert not second.done and len(g.members) == 2
    new = [m for m in g.members.values() if m.is_new]
    assert len(new) == 1 and new[0].member_id != first.member_id
    c.advance(timeout)
    assert second.result.error is Errors.UNKNOWN_MEMBER_ID
    assert list(g.members) == [first.member_id] and not g.members[first.member_id].is_new


@restates("testJoinGroupInconsistentGroupProtocol", "4.1.1")
def test_a_second_member_with_no_common_protocol_is_refused(profile: str) -> None:
    c = context(profile)
    create_group(c)
    f = join(c, names=("range",))
    assert not f.done
    other = join(c, names=("roundrobin",))
    assert other.done
    c.advance(INITIAL_DELAY_MS)
    assert f.result.error is Errors.NONE and other.result.error is Errors.INCONSISTENT_GROUP_PROTOCOL


@restates("testJoinGroupSecondJoinInconsistentProtocol", "4.1.1")
def test_a_pending_member_rejoining_without_protocols_is_refused_then_accepted(profile: str) -> None:
    c = context(profile)
    create_group(c)
    first = join(c, known=True)
    assert first.result.error is Errors.MEMBER_ID_REQUIRED
    member_id = first.result.member_id
    assert join(c, member_id, known=True, protocol_list=[]).result.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    f = join(c, member_id, known=True)
    assert not f.done
    c.advance(INITIAL_DELAY_MS)
    assert f.result.error is Errors.NONE


@restates("testJoinGroupUnknownConsumerExistingGroup", "4.1.1")
def test_an_unknown_member_id_for_an_existing_group_is_refused(profile: str) -> None:
    c = context(profile)
    create_group(c)
    assert join_as_dynamic_and_complete_join(c, session=5000, rebalance=5000).error is Errors.NONE
    assert join(c, "other-member-id", session=5000, rebalance=5000).result.error is Errors.UNKNOWN_MEMBER_ID


@restates("testJoinGroupUnknownConsumerNewDeadGroup", "4.1.1")
def test_a_join_to_a_dead_group_is_coordinator_not_available(profile: str) -> None:
    c = context(profile)
    create_group(c).transition_to(D)
    assert join(c).result.error is Errors.COORDINATOR_NOT_AVAILABLE

"""Kafka's GroupCoordinatorTest.scala, DescribeGroups and the loading window: the group summary by state (protocol
and member metadata only when Stable), an absent group described as Dead, and every request's answer while the
group's partition loads — restated over the reference, per release tag."""
from __future__ import annotations

from core.types import Errors
from tests.kafka_suites.group_coordinator_harness import (GROUP, LEADER, MEMBER_ID, OTHER_GROUP, PROTOCOL_NAME,
                                                          PROTOCOL_TYPE, Kafka, done)
from tests.kafka_suites.group_coordinator_suite import SUITE
from tests.kafka_suites.registry import restates

__all__ = ["SUITE"]

ALL = ("2.4.1", "2.7.0", "3.9.0")
#: SyncGroup v5 carries the protocol type and name (KIP-559); 2.4.1's test sends none
SENDS_PROTOCOL = {"2.4.1": False, "2.7.0": True, "3.9": True}


@restates("testRequestHandlingWhileLoadingInProgress", *ALL)
def test_requests_while_the_group_partition_loads(profile: str) -> None:
    """Not restated: ListGroups and DeleteGroups (the reference has neither API)."""
    k = Kafka(profile)
    k.c.set_loading(OTHER_GROUP, True)
    c = k.c
    join = c.join_group(OTHER_GROUP, MEMBER_ID, 10000, 60000, "consumer", [("range", b"")],
                        require_known_member_id=True)
    assert done(join).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    static = c.join_group(OTHER_GROUP, MEMBER_ID, 10000, 60000, "consumer", [("range", b"")],
                          group_instance_id="groupInstanceId")
    assert done(static).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    protocol = ("consumer", "range") if SENDS_PROTOCOL[profile] else (None, None)
    sync = k.send_sync_follower(1, MEMBER_ID, *protocol, group_id=OTHER_GROUP)
    assert done(sync).error is Errors.REBALANCE_IN_PROGRESS
    assert k.commit(MEMBER_ID, 1, group_id=OTHER_GROUP) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert k.heartbeat(MEMBER_ID, 1, group_id=OTHER_GROUP) is Errors.NONE
    assert c.describe_group(OTHER_GROUP).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert c.describe_group(GROUP).error is Errors.NONE
    c.load_group(OTHER_GROUP)     # the partition finished loading (it held no group)
    assert c.describe_group(OTHER_GROUP).error is Errors.NONE


@restates("testDescribeGroupWrongCoordinator", *ALL)
def test_describe_of_a_group_this_broker_does_not_lead(profile: str) -> None:
    assert Kafka(profile).c.describe_group(OTHER_GROUP).error is Errors.NOT_COORDINATOR


@restates("testDescribeGroupInactiveGroup", *ALL)
def test_describe_of_an_absent_group_is_the_dead_summary(profile: str) -> None:
    described = Kafka(profile).c.describe_group(GROUP)
    assert (described.error, described.state, described.protocol_type, described.protocol,
            described.members) == (Errors.NONE, "Dead", "", "", ())


def _stable(k: Kafka, instance: str | None) -> str:
    joined = k.static_join("", instance) if instance else k.dynamic_join()
    assert joined.error is Errors.NONE
    member_id = joined.member_id
    assert k.sync_leader(joined.generation_id, member_id, {member_id: b""}).error is Errors.NONE
    return member_id


@restates("testDescribeGroupStableForDynamicMember", *ALL)
def test_describe_of_a_stable_group(profile: str) -> None:
    k = Kafka(profile)
    member_id = _stable(k, None)
    described = k.c.describe_group(GROUP)
    assert (described.error, described.protocol_type, described.protocol) == (Errors.NONE, PROTOCOL_TYPE,
                                                                              PROTOCOL_NAME)
    assert [m.member_id for m in described.members] == [member_id]


@restates("testDescribeGroupStableForStaticMember", *ALL)
def test_describe_of_a_stable_group_names_the_instance_ids(profile: str) -> None:
    k = Kafka(profile)
    member_id = _stable(k, LEADER)
    described = k.c.describe_group(GROUP)
    assert (described.error, described.protocol_type, described.protocol) == (Errors.NONE, PROTOCOL_TYPE,
                                                                              PROTOCOL_NAME)
    assert [m.member_id for m in described.members] == [member_id]
    assert [m.group_instance_id for m in described.members if m.group_instance_id] == [LEADER]


@restates("testDescribeGroupRebalancing", *ALL)
def test_describe_while_completing_rebalance_hides_protocol_and_metadata(profile: str) -> None:
    k = Kafka(profile)
    joined = k.dynamic_join()
    assert joined.error is Errors.NONE
    described = k.c.describe_group(GROUP)
    assert (described.error, described.protocol_type, described.protocol) == (Errors.NONE, PROTOCOL_TYPE, "")
    assert described.state == "CompletingRebalance"
    assert joined.member_id in [m.member_id for m in described.members]
    assert all(m.metadata == b"" and m.assignment == b"" for m in described.members)

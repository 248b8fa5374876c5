"""classic/ClassicGroupMemberTest.java (Kafka 4.1.1), restated against impl/java_gc/group.py: protocol matching and
votes, metadata, static identity, the heartbeat-satisfied rule (R13) and the DescribeGroups member."""
from __future__ import annotations

import pytest

from impl.group import IllegalStateError
from impl.java_gc.group import ClassicGroupMember
from impl.results import MemberSummary, ResponseFuture
from tests.kafka_suites.registry import Suite, restates

SUITE = Suite(
    "group-coordinator/src/test/java/org/apache/kafka/coordinator/group/classic/ClassicGroupMemberTest.java",
    {"4.1.1": ("testMatchesSupportedProtocols", "testVoteForPreferredProtocol", "testMetadata",
               "testMetadataRaisesOnUnsupportedProtocol", "testVoteRaisesOnNoSupportedProtocols",
               "testHasValidGroupInstanceId", "testPlainProtocolSet", "testHasHeartbeatSatisfied",
               "testDescribeNoMetadata", "testDescribe")})


def member(protocols: tuple[tuple[str, bytes], ...] = ()) -> ClassicGroupMember:
    return ClassicGroupMember("member", "group-instance-id", "client-id", "client-host", 10, 4500, "generic",
                              protocols, b"")


@restates("testMatchesSupportedProtocols", "4.1.1")
def test_matches_compares_names_order_and_metadata(profile: str) -> None:
    protocols = (("range", b"\x00"),)
    m = member(protocols)
    assert m.matches((("range", b"\x00"),))
    assert not m.matches((("range", b"\x01"),))
    assert not m.matches((("range", b""),))
    assert not m.matches((("range", b""), ("roundrobin", b"")))
    assert m.matches(protocols)


@restates("testVoteForPreferredProtocol", "4.1.1")
def test_vote_for_the_first_candidate_in_preference_order(profile: str) -> None:
    m = member((("range", b""), ("roundrobin", b"")))
    assert m.vote({"range", "roundrobin"}) == "range"
    assert m.vote({"unknown", "roundrobin"}) == "roundrobin"


@restates("testMetadata", "4.1.1")
def test_metadata_per_protocol(profile: str) -> None:
    m = member((("range", b"\x00"), ("roundrobin", b"\x01")))
    assert (m.metadata("range"), m.metadata("roundrobin")) == (b"\x00", b"\x01")


@restates("testMetadataRaisesOnUnsupportedProtocol", "4.1.1")
def test_metadata_of_an_unsupported_protocol(profile: str) -> None:
    with pytest.raises(IllegalStateError):   # Kafka: IllegalArgumentException
        member().metadata("unknown")


@restates("testVoteRaisesOnNoSupportedProtocols", "4.1.1")
def test_vote_without_a_supported_candidate(profile: str) -> None:
    with pytest.raises(IllegalStateError):   # Kafka: IllegalArgumentException
        member((("range", b"\x00"), ("roundrobin", b"\x01"))).vote({"unknown"})


@restates("testHasValidGroupInstanceId", "4.1.1")
def test_a_member_with_an_instance_id_is_static(profile: str) -> None:
    assert member().group_instance_id == "group-instance-id"


@restates("testPlainProtocolSet", "4.1.1")
def test_protocol_names(profile: str) -> None:
    assert set(member((("range", b"\x00"), ("roundrobin", b"\x01"))).protocol_names) == {"range", "roundrobin"}


@restates("testHasHeartbeatSatisfied", "4.1.1")
def test_heartbeat_satisfied_by_a_parked_request_unless_new(profile: str) -> None:
    m = member()
    assert not m.has_satisfied_heartbeat()
    m.is_new = True
    assert not m.has_satisfied_heartbeat()
    m.is_new = False
    m.awaiting_join = ResponseFuture("j", "JoinGroup", [])
    assert m.has_satisfied_heartbeat()
    m.awaiting_join, m.awaiting_sync = None, ResponseFuture("s", "SyncGroup", [])
    assert m.has_satisfied_heartbeat()


@restates("testDescribeNoMetadata", "4.1.1")
def test_describe_without_metadata(profile: str) -> None:
    assert member().describe() == MemberSummary("member", "group-instance-id", "client-id", "client-host", b"", b"")


@restates("testDescribe", "4.1.1")
def test_describe_with_the_selected_protocols_metadata(profile: str) -> None:
    assert member((("range", b"\x00"),)).describe("range") == \
        MemberSummary("member", "group-instance-id", "client-id", "client-host", b"\x00", b"")

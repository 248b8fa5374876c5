"""Kafka's MemberMetadataTest.scala restated against impl's MemberMetadata (impl/group.py), at 2.4.1, 2.7.0 and 3.9.0.

The file is the same six tests at the three tags (2.4.1's MemberMetadata also took the group id; JUnit 4's
``expected=`` became ``assertThrows`` in 3.x). Every one holds on the reference: the expected values are Kafka's
assertions, the exception classes Kafka's (impl/guards.py names them).
"""
from __future__ import annotations

import pytest

from impl.group import IllegalArgumentError, MemberMetadata
from tests.kafka_suites.registry import Suite, restates

SUITE = Suite(
    "core/src/test/scala/unit/kafka/coordinator/group/MemberMetadataTest.scala",
    tests={tag: ("testMatchesSupportedProtocols", "testVoteForPreferredProtocol", "testMetadata",
                 "testMetadataRaisesOnUnsupportedProtocol", "testVoteRaisesOnNoSupportedProtocols",
                 "testHasValidGroupInstanceId")
           for tag in ("2.4.1", "2.7.0", "3.9.0")},
)

ALL = ("2.4.1", "2.7.0", "3.9.0")


def member(protocols: tuple[tuple[str, bytes], ...], instance_id: str | None = "groupInstanceId") -> MemberMetadata:
    """The test file's member: memberId, clientId, clientHost, rebalance 60000, session 10000, "consumer"."""
    return MemberMetadata("memberId", "clientId", "clientHost", 10000, 60000, "consumer", protocols, instance_id)


@restates("testMatchesSupportedProtocols", *ALL)
def test_matches_same_names_in_the_same_order_with_equal_metadata(profile: str) -> None:
    m = member((("range", b""),))
    assert m.matches((("range", b""),))
    assert not m.matches((("range", b"\x00"),))
    assert not m.matches((("roundrobin", b""),))
    assert not m.matches((("range", b""), ("roundrobin", b"")))


@restates("testVoteForPreferredProtocol", *ALL)
def test_votes_for_its_first_preference_among_the_candidates(profile: str) -> None:
    m = member((("range", b""), ("roundrobin", b"")))
    assert m.vote({"range", "roundrobin"}) == "range"
    assert m.vote({"blah", "roundrobin"}) == "roundrobin"


@restates("testMetadata", *ALL)
def test_metadata_of_each_supported_protocol(profile: str) -> None:
    m = member((("range", b"\x00"), ("roundrobin", b"\x01")))
    assert m.metadata("range") == b"\x00"
    assert m.metadata("roundrobin") == b"\x01"


@restates("testMetadataRaisesOnUnsupportedProtocol", *ALL)
def test_metadata_of_an_unsupported_protocol_is_an_illegal_argument(profile: str) -> None:
    m = member((("range", b""), ("roundrobin", b"")))
    with pytest.raises(IllegalArgumentError):
        m.metadata("blah")


@restates("testVoteRaisesOnNoSupportedProtocols", *ALL)
def test_a_vote_with_no_supported_candidate_is_an_illegal_argument(profile: str) -> None:
    m = member((("range", b""), ("roundrobin", b"")))
    with pytest.raises(IllegalArgumentError):
        m.vote({"blah"})


@restates("testHasValidGroupInstanceId", *ALL)
def test_a_member_with_an_instance_id_is_static(profile: str) -> None:
    m = member((("range", b"\x00"), ("roundrobin", b"\x01")))
    assert m.is_static_member
    assert m.group_instance_id == "groupInstanceId"
    assert not member((("range", b""),), instance_id=None).is_static_member

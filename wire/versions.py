"""Which API versions `kgc serve` advertises, per profile: release facts × what the wire layer serves.

Two tables, one fact each. ``BROKER_MAX_BY_RELEASE`` records, per API, the release in which a
Kafka broker first accepted each new maximum version (Kafka's release notes and message JSON
schemas), and ``BROKER_MIN_BY_RELEASE`` the release from which it refused the oldest ones (KIP-896, 4.0).
``SERVED`` records the version range this package decodes, answers and tests. A profile advertises the
intersection for its release — and, for the APIs its coordinator answers, the range of the coordinator's own
release table when a sibling runtime serves the profile (impl/java_gc/versions.py for 4.1) — so adding a
profile is a new release key or a runtime's table, never an ``if profile == …`` here or in the server.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from kafka.protocol.api_key import ApiKey

from impl.profiles import sibling_runtime

Release = tuple[int, ...]

#: API -> ((first release with this broker max version, max version), …), oldest first. Only the
#: releases up to the newest profile matter; a later step is listed when a served version needs it.
BROKER_MAX_BY_RELEASE: Mapping[str, tuple[tuple[Release, int], ...]] = MappingProxyType({
    # served so that clients enable their message-format features (librdkafka derives MsgVer1/2 from
    # Produce v2/v3 together with Fetch v2/v4, and otherwise sends Fetch v0); answered by refusal
    "Produce": (((0, 10, 0), 2), ((0, 11), 3), ((1, 0), 5), ((2, 0), 6), ((2, 1), 7), ((2, 4), 8), ((2, 8), 9)),
    "ApiVersions": (((0, 10, 0), 0), ((0, 11), 1), ((2, 0), 2), ((2, 4), 3)),
    "Metadata": (((0, 10, 0), 1), ((0, 10, 1), 2), ((0, 11), 4), ((1, 0), 5), ((2, 0), 6), ((2, 1), 7),
                 ((2, 3), 8), ((2, 4), 9), ((2, 8), 11), ((3, 1), 12)),
    # GroupCoordinator in 0.10.0 (key type from v1, 0.11; batched keys v4, KIP-699, 3.0)
    "FindCoordinator": (((0, 10, 0), 0), ((0, 11), 1), ((2, 0), 2), ((2, 4), 3), ((3, 0), 4)),
    # v1 rebalance timeout (KIP-62, 0.10.1); v4 MEMBER_ID_REQUIRED (KIP-394, 2.2); v5 static members
    # (KIP-345, 2.3); v6 flexible (2.4); v7 protocol type (KIP-559, 2.5); v8 reason, v9 skip (3.2)
    "JoinGroup": (((0, 10, 0), 0), ((0, 10, 1), 1), ((0, 11), 2), ((2, 0), 3), ((2, 2), 4), ((2, 3), 5),
                  ((2, 4), 6), ((2, 5), 7), ((3, 2), 9)),
    "SyncGroup": (((0, 10, 0), 0), ((0, 11), 1), ((2, 0), 2), ((2, 3), 3), ((2, 4), 4), ((2, 5), 5)),
    "Heartbeat": (((0, 10, 0), 0), ((0, 11), 1), ((2, 0), 2), ((2, 3), 3), ((2, 4), 4)),
    # v3 batch leave (KAFKA-8221, 2.4; SPEC.md §3.4), v5 reason (3.2)
    "LeaveGroup": (((0, 10, 0), 0), ((0, 11), 1), ((2, 0), 2), ((2, 4), 4), ((3, 2), 5)),
    "OffsetCommit": (((0, 10, 0), 2), ((0, 11), 3), ((2, 0), 4), ((2, 1), 6), ((2, 3), 7), ((2, 4), 8)),
    "OffsetFetch": (((0, 10, 0), 1), ((0, 10, 2), 2), ((0, 11), 3), ((2, 0), 4), ((2, 1), 5), ((2, 4), 6),
                    ((2, 5), 7), ((3, 0), 8)),
    "ListOffsets": (((0, 10, 0), 0), ((0, 10, 1), 1), ((0, 11), 2), ((2, 0), 3), ((2, 1), 4), ((2, 2), 5),
                    ((2, 5), 6), ((3, 0), 7)),
    "Fetch": (((0, 10, 0), 2), ((0, 10, 1), 3), ((0, 11), 5), ((1, 0), 6), ((1, 1), 7), ((2, 0), 8),
              ((2, 1), 10), ((2, 3), 11), ((2, 7), 12)),
    "DescribeGroups": (((0, 10, 0), 0), ((0, 11), 1), ((2, 0), 2), ((2, 3), 3), ((2, 4), 5)),
})

#: API -> ((first release whose brokers refuse the versions below ``min``, min), …): KIP-896's removals in 4.0.0
#: for the APIs the server answers itself (FetchRequest.json, ListOffsetsRequest.json @4.0.0: "4-17", "1-10").
#: Produce is not listed: 4.x brokers still advertise Produce from v0, though they serve v3+, because librdkafka
#: reads a higher minimum as no Produce at all (KAFKA-18659; ApiKeys.java@4.1.1:153-156, 283-298).
BROKER_MIN_BY_RELEASE: Mapping[str, tuple[tuple[Release, int], ...]] = MappingProxyType({
    "Fetch": (((4, 0), 4),),
    "ListOffsets": (((4, 0), 1),),
})

#: API -> (min, max) version this package serves. OffsetCommit v0/v1 and OffsetFetch v0 (ZooKeeper
#: offsets, commit timestamps) are not served, as in Kafka 4.0 (KIP-896); Fetch stops before topic
#: ids (v13); Metadata before v13; OffsetCommit/OffsetFetch before topic ids (v10: an unstable version at 4.1.1,
#: impl/java_gc/versions.py). OffsetCommit v9 (the KIP-848 member epoch in the generation field), OffsetFetch v9
#: (member id and epoch, read by no classic group) and DescribeGroups v6 (GROUP_ID_NOT_FOUND for an unknown
#: group, R16) are served for the releases that have them.
SERVED: Mapping[str, tuple[int, int]] = MappingProxyType({
    "Produce": (0, 9), "ApiVersions": (0, 3), "Metadata": (0, 12), "FindCoordinator": (0, 4), "JoinGroup": (0, 9),
    "SyncGroup": (0, 5), "Heartbeat": (0, 4), "LeaveGroup": (0, 5), "OffsetCommit": (2, 9),
    "OffsetFetch": (1, 9), "ListOffsets": (0, 7), "Fetch": (0, 12), "DescribeGroups": (0, 6),
})


class UnknownReleaseError(ValueError):
    """A profile name that is not a dotted release number."""


def release_of(profile: str) -> Release:
    """'0.10.0' -> (0, 10, 0); profiles are named after the Kafka release they reproduce."""
    try:
        return tuple(int(part) for part in profile.split("."))
    except ValueError:
        raise UnknownReleaseError(f"profile {profile!r} is not a Kafka release number like 3.9.") from None


def broker_max(api: str, release: Release) -> int | None:
    """The highest version of ``api`` a broker of ``release`` accepts (None: the API did not exist)."""
    best = None
    for since, version in BROKER_MAX_BY_RELEASE[api]:
        if since <= release:
            best = version
    return best


def broker_min(api: str, release: Release) -> int:
    """The lowest version of ``api`` a broker of ``release`` accepts (0 unless KIP-896 removed some)."""
    low = 0
    for since, version in BROKER_MIN_BY_RELEASE.get(api, ()):
        if since <= release:
            low = version
    return low


def runtime_versions(profile: str) -> Mapping[str, tuple[int, int]]:
    """API -> (min, max) from the release table of the sibling runtime serving ``profile`` (impl/profiles.py
    SIBLING_RUNTIMES); empty for a profile of the Scala-shaped coordinator, whose ranges are the tables above."""
    runtime = sibling_runtime(profile)
    if runtime is None:
        return MappingProxyType({})
    table: Mapping[str, tuple[int, int]] = runtime.api_versions(profile)   # type: ignore[attr-defined]
    return table


def supported_versions(profile: str) -> dict[int, tuple[int, int]]:
    """API key -> (min, max) advertised for ``profile``: the served range within the release's range (the
    runtime's own table for the APIs it lists)."""
    release = release_of(profile)
    own = runtime_versions(profile)
    table: dict[int, tuple[int, int]] = {}
    for api in sorted(SERVED):
        found = own[api] if api in own else (broker_min(api, release), broker_max(api, release))
        bottom, top = found
        if top is None:
            continue
        low, high = max(SERVED[api][0], bottom), min(SERVED[api][1], top)
        if low <= high:
            table[int(ApiKey[api])] = (low, high)
    return dict(sorted(table.items()))

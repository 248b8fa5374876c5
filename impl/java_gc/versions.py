"""Release facts of the Java coordinator's releases that the runtime and the wire need, as data (R14).

API version ranges are what a broker of the release accepts and advertises with its default configuration: the
``validVersions`` of clients/src/main/resources/common/message/*Request.json at each tag, less a last version the
schema marks ``"latestVersionUnstable": true`` — such a version is enabled only by the internal broker setting
``unstable.api.versions.enable`` (default false: ServerConfigs.java@4.1.1:110, 152; ApiKeys.java@4.1.1:222-224,
242-249, 283-298 cap the advertised and accepted maximum at the latest *stable* version). KIP-896 removed the
oldest versions in 4.0.0; KAFKA-19444 brought JoinGroup v0–v1 back in 4.0.1 for librdkafka < 2.11; 4.1.0 added
OffsetCommit/OffsetFetch v10 (topic ids, KIP-848) but as unstable versions, so a 4.1.1 broker still serves
OffsetCommit 2–9 and OffsetFetch 1–9 (SPEC-4x.md R14 lists 10: corrected here). Only ``4.1`` is a runnable
profile; 4.0.0 and 4.0.1 are recorded so that a later profile reads them from here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True, slots=True)
class JavaRelease:
    name: str                                       # the kgc profile name (or the release, if not a profile)
    tag: str                                        # Apache's release tag the facts were read at
    api_versions: Mapping[str, tuple[int, int]]     # API -> (min, max) the broker accepts with default settings
    #: API -> the schema's newest version, off by default (``latestVersionUnstable``; unstable.api.versions.enable)
    unstable_versions: Mapping[str, int] = field(default_factory=dict)


_COMMON_4X = {"SyncGroup": (0, 5), "Heartbeat": (0, 4), "LeaveGroup": (0, 5), "DescribeGroups": (0, 6),
              "ConsumerGroupHeartbeat": (0, 1)}

RELEASE_4_0_0 = JavaRelease("4.0.0", "4.0.0", MappingProxyType(
    {**_COMMON_4X, "JoinGroup": (2, 9), "OffsetCommit": (2, 9), "OffsetFetch": (1, 9)}))
RELEASE_4_0_1 = JavaRelease("4.0.1", "4.0.1", MappingProxyType(
    {**_COMMON_4X, "JoinGroup": (0, 9), "OffsetCommit": (2, 9), "OffsetFetch": (1, 9)}))
# OffsetCommitRequest.json / OffsetFetchRequest.json @4.1.0 and @4.1.1: "validVersions": "2-10" / "1-10" with
# "latestVersionUnstable": true
RELEASE_4_1 = JavaRelease("4.1", "4.1.1", MappingProxyType(
    {**_COMMON_4X, "JoinGroup": (0, 9), "OffsetCommit": (2, 9), "OffsetFetch": (1, 9)}),
    MappingProxyType({"OffsetCommit": 10, "OffsetFetch": 10}))

#: the releases this runtime serves, by profile name (registered in impl/profiles.py SIBLING_RUNTIMES)
JAVA_RELEASES: Mapping[str, JavaRelease] = MappingProxyType({RELEASE_4_1.name: RELEASE_4_1})
#: every release whose facts are recorded, runnable or not
RECORDED_RELEASES: tuple[JavaRelease, ...] = (RELEASE_4_0_0, RELEASE_4_0_1, RELEASE_4_1)


def max_version(release: JavaRelease, api: str) -> int:
    return release.api_versions[api][1]

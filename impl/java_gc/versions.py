"""Release facts of the Java coordinator's releases that the runtime and the wire need, as data (R14).

API version ranges are the ``validVersions`` of clients/src/main/resources/common/message/*Request.json at each
tag (KIP-896 removed the oldest versions in 4.0.0; KAFKA-19444 brought JoinGroup v0–v1 back in 4.0.1 for
librdkafka < 2.11; 4.1.0 added OffsetCommit/OffsetFetch v10). Only ``4.1`` is a runnable profile; 4.0.0 and
4.0.1 are recorded so that a later profile reads them from here.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True, slots=True)
class JavaRelease:
    name: str                                       # the kgc profile name (or the release, if not a profile)
    tag: str                                        # Apache's release tag the facts were read at
    api_versions: Mapping[str, tuple[int, int]]     # API -> (min, max) the broker accepts


_COMMON_4X = {"SyncGroup": (0, 5), "Heartbeat": (0, 4), "LeaveGroup": (0, 5), "DescribeGroups": (0, 6),
              "ConsumerGroupHeartbeat": (0, 1)}

RELEASE_4_0_0 = JavaRelease("4.0.0", "4.0.0", MappingProxyType(
    {**_COMMON_4X, "JoinGroup": (2, 9), "OffsetCommit": (2, 9), "OffsetFetch": (1, 9)}))
RELEASE_4_0_1 = JavaRelease("4.0.1", "4.0.1", MappingProxyType(
    {**_COMMON_4X, "JoinGroup": (0, 9), "OffsetCommit": (2, 9), "OffsetFetch": (1, 9)}))
RELEASE_4_1 = JavaRelease("4.1", "4.1.1", MappingProxyType(
    {**_COMMON_4X, "JoinGroup": (0, 9), "OffsetCommit": (2, 10), "OffsetFetch": (1, 10)}))

#: the releases this runtime serves, by profile name (registered in impl/profiles.py SIBLING_RUNTIMES)
JAVA_RELEASES: Mapping[str, JavaRelease] = MappingProxyType({RELEASE_4_1.name: RELEASE_4_1})
#: every release whose facts are recorded, runnable or not
RECORDED_RELEASES: tuple[JavaRelease, ...] = (RELEASE_4_0_0, RELEASE_4_0_1, RELEASE_4_1)


def max_version(release: JavaRelease, api: str) -> int:
    return release.api_versions[api][1]

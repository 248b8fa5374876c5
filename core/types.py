"""Shared vocabulary: group states and Kafka error codes (stdlib only).

Every layer speaks these names; they follow Kafka's own (SPEC.md §1.1, §3.8).
"""
from __future__ import annotations

import enum


class GroupState(enum.Enum):
    """The five states of a classic group (SPEC.md §1.1).

    COMPLETING_REBALANCE was called AwaitingSync up to 0.11.x; profiles carry the
    display name of their release (see ``impl.profiles.Profile.state_name``).
    """

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __repr__(self) -> str:
        return f"GroupState.{self.name}"


class Errors(enum.IntEnum):
    """Kafka error codes used by the group coordinator (names as in Kafka ≥ 0.11).

    Releases ≤ 0.10.x named three of them differently (GROUP_COORDINATOR_NOT_AVAILABLE,
    NOT_COORDINATOR_FOR_GROUP, GROUP_LOAD_IN_PROGRESS; SPEC.md §3.0); the codes are equal,
    so kgc uses the modern names for every profile.
    """

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    UNSUPPORTED_VERSION = 35
    KAFKA_STORAGE_ERROR = 56
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82

    def __repr__(self) -> str:
        return f"Errors.{self.name}"


#: member id of a JoinGroup from a member that has none yet (JoinGroupRequest.UNKNOWN_MEMBER_ID)
UNKNOWN_MEMBER_ID = ""
#: generation carried by error responses and by members that have none (NoGeneration, SPEC.md §3.1)
NO_GENERATION = -1

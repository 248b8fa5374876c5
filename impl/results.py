"""Configuration, response values, response futures and read-only views of the coordinator."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from core.types import Errors, GroupState

APPEND_MODES = ("sync", "deferred")


@dataclass(frozen=True, slots=True)
class CoordinatorConfig:
    """Broker settings (SPEC.md §0 defaults; group.max.session.timeout.ms as in 2.8.0+)."""

    profile: str = "3.9"
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = 2**31 - 1
    new_member_join_timeout_ms: int = 300000
    #: "sync": a log append completes inside the request that made it (acks satisfied at once);
    #: "deferred": it stays pending until complete_append(s) — the window of SPEC.md §5.2.
    append_mode: str = "sync"

    def __post_init__(self) -> None:
        if self.append_mode not in APPEND_MODES:
            raise ValueError(f"append_mode must be one of {APPEND_MODES}, got {self.append_mode!r}.")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError("group_min_session_timeout_ms must not exceed group_max_session_timeout_ms.")
        if self.group_max_size < 1:
            raise ValueError("group_max_size must be at least 1.")

    def to_tuple(self) -> tuple[Any, ...]:
        return (self.profile, self.group_min_session_timeout_ms, self.group_max_session_timeout_ms,
                self.group_initial_rebalance_delay_ms, self.group_max_size, self.new_member_join_timeout_ms,
                self.append_mode)


Member = tuple[str, "str | None", bytes]


@dataclass(frozen=True, slots=True)
class JoinGroupResult:
    error: Errors
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str
    member_id: str
    members: tuple[Member, ...] = ()   # (member_id, group_instance_id, metadata); the leader's response only
    skip_assignment: bool = False      # [3.2+, KIP-814] a static leader rejoining a Stable group: do not assign


@dataclass(frozen=True, slots=True)
class SyncGroupResult:
    error: Errors
    assignment: bytes = b""
    protocol_type: str | None = None   # [2.5+, SyncGroup v5, KIP-559] the group's, on a successful answer
    protocol_name: str | None = None


@dataclass(frozen=True, slots=True)
class HeartbeatResult:
    error: Errors


@dataclass(frozen=True, slots=True)
class LeaveGroupResult:
    error: Errors
    member_errors: tuple[tuple[str, "str | None", Errors], ...] = ()


@dataclass(frozen=True, slots=True)
class CommitResult:
    error: Errors


class ResponseFuture:
    """A response that may be given later: a parked JoinGroup/SyncGroup is one of these, held as data.

    ``complete`` appends to the coordinator's outbox; completing twice is recorded (``completions``)
    rather than refused, because a coordinator bug that answers twice must be observable.
    """

    __slots__ = ("key", "api", "done", "result", "completions", "_outbox")

    def __init__(self, key: Hashable, api: str, outbox: list[tuple[Hashable, str, Any]]) -> None:
        self.key = key
        self.api = api
        self.done = False
        self.result: Any = None
        self.completions = 0
        self._outbox = outbox

    def complete(self, result: Any) -> None:
        self.completions += 1
        if not self.done:
            self.done, self.result = True, result
        self._outbox.append((self.key, self.api, result))

    def __repr__(self) -> str:
        return f"ResponseFuture({self.key!r}, {self.api}, done={self.done})"


@dataclass(frozen=True, slots=True)
class MemberView:
    member_id: str
    group_instance_id: str | None
    session_timeout_ms: int
    rebalance_timeout_ms: int
    awaiting_join: bool
    awaiting_sync: bool
    is_new: bool
    assignment: bytes
    protocols: tuple[tuple[str, bytes], ...]
    latest_heartbeat_ms: int = 0
    heartbeat_satisfied: bool = False
    is_leaving: bool = False


@dataclass(frozen=True, slots=True)
class GroupView:
    group_id: str
    state: GroupState
    generation_id: int
    leader_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    members: dict[str, MemberView] = field(default_factory=dict)
    pending_members: frozenset[str] = frozenset()
    pending_sync_members: frozenset[str] = frozenset()
    num_members_awaiting_join: int = 0
    supported_protocols: tuple[tuple[str, int], ...] = ()
    new_member_added: bool = False
    static_members: tuple[tuple[str, str], ...] = ()   # staticMembers: (group.instance.id, member id), sorted


@dataclass(frozen=True, slots=True)
class MemberSummary:
    """One member as DescribeGroups shows it: metadata (of the group's protocol) and assignment only when Stable."""
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """A DescribeGroups answer (Kafka's handleDescribeGroup: its error and GroupMetadata.summary). ``state`` is the
    release's state name, "" with a pre-check error; ``protocol`` is "" unless the group is Stable."""
    error: Errors
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberSummary, ...] = ()


@dataclass(frozen=True, slots=True)
class DelayedOpView:
    kind: str          # "DelayedJoin" | "InitialDelayedJoin" | "DelayedHeartbeat" | "DelayedSync"
    key: str           # watch key, e.g. "join:g", "member:g:c0-1", "sync:g"
    deadline_ms: int
    completed: bool
    seq: int
    member_id: str = ""
    pending: bool = False


@dataclass(frozen=True, slots=True)
class TimerView:
    seq: int
    deadline_ms: int
    kind: str
    key: str


@dataclass(frozen=True, slots=True)
class AppendView:
    seq: int
    group_id: str
    generation_id: int
    kind: str          # "assignment" (leader SyncGroup) | "empty" (rebalance ended Empty)

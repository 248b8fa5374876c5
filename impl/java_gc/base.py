"""What the Java runtime's parts share: partitions, the operation result value, and the fields and hooks the
mixins (joining, rebalance, syncing, members, runtime) call across."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Hashable

from core.types import Errors, GroupState
from impl.java_gc.choices import Choices
from impl.java_gc.group import ClassicGroup, ClassicGroupMember, RequestError
from impl.java_gc.log import PartitionLog, Record, Write
from impl.java_gc.timers import KeyedTimer, Op
from impl.results import CoordinatorConfig, JoinGroupResult, ResponseFuture

if TYPE_CHECKING:
    from impl.coordinator import JoinRequest

ACTIVE, LOADING = "active", "loading"


@dataclass(frozen=True, slots=True)
class Result:
    """CoordinatorResult of an operation: at most one group record, its append callback, the answer."""

    group_id: str | None = None
    record: Record | None = None
    callback: tuple[Any, ...] | None = None
    response: object = None

    @property
    def has_record(self) -> bool:
        return self.group_id is not None


EMPTY_RESULT = Result()


@dataclass(slots=True)
class Partition:
    """One ``__consumer_offsets`` partition this broker leads: its shard's groups, timer and log."""

    index: int
    state: str = ACTIVE
    groups: dict[str, ClassicGroup] = field(default_factory=dict)
    timer: KeyedTimer = field(default_factory=KeyedTimer)
    log: PartitionLog = field(default_factory=PartitionLog)
    #: group id -> the log offset whose commit makes its creation visible to reads (None: in the open batch)
    visible_at: dict[str, int | None] = field(default_factory=dict)


def heartbeat_key(group_id: str, member_id: str) -> str:
    return f"heartbeat-{group_id}-{member_id}"   # GMM.classicGroupHeartbeatKey (GMM:8542-8544)


def join_key(group_id: str) -> str:
    return f"join-{group_id}"                     # GMM.classicGroupJoinKey


def sync_key(group_id: str) -> str:
    return f"sync-{group_id}"                     # GMM.classicGroupSyncKey


class JavaBase(ABC):
    """Fields of the Java coordinator and the small helpers every part uses."""

    config: CoordinatorConfig
    num_partitions: int
    partitions: dict[int, Partition]
    durable: dict[int, dict[str, Record | None]]   # None: a simple group known by its offsets only
    active: bool
    now_ms: int
    counter: int
    incarnations: int
    choices: Choices
    errors: list[str]
    _outbox: list[tuple[Hashable, str, Any]]

    def _seq(self) -> int:
        self.counter += 1
        return self.counter

    def partition_for(self, group_id: str) -> int:
        """Utils.abs(groupId.hashCode) % offsets.topic.num.partitions (GroupCoordinatorService.topicPartitionFor)."""
        from impl.java_gc.choices import java_string_hash
        h = java_string_hash(group_id)
        signed = h - (1 << 32) if h >= 1 << 31 else h
        return (0 if signed == -(1 << 31) else abs(signed)) % self.num_partitions

    def _partition(self, group_id: str) -> Partition:
        return self.partitions[self.partition_for(group_id)]

    def _group(self, group_id: str) -> ClassicGroup | None:
        part = self.partitions.get(self.partition_for(group_id))
        return None if part is None else part.groups.get(group_id)

    def _existing_group(self, group_id: str) -> ClassicGroup:
        """getOrMaybeCreateClassicGroup(groupId, false): GroupIdNotFoundException if absent."""
        group = self._group(group_id)
        if group is None:
            raise RequestError(Errors.GROUP_ID_NOT_FOUND)
        return group

    def _create_group(self, group_id: str) -> ClassicGroup:
        """getOrMaybeCreateClassicGroup(groupId, true): a new Empty group in the (uncommitted) group map."""
        self.incarnations += 1
        group = ClassicGroup(group_id, self.incarnations)
        part = self._partition(group_id)
        part.groups[group_id] = group
        self._created.append(group_id)
        return group

    # -- timers (GMM's calls into CoordinatorTimer) --------------------------------------------------
    def _schedule(self, group_id: str, key: str, delay_ms: int, op: Op) -> None:
        self._partition(group_id).timer.schedule(key, self.now_ms + delay_ms, op, self._seq())

    def _cancel(self, group_id: str, key: str) -> None:
        self._partition(group_id).timer.cancel(key)

    def reschedule_heartbeat(self, group: ClassicGroup, member: ClassicGroupMember,
                             timeout_ms: int | None = None) -> None:
        """rescheduleClassicGroupMemberHeartbeat (GMM:7047-7074): replace the member's session timer."""
        delay = member.session_timeout_ms if timeout_ms is None else timeout_ms
        self._schedule(group.group_id, heartbeat_key(group.group_id, member.member_id), delay,
                       ("heartbeat", group.group_id, member.member_id))

    # -- cross-part hooks (declared here, defined by the mixins) ---------------------------------------
    _created: list[str]

    @abstractmethod
    def prepare_rebalance(self, group: ClassicGroup) -> Result:
        """prepareRebalance: PreparingRebalance with a join timer (rebalance.py)."""

    @abstractmethod
    def maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup) -> Result:
        """Rebalance if the state allows it, else re-check the join phase (rebalance.py)."""

    @abstractmethod
    def maybe_complete_join_phase(self, group: ClassicGroup) -> Result:
        """Complete the join phase when every member has joined (rebalance.py)."""

    @abstractmethod
    def complete_join(self, group: ClassicGroup) -> Result:
        """onCompleteJoin: the next generation and the join answers (rebalance.py)."""

    @abstractmethod
    def remove_member_and_update_group(self, group: ClassicGroup, member: ClassicGroupMember) -> Result:
        """Remove a member, then rebalance or re-check the join phase (rebalance.py)."""

    @abstractmethod
    def remove_pending_member_and_update_group(self, group: ClassicGroup, member_id: str) -> Result:
        """Drop a pending member id and re-check the join phase (rebalance.py)."""

    @abstractmethod
    def reset_and_propagate_assignment_with_error(self, group: ClassicGroup, error: Errors) -> None:
        """Answer every parked SyncGroup with ``error`` (syncing.py)."""

    @abstractmethod
    def _finish_write(self, write: Write, error: Errors | None) -> None:
        """A write's end: committed, failed or timed out (runtime.py)."""

    @abstractmethod
    def _flush(self, part: Partition, error: Errors | None) -> None:
        """Write the partition's open batch, or fail it with ``error`` (runtime.py)."""

    offsets_commit_timeout_ms: int

    @abstractmethod
    def _due(self) -> list[Any]:
        """Timer events the loop can run now (coordinator.py)."""

    @abstractmethod
    def update_static_member_then_rebalance_or_complete_join(
            self, req: "JoinRequest", group: ClassicGroup, old_member_id: str, new_member_id: str,
            future: ResponseFuture) -> Result:
        """A static replacement: store it or rebalance (static.py)."""

    @abstractmethod
    def on_assignment_appended(self, group: ClassicGroup, generation_id: int, assignment: dict[str, bytes],
                               error: Errors | None) -> None:
        """The leader's assignment write ended (syncing.py)."""

    @abstractmethod
    def on_static_member_appended(self, write_future: ResponseFuture | None, callback: tuple[object, ...],
                                  error: Errors | None) -> None:
        """A static replacement's write ended (static.py)."""

    @abstractmethod
    def on_heartbeat_timer(self, group_id: str, member_id: str) -> Result:
        """A member's session timer fired (timer callbacks)."""

    @abstractmethod
    def on_join_timer(self, group_id: str) -> Result:
        """The join timer fired (timer callbacks)."""

    @abstractmethod
    def on_initial_join_timer(self, group_id: str, delay_ms: int, remaining_ms: int) -> Result:
        """The initial-delay join timer fired (timer callbacks)."""

    @abstractmethod
    def on_sync_timer(self, group_id: str) -> Result:
        """The pending-sync timer fired (timer callbacks)."""


def join_error(member_id: str, error: Errors) -> JoinGroupResult:
    """A JoinGroup answer carrying only an error (generation -1, no protocol, no leader)."""
    return JoinGroupResult(error, -1, None, None, "", member_id)


def is_state(group: ClassicGroup, *states: GroupState) -> bool:
    return group.state in states


def pending(future: ResponseFuture | None) -> bool:
    return future is not None and not future.done

"""The coordinator's delayed operations: thin classes that call back into the coordinator (SPEC.md §4.4–4.8)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from core.events import OperationCompleted
from impl.group import GroupMetadata, MemberMetadata
from impl.purgatory import DelayedOperation

if TYPE_CHECKING:
    from impl.base import CoordinatorBase


def join_key(group_id: str) -> str:
    """GroupKey / GroupJoinKey."""
    return f"join:{group_id}"


def member_key(group_id: str, member_id: str) -> str:
    """MemberKey(groupId, memberId)."""
    return f"member:{group_id}:{member_id}"


def sync_key(group_id: str) -> str:
    """GroupSyncKey (3.0+)."""
    return f"sync:{group_id}"


def _completed(op: "DelayedJoin | DelayedHeartbeat | DelayedSync") -> None:
    """Log how the op completed: "expired" (its timer) or "condition" (try_complete)."""
    op.coordinator._event(OperationCompleted, op.kind, op.key, op.seq, "expired" if op.expired else "condition")


class DelayedJoin(DelayedOperation):
    """Completes when every member has rejoined (tryCompleteJoin) or when the rebalance timeout runs out."""

    kind = "DelayedJoin"
    __slots__ = ("coordinator", "group")

    def __init__(self, coordinator: "CoordinatorBase", group: GroupMetadata, delay_ms: int, seq: int) -> None:
        super().__init__(delay_ms, seq)
        self.coordinator = coordinator
        self.group = group

    @property
    def key(self) -> str:
        return join_key(self.group.group_id)

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_join(self.group, self.force_complete)

    def on_complete(self) -> None:
        _completed(self)
        self.coordinator.on_complete_join(self.group)

    def on_expiration(self) -> None:
        """Nothing (≤ 2.6); 2.7+ drains the ActionQueue, which kgc's single thread never fills."""


class InitialDelayedJoin(DelayedJoin):
    """The first rebalance of an Empty group waits group.initial.rebalance.delay.ms (SPEC.md §4.5)."""

    kind = "InitialDelayedJoin"
    __slots__ = ("configured_delay_ms", "remaining_ms")

    def __init__(self, coordinator: "CoordinatorBase", group: GroupMetadata, configured_delay_ms: int,
                 delay_ms: int, remaining_ms: int, seq: int) -> None:
        super().__init__(coordinator, group, delay_ms, seq)
        self.configured_delay_ms = configured_delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False   # it can only time out, even if everyone has joined

    def on_complete(self) -> None:
        _completed(self)
        self.coordinator.on_complete_initial_join(self)


class DelayedHeartbeat(DelayedOperation):
    """Liveness check of one member (or of a pending member id, KIP-394) — SPEC.md §4.6–4.7.

    It holds the member *object*, as the 0.10 code did: an op that outlives its member's removal
    still sees the stale object (the cause of KAFKA-7196's spurious rebalance). From 2.5 the hooks
    look the id up in the group instead.
    """

    kind = "DelayedHeartbeat"
    __slots__ = ("coordinator", "group", "member", "member_id", "heartbeat_deadline_ms", "is_pending")

    def __init__(self, coordinator: "CoordinatorBase", group: GroupMetadata, member: MemberMetadata | None,
                 member_id: str, heartbeat_deadline_ms: int, delay_ms: int, seq: int,
                 is_pending: bool = False) -> None:
        super().__init__(delay_ms, seq)
        self.coordinator = coordinator
        self.group = group
        self.member = member
        self.member_id = member_id
        self.heartbeat_deadline_ms = heartbeat_deadline_ms
        self.is_pending = is_pending

    @property
    def key(self) -> str:
        return member_key(self.group.group_id, self.member_id)

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_heartbeat(self, self.force_complete)

    def on_complete(self) -> None:
        """onCompleteHeartbeat: nothing to do but log."""
        _completed(self)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_heartbeat(self)


class DelayedSync(DelayedOperation):
    """Members that got a join response must SyncGroup within the rebalance timeout (KAFKA-12890, 3.0+)."""

    kind = "DelayedSync"
    __slots__ = ("coordinator", "group", "generation_id")

    def __init__(self, coordinator: "CoordinatorBase", group: GroupMetadata, generation_id: int,
                 delay_ms: int, seq: int) -> None:
        super().__init__(delay_ms, seq)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    @property
    def key(self) -> str:
        return sync_key(self.group.group_id)

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_pending_sync(self.group, self.generation_id, self.force_complete)

    def on_complete(self) -> None:
        """onCompletePendingSync: nothing to do but log."""
        _completed(self)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_pending_sync(self.group, self.generation_id)

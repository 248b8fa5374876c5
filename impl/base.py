"""What the coordinator's halves share: its state and the hooks one half calls in the other.

``GroupCoordinator`` (impl/coordinator.py) is assembled from ``RebalanceMixin`` (the join phase)
and ``LivenessMixin`` (heartbeats and the sync phase); both build on this base, which declares the
coordinator's fields and, as abstract methods, the calls that cross from one half to the other.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, Hashable

from core.events import StepEvent
from core.types import Errors
from impl.group import GroupMetadata, MemberMetadata
from impl.profiles import Profile
from impl.purgatory import DelayedOperationPurgatory, MockTimer
from impl.results import CoordinatorConfig, JoinGroupResult, ResponseFuture

if TYPE_CHECKING:
    from impl.coordinator import JoinRequest, PendingAppend
    from impl.delayed import DelayedHeartbeat, InitialDelayedJoin
    from impl.static_members import StaticRejoin


class CoordinatorBase(ABC):
    config: CoordinatorConfig
    profile: Profile
    timer: MockTimer
    heartbeat_purgatory: DelayedOperationPurgatory
    join_purgatory: DelayedOperationPurgatory
    groups: dict[str, GroupMetadata]
    log: dict[str, tuple[Any, ...]]
    appends: list["PendingAppend"]
    events: list[StepEvent]
    record_events: bool
    counter: int

    @property
    def now_ms(self) -> int:
        return self.timer.now_ms

    def _seq(self) -> int:
        self.counter += 1
        return self.counter

    def _event(self, kind: Callable[..., StepEvent], *fields: object) -> None:
        """Log a ``kind(*fields)`` event (core/events.py); built only when recording."""
        if self.record_events:
            self.events.append(kind(*fields))   # the world records the time of the step it belongs to

    def _generate_member_id(self, client_id: str) -> str:
        return f"{client_id}-{self._seq()}"   # Kafka: clientId + "-" + UUID; a counter keeps runs deterministic

    def join_error(self, member_id: str, error: Errors) -> JoinGroupResult:
        return JoinGroupResult(error, self.profile.join_error_generation, None, None, "", member_id)

    # -- requests and log appends (coordinator.py) ------------------------------------------------
    @abstractmethod
    def _future(self, request_key: Hashable | None, api: str) -> ResponseFuture:
        """A response future for the request ``request_key`` (a fresh key if None)."""

    @abstractmethod
    def _leave_member(self, group: GroupMetadata, member_id: str) -> Errors:
        """LeaveGroup of one member id (or pending id) that passed the identity checks."""

    @abstractmethod
    def _append(self, group: GroupMetadata, kind: str, assignment: dict[str, bytes],
                rejoin: "StaticRejoin | None" = None) -> None:
        """Append a group record; its completion runs the store callback (sync or deferred)."""

    @abstractmethod
    def _remove_group(self, group: GroupMetadata) -> None:
        """Drop a dead group from the cache (and tombstone it)."""

    # -- the join phase (rebalance.py) -------------------------------------------------------------
    @abstractmethod
    def maybe_prepare_rebalance(self, group: GroupMetadata) -> None:
        """prepareRebalance if the state allows it."""

    @abstractmethod
    def prepare_rebalance(self, group: GroupMetadata) -> None:
        """Move to PreparingRebalance with a new DelayedJoin."""

    @abstractmethod
    def remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """Remove a member, then rebalance or re-check the join phase."""

    @abstractmethod
    def remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        """Drop a pending member id and re-check the join phase."""

    # -- static membership (static_members.py) ----------------------------------------------------
    @abstractmethod
    def current_member_error(self, group: GroupMetadata, member_id: str,
                             group_instance_id: str | None, join: bool = False) -> Errors | None:
        """FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID if (member id, instance id) is not a current member."""

    @abstractmethod
    def is_known_static_instance(self, group: GroupMetadata, group_instance_id: str | None) -> bool:
        """The instance id maps to a member of the group."""

    @abstractmethod
    def static_member_rejoin(self, group: GroupMetadata, req: "JoinRequest", new_member_id: str,
                             future: ResponseFuture) -> None:
        """A known static instance joined with an unknown member id: replace its id."""

    # -- liveness and the sync phase (liveness.py) --------------------------------------------------
    @abstractmethod
    def complete_and_schedule_next_expiration(self, group: GroupMetadata, member: MemberMetadata,
                                              timeout_ms: int | None = None) -> None:
        """Complete the member's heartbeat op and arm the next one."""

    @abstractmethod
    def add_pending_member_expiration(self, group: GroupMetadata, member_id: str, timeout_ms: int) -> None:
        """Arm the expiration of a pending member id."""

    @abstractmethod
    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> None:
        """Clear assignments and answer every parked SyncGroup with ``error``."""

    @abstractmethod
    def remove_sync_expiration(self, group: GroupMetadata) -> None:
        """Clear pendingSyncMembers and let the DelayedSync complete."""

    @abstractmethod
    def schedule_pending_sync(self, group: GroupMetadata) -> None:
        """Arm the DelayedSync of the new generation."""

    # -- what the delayed operations call back (delayed.py) ---------------------------------------
    @abstractmethod
    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        """tryCompleteJoin."""

    @abstractmethod
    def on_complete_join(self, group: GroupMetadata) -> None:
        """onCompleteJoin."""

    @abstractmethod
    def on_complete_initial_join(self, op: "InitialDelayedJoin") -> None:
        """InitialDelayedJoin.onComplete."""

    @abstractmethod
    def try_complete_heartbeat(self, op: "DelayedHeartbeat", force_complete: Callable[[], bool]) -> bool:
        """tryCompleteHeartbeat."""

    @abstractmethod
    def on_expire_heartbeat(self, op: "DelayedHeartbeat") -> None:
        """onExpireHeartbeat."""

    @abstractmethod
    def try_complete_pending_sync(self, group: GroupMetadata, generation_id: int,
                                  force_complete: Callable[[], bool]) -> bool:
        """tryCompletePendingSync."""

    @abstractmethod
    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        """onExpirePendingSync."""

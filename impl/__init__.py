"""The reference coordinator: Kafka's classic GroupCoordinator on a mock clock (stdlib + core)."""
from core.types import Errors, GroupState
from impl.coordinator import GroupCoordinator
from impl.group import IllegalStateError
from impl.profiles import DEFAULT_PROFILE, PROFILES, Profile, UnknownProfileError, get_profile
from impl.results import (AppendView, CommitResult, CoordinatorConfig, DelayedOpView, GroupSummary, GroupView,
                          HeartbeatResult, JoinGroupResult, LeaveGroupResult, MemberSummary, MemberView,
                          ResponseFuture, SyncGroupResult, TimerView)

__all__ = ["AppendView", "CommitResult", "CoordinatorConfig", "DEFAULT_PROFILE", "DelayedOpView", "Errors",
           "GroupCoordinator", "GroupState", "GroupSummary", "GroupView", "HeartbeatResult", "IllegalStateError",
           "JoinGroupResult", "LeaveGroupResult", "MemberSummary", "MemberView", "PROFILES", "Profile",
           "ResponseFuture", "SyncGroupResult", "TimerView", "UnknownProfileError", "get_profile"]

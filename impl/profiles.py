"""Release profiles: one frozen value of behaviour switches per Kafka release (DESIGN.md §3).

Handlers never compare versions; they read a named switch here. Adding a release is adding a
``Profile(...)`` value to ``PROFILES``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from core.types import Errors, GroupState
from impl.static import STATIC_3_9, StaticRules

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)

#: SPEC.md §1.2, column "0.10.1+": valid previous states of each target state.
PREVIOUS_STATES_0_10_1 = MappingProxyType({
    E: frozenset({PR}),
    PR: frozenset({S, CR, E}),
    CR: frozenset({PR}),
    S: frozenset({CR}),
    D: frozenset({S, PR, CR, E, D}),
})
#: SPEC.md §1.2, column "0.9.0.0" (E0: 0.9.x–0.10.0.x have no Empty state and no Dead self-loop).
PREVIOUS_STATES_0_9 = MappingProxyType({
    PR: frozenset({S, CR}),
    CR: frozenset({PR}),
    S: frozenset({CR}),
    D: frozenset({S, PR, CR}),
})

#: Heartbeat answer by group state: (error, resets the member's heartbeat timer). SPEC.md §3.3.
HEARTBEAT_0_9 = MappingProxyType({
    PR: (Errors.REBALANCE_IN_PROGRESS, False), CR: (Errors.REBALANCE_IN_PROGRESS, False),
    S: (Errors.NONE, True),
})
HEARTBEAT_2_7 = MappingProxyType({
    E: (Errors.UNKNOWN_MEMBER_ID, False), PR: (Errors.REBALANCE_IN_PROGRESS, True),
    CR: (Errors.NONE, True), S: (Errors.NONE, True),
})


class UnknownProfileError(ValueError):
    """Raised for a profile name kgc does not ship; the message lists the known ones."""


@dataclass(frozen=True, slots=True)
class Profile:
    """Behaviour switches of one Kafka release; every field names one documented difference."""

    name: str
    description: str
    previous_states: Mapping[GroupState, frozenset[GroupState]]
    #: state of a freshly created group: Stable in E0 (seed 001: "消费组初始为稳定状态"), Empty from 0.10.1
    initial_state: GroupState
    #: what a rebalance that ends with no members leads to: Dead in E0 (SPEC.md §4.4 last line), else Empty
    emptied_group_state: GroupState
    #: "session": rebalance timeout = max session timeout (E0, seed 000); "rebalance": max rebalance timeout (KIP-62)
    rebalance_timeout_source: str
    #: "deadline": keep ⇔ awaitingJoin ∨ awaitingSync ∨ latestHeartbeat + session > deadline (≤ 2.1.0);
    #: "satisfied": hasSatisfiedHeartbeat with the heartbeatSatisfied flag (2.5.0+, KAFKA-9752). SPEC.md §2.
    liveness: str
    heartbeat_answers: Mapping[GroupState, tuple[Errors, bool]]
    #: 0.9–2.2 switched on the group state before checking member and generation (SPEC.md §3.3)
    heartbeat_state_check_first: bool
    #: answer to any request that finds the group Dead: UNKNOWN_MEMBER_ID ≤ 2.2, COORDINATOR_NOT_AVAILABLE 2.3+
    dead_group_error: Errors
    #: JoinGroup/SyncGroup test Dead before protocol/member checks (2.3+); E0 tested it after them
    dead_check_first: bool
    #: JoinGroup responses carry the protocol type (2.5+, SPEC.md §3.1)
    join_response_has_protocol_type: bool
    #: generation carried by JoinGroup error responses: 0 before 2.2, NoGeneration (-1) after (SPEC.md §3.1)
    join_error_generation: int
    #: protocol type fixed when the group is created (E0) instead of by the first member added
    protocol_type_at_creation: bool
    #: supportsProtocols: "intersection" (0.9: group empty or common protocols intersect) or "all_members" (2.2+)
    protocol_check: str
    #: KIP-394 pending members and MEMBER_ID_REQUIRED (2.2.0)
    pending_members: bool
    #: new members get a 5-minute heartbeat op when added (KAFKA-7610, 2.1.1/2.2.0)
    new_member_join_timeout: bool
    #: InitialDelayedJoin when a rebalance starts from Empty (KAFKA-4925, 0.11.0)
    initial_rebalance_delay: bool
    #: group.max.size with the 2.6 acceptJoiningMember rule (KAFKA-9885)
    max_group_size: bool
    #: DelayedSync / pendingSyncMembers (KAFKA-12890, 2.8.1/3.0)
    delayed_sync: bool
    #: a rejoin copies the new session/rebalance timeouts (KAFKA-14009, 3.3.2/3.4.0)
    update_timeouts_on_rejoin: bool
    #: a SyncGroup parked in CompletingRebalance reschedules the member's heartbeat (seed 000, 0.10.0 code)
    sync_park_reschedules_heartbeat: bool
    #: removeMemberAndUpdateGroup answers a parked JoinGroup with UNKNOWN_MEMBER_ID (2.2.0+)
    remove_answers_parked_join: bool
    #: onCompleteJoin completes the heartbeat ops of the members it removes (KAFKA-7196, 2.1.0)
    complete_removed_heartbeats: bool
    #: LeaveGroup v3 batch form with per-member errors (KAFKA-8221, 2.4.0)
    batch_leave: bool
    #: before 2.0 the NOT_COORDINATOR check came before the loading check (SPEC.md §3.0)
    not_coordinator_before_loading: bool
    #: SyncGroup checks the loading state (2.0+; ≤ 1.1 it did not, SPEC.md §3.0)
    sync_checks_loading: bool
    #: OffsetCommit checked CompletingRebalance before member/generation (0.9–2.3, KAFKA-8487)
    commit_state_check_first: bool
    #: a commit with generation < 0 to an absent group creates an Empty group (2.x+); E0 stores without a group
    commit_creates_group: bool
    #: display names of the states in this release (AwaitingSync until 1.0, KAFKA-5565)
    state_names: Mapping[GroupState, str] = field(default_factory=dict)
    #: static membership (KIP-345, 2.3.0+) and its per-release rules; None: a JoinGroup carrying
    #: group.instance.id is answered UNSUPPORTED_VERSION (impl/static.py)
    static_membership: StaticRules | None = None

    def state_name(self, state: GroupState) -> str:
        return self.state_names.get(state, state.value)

    @property
    def states(self) -> tuple[GroupState, ...]:
        """The states this release has, in GroupState order."""
        return tuple(s for s in GroupState if s in self.previous_states)


PROFILE_0_10_0 = Profile(
    name="0.10.0",
    description="Kafka 0.10.0 (era E0), the release the seed documents describe",
    previous_states=PREVIOUS_STATES_0_9, initial_state=S, emptied_group_state=D,
    rebalance_timeout_source="session", liveness="deadline", heartbeat_answers=HEARTBEAT_0_9,
    heartbeat_state_check_first=True, dead_group_error=Errors.UNKNOWN_MEMBER_ID, dead_check_first=False,
    join_response_has_protocol_type=False, join_error_generation=0,
    protocol_type_at_creation=True, protocol_check="intersection", pending_members=False,
    new_member_join_timeout=False, initial_rebalance_delay=False, max_group_size=False, delayed_sync=False,
    update_timeouts_on_rejoin=False, sync_park_reschedules_heartbeat=True, remove_answers_parked_join=False,
    complete_removed_heartbeats=False, batch_leave=False, not_coordinator_before_loading=True,
    sync_checks_loading=False, commit_state_check_first=True, commit_creates_group=False,
    state_names=MappingProxyType({CR: "AwaitingSync"}),
)

PROFILE_3_9 = Profile(
    name="3.9",
    description="Kafka 3.9 (era E5), the last Scala classic coordinator",
    previous_states=PREVIOUS_STATES_0_10_1, initial_state=E, emptied_group_state=E,
    rebalance_timeout_source="rebalance", liveness="satisfied", heartbeat_answers=HEARTBEAT_2_7,
    heartbeat_state_check_first=False, dead_group_error=Errors.COORDINATOR_NOT_AVAILABLE,
    dead_check_first=True, join_response_has_protocol_type=True, join_error_generation=-1,
    protocol_type_at_creation=False, protocol_check="all_members",
    pending_members=True, new_member_join_timeout=True, initial_rebalance_delay=True, max_group_size=True,
    delayed_sync=True, update_timeouts_on_rejoin=True, sync_park_reschedules_heartbeat=False,
    remove_answers_parked_join=True, complete_removed_heartbeats=True, batch_leave=True,
    not_coordinator_before_loading=False, sync_checks_loading=True, commit_state_check_first=False,
    commit_creates_group=True, static_membership=STATIC_3_9,
)

PROFILES: Mapping[str, Profile] = MappingProxyType({p.name: p for p in (PROFILE_0_10_0, PROFILE_3_9)})
DEFAULT_PROFILE = "3.9"


def get_profile(name: str | Profile) -> Profile:
    """The profile called ``name``; an unknown name raises UnknownProfileError listing the known ones."""
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise UnknownProfileError(f"unknown profile {name!r}; known profiles: {known}.") from None

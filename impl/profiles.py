"""Release profiles: one frozen value of behaviour switches per Kafka release (DESIGN.md §3).

Handlers never compare versions; they read a named switch here. Adding a release is adding a
``Profile(...)`` value to ``PROFILES``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from core.types import Errors, GroupState
from impl.static import STATIC_2_4_1, STATIC_2_7_0, STATIC_3_9, StaticRules

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
HEARTBEAT_2_3 = MappingProxyType({   # 2.3.0–2.6.0 column: CompletingRebalance → RIP, timer not reset
    E: (Errors.UNKNOWN_MEMBER_ID, False), PR: (Errors.REBALANCE_IN_PROGRESS, True),
    CR: (Errors.REBALANCE_IN_PROGRESS, False), S: (Errors.NONE, True),
})
HEARTBEAT_2_7 = MappingProxyType({   # 2.6.1/2.7.0+ column (KAFKA-10134): CompletingRebalance → NONE, reset
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
    #: the keep-alive predicate, SPEC.md §2 table (and §4.6 for how a reschedule stamps liveness):
    #: "deadline": keep ⇔ awaitingJoin ∨ awaitingSync ∨ latestHeartbeat + session > deadline (≤ 2.1.0);
    #: "new_member_deadline": KAFKA-9232 (2.4.1): isNew → latestHeartbeat + new-member timeout > deadline,
    #:   elif awaitingJoin ∨ awaitingSync → keep, else latestHeartbeat + session > deadline;
    #: "satisfied": hasSatisfiedHeartbeat with the heartbeatSatisfied flag (2.5.0+, KAFKA-9752).
    #: The first two stamp latestHeartbeat and give each op a deadline; the last sets the flag.
    liveness: str
    #: what a heartbeat op does once its member is no longer in the group (SPEC.md §2 note under the table):
    #: "held": the op holds the member object, completes by the predicate and its expiry still runs
    #:   onMemberFailure (E0; KAFKA-7196 is about exactly this); "idle": tryComplete is false and the expiry
    #:   only logs (2.3.1/2.4.0, after KAFKA-8896); "complete": "not found" counts as complete (2.5.0+).
    #: "idle" and "complete" both complete every heartbeat op of a Dead group when it is checked (KAFKA-8896:
    #: 2.2.2, 2.3.1, 2.4.0+; SPEC.md §4.6 and its Corrections 4); "held" (E0) does not look at the group.
    missing_member_heartbeat: str
    heartbeat_answers: Mapping[GroupState, tuple[Errors, bool]]
    #: 0.9–2.2 switched on the group state before checking member and generation (SPEC.md §3.3)
    heartbeat_state_check_first: bool
    #: answer to any request that finds the group Dead: UNKNOWN_MEMBER_ID ≤ 2.2, COORDINATOR_NOT_AVAILABLE 2.3+
    dead_group_error: Errors
    #: JoinGroup/SyncGroup test Dead before protocol/member checks (2.3+); E0 tested it after them
    dead_check_first: bool
    #: JoinGroup responses carry the protocol type, and successful SyncGroup responses the protocol type and name
    #: (KIP-559, 2.5+, SPEC.md §3.1, §3.2 step 4)
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
    #: group.max.size (SPEC.md §3.1 J4, §3.7 onGroupLoaded): "off" (before 2.2.0); "over_capacity"
    #: (2.2–2.5: refuse a known member not awaiting join of an over-capacity group, or an unknown id when
    #: |members| ≥ max; the refused member is dropped silently); "accept_joining_member" (2.6.0+, KAFKA-9885)
    max_group_size: str
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
    #: GroupMetadata keeps its pending ids itself and guards its id sets (3.0.0, apache/kafka#9958): add() and
    #: remove() drop the id from pendingMembers, isPendingMember is plain membership, add() refuses an instance id
    #: already mapped and addPendingMember a current member id (IllegalStateException; 3.9 GM 242-282, 342-350).
    #: 2.x: the coordinator drops a dynamic member's id from pendingMembers when it adds it (2.4.1 GC 970-973),
    #: remove() leaves pendingMembers alone, isPendingMember also requires a non-member (2.4.1 GM 327), no guards
    group_keeps_id_sets: bool = False
    #: a response callback that throws is logged, answered again with UNKNOWN_SERVER_ERROR and cleared (3.3.2,
    #: apache/kafka#12910; 3.9 GM 537-572); before, the exception propagates and the member stays parked
    #: (2.4.1 GM 500-521) — SPEC.md correction 5
    callback_failure_answered: bool = False

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
    rebalance_timeout_source="session", liveness="deadline", missing_member_heartbeat="held",
    heartbeat_answers=HEARTBEAT_0_9,
    heartbeat_state_check_first=True, dead_group_error=Errors.UNKNOWN_MEMBER_ID, dead_check_first=False,
    join_response_has_protocol_type=False, join_error_generation=0,
    protocol_type_at_creation=True, protocol_check="intersection", pending_members=False,
    new_member_join_timeout=False, initial_rebalance_delay=False, max_group_size="off", delayed_sync=False,
    update_timeouts_on_rejoin=False, sync_park_reschedules_heartbeat=True, remove_answers_parked_join=False,
    complete_removed_heartbeats=False, batch_leave=False, not_coordinator_before_loading=True,
    sync_checks_loading=False, commit_state_check_first=True, commit_creates_group=False,
    state_names=MappingProxyType({CR: "AwaitingSync"}),
)

PROFILE_3_9 = Profile(
    name="3.9",
    description="Kafka 3.9 (era E5), the last Scala classic coordinator",
    previous_states=PREVIOUS_STATES_0_10_1, initial_state=E, emptied_group_state=E,
    rebalance_timeout_source="rebalance", liveness="satisfied", missing_member_heartbeat="complete",
    heartbeat_answers=HEARTBEAT_2_7,
    heartbeat_state_check_first=False, dead_group_error=Errors.COORDINATOR_NOT_AVAILABLE,
    dead_check_first=True, join_response_has_protocol_type=True, join_error_generation=-1,
    protocol_type_at_creation=False, protocol_check="all_members",
    pending_members=True, new_member_join_timeout=True, initial_rebalance_delay=True,
    max_group_size="accept_joining_member",
    delayed_sync=True, update_timeouts_on_rejoin=True, sync_park_reschedules_heartbeat=False,
    remove_answers_parked_join=True, complete_removed_heartbeats=True, batch_leave=True,
    not_coordinator_before_loading=False, sync_checks_loading=True, commit_state_check_first=False,
    commit_creates_group=True, static_membership=STATIC_3_9,
    group_keeps_id_sets=True, callback_failure_answered=True,
)

#: Kafka 2.4.1 (E3). Every switch set from SPEC.md for that release; see the comments for the non-obvious ones.
PROFILE_2_4_1 = Profile(
    name="2.4.1",
    description="Kafka 2.4.1 (era E3): pending members, new-member timeout with the KAFKA-9232 keep-alive predicate",
    previous_states=PREVIOUS_STATES_0_10_1, initial_state=E, emptied_group_state=E,   # §1.2 0.10.1+ column
    rebalance_timeout_source="rebalance",                   # §4.9 KIP-62 (0.10.1)
    liveness="new_member_deadline",                         # §2 table, row "2.4.1 … (KAFKA-9232)"
    missing_member_heartbeat="idle",                        # §2 note: "2.4.0 returned false … expire harmlessly"
    heartbeat_answers=HEARTBEAT_2_3,                        # §3.3 column 2.3.0–2.6.0
    heartbeat_state_check_first=False,                      # §3.3 validation order 2.3.0+
    dead_group_error=Errors.COORDINATOR_NOT_AVAILABLE,      # §3.0 KAFKA-8386 (2.3.0)
    dead_check_first=True,                                  # §3.1 J5a.1/J5b.1, §3.2 step 1 (2.3+)
    join_response_has_protocol_type=False,                  # §3.1 "protocol type from 2.5"; §3.2 step 4 [2.5.0+]
    join_error_generation=-1,                               # §3.1 NoGeneration (2.2+)
    protocol_type_at_creation=False, protocol_check="all_members",   # §1.4 first member; §3.6 [2.2.0+]
    pending_members=True,                                   # §4.7 KIP-394 (2.2.0)
    new_member_join_timeout=True,                           # §2 isNew, KAFKA-7610 (2.1.1/2.2.0)
    initial_rebalance_delay=True,                           # §4.5 KAFKA-4925 (0.11.0)
    max_group_size="over_capacity",                         # §3.1 J4 "2.2–2.5"
    delayed_sync=False,                                     # §4.8 KAFKA-12890 (2.8.1/3.0)
    update_timeouts_on_rejoin=False,                        # §2 KAFKA-14009 (3.3.2/3.4.0)
    sync_park_reschedules_heartbeat=False,                  # §3.2 step 5 (2.4.0 baseline: park only)
    remove_answers_parked_join=True,                        # §3.4 removeMemberAndUpdateGroup [2.2.0+]
    complete_removed_heartbeats=True,                       # §4.4 step 1, KAFKA-7196 (2.1.0)
    batch_leave=True,                                       # §3.4 LeaveGroup v3, KAFKA-8221 (2.4.0)
    not_coordinator_before_loading=False, sync_checks_loading=True,   # §3.0 (2.0+)
    commit_state_check_first=False,                         # §3.5 KAFKA-8487 (2.4.0)
    commit_creates_group=True,                              # §3.5 group absent, generation < 0 → Empty group
    static_membership=STATIC_2_4_1,                         # KIP-345 (2.3.0), the 2.3–2.4 rules (impl/static.py)
)

#: Kafka 2.7.0 (E4). Differs from 2.4.1 in liveness, heartbeats in CompletingRebalance, max size, KIP-559.
PROFILE_2_7_0 = Profile(
    name="2.7.0",
    description="Kafka 2.7.0 (era E4): heartbeatSatisfied liveness, heartbeats answered NONE in CompletingRebalance",
    previous_states=PREVIOUS_STATES_0_10_1, initial_state=E, emptied_group_state=E,
    rebalance_timeout_source="rebalance",
    liveness="satisfied",                                   # §2 table, KAFKA-9752 (2.5.0)
    missing_member_heartbeat="complete",                    # §2 note: 2.5+ "not found" counts as complete
    heartbeat_answers=HEARTBEAT_2_7,                        # §3.3 column 2.6.1/2.7.0+ (KAFKA-10134)
    heartbeat_state_check_first=False, dead_group_error=Errors.COORDINATOR_NOT_AVAILABLE, dead_check_first=True,
    join_response_has_protocol_type=True,                   # §3.1 (2.5), §3.2 step 4 KIP-559 (2.5.0+)
    join_error_generation=-1, protocol_type_at_creation=False, protocol_check="all_members",
    pending_members=True, new_member_join_timeout=True, initial_rebalance_delay=True,
    max_group_size="accept_joining_member",                 # §3.1 J4 2.6.0+ (KAFKA-9885)
    delayed_sync=False,                                     # §4.8: 2.8.1/3.0 only; §4.9 "2.6.1–2.8.0: none"
    update_timeouts_on_rejoin=False, sync_park_reschedules_heartbeat=False, remove_answers_parked_join=True,
    complete_removed_heartbeats=True, batch_leave=True, not_coordinator_before_loading=False,
    sync_checks_loading=True, commit_state_check_first=False, commit_creates_group=True,
    static_membership=STATIC_2_7_0,                         # KIP-345 with KAFKA-9801 and KAFKA-10284 (impl/static.py)
)

PROFILES: Mapping[str, Profile] = MappingProxyType(
    {p.name: p for p in (PROFILE_0_10_0, PROFILE_2_4_1, PROFILE_2_7_0, PROFILE_3_9)})
DEFAULT_PROFILE = "3.9"

#: Profiles served by a sibling runtime instead of a ``Profile`` of switches: name -> "module:Class". The public
#: constructor ``GroupCoordinator(CoordinatorConfig(profile=...))`` builds one of these. Deliberately not in
#: ``PROFILES`` yet (issue 25, phase A): the gate, the model manifests and the tests iterate ``PROFILES``.
SIBLING_RUNTIMES: Mapping[str, str] = MappingProxyType({"4.1": "impl.java_gc.coordinator:JavaGroupCoordinator"})


def sibling_runtime(name: str | Profile) -> type | None:
    """The coordinator class that runs profile ``name`` if a sibling runtime serves it, else None (a ``Profile``
    value is always the Scala-shaped coordinator's)."""
    target = SIBLING_RUNTIMES.get(name) if isinstance(name, str) else None
    if target is None:
        return None
    import importlib
    module, _, cls = target.partition(":")
    found: type = getattr(importlib.import_module(module), cls)
    return found


@dataclass(frozen=True, slots=True)
class RuntimeProfile:
    """A release served by a sibling runtime (``SIBLING_RUNTIMES``): what a world and the tables read of it — its
    name, its states and their names. Its behaviour is the runtime's own code, not switches."""

    name: str
    description: str
    previous_states: Mapping[GroupState, frozenset[GroupState]]
    state_names: Mapping[GroupState, str] = field(default_factory=dict)

    def state_name(self, state: GroupState) -> str:
        return self.state_names.get(state, state.value)

    @property
    def states(self) -> tuple[GroupState, ...]:
        return tuple(s for s in GroupState if s in self.previous_states)


#: Kafka 4.1.1's classic groups (impl/java_gc): ClassicGroupState's valid previous states are the 0.10.1+ column
#: (ClassicGroupState.java@4.1.1:112-116).
PROFILE_4_1 = RuntimeProfile("4.1", "Kafka 4.1.1: classic groups in the Java group coordinator (impl/java_gc)",
                             PREVIOUS_STATES_0_10_1)
RUNTIME_PROFILES: Mapping[str, RuntimeProfile] = MappingProxyType({PROFILE_4_1.name: PROFILE_4_1})


def profile_info(name: str | Profile) -> Profile | RuntimeProfile:
    """The profile called ``name``, or the sibling runtime's description of it (``RUNTIME_PROFILES``); an unknown
    name raises UnknownProfileError listing every known one."""
    if isinstance(name, str) and name in RUNTIME_PROFILES:
        return RUNTIME_PROFILES[name]
    try:
        return get_profile(name)
    except UnknownProfileError:
        known = ", ".join(sorted(set(PROFILES) | set(RUNTIME_PROFILES)))
        raise UnknownProfileError(f"unknown profile {name!r}; known profiles: {known}.") from None


def get_profile(name: str | Profile) -> Profile:
    """The profile called ``name``; an unknown name raises UnknownProfileError listing the known ones."""
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise UnknownProfileError(f"unknown profile {name!r}; known profiles: {known}.") from None

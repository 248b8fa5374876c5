"""The model's own release profiles: only the differences that change abstract transitions.

Independent of impl/ by design (the model is the spec the coordinator must refine); a test
checks that the two agree where they describe the same switch. Every switch is read from the
release facts of model/releases.py, so a profile is derived, never written out per release.

Kafka 4.x (release 4.1, SPEC-4x.md) is 3.9's protocol with eight switches (``keyed_timers`` R1, ``store_errors`` R8,
``stable_sync_reschedules`` R9, ``refusal_checks_join`` R10, ``static_replacement_keeps_new`` R12, and three SPEC-4x.md
does not list, found by the state refinement of the Java runtime and read in GroupMetadataManager.java@4.1.1:
``fresh_is_initial_rebalance``, ``expiry_completes_initial_join`` and ``pending_leave_rebalances``). Its writes stand
in ``State.appends`` as the Scala appends do, because at this level they act alike: the model keeps only the writes
that carry a completion callback — the leader's assignment (its callback's guard is 3.9's: still
CompletingRebalance, same generation; GroupMetadataManager.java@4.1.1 classicGroupSyncToCompletingRebalance) and a
static member's persisted replacement (no guard, reverted on failure, GMM:7179-7260) — and such a callback runs once,
oldest first: ``CompleteAppend[ok]`` when the write commits (CoordinatorRuntime.java@4.1.1:1436-1446 completes the
append future with the deferred event), ``[error]`` when its batch fails or its write times out (the mapped error,
R2, R8). In 4.x a write's state change is applied when the write is issued and a failed batch reverts only the
timeline structures (the group map, offsets) to their state before the batch; a classic group's own fields are plain
objects the revert does not touch, so the group, its members and its state stay as the callback leaves them — which is
what the model's callback already says. What the abstract state does not keep: the writes without records (every
other request is a write event whose answer waits for earlier writes to commit, R3 — a matter of when an answer is
sent, checked by properties/runtime_4x.py, not of the group's state); and the creation record of a new group (R5):
its failure reverts the group map, removing the group created in that batch, which this model does not represent yet
(a batch whose writes fail together is not one abstract append), so 4.1's graph has no group reverted to Absent.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from model.outputs import STORE_ERRORS, STORE_ERRORS_4X
from model.releases import MODELLED, fact
from model.state import COMPLETING, EMPTY, PREPARING, STABLE


@dataclass(frozen=True, slots=True)
class ModelProfile:
    name: str
    #: state of a newly created group (E0: Stable, SPEC.md §1.2 0.9 column; later Empty)
    created_state: str
    #: E0: a rebalance ending with no members kills and removes the group; later it becomes Empty
    emptied_group_dies: bool
    #: edges of SPEC.md §1.2 (target ← previous states) among the modelled states
    previous: Mapping[str, frozenset[str]]
    pending_members: bool          # KIP-394
    new_member_timeout: bool       # KAFKA-7610: new members get a liveness op when added
    initial_delay: bool            # InitialDelayedJoin from Empty
    delayed_sync: bool             # KAFKA-12890
    satisfied_flag: bool           # KAFKA-9752 liveness; False = deadline arithmetic (E0, 2.4.1)
    new_member_first: bool         # KAFKA-9232 (2.4.1+): isNew is tested before awaiting join/sync (SPEC.md §2)
    removed_op_runs_failure: bool  # E0: an op that outlived its member still runs onMemberFailure at expiry
    heartbeat_resets: frozenset[str]   # group states where a valid Heartbeat reschedules
    commit_resets: frozenset[str]      # group states where a valid OffsetCommit reschedules
    sync_park_reschedules: bool    # E0: a SyncGroup parked in AwaitingSync reschedules the heartbeat
    removal_completes_ops: bool    # KAFKA-7196: removing a member completes its liveness ops
    commit_creates_group: bool     # a generation -1 OffsetCommit to an absent group creates it Empty (SPEC.md §3.5)
    # -- what the coordinator answers (model/outputs.py; SPEC.md §3.0–§3.9) --------------------------
    no_generation: int        # NoGeneration in join error answers: -1 since 2.2, 0 before (§3.1)
    #: a valid member's Heartbeat / OffsetCommit (current generation), by group state (§3.3, §3.5)
    heartbeat_answers: Mapping[str, str]
    commit_answers: Mapping[str, str]
    heartbeat_state_first: bool   # 0.9–2.2 switched on the state before member/generation (§3.3)
    commit_state_first: bool      # 0.9–2.3 checked CompletingRebalance first (§3.5, KAFKA-8487)
    removal_answers_parked_join: bool   # removeMemberAndUpdateGroup answers a parked join [2.2.0+] (§3.4)
    #: the answer while the group's partition is still loading, by API (§3.0 per-API remapping)
    loading_answers: Mapping[str, str]
    #: supportsProtocols (§3.6): a member-less group needs a type and protocols (KAFKA-6005, 1.0.0); 2.2+
    #: needs an offered protocol every member supports, 0.9/0.10 one in the members' common set
    empty_group_needs_protocols: bool
    # -- static membership (KIP-345, SPEC.md §3.1 J5a step 4, J5b step 4, §4.4 step 1) -----------------
    static_members: bool           # group.instance.id is understood (2.3+); before: UNSUPPORTED_VERSION
    #: a known instance rejoining with member id "" in CompletingRebalance / Stable: "answer" (the current
    #: generation at once), "rebalance" (prepareRebalance, 2.5.0+), "persist" (store, answer from the callback;
    #: rebalance if its metadata changes the protocol, 2.6.1+)
    static_rejoin_completing: str
    static_rejoin_stable: str
    validate_current_member: bool  # 3.x: an instance id that maps to nothing → UNKNOWN_MEMBER_ID
    #: KIP-814 (3.2+): a static restart's successful store lists the members for a v9 leader, which cannot be done
    #: in PreparingRebalance (IllegalState: nothing is answered, the join stays parked)
    static_store_lists_members: bool = False
    # -- group.max.size (SPEC.md §3.1 J4, §3.7 onGroupLoaded) ------------------------------------------------
    #: "off" (before 2.2.0), "over-capacity" (2.2–2.5), "accept-joining-member" (2.6.0+, KAFKA-9885)
    max_size_rule: str = "off"
    refusal_drops_instance: bool = False   # 2.3–2.7: a refusal drops the request's instance mapping
    remove_drops_pending: bool = False     # 3.0+: a refused pending id stops being pending
    batch_leave: bool = False              # LeaveGroup v3+: top-level and per-identity errors (KAFKA-8221, 2.4.0)
    # -- Kafka 4.x: the Java group coordinator serving classic groups (SPEC-4x.md) -------------------------------
    #: R1: a slot's liveness watch is one keyed timer — a reschedule replaces it (never completes it at birth, as
    #: 3.x's heartbeatSatisfied does for an awaiting member) and the firing decides by the member as it is then
    keyed_timers: bool = False
    stable_sync_reschedules: bool = True    # R9: False = a SyncGroup in Stable leaves the session timer alone
    refusal_checks_join: bool = True        # R10: False = a GROUP_MAX_SIZE_REACHED refusal skips the join check
    static_replacement_keeps_new: bool = True   # R12: False = the replacement is a new member object, never new
    #: 2.6.1–3.9: a replacement re-keys the member object, so a pending store callback of an earlier replacement
    #: acts on the later restart's member (model/static.py ``_rekeyed``); 4.x builds a new object (R12)
    replacement_rekeys_member: bool = False
    #: 4.x: ``State.fresh`` is "this rebalance started from Empty" (newMemberAdded may be set, GMM@4.1.1:6819-6822),
    #: not "generation 0" (3.x, GroupCoordinator.scala@3.9.1:1329-1331)
    fresh_is_initial_rebalance: bool = False
    #: 4.x: a removal by session expiry re-checks the join phase without sparing the initial delay (GMM@4.1.1:
    #: 6728-6732, 6749-6753)
    expiry_completes_initial_join: bool = False
    #: 4.x: a pending id's LeaveGroup rebalances a Stable/CompletingRebalance group (GMM@4.1.1:7898-7950)
    pending_leave_rebalances: bool = False
    #: the answer a failed group-record write maps its error to (SPEC.md §3.2; 4.x maps a timeout too, R8)
    store_errors: Mapping[str, str] = field(default_factory=lambda: STORE_ERRORS)

    def can_rebalance(self, state: str) -> bool:
        return state in self.previous[PREPARING]


DEAD = "Dead"   # not a model state (a dead group leaves the cache: Absent), but a target of §1.2

#: SPEC.md §1.2 validPreviousStates, target -> allowed previous states: the 0.10.1+ column and the
#: 0.9.0.0 one (no Empty state, no Dead self-loop); which one a release has is the "empty-state" fact
VALID_PREVIOUS_0_10_1: Mapping[str, frozenset[str]] = MappingProxyType({
    EMPTY: frozenset({PREPARING}), PREPARING: frozenset({STABLE, COMPLETING, EMPTY}),
    COMPLETING: frozenset({PREPARING}), STABLE: frozenset({COMPLETING}),
    DEAD: frozenset({STABLE, PREPARING, COMPLETING, EMPTY, DEAD}),
})
VALID_PREVIOUS_0_9: Mapping[str, frozenset[str]] = MappingProxyType({
    PREPARING: frozenset({STABLE, COMPLETING}), COMPLETING: frozenset({PREPARING}),
    STABLE: frozenset({COMPLETING}), DEAD: frozenset({STABLE, PREPARING, COMPLETING}),
})


def valid_previous_states(name: str) -> Mapping[str, frozenset[str]]:
    """SPEC.md §1.2 for release ``name``, Dead included."""
    return VALID_PREVIOUS_0_10_1 if fact("empty-state", name) else VALID_PREVIOUS_0_9


def _modelled(table: Mapping[str, frozenset[str]]) -> Mapping[str, frozenset[str]]:
    """The edges among the modelled states (the model has no Dead: a dead group is Absent)."""
    return MappingProxyType({t: prev - {DEAD} for t, prev in table.items() if t != DEAD})


REBALANCE, LOADING = "REBALANCE_IN_PROGRESS", "COORDINATOR_LOAD_IN_PROGRESS"
APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")

COMMIT_RESETS = frozenset({STABLE, PREPARING})   # §3.5: a valid commit in these states is liveness (KAFKA-3470)


def heartbeat_answers(name: str) -> Mapping[str, str]:
    """§3.3 table, column of release ``name`` (Dead and the member checks are answered elsewhere)."""
    table = {PREPARING: REBALANCE, COMPLETING: "NONE" if fact("heartbeat-in-completing-rebalance", name)
             else REBALANCE, STABLE: "NONE"}
    return MappingProxyType({EMPTY: "UNKNOWN_MEMBER_ID", **table} if fact("empty-state", name) else table)


def heartbeat_resets(name: str) -> frozenset[str]:
    """§3.3 table: the states where a valid Heartbeat resets the member's heartbeat timer."""
    return frozenset({STABLE} | ({PREPARING} if fact("heartbeat-resets-in-preparing-rebalance", name) else set())
                     | ({COMPLETING} if fact("heartbeat-in-completing-rebalance", name) else set()))


def _commit_answers(name: str) -> Mapping[str, str]:
    """§3.5: a member's commit is stored in Stable/PreparingRebalance and refused in CompletingRebalance."""
    table = {PREPARING: "NONE", COMPLETING: REBALANCE, STABLE: "NONE"}
    return MappingProxyType({EMPTY: "UNKNOWN_MEMBER_ID", **table} if fact("empty-state", name) else table)


def _loading_answers(name: str) -> Mapping[str, str]:
    """§3.0 per-API remapping; before the loading check came first a loading partition is not yet owned."""
    if not fact("loading-checked-first", name):
        return MappingProxyType({api: "NOT_COORDINATOR" for api in APIS})
    # 4.x (R6): the runtime's loading check answers a SyncGroup LOAD_IN_PROGRESS too (CR@4.1.1:2149-2167)
    sync = LOADING if fact("sync-while-loading-load-in-progress", name) else REBALANCE
    return MappingProxyType({"JoinGroup": LOADING, "SyncGroup": sync, "Heartbeat": "NONE",
                             "LeaveGroup": LOADING, "OffsetCommit": LOADING})


def model_profile(name: str) -> ModelProfile:
    """The model profile of release ``name``, every switch read from its release facts (model/releases.py)."""
    def has(fact_name: str) -> bool:
        return fact(fact_name, name)
    empty = has("empty-state")
    return ModelProfile(
        name, created_state=EMPTY if empty else STABLE, emptied_group_dies=not empty,
        previous=_modelled(valid_previous_states(name)),
        pending_members=has("pending-members"), new_member_timeout=has("new-member-timeout"),
        initial_delay=has("initial-delayed-join"), delayed_sync=has("delayed-sync"),
        satisfied_flag=has("heartbeat-satisfied-flag"), new_member_first=has("new-member-checked-first"),
        removed_op_runs_failure=not has("heartbeat-op-looks-up-member"), heartbeat_resets=heartbeat_resets(name),
        commit_resets=COMMIT_RESETS if has("commit-is-liveness") else frozenset(),
        sync_park_reschedules=not has("parked-sync-keeps-timer"),
        removal_completes_ops=has("removal-completes-heartbeat"), commit_creates_group=empty,
        no_generation=-1 if has("no-generation-is-minus-one") else 0,
        heartbeat_answers=heartbeat_answers(name), commit_answers=_commit_answers(name),
        heartbeat_state_first=not has("heartbeat-checks-member-first"),
        commit_state_first=not has("commit-checks-member-first"),
        removal_answers_parked_join=has("removal-answers-parked-join"), loading_answers=_loading_answers(name),
        empty_group_needs_protocols=has("empty-group-needs-protocols"),
        static_members=has("static-membership"),
        static_rejoin_completing="rebalance" if has("static-rejoin-rebalances-in-completing-rebalance") else "answer",
        static_rejoin_stable="persist" if has("static-rejoin-persisted-in-stable") else "answer",
        validate_current_member=has("validate-current-member"),
        static_store_lists_members=has("static-rejoin-skips-assignment"),
        max_size_rule=("accept-joining-member" if has("accept-joining-member") else
                       "over-capacity" if has("group-max-size") else "off"),
        refusal_drops_instance=has("static-membership") and not has("group-remove-drops-static-mapping"),
        remove_drops_pending=has("group-remove-drops-pending"), batch_leave=has("batch-leave-group"),
        keyed_timers=has("keyed-timers"), stable_sync_reschedules=not has("stable-sync-keeps-session-timer"),
        refusal_checks_join=not has("max-size-refusal-skips-join-check"),
        static_replacement_keeps_new=not has("static-replacement-is-a-new-member"),
        replacement_rekeys_member=has("static-rejoin-persisted-in-stable")
        and not has("static-replacement-is-a-new-member"),
        fresh_is_initial_rebalance=has("new-member-added-in-initial-rebalance"),
        expiry_completes_initial_join=has("expiry-completes-initial-join"),
        pending_leave_rebalances=has("pending-leave-rebalances"),
        store_errors=STORE_ERRORS_4X if has("store-timeout-not-available") else STORE_ERRORS)


#: the modelled releases (model/releases.py MODELLED: the runnable ones, and 4.1 whose runtime is not judged yet)
MODEL_PROFILES: Mapping[str, ModelProfile] = MappingProxyType({name: model_profile(name) for name in MODELLED})


def get_model_profile(name: str) -> ModelProfile:
    try:
        return MODEL_PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(MODEL_PROFILES))
        raise ValueError(f"unknown profile {name!r}; known profiles: {known}.") from None

"""The model's own release profiles: only the differences that change abstract transitions.

Independent of impl/ by design (the model is the spec the coordinator must refine); a test
checks that the two agree where they describe the same switch.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

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
    satisfied_flag: bool           # KAFKA-9752 liveness; False = E0 deadline arithmetic
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

    def can_rebalance(self, state: str) -> bool:
        return state in self.previous[PREPARING]


PREVIOUS_0_10_1 = MappingProxyType({
    EMPTY: frozenset({PREPARING}), PREPARING: frozenset({STABLE, COMPLETING, EMPTY}),
    COMPLETING: frozenset({PREPARING}), STABLE: frozenset({COMPLETING}),
})
PREVIOUS_0_9 = MappingProxyType({
    PREPARING: frozenset({STABLE, COMPLETING}), COMPLETING: frozenset({PREPARING}),
    STABLE: frozenset({COMPLETING}),
})

REBALANCE, LOADING = "REBALANCE_IN_PROGRESS", "COORDINATOR_LOAD_IN_PROGRESS"
APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")

MODEL_PROFILES: Mapping[str, ModelProfile] = MappingProxyType({p.name: p for p in (
    ModelProfile("0.10.0", created_state=STABLE, emptied_group_dies=True, previous=PREVIOUS_0_9,
                 pending_members=False, new_member_timeout=False, initial_delay=False, delayed_sync=False,
                 satisfied_flag=False, heartbeat_resets=frozenset({STABLE}),
                 commit_resets=frozenset({STABLE, PREPARING}), sync_park_reschedules=True,
                 removal_completes_ops=False, commit_creates_group=False, no_generation=0,
                 heartbeat_answers=MappingProxyType({PREPARING: REBALANCE, COMPLETING: REBALANCE, STABLE: "NONE"}),
                 commit_answers=MappingProxyType({PREPARING: "NONE", COMPLETING: REBALANCE, STABLE: "NONE"}),
                 heartbeat_state_first=True, commit_state_first=True, removal_answers_parked_join=False,
                 # ≤1.x: a loading partition is not yet owned, and "not coordinator" is checked first
                 loading_answers=MappingProxyType({api: "NOT_COORDINATOR" for api in APIS}),
                 empty_group_needs_protocols=False),
    ModelProfile("3.9", created_state=EMPTY, emptied_group_dies=False, previous=PREVIOUS_0_10_1,
                 pending_members=True, new_member_timeout=True, initial_delay=True, delayed_sync=True,
                 satisfied_flag=True, heartbeat_resets=frozenset({STABLE, PREPARING, COMPLETING}),
                 commit_resets=frozenset({STABLE, PREPARING}), sync_park_reschedules=False,
                 removal_completes_ops=True, commit_creates_group=True, no_generation=-1, heartbeat_state_first=False,
                 commit_state_first=False, removal_answers_parked_join=True,
                 heartbeat_answers=MappingProxyType({EMPTY: "UNKNOWN_MEMBER_ID", PREPARING: REBALANCE,
                                                     COMPLETING: "NONE", STABLE: "NONE"}),   # KAFKA-10134 (2.6.1+)
                 commit_answers=MappingProxyType({EMPTY: "UNKNOWN_MEMBER_ID", PREPARING: "NONE", COMPLETING: REBALANCE,
                                                  STABLE: "NONE"}),
                 loading_answers=MappingProxyType({"JoinGroup": LOADING, "SyncGroup": REBALANCE, "Heartbeat": "NONE",
                                                   "LeaveGroup": LOADING, "OffsetCommit": LOADING}),
                 empty_group_needs_protocols=True),
)})


def get_model_profile(name: str) -> ModelProfile:
    try:
        return MODEL_PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(MODEL_PROFILES))
        raise ValueError(f"unknown profile {name!r}; known profiles: {known}.") from None

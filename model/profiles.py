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

MODEL_PROFILES: Mapping[str, ModelProfile] = MappingProxyType({p.name: p for p in (
    ModelProfile("0.10.0", created_state=STABLE, emptied_group_dies=True, previous=PREVIOUS_0_9,
                 pending_members=False, new_member_timeout=False, initial_delay=False, delayed_sync=False,
                 satisfied_flag=False, heartbeat_resets=frozenset({STABLE}),
                 commit_resets=frozenset({STABLE, PREPARING}), sync_park_reschedules=True,
                 removal_completes_ops=False, commit_creates_group=False),
    ModelProfile("3.9", created_state=EMPTY, emptied_group_dies=False, previous=PREVIOUS_0_10_1,
                 pending_members=True, new_member_timeout=True, initial_delay=True, delayed_sync=True,
                 satisfied_flag=True, heartbeat_resets=frozenset({STABLE, PREPARING, COMPLETING}),
                 commit_resets=frozenset({STABLE, PREPARING}), sync_park_reschedules=False,
                 removal_completes_ops=True, commit_creates_group=True),
)})


def get_model_profile(name: str) -> ModelProfile:
    try:
        return MODEL_PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(MODEL_PROFILES))
        raise ValueError(f"unknown profile {name!r}; known profiles: {known}.") from None

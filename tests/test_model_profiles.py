"""The model's profiles (model/profiles.py) and impl's (impl/profiles.py) are written independently;
where both describe the same release difference they must agree."""
from __future__ import annotations

import pytest

from core.types import GroupState
from impl.profiles import PROFILES
from model.profiles import MODEL_PROFILES
from model.releases import release
from model.state import COMPLETING, EMPTY, PREPARING, STABLE

NAMES = {GroupState.EMPTY: EMPTY, GroupState.PREPARING_REBALANCE: PREPARING,
         GroupState.COMPLETING_REBALANCE: COMPLETING, GroupState.STABLE: STABLE}


def test_both_layers_ship_the_same_profiles() -> None:
    """impl/profiles.py has the Scala coordinator's releases; the model has those and the modelled-only 4.1, whose
    coordinator is impl/java_gc (no Scala-shaped profile to compare switches with)."""
    assert sorted(n for n in MODEL_PROFILES if release(n).runnable) == sorted(PROFILES)
    assert sorted(n for n in MODEL_PROFILES if not release(n).runnable) == ["4.1"]


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_state_tables_agree(name: str) -> None:
    impl_edges = {NAMES[t]: frozenset(NAMES[s] for s in prev if s in NAMES)
                  for t, prev in PROFILES[name].previous_states.items() if t in NAMES}
    assert dict(MODEL_PROFILES[name].previous) == impl_edges


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_switches_agree(name: str) -> None:
    i, m = PROFILES[name], MODEL_PROFILES[name]
    assert NAMES[i.initial_state] == m.created_state
    assert (i.emptied_group_state is GroupState.DEAD) == m.emptied_group_dies
    assert i.pending_members == m.pending_members
    assert i.new_member_join_timeout == m.new_member_timeout
    assert i.initial_rebalance_delay == m.initial_delay
    assert i.delayed_sync == m.delayed_sync
    assert (i.liveness == "satisfied") == m.satisfied_flag
    assert (i.liveness != "deadline") == m.new_member_first
    assert (i.missing_member_heartbeat == "held") == m.removed_op_runs_failure
    assert i.sync_park_reschedules_heartbeat == m.sync_park_reschedules
    assert i.complete_removed_heartbeats == m.removal_completes_ops
    assert i.commit_creates_group == m.commit_creates_group
    assert frozenset(NAMES[s] for s, (_err, resets) in i.heartbeat_answers.items() if resets) == m.heartbeat_resets

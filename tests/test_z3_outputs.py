"""The Z3 encoding's outputs and model.step.outcomes agree: same (successor, outputs) pairs (issue 10).

For every state of a 2-member graph, every action kind and every slot, the (canonical successor,
outputs) pairs Z3 allows — models of T(s, s', o') enumerated with blocking clauses over the post-state
and every output variable, outputs naming slots as in the pre-state — must equal
``model.step.outcomes`` (the oracle). A failed append's raw error is NOT_ENOUGH_REPLICAS (answered
COORDINATOR_NOT_AVAILABLE, SPEC.md §3.2). 3.9 with deferred appends (the largest, ~45 s) is slow;
a planted output error shows the comparison can fail.
"""
from __future__ import annotations

import pytest

from model.graph import build
from model.outputs import Outputs
from model.state import FREE, AbstractAction, Scope, State
from model.step import enabled, outcomes
from properties.z3.explicit import Z3Stepper

DETAIL = "NOT_ENOUGH_REPLICAS"


def model_outcomes(state: State, profile: str, scope: Scope, kind: str, arg: str,
                   slot: int) -> set[tuple[State, Outputs]]:
    """model.step.outcomes for one action, or nothing when ``enabled`` does not offer it (free slots are
    interchangeable: the model offers JoinGroup/new in the first one only, Z3 in every one)."""
    action = AbstractAction(kind, slot, arg)
    offered = enabled(state, profile, scope)
    first_free_only = kind.startswith("JoinGroup/new") and state.slots[slot] == FREE
    if action in offered or (first_free_only and any(a.kind == kind for a in offered)):
        return set(outcomes(state, action, profile, scope, DETAIL))
    return set()


def disagreements(profile: str, scope: Scope, first_only: bool = False) -> list[str]:
    z3_step = Z3Stepper(profile, scope)
    out = []
    for _, state in build(scope, profile).nodes(data="state"):
        for kind, arg, slot in z3_step.action_keys():
            got = z3_step.outcomes(state, kind, arg, slot, DETAIL)
            want = model_outcomes(state, profile, scope, kind, arg, slot)
            if got != want:
                out.append(f"{state.short()} {AbstractAction(kind, slot, arg)}: "
                           f"z3 only {sorted(f'{s.short()} / {o}' for s, o in got - want)}, "
                           f"model only {sorted(f'{s.short()} / {o}' for s, o in want - got)}")
                if first_only:
                    return out
    return out


@pytest.mark.parametrize(("profile", "deferred"), [
    ("0.10.0", True), ("0.10.0", False), ("3.9", False),
    pytest.param("3.9", True, marks=pytest.mark.slow)],
    ids=["0.10.0-deferred", "0.10.0-sync", "3.9-sync", "3.9-deferred"])
def test_z3_and_model_outcomes_agree_on_every_2_member_state(profile: str, deferred: bool) -> None:
    assert disagreements(profile, Scope(members=2, deferred_appends=deferred)) == []


def test_a_join_completion_says_answers_and_arms() -> None:
    """The comparison is not of empty outputs: an InitialDelayedJoin that completes answers both members (the
    list for the leader), arms their session ops and the DelayedSync."""
    scope = Scope(members=2, deferred_appends=False)
    z3_step = Z3Stepper("3.9", scope)
    state = next(s for _, s in build(scope, "3.9").nodes(data="state") if s.join_op == "initial"
                 and not s.new_member_added and len(s.members) == 2)
    said = {str(o) for _, o in z3_step.outcomes(state, "ExpireJoin")}
    assert len(said) == 1
    assert said.pop() == ("JoinGroup(0) NONE new leader+members; JoinGroup(1) NONE new follower; "
                          "heartbeat(0) <- session; heartbeat(1) <- session; sync(-1) <- rebalance")


def test_a_planted_output_error_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a Z3 reschedule that forgets that a parked member's new heartbeat op
    completes at birth (SPEC.md §4.6) leaves an op armed that the model does not."""
    from properties.z3 import outputs, rules, steps
    monkeypatch.setattr(rules, "_rearmed", lambda p, aj, as_, is_new, source: outputs.SOURCE[source])
    monkeypatch.setattr(steps, "_CACHE", {})
    found = disagreements("0.10.0", Scope(members=2, deferred_appends=False), first_only=True)
    assert len(found) == 1 and "z3 only" in found[0]
    assert "heartbeat(" in found[0].split("model only")[0]

"""The Z3 encoding's outputs and model.step.outcomes agree: same (successor, outputs) pairs (issue 10).

For every state of a 2-member graph, every action kind and every slot, the (canonical successor,
outputs) pairs Z3 allows — models of T(s, s', o') enumerated with blocking clauses over the post-state
and every output variable, outputs naming slots as in the pre-state — must equal
``model.step.outcomes`` (the oracle). A failed append's raw error is NOT_ENOUGH_REPLICAS (answered
COORDINATOR_NOT_AVAILABLE, SPEC.md §3.2). Refused requests (refusals.py) are compared on every kind
of slot in every group state of the same graphs. 3.9 with deferred appends (the largest, ~45 s) and the
3-member scopes are slow; a planted output error shows the comparison can fail.
"""
from __future__ import annotations

import re

import pytest

from model.graph import build
from model.outputs import Outputs
from model.state import FREE, AbstractAction, Scope, State
from model.profiles import get_model_profile
from model.rules import W
from model.step import _refused, _valid_requester, enabled, outcomes
from properties.z3.explicit import Z3Stepper
from properties.z3.refusals import REFUSAL_KINDS

DETAIL = "NOT_ENOUGH_REPLICAS"


def model_outcomes(state: State, profile: str, scope: Scope, kind: str, arg: str,
                   slot: int) -> set[tuple[State, Outputs]]:
    """model.step.outcomes for one action, or nothing when ``enabled`` does not offer it (free slots are
    interchangeable: the model offers JoinGroup/new in the first one only, Z3 in every one)."""
    action = AbstractAction(kind, slot, arg)
    offered = enabled(state, profile, scope)
    first_free_only = kind in ("JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/static-new") and \
        state.slots[slot] == FREE
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


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
@pytest.mark.parametrize("deferred", [True, False], ids=["deferred-appends", "sync-appends"])
def test_z3_and_model_outcomes_agree_on_every_3_member_state(profile: str, deferred: bool) -> None:
    assert disagreements(profile, Scope(members=3, deferred_appends=deferred)) == []


def refusal_disagreements(profile: str, scope: Scope) -> list[str]:
    """Every refused request (a cell, or an unknown member id) from every kind of slot in every group state
    of the graph: Z3's refusal outcomes equal model.step.outcomes where the model refuses, else are empty."""
    z3_step, p = Z3Stepper(profile, scope), get_model_profile(profile)
    out, seen = [], set()
    for _, state in build(scope, profile).nodes(data="state"):
        key = (state.group, tuple((x.status, x.watch == 0) for x in state.slots))   # all a refusal reads
        if key in seen:
            continue
        seen.add(key)
        for kind, cell in REFUSAL_KINDS:
            for slot in [-1] if kind == "OffsetCommit/simple" else range(len(state.slots)):
                if kind.startswith("JoinGroup/new") and state.slots[slot] != FREE:   # a new member's slot is free
                    continue
                action = AbstractAction(kind, slot, cell)
                w = W.of(state, scope)
                refused = (cell or not _valid_requester(w, action)) and _refused(p, w, action) is not None
                want = set(outcomes(state, action, profile, scope, DETAIL)) if refused else set()
                got = z3_step.outcomes(state, kind, cell, slot, DETAIL, refused=True)
                if got != want:
                    out.append(f"{state.short()} {action}: z3 {sorted(str(o) for _, o in got)}, "
                               f"model {sorted(str(o) for _, o in want)}")
    return out


@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
def test_z3_and_model_agree_on_every_refused_request(profile: str) -> None:
    assert refusal_disagreements(profile, Scope(members=2)) == []


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


def test_a_planted_refusal_error_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal comparison can fail too: answering NOT_COORDINATOR with NONE is seen on every request kind."""
    from properties.z3 import outputs, refusals
    monkeypatch.setattr(refusals, "ERROR", {**outputs.ERROR, "NOT_COORDINATOR": outputs.ERROR["NONE"]})
    monkeypatch.setattr(refusals, "_CACHE", {})
    found = refusal_disagreements("0.10.0", Scope(members=1))
    # 0.10.0 answers a loading partition NOT_COORDINATOR too (SPEC.md §3.0: the checks swap before 2.0)
    assert found and all(("[not-coordinator]" in f or "[loading]" in f) and "NONE" in f.split("model")[0]
                         for f in found)
    kinds = {re.match(r"[^\[(]+", f.split(": z3")[0].split()[-1]).group() for f in found}   # type: ignore[union-attr]
    assert kinds == set(refusals.REQUEST_API)

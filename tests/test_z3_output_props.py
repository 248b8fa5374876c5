"""The abstract output properties (properties/abstract_outputs.py): one meaning, two interpreters, proved.

The Python predicate holds on every step of the 2- and 3-member graphs (the model satisfies the claim);
predicate and Z3 twin agree on every step of the 2-member graphs and on one hand-built broken step
each; ``prove_outputs`` proves every one for any number of members on both profiles; and each has a
mutant: a perturbed Z3 encoding under which its proof fails with a counterexample step that
model.step disowns and the Python predicate rejects.
"""
from __future__ import annotations

import re
from typing import Callable

import pytest

from model.graph import build
from model.outputs import (CURRENT, ERROR_ID, FOLLOWER, LEADER_LIST, NEW, NEW_MEMBER, NONE_GEN, REBALANCE, SESSION,
                           STATIC, Answer, Arm, Outputs)
from model.profiles import MODEL_PROFILES
from model.state import ABSENT, MEMBER, STABLE, AbstractAction, Scope, Slot, State
from model.step import REQUEST_CELLS_KINDS, enabled, outcomes
from properties.abstract_outputs import ModelStep, output_properties
from properties.catalog import CATALOG
from properties.z3.output_twins import STEP_TWINS, evaluate_step_twins
from properties.z3.prove import NOT_PROVED_STEP, PROVED
from properties.z3.prove_outputs import prove_outputs

#: 2.4.1 and 2.7.0 run in the slow tier (-m slow): over their graphs these checks take 0.5–2 min each here
#: (2.4.1's deadline arithmetic with pending members makes its graph ~10x 3.9's)
SLOW_PROFILES = ("2.4.1", "2.7.0")
PROFILES = [pytest.param(p, marks=[pytest.mark.slow] if p in SLOW_PROFILES else []) for p in sorted(MODEL_PROFILES)]
OUTPUT = {p.name: p for p in CATALOG.values() if p.level == "abstract" and p.kind == "always_step"}


def test_every_output_property_has_a_twin_and_a_complete_record() -> None:
    assert set(OUTPUT) == set(STEP_TWINS) and len(OUTPUT) == 9
    for p in OUTPUT.values():
        assert p.z3 == p.name and p.claim.endswith(".") and re.search(r"SPEC\.md §", p.source)
    not_on_0_10_0 = {"model-new-member-delay-only-for-a-new-member", "model-static-answer-only-to-a-static-member"}
    assert output_properties("0.10.0") == tuple(n for n in OUTPUT if n not in not_on_0_10_0)


def _steps(profile: str, members: int) -> list[tuple[State, AbstractAction, Outputs, State]]:
    scope = Scope(members=members)
    out = []
    for _, s in build(scope, profile).nodes(data="state"):
        for a in enabled(s, profile, scope):
            out += [(s, a, o, t) for t, o in outcomes(s, a, profile, scope, canonical=False)]
    return out


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("members", [2, 3])
def test_the_model_satisfies_every_output_property_on_every_graph_step(profile: str, members: int) -> None:
    props = [OUTPUT[n] for n in output_properties(profile)]
    broken = [(p.name, s.short(), str(a)) for s, a, o, t in _steps(profile, members) for p in props
              if p.fn(s, ModelStep(a, o), t) is not None]   # type: ignore[misc]
    assert broken == []


@pytest.mark.parametrize("profile", PROFILES)
def test_the_claims_hold_for_refused_requests_too(profile: str) -> None:
    """Requests the coordinator refuses (a cell in AbstractAction.arg, or an unknown member id) are labelled
    steps, not graph edges; the Python predicates hold on them all (the proofs cover them: refusals.py)."""
    scope = Scope(members=2)
    props = [OUTPUT[n] for n in output_properties(profile)]
    broken = []
    for _, s in build(scope, profile).nodes(data="state"):
        for kind in sorted(REQUEST_CELLS_KINDS):
            for slot in [-1] if kind == "OffsetCommit/simple" else range(2):
                if kind.startswith("JoinGroup/new") and s.slots[slot] != Slot():   # offered in a free slot only
                    continue
                if "static" in kind:   # the static scope's actions (KIP-345) are not offered in this scope
                    continue
                for cell in ("", "not-coordinator", "loading", "bad-session", "bad-protocol", "stale"):
                    a = AbstractAction(kind, slot, cell)
                    broken += [(p.name, s.short(), str(a)) for t, o in outcomes(s, a, profile, scope, canonical=False)
                               for p in props if p.fn(s, ModelStep(a, o), t) is not None]   # type: ignore[misc]
    assert broken == []


@pytest.mark.parametrize("profile", PROFILES)
def test_predicate_and_twin_agree_on_every_2_member_graph_step(profile: str) -> None:
    names = list(output_properties(profile))
    seen = set()
    for s, a, o, t in _steps(profile, 2):
        if (s, a, o, t) in seen:
            continue
        seen.add((s, a, o, t))
        z3_holds = evaluate_step_twins(s, a, o, t, names)
        python_holds = {n: OUTPUT[n].fn(s, ModelStep(a, o), t) is None for n in names}   # type: ignore[misc]
        assert z3_holds == python_holds, (s.short(), str(a), str(o))


LEADER = Slot(MEMBER, leader=True, watch=1)
FOLLOW = Slot(MEMBER, watch=1)
_STABLE = State(group=STABLE, fresh=False, slots=(LEADER, FOLLOW))
_PARKED = State(group="PreparingRebalance", join_op="join", fresh=False,
                slots=(Slot(MEMBER, leader=True, awaiting_join=True), Slot(MEMBER, awaiting_join=True)))
_COMPLETING = State(group="CompletingRebalance", fresh=False, slots=(LEADER, FOLLOW))
_J = "JoinGroup"


def _completion(*answers: Answer, arms: tuple[Arm, ...] = ()) -> tuple[State, AbstractAction, Outputs, State]:
    return (_PARKED, AbstractAction("ExpireJoin"), Outputs(tuple(sorted(answers)), arms), _COMPLETING)


#: one hand-built step per output property that breaks it
BROKEN: dict[str, tuple[State, AbstractAction, Outputs, State]] = {
    "model-member-list-goes-only-to-the-leader":
        (_STABLE, AbstractAction("JoinGroup/known", 1), Outputs((Answer(1, _J, "NONE", CURRENT, LEADER_LIST),)),
         _STABLE),
    "model-join-completion-gives-the-member-list-once":
        _completion(Answer(0, _J, "NONE", NEW, FOLLOWER), Answer(1, _J, "NONE", NEW, FOLLOWER)),
    "model-join-completion-answers-every-member-with-the-new-generation":
        _completion(Answer(0, _J, "NONE", NEW, LEADER_LIST)),
    "model-join-answers-of-a-step-share-one-generation":
        _completion(Answer(0, _J, "NONE", NEW, LEADER_LIST), Answer(1, _J, "NONE", CURRENT, FOLLOWER)),
    "model-success-answer-only-to-a-member":
        (_STABLE, AbstractAction("ExpireHeartbeat", 1), Outputs((Answer(1, _J, "NONE", NONE_GEN, ERROR_ID),)),
         State(group=STABLE, fresh=False, slots=(LEADER, Slot(ABSENT)))),
    "model-timer-armed-with-a-legal-delay-source":
        (_STABLE, AbstractAction("Heartbeat", 1), Outputs((Answer(1, "Heartbeat", "NONE"),),
                                                          (Arm("heartbeat", 1, REBALANCE),)), _STABLE),
    "model-new-member-delay-only-for-a-new-member":
        (_STABLE, AbstractAction("Heartbeat", 1), Outputs((Answer(1, "Heartbeat", "NONE"),),
                                                          (Arm("heartbeat", 1, NEW_MEMBER),)), _STABLE),
    "model-request-is-answered-or-parked":
        (_STABLE, AbstractAction("Heartbeat", 1), Outputs((), (Arm("heartbeat", 1, SESSION),)), _STABLE),
    "model-static-answer-only-to-a-static-member":
        (_STABLE, AbstractAction("JoinGroup/known", 1), Outputs((Answer(1, _J, "NONE", CURRENT, STATIC),)), _STABLE),
}


def test_every_output_property_has_a_hand_built_broken_step() -> None:
    assert set(BROKEN) == set(OUTPUT)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_output_property_can_fail_in_both_interpreters(name: str) -> None:
    s, a, o, t = BROKEN[name]
    assert OUTPUT[name].check(s, ModelStep(a, o), t) is not None
    assert OUTPUT[name].explain(s, ModelStep(a, o), t)
    assert evaluate_step_twins(s, a, o, t, [name]) == {name: False}


@pytest.mark.parametrize("profile", PROFILES)
def test_every_output_property_is_proved_for_any_number_of_members(profile: str) -> None:
    results = prove_outputs(profile)
    assert {r.invariant: r.status for r in results} == {n: PROVED for n in output_properties(profile)}


# -- mutants: a perturbed Z3 encoding under which exactly the targeted proof fails -------------------
Perturb = Callable[[pytest.MonkeyPatch], None]


def _swap(module: str, table: str, key: str, to: str) -> Perturb:
    """``module.table[key]`` now gives ``table[to]``'s value (one output value of the encoding changed)."""
    def perturb(mp: pytest.MonkeyPatch) -> None:
        from properties.z3 import rules, steps
        mod = {"rules": rules, "steps": steps}[module]
        values = getattr(mod, table)
        mp.setattr(mod, table, {**values, key: values[to]})
    return perturb


def _leader_keeps_the_old_generation(mp: pytest.MonkeyPatch) -> None:
    from properties.z3 import outputs, rules
    original = rules._answer_join_all

    def answer(p, w):   # type: ignore[no-untyped-def]
        b = w.snapshot()
        original(p, w)
        w.outs.bulk(lambda x: b.get("leader", x), **{"JoinGroup.generation": lambda x: outputs.GEN[CURRENT]})
    mp.setattr(rules, "_answer_join_all", answer)


def _session_as_new_member(mp: pytest.MonkeyPatch) -> None:
    from properties.z3 import rules
    original = rules._rearmed
    mp.setattr(rules, "_rearmed", lambda p, aj, as_, is_new, source: original(
        p, aj, as_, is_new, NEW_MEMBER if source == SESSION else source))


def _heartbeat_unanswered(mp: pytest.MonkeyPatch) -> None:
    from properties.z3 import steps
    mp.setitem(steps.SLOT_ACTIONS, "Heartbeat", lambda p, w, i: [w])


MUTANTS: dict[str, tuple[str, Perturb]] = {
    "model-member-list-goes-only-to-the-leader": ("3.9", _swap("steps", "SHAPE", FOLLOWER, LEADER_LIST)),
    "model-join-completion-gives-the-member-list-once": ("0.10.0", _swap("rules", "SHAPE", LEADER_LIST, FOLLOWER)),
    "model-join-completion-answers-every-member-with-the-new-generation":
        ("0.10.0", _swap("rules", "ERROR", "NONE", "REBALANCE_IN_PROGRESS")),
    "model-join-answers-of-a-step-share-one-generation": ("0.10.0", _leader_keeps_the_old_generation),
    "model-success-answer-only-to-a-member": ("3.9", _swap("rules", "ERROR", "UNKNOWN_MEMBER_ID", "NONE")),
    "model-timer-armed-with-a-legal-delay-source": ("0.10.0", _swap("rules", "SOURCE", REBALANCE, SESSION)),
    "model-new-member-delay-only-for-a-new-member": ("3.9", _session_as_new_member),
    "model-request-is-answered-or-parked": ("0.10.0", _heartbeat_unanswered),
    "model-static-answer-only-to-a-static-member": ("3.9", _swap("steps", "SHAPE", FOLLOWER, STATIC)),
}

def test_every_output_property_has_a_mutant() -> None:
    assert set(MUTANTS) == set(OUTPUT)


@pytest.mark.parametrize("name", sorted(MUTANTS))   # each rebuilds a profile's symbolic steps: 2–6 s
def test_a_perturbed_encoding_fails_the_proof_with_a_disowned_counterexample(name: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from properties.z3 import steps
    profile, perturb = MUTANTS[name]
    perturb(monkeypatch)
    monkeypatch.setattr(steps, "_CACHE", {})
    [r] = prove_outputs(profile, names=[name])
    assert r.status == NOT_PROVED_STEP and r.cti is not None and r.cti.outputs is not None, r
    assert r.cti.model_agrees is False   # model.step.outcomes does not say this: the encoding is wrong
    step = ModelStep(r.cti.action, r.cti.outputs)   # type: ignore[arg-type]
    assert OUTPUT[name].check(r.cti.pre, step, r.cti.post) is not None   # and the predicate rejects it too
    assert r.cti.lines()[3].startswith("out   ")

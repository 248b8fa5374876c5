"""The coverage quotient (model/quotient.py) is exact: from a fine state and from its quotient every step answers the
same, arms the same timers and reaches the same quotient state — so covering a quotient edge covers every fine edge it
stands for. Checked on the model graphs of the gate's walk scopes and the static scope; a wrong quotient is caught."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import pytest

from model.graph import build
from model.profiles import get_model_profile
from model.quotient import applies, build_quotient, coarse_slot, coarse_slots, quotient
from model.releases import RUNNABLE
from model.state import FREE, MEMBER, Scope, Slot, State, padded
from model.step import enabled, outcomes

#: the model scopes of the gate's walk scopes on 2.4.1 (explore/coverage.py _model_scope) and of its static scope
CALM = Scope(members=2, deferred_appends=True, initial_delay=False, max_appends=2)
CHURN = Scope(members=2, deferred_appends=False, initial_delay=True, max_appends=2, unload=True)
STATIC = Scope(members=2, deferred_appends=True, initial_delay=True, max_appends=1, static=True)

Slots = Callable[[tuple[Slot, ...]], tuple[Slot, ...]]


def _view(coarse: Slots, before: State, action: object, after: State, outputs: object) -> tuple:
    values = coarse(before.slots)

    def value(i: int) -> Slot | None:
        return values[i] if i >= 0 else None
    answers = tuple(sorted((value(a.slot), a.api, a.error, a.generation, a.shape) for a in outputs.answers))
    arms = tuple(sorted((a.op, value(a.slot), a.source) for a in outputs.arms))
    target = replace(after, slots=tuple(sorted(coarse(after.slots), reverse=True)))
    return (action.kind, value(action.slot), action.arg), target, answers, arms


def _says(state: State, profile: str, scope: Scope, coarse: Slots) -> set[tuple]:
    """Every step of ``state`` as the quotient sees it (steps that change nothing it sees left out)."""
    p = get_model_profile(profile)
    here = replace(state, slots=tuple(sorted(coarse(state.slots), reverse=True)))
    out = set()
    for action in enabled(state, p, scope):
        for after, outputs in outcomes(state, action, p, scope, canonical=False):
            seen = _view(coarse, state, action, after, outputs)
            if seen[1] != here or seen[2] or seen[3]:
                out.add(seen)
    return out


def disagreements(profile: str, scope: Scope, coarse: Slots | None = None) -> list[State]:
    """The reachable fine states of ``scope``'s graph from which the model says something else than from their
    quotient (each taken with one spare free slot, so that the slot bound cuts neither side)."""
    coarse = coarse or (lambda slots: coarse_slots(slots, profile))
    wide = replace(scope, members=scope.members + 1, max_appends=scope.max_appends + 8)
    bad = []
    for _, state in build(scope, profile).nodes(data="state"):
        fine = padded(state, wide.members)
        rough = replace(fine, slots=tuple(sorted(coarse(fine.slots), reverse=True)))
        if _says(fine, profile, wide, coarse) != _says(rough, profile, wide, coarse):
            bad.append(fine)
    return bad


def test_the_quotient_applies_where_ops_are_looked_up_and_counts_only_under_deadline_arithmetic() -> None:
    assert [p for p in RUNNABLE if applies(p)] == ["2.4.1", "2.7.0", "3.9"]
    state = State("Stable", slots=(Slot(MEMBER, watch=2), Slot(watch=1)))
    assert quotient(state, "0.10.0") == state
    assert quotient(state, "2.4.1") == State("Stable", slots=(Slot(MEMBER, watch=1), FREE))
    assert quotient(state, "3.9") == State("Stable", slots=(Slot(MEMBER, watch=2), FREE))


def test_coarse_slot_keeps_what_decides_an_expiry() -> None:
    new_awaiting = Slot(MEMBER, awaiting_join=True, is_new=True, watch=1)   # its 5-minute op removes it
    idle = Slot(MEMBER, watch=1)                                            # its session op removes it
    assert coarse_slot(new_awaiting) == new_awaiting and coarse_slot(idle) == idle
    assert coarse_slot(Slot(MEMBER)) == Slot(MEMBER)                         # KAFKA-9232: no op at all
    assert coarse_slot(Slot(MEMBER, awaiting_sync=True, watch=2)) == Slot(MEMBER, awaiting_sync=True)
    assert coarse_slot(Slot(MEMBER, leader=True, watch=2)) == Slot(MEMBER, leader=True, watch=1)
    assert coarse_slots((Slot(watch=2),), "2.4.1") == (FREE,)


@pytest.mark.parametrize("scope", [CALM, CHURN, STATIC], ids=["calm", "churn", "static"])
def test_every_step_says_the_same_from_a_state_and_from_its_quotient(scope: Scope) -> None:
    assert disagreements("2.4.1", scope) == []


@pytest.mark.slow
@pytest.mark.parametrize("scope", [CALM, CHURN, STATIC], ids=["calm", "churn", "static"])
def test_every_step_says_the_same_at_three_slots(scope: Scope) -> None:
    assert disagreements("2.4.1", replace(scope, members=3)) == []


def test_a_quotient_that_forgets_a_new_members_op_is_caught() -> None:
    def forgets(slots: tuple[Slot, ...]) -> tuple[Slot, ...]:
        return tuple(replace(s, watch=0) if s.is_new else s for s in coarse_slots(slots, "2.4.1"))
    assert disagreements("2.4.1", CALM, forgets)


def test_a_quotient_that_forgets_an_idle_members_op_is_caught() -> None:
    def forgets(slots: tuple[Slot, ...]) -> tuple[Slot, ...]:
        return tuple(replace(s, watch=0) if s.member and not s.is_new else s for s in coarse_slots(slots, "2.4.1"))
    assert disagreements("2.4.1", CALM, forgets)


@pytest.mark.parametrize("profile", ["2.7.0", "3.9"])
def test_every_static_step_says_the_same_from_a_state_and_from_its_quotient(profile: str) -> None:
    # a gone id's ops are inert there too, the revert of a failed static store included (its reschedule completes them)
    assert disagreements(profile, STATIC) == []


def test_on_0_10_0_the_counts_decide_so_the_same_quotient_would_be_wrong() -> None:
    # an op that outlived its member still runs onMemberFailure there (KAFKA-7196)
    assert disagreements("0.10.0", CALM, lambda slots: coarse_slots(slots, "2.4.1"))


def test_the_quotient_graph_is_the_fine_graph_seen_through_the_quotient() -> None:
    for scope in (CALM, CHURN):
        fine = build(scope, "2.4.1")
        seen = {quotient(s, "2.4.1") for _, s in fine.nodes(data="state")}
        rough = build_quotient(scope, "2.4.1")
        assert {s for _, s in rough.nodes(data="state")} == seen
        assert rough.number_of_nodes() < fine.number_of_nodes()

"""Each abstract invariant has one meaning and two interpreters: the Python predicate over
model.State (properties/abstract.py) and its Z3 twin (properties/z3/invariants.py) agree on every
state of the 2- and 3-member graphs, and each can fail on a hand-built state."""
from __future__ import annotations

import pytest

from model.graph import build
from model.profiles import MODEL_PROFILES
from model.state import (ABSENT, ABSENT_GROUP, COMPLETING, EMPTY, MEMBER, PENDING, PREPARING, STABLE, Scope, Slot,
                         State)
from properties.abstract import FINDINGS, STRENGTHENING, abstract_invariants
from properties.catalog import CATALOG
from properties.z3.invariants import TWINS, evaluate_twins, holds_on

#: 2.4.1 and 2.7.0 run in the slow tier (-m slow): over their graphs these checks take 0.5–2 min each here
#: (2.4.1's deadline arithmetic with pending members makes its graph ~10x 3.9's)
SLOW_PROFILES = ("2.4.1", "2.7.0")
PROFILES = [pytest.param(p, marks=[pytest.mark.slow] if p in SLOW_PROFILES else []) for p in sorted(MODEL_PROFILES)]
LEADER = Slot(MEMBER, leader=True, watch=1)
ABSTRACT = {p.name: p for p in CATALOG.values() if p.level == "abstract" and p.kind == "always"}


def test_every_abstract_invariant_has_a_twin_and_every_twin_a_property() -> None:
    assert {p.z3 for p in ABSTRACT.values()} == set(TWINS)
    assert all(p.z3 == p.name for p in ABSTRACT.values())
    assert {name for name, _ in FINDINGS} | {name for name, _ in STRENGTHENING} <= set(ABSTRACT)
    assert all(ABSTRACT[name].applies(profile) for name, profile in list(FINDINGS) + list(STRENGTHENING))


def _disagreements(profile: str, members: int) -> list[str]:
    out = []
    props = abstract_invariants(profile)
    for _, state in build(Scope(members=members), profile).nodes(data="state"):
        z3_holds = evaluate_twins(state, [p.name for p in props])
        for prop in props:
            python_holds = prop.check(state) is None
            if python_holds != z3_holds[prop.name]:
                out.append(f"{prop.name} on {state.short()}: python {python_holds}, z3 {not python_holds}")
    return out


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("members", [2, 3])
def test_predicate_and_twin_agree_on_every_graph_state(profile: str, members: int) -> None:
    assert _disagreements(profile, members) == []


def _state(group: str, *slots: Slot, **fields: object) -> State:
    return State(group=group, slots=slots, fresh=False, **fields)   # type: ignore[arg-type]


#: one hand-built state per invariant that breaks it
BROKEN: dict[str, State] = {
    "model-leader-exists-iff-a-member-exists": _state(STABLE, Slot(MEMBER, watch=1)),
    "model-leader-is-a-member": _state(PREPARING, Slot(ABSENT, leader=True), LEADER, join_op="join"),
    "model-at-most-one-leader": _state(STABLE, LEADER, LEADER),
    "model-awaiting-join-only-for-members-in-preparing-rebalance":
        _state(STABLE, Slot(MEMBER, leader=True, awaiting_join=True)),
    "model-awaiting-sync-only-for-members-in-completing-rebalance":
        _state(PREPARING, Slot(MEMBER, leader=True, awaiting_sync=True), join_op="join"),
    "model-empty-or-absent-group-has-no-members": _state(EMPTY, LEADER),
    "model-completing-or-stable-group-has-a-member": _state(COMPLETING, Slot()),
    "model-absent-group-has-no-slot-in-use": _state(ABSENT_GROUP, Slot(PENDING, watch=1)),
    "model-join-op-armed-iff-preparing-rebalance": _state(STABLE, LEADER, join_op="join"),
    "model-initial-join-only-while-every-member-is-new":
        _state(PREPARING, Slot(MEMBER, leader=True, awaiting_join=True, watch=1), join_op="initial"),
    "model-initial-join-extends-only-in-generation-0":
        _state(PREPARING, Slot(MEMBER, leader=True, awaiting_join=True, is_new=True, watch=1), join_op="initial",
               new_member_added=True),
    "model-delayed-sync-armed-only-after-join": _state(PREPARING, LEADER, join_op="join", sync_op=True),
    "model-pending-sync-only-for-members-after-join":
        _state(PREPARING, Slot(MEMBER, leader=True, pending_sync=True), join_op="join"),
    "model-new-member-is-awaiting-join": _state(STABLE, Slot(MEMBER, leader=True, is_new=True, watch=1)),
    "model-current-append-only-in-completing-rebalance": _state(STABLE, LEADER, appends=("stale", "current")),
    "model-no-pending-member-before-kip-394": _state(EMPTY, Slot(PENDING, watch=1)),
    "model-no-delayed-sync-before-kafka-12890": _state(STABLE, Slot(MEMBER, leader=True, pending_sync=True, watch=1)),
    "model-no-initial-delayed-join-before-kafka-4925": _state(PREPARING, Slot(), join_op="initial"),
    "model-no-empty-group-before-0-10-1": _state(EMPTY, Slot()),
    "model-idle-member-has-liveness-watch": _state(STABLE, LEADER, Slot(MEMBER)),
    "model-at-most-one-liveness-op-per-slot": _state(STABLE, Slot(MEMBER, leader=True, watch=2)),
    "model-pending-member-has-expiration": _state(EMPTY, Slot(PENDING)),
    "model-removed-member-leaves-no-liveness-op": _state(STABLE, LEADER, Slot(ABSENT, watch=1)),
}


def test_every_invariant_has_a_hand_built_counterexample() -> None:
    assert set(BROKEN) == set(ABSTRACT)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_invariant_can_fail_in_both_interpreters(name: str) -> None:
    state = BROKEN[name]
    prop = ABSTRACT[name]
    message = prop.check(state)
    assert message is not None and message.startswith(f"{name}: ")
    assert prop.explain(state)   # the witness values are not empty
    assert not holds_on(name, state)
    assert holds_on(name, State(slots=(Slot(), Slot())))   # and each holds on the initial state


def test_witnesses_name_the_slot_and_its_flags() -> None:
    state = BROKEN["model-idle-member-has-liveness-watch"]
    assert ABSTRACT["model-idle-member-has-liveness-watch"].explain(state) == {
        "slot": 1, "slot_flags": "M", "group": STABLE}

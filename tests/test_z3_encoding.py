"""The Z3 transition encoding and model.step give the same successor sets (issue 3).

For every state of a scope's graph, every action kind and every slot, the successors Z3 allows
(models of T(s, s') enumerated with blocking clauses over the state's own slots, canonicalised)
must equal ``model.step``'s — and Z3 must allow nothing where the model enables nothing. The
2-member scopes (both profiles, deferred and synchronous appends) run by default; the 3-member
scopes (about 2,000 states × 32 action keys) are marked slow.
"""
from __future__ import annotations

import pytest

from model.analysis import ACTION_NAMES
from model.graph import build
from model.profiles import MODEL_PROFILES
from model.state import FREE, AbstractAction, Scope, State
from model.step import SLOT_ACTIONS as MODEL_SLOT_ACTIONS
from model.step import enabled, step
from properties.z3.encoding import Vocabulary, decode, encode
from properties.z3.explicit import Z3Stepper
from properties.z3.steps import ACTION_KINDS, SLOT_ACTIONS

#: 2.4.1 and 2.7.0 run in the slow tier (-m slow): over their graphs these checks take 0.5–2 min each here
#: (2.4.1's deadline arithmetic with pending members makes its graph ~10x 3.9's)
SLOW_PROFILES = ("2.4.1", "2.7.0")
PROFILES = [pytest.param(p, marks=[pytest.mark.slow] if p in SLOW_PROFILES else []) for p in sorted(MODEL_PROFILES)]


def model_successors(state: State, profile: str, scope: Scope, kind: str, arg: str, slot: int) -> set[State]:
    """model.step for one action, or nothing when ``enabled`` does not offer it. Free slots are
    interchangeable: the model offers JoinGroup/new in the first one only, Z3 in every one."""
    action = AbstractAction(kind, slot, arg)
    offered = enabled(state, profile, scope)
    first_free_only = kind in ("JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/static-new") and \
        state.slots[slot] == FREE
    if action in offered or (first_free_only and any(a.kind == kind for a in offered)):
        return set(step(state, action, profile, scope))
    return set()


def disagreements(profile: str, scope: Scope) -> list[str]:
    z3_step = Z3Stepper(profile, scope)
    out = []
    for _, state in build(scope, profile).nodes(data="state"):
        for kind, arg, slot in z3_step.action_keys():
            got = z3_step.step(state, kind, arg, slot)
            want = model_successors(state, profile, scope, kind, arg, slot)
            if got != want:
                out.append(f"{state.short()} {AbstractAction(kind, slot, arg)}: "
                           f"z3 only {sorted(s.short() for s in got - want)}, "
                           f"model only {sorted(s.short() for s in want - got)}")
    return out


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("deferred", [True, False], ids=["deferred-appends", "sync-appends"])
def test_z3_and_model_step_agree_on_every_2_member_state(profile: str, deferred: bool) -> None:
    assert disagreements(profile, Scope(members=2, deferred_appends=deferred)) == []


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_z3_and_model_step_agree_on_every_3_member_state(profile: str) -> None:
    assert disagreements(profile, Scope(members=3)) == []


def test_the_encoding_knows_every_action_kind_of_the_model() -> None:
    """Every action of the model, the static scope's two (model/static.py, KIP-345) included — they are encoded
    (properties/z3/static.py; agreement on the static scope: tests/test_z3_static.py) — in model.step's order, and
    the partition moves of ``scope.unload``, which model.analysis does not name (properties/z3/partition.py;
    agreement: tests/test_z3_partition.py)."""
    from model.analysis import STATIC_ACTIONS
    names = tuple(f"{k}[{a}]" if a else k for k, a in ACTION_KINDS)
    assert sorted(names) == sorted(ACTION_NAMES + ("UnloadGroup", "LoadGroup"))
    assert list(SLOT_ACTIONS) == list(MODEL_SLOT_ACTIONS)
    assert STATIC_ACTIONS == {"JoinGroup/static-new", "JoinGroup/static-rejoin"} <= set(SLOT_ACTIONS)


@pytest.mark.parametrize("profile", PROFILES)
def test_encode_then_decode_is_the_identity_on_graph_states(profile: str) -> None:
    import z3
    scope = Scope(members=3)
    v = Vocabulary.of_scope(scope).state("s")
    solver = z3.Solver()
    for _, state in build(scope, profile).nodes(data="state"):
        solver.push()
        solver.add(encode(v, state))
        assert solver.check() == z3.sat
        assert decode(solver.model(), v, members=list(v.dom.slots), canonical=False) == state   # type: ignore[union-attr]
        solver.pop()


def test_a_planted_encoding_error_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agreement check can fail: a Z3 rule that forgets to hand the leadership over disagrees."""
    from properties.z3 import rules, steps
    monkeypatch.setattr(rules, "_hand_over_leadership", lambda w, gone: None)
    monkeypatch.setattr(steps, "_CACHE", {})
    found = disagreements("3.9", Scope(members=2, deferred_appends=False))
    assert found[0] == ("PreparingRebalance gen0 join=initial sync=0 nma appends=[] slots=[MLJNw MJNw] LeaveGroup(0): "
                        "z3 only ['PreparingRebalance gen0 join=initial sync=0 nma appends=[] slots=[MJNw -]'], "
                        "model only ['PreparingRebalance gen0 join=initial sync=0 nma appends=[] slots=[MLJNw -]']")

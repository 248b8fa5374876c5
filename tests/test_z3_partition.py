"""UnloadGroup and LoadGroup over Z3 terms (properties/z3/partition.py) against model/step.py ``_unload`` /
``_load`` (SPEC.md §3.7), and the static proofs with partition moves (issue 11 item 3).

Default tier: the 1-slot dynamic scope of 3.9 with partition moves (every state, every action kind; ~4 s). Slow
tier: static scopes, 2 slots, 2.4.1, 2.7.0 and 0.10.0 (the emptied group dies: no Empty record to load), a load
mutant and the proof mutant.
"""
from __future__ import annotations

import pytest
import z3

from model.graph import build
from model.state import ABSENT_GROUP, MEMBER, AbstractAction, Scope
from model.step import step
from properties.z3.explicit import Z3Stepper
from properties.z3.prove import NOT_INDUCTIVE, proof_set, prove
from tests.test_z3_encoding import disagreements


def _param(profile: str, members: int, static: bool) -> object:
    slow = members > 1 or profile != "3.9" or static   # (1 static slot reaches no stored replacement: slow tier)
    return pytest.param(profile, members, static, marks=[pytest.mark.slow] if slow else [],
                        id=f"{profile}-{members}slot-{'static' if static else 'dynamic'}")


SCOPES = [_param(p, n, s) for p in ("0.10.0", "2.4.1", "2.7.0", "3.9") for n in (1, 2) for s in (False, True)
          if not (s and p == "0.10.0")]


@pytest.mark.parametrize(("profile", "members", "static"), SCOPES)
def test_z3_and_model_step_agree_with_partition_moves(profile: str, members: int, static: bool) -> None:
    """Every state of the graph with UnloadGroup/LoadGroup, every action kind and slot: the unload's orphaned static
    appends and their callbacks, the loaded Stable groups (any number of members, any of them static)."""
    assert disagreements(profile, Scope(members=members, static=static, unload=True)) == []


def load_disagreements(profile: str, scope: Scope) -> list[str]:
    """LoadGroup only, from every Absent state of the graph."""
    z3_step = Z3Stepper(profile, scope)
    out = []
    for _, state in build(scope, profile).nodes(data="state"):
        if state.group == ABSENT_GROUP:
            got = z3_step.step(state, "LoadGroup")
            want = set(step(state, AbstractAction("LoadGroup"), profile, scope))
            if got != want:
                out.append(f"{state.short()}: z3 only {sorted(x.short() for x in got - want)}, "
                           f"model only {sorted(x.short() for x in want - got)}")
    return out


@pytest.mark.slow
def test_a_load_that_makes_the_leader_static_whenever_a_member_is_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: a loaded group with a static member always has a static leader (model/static.py did so until
    2026-11-25). A stored group may have a dynamic leader and static followers (SPEC.md §3.7 loads whatever the
    record holds): the check names the successor the mutant misses."""
    from properties.z3 import partition, steps
    original = partition.load

    def static_leader(p, w):   # type: ignore[no-untyped-def]
        out = original(p, w)
        x = out[-1]
        x.guards.append(z3.Implies(x.exists(lambda y: x.get("static", y)),
                                   x.exists(lambda y: z3.And(x.get("leader", y), x.get("static", y)))))
        return out
    scope = Scope(members=2, static=True, unload=True)
    assert load_disagreements("3.9", scope) == []
    monkeypatch.setitem(steps.GROUP_ACTIONS, ("LoadGroup", ""), static_leader)
    monkeypatch.setattr(steps, "_CACHE", {})
    found = load_disagreements("3.9", scope)
    # a dynamic leader with a static follower: the model loads it, the mutant does not
    assert found and all("model only [" in f and "slots=[MLw MIw]" in f.split("model only")[1] for f in found), found


@pytest.mark.slow
def test_an_unload_that_keeps_the_static_map_fails_the_static_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant for the proof: onGroupUnloaded leaves the static map (and the persist marks) to the slots it frees.
    model-static-slot-is-a-member is then not inductive, broken by UnloadGroup, and model.step disowns the CTI."""
    from properties.z3 import partition, steps
    original = partition.unload

    def keeps_static(p, w):   # type: ignore[no-untyped-def]
        kept = {f: w.slots[f] for f in ("static", "persist")}
        out = original(p, w)
        for x in out:
            x.slots.update(kept)
        return out
    monkeypatch.setitem(steps.GROUP_ACTIONS, ("UnloadGroup", ""), keeps_static)
    monkeypatch.setattr(steps, "_CACHE", {})
    results = {r.invariant: r for r in prove("3.9", static=True, names=proof_set("3.9", static=True)[0])}
    r = results["model-static-slot-is-a-member"]
    assert r.status == NOT_INDUCTIVE and "UnloadGroup" in r.note and r.cti is not None and r.cti.post is not None
    assert any(s.static and s.status != MEMBER for s in r.cti.post.slots) and r.cti.model_agrees is False

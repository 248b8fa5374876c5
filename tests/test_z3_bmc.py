"""Bounded model checking from the initial state: no violation in the reference model, the known
findings at their BFS-shortest depths, and a planted violation at the depth the model graph says."""
from __future__ import annotations

import dataclasses

import pytest

from model.graph import build
from model.profiles import ModelProfile, get_model_profile
from model.state import Scope, initial
from properties.abstract import FINDINGS, abstract_invariants
from properties.catalog import CATALOG
from properties.z3.bmc import bmc


def shortest_violation(profile: ModelProfile, name: str, scope: Scope) -> int | None:
    """The BFS depth of the first graph state that breaks ``name`` (None: none does)."""
    g = build(scope, profile)
    depths = [d for n, d in g.nodes(data="depth") if CATALOG[name].check(g.nodes[n]["state"]) is not None]
    return min(depths, default=None)


@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
def test_only_the_known_findings_fail_and_at_their_shortest_depths(profile: str) -> None:
    """Within 6 steps at 2 slots nothing but the profile's findings breaks, each at its BFS depth."""
    p = get_model_profile(profile)
    result = bmc(p, members=2, depth=6)
    assert len(result.checked) == len(abstract_invariants(profile))
    assert {v.invariant: v.depth for v in result.violations} == {
        name: shortest_violation(p, name, Scope(members=2)) for name, prof in FINDINGS if prof == profile}
    for v in result.violations:
        assert v.replays and v.states[0] == initial(Scope(members=2)) and len(v.actions) == v.depth
        assert CATALOG[v.invariant].check(v.states[-1]) is not None   # the last state breaks it …
        assert all(CATALOG[v.invariant].check(s) is None for s in v.states[:-1])   # … and no earlier one


def test_a_planted_violation_is_found_at_the_depth_the_model_graph_says() -> None:
    planted = dataclasses.replace(get_model_profile("3.9"), removal_completes_ops=False)
    name = "model-removed-member-leaves-no-liveness-op"
    result = bmc(planted, members=2, depth=6, names=[name])
    v = result.violated(name)
    assert v is not None and v.replays
    assert v.depth == shortest_violation(planted, name, Scope(members=2))


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
def test_depth_10_at_3_members_finds_exactly_the_documented_findings(profile: str) -> None:
    result = bmc(profile, members=3, depth=10)     # its time is a figure of bench/prove.py, not a test
    assert {v.invariant for v in result.violations} == {n for n, p in FINDINGS if p == profile}


def test_unknown_invariant_names_are_refused() -> None:
    with pytest.raises(ValueError, match="no Z3 twin for no-such-invariant"):
        bmc("3.9", members=1, depth=1, names=["no-such-invariant"])

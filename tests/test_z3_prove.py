"""`prove` proves the proof set inductive for any number of members, on both profiles; a planted
wrong transition makes consecution fail with a readable counterexample to induction; the
strengthening claims are needed; the findings are exactly the invariants the graph breaks."""
from __future__ import annotations

import dataclasses

import pytest

from model.graph import build
from model.profiles import MODEL_PROFILES, get_model_profile
from model.state import Scope
from properties.abstract import FINDINGS, STRENGTHENING, abstract_invariants
from properties.z3.prove import FINDING, NOT_INDUCTIVE, PROVED, proof_set, prove

#: 2.4.1 and 2.7.0 run in the slow tier (-m slow): over their graphs these checks take 0.5–2 min each here
#: (2.4.1's deadline arithmetic with pending members makes its graph ~10x 3.9's)
SLOW_PROFILES = ("2.4.1", "2.7.0")
PROFILES = [pytest.param(p, marks=[pytest.mark.slow] if p in SLOW_PROFILES else []) for p in sorted(MODEL_PROFILES)]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_invariant_of_the_proof_set_is_proved(profile: str) -> None:
    results = prove(profile)                       # its time is a figure of bench/prove.py, not a test
    claims, findings = proof_set(profile)
    assert {r.invariant: r.status for r in results} == {**{n: PROVED for n in claims},
                                                        **{n: FINDING for n in findings}}
    assert {r.invariant for r in results if r.strengthening} == {n for n, p in STRENGTHENING if p == profile}
    for r in results:
        if r.status == FINDING:   # each known finding comes with a replayable trace from the initial state
            assert r.trace is not None and r.trace.replays, r.invariant


@pytest.mark.parametrize("profile", PROFILES)
def test_the_findings_are_exactly_the_invariants_the_3_member_graph_breaks(profile: str) -> None:
    states = [s for _, s in build(Scope(members=3), profile).nodes(data="state")]
    broken = {p.name for p in abstract_invariants(profile) if any(p.check(s) is not None for s in states)}
    assert broken == {n for n, p in FINDINGS if p == profile}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "profile"), sorted(STRENGTHENING))
def test_without_a_strengthening_claim_the_others_are_not_inductive(name: str, profile: str) -> None:
    claims, _ = proof_set(profile)
    results = prove(profile, names=[n for n in claims if n != name])
    assert any(r.status == NOT_INDUCTIVE for r in results), [(r.invariant, r.status) for r in results]


def test_a_planted_profile_change_gives_a_counterexample_to_induction() -> None:
    """3.9 with KAFKA-7196 undone: a member removed by a join it missed keeps its liveness op."""
    planted = dataclasses.replace(get_model_profile("3.9"), removal_completes_ops=False)
    results = {r.invariant: r for r in prove(planted)}
    r = results["model-removed-member-leaves-no-liveness-op"]
    assert r.status == NOT_INDUCTIVE and r.cti is not None
    assert r.cti.action is not None and r.cti.action.kind in ("ExpireJoin", "ExpireHeartbeat")
    assert r.cti.model_agrees   # the planted model takes the same step
    assert r.cti.post is not None and any(s.status == 0 and s.watch for s in r.cti.post.slots)
    assert len(r.cti.pre.slots) <= 3   # shrunk to a readable size
    assert r.cti.action.slot == -1 or 0 <= r.cti.action.slot < len(r.cti.pre.slots)
    assert [line.split()[0] for line in r.cti.lines()] == ["pre", "act", "post", "scope"]
    assert all(x.status == PROVED for n, x in results.items() if n != r.invariant and x.status != FINDING)


def test_a_planted_z3_rule_error_gives_a_counterexample_the_model_disowns(monkeypatch: pytest.MonkeyPatch) -> None:
    """If the encoding forgets the new leader, the leader invariant fails — and the CTI says model.step
    would not take that step, so the disagreement is visible rather than silently 'proved'."""
    from properties.z3 import rules, steps
    monkeypatch.setattr(rules, "_hand_over_leadership", lambda w, gone: None)
    monkeypatch.setattr(steps, "_CACHE", {})
    results = {r.invariant: r for r in prove("0.10.0", names=["model-leader-exists-iff-a-member-exists",
                                                               "model-leader-is-a-member"])}
    r = results["model-leader-exists-iff-a-member-exists"]
    assert r.status == NOT_INDUCTIVE and r.cti is not None and r.cti.model_agrees is False
    assert "WARNING: model.step does not produce this post-state" in r.cti.lines()[-1]


def test_initiation_failures_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """An invariant that the initial state breaks is caught at initiation, with that state as the witness."""
    import z3

    from properties.z3 import invariants
    monkeypatch.setitem(invariants.TWINS, "model-no-empty-group-before-0-10-1", lambda v: z3.Not(v.fresh))
    results = {r.invariant: r for r in prove("0.10.0", names=["model-no-empty-group-before-0-10-1"])}
    r = results["model-no-empty-group-before-0-10-1"]
    assert r.status == NOT_INDUCTIVE and r.note == "initiation" and r.cti is not None and r.cti.action is None
    assert r.cti.lines()[0].startswith("initiation fails: the initial state Absent gen0")

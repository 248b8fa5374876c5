"""The Z3 encoding of the static scope (KIP-345; properties/z3/static.py) against the model, the static invariants'
two interpreters, and the inductive proofs over the static vocabulary (issue 11 item 3).

Default tier: the 1-slot static scope of 3.9 (cross-check, twins, a mutated rule), the static append's callback on
hand-made states of up to 3 marked members (the ghost tickets against the model's count, ~5 s), the ghost claim
against the count. Slow tier: 1 slot on 2.4.1 and 2.7.0, 2 slots on all three (2–10 min each), the proofs (1–3 min
per profile; the counting claim alone ~1 min, with its mutant) and the callback mutant.
"""

from __future__ import annotations

import itertools

import pytest
import z3

from model.graph import build
from model.profiles import get_model_profile
from model.releases import MODELLED, profiles_where, when
from model.rules import W
from model.state import FREE, MEMBER, AbstractAction, Scope, Slot, State
from model.step import _refused, _valid_requester, outcomes, step
from properties.abstract import FINDINGS, abstract_invariants
from properties.abstract_static import STATIC_FINDINGS, STATIC_INVARIANTS, STATIC_OUTPUT_FINDINGS, STATIC_STRENGTHENING
from properties.z3.explicit import Z3Stepper
from properties.z3.invariants import TWINS
from properties.z3.domain import Finite
from properties.z3.encoding import Vocabulary
from properties.z3.refusals import STATIC_REFUSAL_KINDS
from properties.z3.prove import FINDING, NOT_INDUCTIVE, PROVED, proof_set, prove
from properties.z3.static import owned
from properties.z3.static_invariants import STATIC_TWINS, evaluate_static_twins
from tests.test_z3_encoding import disagreements

STATIC_PROFILES = profiles_where(when("static-membership"), among=MODELLED)   # 2.4.1, 2.7.0, 3.9, 4.1
#: the counting claim (marked members ≤ static appends): over the unbounded member sort its twin is the per-member
#: ghost-ticket form (properties/z3/static_invariants.py)
COUNTING = "model-persisted-replacement-has-a-pending-static-append"


def _param(profile: str, members: int) -> object:
    slow = members > 1 or profile != "3.9"
    return pytest.param(profile, members, marks=[pytest.mark.slow] if slow else [], id=f"{profile}-{members}slot")


SCOPES = [_param(p, n) for p in STATIC_PROFILES for n in (1, 2)]


@pytest.mark.parametrize(("profile", "members"), SCOPES)
def test_z3_and_model_step_agree_on_every_static_state(profile: str, members: int) -> None:
    """Every state of the static graph, every action kind (the two static JoinGroups included) and slot."""
    assert disagreements(profile, Scope(members=members, static=True)) == []


@pytest.mark.parametrize("profile", ["3.9", pytest.param("2.7.0", marks=[pytest.mark.slow])])
def test_z3_and_model_step_agree_on_every_static_state_with_synchronous_appends(profile: str) -> None:
    """A synchronous append: a stored restart (2.6.1+) is answered at once instead of marked persist."""
    assert disagreements(profile, Scope(members=1, static=True, deferred_appends=False)) == []


@pytest.mark.parametrize(("profile", "members"), SCOPES)
def test_static_predicates_and_twins_agree_and_hold_on_every_static_state(profile: str, members: int) -> None:
    """The static invariants hold on the static graph, and every twin (the dynamic ones too, which ignore the
    static fields) says what its Python predicate says there."""
    props = {p.name: p for p in abstract_invariants(profile)}
    twins = {**STATIC_TWINS, **{n: TWINS[n] for n in props}}
    out, broken = [], set()
    for _, state in build(Scope(members=members, static=True), profile).nodes(data="state"):
        said = evaluate_static_twins(state, twins)
        broken |= {n for n, p in props.items() if p.check(state) is not None}
        for name, (_, predicate) in STATIC_INVARIANTS.items():
            if predicate(state) is not None or not said[name]:
                out.append(f"{name} on {state.short()}: python {predicate(state) is None}, z3 {said[name]}")
        out += [f"{n} on {state.short()}" for n, p in props.items() if (p.check(state) is None) != said[n]]
    assert out == []
    assert set(STATIC_TWINS) == set(STATIC_INVARIANTS)
    if members == 2:   # the findings of the static proof are exactly what the 2-slot static graph breaks
        assert broken == set(proof_set(profile, static=True)[1])


@pytest.mark.slow
@pytest.mark.parametrize("profile", STATIC_PROFILES)
def test_z3_and_model_outcomes_agree_on_every_static_state(profile: str) -> None:
    """(successor, outputs) pairs on the 1-slot static scope: the fenced answers of a restart, the current-generation
    answer of a stored restart's callback, the store error of a failed one (5–10 s each here)."""
    from tests.test_z3_outputs import disagreements as output_disagreements
    assert output_disagreements(profile, Scope(members=1, static=True)) == []


def static_refusal_disagreements(profile: str, scope: Scope) -> list[str]:
    """Every refused request with an instance-id cell, and every refused static JoinGroup, from every kind of slot in
    every group state of the static graph: Z3's refusal outcomes equal model.step.outcomes where the model refuses."""
    z3_step, p = Z3Stepper(profile, scope), get_model_profile(profile)
    out, seen = [], set()
    for _, state in build(scope, profile).nodes(data="state"):
        key = (state.group, tuple((x.status, x.watch == 0, x.static) for x in state.slots))   # all a refusal reads
        if key in seen:
            continue
        seen.add(key)
        for kind, cell in STATIC_REFUSAL_KINDS:
            for slot in [-1] if kind == "OffsetCommit/simple" else range(len(state.slots)):
                if kind in ("JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/static-new") and \
                        state.slots[slot] != FREE:   # a new member's slot is free
                    continue
                action = AbstractAction(kind, slot, cell)
                w = W.of(state, scope)
                refused = (cell or not _valid_requester(w, action)) and _refused(p, w, action) is not None
                want = set(outcomes(state, action, profile, scope, "x")) if refused else set()
                got = z3_step.outcomes(state, kind, cell, slot, "x", refused=True)
                if got != want:
                    out.append(f"{state.short()} {action}: z3 {sorted(str(o) for _, o in got)}, "
                               f"model {sorted(str(o) for _, o in want)}")
    return out


@pytest.mark.parametrize("profile", ["2.4.1", "3.9"])
def test_z3_and_model_agree_on_every_static_refusal(profile: str) -> None:
    """fenced / unknown-instance (3.x: UNKNOWN_MEMBER_ID, 2.x: ignored) / unsupported, and the static JoinGroups
    refused for any reason, on the 1-slot static scope."""
    assert static_refusal_disagreements(profile, Scope(members=1, static=True)) == []


def test_a_join_completion_that_removes_static_members_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: onCompleteJoin removes every member that did not rejoin, static ones too (SPEC.md §4.4 step 1 before
    KIP-345). The cross-check names a join completion where model.step keeps the static member."""
    from properties.z3 import rules, steps
    original = rules.remove_where

    def removes_static_too(p, w, sel, complete_ops):   # type: ignore[no-untyped-def]
        return original(p, w, lambda b, x: z3.And(b.is_member(x), z3.Not(b.get("awaiting_join", x))), complete_ops)
    monkeypatch.setattr(rules, "remove_where", removes_static_too)
    monkeypatch.setattr(steps, "_CACHE", {})
    found = disagreements("3.9", Scope(members=1, static=True))
    assert found and all(" ExpireJoin: " in f or "(0): " in f for f in found)
    assert any("ExpireJoin" in f and "model only" in f and "I" in f.split("model only")[1] for f in found), found


def test_the_static_proof_set() -> None:
    """Static scope: the static claims join, the three abstract invariants the static scope breaks become findings;
    a release without static members keeps its dynamic proof set."""
    claims, findings = proof_set("3.9", static=True)
    static_findings = {n for n, p in STATIC_FINDINGS if p == "3.9"}
    assert set(STATIC_INVARIANTS) <= set(claims) and not static_findings & set(claims)
    assert static_findings <= set(findings)
    assert "model-awaiting-join-only-for-members-in-preparing-rebalance" in proof_set("2.4.1", static=True)[0]
    assert proof_set("0.10.0", static=True) == proof_set("0.10.0")


@pytest.mark.slow
@pytest.mark.parametrize("profile", STATIC_PROFILES)
def test_the_static_proof_set_is_proved_and_its_findings_have_a_replayed_trace(profile: str) -> None:
    """Every static claim — the counting one too, through its ghost tickets — is proved for any number of members;
    each finding has its shortest violation over 2 static slots (BMC), replayed by model.step."""
    results = {r.invariant: r for r in prove(profile, static=True)}
    claims, findings = proof_set(profile, static=True)
    assert {n: r.status for n, r in results.items()} == {**{n: PROVED for n in claims},
                                                         **{n: FINDING for n in findings}}
    for name in findings:
        trace = results[name].trace
        assert trace is not None and trace.replays and trace.states[0].slots == (FREE, FREE), name
        if (name, profile) not in FINDINGS:   # the static scope's own: reached through a static member
            assert any(a.kind.startswith("JoinGroup/static") for a in trace.actions), name


# -- the counting claim: ghost tickets ----------------------------------------------------------------------------
def _callback_states(members: int) -> set[State]:
    """Stable groups with a static append first and up to 3 appends: every mix of marked, unmarked and free slots;
    and the same in PreparingRebalance with a marked leader whose join is parked (a v9 leader's store throws there,
    model/static.py ``_store_ok``)."""
    kinds = (Slot(status=MEMBER, static=True, persist=True, awaiting_join=True),
             Slot(status=MEMBER, static=True, persist=True), Slot(status=MEMBER, static=True, watch=1), FREE)
    lead = Slot(status=MEMBER, leader=True, static=True, persist=True, awaiting_join=True, watch=1)
    stable = {State(group="Stable", appends=("static",) + rest, fresh=False, slots=slots).canonical()
              for slots in itertools.combinations_with_replacement(kinds, members)
              for n in range(1, 4) for rest in itertools.product(("static", "stale"), repeat=n - 1)}
    rebalancing = {State(group="PreparingRebalance", join_op="join", appends=("static",) + rest, fresh=False,
                         slots=(lead,) + slots).canonical()
                   for slots in itertools.combinations_with_replacement(kinds, members - 1)
                   for n in range(1, 3) for rest in itertools.product(("static", "stale"), repeat=n - 1)}
    return stable | rebalancing


def callback_disagreements(profile: str) -> list[str]:
    out = []
    for members in (1, 2, 3):
        scope = Scope(members=members, static=True, max_appends=3)
        z3_step = Z3Stepper(profile, scope)
        for state in sorted(_callback_states(members), key=State.short):
            for arg in ("ok", "error"):
                got = z3_step.step(state, "CompleteAppend", arg)
                want = set(step(state, AbstractAction("CompleteAppend", -1, arg), profile, scope))
                if got != want:
                    out.append(f"{state.short()} {arg}: z3 only {sorted(x.short() for x in got - want)}, "
                               f"model only {sorted(x.short() for x in want - got)}")
    return out


def test_the_static_callback_with_ghost_tickets_is_the_models_count() -> None:
    """With the pre-state's tickets free, the encoding's stale callback is allowed exactly where the model's count
    allows it (more static appends than marked members), for up to 3 marked members — where the old
    "no member marked or another static append" over-approximation differed (~3 s)."""
    assert callback_disagreements("3.9") == []


@pytest.mark.slow
def test_the_static_callback_without_the_ticket_condition_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: a stale callback needs only that the tickets own the marked members (not that the popped append is
    spare): the check names a state with one marked member and one static append, where the model has no stale
    callback."""
    from properties.z3 import static, steps
    monkeypatch.setattr(static, "STALE_GUARD", lambda w, before: static.owned(w, before))
    monkeypatch.setattr(steps, "_CACHE", {})
    found = callback_disagreements("3.9")
    assert any(f.startswith("Stable join=none sync=0 appends=['static'] slots=[MIP] ok: z3 only") for f in found)


@pytest.mark.parametrize("members", [1, 2, 3])
def test_the_ghost_claim_implies_the_count(members: int) -> None:
    """Over a finite domain, "each marked member has a static append whose ticket is it" implies "no fewer static
    appends than marked members" (a ticket names one member): proving the ghost form proves the count."""
    v = Vocabulary(Finite(members), 3, z3.BoolVal(True), z3.BoolVal(True), True).state("ghost")
    s = z3.Solver()
    s.add(v.well_formed(), owned(v), z3.Not(STATIC_TWINS[COUNTING](v)))
    assert s.check() == z3.unsat


@pytest.mark.slow
def test_the_counting_claim_is_inductive_on_its_own() -> None:
    results = prove("3.9", static=True, names=[COUNTING])
    assert [(r.invariant, r.status) for r in results] == [(COUNTING, PROVED)]


@pytest.mark.slow
def test_a_stale_callback_that_always_may_be_stale_fails_the_counting_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: the store callback of a static append may always be for a gone id (no count, no ticket). The
    counting claim is then not inductive: the CTI pops the one static append of a marked member and leaves it
    marked, a step model.step does not take."""
    from properties.z3 import static, steps
    monkeypatch.setattr(static, "STALE_GUARD", lambda w, before: z3.BoolVal(True))
    monkeypatch.setattr(steps, "_CACHE", {})
    [r] = prove("3.9", static=True, names=[COUNTING])
    assert r.status == NOT_INDUCTIVE and r.cti is not None and r.cti.action is not None and r.cti.post is not None
    assert r.cti.action.kind == "CompleteAppend" and r.cti.model_agrees is False
    marked = [sum(s.persist for s in x.slots) for x in (r.cti.pre, r.cti.post)]
    assert marked[0] <= r.cti.pre.appends.count("static") and marked[1] > r.cti.post.appends.count("static")


@pytest.mark.slow
def test_without_the_static_strengthening_the_proof_fails() -> None:
    claims, _ = proof_set("3.9", static=True)
    results = prove("3.9", static=True, names=[n for n in claims if n not in STATIC_STRENGTHENING])
    broken = {r.invariant for r in results if r.status == NOT_INDUCTIVE}
    assert broken, broken


@pytest.mark.slow
def test_a_join_completion_that_drops_static_members_but_not_their_flag_fails_the_proof(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant for the proof: onCompleteJoin removes static members that did not rejoin and leaves the static map
    pointing at them. model-static-slot-is-a-member is then not inductive, and the CTI says model.step disowns it."""
    from properties.z3 import rules, steps
    original = rules.remove_where

    def drops_static(p, w, sel, complete_ops):   # type: ignore[no-untyped-def]
        flags = w.slots["static"]
        out = original(p, w, lambda b, x: z3.And(b.is_member(x), z3.Not(b.get("awaiting_join", x))), complete_ops)
        for x in out:
            x.slots["static"] = flags
        return out
    monkeypatch.setattr(rules, "remove_where", drops_static)
    monkeypatch.setattr(steps, "_CACHE", {})
    results = {r.invariant: r for r in prove("3.9", static=True)}   # the whole proof set: a CTI from its states
    r = results["model-static-slot-is-a-member"]
    assert r.status == NOT_INDUCTIVE and r.cti is not None and r.cti.action is not None and r.cti.post is not None
    assert any(s.static and s.status != MEMBER for s in r.cti.post.slots)
    assert r.cti.model_agrees is False   # model.step keeps the static member: the encoding is what is wrong


# -- output properties over the static actions ----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("profile", STATIC_PROFILES)
def test_the_static_graph_steps_break_exactly_the_static_output_findings(profile: str) -> None:
    """The Python output predicates on every step of the 2-slot static graph (6–15 s each): what they reject is
    STATIC_OUTPUT_FINDINGS, and on those steps the Z3 step twins say the same."""
    from model.step import enabled
    from properties.abstract_outputs import ModelStep, output_properties
    from properties.catalog import CATALOG
    from properties.z3.output_twins import evaluate_step_twins
    names = list(output_properties(profile))
    scope = Scope(members=2, static=True)
    broken, disagree = set(), []
    for _, s in build(scope, profile).nodes(data="state"):
        for a in enabled(s, profile, scope):
            for t, o in outcomes(s, a, profile, scope, canonical=False):
                said = evaluate_step_twins(s, a, o, t, names)
                for n in names:
                    ok = CATALOG[n].fn(s, ModelStep(a, o), t) is None   # type: ignore[misc]
                    broken |= set() if ok else {n}
                    if ok != said[n]:
                        disagree.append(f"{n}: {s.short()} {a} {o}")
    assert disagree == []
    assert broken == {n for n, p in STATIC_OUTPUT_FINDINGS if p == profile}


@pytest.mark.slow
@pytest.mark.parametrize("profile", STATIC_PROFILES)
def test_the_static_output_proof_proves_all_but_its_findings(profile: str) -> None:
    """Every output property on every step of the static scope (the static JoinGroups, the restart with changed
    metadata, the stored replacement's callback, the refused requests with an instance-id cell) from a state of the
    static proof set (~1 min each); a finding's counterexample step is one model.step takes."""
    from properties.abstract_outputs import output_properties
    from properties.z3.prove_outputs import prove_outputs
    results = {r.invariant: r for r in prove_outputs(profile, proof_set(profile, static=True)[0], static=True)}
    findings = {n for n, p in STATIC_OUTPUT_FINDINGS if p == profile}
    assert {n: r.status for n, r in results.items()} == {n: FINDING if n in findings else PROVED
                                                         for n in output_properties(profile)}
    for n in findings:
        cti = results[n].cti
        assert cti is not None and cti.model_agrees is True and cti.action is not None, n


@pytest.mark.slow
def test_a_stored_restart_answered_with_the_member_list_fails_the_static_output_proof(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: a static restart answered at once (or by its stored replacement's callback) gets the member list.
    model-member-list-goes-only-to-the-leader fails on a static step, and model.step disowns the step."""
    from properties.z3 import static, steps
    from properties.z3.outputs import ERROR, GEN, SHAPE
    from properties.z3.prove import NOT_PROVED_STEP
    from properties.z3.prove_outputs import prove_outputs

    def with_list(w, i, when=None):   # type: ignore[no-untyped-def]
        w.answer(i, "JoinGroup", ERROR["NONE"], GEN["current"], SHAPE["leader+members"], when=when)
        return w.set(i, awaiting_join=z3.BoolVal(False))
    monkeypatch.setattr(static, "_answer_current", with_list)
    monkeypatch.setattr(steps, "_CACHE", {})
    name = "model-member-list-goes-only-to-the-leader"
    [r] = prove_outputs("3.9", proof_set("3.9", static=True)[0], names=[name], static=True)
    assert r.status == NOT_PROVED_STEP and r.cti is not None and r.cti.model_agrees is False
    assert r.cti.action is not None and r.cti.action.kind in ("JoinGroup/static-rejoin", "CompleteAppend")

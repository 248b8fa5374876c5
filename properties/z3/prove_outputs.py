"""Proofs of the abstract output properties: every step from a state of the inductive invariant says
what the property claims, for any number of members.

``prove_outputs(profile, assumed)`` checks, for every path of every action kind and of every refused
request (refusals.py), with members an uninterpreted sort (prove.py's vocabulary),
``∧I(v) ∧ guard ⇒ P(v, m, outputs, v')`` for each output property P (properties/z3/output_twins.py),
where ``I`` are ``assumed`` — the invariants ``prove`` proved, an inductive conjunction that the initial
state satisfies, so it holds in every reachable state and P holds on every reachable step. A failure
comes with a counterexample step: pre-state, action, outputs and post-state as model values, checked
against ``model.step.outcomes``.
"""
from __future__ import annotations

import time
from dataclasses import replace

import z3

from model.profiles import ModelProfile, get_model_profile
from model.state import AbstractAction, Scope
from model.step import outcomes
from properties.abstract_outputs import output_properties
from properties.abstract_static import STATIC_OUTPUT_FINDINGS
from properties.z3.encoding import Terms, decode
from properties.z3.output_twins import STEP_TWINS
from properties.z3.outputs import Outs, decode_outputs
from properties.z3.prove import FINDING, GUARD_MS, NOT_PROVED_STEP, PROVED, UNKNOWN, Cti, Result, _Queries, proof_set
from properties.z3.refusals import REFUSAL_KINDS, STATIC_REFUSAL_KINDS, refusal_branches
from properties.z3.steps import Branches


def prove_outputs(profile: str | ModelProfile, assumed: list[str] | None = None, names: list[str] | None = None,
                  timeout_ms: int = 10000, static: bool = False) -> list[Result]:
    """Each output property of ``profile`` (or ``names``) proved on every step from ``assumed`` (default: the
    profile's proof set — pass ``prove``'s proved invariants, which are inductive together). ``static``: over the
    static scope (KIP-345) — its vocabulary, the static JoinGroups (the restart with changed metadata too), the
    refused requests with an instance-id cell, and the static invariants among the assumptions. An output property
    the static scope breaks by design (properties/abstract_static.py STATIC_OUTPUT_FINDINGS) is a finding, with its
    counterexample step."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    todo = list(output_properties(p.name)) if names is None else list(names)
    unknown = sorted(set(todo) - set(output_properties(p.name)))
    if unknown:
        raise ValueError(f"not output properties of profile {p.name}: {', '.join(unknown)}")
    q = _Queries(p, timeout_ms, static)
    assumed = proof_set(p.name, static)[0] if assumed is None else assumed
    c = _Candidates(todo)
    cells = REFUSAL_KINDS + STATIC_REFUSAL_KINDS if static else REFUSAL_KINDS
    refusals = [refusal_branches(p, q.voc, k, cell, m=q.m, pre=q.v) for k, cell in cells]
    for b, refused in [(q.moves[key], False) for key in q.kinds] + [(r, True) for r in refusals]:
        label = f"{b.kind}[{b.arg or 'unknown-member'}] (refused)" if refused else \
            f"{b.kind}[{b.arg}]" if b.arg else b.kind
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(q.v.well_formed(), *[q.twins[n](q.v) for n in assumed])
        for guard, post, _, outs in b.paths:
            s.push()
            s.add(guard)
            s.set("timeout", GUARD_MS)   # a path the invariants rule out is skipped for every property
            if s.check() != z3.unsat:
                s.set("timeout", timeout_ms)
                _check_path(q, s, c, b, post, outs, label)
            s.set("timeout", timeout_ms)
            s.pop()
    out = [Result(n, p.name, c.status[n], c.seconds[n], cti=c.ctis.get(n), note=", ".join(c.failed_on[n]))
           for n in todo]
    return [_as_finding(r) if static else r for r in out]


def _as_finding(r: Result) -> Result:
    """A static output finding (STATIC_OUTPUT_FINDINGS) whose counterexample step model.step takes is a finding;
    anything else stays what the proof said (proved: the finding is stale — the caller sees it proved)."""
    why = STATIC_OUTPUT_FINDINGS.get((r.invariant, r.profile))
    if why is None or r.status != NOT_PROVED_STEP or r.cti is None or not r.cti.model_agrees:
        return r
    return replace(r, status=FINDING, note=f"{why} (broken by {r.note})")


class _Candidates:
    """The output properties still standing, with what each cost and where it failed."""

    def __init__(self, names: list[str]) -> None:
        self.status = {n: PROVED for n in names}
        self.ctis: dict[str, Cti | None] = {}
        self.failed_on: dict[str, list[str]] = {n: [] for n in names}
        self.seconds = {n: 0.0 for n in names}


def _check_path(q: _Queries, s: z3.Solver, c: _Candidates, b: Branches, post: Terms, outs: Outs, label: str) -> None:
    """Every standing property on one path (``s`` holds the invariants and the path's guard)."""
    claims = {n: STEP_TWINS[n](q.v, b.kind, b.arg, b.m, outs, post) for n, st in c.status.items() if st == PROVED}
    t = time.perf_counter()
    names = list(claims)
    if len(names) > 1 and q.refute(s, z3.And(list(claims.values()))) is None:
        names = []   # all of them hold on this path: one query instead of one each
    for n in claims:
        c.seconds[n] += (time.perf_counter() - t) / len(claims)
    for name in names:
        t = time.perf_counter()
        found = q.refute(s, claims[name])
        c.seconds[name] += time.perf_counter() - t
        if found is not None:
            r, model = found
            c.status[name] = NOT_PROVED_STEP if r == z3.sat else UNKNOWN
            c.ctis[name] = None if model is None else _cti(q, model, name, post, outs, b.kind, b.arg, b.m)
            c.failed_on[name].append(label)


def _cti(q: _Queries, model: z3.ModelRef, name: str, post_terms: Terms, outs: Outs, kind: str, arg: str,
         m: z3.ExprRef | None) -> Cti:
    """The counterexample step in the solver's own member order (slot i = element i, before and after)."""
    elements = q.voc.dom.elements(model)
    pre = decode(model, q.v, elements, canonical=False)
    post = decode(model, post_terms, elements, canonical=False)
    said = decode_outputs(model, outs, elements)
    slot = -1
    if m is not None:
        me = model.eval(m, model_completion=True)
        slot = next(i for i, e in enumerate(elements) if e.eq(me))
    action = AbstractAction(kind, slot, arg)
    flags = q.flags(model)
    scope = Scope(members=max(1, len(pre.slots)), deferred_appends=flags["deferred_appends"],
                  initial_delay=flags["initial_delay"], max_appends=len(pre.appends) + 2, static=q.voc.static)
    agrees = (post.canonical(), said) in outcomes(pre, action, q.p, scope)
    return Cti(name, pre, action, post, flags, agrees, said)

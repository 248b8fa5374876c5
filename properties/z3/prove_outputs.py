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

import z3

from model.profiles import ModelProfile, get_model_profile
from model.state import AbstractAction, Scope
from model.step import outcomes
from properties.abstract_outputs import output_properties
from properties.z3.encoding import Terms, decode
from properties.z3.invariants import TWINS
from properties.z3.output_twins import STEP_TWINS
from properties.z3.outputs import Outs, decode_outputs
from properties.z3.prove import GUARD_MS, NOT_PROVED_STEP, PROVED, UNKNOWN, Cti, Result, _Queries, proof_set
from properties.z3.refusals import REFUSAL_KINDS, refusal_branches
from properties.z3.steps import ACTION_KINDS


def prove_outputs(profile: str | ModelProfile, assumed: list[str] | None = None, names: list[str] | None = None,
                  timeout_ms: int = 10000) -> list[Result]:
    """Each output property of ``profile`` (or ``names``) proved on every step from ``assumed`` (default: the
    profile's proof set — pass ``prove``'s proved invariants, which are inductive together)."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    todo = list(output_properties(p.name)) if names is None else list(names)
    unknown = sorted(set(todo) - set(output_properties(p.name)))
    if unknown:
        raise ValueError(f"not output properties of profile {p.name}: {', '.join(unknown)}")
    q = _Queries(p, timeout_ms)
    assumed = proof_set(p.name)[0] if assumed is None else assumed
    status = {n: PROVED for n in todo}
    ctis: dict[str, Cti | None] = {}
    failed_on: dict[str, list[str]] = {n: [] for n in todo}
    seconds = {n: 0.0 for n in todo}
    refusals = [refusal_branches(p, q.voc, k, c, m=q.m, pre=q.v) for k, c in REFUSAL_KINDS]
    for b, refused in [(q.moves[key], False) for key in ACTION_KINDS] + [(r, True) for r in refusals]:
        kind, arg, m = b.kind, b.arg, b.m
        label = f"{kind}[{arg or 'unknown-member'}] (refused)" if refused else f"{kind}[{arg}]" if arg else kind
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(q.v.well_formed(), *[TWINS[n](q.v) for n in assumed])
        for guard, post, _, outs in b.paths:
            s.push()
            s.add(guard)
            s.set("timeout", GUARD_MS)   # a path the invariants rule out is skipped for every property
            skip = s.check() == z3.unsat
            s.set("timeout", timeout_ms)
            for name in [] if skip else [n for n in todo if status[n] == PROVED]:
                t = time.perf_counter()
                found = q.refute(s, STEP_TWINS[name](q.v, kind, arg, m, outs, post))
                seconds[name] += time.perf_counter() - t
                if found is not None:
                    r, model = found
                    status[name] = NOT_PROVED_STEP if r == z3.sat else UNKNOWN
                    ctis[name] = None if model is None else _cti(q, model, name, post, outs, kind, arg, m)
                    failed_on[name].append(label)
            s.pop()
    return [Result(n, p.name, status[n], seconds[n], cti=ctis.get(n), note=", ".join(failed_on[n])) for n in todo]


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
                  initial_delay=flags["initial_delay"], max_appends=len(pre.appends) + 2)
    agrees = (post.canonical(), said) in outcomes(pre, action, q.p, scope)
    return Cti(name, pre, action, post, flags, agrees, said)

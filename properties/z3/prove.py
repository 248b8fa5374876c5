"""Inductive proofs of the abstract invariants, with members as an uninterpreted sort.

``prove(profile)`` takes the proof set — the abstract ``always`` properties of the catalog that
apply to the profile, minus the known ``FINDINGS`` (the claims marked ``STRENGTHENING`` are among
them) — and runs Houdini: check initiation (Init ⇒ I) and consecution (∧I ∧ T_a ⇒ I' for every
action kind a) of each candidate relative to all candidates still standing, drop the failures,
repeat until nothing fails. The survivors form an inductive conjunction that the initial state
satisfies, so each is *proved* for any number of members, any number of pending appends and every
scope flag. A dropped one is *not-inductive*, reported with its counterexample to induction:
model.State values, shrunk to the fewest members Z3 can find, and checked against model.step. A
finding gets its shortest violating trace from BMC (bmc.py) instead.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from model.profiles import ModelProfile, get_model_profile
from model.outputs import Outputs
from model.state import AbstractAction, Scope, State
from model.step import step as model_step
from properties.abstract import FINDINGS, STRENGTHENING, abstract_invariants
from properties.abstract_static import STATIC_FINDINGS, STATIC_INVARIANTS
from properties.z3.bmc import Violation, bmc
from properties.z3.encoding import Terms, Vocabulary, decode, initial
from properties.z3.invariants import TWINS
from properties.z3.static_invariants import STATIC_TWINS
from properties.z3.steps import ACTION_KINDS, SLOT_ACTIONS, VARIANT_KINDS, branches

PROVED, NOT_INDUCTIVE, UNKNOWN, FINDING = "proved", "not-inductive", "unknown", "finding"
#: an output property that some step from a state of the proved invariants breaks (prove_outputs.py)
NOT_PROVED_STEP = "not-proved"
#: the first look at a query (ms); proofs of these obligations take milliseconds
QUICK_MS = 2000
#: how long to look for a contradiction between a path's guard and the invariants before checking it anyway
GUARD_MS = 300


@dataclass(frozen=True)
class Cti:
    """A counterexample to induction (or to initiation, when ``action`` is None)."""

    invariant: str
    pre: State
    action: AbstractAction | None
    post: State | None
    scope_flags: dict[str, bool]
    model_agrees: bool | None   # is ``post`` one of model.step(pre, action)? (None: initiation)
    outputs: Outputs | None = None   # what the step says (a counterexample to an output property)

    def lines(self) -> list[str]:
        if self.action is None:
            return [f"initiation fails: the initial state {self.pre.short()} violates {self.invariant}"]
        flags = ", ".join(f"{k}={v}" for k, v in self.scope_flags.items())
        out = [f"pre   {self.pre.short()}", f"act   {self.action}", f"post  {self.post.short() if self.post else '?'}",
               f"scope {flags}"]
        if self.outputs is not None:
            out.insert(3, f"out   {self.outputs}")
        if self.model_agrees is False:
            what = "post-state" if self.outputs is None else "post-state with these outputs"
            out.append(f"WARNING: model.step does not produce this {what}: the encoding disagrees")
        return out


@dataclass(frozen=True)
class Result:
    """The verdict on one invariant for one profile."""

    invariant: str
    profile: str
    status: str                   # proved | not-inductive | unknown | finding
    seconds: float                # Z3 time spent on this invariant (initiation + consecution, last round)
    strengthening: bool = False   # a claim the proof needs to make the others inductive
    cti: Cti | None = None
    note: str = ""                # the actions that break it, or why a finding is one
    trace: Violation | None = None   # a finding's shortest violation from the initial state (BMC)


@dataclass
class _Candidate:
    name: str
    seconds: float = 0.0
    cti: Cti | None = None
    status: str = PROVED
    failed_on: list[str] = field(default_factory=list)


def proof_set(profile: str, static: bool = False) -> tuple[list[str], dict[str, str]]:
    """(twin names the proof uses, {finding: why}) for ``profile``, in catalog order. ``static``: the static scope
    (KIP-345): its own invariants join the claims (releases with static members), and the abstract invariants it
    breaks by design (properties/abstract_static.py STATIC_FINDINGS) become findings."""
    names = [p.z3 or p.name for p in abstract_invariants(profile)]
    claims = [n for n in names if (n, profile) not in FINDINGS]
    findings = {n: FINDINGS[(n, profile)] for n in names if (n, profile) in FINDINGS}
    if static and get_model_profile(profile).static_members:
        findings.update({n: STATIC_FINDINGS[(n, profile)] for n in claims if (n, profile) in STATIC_FINDINGS})
        claims = [n for n in claims if n not in findings] + list(STATIC_INVARIANTS)
    return claims, findings


def _solver(timeout_ms: int) -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    return s


class _Queries:
    """The proof obligations of one profile over the unbounded vocabulary.

    Consecution is checked path by path of the symbolic step (a path's guard, then each
    invariant on its post-state): small queries that Z3 settles in milliseconds, where one query
    over the merged post-state of a few hundred paths can time out on a ∀∃ invariant. A path whose
    guard contradicts the assumed invariants is skipped for all of them at once.
    """

    def __init__(self, p: ModelProfile, timeout_ms: int, static: bool = False, unload: bool = False) -> None:
        self.p, self.timeout_ms = p, timeout_ms
        self.voc = Vocabulary.unbounded(static, unload)
        self.v = self.voc.state("pre")
        self.m = self.voc.dom.member("m")
        self.twins = {**TWINS, **STATIC_TWINS} if static else TWINS
        self.kinds = ACTION_KINDS + VARIANT_KINDS if static else ACTION_KINDS
        self.moves = {(k, a): branches(p, self.voc, k, a, m=self.m, pre=self.v) for k, a in self.kinds}

    def initiation(self, name: str) -> tuple[z3.CheckSatResult, Cti | None]:
        s = _solver(self.timeout_ms)
        s.add(initial(self.v), self.v.well_formed(), z3.Not(self.twins[name](self.v)))
        r = s.check()
        cti = None
        if r == z3.sat:
            cti = Cti(name, decode(s.model(), self.v), None, None, self.flags(s.model()), None)
        return r, cti

    def consecution(self, kind: str, arg: str, assumed: list[str], names: list[str],
                    seconds: dict[str, float]) -> dict[str, tuple[z3.CheckSatResult, Cti | None]]:
        """The invariants of ``names`` that action ``kind`` can break (sat or unknown), each with a CTI."""
        s = _solver(self.timeout_ms)
        s.add(self.v.well_formed(), *[self.twins[n](self.v) for n in assumed])
        failed: dict[str, tuple[z3.CheckSatResult, Cti | None]] = {}
        for guard, post, _, _ in self.moves[(kind, arg)].paths:
            s.push()
            s.add(guard)
            s.set("timeout", GUARD_MS)   # a quick look only: satisfiable guards can be slow to confirm
            skip = s.check() == z3.unsat   # this path cannot be taken from a state that satisfies the invariants
            s.set("timeout", self.timeout_ms)
            if skip:
                s.pop()
                continue
            for name in names:
                if name in failed:
                    continue
                t = time.perf_counter()
                failed_here = self._break(s, name, post, kind, arg)
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t
                if failed_here is not None:
                    failed[name] = failed_here
            s.pop()
        return failed

    def _break(self, s: z3.Solver, name: str, post: Terms, kind: str,
               arg: str) -> tuple[z3.CheckSatResult, Cti | None] | None:
        """None when ``name`` holds after this path; else (sat, CTI) or (unknown, None).

        Z3 proves these queries unsat in milliseconds; a satisfiable one (a real CTI) can make its
        model finding over the unbounded sort slow, so a short look is followed by a search for a
        small finite model, and only then by the full timeout."""
        found = self.refute(s, z3.And(self.twins[name](post), post.well_formed()))
        if found is None:
            return None
        r, model = found
        return (r, None) if model is None else (z3.sat, self._cti(model, name, post, kind, arg))

    def refute(self, s: z3.Solver, claim: z3.ExprRef) -> tuple[z3.CheckSatResult, z3.ModelRef | None] | None:
        """None when ``s`` implies ``claim``; else (sat, a small model) or (unknown, None)."""
        s.push()
        try:
            s.add(z3.Not(claim))
            s.set("timeout", QUICK_MS)
            r = s.check()
            if r == z3.unsat:
                return None
            model = self._smallest(s)
            if model is None and r == z3.unknown:
                s.set("timeout", self.timeout_ms)
                r = s.check()
                if r == z3.unsat:
                    return None
                model = s.model() if r == z3.sat else None
            return (r, None) if model is None else (z3.sat, model)
        finally:
            s.set("timeout", self.timeout_ms)
            s.pop()

    def flags(self, model: z3.ModelRef) -> dict[str, bool]:
        return {"deferred_appends": z3.is_true(model.eval(self.voc.deferred, model_completion=True)),
                "initial_delay": z3.is_true(model.eval(self.voc.initial_delay, model_completion=True))}

    def _cti(self, model: z3.ModelRef, name: str, post_terms: Terms, kind: str, arg: str) -> Cti:
        elements = self.voc.dom.elements(model)
        pre_raw = decode(model, self.v, elements, canonical=False)
        post = decode(model, post_terms, elements)
        pre = pre_raw.canonical()
        slot = -1
        if kind in SLOT_ACTIONS:
            me = model.eval(self.m, model_completion=True)
            raw_index = next(i for i, e in enumerate(elements) if e.eq(me))
            slot = pre.slots.index(pre_raw.slots[raw_index])
        action = AbstractAction(kind, slot, arg)
        flags = self.flags(model)
        scope = Scope(members=max(1, len(pre.slots)), deferred_appends=flags["deferred_appends"],
                      initial_delay=flags["initial_delay"], max_appends=len(pre.appends) + 2, static=self.voc.static,
                      unload=self.voc.unload)
        agrees = post in model_step(pre, action, self.p, scope)
        return Cti(name, pre, action, post, flags, agrees)

    def _smallest(self, s: z3.Solver, most: int = 4) -> z3.ModelRef | None:
        """A model with at most ``most`` member identities, as few as possible (and few appends): a readable
        CTI. A finite model is a model: when the unbounded query came back unknown, finding one here still
        refutes the invariant; finding none leaves it unknown."""
        x = z3.Const("card!x", self.voc.dom.sort)
        for k in range(1, most + 1):
            for bound in (True, False):
                s.push()
                elements = [z3.Const(f"card!{i}", self.voc.dom.sort) for i in range(k)]
                s.add(z3.ForAll([x], z3.Or([x == e for e in elements])))
                if bound:
                    s.add(self.v.appends.n <= 2)
                r = s.check()
                model = s.model() if r == z3.sat else None
                s.pop()
                if model is not None:
                    return model
        return None


def prove(profile: str | ModelProfile, timeout_ms: int = 10000, names: list[str] | None = None,
          static: bool = False, unload: bool | None = None) -> list[Result]:
    """Houdini over the proof set of ``profile`` (or ``names``): proved / not-inductive / unknown per invariant.
    ``static``: over the static scope's vocabulary and actions (KIP-345); its findings' traces come from BMC over
    2 static slots. ``unload`` (default: ``static``): UnloadGroup and LoadGroup are actions too (partition.py) —
    a superset of the steps of a scope without partition moves, so what is proved holds there as well."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    claims, findings = proof_set(p.name, static)
    if names is not None:
        unknown = sorted(set(names) - set(claims) - set(findings))
        if unknown:
            raise ValueError(f"not abstract invariants of profile {p.name}: {', '.join(unknown)}")
        claims = [n for n in claims if n in names]
        findings = {n: why for n, why in findings.items() if n in names}
    q = _Queries(p, timeout_ms, static, static if unload is None else unload)
    active = [_Candidate(n) for n in claims]
    done: list[_Candidate] = []
    while True:
        dropped = _round(q, active)
        done += dropped
        active = [c for c in active if c not in dropped]
        if not dropped:
            break
    results = [Result(c.name, p.name, c.status, c.seconds, (c.name, p.name) in STRENGTHENING, c.cti,
                      note=", ".join(c.failed_on)) for c in active + done]
    results += _findings(p, findings, static)
    order = {n: i for i, n in enumerate(claims + list(findings))}
    return sorted(results, key=lambda r: order[r.invariant])


#: how far BMC looks for a finding's trace (2 member slots)
FINDING_DEPTH = 8


def _findings(p: ModelProfile, findings: dict[str, str], static: bool = False) -> list[Result]:
    """Each known finding with its shortest violation, found by BMC over 2 member slots (static ones: 2 static
    slots, the static scope's graph defaults otherwise)."""
    if not findings:
        return []
    t = time.perf_counter()
    found = bmc(p, depth=FINDING_DEPTH, names=list(findings), scope=Scope(members=2, static=static))
    seconds = (time.perf_counter() - t) / len(findings)
    return [Result(n, p.name, FINDING, seconds, note=why, trace=found.violated(n)) for n, why in findings.items()]


def _round(q: _Queries, active: list[_Candidate]) -> list[_Candidate]:
    """One Houdini round: every candidate against initiation and every action, assuming all of ``active``."""
    failed: dict[str, _Candidate] = {}
    seconds: dict[str, float] = {}
    for c in active:
        c.cti, c.status, c.failed_on = None, PROVED, []
        t = time.perf_counter()
        r, cti = q.initiation(c.name)
        seconds[c.name] = time.perf_counter() - t
        if r != z3.unsat:
            c.status, c.cti, c.failed_on = (NOT_INDUCTIVE if r == z3.sat else UNKNOWN), cti, ["initiation"]
            failed[c.name] = c
    assumed = [c.name for c in active]
    for kind, arg in q.kinds:
        todo = [c.name for c in active if c.name not in failed]
        for name, (r, cti) in q.consecution(kind, arg, assumed, todo, seconds).items():
            c = next(c for c in active if c.name == name)
            c.status, c.cti = (NOT_INDUCTIVE if r == z3.sat else UNKNOWN), cti
            c.failed_on.append(f"{kind}[{arg}]" if arg else kind)
            failed[name] = c
    for c in active:
        c.seconds = seconds.get(c.name, 0.0)
    return list(failed.values())

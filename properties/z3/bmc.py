"""Bounded model checking of the abstract invariants from the initial state (finite member domain).

``bmc(profile, members, depth)`` unrolls the transition relation ``depth`` times from
``model.state.initial`` over exactly ``members`` slots (an enumeration sort: distinct, closed) and
the scope's append bound and flags, and asks at each depth whether some invariant can fail. The
first violation of each invariant is decoded into a trace of ``model.State`` values (slot i is the
same member throughout) and replayed through ``model.step`` — a solver counterexample and an
explicit trace are one type.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import z3

from model.profiles import ModelProfile, get_model_profile
from model.state import AbstractAction, Scope, State
from model.step import step as model_step
from properties.abstract import abstract_invariants
from properties.z3.domain import Expr
from properties.z3.encoding import Terms, Vocabulary, decode, free_slot, initial
from properties.z3.invariants import TWINS
from properties.z3.static_invariants import STATIC_TWINS
from properties.z3.steps import ACTION_KINDS, SLOT_ACTIONS, Branches, branches, transition


@dataclass(frozen=True)
class Violation:
    """The first depth at which ``invariant`` fails, with a shortest trace to it."""

    invariant: str
    depth: int
    states: tuple[State, ...]               # states[0] is the initial state
    actions: tuple[AbstractAction, ...]     # actions[i] leads from states[i] to states[i + 1]
    replays: bool                           # model.step reproduces every step of the trace

    def lines(self) -> list[str]:
        out = [f"  0  {'(initial)':<28} {self.states[0].short()}"]
        steps = zip(self.actions, self.states[1:], strict=True)
        out += [f"{i + 1:3d}  {str(a):<28} {s.short()}" for i, (a, s) in enumerate(steps)]
        if not self.replays:
            out.append("WARNING: model.step does not reproduce this trace: the encoding disagrees")
        return out


@dataclass(frozen=True)
class BmcResult:
    profile: str
    scope: Scope
    depth: int
    checked: tuple[str, ...]
    violations: tuple[Violation, ...]
    seconds: float

    def violated(self, name: str) -> Violation | None:
        return next((v for v in self.violations if v.invariant == name), None)


def _moves(p: ModelProfile, voc: Vocabulary) -> list[tuple[AbstractAction, Branches]]:
    """Every (action, branches) of the scope: slot actions once per slot."""
    pre = voc.state("pre")
    out = []
    for kind, arg in ACTION_KINDS:
        for i in (range(voc.dom.k) if kind in SLOT_ACTIONS else [-1]):   # type: ignore[union-attr]
            m = voc.dom.slots[i] if i >= 0 else None   # type: ignore[union-attr]
            out.append((AbstractAction(kind, i, arg), branches(p, voc, kind, arg, m=m, pre=pre, outputs=False)))
    return out


def bmc(profile: str | ModelProfile, members: int = 3, depth: int = 10, names: list[str] | None = None,
        scope: Scope | None = None) -> BmcResult:
    """Check ``names`` (default: every abstract invariant of the profile) at depths 0..``depth``.

    ``scope`` (default ``Scope(members=members)``, the graph's defaults otherwise) fixes the slots,
    the append bound and the scope flags, so a violation's depth is its BFS depth in that graph. A static
    scope (KIP-345) adds the static members' actions and, on a release with static members, the static
    invariants (properties/abstract_static.py) to the default names."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    scope = scope or Scope(members=members)
    twins = {**TWINS, **STATIC_TWINS} if scope.static else TWINS
    if names is None:
        names = [prop.z3 or prop.name for prop in abstract_invariants(p.name)]
        names += list(STATIC_TWINS) if scope.static and p.static_members else []
    unknown = [n for n in names if n not in twins]
    if unknown:
        raise ValueError(f"no Z3 twin for {', '.join(unknown)}")
    t0 = time.perf_counter()
    voc = Vocabulary.of_scope(scope)
    moves = _moves(p, voc)
    states = [voc.state(f"s{d}") for d in range(depth + 1)]
    acts = [z3.Int(f"act{d}") for d in range(depth)]
    s = z3.Solver()
    s.add(initial(states[0]))
    remaining, found = list(names), []
    for d in range(depth + 1):
        if d:
            s.add(_step(moves, states[d - 1], states[d], acts[d - 1], f"t{d}"))
        while remaining:
            s.push()
            s.add(z3.Or([z3.Not(twins[n](states[d])) for n in remaining]))
            verdict = s.check()
            if verdict == z3.unknown:   # quantifier-free and finite: only a resource limit gets here
                raise RuntimeError(f"Z3 gave no answer at depth {d}: {s.reason_unknown()}")
            if verdict == z3.unsat:
                s.pop()
                # every state reachable in d steps satisfies these: say so, it prunes the deeper searches a lot
                s.add(*[twins[n](states[d]) for n in remaining])
                break
            model = s.model()
            broken = [n for n in remaining if z3.is_false(model.eval(twins[n](states[d]), model_completion=True))]
            trace = _trace(model, p, scope, states[: d + 1], acts[:d], [a for a, _ in moves])
            s.pop()
            for n in broken:
                found.append(Violation(n, d, *trace))
                remaining.remove(n)
    return BmcResult(p.name, scope, depth, tuple(names), tuple(found), time.perf_counter() - t0)


def _step(moves: list[tuple[AbstractAction, Branches]], v: Terms, v2: Terms, act: z3.ExprRef, tag: str) -> Expr:
    """One step of the unrolling: action number ``act`` is enabled in ``v`` and leads to ``v2``.

    As in ``model.step.enabled``, a new member joins in the first free slot only (free slots are
    interchangeable; this is the model's own symmetry reduction)."""
    out = []
    for j, (a, b) in enumerate(moves):
        t = transition(b, v, v2, tag=tag)
        if a.kind in ("JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/static-new"):
            t = z3.And(t, *[z3.Not(free_slot(v, v.dom.slots[i])) for i in range(a.slot)])   # type: ignore[union-attr]
        out.append(z3.And(act == j, t))
    return z3.Or(out)


def _trace(model: z3.ModelRef, p: ModelProfile, scope: Scope, states: list, acts: list[z3.ExprRef],
           actions: list[AbstractAction]) -> tuple[tuple[State, ...], tuple[AbstractAction, ...], bool]:
    slots = list(states[0].dom.slots)
    seq = tuple(decode(model, v, members=slots, canonical=False) for v in states)
    taken = tuple(actions[model.eval(a, model_completion=True).as_long()] for a in acts)
    replays = all(after.canonical() in model_step(before, a, p, scope)
                  for before, a, after in zip(seq[:-1], taken, seq[1:], strict=True))
    return seq, taken, replays

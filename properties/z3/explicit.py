"""The Z3 transition relation run on explicit states: successor sets by model enumeration.

``Z3Stepper(profile, scope).step(state, kind, arg, slot)`` asserts ``state`` as the pre-state of
T_kind (a finite domain of ``scope.members`` slots, slot i = member i) and enumerates every model
of the post-state with blocking clauses, canonicalising each. This is the Z3 side of the
encoding-agreement test (tests/test_z3_encoding.py): on every graph state, for every action kind
and slot, its set must equal ``model.step``'s. ``outcomes(...)`` does the same for (successor,
outputs) pairs against ``model.step.outcomes`` (tests/test_z3_outputs.py).
"""
from __future__ import annotations

from typing import Callable

import z3

from model.profiles import ModelProfile, get_model_profile
from model.outputs import Outputs
from model.state import Scope, State
from properties.z3.domain import GROUP, JOIN_OP, KIND, Finite
from properties.z3.encoding import Terms, Vocabulary, decode, slot_values
from properties.z3.outputs import Outs, decode_outputs
from properties.z3.refusals import refusal_branches
from properties.z3.steps import ACTION_KINDS, SLOT_ACTIONS, branches, transition, transition_outputs


class _Literals:
    """Cached equalities ``term == value`` of one state copy, so that a state is a list of literals."""

    def __init__(self, v: Terms, dom: Finite) -> None:
        self.v, self.dom = v, dom
        self._cache: dict[tuple[object, ...], list[z3.ExprRef]] = {}

    def _get(self, key: tuple[object, ...], make: Callable[[], list[z3.ExprRef]]) -> list[z3.ExprRef]:
        lits = self._cache.get(key)
        if lits is None:
            lits = self._cache[key] = make()
        return lits

    def of(self, state: State) -> list[z3.ExprRef]:
        v = self.v
        out = list(self._get(("scalars", state.group, state.join_op, state.sync_op, state.fresh,
                                state.new_member_added, len(state.appends)), lambda: [
            v.group == GROUP[state.group], v.join_op == JOIN_OP[state.join_op], v.sync_op == state.sync_op,
            v.fresh == state.fresh, v.nma == state.new_member_added, v.appends.n == len(state.appends)]))
        for i, k in enumerate(state.appends):
            out += self._get(("append", i, k), lambda i=i, k=k: [v.appends.at(i) == KIND[k]])   # type: ignore[misc]
        for i, slot in enumerate(state.slots):
            out += self._get(("slot", i, slot), lambda i=i, slot=slot: [   # type: ignore[misc]
                v.get(f, self.dom.slots[i]) == slot_values(slot)[f] for f, _ in v.voc.fields])
        return out


class Z3Stepper:
    """``step`` over the Z3 encoding for one (profile, scope)."""

    def __init__(self, profile: str | ModelProfile, scope: Scope) -> None:
        self.p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
        voc = Vocabulary.of_scope(scope)
        assert isinstance(voc.dom, Finite)
        self.voc, self.dom = voc, voc.dom
        self.pre, self.post = voc.state("pre"), voc.state("post")
        self.pre_lits, self.post_lits = _Literals(self.pre, voc.dom), _Literals(self.post, voc.dom)
        self._solvers: dict[tuple[str, str, int], z3.Solver] = {}
        self.outs = Outs.declare(voc.dom, "out")
        self._out_solvers: dict[tuple[str, str, int], z3.Solver] = {}
        self._assumed: dict[State, list[z3.ExprRef]] = {}

    def _solver(self, kind: str, arg: str, slot: int) -> z3.Solver:
        key = (kind, arg, slot)
        if key not in self._solvers:
            m = self.dom.slots[slot] if kind in SLOT_ACTIONS else None
            b = branches(self.p, self.voc, kind, arg, m=m, pre=self.pre, outputs=False)
            s = z3.Solver()
            s.add(transition(b, self.pre, self.post))
            self._solvers[key] = s
        return self._solvers[key]

    def step(self, state: State, kind: str, arg: str = "", slot: int = -1) -> set[State]:
        """Every canonical successor the Z3 relation allows from ``state`` (empty: not enabled)."""
        s = self._solver(kind, arg, slot)
        if state not in self._assumed:
            self._assumed = {state: [z3.And(self.pre_lits.of(state))]}   # one state at a time, all its actions
        assumptions = self._assumed[state]
        out: set[State] = set()
        if s.check(*assumptions) != z3.sat:
            return out
        model = s.model()
        s.push()
        try:
            while True:
                successor = decode(model, self.post, members=list(self.dom.slots), canonical=False)
                out.add(successor.canonical())
                s.add(z3.Not(z3.And(self.post_lits.of(successor))))
                if s.check(*assumptions) != z3.sat:
                    return out
                model = s.model()
        finally:
            s.pop()

    def outcomes(self, state: State, kind: str, arg: str = "", slot: int = -1, detail: str = "",
                 refused: bool = False) -> set[tuple[State, Outputs]]:
        """Every (canonical successor, outputs) pair the Z3 relation allows from ``state``; answers and
        arms name slots by their index in ``state`` (as model.step.outcomes does). ``refused``: the
        refusal of request ``kind`` with cell ``arg`` (refusals.py) instead of the action proper."""
        key = (kind, arg, slot, refused)
        if key not in self._out_solvers:
            m = self.dom.slots[slot] if slot >= 0 else None
            b = (refusal_branches(self.p, self.voc, kind, arg, m=m, pre=self.pre) if refused
                 else branches(self.p, self.voc, kind, arg, m=m, pre=self.pre))
            s = z3.Solver()
            s.add(transition_outputs(b, self.post, self.outs))
            self._out_solvers[key] = s
        s = self._out_solvers[key]
        assumptions = [z3.And(self.pre_lits.of(state))]
        members, leaves = list(self.dom.slots), self.outs.leaves()
        out: set[tuple[State, Outputs]] = set()
        s.push()
        try:
            while s.check(*assumptions) == z3.sat:
                model = s.model()
                successor = decode(model, self.post, members=members, canonical=False)
                out.add((successor.canonical(), decode_outputs(model, self.outs, members, detail)))
                said = [leaf == model.eval(leaf, model_completion=True) for leaf in leaves]
                s.add(z3.Not(z3.And(self.post_lits.of(successor) + said)))
            return out
        finally:
            s.pop()

    def action_keys(self) -> list[tuple[str, str, int]]:
        """Every (kind, arg, slot) the relation knows: slot actions once per slot."""
        return [(k, a, i) for k, a in ACTION_KINDS
                for i in (range(self.dom.k) if k in SLOT_ACTIONS else [-1])]

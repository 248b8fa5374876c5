"""The Z3 twins of the abstract output properties (properties/abstract_outputs.py), one formula per name.

A twin takes one symbolic transition — the pre-state ``v``, the action kind and its arg (an append
outcome, or a refused request's cell), the acting member ``m`` (None for group actions), the outputs
``o`` (outputs.py) and the post-state ``v2`` — and returns a Bool
formula with the meaning of the Python predicate of the same name. ``prove.py`` proves each for every
path of every action kind from a state satisfying the proved invariants (any number of members);
``evaluate_step_twins`` evaluates them on one explicit step (tests/test_z3_output_props.py).
"""
from __future__ import annotations

from typing import Callable

import z3

from model.outputs import ERROR_PRIOR, LEADER_LIST, NEW, NEW_MEMBER, NO_FIELD, SOURCES, STATIC, STATIC_FORMER, Outputs
from model.state import PENDING, AbstractAction, State
from properties.abstract_outputs import REQUESTS
from properties.z3.domain import STATUS, Expr, Finite
from properties.z3.encoding import Terms, Vocabulary, assignment
from properties.z3.outputs import APIS, ERROR, GEN, GROUP_OPS, MEMBER_OPS, SHAPE, SOURCE, Outs, output_assignment

StepTwin = Callable[[Terms, str, str, "Expr | None", Outs, Terms], Expr]
STEP_TWINS: dict[str, StepTwin] = {}


def step_twin(name: str) -> Callable[[StepTwin], StepTwin]:
    """Register the Z3 formula of the abstract output property ``name``."""
    def register(fn: StepTwin) -> StepTwin:
        if name in STEP_TWINS:
            raise ValueError(f"Z3 step twin {name!r} is defined twice")
        STEP_TWINS[name] = fn
        return fn
    return register


def _member_list(o: Outs, x: Expr) -> Expr:
    return z3.And(o.answered("JoinGroup", x), o.get("JoinGroup.shape", x) == SHAPE[LEADER_LIST])


def _new_generation(o: Outs, x: Expr) -> Expr:
    return z3.And(o.answered("JoinGroup", x), o.get("JoinGroup.generation", x) == GEN[NEW])


def _ok_join(o: Outs, x: Expr) -> Expr:
    return z3.And(o.answered("JoinGroup", x), o.error("JoinGroup", x) == ERROR["NONE"])


@step_twin("model-member-list-goes-only-to-the-leader")
def _list_to_leader(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    return v2.forall(lambda x: z3.Implies(_member_list(o, x), v2.get("leader", x)))


@step_twin("model-join-completion-gives-the-member-list-once")
def _list_once(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    one = z3.And(v2.exists(lambda x: _member_list(o, x)), v2.forall(lambda x: v2.forall(
        lambda y: z3.Implies(z3.And(_member_list(o, x), _member_list(o, y)), x == y))))
    return z3.Implies(v2.exists(lambda x: _new_generation(o, x)), one)


@step_twin("model-join-completion-answers-every-member-with-the-new-generation")
def _every_member_new(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    every = v2.forall(lambda x: z3.And(_new_generation(o, x) == v2.is_member(x),
                                       z3.Implies(_new_generation(o, x), o.error("JoinGroup", x) == ERROR["NONE"])))
    return z3.Implies(v2.exists(lambda x: _new_generation(o, x)), every)


@step_twin("model-join-answers-of-a-step-share-one-generation")
def _one_generation(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    return v2.forall(lambda x: v2.forall(lambda y: z3.Implies(
        z3.And(_ok_join(o, x), _ok_join(o, y)), o.get("JoinGroup.generation", x) == o.get("JoinGroup.generation", y))))


@step_twin("model-success-answer-only-to-a-member")
def _success_to_member(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    if arg == "loading":   # a Heartbeat while the partition loads is answered NONE unseen (§3.0)
        return z3.BoolVal(True)

    def ok(api: str, x: Expr) -> Expr:
        known = v2.is_member(x)
        if api == "LeaveGroup":
            known = z3.Or(known, v.is_member(x), v.get("status", x) == STATUS[PENDING])
        return z3.Implies(z3.And(o.answered(api, x), o.error(api, x) == ERROR["NONE"]), known)
    return v2.forall(lambda x: z3.And([ok(api, x) for api in APIS]))


@step_twin("model-timer-armed-with-a-legal-delay-source")
def _legal_source(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    def legal(op: str, term: Expr) -> Expr:
        return z3.Or([term == SOURCE[s] for s in (NO_FIELD, *SOURCES[op])])
    per_member = v2.forall(lambda x: z3.And([legal(op, o.get(op, x)) for op in MEMBER_OPS]))
    return z3.And(per_member, *[legal(op, o.group[op]) for op in GROUP_OPS])


@step_twin("model-new-member-delay-only-for-a-new-member")
def _new_member_delay(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    return v2.forall(lambda x: z3.Implies(o.get("heartbeat", x) == SOURCE[NEW_MEMBER],
                                          z3.And(v2.is_member(x), v2.get("is_new", x))))


@step_twin("model-request-is-answered-or-parked")
def _answered_or_parked(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    api = REQUESTS.get(kind)
    if api is None or m is None:
        return z3.BoolVal(True)
    parked = {"JoinGroup": v2.get("awaiting_join", m), "SyncGroup": v2.get("awaiting_sync", m)}
    return z3.Or(o.answered(api, m), parked.get(api, z3.BoolVal(False)))


@step_twin("model-static-answer-only-to-a-static-member")
def _static_answer(v: Terms, kind: str, arg: str, m: Expr | None, o: Outs, v2: Terms) -> Expr:
    def static_shape(x: Expr) -> Expr:
        shape = o.get("JoinGroup.shape", x)
        return z3.And(o.answered("JoinGroup", x), z3.Or(shape == SHAPE[STATIC], shape == SHAPE[ERROR_PRIOR],
                                                           shape == SHAPE[STATIC_FORMER]))
    # (a vocabulary without static members has ``static`` False everywhere: there the claim is "no such answer")
    return v2.forall(lambda x: z3.Implies(static_shape(x), z3.And(v2.is_member(x), v2.get("static", x))))


# -- the formulas on one explicit step --------------------------------------------------------------
_COPIES: dict[tuple[int, int, bool], tuple[Terms, Outs, Terms]] = {}
_FORMULAS: dict[tuple[object, ...], Expr] = {}


def evaluate_step_twins(before: State, step_action: AbstractAction, outputs: Outputs, after: State,
                        names: list[str]) -> dict[str, bool]:
    """Each step twin of ``names`` on one explicit step (``after`` with slot positions kept, slot i = member i)."""
    static = any(s.static or s.persist for s in before.slots + after.slots)
    key = (len(before.slots), max(len(before.appends), len(after.appends), 1), static)
    if key not in _COPIES:
        voc = Vocabulary(Finite(key[0]), key[1], z3.BoolVal(True), z3.BoolVal(True), static)
        _COPIES[key] = (voc.state("b"), Outs.declare(voc.dom, "o"), voc.state("a"))
    v, o, v2 = _COPIES[key]
    dom = v.dom
    assert isinstance(dom, Finite)
    values = assignment(v, before) + assignment(v2, after) + output_assignment(o, outputs)
    m = dom.slots[step_action.slot] if step_action.slot >= 0 else None
    fkey = (tuple(names), step_action.kind, step_action.arg, step_action.slot, *key)
    packed = _FORMULAS.get(fkey)
    if packed is None:   # one term for all names (bit i: name i holds): one substitution per step
        twins = [STEP_TWINS[n](v, step_action.kind, step_action.arg, m, o, v2) for n in names]
        packed = _FORMULAS[fkey] = z3.Sum([z3.If(f, z3.IntVal(1 << i), z3.IntVal(0)) for i, f in enumerate(twins)])
    value = z3.simplify(z3.substitute(packed, *values))
    if not z3.is_int_value(value):
        raise ValueError(f"the step twins did not evaluate to truth values: {value}")
    bits = value.as_long()
    return {n: bool(bits >> i & 1) for i, n in enumerate(names)}

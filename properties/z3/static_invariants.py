"""The Z3 twins of the static scope's abstract invariants (properties/abstract_static.py), one formula per name,
and their evaluation on one explicit static state (tests/test_z3_static.py compares them with the predicates)."""
from __future__ import annotations

from typing import Callable

import z3

from model.state import APPEND_STATIC, COMPLETING, INITIAL_JOIN, PENDING, PREPARING, STABLE, State
from properties.z3.domain import JOIN_OP, KIND, STATUS, Expr, Finite
from properties.z3.encoding import Terms, Vocabulary, assignment
from properties.z3.static import owned

Twin = Callable[[Terms], Expr]
STATIC_TWINS: dict[str, Twin] = {}


def twin(name: str) -> Callable[[Twin], Twin]:
    def register(fn: Twin) -> Twin:
        if name in STATIC_TWINS:
            raise ValueError(f"Z3 twin {name!r} is defined twice")
        STATIC_TWINS[name] = fn
        return fn
    return register


@twin("model-static-slot-is-a-member")
def _static_is_member(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("static", x), v.is_member(x)))


@twin("model-persist-only-for-static-members")
def _persist_static(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("persist", x), v.get("static", x)))


@twin("model-persisted-replacement-has-a-pending-static-append")
def _persist_append(v: Terms) -> Expr:
    """Over a finite domain the count itself. Over the unbounded one (no cardinalities) its per-member form with the
    appends' ghost tickets (properties/z3/domain.py): each marked member has a static append whose ticket is it —
    distinct members, distinct appends, so it implies the count for any number of members; and the encoding's
    tickets follow every model step (properties/z3/static.py (3)), so it is what the proof proves inductive."""
    if isinstance(v.dom, Finite):
        marked = z3.Sum([z3.If(v.get("persist", x), 1, 0) for x in v.dom.slots])
        return marked <= v.appends.count(lambda k: k == KIND[APPEND_STATIC])   # type: ignore[union-attr]
    return owned(v)


@twin("model-awaiting-join-outside-preparing-only-while-persisted")
def _awaiting_join(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("awaiting_join", x), z3.And(
        v.is_member(x), z3.Or(v.is_group(PREPARING), z3.And(v.is_group(STABLE), v.get("persist", x))))))


@twin("model-new-member-only-in-preparing-rebalance-and-not-persisted")
def _new_in_preparing(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("is_new", x), z3.And(v.is_member(x), v.is_group(PREPARING),
                                                                     z3.Not(v.get("persist", x)))))


@twin("model-persisted-member-never-in-an-initial-join")
def _persist_not_initial(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("persist", x), v.join_op != JOIN_OP[INITIAL_JOIN]))


@twin("model-pending-sync-only-after-join-for-members-or-replaced-ids")
def _pending_sync_left_behind(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("pending_sync", x), z3.And(
        v.get("status", x) != STATUS[PENDING], v.is_group(COMPLETING, STABLE))))


_COPIES: dict[tuple[int, int], Terms] = {}


def evaluate_static_twins(state: State, twins: dict[str, Twin]) -> dict[str, bool]:
    """Each twin of ``twins`` evaluated on ``state`` over a static vocabulary (slot i = member i)."""
    key = (len(state.slots), max(len(state.appends), 1))
    if key not in _COPIES:
        _COPIES[key] = Vocabulary(Finite(key[0]), key[1], z3.BoolVal(True), z3.BoolVal(True), True).state("xs")
    v = _COPIES[key]
    values = assignment(v, state)
    out = {}
    for name, fn in twins.items():
        value = z3.simplify(z3.substitute(fn(v), *values))
        if not (z3.is_true(value) or z3.is_false(value)):
            raise ValueError(f"{name} did not evaluate to a truth value on {state.short()}: {value}")
        out[name] = z3.is_true(value)
    return out

"""The Z3 twins of the abstract invariants (properties/abstract.py), one formula per name.

A twin takes a ``Terms`` (any member domain) and returns a Bool formula with the meaning of the
Python predicate of the same name; tests/test_z3_invariants.py evaluates both on every graph
state and checks they agree.
"""
from __future__ import annotations

from typing import Callable

import z3

from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, COMPLETING, EMPTY, INITIAL_JOIN, MANY, NO_JOIN,
                         PENDING, PREPARING, STABLE, State)
from properties.z3.domain import JOIN_OP, KIND, STATUS, WATCH, Expr, Finite
from properties.z3.encoding import Terms, Vocabulary, assignment, free_slot

Twin = Callable[[Terms], Expr]
TWINS: dict[str, Twin] = {}


def twin(name: str) -> Callable[[Twin], Twin]:
    """Register the Z3 formula of the abstract invariant ``name``."""
    def register(fn: Twin) -> Twin:
        if name in TWINS:
            raise ValueError(f"Z3 twin {name!r} is defined twice")
        TWINS[name] = fn
        return fn
    return register


def _status(v: Terms, x: Expr, status: int) -> Expr:
    return v.get("status", x) == STATUS[status]


# -- leadership ------------------------------------------------------------------------------------
@twin("model-leader-exists-iff-a-member-exists")
def _leader_iff_member(v: Terms) -> Expr:
    return v.exists(lambda x: v.get("leader", x)) == v.exists(v.is_member)


@twin("model-leader-is-a-member")
def _leader_is_member(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("leader", x), v.is_member(x)))


@twin("model-at-most-one-leader")
def _one_leader(v: Terms) -> Expr:
    return v.forall(lambda x: v.forall(lambda y: z3.Implies(z3.And(v.get("leader", x), v.get("leader", y)), x == y)))


# -- parked requests versus the group state ------------------------------------------------------
@twin("model-awaiting-join-only-for-members-in-preparing-rebalance")
def _awaiting_join(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("awaiting_join", x), z3.And(v.is_member(x), v.is_group(PREPARING))))


@twin("model-awaiting-sync-only-for-members-in-completing-rebalance")
def _awaiting_sync(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("awaiting_sync", x), z3.And(v.is_member(x), v.is_group(COMPLETING))))


# -- group state versus membership ----------------------------------------------------------------
@twin("model-empty-or-absent-group-has-no-members")
def _empty_no_members(v: Terms) -> Expr:
    return z3.Implies(v.is_group(EMPTY, ABSENT_GROUP), z3.Not(v.exists(v.is_member)))


@twin("model-completing-or-stable-group-has-a-member")
def _completing_has_member(v: Terms) -> Expr:
    return z3.Implies(v.is_group(COMPLETING, STABLE), v.exists(v.is_member))


@twin("model-absent-group-has-no-slot-in-use")
def _absent_all_free(v: Terms) -> Expr:
    return z3.Implies(v.is_group(ABSENT_GROUP), v.forall(lambda x: free_slot(v, x)))


# -- delayed operations ----------------------------------------------------------------------------
@twin("model-join-op-armed-iff-preparing-rebalance")
def _join_op(v: Terms) -> Expr:
    return (v.join_op != JOIN_OP[NO_JOIN]) == v.is_group(PREPARING)


@twin("model-initial-join-only-while-every-member-is-new")
def _initial_join(v: Terms) -> Expr:
    return z3.Implies(v.join_op == JOIN_OP[INITIAL_JOIN], v.forall(lambda x: z3.Implies(
        v.is_member(x), z3.And(v.get("is_new", x), v.get("awaiting_join", x)))))


@twin("model-initial-join-extends-only-in-generation-0")
def _extends_at_generation_0(v: Terms) -> Expr:
    return z3.Not(z3.And(v.join_op == JOIN_OP[INITIAL_JOIN], v.nma, z3.Not(v.fresh)))


@twin("model-delayed-sync-armed-only-after-join")
def _sync_op(v: Terms) -> Expr:
    return z3.Implies(v.sync_op, v.is_group(COMPLETING, STABLE))


@twin("model-pending-sync-only-for-members-after-join")
def _pending_sync(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("pending_sync", x),
                                         z3.And(v.is_member(x), v.is_group(COMPLETING, STABLE))))


@twin("model-new-member-is-awaiting-join")
def _new_awaits(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(v.get("is_new", x), z3.And(v.is_member(x), v.get("awaiting_join", x))))


@twin("model-current-append-only-in-completing-rebalance")
def _current_append(v: Terms) -> Expr:
    return z3.Implies(v.appends.any(lambda k: k == KIND[APPEND_CURRENT]), v.is_group(COMPLETING))


# -- profile features ----------------------------------------------------------------------------
@twin("model-no-pending-member-before-kip-394")
def _no_pending(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Not(_status(v, x, PENDING)))


@twin("model-no-delayed-sync-before-kafka-12890")
def _no_delayed_sync(v: Terms) -> Expr:
    return z3.And(z3.Not(v.sync_op), v.forall(lambda x: z3.Not(v.get("pending_sync", x))))


@twin("model-no-initial-delayed-join-before-kafka-4925")
def _no_initial_join(v: Terms) -> Expr:
    return v.join_op != JOIN_OP[INITIAL_JOIN]


@twin("model-no-empty-group-before-0-10-1")
def _no_empty(v: Terms) -> Expr:
    return z3.Not(v.is_group(EMPTY))


# -- liveness watches ------------------------------------------------------------------------------
@twin("model-idle-member-has-liveness-watch")
def _idle_watched(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(
        z3.And(v.is_member(x), z3.Not(v.get("awaiting_join", x)), z3.Not(v.get("awaiting_sync", x))),
        v.get("watch", x) != WATCH[0]))


@twin("model-at-most-one-liveness-op-per-slot")
def _one_watch(v: Terms) -> Expr:
    return v.forall(lambda x: v.get("watch", x) != WATCH[MANY])


@twin("model-pending-member-has-expiration")
def _pending_watched(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(_status(v, x, PENDING), v.get("watch", x) != WATCH[0]))


@twin("model-removed-member-leaves-no-liveness-op")
def _no_orphan_watch(v: Terms) -> Expr:
    return v.forall(lambda x: z3.Implies(_status(v, x, ABSENT), v.get("watch", x) == WATCH[0]))


# -- the formulas on one explicit state ------------------------------------------------------------
_COPIES: dict[tuple[int, int], Terms] = {}
_FORMULAS: dict[tuple[str, int, int], Expr] = {}


def holds_on(name: str, state: State) -> bool:
    """The twin ``name`` evaluated on one explicit state (slot i = member i): substitute, simplify."""
    return evaluate_twins(state, [name])[name]


def evaluate_twins(state: State, names: list[str]) -> dict[str, bool]:
    """Each twin of ``names`` evaluated on ``state``: the same formulas the proofs use, on one state."""
    key = (len(state.slots), max(len(state.appends), 1))
    if key not in _COPIES:
        _COPIES[key] = Vocabulary(Finite(key[0]), key[1], z3.BoolVal(True), z3.BoolVal(True)).state("x")
    v = _COPIES[key]
    values = assignment(v, state)
    out = {}
    for name in names:
        formula = _FORMULAS.get((name, *key))
        if formula is None:
            formula = _FORMULAS[(name, *key)] = TWINS[name](v)
        value = z3.simplify(z3.substitute(formula, *values))
        if not (z3.is_true(value) or z3.is_false(value)):
            raise ValueError(f"{name} did not evaluate to a truth value on {state.short()}: {value}")
        out[name] = z3.is_true(value)
    return out

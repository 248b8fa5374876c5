"""The Z3 vocabulary of the abstract state: state copies, the initial condition, encoder and decoder.

A ``Terms`` is one abstract state as Z3 terms — the fields of ``model.State`` one to one:
group (enum), join_op (enum), sync_op, fresh, new_member_added (Bool constants), the pending appends
(a sequence, see domain.py), and per member identity the fields of ``model.Slot`` (status, leader,
awaiting_join, awaiting_sync, is_new, pending_sync, watch ∈ {0, 1, many}). ``Vocabulary.state(name)``
declares a copy: ``v`` and ``v'`` (primed = post-state) are two such copies. The transition
formulas over them are in steps.py (one per abstract action kind, built by rules.py).

The scope's two behaviour flags (``deferred_appends``, ``initial_delay``) are *rigid* parameters:
Python constants when a scope is given, free Boolean constants otherwise — then a proof covers
every scope at once. ``max_appends`` bounds the append sequence (None: unbounded, for proofs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import z3

from model.state import FREE, MEMBER, Scope, Slot, State
from properties.z3.domain import (GROUP, JOIN_OP, KIND, STATUS, WATCH, Appends, BoundedAppends, Domain, Expr, Field,
                                  Finite, GroupSort, JoinSort, StatusSort, Unbounded, UnboundedAppends,
                                  WatchSort, bool_of, value_of)

#: the per-member fields, in model.Slot order, with their sorts
SLOT_FIELDS: tuple[tuple[str, z3.SortRef], ...] = (
    ("status", StatusSort), ("leader", z3.BoolSort()), ("awaiting_join", z3.BoolSort()),
    ("awaiting_sync", z3.BoolSort()), ("is_new", z3.BoolSort()), ("pending_sync", z3.BoolSort()),
    ("watch", WatchSort))
#: the fields only a static scope has (KIP-345, model/static.py); elsewhere they are the constant False
STATIC_FIELDS: tuple[tuple[str, z3.SortRef], ...] = (("static", z3.BoolSort()), ("persist", z3.BoolSort()))
_FREE_VALUES = {"status": STATUS[FREE.status], "watch": WATCH[FREE.watch]}
_BOOL = {True: z3.BoolVal(True), False: z3.BoolVal(False)}


@dataclass(frozen=True)
class Vocabulary:
    """Which member domain, append bound and scope flags a family of state copies shares."""

    dom: Domain
    max_appends: int | None
    deferred: Expr
    initial_delay: Expr
    static: bool = False   # the scope has static members: the slots carry ``static`` and ``persist`` (KIP-345)
    unload: bool = False   # the scope moves the partition: UnloadGroup and LoadGroup are enabled (partition.py)

    @staticmethod
    def unbounded(static: bool = False, unload: bool = False) -> "Vocabulary":
        """Any number of members, any number of appends, every scope: the proof vocabulary."""
        return Vocabulary(_UNBOUNDED, None, z3.Bool("scope.deferred_appends"), z3.Bool("scope.initial_delay"),
                          static, unload)

    @staticmethod
    def of_scope(scope: Scope) -> "Vocabulary":
        """Exactly ``scope``: ``scope.members`` slots, its append bound and flags (BMC, the agreement test)."""
        return Vocabulary(Finite(scope.members), scope.max_appends, z3.BoolVal(scope.deferred_appends),
                          z3.BoolVal(scope.initial_delay), scope.static, scope.unload)

    @property
    def key(self) -> tuple[object, ...]:
        """What tells two vocabularies apart (a cache key: equal keys build equal terms)."""
        size = self.dom.k if isinstance(self.dom, Finite) else "unbounded"
        return (size, self.max_appends, str(self.deferred), str(self.initial_delay), self.static, self.unload)

    @property
    def fields(self) -> tuple[tuple[str, z3.SortRef], ...]:
        """The per-member fields that are variables of a state copy (the static ones only in a static scope)."""
        return SLOT_FIELDS + STATIC_FIELDS if self.static else SLOT_FIELDS

    def state(self, name: str) -> "Terms":
        tickets = self.dom.sort if self.static else None   # a static copy's appends carry ghost tickets (domain.py)
        appends: Appends = (UnboundedAppends.declare(name, tickets) if self.max_appends is None
                            else BoundedAppends.declare(name, self.max_appends, tickets))
        return Terms(self, z3.Const(f"{name}.group", GroupSort), z3.Const(f"{name}.join_op", JoinSort),
                     z3.Bool(f"{name}.sync_op"), appends, z3.Bool(f"{name}.fresh"),
                     z3.Bool(f"{name}.new_member_added"),
                     {**{f: self.dom.const(z3.BoolVal(False)) for f, _ in STATIC_FIELDS},
                      **{f: self.dom.field(f"{name}.{f}", sort) for f, sort in self.fields}})


_UNBOUNDED = Unbounded()


class Terms:
    """One abstract state as Z3 terms (variables for a declared copy, expressions for a computed one)."""

    __slots__ = ("voc", "group", "join_op", "sync_op", "appends", "fresh", "nma", "slots")

    def __init__(self, voc: Vocabulary, group: Expr, join_op: Expr, sync_op: Expr, appends: Appends, fresh: Expr,
                 nma: Expr, slots: dict[str, Field]) -> None:
        self.voc, self.group, self.join_op, self.sync_op, self.appends = voc, group, join_op, sync_op, appends
        self.fresh, self.nma, self.slots = fresh, nma, dict(slots)

    @property
    def dom(self) -> Domain:
        return self.voc.dom

    def get(self, field: str, x: Expr) -> Expr:
        """Field ``field`` of member ``x``."""
        return self.dom.get(self.slots[field], x)

    def is_member(self, x: Expr) -> Expr:
        return self.get("status", x) == STATUS[MEMBER]

    def is_group(self, *groups: str) -> Expr:
        return z3.Or([self.group == GROUP[g] for g in groups])

    def forall(self, fn: Callable[[Expr], Expr]) -> Expr:
        return self.dom.forall(fn)

    def exists(self, fn: Callable[[Expr], Expr]) -> Expr:
        return self.dom.exists(fn)

    def leaves(self) -> list[Expr]:
        """The variables of a declared copy (what a substitution renames)."""
        out = [self.group, self.join_op, self.sync_op, self.fresh, self.nma] + self.appends.leaves()
        return out + [leaf for f, _ in self.voc.fields for leaf in self.dom.leaves(self.slots[f])]

    def well_formed(self) -> Expr:
        return self.appends.well_formed()


def equal(a: Terms, b: Terms) -> Expr:
    """``a`` and ``b`` are the same state (every field, every member)."""
    parts = [a.group == b.group, a.join_op == b.join_op, a.sync_op == b.sync_op, a.fresh == b.fresh,
             a.nma == b.nma, a.appends.equal(b.appends)]   # type: ignore[arg-type]
    parts += [a.dom.equal(a.slots[f], b.slots[f]) for f, _ in a.voc.fields]
    return z3.And(parts)


def free_slot(v: Terms, x: Expr) -> Expr:
    """Member identity ``x`` is a free slot (model.state.FREE)."""
    return z3.And([v.get(f, x) == _FREE_VALUES.get(f, z3.BoolVal(False)) for f, _ in v.voc.fields])


def initial(v: Terms) -> Expr:
    """model.state.initial: no group object, no ops, no appends, generation 0, every slot free."""
    return z3.And(v.group == GROUP["Absent"], v.join_op == JOIN_OP["none"], z3.Not(v.sync_op), v.appends.n == 0,
                  v.fresh, z3.Not(v.nma), v.forall(lambda x: free_slot(v, x)))


def slot_values(slot: Slot) -> dict[str, Expr]:
    """The Z3 values of one slot's fields."""
    return {"status": STATUS[slot.status], "leader": _BOOL[slot.leader], "awaiting_join": _BOOL[slot.awaiting_join],
            "awaiting_sync": _BOOL[slot.awaiting_sync], "is_new": _BOOL[slot.is_new],
            "pending_sync": _BOOL[slot.pending_sync], "watch": WATCH[slot.watch], "static": _BOOL[slot.static],
            "persist": _BOOL[slot.persist]}


def encode(v: Terms, state: State) -> Expr:
    """``v`` is ``state`` (a finite vocabulary with exactly ``len(state.slots)`` members, slot i = member i)."""
    return z3.And([a == b for a, b in assignment(v, state)])


def evaluate(model: z3.ModelRef, term: Expr, elements: list[Expr]) -> Expr:
    """The value of ``term`` in ``model``. A computed post-state may hold a quantifier over members
    inside a field (e.g. "becomes leader iff no member exists"); Z3's evaluator leaves those alone,
    so they are expanded over the model's (finite) member elements and evaluated again. Such
    quantifiers bind one variable each and are not nested (that is all the rules build)."""
    value = model.eval(term, model_completion=True)
    if not z3.is_quantifier(value) and all(not z3.is_quantifier(c) for c in _subterms(value)):
        return value
    return model.eval(_expand(value, elements), model_completion=True)


def _subterms(t: Expr) -> list[Expr]:
    out, todo = [], [t]
    while todo:
        x = todo.pop()
        out.append(x)
        if z3.is_app(x):
            todo.extend(x.children())
    return out


def _expand(t: Expr, elements: list[Expr]) -> Expr:
    if z3.is_quantifier(t):
        body = _expand(t.body(), elements)
        cases = [z3.substitute_vars(body, e) for e in elements]   # one bound variable per quantifier here
        return z3.And(cases) if t.is_forall() else z3.Or(cases)
    if z3.is_app(t) and t.num_args():
        return t.decl()(*[_expand(c, elements) for c in t.children()])
    return t


def assignment(v: Terms, state: State) -> list[tuple[Expr, Expr]]:
    """(variable, value) pairs that make the finite copy ``v`` equal to ``state`` (for ``z3.substitute``);
    append cells past the state's appends get a fixed filler value."""
    dom = v.dom
    if not isinstance(dom, Finite) or dom.k != len(state.slots):
        raise ValueError(f"a state of {len(state.slots)} slots needs a finite vocabulary of that many members")
    if v.voc.max_appends is not None and len(state.appends) > max(v.voc.max_appends, 1):
        raise ValueError(f"the state has {len(state.appends)} appends, more than the vocabulary's bound")
    cells = v.appends.cells   # type: ignore[union-attr]
    kinds = [KIND[k] for k in state.appends] + [KIND["stale"]] * (len(cells) - len(state.appends))
    out = [(v.group, GROUP[state.group]), (v.join_op, JOIN_OP[state.join_op]), (v.sync_op, _BOOL[state.sync_op]),
           (v.fresh, _BOOL[state.fresh]), (v.nma, _BOOL[state.new_member_added]),
           (v.appends.n, z3.IntVal(len(state.appends)))] + list(zip(cells, kinds, strict=True))
    for i, slot in enumerate(state.slots):
        values = slot_values(slot)
        out += [(v.slots[f][i], values[f]) for f, _ in v.voc.fields]   # type: ignore[index]
    return out


def decode_slot(model: z3.ModelRef, v: Terms, x: Expr, elements: list[Expr]) -> Slot:
    def ev(f: str) -> Expr:
        return evaluate(model, v.get(f, x), elements)
    return Slot(int(value_of(ev("status"))), bool_of(ev("leader")),   # type: ignore[call-overload]
                bool_of(ev("awaiting_join")), bool_of(ev("awaiting_sync")), bool_of(ev("is_new")),
                bool_of(ev("pending_sync")), int(value_of(ev("watch"))),   # type: ignore[call-overload]
                bool_of(ev("static")), bool_of(ev("persist")))


def decode(model: z3.ModelRef, v: Terms, members: list[Expr] | None = None, canonical: bool = True) -> State:
    """The State that ``v`` denotes in ``model``: one slot per member element of the model's domain."""
    elements = members if members is not None else v.dom.elements(model)

    def ev(term: Expr) -> Expr:
        return evaluate(model, term, elements)
    n = ev(v.appends.n).as_long()
    appends = tuple(str(value_of(ev(v.appends.at(i)))) for i in range(n))
    state = State(str(value_of(ev(v.group))), str(value_of(ev(v.join_op))), bool_of(ev(v.sync_op)),
                  appends, bool_of(ev(v.fresh)), bool_of(ev(v.nma)),
                  tuple(decode_slot(model, v, x, elements) for x in elements))
    return state.canonical() if canonical else state


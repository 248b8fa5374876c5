"""Sorts of the Z3 vocabulary, the two member domains and the two append sequences.

A per-member field (status, leader, …, watch) gives a value per member identity. Two
representations share one interface, so the rules and the invariants are written once:

Unbounded   ``Member`` is an uninterpreted sort (any group size): a field is an ``Fn`` — an
            uninterpreted function, wrapped by updates (``If`` on the updated member) — and ∀/∃
            over members are quantifiers. Formulas stay in EUF + quantifiers (no arrays, no
            lambdas), where Z3 both proves fast and finds counterexample models. Used by the proofs.
Finite(k)   ``Member`` is an enumeration of k slots: a field is a tuple of k terms, ∀/∃ expand to
            ∧/∨, so formulas are quantifier-free. Used by BMC and by the encoding-agreement test.

The pending appends are a sequence, oldest first: unbounded (an Int-indexed ``Fn`` plus a length
``n ≥ 0``; proofs) or bounded by ``max_appends`` (a tuple of cells plus ``n``; BMC and tests — a
successor with ``n > max_appends`` is cut off exactly as ``model.step`` cuts it).
"""
from __future__ import annotations

from typing import Callable, Sequence, TypeAlias

import z3

from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, APPEND_EMPTY, APPEND_ORPHAN, APPEND_STALE,
                         APPEND_STATIC, COMPLETING, EMPTY,
                         INITIAL_JOIN, JOIN, MANY, MEMBER, NO_JOIN, PENDING, PREPARING, STABLE)

Expr: TypeAlias = z3.ExprRef


def _enum(name: str, values: Sequence[object]) -> tuple[z3.SortRef, dict[object, Expr]]:
    sort, consts = z3.EnumSort(name, [f"{name}.{v}" for v in values])
    return sort, dict(zip(values, consts, strict=True))


#: an enumeration sort and its values by Python value (outputs.py declares its sorts with it too)
enum_sort = _enum

GroupSort, GROUP = _enum("Group", (ABSENT_GROUP, EMPTY, PREPARING, COMPLETING, STABLE))
JoinSort, JOIN_OP = _enum("JoinOp", (NO_JOIN, JOIN, INITIAL_JOIN))
StatusSort, STATUS = _enum("Status", (ABSENT, PENDING, MEMBER))
WatchSort, WATCH = _enum("Watch", (0, 1, MANY))
KindSort, KIND = _enum("Kind", (APPEND_CURRENT, APPEND_STALE, APPEND_EMPTY, APPEND_STATIC, APPEND_ORPHAN))


_VALUES: dict[int, object] = {c.get_id(): v for table in (GROUP, JOIN_OP, STATUS, WATCH, KIND)
                              for v, c in table.items()}


def value_of(term: Expr) -> object:
    """The model value (Python side) of an evaluated enumeration constant."""
    try:
        return _VALUES[term.get_id()]
    except KeyError:
        raise ValueError(f"{term} is not a value of an enumeration of the vocabulary") from None


def bool_of(term: Expr) -> bool:
    if z3.is_true(term):
        return True
    if z3.is_false(term):
        return False
    raise ValueError(f"{term} is not a Boolean value")


# -- member domains ------------------------------------------------------------------------------
class Fn:
    """A field as a function from a term (a member, or an append index) to a term.

    A declared field applies an uninterpreted function; an update wraps the old one (``put``: an
    ``If`` on the updated member; ``build``: any term in ``x``). Terms are built when the field is
    applied, and memoised: the rules apply a field to the same few terms many times.
    """

    __slots__ = ("fn", "decl", "memo")

    def __init__(self, fn: Callable[[Expr], Expr], decl: z3.FuncDeclRef | None = None) -> None:
        self.fn, self.decl = fn, decl
        self.memo: dict[int, tuple[Expr, Expr]] = {}

    def __call__(self, x: Expr) -> Expr:
        hit = self.memo.get(x.get_id())   # a field is applied to the same few terms again and again
        if hit is None:
            hit = self.memo[x.get_id()] = (x, self.fn(x))
        return hit[1]

    @staticmethod
    def declare(name: str, dom: z3.SortRef, rng: z3.SortRef) -> "Fn":
        d = z3.Function(name, dom, rng)
        return Fn(lambda x: d(x), d)


Field: TypeAlias = "Fn | tuple[z3.ExprRef, ...]"


class Unbounded:
    """Member is an uninterpreted sort: fields are functions (``Fn``), ∀/∃ are quantifiers."""

    finite = False

    def __init__(self) -> None:
        self.sort = z3.DeclareSort("Member")
        self._depth = 0

    def _bound(self, fn: Callable[[Expr], Expr], wrap: Callable[[list[Expr], Expr], Expr]) -> Expr:
        x = z3.Const(f"x{self._depth}", self.sort)   # named by nesting depth: rebuilt terms are identical
        self._depth += 1
        try:
            return wrap([x], fn(x))
        finally:
            self._depth -= 1

    def field(self, name: str, rng: z3.SortRef) -> Field:
        return Fn.declare(name, self.sort, rng)

    def const(self, value: Expr) -> Field:
        return Fn(lambda x: value)

    def get(self, f: Field, x: Expr) -> Expr:
        return f(x)   # type: ignore[operator]

    def put(self, f: Field, x: Expr, v: Expr) -> Field:
        return Fn(lambda y: y_is(y, x, v, f))   # type: ignore[arg-type]

    def build(self, fn: Callable[[Expr], Expr]) -> Field:
        return Fn(fn)

    def forall(self, fn: Callable[[Expr], Expr]) -> Expr:
        return self._bound(fn, z3.ForAll)

    def exists(self, fn: Callable[[Expr], Expr]) -> Expr:
        return self._bound(fn, z3.Exists)

    def member(self, name: str) -> Expr:
        return z3.Const(name, self.sort)

    def ite(self, c: Expr, f: Field, g: Field) -> Field:
        return Fn(lambda y: z3.If(c, f(y), g(y)))   # type: ignore[operator]

    def leaves(self, f: Field) -> list[Expr]:
        raise TypeError("an unbounded state is not renamed by substitution; build its terms from the copy")

    def equal(self, f: Field, g: Field) -> Expr:
        return self.forall(lambda x: f(x) == g(x))   # type: ignore[operator]

    def elements(self, model: z3.ModelRef) -> list[Expr]:
        return list(model.get_universe(self.sort) or [])


def y_is(y: Expr, x: Expr, v: Expr, f: Fn) -> Expr:
    """(f updated at x with v)(y): decided at once when y and x are the same term."""
    return v if y.eq(x) else z3.If(y == x, v, f(y))


class Finite:
    """Member is an enumeration of ``k`` slots: fields are tuples, ∀/∃ expand to ∧/∨."""

    finite = True
    _sorts: dict[int, tuple[z3.SortRef, list[Expr]]] = {}

    def __init__(self, k: int) -> None:
        if k < 1:
            raise ValueError(f"a finite member domain needs at least one slot, got {k}")
        if k not in Finite._sorts:
            Finite._sorts[k] = z3.EnumSort(f"Member{k}", [f"m{i}" for i in range(k)])
        self.sort, self.slots = Finite._sorts[k]
        self.k = k
        self._index = {e.get_id(): i for i, e in enumerate(self.slots)}

    def index(self, x: Expr) -> int | None:
        return self._index.get(x.get_id())

    def field(self, name: str, rng: z3.SortRef) -> Field:
        return tuple(z3.Const(f"{name}[{i}]", rng) for i in range(self.k))

    def const(self, value: Expr) -> Field:
        return (value,) * self.k

    def get(self, f: Field, x: Expr) -> Expr:
        i = self.index(x)
        if i is not None:
            return f[i]   # type: ignore[index]
        out = f[-1]   # type: ignore[index]
        for e, v in zip(self.slots[-2::-1], f[-2::-1], strict=True):   # type: ignore[index]
            out = z3.If(x == e, v, out)
        return out

    def put(self, f: Field, x: Expr, v: Expr) -> Field:
        i = self.index(x)
        if i is not None:
            return f[:i] + (v,) + f[i + 1:]   # type: ignore[index]
        return tuple(z3.If(x == e, v, old) for e, old in zip(self.slots, f, strict=True))   # type: ignore[arg-type]

    def build(self, fn: Callable[[Expr], Expr]) -> Field:
        return tuple(fn(e) for e in self.slots)

    def forall(self, fn: Callable[[Expr], Expr]) -> Expr:
        return z3.And([fn(e) for e in self.slots])

    def exists(self, fn: Callable[[Expr], Expr]) -> Expr:
        return z3.Or([fn(e) for e in self.slots])

    def member(self, name: str) -> Expr:
        return z3.Const(name, self.sort)

    def ite(self, c: Expr, f: Field, g: Field) -> Field:
        return tuple(z3.If(c, a, b) for a, b in zip(f, g, strict=True))   # type: ignore[arg-type]

    def leaves(self, f: Field) -> list[Expr]:
        return list(f)   # type: ignore[arg-type]

    def equal(self, f: Field, g: Field) -> Expr:
        return z3.And([a == b for a, b in zip(f, g, strict=True)])   # type: ignore[arg-type]

    def elements(self, model: z3.ModelRef) -> list[Expr]:
        return list(self.slots)


Domain: TypeAlias = "Unbounded | Finite"


# -- append sequences ------------------------------------------------------------------------------
# A static vocabulary gives each pending append a *ghost ticket*: the member identity a static append persists
# (model/static.py's slot marked ``persist``). The model has no such field — a ticket is never decoded into a
# model.State — it only lets a proof over the uninterpreted member sort say "each marked member has its own static
# append" (properties/z3/static_invariants.py); a non-static append's ticket is meaningless (never read).
class UnboundedAppends:
    """``arr(0) … arr(n-1)``, oldest first (``arr`` an Int-indexed ``Fn``); cells from ``n`` on mean nothing.
    ``tickets`` (static vocabularies only): the ghost ticket of each cell, an Int-indexed ``Fn`` to members."""

    def __init__(self, arr: Fn, n: Expr, tickets: Fn | None = None) -> None:
        self.arr, self.n, self.tickets = arr, n, tickets

    @staticmethod
    def declare(name: str, member: z3.SortRef | None = None) -> "UnboundedAppends":
        tickets = None if member is None else Fn.declare(f"{name}.tickets", z3.IntSort(), member)
        return UnboundedAppends(Fn.declare(f"{name}.appends", z3.IntSort(), KindSort), z3.Int(f"{name}.n_appends"),
                                tickets)

    def push(self, kind: Expr, ticket: Expr | None = None) -> "UnboundedAppends":
        arr, n, t = self.arr, self.n, self.tickets
        tickets = t if t is None or ticket is None else Fn(lambda i: z3.If(i == n, ticket, t(i)))
        return UnboundedAppends(Fn(lambda i: z3.If(i == n, kind, arr(i))), n + 1, tickets)

    def pop(self) -> tuple[Expr, "UnboundedAppends"]:
        arr, t = self.arr, self.tickets
        tickets = None if t is None else Fn(lambda i: t(i + 1))
        return arr(z3.IntVal(0)), UnboundedAppends(Fn(lambda i: arr(i + 1)), self.n - 1, tickets)

    def map(self, fn: Callable[[Expr], Expr]) -> "UnboundedAppends":
        arr = self.arr
        return UnboundedAppends(Fn(lambda i: fn(arr(i))), self.n, self.tickets)

    def any(self, pred: Callable[[Expr], Expr]) -> Expr:
        i = z3.Int("i0")
        return z3.Exists([i], z3.And(0 <= i, i < self.n, pred(self.arr(i))))

    def any_ticket(self, pred: Callable[[Expr, Expr, Expr], Expr]) -> Expr:
        """Some cell ``i`` with ``pred(i, kind, ticket)``."""
        i = z3.Int("i1")
        return z3.Exists([i], z3.And(0 <= i, i < self.n, pred(i, self.arr(i), self.ticket(i))))

    def ticket(self, i: Expr | int) -> Expr:
        assert self.tickets is not None, "only a static vocabulary tickets its appends"
        return self.tickets(z3.IntVal(i) if isinstance(i, int) else i)

    def kind(self, i: Expr) -> Expr:
        return self.arr(i)

    def retick(self, fn: Callable[[Expr, Expr], Expr]) -> "UnboundedAppends":
        """The same cells; the ticket of cell ``i`` becomes ``fn(i, old ticket)``."""
        t = self.tickets
        assert t is not None, "only a static vocabulary tickets its appends"
        return UnboundedAppends(self.arr, self.n, Fn(lambda i: fn(i, t(i))))

    def well_formed(self) -> Expr:
        return self.n >= 0

    def leaves(self) -> list[Expr]:
        raise TypeError("an unbounded state is not renamed by substitution; build its terms from the copy")

    def equal(self, other: "UnboundedAppends") -> Expr:
        i = z3.Int("i0")
        same = self.arr(i) == other.arr(i)
        if self.tickets is not None and other.tickets is not None:
            same = z3.And(same, self.tickets(i) == other.tickets(i))
        return z3.And(self.n == other.n, z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < self.n), same)))

    def at(self, i: int) -> Expr:
        return self.arr(z3.IntVal(i))


class BoundedAppends:
    """``cells[0 .. n-1]`` with at most ``capacity`` cells; a longer successor is cut off. ``tickets`` (static
    vocabularies only): the ghost ticket of each cell, a member term."""

    def __init__(self, cells: tuple[Expr, ...], n: Expr, capacity: int,
                 tickets: tuple[Expr, ...] | None = None) -> None:
        self.cells, self.n, self.capacity, self.tickets = cells, n, capacity, tickets

    @staticmethod
    def declare(name: str, capacity: int, member: z3.SortRef | None = None) -> "BoundedAppends":
        size = max(capacity, 1)
        cells = tuple(z3.Const(f"{name}.appends[{i}]", KindSort) for i in range(size))
        tickets = None if member is None else tuple(z3.Const(f"{name}.tickets[{i}]", member) for i in range(size))
        return BoundedAppends(cells, z3.Int(f"{name}.n_appends"), capacity, tickets)

    def push(self, kind: Expr, ticket: Expr | None = None) -> "BoundedAppends":
        cells = tuple(z3.If(self.n == i, kind, c) for i, c in enumerate(self.cells))
        tickets = self.tickets
        if tickets is not None and ticket is not None:
            tickets = tuple(z3.If(self.n == i, ticket, t) for i, t in enumerate(tickets))
        return BoundedAppends(cells, self.n + 1, self.capacity, tickets)

    def pop(self) -> tuple[Expr, "BoundedAppends"]:
        t = self.tickets
        tickets = None if t is None else t[1:] + t[-1:]
        return self.cells[0], BoundedAppends(self.cells[1:] + self.cells[-1:], self.n - 1, self.capacity, tickets)

    def map(self, fn: Callable[[Expr], Expr]) -> "BoundedAppends":
        return BoundedAppends(tuple(fn(c) for c in self.cells), self.n, self.capacity, self.tickets)

    def any(self, pred: Callable[[Expr], Expr]) -> Expr:
        return z3.Or([z3.And(i < self.n, pred(c)) for i, c in enumerate(self.cells)])

    def any_ticket(self, pred: Callable[[Expr, Expr, Expr], Expr]) -> Expr:
        """Some cell ``i`` with ``pred(i, kind, ticket)``."""
        assert self.tickets is not None, "only a static vocabulary tickets its appends"
        return z3.Or([z3.And(i < self.n, pred(z3.IntVal(i), c, t))
                      for i, (c, t) in enumerate(zip(self.cells, self.tickets, strict=True))])

    def ticket(self, i: Expr | int) -> Expr:
        assert self.tickets is not None, "only a static vocabulary tickets its appends"
        if isinstance(i, int):
            return self.tickets[i]
        out = self.tickets[-1]
        for k in range(len(self.tickets) - 2, -1, -1):
            out = z3.If(i == k, self.tickets[k], out)
        return out

    def kind(self, i: Expr) -> Expr:
        out = self.cells[-1]
        for k in range(len(self.cells) - 2, -1, -1):
            out = z3.If(i == k, self.cells[k], out)
        return out

    def retick(self, fn: Callable[[Expr, Expr], Expr]) -> "BoundedAppends":
        """The same cells; the ticket of cell ``i`` becomes ``fn(i, old ticket)``."""
        assert self.tickets is not None, "only a static vocabulary tickets its appends"
        tickets = tuple(fn(z3.IntVal(i), t) for i, t in enumerate(self.tickets))
        return BoundedAppends(self.cells, self.n, self.capacity, tickets)

    def well_formed(self) -> Expr:
        return z3.And(0 <= self.n, self.n <= self.capacity)

    def count(self, pred: Callable[[Expr], Expr]) -> Expr:
        """How many pending appends satisfy ``pred`` (an Int term)."""
        return z3.Sum([z3.If(z3.And(i < self.n, pred(c)), 1, 0) for i, c in enumerate(self.cells)])

    def leaves(self) -> list[Expr]:
        return list(self.cells) + [self.n] + list(self.tickets or ())

    def equal(self, other: "BoundedAppends") -> Expr:
        same = [a == b for a, b in zip(self.cells, other.cells, strict=True)]
        if self.tickets is not None and other.tickets is not None:
            same += [a == b for a, b in zip(self.tickets, other.tickets, strict=True)]
        return z3.And(self.n == other.n, *same)

    def at(self, i: int) -> Expr:
        return self.cells[i]


Appends: TypeAlias = "UnboundedAppends | BoundedAppends"

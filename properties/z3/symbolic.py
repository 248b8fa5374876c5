"""Symbolic execution of the model's rules: a working copy over Z3 terms and a path explorer.

The rules in properties/z3/rules.py read like model/rules.py: plain Python ``if`` on conditions.
A condition that the terms decide (after ``simplify``) is answered at once; one they do not decide
is a *branch point*: the explorer re-runs the rule once per alternative (the condition true or
false, or a split of an atom's values, see ``Ctx``), replaying earlier decisions in order (rules
are pure, so a re-run takes the same path up to there). A path's guard is the conjunction of its
decisions. Nondeterministic choices (which member becomes leader, E0's same-millisecond
reschedule) are fresh *choice* constants, named by their position on the path, that the
transition formula leaves free (existential). A working copy also records the path's outputs
(outputs.py) as model.rules.W does: ``answer``, ``arm`` and ``disarm``.
"""
from __future__ import annotations

from typing import Callable

import z3

from properties.z3.domain import Domain, Expr, Field
from properties.z3.encoding import Terms
from properties.z3.outputs import SOURCE, Outs


class Undecided(Exception):
    """The rule reached a condition that the current path has not decided yet."""

    def __init__(self, decisions: list["Decision"]) -> None:
        super().__init__(str(decisions[0].cond))
        self.decisions = decisions   # the alternatives: one path each


def _is_value(t: Expr) -> bool:
    return z3.is_app(t) and t.num_args() == 0 and t.decl().kind() != z3.Z3_OP_UNINTERPRETED


def _is_uninterpreted(t: Expr) -> bool:
    """A constant or a function application whose value the path may fix (a field of a member)."""
    return z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED


def values_of(sort: z3.SortRef) -> list[Expr]:
    """Every value of a Boolean or enumeration sort."""
    if sort == z3.BoolSort():
        return [z3.BoolVal(True), z3.BoolVal(False)]
    return [sort.constructor(i)() for i in range(sort.num_constructors())]


class Decision:
    """One branch point taken one way: ``atom`` ∈ ``values`` (a split), or ``cond`` is ``value``."""

    __slots__ = ("cond", "value", "atom", "values")

    def __init__(self, cond: Expr, value: bool, atom: Expr | None = None, values: tuple[Expr, ...] = ()) -> None:
        self.cond, self.value, self.atom, self.values = cond, value, atom, values

    def guard(self) -> Expr:
        if self.atom is not None:
            return z3.Or([self.atom == v for v in self.values])
        return self.cond if self.value else z3.Not(self.cond)


_SUBTERMS: dict[int, tuple[Expr, set[int]]] = {}
_SIMPLIFIED: dict[tuple[int, tuple[int, ...]], tuple[Expr, Expr]] = {}
_CLASSES: dict[tuple[object, ...], tuple[Expr, dict[tuple[int, Expr], tuple[Expr, ...]]]] = {}


def _subterm_ids(e: Expr) -> set[int]:
    """Ids of every subterm of ``e`` (cached: re-runs rebuild the same hash-consed terms)."""
    hit = _SUBTERMS.get(e.get_id())
    if hit is None:
        hit = _SUBTERMS[e.get_id()] = (e, _walk(e))
    return hit[1]


def _walk(e: Expr) -> set[int]:
    seen: set[int] = set()
    todo = [e]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_quantifier(t):
            todo.append(t.body())
        elif z3.is_app(t):
            todo.extend(t.children())
    return seen


class Ctx:
    """One path: the decisions to replay (in order), what they taught, the choices made.

    ``atoms`` are terms with few values (the pre-state's scalars and scope flags, the acting
    member's fields, Boolean choices). Each keeps the set of values still possible on this path.
    An undecided condition over an atom splits that set into classes of values on which the
    condition behaves alike (so ``group ∈ {Stable, CompletingRebalance}`` is one two-way split,
    and later tests of the group simplify); a condition over no atom (a ∀/∃ over members, an
    equality of members) splits two ways. Within a path a condition is decided once.
    """

    def __init__(self, decisions: list[Decision], atoms: list[Expr]) -> None:
        self.decisions = decisions
        self.taken = 0
        self.atoms = list(atoms)
        self.possible: dict[int, tuple[Expr, ...]] = {a.get_id(): tuple(values_of(a.sort())) for a in atoms}
        self.known: list[tuple[Expr, Expr]] = []
        self.known_key: tuple[int, ...] = ()
        self.memo: dict[int, tuple[Expr, bool]] = {}
        self.choices: list[Expr] = []

    def _simplified(self, cond: Expr) -> Expr:
        key = (cond.get_id(), self.known_key)
        hit = _SIMPLIFIED.get(key)
        if hit is None:   # re-runs ask the same questions with the same knowledge: cache the answers
            hit = _SIMPLIFIED[key] = (cond, z3.simplify(z3.substitute(cond, *self.known) if self.known else cond))
        return hit[1]

    def _know(self, a: Expr, value: Expr) -> None:
        self.known.append((a, value))
        self.known_key += (a.get_id(), value.get_id())

    def holds(self, cond: Expr) -> bool:
        while True:
            c = self._simplified(cond)
            split: list[Decision] = []
            for a in self._atoms_in(c):
                classes = self._classes(c, a)
                if len(classes) > 1:
                    split = [Decision(c, True, a, values) for values in classes.values()]
                    break
                c = next(iter(classes))[1]   # the atom's remaining values all give this residual
            if z3.is_true(c) or z3.is_false(c):
                return z3.is_true(c)
            if not split and c.get_id() in self.memo:
                return self.memo[c.get_id()][1]
            if self.taken == len(self.decisions):
                raise Undecided(split or [Decision(c, True), Decision(c, False)])
            d = self.decisions[self.taken]
            self.taken += 1
            if d.atom is not None:   # learn the atom's remaining values and look again
                assert split and d.atom.eq(split[0].atom), f"the rules are not deterministic at {c}"
                self._restrict(d.atom, d.values)
                continue
            assert not split and d.cond.eq(c), f"the rules are not deterministic: {d.cond} vs {c}"
            self.memo[c.get_id()] = (c, d.value)
            self._learn(c, d.value)
            return d.value

    def _atoms_in(self, c: Expr) -> list[Expr]:
        ids = _subterm_ids(c)
        return [a for a in self.atoms if a.get_id() in ids and len(self.possible[a.get_id()]) > 1]

    def _classes(self, c: Expr, a: Expr) -> dict[tuple[int, Expr], tuple[Expr, ...]]:
        possible = self.possible[a.get_id()]
        key = (c.get_id(), a.get_id(), tuple(v.get_id() for v in possible))
        hit = _CLASSES.get(key)
        if hit is None:
            out: dict[int, tuple[Expr, list[Expr]]] = {}
            for v in possible:
                r = z3.simplify(z3.substitute(c, (a, v)))
                out.setdefault(r.get_id(), (r, []))[1].append(v)
            hit = _CLASSES[key] = (c, {(k, r): tuple(vs) for k, (r, vs) in out.items()})
        return hit[1]

    def _restrict(self, a: Expr, values: tuple[Expr, ...]) -> None:
        self.possible[a.get_id()] = values
        if len(values) == 1:
            self._know(a, values[0])

    def _learn(self, c: Expr, value: bool) -> None:
        """Remember a decided Boolean term, so that later conditions over it simplify."""
        if z3.is_not(c) and _is_uninterpreted(c.arg(0)):
            self._know(c.arg(0), z3.BoolVal(not value))
        elif _is_uninterpreted(c):
            self._know(c, z3.BoolVal(value))

    def choose(self, sort: z3.SortRef) -> Expr:
        """A fresh choice constant (named by its position on the path, so re-runs rebuild it)."""
        c = z3.Const(f"choice!{len(self.choices)}", sort)
        self.choices.append(c)
        if sort == z3.BoolSort():
            self.atoms.append(c)
            self.possible[c.get_id()] = tuple(values_of(sort))
        return c

    def choose_field(self, dom: Domain, sort: z3.SortRef) -> Field:
        """A fresh choice per member (one free value each), for nondeterminism inside a member loop."""
        f = dom.field(f"choice!{len(self.choices)}", sort)
        if dom.finite:   # finite copies are renamed by substitution (BMC steps); unbounded ones are not
            self.choices.extend(dom.leaves(f))
        return f

    def guard(self) -> Expr:
        return z3.And([d.guard() for d in self.decisions])


class SW(Terms):
    """The mutable working copy of one successor under construction (model.rules.W over Z3 terms)."""

    __slots__ = ("ctx", "guards", "outs")

    def __init__(self, t: Terms, ctx: Ctx, guards: list[Expr] | None = None, outs: Outs | None = None) -> None:
        super().__init__(t.voc, t.group, t.join_op, t.sync_op, t.appends, t.fresh, t.nma, t.slots)
        self.ctx = ctx
        self.guards = list(guards or [])
        self.outs = outs.copy() if outs is not None else Outs.quiet(t.dom)   # what this path said so far

    def copy(self) -> "SW":
        return SW(self, self.ctx, self.guards, self.outs)

    def answer(self, x: Expr, api: str, error: Expr, generation: Expr | None = None, shape: Expr | None = None,
               when: Expr | None = None) -> "SW":
        """Member ``x``'s request of ``api`` is answered (if ``when``): W.answer."""
        fields = {f"{api}.answered": z3.BoolVal(True), f"{api}.error": error}
        if api == "JoinGroup":
            assert generation is not None and shape is not None, "a JoinGroup answer has a generation and a shape"
            fields.update({"JoinGroup.generation": generation, "JoinGroup.shape": shape})
        self.outs.put(x, z3.BoolVal(True) if when is None else when, **fields)
        return self

    def arm(self, op: str, x: Expr | None, source: Expr) -> "SW":
        """``op`` (of member ``x``, or the group's when None) is armed with ``source``: W.arm. A term
        ``source`` may be ``SOURCE['-']`` on some paths (a reschedule whose op completes at birth)."""
        if x is None:
            self.outs.group[op] = source
        else:
            self.outs.put(x, z3.BoolVal(True), **{op: source})
        return self

    def disarm(self, op: str, x: Expr | None = None) -> "SW":
        """Ops armed earlier in this step complete (or are cancelled) before it ends: W.disarm."""
        return self.arm(op, x, SOURCE["-"])

    def set(self, x: Expr, **fields: Expr) -> "SW":
        for f, value in fields.items():
            self.slots[f] = self.dom.put(self.slots[f], x, value)
        return self

    def bulk(self, f: str, fn: Callable[[Expr], Expr]) -> None:
        """Field ``f`` of every member becomes ``fn(x)`` (fn reads a snapshot, not the field being built)."""
        self.slots[f] = self.dom.build(fn)

    def fill(self, f: str, value: Expr) -> None:
        self.slots[f] = self.dom.const(value)

    def holds(self, cond: Expr) -> bool:
        return self.ctx.holds(cond)

    def snapshot(self) -> Terms:
        return Terms(self.voc, self.group, self.join_op, self.sync_op, self.appends, self.fresh, self.nma,
                     dict(self.slots))


Ws = list[SW]
Branch = tuple[Expr, Terms, tuple[Expr, ...], Outs]   # (guard, post-state, choice constants it uses, outputs)


def explore(run: Callable[[Ctx], Ws], atoms: list[Expr], limit: int = 20000) -> list[Branch]:
    """Every path of ``run``: (guard, post-state, choices, outputs) per successor it returns."""
    out: list[Branch] = []
    stack: list[list[Decision]] = [[]]
    runs = 0
    while stack:
        decisions = stack.pop()
        runs += 1
        if runs > limit:
            raise RuntimeError(f"symbolic execution took more than {limit} paths")
        ctx = Ctx(decisions, atoms)
        try:
            ws = run(ctx)
        except Undecided as u:
            stack += [decisions + [d] for d in reversed(u.decisions)]
            continue
        path = ctx.guard()
        for w in ws:
            out.append((z3.And(path, *w.guards), w.snapshot(), tuple(ctx.choices), w.outs.copy()))
    return out

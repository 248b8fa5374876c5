"""The Z3 vocabulary of a transition's outputs (model/outputs.py): the answers and the armed timers.

An ``Outs`` is what one path of a symbolic step says, as Z3 terms over the same member domain as
the state. Per member identity ``x`` and per API (``APIS``): ``{api}.answered`` (Bool: x's request
of that API is answered in this step) and ``{api}.error`` (an ``Error``); a JoinGroup answer also
has ``JoinGroup.generation`` (current/new/none) and ``JoinGroup.shape``. A member gets at most one
answer per API in a step (the agreement test would see a second one: the model keeps a list). Per
member the ``heartbeat`` and ``pending`` ops, and per group the ``join``, ``initial-join`` and ``sync``
ops, carry the ``Source`` of the delay they are armed with, or ``-`` (not armed at the step's end).
The answer to a requester without a slot (OffsetCommit/simple) is group-level: ``anonymous.*``.

A failed append's store error is one value, ``STORE_ERROR``: it stands for ``store_error(detail)``
of the raw error the step is given (model.step.outcomes' ``detail``), which is never ``NONE``.
"""
from __future__ import annotations

from typing import Callable

import z3

from model.outputs import (CURRENT, HEARTBEAT_OP, INITIAL, INITIAL_JOIN_OP, JOIN_OP, JOIN_SHAPES, NEW, NEW_MEMBER,
                           NO_FIELD, NONE_GEN, PENDING_OP, REBALANCE, SESSION, SYNC_OP, Answer, Arm, Outputs,
                           store_error)
from model.profiles import MODEL_PROFILES
from properties.z3.domain import Domain, Expr, Field, enum_sort, value_of
from properties.z3.encoding import evaluate

APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "LeaveGroup")
#: the mapped error of a failed group-record append (SPEC.md §3.2), and "no answer defined" (a group
#: state outside a profile's answer table, where the model has none: its table lookup would fail)
STORE_ERROR, UNDEFINED = "store-error", "undefined"
_ERRORS = {"NONE", "REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "MEMBER_ID_REQUIRED", "NOT_COORDINATOR",
           "ILLEGAL_GENERATION", "INVALID_SESSION_TIMEOUT", "INCONSISTENT_GROUP_PROTOCOL",
           "FENCED_INSTANCE_ID", "UNSUPPORTED_VERSION", "UNKNOWN_SERVER_ERROR", STORE_ERROR, UNDEFINED}
_ERRORS |= {e for p in MODEL_PROFILES.values() for table in (p.heartbeat_answers, p.commit_answers,
                                                              p.loading_answers) for e in table.values()}
ErrorSort, ERROR = enum_sort("Error", tuple(sorted(_ERRORS)))
GenSort, GEN = enum_sort("Gen", (CURRENT, NEW, NONE_GEN, NO_FIELD))
ShapeSort, SHAPE = enum_sort("Shape", JOIN_SHAPES + (NO_FIELD,))
SourceSort, SOURCE = enum_sort("Source", (NO_FIELD, SESSION, NEW_MEMBER, REBALANCE, INITIAL))
_OUT_VALUES: dict[int, object] = {c.get_id(): v for table in (ERROR, GEN, SHAPE, SOURCE) for v, c in table.items()}
TRUE, FALSE = z3.BoolVal(True), z3.BoolVal(False)

#: per-member output fields with their sorts and their value when the step says nothing
MEMBER_OUTPUTS: tuple[tuple[str, z3.SortRef, Expr], ...] = tuple(
    (f"{api}.{part}", sort, quiet) for api in APIS for part, sort, quiet in
    (("answered", z3.BoolSort(), FALSE), ("error", ErrorSort, ERROR[UNDEFINED]))
) + (("JoinGroup.generation", GenSort, GEN[NO_FIELD]), ("JoinGroup.shape", ShapeSort, SHAPE[NO_FIELD]),
     (HEARTBEAT_OP, SourceSort, SOURCE[NO_FIELD]), (PENDING_OP, SourceSort, SOURCE[NO_FIELD]))
#: group-level output fields
GROUP_OUTPUTS: tuple[tuple[str, z3.SortRef, Expr], ...] = (
    (JOIN_OP, SourceSort, SOURCE[NO_FIELD]), (INITIAL_JOIN_OP, SourceSort, SOURCE[NO_FIELD]),
    (SYNC_OP, SourceSort, SOURCE[NO_FIELD]), ("anonymous.answered", z3.BoolSort(), FALSE),
    ("anonymous.error", ErrorSort, ERROR[UNDEFINED]))
MEMBER_OPS, GROUP_OPS = (HEARTBEAT_OP, PENDING_OP), (JOIN_OP, INITIAL_JOIN_OP, SYNC_OP)


def out_value(term: Expr) -> object:
    """The Python value of an evaluated output constant (Error, Gen, Shape or Source)."""
    return _OUT_VALUES[term.get_id()] if term.get_id() in _OUT_VALUES else value_of(term)


class Outs:
    """The outputs of one path so far: per-member fields (``member``) and group-level terms (``group``)."""

    __slots__ = ("dom", "member", "group")

    def __init__(self, dom: Domain, member: dict[str, Field], group: dict[str, Expr]) -> None:
        self.dom, self.member, self.group = dom, dict(member), dict(group)

    @staticmethod
    def quiet(dom: Domain) -> "Outs":
        """No answer, no timer: where every step starts."""
        return Outs(dom, {f: dom.const(q) for f, _, q in MEMBER_OUTPUTS}, {f: q for f, _, q in GROUP_OUTPUTS})

    @staticmethod
    def declare(dom: Domain, name: str) -> "Outs":
        """Free output variables (the outputs side of a transition formula)."""
        return Outs(dom, {f: dom.field(f"{name}.{f}", s) for f, s, _ in MEMBER_OUTPUTS},
                    {f: z3.Const(f"{name}.{f}", s) for f, s, _ in GROUP_OUTPUTS})

    def copy(self) -> "Outs":
        return Outs(self.dom, self.member, self.group)

    def get(self, f: str, x: Expr) -> Expr:
        return self.dom.get(self.member[f], x)

    def answered(self, api: str, x: Expr) -> Expr:
        return self.get(f"{api}.answered", x)

    def error(self, api: str, x: Expr) -> Expr:
        return self.get(f"{api}.error", x)

    def put(self, x: Expr, when: Expr, **fields: Expr) -> None:
        """Member ``x``'s output fields become ``fields`` if ``when`` holds (else they stay)."""
        for f, value in fields.items():
            old = self.member[f]
            new = value if z3.is_true(when) else z3.If(when, value, self.dom.get(old, x))
            self.member[f] = self.dom.put(old, x, new)

    def bulk(self, sel: Callable[[Expr], Expr], **fields: Callable[[Expr], Expr]) -> None:
        """For every member ``y`` with ``sel(y)``, field f becomes ``fields[f](y)``."""
        for f, value in fields.items():
            old = self.member[f]
            self.member[f] = self.dom.build(lambda y, old=old, value=value: z3.If(  # type: ignore[misc]
                sel(y), value(y), self.dom.get(old, y)))

    def leaves(self) -> list[Expr]:
        return [leaf for f, _, _ in MEMBER_OUTPUTS for leaf in self.dom.leaves(self.member[f])] + \
            [self.group[f] for f, _, _ in GROUP_OUTPUTS]


class Unrecorded(Outs):
    """Outputs nobody reads (BMC, the successor-set agreement test): writes to member fields are dropped,
    which spares the finite domain its eager per-member terms."""

    __slots__ = ()

    @staticmethod
    def of(dom: Domain) -> "Unrecorded":
        q = Outs.quiet(dom)
        return Unrecorded(dom, q.member, q.group)

    def copy(self) -> "Unrecorded":
        return Unrecorded(self.dom, self.member, self.group)

    def put(self, x: Expr, when: Expr, **fields: Expr) -> None:
        pass

    def bulk(self, sel: Callable[[Expr], Expr], **fields: Callable[[Expr], Expr]) -> None:
        pass


def equal_outs(a: Outs, b: Outs) -> Expr:
    """``a`` and ``b`` say the same (every field, every member)."""
    return z3.And([a.dom.equal(a.member[f], b.member[f]) for f, _, _ in MEMBER_OUTPUTS]
                  + [a.group[f] == b.group[f] for f, _, _ in GROUP_OUTPUTS])


def decode_outputs(model: z3.ModelRef, o: Outs, elements: list[Expr], detail: str = "") -> Outputs:
    """The model.outputs.Outputs that ``o`` denotes: slot i is ``elements[i]`` (the pre-state's numbering)."""
    def ev(t: Expr) -> object:
        v = evaluate(model, t, elements)   # expands a quantifier over members left in a field (encoding.py)
        return z3.is_true(v) if v.sort() == z3.BoolSort() else out_value(v)

    def err(t: Expr) -> str:
        e = str(ev(t))
        return store_error(detail) if e == STORE_ERROR else e
    answers, arms = [], []
    for i, x in enumerate(elements):
        for api in APIS:
            if ev(o.answered(api, x)):
                gen, shape = ((str(ev(o.get("JoinGroup.generation", x))), str(ev(o.get("JoinGroup.shape", x))))
                              if api == "JoinGroup" else (NO_FIELD, NO_FIELD))
                answers.append(Answer(i, api, err(o.error(api, x)), gen, shape))
        arms += [Arm(op, i, str(ev(o.get(op, x)))) for op in MEMBER_OPS if ev(o.get(op, x)) != NO_FIELD]
    if ev(o.group["anonymous.answered"]):
        answers.append(Answer(-1, "OffsetCommit", err(o.group["anonymous.error"])))
    arms += [Arm(op, -1, str(ev(o.group[op]))) for op in GROUP_OPS if ev(o.group[op]) != NO_FIELD]
    return Outputs(tuple(sorted(answers)), tuple(sorted(arms)))


def output_assignment(o: Outs, outputs: Outputs) -> list[tuple[Expr, Expr]]:
    """(variable, value) pairs that make the declared finite copy ``o`` say ``outputs``."""
    member: dict[tuple[str, int], Expr] = {}
    group: dict[str, Expr] = {}
    for a in outputs.answers:   # an error outside the vocabulary can only be a mapped store error
        error = ERROR[a.error] if a.error in ERROR else ERROR[STORE_ERROR]
        if a.slot < 0:
            group.update({"anonymous.answered": TRUE, "anonymous.error": error})
            continue
        member.update({(f"{a.api}.answered", a.slot): TRUE, (f"{a.api}.error", a.slot): error})
        if a.api == "JoinGroup":
            member.update({("JoinGroup.generation", a.slot): GEN[a.generation],
                           ("JoinGroup.shape", a.slot): SHAPE[a.shape]})
    for arm in outputs.arms:
        if arm.slot < 0:
            group[arm.op] = SOURCE[arm.source]
        else:
            member[(arm.op, arm.slot)] = SOURCE[arm.source]
    out = []
    for f, _, quiet in MEMBER_OUTPUTS:
        leaves = o.dom.leaves(o.member[f])
        out += [(leaf, member.get((f, i), quiet)) for i, leaf in enumerate(leaves)]
    return out + [(o.group[f], group.get(f, quiet)) for f, _, quiet in GROUP_OUTPUTS]

"""Which abstract edges no run can take once time is counted: the model graph with each timer's place in time.

The abstract state forgets time (model/state.py). Where liveness is deadline arithmetic with a session timeout fixed
per member (releases before KAFKA-9752, KAFKA-7610 and KAFKA-14009: 0.10.0), time decides edges by three facts:

* **one deadline per member** (SPEC.md §2 liveness table, §4.6): a reschedule at ``now`` stamps latestHeartbeat =
  now, completes every op of the member whose deadline is before now + session (all ops scheduled in an earlier
  millisecond; session fixed, §2 ``sessionTimeoutMs`` is a ``val`` before 3.3.2) and arms one with deadline now +
  session. So all live ops of a member were scheduled in one millisecond: a second live op (the model's MANY) needs a
  reschedule in that same millisecond, and a reschedule in any later one leaves exactly one op;
* **a timer fires only once due, and the clock waits for due timers** (harness/world.py: FireTimer for due timers,
  AdvanceClock only while none is due — SPEC.md §4.3's bounded lateness, shorter than any delay here): a timer armed
  after another one became due cannot come due before that one fires;
* **the DelayedJoin outlasts the ops of the members it waits for** (§4.4, §4.9: before JoinGroup v1 its delay is the
  largest session timeout of the members present when the rebalance starts): an op of such a member scheduled no
  later than the DelayedJoin is due by the time the DelayedJoin is.

``timed_walk`` walks the model graph of a scope with, for each slot holding ops and for the DelayedJoin, where the
timer stands — armed in this millisecond (``NOW``), armed earlier and not due (``LATER``), due (``DUE``) — and a
clock move (``tick``) that may bring any set of them due. A slot also counts its ops to three: the model's MANY is
"two or more", but by the first fact a reschedule in the ops' millisecond adds one (a slot already MANY then holds
three or more), one in a later millisecond leaves one, and a firing op removes one (§4.1, §4.3: each op is its own
timer entry and expires on its own), so an expiry leaves the slot MANY only from three or more, and one from exactly
two leaves one op. It only ever *removes* possibilities from the model (every concrete run maps to a timed run: the
tick over-approximates the order of deadlines), so an abstract edge it never takes is one no run of the world takes;
the coverage map (explore/coverage.py ``_timed``, which reads the walk) leaves those out.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import product
from typing import Callable, Iterator

from model.outputs import HEARTBEAT_OP, JOIN_OP
from model.profiles import ModelProfile, get_model_profile
from model.releases import fact
from model.state import MANY, MEMBER, NO_JOIN, AbstractAction, Scope, State, initial
from model.step import enabled, outcomes

NOW, LATER, DUE = 0, 1, 2
#: why an edge of the map is not reachable once time is counted (the coverage map's reason)
REASON = ("no run takes it once time is counted: a member's heartbeat ops share one deadline, so a second op only "
          "in the millisecond of the first (SPEC.md §2, §4.6); a timer fires only once due and the clock waits for "
          "due timers (§4.3, harness/world.py); the DelayedJoin is due no earlier than the ops of the members it "
          "waits for (§4.9: delay = the largest session timeout) — explore/deadlines.py")


def applies(profile: str) -> bool:
    """Deadline arithmetic with fixed session timeouts and no new-member op: the three facts hold (0.10.0)."""
    return not any(fact(name, profile) for name in ("heartbeat-satisfied-flag", "new-member-timeout",
                                                    "rejoin-updates-timeouts", "rebalance-timeout"))


# A timed node is (state id, one timer code per slot, the DelayedJoin's place or -1). A slot's code is 0 when it holds
# no op, else 1 + 2 * where its ops stand + (1 if they were armed before the DelayedJoin, so due no later than it)
# + (6 if it holds three ops or more: the model's MANY counts to two, but an expiry leaves MANY only from three).
def _code(where: int, before: bool, three: bool = False) -> int:
    return 1 + 2 * where + before + 6 * three


def _where(code: int) -> int:
    return (code - 1) % 6 // 2


def _before(code: int) -> bool:
    return bool((code - 1) % 2)


def _three(code: int) -> bool:
    return code > 6


#: per slot of an outcome: no op left, its ops untouched, or armed now (any / only in its ops' millisecond / only later)
GONE, KEEP, ARMED, SAME_MS, LATER_MS = range(5)
_Out = tuple[State, tuple[int, ...], int, int]   # successor (slots in place), rule per slot, join rule, members mask


class StateIds:
    """States numbered in the order a walk first meets them (the timed walks' node ids)."""

    def __init__(self) -> None:
        self.states: list[State] = []
        self.ids: dict[State, int] = {}

    def id(self, state: State) -> int:
        got = self.ids.get(state)
        if got is None:
            got = self.ids[state] = len(self.states)
            self.states.append(state)
        return got


def bounded_outcomes(state: State, action: AbstractAction, p: ModelProfile, scope: Scope,
                     max_appends: int) -> list[tuple[State, tuple]]:
    """The model's successors of ``action`` with slots in place and what each arms, within ``max_appends``."""
    return [(t, o.arms) for t, o in outcomes(state, action, p, scope, canonical=False) if len(t.appends) <= max_appends]


class _Graph(StateIds):
    """The model's outcomes compiled once per (state, action): what each slot's timer does, the successor's id."""

    def __init__(self, p: ModelProfile, scope: Scope, offered: Callable[[AbstractAction], bool]) -> None:
        super().__init__()
        self.p, self.scope, self.offered = p, scope, offered
        self.ordered: dict[tuple[int, tuple[int, ...]], tuple[int, tuple[int, ...]]] = {}
        self.bases: dict[int, tuple[int, list[int]]] = {}
        self.moves: dict[int, list[tuple[AbstractAction, list[_Out]]]] = {}


    def canonical(self, after: State, codes: list[int]) -> tuple[int, tuple[int, ...]]:
        """The canonical successor's id and its codes (equal slots ordered by their timers)."""
        key = (id(after), tuple(codes))     # ``after`` lives as long as the graph (held by ``moves``/``states``)
        got = self.ordered.get(key)
        if got is None:
            base = self.bases.get(id(after))
            if base is None:        # its canonical id, and each slot's rank among its slot values
                values = sorted(set(after.slots))
                base = self.bases[id(after)] = self.id(after.canonical()), [values.index(v) for v in after.slots]
            sid, ranks = base
            order = sorted(range(len(codes)), key=lambda i: (ranks[i], codes[i]), reverse=True)
            got = self.ordered[key] = sid, tuple(codes[i] for i in order)
        return got

    def compiled(self, sid: int) -> list[tuple[AbstractAction, list[_Out]]]:
        got = self.moves.get(sid)
        if got is None:
            state = self.states[sid]
            got = self.moves[sid] = [(a, self._outcomes(state, a)) for a in enabled(state, self.p, self.scope)
                                     if self.offered(a)]
        return got

    def _outcomes(self, state: State, action: AbstractAction) -> list[_Out]:
        """(successor with slots in place, rule per slot, join rule: 0 none / 1 armed now / 2 kept, members mask)."""
        got = bounded_outcomes(state, action, self.p, self.scope, self.scope.max_appends)
        siblings = {t for t, _ in got}
        out = []
        for after, arms in got:
            rules = []
            for i, (was, now) in enumerate(zip(state.slots, after.slots, strict=True)):
                if not now.watch:
                    rules.append(GONE)
                elif not any(a.op == HEARTBEAT_OP and a.slot == i for a in arms):
                    rules.append(KEEP)             # untouched (or some of its due ops expired)
                elif now.watch == MANY:
                    # older ops outlive a reschedule only in their own millisecond
                    rules.append(SAME_MS if was.watch else -1)
                else:
                    twin = replace(after, slots=after.slots[:i] + (replace(now, watch=MANY),) + after.slots[i + 1:])
                    # the model's "a later millisecond" branch of a reschedule of a slot holding ops
                    rules.append(LATER_MS if was.watch and twin in siblings else ARMED)
            if -1 in rules:
                continue
            join = 0 if after.join_op == NO_JOIN else 1 if any(a.op == JOIN_OP for a in arms) else 2
            members = sum(1 << i for i, s in enumerate(after.slots) if s.status == MEMBER)
            out.append((after, tuple(rules), join, members))
        return out


def _ticks(g: _Graph, sid: int, codes: tuple[int, ...], join: int) -> Iterator[tuple[int, tuple[int, ...], int]]:
    """A clock move while nothing is due: every armed timer stays or comes due; the DelayedJoin only with the ops
    armed before it."""
    if join == DUE or any(c and _where(c) == DUE for c in codes):
        return
    options = [[0] if not c else [_code(LATER, _before(c), _three(c)), _code(DUE, _before(c), _three(c))]
               for c in codes]
    state = g.states[sid]
    for moved in product(*options):
        for j in ([-1] if join < 0 else [LATER, DUE]):
            if j == DUE and any(c and _before(c) and _where(c) != DUE for c in moved):
                continue
            yield (sid, *g.canonical(state, list(moved))[1:], j)


def _successors(g: _Graph, sid: int, codes: tuple[int, ...], join: int
                ) -> Iterator[tuple[AbstractAction, int, tuple[int, ...], int]]:
    for action, outs in g.compiled(sid):
        if action.kind == "ExpireHeartbeat" and not (codes[action.slot] and _where(codes[action.slot]) == DUE):
            continue
        if action.kind == "ExpireJoin" and join != DUE:
            continue
        state = g.states[sid]
        for after, rules, join_rule, members in outs:
            moved, ok, split = [], True, -1
            for i, rule in enumerate(rules):
                c, many = codes[i], after.slots[i].watch == MANY
                if rule == GONE:
                    moved.append(0)
                elif rule == KEEP:
                    if not many:
                        if c and _three(c) and action.kind == "ExpireHeartbeat" and action.slot == i:
                            ok = False         # three or more leave two or more when one fires
                            break
                        moved.append(c and _code(_where(c), _before(c)))
                    elif action.kind == "ExpireHeartbeat" and action.slot == i:
                        if not _three(c):      # two ops (MANY, not three) leave one when one fires
                            ok = False
                            break
                        split = i              # three or more leave two, or three or more
                        moved.append(c)
                    else:
                        moved.append(c)
                else:
                    same = bool(c) and _where(c) == NOW
                    if (rule == SAME_MS and not same) or (rule == LATER_MS and same):
                        ok = False
                        break
                    # one more op beside those of this millisecond: three once the slot held MANY
                    moved.append(_code(NOW, False, many and state.slots[i].watch == MANY))
            if not ok:
                continue
            for variant in ([moved] if split < 0 else
                            [moved, moved[:split] + [_code(_where(moved[split]), _before(moved[split]))]
                             + moved[split + 1:]]):
                if join_rule == 0:
                    j, out = -1, [c and _code(_where(c), False, _three(c)) for c in variant]
                elif join_rule == 1:   # armed now: the ops of every member present are due no later than it
                    j = NOW
                    out = [c and _code(_where(c), bool(members >> i & 1), _three(c)) for i, c in enumerate(variant)]
                else:
                    j, out = join, variant
                yield (action, *g.canonical(after, out), j)


#: what a sweep can read of a concrete run's timers (harness.puppets.timing): each slot value with where its ops stand
#: (-1: none), sorted, and where the DelayedJoin stands (-1: none) — a timed node without the before-join flags; a
#: slot holding three ops or more shows a third "w" ("Mwww")
Timing = tuple[tuple[tuple[str, int], ...], int]


def timing(state: State, codes: tuple[int, ...], join: int) -> Timing:
    slots = tuple(sorted((s.short() + ("w" if c and _three(c) else ""), _where(c) if c else -1)
                         for s, c in zip(state.slots, codes, strict=True) if c or s.short() != "-"))
    return slots, join


Node = tuple[int, tuple[int, ...], int]   # (state id, codes per slot, the DelayedJoin's place or -1)


def timed_walk(profile: str, scope: Scope, offered: Callable[[AbstractAction], bool]
               ) -> tuple[list[State], Iterator[tuple[Node, list[tuple[AbstractAction | None, Node]]]]] | None:
    """The timed graph of ``scope`` breadth first from its start: each node with its moves (an action, or None for a
    tick, and the node it leads to; stutters included). The state ids index the list returned (it grows as the walk
    goes); None where the facts above do not hold."""
    if not applies(profile):
        return None
    g = _Graph(get_model_profile(profile), scope, offered)

    def walk() -> Iterator[tuple[Node, list[tuple[AbstractAction | None, Node]]]]:
        start = (g.id(initial(scope)), (0,) * scope.members, -1)
        seen, queue = {start}, [start]
        for node in queue:
            sid, codes, join = node
            moves: list[tuple[AbstractAction | None, Node]] = [
                (None, n) for n in _ticks(g, sid, codes, join)]
            moves += [(action, (nid, ncodes, njoin)) for action, nid, ncodes, njoin in _successors(g, sid, codes, join)]
            for _, nxt in moves:
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
            yield node, moves
    return g.states, walk()


__all__ = ["REASON", "Node", "Timing", "applies", "timed_walk", "timing"]

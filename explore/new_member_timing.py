"""2.4's new-member op times: the one edge family no run takes whatever came before, and the coverage quotient's
graph with each new member's 5-minute op stamped with the millisecond it was armed in (the sweep plans in it).

On 2.4.1 (KAFKA-7610's new-member timeout with the KAFKA-9232 keep-alive predicate, before KAFKA-9752's
heartbeatSatisfied flag) the abstract state forgets one thing that decides edges: *when* a new member's op was armed.
From Kafka's source at tag 2.4.1 (core/src/main/scala/kafka/coordinator/group/):

* addMemberAndRebalance (GroupCoordinator.scala L954-968) marks the member new and arms its op with deadline
  now + NewMemberJoinTimeoutMs (5 minutes, L1186), stamping latestHeartbeat = now (completeAndScheduleNextExpiration,
  L912-922). That op is the only live op a new member holds: a pending id's op completes once the id is a member (the
  same key is checked, tryCompleteHeartbeat L1113-1129), and every later reschedule while it is new arms an op of
  deadline now + session that its own check completes at once (MemberMetadata.scala L88-99, shouldKeepAlive: isNew
  first, now + 5 min > now + session — every session timeout of the gate's worlds is below 5 minutes);
* a reschedule while the member is new (its heartbeat in PreparingRebalance, and onCompleteJoin, which reschedules
  before it clears isNew, L1104-1106) stamps latestHeartbeat = now and checks the older op: it completes iff
  now + 5 min > its deadline, that is iff it was armed in an *earlier* millisecond (strict '>'). So the model's two
  outcomes of such a reschedule (model/rules.py ``_reschedule_new``: the op completed, the op kept) are each taken
  in one case only: *completed* needs the op armed before this millisecond, *kept* needs it armed in this one;
* the op expires only once due, 5 minutes after it was armed: never in the millisecond it was armed in.

**What the coverage map leaves out** (``ruled_out``, explore/coverage.py): the edges whose every model outcome has the
member a JoinGroup *adds* lose its op to the join completion *the same request* causes (the JoinGroup handler tries to
complete the join before it answers, GroupCoordinator.scala L174-177; prepareRebalance tries at once, L1013). Adding
and completing happen in one request, so in one millisecond of the gate's worlds (their clock moves only by the world's
AdvanceClock, harness/world.py): the op is kept. That needs no history, so it holds for runs with any number of member
ids. (On a real broker the wall clock may tick between the two calls: there the other outcome can happen, rarely.)

**What the sweep plans in** (``timed_walk``, explore/plan.py): the quotient graph of a scope (as ``build_quotient``
expands it: each state from its representative with a spare slot) with, per slot holding a new member's op, where the
op stands — armed in this millisecond (``NOW``) or earlier (``LATER``) — and a clock move (a tick) that makes every
``NOW`` ``LATER``; a tick may come anywhere and every other order of steps the model allows is kept. It rules out more
than ``ruled_out`` (e.g. a completion that keeps the op of a member added before another member's op was completed
by a later heartbeat), but only for runs within the map's member slots: walked with a fourth slot, every edge it rules
out beyond ``ruled_out`` is taken (a client that joins again under a new id while its old id is still a member makes
the fourth), so those edges stay in the denominator and the walk only tells the sweep which timing each edge needs.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import product
from typing import Callable, Iterable, Iterator

from model.outputs import HEARTBEAT_OP, INITIAL_JOIN_OP, JOIN_OP, NEW_MEMBER, PENDING_OP
from model.profiles import ModelProfile, get_model_profile
from model.quotient import applies as quotient_applies, coarse_slots
from model.releases import fact
from explore.deadlines import StateIds, bounded_outcomes
from model.state import FREE, NO_JOIN, AbstractAction, Scope, Slot, State, initial
from model.step import enabled

#: where a slot's ops stand: none, a new member's op armed in this millisecond, armed earlier (for a member that is not
#: new: armed, whenever), due; and what a step does to a slot besides (``_Walk._outcomes``)
NONE, NOW, LATER, DUE = 0, 1, 2, 3
ADDED, REARMED = 3, 4
_WHERE = {NONE: -1, NOW: 0, LATER: 1, DUE: 2}
#: how often the sweep's planning tries an uncovered edge from runs in one timing it is taken from before it gives that
#: (source, timing) up (explore/timedmap.py ``spend``; 0.10's timed graph: once). The timing leaves more of the concrete
#: situation open here (the other members' deadline order, which op of a member is whose), so a second arrival in
#: the same timing is another chance: gate 2.4.1 at 120,000 sweep steps, seed 0: 94.6 % once, 95.3 % twice; 0.10.0
#: (not changed) drops from 98.6 % to 97.7 % twice — bench/results/coverage-2.4.1-2026-11-28c.md
SPEND = 2
_Out = tuple[State, tuple[int, ...], int]   # successor (slots in place), rule per slot, join rule
#: why an edge of the map is one no run takes (the coverage map's reason)
REASON = ("no run takes it: the member this JoinGroup adds has its 5-minute op armed in that request, and the join "
          "completion the same request causes reschedules it in the same millisecond of the world's clock, which keeps "
          "the op (GroupCoordinator.scala@2.4.1 L174-177, L954-968, L1104-1106; MemberMetadata.scala@2.4.1 L88-91) — "
          "explore/new_member_timing.py")
Node = tuple[int, tuple[int, ...], int]   # (state id, code per slot, -1: this walk does not track the DelayedJoin)


def applies(profile: str) -> bool:
    """2.4's predicate on deadline arithmetic: the new member checked first and no heartbeatSatisfied flag (2.4.1)."""
    return fact("new-member-checked-first", profile) and not fact("heartbeat-satisfied-flag", profile) \
        and quotient_applies(profile)


def _tracked(slot: Slot) -> bool:
    """A new member holding its op (the 5-minute one: the only op a new member holds)."""
    return slot.member and slot.is_new and slot.watch > 0


def timing(state: State, codes: tuple[int, ...], join: int = -1) -> tuple[tuple[tuple[str, int], ...], int]:
    """What a run shows of a timed node (``seen`` of ``harness.puppets.timing``): each slot value in use with where its
    ops stand (0: a new member's op armed in this millisecond, 1 armed and not due, 2 due, -1 none), sorted, and where
    the DelayedJoin stands (1 armed, 2 due, -1 none)."""
    return tuple(sorted((s.short(), _WHERE[c]) for s, c in zip(state.slots, codes, strict=True) if s != FREE)), join


def seen(run: tuple[tuple[tuple[str, int], ...], int]) -> tuple[tuple[tuple[str, int], ...], int]:
    """``timing``'s projection of what ``harness.puppets.timing`` reads of a run: each id's slot value (as the quotient
    writes it, a third "w" when the id holds three ops or more — the quotient counts one) with where its ops stand (0
    armed in this millisecond, 1 earlier, 2 due, -1 none). A new member holding an op holds its 5-minute op alone
    (module doc), so its place is that op's; the others' places are not tracked here, and a gone id's inert ops ("-")
    are not a slot."""
    values = [(_unmarked(value), where) for value, where in run[0]]
    slots = tuple(sorted((value, -1 if not value.endswith("w") else where if _new_with_op(value) else
                          2 if where == 2 else 1) for value, where in values if value != "-"))
    return slots, -1 if run[1] < 0 else 2 if run[1] == 2 else 1


def _unmarked(value: str) -> str:
    """A slot value of ``harness.puppets.timing`` without its three-ops mark: the quotient writes no "w" for a gone id
    and for a member that awaits a join or sync and is not new (model/quotient.py), one at most for the others."""
    flags = value[1:].rstrip("w")
    idle = value[:1] == "-" or (value[:1] == "M" and ("J" in flags or "S" in flags) and "N" not in flags)
    return value[:1] + flags + ("" if idle else "w" * min(1, len(value) - 1 - len(flags)))


def _new_with_op(value: str) -> bool:
    """``Slot.short()`` of a new member holding an op: "M", its flags (N: new), then its ops' "w"s."""
    flags = value[1:].rstrip("w")
    return value[:1] == "M" and "N" in flags and value.endswith("w")


class _Walk(StateIds):
    """The quotient's graph compiled per state: each action's successors (slots in place) with their constraints."""

    def __init__(self, p: ModelProfile, scope: Scope, offered: Callable[[AbstractAction], bool]) -> None:
        super().__init__()
        self.p, self.scope, self.offered = p, scope, offered
        self.wide = replace(scope, members=scope.members + 1, max_appends=scope.max_appends + 8)
        self.moves: dict[int, list[tuple[AbstractAction, list[_Out]]]] = {}


    def compiled(self, sid: int) -> list[tuple[AbstractAction, list[_Out]]]:
        got = self.moves.get(sid)
        if got is None:
            roomy = replace(self.states[sid], slots=self.states[sid].slots + (FREE,))
            got = self.moves[sid] = [(a, self._outcomes(roomy, a)) for a in sorted(enabled(roomy, self.p, self.wide))
                                     if self.offered(a)]
        return got

    def _outcomes(self, state: State, action: AbstractAction, keep_all: bool = False) -> list[_Out]:
        """(successor with slots in place, rule per slot, join rule). A slot's rule: 0 none, NOW / LATER its op must
        stand there (LATER: or be due), ADDED a new member's op armed by this step, REARMED another op armed by it, -1
        impossible whatever the history (only with ``keep_all``; else left out). The join rule: 0 no DelayedJoin
        after the step, 1 armed by it, 2 kept."""
        got = bounded_outcomes(state, action, self.p, self.wide, self.scope.max_appends)
        siblings = {t for t, _ in got}
        out = []
        for after, arms in got:
            rules = []
            for i, (was, now) in enumerate(zip(state.slots, after.slots, strict=True)):
                rule = NONE
                if _tracked(was) and now.member:
                    # the model's two outcomes of a reschedule of a new member (model/rules.py ``_reschedule_new``):
                    # the op kept (this millisecond only) or completed (a later one) — told apart by the twin outcome
                    if now.watch and _twin(after, i, 0) in siblings:
                        rule = NOW
                    elif not now.watch and any(_twin(after, i, w) in siblings for w in range(1, 3)):
                        rule = LATER
                elif _tracked(now) and any(a.op == HEARTBEAT_OP and a.slot == i and a.source == NEW_MEMBER
                                           for a in arms):
                    rule = 3
                elif _added(action, i, was, now) and not now.watch and _twin(after, i, 1) in siblings:
                    rule = -1         # added and rescheduled by the join completion of the same request: kept
                if rule == NONE and any(a.slot == i and a.op in (HEARTBEAT_OP, PENDING_OP) for a in arms):
                    rule = REARMED
                rules.append(rule)
            join = 0 if after.join_op == NO_JOIN else 1 if any(a.op in (JOIN_OP, INITIAL_JOIN_OP) for a in arms) else 2
            if keep_all or -1 not in rules:
                out.append((after, tuple(rules), join))
        return out

    def ruled_out(self, state: State) -> set[tuple[State, str, State]]:
        """The coverage keys of ``state``'s edges (a quotient state of the map) that only impossible outcomes take."""
        from explore.coverage import edge_key          # the coverage map's key (explore/coverage.py imports us)
        roomy = replace(state, slots=state.slots + (FREE,))
        taken: dict[tuple[State, str, State], bool] = {}
        for action in sorted(enabled(roomy, self.p, self.wide)):
            if not self.offered(action):
                continue
            for after, rules, _ in self._outcomes(roomy, action, keep_all=True):
                got = _canonical(after, [NONE] * len(after.slots), self.scope.members, self.p.name)
                if got is not None and got[0] != state:
                    key = edge_key(state, action, got[0])
                    taken[key] = taken.get(key, False) or -1 not in rules
        return {key for key, possible in taken.items() if not possible}


def _added(action: AbstractAction, i: int, was: Slot, now: Slot) -> bool:
    """Slot ``i`` became a member by this JoinGroup: addMemberAndRebalance armed its 5-minute op in this step."""
    return action.slot == i and action.kind.startswith("JoinGroup") and not was.member and now.member


def _twin(state: State, i: int, watch: int) -> State:
    return replace(state, slots=state.slots[:i] + (replace(state.slots[i], watch=watch),) + state.slots[i + 1:])


def _canonical(state: State, codes: list[int], members: int, profile: str) -> tuple[State, tuple[int, ...]] | None:
    """The successor in the quotient, slots sorted (equal slots by their codes) and cut to ``members``; None when it
    holds more identities than that (the quotient graph cuts it, model/quotient.py ``build_quotient``)."""
    slots = coarse_slots(state.slots, profile)
    codes = [NONE if not s.watch else LATER if c in (NONE, NOW) and not _tracked(s) else c or LATER
             for s, c in zip(slots, codes, strict=True)]
    if sum(s != FREE for s in slots) > members:
        return None
    order = sorted(range(len(slots)), key=lambda i: (slots[i], codes[i]), reverse=True)[:members]
    return replace(state, slots=tuple(slots[i] for i in order)), tuple(codes[i] for i in order)


def _ticks(w: _Walk, sid: int, codes: tuple[int, ...], join: int) -> Iterator[tuple[None, Node]]:
    """A clock move while nothing is due (harness/world.py): what was armed in this millisecond is earlier now, and any
    armed op and the DelayedJoin may come due."""
    if DUE in codes or join == 2:
        return
    options = [[NONE] if not c else [LATER, DUE] for c in codes]
    for moved in product(*options):
        got = _canonical(w.states[sid], list(moved), w.scope.members, w.p.name)
        assert got is not None
        for j in ([join] if join < 0 else [1, 2]):
            yield None, (w.id(got[0]), got[1], j)


def _successors(w: _Walk, sid: int, codes: tuple[int, ...], join: int
                ) -> Iterator[tuple[AbstractAction | None, Node]]:
    yield from _ticks(w, sid, codes, join)
    wide = codes + (NONE,)
    for action, outs in w.compiled(sid):
        if (action.kind == "ExpireHeartbeat" and wide[action.slot] != DUE) or \
                (action.kind == "ExpireJoin" and join != 2):
            continue                              # a timer fires only once due (a 5-minute op never in its millisecond)
        for after, rules, join_rule in outs:
            moved: list[int] = []
            for c, rule in zip(wide, rules, strict=True):
                if (rule == NOW and c != NOW) or (rule == LATER and c not in (LATER, DUE)):
                    break
                moved.append(NOW if rule == ADDED else LATER if rule == REARMED else c)
            else:
                j = -1 if join_rule == 0 else 1 if join_rule == 1 or join < 0 else join
                variants = [moved]
                if action.kind == "ExpireHeartbeat" and after.slots[action.slot].watch:   # more ops left: due or not
                    variants.append(moved[:action.slot] + [LATER] + moved[action.slot + 1:])
                for codes_after in variants:
                    got = _canonical(after, codes_after, w.scope.members, w.p.name)
                    if got is not None:
                        yield action, (w.id(got[0]), got[1], j)


def ruled_out(profile: str, scope: Scope, offered: Callable[[AbstractAction], bool], states: Iterable[State]
              ) -> set[tuple[State, str, State]]:
    """The edges of ``states`` (quotient states of ``scope``'s map) that no run takes whatever came before: every
    outcome of the model that takes one has the member a JoinGroup adds lose its 5-minute op to the join completion
    the same request causes — in the op's own millisecond, where it is kept (module doc). History-free, so it holds
    for runs with any number of member ids (the timed walk's other exclusions hold only within the map's slots)."""
    w = _Walk(get_model_profile(profile), scope, offered)
    return set().union(*(w.ruled_out(state) for state in sorted(states, key=State.short)))


def timed_walk(profile: str, scope: Scope, offered: Callable[[AbstractAction], bool]
               ) -> tuple[list[State], Iterator[tuple[Node, list[tuple[AbstractAction | None, Node]]]]] | None:
    """The timed quotient graph of ``scope`` breadth first from its start, in explore/deadlines.py's shape: each node
    with its moves (an action, or None for a tick); None where the facts above do not hold."""
    if not applies(profile):
        return None
    w = _Walk(get_model_profile(profile), scope, offered)

    def walk() -> Iterator[tuple[Node, list[tuple[AbstractAction | None, Node]]]]:
        start: Node = (w.id(initial(scope)), (NONE,) * scope.members, -1)
        seen, queue = {start}, [start]
        for node in queue:
            moves = list(_successors(w, *node))
            for _, nxt in moves:
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
            yield node, moves
    return w.states, walk()


__all__ = ["REASON", "Node", "applies", "ruled_out", "seen", "timed_walk", "timing"]

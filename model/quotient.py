"""The coverage quotient: the abstract state up to liveness-op bookkeeping that nothing later depends on, on the
releases where it is inert (core only). The model keeps the fine state — the labelled refinement judges it; coverage
counts states and edges of this quotient, in which two fine states are one when every step from them answers the same,
arms the same timers and leads to the same quotient state (tests/test_quotient.py checks that on the model graphs).

Once a heartbeat op looks its member up by id when it is checked or expires (KAFKA-8896, 2.3.1/2.4.0), **the ops of an
id that is gone** are inert: the id never comes back (member ids are fresh and a static replacement names a new one), so
such an op's check finds no member — false on 2.4, complete on 2.5+ — and its expiry only logs; it never removes or
answers anything (SPEC.md §2 note under the liveness table, §4.6). The one way back for an old id — the revert of a
failed static store, 2.6.1+ (KAFKA-10284, §3.1 J5a step 4) — reschedules under it with the heartbeatSatisfied flag
(2.5.0+), which completes that id's older ops whatever they were; until then they expire as a missing member's.

Where liveness is also deadline arithmetic (before KAFKA-9752, 2.5.0: 2.4.1 among the runnable releases) two more things
the fine state counts decide nothing (§2 liveness table, §4.6):

* **how many ops a member holds.** The session timeout is fixed (``sessionTimeoutMs`` is a ``val`` before 3.3.2) and a
  reschedule in a later millisecond completes every older op, so all live ops of a member share one deadline; the
  first to expire decides (removal, or nothing while the member is kept) and the others are then of a gone id, or see
  the same predicate; a reschedule arms one op whatever the count;
* **the ops of a member that awaits a join or sync and is not new.** The 2.4.1 predicate keeps such a member (isNew
  first, then awaitingJoin ∨ awaitingSync, KAFKA-9232), so their expiry does nothing, and the member stops awaiting only
  through a reschedule (its join response, its sync answer, REBALANCE_IN_PROGRESS to its parked sync, a static
  replacement: §3.1, §3.2, §4.4 step 5) that completes them — or through its removal or the group's unload.

So there a slot keeps "has a live op" (0 or 1), and only where it can matter: a new member's 5-minute op, an idle
member's session op (KAFKA-9232's member without one is a real state), a pending id's expiration. 0.10.0 keeps every
count: an op that outlived its member still runs onMemberFailure there (KAFKA-7196).
"""
from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Sequence

import networkx as nx

from model.graph import expand
from model.profiles import ModelProfile, get_model_profile
from model.releases import fact
from model.state import ABSENT, FREE, Scope, Slot, State, initial


@cache
def applies(profile: str) -> bool:
    """Whether the quotient forgets anything on ``profile``: ops are looked up by member id (2.3.1+)."""
    return fact("heartbeat-op-looks-up-member", profile)


@cache
def _counts_inert(profile: str) -> bool:
    """Deadline arithmetic whose ops look their member up: op counts and awaiting members' ops decide nothing."""
    return applies(profile) and not fact("heartbeat-satisfied-flag", profile)


def coarse_slot(slot: Slot, profile: str = "2.4.1") -> Slot:
    """One member or pending slot in the quotient (a gone id's slot: ``coarse_slots``)."""
    if not _counts_inert(profile) or slot.status == ABSENT:
        return slot
    if slot.member and (slot.awaiting_join or slot.awaiting_sync) and not slot.is_new:
        return replace(slot, watch=0) if slot.watch else slot
    return replace(slot, watch=1) if slot.watch > 1 else slot


def coarse_slots(slots: Sequence[Slot], profile: str) -> tuple[Slot, ...]:
    """The slots in the quotient, in place (slot i stays slot i; a gone id's inert ops become a free slot)."""
    if not applies(profile):
        return tuple(slots)
    return tuple(_gone(s) if s.status == ABSENT else coarse_slot(s, profile) for s in slots)


def _gone(slot: Slot) -> Slot:
    """A gone id's slot: its ops are inert, but an owed SyncGroup is not [3.0+]: a static replacement leaves the old
    id in pendingSyncMembers, where it keeps the DelayedSync from completing (SPEC.md Corrections 3)."""
    return replace(FREE, pending_sync=True) if slot.pending_sync else FREE


def quotient(state: State, profile: str) -> State:
    """``state`` in the coverage quotient of ``profile`` (itself where nothing is inert), canonical, same width."""
    if not applies(profile):
        return state
    return replace(state, slots=tuple(sorted(coarse_slots(state.slots, profile), reverse=True)))


def _in_use(state: State) -> int:
    return sum(s != FREE for s in state.slots)


def build_quotient(scope: Scope, profile: str | ModelProfile) -> nx.MultiDiGraph:
    """The reachable graph of the quotient: ``model.graph.build``'s shape (nodes 0… in BFS order with ``state``; edges
    with ``kind``, ``slot``, ``arg``), each state expanded by the model from its quotient representative. A step is
    taken with one spare free slot (the inert ops of a replaced static id need a place while the step runs) and a
    successor with more identities than ``scope.members`` is cut, as the model graph cuts it."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    wide = replace(scope, members=scope.members + 1, max_appends=scope.max_appends + 8)
    start = initial(scope)
    g = nx.MultiDiGraph(profile=p.name, scope=scope)
    ids = {start: 0}
    order = [start]
    g.add_node(0, state=start)
    for u, state in enumerate(order):
        roomy = replace(state, slots=state.slots + (FREE,))
        succ, _cut = expand(roomy, p, wide, wide)
        for action, target in succ:
            if len(target.appends) > scope.max_appends:
                continue
            after = quotient(target, p.name)
            if _in_use(after) > scope.members:
                continue
            after = replace(after, slots=after.slots[:scope.members])
            v = ids.get(after)
            if v is None:
                v = ids[after] = len(order)
                order.append(after)
                g.add_node(v, state=after)
            g.add_edge(u, v, key=str(action), kind=action.kind, slot=action.slot, arg=action.arg)
    return g


__all__ = ["applies", "build_quotient", "coarse_slot", "coarse_slots", "quotient"]

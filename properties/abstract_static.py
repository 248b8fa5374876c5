"""Abstract invariants of the static scope (KIP-345, ``Scope(static=True)``): Python predicates over model.State,
each with a Z3 twin of the same name in properties/z3/static_invariants.py (tests/test_z3_static.py checks that
both agree on every state of the static graphs), and the abstract invariants that do not hold there.

Of the concrete static properties (properties/concrete_static.py):
- ``at-most-one-member-per-instance-id`` is true *by construction* at this level: the abstraction has no instance
  ids, a static slot *is* its instance (model/static.py), so two slots never share one. What is left to state is
  that the static map points at members only: ``model-static-slot-is-a-member``.
- ``fenced-instance-id-never-succeeds`` and ``static-member-survives-join-completion`` are step properties (an
  answer, a before/after pair), not state invariants; the second is what the encoding-agreement check pins
  (a join completion that removed static members disagrees with model.step, tests/test_z3_static.py).
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping

from model.releases import MODELLED, when
from model.state import APPEND_STATIC, COMPLETING, INITIAL_JOIN, MEMBER, PENDING, PREPARING, STABLE, State

Witness = dict[str, object]
StatePredicate = Callable[[State], "Witness | None"]


def _first(s: State, bad: Callable[[int], bool]) -> Witness | None:
    i = next((i for i in range(len(s.slots)) if bad(i)), -1)
    return None if i < 0 else {"slot": i, "slot_state": s.slots[i].short(), "group": s.group}


def static_slot_is_member(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].static and s.slots[i].status != MEMBER)


def persist_only_static(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].persist and not s.slots[i].static)


def persist_has_append(s: State) -> Witness | None:
    marked = sum(1 for slot in s.slots if slot.persist)
    if marked > s.appends.count(APPEND_STATIC):
        return {"slots_marked_persist": marked, "appends": list(s.appends)}
    return None


def awaiting_join_outside_preparing_only_while_persisted(s: State) -> Witness | None:
    def bad(i: int) -> bool:
        slot = s.slots[i]
        return slot.awaiting_join and not (slot.status == MEMBER and (
            s.group == PREPARING or (s.group == STABLE and slot.persist)))
    return _first(s, bad)


def new_member_only_in_preparing(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].is_new and (s.group != PREPARING or s.slots[i].status != MEMBER
                                                       or s.slots[i].persist))


def persisted_never_in_initial_join(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].persist and s.join_op == INITIAL_JOIN)


def pending_sync_member_or_left_behind(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].pending_sync and (s.slots[i].status == PENDING
                                                            or s.group not in (COMPLETING, STABLE)))


#: name -> (claim, predicate); every one holds on the static graphs of every release with static members
STATIC_INVARIANTS: Mapping[str, tuple[str, StatePredicate]] = MappingProxyType({
    "model-static-slot-is-a-member": (
        "A slot that some group.instance.id maps to is a member (SPEC.md §1.5 I4: the static map's values are "
        "current members).", static_slot_is_member),
    "model-persist-only-for-static-members": (
        "Only a static member's id replacement awaits its store callback (SPEC.md §3.1 J5a step 4).",
        persist_only_static),
    # holds on every static graph, but its unbounded twin ("some member marked ⇒ some static append": a count is not
    # expressible over an uninterpreted member sort) is not inductive — two marked members, one static append, whose
    # callback clears one (prove(static=True) reports it not-inductive with that CTI; tests/test_z3_static.py)
    "model-persisted-replacement-has-a-pending-static-append": (
        "Each member whose id replacement awaits its store callback has a static append pending (no fewer static "
        "appends than marked members).", persist_has_append),
    "model-awaiting-join-outside-preparing-only-while-persisted": (
        "A parked JoinGroup outside PreparingRebalance is a static restart stored in Stable whose callback is "
        "still to come (the static scope's form of model-awaiting-join-only-for-members-in-preparing-rebalance).",
        awaiting_join_outside_preparing_only_while_persisted),
    # strengthening: without these two, model-new-member-is-awaiting-join and
    # model-initial-join-only-while-every-member-is-new are not inductive in the static scope (a stored restart's
    # callback or a synchronous restart answers the join of a member the other invariants allow to be new / in an
    # InitialDelayedJoin; tests/test_z3_static.py pins it)
    "model-new-member-only-in-preparing-rebalance-and-not-persisted": (
        "A member added in this rebalance (isNew) is a member of a PreparingRebalance group (SPEC.md §3.1, §4.4 step "
        "5 clears it) and has no id replacement awaiting its callback.", new_member_only_in_preparing),
    "model-persisted-member-never-in-an-initial-join": (
        "No InitialDelayedJoin runs while a static id replacement awaits its callback (the replacement is stored in "
        "Stable; an InitialDelayedJoin starts only from Empty, SPEC.md §4.5).", persisted_never_in_initial_join),
    "model-pending-sync-only-after-join-for-members-or-replaced-ids": (
        "pendingSyncMembers exist only while the group is CompletingRebalance or Stable, and each is a member or an "
        "id a static restart left behind, which is no pending id (the static scope's form of "
        "model-pending-sync-only-for-members-after-join; SPEC.md §4.8, Corrections 3).",
        pending_sync_member_or_left_behind),
})
#: the static claims added because the inductive proof needs them
STATIC_STRENGTHENING = frozenset({"model-new-member-only-in-preparing-rebalance-and-not-persisted",
                                  "model-persisted-member-never-in-an-initial-join"})

#: (abstract invariant, profile) pairs that the static scope breaks by design (properties/abstract.py's are kept)
STATIC_FINDINGS: Mapping[tuple[str, str], str] = MappingProxyType({(name, p): why for name, applies, why in (
    ("model-awaiting-join-only-for-members-in-preparing-rebalance", when("static-rejoin-persisted-in-stable"),
     "2.6.1+ (KAFKA-10284): a static restart in Stable parks its JoinGroup until the store callback of its id "
     "replacement answers it; the group stays Stable (replaced by "
     "model-awaiting-join-outside-preparing-only-while-persisted)"),
    ("model-idle-member-has-liveness-watch", when("static-rejoin-persisted-in-stable"),
     "2.6.1+: a static restart stored in Stable parks its JoinGroup; its heartbeat op expires meanwhile and the "
     "member is kept (it awaits a join); the store callback answers the join without rescheduling, so the member "
     "is idle with no live expiration (3.9 static 2-slot graph: JoinGroup/static-new, ExpireJoin, SyncGroup, "
     "CompleteAppend[ok], JoinGroup/static-rejoin, ExpireHeartbeat, CompleteAppend[ok])"),
    ("model-removed-member-leaves-no-liveness-op", when("static-membership"),
     "a static restart leaves the old member id's DelayedHeartbeat ops armed; they expire idly (SPEC.md §3.1 "
     "J5a step 4)"),
    ("model-pending-sync-only-for-members-after-join", when("delayed-sync"),
     "3.0+: replaceStaticMember leaves pendingSyncMembers untouched, so a static restart in Stable leaves its old "
     "member id there, no member any more, until the DelayedSync expires and rebalances (SPEC.md §3.1 J5a step 4, "
     "Corrections 3; GroupMetadata.scala 3.9.0-rc3 lines 319-340; replaced by "
     "model-pending-sync-only-after-join-for-members-or-replaced-ids)"),
    ("model-initial-join-only-while-every-member-is-new", when("static-replacement-is-a-new-member"),
     "4.x (SPEC-4x.md R12; ClassicGroup.java@4.1.1:549-597): a static member that restarts during the initial "
     "rebalance is replaced by a new member object, which is not new, so the InitialDelayedJoin waits with a member "
     "that is not new (static 1-slot graph of 4.1: JoinGroup/static-new, JoinGroup/static-rejoin)"),
) for p in MODELLED if applies(p)})

#: (output property of properties/abstract_outputs.py, profile) pairs the static scope breaks by design: the static
#: output proof (prove_outputs(static=True)) reports them as findings when its counterexample step is one model.step
#: takes (tests/test_z3_static.py pins them against the static graphs' steps)
STATIC_OUTPUT_FINDINGS: Mapping[tuple[str, str], str] = MappingProxyType({(name, p): why for name, applies, why in (
    ("model-join-completion-answers-every-member-with-the-new-generation", when("static-membership"),
     "SPEC.md §4.4 step 1 (2.3+, KIP-345): a static member that did not rejoin stays a member of the new generation "
     "and gets no join response (it learns the generation by rejoining); 2-slot static graph: ExpireJoin with a "
     "static member idle"),
) for p in MODELLED if applies(p)})

"""Abstract invariants: Python predicates over ``model.State`` (level "abstract", kind "always").

Each predicate returns ``None`` when the state satisfies it and otherwise the witness values
(icontract-style). Each has a Z3 twin of the same name in ``properties/z3/invariants.py`` — one
meaning, two interpreters; tests/test_z3_invariants.py evaluates both on every state of the 2- and
3-member graphs. ``FINDINGS`` lists the (property, profile) pairs that do *not* hold in the
reachable graph: they stay out of the proof set and are reported with a shortest violating trace.
``STRENGTHENING`` marks the claims that were added because the inductive proof needs them.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping

from model.releases import MODELLED, Predicate, all_of, everywhere, unless, when
from model.state import (ABSENT, ABSENT_GROUP, APPEND_CURRENT, COMPLETING, EMPTY, FREE, INITIAL_JOIN, MEMBER, NO_JOIN,
                         PENDING, PREPARING, STABLE, State)
from properties.catalog import AppliesTo, Property, always, for_profile

Witness = dict[str, object]
StatePredicate = Callable[[State], "Witness | None"]


def invariant(name: str, *, claim: str, source: str,
              applies_to: AppliesTo = everywhere) -> Callable[[StatePredicate], StatePredicate]:
    """An abstract state invariant whose Z3 twin (properties/z3/invariants.py) has the same name."""
    return always(name, claim=claim, source=source, applies_to=applies_to, level="abstract", z3=name)


def _slot(s: State, i: int, **extra: object) -> Witness:
    """The witness of one slot: its index, its one-letter summary and the group state."""
    return {"slot": i, "slot_flags": s.slots[i].short(), "group": s.group, **extra}


def _first(s: State, bad: Callable[[int], bool], **extra: object) -> Witness | None:
    i = next((i for i in range(len(s.slots)) if bad(i)), None)
    return None if i is None else _slot(s, i, **extra)


# -- leadership (SPEC.md §1.4 leader bookkeeping, I3) --------------------------------------------
@invariant("model-leader-exists-iff-a-member-exists",
           claim="The group has a leader exactly when it has at least one member.",
           source="SPEC.md §1.4 (leaderId = None ⇔ members = ∅), §1.5 I3")
def leader_exists_iff_member(s: State) -> Witness | None:
    leaders, members = [i for i, x in enumerate(s.slots) if x.leader], list(s.members)
    return None if bool(leaders) == bool(members) else {"leaders": leaders, "members": members}


@invariant("model-leader-is-a-member",
           claim="Only a member slot carries the leader flag.", source="SPEC.md §1.5 I3")
def leader_is_member(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].leader and s.slots[i].status != MEMBER)


@invariant("model-at-most-one-leader",
           claim="At most one slot is the leader.", source="SPEC.md §1.4 (leaderId is one Option)")
def at_most_one_leader(s: State) -> Witness | None:
    leaders = [i for i, x in enumerate(s.slots) if x.leader]
    return None if len(leaders) <= 1 else {"leaders": leaders}


# -- parked requests versus the group state (I6) ------------------------------------------------
@invariant("model-awaiting-join-only-for-members-in-preparing-rebalance",
           claim="A JoinGroup is parked only for a member, and only while the group is PreparingRebalance.",
           source="SPEC.md §1.5 I6")
def awaiting_join_in_preparing(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].awaiting_join and (s.slots[i].status != MEMBER or s.group != PREPARING))


@invariant("model-awaiting-sync-only-for-members-in-completing-rebalance",
           claim="A SyncGroup is parked only for a member, and only while the group is CompletingRebalance.",
           source="SPEC.md §1.5 I6")
def awaiting_sync_in_completing(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].awaiting_sync and (s.slots[i].status != MEMBER or s.group != COMPLETING))


# -- group state versus membership (I7) ---------------------------------------------------------
@invariant("model-empty-or-absent-group-has-no-members",
           claim="An Empty group, or no group at all, has no members.", source="SPEC.md §1.5 I7")
def empty_has_no_members(s: State) -> Witness | None:
    if s.group not in (EMPTY, ABSENT_GROUP):
        return None
    return _first(s, lambda i: s.slots[i].status == MEMBER)


@invariant("model-completing-or-stable-group-has-a-member",
           claim="A CompletingRebalance or Stable group has at least one member.", source="SPEC.md §1.5 I7")
def completing_has_member(s: State) -> Witness | None:
    return {"group": s.group, "members": []} if s.group in (COMPLETING, STABLE) and not s.members else None


@invariant("model-absent-group-has-no-slot-in-use",
           claim="With no group object, no slot is a member or pending id and no liveness op is live.",
           source="SPEC.md §1.2 (a dead group leaves the cache; its ops are inert)")
def absent_group_has_free_slots(s: State) -> Witness | None:
    if s.group != ABSENT_GROUP:
        return None
    return _first(s, lambda i: s.slots[i] != FREE)


# -- delayed operations --------------------------------------------------------------------------
@invariant("model-join-op-armed-iff-preparing-rebalance",
           claim="A DelayedJoin or InitialDelayedJoin is armed exactly while the group is PreparingRebalance.",
           source="SPEC.md §4.4, §4.5")
def join_op_iff_preparing(s: State) -> Witness | None:
    armed = s.join_op != NO_JOIN
    return None if armed == (s.group == PREPARING) else {"join_op": s.join_op, "group": s.group}


@invariant("model-initial-join-only-while-every-member-is-new",
           claim="While an InitialDelayedJoin is armed every member joined since the group was Empty: "
                 "each is new and awaiting its join response.",
           source="SPEC.md §4.5 (InitialDelayedJoin only from Empty, KAFKA-4925)",
           applies_to=when("initial-delayed-join"))
def initial_join_from_empty(s: State) -> Witness | None:
    if s.join_op != INITIAL_JOIN:
        return None
    return _first(s, lambda i: s.slots[i].status == MEMBER and not (s.slots[i].is_new and s.slots[i].awaiting_join),
                  join_op=s.join_op)


@invariant("model-initial-join-extends-only-in-generation-0",
           claim="An InitialDelayedJoin can be extended (newMemberAdded set) only while the group has never "
                 "completed a rebalance (generation 0).",
           source="SPEC.md §4.5 (newMemberAdded is only set at generation 0, so an Empty group that has "
                  "rebalanced before waits exactly D once); not 4.x, where a rebalance from Empty at any generation "
                  "extends for new members (GroupMetadataManager.java@4.1.1:6819-6822) and State.fresh means that",
           applies_to=all_of(when("initial-delayed-join"), unless("new-member-added-in-initial-rebalance")))
def initial_join_extends_only_at_generation_0(s: State) -> Witness | None:
    if s.join_op == INITIAL_JOIN and s.new_member_added and not s.fresh:
        return {"join_op": s.join_op, "new_member_added": True, "generation_0": False}
    return None


@invariant("model-delayed-sync-armed-only-after-join",
           claim="A DelayedSync is armed only while the group is CompletingRebalance or Stable.",
           source="SPEC.md §4.8 (KAFKA-12890)", applies_to=when("delayed-sync"))
def delayed_sync_after_join(s: State) -> Witness | None:
    return {"sync_op": True, "group": s.group} if s.sync_op and s.group not in (COMPLETING, STABLE) else None


@invariant("model-pending-sync-only-for-members-after-join",
           claim="Only a member is in pendingSyncMembers, and only while the group is CompletingRebalance or Stable.",
           source="SPEC.md §4.8 (KAFKA-12890)", applies_to=when("delayed-sync"))
def pending_sync_after_join(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].pending_sync
                  and (s.slots[i].status != MEMBER or s.group not in (COMPLETING, STABLE)))


@invariant("model-new-member-is-awaiting-join",
           claim="A member flagged isNew has a parked JoinGroup (isNew is cleared with its join response).",
           source="SPEC.md §2 (isNew, KAFKA-7610), §4.4")
def new_member_awaits_join(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].is_new and not (s.slots[i].status == MEMBER and s.slots[i].awaiting_join))


@invariant("model-current-append-only-in-completing-rebalance",
           claim="A pending log append whose store callback would act exists only while the group is "
                 "CompletingRebalance.", source="SPEC.md §5.2 (the store callback's generation/state guard)")
def current_append_in_completing(s: State) -> Witness | None:
    if APPEND_CURRENT in s.appends and s.group != COMPLETING:
        return {"appends": list(s.appends), "group": s.group}
    return None


# -- profile features ----------------------------------------------------------------------------
@invariant("model-no-pending-member-before-kip-394",
           claim="A 0.10.0 group never has a pending member id.", source="SPEC.md §2 (pendingMembers, KIP-394, 2.2)",
           applies_to=unless("pending-members"))
def no_pending_before_kip_394(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].status == PENDING)


@invariant("model-no-delayed-sync-before-kafka-12890",
           claim="A 0.10.0 group never arms a DelayedSync nor keeps pendingSyncMembers.",
           source="SPEC.md §4.8 (KAFKA-12890, 2.8.1/3.0)",
           applies_to=unless("delayed-sync"))
def no_delayed_sync_before_12890(s: State) -> Witness | None:
    if s.sync_op:
        return {"sync_op": True, "group": s.group}
    return _first(s, lambda i: s.slots[i].pending_sync)


@invariant("model-no-initial-delayed-join-before-kafka-4925",
           claim="A 0.10.0 group never arms an InitialDelayedJoin.", source="SPEC.md §4.5 (KAFKA-4925, 0.11.0)",
           applies_to=unless("initial-delayed-join"))
def no_initial_join_before_4925(s: State) -> Witness | None:
    return {"join_op": s.join_op, "group": s.group} if s.join_op == INITIAL_JOIN else None


@invariant("model-no-empty-group-before-0-10-1",
           claim="A 0.10.0 group is never Empty: a rebalance that ends with no members removes the group.",
           source="SPEC.md §1.2 (0.9/0.10.0 column: no Empty state; the group becomes Dead)",
           applies_to=unless("empty-state"))
def no_empty_before_0_10_1(s: State) -> Witness | None:
    return {"group": s.group} if s.group == EMPTY else None


# -- liveness watches (I9 in its abstract form) ---------------------------------------------------
@invariant("model-idle-member-has-liveness-watch",
           claim="Every member that is neither awaiting join nor awaiting sync has a live heartbeat expiration.",
           source="SPEC.md §1.5 I9, §4.6")
def idle_member_watched(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].status == MEMBER and not s.slots[i].awaiting_join
                  and not s.slots[i].awaiting_sync and s.slots[i].watch == 0)


@invariant("model-at-most-one-liveness-op-per-slot",
           claim="At any time a member identity has at most one live DelayedHeartbeat.",
           source="seed 000 (在任何时刻,消费者在延迟缓存中的延迟心跳只有一个); SPEC.md §4.6, §2 (0.10.0 strict '>')")
def one_watch(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].watch > 1, live_ops="2 or more")


@invariant("model-pending-member-has-expiration",
           claim="Every pending member id has a live pending-member expiration.", source="SPEC.md §4.7 (KIP-394)",
           applies_to=when("pending-members"))
def pending_member_watched(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].status == PENDING and s.slots[i].watch == 0)


@invariant("model-removed-member-leaves-no-liveness-op",
           claim="No liveness op outlives its member: a slot that is neither a member nor pending has none.",
           source="SPEC.md §4.6, KAFKA-7196 (removal completes the member's heartbeat op)")
def no_orphan_watch(s: State) -> Witness | None:
    return _first(s, lambda i: s.slots[i].status == ABSENT and s.slots[i].watch > 0)


# -- the proof's bookkeeping -----------------------------------------------------------------------
def _per_profile(rows: tuple[tuple[str, Predicate, str], ...]) -> Mapping[tuple[str, str], str]:
    """(property, profile) -> why, for every modelled profile where the row's release predicate holds."""
    return MappingProxyType({(name, p): why for name, applies, why in rows for p in MODELLED if applies(p)})


#: claims added because the inductive proof needs them (each is also a protocol fact with a source):
#: without one of them some other claim is not inductive (pinned per profile by tests/test_z3_prove.py)
STRENGTHENING: Mapping[tuple[str, str], str] = _per_profile((
    ("model-absent-group-has-no-slot-in-use", when("empty-state"),
     "rules out a member of a group that does not exist (its JoinGroup would park outside PreparingRebalance)"),
    ("model-no-empty-group-before-0-10-1", unless("empty-state"),
     "rules out a JoinGroup/new into an Empty group, which would park a join outside PreparingRebalance"),
    ("model-at-most-one-liveness-op-per-slot", all_of(when("pending-members"), when("heartbeat-satisfied-flag")),
     "rules out a pending id with two expirations, one of which would outlive it"),
))

#: (property, profile) pairs that do not hold in the reachable graph: reported, never proved
FINDINGS: Mapping[tuple[str, str], str] = _per_profile((
    ("model-removed-member-leaves-no-liveness-op", unless("removal-completes-heartbeat"),
     "KAFKA-7196 (fixed in 2.1.0): removing a member does not complete its DelayedHeartbeat, so a member "
     "removed by a join that it missed keeps a live expiration that later runs onMemberFailure"),
    ("model-initial-join-extends-only-in-generation-0",
     all_of(when("initial-delayed-join"), unless("new-member-added-in-initial-rebalance")),
     "newMemberAdded is cleared only when an InitialDelayedJoin extends; one that completes with no time "
     "left (remaining = 0) leaves it set, the flag survives the new generation, and when the group later "
     "empties and a member joins, the next InitialDelayedJoin (generation > 0) sees the stale flag and may "
     "extend once — SPEC.md §4.5's derived 'waits exactly D once' does not hold in the model"),
    ("model-idle-member-has-liveness-watch",
     all_of(when("new-member-checked-first"), unless("heartbeat-satisfied-flag")),
     "KAFKA-9232 (2.4.1) tests isNew first with latestHeartbeat + 300000 > deadline, and onCompleteJoin reschedules "
     "with the session timeout *before* clearing isNew (SPEC.md §4.4 step 5): the new op completes at birth, so a "
     "member that got its join response has no live expiration until its next liveness event (fixed by KAFKA-9752's "
     "heartbeatSatisfied flag in 2.5.0)"),
    ("model-removed-member-leaves-no-liveness-op", all_of(when("removal-completes-heartbeat"),
                                                          unless("heartbeat-satisfied-flag")),
     "deadline arithmetic after KAFKA-7196: a member removed by its heartbeat expiry keeps the other op armed in the "
     "same millisecond (strict '>'); removeMemberAndUpdateGroup does not complete it, and it later expires idly "
     "(2.4.0+: the member is looked up and missing, SPEC.md §2 note)"),
    ("model-at-most-one-liveness-op-per-slot", unless("heartbeat-satisfied-flag"),
     "deadline arithmetic before KAFKA-9752 (SPEC.md §2): a reschedule in the same millisecond as the previous "
     "one leaves the older DelayedHeartbeat live (its deadline is not strictly passed), so a member can hold two"),
))


def abstract_invariants(profile: str) -> tuple[Property, ...]:
    """The abstract state invariants of the catalog that apply to ``profile``, in catalog order."""
    return for_profile(profile, level="abstract", kind="always")

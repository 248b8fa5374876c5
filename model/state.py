"""The abstract protocol state: a group, its member slots and its delayed operations (core only).

A *slot* stands for one member identity (a member id, or a pending KIP-394 id). Slots are
interchangeable, so a state is kept in canonical form — slots sorted — which is the model's
symmetry reduction. Time is abstracted away: timers are "may expire" actions guarded by flags,
and the generation is abstracted to the relation an append has with it ("current" or "stale").
"""
from __future__ import annotations

from dataclasses import dataclass, replace

# group states; "Absent" = no group object in the coordinator's cache (never created, or E0's
# emptied group that died and was removed)
ABSENT_GROUP, EMPTY, PREPARING, COMPLETING, STABLE = (
    "Absent", "Empty", "PreparingRebalance", "CompletingRebalance", "Stable")
GROUP_STATES = (ABSENT_GROUP, EMPTY, PREPARING, COMPLETING, STABLE)

# slot status
ABSENT, PENDING, MEMBER = 0, 1, 2
# delayed join operation in the Rebalance purgatory
NO_JOIN, JOIN, INITIAL_JOIN = "none", "join", "initial"
# kinds of a pending log append: the leader's assignment for the current generation (its callback
# would act), one whose generation/state moved on (the guard makes it a no-op), an empty-group record
APPEND_CURRENT, APPEND_STALE, APPEND_EMPTY = "current", "stale", "empty"
#: a static member's id replacement stored in Stable (2.6.1+, SPEC.md §3.1 J5a step 4): its callback has no guard
APPEND_STATIC = "static"
#: a static append of a group object that left the cache: its callback still answers the JoinGroup that object
#: had parked (an unload does not answer joins parked outside PreparingRebalance, §3.7) — or nothing
APPEND_ORPHAN = "orphan"
#: live liveness ops per slot are counted 0, 1, or MANY (2 = "two or more"; only E0 gets there)
MANY = 2


@dataclass(frozen=True, slots=True, order=True)
class Slot:
    """One member identity. ``watch`` counts its live DelayedHeartbeat ops (the liveness watch)."""

    status: int = ABSENT
    leader: bool = False
    awaiting_join: bool = False    # a JoinGroup is parked
    awaiting_sync: bool = False    # a SyncGroup is parked
    is_new: bool = False           # added in this rebalance, no join response yet (KAFKA-7610)
    pending_sync: bool = False     # in pendingSyncMembers (DelayedSync, 3.0+)
    watch: int = 0
    static: bool = False           # a group.instance.id maps to this member (KIP-345; the map is injective, §1.5 I4)
    persist: bool = False          # a static append of its current member id awaits its store callback (2.6.1+)

    @property
    def member(self) -> bool:
        return self.status == MEMBER

    def short(self) -> str:
        if self.status == ABSENT and not self.watch and not self.pending_sync:
            return "-"
        flags = "".join(c for c, on in (("L", self.leader), ("J", self.awaiting_join), ("S", self.awaiting_sync),
                                         ("N", self.is_new), ("Y", self.pending_sync), ("I", self.static),
                                         ("P", self.persist)) if on)
        return f"{'-PM'[self.status]}{flags}{'w' * self.watch}"


FREE = Slot()


@dataclass(frozen=True, slots=True)
class State:
    group: str = ABSENT_GROUP
    join_op: str = NO_JOIN
    sync_op: bool = False          # a DelayedSync is armed
    appends: tuple[str, ...] = ()  # pending log appends, oldest first
    fresh: bool = True             # generation 0: InitialDelayedJoin may extend only then
    new_member_added: bool = False
    slots: tuple[Slot, ...] = ()

    # -- derived -------------------------------------------------------------------------------
    @property
    def members(self) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self.slots) if s.status == MEMBER)

    @property
    def pending(self) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self.slots) if s.status == PENDING)

    @property
    def leader(self) -> int:
        return next((i for i, s in enumerate(self.slots) if s.leader), -1)

    def canonical(self) -> "State":
        """Symmetry reduction: slots are interchangeable, so sort them."""
        return replace(self, slots=tuple(sorted(self.slots, reverse=True)))

    def short(self) -> str:
        """One line: group, ops, appends and the slots, e.g. 'Stable join=none sync=0 [] ML w|M w'."""
        ops = f"join={self.join_op} sync={int(self.sync_op)}" + (" nma" if self.new_member_added else "")
        fresh = " gen0" if self.fresh else ""
        slots = " ".join(s.short() for s in self.slots)
        return f"{self.group}{fresh} {ops} appends={list(self.appends)} slots=[{slots}]"


@dataclass(frozen=True, slots=True)
class Scope:
    """How big a world the graph covers."""

    members: int = 2                 # number of member slots
    deferred_appends: bool = True    # log appends complete later (CompleteAppend actions)
    initial_delay: bool = True       # group.initial.rebalance.delay.ms > 0 (3.9)
    max_appends: int = 2             # the graph does not grow more pending appends than this
    unload: bool = False             # partition emigration/immigration (UnloadGroup, LoadGroup)
    static: bool = False             # static members (KIP-345): instance joins, restarts, fencing — releases 2.3+
    max_size: int = 0                # group.max.size (2.2.0+, SPEC.md §3.1 J4); 0: unbounded (Int.MaxValue)

    def __post_init__(self) -> None:
        if not 1 <= self.members <= 64:
            raise ValueError(f"a scope needs 1 to 64 member slots, got {self.members}.")
        if self.max_appends < 0:
            raise ValueError("max_appends must be >= 0.")
        if self.max_size < 0:
            raise ValueError("max_size must be >= 0 (0: unbounded).")


def padded(state: State, members: int) -> State:
    """The same state with free slots added up to ``members`` slots."""
    extra = members - len(state.slots)
    return state if extra <= 0 else replace(state, slots=state.slots + (FREE,) * extra).canonical()


def initial(scope: Scope) -> State:
    return State(slots=(FREE,) * scope.members)


@dataclass(frozen=True, slots=True, order=True)
class AbstractAction:
    """One abstract step; ``slot`` is -1 for group-level actions, ``arg`` the append outcome."""

    kind: str
    slot: int = -1
    arg: str = ""

    def __str__(self) -> str:
        return self.kind + (f"({self.slot})" if self.slot >= 0 else "") + (f"[{self.arg}]" if self.arg else "")

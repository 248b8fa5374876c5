"""The coordinator's rules at the abstract level: liveness, the join phase, new generations.

Every rule maps a working copy to the list of possible outcomes. Nondeterminism stands for what the
abstraction hides: which remaining member becomes leader (Kafka: "any"), whether a reschedule
falls in the same millisecond as the previous one (E0 deadline arithmetic), whether an
InitialDelayedJoin still has time to extend. Requests that the coordinator answers with an
error and no state change (stale generation, unknown member) are stutters and are not actions.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from model.outputs import (CURRENT, ERROR_NO_ID, FOLLOWER, FROM_NONE, HEARTBEAT_OP, INITIAL, INITIAL_JOIN_OP, JOIN_OP,
                           LEADER_LIST, NEW, NEW_MEMBER, NONE_GEN, PENDING_OP, REBALANCE, SESSION, SYNC_OP,
                           WRITE_ASSIGNMENT, WRITE_EMPTY, WRITE_STATIC, WRITE_TOMBSTONE, Answer, Arm, Outputs, Write)
from model.profiles import ModelProfile
from model.state import (ABSENT_GROUP, APPEND_CURRENT, APPEND_EMPTY, APPEND_STALE, COMPLETING, EMPTY, FREE,
                         INITIAL_JOIN, JOIN, MANY, MEMBER, NO_JOIN, PENDING, PREPARING, Scope, Slot, State)


@dataclass
class W:
    """A mutable working copy of a State while one action is applied."""

    group: str
    join_op: str
    sync_op: bool
    appends: list[str]
    fresh: bool
    nma: bool
    slots: list[Slot] = field(default_factory=list)
    deferred: bool = True       # the scope's log appends complete later
    initial_delay: bool = True  # group.initial.rebalance.delay.ms > 0
    answers: list[Answer] = field(default_factory=list)   # what this step answered so far (model/outputs.py)
    arms: list[Arm] = field(default_factory=list)         # the timers it armed that are still armed
    detail: str = ""            # CompleteAppend: the raw append error the store callback maps
    static: bool = False        # the scope has static members (a load may bring static members back)
    max_size: int = 0           # group.max.size (0: unbounded)
    writes: list[Write] = field(default_factory=list)     # the group records this step appends (model/outputs.py)

    @staticmethod
    def of(s: State, scope: Scope) -> "W":
        return W(s.group, s.join_op, s.sync_op, list(s.appends), s.fresh, s.new_member_added, list(s.slots),
                 scope.deferred_appends, scope.initial_delay, static=scope.static, max_size=scope.max_size)

    def copy(self) -> "W":
        return W(self.group, self.join_op, self.sync_op, list(self.appends), self.fresh, self.nma, list(self.slots),
                 self.deferred, self.initial_delay, list(self.answers), list(self.arms), self.detail, self.static,
                 self.max_size, list(self.writes))

    def died(self) -> "W":
        """The group object left the cache: no group, free slots; what the step said so far is kept."""
        return W(ABSENT_GROUP, NO_JOIN, False, list(self.appends), True, False, [FREE] * len(self.slots),
                 self.deferred, self.initial_delay, self.answers, [], self.detail, self.static, self.max_size,
                 self.writes)

    def write(self, kind: str, generation: str = CURRENT, assignments: str = FROM_NONE) -> "W":
        """A group record is appended now, listing the group's members as they are (SPEC.md §3.7)."""
        members = tuple(self.members()) if kind in (WRITE_ASSIGNMENT, WRITE_STATIC) else ()
        leader = next((i for i in members if self.slots[i].leader), -1)
        statics = tuple(i for i in members if self.slots[i].static)
        self.writes.append(Write(kind, members, leader, statics, generation, assignments))
        return self

    def answer(self, i: int, api: str, error: str, generation: str = "-", shape: str = "-") -> "W":
        self.answers.append(Answer(i, api, error, generation, shape))
        return self

    def arm(self, op: str, i: int, source: str) -> "W":
        self.arms.append(Arm(op, i, source))
        return self

    def disarm(self, op: str, i: int = -1) -> "W":
        """Ops armed earlier in this step complete (or are cancelled) before the step ends."""
        self.arms = [a for a in self.arms if not (a.op == op and a.slot == i)]
        return self

    def outputs(self) -> Outputs:
        return Outputs(tuple(sorted(self.answers)), tuple(sorted(self.arms)))

    def set(self, i: int, **kw: object) -> "W":
        self.slots[i] = replace(self.slots[i], **kw)   # type: ignore[arg-type]
        return self

    def members(self) -> list[int]:
        return [i for i, s in enumerate(self.slots) if s.status == MEMBER]

    def freeze(self, canonical: bool = True) -> State:
        """The successor; ``canonical=False`` keeps slot positions (slot i is the pre-state's slot i)."""
        state = State(self.group, self.join_op, self.sync_op, tuple(self.appends), self.fresh, self.nma,
                      tuple(self.slots))
        return state.canonical() if canonical else state

    def leave_completing(self) -> None:
        """The store callback's guard fails from now on: appends of this generation become no-ops."""
        self.appends = [APPEND_STALE if a == APPEND_CURRENT else a for a in self.appends]


Ws = list[W]


def each(ws: Ws, fn: Callable[[W], Ws]) -> Ws:
    return [y for x in ws for y in fn(x)]


# -- liveness ------------------------------------------------------------------------------------
def reschedule(p: ModelProfile, w: W, i: int, source: str = SESSION) -> Ws:
    """completeAndScheduleNextHeartbeatExpiration (SPEC.md §4.6); the new op's delay is ``source``."""
    s = w.slots[i]
    awaiting = s.awaiting_join or s.awaiting_sync
    if p.keyed_timers:     # 4.x (SPEC-4x.md R1): the member's key gets a new task, which replaces the old one; no
        # task completes at birth — its firing asks the member as it is then (GroupMetadataManager.java@4.1.1:7061-7074)
        return [w.disarm(HEARTBEAT_OP, i).arm(HEARTBEAT_OP, i, source).set(i, watch=1)]
    if p.satisfied_flag:   # old ops complete; the new one completes at birth for an awaiting, not-new member
        w.disarm(HEARTBEAT_OP, i)
        survives = s.is_new or not awaiting
        if survives:
            w.arm(HEARTBEAT_OP, i, source)
        return [w.set(i, watch=1 if survives else 0)]
    if p.new_member_first and s.is_new:
        return _reschedule_new(w, i, source)
    if awaiting:           # deadline arithmetic: keep-alive holds, so old ops and the new op all complete
        return [w.disarm(HEARTBEAT_OP, i).set(i, watch=0)]
    if not s.watch:
        return [w.arm(HEARTBEAT_OP, i, source).set(i, watch=1)]
    # E0: older ops complete unless this falls in their millisecond (strict '>', SPEC.md §2)
    return [w.copy().disarm(HEARTBEAT_OP, i).arm(HEARTBEAT_OP, i, source).set(i, watch=1),
            w.arm(HEARTBEAT_OP, i, source).set(i, watch=min(s.watch + 1, MANY))]


def _reschedule_new(w: W, i: int, source: str) -> Ws:
    """2.4.1 (KAFKA-9232, SPEC.md §2): a new member is kept ⇔ latestHeartbeat + new-member timeout > deadline.

    Adding it arms the 5-minute op (an earlier op of the slot is its pending-member op, which completes now that
    the id is a member). A session-delay reschedule while it is still new (a heartbeat or commit in
    PreparingRebalance, or onCompleteJoin before isNew is cleared, §4.4 step 5) completes the 5-minute op — unless
    that was armed in this same millisecond — and its own op completes at birth (session < 5 minutes)."""
    if source == NEW_MEMBER:
        return [w.disarm(HEARTBEAT_OP, i).arm(HEARTBEAT_OP, i, source).set(i, watch=1)]
    if not w.slots[i].watch:
        return [w.disarm(HEARTBEAT_OP, i).set(i, watch=0)]
    return [w.copy().disarm(HEARTBEAT_OP, i).set(i, watch=0), w]


def remove(p: ModelProfile, w: W, i: int, complete_ops: bool) -> Ws:
    """group.remove: the slot empties; a removed leader is replaced by any remaining member.

    removeMemberAndUpdateGroup answers a parked JoinGroup UNKNOWN_MEMBER_ID with member id "" [2.2.0+,
    SPEC.md §3.4]; a parked SyncGroup of the removed member is never answered."""
    was_leader = w.slots[i].leader
    if w.slots[i].awaiting_join and p.removal_answers_parked_join:
        w.answer(i, "JoinGroup", "UNKNOWN_MEMBER_ID", NONE_GEN, ERROR_NO_ID)
    if complete_ops:
        w.disarm(HEARTBEAT_OP, i)
    w.slots[i] = replace(FREE, watch=0 if complete_ops else w.slots[i].watch)
    if not was_leader:
        return [w]
    others = w.members()
    return [w.copy().set(j, leader=True) for j in others] or [w]


# -- the join phase ------------------------------------------------------------------------------
def add_member(p: ModelProfile, w: W, i: int) -> Ws:
    """addMemberAndRebalance (SPEC.md §3.1)."""
    if w.group == PREPARING and w.fresh and p.initial_delay:
        w.nma = True
    if w.slots[i].status == PENDING:      # the pending-member op completes once the id is a member (§4.7)
        w.disarm(PENDING_OP, i)
    w.set(i, status=MEMBER, awaiting_join=True, is_new=p.new_member_timeout,
          leader=not w.members(), watch=w.slots[i].watch)
    ws = reschedule(p, w, i, NEW_MEMBER) if p.new_member_timeout else [w.set(i, watch=0)]
    return each(ws, lambda x: maybe_prepare(p, x))


def maybe_prepare(p: ModelProfile, w: W) -> Ws:
    return prepare(p, w) if p.can_rebalance(w.group) else [w]


def prepare(p: ModelProfile, w: W) -> Ws:
    """prepareRebalance: parked SyncGroups get REBALANCE_IN_PROGRESS; a DelayedJoin is armed and tried."""
    ws = [w]
    if w.group == COMPLETING:
        w.leave_completing()
        for i in w.members():
            if w.slots[i].awaiting_sync:   # parked SyncGroups get REBALANCE_IN_PROGRESS (SPEC.md §3.1)
                ws = each(ws, lambda x, i=i: reschedule(
                    p, x.answer(i, "SyncGroup", "REBALANCE_IN_PROGRESS").set(i, awaiting_sync=False), i))
    return each(ws, lambda x: _arm_join(p, x))


def _arm_join(p: ModelProfile, w: W) -> Ws:
    initial = w.group == EMPTY and p.initial_delay
    if p.fresh_is_initial_rebalance:   # 4.x: new members may extend this rebalance iff it started from Empty
        w.fresh = initial
    if p.delayed_sync:
        w.sync_op = False
        w.disarm(SYNC_OP)
        w.slots = [replace(s, pending_sync=False) for s in w.slots]
    w.group = PREPARING
    # 4.x (SPEC-4x.md R1): a task of delay 0 is still a keyed task whose event runs later (GMM@4.1.1 prepareRebalance
    # schedules the initial-delay task whatever group.initial.rebalance.delay.ms is), never at creation
    if initial and (w.initial_delay or p.keyed_timers):
        w.join_op = INITIAL_JOIN
        w.arm(INITIAL_JOIN_OP, -1, INITIAL)
        return [w]
    if initial:   # a zero delay fires at creation; an extension of delay 0 fires too, then the join completes
        w.nma = False
        return complete_join(p, w)
    w.join_op = JOIN
    w.arm(JOIN_OP, -1, REBALANCE)
    if not w.members() and not p.keyed_timers:   # the rebalance timeout of no members is 0: the op fires at creation
        return complete_join(p, w)   # (4.x: a delay-0 task waits for its event; the join check decides now, R1)
    return check_join(p, w)


def _all_joined(p: ModelProfile, w: W) -> bool:
    joined = all(w.slots[i].awaiting_join for i in w.members())
    return joined and not (p.pending_members and any(s.status == PENDING for s in w.slots))


def check_join(p: ModelProfile, w: W, expiry: bool = False) -> Ws:
    """checkAndComplete(GroupJoinKey): a DelayedJoin completes once every member rejoined (``expiry``: the check after
    a removal by session expiry, which on 4.x completes an initial-delay join too)."""
    ops = (JOIN, INITIAL_JOIN) if expiry and p.expiry_completes_initial_join else (JOIN,)
    if w.group == PREPARING and w.join_op in ops and _all_joined(p, w):
        return complete_join(p, w)
    return [w]


def complete_join(p: ModelProfile, w: W) -> Ws:
    """onCompleteJoin (SPEC.md §4.4): remove the dynamic members that did not rejoin (step 1: static ones stay,
    2.3+), elect a joined leader (step 3), then a new generation."""
    w.join_op = NO_JOIN
    w.disarm(JOIN_OP).disarm(INITIAL_JOIN_OP)
    ws = [w]
    for i in [i for i in w.members() if not w.slots[i].awaiting_join and not w.slots[i].static]:
        ws = each(ws, lambda x, i=i: remove(p, x, i, complete_ops=p.removal_completes_ops))
    return each(each(ws, _elect_joined_leader), lambda x: _next_generation(p, x) if x.join_op == NO_JOIN else [x])


def _elect_joined_leader(w: W) -> Ws:
    """maybeElectNewJoinedLeader (SPEC.md §4.4 step 3): a leader that did not rejoin (a static member) hands over
    to any member awaiting join; with none, a new DelayedJoin of the rebalance timeout waits for the static
    members that did not rejoin (the group stays PreparingRebalance, same generation)."""
    members = w.members()
    leader = next((i for i in members if w.slots[i].leader), -1)
    if not members or leader < 0 or w.slots[leader].awaiting_join:
        return [w]
    joined = [i for i in members if w.slots[i].awaiting_join]
    if not joined:
        w.join_op = JOIN
        w.arm(JOIN_OP, -1, REBALANCE)
        return [w]
    return [w.copy().set(leader, leader=False).set(j, leader=True) for j in joined]


def _next_generation(p: ModelProfile, w: W) -> Ws:
    w.leave_completing()
    w.fresh = False
    members = w.members()
    if not members and p.emptied_group_dies:   # E0: the group dies and leaves the cache
        # the dead group's ops are inert from now on: its slots' watches are no longer this group's
        return [w.write(WRITE_TOMBSTONE, NEW).died()]
    if not members:
        w.group = EMPTY
        w.write(WRITE_EMPTY, NEW)            # the empty-group record; its callback only logs
        if w.deferred:
            w.appends.append(APPEND_EMPTY)
        return [w]
    w.group = COMPLETING
    ws = [w]
    for i in members:
        ws = each(ws, lambda x, i=i: _answer_join(p, x, i))
    if p.delayed_sync:
        for x in ws:
            x.sync_op = True
            x.arm(SYNC_OP, -1, REBALANCE)
    return ws


def _answer_join(p: ModelProfile, w: W, i: int) -> Ws:
    """Join response (static members that did not rejoin get none), then reschedule with the session timeout,
    then clear isNew (that order, SPEC.md §4.4 step 5)."""
    if w.slots[i].awaiting_join:
        w.answer(i, "JoinGroup", "NONE", NEW, LEADER_LIST if w.slots[i].leader else FOLLOWER)
    w.set(i, awaiting_join=False, pending_sync=p.delayed_sync)
    return [x.set(i, is_new=False) for x in reschedule(p, w, i)]


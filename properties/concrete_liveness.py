"""Bounded liveness (kind "eventually_within") as monitors over the clock.

Every bound is derived from the timeouts in scope and checked the same way: an obligation (a rebalance
to end, a silent member to go, a parked request to be answered) that is still open at a step where the
clock moves on from a time *after* its bound is a violation. The world never moves the clock while a
timer is due (bounded lateness), so a coordinator whose timers have the right deadlines and do their
job is never caught; the world may jump the clock past a deadline, so lateness of the firings that
chain a phase (InitialDelayedJoin) is added to the bound. "Assuming time advances": a run that stops
moving the clock never violates these.
"""
from __future__ import annotations

from core.events import HeartbeatScheduled, of_kind
from core.trace import Step
from core.types import GroupState
from model.releases import any_of, fact, unless, when
from properties.catalog import Monitor, Witness, eventually_within
from properties.concrete_state import JOIN_OPS, live_group, unwatched_static_excused
from properties.observation import GroupObs, Observation

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


#: actions that only move the clock (the coordinator does nothing in them)
CLOCK_KINDS = frozenset({"AdvanceClock", "AdvanceToNextDeadline"})


def clock_moves(step: Step) -> bool:
    return step.action.kind in CLOCK_KINDS


def join_phase_total(after: Observation, g: GroupObs, from_empty: bool) -> int:
    """SPEC.md §4.9: the join phase lasts at most max(session (0.10.0) / rebalance (3.9) timeout) of the
    members when it starts; from Empty (3.9, InitialDelayedJoin §4.5) at most max(initial delay, that)."""
    if not fact("rebalance-timeout", after.profile):   # E0: max session timeout (before KIP-62)
        return max((m.session_timeout_ms for m in g.members), default=0)
    longest = max((m.rebalance_timeout_ms for m in g.members), default=0)
    initial = from_empty and fact("initial-delayed-join", after.profile)
    return max(after.initial_rebalance_delay_ms, longest) if initial else longest


class JoinPhaseClock:
    """When the cached group entered PreparingRebalance, its bound, and the lateness of its firings."""

    def __init__(self) -> None:
        self.entries: dict[int, list[int]] = {}   # incarnation -> [entered_at, total_ms, lateness_ms]

    def bound(self, incarnation: int) -> int | None:
        e = self.entries.get(incarnation)
        return None if e is None else e[0] + e[1] + e[2]

    def update(self, before: Observation, step: Step, after: Observation) -> None:
        retried = False
        if step.action.kind == "FireTimer" and isinstance(step.action.arg, int):
            op = before.op(step.action.arg)
            if op is not None and op.kind in JOIN_OPS and op.incarnation in self.entries:
                self.entries[op.incarnation][2] += before.time_ms - op.deadline_ms
            # §4.4 step 3 (static members, 2.3+): no joined leader can be elected, so a new DelayedJoin of the
            # current rebalance timeout waits again — the join phase starts over
            retried = (op is not None and op.kind == "DelayedJoin" and after.group is not None
                       and after.group.incarnation == op.incarnation and after.group.state is PR)
        g = after.group
        if g is None or g.state is not PR:
            self.entries.clear()
            return
        entries = [frm for gid, frm, to in after.transitions if gid == g.group_id and to == PR.value]
        if entries or retried or g.incarnation not in self.entries:
            self.entries = {g.incarnation: [after.time_ms, join_phase_total(after, g, entries[-1:] == [E.value]), 0]}
        else:
            self.entries = {g.incarnation: self.entries[g.incarnation]}


@eventually_within("rebalance-ends-within-its-delayed-join-timeout",
                   claim="Once a rebalance starts, the group leaves PreparingRebalance within the rebalance timeout "
                         "(max over the members at the start of their session timeouts on 0.10.0, rebalance timeouts "
                         "on 3.9; from Empty on 3.9 max(group.initial.rebalance.delay.ms, that)) plus 1 ms per "
                         "firing for the strict timer rule (deadline < now), assuming time advances.",
                   source="seed 000 (从创建延迟操作,经过了“再平衡操作超时时间”之后,延迟操作会被强制完成); "
                          "SPEC.md §4.4, "
                          "§4.5 (total ≤ max(D, rebalance timeout)), §4.9; DESIGN.md §4 MockTimer rule")
class RebalanceEnds(Monitor):
    def reset(self) -> None:
        self.clock = JoinPhaseClock()

    def _observe(self, before: Observation, step: Step, after: Observation) -> Witness | None:
        found = None
        g = before.group
        if clock_moves(step) and g is not None and g.state is PR:
            bound = self.clock.bound(g.incarnation)
            if bound is not None and before.time_ms > bound:
                e = self.clock.entries[g.incarnation]
                found = {"group": g.incarnation, "state": g.state.value, "entered_at": e[0], "timeout_ms": e[1],
                         "lateness_ms": e[2], "bound_at": bound, "now": before.time_ms, "clock_to": after.time_ms,
                         "live_delayed_joins": [(op.seq, op.deadline_ms)
                                                for op in before.ops_of(g.incarnation, JOIN_OPS)]}
        self.clock.update(before, step, after)
        return found


class DeadlineBook:
    """When each member's last liveness event happened and the deadline it implies — derived from the member's
    timeouts (session, or the new-member timeout while isNew), not from the deadline the coordinator logged."""

    def __init__(self) -> None:
        self.deadlines: dict[str, int] = {}

    def update(self, step: Step, after: Observation) -> None:
        g = after.group
        for _, e in of_kind(step.events, HeartbeatScheduled):
            member = g.member(e.member_id) if g is not None else None
            if member is not None:
                timeout = after.new_member_join_timeout_ms if member.is_new else member.session_timeout_ms
                self.deadlines[member.member_id] = after.time_ms + timeout


@eventually_within("silent-member-is-removed-within-its-session-timeout",
                   claim="A member with no parked JoinGroup or SyncGroup whose last liveness event (a heartbeat "
                         "reschedule) was at time t is gone by t + its session timeout (+ 5 min instead while a 3.9 "
                         "member isNew) + 1 ms, assuming time advances.",
                   source="seed 000/004 (如果没有在截止时间内再次执行调度方法, 延迟缓存中的延迟心跳就会超时, "
                          "对应的消费者就有可能被协调者从消费组中移除); SPEC.md §2 predicates, §4.6",
                   # 2.4.1 keeps a silent member past its join response (finding no-liveness-op-after-the-join-response)
                   applies_to=any_of(unless("new-member-checked-first"), when("heartbeat-satisfied-flag")))
class SilentMemberRemoved(Monitor):
    def reset(self) -> None:
        self.book = DeadlineBook()

    def _observe(self, before: Observation, step: Step, after: Observation) -> Witness | None:
        found = None
        g = live_group(before)
        if clock_moves(step) and g is not None:
            for m in g.members:
                deadline = self.book.deadlines.get(m.member_id)
                if not m.awaiting and deadline is not None and before.time_ms > deadline \
                        and not unwatched_static_excused(before, m):
                    found = {"member": m.member_id, "awaiting_join": False, "awaiting_sync": False,
                             "last_deadline": deadline, "session_timeout_ms": m.session_timeout_ms,
                             "now": before.time_ms, "clock_to": after.time_ms, "state": g.state.value}
                    break
        self.book.update(step, after)
        return found


class SyncPhaseClock:
    """3.9: when the cached group entered CompletingRebalance (per generation) and the DelayedSync bound."""

    def __init__(self) -> None:
        self.entries: dict[tuple[int, int], tuple[int, int]] = {}   # (incarnation, generation) -> (at, total)

    def update(self, after: Observation) -> None:
        g = after.group
        if g is None or g.state is not CR:
            self.entries.clear()
            return
        key = (g.incarnation, g.generation_id)
        # KAFKA-12890: DelayedSync delay = the group's rebalance timeout when the join phase completed
        entry = self.entries.get(key) or (after.time_ms, max((m.rebalance_timeout_ms for m in g.members), default=0))
        self.entries = {key: entry}


@eventually_within("parked-request-is-answered-within-its-phase-bound",
                   claim="A parked JoinGroup is answered by the end of its join phase (the rebalance bound above); a "
                         "parked SyncGroup within the rebalance timeout from the join response on 3.9 (DelayedSync) "
                         "and by the earliest heartbeat deadline of a member that has not synced on 0.10.0 — unless "
                         "every member has synced and the leader's assignment append is still pending.",
                   source="SPEC.md §4.9 (join and sync phase bounds), §4.8 (DelayedSync), §3.2/§5.2 (the append "
                          "callback answers parked SyncGroups); seed 004 (协调者处理同步组请求)",
                   # 2.4.1: a member that has not synced has no session expiration to end the sync phase (finding
                   # no-liveness-op-after-the-join-response)
                   applies_to=any_of(unless("new-member-checked-first"), when("heartbeat-satisfied-flag")))
class ParkedRequestAnswered(Monitor):
    def reset(self) -> None:
        self.join = JoinPhaseClock()
        self.sync = SyncPhaseClock()
        self.book = DeadlineBook()

    def _sync_bound(self, before: Observation, g: GroupObs) -> int | None:
        appending = any(a.incarnation == g.incarnation and a.generation_id == g.generation_id
                        and a.kind == "assignment" for a in before.appends)
        if fact("delayed-sync", before.profile):
            if appending and not g.pending_sync_members:
                return None
            entry = self.sync.entries.get((g.incarnation, g.generation_id))
            return None if entry is None else entry[0] + entry[1]
        idle = [self.book.deadlines[m.member_id] for m in g.members
                if m.awaiting_sync is None and m.member_id in self.book.deadlines]
        return min(idle) if idle else None   # everyone synced: the append decides

    def _observe(self, before: Observation, step: Step, after: Observation) -> Witness | None:
        found = None
        g = live_group(before)
        if clock_moves(step) and g is not None:
            for p in before.parked:
                if p.incarnation != g.incarnation:
                    continue
                bound = (self.join.bound(g.incarnation) if p.api == "JoinGroup" and g.state is PR
                         else self._sync_bound(before, g) if p.api == "SyncGroup" and g.state is CR else None)
                if bound is not None and before.time_ms > bound:
                    found = {"request": p.key, "api": p.api, "holder": p.member_id, "state": g.state.value,
                             "bound_at": bound, "now": before.time_ms, "clock_to": after.time_ms,
                             "pending_appends": [(a.seq, a.generation_id) for a in before.appends]}
                    break
        self.join.update(before, step, after)
        self.sync.update(after)
        self.book.update(step, after)
        return found

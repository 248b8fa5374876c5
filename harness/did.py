"""What a step did, in the model's terms: the coordinator's answers as ``Got`` values (each to the slot of the member
it answers; a LeaveGroup v3+ answer one per identity), the model's answers as ``Want`` values with their layout, and
the delayed operations the step armed with the sources their delays can stand for (harness/labels.py compares them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.responses import Response
from harness.answers import Got, Want
from harness.messages import Request
from harness.world import World
from impl.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync, InitialDelayedJoin
from model.outputs import (HEARTBEAT_OP, INITIAL, INITIAL_JOIN_OP, JOIN_OP, NEW_MEMBER, PENDING_OP, PER_MEMBER,
                           REBALANCE, SESSION, SINGLE, SYNC_OP, TOP_LEVEL, Outputs, leave_layout)
from model.profiles import ModelProfile
from model.state import FREE, Slot, State

if TYPE_CHECKING:
    from harness.labels import Before

#: SPEC.md §4.6: a member added by addMemberAndRebalance is watched with the 5-minute new-member timeout
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000
Arms = list[tuple[str, Slot | None, frozenset[str], int]]


def gots(world: World, before: Before, batch: bool) -> list[Got]:
    """The step's answers (harness/answers.py ``Got``): each to the slot value of the member it answers (the request's
    member, or the one that had it parked); a LeaveGroup v3+ answer is one entry per identity, or its top level."""
    out: list[Got] = []
    req = before.request
    for resp in world.answered:
        if req is not None and resp.key == req.key:
            mid = req.member_id or instance_owner(before, req)
        else:
            mid = before.parked.get(resp.key, "?")
            if mid == "?" and before.append_join is not None and resp.key == before.append_join[0]:
                # a failed static store answers its JoinGroup even after a join completion answered it (finding
                # failed-static-store-answers-the-captured-join): the answer is the replaced member's
                mid = before.append_join[1]
        value = before.slot_of.get(mid, FREE) if mid else FREE
        if resp.api == "LeaveGroup" and req is not None and resp.key == req.key:
            out += _leave_gots(before, resp, batch)
            continue
        generation: Any = resp.generation_id if resp.api == "JoinGroup" else "-"
        out.append(Got(value, resp.api, resp.error, generation, "-", resp, mid))
    return out


def _leave_gots(before: Before, resp: Response, batch: bool) -> list[Got]:
    """A LeaveGroup answer: before 2.4 one error for its one identity; from 2.4 the top level alone (a pre-check
    failure) or one entry per identity (and a top-level error beside them, which no model answer has)."""
    first = before.leaving[0] if before.leaving else ("", None)
    if not batch or not resp.member_errors:
        tag = SINGLE if not batch else TOP_LEVEL
        return [Got(_identity_value(before, *first), "LeaveGroup", resp.error, "-", tag, resp, first[0])]
    out = [Got(_identity_value(before, m, i or None), "LeaveGroup", e, "-", PER_MEMBER, resp, m)
           for m, i, e in resp.member_errors]
    if resp.error != "NONE":   # a top-level error beside member entries: no model answer has that form
        out.append(Got(FREE, "LeaveGroup", resp.error, "-", "top+members", resp, ""))
    return out


def _identity_value(before: Before, member_id: str, instance: str | None) -> Slot:
    who = member_id or before.statics.get(instance or "", "")
    return before.slot_of.get(who, FREE) if who else FREE


def instance_owner(before: Before, req: Request) -> str:
    """A JoinGroup or LeaveGroup with member id "" and a known group.instance.id is that instance's member's (a
    restart, a removal by instance id; SPEC.md §3.1 J5a step 4, §3.4)."""
    if req.api in ("JoinGroup", "LeaveGroup") and req.group_instance_id is not None:
        return before.statics.get(req.group_instance_id, "")
    return ""


def _slot_values(world: World, before: Before) -> dict[str, Slot]:
    """Member id -> its slot's value before the step; a member id an instance was re-keyed to in this step (a static
    restart, or its revert) is the slot of the id the instance had before (SPEC.md §3.1 J5a step 4)."""
    values = dict(before.slot_of)
    group = world.coord.groups.get(world.group_id)
    if group is None or group is not before.group:
        return values
    for instance, mid in group.static_members.items():
        old = before.statics.get(instance)
        if old is not None and old != mid and old in before.slot_of:
            values[mid] = before.slot_of[old]
    return values


def wants(outputs: Outputs, state: State, p: ModelProfile, gens: dict[str, Any], cell: str) -> list[Want]:
    tag = leave_layout(p.batch_leave, cell)
    return [Want(state.slots[a.slot] if a.slot >= 0 else FREE, a, gens[a.generation],
                 tag if a.api == "LeaveGroup" else "-") for a in outputs.answers]


def arms(world: World, before: Before) -> Arms:
    """Delayed operations of the group armed by this step and still armed: (op, slot value, sources, delay)."""
    coord = world.coord
    group = coord.groups.get(world.group_id)
    if group is None:
        return []
    sessions = {m.session_timeout_ms for m in group.members.values()} | {s for s, _ in before.timeouts.values()}
    rebalances = {m.rebalance_timeout_ms for m in group.members.values()} | {r for _, r in before.timeouts.values()}
    if before.request is not None:
        sessions.add(before.request.session_timeout_ms)
        rebalances.add(before.request.rebalance_timeout_ms)
    initial = coord.config.group_initial_rebalance_delay_ms
    values = _slot_values(world, before)
    out = []
    for seq, op in sorted(coord.timer.entries.items()):
        if seq in before.timers or getattr(op, "group", None) is not group:
            continue
        delay = op.delay_ms
        sources = {SESSION} if delay in sessions else set()
        if isinstance(op, DelayedHeartbeat):
            if delay == NEW_MEMBER_JOIN_TIMEOUT_MS:
                sources.add(NEW_MEMBER)
            name, value = (PENDING_OP if op.is_pending else HEARTBEAT_OP), values.get(op.member_id, FREE)
        elif isinstance(op, InitialDelayedJoin):
            name, value, sources = INITIAL_JOIN_OP, None, ({INITIAL} if 0 < delay <= initial else set())
        elif isinstance(op, DelayedJoin):
            name, value, sources = JOIN_OP, None, ({REBALANCE} if delay in rebalances else set())
        elif isinstance(op, DelayedSync):
            name, value, sources = SYNC_OP, None, ({REBALANCE} if delay in rebalances else set())
        else:
            continue
        out.append((name, value, frozenset(sources), delay))
    return out


def arms_match(concrete: Arms, outputs: Outputs, state: State) -> bool:
    wanted = [(a.op, state.slots[a.slot] if a.slot >= 0 else None, a.source) for a in outputs.arms]
    if len(wanted) != len(concrete):
        return False
    for op, value, sources, _delay in concrete:
        match = next((w for w in wanted if w[0] == op and w[1] == value and w[2] in sources), None)
        if match is None:
            return False
        wanted.remove(match)
    return True

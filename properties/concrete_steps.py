"""Step predicates (kind "always_step") about the join phase, heartbeats and the state machine: the two
design-card properties, the seeds' rules on DelayedJoin/DelayedHeartbeat, SPEC.md §1.2 edges and I8."""
from __future__ import annotations

from core.events import (GenerationStarted, HeartbeatCompletedAtBirth, HeartbeatScheduled, MemberAdded,
                         MemberExpired, MemberNotRejoined, OperationCompleted, RebalancePrepared, first_of, of_kind,
                         removed_before)
from core.trace import Step
from core.types import GroupState
from model.profiles import valid_previous_states
from model.releases import MODELLED, any_of, fact, unless, when
from properties.catalog import Witness, always_step
from properties.concrete_state import orphan_static_completion
from properties.observation import GroupObs, Observation, delivered_request
from properties.static_reads import kept_static_members, static_restart

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)



def spec_edges_of(profile: str) -> frozenset[tuple[GroupState, GroupState]]:
    """SPEC.md §1.2 as (from, to) edges for the release (model/profiles.py, written from SPEC.md, not imported
    from impl, so a wrong impl table is caught): 0.10.0 has the 0.9.0.0 column (no Empty, no Dead self-loop)."""
    return frozenset((GroupState(a), GroupState(b)) for b, prev in valid_previous_states(profile).items() for a in prev)


#: the allowed (from, to) edges per runnable profile
SPEC_EDGES: dict[str, frozenset[tuple[GroupState, GroupState]]] = {p: spec_edges_of(p) for p in MODELLED}
_STATES = {s.value: s for s in GroupState}


def same_group(before: Observation, after: Observation) -> tuple[GroupObs, GroupObs] | None:
    """The cached group before and after the step, if it is the same object."""
    g0, g1 = before.group, after.group
    if g0 is None or g1 is None or g0.incarnation != g1.incarnation:
        return None
    return g0, g1


@always_step("delayed-join-completes-only-when-all-rejoined",
             claim="A delayed join completes only when notYetRejoinedMembers is empty: a DelayedJoin that completes "
                   "by its condition removes no member for not rejoining (and, on 3.9, leaves no pending member).",
             source="seed 001/004 (一旦消费组中所有消费者的回调方法不为空,延迟操作可以完成); SPEC.md §4.4 tryComplete "
                    "(hasAllMembersJoined: counter equality and no pending members, 2.2.0+)")
def join_completes_when_all_rejoined(before: Observation, step: Step, after: Observation) -> Witness | None:
    events = step.events
    completions = [(i, e) for i, e in of_kind(events, OperationCompleted) if e.kind.endswith("Join")]
    for n, (i, e) in enumerate(completions):
        if e.kind != "DelayedJoin" or e.how != "condition":
            continue
        end = completions[n + 1][0] if n + 1 < len(completions) else len(events)
        removed = [x.member_id for x in events[i + 1:end] if isinstance(x, MemberNotRejoined)]
        pending = (sorted(after.group.pending_members)
                   if after.group is not None and fact("pending-members", after.profile) else [])
        if removed or pending:
            return {"completed": e.render(), "removed_for_not_rejoining": removed, "pending_members": pending}
    return None


@always_step("member-kept-alive-while-callback-pending",
             claim="A member is kept alive while a callback is pending: a member with a parked JoinGroup or SyncGroup "
                   "is never removed by a heartbeat expiry (3.9: except a new member, isNew, which only its own "
                   "heartbeats keep alive — normally its 5-minute new-member op).",
             source="SPEC.md §2 liveness predicates (0.9–2.1.0 row; 2.5.0+ row) and §4.6 consequence; "
                    "seed 004 (回调方法不为空,消费者成员仍然被认为是存活的); KAFKA-7610")
def kept_alive_while_parked(before: Observation, step: Step, after: Observation) -> Witness | None:
    action = step.action
    fired = before.op(action.arg) if action.kind == "FireTimer" and isinstance(action.arg, int) else None
    if fired is None or fired.kind != "DelayedHeartbeat" or fired.pending:
        return None
    g0 = before.group_by_incarnation(fired.incarnation)
    member = None if g0 is None else g0.member(fired.member_id)
    if g0 is None or member is None or not member.awaiting or (fact("new-member-timeout", after.profile)
                                                                and member.is_new):
        return None   # 3.9 hasSatisfiedHeartbeat: if isNew → heartbeatSatisfied only (KAFKA-7610)
    g1 = after.group_by_incarnation(fired.incarnation)
    expired = any(e.member_id == member.member_id for _, e in of_kind(step.events, MemberExpired))
    if expired or (g1 is not None and g1.member(member.member_id) is None):
        return {"member": member.member_id, "awaiting_join": member.awaiting_join is not None,
                "awaiting_sync": member.awaiting_sync is not None, "is_new": member.is_new,
                "state": g0.state.value, "expired_op": (fired.seq, fired.delay_ms), "removed": True}
    return None


def _members_at_creation(before: Observation, step: Step, after: Observation, at: int) -> dict[str, tuple[int, int]]:
    """member id -> (session, rebalance timeout) of the group when the event ``at`` created its DelayedJoin."""
    g = after.group if step.action.kind == "LoadGroup" else before.group   # a load rebalances what it loaded
    table = {m.member_id: (m.session_timeout_ms, m.rebalance_timeout_ms) for m in (g.members if g else ())}
    req = delivered_request(before, step)
    if req is not None and req.api == "JoinGroup":
        added = [e.member_id for e in step.events[:at] if isinstance(e, MemberAdded)]
        restart = static_restart(before, step)   # a static restart re-keys its instance's member (§3.1 J5a 4)
        owner = dict(before.group.static_members).get(req.group_instance_id or "", "") if restart and g else ""
        joiner = added[-1] if added else owner or req.member_id
        if joiner not in table or fact("rejoin-updates-timeouts", before.profile):   # KAFKA-14009
            table[joiner] = (req.session_timeout_ms, req.rebalance_timeout_ms)
    for gone in removed_before(step.events, at):
        table.pop(gone, None)
    return table


@always_step("rebalance-timeout-is-the-maximum",
             claim="Every DelayedJoin is created with the maximum over the group's members at that moment of their "
                   "session timeouts (0.10.0) or rebalance timeouts (3.9), 0 with no members.",
             source="seed 000 (选择消费组中所有消费者会话超时时间的最大值,作为再平衡操作的超时时间); SPEC.md §1.4 "
                    "rebalanceTimeoutMs, §4.4, §4.9 (KIP-62 for the rebalance timeout)")
def rebalance_timeout_is_max(before: Observation, step: Step, after: Observation) -> Witness | None:
    for i, e in of_kind(step.events, RebalancePrepared):
        if e.op_kind != "DelayedJoin":
            continue
        members = _members_at_creation(before, step, after, i)
        pick = 1 if fact("rebalance-timeout", before.profile) else 0   # KIP-62
        expected = max((t[pick] for t in members.values()), default=0)
        if e.delay_ms != expected:
            return {"event": e.render(), "delay_ms": e.delay_ms, "expected_ms": expected,
                    "timeout": "session" if pick == 0 else "rebalance",
                    "members_at_creation": {k: v[pick] for k, v in sorted(members.items())}}
    return None


def _parks(before: Observation, step: Step, member_id: str) -> bool:
    """This step delivered a SyncGroup of ``member_id`` that the coordinator parks (CompletingRebalance)."""
    req = delivered_request(before, step)
    g = before.group
    return (req is not None and req.api == "SyncGroup" and req.member_id == member_id and g is not None
            and g.state is CR and req.generation_id == g.generation_id and not before.unloaded)


@always_step("fresh-heartbeat-not-completed-by-its-own-watch",
             claim="A freshly scheduled DelayedHeartbeat is never completed by its own tryCompleteElseWatch, unless "
                   "the member has a parked JoinGroup or SyncGroup.",
             source="seed 004 (第二步一定不会完成新创建的延迟心跳) qualified by SPEC.md §4.6 (design assumption; "
                    "derived consequence: awaiting ⇒ the op completes at once)",
             # 2.4.1 completes a new member's session op at birth (finding no-liveness-op-after-the-join-response)
             applies_to=any_of(unless("new-member-checked-first"), when("heartbeat-satisfied-flag")))
def not_completed_at_birth(before: Observation, step: Step, after: Observation) -> Witness | None:
    if orphan_static_completion(before, step):
        return None   # the documented finding: the revert reschedules on the unloaded (Dead) object
    for _, e in of_kind(step.events, HeartbeatCompletedAtBirth):
        member_id = e.member_id
        holders = [g.member(member_id) for g in (before.group, after.group) if g is not None]
        if any(h is not None and h.awaiting for h in holders) or _parks(before, step, member_id):
            continue
        return {"member": member_id, "awaiting_before": False, "awaiting_after": False,
                "action": str(step.action)}
    return None


@always_step("join-completion-removes-every-member-that-did-not-rejoin",
             claim="Completing the delayed join removes every member that did not rejoin before any join response is "
                   "sent: no removal follows the new generation, and every member of it got a join response.",
             source="seed 000 (要事先移除掉超时消费者: 在发送“加入组响应”时,消费组中的所有消费者一定都在"
                    "“再平衡操作超时时间”内及时发送了“加入组请求”); SPEC.md §4.4 steps 1 and 5")
def removed_before_responses(before: Observation, step: Step, after: Observation) -> Witness | None:
    found = first_of(step.events, GenerationStarted)
    if found is None or found[1].state not in ("CompletingRebalance", "AwaitingSync"):
        return None
    at, gen = found[0], found[1].generation_id
    late = [x.member_id for x in step.events[at:] if isinstance(x, MemberNotRejoined)]
    answered = {r.member_id for r in step.responses
                if r.api == "JoinGroup" and r.error == "NONE" and r.generation_id == gen}
    g = after.group
    kept = kept_static_members(before)   # 2.3+: static members that did not rejoin stay, unanswered (§4.4 1, 5)
    # write-timeout / batched-log-writes (SPEC-4x.md R2, R5): a JoinGroup its write's end answered already stays on
    # its member, and the join's completion of that future is a no-op (properties/concrete_requests.py
    # timed_out_on_member)
    if fact("write-timeout", before.profile):
        kept |= {p.member_id for p in before.parked if p.api == "JoinGroup" and p.done}
    unanswered = sorted(g.member_ids - answered - kept) if g is not None and g.generation_id == gen else []
    if late or unanswered:
        return {"generation": gen, "removed_after_generation": late, "members_without_join_response": unanswered}
    return None


@always_step("join-response-reschedules-the-heartbeat",
             claim="Every member that receives a join response at the end of a join phase gets its heartbeat "
                   "rescheduled in that step, to now + its session timeout.",
             source="seed 000 (协调者返回“加入组响应”给每个消费者后,都会立即完成本次“延迟的心跳”,并调度下一次); "
                    "SPEC.md §4.4 step 5")
def join_response_reschedules(before: Observation, step: Step, after: Observation) -> Witness | None:
    found = first_of(step.events, GenerationStarted)
    if found is None:
        return None
    at, gen = found[0], found[1].generation_id
    deadlines: dict[str, int] = {}
    for _, e in of_kind(step.events[at:], HeartbeatScheduled):
        deadlines.setdefault(e.member_id, e.deadline_ms)
    for r in step.responses:
        if r.api != "JoinGroup" or r.error != "NONE" or r.generation_id != gen:
            continue
        member_id = r.member_id
        member = after.group.member(member_id) if after.group is not None else None
        expected = None if member is None else after.time_ms + member.session_timeout_ms
        if deadlines.get(member_id) is None or (expected is not None and deadlines[member_id] != expected):
            return {"member": member_id, "generation": gen, "rescheduled_deadline": deadlines.get(member_id),
                    "expected_deadline": expected}
    return None


@always_step("initial-rebalance-waits-the-initial-delay",
             claim="A rebalance that starts from Empty waits group.initial.rebalance.delay.ms: an InitialDelayedJoin "
                   "only ever completes by expiring, never by its condition.",
             source="SPEC.md §4.5 (InitialDelayedJoin: tryComplete is always false, KAFKA-4925)",
             applies_to=when("initial-delayed-join"))
def initial_join_waits(before: Observation, step: Step, after: Observation) -> Witness | None:
    for _, e in of_kind(step.events, OperationCompleted):
        if e.kind == "InitialDelayedJoin" and e.how == "condition":
            return {"completed": e.render(), "how": "condition"}
    return None


@always_step("state-moves-only-along-spec-edges",
             claim="The group state changes only along the edges of SPEC.md §1.2 for the profile, each of them also "
                   "allowed by the coordinator's own validPreviousStates table.",
             source="SPEC.md §1.2 (validPreviousStates; 0.9.0.0 column for 0.10.0) and §1.3 (no other transitions)")
def spec_edges(before: Observation, step: Step, after: Observation) -> Witness | None:
    edges = SPEC_EDGES[after.profile]
    for gid, frm, to in after.transitions:
        a, b = _STATES[frm], _STATES[to]
        if (a, b) not in edges or a not in after.previous_states.get(b, frozenset()):
            return {"group": gid, "from": frm, "to": to, "in_spec_table": (a, b) in edges,
                    "in_impl_table": a in after.previous_states.get(b, frozenset())}
    pair = same_group(before, after)
    if pair is None:
        return None
    g0, g1 = pair
    path = [(frm, to) for gid, frm, to in after.transitions if gid == g0.group_id]
    chain_ok = all(path[i][1] == path[i + 1][0] for i in range(len(path) - 1))
    ends = (path[0][0], path[-1][1]) if path else (g0.state.value, g0.state.value)
    if not chain_ok or ends != (g0.state.value, g1.state.value):
        return {"group": g0.group_id, "state_before": g0.state.value, "state_after": g1.state.value,
                "logged_transitions": path}
    return None


@always_step("generation-never-decreases-while-group-lives",
             claim="A group object's generation never decreases (it can only go back across a reload, which makes a "
                   "new group object).",
             source="SPEC.md §1.5 I8")
def generation_monotone(before: Observation, step: Step, after: Observation) -> Witness | None:
    for g0 in before.groups:
        g1 = after.group_by_incarnation(g0.incarnation)
        if g1 is not None and g1.generation_id < g0.generation_id:
            return {"group": g0.incarnation, "generation_before": g0.generation_id,
                    "generation_after": g1.generation_id}
    return None


@always_step("each-new-generation-increments-the-generation-id",
             claim="The generation moves only when a join phase completes (initNextGeneration), by exactly one.",
             source="SPEC.md §1.4 (generationId +1 on every initNextGeneration, including the move to Empty)")
def generation_by_one(before: Observation, step: Step, after: Observation) -> Witness | None:
    g1 = after.group
    if g1 is None:
        return None
    g0 = before.group_by_incarnation(g1.incarnation)
    if g0 is None and step.action.kind == "LoadGroup":
        return None   # a reload starts from the stored generation
    base = g0.generation_id if g0 is not None else 0
    bumps = [e.generation_id for _, e in of_kind(step.events, GenerationStarted)]
    if g1.generation_id - base != len(bumps) or (bumps and bumps != list(range(base + 1, base + 1 + len(bumps)))):
        return {"generation_before": base, "generation_after": g1.generation_id, "generation_events": bumps}
    return None

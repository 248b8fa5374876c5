"""Reachability witnesses (kind "sometimes"): situations a run should be able to reach, so that the
properties that speak about them are not vacuous. Each returns what it saw, or None."""
from __future__ import annotations

from core.events import (GenerationStable, GenerationStarted, GroupEmptied, HeartbeatCompletedAtBirth, MemberExpired,
                         MemberNotRejoined, MemberNotSynced, OperationCompleted, PendingMemberExpired, StepEvent,
                         StoreCallbackIgnored, first_of, of_kind)
from core.types import GroupState
from model.releases import when
from properties.catalog import Witness, sometimes
from properties.observation import Observation

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


def _join_completion(obs: Observation, how: str) -> Witness | None:
    events = obs.events
    for i, e in of_kind(events, OperationCompleted):
        if e.kind == "DelayedJoin" and e.how == how:
            gen = first_of(events[i:], GenerationStarted)
            if gen is not None:
                return {"completed": e.render(), "then": gen[1].render()}
    return None


def _first_event(obs: Observation, kind: type[StepEvent]) -> Witness | None:
    found = first_of(obs.events, kind)
    return None if found is None else {"event": found[1].render()}


@sometimes("a-rebalance-completes-by-timeout",
           claim="A DelayedJoin expires and the join phase completes without every member having rejoined.",
           source="seed 000 (经过了“再平衡操作超时时间”之后,延迟操作会被强制完成)")
def completes_by_timeout(obs: Observation) -> Witness | None:
    return _join_completion(obs, "expired")


@sometimes("a-rebalance-completes-when-all-members-rejoined",
           claim="A DelayedJoin completes by its condition because every member rejoined.",
           source="seed 004 (旦消费组中所有消费者的回调方法不为空,延迟操作可以完成)")
def completes_by_condition(obs: Observation) -> Witness | None:
    return _join_completion(obs, "condition")


@sometimes("a-rebalance-waits-for-a-member-that-has-not-rejoined",
           claim="A group is PreparingRebalance with one member rejoined and another not yet.",
           source="seed 004 (如果消费组中有消费者,但它们还没有重新发送加入组请求,延迟操作不能完成)")
def waits_for_member(obs: Observation) -> Witness | None:
    g = obs.group
    if g is not None and g.state is PR:
        joined = [m.member_id for m in g.members if m.awaiting_join is not None]
        missing = [m.member_id for m in g.members if m.awaiting_join is None]
        if joined and missing:
            return {"rejoined": joined, "not_yet_rejoined": missing}
    return None


@sometimes("a-member-is-removed-for-not-rejoining",
           claim="Completing a delayed join removes a member that did not rejoin.",
           source="seed 000 (协调者会找出那些没有在规定时间内重新发送“加入组请求”的消费者,将它们从消费组中移除)")
def removed_for_not_rejoining(obs: Observation) -> Witness | None:
    return _first_event(obs, MemberNotRejoined)


@sometimes("a-member-is-removed-by-heartbeat-expiry",
           claim="A member's DelayedHeartbeat expires and the member is removed.",
           source="seed 004 (对应的延迟心跳会判断到消费者2失败,从而将其从消费组中移除)")
def removed_by_expiry(obs: Observation) -> Witness | None:
    return _first_event(obs, MemberExpired)


@sometimes("a-member-is-kept-alive-by-a-parked-callback",
           claim="A member's DelayedHeartbeat expires while it has a parked JoinGroup or SyncGroup, and it stays.",
           source="seed 004 (即使“延迟的心跳”超时了,但“回调方法不为空”,消费者成员仍然被认为是存活的)")
def kept_alive(obs: Observation) -> Witness | None:
    g = obs.group
    for _, e in of_kind(obs.events, OperationCompleted):
        if e.kind == "DelayedHeartbeat" and e.how == "expired" and g is not None:
            member = g.member(e.key.rsplit(":", 1)[-1])
            if member is not None and member.awaiting:
                return {"member": member.member_id, "awaiting_join": member.awaiting_join is not None,
                        "awaiting_sync": member.awaiting_sync is not None}
    return None


@sometimes("a-fresh-heartbeat-is-completed-at-birth",
           claim="A freshly scheduled DelayedHeartbeat is completed by its own tryCompleteElseWatch (its member has "
                 "a parked request).",
           source="SPEC.md §4.6 (design assumption and its derived consequence)")
def completed_at_birth(obs: Observation) -> Witness | None:
    return _first_event(obs, HeartbeatCompletedAtBirth)


@sometimes("a-sync-is-answered-rebalance-in-progress",
           claim="A SyncGroup is answered REBALANCE_IN_PROGRESS.",
           source="seed 004 (它会返回“正在再平衡”的错误码给第一个消费者)")
def sync_rip(obs: Observation) -> Witness | None:
    for r in obs.responses:
        if r.api == "SyncGroup" and r.error == "REBALANCE_IN_PROGRESS":
            return {"response": f"c{r.client} SyncGroup#{r.corr} {r.error}"}
    return None


@sometimes("a-group-becomes-stable",
           claim="The leader's assignment is stored and the group becomes Stable.",
           source="seed 004 (消费组的分配结果保存完毕后,返回“同步组响应”给所有的消费者,消费组状态为“稳定”)")
def becomes_stable(obs: Observation) -> Witness | None:
    for gid, frm, to in obs.transitions:
        if to == S.value:
            return {"group": gid, "from": frm, "to": to}
    return None


@sometimes("a-store-callback-is-ignored-for-an-old-generation",
           claim="A store callback arrives after the group moved on and is ignored.",
           source="SPEC.md §5.2 ordering (a) and (c)")
def store_ignored(obs: Observation) -> Witness | None:
    return _first_event(obs, StoreCallbackIgnored)


@sometimes("a-store-callback-fails-and-the-group-rebalances",
           claim="The leader's assignment append fails and the group goes back to PreparingRebalance.",
           source="SPEC.md §3.2 (on error: answer parked SyncGroups with the mapped error, maybePrepareRebalance), "
                  "§5.2 ordering (b)")
def store_fails(obs: Observation) -> Witness | None:
    a = obs.action
    if a is not None and a.kind == "CompleteAppend" and a.arg != "NONE":
        for _gid, frm, to in obs.transitions:
            if frm == CR.value and to == PR.value:
                return {"append_error": a.arg, "from": frm, "to": to}
    return None


@sometimes("a-parked-request-is-answered-not-coordinator-on-unload",
           claim="Unloading the group's partition answers a parked request NOT_COORDINATOR.",
           source="SPEC.md §3.7 onGroupUnloaded")
def unload_answers(obs: Observation) -> Witness | None:
    if obs.action is not None and obs.action.kind == "UnloadGroup":
        for r in obs.responses:
            if r.error == "NOT_COORDINATOR" and r.api in ("JoinGroup", "SyncGroup"):
                return {"response": f"c{r.client} {r.api}#{r.corr} {r.error}"}
    return None


@sometimes("a-rebalance-ends-with-no-members",
           claim="A join phase completes with no member left (Empty on 3.9; Dead on 0.10.0).",
           source="SPEC.md §1.3 PreparingRebalance → Empty; §4.4 (in 0.9 an empty group went straight to Dead)")
def ends_empty(obs: Observation) -> Witness | None:
    for gid, frm, to in obs.transitions:
        if frm == PR.value and to in (E.value, D.value) and any(
                isinstance(e, (GroupEmptied, GenerationStarted, GenerationStable)) for e in obs.events):
            return {"group": gid, "from": frm, "to": to}
    return None


@sometimes("a-member-that-never-syncs-is-removed-by-the-delayed-sync",
           claim="A member that got its join response but sent no SyncGroup within the rebalance timeout is removed.",
           source="SPEC.md §4.8 (DelayedSync expiry, KAFKA-12890)", applies_to=when("delayed-sync"))
def removed_by_delayed_sync(obs: Observation) -> Witness | None:
    return _first_event(obs, MemberNotSynced)


@sometimes("a-pending-member-expires",
           claim="A pending member (MEMBER_ID_REQUIRED, KIP-394) that never rejoins expires.",
           source="SPEC.md §4.7", applies_to=when("pending-members"))
def pending_expires(obs: Observation) -> Witness | None:
    return _first_event(obs, PendingMemberExpired)


@sometimes("a-new-member-is-removed-by-the-new-member-timeout",
           claim="A new member still waiting in a long join phase is removed by its heartbeat expiry (normally its "
                 "5-minute new-member op) and its JoinGroup is answered UNKNOWN_MEMBER_ID.",
           source="SPEC.md §2 (KAFKA-7610), §4.9 (new-member bound)",
           applies_to=when("new-member-timeout"))
def new_member_expires(obs: Observation) -> Witness | None:
    found = first_of(obs.events, MemberExpired)
    if found is None or obs.group is None:
        return None
    answered = [r for r in obs.responses if r.api == "JoinGroup" and r.error == "UNKNOWN_MEMBER_ID"]
    return {"event": found[1].render(), "join_answered": f"c{answered[0].client} JoinGroup#{answered[0].corr}"} \
        if answered else None

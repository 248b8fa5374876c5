"""State invariants over one Observation (kind "always"): SPEC.md §1.5 I1–I9 as they apply to dynamic
membership, the seeds' "one DelayedJoin per group / one DelayedHeartbeat per member", parked responses,
DelayedSync bookkeeping (3.9); and, over one step (kind "always_step"), the coordinator's own assertions."""
from __future__ import annotations

from core.events import IllegalState, of_kind
from core.trace import Step
from core.types import GroupState
from harness.excuses import excused
from model.releases import any_of, fact, unless, when
from properties.catalog import Witness, always, always_step
from properties.observation import GroupObs, Observation, delivered_request
from properties.static_rekeyed import timeouts_set_back

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)
JOIN_OPS = ("DelayedJoin", "InitialDelayedJoin")


def live_group(obs: Observation) -> GroupObs | None:
    """The cached group, unless it is Dead."""
    g = obs.group
    return None if g is None or g.state is D else g


@always("awaiting-join-counter-matches-members",
        claim="numMembersAwaitingJoin equals the number of members with a parked JoinGroup.",
        source="SPEC.md §1.5 I1; §1.4 (numMembersAwaitingJoin, KAFKA-7142)")
def awaiting_join_counter(obs: Observation) -> Witness | None:
    for g in obs.groups:
        awaiting = [m.member_id for m in g.members if m.awaiting_join is not None]
        if g.num_members_awaiting_join != len(awaiting):
            return {"group": g.incarnation, "num_members_awaiting_join": g.num_members_awaiting_join,
                    "members_awaiting_join": awaiting}
    return None


@always("supported-protocol-counts-match-members",
        claim="supportedProtocols[p] equals the number of members that list protocol p.",
        source="SPEC.md §1.5 I2; §1.4 (supportedProtocols)")
def protocol_counts(obs: Observation) -> Witness | None:
    for g in obs.groups:
        expected: dict[str, int] = {}
        for m in g.members:
            for name in m.protocols:
                expected[name] = expected.get(name, 0) + 1
        if dict(g.supported_protocols) != expected:
            return {"group": g.incarnation, "supported_protocols": dict(g.supported_protocols),
                    "counted_from_members": expected}
    return None


@always("leader-is-a-member",
        claim="The leader is a current member, and there is no leader exactly when there are no members.",
        source="SPEC.md §1.5 I3; §1.4 leader bookkeeping (add makes a leader, remove re-elects)")
def leader_is_a_member(obs: Observation) -> Witness | None:
    for g in obs.groups:
        ids = g.member_ids
        if (g.leader_id is None) != (not ids) or (g.leader_id is not None and g.leader_id not in ids):
            return {"group": g.incarnation, "state": g.state.value, "leader_id": g.leader_id,
                    "members": sorted(ids)}
    return None


@always("pending-members-are-not-members",
        claim="No member id is both a pending member and a member.",
        source="SPEC.md §1.5 I5; §3.1 J5a.5 (KIP-394 pending members, 2.2.0)",
        applies_to=when("pending-members"))
def pending_not_members(obs: Observation) -> Witness | None:
    for g in obs.groups:
        both = sorted(g.pending_members & g.member_ids)
        if both:
            return {"group": g.incarnation, "pending_and_member": both}
    return None


@always("parked-join-only-in-preparing-rebalance",
        claim="A member has a parked JoinGroup only while its group is PreparingRebalance — or, 2.6.1+, while the "
              "store of its static id replacement is pending (answered from the store callback).",
        source="SPEC.md §1.5 I6 (a join callback is only parked in PreparingRebalance); §3.1 J5a step 4 (Stable, "
               "2.6.1+: updateMember parks the callback, storeGroup answers it)")
def join_only_in_pr(obs: Observation) -> Witness | None:
    storing = {(a.incarnation, a.member_id) for a in obs.appends if a.kind == "static"}
    storing |= {(p.incarnation, p.member_id) for p in obs.parked if stranded_leader_join(obs, p)}
    for g in obs.groups:
        for m in g.members:
            if m.awaiting_join is not None and g.state is not PR and (g.incarnation, m.member_id) not in storing:
                return {"group": g.incarnation, "member": m.member_id, "awaiting_join": m.awaiting_join,
                        "state": g.state.value}
    return None


@always("parked-sync-only-in-completing-rebalance",
        claim="A member has a parked SyncGroup only while its group is CompletingRebalance.",
        source="SPEC.md §1.5 I6 (awaitingSync ⇒ CompletingRebalance); seed 004 (等待同步 sets the callback)")
def sync_only_in_cr(obs: Observation) -> Witness | None:
    for g in obs.groups:
        for m in g.members:
            if m.awaiting_sync is not None and g.state is not CR:
                return {"group": g.incarnation, "member": m.member_id, "awaiting_sync": m.awaiting_sync,
                        "state": g.state.value}
    return None


@always("empty-group-has-no-members-and-no-protocol",
        claim="An Empty group has no members and no selected protocol.",
        source="SPEC.md §1.5 I7 (Empty ⇒ members = ∅ ∧ protocol = None)", applies_to=when("empty-state"))
def empty_group(obs: Observation) -> Witness | None:
    for g in obs.groups:
        if g.state is E and (g.members or g.protocol_name is not None):
            return {"group": g.incarnation, "members": sorted(g.member_ids), "protocol": g.protocol_name}
    return None


@always("stable-or-completing-group-has-members-and-a-common-protocol",
        claim="A Stable or CompletingRebalance group has members and a protocol every member supports "
              "(on 0.10.0 a group that never rebalanced starts Stable, empty, at generation 0).",
        source="SPEC.md §1.5 I7; seed 001 (消费组初始为稳定状态) for the 0.10.0 initial state")
def stable_has_members(obs: Observation) -> Witness | None:
    for g in obs.groups:
        if g.state not in (S, CR):
            continue
        if not fact("empty-state", obs.profile) and g.state is S and g.generation_id == 0 and not g.members:
            continue   # E0: a fresh group is Stable before anyone joined
        common = sorted(n for n, c in g.supported_protocols if c == len(g.members))
        if g.members and g.protocol_name not in common and (static_restart_without_the_protocol(obs, g)
                                                             or static_revert_without_the_protocol(obs, g)):
            continue
        if not g.members or g.protocol_name not in common:
            return {"group": g.incarnation, "state": g.state.value, "generation": g.generation_id,
                    "members": sorted(g.member_ids), "protocol": g.protocol_name, "common_protocols": common}
    return None


#: the documented finding (properties/findings.py) of a static restart answered at once before KAFKA-10284
STATIC_RESTART_PROTOCOL = "static-restart-keeps-a-protocol-it-does-not-support"


def static_restart_without_the_protocol(obs: Observation, g: GroupObs) -> bool:
    """The finding static-restart-keeps-a-protocol-it-does-not-support: 2.3.0–2.6.0 answer a static restart in Stable
    (and, before 2.5.0, in CompletingRebalance) at once with the group's protocol, after updateMember stored whatever
    protocols it brought (GroupCoordinator.scala 2.4.1 lines 205-234); the JoinGroup's protocol check only asks that
    some protocol be common to the request and the *other* members. Exactly that: every member lacking the group's
    protocol is static."""
    if not excused(STATIC_RESTART_PROTOCOL) or not fact("static-membership", obs.profile) \
            or fact("static-rejoin-persisted-in-stable", obs.profile):
        return False
    return _only_static_members_lack_the_protocol(g)


def _only_static_members_lack_the_protocol(g: GroupObs) -> bool:
    """Some member lacks the group's protocol, and every such member is static: the shape both protocol findings
    leave (a static restart's or a static revert's protocols stored whatever the group had chosen)."""
    lacking = [m for m in g.members if g.protocol_name not in m.protocols]
    return bool(lacking) and all(m.group_instance_id is not None for m in lacking)


#: the documented finding (properties/findings.py) of a failed static id store reverted after a rebalance (4.x)
STATIC_REVERT_PROTOCOL = "failed-static-store-reverts-protocols-after-a-rebalance"


def static_revert_without_the_protocol(obs: Observation, g: GroupObs) -> bool:
    """The finding failed-static-store-reverts-protocols-after-a-rebalance: in 4.x the write persisting a static
    member's new id waits in the batch while later events run (release fact batched-log-writes, SPEC-4x.md R5); when
    the batch fails, the append callback puts the old member and its old protocols back whatever happened since
    (GroupMetadataManager.java@4.1.1:7218-7228) — a rebalance in between may have chosen a protocol only the new
    protocols supported. Exactly that shape (as static_restart_without_the_protocol): every member lacking the group's
    protocol is static."""
    if not excused(STATIC_REVERT_PROTOCOL) or not fact("batched-log-writes", obs.profile):
        return False
    return _only_static_members_lack_the_protocol(g)


def unwatched_static_excused(obs: Observation, member: object) -> bool:
    """The documented finding static-store-answer-leaves-no-expiration (properties/findings.py): from 2.6.1 a static
    restart in Stable parks its JoinGroup until the store callback answers it, and that answer does not reschedule
    the heartbeat (SPEC.md §3.1 J5a step 4) — so a static member whose op completed or expired while it awaited the
    store (awaiting ⇒ kept, §4.6) is idle with none. The state shows no more than that: a static member (its answers
    and the timers each step arms are still judged exactly by the labelled refinement, model/static.py)."""
    return (excused("static-store-answer-leaves-no-expiration")
            and fact("static-rejoin-persisted-in-stable", obs.profile)
            and getattr(member, "group_instance_id", None) is not None)


def orphan_static_join(obs: Observation, parked: object) -> bool:
    """The documented finding unload-leaves-a-static-restarts-join-parked (properties/findings.py): from 2.6.1 a static
    restart in Stable parks its JoinGroup until the store callback of its id replacement answers it; onGroupUnloaded
    answers only the parked SyncGroups of a Stable group (SPEC.md §3.7), so that JoinGroup stays parked on the
    unloaded object until the callback — which acts on that object — answers it. Exactly that: a parked JoinGroup whose
    holder has a static append of its group object pending."""
    if getattr(parked, "api", "") != "JoinGroup":
        return False
    if stranded_leader_join(obs, parked):
        return True
    if not excused("unload-leaves-a-static-restarts-join-parked"):
        return False
    return any(a.kind == "static" and a.incarnation == getattr(parked, "incarnation", None)
               and a.member_id == getattr(parked, "member_id", None) for a in obs.appends)


#: the documented finding (properties/findings.py) of a v9 static leader's restart whose store completes on an
#: unloaded group object: the callback throws before it answers, the JoinGroup stays parked there for good
SKIP_LEADER_THROWS = "unloaded-skip-assignment-leader-store-throws"


def _dead_orphan_leader(obs: Observation, incarnation: int, member_id: str) -> bool:
    """``member_id`` is the static leader of group object ``incarnation``, which is Dead and no longer cached."""
    g = next((x for x in obs.groups if x.incarnation == incarnation), None)
    if g is None or g.cached or g.state is not D or g.leader_id != member_id:
        return False
    m = g.member(member_id)
    return m is not None and m.group_instance_id is not None


def stranded_leader_join(obs: Observation, parked: object) -> bool:
    """The finding unloaded-skip-assignment-leader-store-throws: a JoinGroup that asked to skip the assignment (v9+, on
    a release with KIP-814) parked by the static leader of an unloaded (Dead, uncached) group object. Only a static
    restart in Stable (2.6.1+) leaves a JoinGroup parked across an unload (§3.7); its successful store then lists the
    members for the leader on that Dead object and throws (GroupMetadata.scala 3.9.0-rc3 lines 591-593), and a failed
    one clears the parked join in its revert — so it stays parked after the store only in this way."""
    if not excused(SKIP_LEADER_THROWS) or getattr(parked, "api", "") != "JoinGroup":
        return False
    if not getattr(parked, "asked_to_skip", False) or not fact("static-rejoin-skips-assignment", obs.profile):
        return False
    return _dead_orphan_leader(obs, getattr(parked, "incarnation", -1), getattr(parked, "member_id", ""))


#: ... and the same callback on the cached group when a new rebalance has begun (PreparingRebalance) since the restart
SKIP_LEADER_REBALANCING = "v9-leader-store-throws-in-a-new-rebalance"


def _rebalancing_leader(obs: Observation, incarnation: int, member_id: str) -> bool:
    """``member_id`` leads the cached group object ``incarnation``, which is in PreparingRebalance."""
    g = next((x for x in obs.groups if x.incarnation == incarnation), None)
    return g is not None and g.cached and g.state is GroupState.PREPARING_REBALANCE and g.leader_id == member_id


def stranded_leader_store(before: Observation, step: Step) -> bool:
    """The same finding when the store callback runs: a successful append whose oldest pending append is a static id
    replacement of an unloaded group object whose leader is the new id, and whose JoinGroup asked to skip. The callback
    lists the members for that leader before it looks at whether the join still waits (GroupCoordinator.scala
    3.9.0-rc3 lines 1409-1414), so it throws also when a rebalance on the object answered the join first. The finding
    v9-leader-store-throws-in-a-new-rebalance is the same list on the cached group in PreparingRebalance, which throws
    as on Dead (GroupMetadata.scala 3.9.0-rc3 lines 591-593)."""
    if step.action.kind != "CompleteAppend" or step.action.arg != "NONE":
        return False
    if not before.appends or before.appends[0].kind != "static":
        return False
    a = before.appends[0]
    if a.skips and fact("static-rejoin-skips-assignment", before.profile):
        if excused(SKIP_LEADER_REBALANCING) and _rebalancing_leader(before, a.incarnation, a.member_id):
            return True
        if excused(SKIP_LEADER_THROWS) and _dead_orphan_leader(before, a.incarnation, a.member_id):
            return True
    return any(p.incarnation == a.incarnation and p.member_id == a.member_id and stranded_leader_join(before, p)
               for p in before.parked)


def orphan_static_completion(before: Observation, step: Step) -> bool:
    """The same finding (unload-leaves-a-static-restarts-join-parked), when that store callback runs: a completed append
    whose oldest pending append is a static id replacement of a group object that is no longer the cached one. It acts
    on that object — answers its join with that object's generation and leader, reverts and reschedules there, where
    the heartbeat op completes at birth (the object is Dead, SPEC.md §4.6, correction 4)."""
    if not excused("unload-leaves-a-static-restarts-join-parked") or step.action.kind != "CompleteAppend":
        return False
    if not before.appends or before.appends[0].kind != "static":
        return False
    return before.group is None or before.appends[0].incarnation != before.group.incarnation


@always("idle-member-has-a-live-heartbeat-expiration",
        claim="Every member of a live group that has no parked JoinGroup or SyncGroup has a live DelayedHeartbeat "
              "that fires within its session timeout of its last liveness event.",
        source="SPEC.md §1.5 I9; seed 000 (协调者为每个消费者都创建一个“延迟心跳”); SPEC.md §4.6",
        # 2.4.1 breaks it by design of its predicate (finding no-liveness-op-after-the-join-response)
        applies_to=any_of(unless("new-member-checked-first"), when("heartbeat-satisfied-flag")))
def idle_member_watched(obs: Observation) -> Witness | None:
    g = live_group(obs)
    if g is None:
        return None
    for m in g.members:
        if m.awaiting or unwatched_static_excused(obs, m):
            continue
        ops = [op for op in obs.ops_of(g.incarnation, ("DelayedHeartbeat",)) if op.member_id == m.member_id]
        if not fact("heartbeat-satisfied-flag", obs.profile):
            # keep ⇔ latestHeartbeat + session > deadline: only the op due exactly then will remove it
            expected = m.latest_heartbeat_ms + m.session_timeout_ms
            ok = any(op.heartbeat_deadline_ms == expected for op in ops)
        else:
            limit = obs.new_member_join_timeout_ms if m.is_new else m.session_timeout_ms
            expected = obs.time_ms + limit
            ok = any(not op.pending and op.deadline_ms <= expected for op in ops)
        if not ok and not timeouts_set_back(obs, m, ops):
            return {"member": m.member_id, "state": g.state.value, "awaiting_join": False, "awaiting_sync": False,
                    "live_heartbeat_deadlines": [op.heartbeat_deadline_ms for op in ops],
                    "expected_deadline_at_most": expected}
    return None


@always("at-most-one-live-heartbeat-per-member",
        claim="At any time a member has at most one live DelayedHeartbeat.",
        source="seed 000 (在任何时刻,消费者在延迟缓存中的延迟心跳只有一个); SPEC.md §4.6 "
               "(0.10.0 keeps two when two reschedules fall in one millisecond: strict '>' — see tests)",
        applies_to=when("heartbeat-satisfied-flag"))
def one_heartbeat(obs: Observation) -> Witness | None:
    g = obs.group
    if g is None:
        return None
    for m in g.members:
        ops = [op for op in obs.ops_of(g.incarnation, ("DelayedHeartbeat",)) if op.member_id == m.member_id]
        if len(ops) > 1:
            return {"member": m.member_id, "live_heartbeats": [(op.seq, op.deadline_ms) for op in ops]}
    return None


@always("one-delayed-join-per-group",
        claim="A group has at most one live DelayedJoin (or InitialDelayedJoin).",
        source="seed 000 (服务端的协调者只有一个延迟的加入对象); seed 004 (并不会创建多个延迟的操作对象)")
def one_delayed_join(obs: Observation) -> Witness | None:
    for g in obs.groups:
        ops = obs.ops_of(g.incarnation, JOIN_OPS)
        if len(ops) > 1:
            return {"group": g.incarnation, "state": g.state.value, "live_delayed_joins": [op.seq for op in ops]}
    return None


@always("preparing-rebalance-has-a-live-delayed-join",
        claim="A group in PreparingRebalance has a live DelayedJoin (or InitialDelayedJoin) that will end it.",
        source="SPEC.md §1.1 (PreparingRebalance: a DelayedJoin is pending); §4.4")
def pr_has_delayed_join(obs: Observation) -> Witness | None:
    g = obs.group
    if g is not None and g.state is PR and not obs.ops_of(g.incarnation, JOIN_OPS):
        return {"group": g.incarnation, "state": g.state.value, "live_delayed_joins": []}
    return None


@always("delayed-join-completes-once-all-rejoined",
        claim="A group never rests in PreparingRebalance with every member rejoined (and, on 3.9, no pending member) "
              "under a plain DelayedJoin: the request or removal that completed the set also completed the join.",
        source="SPEC.md §3.1 J6 and §3.4 (checkAndComplete after a join, leave or expiry), §4.4 tryComplete; "
               "seed 004 (只要有触发它的外部事件,就应该调用 checkAndComplete() 尽快完成延迟的操作)",
        # 4.x: a GROUP_MAX_SIZE_REACHED refusal skips the check (finding max-size-refusal-leaves-the-join-waiting, R10)
        applies_to=unless("max-size-refusal-skips-join-check"))
def join_completes_once_all_rejoined(obs: Observation) -> Witness | None:
    g = live_group(obs)
    if g is None or g.state is not PR or g.pending_members:
        return None
    ops = obs.ops_of(g.incarnation, JOIN_OPS)
    if ops and all(op.kind == "DelayedJoin" for op in ops) and all(m.awaiting_join is not None for m in g.members):
        return {"state": g.state.value, "members": sorted(g.member_ids), "all_rejoined": True,
                "pending_members": [], "live_delayed_join": [(op.seq, op.deadline_ms) for op in ops]}
    return None


@always("delayed-operation-completes-at-most-once",
        claim="A delayed operation's onComplete runs at most once: an operation still live in the timer or a watch "
              "list has not completed.",
        source="SPEC.md §4.1 (forceComplete: compare-and-set; onComplete runs exactly once)")
def completes_at_most_once(obs: Observation) -> Witness | None:
    for op in obs.ops:
        if op.complete_count:
            return {"op": op.seq, "kind": op.kind, "key": op.key, "live": True, "complete_count": op.complete_count}
    return None


@always("parked-request-belongs-to-a-current-member",
        claim="Every parked JoinGroup or SyncGroup is held by a member of the group the coordinator caches, "
              "and that group is not Dead.",
        source="SPEC.md §3.1 (park the callback on the member), §3.7 (unload answers parked requests)")
def parked_on_member(obs: Observation) -> Witness | None:
    g = obs.group
    for p in obs.parked:
        if orphan_static_join(obs, p):
            continue
        if not p.in_table or g is None or p.incarnation != g.incarnation or g.state is D:
            return {"request": p.key, "api": p.api, "holder": p.member_id, "holder_in_member_table": p.in_table,
                    "holder_group": p.incarnation, "cached_group": None if g is None else g.incarnation,
                    "cached_state": None if g is None else g.state.value}
    return None


@always("parked-response-is-not-yet-answered",
        claim="A response future still parked on a member has not been completed.",
        source="SPEC.md §4.1 (onComplete runs exactly once); impl ResponseFuture.completions")
def parked_unanswered(obs: Observation) -> Witness | None:
    # write-timeout (SPEC-4x.md R2): a write timeout answers a parked future once and leaves it on its member
    once = 1 if fact("write-timeout", obs.profile) else 0
    for p in obs.parked:
        if p.completions > once or (p.done and not once):
            return {"request": p.key, "api": p.api, "holder": p.member_id, "completions": p.completions}
    return None


@always("new-member-has-a-parked-join",
        claim="A member flagged isNew has a parked JoinGroup (it is new until its join response).",
        source="SPEC.md §2 (isNew: added in the current rebalance and not yet given a join response)",
        applies_to=when("new-member-timeout"))
def new_member_awaits(obs: Observation) -> Witness | None:
    g = live_group(obs)
    if g is None:
        return None
    for m in g.members:
        if m.is_new and m.awaiting_join is None:
            return {"member": m.member_id, "is_new": True, "awaiting_join": False, "state": g.state.value}
    return None


#: the documented finding (properties/findings.py) of a static restart whose old member id still owes a SyncGroup
OLD_ID_OWES_SYNC = "static-restart-leaves-its-old-id-owing-a-sync"


def replaced_static_ids(g: GroupObs) -> frozenset[str]:
    """The finding static-restart-leaves-its-old-id-owing-a-sync: replaceStaticMember re-keys the member but leaves
    pendingSyncMembers alone (SPEC.md Corrections 3; GroupMetadata.scala 3.9.0-rc3 lines 319-340), so an old id that
    owed a SyncGroup stays in the set though it is no member. Exactly those ids: pending-sync ids that are no member
    and that name a static instance of the group whose member id is now another — a static member's id is its
    group.instance.id, "-" and a UUID (GroupMetadata.generateMemberId, 3.9.0-rc3 lines 416-422)."""
    if not excused(OLD_ID_OWES_SYNC):
        return frozenset()
    return frozenset(mid for mid in g.pending_sync_members - g.member_ids
                     if any(mid.startswith(f"{inst}-") and now != mid for inst, now in g.static_members))


@always("members-owing-a-sync-are-watched-by-a-delayed-sync",
        claim="pendingSyncMembers are members, exist only in CompletingRebalance or Stable, and are then watched "
              "by a live DelayedSync of the current generation.",
        source="SPEC.md §4.8 (DelayedSync, KAFKA-12890)", applies_to=when("delayed-sync"))
def pending_sync_watched(obs: Observation) -> Witness | None:
    g = live_group(obs)
    if g is None or not g.pending_sync_members:
        return None
    syncs = [op for op in obs.ops_of(g.incarnation, ("DelayedSync",)) if op.generation_id == g.generation_id]
    owed = g.pending_sync_members - replaced_static_ids(g)
    if not owed <= g.member_ids or g.state not in (CR, S) or not syncs:
        every = obs.ops_of(g.incarnation, ("DelayedSync",))
        return {"pending_sync_members": sorted(g.pending_sync_members), "members": sorted(g.member_ids),
                "state": g.state.value, "generation": g.generation_id,
                "live_delayed_syncs": [(op.seq, op.generation_id) for op in every]}
    return None


@always("dead-group-is-not-cached",
        claim="A group that became Dead is no longer in the coordinator's group cache.",
        source="SPEC.md §1.3 Any → Dead (the object is removed from the cache)")
def dead_not_cached(obs: Observation) -> Witness | None:
    g = obs.group
    if g is not None and g.state is D:
        return {"group": g.incarnation, "state": g.state.value, "cached": True}
    return None


#: the documented finding (properties/findings.py) whose IllegalStateException the property below excuses while the
#: checkers excuse it: SPEC.md §3.1 J5b step 3, a JoinGroup carrying a group.instance.id from a pending member id —
#: and, before validateCurrentMember (3.0.0), a LeaveGroup doing the same (GroupCoordinator.scala 2.4.1 471-474)
STATIC_PENDING_JOIN = "instance-id-with-a-pending-member-id-throws"
#: ... and the failed store of a static id replacement whose new id is no longer a member (SPEC.md §3.1 J5a step 4)
STATIC_GONE_REVERT = "failed-static-store-of-a-departed-member-throws"


def _reverts_a_departed_member(before: Observation, step: Step) -> bool:
    """A failed append whose oldest pending append is a static id replacement whose new member id has left the
    group (replaced again, removed): the store callback's revert replaces a member that does not exist."""
    if not excused(STATIC_GONE_REVERT) or step.action.kind != "CompleteAppend" or step.action.arg == "NONE":
        return False
    if not before.appends or before.appends[0].kind != "static":
        return False
    owner = next((g for g in before.groups if g.incarnation == before.appends[0].incarnation), None)
    return owner is None or owner.member(before.appends[0].member_id) is None


@always_step("no-illegal-state-error",
             claim="The coordinator never hits one of its own IllegalStateException assertions.",
             source="SPEC.md §1.2 (transitionTo asserts the previous state); 0.10.0 fails it on Dead → Dead, and "
                    "2.4.1+ on a JoinGroup with a group.instance.id from a pending member id (§3.1 J5b step 3): "
                    "properties/findings.py",
             applies_to=when("empty-state"))   # the 0.9 table has no Dead → Dead: properties/findings.py
def no_illegal_state(before: Observation, step: Step, after: Observation) -> Witness | None:
    """Any guard of the coordinator (impl/guards.py: IllegalStateException, IllegalArgumentException, a failed
    assertion, a response callback that threw) is logged as an IllegalState event and breaks this property."""
    thrown = [e.message for _, e in of_kind(step.events, IllegalState)]
    if not thrown:
        return None
    req, g = delivered_request(before, step), before.group
    throws_on = req is not None and (req.api == "JoinGroup" or (
        req.api == "LeaveGroup" and not fact("validate-current-member", before.profile)))
    if (excused(STATIC_PENDING_JOIN) and req is not None and throws_on and req.member_id
            and req.group_instance_id is not None and g is not None and req.member_id in g.pending_members):
        return None
    if _reverts_a_departed_member(before, step) or stranded_leader_store(before, step):
        return None
    return {"errors": after.errors, "last_error": thrown[-1]}

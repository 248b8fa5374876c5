"""SPEC.md's corrections 1–4 (its "Corrections (2026-11-27)" list), each checked against Kafka's source at the
release tags and pinned here, one test per corrected passage, in impl, the model and the Z3 encoding.

Every expected value is Kafka's (the source lines and the Kafka test cited at each test), never impl's; where a test
restates one of Kafka's own, its name is cited. Tags: /work/.mirror/apache+kafka/repo 2.4.1, 2.7.0, 3.9.0-rc3
(GroupCoordinator.scala and GroupMetadata.scala under core/src/main/scala/kafka/coordinator/group/,
GroupCoordinatorTest.scala under core/src/test/scala/unit/kafka/coordinator/group/).
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from impl import Errors, GroupState
from model.outputs import CURRENT, GROUP_LEADER, SELF, STATIC, Answer, join_layout
from model.state import ABSENT, FREE, MEMBER, PREPARING, STABLE, AbstractAction, Scope, Slot, State
from model.step import outcomes
from tests.test_static_membership import G, Group, check_i4, completing, join, stable

PR, ST = GroupState.PREPARING_REBALANCE, GroupState.STABLE
LEADER = Slot(MEMBER, leader=True, watch=1, static=True)
FOLLOWER = Slot(MEMBER, watch=1, static=True)


# -- Correction 1: §3.1 J5a step 4, Stable [3.2+, KIP-814]: skipAssignment = isLeader ---------------------------
def test_correction_1_a_v9_follower_restart_gets_no_skip_and_no_member_list() -> None:
    """GroupCoordinator.scala 3.9.0-rc3 lines 1407-1422: ``isLeader = group.isLeader(newMemberId)``; members only if
    isLeader; ``skipAssignment = isLeader``; leaderId = the real leader. Kafka's test
    staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsAndPersistChange (GroupCoordinatorTest.scala 3.9.0-rc3
    lines 1060-1090): the follower's result has no members and no skip, the leader's has both."""
    g = stable("3.9")
    a, gen = g.ids["i-a"], g.gen
    r = g.c.join_group(G, "", 30_000, 20_000, "consumer", [("range", b"r1")], group_instance_id="i-b",
                       support_skipping_assignment=True).result
    assert (r.error, r.generation_id, r.leader_id, r.members, r.skip_assignment) == (Errors.NONE, gen, a, (), False)
    r = g.c.join_group(G, "", 30_000, 20_000, "consumer", [("range", b"r1")], group_instance_id="i-a",
                       support_skipping_assignment=True).result
    assert (r.leader_id, r.skip_assignment, len(r.members)) == (r.member_id, True, 2)
    check_i4(g.c)


def test_correction_1_the_model_says_skip_only_for_the_leader() -> None:
    """model/outputs.py join_layout: a static answer to a v9 restart on a KIP-814 release names the real leader and
    says skipAssignment = the member leads the group after the step (3.9.0-rc3 lines 1407-1422)."""
    follower = join_layout(STATIC, typed=True, skip_supported=True, leader_after=False)
    leader = join_layout(STATIC, typed=True, skip_supported=True, leader_after=True)
    assert (follower.leader, follower.members, follower.skip) == (GROUP_LEADER, False, False)
    assert (leader.leader, leader.members, leader.skip) == (SELF, True, True)


# -- Correction 2: §3.1 J5a step 4, Stable [2.6.1+]: the revert keeps the new protocols -------------------------
@pytest.mark.parametrize("release", ["2.7.0", "3.9"])
def test_correction_2_a_failed_store_keeps_the_restarts_metadata(release: str) -> None:
    """GroupCoordinator.scala 2.7.0 lines 1045-1046 and 3.9.0-rc3 lines 1366-1368: ``updateMember`` with the new
    protocols, *then* ``oldProtocols = knownStaticMember.supportedProtocols`` — the revert (2.7.0 line 1061, 3.9.0-rc3
    line 1383) writes back what it just set. Kafka's test
    staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchangedPersistenceFailure
    (GroupCoordinatorTest.scala 3.9.0-rc3 lines 1013-1039): the old member id then rejoins with the new protocols
    and is answered at once with NONE (no rebalance: its metadata is unchanged), and its SyncGroup is NONE."""
    g = stable(release, protocols=[("range", b"r1"), ("roundrobin", b"x1")], append_mode="deferred")
    old_b, gen = g.ids["i-b"], g.gen
    new_protocols = [("range", b"r2")]                     # keeps the selected protocol: stored, not rebalanced
    f = join(g.c, "", "i-b", new_protocols)
    g.c.complete_appends(ok=False, error=Errors.MESSAGE_TOO_LARGE)
    assert (f.result.error, f.result.member_id) == (Errors.UNKNOWN_SERVER_ERROR, "")   # §3.2 store error mapping
    assert g.view.members[old_b].protocols == (("range", b"r2"),)
    r = join(g.c, old_b, "i-b", new_protocols).result      # the old id with the restart's metadata: unchanged
    assert (r.error, r.generation_id, g.view.state) == (Errors.NONE, gen, ST)
    assert g.c.sync_group(G, gen, old_b, group_instance_id="i-b").result.error is Errors.NONE
    check_i4(g.c)


def test_correction_2_the_revert_restores_the_old_timeouts_on_3_9() -> None:
    """3.9.0-rc3 lines 1364-1365 read the old session and rebalance timeouts *before* updateMember, so the revert
    restores them (Kafka's test staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsButCannotPersistChange,
    GroupCoordinatorTest.scala 3.9.0-rc3 lines 1041-1057) while keeping the protocols."""
    g = stable("3.9", append_mode="deferred")
    g.c.join_group(G, "", 60_000, 40_000, "consumer", [("range", b"r2")], group_instance_id="i-b")
    g.c.complete_appends(ok=False, error=Errors.MESSAGE_TOO_LARGE)
    member = g.view.members[g.ids["i-b"]]
    assert (member.session_timeout_ms, member.rebalance_timeout_ms, member.protocols) == (
        30_000, 20_000, (("range", b"r2"),))


# -- Correction 3: §3.1 J5a step 4 [3.0+]: replaceStaticMember leaves pendingSyncMembers untouched ------------------
def test_correction_3_an_old_id_that_owed_a_sync_stays_pending_and_the_delayed_sync_rebalances() -> None:
    """GroupMetadata.scala 3.9.0-rc3 lines 319-340 (replaceStaticMember: members, callbacks, leaderId, staticMembers
    — not pendingSyncMembers); GroupCoordinator.scala 3.9.0-rc3 lines 1605-1611 (a SyncGroup removes only its own
    id) and 1656-1684 (onExpirePendingSync removes every id still pending — the old id is no member — and
    prepareRebalance)."""
    # a Stable group whose follower has not synced: the leader synced, then b restarts before its SyncGroup
    g2 = stable_with_unsynced_follower()
    c, gen, old_b = g2.c, g2.gen, g2.ids["i-b"]
    assert old_b in g2.view.pending_sync_members
    r = join(c, "", "i-b").result
    new_b = r.member_id
    assert r.error is Errors.NONE and g2.view.state is ST
    assert old_b in g2.view.pending_sync_members and new_b not in g2.view.pending_sync_members
    assert c.sync_group(G, gen, new_b, group_instance_id="i-b").result.error is Errors.NONE
    assert old_b in g2.view.pending_sync_members            # the new id cannot clear the old one
    deadline = min(op.deadline_ms for op in c.delayed_operations() if op.kind == "DelayedSync")
    c.advance(deadline - c.now_ms + 1)
    assert g2.view.state is PR and set(g2.view.members) == {g2.ids["i-a"], new_b}   # rebalances, evicts nobody
    assert not g2.view.pending_sync_members
    check_i4(c)


def stable_with_unsynced_follower() -> Group:
    g = completing("3.9")
    c, gen, leader = g.c, g.gen, g.view.leader_id
    c.advance(1)
    c.sync_group(G, gen, leader, {m: b"x" for m in g.view.members}, group_instance_id="i-a")
    assert g.view.state is ST
    return g


def test_correction_3_the_model_leaves_the_old_id_in_pending_sync() -> None:
    """model/static.py: a restart in Stable moves the slot's place in pendingSyncMembers to a free slot (an id that is
    no member); the new id's SyncGroup does not clear it; ExpireSync drops it and rebalances, both members kept."""
    owed = replace(FOLLOWER, pending_sync=True)
    state = State(STABLE, sync_op=True, fresh=False, slots=(LEADER, owed, FREE))
    scope = Scope(members=3, deferred_appends=False, static=True)
    [(after, outputs)] = outcomes(state, AbstractAction("JoinGroup/static-rejoin", 1), "3.9", scope, canonical=False)
    assert outputs.answers == (Answer(1, "JoinGroup", "NONE", CURRENT, STATIC),)
    assert not after.slots[1].pending_sync and after.slots[2] == Slot(ABSENT, watch=1, pending_sync=True)
    [(synced, _)] = outcomes(after, AbstractAction("SyncGroup", 1), "3.9", scope, canonical=False)
    assert synced.sync_op and synced.slots[2].pending_sync
    expired = outcomes(synced, AbstractAction("ExpireSync"), "3.9", scope, canonical=False)
    # before the correction the restarted slot kept its pending sync, and the expiry evicted it
    assert {(t.group, t.slots[0].status, t.slots[1].status, t.slots[2]) for t, _ in expired} == {
        (PREPARING, MEMBER, MEMBER, FREE)}


# -- Correction 4: §4.6 ≤2.4: tryComplete of a heartbeat op completes it when the group is Dead (KAFKA-8896) --------
def test_correction_4_unloading_completes_the_members_heartbeat_ops_on_2_4_1() -> None:
    """GroupCoordinator.scala 2.4.1 lines 1113-1118 (tryCompleteHeartbeat: group Dead ⇒ forceComplete) and 827-849
    (onGroupUnloaded: Dead, then checkAndComplete(MemberKey) of every member of a Stable/CompletingRebalance group);
    KAFKA-8896, commit 270e6109159, first tagged 2.4.0. Kafka's test testCompleteHeartbeatWithGroupDead
    (GroupCoordinatorTest.scala 2.4.1 lines 3129-3140)."""
    from tests.group_builders import stable as dynamic_stable
    scene = dynamic_stable("2.4.1")
    c = scene.c
    assert [op for op in c.delayed_operations() if op.kind == "DelayedHeartbeat"]
    c.unload_group(G)
    assert not [op for op in c.delayed_operations() if op.kind == "DelayedHeartbeat"]
    assert not [e for e in c.timer.entries.values() if getattr(e, "kind", "") == "DelayedHeartbeat"]


def test_correction_4_a_dead_groups_heartbeat_op_completes_when_checked_on_2_4_1() -> None:
    """testCompleteHeartbeatWithGroupDead (2.4.1 lines 3129-3140): the group transitions to Dead and
    tryCompleteHeartbeat of a member's op returns true; its expiry then changes nothing."""
    from impl.delayed import DelayedHeartbeat
    from tests.group_builders import stable as dynamic_stable
    scene = dynamic_stable("2.4.1")
    c = scene.c
    group = c.groups[G]
    group.transition_to(GroupState.DEAD, c.now_ms)
    member = group.get(scene.leader)
    op = DelayedHeartbeat(c, group, member, member.member_id, c.now_ms + 10_000, 10_000, -1)
    assert c.try_complete_heartbeat(op, lambda: True) is True
    c.on_expire_heartbeat(op)
    assert group.has(scene.leader)


@pytest.mark.parametrize("plant", [True, False])
def test_correction_2_a_revert_that_restores_the_old_protocols_is_caught_by_refinement(plant: bool) -> None:
    """The model does not name metadata; the shadow of the request history does (harness/shadow.py): after a revert
    it keeps the restart's protocols, so the old id's next JoinGroup with them is labelled unchanged — a follower in
    Stable is answered at once. A coordinator that restored the old protocols rebalances instead: caught."""
    import dataclasses

    from core.actions import Action
    from harness.external import WireRequest
    from harness.refinement import NonRefiningStep, RefinementChecker
    from harness.scope import Scope as WorldScope
    from harness.world import World

    world = World("3.9", WorldScope(append_mode="deferred", faults=True), clients=["external", "external"],
                  record=True)
    checker = RefinementChecker(world)
    original = world.coord.static_member_rejoin

    def rejoin(group, req, new_member_id, future):   # type: ignore[no-untyped-def]
        before = group.get(group.static_members[req.group_instance_id]).protocols
        original(group, req, new_member_id, future)
        for pending in world.coord.appends:          # the plant: the revert gives back the protocols of before
            if pending.rejoin is not None and pending.rejoin.new_member_id == new_member_id:
                pending.rejoin = dataclasses.replace(pending.rejoin, old_protocols=before)
    if plant:
        world.coord.static_member_rejoin = rejoin   # type: ignore[method-assign]
    corr = [0, 0]

    def send(client: int, api: str, **fields: object) -> None:
        corr[client] += 1
        checker.step(Action("Receive", client, WireRequest(api, corr[client], "g", **fields).to_payload()))  # type: ignore[arg-type]

    def join_(client: int, member_id: str = "", protocols: tuple = (("range", b"r1"),)) -> None:   # type: ignore[type-arg]
        send(client, "JoinGroup", member_id=member_id, session_timeout_ms=30000, rebalance_timeout_ms=20000,
             protocol_type="consumer", protocols=protocols, group_instance_id=f"i{client}")
    join_(0)
    join_(1)
    while world.coord.groups["g"].state is GroupState.PREPARING_REBALANCE:
        due = world.coord.due_timers()
        checker.step(Action("FireTimer", -1, due[0].seq) if due else Action("AdvanceClock", -1, 1000))
    group = world.coord.groups["g"]
    ids = {int(m.group_instance_id[1:]): m.member_id for m in group.all_members()}
    leader = 0 if group.leader_id == ids[0] else 1
    send(leader, "SyncGroup", member_id=ids[leader], generation_id=group.generation_id, group_instance_id=f"i{leader}",
         assignments=((ids[0], b"a0"), (ids[1], b"a1")))
    checker.step(Action("CompleteAppend", -1, "NONE"))
    follower = 1 - leader
    join_(follower, protocols=(("range", b"r2"),))                      # the restart, stored in Stable
    checker.step(Action("CompleteAppend", -1, "REQUEST_TIMED_OUT"))     # the store fails: the revert
    if not plant:   # the reference: the old id with the restart's metadata is answered at once (Corrections 2)
        join_(follower, ids[follower], protocols=(("range", b"r2"),))
        assert world.answered[0].error == "NONE" and group.state is GroupState.STABLE
        return
    with pytest.raises(NonRefiningStep, match="JoinGroup"):
        join_(follower, ids[follower], protocols=(("range", b"r2"),))

"""Each profile switch that differs between the shipped releases (0.10.0, 2.4.1, 2.7.0, 3.9), driven through the
coordinator's public API (DESIGN.md §4) on every profile where it differs.

Expected values are written from SPEC.md (section cited per test), never computed from impl/profiles.py.
"""
from __future__ import annotations

import pytest

from impl import Errors, GroupState
from tests.group_builders import (CR, D_MS, EMPTY, G, NEW_MEMBER_MS, PR, PROTOCOL_TYPE, PROTOS_CHANGED,
                                  R_MS, S_MS, ST, advance_past, assignment_for, completing, coordinator,
                                  hb_deadlines, join, members, new_member, op_deadlines, pending, preparing, stable)

ALL = ("0.10.0", "2.4.1", "2.7.0", "3.9")


# -- §3.3 heartbeat answers by state ------------------------------------------------------------------------------
#: (error, timer reset) for a valid member at the current generation, per release column of the §3.3 table
HEARTBEAT_IN = {
    ("0.10.0", PR): (Errors.REBALANCE_IN_PROGRESS, False),   # 0.9.0 column: not reset
    ("2.4.1", PR): (Errors.REBALANCE_IN_PROGRESS, True),     # 2.3.0–2.6.0: timer reset, RIP
    ("2.7.0", PR): (Errors.REBALANCE_IN_PROGRESS, True),
    ("3.9", PR): (Errors.REBALANCE_IN_PROGRESS, True),
    ("0.10.0", CR): (Errors.REBALANCE_IN_PROGRESS, False),
    ("2.4.1", CR): (Errors.REBALANCE_IN_PROGRESS, False),    # 2.3.0–2.6.0: RIP, not reset
    ("2.7.0", CR): (Errors.NONE, True),                      # 2.6.1/2.7.0+ (KAFKA-10134): reset, NONE
    ("3.9", CR): (Errors.NONE, True),
}


@pytest.mark.parametrize("profile,state", sorted(HEARTBEAT_IN, key=lambda k: (k[0], k[1].value)))
def test_heartbeat_answer_and_reset_by_state(profile: str, state: GroupState) -> None:
    scene = preparing(profile) if state is PR else completing(profile)
    c, member = scene.c, scene.follower
    c.advance(500)
    before = hb_deadlines(c, member)
    r = c.heartbeat(G, member, scene.gen)
    error, resets = HEARTBEAT_IN[(profile, state)]
    assert r.result.error is error
    assert (hb_deadlines(c, member) == [c.now_ms + S_MS]) is resets, (before, hb_deadlines(c, member))


@pytest.mark.parametrize("profile,error", [("0.10.0", Errors.REBALANCE_IN_PROGRESS),
                                           ("2.4.1", Errors.ILLEGAL_GENERATION),
                                           ("2.7.0", Errors.ILLEGAL_GENERATION), ("3.9", Errors.ILLEGAL_GENERATION)])
def test_stale_heartbeat_in_completing_rebalance(profile: str, error: Errors) -> None:
    """§3.3: 0.9–2.2 switched on the state first; 2.3.0+ checks member and generation first, "so a stale
    generation now gets ILLEGAL_GENERATION"."""
    scene = completing(profile)
    assert scene.c.heartbeat(G, scene.follower, scene.gen - 1).result.error is error


# -- §2 liveness predicates ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,armed", [("0.10.0", True), ("2.4.1", False), ("2.7.0", True), ("3.9", True)])
def test_liveness_op_armed_by_the_join_response(profile: str, armed: bool) -> None:
    """§4.4 step 5: every member gets its heartbeat rescheduled with the session timeout, *then* isNew = false.
    2.4.1 (§2, KAFKA-9232 row) tests isNew first with latestHeartbeat + 300000 > deadline, so the new op (deadline
    now + session) completes at birth and no expiration is armed (§4.6 design assumption, derived); 0.10.0's
    deadline predicate and 2.5.0+'s hasSatisfiedHeartbeat (flag false at birth) arm it."""
    scene = completing(profile)
    for m in (scene.leader, scene.follower):
        assert hb_deadlines(scene.c, m) == ([scene.c.now_ms + S_MS] if armed else []), m


@pytest.mark.parametrize("profile,kept", [("0.10.0", False), ("2.4.1", True), ("2.7.0", False), ("3.9", False)])
def test_member_silent_after_its_join_response(profile: str, kept: bool) -> None:
    """Consequence of the test above (derived from §2 and §4.4): in 2.4.1 a member that got its join response and
    then never heartbeats nor syncs is not expired by its session timeout; elsewhere it is (3.9's DelayedSync
    is due only at the rebalance timeout, later than the session timeout here)."""
    scene = completing(profile)
    c = scene.c
    c.advance(S_MS + 1)
    assert (scene.follower in members(c)) is kept


@pytest.mark.parametrize("profile,watches", [("0.10.0", 2), ("2.4.1", 2), ("2.7.0", 1), ("3.9", 1)])
def test_two_reschedules_in_one_millisecond(profile: str, watches: int) -> None:
    """§2: the deadline arithmetic (≤ 2.4) keeps an op with latestHeartbeat + session > deadline — false for an
    op armed in the same millisecond, so two heartbeats in one ms leave two armed ops; the heartbeatSatisfied
    flag (2.5.0+, KAFKA-9752) completes the older one."""
    scene = stable(profile)
    c = scene.c
    c.advance(100)
    for _ in range(2):
        assert c.heartbeat(G, scene.follower, scene.gen).result.error is Errors.NONE
    assert hb_deadlines(c, scene.follower) == [c.now_ms + S_MS] * watches


@pytest.mark.parametrize("profile", ["2.4.1", "2.7.0", "3.9"])
def test_new_member_parked_join_bounded_by_new_member_timeout(profile: str) -> None:
    """§2 isNew / §3.1 addMemberAndRebalance: a new member's op uses the 5-minute timeout; its parked JoinGroup does
    not keep it alive (2.4.1+: isNew is tested before awaitingJoin), so at expiry it is removed and its JoinGroup
    answered UNKNOWN_MEMBER_ID with member id "" (§3.4)."""
    scene = stable(profile, rebalance=600_000)
    c = scene.c
    c.advance(10)
    joiner, future = new_member(c)
    added = c.now_ms
    assert hb_deadlines(c, joiner) == [added + NEW_MEMBER_MS]
    join(c, scene.leader, rebalance=600_000)
    while c.now_ms <= added + NEW_MEMBER_MS:   # the follower keeps heartbeating; it never rejoins
        c.advance(3_000)
        c.heartbeat(G, scene.follower, scene.gen)
    assert future.done and future.result.error is Errors.UNKNOWN_MEMBER_ID and future.result.member_id == ""
    assert joiner not in members(c)


def test_no_new_member_timeout_in_0_10_0() -> None:
    """§2 isNew appears in 2.1.1/2.2.0 (KAFKA-7610): a 0.10.0 member added by JoinGroup gets no liveness op."""
    scene = stable("0.10.0")
    c = scene.c
    c.advance(10)
    joiner, future = new_member(c)
    assert not future.done and hb_deadlines(c, joiner) == []


@pytest.mark.parametrize("profile,remaining", [("0.10.0", 1), ("2.4.1", 0), ("2.7.0", 0), ("3.9", 0)])
def test_members_not_rejoined_lose_their_ops(profile: str, remaining: int) -> None:
    """§4.4 step 1 (KAFKA-7196, 2.1.0): onCompleteJoin completes the heartbeat op of each member it removes (2.4:
    removeHeartbeatForLeavingMember sets isLeaving before the removal); 0.10.0 leaves it armed."""
    scene = preparing(profile)   # the leader rejoined, the follower does not
    c = scene.c
    follower_ops = hb_deadlines(c, scene.follower)
    assert follower_ops
    advance_past(c, min(op_deadlines(c, "DelayedJoin")))
    assert scene.follower not in members(c)
    if remaining:   # 0.10.0: the op may have expired meanwhile only if its deadline passed
        assert len([d for d in follower_ops if d >= c.now_ms]) == len(hb_deadlines(c, scene.follower))
    else:
        assert hb_deadlines(c, scene.follower) == []


@pytest.mark.parametrize("profile,left", [("0.10.0", True), ("2.4.1", False), ("2.7.0", False), ("3.9", False)])
def test_unload_and_the_heartbeat_ops_of_the_dead_group(profile: str, left: bool) -> None:
    """§4.6 and SPEC.md Corrections 4: from 2.2.2/2.3.1/2.4.0 (KAFKA-8896) tryComplete completes every op of a Dead
    group (GroupCoordinator.scala 2.4.1 lines 1113-1118; onGroupUnloaded checks each member key, §3.7). 0.10.0's
    tryComplete is keep-predicate ∨ isLeaving only, false for a Stable member's current op, so its ops stay armed and
    later expire harmlessly (§3.7 "only log"). (This test asserted 2.4.1 kept its ops before the correction.)"""
    scene = stable(profile)
    c = scene.c
    c.advance(100)
    c.unload_group(G)
    assert bool(hb_deadlines(c, scene.follower)) is left
    c.advance(S_MS + 1)   # the expiry of a Dead group's op changes nothing
    assert hb_deadlines(c, scene.follower) == [] and c.describe(G) is None and not c.errors


# -- §3.1 J4 group.max.size ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,admitted", [("0.10.0", True), ("2.4.1", False), ("2.7.0", True), ("3.9", True)])
def test_max_size_unknown_member_while_preparing(profile: str, admitted: bool) -> None:
    """Two members, max 2, PreparingRebalance with one awaiting: 2.2–2.5 refuse an unknown member id when
    |members| ≥ max; 2.6+ acceptJoiningMember admits it while numAwaiting < max; 0.10.0 has no group.max.size."""
    scene = preparing(profile, cfg={"group_max_size": 2})
    r = join(scene.c, "")
    if admitted:
        assert not r.done or r.result.error is not Errors.GROUP_MAX_SIZE_REACHED
    else:
        assert r.done and r.result.error is Errors.GROUP_MAX_SIZE_REACHED and r.result.member_id == ""
        assert len(members(scene.c)) == 2


@pytest.mark.parametrize("profile,admitted,cleared", [("2.4.1", True, None), ("2.7.0", False, False),
                                                      ("3.9", False, True)])
def test_max_size_pending_member_of_a_full_stable_group(profile: str, admitted: bool, cleared: bool | None) -> None:
    """A pending id (KIP-394) rejoins a Stable group that filled up meanwhile. 2.2–2.5: the check only refuses
    unknown ids and oversized known members, so it is added (→ PreparingRebalance); 2.6+: Stable accepts only an
    existing member or |members| < max → GROUP_MAX_SIZE_REACHED, and the coordinator calls group.remove(memberId),
    which clears the pending id from 3.0.0 (#9958; 3.9 GroupMetadata.scala 280) but not before: 2.7.0's remove()
    leaves pendingMembers alone (GroupMetadata.scala 2.7.0 259-268, GroupCoordinator.scala 184-187) — SPEC.md §3.1
    J4 says "also clears pending" for 2.6.0+."""
    scene = stable(profile, n=1, cfg={"group_max_size": 2})
    c = scene.c
    c.advance(10)
    first = join(c, "", session=60_000, require_known_member_id=True)
    assert first.result.error is Errors.MEMBER_ID_REQUIRED
    pending_id = first.result.member_id
    c.advance(10)
    join(c, "")                         # a v3 member fills the group: → PreparingRebalance
    join(c, scene.leader)
    advance_past(c, min(op_deadlines(c, "DelayedJoin")))   # the pending id blocks early completion
    view = c.describe(G)
    assert view.state is CR and len(view.members) == 2 and pending_id in pending(c)
    c.sync_group(G, view.generation_id, view.leader_id, {m: assignment_for(m) for m in view.members})
    assert c.describe(G).state is ST
    r = join(c, pending_id)
    if admitted:
        assert c.describe(G).state is PR and pending_id in members(c)
    else:
        assert r.result.error is Errors.GROUP_MAX_SIZE_REACHED and r.result.member_id == ""
        assert (pending_id not in pending(c)) is cleared and c.describe(G).state is ST


# -- §3.1 / §3.2 KIP-559 (2.5): protocol type in JoinGroup answers, protocol checks in SyncGroup -------------------
@pytest.mark.parametrize("profile,protocol_type", [("0.10.0", None), ("2.4.1", None), ("2.7.0", PROTOCOL_TYPE),
                                                   ("3.9", PROTOCOL_TYPE)])
def test_join_response_protocol_type(profile: str, protocol_type: str | None) -> None:
    scene = completing(profile)
    assert scene.joins[scene.follower].result.protocol_type == protocol_type


@pytest.mark.parametrize("profile,error", [("2.4.1", Errors.NONE), ("2.7.0", Errors.INCONSISTENT_GROUP_PROTOCOL),
                                           ("3.9", Errors.INCONSISTENT_GROUP_PROTOCOL)])
def test_sync_with_another_protocol_type(profile: str, error: Errors) -> None:
    """§3.2 step 4 [2.5.0+, SyncGroup v5]: a protocolType different from the group's is refused."""
    scene = stable(profile, follower_syncs=False)
    r = scene.c.sync_group(G, scene.gen, scene.follower, protocol_type="connect")
    assert r.result.error is error


# -- §3.1 pending members, join error shape, initial delay, rebalance timeout -------------------------------------
@pytest.mark.parametrize("profile", ALL)
def test_first_join_of_a_v4_member(profile: str) -> None:
    """§3.1 J5a.5 (KIP-394, 2.2.0): MEMBER_ID_REQUIRED with the new id and generation −1 (NoGeneration, 2.2+), no
    state change; 0.10.0 has no pending members and adds the member."""
    c = coordinator(profile)
    r = join(c, "", require_known_member_id=True)
    if profile == "0.10.0":
        assert len(members(c)) == 1 and pending(c) == set()
    else:
        assert r.result.error is Errors.MEMBER_ID_REQUIRED and r.result.generation_id == -1
        assert pending(c) == {r.result.member_id} and c.describe(G).state is EMPTY


@pytest.mark.parametrize("profile,generation", [("0.10.0", 0), ("2.4.1", -1), ("2.7.0", -1), ("3.9", -1)])
def test_join_error_generation(profile: str, generation: int) -> None:
    """§3.1: error answers carry NoGeneration, −1 since 2.2 (0 before)."""
    r = join(coordinator(profile), "unknown-member")
    assert r.result.error is Errors.UNKNOWN_MEMBER_ID and r.result.generation_id == generation


@pytest.mark.parametrize("profile,initial", [("0.10.0", False), ("2.4.1", True), ("2.7.0", True), ("3.9", True)])
def test_initial_rebalance_delay(profile: str, initial: bool) -> None:
    """§4.5 (KAFKA-4925, 0.11.0): a rebalance from Empty waits group.initial.rebalance.delay.ms."""
    c = coordinator(profile)
    join(c, "")
    assert op_deadlines(c, "InitialDelayedJoin") == ([c.now_ms + D_MS] if initial else [])


@pytest.mark.parametrize("profile,timeout", [("0.10.0", S_MS), ("2.4.1", R_MS), ("2.7.0", R_MS), ("3.9", R_MS)])
def test_delayed_join_timeout_source(profile: str, timeout: int) -> None:
    """§4.9: the DelayedJoin lasts the max rebalance timeout (0.10.1+), the max session timeout in E0."""
    scene = preparing(profile)
    assert op_deadlines(scene.c, "DelayedJoin") == [scene.c.now_ms + timeout]


# -- §3.4 LeaveGroup -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", ALL)
def test_batch_leave(profile: str) -> None:
    """§3.4: 2.4.0+ (KAFKA-8221) answers each identity; before, only one member id and a single error."""
    scene = stable(profile)
    r = scene.c.leave_group(G, [(scene.follower, None), ("nobody", None)]).result
    if profile == "0.10.0":
        assert r.error is Errors.NONE and [e for _m, _i, e in r.member_errors] == [Errors.NONE]
    else:
        assert r.error is Errors.NONE
        assert [(m, e) for m, _i, e in r.member_errors] == [(scene.follower, Errors.NONE),
                                                            ("nobody", Errors.UNKNOWN_MEMBER_ID)]


@pytest.mark.parametrize("profile,answered", [("0.10.0", False), ("2.4.1", True), ("2.7.0", True), ("3.9", True)])
def test_leave_answers_the_parked_join(profile: str, answered: bool) -> None:
    """§3.4 removeMemberAndUpdateGroup [2.2.0+]: a parked JoinGroup is answered UNKNOWN_MEMBER_ID, member id ""."""
    scene = preparing(profile)
    parked = scene.joins[scene.leader]
    scene.c.leave_group(G, [(scene.leader, None)])
    assert parked.done is answered
    if answered:
        assert parked.result.error is Errors.UNKNOWN_MEMBER_ID and parked.result.member_id == ""


@pytest.mark.parametrize("profile", ["2.4.1", "2.7.0"])
def test_leave_completes_the_heartbeat_op(profile: str) -> None:
    """§3.4: ≤ 2.8 removeHeartbeatForLeavingMember (isLeaving, then checkAndComplete) — no op outlives the member."""
    scene = stable(profile)
    scene.c.leave_group(G, [(scene.follower, None)])
    assert hb_deadlines(scene.c, scene.follower) == []


# -- §3.5 OffsetCommit ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,error", [("0.10.0", Errors.REBALANCE_IN_PROGRESS),
                                           ("2.4.1", Errors.ILLEGAL_GENERATION), ("2.7.0", Errors.ILLEGAL_GENERATION),
                                           ("3.9", Errors.ILLEGAL_GENERATION)])
def test_stale_commit_in_completing_rebalance(profile: str, error: Errors) -> None:
    """§3.5: 0.9–2.3 checked CompletingRebalance before member/generation; KAFKA-8487 moved it last in 2.4.0."""
    scene = completing(profile)
    assert scene.c.commit_offsets(G, scene.follower, scene.gen - 1).result.error is error


@pytest.mark.parametrize("profile,created", [("0.10.0", False), ("2.4.1", True), ("2.7.0", True), ("3.9", True)])
def test_simple_commit_creates_an_empty_group(profile: str, created: bool) -> None:
    """§3.5: group absent and generation < 0 → create an Empty group and store; E0 has no Empty state."""
    c = coordinator(profile)
    assert c.commit_offsets(G, "", -1).result.error is Errors.NONE
    assert (c.describe(G) is not None and c.describe(G).state is EMPTY) is created


# -- §1 states ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,empty", [("0.10.0", False), ("2.4.1", True), ("2.7.0", True), ("3.9", True)])
def test_last_member_leaving(profile: str, empty: bool) -> None:
    """§1.3 PreparingRebalance → Empty (0.10.1+); §4.4 last line: in 0.9/0.10.0 an emptied group dies."""
    scene = stable(profile, n=1)
    gen = scene.gen
    scene.c.leave_group(G, [(scene.leader, None)])
    view = scene.c.describe(G)
    assert (view is not None and view.state is EMPTY and view.generation_id == gen + 1) is empty
    if not empty:
        assert view is None


# -- §3.0 pre-checks ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", ALL)
def test_loading_partition(profile: str) -> None:
    """§3.0: 2.0+ checks loading before ownership (a loading partition is not yet owned) and remaps per API
    (Heartbeat → NONE, SyncGroup → REBALANCE_IN_PROGRESS); before 2.0 it answered NOT_COORDINATOR."""
    scene = stable(profile)
    c, gen = scene.c, scene.gen
    c.unload_group(G)
    c.set_loading(G, True)
    hb = c.heartbeat(G, scene.follower, gen).result.error
    sync = c.sync_group(G, gen, scene.follower).result.error
    joined = join(c, scene.follower).result.error
    if profile == "0.10.0":
        assert (hb, sync, joined) == (Errors.NOT_COORDINATOR,) * 3
    else:
        assert (hb, sync, joined) == (Errors.NONE, Errors.REBALANCE_IN_PROGRESS, Errors.COORDINATOR_LOAD_IN_PROGRESS)


# -- §3.6 protocols ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,refused", [("0.10.0", False), ("2.4.1", True), ("2.7.0", True), ("3.9", True)])
def test_first_member_without_protocols(profile: str, refused: bool) -> None:
    """§3.6 (KAFKA-6005, 1.0.0): an Empty group accepts a JoinGroup only with a type and a non-empty list."""
    r = join(coordinator(profile), "", protocols=[])
    assert (r.done and r.result.error is Errors.INCONSISTENT_GROUP_PROTOCOL) is refused


# -- §3.2 SyncGroup, §4.8 DelayedSync, §2 KAFKA-14009 -------------------------------------------------------------
@pytest.mark.parametrize("profile,resets", [("0.10.0", True), ("2.4.1", False), ("2.7.0", False), ("3.9", False)])
def test_parked_sync_and_the_heartbeat(profile: str, resets: bool) -> None:
    """§3.2 step 5 (2.4.0 baseline) only parks the SyncGroup; seed 000 (0.10.0) also reschedules the heartbeat,
    after parking — and with awaitingSync the 0.9 keep-alive predicate (§2) completes the old op and the new one
    at birth, so nothing stays armed."""
    scene = completing(profile)
    c = scene.c
    c.advance(500)
    before = hb_deadlines(c, scene.follower)
    c.sync_group(G, scene.gen, scene.follower)
    after = hb_deadlines(c, scene.follower)
    assert after == ([] if resets else before)
    assert (before != after) is resets


@pytest.mark.parametrize("profile,armed", [("0.10.0", False), ("2.4.1", False), ("2.7.0", False), ("3.9", True)])
def test_delayed_sync(profile: str, armed: bool) -> None:
    """§4.8 (KAFKA-12890): DelayedSync from 2.8.1/3.0.0 only; §4.9 "2.6.1–2.8.0: none"."""
    scene = completing(profile)
    assert bool(op_deadlines(scene.c, "DelayedSync")) is armed


@pytest.mark.parametrize("profile,updated", [("2.4.1", False), ("2.7.0", False), ("3.9", True)])
def test_rejoin_with_new_timeouts(profile: str, updated: bool) -> None:
    """§2 sessionTimeoutMs: before 3.3.2/3.4.0 (KAFKA-14009) a rejoin with new values was ignored."""
    scene = preparing(profile)
    join(scene.c, scene.follower, protocols=PROTOS_CHANGED, session=S_MS + 1_000)
    view = scene.c.describe(G).members.get(scene.follower)
    session = view.session_timeout_ms if view else None
    assert session == (S_MS + 1_000 if updated else S_MS)

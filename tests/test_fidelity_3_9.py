"""Fidelity audit of profile 3.9 (issue 11 item 6): the rules of SPEC.md §1.5, §3.2, §3.8, §3.9 and
§4.1–§4.2 that the reference implements but no earlier test asserted.

Every test drives the coordinator through its public API (DESIGN.md §4) on the mock clock and checks
values written from SPEC.md, cited per test. The audit table is bench/results/fidelity-3.9.md; rules
that the reference does not follow are asserted, failing, in test_fidelity_3_9_gaps.py.
"""
from __future__ import annotations

import pytest

from impl import Errors
from tests.group_builders import (CR, D_MS, EMPTY, G, PR, R_MS, S_MS, ST, assignment_for, completing,
                                  coordinator, hb_deadlines, join, members, new_member, op_deadlines, pending,
                                  preparing, stable)

NONE, RIP, UNKNOWN, ILLEGAL = (Errors.NONE, Errors.REBALANCE_IN_PROGRESS, Errors.UNKNOWN_MEMBER_ID,
                               Errors.ILLEGAL_GENERATION)


def advance_to(c, t: int) -> None:
    """Move the clock to exactly ``t`` (a task due at ``t`` has not fired yet: it fires at t + 1)."""
    c.advance(t - c.now_ms)


# -- §3.0 / §3.8 row "invalid group id" --------------------------------------------------------------
@pytest.mark.parametrize("group_id", ["", None], ids=["empty", "null"])
def test_invalid_group_id_is_refused_by_join_sync_heartbeat_and_leave(group_id) -> None:
    """SPEC.md §3.0 check (1) and §3.8 row 'invalid group id': INVALID_GROUP_ID for Join, Sync and
    Heartbeat, top-level for Leave; null is invalid for everything, "" only for these APIs."""
    c = coordinator("3.9")
    r = c.join_group(group_id, "", S_MS, R_MS, "consumer", [("range", b"")]).result
    assert r.error is Errors.INVALID_GROUP_ID
    assert c.sync_group(group_id, 0, "m").result.error is Errors.INVALID_GROUP_ID
    assert c.heartbeat(group_id, "m", 0).result.error is Errors.INVALID_GROUP_ID
    leave = c.leave_group(group_id, [("m", None)]).result
    assert leave.error is Errors.INVALID_GROUP_ID and leave.member_errors == ()
    assert c.describe("") is None                        # nothing was created


def test_commit_refuses_a_null_group_id_but_takes_the_empty_one() -> None:
    """SPEC.md §3.0 check (1): null is invalid for everything; "" is allowed for OffsetCommit (§3.8 '"" allowed');
    a commit with generation < 0 to an absent group creates it Empty (§3.5)."""
    c = coordinator("3.9")
    assert c.commit_offsets(None, "", -1).result.error is Errors.INVALID_GROUP_ID
    assert c.commit_offsets("", "", -1).result.error is NONE
    assert c.describe("").state is EMPTY


# -- §3.8 row "member unknown", Join column ----------------------------------------------------------
@pytest.mark.parametrize("state", [PR, CR, ST], ids=lambda s: s.value)
def test_join_with_a_member_id_the_group_does_not_know(state) -> None:
    """SPEC.md §3.1 J5b step 5 / §3.8 row 'member unknown' (Join): UNKNOWN_MEMBER_ID in the join error shape
    (given memberId, generation −1, empty protocol/leader/members); the group is unchanged."""
    scene = {PR: preparing, CR: completing, ST: stable}[state]("3.9")
    gen, before = scene.gen, members(scene.c)
    r = join(scene.c, "no-such-member").result
    assert (r.error, r.member_id, r.generation_id, r.leader_id, r.members) == (UNKNOWN, "no-such-member", -1, "", ())
    assert not r.protocol_name
    assert (scene.state, scene.gen, members(scene.c)) == (state, gen, before)


# -- §3.2 SyncGroup: the order of the checks ------------------------------------------------------------
def test_sync_unknown_member_is_checked_before_the_generation() -> None:
    """SPEC.md §3.2 steps 2–3: member absent → UNKNOWN_MEMBER_ID comes before the generation check."""
    scene = completing("3.9")
    assert scene.c.sync_group(G, scene.gen + 5, "no-such-member").result.error is UNKNOWN


def test_sync_fencing_is_checked_before_the_generation() -> None:
    """SPEC.md §3.2 step 2 before step 3; §3.8 row 'instance id maps to other member' (Sync)."""
    c = coordinator("3.9")
    a = join(c, "", group_instance_id="i-a")
    b = join(c, "", group_instance_id="i-b")
    while c.describe(G).state is PR:                     # the InitialDelayedJoin chain times out (§4.5)
        c.advance(D_MS + 1)
    gen = a.result.generation_id
    assert c.describe(G).state is CR
    r = c.sync_group(G, gen + 7, a.result.member_id, group_instance_id="i-b").result
    assert r.error is Errors.FENCED_INSTANCE_ID
    assert c.sync_group(G, gen + 7, b.result.member_id, group_instance_id="i-b").result.error is ILLEGAL


def test_sync_generation_is_checked_before_the_protocol() -> None:
    """SPEC.md §3.2 steps 3–4: ILLEGAL_GENERATION before the KIP-559 protocol check (SyncGroup v5)."""
    scene = completing("3.9")
    r = scene.c.sync_group(G, scene.gen + 1, scene.follower, protocol_type="other", protocol_name="other").result
    assert r.error is ILLEGAL


def test_sync_protocol_is_checked_before_the_state() -> None:
    """SPEC.md §3.2 steps 4–5: in PreparingRebalance a mismatching protocol name gets
    INCONSISTENT_GROUP_PROTOCOL, not REBALANCE_IN_PROGRESS."""
    scene = preparing("3.9")
    r = scene.c.sync_group(G, scene.gen, scene.follower, protocol_name="other").result
    assert r.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert scene.c.sync_group(G, scene.gen, scene.follower, protocol_name="range").result.error is RIP


def test_a_second_parked_sync_overwrites_the_first() -> None:
    """SPEC.md §3.2 step 5 CompletingRebalance: 'park the callback on the member (overwrites any previous
    one)' — the store callback answers only the latest; the first stays unanswered."""
    scene = completing("3.9")
    c = scene.c
    first = c.sync_group(G, scene.gen, scene.follower)
    second = c.sync_group(G, scene.gen, scene.follower)
    c.sync_group(G, scene.gen, scene.leader, {m: assignment_for(m) for m in members(c)})
    assert scene.state is ST
    assert (second.result.error, second.result.assignment) == (NONE, assignment_for(scene.follower))
    assert not first.done


def test_the_leader_sync_fills_missing_members_and_followers_read_the_stored_assignment() -> None:
    """SPEC.md §3.2: the leader's map is completed with empty assignments for missing members; a follower that
    syncs after the transition gets its assignment from the Stable branch ('Followers' SyncGroups are not
    required for the transition to Stable')."""
    scene = completing("3.9", n=3)
    c = scene.c
    third = sorted(members(c) - {scene.leader, scene.follower})[0]
    c.sync_group(G, scene.gen, scene.leader, {scene.follower: b"F"})
    assert scene.state is ST
    assert c.sync_group(G, scene.gen, scene.follower).result.assignment == b"F"
    r = c.sync_group(G, scene.gen, third).result
    assert (r.error, r.assignment) == (NONE, b"")


# -- §3.9 column transitions to Empty ---------------------------------------------------------------------
def test_last_member_leaving_stable_with_a_pending_member_ends_empty_at_once() -> None:
    """SPEC.md §1.3 'PreparingRebalance → Empty': with a pending member the 0 ms DelayedJoin does not complete
    on its try, it expires at once; the group is Empty with generation + 1 and the pending member stays pending
    (§3.1 J5a step 5: its expiration is its session timeout)."""
    scene = stable("3.9", n=1)
    c, gen = scene.c, scene.gen
    c.advance(1_000)
    r = join(c, "", require_known_member_id=True).result
    assert r.error is Errors.MEMBER_ID_REQUIRED
    joined_at = c.now_ms
    c.advance(1_000)
    assert c.leave_group(G, [(scene.leader, None)]).result.error is NONE
    assert (scene.state, scene.gen, set(scene.view.members)) == (EMPTY, gen + 1, set())
    assert pending(c) == {r.member_id}
    assert [op.deadline_ms for op in c.delayed_operations() if op.pending] == [joined_at + S_MS]
    # the pending member's second JoinGroup adds it: Empty → PR with an InitialDelayedJoin of D (§3.9 'Join,
    # pending id', §4.5)
    again = join(c, r.member_id)
    assert not again.done and scene.state is PR
    assert op_deadlines(c, "InitialDelayedJoin") == [c.now_ms + D_MS]


def test_every_member_leaving_preparing_rebalance_ends_empty() -> None:
    """SPEC.md §3.9 row 'Leave', PreparingRebalance: 'remove, re-check join (may → CR or Empty)'; the parked
    JoinGroup of a leaver is answered UNKNOWN_MEMBER_ID with memberId "" (§3.4)."""
    scene = preparing("3.9")
    gen, parked = scene.gen, scene.joins[scene.leader]
    r = scene.c.leave_group(G, [(scene.leader, None), (scene.follower, None)]).result
    assert r.member_errors == ((scene.leader, None, NONE), (scene.follower, None, NONE))
    assert (scene.state, scene.gen, scene.view.members, scene.view.leader_id) == (EMPTY, gen + 1, {}, None)
    assert (parked.result.error, parked.result.member_id) == (UNKNOWN, "")
    assert [op.kind for op in scene.c.delayed_operations()] == []


# -- §4.4 / §4.9: the DelayedJoin timeout ------------------------------------------------------------------
def test_delayed_join_timeout_is_fixed_when_the_rebalance_starts() -> None:
    """SPEC.md §4.4: 'timeout = group.rebalanceTimeoutMs at creation — later joiners with bigger timeouts do
    not extend it'."""
    scene = preparing("3.9")
    c = scene.c
    started = c.now_ms
    assert op_deadlines(c, "DelayedJoin") == [started + R_MS]
    c.advance(1_000)
    new_member(c, rebalance=10 * R_MS)
    assert op_deadlines(c, "DelayedJoin") == [started + R_MS]


# -- §4.1–§4.2: completion cancels, keys separate --------------------------------------------------------
def test_a_delayed_join_completed_by_the_last_rejoin_never_fires() -> None:
    """SPEC.md §4.1 forceComplete: the winner cancels its timer entry, onComplete runs once; DESIGN.md §4: a
    completed delayed operation never fires. The join phase ends when the last member rejoins; passing the
    old deadline changes nothing."""
    scene = preparing("3.9")
    c = scene.c
    (deadline,) = op_deadlines(c, "DelayedJoin")
    join(c, scene.follower)
    assert scene.state is CR and op_deadlines(c, "DelayedJoin") == []
    gen = scene.gen
    c.sync_group(G, gen, scene.leader, {m: assignment_for(m) for m in members(c)})
    c.sync_group(G, gen, scene.follower)
    while c.now_ms <= deadline:
        c.advance(min(5_000, deadline + 1 - c.now_ms))
        assert c.heartbeat(G, scene.leader, gen).result.error is NONE
        assert c.heartbeat(G, scene.follower, gen).result.error is NONE
    assert (scene.state, scene.gen, members(c)) == (ST, gen, {scene.leader, scene.follower})


def test_heartbeat_operations_are_keyed_per_member() -> None:
    """SPEC.md §4.2 'Heartbeat' purgatory, key MemberKey(groupId, memberId): one member's liveness event
    completes and re-arms only its own operation (§4.6); the other member's deadline is untouched."""
    scene = stable("3.9")
    c, gen = scene.c, scene.gen
    follower_before = hb_deadlines(c, scene.follower)
    c.advance(1_000)
    assert c.heartbeat(G, scene.leader, gen).result.error is NONE
    assert hb_deadlines(c, scene.leader) == [c.now_ms + S_MS]
    assert hb_deadlines(c, scene.follower) == follower_before


def test_delayed_sync_and_delayed_join_are_watched_separately() -> None:
    """SPEC.md §4.2: the 'Rebalance' purgatory watches DelayedJoin on GroupJoinKey and DelayedSync on
    GroupSyncKey [3.0+]; §4.8: prepareRebalance completes the DelayedSync and a new DelayedJoin is armed."""
    scene = completing("3.9")
    c = scene.c
    (sync_op,) = [op for op in c.delayed_operations() if op.kind == "DelayedSync"]
    assert [op.kind for op in c.delayed_operations() if op.key == sync_op.key] == ["DelayedSync"]
    join(c, scene.follower, [("range", b"changed")])     # changed metadata in CR → PR (§3.1 J5b)
    ops = c.delayed_operations()
    assert [op.kind for op in ops if op.kind in ("DelayedSync", "DelayedJoin")] == ["DelayedJoin"]
    (join_op,) = [op for op in ops if op.kind == "DelayedJoin"]
    assert join_op.key != sync_op.key


# -- §4.8 DelayedSync expiry against a deferred leader store ---------------------------------------------------
def test_delayed_sync_expiry_while_the_leader_store_is_pending() -> None:
    """SPEC.md §4.8 expiry: remove every member still pending sync and prepareRebalance, which answers the
    leader's parked SyncGroup REBALANCE_IN_PROGRESS (§3.2 prepareRebalance); the store callback that arrives
    afterwards is a no-op because the group left CompletingRebalance (§3.2 callback guard, §5.2 (a))."""
    scene = completing("3.9", cfg={"append_mode": "deferred"})
    c, gen = scene.c, scene.gen
    assert op_deadlines(c, "DelayedSync") == [c.now_ms + R_MS]   # delay = group rebalance timeout
    (ds,) = op_deadlines(c, "DelayedSync")
    leader_sync = c.sync_group(G, gen, scene.leader, {m: assignment_for(m) for m in members(c)})
    assert not leader_sync.done and len(c.pending_appends()) == 1
    while c.now_ms + 5_000 <= ds:                        # the follower heartbeats (NONE in CR, 2.6.1+) but never syncs
        c.advance(5_000)
        assert c.heartbeat(G, scene.follower, gen).result.error is NONE
    advance_to(c, ds)
    assert scene.state is CR and not leader_sync.done
    c.advance(1)
    assert scene.state is PR and members(c) == {scene.leader}
    assert leader_sync.result.error is RIP
    c.complete_appends()
    assert scene.state is PR and scene.gen == gen
    assert scene.view.members[scene.leader].assignment == b""


def test_leader_sync_in_stable_returns_its_stored_assignment_without_a_store() -> None:
    """SPEC.md §3.9 row 'Sync, leader', Stable: 'return stored assignment, reset hb' — the Stable branch of §3.2
    step 5 answers at once; the leader's new map is not stored again (no log append)."""
    scene = stable("3.9", cfg={"append_mode": "deferred"})
    c = scene.c
    c.advance(1_000)
    r = c.sync_group(G, scene.gen, scene.leader, {m: b"other" for m in members(c)}).result
    assert (r.error, r.assignment) == (NONE, assignment_for(scene.leader))
    assert c.pending_appends() == [] and scene.state is ST
    assert hb_deadlines(c, scene.leader) == [c.now_ms + S_MS]

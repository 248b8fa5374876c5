"""Timer-driven cells of SPEC.md §3.9 and §4.4–§4.8, and partition unload/load (§3.7), per profile.

Heartbeat expiry per state, DelayedJoin completion, DelayedSync (3.9), InitialDelayedJoin (3.9),
the 5-minute new-member timeout (3.9), pending-member expiry (3.9), and failover. A task due at
deadline d fires on the first advance that takes the clock past d (DESIGN.md §4), so "at d the
member is still there, at d + 1 it is gone" is the exact boundary.
"""
from __future__ import annotations

import pytest

from impl import Errors
from tests.group_builders import (CR, D_MS, EMPTY, G, NEW_MEMBER_MS, PR, PROFILES, S_MS, ST,
                                  assignment_for, completing, coordinator, empty, hb_deadlines, join, members,
                                  new_member, op_deadlines, pending, preparing, stable, was_reset)

#: §4.9: DelayedJoin delay = max rebalanceTimeoutMs (0.10.1+); 0.9/0.10.0: max sessionTimeoutMs
JOIN_PHASE_MS = {"0.10.0": S_MS, "3.9": 20_000}


def advance_to(c, t: int) -> None:
    c.advance(t - c.now_ms)


def keep_alive_by_commits(c, member_id: str, generation: int, until: int) -> None:
    """OffsetCommit in Stable/PR resets the heartbeat on every profile (§3.5, KAFKA-3470)."""
    while c.now_ms + 5_000 <= until:
        c.advance(5_000)
        assert c.commit_offsets(G, member_id, generation, {}).result.error is Errors.NONE
    advance_to(c, until)


# -- heartbeat expiry (§3.9 row "Heartbeat expiry (not awaiting)") -------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_expiry_in_stable_removes_and_rebalances(profile: str) -> None:
    scene = stable(profile)
    c, gen = scene.c, scene.gen
    c.advance(1_000)
    c.heartbeat(G, scene.leader, gen)
    (deadline,) = hb_deadlines(c, scene.follower)
    advance_to(c, deadline)
    assert scene.follower in members(c) and scene.state is ST
    c.advance(1)
    assert (scene.state, scene.gen, set(scene.view.members)) == (PR, gen, {scene.leader})


@pytest.mark.parametrize("profile", PROFILES)
def test_expiry_in_completing_rebalances_and_answers_parked_syncs(profile: str) -> None:
    # the leader's SyncGroup is parked (append deferred) so it is kept alive (awaiting sync, §2); the
    # follower neither syncs nor heartbeats: removed at its session deadline → PR, parked SyncGroups RIP
    scene = completing(profile, cfg={"append_mode": "deferred"})
    c = scene.c
    c.advance(1_000)
    leader_sync = c.sync_group(G, scene.gen, scene.leader, {})
    (deadline,) = hb_deadlines(c, scene.follower)
    advance_to(c, deadline)
    assert scene.state is CR and not leader_sync.done
    c.advance(1)
    assert scene.state is PR and set(scene.view.members) == {scene.leader}
    assert leader_sync.result.error is Errors.REBALANCE_IN_PROGRESS


@pytest.mark.parametrize("profile", PROFILES)
def test_parked_sync_keeps_members_alive(profile: str) -> None:
    # §4.6 consequence: a member with a parked SyncGroup is kept alive (its op completes or expires as no-op)
    scene = completing(profile, cfg={"append_mode": "deferred"})
    c = scene.c
    c.advance(1_000)
    syncs = [c.sync_group(G, scene.gen, m, {}) for m in (scene.follower, scene.leader)]
    c.advance(3 * S_MS)
    assert scene.state is CR and set(scene.view.members) == {scene.leader, scene.follower}
    assert not any(s.done for s in syncs)


@pytest.mark.parametrize("profile", PROFILES)
def test_expiry_in_preparing_removes_and_completes_the_join(profile: str) -> None:
    # §3.9 PR: remove, re-check join; the rejoined leader is kept (awaiting join) and gets its response
    scene = preparing(profile)
    c, gen = scene.c, scene.gen
    (deadline,) = hb_deadlines(c, scene.follower)
    assert deadline < min(op_deadlines(c, "DelayedJoin"))   # the expiry, not the join timeout, ends it
    advance_to(c, deadline)
    assert scene.state is PR
    c.advance(1)
    assert (scene.state, scene.gen, set(scene.view.members)) == (CR, gen + 1, {scene.leader})
    r = scene.joins[scene.leader].result
    assert (r.error, r.generation_id, [m for m, _, _ in r.members]) == (Errors.NONE, gen + 1, [scene.leader])


# -- DelayedJoin completion (§4.4) --------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_join_timeout_removes_members_that_did_not_rejoin(profile: str) -> None:
    # §4.4: on timeout, members not awaiting join are removed *before* the join responses (step 1), then
    # initNextGeneration (→ CR, generation + 1) and responses (full list for the leader); step 5 reschedules
    # every member with its session timeout. Step 1 completes the removed members' heartbeat ops only from
    # 2.1.0 (KAFKA-7196); the join response carries the protocol type from 2.5 (§3.1).
    scene = preparing(profile)
    c, gen = scene.c, scene.gen
    (dj,) = op_deadlines(c, "DelayedJoin")
    assert dj == c.now_ms + JOIN_PHASE_MS[profile]
    keep_alive_by_commits(c, scene.follower, gen, dj)
    assert scene.state is PR and scene.follower in members(c)
    c.advance(1)
    assert (scene.state, scene.gen, set(scene.view.members)) == (CR, gen + 1, {scene.leader})
    r = scene.joins[scene.leader].result
    assert (r.error, r.generation_id, r.leader_id) == (Errors.NONE, gen + 1, scene.leader)
    assert r.members == ((scene.leader, None, b"r1"),)
    assert r.protocol_type == ("consumer" if profile == "3.9" else None)
    assert was_reset(c, scene.leader)
    assert (hb_deadlines(c, scene.follower) == []) is (profile == "3.9")


@pytest.mark.parametrize("profile", PROFILES)
def test_join_timeout_with_nobody_rejoined(profile: str) -> None:
    # §1.3 PR → Empty (generation + 1, protocol cleared, §1.4 / I7) from 0.10.1; in 0.9/0.10.0 an emptied
    # group goes straight to Dead and is removed (§4.4 last line)
    scene = stable(profile)
    c, gen = scene.c, scene.gen
    c.leave_group(G, [(scene.follower, None)])
    (dj,) = op_deadlines(c, "DelayedJoin")
    keep_alive_by_commits(c, scene.leader, gen, dj)
    assert scene.state is PR
    c.advance(1)
    if profile == "3.9":
        view = scene.view
        assert (view.state, view.generation_id, view.members) == (EMPTY, gen + 1, {})
        assert view.protocol_name is None
    else:
        assert c.describe(G) is None


def test_join_completion_starts_the_sync_phase_modern() -> None:
    # §4.4 step 5: reschedule with the session timeout, then isNew = false; [3.0+] every member pending sync
    # and a DelayedSync of the group rebalance timeout (§4.8)
    scene = completing("3.9", rebalance=25_000)
    c, view = scene.c, scene.view
    assert all(not m.is_new for m in view.members.values())
    assert all(hb_deadlines(c, m) == [c.now_ms + S_MS] for m in view.members)
    assert view.pending_sync_members == frozenset(view.members)
    assert op_deadlines(c, "DelayedSync") == [c.now_ms + 25_000]


@pytest.mark.parametrize("profile", PROFILES)
def test_delayed_sync_exists_only_from_3_0(profile: str) -> None:
    scene = completing(profile)                          # §4.8: KAFKA-12890, 2.8.1 / 3.0.0
    assert len(op_deadlines(scene.c, "DelayedSync")) == (1 if profile == "3.9" else 0)


# -- DelayedSync (§4.8, 3.9) ---------------------------------------------------------------------------
def test_delayed_sync_evicts_a_follower_that_never_synced_even_when_stable() -> None:
    scene = stable("3.9", follower_syncs=False)
    c, gen = scene.c, scene.gen
    (ds,) = op_deadlines(c, "DelayedSync")
    while c.now_ms + 5_000 <= ds:                        # heartbeats keep the session alive but do not sync
        c.advance(5_000)
        assert c.heartbeat(G, scene.follower, gen).result.error is Errors.NONE
        c.heartbeat(G, scene.leader, gen)
    advance_to(c, ds)
    assert scene.state is ST and scene.follower in members(c)
    c.advance(1)
    assert scene.state is PR and set(scene.view.members) == {scene.leader}
    assert hb_deadlines(c, scene.follower) == []         # its heartbeat op was cancelled (§4.8)


def test_delayed_sync_in_completing_evicts_the_silent_leader() -> None:
    scene = completing("3.9")
    c, gen = scene.c, scene.gen
    follower_sync = c.sync_group(G, gen, scene.follower)
    (ds,) = op_deadlines(c, "DelayedSync")
    while c.now_ms + 5_000 <= ds:                        # CR heartbeats reset the timer (2.6.1+), do not sync
        c.advance(5_000)
        assert c.heartbeat(G, scene.leader, gen).result.error is Errors.NONE
    advance_to(c, ds)
    assert scene.state is CR
    c.advance(1)
    assert scene.state is PR and scene.view.leader_id == scene.follower
    assert follower_sync.result.error is Errors.REBALANCE_IN_PROGRESS


def test_delayed_sync_completes_when_every_member_synced() -> None:
    scene = stable("3.9")                                # §4.8 tryComplete: set empty → complete
    assert scene.view.pending_sync_members == frozenset() and op_deadlines(scene.c, "DelayedSync") == []


def test_delayed_sync_completes_when_the_group_rebalances() -> None:
    scene = completing("3.9")                            # §4.8: prepareRebalance clears the set; state PR
    new_member(scene.c)
    assert scene.view.pending_sync_members == frozenset() and op_deadlines(scene.c, "DelayedSync") == []


# -- InitialDelayedJoin (§4.5, 3.9) -------------------------------------------------------------------
def initial_delay_chain(delay: int, rebalance: int, start: int) -> list[int]:
    """§4.5 with a new member added before every firing: the deadlines of the successive ops.

    Each op fires at deadline + 1 (DESIGN.md §4) and the next op counts its delay from then.
    """
    deadlines, this_delay, remaining, now = [], delay, max(rebalance - delay, 0), start
    while True:
        deadlines.append(now + this_delay)
        now = deadlines[-1] + 1
        if remaining == 0:
            return deadlines
        this_delay, remaining = min(delay, remaining), max(remaining - this_delay, 0)


def test_initial_delay_waits_even_when_everyone_joined() -> None:
    c = coordinator("3.9")                               # §4.5: tryComplete is always false
    _, future = new_member(c)
    assert op_deadlines(c, "InitialDelayedJoin") == [D_MS]
    advance_to(c, D_MS)
    assert not future.done
    c.advance(1)
    assert future.result.error is Errors.NONE and c.describe(G).state is CR


@pytest.mark.parametrize("rebalance", [10_000, 2_000], ids=["R>D", "R<D"])
def test_initial_delay_extends_while_members_keep_joining(rebalance: int) -> None:
    # §4.5: extensions while newMemberAdded, bounded by max(D, first joiner's rebalance timeout) — plus one ms
    # per op, because each fires on the first ms after its deadline
    c = coordinator("3.9")
    first, future = new_member(c, rebalance=rebalance)
    expected = initial_delay_chain(D_MS, rebalance, 0)
    seen: list[int] = []
    while not future.done and len(seen) < 10:
        (deadline,) = op_deadlines(c, "InitialDelayedJoin")
        seen.append(deadline)
        advance_to(c, deadline - 1)
        new_member(c, rebalance=rebalance)          # a new member right before every firing
        c.advance(2)                                # the op fires at deadline + 1
    assert seen == expected
    assert c.now_ms == max(D_MS, rebalance) + len(expected)
    assert future.result.generation_id == 1 and len(future.result.members) == len(members(c)) == len(seen) + 1


# -- new-member and pending-member timeouts (3.9) ------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_new_member_watch_while_parked(profile: str) -> None:
    # §3.1 addMemberAndRebalance: a heartbeat op with the 5-minute new-member timeout (KAFKA-7610, 2.1.1+);
    # 0.10.0 arms nothing for a new member (it is kept alive by its parked JoinGroup)
    scene = preparing(profile)
    member_id, _ = new_member(scene.c)
    expected = [scene.c.now_ms + NEW_MEMBER_MS] if profile == "3.9" else []
    assert hb_deadlines(scene.c, member_id) == expected


def test_new_member_removed_after_five_minutes_modern() -> None:
    # §2 (2.5.0+): isNew → keep ⇔ heartbeatSatisfied; removal answers its parked JoinGroup UNKNOWN_MEMBER_ID
    # with memberId "" (§3.4 removeMemberAndUpdateGroup); the join phase is still waiting for the follower
    scene = preparing("3.9", rebalance=600_000)
    c, gen = scene.c, scene.gen
    member_id, future = new_member(c, rebalance=600_000)
    deadline = c.now_ms + NEW_MEMBER_MS
    while c.now_ms + 5_000 <= deadline:
        c.advance(5_000)
        assert c.heartbeat(G, scene.follower, gen).result.error is Errors.REBALANCE_IN_PROGRESS
    advance_to(c, deadline)
    assert member_id in members(c) and not future.done
    c.advance(1)
    assert member_id not in members(c)
    assert (future.result.error, future.result.member_id) == (Errors.UNKNOWN_MEMBER_ID, "")
    assert scene.state is PR and scene.leader in members(c)


def test_pending_member_expires_after_its_session_timeout_modern() -> None:
    scene = stable("3.9")                                # §4.7: drop from pendingMembers, no state change
    pending_id = join(scene.c, "", session=7_000, require_known_member_id=True).result.member_id
    scene.c.advance(7_000)
    assert pending(scene.c) == {pending_id}
    scene.c.advance(1)
    assert pending(scene.c) == set() and scene.state is ST


def test_pending_member_blocks_the_join_until_it_expires_modern() -> None:
    # §4.4: hasAllMembersJoined needs no pending members; §4.7: pending expiry re-checks the join (PR)
    scene = preparing("3.9")
    c, gen = scene.c, scene.gen
    join(c, "", session=7_000, require_known_member_id=True)
    expiry = c.now_ms + 7_000
    join(c, scene.follower)
    assert scene.state is PR
    advance_to(c, expiry)
    assert scene.state is PR
    c.advance(1)
    assert (scene.state, scene.gen) == (CR, gen + 1)


# -- unload / load (§3.7) ------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_unload_answers_parked_joins_not_coordinator(profile: str) -> None:
    scene = preparing(profile)
    scene.c.unload_group(G)
    r = scene.joins[scene.leader].result
    assert (r.error, r.member_id) == (Errors.NOT_COORDINATOR, scene.leader)
    assert scene.c.describe(G) is None


@pytest.mark.parametrize("profile", PROFILES)
def test_unload_answers_parked_syncs_not_coordinator(profile: str) -> None:
    scene = completing(profile)
    parked = scene.c.sync_group(G, scene.gen, scene.follower)
    scene.c.unload_group(G)
    assert parked.result.error is Errors.NOT_COORDINATOR
    if profile == "3.9":   # heartbeat ops complete because the group is Dead; [3.0+] sync expiration cleared
        assert [op.kind for op in scene.c.delayed_operations()] == []


def test_timers_of_an_unloaded_group_are_harmless_modern() -> None:
    # §4.4 step 2 (Dead → stop) and §3.7 (heartbeat ops that expire on a Dead group only log)
    scene = preparing("3.9")
    c = scene.c
    c.unload_group(G)
    c.take_responses()
    c.advance(10 * S_MS)
    assert c.take_responses() == [] and c.errors == [] and c.describe(G) is None


@pytest.mark.parametrize("profile", PROFILES)
def test_reload_restores_the_stored_generation_with_fresh_sessions(profile: str) -> None:
    # §3.7 onGroupLoaded: back Stable with the last stored record; every member's heartbeat rescheduled
    scene = stable(profile)
    c, gen = scene.c, scene.gen
    old_deadline = max(hb_deadlines(c, scene.follower))
    c.advance(2_000)
    c.unload_group(G)
    c.advance(3_000)
    c.load_group(G)
    view = scene.view
    assert (view.state, view.generation_id, view.leader_id) == (ST, gen, scene.leader)
    assert {m: v.assignment for m, v in view.members.items()} == {m: assignment_for(m)
                                                                  for m in (scene.leader, scene.follower)}
    for member_id in (scene.leader, scene.follower):
        # a fresh session watch; on 0.10.0 the Dead group object's old ops may still sit on the same key
        # (≤ 2.4 ops complete only by deadline arithmetic, §4.6), hence the behavioural check below
        assert c.now_ms + S_MS in hb_deadlines(c, member_id)
        if profile == "3.9":
            assert was_reset(c, member_id)
    advance_to(c, old_deadline + 1)
    assert set(scene.view.members) == {scene.leader, scene.follower}
    assert c.heartbeat(G, scene.follower, gen).result.error is Errors.NONE
    assert c.sync_group(G, gen, scene.follower).result.assignment == assignment_for(scene.follower)


@pytest.mark.parametrize("profile", PROFILES)
def test_failover_during_a_rebalance_reloads_the_previous_generation(profile: str) -> None:
    # §3.7: nothing is written at PR/CR, so a failover reloads the previous Stable generation; in-flight
    # members see ILLEGAL_GENERATION (derived)
    scene = stable(profile)
    c, gen = scene.c, scene.gen
    join(c, scene.leader)
    join(c, scene.follower)
    assert (scene.state, scene.gen) == (CR, gen + 1)
    c.unload_group(G)
    c.load_group(G)
    assert (scene.state, scene.gen) == (ST, gen)
    assert c.heartbeat(G, scene.follower, gen + 1).result.error is Errors.ILLEGAL_GENERATION
    assert c.heartbeat(G, scene.follower, gen).result.error is Errors.NONE


def test_reload_of_a_group_that_ended_empty_modern() -> None:
    scene = empty()                                      # §3.7: load produces Stable or Empty
    gen = scene.gen
    scene.c.unload_group(G)
    scene.c.load_group(G)
    assert (scene.state, scene.gen, scene.view.members) == (EMPTY, gen, {})


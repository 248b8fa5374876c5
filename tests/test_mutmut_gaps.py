"""Behaviours no gate test pinned, found by mutmut's survivors over impl/ (bench/mutmut.md has the run).

Each test states what SPEC.md (or the driver API of DESIGN.md §4) says and checks it through the public
API (a few read a GroupMetadata field SPEC.md names, as test_state_table does); the docstring names the
section. None of them restates the reference code: where SPEC.md leaves a value open (e.g. which
no-generation value a request-level error response carries) the test accepts every value SPEC.md allows.
"""
from __future__ import annotations

import dataclasses

import pytest

from impl import CoordinatorConfig, Errors, GroupCoordinator
from core.events import MemberExpired, OperationCompleted, RebalancePrepared
from tests.group_builders import (CR, D_MS, EMPTY, G, PR, PROFILES, PROTOS, ST, advance_past, assignment_for,
                                  completing, config, coordinator, join, new_member, op_deadlines, preparing, stable)
from tests.property_runs import SCRIPT_SCOPE, run_script


# -- log appends and the store callback (SPEC.md §3.2, §5.2; DESIGN.md §4 complete_appends) ------------------
def _deferred(profile: str):
    scene = completing(profile, cfg={"append_mode": "deferred"})
    follower_sync = scene.c.sync_group(G, scene.gen, scene.follower)
    leader_sync = scene.c.sync_group(G, scene.gen, scene.leader, {m: assignment_for(m) for m in scene.view.members})
    assert not leader_sync.done and scene.c.pending_appends()
    return scene, leader_sync, follower_sync


@pytest.mark.parametrize("profile", PROFILES)
def test_complete_appends_not_ok_fails_the_store(profile: str) -> None:
    """complete_appends(ok=False): the appends fail. An append that is not acknowledged times out in the
    Produce purgatory (REQUEST_TIMED_OUT, §5.2), which the store callback maps to REBALANCE_IN_PROGRESS
    (§3.2); on error the parked SyncGroups get it and the group rebalances (§1.3 CR → PR)
    """
    scene, leader_sync, follower_sync = _deferred(profile)
    scene.c.complete_appends(ok=False)
    assert not scene.c.pending_appends()
    assert leader_sync.result.error is Errors.REBALANCE_IN_PROGRESS
    assert follower_sync.result.error is Errors.REBALANCE_IN_PROGRESS
    assert leader_sync.result.assignment == b"" and follower_sync.result.assignment == b""   # cleared
    assert scene.state is PR
    assert all(m.assignment == b"" for m in scene.view.members.values())


def test_complete_appends_not_ok_with_an_error_maps_that_error() -> None:
    """The error given is the append's error, mapped by §3.2: NOT_ENOUGH_REPLICAS → COORDINATOR_NOT_AVAILABLE"""
    scene, leader_sync, follower_sync = _deferred("3.9")
    scene.c.complete_appends(ok=False, error=Errors.NOT_ENOUGH_REPLICAS)
    assert leader_sync.result.error is Errors.COORDINATOR_NOT_AVAILABLE
    assert follower_sync.result.error is Errors.COORDINATOR_NOT_AVAILABLE
    assert scene.state is PR


# -- load / unload (SPEC.md §3.0, §3.7) -------------------------------------------------------------------
def test_e0_group_that_dies_empty_is_not_reloaded() -> None:
    """E0: a rebalance that ends with no members sends the group to Dead (§4.4 last line) and removes it;
    Dead is terminal (§1.3 "Any → Dead") and what is persisted includes tombstones (§3.7), so a later load
    of the partition does not bring the last Stable generation back
    """
    scene = stable("0.10.0", n=1)
    c, member, gen = scene.c, scene.leader, scene.gen
    c.leave_group(G, [(member, None)])
    assert c.describe(G) is None
    c.unload_group(G)
    c.load_group(G)
    assert c.describe(G) is None
    assert c.heartbeat(G, member, gen).result.error is Errors.UNKNOWN_MEMBER_ID   # §3.3 group absent


@pytest.mark.parametrize("profile", PROFILES)
def test_load_ends_the_loading_window(profile: str) -> None:
    """§3.0 check (3) answers COORDINATOR_LOAD_IN_PROGRESS only while the partition loads; once the load is
    done the group is served again (§3.7 onGroupLoaded)
    """
    scene = stable(profile)
    c = scene.c
    c.unload_group(G)
    c.set_loading(G, True)
    # (≤ 1.1 checked "not coordinator" first, §3.0: the unloaded partition answers that until it is loaded)
    before = {"0.10.0": Errors.NOT_COORDINATOR, "3.9": Errors.COORDINATOR_LOAD_IN_PROGRESS}[profile]
    assert join(c, scene.follower).result.error is before
    c.load_group(G)
    r = join(c, scene.follower).result   # §3.1 J5b Stable follower, same metadata: answered at once
    assert (r.error, r.generation_id) == (Errors.NONE, scene.gen)
    assert c.commit_offsets(G, scene.follower, scene.gen).result.error is Errors.NONE


def test_reload_keeps_the_protocol_type_modern() -> None:
    """§1.4: protocolType is set by the first member and never cleared; §3.7: the group comes back with its
    stored members, so a member with the same protocol type is compatible after the reload (§3.6)
    """
    scene = stable("3.9")
    c = scene.c
    c.unload_group(G)
    c.load_group(G)
    assert scene.view.protocol_type == "consumer"
    r = join(c, scene.follower).result
    assert (r.error, r.generation_id, r.protocol_type) == (Errors.NONE, scene.gen, "consumer")
    _, newcomer = new_member(c)
    assert not newcomer.done and scene.state is PR   # accepted: added, rebalancing (§3.9 Stable column)


def _with_max_size(c: GroupCoordinator, max_size: int) -> GroupCoordinator:
    """The same coordinator state (its log included) on a broker restarted with another group.max.size."""
    state = c.to_state()
    cfg = dataclasses.replace(CoordinatorConfig(*state[0]), group_max_size=max_size)
    return GroupCoordinator.from_state((cfg.to_tuple(),) + state[1:])


@pytest.mark.parametrize("max_size,state", [(2, ST), (3, ST), (1, PR)])
def test_reload_rebalances_only_an_over_capacity_group(max_size: int, state) -> None:
    """§3.7 onGroupLoaded: "If over max size → prepareRebalance" — over means more members than
    group.max.size; a group exactly at the limit comes back Stable
    """
    scene = stable("3.9", n=2, cfg={"group_max_size": 2})
    scene.c.unload_group(G)
    c = _with_max_size(scene.c, max_size)
    c.load_group(G)
    view = c.describe(G)
    assert (view.state, set(view.members)) == (state, {scene.leader, scene.follower})


# -- a request that meets the coordinator's own IllegalStateError (the E0 finding) ------------------------
def _e0_stale_join_op_ready() -> tuple[object, str, str]:
    """E0, properties/findings.py "dead-to-dead-on-an-unloaded-group": a Stable group of two is unloaded in
    PreparingRebalance (its DelayedJoin stays watched on the group key), reloaded from its last record, and a
    newcomer restarts the rebalance; once the stale group's follower has expired, the next join re-check of
    the group key completes the stale DelayedJoin, whose onCompleteJoin asserts Dead → Dead."""
    scene = stable("0.10.0")
    c = scene.c
    c.advance(1_000)
    c.leave_group(G, [(scene.leader, None)])            # Stable → PR, the follower has not rejoined
    c.unload_group(G)
    c.load_group(G)
    new_member(c)                                        # the reloaded group → PR
    advance_past(c, min(op_deadlines(c, "DelayedHeartbeat")))   # the stale follower's watch expires
    assert c.errors == [] and c.describe(G).state is PR
    c.take_responses()
    return c, scene.leader, scene.follower


def test_e0_join_that_hits_an_internal_error_gets_a_join_error_response() -> None:
    """DESIGN.md §4: join_group's future holds a JoinGroupResult; the finding: the request is answered
    UNKNOWN_SERVER_ERROR. SPEC.md §3.1 "join error" shape: empty protocol, leader and member list, and no
    generation — NoGeneration (−1), or 0 before 2.2; SPEC.md does not say which one a request-level error
    response of 0.10.0 carries, so either is accepted, but never a real or an undefined generation. The
    request carried member id "" (a new member), and so does the answer.
    """
    c, _, _ = _e0_stale_join_op_ready()
    _, future = new_member(c)
    r = future.result
    assert type(r).__name__ == "JoinGroupResult"
    assert r.error is Errors.UNKNOWN_SERVER_ERROR
    assert (r.member_id, r.leader_id, r.members) == ("", "", ())
    assert not r.protocol_name and not r.protocol_type
    assert r.generation_id in (-1, 0)
    assert len(c.errors) == 1


def test_e0_join_answered_twice_is_recorded_twice() -> None:
    """The same finding, continued: the member the aborted JoinGroup added stays parked on the request that
    was already answered, so when the reloaded group's DelayedJoin completes (§4.4 step 5) that request is
    answered a second time. A double answer must stay visible: the future counts both completions and the
    response stream carries both (impl.results.ResponseFuture; property each-request-is-answered-at-most-once)."""
    c, _, _ = _e0_stale_join_op_ready()
    _, future = new_member(c)
    assert (future.result.error, future.completions) == (Errors.UNKNOWN_SERVER_ERROR, 1)
    advance_past(c, max(op_deadlines(c, "DelayedJoin")))
    answers = [result.error for key, _, result in c.take_responses() if key == future.key]
    assert answers == [Errors.UNKNOWN_SERVER_ERROR, Errors.NONE]
    assert future.completions == 2


def test_e0_leave_that_hits_an_internal_error_gets_a_leave_response() -> None:
    """The same stale DelayedJoin completed by the join re-check of a LeaveGroup in PreparingRebalance
    (§3.4 removeMemberAndUpdateGroup → checkAndComplete(GroupKey)); leave_group's future holds a
    LeaveGroupResult (DESIGN.md §4) carrying UNKNOWN_SERVER_ERROR
    """
    c, _, follower = _e0_stale_join_op_ready()
    r = c.leave_group(G, [(follower, None)]).result
    assert type(r).__name__ == "LeaveGroupResult"
    assert r.error is Errors.UNKNOWN_SERVER_ERROR
    assert len(c.errors) == 1


# -- InitialDelayedJoin extension (SPEC.md §4.5) -------------------------------------------------------------
def test_initial_delayed_join_extends_by_a_remaining_of_one_ms() -> None:
    """First op: delay D, remaining = max(rebalanceTimeout − D, 0) = 1; a member added meanwhile (generation 0)
    → at expiry "newMemberAdded and remaining ≠ 0": another InitialDelayedJoin, delay min(D, 1) = 1,
    watched on the group key (§4.2 GroupKey)
    """
    c = coordinator("3.9")
    first, first_join = new_member(c, rebalance=D_MS + 1)
    c.advance(1)
    second, second_join = new_member(c, rebalance=D_MS + 1)
    (deadline,) = op_deadlines(c, "InitialDelayedJoin")
    assert deadline == D_MS
    advance_past(c, deadline)
    assert c.describe(G).state is PR and not first_join.done
    (extension,) = [op for op in c.delayed_operations() if op.kind == "InitialDelayedJoin"]
    assert (extension.key, extension.deadline_ms) == (f"join:{G}", c.now_ms + 1)
    c.advance(1)
    assert c.describe(G).state is PR                     # due only when the clock passes the deadline
    c.advance(1)
    assert c.describe(G).state is CR
    assert first_join.result.error is Errors.NONE and second_join.result.error is Errors.NONE


# -- read-only views (DESIGN.md §4 delayed_operations) ----------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_delayed_operations_lists_live_ops_with_typed_fields(profile: str) -> None:
    """The view lists the operations still watched (completed ones linger in watch lists only until they
    are skipped, §4.2): each has completed == False; member_id / pending describe heartbeat ops only —
    a join or sync op is about the group (key GroupKey / GroupSyncKey), with member_id "" and pending False
    """
    scene = preparing(profile)
    c = scene.c
    if profile == "3.9":
        new_member(c, require_known_member_id=True)       # a pending-member op as well (§4.7)
    views = c.delayed_operations()
    assert {v.kind for v in views} == {"DelayedHeartbeat", "DelayedJoin"}
    for v in views:
        assert v.completed is False
        assert isinstance(v.pending, bool) and isinstance(v.member_id, str)
        if v.kind == "DelayedHeartbeat":
            assert v.key == f"member:{G}:{v.member_id}"
        else:
            assert (v.member_id, v.pending) == ("", False)
    if profile == "3.9":
        assert any(v.pending for v in views)


# -- snapshots (DESIGN.md §4: parked responses and ops are data, so the state can be copied) ---------------
def _deliver(c: GroupCoordinator, step) -> tuple[list, tuple]:
    step(c)
    return c.take_responses(), c.to_state()


def test_e0_snapshot_keeps_a_removed_member_held_by_its_heartbeat_op() -> None:
    """Before 2.1.0 onCompleteJoin removed a member that did not rejoin without completing its heartbeat op
    (§4.4 step 1, KAFKA-7196): the op still holds the removed member and, on expiry, fails it again —
    a spurious rebalance. A coordinator restored from a snapshot taken in between must do the same.
    """
    scene = stable("0.10.0")
    c, gen = scene.c, scene.gen
    c.advance(1_000)
    join(c, scene.leader)                                # Stable → PR; the follower will not rejoin
    c.advance(4_000)
    assert c.commit_offsets(G, scene.follower, gen).result.error is Errors.NONE   # §3.5: PR commit resets hb
    advance_past(c, min(op_deadlines(c, "DelayedJoin")))
    assert set(c.describe(G).members) == {scene.leader} and c.describe(G).state is CR
    (stale,) = [v.deadline_ms for v in c.delayed_operations() if v.member_id == scene.follower]
    c.take_responses()
    restored = GroupCoordinator.from_state(c.to_state())
    assert restored.to_state() == c.to_state()
    for x in (c, restored):
        x.advance(2_000)
    assert restored.take_responses() == c.take_responses() and restored.to_state() == c.to_state()
    assert _deliver(restored, lambda x: advance_past(x, stale)) == _deliver(c, lambda x: advance_past(x, stale))
    assert c.describe(G).state is PR                     # the removed member's expiry rebalanced the group


# -- event recording across a restore (DESIGN.md §5: a restored world replays bit for bit) -------------------
def test_restored_coordinator_records_events_only_when_asked() -> None:
    """DESIGN.md §5: a restored world replays bit for bit — a coordinator restored with record_events=True
    logs what the original logs from then on; restored without it, it logs nothing, like a coordinator
    constructed without it (record_events is opt-in; properties/observation.py needs a recording World)."""
    original = GroupCoordinator(config("3.9"), record_events=True)
    new_member(original)
    snapshot = original.to_state()
    original.events.clear()
    seen = len(original.transitions)
    recording = GroupCoordinator.from_state(snapshot, record_events=True)
    silent = GroupCoordinator.from_state(snapshot)
    plain = GroupCoordinator(config("3.9"))
    new_member(plain)
    for c in (original, recording, silent, plain):
        advance_past(c, D_MS)                            # the InitialDelayedJoin ends: PR → CR
        assert c.describe(G).state is CR
    assert original.events and recording.events == original.events
    assert original.transitions[seen:] == [(G, "PreparingRebalance", "CompletingRebalance")]
    assert recording.transitions == original.transitions[seen:]
    for quiet in (silent, plain):                        # GroupCoordinator(config) does not record by default
        assert quiet.events == [] and quiet.transitions == []


# -- OffsetCommit boundaries (SPEC.md §3.0, §3.5) ---------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_commit_accepts_the_empty_group_id(profile: str) -> None:
    """§3.0 (1): the empty string is a valid group id for OffsetCommit (not for Join/Sync/Heartbeat/Leave);
    §3.5: a commit with no generation to an absent group is stored
    """
    c = coordinator(profile)
    assert c.commit_offsets("", "", -1, {"t-0": 1}).result.error is Errors.NONE
    assert c.heartbeat("", "", -1).result.error is Errors.INVALID_GROUP_ID


@pytest.mark.parametrize("profile", PROFILES)
def test_commit_with_generation_zero_to_an_absent_group_is_illegal(profile: str) -> None:
    """§3.5 group absent: generation < 0 → create/store; else — generation 0 included — ILLEGAL_GENERATION"""
    c = coordinator(profile)
    assert c.commit_offsets(G, "", 0, {"t-0": 1}).result.error is Errors.ILLEGAL_GENERATION
    assert c.describe(G) is None


def test_commit_with_generation_zero_to_an_empty_group_checks_the_member_modern() -> None:
    """§3.5: only generation < 0 skips the membership check of an Empty group; generation 0 from a
    non-member → UNKNOWN_MEMBER_ID
    """
    c = coordinator("3.9")
    assert c.commit_offsets(G, "", -1, {"t-0": 1}).result.error is Errors.NONE   # an Empty "simple" group
    assert c.describe(G).state is EMPTY
    assert c.commit_offsets(G, "", 0, {"t-0": 1}).result.error is Errors.UNKNOWN_MEMBER_ID


# -- LeaveGroup before the batch form (SPEC.md §3.4) -------------------------------------------------------
def test_e0_leave_takes_a_single_member_id() -> None:
    """≤ 2.3 LeaveGroup carries one memberId (the batch form is 2.4.0+, KAFKA-8221): given a list, only its
    first identity leaves
    """
    scene = stable("0.10.0")
    r = scene.c.leave_group(G, [(scene.follower, None), (scene.leader, None)]).result
    assert r.error is Errors.NONE
    assert set(scene.view.members) == {scene.leader}


# -- views of pending appends and due timers (DESIGN.md §4, §5) ----------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_pending_appends_describe_each_append(profile: str) -> None:
    """A leader SyncGroup appends the group's assignment record (§3.2, §3.7 "What is persisted"); deferred,
    it stays pending with its group and generation until completed
    """
    scene, _, _ = _deferred(profile)
    (append,) = scene.c.pending_appends()
    assert (append.group_id, append.generation_id, append.kind) == (G, scene.gen, "assignment")
    assert isinstance(append.seq, int)
    scene.c.complete_appends()
    assert scene.c.pending_appends() == []


def test_pending_appends_include_the_empty_group_record_modern() -> None:
    """§1.3 PR → Empty appends an "empty group" metadata record; its generation is the bumped one (§1.4)"""
    c = coordinator("3.9", append_mode="deferred")
    member, _ = new_member(c)
    advance_past(c, D_MS)
    gen = c.describe(G).generation_id
    c.sync_group(G, gen, member, {member: b"a"})
    first = c.pending_appends()
    c.complete_appends()
    c.leave_group(G, [(member, None)])
    (append,) = c.pending_appends()
    assert (append.group_id, append.generation_id, append.kind) == (G, gen + 1, "empty")
    assert append.seq > first[0].seq
    assert c.describe(G).state is EMPTY


@pytest.mark.parametrize("profile", PROFILES)
def test_due_timers_describe_each_due_task(profile: str) -> None:
    """DESIGN.md §4 timer rule: a task is due once its deadline is strictly less than the clock; advance_time
    moves the clock without firing, so the scheduler (the world) can choose what fires
    """
    scene = preparing(profile)
    c = scene.c
    (deadline,) = op_deadlines(c, "DelayedJoin")
    c.advance_time(deadline - c.now_ms)
    assert not [t for t in c.due_timers() if t.kind == "DelayedJoin"]
    c.advance_time(1)
    due = c.due_timers()
    joins = [t for t in due if t.kind == "DelayedJoin"]
    assert [(t.deadline_ms, t.key) for t in joins] == [(deadline, f"join:{G}")]
    assert all(t.deadline_ms < c.now_ms for t in due)
    member_keys = {f"member:{G}:{m}" for m in (scene.leader, scene.follower)}
    assert all(t.key in member_keys for t in due if t.kind == "DelayedHeartbeat")
    assert [t.deadline_ms for t in due] == sorted(t.deadline_ms for t in due)


# -- bad calls get one clear sentence (STYLE.md "Errors") ----------------------------------------------------
def test_complete_append_without_a_pending_append_says_so() -> None:
    """STYLE.md "Errors": a bad call gets one clear sentence naming what was wrong."""
    c = coordinator("3.9", append_mode="deferred")
    with pytest.raises(ValueError, match="(?i)no pending log append"):   # the sentence, in any case
        c.complete_append()


def test_the_clock_refuses_to_move_backwards_and_says_so() -> None:
    """DESIGN.md §4: the mock clock only moves forward; STYLE.md "Errors": the refusal is one clear sentence."""
    c = coordinator("3.9")
    with pytest.raises(ValueError, match="(?i)only moves forward"):
        c.advance(-1)
    assert c.now_ms == 0


def test_firing_a_timer_that_is_not_due_says_so() -> None:
    """DESIGN.md §4: a task is due only once its deadline is strictly less than the clock; STYLE.md "Errors"."""
    scene = preparing("3.9")
    (op,) = [v for v in scene.c.delayed_operations() if v.kind == "DelayedJoin"]
    with pytest.raises(ValueError, match=f"(?i)timer task {op.seq} is not due"):
        scene.c.fire_timer(op.seq)
    assert scene.state is PR


# -- timers of an unloaded group (SPEC.md §3.7, §4.6) ----------------------------------------------------------
def test_heartbeat_expiry_on_an_unloaded_group_only_logs_modern() -> None:
    """§3.7 "Heartbeat ops that later expire on a Dead group only log"; §4.6 2.5.0+ expiry: "Dead → log".
    Unloaded in PreparingRebalance, the members' heartbeat ops are not completed (§3.7 completes them only
    for Stable/CompletingRebalance): when they expire no member of the Dead group is failed
    """
    scene = preparing("3.9")
    c = GroupCoordinator.from_state(scene.c.to_state(), record_events=True)   # the same state, recording
    c.unload_group(G)
    watched = [v for v in c.delayed_operations() if v.kind == "DelayedHeartbeat"]
    assert watched                                       # still armed on the Dead group
    c.take_responses()
    c.events.clear()
    advance_past(c, max(v.deadline_ms for v in watched))
    assert any(isinstance(e, OperationCompleted) for e in c.events)    # they did expire …
    assert not any(isinstance(e, MemberExpired) for e in c.events)     # … and failed nobody (core/events.py)
    assert c.take_responses() == [] and c.errors == []


# -- member table bookkeeping (SPEC.md §1.5 I1, §3.1 J4) --------------------------------------------------------
def test_e0_leave_of_a_member_with_a_parked_join_leaves_the_awaiting_count_exact() -> None:
    """I1: numMembersAwaitingJoin = |{m ∈ members : m.awaitingJoin}|. Before 2.2 removeMemberAndUpdateGroup
    did not answer a parked JoinGroup (§3.4), but the member is gone, so it no longer counts
    """
    scene = preparing("0.10.0")
    scene.c.leave_group(G, [(scene.leader, None)])       # the leader's JoinGroup is parked
    view = scene.view
    assert set(view.members) == {scene.follower} and view.state is PR
    assert view.num_members_awaiting_join == sum(m.awaiting_join for m in view.members.values()) == 0


def test_max_size_rejection_drops_the_pending_member_modern() -> None:
    """§3.1 J4 (2.6.0+): a rejected member is removed with group.remove(memberId), which also clears a pending
    entry — a pending member that comes back to a full Stable group is refused and forgotten
    """
    c = coordinator("3.9", group_max_size=2)
    leader, _ = new_member(c, rebalance=D_MS)
    advance_past(c, D_MS)
    pending_id, first = new_member(c, require_known_member_id=True)
    assert first.result.error is Errors.MEMBER_ID_REQUIRED and pending_id in c.describe(G).pending_members
    new_member(c)                                        # a v≤3 member: Stable → PR, 2 members
    join(c, leader, rebalance=D_MS)                      # both awaiting join; the pending id blocks (§4.4)
    view = c.describe(G)
    assert (view.state, view.num_members_awaiting_join) == (PR, 2)
    r = join(c, pending_id).result                       # PR: refused, numAwaiting (2) is not < max (2)
    assert r.error is Errors.GROUP_MAX_SIZE_REACHED
    assert pending_id not in c.describe(G).pending_members
    assert c.describe(G).state is CR                     # nothing pending any more: the join phase completes


# -- protocol selection (SPEC.md §3.6) -----------------------------------------------------------------------------
RANGE, COOP = ("range", b"r"), ("cooperative-sticky", b"c")


@pytest.mark.parametrize("profile", PROFILES)
def test_selected_protocol_is_the_one_most_members_vote_for(profile: str) -> None:
    """Each member votes for its first-preference candidate; most votes win — here the majority's
    protocol also sorts last, and the first member (by id) is in the minority
    """
    c = coordinator(profile)
    prefs = {"a": [COOP, RANGE], "b": [RANGE, COOP], "c": [RANGE, COOP]}
    ids = {}
    for client, protocols in prefs.items():
        c.advance(1)
        ids[client], _ = new_member(c, client_id=client, protocols=protocols, rebalance=D_MS)
    for _ in range(3):   # E0: the first join completed at once, so earlier members rejoin; 3.9: D passes
        view = c.describe(G)
        if view.state is CR and len(view.members) == 3:
            break
        for client, member_id in ids.items():
            if member_id in view.members and not view.members[member_id].awaiting_join:
                join(c, member_id, protocols=prefs[client], rebalance=D_MS)
        if c.describe(G).state is PR:
            advance_past(c, min(op_deadlines(c, "DelayedJoin") + op_deadlines(c, "InitialDelayedJoin")))
    view = c.describe(G)
    assert (view.state, len(view.members)) == (CR, 3)
    assert sorted(ids.values()) == [ids["a"], ids["b"], ids["c"]]
    assert view.protocol_name == "range"


# -- the catalog reads the coordinator's log (core/events.py, properties/witnesses.py) ------------------------
def test_e0_group_emptied_by_a_rebalance_is_seen_by_its_witness() -> None:
    """SPEC.md §4.4 (0.9/0.10.0: an empty group goes straight to Dead) — the witness
    "a-rebalance-ends-with-no-members" must see it on 0.10.0, or the properties that lean on it are vacuous
    """
    driver = run_script("0.10.0", SCRIPT_SCOPE, (("member_id", 0), ("call", 0, "JoinGroup"),
                                                  ("call", 0, "SyncGroup"), ("call", 0, "LeaveGroup")), clients=1)
    assert "a-rebalance-ends-with-no-members" in driver.checker.seen
    assert driver.checker.violations == []


# -- currentStateTimestamp (SPEC.md §1.2: transitionTo stamps currentStateTimestamp = now) ---------------------
def test_every_transition_stamps_the_state_timestamp_modern() -> None:
    """§1.2: every transitionTo stamps currentStateTimestamp = now — Empty → PR (prepareRebalance), PR → CR
    and PR → Empty (initNextGeneration, §1.3), CR → Stable (the store callback), any → Dead (unload, §3.7)."""
    c = coordinator("3.9")
    c.advance(100)
    member, _ = new_member(c, rebalance=D_MS)
    group = c.groups[G]
    assert (group.state, group.state_timestamp_ms) == (PR, 100)
    advance_past(c, 100 + D_MS)
    assert (group.state, group.state_timestamp_ms) == (CR, c.now_ms)
    c.advance(7)
    c.sync_group(G, group.generation_id, member, {member: b"a"})
    assert (group.state, group.state_timestamp_ms) == (ST, c.now_ms)
    c.advance(5)
    c.leave_group(G, [(member, None)])                   # Stable → PR → Empty inside the request (§1.3)
    assert (group.state, group.state_timestamp_ms) == (EMPTY, c.now_ms)
    c.advance(3)
    c.unload_group(G)
    assert (group.state.value, group.state_timestamp_ms) == ("Dead", c.now_ms)


def test_e0_group_emptied_by_a_rebalance_stamps_its_death() -> None:
    """§1.2 timestamp on the E0 transition of §4.4 (last line): an emptied group goes straight to Dead."""
    scene = stable("0.10.0", n=1)
    c, group = scene.c, scene.c.groups[G]
    c.advance(9)
    c.leave_group(G, [(scene.leader, None)])
    assert (group.state.value, group.state_timestamp_ms) == ("Dead", c.now_ms)


# -- what the group record persists (SPEC.md §2 clientId/clientHost "from request"; §3.7 what is persisted) -----
def _strings(value: object) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, (tuple, list)):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize("profile", PROFILES)
def test_group_record_keeps_each_members_client_id_and_host(profile: str) -> None:
    """§2: a member's clientId and clientHost come from its JoinGroup request; §3.7: the group record written
    at the leader's SyncGroup persists the members, and a reloaded group comes back with them — so the
    record of the next generation, written after a reload, still names the client id and host."""
    kw = {"client_id": "alice", "client_host": "/10.0.0.7"}
    scene = stable(profile, n=1, **kw)
    c = scene.c
    assert {"alice", "/10.0.0.7"} <= _strings(c.log[G])
    c.unload_group(G)
    c.load_group(G)
    join(c, scene.leader, **kw)                          # the leader rejoins a Stable group: a new generation
    view = c.describe(G)
    assert view.state is CR
    c.sync_group(G, view.generation_id, scene.leader, {scene.leader: b"a"})
    assert c.describe(G).state is ST
    assert c.log[G][0] == view.generation_id             # the new generation's record …
    assert {"alice", "/10.0.0.7"} <= _strings(c.log[G])  # … still carries them


# -- the prepareRebalance event properties read (core/events.py RebalancePrepared) -----------------------------------
def test_e0_last_member_leaving_starts_a_zero_ms_rebalance() -> None:
    """§1.3 (PR → Empty, E0: → Dead, §4.4): when the last member leaves a Stable group, maybePrepareRebalance
    creates a DelayedJoin whose timeout is the rebalance timeout of zero members, 0 (E0: max session timeout,
    §4.9), which completes at once. The event says so, as properties read it."""
    c = GroupCoordinator(config("0.10.0"), record_events=True)
    member, joined = new_member(c)                       # E0: the join phase ends inside the first JoinGroup
    c.sync_group(G, joined.result.generation_id, member, {member: b"a"})
    assert c.describe(G).state is ST
    c.events.clear()
    c.leave_group(G, [(member, None)])
    prepares = [(e.previous, e.op_kind, str(e.delay_ms)) for e in c.events if isinstance(e, RebalancePrepared)]
    assert prepares == [("Stable", "DelayedJoin", "0")]
    assert c.describe(G) is None


# -- member views (DESIGN.md §4 MemberView; SPEC.md §2 member fields) -------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_member_view_flags(profile: str) -> None:
    """MemberView reports the member flags as booleans (impl.results.MemberView). §4.6 (2.5.0+): a liveness
    event sets heartbeatSatisfied, completes the old op and sets it back to false; §2/§3.4 (≤ 2.8): isLeaving
    is set only by LeaveGroup, so a member that has not left is not leaving."""
    scene = stable(profile)
    assert scene.c.heartbeat(G, scene.follower, scene.gen).result.error is Errors.NONE
    for m in scene.view.members.values():
        flags = (m.awaiting_join, m.awaiting_sync, m.is_new, m.heartbeat_satisfied, m.is_leaving)
        assert all(type(flag) is bool for flag in flags), m
        assert m.is_leaving is False
    if profile == "3.9":
        assert scene.view.members[scene.follower].heartbeat_satisfied is False


@pytest.mark.parametrize("profile", PROFILES)
def test_a_member_not_assigned_yet_has_an_empty_assignment(profile: str) -> None:
    """§2: assignment is the last assignment from the leader, as bytes; a member that joined but has not been
    given one holds none — the empty assignment §3.2 gives to members the leader's map omits."""
    c = coordinator(profile)
    member, _ = new_member(c)
    assert c.describe(G).members[member].assignment == b""


# -- protocol type and compatibility (SPEC.md §1.4, §3.6) --------------------------------------------------------
def test_a_pending_member_does_not_set_the_protocol_type_modern() -> None:
    """§1.4: protocolType is set by the first member *added* to an empty member table; a v≥4 member's first
    JoinGroup only records a pending id (§3.1 J5a step 5, "no state change"), so the group has no protocol
    type until that member comes back and is added."""
    c = coordinator("3.9")
    pending_id, first = new_member(c, require_known_member_id=True)
    assert first.result.error is Errors.MEMBER_ID_REQUIRED
    view = c.describe(G)
    assert (view.state, set(view.members), view.protocol_type) == (EMPTY, set(), None)
    join(c, pending_id)
    view = c.describe(G)
    assert (view.state, set(view.members), view.protocol_type) == (PR, {pending_id}, "consumer")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_newcomer_must_share_a_protocol_with_a_single_member(profile: str) -> None:
    """§3.6: a non-empty group accepts a JoinGroup only if some offered protocol is supported by all members
    (0.9: intersects the common set) — also when the group has a single member: a newcomer offering only a
    protocol that member does not support gets INCONSISTENT_GROUP_PROTOCOL and is not added."""
    scene = stable(profile, n=1)
    r = join(scene.c, "", protocols=[("roundrobin", b"x")]).result
    assert r.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert (scene.state, set(scene.view.members)) == (ST, {scene.leader})


def test_e0_first_member_may_offer_an_empty_protocol_list() -> None:
    """§3.6: the 0.9 check accepts any protocol list while the group is empty (KAFKA-6005 rejected an empty
    type or list for the first member only in 1.0.0; 2.2+ refuses it, 3.9 below), so on 0.10.0 such a first
    JoinGroup is not refused INCONSISTENT_GROUP_PROTOCOL: the member is added. (Protocol selection then finds
    no candidate for it, §3.6, and the coordinator's own assertion answers the request — not pinned here.)"""
    c = coordinator("0.10.0")
    r = join(c, "", protocols=[]).result
    assert r.error is not Errors.INCONSISTENT_GROUP_PROTOCOL
    view = c.describe(G)
    assert [m.protocols for m in view.members.values()] == [()]
    modern = coordinator("3.9")
    assert join(modern, "", protocols=[]).result.error is Errors.INCONSISTENT_GROUP_PROTOCOL


# -- describe() (DESIGN.md §4 GroupView / MemberView; SPEC.md §1.4 group fields, §1.5 I1/I2) ---------------------
def test_describe_reports_the_group_fields_modern() -> None:
    """Two members joined during the initial delay of a never-rebalanced group: the view names the group, each
    member under its own id with the protocols it sent; supportedProtocols counts both (I2), both await join
    (I1); the protocol type is the first member's and no protocol is selected before initNextGeneration (§1.4);
    newMemberAdded is set (§3.1 addMemberAndRebalance, generation 0) and cleared when the first
    InitialDelayedJoin times out and extends the wait (§4.5)."""
    c = coordinator("3.9")
    first, _ = new_member(c)
    c.advance(1)
    second, _ = new_member(c)
    view = c.describe(G)
    assert view.group_id == G
    assert set(view.members) == {first, second}
    assert all(m.member_id == member_id and m.protocols == tuple(PROTOS) for member_id, m in view.members.items())
    assert (view.supported_protocols, view.num_members_awaiting_join) == ((("range", 2),), 2)
    assert (view.protocol_type, view.protocol_name) == ("consumer", None)
    assert view.new_member_added is True
    advance_past(c, min(op_deadlines(c, "InitialDelayedJoin")))
    view = c.describe(G)
    assert (view.state, view.new_member_added) == (PR, False)


# -- JoinGroup's documented defaults (DESIGN.md §4: client_id="client", client_host="/127.0.0.1") -----------------
@pytest.mark.parametrize("profile", PROFILES)
def test_join_without_client_id_and_host_uses_the_documented_defaults(profile: str) -> None:
    """DESIGN.md §4 fixes join_group's defaults client_id="client", client_host="/127.0.0.1"; SPEC.md §2: a
    dynamic memberId is clientId + "-" + a unique suffix, and clientId/clientHost are kept with the member —
    so the stored group record carries the default host."""
    scene = stable(profile, n=1)                         # the builders send no client_id / client_host
    assert scene.leader.startswith("client-")
    assert {"client", "/127.0.0.1"} <= _strings(scene.c.log[G])


# -- configuration and futures (DESIGN.md §4) -----------------------------------------------------------------------
def test_session_timeout_bounds_may_be_equal() -> None:
    """§3.1 J2: a session timeout outside [group.min.session.timeout.ms, group.max.session.timeout.ms] is refused
    — a closed interval, so a broker whose bounds are equal accepts exactly that one value."""
    c = GroupCoordinator(config("3.9", group_min_session_timeout_ms=10_000, group_max_session_timeout_ms=10_000))
    assert join(c, "", session=10_001).result.error is Errors.INVALID_SESSION_TIMEOUT
    assert join(c, "", session=9_999).result.error is Errors.INVALID_SESSION_TIMEOUT
    _, accepted = new_member(c, session=10_000)
    assert not accepted.done and c.describe(G).state is PR


@pytest.mark.parametrize("profile", PROFILES)
def test_a_parked_request_is_not_done(profile: str) -> None:
    """DESIGN.md §4: f.done is a bool; a JoinGroup parked in PreparingRebalance (§3.1 J5b) is not done yet."""
    scene = preparing(profile)
    assert scene.joins[scene.leader].done is False

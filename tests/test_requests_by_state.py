"""JoinGroup, cell by cell of SPEC.md §3.1 / §3.8 / §3.9, for the 0.10.0 and 3.9 profiles.

Dynamic membership only; static membership (group_instance_id, KIP-345) is in
test_static_membership.py — 0.10.0 has none and answers UNSUPPORTED_VERSION. SyncGroup is in
test_requests_by_state_sync.py, Heartbeat/LeaveGroup/OffsetCommit in test_requests_by_state_members.py,
timers and load/unload in test_requests_by_state_timers.py.
A Dead group is never reachable by a request here: unload_group drops it from the cache (later
requests get NOT_COORDINATOR, §3.0 check 4) and an emptied E0 group is removed when it dies, so
the "group Dead" row of §3.8 is exercised only through stale callbacks (see the sync and timers files).
"""
from __future__ import annotations

import pytest

from impl import Errors
from tests.group_builders import (CR, D_MS, EMPTY, G, MAX_SESSION, MIN_SESSION, NEW_MEMBER_MS, PR, PROFILES,
                                  PROTOS, PROTOS_CHANGED, R_MS, S_MS, ST, completing, coordinator, empty,
                                  hb_deadlines, in_state, join, liveness, members, new_member, op_deadlines,
                                  pending, preparing, stable)

#: §3.1: join error responses carry generation −1 (NoGeneration) from 2.2, 0 before
ERROR_GENERATION = {"0.10.0": 0, "3.9": -1}
#: §4.9: DelayedJoin delay = max rebalanceTimeoutMs (0.10.1+); 0.9/0.10.0: max sessionTimeoutMs
JOIN_PHASE_MS = {"0.10.0": S_MS, "3.9": R_MS}


def assert_join_error(result, error: Errors, member_id: str, profile: str) -> None:
    # §3.1 "join error" shape: given memberId, generation −1 (0 before 2.2), empty protocol/leader/members
    assert result.error is error
    assert result.member_id == member_id
    assert result.generation_id == ERROR_GENERATION[profile]
    assert not result.protocol_name and result.leader_id == "" and result.members == ()


# -- JoinGroup: unknown member id ----------------------------------------------------------------
def test_join_new_group_e0_completes_inside_the_first_join() -> None:
    # E0 (seed 001, §4.2): the group starts Stable, the first member's DelayedJoin completes inside
    # tryCompleteElseWatch → CompletingRebalance, generation 1, the leader gets itself as member list
    c = coordinator("0.10.0")
    member_id, future = new_member(c)
    assert future.done and future.result.error is Errors.NONE
    r = future.result
    assert (r.generation_id, r.leader_id, r.protocol_name) == (1, member_id, "range")
    assert r.members == ((member_id, None, PROTOS[0][1]),)
    assert c.describe(G).state is CR
    assert op_deadlines(c, "DelayedJoin") == []
    assert hb_deadlines(c, member_id) == [c.now_ms + S_MS]   # §4.4 step 5: session-timeout watch


def test_join_new_group_modern_waits_initial_delay() -> None:
    # §1.3 Empty → PR via addMemberAndRebalance with an InitialDelayedJoin (§4.5); the member is new and
    # watched by the 5-minute new-member timeout (§3.1 addMemberAndRebalance)
    c = coordinator("3.9")
    c.advance(500)
    member_id, future = new_member(c)
    view = c.describe(G)
    assert not future.done
    assert (view.state, view.generation_id, set(view.members)) == (PR, 0, {member_id})
    assert view.members[member_id].is_new and view.members[member_id].awaiting_join
    assert op_deadlines(c, "InitialDelayedJoin") == [500 + D_MS]
    assert hb_deadlines(c, member_id) == [500 + NEW_MEMBER_MS]


def test_join_empty_group_that_rebalanced_before_waits_the_delay_once() -> None:
    # §4.5: newMemberAdded is only set for generation 0, so an Empty group that rebalanced before waits
    # exactly D once even if more members join meanwhile; then → CR with generation + 1 (§1.3)
    scene = empty()
    c, start = scene.c, scene.c.now_ms
    first, f1 = new_member(c)
    assert scene.state is PR and op_deadlines(c, "InitialDelayedJoin") == [start + D_MS]
    c.advance(1_000)
    second, f2 = new_member(c)
    c.advance(D_MS - 1_000)              # now == start + D: not yet due (deadline < now fires)
    assert scene.state is PR
    c.advance(1)
    assert scene.state is CR and scene.gen == 3
    assert f1.result.error is Errors.NONE and f2.result.error is Errors.NONE
    assert {f1.result.generation_id, f2.result.generation_id} == {3}


@pytest.mark.parametrize("profile", PROFILES)
def test_join_unknown_id_in_preparing_rebalance_parks(profile: str) -> None:
    # §3.9 "add member, park": no state change, generation unchanged
    scene = preparing(profile)
    gen = scene.gen
    member_id, future = new_member(scene.c)
    assert not future.done
    assert scene.state is PR and scene.gen == gen
    assert scene.view.members[member_id].awaiting_join


@pytest.mark.parametrize("profile", PROFILES)
def test_join_unknown_id_in_completing_rebalance_rebalances(profile: str) -> None:
    # §3.9 "add member, → PR (SyncGroups get RIP)"; prepareRebalance answers every parked SyncGroup
    scene = completing(profile)
    parked = scene.c.sync_group(G, scene.gen, scene.follower)
    assert not parked.done
    member_id, future = new_member(scene.c)
    assert parked.result.error is Errors.REBALANCE_IN_PROGRESS
    assert not future.done and scene.state is PR
    assert member_id in scene.view.members


@pytest.mark.parametrize("profile", PROFILES)
def test_join_unknown_id_in_stable_rebalances(profile: str) -> None:
    # §3.9 "add member, → PR"; the DelayedJoin's delay is the group's rebalance timeout (§4.9)
    scene = stable(profile)
    scene.c.advance(1_000)
    gen = scene.gen
    member_id, future = new_member(scene.c)
    assert not future.done
    assert scene.state is PR and scene.gen == gen
    assert op_deadlines(scene.c, "DelayedJoin") == [scene.c.now_ms + JOIN_PHASE_MS[profile]]


# -- JoinGroup v≥4: MEMBER_ID_REQUIRED and pending members (3.9) ------------------------------------
@pytest.mark.parametrize("state", [None, EMPTY, PR, CR, ST], ids=lambda s: "absent" if s is None else s.value)
def test_join_requiring_known_member_id_makes_a_pending_member(state) -> None:
    # §3.1 J5a.5 / §3.9: pending + MEMBER_ID_REQUIRED (+ the new id), no state change, no rebalance;
    # a pending-member expiration of the request's session timeout is scheduled (§4.7)
    scene = in_state("3.9", state) if state is not None else None
    c = scene.c if scene else coordinator("3.9")
    before = (scene.state, scene.gen, set(scene.view.members)) if scene else None
    parked_sync = c.sync_group(G, scene.gen, scene.follower) if state is CR else None
    future = join(c, "", session=7_000, require_known_member_id=True)
    r = future.result
    assert_join_error(r, Errors.MEMBER_ID_REQUIRED, r.member_id, "3.9")
    assert r.member_id != "" and r.member_id not in members(c)
    assert pending(c) == {r.member_id}
    view = c.describe(G)
    if before is None:
        assert view.state is EMPTY    # J3 created the group (Empty); the pending member changed nothing
    else:
        assert (view.state, view.generation_id, set(view.members)) == before
    pending_ops = [op for op in c.delayed_operations() if op.pending]
    assert [(op.member_id, op.deadline_ms) for op in pending_ops] == [(r.member_id, c.now_ms + 7_000)]
    if parked_sync is not None:
        assert not parked_sync.done


@pytest.mark.parametrize("state,after", [(EMPTY, PR), (PR, PR), (CR, PR), (ST, PR)], ids=lambda s: s.value)
def test_join_with_pending_id_adds_the_member(state, after) -> None:
    # §3.9 "Join, pending id": Empty → add, → PR; PR → add, park; CR → add, → PR; Stable → add, → PR
    scene = in_state("3.9", state)
    c = scene.c
    pending_id = join(c, "", require_known_member_id=True).result.member_id
    parked_sync = c.sync_group(G, scene.gen, scene.follower) if state is CR else None
    future = join(c, pending_id, require_known_member_id=True)
    assert not future.done
    view = c.describe(G)
    assert view.state is after
    assert pending_id in view.members and view.members[pending_id].awaiting_join
    assert pending_id not in view.pending_members     # I5: pending ∩ members = ∅
    if parked_sync is not None:
        assert parked_sync.result.error is Errors.REBALANCE_IN_PROGRESS


# -- JoinGroup: known member ---------------------------------------------------------------------
@pytest.mark.parametrize("protocols", [PROTOS, PROTOS_CHANGED], ids=["same", "changed"])
def test_join_known_id_in_empty_group_is_unknown_member(protocols) -> None:
    # §3.9 Empty column: UNKNOWN_MEMBER_ID for a known member (the former member is gone)
    scene = empty()
    r = join(scene.c, scene.leader, protocols).result
    assert_join_error(r, Errors.UNKNOWN_MEMBER_ID, scene.leader, "3.9")
    assert scene.state is EMPTY


@pytest.mark.parametrize("profile", PROFILES)
def test_join_known_id_in_preparing_rebalance_overwrites_the_parked_join(profile: str) -> None:
    # §3.1 J5b.6 PR: update and park; a previously parked callback is silently overwritten, never answered
    scene = preparing(profile)
    first = scene.joins[scene.leader]
    second = join(scene.c, scene.leader, PROTOS_CHANGED)
    assert scene.state is PR and not second.done
    join(scene.c, scene.follower)                        # everybody rejoined: → CR (§3.9)
    assert scene.state is CR
    assert not first.done
    r = second.result
    assert r.error is Errors.NONE and r.generation_id == scene.gen
    assert dict((m, meta) for m, _, meta in r.members)[scene.leader] == PROTOS_CHANGED[0][1]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("role", ["leader", "follower"])
def test_join_same_metadata_in_completing_answers_current_generation(profile: str, role: str) -> None:
    # §3.1 J5b.6 CR, same metadata: current generation, protocol, leader; member list only for the leader
    scene = completing(profile)
    scene.c.advance(1_000)
    member_id = getattr(scene, role)
    before = liveness(scene.c, member_id)
    r = join(scene.c, member_id).result
    assert (r.error, r.generation_id, r.leader_id) == (Errors.NONE, scene.gen, scene.leader)
    assert r.protocol_name == "range"
    assert {m for m, _, _ in r.members} == ({scene.leader, scene.follower} if role == "leader" else set())
    assert scene.state is CR
    assert liveness(scene.c, member_id) == before        # not a liveness event (§4.6 callers)


@pytest.mark.parametrize("profile", PROFILES)
def test_join_changed_metadata_in_completing_rebalances(profile: str) -> None:
    # §3.9 CR, changed metadata: update, → PR; parked SyncGroups get REBALANCE_IN_PROGRESS (§3.1)
    scene = completing(profile)
    parked = scene.c.sync_group(G, scene.gen, scene.follower)
    future = join(scene.c, scene.follower, PROTOS_CHANGED)
    assert scene.state is PR and not future.done
    assert parked.result.error is Errors.REBALANCE_IN_PROGRESS


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("protocols", [PROTOS, PROTOS_CHANGED], ids=["same", "changed"])
def test_leader_rejoin_in_stable_always_rebalances(profile: str, protocols) -> None:
    # §3.1 J5b.6 Stable: caller is leader → updateMemberAndRebalance (always rebalances)
    scene = stable(profile)
    gen = scene.gen
    future = join(scene.c, scene.leader, protocols)
    assert not future.done
    assert scene.state is PR and scene.gen == gen
    assert scene.view.members[scene.leader].awaiting_join


@pytest.mark.parametrize("profile", PROFILES)
def test_follower_same_metadata_in_stable_is_answered_at_once(profile: str) -> None:
    # §3.1 J5b.6 Stable: follower, identical metadata → current generation/leader, no member list,
    # no state change (and it is not one of §4.6's liveness events)
    scene = stable(profile)
    scene.c.advance(1_000)
    before = liveness(scene.c, scene.follower)
    r = join(scene.c, scene.follower).result
    assert (r.error, r.generation_id, r.leader_id, r.members) == (Errors.NONE, scene.gen, scene.leader, ())
    assert scene.state is ST
    assert liveness(scene.c, scene.follower) == before


@pytest.mark.parametrize("profile", PROFILES)
def test_follower_changed_metadata_in_stable_rebalances(profile: str) -> None:
    scene = stable(profile)                              # §3.9 Stable, changed metadata: update, → PR
    future = join(scene.c, scene.follower, PROTOS_CHANGED)
    assert scene.state is PR and not future.done


@pytest.mark.parametrize("profile", PROFILES)
def test_rejoin_timeouts_are_copied_only_from_3_4(profile: str) -> None:
    # §2: session/rebalance timeouts updated on rejoin from 3.3.2/3.4.0 (KAFKA-14009); before, ignored
    scene = stable(profile)
    join(scene.c, scene.leader, session=12_000, rebalance=25_000)
    m = scene.view.members[scene.leader]
    expected = (12_000, 25_000) if profile == "3.9" else (S_MS, R_MS)
    assert (m.session_timeout_ms, m.rebalance_timeout_ms) == expected


# -- JoinGroup: request-level errors ----------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("which", ["below_min", "above_max"])
def test_join_session_timeout_out_of_bounds(profile: str, which: str) -> None:
    # §3.1 J2: outside [min, max] → INVALID_SESSION_TIMEOUT, before the group is looked up or created
    c = coordinator(profile)
    session = MIN_SESSION - 1 if which == "below_min" else MAX_SESSION[profile] + 1
    r = join(c, "", session=session).result
    assert_join_error(r, Errors.INVALID_SESSION_TIMEOUT, "", profile)
    assert c.describe(G) is None


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("which", ["min", "max"])
def test_join_session_timeout_bounds_are_inclusive(profile: str, which: str) -> None:
    c = coordinator(profile)
    session = MIN_SESSION if which == "min" else MAX_SESSION[profile]
    future = join(c, "", session=session)
    assert not (future.done and future.result.error is Errors.INVALID_SESSION_TIMEOUT)
    assert c.describe(G) is not None and len(c.describe(G).members) == 1


@pytest.mark.parametrize("profile", PROFILES)
def test_join_known_id_to_absent_group(profile: str) -> None:
    c = coordinator(profile)                             # §3.1 J3: group absent and memberId known
    assert_join_error(join(c, "ghost").result, Errors.UNKNOWN_MEMBER_ID, "ghost", profile)
    assert c.describe(G) is None


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("member", ["new", "known", "stranger"])
@pytest.mark.parametrize("mismatch", ["type", "names"])
def test_join_protocol_mismatch(profile: str, member: str, mismatch: str) -> None:
    # §3.6: type must equal the group's and some offered name must be supported by all members;
    # J5a.2 / J5b.2 check this before the member lookup, so a stranger id also gets INCONSISTENT
    scene = stable(profile)
    member_id = {"new": "", "known": scene.follower, "stranger": "stranger"}[member]
    kw = {"protocol_type": "connect"} if mismatch == "type" else {"protocols": [("sticky", b"s")]}
    r = join(scene.c, member_id, **kw).result
    assert_join_error(r, Errors.INCONSISTENT_GROUP_PROTOCOL, member_id, profile)
    assert scene.state is ST and set(scene.view.members) == {scene.leader, scene.follower}


@pytest.mark.parametrize("kw", [{"protocols": []}, {"protocol_type": ""}], ids=["no_protocols", "no_type"])
def test_first_member_needs_type_and_protocols(kw) -> None:
    # §3.6 Empty group: type non-empty and names non-empty (KAFKA-6005)
    scene = empty()
    r = join(scene.c, "", **kw).result
    assert_join_error(r, Errors.INCONSISTENT_GROUP_PROTOCOL, "", "3.9")
    assert scene.state is EMPTY


@pytest.mark.parametrize("profile", PROFILES)
def test_join_while_loading(profile: str) -> None:
    scene = stable(profile)                              # §3.0 check 3 / §3.8 "loading"
    scene.c.set_loading(G, True)
    assert_join_error(join(scene.c, "").result, Errors.COORDINATOR_LOAD_IN_PROGRESS, "", profile)
    assert_join_error(join(scene.c, scene.leader).result, Errors.COORDINATOR_LOAD_IN_PROGRESS, scene.leader,
                      profile)
    assert scene.state is ST


@pytest.mark.parametrize("profile", PROFILES)
def test_join_after_unload(profile: str) -> None:
    scene = stable(profile)                              # §3.0 check 4 / §3.8 "not leader of partition"
    scene.c.unload_group(G)
    assert_join_error(join(scene.c, scene.leader).result, Errors.NOT_COORDINATOR, scene.leader, profile)
    assert_join_error(join(scene.c, "").result, Errors.NOT_COORDINATOR, "", profile)
    assert scene.c.describe(G) is None


@pytest.mark.parametrize("profile", PROFILES)
def test_loading_and_not_coordinator_check_order(profile: str) -> None:
    # §3.0: 2.0+ checks loading (3) before leadership (4); before 2.0 the opposite order
    c = coordinator(profile)
    c.unload_group(G)
    c.set_loading(G, True)
    expected = Errors.COORDINATOR_LOAD_IN_PROGRESS if profile == "3.9" else Errors.NOT_COORDINATOR
    assert join(c, "").result.error is expected


@pytest.mark.parametrize("profile", ["0.10.0"])
def test_join_with_group_instance_id_is_unsupported(profile: str) -> None:
    # no KIP-345 before 2.3 (SPEC.md §0 E3; §3.1: KafkaApis refuses an instance id with UNSUPPORTED_VERSION)
    scene = stable(profile)
    r = join(scene.c, "", group_instance_id="instance-1").result
    assert r.error is Errors.UNSUPPORTED_VERSION
    assert scene.state is ST and set(scene.view.members) == {scene.leader, scene.follower}
    assert join(coordinator(profile), "", group_instance_id="i").result.error is Errors.UNSUPPORTED_VERSION


# -- JoinGroup: group.max.size, the 2.6 rule (3.9) ---------------------------------------------------
def test_max_size_empty_group_always_accepts() -> None:
    scene = empty(cfg={"group_max_size": 1})            # §3.1 J4: Empty/Dead → accept
    _, future = new_member(scene.c)
    assert not future.done and scene.state is PR


def test_max_size_preparing_counts_members_awaiting_join() -> None:
    # §3.1 J4 PR: accept a member already awaiting join, or any joiner while numAwaiting < max;
    # rejected → group.remove(memberId) and GROUP_MAX_SIZE_REACHED with memberId ""
    scene = preparing("3.9", cfg={"group_max_size": 2})  # 2 members, 1 awaiting (the leader)
    c = scene.c
    third, f3 = new_member(c)                            # 1 < 2 → accepted (3 members now)
    assert not f3.done and third in scene.view.members
    r = join(c, "").result                               # 2 awaiting, 2 < 2 is false → rejected
    assert_join_error(r, Errors.GROUP_MAX_SIZE_REACHED, "", "3.9")
    again = join(c, scene.leader)                        # awaiting already → accepted
    assert not again.done
    r = join(c, scene.follower).result                   # exists but not awaiting → rejected and removed
    assert_join_error(r, Errors.GROUP_MAX_SIZE_REACHED, "", "3.9")
    assert scene.follower not in members(c)


@pytest.mark.parametrize("state", [CR, ST], ids=lambda s: s.value)
def test_max_size_completing_and_stable_count_members(state) -> None:
    # §3.1 J4 CR/Stable: accept if the member exists or |members| < max
    scene = in_state("3.9", state, cfg={"group_max_size": 2})
    r = join(scene.c, "").result
    assert_join_error(r, Errors.GROUP_MAX_SIZE_REACHED, "", "3.9")
    r = join(scene.c, "", require_known_member_id=True).result   # J4 precedes the pending step
    assert_join_error(r, Errors.GROUP_MAX_SIZE_REACHED, "", "3.9")
    assert scene.state is state and pending(scene.c) == set()
    future = join(scene.c, scene.follower, PROTOS_CHANGED)       # existing member → accepted, → PR
    assert not future.done and scene.state is PR

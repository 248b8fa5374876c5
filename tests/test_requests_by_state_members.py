"""Heartbeat, LeaveGroup and OffsetCommit, cell by cell of SPEC.md §3.3–§3.5 / §3.8 / §3.9.

0.10.0 answers heartbeats by the 0.9.0 column of the §3.3 table and switches on the state *before*
the member/generation checks; 3.9 by the 2.6.1/2.7.0+ column after them. "Timer reset" is
completeAndScheduleNextHeartbeatExpiration (§4.6): observed as the member's armed DelayedHeartbeat
now due one session from now (every earlier watch completed), plus latestHeartbeat for ≤ 2.4.
Requests to a Dead group are unreachable here (see test_requests_by_state.py's module note).
"""
from __future__ import annotations

import pytest

from impl import Errors
from tests.group_builders import (CR, EMPTY, G, PR, PROFILES, ST, coordinator, empty, hb_deadlines,
                                  in_state, join, liveness, new_member, pending, preparing, stable,
                                  was_reset)

RIP, NONE, UNKNOWN, ILLEGAL = (Errors.REBALANCE_IN_PROGRESS, Errors.NONE, Errors.UNKNOWN_MEMBER_ID,
                               Errors.ILLEGAL_GENERATION)

# -- Heartbeat: §3.3 table ---------------------------------------------------------------------------
#: (state, who, generation delta) → {profile: (error, timer reset)}. "follower" is a member that has
#: not rejoined in PR (a rejoined member is awaiting join; see the separate test below).
HEARTBEAT_CELLS = [
    (ST, "follower", 0, {"0.10.0": (NONE, True), "3.9": (NONE, True)}),
    (ST, "follower", 1, {"0.10.0": (ILLEGAL, False), "3.9": (ILLEGAL, False)}),
    (ST, "stranger", 0, {"0.10.0": (UNKNOWN, False), "3.9": (UNKNOWN, False)}),
    # 0.9 PR: REBALANCE_IN_PROGRESS, not reset, state checked first (so no member/generation check)
    (PR, "follower", 0, {"0.10.0": (RIP, False), "3.9": (RIP, True)}),
    (PR, "follower", 1, {"0.10.0": (RIP, False), "3.9": (ILLEGAL, False)}),
    (PR, "stranger", 0, {"0.10.0": (RIP, False), "3.9": (UNKNOWN, False)}),
    # CR: 0.9 REBALANCE_IN_PROGRESS, not reset; 2.6.1+ (KAFKA-10134) reset, NONE after the generic checks
    (CR, "follower", 0, {"0.10.0": (RIP, False), "3.9": (NONE, True)}),
    (CR, "leader", 0, {"0.10.0": (RIP, False), "3.9": (NONE, True)}),
    (CR, "follower", -1, {"0.10.0": (RIP, False), "3.9": (ILLEGAL, False)}),
    (CR, "stranger", 0, {"0.10.0": (RIP, False), "3.9": (UNKNOWN, False)}),
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("state,who,delta,expected", HEARTBEAT_CELLS,
                         ids=[f"{s.value}-{w}-gen{d:+d}" for s, w, d, _ in HEARTBEAT_CELLS])
def test_heartbeat(profile: str, state, who: str, delta: int, expected) -> None:
    error, reset = expected[profile]
    scene = in_state(profile, state)
    c = scene.c
    c.advance(1_000)
    member_id = getattr(scene, who, "stranger")
    before = liveness(c, member_id)
    assert c.heartbeat(G, member_id, scene.gen + delta).result.error is error
    assert scene.state is state
    if reset:
        assert was_reset(c, member_id)
        if profile == "0.10.0":
            assert scene.view.members[member_id].latest_heartbeat_ms == c.now_ms
    else:
        assert liveness(c, member_id) == before


def test_heartbeat_of_a_member_awaiting_join_arms_nothing_modern() -> None:
    # §4.6 (2.5.0+): a member awaiting join that heartbeats gets its new op completed at once
    # (awaiting ⇒ satisfied), so it has no armed expiration until onCompleteJoin (derived)
    scene = preparing("3.9")
    scene.c.advance(1_000)
    assert scene.c.heartbeat(G, scene.leader, scene.gen).result.error is RIP
    assert hb_deadlines(scene.c, scene.leader) == []


def test_heartbeat_in_empty_group_modern() -> None:
    scene = empty()                                      # §3.3 Empty row: UNKNOWN_MEMBER_ID
    assert scene.c.heartbeat(G, scene.leader, scene.gen).result.error is UNKNOWN
    assert scene.c.heartbeat(G, scene.leader, scene.gen - 1).result.error is UNKNOWN


@pytest.mark.parametrize("profile", PROFILES)
def test_heartbeat_absent_group(profile: str) -> None:
    assert coordinator(profile).heartbeat(G, "m", 1).result.error is UNKNOWN   # §3.3 "Group absent"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("who", ["leader", "stranger"])
def test_heartbeat_while_loading_is_answered_blindly(profile: str, who: str) -> None:
    # §3.0: Heartbeat turns LOAD_IN_PROGRESS into NONE, without looking at the group (all versions)
    scene = stable(profile)
    scene.c.advance(1_000)
    scene.c.set_loading(G, True)
    member_id = getattr(scene, who, "stranger")
    before = liveness(scene.c, member_id)
    assert scene.c.heartbeat(G, member_id, scene.gen + 7).result.error is NONE
    assert liveness(scene.c, member_id) == before


@pytest.mark.parametrize("profile", PROFILES)
def test_heartbeat_after_unload(profile: str) -> None:
    scene = stable(profile)
    gen = scene.gen
    scene.c.unload_group(G)
    assert scene.c.heartbeat(G, scene.leader, gen).result.error is Errors.NOT_COORDINATOR


@pytest.mark.parametrize("profile", PROFILES)
def test_heartbeat_loading_and_unloaded(profile: str) -> None:
    # §3.0 order: 2.0+ loading first (→ NONE for Heartbeat); before 2.0 NOT_COORDINATOR first
    c = coordinator(profile)
    c.unload_group(G)
    c.set_loading(G, True)
    expected = NONE if profile == "3.9" else Errors.NOT_COORDINATOR
    assert c.heartbeat(G, "m", 1).result.error is expected


# -- LeaveGroup: §3.4 ------------------------------------------------------------------------------
def leave(c, *member_ids: str):
    return c.leave_group(G, [(m, None) for m in member_ids]).result


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("who", ["leader", "follower"])
def test_leave_in_stable_rebalances(profile: str, who: str) -> None:
    # §3.9 Stable: remove, → PR; removing the leader re-elects another member (§1.4 leader bookkeeping)
    scene = stable(profile)
    gen = scene.gen
    leaving = getattr(scene, who)
    staying = scene.follower if who == "leader" else scene.leader
    assert leave(scene.c, leaving).error is NONE
    view = scene.view
    assert (view.state, view.generation_id, set(view.members)) == (PR, gen, {staying})
    assert view.leader_id == staying
    assert hb_deadlines(scene.c, leaving) == []          # its heartbeat op was completed (§3.4)


@pytest.mark.parametrize("profile", PROFILES)
def test_leave_in_completing_rebalance(profile: str) -> None:
    # §3.9 CR: remove, → PR; prepareRebalance answers the *remaining* members' parked SyncGroups (RIP);
    # the leaver's own parked SyncGroup is not answered (§3.4 "Parked SyncGroup callbacks ... not answered")
    scene = in_state(profile, CR)
    c = scene.c
    third, _ = new_member(c)                             # a 3-member group: rebalance, rejoin, back to CR
    join(c, scene.leader)
    join(c, scene.follower)
    assert scene.state is CR
    leaver_sync = c.sync_group(G, scene.gen, scene.follower)
    stayer_sync = c.sync_group(G, scene.gen, third)
    assert leave(c, scene.follower).error is NONE
    assert scene.state is PR
    assert stayer_sync.result.error is RIP
    assert not leaver_sync.done


@pytest.mark.parametrize("profile", PROFILES)
def test_leave_of_the_member_not_rejoined_completes_the_join(profile: str) -> None:
    # §3.9 PR: remove, re-check join (may → CR): the leader already rejoined, so the phase completes
    scene = preparing(profile)
    gen = scene.gen
    assert leave(scene.c, scene.follower).error is NONE
    view = scene.view
    assert (view.state, view.generation_id, set(view.members)) == (CR, gen + 1, {scene.leader})
    r = scene.joins[scene.leader].result
    assert (r.error, r.generation_id, r.leader_id) == (NONE, gen + 1, scene.leader)


@pytest.mark.parametrize("profile", PROFILES)
def test_leave_of_a_parked_member_in_preparing(profile: str) -> None:
    # §3.4 removeMemberAndUpdateGroup: 2.2.0+ answers the parked JoinGroup UNKNOWN_MEMBER_ID with memberId "";
    # E0's onMemberFailure did not (the callback is dropped unanswered). The leader role moves on.
    scene = preparing(profile)
    parked = scene.joins[scene.leader]
    assert leave(scene.c, scene.leader).error is NONE
    assert scene.state is PR and scene.view.leader_id == scene.follower
    if profile == "3.9":
        assert (parked.result.error, parked.result.member_id) == (UNKNOWN, "")
    else:
        assert not parked.done


@pytest.mark.parametrize("profile", PROFILES)
def test_last_member_leaving(profile: str) -> None:
    # §1.3: the last member leaving a Stable group → PR → DelayedJoin of 0 ms completes at once → Empty
    # with generation + 1 (0.10.1+); E0: "an empty group went straight to Dead" (§4.4) and is removed
    scene = stable(profile, n=1)
    gen = scene.gen
    assert leave(scene.c, scene.leader).error is NONE
    if profile == "3.9":
        assert (scene.state, scene.gen, scene.view.members) == (EMPTY, gen + 1, {})
    else:
        assert scene.c.describe(G) is None
        r = join(scene.c, "").result                     # the id space starts over in a new group
        assert r.error is NONE and r.generation_id == 1


def test_batch_leave_modern() -> None:
    # §3.4 2.4.0+: each identity independently; top-level NONE if the group existed, even if all failed
    scene = stable("3.9")
    r = scene.c.leave_group(G, [(scene.follower, None), ("stranger", None)]).result
    assert r.error is NONE
    assert r.member_errors == ((scene.follower, None, NONE), ("stranger", None, UNKNOWN))
    assert scene.state is PR and set(scene.view.members) == {scene.leader}
    r = scene.c.leave_group(G, [("x", None), ("y", None)]).result
    assert r.error is NONE and [e for _, _, e in r.member_errors] == [UNKNOWN, UNKNOWN]


@pytest.mark.parametrize("profile", PROFILES)
def test_leave_unknown_member(profile: str) -> None:
    scene = stable(profile)                              # §3.4 not a member → UNKNOWN_MEMBER_ID
    r = leave(scene.c, "stranger")
    if profile == "3.9":
        assert r.error is NONE and r.member_errors == (("stranger", None, UNKNOWN),)
    else:
        assert r.error is UNKNOWN
    assert scene.state is ST


@pytest.mark.parametrize("profile", PROFILES)
def test_leave_absent_group(profile: str) -> None:
    # §3.4: ≤ 2.3 UNKNOWN_MEMBER_ID; 2.4.0+ top-level NONE with UNKNOWN_MEMBER_ID for every identity
    r = leave(coordinator(profile), "a", "b")
    if profile == "3.9":
        assert r.error is NONE and [e for _, _, e in r.member_errors] == [UNKNOWN, UNKNOWN]
    else:
        assert r.error is UNKNOWN


def test_leave_in_empty_group_modern() -> None:
    scene = empty()                                      # §3.9 Empty: (UNKNOWN_MEMBER_ID) per member
    r = leave(scene.c, scene.leader)
    assert r.error is NONE and r.member_errors == ((scene.leader, None, UNKNOWN),)
    assert scene.state is EMPTY


def test_leave_of_a_pending_member_releases_the_join_modern() -> None:
    # §4.4: a pending member blocks early completion; §3.4: its LeaveGroup drops it, re-checks the join
    # purgatory (PR) and completes its pending heartbeat op → NONE
    scene = preparing("3.9")
    c = scene.c
    pending_id = join(c, "", require_known_member_id=True).result.member_id
    join(c, scene.follower)                              # every member rejoined, but a pending one exists
    assert scene.state is PR
    r = leave(c, pending_id)
    assert r.error is NONE and r.member_errors == ((pending_id, None, NONE),)
    assert pending(c) == set()
    assert scene.state is CR


def test_leave_of_a_pending_member_completes_its_pending_op_modern() -> None:
    # §3.4 (≤2.3 text, kept by 2.4+ "pending → removed as above"): "complete its pending heartbeat op";
    # §4.7: "LeaveGroup of a pending id does the same and completes the op"
    scene = stable("3.9")
    pending_id = join(scene.c, "", require_known_member_id=True).result.member_id
    assert leave(scene.c, pending_id).error is NONE
    assert [op.member_id for op in scene.c.delayed_operations() if op.pending] == []


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("condition,error", [("loading", Errors.COORDINATOR_LOAD_IN_PROGRESS),
                                             ("unloaded", Errors.NOT_COORDINATOR)])
def test_leave_precheck_errors_are_top_level(profile: str, condition: str, error) -> None:
    scene = stable(profile)                              # §3.8: loading / not leader → top-level
    if condition == "loading":
        scene.c.set_loading(G, True)
    else:
        scene.c.unload_group(G)
    assert leave(scene.c, scene.leader).error is error
    if condition == "loading":
        assert scene.state is ST and scene.leader in scene.view.members


# -- OffsetCommit: §3.5 ----------------------------------------------------------------------------
def commit(c, member_id: str, generation_id: int):
    return c.commit_offsets(G, member_id, generation_id, {"t-0": 1}).result.error


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("state", [ST, PR], ids=lambda s: s.value)
def test_commit_by_member_resets_heartbeat(profile: str, state) -> None:
    # §3.5 Stable or PreparingRebalance → reschedule the member's heartbeat (KAFKA-3470, 0.10.0) and store
    scene = in_state(profile, state)
    scene.c.advance(1_000)
    assert commit(scene.c, scene.follower, scene.gen) is NONE
    assert was_reset(scene.c, scene.follower) and scene.state is state


#: CR cells: 2.4.0+ checks member/generation before the state; 0.9–2.3 checked CR first (KAFKA-8487)
COMMIT_CR = [("follower", 0, {"0.10.0": RIP, "3.9": RIP}),
             ("follower", 1, {"0.10.0": RIP, "3.9": ILLEGAL}),
             ("stranger", 0, {"0.10.0": RIP, "3.9": UNKNOWN})]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("who,delta,expected", COMMIT_CR, ids=["member", "wrong-generation", "stranger"])
def test_commit_in_completing_rebalance(profile: str, who: str, delta: int, expected) -> None:
    scene = in_state(profile, CR)
    scene.c.advance(1_000)
    member_id = getattr(scene, who, "stranger")
    before = liveness(scene.c, member_id)
    assert commit(scene.c, member_id, scene.gen + delta) is expected[profile]
    assert liveness(scene.c, member_id) == before and scene.state is CR


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("who,delta,error", [("follower", 1, ILLEGAL), ("stranger", 0, UNKNOWN),
                                             ("nobody", -1, UNKNOWN)], ids=["wrong-generation", "stranger",
                                                                            "simple-consumer"])
def test_commit_rejected_in_stable(profile: str, who: str, delta: int, error) -> None:
    # §3.5: member absent → UNKNOWN_MEMBER_ID; generation mismatch → ILLEGAL_GENERATION; generation −1 and
    # memberId "" to a non-empty group → UNKNOWN_MEMBER_ID (all 2.x/3.x; 0.10.0 checked membership too)
    scene = stable(profile)
    member_id = {"follower": scene.follower, "stranger": "stranger", "nobody": ""}[who]
    generation = -1 if who == "nobody" else scene.gen + delta
    assert commit(scene.c, member_id, generation) is error
    assert scene.state is ST


@pytest.mark.parametrize("profile", PROFILES)
def test_commit_to_absent_group(profile: str) -> None:
    # §3.5 group absent: generation < 0 → store (2.x+: creates an Empty group); else ILLEGAL_GENERATION
    c = coordinator(profile)
    assert commit(c, "", 3) is ILLEGAL
    assert c.describe(G) is None
    assert commit(c, "", -1) is NONE
    if profile == "3.9":
        view = c.describe(G)
        assert (view.state, view.members) == (EMPTY, {})


@pytest.mark.parametrize("member_id", ["", "admin-client"])
def test_commit_with_no_generation_to_an_empty_group_modern(member_id: str) -> None:
    # §3.5 (2.5.0–2.8 / 3.9), in order: Dead → …; fenced → …; generation < 0 and group Empty → store (no
    # membership); member absent → UNKNOWN_MEMBER_ID. So generation −1 stores whatever the member id.
    scene = empty()
    assert commit(scene.c, member_id, -1) is NONE
    assert scene.state is EMPTY


def test_commit_by_former_member_to_empty_group_modern() -> None:
    scene = empty()                                      # §3.9 Empty: (UNKNOWN_MEMBER_ID)
    assert commit(scene.c, scene.leader, scene.gen) is UNKNOWN


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("condition,error", [("loading", Errors.COORDINATOR_LOAD_IN_PROGRESS),
                                             ("unloaded", Errors.NOT_COORDINATOR)])
def test_commit_precheck_errors(profile: str, condition: str, error) -> None:
    scene = stable(profile)
    gen = scene.gen
    if condition == "loading":
        scene.c.set_loading(G, True)
    else:
        scene.c.unload_group(G)
    assert commit(scene.c, scene.leader, gen) is error


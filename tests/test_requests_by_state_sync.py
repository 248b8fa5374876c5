"""SyncGroup, cell by cell of SPEC.md §3.2 / §3.8 / §3.9, for the 0.10.0 and 3.9 profiles.

Includes the deferred store (append_mode="deferred", SPEC.md §5.2): the callback after the append,
its generation guard, and the store-error mapping. A Dead group is reached only through a stale
store callback after unload (requests to an unloaded group get NOT_COORDINATOR, §3.0).
"""
from __future__ import annotations

import pytest

from impl import Errors
from tests.group_builders import (CR, G, PR, PROFILES, ST, assignment_for, completing, coordinator, empty,
                                  in_state, join, liveness, new_member, preparing, stable, was_reset)


# -- SyncGroup ------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("role", ["leader", "follower"])
def test_sync_in_preparing_rebalance(profile: str, role: str) -> None:
    scene = preparing(profile)                           # §3.2 step 5 / §3.9: RIP
    scene.c.advance(1_000)
    member_id = getattr(scene, role)
    before = liveness(scene.c, member_id)
    assert scene.c.sync_group(G, scene.gen, member_id, {}).result.error is Errors.REBALANCE_IN_PROGRESS
    assert scene.state is PR and liveness(scene.c, member_id) == before


@pytest.mark.parametrize("profile", PROFILES)
def test_sync_follower_parks_in_completing(profile: str) -> None:
    # §3.2 CR: park the callback. 0.10.0 (seed 000, the E0 code) reschedules the heartbeat after parking;
    # from 0.10.1 parking is not a liveness event (§4.6 callers) — the member is kept alive as awaiting sync
    scene = completing(profile)
    scene.c.advance(1_000)
    before = liveness(scene.c, scene.follower)
    future = scene.c.sync_group(G, scene.gen, scene.follower)
    assert not future.done and scene.view.members[scene.follower].awaiting_sync
    assert scene.state is CR
    if profile == "0.10.0":
        # latestHeartbeat = now; the new op completes at birth (keep ⇐ awaitingSync, §2 ≤ 2.1 row), so
        # no expiration is armed while the SyncGroup is parked (§4.6 "design assumption" / consequence)
        assert liveness(scene.c, scene.follower) == ((), scene.c.now_ms)
    else:
        assert liveness(scene.c, scene.follower) == before


@pytest.mark.parametrize("profile", PROFILES)
def test_sync_leader_stores_and_answers_every_parked_sync(profile: str) -> None:
    # §3.2 CR leader: store; callback sets assignments, answers every parked SyncGroup, resets their
    # heartbeats, → Stable. Missing members get an empty assignment; extra keys are ignored.
    scene = completing(profile, n=3)
    c = scene.c
    third = sorted(m for m in scene.view.members if m not in (scene.leader, scene.follower))[0]
    c.advance(1_000)
    follower_sync = c.sync_group(G, scene.gen, scene.follower)
    c.advance(1_000)
    third_before = liveness(c, third)
    leader_sync = c.sync_group(G, scene.gen, scene.leader,
                               {scene.leader: b"L", scene.follower: b"F", "not-a-member": b"X"})
    assert scene.state is ST and scene.gen == scene.joins[scene.leader].result.generation_id
    # SyncGroup v5 (KIP-559, 2.5.0+) answers name the group's protocol type and name (GroupCoordinator.scala@2.7.0
    # L936-945); 0.10.0's answers have no such fields
    protocol = (None, None) if profile == "0.10.0" else ("consumer", "range")
    assert leader_sync.result == follower_sync.result.__class__(Errors.NONE, b"L", *protocol)
    assert follower_sync.result.assignment == b"F" and follower_sync.result.error is Errors.NONE
    assert was_reset(c, scene.leader) and was_reset(c, scene.follower)
    assert liveness(c, third) == third_before            # no parked SyncGroup → not answered, not reset
    assert scene.view.members[third].assignment == b""
    assert "not-a-member" not in scene.view.members


@pytest.mark.parametrize("profile", PROFILES)
def test_sync_in_stable_returns_stored_assignment(profile: str) -> None:
    scene = stable(profile, follower_syncs=False)        # §3.2 Stable: stored assignment, reset heartbeat
    scene.c.advance(1_000)
    r = scene.c.sync_group(G, scene.gen, scene.follower).result
    assert (r.error, r.assignment) == (Errors.NONE, assignment_for(scene.follower))
    assert was_reset(scene.c, scene.follower) and scene.state is ST


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("state", [PR, CR, ST], ids=lambda s: s.value)
@pytest.mark.parametrize("delta", [-1, 1])
def test_sync_generation_mismatch(profile: str, state, delta: int) -> None:
    scene = in_state(profile, state)                     # §3.2 step 3 (before the state switch)
    r = scene.c.sync_group(G, scene.gen + delta, scene.follower).result
    assert r.error is Errors.ILLEGAL_GENERATION and scene.state is state


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("state", [PR, CR, ST], ids=lambda s: s.value)
def test_sync_unknown_member(profile: str, state) -> None:
    scene = in_state(profile, state)                     # §3.2 step 2
    assert scene.c.sync_group(G, scene.gen, "stranger").result.error is Errors.UNKNOWN_MEMBER_ID
    assert scene.state is state


@pytest.mark.parametrize("profile", PROFILES)
def test_sync_absent_group(profile: str) -> None:
    assert coordinator(profile).sync_group(G, 1, "m").result.error is Errors.UNKNOWN_MEMBER_ID   # §3.2


def test_sync_in_empty_group_modern() -> None:
    scene = empty()                                      # §3.9 Empty: (UNKNOWN_MEMBER_ID)
    assert scene.c.sync_group(G, scene.gen, scene.leader).result.error is Errors.UNKNOWN_MEMBER_ID


def test_sync_while_loading_modern() -> None:
    scene = completing("3.9")                            # §3.0: SyncGroup maps LOAD_IN_PROGRESS → RIP (2.0+)
    scene.c.set_loading(G, True)
    assert scene.c.sync_group(G, scene.gen, scene.leader, {}).result.error is Errors.REBALANCE_IN_PROGRESS
    assert scene.state is CR


def test_sync_while_loading_e0_sees_an_absent_group() -> None:
    # §3.0: ≤ 1.1 SyncGroup did not check loading, so a still-loading group was absent → UNKNOWN_MEMBER_ID
    c = coordinator("0.10.0")
    c.set_loading(G, True)
    assert c.sync_group(G, 1, "m").result.error is Errors.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("profile", PROFILES)
def test_sync_after_unload(profile: str) -> None:
    scene = completing(profile)
    gen = scene.gen
    scene.c.unload_group(G)
    assert scene.c.sync_group(G, gen, scene.leader, {}).result.error is Errors.NOT_COORDINATOR


@pytest.mark.parametrize("field", ["protocol_type", "protocol_name"])
def test_sync_protocol_mismatch_modern(field: str) -> None:
    scene = completing("3.9")                            # §3.2 step 4 (SyncGroup v5, KIP-559, 2.5+)
    r = scene.c.sync_group(G, scene.gen, scene.follower, **{field: "other"}).result
    assert r.error is Errors.INCONSISTENT_GROUP_PROTOCOL and scene.state is CR
    ok = scene.c.sync_group(G, scene.gen, scene.follower, protocol_type="consumer", protocol_name="range")
    assert not ok.done


# -- SyncGroup with the store deferred (SPEC.md §5.2) -------------------------------------------------
def deferred(profile: str):
    scene = completing(profile, cfg={"append_mode": "deferred"})
    follower_sync = scene.c.sync_group(G, scene.gen, scene.follower)
    assignments = {m: assignment_for(m) for m in scene.view.members}
    leader_sync = scene.c.sync_group(G, scene.gen, scene.leader, assignments)
    return scene, leader_sync, follower_sync


@pytest.mark.parametrize("profile", PROFILES)
def test_deferred_store_callback_runs_after_the_append(profile: str) -> None:
    scene, leader_sync, follower_sync = deferred(profile)
    assert scene.state is CR and not leader_sync.done and not follower_sync.done
    scene.c.complete_appends()
    assert scene.state is ST
    assert leader_sync.result.assignment == assignment_for(scene.leader)
    assert follower_sync.result.assignment == assignment_for(scene.follower)


@pytest.mark.parametrize("profile", PROFILES)
def test_deferred_store_callback_is_a_noop_after_a_rejoin(profile: str) -> None:
    # §5.2 ordering (a): appended → new member joins → PR (parked SyncGroups get RIP) → callback no-op
    scene, leader_sync, follower_sync = deferred(profile)
    gen = scene.gen
    new_member(scene.c)
    assert leader_sync.result.error is Errors.REBALANCE_IN_PROGRESS
    assert follower_sync.result.error is Errors.REBALANCE_IN_PROGRESS
    scene.c.take_responses()
    scene.c.complete_appends()
    assert scene.state is PR and scene.gen == gen
    assert scene.c.take_responses() == []
    assert leader_sync.completions == 1 and follower_sync.completions == 1
    assert all(m.assignment == b"" for m in scene.view.members.values())


@pytest.mark.parametrize("profile", PROFILES)
def test_deferred_store_callback_is_a_noop_after_unload(profile: str) -> None:
    # §5.2 ordering (c): unload between append and callback → parked SyncGroups NOT_COORDINATOR, then
    # the callback does nothing
    scene, leader_sync, follower_sync = deferred(profile)
    scene.c.unload_group(G)
    assert leader_sync.result.error is Errors.NOT_COORDINATOR
    assert follower_sync.result.error is Errors.NOT_COORDINATOR
    scene.c.take_responses()
    scene.c.complete_appends()
    assert scene.c.take_responses() == [] and scene.c.errors == []


STORE_ERRORS = [  # §3.2 store error mapping [GMM 2.4–3.9]
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_ENOUGH_REPLICAS, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
    (Errors.KAFKA_STORAGE_ERROR, Errors.NOT_COORDINATOR),
    (Errors.REQUEST_TIMED_OUT, Errors.REBALANCE_IN_PROGRESS),
    (Errors.MESSAGE_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.RECORD_LIST_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.INVALID_FETCH_SIZE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.UNKNOWN_SERVER_ERROR, Errors.UNKNOWN_SERVER_ERROR),   # anything else passes through
]
STORE_CASES = [("3.9", a, b) for a, b in STORE_ERRORS] + [
    ("0.10.0", Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
    ("0.10.0", Errors.REQUEST_TIMED_OUT, Errors.REBALANCE_IN_PROGRESS)]


@pytest.mark.parametrize("profile,append_error,sync_error", STORE_CASES, ids=str)
def test_store_error_is_mapped_to_every_parked_sync(profile: str, append_error, sync_error) -> None:
    # §3.2: on error → clear assignments, answer every parked SyncGroup with the mapped error,
    # maybePrepareRebalance (§1.3 CR → PR)
    scene, leader_sync, follower_sync = deferred(profile)
    scene.c.complete_append(append_error)
    assert leader_sync.result.error is sync_error and follower_sync.result.error is sync_error
    assert scene.state is PR
    assert all(m.assignment == b"" for m in scene.view.members.values())


@pytest.mark.parametrize("profile", PROFILES)
def test_deferred_store_callback_of_an_older_generation_is_a_noop(profile: str) -> None:
    # §3.2: the callback acts only if the group is still CompletingRebalance *with the same generation*;
    # here it is CompletingRebalance again, one generation later, when the old append completes
    scene, leader_sync, _ = deferred(profile)
    c, gen = scene.c, scene.gen
    third, _ = new_member(c)
    rejoins = {m: join(c, m) for m in (scene.leader, scene.follower)}
    assert (scene.state, scene.gen) == (CR, gen + 1)
    new_sync = c.sync_group(G, gen + 1, third)
    c.take_responses()
    c.complete_append()                                  # the generation-`gen` assignment
    assert (scene.state, scene.gen) == (CR, gen + 1)
    assert not new_sync.done and c.take_responses() == []
    assert all(m.assignment == b"" for m in scene.view.members.values())
    assert all(f.result.generation_id == gen + 1 for f in rejoins.values())

"""The world drives profile 4.1 (harness/event_loop.py): the Java coordinator's nondeterminism as enabled actions —
batches flushed, failed and committed, answers released by a commit, write timeouts, stale timer events dropped,
choice points re-run with every other pick — with determinism, snapshots and replay as for the other profiles."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from harness.event_loop import Branch
from harness.replay import replay
from harness.scope import Scope
from harness.world import World
from impl.java_gc.coordinator import JavaGroupCoordinator

CALM = Scope(append_mode="deferred", commits=True, leaves=False, group_initial_rebalance_delay_ms=0,
             session_timeout_ms=(6000, 9000, 12000), advance_ms=(1000, 4000))
FAULTS = Scope(append_mode="deferred", faults=True, commits=True, crashes=True, unload=True,
               group_initial_rebalance_delay_ms=0, session_timeout_ms=(6000, 10000), advance_ms=(1000, 5000))
MIX = ("java", "java", "adversarial")


def walk(scope: Scope, seed: int, steps: int = 300, clients: int | tuple[str, ...] = 3) -> World:
    world = World("4.1", scope, clients=clients, seed=seed)
    world.random_walk(steps, random.Random(seed))
    return world


def test_a_4_1_world_runs_the_java_coordinator_and_offers_the_event_loops_actions() -> None:
    world = World("4.1", CALM)
    assert isinstance(world.coord, JavaGroupCoordinator) and world.coordinator_class is JavaGroupCoordinator
    assert world.profile.state_name(world.profile.states[0]) == "Empty"
    kinds: Counter[str] = Counter()
    for seed in range(6):
        kinds.update(s.action.kind for s in walk(CALM, seed).steps)
    assert kinds["FlushBatch"] and kinds["CommitBatch"] and kinds["FireTimer"]
    assert not kinds["CompleteAppend"]      # 4.x writes are flushed and committed apart (batched-log-writes)


def test_sync_append_mode_offers_no_batches() -> None:
    world = walk(Scope(commits=True), 0, 200)
    assert not {"FlushBatch", "CommitBatch", "CompleteAppend"} & {s.action.kind for s in world.steps}


def test_a_heartbeat_answer_waits_for_the_commit_of_an_earlier_write() -> None:
    """R3: a Heartbeat delivered while an earlier write is uncommitted is answered by the CommitBatch step."""
    for seed in range(40):
        world = World("4.1", CALM, seed=seed)
        rng = random.Random(seed)
        held: set[tuple[int, int]] = set()
        for _ in range(300):
            enabled = world.enabled()
            action = enabled[rng.randrange(len(enabled))]
            pending = bool(world.coord.pending_appends())
            world.step(action)
            key = (action.client, action.arg)
            if action.kind == "DeliverRequest" and pending:
                if not any((r.client, r.corr) == key for r in world.answered):
                    held.add((action.client, int(action.arg)))
            if action.kind == "CommitBatch":
                released = {(r.client, r.corr) for r in world.answered if r.api == "Heartbeat"} & held
                if released:
                    return
    pytest.fail("no Heartbeat answer was held behind a write and released by a commit in 40 walks")


def test_write_timeouts_answer_coordinator_not_available_and_stale_events_are_dropped() -> None:
    fired: Counter[tuple[str, bool]] = Counter()
    timeout_answers: set[str] = set()
    for seed in range(6):
        world = World("4.1", CALM, seed=seed)
        rng = random.Random(seed)
        for _ in range(300):
            enabled = world.enabled()
            world.step(enabled[rng.randrange(len(enabled))])
            run = world.coord.take_fired()
            fired.update((kind, live) for _key, kind, live in run)
            if any(kind == "write-timeout" and live for _key, kind, live in run):
                timeout_answers |= {r.error for r in world.answered}
    assert fired[("write-timeout", True)] and fired[("heartbeat", False)]   # R2, and R1's dropped events
    assert timeout_answers == {"COORDINATOR_NOT_AVAILABLE"}


def test_a_failed_flush_answers_the_mapped_error() -> None:
    errors: set[str] = set()
    for seed in range(10):
        world = World("4.1", FAULTS, clients=MIX, seed=seed)
        rng = random.Random(seed)
        for _ in range(300):
            enabled = world.enabled()
            action = enabled[rng.randrange(len(enabled))]
            world.step(action)
            if action.kind == "FlushBatch" and action.arg != "NONE":
                errors |= {r.error for r in world.answered}
    # NOT_LEADER_OR_FOLLOWER → NOT_COORDINATOR, NOT_ENOUGH_REPLICAS → COORDINATOR_NOT_AVAILABLE (R8)
    assert errors <= {"NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"} and errors


def _first_branch(scope: Scope, seeds: range) -> tuple[World, Branch]:
    for seed in seeds:
        world = World("4.1", scope, seed=seed)
        rng = random.Random(seed)
        for _ in range(300):
            enabled = world.enabled()
            world.step(enabled[rng.randrange(len(enabled))])
            if world.branch is not None:
                return world, world.branch
    raise AssertionError("no walk met a choice point with alternatives")


def test_choose_reruns_the_step_with_another_pick() -> None:
    world, branch = _first_branch(CALM, range(20))
    step = world.steps[-1]
    chooses = [a for a in world.enabled() if a.kind == "Choose"]
    assert [a.arg for a in chooses] == branch.alternatives() and chooses
    before = world.snapshot()
    world.step(chooses[0])
    redone = world.steps[-1]
    assert redone.action == chooses[0] and redone.time_ms == step.time_ms
    assert redone.digest != step.digest          # another pick: another world than the default step left
    # the tree of alternatives: from a Choose only later choice points are offered, so it never ping-pongs
    assert all(a.kind != "Choose" or str(a.arg).count(".") > 0 for a in world.enabled())
    world.restore(before)
    assert world.snapshot() == before and world.branch == branch
    other = next(a for a in world.enabled() if a.kind != "Choose")
    world.step(other)
    assert world.branch is None or world.branch.action == (other.kind, other.client, other.arg)   # a new one


def test_branch_alternatives_form_a_tree() -> None:
    assert Branch((), ("FireTimer", -1, 1), (), (2, 3)).alternatives() == ["1", "0.1", "0.2"]
    assert Branch((), ("FireTimer", -1, 1), (1,), (2, 3)).alternatives() == ["1.1", "1.2"]
    assert Branch((), ("FireTimer", -1, 1), (0, 2), (2, 3)).alternatives() == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_seed_same_trace_and_restore_replays_identically(seed: int) -> None:
    a, b = walk(FAULTS, seed, clients=MIX), walk(FAULTS, seed, clients=MIX)
    assert a.trace().to_json() == b.trace().to_json()
    world = World("4.1", FAULTS, clients=MIX, seed=seed)
    rng = random.Random(seed)
    world.random_walk(120, rng)
    mark = world.snapshot()
    tail = world.random_walk(120, random.Random(seed + 100))
    end = world.snapshot()
    world.restore(mark)
    for action in tail:
        world.step(action)
    assert world.snapshot() == end


def test_a_4_1_trace_with_choices_replays() -> None:
    world, _branch = _first_branch(CALM, range(20))
    world.step(next(a for a in world.enabled() if a.kind == "Choose"))
    world.random_walk(30, random.Random(7))
    replay(world.trace())


def test_other_profiles_keep_their_world_state_shape() -> None:
    world = World("3.9", CALM)
    assert len(world.to_state()) == 4 and world.branch is None
    assert not any(a.kind in ("FlushBatch", "CommitBatch", "Choose") for a in world.enabled())


def test_the_world_reaches_r9_a_sync_in_stable_that_leaves_the_session_timer() -> None:
    """R9 (stable-sync-keeps-session-timer): the world's own clients send a SyncGroup that finds the group Stable;
    it is answered NONE and the member's session timer keeps its deadline (3.9 would reschedule it). Reached on
    walk seed 9 (3 Java consumers, the calm scope), 3 of 60 calm walks of seeds 0-29."""
    from core.types import GroupState
    world = World("4.1", CALM, seed=9)
    rng = random.Random(9)
    for _ in range(300):
        enabled = world.enabled()
        action = enabled[rng.randrange(len(enabled))]
        req = world.net.requests.get((action.client, int(action.arg))) if action.kind == "DeliverRequest" else None
        view = world.coord.describe("g")
        timers = {t.key: (t.seq, t.deadline_ms) for t in world.coord.timers() if t.status == "scheduled"}
        world.step(action)
        if req is None or req.api != "SyncGroup" or view is None or view.state is not GroupState.STABLE:
            continue
        answer = [r for r in world.answered if (r.client, r.corr) == (action.client, action.arg)]
        key = f"heartbeat-g-{req.member_id}"
        after = {t.key: (t.seq, t.deadline_ms) for t in world.coord.timers() if t.status == "scheduled"}
        if answer and answer[0].error == "NONE" and key in timers and after.get(key) == timers[key]:
            return
    pytest.fail("walk seed 9 no longer sends a SyncGroup in Stable")

"""The concrete catalog on profile 4.1: the observation adapter of the Java runtime (properties/observation_4x.py) on
hand-built worlds, the property decisions by release facts on both sides, the catalog green on 4.1 walks, the finding
it found and the seeded mutant only it kills."""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from core.trace import Step, Trace
from harness.excuses import unexcused
from harness.world import World
from kgc.gate import RELOAD_WALKS, STATIC_WALKS, walk, walk_configs
from kgc.runs import CheckedRun, actions_of, replay_checked, world_for
from properties.checker_side import REFINES
from properties.concrete_state import STATIC_REVERT_PROTOCOL, parked_unanswered
from properties.observation import ParkedObs, observe, observe_after
from properties.runtime_4x import rules_for

ROOT = Path(__file__).resolve().parent.parent


def _calm() -> World:
    scope = next(s for name, s, _ in walk_configs("4.1") if name == "calm")
    return World("4.1", scope, clients=3, seed=0, record=True)


def _do(world: World, kind: str, client: int | None = None) -> Step:
    """Step the first enabled action of ``kind`` (of ``client``)."""
    for a in world.enabled():
        if a.kind == kind and (client is None or a.client == client):
            world.step(a)
            return world.steps[-1]
    raise AssertionError(f"no enabled {kind} for client {client}: {[str(a) for a in world.enabled()]}")


def _joined() -> World:
    """c0 joins (MEMBER_ID_REQUIRED, then again with its id): a member of an Empty→PreparingRebalance group, its
    JoinGroup parked, its session timer armed with the new-member timeout."""
    world = _calm()
    _do(world, "JoinGroup", 0)
    _do(world, "DeliverRequest", 0)
    _do(world, "DeliverResponse", 0)
    _do(world, "JoinGroup", 0)
    _do(world, "DeliverRequest", 0)
    return world


def _syncing() -> World:
    """The initial join timer completes the join (generation 1, c0 leader), c0's SyncGroup writes the assignment."""
    world = _joined()
    _do(world, "FireTimer")
    _do(world, "DeliverResponse", 0)
    _do(world, "SyncGroup", 0)
    _do(world, "DeliverRequest", 0)
    return world


def test_a_members_session_timer_is_its_delayed_heartbeat_and_its_join_future_is_parked() -> None:
    world = _joined()
    obs = observe(world, world.steps[-1])
    assert obs.group is not None and obs.group.member_ids == {"c0-1"}
    beats = [op for op in obs.ops if op.kind == "DelayedHeartbeat"]
    # a new member's timer: the new-member join timeout (5 minutes, GMM@4.1.1:6424-6428) from time 0
    assert [(op.member_id, op.key, op.deadline_ms, op.heartbeat_deadline_ms) for op in beats] == \
        [("c0-1", "heartbeat-g-c0-1", 300_000, 300_000)]
    assert [op.kind for op in obs.ops if op.kind != "DelayedHeartbeat"] == ["InitialDelayedJoin"]
    assert [(p.key, p.api, p.member_id, p.in_table, p.done) for p in obs.parked] == [
        ((0, 2), "JoinGroup", "c0-1", True, False)]
    assert obs.held == ()


def test_an_uncommitted_assignment_write_is_a_pending_append_and_a_held_answer_waits_behind_it() -> None:
    world = _syncing()
    obs = observe(world, world.steps[-1])
    assert [(a.kind, a.generation_id, a.incarnation) for a in obs.appends] == [("assignment", 1, 1)]
    assert [(p.key, p.api) for p in obs.parked] == [((0, 3), "SyncGroup")]
    _do(world, "Heartbeat", 0)
    step = _do(world, "DeliverRequest", 0)
    assert step.responses == ()   # R3: the Heartbeat's answer waits for the assignment write's commit
    obs = observe(world, step)
    assert obs.held == ((0, 4),)
    assert obs.in_write == ((0, 3), (0, 4))
    assert (0, 4) not in obs.parked_keys
    _do(world, "FlushBatch")
    step = _do(world, "CommitBatch")
    assert sorted((r.api, r.error) for r in step.responses) == [("Heartbeat", "NONE"), ("SyncGroup", "NONE")]
    obs = observe(world, step)
    assert obs.appends == () and obs.held == () and obs.parked == ()


def test_transitions_and_the_generation_are_read_from_the_step() -> None:
    world = _joined()
    before = observe(world, world.steps[-1])
    _do(world, "FireTimer")
    after = observe_after(before, world, world.steps[-1])
    assert after.transitions == (("g", "PreparingRebalance", "CompletingRebalance"),)
    assert [(type(e).__name__, getattr(e, "generation_id", None)) for e in after.events][:1] == [
        ("GenerationStarted", 1)]
    assert any(type(e).__name__ == "HeartbeatScheduled" and e.member_id == "c0-1" for e in after.events)


def _parked(done: bool, completions: int) -> ParkedObs:
    return ParkedObs((0, 1), "JoinGroup", 1, "c0-1", True, completions, done)


@pytest.mark.parametrize("profile, completions, violated", [
    ("3.9", 1, True),    # the Scala coordinator answers a parked future only by taking it off the member
    ("4.1", 1, False),   # write-timeout / batched-log-writes: its write's end answers it, the member keeps it
    ("4.1", 2, True),    # but never twice
])
def test_a_parked_future_answered_by_its_write_is_allowed_only_with_the_fact(profile: str, completions: int,
                                                                             violated: bool) -> None:
    obs = observe(_calm()) if profile == "4.1" else None
    base = obs if obs is not None else observe(World("3.9", _calm().scope, clients=3, seed=0, record=True))
    seen = dataclasses.replace(base, parked=(_parked(True, completions),))
    assert bool(parked_unanswered(seen)) is violated


def _catalog_walk(name: str, clients: object, seed: int, steps: int, mutant: str | None = None) -> CheckedRun:
    scope = next(s for n, s, c in walk_configs("4.1") if n == name and c == clients)
    run = CheckedRun(World("4.1", scope, clients=clients, seed=seed, record=True, mutant=mutant))
    walk(run, random.Random(seed), steps, hold_partition=name in RELOAD_WALKS or name == "static-partition",
         hold_static=name in STATIC_WALKS)
    return run


@pytest.mark.parametrize("name, clients, seed", [
    ("calm", 3, 2), ("faults", ("java", "java", "adversarial"), 1), ("static", ("static", "static-adversarial",
                                                                                  "static"), 0)])
def test_the_catalog_is_green_on_4_1_walks(name: str, clients: object, seed: int) -> None:
    run = _catalog_walk(name, clients, seed, 300)
    assert run.checker.checked, "the catalog judges 4.1"
    assert [v for v in run.violations if v.property != REFINES] == []
    assert len(run.world.steps) == 300


def test_heartbeat_keeps_the_session_timer_is_killed_by_the_catalog_alone() -> None:
    """The seeded mutant leaves the keyed timers' shape and the model's slots as they are: no runtime rule and not
    the state refinement see it; the catalog's heartbeat table (SPEC.md §3.3) does."""
    run = _catalog_walk("calm", 3, 0, 400, mutant="heartbeat-keeps-the-session-timer")
    found = {v.property for v in run.violations}
    assert "heartbeat-answer-follows-the-state-table" in found
    rules = {r.name for r in rules_for("4.1")}
    assert not found & (rules | {REFINES})
    assert _catalog_walk("calm", 3, 0, 400).violations == []


def test_4_1_failed_static_store_reverts_protocols_after_a_rebalance() -> None:
    """Replays the recorded counterexample (the gate's static-partition walk seed 6, shrunk): a static restart in
    Stable with the assignor list roundrobin,range stores its new id in an open batch; a LeaveGroup of the other member
    completes a rebalance that selects roundrobin; the batch fails and the callback puts the old member back with its
    old list (range): CompletingRebalance with a protocol its member does not support. Silent while the finding is
    excused, I7's property once not."""
    path = ROOT / "reports" / "findings" / STATIC_REVERT_PROTOCOL / "4.1" / "counterexample.json"
    trace = Trace.loads(path.read_text(encoding="utf-8"))

    def replay() -> CheckedRun:
        run = CheckedRun(world_for(dataclasses.replace(trace, steps=()), record=True), refine=False)
        for action in actions_of(trace):
            run.step(action)
        return run
    assert [v.property for v in replay().violations] == []
    with unexcused([STATIC_REVERT_PROTOCOL]):
        run = replay()
    found = [v for v in run.violations if v.property == "stable-or-completing-group-has-members-and-a-common-protocol"]
    assert found and found[0].step == len(trace.steps) - 1
    assert found[0].witness["protocol"] == "roundrobin" and found[0].witness["common_protocols"] == ["range"]
    assert trace.steps[-1].action.kind == "FlushBatch" and trace.steps[-1].action.arg != "NONE"


def test_a_choose_is_judged_against_the_state_before_the_step_it_runs_again() -> None:
    """Walk calm 3 seed 2 reaches a join completion with a leader choice (R11) and then a Choose that runs it again:
    the JoinGroups answered a second time were parked before that step, not stray answers."""
    run = _catalog_walk("calm", 3, 2, 360)
    chooses = [s.index for s in run.world.steps if s.action.kind == "Choose"]
    assert chooses, "the walk takes a Choose"
    assert [v for v in run.violations if v.property == "each-request-is-answered-at-most-once"] == []


@pytest.mark.parametrize("profile, kind, arg, error, allowed", [
    ("4.1", "FireTimer", 99, "COORDINATOR_NOT_AVAILABLE", True),         # write-timeout (R2)
    ("4.1", "FlushBatch", "NOT_ENOUGH_REPLICAS", "NOT_COORDINATOR", True),   # batched-log-writes (R5)
    ("4.1", "FlushBatch", "NONE", "NOT_COORDINATOR", False),              # a flush that succeeded answers no error
    ("4.1", "FireTimer", 99, "NONE", False),                              # a write's end answers with an error
    ("3.9", "FireTimer", 99, "COORDINATOR_NOT_AVAILABLE", False),        # no write events on the Scala coordinator
])
def test_a_parked_future_answered_by_its_write_is_excused_by_the_facts_alone(profile: str, kind: str, arg: object,
                                                                            error: str, allowed: bool) -> None:
    from core.actions import Action
    from core.responses import Response
    from properties.concrete_requests import at_most_once, timed_out_on_member
    world = _joined()
    after = dataclasses.replace(observe(world, world.steps[-1]), profile=profile,
                                parked=(ParkedObs((0, 2), "JoinGroup", 1, "c0-1", True, 1, True),))
    step = dataclasses.replace(world.steps[-1], action=Action(kind, -1, arg),
                               responses=(Response("JoinGroup", 0, 2, error),))
    before = dataclasses.replace(after, parked=(ParkedObs((0, 2), "JoinGroup", 1, "c0-1", True, 0, False),))
    assert timed_out_on_member(after, step, (0, 2)) is allowed
    assert (at_most_once(before, step, after) is None) is allowed


def test_an_unload_after_a_failed_batch_answered_the_join_owes_it_nothing() -> None:
    """`kgc check --profile 4.1 --seed 8` (walk static-partition seed 800031): a failed flush answers the open batch's
    LeaveGroup and JoinGroup NOT_COORDINATOR (R2), the member's join future stays where it was, then the partition is
    unloaded. A Java future completes once, so the unload answers nothing more — the catalog's unload rule skips a
    parked future its write answered already (fact write-timeout), and fails without that skip."""
    path = Path(__file__).parent / "data" / "4-1-unload-after-a-failed-batch-answered-the-join.json"
    trace = Trace.loads(path.read_text(encoding="utf-8"), source=str(path))
    prop = "unload-answers-every-parked-request-not-coordinator"
    assert trace.violation is not None and trace.violation.property == prop   # what the search found before the skip
    assert replay_checked(trace, actions_of(trace), prop) is None
    world = world_for(dataclasses.replace(trace, steps=()), record=True)
    for action in actions_of(trace):
        world.step(action)
    failed, unloaded = world.steps[-2], world.steps[-1]
    assert failed.action.kind != "UnloadGroup" and unloaded.action.kind == "UnloadGroup"
    assert {r.api: r.error for r in failed.responses}.get("JoinGroup") == "NOT_COORDINATOR"
    assert not any(r.api == "JoinGroup" for r in unloaded.responses)

"""The world: enabled() rules, a scripted rebalance on each profile, determinism, snapshots."""
from __future__ import annotations

import random

import pytest

from core.actions import Action
from harness.scope import Scope
from harness.world import World
from impl import UnknownProfileError

PROFILES = ("3.9", "0.10.0")
#: a scope that switches every family of environment actions on
EVERYTHING = Scope(append_mode="deferred", faults=True, crashes=True, unload=True, commits=True,
                   advance_ms=(1000, 7000), group_initial_rebalance_delay_ms=0)
#: the scheduler policy of the scripted run: first enabled kind in this order, never a leave, a heartbeat
#: or a rejoin from STABLE
SCRIPT_ORDER = ("JoinGroup", "SyncGroup", "DeliverRequest", "DeliverResponse", "FireTimer", "AdvanceToNextDeadline")


def scripted_run(world: World, limit: int = 200) -> None:
    for _ in range(limit):
        enabled = world.enabled()
        choice = next((a for kind in SCRIPT_ORDER for a in enabled if a.kind == kind
                       and not (kind == "JoinGroup" and world.clients[a.client].state == "STABLE")), None)
        if choice is None or all_stable(world):
            return
        world.step(choice)


def all_stable(world: World) -> bool:
    obs = world.observe()
    return obs["group_state"] == "Stable" and all(c.state == "STABLE" for c in world.clients) and \
        not world.net.requests and not world.net.responses


@pytest.mark.parametrize("profile", PROFILES)
def test_scripted_run_reaches_stable_with_three_members(profile: str) -> None:
    world = World(profile, clients=3)
    scripted_run(world)
    obs = world.observe()
    assert obs["group_state"] == "Stable" and len(obs["members"]) == 3
    assert [c.state for c in world.clients] == ["STABLE"] * 3
    assert {c.member_id for c in world.clients} == set(obs["members"])
    assert {c.generation_id for c in world.clients} == {obs["generation_id"]}
    # the leader's round-robin assignment reached everyone: p0..p5 split over the three members
    parts = sorted(p for c in world.clients for p in c.assignment.decode().split(","))
    assert parts == [f"p{i}" for i in range(6)]


def test_3_9_join_starts_with_member_id_required_and_initial_delay() -> None:
    world = World("3.9", clients=1)
    world.step(Action("JoinGroup", 0))
    world.step(Action("DeliverRequest", 0, 1))
    assert world.steps[-1].response_lines == ("c0 JoinGroup#1 MEMBER_ID_REQUIRED member=c0-1",)
    for action in (Action("DeliverResponse", 0, 1), Action("JoinGroup", 0), Action("DeliverRequest", 0, 2)):
        world.step(action)
    assert world.observe()["group_state"] == "PreparingRebalance"
    assert world.steps[-1].response_lines == ()          # parked until the initial delay ends
    world.step(Action("AdvanceToNextDeadline"))
    assert world.now_ms == 3001 and [a.kind for a in world.enabled()].count("FireTimer") == 1


def test_enabled_is_sorted_and_deterministic() -> None:
    a, b = World("3.9", EVERYTHING, seed=5), World("3.9", EVERYTHING, seed=5)
    rng = random.Random(5)
    for _ in range(150):
        enabled = a.enabled()
        assert enabled == b.enabled()
        assert list(enabled) == sorted(enabled, key=lambda x: (x.kind, x.client, x.arg))
        assert len(set(enabled)) == len(enabled)
        action = rng.choice(enabled)
        a.step(action)
        b.step(action)


def test_bounded_lateness_a_due_timer_blocks_the_clock() -> None:
    world = World("3.9", clients=1)
    for action in (Action("JoinGroup", 0), Action("DeliverRequest", 0, 1), Action("DeliverResponse", 0, 1),
                   Action("JoinGroup", 0), Action("DeliverRequest", 0, 2), Action("AdvanceClock", -1, 1000)):
        world.step(action)
    world.step(Action("AdvanceClock", -1, 1000))
    world.step(Action("AdvanceClock", -1, 1000))
    world.step(Action("AdvanceClock", -1, 1000))           # now 4000 > the initial delay's deadline 3000
    kinds = {a.kind for a in world.enabled()}
    assert "FireTimer" in kinds and not kinds & {"AdvanceClock", "AdvanceToNextDeadline"}
    with pytest.raises(ValueError, match="not enabled"):
        world.step(Action("AdvanceClock", -1, 1000))


def test_max_time_bounds_the_clock() -> None:
    world = World("3.9", Scope(max_time_ms=1500), clients=1)
    world.step(Action("AdvanceClock", -1, 1000))
    assert not any(a.kind.startswith("Advance") for a in world.enabled())


def test_deferred_append_and_faults() -> None:
    world = World("3.9", Scope(append_mode="deferred", faults=True, group_initial_rebalance_delay_ms=0), clients=1)
    for action in (Action("JoinGroup", 0), Action("DeliverRequest", 0, 1), Action("DeliverResponse", 0, 1),
                   Action("JoinGroup", 0), Action("DeliverRequest", 0, 2)):
        world.step(action)
    assert world.steps[-1].response_lines[0].startswith("c0 JoinGroup#2 NONE gen=1")   # a 0 ms delay runs at once
    world.step(Action("DeliverResponse", 0, 2))
    world.step(Action("SyncGroup", 0))
    world.step(Action("DeliverRequest", 0, 3))
    appends = [a.arg for a in world.enabled() if a.kind == "CompleteAppend"]
    assert appends == ["NONE", "NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"]
    world.step(Action("CompleteAppend", -1, "REQUEST_TIMED_OUT"))
    assert world.steps[-1].response_lines == ("c0 SyncGroup#3 REBALANCE_IN_PROGRESS",)


def test_request_timeout_of_a_parked_join_leaves_a_zombie() -> None:
    world = World("3.9", Scope(faults=True), clients=2)
    for action in (Action("JoinGroup", 0), Action("DeliverRequest", 0, 1), Action("DeliverResponse", 0, 1),
                   Action("JoinGroup", 0), Action("DeliverRequest", 0, 2)):
        world.step(action)
    assert Action("DropResponse", 0, 2) in world.enabled()   # the JoinGroup is parked: time it out
    world.step(Action("DropResponse", 0, 2))
    assert world.clients[0].state == "UNJOINED" and Action("JoinGroup", 0) in world.enabled()
    world.step(Action("JoinGroup", 0))
    world.step(Action("DeliverRequest", 0, 3))
    world.step(Action("AdvanceToNextDeadline"))
    world.step(next(a for a in world.enabled() if a.kind == "FireTimer"))
    # SPEC.md §3.1: the second JoinGroup overwrote the parked one, only corr 3 is answered
    assert [r.split()[1] for r in world.steps[-1].response_lines] == ["JoinGroup#3"]


def test_crash_discards_responses_and_restart_rejoins_as_new() -> None:
    world = World("3.9", Scope(crashes=True), clients=1)
    world.step(Action("JoinGroup", 0))
    world.step(Action("Crash", 0))
    world.step(Action("DeliverRequest", 0, 1))             # the request was already on the wire
    world.step(Action("DeliverResponse", 0, 1))
    assert world.clients[0].state == "CRASHED" and Action("Restart", 0) in world.enabled()
    world.step(Action("Restart", 0))
    assert world.clients[0].state == "UNJOINED" and world.clients[0].member_id == ""


def heartbeat_round_trip(world: World) -> str:
    world.step(Action("Heartbeat", 0))
    corr = world.clients[0].next_corr - 1
    world.step(Action("DeliverRequest", 0, corr))
    (response,) = world.steps[-1].response_lines
    world.step(Action("DeliverResponse", 0, corr))
    return response


def test_unload_loading_window_and_load() -> None:
    world = World("3.9", Scope(unload=True), clients=1)
    scripted_run(world)
    world.step(Action("UnloadGroup"))
    assert world.observe()["group_state"] == "-" and Action("LoadGroup") in world.enabled()
    assert heartbeat_round_trip(world).endswith("NOT_COORDINATOR")
    world.step(Action("LoadGroup"))                   # the loading window opens
    assert world.partition == "LOADING" and Action("LoadGroup") in world.enabled()
    assert heartbeat_round_trip(world).endswith("Heartbeat#5 NONE")   # LOAD_IN_PROGRESS → NONE (SPEC.md §3.0)
    world.step(Action("LoadGroup"))
    assert world.partition == "LOADED" and world.observe()["group_state"] == "Stable"
    assert Action("UnloadGroup") in world.enabled()


def test_adversarial_clients_run() -> None:
    for profile in PROFILES:
        world = World(profile, EVERYTHING, clients=("java", "adversarial", "java"), seed=3, record=False)
        assert len(world.random_walk(2000)) == 2000
        assert {a.arg for a in world.enabled() if a.client == 1 and a.kind == "Heartbeat"} <= {0, 1, 2, 3}


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(UnknownProfileError, match="known profiles: 0.10.0, 2.4.1, 2.7.0, 3.9"):
        World("9.9")
    with pytest.raises(ValueError, match="unknown client kind"):
        World(clients=("java", "python"))
    with pytest.raises(ValueError, match="unknown mutant 'x'"):
        World(mutant="x")
    with pytest.raises(ValueError, match="has 2 entries but the world has 1"):
        World(scope=Scope(session_timeout_ms=(6000, 7000)), clients=1)
    with pytest.raises(ValueError, match="append_mode"):
        Scope(append_mode="async")


def test_scope_overrides_reach_clients_and_coordinator() -> None:
    world = World("3.9", Scope(session_timeout_ms=(7000,), group_max_size=2), clients=2)
    assert [(c.session_timeout_ms, c.rebalance_timeout_ms) for c in world.configs] == [(7000, 7000), (10000, 10000)]
    other = World("3.9", Scope(rebalance_timeout_ms=(0, 9000)), clients=2)
    assert [c.rebalance_timeout_ms for c in other.configs] == [0, 9000]
    assert world.coord.config.group_max_size == 2


# --- determinism and snapshots ----------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES)
def test_same_seed_gives_byte_identical_traces(profile: str) -> None:
    dumps = []
    for _ in range(2):
        world = World(profile, EVERYTHING, seed=11)
        world.random_walk(400)
        dumps.append(world.trace("t").dumps())
    assert dumps[0] == dumps[1]
    other = World(profile, EVERYTHING, seed=12)
    other.random_walk(400)
    assert other.trace("t").dumps() != dumps[0]


def test_equal_states_reached_in_two_orders_give_equal_snapshots() -> None:
    a, b = World("3.9"), World("3.9")
    for first, second in ((a, (0, 1)), (b, (1, 0))):
        for c in second:
            first.step(Action("JoinGroup", c))
    assert a.snapshot() == b.snapshot()
    a.step(Action("DeliverRequest", 0, 1))
    assert a.snapshot() != b.snapshot()


def test_restore_then_snapshot_is_identity() -> None:
    world = World("3.9", EVERYTHING, seed=2)
    world.random_walk(300)
    data = world.snapshot()
    world.restore(data)
    assert world.snapshot() == data
    fresh = World("3.9", EVERYTHING, seed=99)
    fresh.restore(data)
    assert fresh.snapshot() == data and fresh.enabled() == world.enabled()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_restore_and_replay_actions_give_identical_snapshots(profile: str, seed: int) -> None:
    scope = EVERYTHING if seed % 2 else Scope(commits=True, timed=seed == 2)
    world = World(profile, scope, clients=("java", "java", "adversarial") if seed == 3 else 3, seed=seed,
                  record=False)
    rng = random.Random(seed)
    for _ in range(5):
        world.random_walk(rng.randrange(1, 120), rng)
        saved = world.snapshot()
        actions, original = [], []
        for _ in range(30):                   # the original run, never restored
            if not world.enabled():
                break
            actions.append(rng.choice(world.enabled()))
            world.step(actions[-1])
            original.append(world.snapshot())
        for _ in range(2):                    # restored twice: the same actions give the same states
            world.restore(saved)
            replayed = []
            for action in actions:
                assert action in world.enabled()
                world.step(action)
                replayed.append(world.snapshot())
            assert replayed == original


def test_record_false_keeps_no_steps() -> None:
    world = World("3.9", record=False)
    world.random_walk(50)
    assert world.steps == [] and world.trace().steps == ()

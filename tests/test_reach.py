"""The situations bench/reach.py counts (explore/reach.py), each on hand-made runs: the step that enters it is counted,
the steps around it and the look-alikes are not (the counts themselves are figures, bench/results/reach-*.md)."""
from __future__ import annotations

from core.actions import Action
from explore.reach import (AT_MAX_SIZE, FAILED_CURRENT_STORE, RESTART_COMPLETING, RESTART_STABLE, RESTART_THEN_MOVE,
                           STABLE_RELOAD, STABLE_STATIC, Reach, track)
from harness.abstraction import abstract
from harness.scenarios import Driver
from harness.scope import Scope
from harness.world import World

DEFERRED = Scope(append_mode="deferred", faults=True, crashes=True, unload=True, group_initial_rebalance_delay_ms=0)
#: a lone consumer forms a group: join, sync, the leader's record stored
FORM = (("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"), ("request", 0, "SyncGroup"))
#: ... a dynamic 2.x+ consumer: its first JoinGroup only gets a member id (KIP-394)
FORM_DYNAMIC = (("member_id", 0),) + FORM
RESTART = (("do", Action("Crash", 0, 0)), ("do", Action("Restart", 0, 0)), ("request", 0, "JoinGroup"))


def run(profile: str, clients: tuple[str, ...], script: tuple[tuple[object, ...], ...], scope: Scope = DEFERRED,
        reach: Reach | None = None) -> tuple[list[set[str]], Reach]:
    """``script`` on a fresh world (Driver instructions, ("do", action) for a world action); what each step entered."""
    world = World(profile, scope, clients=clients, seed=0, record=True)
    reach = reach or Reach()
    per_step: list[set[str]] = []

    def act(action: Action) -> None:
        before = abstract(world.coord, world.group_id)
        known = set(reach.reached)
        world.step(action)
        track(reach, world, before, action)
        per_step.append(reach.reached - known)
    driver = Driver(world)
    driver.act = act   # type: ignore[method-assign]
    for instr in script:
        if instr[0] == "do":
            act(instr[1])   # type: ignore[arg-type]
        else:
            driver.run(instr)   # type: ignore[arg-type]
    return per_step, reach


def entered(per_step: list[set[str]]) -> list[str]:
    return [name for got in per_step for name in sorted(got)]


def test_a_static_group_that_becomes_stable_is_counted_once_and_a_dynamic_one_not() -> None:
    steps, reach = run("3.9", ("static",), FORM + (("do", Action("CompleteAppend", -1, "NONE")),))
    assert entered(steps) == [STABLE_STATIC] and steps[-1] == {STABLE_STATIC}
    steps, _ = run("3.9", ("java",), FORM_DYNAMIC + (("do", Action("CompleteAppend", -1, "NONE")),))
    assert entered(steps) == []


def test_a_failed_store_counts_only_for_the_current_generation() -> None:
    steps, _ = run("2.4.1", ("java",), FORM_DYNAMIC + (("do", Action("CompleteAppend", -1, "NOT_LEADER_OR_FOLLOWER")),))
    assert steps[-1] == {FAILED_CURRENT_STORE}
    # the record of a generation the group left (a second consumer's join rebalanced it first): not the current one's
    stale = FORM_DYNAMIC + (("member_id", 1), ("request", 1, "JoinGroup"),
                            ("do", Action("CompleteAppend", -1, "NOT_LEADER_OR_FOLLOWER")))
    steps, _ = run("2.4.1", ("java", "java"), stale)
    assert FAILED_CURRENT_STORE not in set(entered(steps))


def test_a_reload_counts_when_the_group_comes_back_stable() -> None:
    stable = FORM_DYNAMIC + (("do", Action("CompleteAppend", -1, "NONE")),)
    load = Action("LoadGroup", -1, 0)
    moves = (("do", Action("UnloadGroup", -1, 0)), ("do", load), ("do", load))
    steps, _ = run("2.7.0", ("java",), stable + moves)
    assert entered(steps) == [STABLE_RELOAD] and steps[-1] == {STABLE_RELOAD}
    steps, _ = run("2.7.0", ("java",), FORM_DYNAMIC + moves)   # nothing stored yet: it does not come back Stable
    assert entered(steps) == []


def test_static_restarts_count_by_the_state_they_happen_in_and_a_later_partition_move_too() -> None:
    stable = FORM + (("do", Action("CompleteAppend", -1, "NONE")),)
    steps, reach = run("3.9", ("static",), stable + RESTART)
    assert steps[-1] == {RESTART_STABLE} and reach.restarted
    steps, _ = run("3.9", ("static",), FORM + RESTART)             # before the record: CompletingRebalance
    assert steps[-1] == {RESTART_COMPLETING}
    steps, _ = run("3.9", ("static",), stable + RESTART + (("do", Action("UnloadGroup", -1, 0)),))
    assert steps[-1] == {RESTART_THEN_MOVE}
    steps, _ = run("3.9", ("static",), stable + (("do", Action("UnloadGroup", -1, 0)),))   # no restart before it
    assert RESTART_THEN_MOVE not in set(entered(steps))
    dynamic = FORM_DYNAMIC + (("do", Action("CompleteAppend", -1, "NONE")),)
    steps, _ = run("3.9", ("java",), dynamic + RESTART)            # a dynamic consumer's restart replaces nothing
    assert not {RESTART_STABLE, RESTART_COMPLETING} & set(entered(steps))


def test_a_fork_carries_the_restart_but_counts_only_its_own_steps() -> None:
    stable = FORM + (("do", Action("CompleteAppend", -1, "NONE")),)
    _, parent = run("3.9", ("static",), stable + RESTART)
    child = parent.fork()
    assert child.restarted and not child.reached


def test_a_join_refused_at_group_max_size_is_counted() -> None:
    scope = Scope(group_max_size=1, group_initial_rebalance_delay_ms=0)
    # 2.4.1 (§3.1 J4, 2.2–2.5): a second consumer's first JoinGroup ("" member id) finds one member, the maximum
    script = (("member_id", 0), ("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"), ("member_id", 1))
    steps, _ = run("2.4.1", ("java", "java"), script, scope)
    assert entered(steps) == [AT_MAX_SIZE] and steps[-2] == {AT_MAX_SIZE}
    steps, _ = run("2.4.1", ("java", "java"), script, Scope(group_initial_rebalance_delay_ms=0))
    assert AT_MAX_SIZE not in set(entered(steps))

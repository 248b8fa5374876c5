"""The static scope's coverage map (explore/static_coverage.py), the gate's static walks reaching Stable, and the
subscription changes the churn scope offers (JoinGroup/changed) — what issue 27 item 5 (b) and (c) ask the gate to
reach."""
from __future__ import annotations

import random

import pytest

from core.actions import Action
from explore.runs import parse_label
from explore.static_coverage import STATIC_INSTANCES, static_map, static_not_offered
from harness.clients import JavaConsumer
from harness.external import WireRequest
from harness.puppets import KINDS, moves
from harness.refinement import RefinementChecker
from harness.scenarios import Driver
from harness.world import World
from kgc.gate import STATIC_WALKS, WALK_SCOPES, _disrupts, _is_stable, walk
from kgc.runs import CheckedRun
from model.state import AbstractAction, Slot, State

STATIC = STATIC_WALKS["static"][0]


@pytest.mark.parametrize("profile", ["2.4.1", "3.9"])
def test_the_static_map_is_the_static_worlds(profile: str) -> None:
    smap = static_map(profile, STATIC)
    kinds = {parse_label(e[1])[0] for e in smap.reachable_edges}
    # every JoinGroup carries an instance id: no dynamic join; restarts, fencing's answers and the persist path are in
    assert not kinds & {"JoinGroup/new", "JoinGroup/new-pending"} and {"JoinGroup/static-new",
                                                                       "JoinGroup/static-rejoin"} <= kinds
    assert all(sum(s.static for s in state.slots) <= STATIC_INSTANCES for state in smap.reachable_states)
    assert all(len(state.appends) <= 1 for state in smap.reachable_states)
    assert not smap.reachable_edges & set(smap.excluded)
    if profile == "3.9":   # the persist path: a static store completes in Stable
        assert any(e[1] == "CompleteAppend[error]" and e[0].appends == ("static",) and e[0].group == "Stable"
                   for e in smap.reachable_edges)


def test_a_third_instance_and_a_dynamic_join_are_not_offered() -> None:
    two = State("Stable", slots=(Slot(2, leader=True, static=True, watch=1), Slot(2, static=True, watch=1), Slot()))
    assert static_not_offered(two, AbstractAction("JoinGroup/static-new", 2), STATIC, "3.9") is not None
    one = State("Stable", slots=(Slot(2, leader=True, static=True, watch=1), Slot(), Slot()))
    assert static_not_offered(one, AbstractAction("JoinGroup/static-new", 1), STATIC, "3.9") is None
    assert static_not_offered(one, AbstractAction("JoinGroup/new-pending", 1), STATIC, "3.9") is not None


def test_static_puppets_join_and_restart_with_instance_ids() -> None:
    world = World("3.9", STATIC, clients=KINDS, record=True)
    joins = [WireRequest.from_payload(str(seq[-1].arg)) for seq in moves(world, "JoinGroup/static-new", "-", "")]
    assert joins and all(j.member_id == "" and j.group_instance_id in ("i0", "i1") for j in joins)
    checker = RefinementChecker(world)
    checker.step(moves(world, "JoinGroup/static-new", "-", "")[0][-1])
    [member] = world.coord.groups[world.group_id].members
    value = next(x.short() for s in checker.coverage.states for x in s.slots if x.static)
    restart = moves(world, "JoinGroup/static-rejoin", value, "")
    wire = WireRequest.from_payload(str(restart[0][-1].arg))
    assert wire.member_id == "" and wire.group_instance_id == member.split("-")[0]
    beat = WireRequest.from_payload(str(moves(world, "Heartbeat", value, "")[0][-1].arg))
    assert beat.member_id == member and beat.group_instance_id == wire.group_instance_id   # its own instance id


@pytest.mark.parametrize("profile", ["2.7.0", "3.9"])
def test_static_walks_reach_stable_and_hold_the_disruptions_until_then(profile: str) -> None:
    scope, clients = STATIC_WALKS["static"]
    reached = 0
    for seed in range(5):
        run = CheckedRun(World(profile, scope, clients=clients, seed=seed, record=True))
        walk(run, random.Random(seed), 400, hold_static=True)
        steps = run.world.steps
        first = next((s.index for s in steps if s.group_state == "Stable"), None)
        reached += first is not None
        before = steps if first is None else steps[:first]
        held = [s.action for s in before if s.action.kind in ("Crash", "Restart", "DropRequest", "DropResponse",
                                                               "LeaveGroup")
                or (s.action.kind == "CompleteAppend" and s.action.arg != "NONE")
                or (s.action.client >= 0 and s.action.kind in ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit")
                    and run.world.kinds[s.action.client] == "static-adversarial")]
        assert held == [], (seed, held[:3])
        assert run.violations == []
    assert reached >= 4


def test_disrupts_names_what_a_static_walk_holds() -> None:
    world = World("3.9", STATIC, clients=STATIC_WALKS["static"][1], record=True)
    assert _disrupts(world, Action("Crash", 0, 0)) and _disrupts(world, Action("JoinGroup", 1, 0))
    assert not _disrupts(world, Action("JoinGroup", 0, 0))
    assert not _disrupts(world, Action("CompleteAppend", -1, "NONE"))
    assert _disrupts(world, Action("CompleteAppend", -1, "NOT_LEADER_OR_FOLLOWER"))
    assert not _is_stable(world)


def test_a_resubscribing_consumer_rejoins_with_its_other_subscription_and_the_refinement_names_it() -> None:
    churn = WALK_SCOPES["churn"]
    world = World("2.7.0", churn, clients=("java",), seed=0, record=True)
    checker = RefinementChecker(world)
    driver = Driver(world)
    driver.act = checker.step   # type: ignore[method-assign]
    for instr in (("member_id", 0), ("request", 0, "JoinGroup")):
        driver.run(instr)
    while world.coord.describe(world.group_id).state.name != "COMPLETING_REBALANCE":
        checker.step(next(a for a in world.enabled() if a.kind in ("FireTimer", "AdvanceToNextDeadline")))
    for instr in (("respond", 0, "JoinGroup"), ("call", 0, "SyncGroup")):
        driver.run(instr)
    client = world.clients[0]
    assert isinstance(client, JavaConsumer) and client.state == "STABLE"
    assert ("JoinGroup", 1) in client.wants(world.now_ms) and ("JoinGroup", 0) in client.wants(world.now_ms)
    checker.step(Action("JoinGroup", 0, 1))
    assert client.protocols() == (("range", b"c0+t1"),) and client.to_state()[-1] == 1
    checker.step(next(a for a in world.enabled() if a.kind == "DeliverRequest"))
    assert any(a.kind == "JoinGroup/changed" for _, a, _ in checker.coverage.edges)
    # a scope without resubscribes: the consumer never offers it, and its state has no subscription field
    calm = World("2.7.0", WALK_SCOPES["calm"], clients=("java",) * 3, seed=0, record=True)
    assert len(calm.clients[0].to_state()) == 10

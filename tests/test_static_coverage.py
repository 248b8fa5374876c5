"""The static scope's coverage map (explore/static_coverage.py), the gate's static walks reaching Stable, and the
subscription changes the churn scope offers (JoinGroup/changed) — what issue 27 item 5 (b) and (c) ask the gate to
reach."""
from __future__ import annotations

import random

import pytest

from core.actions import Action
from explore.runs import parse_label
from explore.static_coverage import LEADER_OWES_SYNC, STATIC_INSTANCES, leader_owes_sync, static_map, static_not_offered
from harness.abstraction import abstract
from harness.clients import JavaConsumer
from harness.external import WireRequest
from harness.puppets import KINDS, moves
from harness.refinement import RefinementChecker
from harness.scope import Scope
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


def _stable(profile: str, mutant: str | None = None, seed: int = 0) -> CheckedRun:
    """The static world driven, without what the static walks hold back, until its group is first Stable."""
    scope, clients = STATIC_WALKS["static"]
    run, rng = CheckedRun(World(profile, scope, clients=clients, seed=seed, record=True, mutant=mutant)), \
        random.Random(seed)
    while not _is_stable(run.world):
        calm = [a for a in run.world.enabled() if not _disrupts(run.world, a)]
        run.step(calm[rng.randrange(len(calm))])
    assert run.violations == [] and len(run.world.coord.groups[run.world.group_id].members) == 2
    return run


def _restart_upgraded(run: CheckedRun, client: int) -> None:
    """Client ``client`` crashes and comes back with the other assignor list; its JoinGroup ("", its instance id)
    reaches the coordinator."""
    run.step(Action("Crash", client, 0))
    assert Action("Restart", client, 1) in run.world.enabled() and Action("Restart", client, 0) in run.world.enabled()
    run.step(Action("Restart", client, 1))
    run.step(Action("JoinGroup", client, 0))
    run.step(next(a for a in run.world.enabled() if a.kind == "DeliverRequest" and a.client == client))


def test_a_static_restart_with_the_other_assignor_list_keeps_the_protocol_and_is_stored() -> None:
    """Scope.assignor_upgrades: the rolling bounce's first restart offers ("roundrobin", "range"); the other member
    supports range only, so the election re-run in Stable keeps range and 2.7.0 stores the replacement
    (KAFKA-10284, GroupCoordinator.scala 2.7.0 lines 1043-1053) — labelled static-rejoin[changed]."""
    run = _stable("2.7.0")
    _restart_upgraded(run, 0)
    assert run.world.clients[0].protocols() == (("roundrobin", b"c0"), ("range", b"c0"))
    group = run.world.coord.groups[run.world.group_id]
    assert run.violations == [] and group.state.value == "Stable" and group.protocol_name == "range"
    assert len(run.world.coord.appends) == 1    # the store of the new member id waits for its append
    assert any(a.kind == "JoinGroup/static-rejoin" and a.arg == "changed" for _, a, _ in run.refinement.coverage.edges)
    # a crash keeps the process's configuration: the next plain restart sends the upgraded list again
    assert len(run.world.clients[0].to_state()) == 11 and run.world.clients[0].to_state()[-1] == 1


def test_the_mutant_that_rebalances_on_its_own_choice_is_caught_by_the_election_rule() -> None:
    run = _stable("2.7.0", mutant="static-restart-rebalances-on-own-choice")
    _restart_upgraded(run, 0)
    [v] = run.violations
    assert v.property == "refines-the-abstract-model" and "static-protocol-selection" in v.message
    assert "keeps the protocol 'range', yet the group rebalanced" in v.message


@pytest.mark.parametrize("halfway", [False, True], ids=["labelled", "unlabelled"])
def test_the_last_upgraded_restart_changes_the_protocol_and_rebalances(halfway: bool) -> None:
    """Both members upgraded: each votes roundrobin, so the second restart changes the selection and Stable
    rebalances. Unlabelled (after an error the model did not predict) the step is the ``changed`` cell's
    transition too, not a graph edge (harness/refinement.py ``_first_labels``)."""
    run = _stable("2.7.0")
    assert run.refinement is not None
    run.refinement.halfway = halfway
    _restart_upgraded(run, 0)
    run.step(Action("CompleteAppend", -1, "NONE"))
    _restart_upgraded(run, 2)
    group = run.world.coord.groups[run.world.group_id]
    assert run.violations == [] and group.state.value == "PreparingRebalance"


def test_only_a_scope_with_assignor_upgrades_offers_the_other_list_and_its_json_says_so_only_then() -> None:
    faults = WALK_SCOPES["faults"]
    world = World("2.7.0", faults, clients=("java",) * 3, seed=0, record=True)
    world.step(Action("Crash", 0, 0))
    assert Action("Restart", 0, 0) in world.enabled() and Action("Restart", 0, 1) not in world.enabled()
    assert len(world.clients[0].to_state()) == 10 and "assignor_upgrades" not in faults.to_json()
    assert STATIC.to_json()["assignor_upgrades"] is True and Scope.from_json(STATIC.to_json()) == STATIC
    # a rollback restarts with the configured list again
    static = World("2.7.0", STATIC, clients=STATIC_WALKS["static"][1], seed=0, record=True)
    for arg in (1, 1):
        static.step(Action("Crash", 2, 0))
        static.step(Action("Restart", 2, arg))
    assert static.clients[2].protocols() == (("range", b"c2"),)


def _deliver(run: CheckedRun, kind: str, client: int) -> None:
    """The client's latest message of ``kind`` (a crash leaves the earlier ones in flight)."""
    run.step(max((a for a in run.world.enabled() if a.kind == kind and a.client == client), key=lambda a: a.arg))


def _restart_in_stable(run: CheckedRun, client: int, arg: int) -> None:
    """Client ``client``'s JoinGroup (Action arg ``arg``) reaches the coordinator of a Stable group."""
    run.step(Action("JoinGroup", client, arg))
    _deliver(run, "DeliverRequest", client)


@pytest.mark.parametrize("profile", ["2.7.0", "3.9"])
def test_the_static_worlds_own_clients_send_changed_metadata_after_a_failed_store(profile: str) -> None:
    """SPEC.md Corrections 2: a failed store reverts the id and keeps the restart's protocols. The adversary restarts
    "i0" (its metadata "c1") and is answered; client 0 restarts it back ("c0") and that store fails: the adversary's id
    is the member again with client 0's metadata, so the adversary's next JoinGroup with its id — what it sends any
    time — is JoinGroup/changed, which the static map therefore counts (explore/static_coverage.py)."""
    run = _stable(profile)
    _restart_in_stable(run, 1, 1)                 # the adversary: member id "", instance "i0"
    run.step(Action("CompleteAppend", -1, "NONE"))
    _deliver(run, "DeliverResponse", 1)
    adversary = run.world.clients[1].member_id
    assert adversary and run.world.coord.groups[run.world.group_id].static_members["i0"] == adversary
    run.step(Action("Crash", 0, 0))
    run.step(Action("Restart", 0, 0))
    _restart_in_stable(run, 0, 0)
    run.step(Action("CompleteAppend", -1, "NOT_LEADER_OR_FOLLOWER"))
    group = run.world.coord.groups[run.world.group_id]
    assert group.static_members["i0"] == adversary and group.members[adversary].protocols == (("range", b"c0"),)
    _restart_in_stable(run, 1, 0)
    assert run.violations == []
    assert any(a.kind == "JoinGroup/changed" for _, a, _ in run.refinement.coverage.edges)
    assert any(e[1].startswith("JoinGroup/changed") for e in static_map(profile, STATIC).reachable_edges)


def test_changed_metadata_is_not_offered_where_no_store_can_revert() -> None:
    """2.4.1 answers a static restart at once (no store, no revert): no member's metadata differs from its client's."""
    smap = static_map("2.4.1", STATIC)
    assert not any(e[1].startswith("JoinGroup/changed") for e in smap.reachable_edges)
    assert any(e[1].startswith("JoinGroup/changed") and why.startswith("no revert before 2.6.1")
               for e, why in smap.excluded.items())
    world = World("2.4.1", STATIC, clients=KINDS, record=True)
    checker = RefinementChecker(world)
    checker.step(moves(world, "JoinGroup/static-new", "-", "")[0][-1])
    value = next(x.short() for s in checker.coverage.states for x in s.slots if x.static)
    assert moves(world, "JoinGroup/changed", value, "") == []


def test_a_stable_leader_owing_a_sync_is_left_out_of_the_3_9_map_as_the_revert_the_model_overapproximates() -> None:
    """The model's revert of a failed store may hand a gone id's pending sync back to the member (model/static.py
    _revert: it does not know which gone id was the old one); in Kafka a Stable group's leader never owes a SyncGroup
    (explore/static_coverage.py leader_owes_sync). The map leaves those states out, entered only by that revert."""
    smap = static_map("3.9", STATIC)
    out = {e: why for e, why in smap.excluded.items() if why == LEADER_OWES_SYNC}
    assert out and all(e[1] == "CompleteAppend[error]" and e[0].group == "Stable" and leader_owes_sync(e[2])
                       for e in out)
    assert not any(leader_owes_sync(s) for s in smap.reachable_states)
    assert not any(why == LEADER_OWES_SYNC for why in static_map("2.7.0", STATIC).excluded.values())


def test_the_revert_of_a_restarted_leader_restores_an_id_that_owes_no_sync() -> None:
    """The concrete side of the exclusion above (3.9): a first restart's store fails after its new id rejoined and
    joined a generation, which leaves that id owing a SyncGroup (Corrections 3); the leader syncs, the group is Stable
    with the ghost in pendingSyncMembers; a second restart's store fails too — the revert restores the leader's own
    id, which owes nothing, and the ghost stays (not the model's other successor, the leader owing the sync)."""
    world = World("3.9", STATIC, clients=KINDS, record=True)
    run = CheckedRun(world)
    script = [("JoinGroup/static-new", "-", ""), ("ExpireJoin", "", ""), ("SyncGroup", "MLYIw", ""),
              ("CompleteAppend", "", "ok"), ("JoinGroup/static-rejoin", "MLIw", ""), ("JoinGroup/known", "MLJIPw", ""),
              ("CompleteAppend", "", "error"), ("SyncGroup", "MLIw", ""), ("CompleteAppend", "", "ok"),
              ("JoinGroup/static-rejoin", "MLIw", ""), ("CompleteAppend", "", "error")]
    for kind, acting, arg in script:
        before = len(run.refinement.coverage.edges)
        run.step(moves(world, kind, acting, arg)[0][-1]) if kind in ("SyncGroup", "CompleteAppend") else [
            run.step(a) for a in moves(world, kind, acting, arg)[0]]
        assert run.violations == [] and len(run.refinement.coverage.edges) == before + 1, (kind, run.violations)
    group = world.coord.groups[world.group_id]
    [member] = group.members
    assert group.state.value == "Stable" and group.leader_id == member
    assert member not in group.pending_sync_members and group.pending_sync_members   # the ghost of the first restart
    assert not leader_owes_sync(abstract(world.coord, world.group_id))


@pytest.mark.parametrize("profile", ["2.7.0", "3.9"])
def test_a_failed_store_of_a_departed_member_is_the_labelled_error_edge_and_later_answers_are_judged(
        profile: str) -> None:
    """Finding failed-static-store-of-a-departed-member-throws: the revert's replaceStaticMember throws, which the model
    predicts (model/static.py complete_static_append), so the step is CompleteAppend[error] — not an unlabelled step
    credited to the first model action between its states (CompleteAppend[ok]) — and the refinement goes on judging."""
    world = World(profile, STATIC, clients=KINDS, record=True)
    run = CheckedRun(world)
    owes = "MLYIw" if profile == "3.9" else "MLIw"    # 3.x: the join completion puts the member in pendingSync
    for kind, acting, arg in [("JoinGroup/static-new", "-", ""), ("ExpireJoin", "", ""), ("SyncGroup", owes, ""),
                              ("CompleteAppend", "", "ok"), ("JoinGroup/static-rejoin", "MLIw", ""),
                              ("LeaveGroup", "MLJIPw", "")]:
        for a in moves(world, kind, acting, arg)[0]:
            run.step(a)
    assert world.coord.appends and not world.coord.groups[world.group_id].members
    run.step(Action("CompleteAppend", -1, "REQUEST_TIMED_OUT"))
    assert "non-existing member id" in world.coord.errors[-1]
    assert run.violations == [] and run.refinement is not None and not run.refinement.halfway
    assert any(a.kind == "CompleteAppend" and a.arg == "error" and b.appends == ("static", "empty")
               for b, a, _ in run.refinement.coverage.edges)

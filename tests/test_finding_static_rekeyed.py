"""The store callback of a static restart acts on the member *object*, which a later restart of the same instance
re-keys (GroupMetadata.scala 3.9.0-rc3 lines 319-340): the two documented findings that follow
(properties/static_rekeyed.py), each on the counterexample the gate found, the impl's own behaviour on a scripted
double restart, and the model's prediction (model/static.py ``_rekeyed``) — absent where 4.x builds a new object.
"""
from __future__ import annotations

import dataclasses

import pytest

from core.trace import Trace
from harness.excuses import unexcused
from harness.replay import world_for
from impl import Errors
from kgc.runs import CheckedRun, actions_of, replay_checked
from model.outputs import STATIC_FORMER
from model.state import MEMBER, AbstractAction, Scope, Slot, State
from model.step import outcomes
from properties.findings import get_finding
from tests.kafka_suites.group_coordinator_harness import LEADER, PROTOCOL_SUPERSET, Kafka, done, parked
from tests.test_finding_static_store import _run   # the record's actions on a fresh world, refinement on

ANSWERS = get_finding("static-store-answers-the-next-restart-with-its-old-id")
DROPS = get_finding("failed-static-store-drops-the-next-restarts-join")


def _record(name: str, profile: str) -> Trace:
    path = get_finding(name).record(profile) / "counterexample.json"
    return Trace.loads(path.read_text(encoding="utf-8"), source=str(path))


def test_the_findings_are_the_releases_that_re_key_a_replaced_member() -> None:
    # KAFKA-10284's persist path (2.6.1+) up to the last Scala coordinator; 4.x builds a new member object (R12)
    assert ANSWERS.profiles == DROPS.profiles == ("2.7.0", "3.9")


@pytest.mark.parametrize("profile", ANSWERS.profiles)
def test_a_successful_store_answers_the_next_restart_with_its_old_id(profile: str) -> None:
    trace = _record(ANSWERS.name, profile)
    with unexcused([ANSWERS.name]):
        run = _run(trace)
    assert [v.property for v in run.violations] == list(ANSWERS.properties)
    step = run.world.steps[run.violations[0].step]
    assert step.action.kind == "CompleteAppend" and step.action.arg == "NONE"
    (answer,) = [r for r in step.responses if r.api == "JoinGroup"]
    group = run.world.coord.groups[run.world.group_id]
    # NONE, the current generation, but a member id the group no longer has: its instance maps to a newer one
    assert answer.error == "NONE" and answer.generation_id == group.generation_id
    assert answer.member_id not in group.members
    instance = answer.member_id.rsplit("-", 1)[0]     # static member ids are <instance id>-<n>
    assert group.static_members[instance] in group.members   # the instance is a member — under a newer id
    assert run.refinement is not None and not run.refinement.halfway   # the model predicts the answer
    assert _run(trace).violations == []


@pytest.mark.parametrize("profile", DROPS.profiles)
def test_a_failed_store_drops_the_next_restarts_join(profile: str) -> None:
    trace = _record(DROPS.name, profile)
    with unexcused([DROPS.name]):
        run = _run(trace)
    assert "parked-request-is-answered-not-dropped" in {v.property for v in run.violations}
    v = next(v for v in run.violations if v.property == "parked-request-is-answered-not-dropped")
    step = run.world.steps[v.step]
    assert step.action.kind == "CompleteAppend" and step.action.arg != "NONE" and v.witness["api"] == "JoinGroup"
    assert not any(r.api == "JoinGroup" for r in step.responses)
    group = run.world.coord.groups[run.world.group_id]
    assert v.witness["holder"] in group.members and group.members[v.witness["holder"]].group_instance_id is not None
    assert "cannot replace non-existing member id" in run.world.coord.errors[-1]
    assert _run(trace).violations == []


@pytest.mark.parametrize("profile", ("2.7.0", "3.9"))
@pytest.mark.parametrize("skip", (False, True))
def test_the_reference_acts_on_the_re_keyed_member(profile: str, skip: bool) -> None:
    """Two static members, Stable; the leader's instance restarts twice while the first restart's store waits; then
    that store succeeds — the second restart is answered with the first one's id and the leader of when it was given
    (KIP-814, 3.9, v9: the group's leader, no list: the first id leads nothing) — or fails: the second restart's
    JoinGroup is dropped and the revert throws (GroupCoordinator.scala 3.9.0-rc3 lines 1383-1384, 1410-1440; 2.7.0
    lines 1061-1062, 1074-1082)."""
    for error in (Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER):
        kafka = Kafka(profile)
        r = kafka.static_rebalance()
        kafka.send_join("", PROTOCOL_SUPERSET, LEADER, skip=skip)
        first = kafka.group().static_member_id(LEADER)
        second = kafka.send_join("", PROTOCOL_SUPERSET, LEADER, skip=skip)
        now = kafka.group().static_member_id(LEADER)
        assert first != now and first != r.leader_id
        kafka.c.complete_append(None if error is Errors.NONE else error)
        if error is Errors.NONE:
            got = done(second)
            leader = now if skip and profile == "3.9" else r.leader_id
            assert (got.error, got.member_id, got.leader_id, got.members) == (Errors.NONE, first, leader, ())
        else:
            parked(second)
            assert kafka.group().get(now).awaiting_join is None
            assert "cannot replace non-existing member id" in kafka.last_illegal_state()


def _two_restarts_pending(profile: str) -> tuple[State, Scope]:
    # one static member whose second restart is parked, both stores pending (the first for an id gone since)
    slot = Slot(status=MEMBER, leader=True, static=True, persist=True, awaiting_join=True, watch=1)
    return State("Stable", appends=("static", "static"), fresh=False, slots=(slot,)), Scope(members=1, static=True)


@pytest.mark.parametrize("profile,rekeys", [("2.7.0", True), ("3.9", True), ("4.1", False)])
def test_the_model_predicts_the_re_keyed_callback_where_the_release_re_keys(profile: str, rekeys: bool) -> None:
    state, scope = _two_restarts_pending(profile)
    ok = outcomes(state, AbstractAction("CompleteAppend", arg="ok"), profile, scope, canonical=False)
    former = [t for t, out in ok if any(a.shape == STATIC_FORMER for a in out.answers)]
    assert bool(former) == rekeys and all(not t.slots[0].awaiting_join for t in former)
    failed = outcomes(state, AbstractAction("CompleteAppend", arg="error"), profile, scope, "NOT_LEADER_OR_FOLLOWER",
                      canonical=False)
    dropped = [t for t, out in failed if not out.answers and not t.slots[0].awaiting_join]
    assert bool(dropped) == rekeys


def test_the_gate_found_both_records() -> None:
    for f in (ANSWERS, DROPS):
        for profile in f.profiles:
            trace = _record(f.name, profile)
            assert trace.name.startswith(("walk static", "static sweep")), trace.name
            prop = trace.violation.property if trace.violation else ""
            with unexcused([f.name]):
                assert replay_checked(trace, actions_of(trace), prop) is not None


@pytest.mark.parametrize("profile", ANSWERS.profiles)
def test_the_mutant_answers_the_re_keyed_restart_otherwise(profile: str) -> None:
    """The differential witness of mutant re-keyed-store-answers-with-the-current-id (tests/test_mutants.py leaves it
    here): on the finding's record the mutant answers the later restart with its *current* id, and the labelled
    refinement rejects that step by its member-id rule — where the reference's answer (the former id) passes."""
    trace = _record(ANSWERS.name, profile)
    world = world_for(dataclasses.replace(trace, steps=(), mutant="re-keyed-store-answers-with-the-current-id"),
                      record=True)
    run = CheckedRun(world)
    for action in actions_of(trace):
        if run.over:
            break
        run.step(action)
    refined = [v for v in run.violations if v.property == "refines-the-abstract-model"]
    assert refined and "rule join-member-id" in refined[0].message
    step = world.steps[refined[0].step]
    (answer,) = [r for r in step.responses if r.api == "JoinGroup"]
    assert answer.member_id in world.coord.groups[world.group_id].members   # its current id

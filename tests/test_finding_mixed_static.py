"""The two documented findings of groups where dynamic and static members meet (properties/findings.py), each on the
counterexample the gate's mixed static walk found and recorded (reports/findings/NAME/PROFILE/), and each excuse
shown to be narrow: it covers exactly the cause SPEC.md names, and the property still catches anything else.

- instance-id-with-a-pending-member-id-throws: SPEC.md §3.1 J5b step 3 ("memberId is a pending member → (static ⇒
  IllegalStateException)"), on every release with both pending members and static membership;
- leave-of-a-pending-member-id-ignores-its-instance-id: SPEC.md §3.4 [3.x] (a pending id is removed before
  validateCurrentMember reads the instance id), 3.0.0+.
"""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from core.trace import Trace
from harness.excuses import unexcused
from harness.world import World
from impl.group import IllegalStateError
from kgc.runs import CheckedRun, actions_of, replay_checked
from properties.findings import get_finding

THROWS = get_finding("instance-id-with-a-pending-member-id-throws")
PENDING_LEAVE = get_finding("leave-of-a-pending-member-id-ignores-its-instance-id")


def _record(name: str, profile: str) -> Trace:
    path = get_finding(name).record(profile) / "counterexample.json"
    return Trace.loads(path.read_text(encoding="utf-8"), source=str(path))


def _steps_of(run: CheckedRun, prop: str) -> list[int]:
    return [v.step for v in run.violations if v.property == prop]


def test_the_findings_name_the_releases_spec_gives() -> None:
    # J5b step 3 needs pending ids (2.2.0, KIP-394) and instance ids (2.3.0, KIP-345); §3.4's order is 3.x only;
    # 4.1 throws on the JoinGroup the same way (GroupMetadataManager.java@4.1.1:6398-6402)
    assert THROWS.profiles == ("2.4.1", "2.7.0", "3.9", "4.1") and THROWS.fixed_in is None
    assert PENDING_LEAVE.profiles == ("3.9",) and PENDING_LEAVE.fixed_in is None


@pytest.mark.parametrize("profile", ("2.4.1", "2.7.0", "3.9"))
def test_a_join_with_an_instance_id_from_a_pending_member_id_throws(profile: str) -> None:
    trace = _record(THROWS.name, profile)
    with unexcused([THROWS.name]):
        run = replay_checked(trace, actions_of(trace), "no-illegal-state-error")
    assert run is not None
    step = run.world.steps[_steps_of(run, "no-illegal-state-error")[0]]
    # the step delivered a JoinGroup whose member id was pending and which carried an instance id; it was answered
    # UNKNOWN_SERVER_ERROR (the request handler's error response) — what the model predicts (the refinement held)
    assert step.action.kind == "DeliverRequest"
    [answer] = [r for r in step.responses if r.api == "JoinGroup"]
    assert (answer.error, answer.member_id, answer.generation_id) == ("UNKNOWN_SERVER_ERROR", "", -1)
    assert not _steps_of(run, "refines-the-abstract-model")
    # excused (the default), the same actions are clean: the search goes on past it
    clean = CheckedRun(World(profile, run.world.scope, clients=run.world.kinds, seed=trace.seed or 0, record=True))
    for action in actions_of(trace):
        clean.step(action)
    assert clean.violations == []
    # the model predicted that error: the labelled output check stays on for the steps after it
    assert clean.world.coord.errors and clean.refinement is not None and not clean.refinement.halfway


def test_4_1_a_join_with_an_instance_id_from_a_pending_member_id_throws() -> None:
    """On 4.1 the runtime rule no-illegal-state-in-an-event sees it (the catalog does not judge 4.1 yet): the recorded
    JoinGroup is answered UNKNOWN_SERVER_ERROR; excused, the same actions are clean."""
    from kgc.runs import world_for
    from properties.runtime_4x import checked_step, rules_for
    trace = _record(THROWS.name, "4.1")

    def replay():  # type: ignore[no-untyped-def]
        world = world_for(dataclasses.replace(trace, steps=()), record=True)
        return [v for a in actions_of(trace) for v in checked_step(world, a, rules_for("4.1"))], world
    assert replay()[0] == []
    with unexcused([THROWS.name]):
        found, world = replay()
    assert [v.rule for v in found] == ["no-illegal-state-in-an-event"]
    step = world.steps[found[0].step]
    assert step.action.kind == "DeliverRequest" and "for pending member with memberId=" in found[0].reason
    [answer] = [r for r in step.responses if r.api == "JoinGroup"]
    assert (answer.error, answer.member_id, answer.generation_id) == ("UNKNOWN_SERVER_ERROR", "", -1)


@pytest.mark.parametrize("excuse", [True, False], ids=["excused", "unexcused"])
def test_a_2_x_leave_of_a_pending_member_id_with_an_instance_id_throws_and_is_predicted(excuse: bool) -> None:
    """§3.4 [2.4] (GroupCoordinator.scala@2.4.1 L468-474): past the fencing check, a LeaveGroup naming a pending member
    id with a group.instance.id throws — the forging adversary sends its java peer's pending id with "i0", which maps
    to nothing. The model predicts the UNKNOWN_SERVER_ERROR answer (labelled static-pending); the finding excuses the
    IllegalStateError, and without the excuse it is reported."""
    from core.actions import Action
    from harness.scenarios import Driver
    from kgc.gate import STATIC_WALKS
    scope, clients = STATIC_WALKS["static-mixed"]
    run = CheckedRun(World("2.4.1", scope, clients=clients, seed=0, record=True))
    driver = Driver(run.world)
    driver.act = run.step   # type: ignore[method-assign]
    with unexcused([] if excuse else [THROWS.name]):
        driver.run(("call", 0, "JoinGroup"))          # c0 gets MEMBER_ID_REQUIRED: its id is pending
        run.step(Action("LeaveGroup", 2, 3))          # the adversary sends its peer c0's member id, with "i0"
        driver.run(("deliver", 2, "LeaveGroup"))
    step = run.world.steps[-1]
    assert run.world.coord.errors and [str(r) for r in step.responses] == ["c2 LeaveGroup#1 UNKNOWN_SERVER_ERROR"]
    assert run.refinement is not None and not run.refinement.halfway   # the model's answer: the step refined
    assert [v.property for v in run.violations] == ([] if excuse else ["no-illegal-state-error"])


def test_any_other_illegal_state_is_still_reported_while_the_finding_is_excused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted IllegalStateError on a dynamic member's rejoin (no instance id): not the finding's cause."""
    from impl.rebalance import RebalanceMixin

    def throws(*args: object, **kwargs: object) -> None:
        raise IllegalStateError("planted")
    monkeypatch.setattr(RebalanceMixin, "add_member_and_rebalance", throws)
    run, rng = CheckedRun(World("3.9", clients=("java", "java", "java"), seed=0, record=True)), random.Random(0)
    for _ in range(300):
        enabled = run.world.enabled()
        if run.over or not enabled:
            break
        run.step(enabled[rng.randrange(len(enabled))])
    assert run.world.coord.errors and _steps_of(run, "no-illegal-state-error"), [v.property for v in run.violations]
    assert run.refinement is not None and run.refinement.halfway   # an error the model does not predict


def test_a_leave_of_a_pending_member_id_with_a_foreign_instance_id_succeeds_on_3_9() -> None:
    trace = _record(PENDING_LEAVE.name, "3.9")
    prop = "fenced-instance-id-never-succeeds"
    with unexcused([PENDING_LEAVE.name]):
        run = replay_checked(trace, actions_of(trace), prop)
    assert run is not None
    v = next(v for v in run.violations if v.property == prop)
    assert "LeaveGroup" in v.message and "answer='NONE'" in v.message
    assert not _steps_of(run, "refines-the-abstract-model")   # the model removes the pending id too (§3.4 [3.x])
    clean = replay_checked(trace, actions_of(trace), prop)
    assert clean is None   # excused: no violation of the property on the whole trace


def test_the_records_are_what_the_gate_found() -> None:
    for f in (THROWS, PENDING_LEAVE):
        for profile in f.profiles:
            trace = _record(f.name, profile)
            assert trace.name.startswith("walk static-mixed"), trace.name
            assert Path(f.record(profile) / "report.md").is_file()


def test_a_3_9_leave_that_fences_a_pending_id_is_caught_by_the_labelled_refinement(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted 2.4-order LeaveGroup on 3.9 (fencing before the pending check): no catalog property names that
    answer, the model's (§3.4 [3.x]) does — refinement alone reports it, at the finding's LeaveGroup."""
    from core.types import Errors
    from impl.static_members import StaticMembershipMixin
    original = StaticMembershipMixin.leave_identity

    def fences_first(self, group, member_id, group_instance_id):   # type: ignore[no-untyped-def]
        if member_id and group.is_static_member_fenced(member_id, group_instance_id):
            return Errors.FENCED_INSTANCE_ID
        return original(self, group, member_id, group_instance_id)
    monkeypatch.setattr(StaticMembershipMixin, "leave_identity", fences_first)
    trace = _record(PENDING_LEAVE.name, "3.9")
    run = replay_checked(trace, actions_of(trace), "refines-the-abstract-model")
    assert run is not None
    v = next(v for v in run.violations if v.property == "refines-the-abstract-model")
    assert v.step == len(trace.steps) - 1 and "FENCED_INSTANCE_ID" in v.message, v.message

"""The documented findings of the KAFKA-10284 persist path (properties/findings.py), 2.6.1+: what a static restart in
Stable stores, and what its store callback does when it completes — each on the counterexample the gate found and
recorded (reports/findings/NAME/PROFILE/) once its static walks and static sweep reached Stable, and each excuse shown
narrow: on the recorded trace it covers the one step of its cause, and the property still catches a planted look-alike.
"""
from __future__ import annotations

import pytest

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked
from properties.findings import get_finding

CAPTURED = get_finding("failed-static-store-answers-the-captured-join")
UNWATCHED = get_finding("static-store-answer-leaves-no-expiration")
DEPARTED = get_finding("failed-static-store-of-a-departed-member-throws")
UNLOADED = get_finding("unload-leaves-a-static-restarts-join-parked")
FOUND = (CAPTURED, UNWATCHED, DEPARTED, UNLOADED)


def _record(name: str, profile: str) -> Trace:
    path = get_finding(name).record(profile) / "counterexample.json"
    return Trace.loads(path.read_text(encoding="utf-8"), source=str(path))


def test_the_findings_are_the_releases_with_the_persist_path() -> None:
    for f in FOUND:
        assert f.profiles == ("2.7.0", "3.9") and f.fixed_in is None, f.name


def _unexcused_run(name: str, profile: str, prop: str):   # type: ignore[no-untyped-def]
    trace = _record(name, profile)
    with unexcused([name]):
        run = replay_checked(trace, actions_of(trace), prop)
    assert run is not None, (name, profile, prop)
    return trace, run, next(v for v in run.violations if v.property == prop)


@pytest.mark.parametrize("profile", CAPTURED.profiles)
def test_a_failed_static_store_answers_the_join_it_captured(profile: str) -> None:
    trace = _record(CAPTURED.name, profile)
    prop = trace.violation.property if trace.violation else ""
    assert prop in CAPTURED.properties
    _, run, v = _unexcused_run(CAPTURED.name, profile, prop)
    step = run.world.steps[v.step]
    # the step is a failed append that reverts a static replacement (the revert is a replacement back to the old id)
    assert step.action.kind == "CompleteAppend" and step.action.arg != "NONE"
    assert any(type(e).__name__ == "StaticMemberReplaced" for e in step.events)
    assert replay_checked(trace, actions_of(trace), prop) is None   # excused (the default): the trace is clean


@pytest.mark.parametrize("profile", UNWATCHED.profiles)
def test_a_static_stores_answer_leaves_the_member_without_an_expiration(profile: str) -> None:
    trace = _record(UNWATCHED.name, profile)
    prop = trace.violation.property if trace.violation else ""
    assert prop in UNWATCHED.properties
    _, run, v = _unexcused_run(UNWATCHED.name, profile, prop)
    group = run.world.coord.groups.get(run.world.group_id)
    member = v.witness.get("member")
    assert group is not None and member in group.members
    assert group.members[member].group_instance_id is not None     # a static member, idle with no live op
    assert replay_checked(trace, actions_of(trace), prop) is None


@pytest.mark.parametrize("profile", DEPARTED.profiles)
def test_a_failed_store_of_a_departed_static_member_throws(profile: str) -> None:
    trace = _record(DEPARTED.name, profile)
    _, run, v = _unexcused_run(DEPARTED.name, profile, "no-illegal-state-error")
    step = run.world.steps[v.step]
    assert step.action.kind == "CompleteAppend" and step.action.arg != "NONE"
    assert replay_checked(trace, actions_of(trace), "no-illegal-state-error") is None


@pytest.mark.parametrize("profile", UNLOADED.profiles)
def test_an_unload_leaves_a_static_restarts_join_parked_on_the_unloaded_object(profile: str) -> None:
    trace = _record(UNLOADED.name, profile)
    prop = trace.violation.property if trace.violation else ""
    assert prop in UNLOADED.properties
    _, run, v = _unexcused_run(UNLOADED.name, profile, prop)
    steps = run.world.steps[:v.step + 1]
    # a static restart (a delivered JoinGroup that replaced an id) came before a partition move
    restarts = [s.index for s in steps if s.action.kind == "DeliverRequest"
                and any(type(e).__name__ == "StaticMemberReplaced" for e in s.events)]
    unloads = [s.index for s in steps if s.action.kind == "UnloadGroup"]
    assert restarts and unloads and restarts[0] < unloads[-1]
    assert replay_checked(trace, actions_of(trace), prop) is None


def test_the_records_are_what_the_gate_found() -> None:
    for f in FOUND:
        for profile in f.profiles:
            trace = _record(f.name, profile)
            assert trace.name.startswith(("walk static", "static sweep")), trace.name

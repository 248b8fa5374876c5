"""The model's 4.1 profile (model/profiles.py): 3.9's protocol and the five switches SPEC-4x.md's rules set at the
abstract level. Each test takes one state, steps it on 3.9 and on 4.1, and asserts what the rule says differs;
expected values are the rules' (SPEC-4x.md R1, R8, R9, R10, R12 with GroupMetadataManager.java@4.1.1 lines), never
read back from the model."""
from __future__ import annotations

import dataclasses

import pytest

from model.outputs import HEARTBEAT_OP, SESSION, Arm
from model.profiles import MODEL_PROFILES, get_model_profile
from model.releases import release
from model.state import (APPEND_CURRENT, COMPLETING, FREE, JOIN, MEMBER, PENDING, PREPARING, STABLE, AbstractAction,
                         Scope, Slot, State)
from model.step import outcomes

SCOPE = Scope(members=2)


def _member(**kw: object) -> Slot:
    return dataclasses.replace(Slot(status=MEMBER), **kw)   # type: ignore[arg-type]


def _only(state: State, action: AbstractAction, profile: str, scope: Scope = SCOPE):  # type: ignore[no-untyped-def]
    found = outcomes(state, action, profile, scope, canonical=False)
    assert len(found) == 1, found
    return found[0]


def test_4_1_is_modelled_but_not_judged_and_its_switches_come_from_its_facts() -> None:
    assert "4.1" in MODEL_PROFILES and release("4.1").modelled and not release("4.1").runnable
    p, q = get_model_profile("4.1"), get_model_profile("3.9")
    switches = ("keyed_timers", "stable_sync_reschedules", "refusal_checks_join", "static_replacement_keeps_new",
                "fresh_is_initial_rebalance", "expiry_completes_initial_join", "pending_leave_rebalances",
                "replacement_rekeys_member")
    assert [getattr(p, n) for n in switches] == [True, False, False, False, True, True, True, False]
    assert [getattr(q, n) for n in switches] == [False, True, True, True, False, False, False, True]
    # R6 (fact sync-while-loading-load-in-progress): a SyncGroup to a loading partition is LOAD_IN_PROGRESS
    assert dict(p.loading_answers) == {**q.loading_answers, "SyncGroup": "COORDINATOR_LOAD_IN_PROGRESS"}
    assert q.loading_answers["SyncGroup"] == "REBALANCE_IN_PROGRESS"
    # everything else is 3.9's protocol
    same = {f.name for f in dataclasses.fields(p)} - {"name", "store_errors", "loading_answers", *switches}
    assert {n: getattr(p, n) for n in same} == {n: getattr(q, n) for n in same}


def test_r1_a_heartbeat_while_awaiting_join_replaces_the_keyed_timer() -> None:
    """3.9: the new DelayedHeartbeat of an awaiting, not-new member completes at birth (heartbeatSatisfied); 4.x: the
    key gets a new task that stays armed and decides at its firing (GMM@4.1.1:7061-7074, 6688-6700)."""
    s = State(PREPARING, JOIN, slots=(_member(leader=True, awaiting_join=True, watch=1), _member(watch=1)))
    act = AbstractAction("Heartbeat", 0)
    after39, out39 = _only(s, act, "3.9")
    after41, out41 = _only(s, act, "4.1")
    assert after39.slots[0].watch == 0 and Arm(HEARTBEAT_OP, 0, SESSION) not in out39.arms
    assert after41.slots[0].watch == 1 and Arm(HEARTBEAT_OP, 0, SESSION) in out41.arms


def test_r1_the_replaced_task_of_an_awaiting_member_fires_without_effect() -> None:
    s = State(PREPARING, JOIN, slots=(_member(leader=True, awaiting_join=True, watch=1), _member(watch=1)))
    after, out = _only(s, AbstractAction("ExpireHeartbeat", 0), "4.1")
    assert after.slots[0] == _member(leader=True, awaiting_join=True) and out.answers == ()


def test_r9_a_sync_in_stable_leaves_the_session_timer() -> None:
    s = State(STABLE, slots=(_member(leader=True, watch=1), _member(pending_sync=True, watch=1)))
    act = AbstractAction("SyncGroup", 1)
    _, out39 = _only(s, act, "3.9")
    after41, out41 = _only(s, act, "4.1")
    assert [(a.api, a.error) for a in out39.answers] == [("SyncGroup", "NONE")] == [
        (a.api, a.error) for a in out41.answers]
    assert Arm(HEARTBEAT_OP, 1, SESSION) in out39.arms
    assert out41.arms == () and after41.slots[1].watch == 1 and not after41.slots[1].pending_sync


def test_r10_a_refusal_at_max_size_does_not_complete_the_join() -> None:
    """A non-initial rebalance waits for slot 1; slot 1 rejoins and is refused at group.max.size 1 (only one may
    await): 3.9 removes it and completes the join at once, 4.x removes it and waits for the join timer."""
    s = State(PREPARING, JOIN, fresh=False, slots=(_member(leader=True, awaiting_join=True, watch=1),
                                                  _member(watch=1)))
    scope = dataclasses.replace(SCOPE, max_size=1)
    act = AbstractAction("JoinGroup/known", 1)
    after39, _ = _only(s, act, "3.9", scope)
    after41, out41 = _only(s, act, "4.1", scope)
    assert after39.group == COMPLETING
    assert after41.group == PREPARING and after41.join_op == JOIN
    assert after41.slots[1].status != MEMBER and [a.error for a in out41.answers] == ["GROUP_MAX_SIZE_REACHED"]


def test_r12_a_static_replacement_is_never_new() -> None:
    """A new static member restarts during its first rebalance (slot 1 has not rejoined, so the join waits)."""
    s = State(PREPARING, JOIN, slots=(_member(leader=True, awaiting_join=True, is_new=True, static=True, watch=1),
                                      _member(watch=1), FREE))
    scope = dataclasses.replace(Scope(members=3), static=True)
    act = AbstractAction("JoinGroup/static-rejoin", 0)
    after39, _ = _only(s, act, "3.9", scope)
    after41, _ = _only(s, act, "4.1", scope)
    assert after39.slots[0].is_new and not after41.slots[0].is_new


@pytest.mark.parametrize(("raw", "want39", "want41"), [
    ("REQUEST_TIMED_OUT", "REBALANCE_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE"),
    ("NOT_ENOUGH_REPLICAS_AFTER_APPEND", "COORDINATOR_NOT_AVAILABLE", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
    ("NOT_LEADER_OR_FOLLOWER", "NOT_COORDINATOR", "NOT_COORDINATOR"),
])
def test_r8_a_failed_assignment_write_is_answered_the_release_mapping(raw: str, want39: str, want41: str) -> None:
    s = State(COMPLETING, appends=(APPEND_CURRENT,), slots=(_member(leader=True, awaiting_sync=True, watch=1),
                                                            _member(awaiting_sync=True, watch=1)))
    act = AbstractAction("CompleteAppend", arg="error")
    for profile, want in (("3.9", want39), ("4.1", want41)):
        found = outcomes(s, act, profile, SCOPE, detail=raw, canonical=False)
        errors = {a.error for _, out in found for a in out.answers if a.api == "SyncGroup"}
        assert errors == {want}, profile


def test_r1_a_rebalance_of_no_members_waits_for_its_join_task() -> None:
    """3.x: the DelayedJoin of no members has timeout 0 and completes at creation; 4.x: the delay-0 task's event runs
    later, and the join check decides now — a pending id still to join keeps it waiting (GMM@4.1.1:6906-6925)."""
    s = State(COMPLETING, sync_op=True, fresh=False,
              slots=(_member(leader=True, pending_sync=True, watch=1), Slot(status=PENDING, watch=1)))
    act = AbstractAction("ExpireSync")
    after39, _ = _only(s, act, "3.9")
    after41, _ = _only(s, act, "4.1")
    assert after39.group == "Empty"
    assert after41.group == PREPARING and after41.join_op == JOIN


def test_a_member_expiring_in_the_initial_rebalance_completes_it_on_4x() -> None:
    """GMM@4.1.1:6749-6753: removing an expired pending id re-checks the join with no initial-rebalance guard."""
    s = State(PREPARING, "initial", slots=(_member(leader=True, awaiting_join=True, is_new=True, watch=1),
                                           Slot(status=PENDING, watch=1)))
    act = AbstractAction("ExpireHeartbeat", 1)
    after39, _ = _only(s, act, "3.9")
    after41, _ = _only(s, act, "4.1")
    assert after39.group == PREPARING and after39.join_op == "initial"
    assert after41.group == COMPLETING


def test_a_pending_leave_rebalances_a_stable_group_on_4x() -> None:
    """GMM@4.1.1:7898-7950: a removed pending id is a valid leave, and Stable rebalances."""
    s = State(STABLE, fresh=False, slots=(_member(leader=True, watch=1), Slot(status=PENDING, watch=1)))
    act = AbstractAction("LeaveGroup", 1)
    after39, _ = _only(s, act, "3.9")
    after41, _ = _only(s, act, "4.1")
    assert after39.group == STABLE and after41.group == PREPARING


def test_new_members_extend_an_initial_rebalance_after_a_generation_on_4x() -> None:
    """GMM@4.1.1:6819-6822 (previousState == EMPTY) vs GroupCoordinator.scala@3.9.1:1329-1331 (generation 0): a group
    that emptied after a generation rebalances from Empty again; a member joining it sets newMemberAdded on 4.x."""
    s = State("Empty", fresh=False, slots=(FREE, FREE))
    joined = [_only(x, AbstractAction("JoinGroup/new", 1), p)[0]
              for p, x in (("3.9", _only(s, AbstractAction("JoinGroup/new", 0), "3.9")[0]),
                           ("4.1", _only(s, AbstractAction("JoinGroup/new", 0), "4.1")[0]))]
    assert [j.new_member_added for j in joined] == [False, True]

"""The model's static membership (model/static.py, KIP-345): each rule against the SPEC.md text it comes from.

States are written by hand; expected successors and outputs are read from SPEC.md §3.1 J5a step 4 / J5b step 4,
§3.8 and §4.4 (never computed by the model or impl). Slot positions are kept (``canonical=False``).
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from model.outputs import Answer, Arm
from model.state import (ABSENT, COMPLETING, FREE, JOIN, MEMBER, NO_JOIN, PENDING, PREPARING, STABLE, AbstractAction,
                         Scope, Slot, State)
from model.step import enabled, outcomes

STATIC = ("2.4.1", "2.7.0", "3.9")
LEADER = Slot(MEMBER, leader=True, watch=1, static=True)
FOLLOWER = Slot(MEMBER, watch=1, static=True)
SCOPE = Scope(members=4, static=True)


def stable(*slots: Slot) -> State:
    return State(STABLE, slots=slots + (FREE,) * (4 - len(slots)), fresh=False)


def run(state: State, kind: str, profile: str, slot: int = -1, arg: str = "", scope: Scope = SCOPE,
        detail: str = "") -> list[tuple[State, tuple[Answer, ...], tuple[Arm, ...]]]:
    found = outcomes(state, AbstractAction(kind, slot, arg), profile, scope, detail, canonical=False)
    return [(s, o.answers, o.arms) for s, o in found]


# -- J5a step 4: a known instance restarts with member id "" ----------------------------------------------------
def test_restart_in_stable_on_2_4_1_is_answered_at_once_with_the_current_generation() -> None:
    """2.3.0–2.6.0 Stable: answer immediately, current generation, *old* leader id (the "static" shape), empty
    member list, no rebalance and no log write; the old id's heartbeat op stays armed under the old id."""
    [(after, answers, arms)] = run(stable(LEADER, FOLLOWER), "JoinGroup/static-rejoin", "2.4.1", 1)
    assert answers == (Answer(1, "JoinGroup", "NONE", "current", "static"),)
    assert after.group == STABLE and after.appends == ()
    assert after.slots == (LEADER, FOLLOWER, Slot(ABSENT, watch=1), FREE)   # the old incarnation's op stays
    assert arms == (Arm("heartbeat", 1, "session"),)


@pytest.mark.parametrize("profile", ["2.7.0", "3.9"])
def test_restart_in_stable_from_2_6_1_is_stored_and_answered_by_the_store_callback(profile: str) -> None:
    """2.6.1/2.7.0+ (KAFKA-10284): storeGroup with the current assignments; the JoinGroup stays parked."""
    [(after, answers, _)] = run(stable(LEADER, FOLLOWER), "JoinGroup/static-rejoin", profile, 1)
    assert answers == () and after.group == STABLE and after.appends == ("static",)
    assert after.slots[1] == replace(FOLLOWER, awaiting_join=True, persist=True)
    ok = run(after, "CompleteAppend", profile, arg="ok")
    assert [(a.slots[1], ans) for a, ans, _ in ok] == [
        (FOLLOWER, (Answer(1, "JoinGroup", "NONE", "current", "static"),))]
    # on error: revert the replacement, answer the store error (mapped, §3.2) with member id ""
    failed = run(after, "CompleteAppend", profile, arg="error", detail="NOT_LEADER_OR_FOLLOWER")
    assert {ans for _, ans, _ in failed} == {(Answer(1, "JoinGroup", "NOT_COORDINATOR", "current", "error+prior"),)}
    assert all(a.slots[1] == FOLLOWER for a, _, _ in failed)


def test_restart_in_stable_with_changed_metadata_may_rebalance() -> None:
    """2.6.1+: if re-selecting the protocol with the new metadata would change it → maybePrepareRebalance."""
    groups = sorted(a.group for a, _, _ in run(stable(LEADER, FOLLOWER), "JoinGroup/static-rejoin", "3.9", 1,
                                               "changed"))
    assert groups == [PREPARING, STABLE]


def test_a_synchronous_store_answers_in_the_same_step() -> None:
    [(after, answers, _)] = run(stable(LEADER, FOLLOWER), "JoinGroup/static-rejoin", "3.9", 1,
                                scope=replace(SCOPE, deferred_appends=False))
    assert answers == (Answer(1, "JoinGroup", "NONE", "current", "static"),) and after.appends == ()


@pytest.mark.parametrize("profile,rebalances", [("2.4.1", False), ("2.7.0", True), ("3.9", True)])
def test_restart_in_completing_rebalance_fences_the_parked_sync(profile: str, rebalances: bool) -> None:
    """CompletingRebalance: 2.3–2.4 the immediate answer; 2.5.0+ prepareRebalance (KAFKA-9801). Either way the old
    incarnation's parked SyncGroup is answered FENCED_INSTANCE_ID."""
    state = State(COMPLETING, slots=(LEADER, replace(FOLLOWER, awaiting_sync=True, watch=0), FREE), fresh=False)
    [(after, answers, _)] = run(state, "JoinGroup/static-rejoin", profile, 1)
    assert Answer(1, "SyncGroup", "FENCED_INSTANCE_ID") in answers
    assert after.group == (PREPARING if rebalances else COMPLETING)
    assert (Answer(1, "JoinGroup", "NONE", "current", "static") in answers) is not rebalances
    assert after.slots[0].leader and after.slots[1].static   # leadership and the instance stay with the slots


@pytest.mark.parametrize("profile", STATIC)
def test_restart_in_preparing_rebalance_fences_the_parked_join_and_waits(profile: str) -> None:
    state = State(PREPARING, JOIN, slots=(LEADER, replace(FOLLOWER, awaiting_join=True, watch=0), FREE), fresh=False)
    [(after, answers, _)] = run(state, "JoinGroup/static-rejoin", profile, 1)
    assert answers == (Answer(1, "JoinGroup", "FENCED_INSTANCE_ID", "none", "error+id"),)
    assert after.group == PREPARING and after.slots[1].awaiting_join


# -- §4.4: join completion keeps static members that did not rejoin -----------------------------------------------
@pytest.mark.parametrize("profile", STATIC)
def test_a_static_leader_that_did_not_rejoin_stays_and_hands_over_the_leadership(profile: str) -> None:
    state = State(PREPARING, JOIN, slots=(LEADER, replace(FOLLOWER, awaiting_join=True), FREE), fresh=False)
    found = run(state, "ExpireJoin", profile)   # 2.4.1: a reschedule may fall in its old op's millisecond (§2)
    assert found
    for after, answers, _ in found:
        assert after.group == COMPLETING
        assert after.slots[0].member and after.slots[0].static and not after.slots[0].leader
        assert after.slots[1].leader
        assert answers == (Answer(1, "JoinGroup", "NONE", "new", "leader+members"),)   # none for slot 0


@pytest.mark.parametrize("profile", STATIC)
def test_only_static_members_that_did_not_rejoin_make_the_join_phase_wait_again(profile: str) -> None:
    state = State(PREPARING, JOIN, slots=(LEADER, FOLLOWER, FREE), fresh=False)
    [(after, answers, arms)] = run(state, "ExpireJoin", profile)
    assert (after.group, after.join_op, answers, arms) == (PREPARING, JOIN, (), (Arm("join", -1, "rebalance"),))
    assert after.slots[:2] == (LEADER, FOLLOWER)


# -- fencing and the instance checks (§3.8, J5b step 4) ----------------------------------------------------------
@pytest.mark.parametrize("profile", STATIC)
def test_a_request_with_another_members_instance_id_is_fenced(profile: str) -> None:
    state = stable(LEADER, FOLLOWER)
    for kind in ("Heartbeat", "SyncGroup", "OffsetCommit", "LeaveGroup"):
        [(after, answers, _)] = run(state, kind, profile, 1, "fenced")
        assert (after, answers) == (state, (Answer(1, kind, "FENCED_INSTANCE_ID"),))


@pytest.mark.parametrize("profile,error", [("2.4.1", "NONE"), ("2.7.0", "NONE"), ("3.9", "UNKNOWN_MEMBER_ID")])
def test_an_unknown_instance_id_is_refused_only_by_validate_current_member(profile: str, error: str) -> None:
    found = run(stable(LEADER, FOLLOWER), "Heartbeat", profile, 1, "unknown-instance")
    assert found and {answers for _, answers, _ in found} == {(Answer(1, "Heartbeat", error),)}


@pytest.mark.parametrize("profile", STATIC)
def test_a_join_with_an_unknown_instance_id_is_refused_in_every_release(profile: str) -> None:
    """J5b step 5 ("memberId not in group (or given instance id unknown) → UNKNOWN_MEMBER_ID"): JoinGroup refuses
    it in 2.x too (GroupCoordinator.scala@2.4.1 L287-291 groupInstanceIdNotFound; Kafka's
    staticMemberJoinWithUnknownInstanceIdAndKnownMemberId); only the other 2.x APIs ignore the instance id."""
    state = stable(LEADER, FOLLOWER)
    found = run(state, "JoinGroup/known", profile, 1, "unknown-instance")
    assert found == [(state, (Answer(1, "JoinGroup", "UNKNOWN_MEMBER_ID", "none", "error+id"),), ())]


@pytest.mark.parametrize("profile", STATIC)
@pytest.mark.parametrize("cell", ["fenced", "unknown-instance"])
def test_a_leave_of_a_pending_id_is_judged_by_the_instance_id_only_before_3_x(profile: str, cell: str) -> None:
    """§3.4: [2.4] memberId ≠ "" and static fenced → FENCED_INSTANCE_ID, *then* a pending id is removed; [3.x] a
    pending id is removed first, validateCurrentMember (FENCED / unknown instance) only judges other ids."""
    pending = Slot(PENDING, watch=1)
    state = stable(LEADER, FOLLOWER, pending)
    found = run(state, "LeaveGroup", profile, 2, cell)
    if profile == "3.9":   # the pending id goes, its op completes; the static members are untouched
        assert [(a.slots[:3], answers) for a, answers, _ in found] == [
            ((LEADER, FOLLOWER, FREE), (Answer(2, "LeaveGroup", "NONE"),))]
    elif cell == "fenced":
        assert found == [(state, (Answer(2, "LeaveGroup", "FENCED_INSTANCE_ID"),), ())]
    else:
        # [2.4] past the fencing check a pending id carrying an instance id throws IllegalStateException
        # (GroupCoordinator.scala@2.4.1 L471-474): the labeller calls that static-pending; the handler answers
        # UNKNOWN_SERVER_ERROR and nothing changed (Kafka's staticMemberLeaveWithIllegalStateAsPendingMember)
        assert run(state, "LeaveGroup", profile, 2, "static-pending") == [
            (state, (Answer(2, "LeaveGroup", "UNKNOWN_SERVER_ERROR"),), ())]


@pytest.mark.parametrize("profile", STATIC)
def test_a_join_with_an_instance_id_from_a_pending_id_is_an_illegal_state(profile: str) -> None:
    """J5b step 3: a pending member id with a groupInstanceId → IllegalStateException; the request handler answers
    the API's error response (UNKNOWN_SERVER_ERROR, member id "", generation −1) and nothing changed."""
    state = State(PREPARING, JOIN, slots=(replace(LEADER, awaiting_join=True), FOLLOWER, Slot(PENDING, watch=1), FREE),
                  fresh=False)
    found = run(state, "JoinGroup/known", profile, 2, "static-pending")
    assert found == [(state, (Answer(2, "JoinGroup", "UNKNOWN_SERVER_ERROR", "none", "error"),), ())]


def test_without_kip_345_there_are_no_static_actions_and_an_instance_id_is_unsupported() -> None:
    assert not [a for a in enabled(State(slots=(FREE,) * 3), "0.10.0", SCOPE) if "static" in a.kind]
    [(_, answers, _)] = run(State(slots=(FREE,) * 3), "JoinGroup/new", "0.10.0", 0, "unsupported")
    assert answers == (Answer(0, "JoinGroup", "UNSUPPORTED_VERSION", "none", "error"),)


@pytest.mark.parametrize("profile", STATIC)
def test_a_new_instance_joins_as_a_static_member(profile: str) -> None:
    """J5a step 6: an unknown instance id is added (addMemberAndRebalance) and recorded in the static map."""
    [(after, answers, _)] = run(State(slots=(FREE,) * 3), "JoinGroup/static-new", profile, 0)
    assert after.slots[0].static and after.slots[0].member and after.slots[0].awaiting_join and answers == ()
    assert after.join_op != NO_JOIN

"""The documented findings of the KAFKA-10284 persist path (properties/findings.py), 2.6.1+: what a static restart in
Stable stores, and what its store callback does when it completes — each on the counterexample the gate found and
recorded (reports/findings/NAME/PROFILE/) once its static walks and static sweep reached Stable, and each excuse shown
narrow: on the recorded trace it covers the one step of its cause, and the property still catches a planted look-alike.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from core.actions import Action
from core.trace import Trace
from core.types import GroupState
from harness.client_versions import CLIENT_3_X
from harness.excuses import unexcused
from harness.replay import world_for
from impl.group import IllegalStateError
from impl.static_members import StaticMembershipMixin
from kgc.runs import REFINES, CheckedRun, actions_of, replay_checked
from model.state import AbstractAction, Scope, Slot, State
from model.step import outcomes
from properties.findings import get_finding
from properties.observation import observe

CAPTURED = get_finding("failed-static-store-answers-the-captured-join")
UNWATCHED = get_finding("static-store-answer-leaves-no-expiration")
DEPARTED = get_finding("failed-static-store-of-a-departed-member-throws")
UNLOADED = get_finding("unload-leaves-a-static-restarts-join-parked")
STRANDED = get_finding("unloaded-skip-assignment-leader-store-throws")
OWING = get_finding("static-restart-leaves-its-old-id-owing-a-sync")
REBALANCING = get_finding("v9-leader-store-throws-in-a-new-rebalance")
FOUND = (CAPTURED, UNWATCHED, DEPARTED, UNLOADED, STRANDED, OWING, REBALANCING)


def _record(name: str, profile: str) -> Trace:
    path = get_finding(name).record(profile) / "counterexample.json"
    return Trace.loads(path.read_text(encoding="utf-8"), source=str(path))


def test_the_findings_are_the_releases_with_the_persist_path() -> None:
    for f in FOUND:
        # KIP-814's skipAssignment (3.2+) and KAFKA-12890's pendingSyncMembers (2.8.1+) narrow the last two to 3.9
        only_3_9 = f in (STRANDED, OWING, REBALANCING)
        assert f.profiles == (("3.9",) if only_3_9 else ("2.7.0", "3.9")) and f.fixed_in is None, f.name


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


def _run(trace: Trace, join_group_version: int = 9) -> CheckedRun:
    """The record's actions on a fresh world (refinement on), its clients sending JoinGroup ``join_group_version``."""
    world = world_for(dataclasses.replace(trace, steps=()), record=True)
    if join_group_version != 9:
        version = dataclasses.replace(CLIENT_3_X, join_group_version=join_group_version)
        world.configs = tuple(dataclasses.replace(c, version=version) for c in world.configs)
        for client, config in zip(world.clients, world.configs, strict=True):
            client.config = config
    run = CheckedRun(world)
    for action in actions_of(trace):
        assert not run.over and world.is_enabled(action), action
        run.step(action)
    return run


def test_a_v9_leaders_store_on_an_unloaded_group_throws_and_strands_its_join() -> None:
    trace = _record(STRANDED.name, "3.9")
    with unexcused([STRANDED.name]):
        run = _run(trace)
    broken = {v.property: v for v in run.violations}
    last = run.world.steps[-1]
    # the record ends where its callback throws: a successful append completing on the group object an unload left
    # Dead breaks the finding's properties but the drop, which comes when that object goes out of reach (below)
    assert set(broken) == set(STRANDED.properties) - {"parked-request-is-answered-not-dropped"}, sorted(broken)
    assert {v.step for v in broken.values()} == {last.index}
    assert last.action.kind == "CompleteAppend" and last.action.arg == "NONE" and last.responses == ()
    obs = observe(run.world)
    orphan = next(g for g in obs.groups if not g.cached)
    parked = next(p for p in obs.parked if p.api == "JoinGroup")
    holder = orphan.member(parked.member_id)
    assert orphan.state is GroupState.DEAD and orphan.leader_id == parked.member_id and parked.asked_to_skip
    assert holder is not None and holder.group_instance_id is not None
    assert run.refinement is not None and not run.refinement.halfway   # the model predicted the error: still judged
    clean = _run(trace)   # excused (the default): the trace is clean, refinement included
    assert clean.violations == []


def test_a_v9_leaders_store_throws_even_when_a_rebalance_answered_its_join_first() -> None:
    """The finding's other way in, found by `kgc check --profile 3.9` (walk static-partition seed 25) before its excuse
    covered it: the restart's store waits, a DelayedSync expiry removes the other member and the rebalance it starts
    completes at once, answering the restarted leader's JoinGroup (generation 3); the partition is unloaded; then the
    store succeeds on the Dead object and its callback lists the members for the leader — which throws although
    nothing waits for the answer any more (GroupCoordinator.scala 3.9.0-rc3 lines 1409-1414 build the list before
    maybeInvokeJoinCallback; GroupMetadata.scala lines 591-593 throw on Dead)."""
    trace = Trace.loads((Path(__file__).parent / "data" / "v9-leader-store-after-its-join-was-answered.json")
                        .read_text(encoding="utf-8"))
    with unexcused([STRANDED.name]):
        run = _run(trace)
    assert [v.property for v in run.violations] == ["no-illegal-state-error"]
    assert run.violations[0].step == len(trace.steps) - 1
    answered = [st.index for st in run.world.steps for r in st.responses if r.key == (1, 1) and r.api == "JoinGroup"]
    assert answered and answered[0] < len(trace.steps) - 2    # answered by the rebalance, before the unload
    assert not any(p.api == "JoinGroup" for p in observe(run.world).parked)
    assert _run(trace).violations == []     # excused (the default): clean, the refinement included


def _until_the_dead_object_is_gone(run: CheckedRun) -> list[str]:
    """Step timers (the earliest first) until the unloaded group object is out of reach; the properties each broke."""
    broken: list[str] = []
    for _ in range(20):
        if all(g.cached for g in observe(run.world).groups):
            return broken
        timers = sorted((a for a in run.world.enabled() if a.kind in ("FireTimer", "AdvanceToNextDeadline")),
                        key=lambda a: (a.kind != "FireTimer", str(a.arg)))
        assert timers, "no timer left to fire"
        broken += [v.property for v in run.step(timers[0])]
    raise AssertionError("the unloaded group object stayed in reach")


def test_the_stranded_join_is_never_answered() -> None:
    """After the throw the JoinGroup stays parked on the Dead object until its last op fires and the object is out of
    reach: it leaves unanswered (Kafka's client times out), breaking parked-request-is-answered-not-dropped there."""
    trace = _record(STRANDED.name, "3.9")
    with unexcused([STRANDED.name]):
        run = _run(trace)
        broken = _until_the_dead_object_is_gone(run)
    assert broken[-1] == "parked-request-is-answered-not-dropped" and set(broken) <= set(STRANDED.properties)
    assert not any(r.key == (1, 1) for st in run.world.steps[len(trace.steps):] for r in st.responses)
    clean = _run(trace)
    assert _until_the_dead_object_is_gone(clean) == [] and clean.violations == []


def test_a_v8_leaders_store_on_an_unloaded_group_answers() -> None:
    """The same schedule with JoinGroup v8 (no skipAssignment): the callback answers from the Dead object (the older
    finding's case) — nothing is excused by the new finding, and nothing needs to be."""
    trace = _record(STRANDED.name, "3.9")
    with unexcused([STRANDED.name]):
        run = _run(trace, join_group_version=8)
    assert run.violations == []
    last = run.world.steps[-1]
    assert [(r.api, r.error) for r in last.responses] == [("JoinGroup", "NONE")]


def test_the_excuse_does_not_cover_a_non_v9_leader_that_throws(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted look-alike: a coordinator that cannot answer any static restart from a Dead object. With v8 clients
    the finding's excuses (on) do not apply: the error and the stranded join are caught."""
    original = StaticMembershipMixin._static_rejoin_result

    def throwing(self, group, rejoin):   # type: ignore[no-untyped-def]
        if group.state is GroupState.DEAD:
            raise IllegalStateError(f"planted: no answer from group {group.group_id} in Dead")
        return original(self, group, rejoin)

    monkeypatch.setattr(StaticMembershipMixin, "_static_rejoin_result", throwing)
    run = _run(_record(STRANDED.name, "3.9"), join_group_version=8)
    assert {v.property for v in run.violations} >= {"no-illegal-state-error", "parked-join-only-in-preparing-rebalance",
                                                    "parked-request-belongs-to-a-current-member"}


def test_the_model_has_no_answer_for_a_v9_leader_on_a_dead_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted mutant that answers the v9 leader from the Dead object (its member list read as if the group were
    Stable): refinement rejects the answer — the model's ``static`` shape has no layout for it there."""
    from impl.group import GroupMetadata
    original = GroupMetadata.current_member_metadata

    def listing(self):   # type: ignore[no-untyped-def]
        state, self.state = self.state, GroupState.STABLE
        try:
            return original(self)
        finally:
            self.state = state

    monkeypatch.setattr(GroupMetadata, "current_member_metadata", listing)
    run = _run(_record(STRANDED.name, "3.9"))
    assert [(v.property, v.step) for v in run.violations] == [(REFINES, run.world.steps[-1].index)]


def _stored_before_the_unload() -> CheckedRun:
    """STRANDED's record up to its second unload, then the store succeeds on the live group: the v9 leader's restart
    is answered from the store callback (KIP-814)."""
    trace = _record(STRANDED.name, "3.9")
    actions = actions_of(trace)
    cut = max(i for i, a in enumerate(actions) if a.kind == "UnloadGroup")
    store = actions[-1]
    assert store.kind == "CompleteAppend" and store.arg == "NONE"
    return _run_actions(trace, actions[:cut] + [store])


def _run_actions(trace: Trace, actions: list[Action]) -> CheckedRun:
    world = world_for(dataclasses.replace(trace, steps=()), record=True)
    run = CheckedRun(world)
    for action in actions:
        assert not run.over and world.is_enabled(action), action
        run.step(action)
    return run


def test_a_v9_leaders_store_answer_lists_the_members() -> None:
    """KIP-814 (Corrections 1): the store callback answers the v9 leader with the real leader, the member list and
    skipAssignment — and the generic JoinGroup properties judge that answer like any other, cleanly."""
    run = _stored_before_the_unload()
    answer = next(r for r in run.world.steps[-1].responses if r.api == "JoinGroup")
    group = run.world.coord.groups[run.world.group_id]
    assert answer.error == "NONE" and answer.skip_assignment and answer.leader_id == answer.member_id
    assert sorted(answer.members) == sorted(group.members)
    assert run.violations == []


def test_a_v9_leaders_store_answer_without_the_list_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted mutant that answers the v9 leader's restart without the member list: the leader-list property
    catches it (and refinement, through the model's static/skip layout)."""
    original = StaticMembershipMixin._static_rejoin_result

    def unlisted(self, group, rejoin):   # type: ignore[no-untyped-def]
        return dataclasses.replace(original(self, group, rejoin), members=())

    monkeypatch.setattr(StaticMembershipMixin, "_static_rejoin_result", unlisted)
    run = _stored_before_the_unload()
    assert {(v.property, v.step) for v in run.violations} == {
        ("only-the-leader-receives-the-member-list", run.world.steps[-1].index), (REFINES, run.world.steps[-1].index)}


def test_a_static_restart_leaves_its_old_id_owing_a_sync() -> None:
    trace = _record(OWING.name, "3.9")
    prop = "members-owing-a-sync-are-watched-by-a-delayed-sync"
    _, run, v = _unexcused_run(OWING.name, "3.9", prop)
    step = run.world.steps[v.step]
    replaced = [e for e in step.events if type(e).__name__ == "StaticMemberReplaced"]
    assert step.action.kind == "DeliverRequest" and len(replaced) == 1   # the restart itself
    old_id = replaced[0].old_member_id   # type: ignore[attr-defined]
    group = run.world.coord.groups[run.world.group_id]
    assert old_id in group.pending_sync_members and old_id not in group.members   # Corrections 3
    assert replay_checked(trace, actions_of(trace), prop) is None


def test_the_owed_sync_excuse_is_only_for_a_replaced_static_id() -> None:
    """Planted look-alikes on the recorded run (excuse on): an id in pendingSyncMembers that is no member and names
    no static instance, or names the instance of the member it still is, breaks the property."""
    from properties.concrete_state import pending_sync_watched
    trace = _record(OWING.name, "3.9")
    run = _run_actions(trace, actions_of(trace))
    group = run.world.coord.groups[run.world.group_id]
    assert pending_sync_watched(observe(run.world)) is None
    for planted in ("c9-1", "i9-1"):   # a dynamic-looking id, an instance the group does not have
        group.pending_sync_members.add(planted)
        witness = pending_sync_watched(observe(run.world))
        assert witness is not None and planted in witness["pending_sync_members"], planted
        group.pending_sync_members.discard(planted)


def test_a_v9_leaders_store_throws_in_a_new_rebalance() -> None:
    """Finding v9-leader-store-throws-in-a-new-rebalance, found by `kgc check --profile 3.9 --seed 1`: a static follower
    restarts in Stable (v9) and its store waits; the leader's instance leaves, the rebalance completes at once with the
    restarted member as leader (answering its join), another join begins the next rebalance — then the store succeeds
    and its callback lists the members for the leader in PreparingRebalance, which throws (GroupCoordinator.scala
    3.9.0-rc3 lines 1409-1414; GroupMetadata.scala lines 591-593). The model predicts it, so only the catalog's
    no-illegal-state-error sees it; with a JoinGroup v8 the callback lists nobody and nothing throws."""
    assert REBALANCING.profiles == ("3.9",) and REBALANCING.properties == ("no-illegal-state-error",)
    trace = _record(REBALANCING.name, "3.9")
    with unexcused([REBALANCING.name]):
        run = _run(trace)
    assert [(v.property, v.step) for v in run.violations] == [("no-illegal-state-error", len(trace.steps) - 1)]
    last = run.world.steps[-1]
    assert last.action.kind == "CompleteAppend" and last.action.arg == "NONE" and last.responses == ()
    group = run.world.coord.groups[run.world.group_id]
    assert group.state is GroupState.PREPARING_REBALANCE and group.get(group.leader_id).group_instance_id is not None
    assert "in PreparingRebalance" in run.world.coord.errors[-1]
    assert run.refinement is not None and not run.refinement.halfway   # the model predicted the error: still judged
    assert _run(trace).violations == []       # excused (the default): clean, the refinement included
    with unexcused([REBALANCING.name]):
        assert _run(trace, join_group_version=8).violations == []   # before v9 the answer lists nobody
    with unexcused([STRANDED.name]):          # this finding's own excuse covers it, not the unloaded one's
        assert _run(trace).violations == []


def test_the_model_lets_a_v9_leaders_store_in_preparing_rebalance_answer_nothing() -> None:
    """model/static.py ``_store_ok``: the restarted leader's join still parked when a new rebalance began; on a KIP-814
    release the successful store may answer it (an older JoinGroup) or throw and leave it parked (v9); before 3.2 it
    is answered."""
    state = State("PreparingRebalance", "join", appends=("static",), fresh=False, slots=(
        Slot(2, leader=True, awaiting_join=True, static=True, persist=True, watch=1), Slot(2, watch=1)))
    scope = Scope(static=True)
    for profile, parked_after in (("3.9", {False, True}), ("2.7.0", {False})):
        found = outcomes(state, AbstractAction("CompleteAppend", arg="ok"), profile, scope, canonical=False)
        answered = {any(a.api == "JoinGroup" for a in out.answers) for _, out in found}
        still = {t.slots[0].awaiting_join for t, _ in found}
        assert still == parked_after and answered == {not p for p in parked_after}, profile

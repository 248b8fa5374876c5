"""Documented findings (properties/findings.py): the reference coordinator breaking a seed rule or a catalog
property, reproduced by a short script each — and the qualified properties that the catalog states instead."""
from __future__ import annotations

import dataclasses

from core.actions import Action
from core.events import HeartbeatCompletedAtBirth, IllegalState, MemberAdded, MemberExpired, MemberLeaves, \
    MemberNotRejoined, of_kind
from harness.scenarios import BY_NAME
from properties.catalog import CATALOG, for_profile
from properties.findings import AFTER_ILLEGAL_STATE, FINDINGS
from properties.runtime_4x import RULES
from properties.observation import delivered_key
from properties.checker_side import OBSERVES, RAISES, REFINES
from tests.test_finding_stale_join import test_the_stale_delayed_join_completes_the_reloaded_members_heartbeat_ops as stale_join_completes_reloaded_heartbeats  # noqa: E501, F401 (named by the finding)
from tests.test_finding_mixed_static import test_a_join_with_an_instance_id_from_a_pending_member_id_throws as instance_id_with_a_pending_member_id_throws  # noqa: E501, F401 (named by the finding)
from tests.test_finding_mixed_static import test_a_leave_of_a_pending_member_id_with_a_foreign_instance_id_succeeds_on_3_9 as leave_of_a_pending_member_id_ignores_its_instance_id  # noqa: E501, F401 (named by the finding)
from tests.test_finding_static_store import test_a_failed_static_store_answers_the_join_it_captured as failed_static_store_answers_the_captured_join  # noqa: E501, F401 (named by the finding)
from tests.test_finding_static_store import test_a_static_stores_answer_leaves_the_member_without_an_expiration as static_store_answer_leaves_no_expiration  # noqa: E501, F401 (named by the finding)
from tests.test_finding_static_store import test_a_failed_store_of_a_departed_static_member_throws as failed_static_store_of_a_departed_member_throws  # noqa: E501, F401 (named by the finding)
from tests.test_finding_static_store import test_an_unload_leaves_a_static_restarts_join_parked_on_the_unloaded_object as unload_leaves_a_static_restarts_join_parked  # noqa: E501, F401 (named by the finding)
from tests.test_finding_static_store import test_a_v9_leaders_store_on_an_unloaded_group_throws_and_strands_its_join as unloaded_skip_assignment_leader_store_throws  # noqa: E501, F401 (named by the finding)
from tests.test_finding_static_store import test_a_v9_leaders_store_throws_in_a_new_rebalance as v9_leader_store_throws_in_a_new_rebalance  # noqa: E501, F401 (named by the finding)
from tests.test_finding_static_rekeyed import test_a_successful_store_answers_the_next_restart_with_its_old_id, test_a_failed_store_drops_the_next_restarts_join  # noqa: E501, F401 (named by the findings)
from tests.test_finding_static_store import test_a_static_restart_leaves_its_old_id_owing_a_sync as static_restart_leaves_its_old_id_owing_a_sync  # noqa: E501, F401 (named by the finding)
from tests.test_serve_static import test_2_4_1_a_static_restart_that_drops_the_group_protocol_is_the_documented_finding as static_restart_keeps_a_protocol_it_does_not_support  # noqa: E501, F401 (named by the finding)
from tests.test_catalog_4_1 import test_4_1_failed_static_store_reverts_protocols_after_a_rebalance  # noqa: E501, F401 (named by the finding)
from tests.property_runs import SCRIPT_SCOPE as SCOPE
from tests.property_runs import TWO_STABLE, WITNESS_SCRIPTS, run, run_script, scenario_triples

UNLOAD = dataclasses.replace(SCOPE, unload=True)
#: properties the checker itself owns (properties/checker_side.py), which a finding may break too
CHECKER_SIDE = (REFINES, OBSERVES, RAISES)
#: the Kafka 4.x runtime's rules (properties/runtime_4x.py), which a 4.1 finding breaks where the catalog does not judge
RUNTIME_RULES = tuple(r.name for r in RULES)


def test_every_finding_names_catalog_properties_and_its_test() -> None:
    names = set(globals())
    for f in FINDINGS:
        assert f.summary and f.profiles
        assert all(p in CATALOG or p in CHECKER_SIDE or p in RUNTIME_RULES or p.startswith("seed ")
                   for p in f.properties), f.properties
        assert all(t.strip() in names for t in f.shown_by.split(" and ")), f.shown_by
    assert {p for p, _ in AFTER_ILLEGAL_STATE} <= {p for f in FINDINGS for p in f.properties}


def test_0_10_0_keeps_two_live_heartbeats_after_two_reschedules_in_one_millisecond() -> None:
    prop = CATALOG["at-most-one-live-heartbeat-per-member"]
    assert not prop.applies("0.10.0")
    driver = scenario_triples(BY_NAME["same-millisecond-reschedule"], "0.10.0", props=(prop,))
    found = driver.checker.violations
    assert found and found[0].property == prop.name
    (seq1, d1), (seq2, d2) = found[0].witness["live_heartbeats"]
    assert seq1 != seq2 and d1 == d2          # same millisecond, same deadline, both live
    # with the catalog as published for 0.10.0, the same run is clean
    assert scenario_triples(BY_NAME["same-millisecond-reschedule"], "0.10.0").checker.violations == []


def test_2_4_1_member_past_its_join_response_has_no_session_expiration() -> None:
    prop = CATALOG["idle-member-has-a-live-heartbeat-expiration"]
    assert not prop.applies("2.4.1") and prop.applies("2.7.0")
    for other in ("fresh-heartbeat-not-completed-by-its-own-watch",
                  "silent-member-is-removed-within-its-session-timeout",
                  "parked-request-is-answered-within-its-phase-bound"):
        assert not CATALOG[other].applies("2.4.1") and CATALOG[other].applies("2.7.0"), other
    scenario = BY_NAME["first-join-completes-at-once"]   # the join completes in the millisecond of the add
    found = scenario_triples(scenario, "2.4.1", props=(prop,)).checker.violations
    assert found and found[0].property == prop.name
    assert found[0].witness["live_heartbeat_deadlines"] == [300_000]   # only the 5-minute op, armed at 0
    assert scenario_triples(scenario, "2.7.0", props=(prop,)).checker.violations == []


def _births(driver: object) -> list[tuple[str, bool]]:
    """(member, did it have a parked request) for every 'completed at birth' event of a run: parked right after
    the step, or parked by the step itself (its SyncGroup, answered within the step by the leader's append)."""
    out = []
    for before, step, after in driver.triples:  # type: ignore[attr-defined]
        key = delivered_key(step.action)
        req = before.request(key) if key else None
        for _, e in of_kind(step.events, HeartbeatCompletedAtBirth):
            member = after.group.member(e.member_id) if after.group else None
            parked_by_step = req is not None and req.api == "SyncGroup" and req.member_id == e.member_id
            out.append((e.member_id, parked_by_step or (member is not None and member.awaiting)))
    return out


def test_raw_seed_rule_fails_for_members_with_a_parked_request() -> None:
    """Seed 004 says the op just created is never completed by its own tryCompleteElseWatch; with a parked request
    it is (SPEC.md §4.6). The qualified catalog property holds on both runs."""
    old = scenario_triples(BY_NAME["heartbeat-deadlines-5-6-8"], "0.10.0")   # follower's parked SyncGroup
    new = run(WITNESS_SCRIPTS["a-fresh-heartbeat-is-completed-at-birth"], "3.9")   # heartbeat while SyncGroup waits
    for driver in (old, new):
        births = _births(driver)
        assert births and all(awaiting for _, awaiting in births), births   # the raw rule is broken ...
        assert driver.checker.violations == []                                # ... the qualified one is not
        assert "fresh-heartbeat-not-completed-by-its-own-watch" in {p.name for p in driver.checker.props}


def test_0_10_0_dead_to_dead_on_expiry() -> None:
    """A group unloaded in PreparingRebalance: its DelayedJoin expires, removes everyone, asserts Dead → Dead."""
    script = (("member_id", 0), ("call", 0, "JoinGroup"), ("call", 0, "SyncGroup"), ("member_id", 1),
              ("request", 1, "JoinGroup"), ("do", Action("UnloadGroup")), ("wait", 11000))
    prop = CATALOG["no-illegal-state-error"]
    old = run_script("0.10.0", UNLOAD, script, clients=2, props=for_profile("0.10.0", level="concrete") + (prop,))
    found = [v for v in old.checker.violations if v.property == prop.name]
    assert found and "before moving to Dead, but it is Dead" in found[0].witness["last_error"]
    expiry = old.world.steps[found[0].step]
    assert expiry.action.kind == "FireTimer" and any(isinstance(e, MemberNotRejoined) for e in expiry.events)
    assert old.checker.violations == found    # nothing else breaks on this path
    new = run_script("3.9", UNLOAD, script, clients=2)
    assert new.checker.violations == [] and new.world.coord.errors == []


def test_0_10_0_dead_to_dead_inside_a_request_answers_twice() -> None:
    """The stale DelayedJoin completes by its condition inside c2's JoinGroup to the reloaded group: the request
    is answered UNKNOWN_SERVER_ERROR while c2 stays parked on it, and is answered again when the join ends."""
    script = TWO_STABLE + (("wait", 2000), ("call", 0, "LeaveGroup"), ("do", Action("UnloadGroup")),
                           ("wait_until", 11001), ("do", Action("LoadGroup")), ("do", Action("LoadGroup")),
                           ("request", 2, "JoinGroup"))
    driver = run_script("0.10.0", UNLOAD, script, clients=3)
    step = driver.world.steps[-1]
    assert any(isinstance(e, IllegalState) for e in step.events)
    assert step.response_lines[0].startswith("c2 JoinGroup#1 UNKNOWN_SERVER_ERROR")
    at_step = {v.property for v in driver.checker.violations if v.step == step.index}
    assert at_step == {"each-request-is-answered-at-most-once", "parked-response-is-not-yet-answered"}
    assert {(p, "0.10.0") for p in at_step} <= AFTER_ILLEGAL_STATE
    # the new group's DelayedJoin expires (c0 left, c1 never rejoins): c2's parked JoinGroup is answered again
    driver.run(("wait", 20000))
    answers = [r for st in driver.world.steps for r in st.response_lines if r.startswith("c2 JoinGroup#1 ")]
    assert len(answers) == 2 and answers[1].startswith("c2 JoinGroup#1 NONE"), answers


def test_0_10_0_leave_drops_a_parked_join_as_documented() -> None:
    """Before 2.2.0 removeMemberAndUpdateGroup did not answer a parked JoinGroup (SPEC.md §3.4): c0's request is
    gone without an answer — the one exception parked-request-is-answered-not-dropped names; 3.9 answers it."""
    script = TWO_STABLE + (("member_id", 2), ("request", 2, "JoinGroup"), ("request", 0, "JoinGroup"),
                           ("call", 0, "LeaveGroup"))
    for profile in ("0.10.0", "3.9"):
        driver = run_script(profile, SCOPE, script, clients=3)
        before, step, after = driver.triples[-2]            # the LeaveGroup's delivery
        join_key = next(p.key for p in before.parked if p.member_id.startswith("c0-"))
        answers = [r for st in driver.world.steps for r in st.response_lines
                   if r.startswith(f"c0 JoinGroup#{join_key[1]} ")]
        assert driver.checker.violations == []
        if profile == "0.10.0":
            assert answers == [] and join_key not in after.parked_keys
            prop = CATALOG["parked-request-is-answered-not-dropped"]
            hidden = dataclasses.replace(step, events=tuple(e for e in step.events if not isinstance(e, MemberLeaves)))
            assert prop.explain(before, hidden, after)["request"] == join_key   # the leave is what excuses it
        else:
            assert answers == [f"c0 JoinGroup#{join_key[1]} UNKNOWN_MEMBER_ID"]


def test_3_9_new_member_is_removed_by_its_five_minute_op_while_parked() -> None:
    """KAFKA-7610: the one member a parked JoinGroup does not keep alive. c0 (adversarial, never rejoins) keeps
    itself alive with heartbeats; c1's JoinGroup waits in a 10-minute join phase until its 5-minute op expires."""
    driver = run(WITNESS_SCRIPTS["a-new-member-is-removed-by-the-new-member-timeout"], "3.9")
    assert driver.checker.violations == []
    assert "a-new-member-is-removed-by-the-new-member-timeout" in driver.checker.seen
    index = driver.checker.seen["a-new-member-is-removed-by-the-new-member-timeout"]
    before, removal, _after = driver.triples[index]
    gone = next(e.member_id for _, e in of_kind(removal.events, MemberExpired))
    added = next(st.time_ms for st in driver.world.steps if MemberAdded(gone) in st.events)
    member = before.group.member(gone)  # type: ignore[union-attr]
    assert member is not None and member.is_new and member.awaiting_join is not None
    assert removal.time_ms == added + 300000 + 1   # the 5-minute op, fired at deadline + 1 (deadline < now)


def test_4_1_sync_in_stable_keeps_the_session_timer() -> None:
    """R9: a follower's SyncGroup that finds the group Stable is answered NONE and its session timer keeps the
    deadline the join completion gave it; the rule that states 3.x's reschedule is silent while the finding is
    excused and reports exactly that step once it is not (walk seed 9 of the calm scope, 3 Java consumers)."""
    import random

    from harness.excuses import unexcused
    from harness.scope import Scope
    from harness.world import World
    from properties.runtime_4x import checked_walk, R9_FINDING
    calm = Scope(append_mode="deferred", commits=True, leaves=False, group_initial_rebalance_delay_ms=0,
                 session_timeout_ms=(6000, 9000, 12000), advance_ms=(1000, 4000))

    def walk() -> list:   # type: ignore[type-arg]
        world = World("4.1", calm, seed=9)
        rng = random.Random(9)
        return checked_walk(world, 300, lambda enabled: enabled[rng.randrange(len(enabled))])
    assert walk() == []
    with unexcused([R9_FINDING]):
        found = walk()
    assert [v.rule for v in found] == ["sync-in-stable-extends-the-session"]
    assert "in Stable answered NONE" in found[0].reason and "without rescheduling its session timer" in found[0].reason


def test_4_1_max_size_refusal_leaves_the_join_waiting() -> None:
    """R10: with group.max.size 2 and three Java consumers, a pending member refused GROUP_MAX_SIZE_REACHED in a
    non-initial PreparingRebalance was the last one the join waited for: every member awaits the join, yet the join
    timer stays armed (3.x completes the join at once). Walk seed 1 of the gate's max-size walk."""
    import random

    from harness.excuses import unexcused
    from harness.world import World
    from kgc.gate import MAX_SIZE_WALKS, walk_configs
    from properties.runtime_4x import R10_FINDING, checked_walk
    scope, clients = MAX_SIZE_WALKS["max-size"]
    assert ("max-size", scope, clients) in walk_configs("4.1") and ("max-size", scope, clients) not in \
        walk_configs("3.9")

    def walk() -> list:   # type: ignore[type-arg]
        world = World("4.1", scope, clients=clients, seed=1)
        rng = random.Random(1)
        return checked_walk(world, 400, lambda enabled: enabled[rng.randrange(len(enabled))])
    assert walk() == []
    with unexcused([R10_FINDING]):
        found = walk()
    assert [v.rule for v in found] == ["max-size-refusal-completes-the-join"]
    assert "GROUP_MAX_SIZE_REACHED" in found[0].reason and "waits for its timer" in found[0].reason


def test_4_1_reverted_group_join_timer_fires_on_its_successor() -> None:
    """A failed flush drops the group its batch created, but not the group's initial join timer; a JoinGroup then
    creates a new group of the same id (Empty, the caller pending: MEMBER_ID_REQUIRED), and the old timer completes
    the join on it: generation 0 → 1, then Empty → Empty throws. Replays the recorded 20-step counterexample (walk
    static-mixed seed 200008, shrunk): silent while the finding is excused, the rule's violation at the timer once
    not."""
    from pathlib import Path

    from core.trace import Trace
    from harness.excuses import unexcused
    from kgc.runs import actions_of, world_for
    from properties.runtime_4x import STALE_JOIN_FINDING, checked_step, rules_for
    path = Path(__file__).resolve().parent.parent / "reports" / "findings" / STALE_JOIN_FINDING / "4.1" / \
        "counterexample.json"
    trace = Trace.loads(path.read_text(encoding="utf-8"))

    def replay() -> tuple[list, object]:   # type: ignore[type-arg]
        world = world_for(dataclasses.replace(trace, steps=()), record=True)
        found = [v for a in actions_of(trace) for v in checked_step(world, a, rules_for("4.1"))]
        return found, world
    found, _ = replay()
    assert found == []
    with unexcused([STALE_JOIN_FINDING]):
        found, world = replay()
    assert [(v.rule, v.step) for v in found] == [("no-illegal-state-in-an-event", 19)]
    steps = world.steps   # type: ignore[attr-defined]
    assert steps[19].action.kind == "FireTimer" and (steps[19].group_state, steps[19].generation_id) == ("Empty", 1)
    assert (steps[18].group_state, steps[18].generation_id) == ("Empty", 0)
    assert any(s.action.kind == "FlushBatch" and s.action.arg != "NONE" for s in steps[:19])
    assert "should be in one of ['PreparingRebalance'] states before moving to Empty" in found[0].reason

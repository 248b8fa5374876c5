"""Abstract-edge coverage of the gate: the denominator, its reasons, the directed phase (kgc/directed.py)."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest

from explore.coverage import NOT_REACHED, NOT_REALISED, NOT_TRIED, SOURCE_UNREACHED, measure, not_offered
from explore.deadlines import REASON as UNTIMED
from explore.deadlines import applies as deadlines_apply
from harness.refinement import model_edge
from harness.world import World
from kgc.directed import Coverage, fork, profile_map, report
from kgc.gate import WALK_KINDS, WALK_SCOPES, Plan, directed_phase, walk_phase
from kgc.runs import CheckedRun

SMALL = Plan(walk_seeds=1, walk_steps=400, machine_examples=0, sweep_steps=4800)
#: about the same number of steps spent on walks alone (2 seeds x 13 configurations x 400 steps on 0.10.0)
WALKS_ONLY = Plan(walk_seeds=2, walk_steps=400, machine_examples=0)


def _walks_then_directed(profile: str, seed: int) -> tuple[Coverage, Coverage]:
    walked = Coverage(set(), set())
    walk_phase(profile, None, SMALL, seed, walked)
    both = Coverage(set(walked.states), set(walked.edges))
    _, found = directed_phase(profile, None, SMALL, seed, both)
    assert found is None
    return walked, both


@pytest.mark.parametrize("profile", ["0.10.0", pytest.param("3.9", marks=pytest.mark.slow)])   # 3.9: 37 s
def test_directed_phase_covers_more_than_walks_with_the_same_steps(profile: str) -> None:
    cmap = profile_map(profile, WALK_SCOPES, WALK_KINDS)
    walks_only = Coverage(set(), set())
    walk_phase(profile, None, WALKS_ONLY, 0, walks_only)
    walked, both = _walks_then_directed(profile, 0)
    assert walked.edges <= both.edges
    assert report(cmap, both).covered_edges > report(cmap, walks_only).covered_edges
    assert report(cmap, both).covered_states > report(cmap, walks_only).covered_states


def test_coverage_numbers_and_listing_are_deterministic_per_seed() -> None:
    cmap = profile_map("3.9", WALK_SCOPES, WALK_KINDS)
    first, second = (report(cmap, _walks_then_directed("3.9", 7)[1]) for _ in range(2))
    assert first == second
    other = report(cmap, _walks_then_directed("3.9", 8)[1])
    assert other.covered_edges > 0 and other.reachable_edges == first.reachable_edges


def test_a_bug_after_a_second_rebalance_is_found_by_the_directed_phase_and_not_by_walks() -> None:
    """store-callback-ignores-generation needs a leader's SyncGroup store that lands after the group moved
    to a new generation: walks of the same number of steps from the initial state miss it."""
    mutant = "store-callback-ignores-generation"
    _, missed = walk_phase("0.10.0", mutant, WALKS_ONLY, 0, Coverage(set(), set()))
    assert missed is None
    cov = Coverage(set(), set())
    _, walked = walk_phase("0.10.0", mutant, SMALL, 0, cov)
    assert walked is None
    _, found = directed_phase("0.10.0", mutant, SMALL, 0, cov)
    assert found is not None and found.violation.property == "store-callback-generation-guard"
    assert found.phase.startswith("directed ") and found.trace.steps[0].index == 0   # a trace from the start


def test_the_uncovered_list_is_well_formed() -> None:
    cmap = profile_map("0.10.0", WALK_SCOPES, WALK_KINDS)
    walked = Coverage(set(), set())
    walk_phase("0.10.0", None, Plan(walk_seeds=1, walk_steps=100, machine_examples=0), 0, walked)
    cov = report(cmap, walked)
    rows = cov.uncovered
    assert len(set(rows)) == len(rows) == cov.model_edges - cov.covered_edges
    assert sum(r[3].startswith(NOT_REACHED) for r in rows) == cov.missing == cov.reachable_edges - cov.covered_edges
    assert list(rows) == sorted(rows, key=lambda r: (not r[3].startswith(NOT_REACHED), r[3], r[0], r[1], r[2]))
    assert all(r[3] for r in rows) and cov.covered_states <= cov.reachable_states
    reasons = {r[3] for r in rows}
    assert "the scope has resubscribes=False: no client changes its protocol metadata" in reasons
    # the churn scope's Java consumers change their subscription: its JoinGroup/changed edges are reachable
    assert any(r[1].startswith("JoinGroup/changed") and r[3].startswith(NOT_REACHED) for r in rows)
    assert cov.to_json()["abstract_edges_not_offered"] == cov.model_edges - cov.reachable_edges


def test_not_offered_argues_from_the_clients_and_the_scope() -> None:
    calm, churn = WALK_SCOPES["calm"], WALK_SCOPES["churn"]
    assert not_offered("LeaveGroup", "", calm, WALK_KINDS, "3.9") is not None      # leaves=False
    assert not_offered("LeaveGroup", "", churn, WALK_KINDS, "3.9") is None
    assert not_offered("JoinGroup/new", "", churn, WALK_KINDS, "3.9") is not None  # 3.x clients go pending
    assert not_offered("JoinGroup/new", "", churn, WALK_KINDS, "0.10.0") is None
    assert not_offered("OffsetCommit/simple", "", churn, ("java",), "3.9") is not None
    assert not_offered("OffsetCommit/simple", "", churn, WALK_KINDS, "3.9") is None
    assert not_offered("CompleteAppend", "error", calm, WALK_KINDS, "3.9") is not None
    assert not_offered("CompleteAppend", "error", WALK_SCOPES["faults"], WALK_KINDS, "3.9") is None
    assert not_offered("JoinGroup/changed", "", calm, WALK_KINDS, "3.9") is not None    # resubscribes=False
    assert churn.resubscribes and not_offered("JoinGroup/changed", "", churn, WALK_KINDS, "3.9") is None


@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
def test_refinement_credits_the_action_a_step_is_not_the_first_between_its_states(profile: str) -> None:
    """Coverage keys come from the labelled refinement (harness/labels.py): each recorded edge passed the
    output check as the transition of the very action the step was, and some steps are credited to an action
    other than the first one ``model_edge`` finds between the same two states (a state-pair labelling's)."""
    cmap = profile_map(profile, {"faults": WALK_SCOPES["faults"]}, WALK_KINDS)
    assert not any(why.startswith("shadowed") for why in cmap.excluded.values())
    differs = 0
    for seed in range(4):
        run = CheckedRun(World(profile, WALK_SCOPES["faults"], clients=("java", "java", "adversarial"), seed=seed,
                               record=True))
        rng = random.Random(seed)
        for _ in range(300):
            choices = run.world.enabled()
            if not choices or run.over:
                break
            run.step(choices[rng.randrange(len(choices))])
        assert not run.violations
        assert run.refinement is not None
        for b, act, a in run.refinement.coverage.edges:    # each passed mismatch(): act's model transition
            first = model_edge(profile, run.world.coord, b, a)[1]
            assert first is not None
            differs += first != act
    assert differs > 0


def test_a_fork_checks_on_exactly_like_the_original() -> None:
    run = CheckedRun(World("3.9", WALK_SCOPES["churn"], clients=("java", "java", "adversarial"), seed=3, record=True))
    rng = random.Random(3)
    for _ in range(60):
        choices = run.world.enabled()
        run.step(choices[rng.randrange(len(choices))])
    twin = fork(run)
    assert twin.world.snapshot() == run.world.snapshot() and twin.world.steps == run.world.steps
    taken = []
    for _ in range(80):
        choices = run.world.enabled()
        taken.append(choices[rng.randrange(len(choices))])
        run.step(taken[-1])
    for action in taken:
        twin.step(action)
    assert not run.violations and not twin.violations
    assert twin.world.snapshot() == run.world.snapshot()
    assert [s.digest for s in twin.world.steps] == [s.digest for s in run.world.steps]
    assert twin.refinement.coverage.edges <= run.refinement.coverage.edges


def test_measure_counts_only_edges_inside_the_map() -> None:
    cmap = profile_map("3.9", {"churn": WALK_SCOPES["churn"]}, WALK_KINDS)
    some = sorted(cmap.reachable_edges, key=lambda e: (e[0].short(), e[1], e[2].short()))[:5]
    cov = measure(cmap, set(), set(some))
    assert cov.covered_edges == 5 and cov.outside_map == 0
    outside = (some[0][0], "Heartbeat(Mw)", some[0][0])    # a stutter is never in the map
    assert measure(cmap, set(), {outside}).covered_edges == 0


def test_an_uncovered_edge_says_whether_its_source_was_reached_and_whether_a_plan_went_for_it() -> None:
    cmap = profile_map("3.9", {"churn": WALK_SCOPES["churn"]}, WALK_KINDS)
    a, b, c = sorted(cmap.reachable_edges, key=lambda e: (e[0].short(), e[1], e[2].short()))[:3]
    reasons = {(r[0], r[1], r[2]): r[3] for r in measure(cmap, {a[0], b[0]}, set(), {a}).uncovered}
    assert reasons[(a[0].short(), a[1], a[2].short())] == f"{NOT_REACHED}: {NOT_REALISED}"
    assert reasons[(b[0].short(), b[1], b[2].short())] == f"{NOT_REACHED}: {NOT_TRIED}"
    unreached = [r for e, r in reasons.items() if e[0] not in (a[0].short(), b[0].short()) and e[1] == c[1]]
    assert unreached and all(r == f"{NOT_REACHED}: {SOURCE_UNREACHED}" for r in unreached)


def _key(edges: object, before: str, label: str, after: str) -> tuple:
    return next(e for e in edges if (e[0].short(), e[1], e[2].short()) == (before, label, after))   # type: ignore


def test_time_rules_out_a_second_heartbeat_op_of_a_member_awaiting_since_the_rebalance_began() -> None:
    """explore/deadlines.py on 0.10.0: the leader's JoinGroup began the rebalance (with three members holding ops no
    other request does, and a new member holds none while it awaits its join), so its op is older than the DelayedJoin
    and cannot be in the millisecond the join completes: onCompleteJoin's reschedule leaves it one op (SPEC.md §4.6).
    A follower that committed after the rebalance began (a reschedule in PreparingRebalance, §3.5) and then rejoined
    can — that edge stays, as does the one-op outcome. (Without resubscriptions: a leader that commits in
    PreparingRebalance and then rejoins with a changed subscription makes its op younger too, as the follower's.)"""
    cmap = profile_map("0.10.0", {"churn": replace(WALK_SCOPES["churn"], resubscribes=False)}, WALK_KINDS)
    source = "PreparingRebalance join=join sync=0 appends=[] slots=[MLJw MJw Mw]"
    leader = _key(cmap.excluded, source, "ExpireJoin",
                  "CompletingRebalance join=none sync=0 appends=[] slots=[MLww Mw -w]")
    assert cmap.excluded[leader] == UNTIMED
    for after in ("[MLw Mww -w]", "[MLw Mw -w]"):
        assert _key(cmap.reachable_edges, source, "ExpireJoin",
                    f"CompletingRebalance join=none sync=0 appends=[] slots={after}") not in cmap.excluded


def test_time_rules_out_an_expiry_that_needs_the_clock_to_pass_a_due_timer() -> None:
    """The partition scope (no commits): the members a join completion removes held only ops older than the
    DelayedJoin, so they are due when it fires (§4.9), and the leader's op, armed at that completion, cannot come due
    before they fire (the clock waits for due timers). With commits (churn) a removed member's op can be younger."""
    source, label = "CompletingRebalance join=none sync=0 appends=[] slots=[MLw -w]", "ExpireHeartbeat(MLw)"
    after = "Absent gen0 join=none sync=0 appends=[] slots=[]"
    partition = profile_map("0.10.0", {"partition": WALK_SCOPES["partition"]}, WALK_KINDS)
    assert partition.excluded[_key(partition.excluded, source, label, after)] == UNTIMED
    churn = profile_map("0.10.0", {"churn": WALK_SCOPES["churn"]}, WALK_KINDS)
    assert _key(churn.reachable_edges, source, label, after) in churn.reachable_edges


def test_the_time_argument_holds_only_for_fixed_session_deadline_arithmetic() -> None:
    assert deadlines_apply("0.10.0")
    assert not any(deadlines_apply(p) for p in ("2.4.1", "2.7.0", "3.9"))
    cmap = profile_map("3.9", {"churn": WALK_SCOPES["churn"]}, WALK_KINDS)
    assert UNTIMED not in cmap.excluded.values()


def test_no_edge_a_checked_run_took_is_one_time_rules_out() -> None:
    """Soundness on real runs: walks and the sweep on 0.10.0 never record an edge the denominator leaves out for
    time."""
    cmap = profile_map("0.10.0", WALK_SCOPES, WALK_KINDS)
    untimed = {e for e, why in cmap.excluded.items() if why == UNTIMED}
    assert untimed
    _, both = _walks_then_directed("0.10.0", 0)
    assert not both.edges & untimed

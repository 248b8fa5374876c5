"""Exploring profile 4.1 (issue 25): the Java coordinator, a release the model does not judge yet, explored like every
other profile with each edge judged by the runtime's rules (explore/rules.py) — its event loop's actions are the
edges, the runtime's seeded mutants are found with shortest counterexamples that replay, R9 and R10 are excused as in
the gate and found when unexcused, and its states are fingerprinted by their raw, canonical bytes."""
from __future__ import annotations

import json
import pickle
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from core.trace import Trace
from explore.canonical import canonical, corr_blind
from explore.local import bfs, dfs
from explore.pct import pct
from explore.rules import BY_RULES, judged_by_rules, rules_of
from explore.scopes import get_scope
from explore.space import Expander, ExploreSpec, fingerprint
from explore.traces import counterexample
from harness.excuses import unexcused
from harness.scope import Scope
from harness.world import World, plain_bytes
from impl.mutants import get_mutant
from kgc.cli import main
from model.releases import release
from properties.findings import FINDINGS
from properties.runtime_4x import R9_FINDING, R10_FINDING, RULES

FAULTS = get_scope("faults")
#: the 4.1 runtime's seeded mutants (impl/mutants/runtime_bugs.py) and the depth at which the faults scope with two
#: Java consumers first reaches each one's bug: a timer scheduled twice under one key (a join and its rejoin), a
#: LeaveGroup answered while the JoinGroup's write is unflushed, a write that times out
MUTANT_DEPTHS = {"timer-not-replaced-on-reschedule": 5, "answer-before-commit": 5,
                 "write-timeout-as-rebalance-in-progress": 7}


def _node(world: World) -> bytes:
    """The Expander's node of ``world`` with no monitors (a release judged by its rules has none)."""
    return plain_bytes((world.snapshot(), False, ()))


def test_4_1_is_judged_by_its_runtime_rules_because_it_is_not_runnable() -> None:
    assert not release("4.1").runnable and judged_by_rules("4.1")
    assert not any(judged_by_rules(p) for p in ("0.10.0", "2.4.1", "2.7.0", "3.9"))
    assert {r.name for r in rules_of("4.1")} == {r.name for r in RULES}
    expander = Expander(ExploreSpec("4.1", 2, 3, FAULTS))
    assert expander.rules is not None and not expander.checked and not expander.monitors
    assert Expander(ExploreSpec("3.9", 2, 3, FAULTS)).rules is None


def test_the_reference_breaks_no_rule_and_no_abstract_coverage_is_claimed() -> None:
    result = bfs(ExploreSpec("4.1", 2, 7, FAULTS))
    assert result.violations == {}
    assert result.levels == [1, 2, 5, 16, 49, 140, 391, 1058] and result.edges > result.states
    assert result.judged_by == BY_RULES and not result.coverage_collected
    assert (result.abstract_states, result.abstract_edges, result.model_states, result.witnesses) == (0, 0, 0, set())
    assert result.to_json()["coverage"]["collected"] is False


def test_the_event_loops_actions_are_the_edges() -> None:
    """FlushBatch (written or failed), CommitBatch, FireTimer and the clock are edges of the faults scope; a state
    whose last step met a choice point offers every other pick as a Choose edge, each to another state."""
    spec = ExploreSpec("4.1", 2, 6, FAULTS)
    expander = Expander(spec)
    kinds: Counter[str] = Counter()
    seen, frontier = {expander.root_fp}, [expander.root]
    for _level in range(spec.depth):
        nxt = []
        for node in frontier:
            actions = expander.actions(node)
            for index, fp, child, _sleep in expander.expand(node).children:
                kinds[f"{actions[index].kind}:{actions[index].arg}" if actions[index].kind == "FlushBatch"
                      else actions[index].kind] += 1
                if fp not in seen:
                    seen.add(fp)
                    nxt.append(child)
        frontier = nxt
    assert {"FlushBatch:NONE", "FlushBatch:NOT_LEADER_OR_FOLLOWER", "FlushBatch:NOT_ENOUGH_REPLICAS", "CommitBatch",
            "FireTimer", "AdvanceToNextDeadline"} <= set(kinds)
    assert "CompleteAppend" not in kinds     # 4.x writes are flushed and committed apart

    calm = Scope(append_mode="deferred", commits=True, leaves=False, group_initial_rebalance_delay_ms=0,
                 session_timeout_ms=(6000, 9000, 12000), advance_ms=(1000, 4000))
    world = next(w for w in (_walked(calm, seed) for seed in range(20)) if w.branch is not None)
    chooser = Expander(ExploreSpec("4.1", 3, 1, calm))
    node = _node(world)
    actions = chooser.actions(node)
    chosen = [i for i, a in enumerate(actions) if a.kind == "Choose"]
    children = {index: fp for index, fp, _child, _sleep in chooser.expand(node).children}
    assert chosen and all(i in children for i in chosen)
    assert len({children[i] for i in chosen}) == len(chosen)   # each pick reaches a state of its own


def _walked(scope: Scope, seed: int) -> World:
    world = World("4.1", scope, clients=3, seed=seed)
    rng = random.Random(seed)
    for _ in range(300):
        world.step(rng.choice(world.enabled()))
        if world.branch is not None:
            break
    return world


@pytest.mark.parametrize("mutant", sorted(MUTANT_DEPTHS))
def test_each_runtime_mutant_is_found_with_a_shortest_counterexample_that_replays(mutant: str) -> None:
    depth = MUTANT_DEPTHS[mutant]
    catches = get_mutant(mutant).catches
    assert not bfs(ExploreSpec("4.1", 2, depth, FAULTS)).violations
    spec = ExploreSpec("4.1", 2, depth, FAULTS, mutant=mutant)
    assert not bfs(replace(spec, depth=depth - 1)).violations        # the depth is the shortest one
    result = bfs(spec)
    assert set(result.violations) <= set(catches) and result.violations
    for found in result.violations.values():
        assert len(found.path) == depth
        trace = counterexample(spec, found)
        assert trace.violation is not None and trace.violation.property == found.property
        assert trace.violation.message == found.message and len(trace.steps) == depth
        assert Trace.loads(trace.dumps()).profile == "4.1"


def test_dfs_workers_and_pct_explore_4_1_like_bfs() -> None:
    spec = ExploreSpec("4.1", 2, 6, FAULTS, mutant="answer-before-commit")
    one = bfs(spec)
    assert bfs(spec, workers=2).counts() == one.counts()
    depth_first = dfs(spec)
    assert depth_first.states == one.states and set(depth_first.violations) == set(one.violations)
    assert bfs(replace(spec, por=True)).states == one.states
    schedules = pct(replace(spec, depth=40), 40, 40, 3, 0)
    assert schedules.states > 100 and set(schedules.violations) <= {"held-answers-wait-for-earlier-writes"}


def _path_of(spec: ExploreSpec, trace_file: Path) -> tuple[Expander, bytes, list[int]]:
    """The recorded counterexample's actions as the Expander's action indexes, from its root."""
    trace = Trace.loads(trace_file.read_text(encoding="utf-8"))
    expander = Expander(spec)
    world = World(spec.profile, spec.scope, clients=spec.kinds, record=False)
    path = []
    for step in trace.steps:
        path.append(world.enabled().index(step.action))
        world.step(step.action)
    return expander, expander.root, path


@pytest.mark.parametrize("name", [R9_FINDING, R10_FINDING])
def test_r9_and_r10_are_excused_as_in_the_gate_and_found_when_unexcused(name: str) -> None:
    """The explorer's step judges the finding's recorded counterexample (reports/findings/NAME/4.1) edge by edge: no
    violation while the finding is excused (the default, as in the gate), its rule on the last edge when not."""
    finding = next(f for f in FINDINGS if f.name == name)
    record = finding.record("4.1") / "counterexample.json"
    scope = json.loads(record.read_text(encoding="utf-8"))["scope"]
    clients = tuple(scope.pop("clients"))
    spec = ExploreSpec("4.1", len(clients), 200, Scope.from_json(scope), clients=clients)
    for excused in (True, False):
        found: list[tuple[int, str]] = []
        with unexcused([] if excused else [name]):
            expander, node, path = _path_of(spec, record)
            for depth, index in enumerate(path):
                fp, child, violations = expander.step_one(node, index)
                assert child is not None
                found += [(depth, prop) for prop, _i, _m in violations]
                node = child
        assert found == ([] if excused else [(len(path) - 1, finding.properties[0])])


def test_4_1_states_are_fingerprinted_raw_and_equal_worlds_give_equal_bytes() -> None:
    """canonical() and corr_blind() leave a 4.1 state as it is (explore/canonical.py: the Java runtime's layout is not
    relabelled); two orders of independent steps reach the same bytes, hence one node; every node restores to itself."""
    world = World("4.1", FAULTS, clients=2)
    for action in ("JoinGroup", 0), ("JoinGroup", 1):
        world.step(next(a for a in world.enabled() if (a.kind, a.client) == action))
    for client in (0, 1):
        world.step(next(a for a in world.enabled() if (a.kind, a.client) == ("DeliverRequest", client)))
    while log := [a for a in world.enabled() if a.kind == "CommitBatch" or (a.kind, a.arg) == ("FlushBatch", "NONE")]:
        world.step(log[0])
    state = world.to_state()
    assert canonical(state) is state and corr_blind(state[0]) is state[0]
    ends = []
    for first, second in ((0, 1), (1, 0)):
        copy = World("4.1", FAULTS, clients=2)
        copy.restore(world.snapshot())
        for client in (first, second):
            copy.step(next(a for a in copy.enabled() if (a.kind, a.client) == ("DeliverResponse", client)))
        ends.append(copy.snapshot())
    assert ends[0] == ends[1] and ends[0] != world.snapshot()
    assert fingerprint(plain_bytes((ends[0], False, ()))) == fingerprint(plain_bytes((ends[1], False, ())))
    expander = Expander(ExploreSpec("4.1", 2, 5, FAULTS))
    frontier = [expander.root]
    fresh = World("4.1", FAULTS, clients=2)
    for _level in range(5):
        frontier = [child for node in frontier for _i, _fp, child, _s in expander.expand(node).children]
        for node in frontier:
            world_bytes = pickle.loads(node)[0]
            fresh.restore(world_bytes)
            assert fresh.snapshot() == world_bytes


def _explore(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explore", "--no-progress", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_kgc_explore_profile_4_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _explore(capsys, "--profile", "4.1", "--depth", "5", "--scope", "faults", "--checkpoint-every",
                              "0", "--out", str(tmp_path / "ref"))
    assert code == 0, err
    assert "profile 4.1" in out and "runtime rules" in out and "not collected" in out
    saved = json.loads((tmp_path / "ref" / "explore.json").read_text())
    assert saved["judged_by"] == BY_RULES and saved["coverage"]["collected"] is False
    code, out, err = _explore(capsys, "--profile", "4.1", "--depth", "5", "--scope", "faults", "--mutant",
                              "timer-not-replaced-on-reschedule", "--out", str(tmp_path / "mut"))
    assert code == 1, err
    assert (tmp_path / "mut" / "timers-are-keyed" / "counterexample.json").is_file()
    code, _out, err = _explore(capsys, "--resume", str(tmp_path / "ref"), "--depth", "7")
    assert code == 0, err
    resumed = json.loads((tmp_path / "ref" / "explore.json").read_text())
    fresh = bfs(ExploreSpec("4.1", 2, 7, FAULTS))
    assert (resumed["states"], resumed["edges"], resumed["levels"]) == (fresh.states, fresh.edges, fresh.levels)
    code, _out, err = _explore(capsys, "--profile", "4.1", "--symmetry", "--out", str(tmp_path / "sym"))
    assert code == 2 and err.startswith("kgc: error: symmetry is not available on profile 4.1") and \
        len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("mutant", sorted(MUTANT_DEPTHS))
def test_the_4_1_gates_explore_phase_finds_every_runtime_mutant_by_itself(mutant: str) -> None:
    """kgc/gate.py runtime_explore_phase at the all-profile default budget (60 s a profile: depth 10, faults 8),
    whatever the walks found before it: the mutant's property, a shortest (BFS) counterexample."""
    from kgc.gate import Plan, runtime_explore_phase
    plan = Plan.for_budget(60.0)
    phase, found = runtime_explore_phase("4.1", mutant, plan)
    assert found is not None and found.violation.property in get_mutant(mutant).catches
    assert found.phase == "explore (BFS shortest)" and len(found.trace.steps) == MUTANT_DEPTHS[mutant]
    assert phase.runs in (1, 2) and phase.steps > 0


@pytest.mark.slow
def test_bfs_finds_r9_by_itself_when_unexcused() -> None:
    """Two Java consumers without leaves (basic scope): a follower's SyncGroup delivered after the leader's, in Stable,
    at depth 20 (223,404 states; minutes) — the shortest path to finding sync-in-stable-keeps-the-session-timer.
    Excused, the same search reports nothing."""
    spec = ExploreSpec("4.1", 2, 20, replace(get_scope("basic"), leaves=False))
    with unexcused([R9_FINDING]):
        result = bfs(spec)
    assert set(result.violations) == {"sync-in-stable-extends-the-session"}
    found = result.violations["sync-in-stable-extends-the-session"]
    assert len(found.path) == 20 and result.states == 223404
    with unexcused([R9_FINDING]):
        trace = counterexample(spec, found)
    assert [s.action.kind for s in trace.steps][-4:] == ["SyncGroup", "DeliverRequest", "SyncGroup", "DeliverRequest"]

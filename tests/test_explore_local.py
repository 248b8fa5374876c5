"""The local exploration engine: counts, shortest counterexamples, POR, DFS, resumption, PCT, the CLI.

Expected counts are not copied from the engine: level sizes are checked against a brute-force BFS
over World snapshots written here independently, and mutant counterexamples against the mutants'
named properties and an exhaustive search of all shorter paths.
"""
from __future__ import annotations

import json
from itertools import product

import pytest

from core.actions import Action
from explore.local import CheckpointError, bfs, dfs
from explore.pct import pct, source
from explore.result import Found
from explore.scopes import CI_DEPTH, CI_MEMBERS, CI_SCOPE, SCOPES, get_scope
from explore.space import Expander, ExploreSpec, independent
from explore.traces import PathDoesNotReproduce, actions_along, counterexample
from harness.replay import replay
from harness.world import World
from kgc.cli import main
from tests.explore_helpers import killed_run

BASIC = get_scope("basic")


def spec(members: int = 2, depth: int = 6, scope: str = "basic", **kw: object) -> ExploreSpec:
    return ExploreSpec("3.9", members, depth, get_scope(scope), **kw)  # type: ignore[arg-type]


def brute_force_levels(s: ExploreSpec) -> list[int]:
    """BFS over raw world snapshots (no monitors, no catalog): without a running liveness obligation the
    node is the world, so on a fault-free scope the level sizes must match the engine's."""
    world = World(s.profile, s.scope, clients=s.kinds, record=False)
    root = world.snapshot()
    seen, frontier, levels = {root}, [root], [1]
    for _ in range(s.depth):
        nxt = []
        for node in frontier:
            world.restore(node)
            for action in world.enabled():
                world.restore(node)
                world.step(action)
                child = world.snapshot()
                if child not in seen:
                    seen.add(child)
                    nxt.append(child)
        if not nxt:
            break
        levels.append(len(nxt))
        frontier = nxt
    return levels


def test_bfs_level_sizes_match_an_independent_brute_force_search() -> None:
    s = spec(members=2, depth=7, reduce=False)      # the raw space: the brute force deduplicates raw snapshots
    result = bfs(s)
    assert result.levels == brute_force_levels(s)
    assert result.states == sum(result.levels) and not result.violations
    assert result.edges > result.states - 1      # every node but the root has an incoming edge


def test_reference_3_members_at_the_ci_depth_has_no_violation() -> None:
    result = bfs(ExploreSpec("3.9", CI_MEMBERS, CI_DEPTH, get_scope(CI_SCOPE)))
    assert not result.violations, {k: v.message for k, v in result.violations.items()}
    assert result.states > 5000 and len(result.levels) == CI_DEPTH + 1
    assert {"a-group-becomes-stable", "a-member-is-removed-by-heartbeat-expiry"} <= result.witnesses
    assert result.abstract_states > 5 and result.abstract_edges > 5


def _violates_within(s: ExploreSpec, prop: str, length: int) -> bool:
    """Exhaustively: does any path of exactly ``length`` steps violate ``prop`` on its last step?"""
    ex = Expander(s)
    frontier = [ex.root]
    for depth in range(length):
        nxt = []
        for node in frontier:
            exp = ex.expand(node)
            if depth == length - 1 and any(p == prop for p, _i, _m in exp.violations):
                return True
            nxt.extend(child for _i, _fp, child, _s in exp.children)
        frontier = nxt
    return False


@pytest.mark.parametrize("mutant,prop", [("generation-not-bumped", "each-new-generation-increments-the-generation-id"),
                                         ("leader-not-reelected", "leader-is-a-member")])
def test_mutant_at_the_ci_depth_gives_the_shortest_counterexample(mutant: str, prop: str) -> None:
    s = ExploreSpec("3.9", CI_MEMBERS, CI_DEPTH, get_scope(CI_SCOPE), mutant=mutant)
    result = bfs(s)
    found = result.violations[prop]
    assert found.count >= 1
    n = len(found.path)
    assert not _violates_within(ExploreSpec("3.9", CI_MEMBERS, n, s.scope, mutant=mutant), prop, n - 1)
    trace = counterexample(s, found)
    assert trace.violation is not None and trace.violation.property == prop
    assert len(trace.steps) == n and trace.mutant == mutant
    replay(trace)                                   # the trace is a real, replayable kgc trace


def test_counterexample_refuses_a_path_that_does_not_violate() -> None:
    s = spec(depth=3)
    with pytest.raises(PathDoesNotReproduce):
        counterexample(s, Found("leader-is-a-member", 1, (0, 0), "x"))


def test_bfs_is_deterministic_and_counts_do_not_depend_on_the_run() -> None:
    s = spec(depth=7, mutant="generation-not-bumped")
    assert bfs(s).counts() == bfs(s).counts()


@pytest.mark.parametrize("scope,members,depth", [("basic", 3, 7), ("faults", 2, 6), ("crashes", 2, 7),
                                                 ("unload", 2, 7)])
def test_por_keeps_every_state_and_every_violated_property(scope: str, members: int, depth: int) -> None:
    for mutant in (None, "leader-not-reelected"):
        full = bfs(spec(members, depth, scope, mutant=mutant))
        reduced = bfs(spec(members, depth, scope, mutant=mutant, por=True))
        assert reduced.levels == full.levels and reduced.states == full.states
        assert set(reduced.violations) == set(full.violations)
        assert {k: len(v.path) for k, v in reduced.violations.items()} == \
               {k: len(v.path) for k, v in full.violations.items()}
        assert reduced.witnesses == full.witnesses
        assert reduced.edges <= full.edges


def test_por_prunes_edges_once_responses_race() -> None:
    s = spec(members=3, depth=9, por=True)
    reduced, full = bfs(s), bfs(spec(members=3, depth=9))
    assert reduced.pruned > 0 and reduced.edges < full.edges and reduced.states == full.states


def test_independence_relation_is_deliveries_to_different_clients_only() -> None:
    a, b, c = Action("DeliverResponse", 0, 1), Action("DeliverResponse", 1, 1), Action("DeliverResponse", 0, 2)
    assert independent(a, b) and independent(b, a)
    assert not independent(a, c) and not independent(a, Action("DeliverRequest", 1, 1))
    assert not independent(Action("FireTimer", -1, 3), Action("FireTimer", -1, 4))


def test_independent_deliveries_commute_in_the_world() -> None:
    """The POR argument, checked on real states: where two responses to different clients are in flight,
    both orders reach the same world and the same observation of the catalog."""
    ex = Expander(spec(members=3, depth=0))
    frontier, checked = [ex.root], 0
    for _ in range(9):
        nxt = []
        for node in frontier:
            actions = ex.actions(node)
            deliveries = [i for i, a in enumerate(actions) if a.kind == "DeliverResponse"]
            for i, j in product(deliveries, deliveries):
                if i < j and independent(actions[i], actions[j]):
                    _f1, n1, v1 = ex.step_one(node, i)
                    _f2, n2, v2 = ex.step_one(node, j)
                    assert n1 is not None and n2 is not None and not v1 and not v2
                    after_i = ex.actions(n1).index(actions[j])
                    after_j = ex.actions(n2).index(actions[i])
                    fp_ij, _n, _v = ex.step_one(n1, after_i)
                    fp_ji, _n, _v = ex.step_one(n2, after_j)
                    assert fp_ij == fp_ji
                    checked += 1
            nxt.extend(child for _i, _fp, child, _s in ex.expand(node).children)
        frontier = nxt[:400]
    assert checked > 0


def test_dfs_visits_the_same_states_as_bfs() -> None:
    for s in (spec(members=2, depth=8), spec(members=2, depth=6, scope="faults"),
              spec(members=2, depth=7, mutant="generation-not-bumped")):
        b, d = bfs(s), dfs(s)
        assert d.states == b.states
        assert set(d.violations) == set(b.violations)
        for name, found in d.violations.items():
            assert len(found.path) >= len(b.violations[name].path)


def test_a_stopped_run_resumes_from_its_checkpoint_with_the_same_counts(tmp_path) -> None:
    s = spec(members=2, depth=9, mutant="leader-not-reelected", por=True)
    whole = bfs(s)
    part = bfs(s, tmp_path, stop_after_level=4, checkpoint_every_s=0)
    assert part.states < whole.states
    resumed = bfs(s, tmp_path, resume=True)
    assert resumed.resumed_from_level == 4
    assert resumed.counts() == whole.counts()


def test_resume_refuses_another_space_and_a_missing_checkpoint(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="no checkpoint"):
        bfs(spec(), tmp_path, resume=True)
    bfs(spec(depth=3), tmp_path, stop_after_level=1)
    with pytest.raises(CheckpointError, match="another space"):
        bfs(spec(depth=3, members=3), tmp_path, resume=True)


def test_pct_is_deterministic_and_finds_a_mutant() -> None:
    s = spec(members=3, mutant="leader-not-reelected")
    one, two = pct(s, runs=60, length=40, bug_depth=3, seed=7), pct(s, runs=60, length=40, bug_depth=3, seed=7)
    assert one.counts() == two.counts() and one.edges > 0
    assert "leader-is-a-member" in one.violations
    found = one.violations["leader-is-a-member"]
    assert counterexample(s, found).violation.property == "leader-is-a-member"
    clean = pct(spec(members=3), runs=30, length=40, seed=7)
    assert not clean.violations and clean.states > 30


def test_pct_sources_group_a_clients_actions() -> None:
    assert source(Action("JoinGroup", 1, 0)) == source(Action("DeliverResponse", 1, 5)) == "client1"
    assert source(Action("FireTimer", -1, 3)) == "timer" and source(Action("CompleteAppend", -1, "NONE")) == "log"
    assert source(Action("AdvanceToNextDeadline", -1, 0)) == "clock"


def test_actions_along_names_the_steps_of_a_path() -> None:
    assert [a.kind for a in actions_along(spec(), (0, 0))] == ["JoinGroup", "DeliverRequest"]


def test_named_scopes_are_valid_and_bounded() -> None:
    assert "basic" in SCOPES and all(s.max_time_ms is not None for s in SCOPES.values())
    with pytest.raises(ValueError, match="unknown exploration scope"):
        get_scope("nope")


# --- the command line ---------------------------------------------------------------------------------
def test_cli_reference_passes_and_writes_a_summary(tmp_path, capsys) -> None:
    code = main(["explore", "--members", "2", "--depth", "6", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    data = json.loads((tmp_path / "explore.json").read_text())
    assert data["format"] == "kgc-explore/1" and data["states"] == sum(data["levels"]) and data["violations"] == {}
    assert "no property violated" in capsys.readouterr().out


def test_cli_mutant_writes_reports_for_every_violated_property(tmp_path, capsys) -> None:
    code = main(["explore", "--members", "2", "--depth", "7", "--mutant", "generation-not-bumped",
                 "--out", str(tmp_path), "--no-progress"])
    assert code == 1
    data = json.loads((tmp_path / "explore.json").read_text())
    for prop in data["violations"]:
        folder = tmp_path / prop
        assert (folder / "report.md").is_file() and (folder / "report.html").is_file()
        trace_json = json.loads((folder / "counterexample.json").read_text())
        assert trace_json["violation"]["property"] == prop
    assert "each-new-generation-increments-the-generation-id" in capsys.readouterr().out


def test_cli_resume_continues_a_killed_run(tmp_path) -> None:
    s = spec(members=2, depth=8)
    bfs(s, tmp_path, stop_after_level=3, checkpoint_every_s=0)     # as if killed after level 3
    code = main(["explore", "--members", "2", "--depth", "8", "--resume", str(tmp_path), "--no-progress"])
    assert code == 0
    data = json.loads((tmp_path / "explore.json").read_text())
    assert data["resumed_from_level"] == 3 and data["states"] == bfs(s).states


@pytest.mark.parametrize("argv,message", [
    (["explore", "--scope", "nope"], "unknown exploration scope"),
    (["explore", "--members", "0"], "members must be between"),
    (["explore", "--depth", "-1"], "depth must be >= 0"),
    (["explore", "--search", "dfs", "--por"], "--por works with --search bfs"),
    (["explore", "--engine", "spark", "--search", "pct"], "Spark engine runs BFS only"),
    (["explore", "--master", "spark://127.0.0.1:7077"], "--master needs --engine spark"),
    (["explore", "--mutant", "initial-delay-ends-early", "--profile", "0.10.0"], "applies to profile"),
    (["explore", "--mutant", "nope"], "nope"),
    (["explore", "--resume", "/nonexistent/dir"], "nothing to resume"),
])
def test_cli_usage_errors_are_one_sentence_and_exit_2(argv, message, capsys) -> None:
    assert main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("kgc: error: ") and err.count("\n") == 1


def test_a_sigkilled_local_run_resumes_and_ends_with_the_same_counts(tmp_path) -> None:
    killed_run(tmp_path, ["--checkpoint-every", "0"], "checkpoint.json", 11)
    assert main(["explore", "--members", "3", "--depth", "11", "--resume", str(tmp_path), "--no-progress"]) == 0
    data = json.loads((tmp_path / "explore.json").read_text())
    whole = bfs(ExploreSpec("3.9", 3, 11, get_scope("basic")))
    assert data["resumed_from_level"] >= 1 and data["states"] == whole.states and data["edges"] == whole.edges

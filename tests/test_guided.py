"""The model-guided search (explore/guided.py): plans in the abstract graph, realises each edge concretely."""
from __future__ import annotations

from explore.coverage import EdgeKey, scope_edges
from explore.directed import Runs, abstract_kind, directed_search
from explore.guided import _Search, guided_search
from harness.world import World, client_kinds
from kgc.directed import Coverage, _state, fork, guided, profile_map, run_edges
from kgc.gate import WALK_KINDS, WALK_SCOPES
from kgc.runs import CheckedRun

CHURN = WALK_SCOPES["churn"]
JAVA = ("java", "java", "java")


def _runs(profile: str, configs: list[tuple[object, tuple[str, ...]]], mutant: str | None = None
          ) -> Runs[CheckedRun]:
    def start(scope: object, clients: tuple[str, ...]) -> object:
        return lambda: CheckedRun(World(profile, scope, clients=clients, seed=0, record=True, mutant=mutant))
    return Runs(starts=[start(s, c) for s, c in configs], fork=fork, enabled=lambda r: r.world.enabled(),
                state=_state, edges=run_edges, failed=lambda r: bool(r.violations), world=lambda r: r.world)


def _search(profile: str = "3.9", covered: set[EdgeKey] | None = None) -> tuple[_Search[CheckedRun], frozenset]:
    edges = scope_edges(profile, CHURN, client_kinds(JAVA))
    search: _Search[CheckedRun] = _Search(_runs(profile, [(CHURN, JAVA)]), [edges], covered or set(), 0)
    search.keep(0, search.runs.starts[0]())
    return search, edges


def test_the_plan_is_a_path_from_a_kept_state_to_the_nearest_uncovered_edge() -> None:
    search, edges = _search()
    (initial,) = search.pool[0]
    first = sorted((e for e in edges if e[0] == initial), key=str)
    assert first   # the initial state has edges out of it
    _, path = search.plan(0)
    assert len(path) == 1 and path[0] in first            # nothing covered: the nearest is one step away
    search, _ = _search(covered=set(first))
    start, path = search.plan(0)
    assert start == initial and len(path) == 2
    assert path[0] in first and path[1] not in first and path[1][0] == path[0][2]   # a path, ending uncovered


def test_realising_an_edge_gives_a_run_that_took_exactly_it() -> None:
    search, edges = _search()
    (initial,) = search.pool[0]
    (run,) = search.pool[0][initial]
    join = next(e for e in sorted(edges, key=str) if e[0] == initial and abstract_kind(e[1]) == "JoinGroup/new-pending")
    took = search.realise(0, run, join)
    assert took is not None and run_edges(took) == {join} and _state(took) == join[2]
    assert run_edges(run) == set()                       # the kept run itself did not move
    assert join in search.covered and join[2] in search.pool[0]


def test_an_edge_of_another_scope_is_never_a_target() -> None:
    """A calm world (deferred appends, no leaves) is not asked for a LeaveGroup or a churn world's
    append-free edges: each configuration plans over its own scope's map only."""
    calm = scope_edges("3.9", WALK_SCOPES["calm"], client_kinds(JAVA))
    assert not any(abstract_kind(e[1]) == "LeaveGroup" for e in calm)
    assert calm != scope_edges("3.9", CHURN, client_kinds(JAVA))


def test_guided_search_is_deterministic_and_reaches_a_stable_group() -> None:
    cmap = profile_map("3.9", WALK_SCOPES, WALK_KINDS)
    configs = [(CHURN, JAVA), (WALK_SCOPES["calm"], ("java", "java", "adversarial"))]
    results = []
    for _ in range(2):
        cov = Coverage(set(), set())
        runs = _runs("3.9", configs)
        found = guided("3.9", configs, runs.starts, cmap, cov, 2500, 5)
        assert found.failed is None and found.steps >= 2500
        results.append((sorted(cov.edges, key=str), found.steps, found.rounds, found.kept_states))
    assert results[0] == results[1]
    edges = results[0][0]
    assert any(t.short().startswith("Stable") for _, _, t in edges)


def test_a_violation_on_a_planned_path_is_returned_with_its_run() -> None:
    """leader-not-reelected leaves leaderId on a removed member: the first leave or expiry of a leader breaks
    leader-is-a-member; the search stops there and hands back the run (the gate shrinks and reports it)."""
    configs = [(CHURN, JAVA)]
    runs = _runs("3.9", configs, mutant="leader-not-reelected")
    edges = scope_edges("3.9", CHURN, client_kinds(JAVA))
    found = guided_search(runs, [edges], set(), 20000, 0)
    assert found.failed is not None
    assert any(v.property == "leader-is-a-member" for v in found.failed.violations)
    assert found.steps < 20000


def test_the_novelty_walks_stop_when_they_level_off_and_hand_over_what_they_kept() -> None:
    configs = [(CHURN, JAVA)]
    cmap = profile_map("3.9", WALK_SCOPES, WALK_KINDS)
    stalled = directed_search(_runs("3.9", configs), cmap.reachable_edges, set(), 20000, 0, stall=(300, 10 ** 6))
    assert stalled.stalled and 300 <= stalled.steps < 400
    assert stalled.pool and all(key[0] == 0 for key in stalled.pool)
    full = directed_search(_runs("3.9", configs), cmap.reachable_edges, set(), 1000, 0)
    assert not full.stalled and full.steps >= 1000
    # the planner starts from every state the walks kept, so its first plans are short
    cov = Coverage(set(), set(stalled.edges))
    planned = guided("3.9", configs, _runs("3.9", configs).starts, cmap, cov, 600, 0, stalled.pool)
    assert planned.kept_states >= len({state for _, state in stalled.pool})
    assert len(cov.edges) > len(stalled.edges)

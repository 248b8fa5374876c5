"""The gate (`kgc check`): run every checker against one coordinator (the reference or a mutant).

Phases, in order, each deterministic (counts derive from the budget, never from the clock):
  scenarios  the seed documents' examples, with the whole catalog checked on every step;
  walks      seeded random walks over several scopes and client mixes, catalog + refinement every step;
  explore    breadth-first exploration of every ordering at the CI scope (explore/scopes.py: 3 members,
             scope "basic", depth CI_DEPTH; shallower for small budgets), then, when that finds nothing, SYMMETRY_MORE
             levels deeper in the world whose clients share one client.id, one state per orbit of client
             exchanges (explore/canonical.py: the same time, 5.8x fewer states); catalog + refinement on every edge
             (a release the model does not judge yet, 4.1: the CI scope, then deferred writes with faults, its
             runtime rules on every edge — ``runtime_explore_phase``, after its walks, its only other phase);
  machines   the Hypothesis state machine under the `ci` settings (derandomized);
  directed   the map sweep toward the abstract edges the walks left uncovered (kgc/directed.py): per walk
             scope, puppet clients realise every edge of the scope's abstract map breadth first and probe each
             state reached with the answers no edge asks for (explore/sweep.py, harness/puppets.py); catalog +
             refinement every step;
  static     (releases with KIP-345) the same sweep of the static scope's map (explore/static_coverage.py), puppets
             joining with group.instance.ids, toward the edges the static walk left uncovered;
  prove      the Z3 proofs of the abstract invariants (reference runs only: they are about the model).
A phase stops at the first run with a violation; its counterexample is shrunk by delta debugging
(Hypothesis shrinks its own; BFS counterexamples are already shortest) and reported. Checking a
mutant, the property the mutant names is preferred as the primary violation when the run breaks it.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from core.actions import Action
from core.types import GroupState
from explore.local import bfs
from explore.scopes import CI_DEPTH, CI_MEMBERS, CI_SCOPE, SHARED_CLIENT_ID, SYMMETRY_MORE, get_scope
from explore.space import ExploreSpec
from explore.traces import counterexample
from harness.scenarios import SCENARIOS, Driver, ScenarioError
from harness.scope import Scope
from harness.world import World
from impl.mutants import get_mutant
from explore.coverage import CoverageReport
from explore.deadlines import applies as timed
from explore.static_coverage import static_map
from harness.puppets import same_millisecond_matters
from kgc.directed import Coverage, profile_map, report, swept
from kgc.runs import REFINES, Allowance, CheckedRun, Found, shrink
from model.releases import fact, release
from properties.catalog import for_profile
from properties.runtime_4x import rules_for

WALK_SCOPES: dict[str, Scope] = {
    "calm": Scope(append_mode="deferred", commits=True, leaves=False, group_initial_rebalance_delay_ms=0,
                  session_timeout_ms=(6000, 9000, 12000), advance_ms=(1000, 4000)),
    # members come and go, and change their subscriptions (JoinGroup/changed: updateMemberAndRebalance, SPEC.md §3.1)
    "churn": Scope(commits=True, advance_ms=(1000, 3000), resubscribes=True),
    "faults": Scope(append_mode="deferred", faults=True, commits=True, crashes=True,
                    group_initial_rebalance_delay_ms=0, session_timeout_ms=(6000, 10000), advance_ms=(1000, 5000)),
    "partition": Scope(unload=True, leaves=False, advance_ms=(1000,)),
}
WALK_CLIENTS: tuple[int | tuple[str, ...], ...] = (
    3, ("java", "java", "adversarial"), ("java", "adversarial", "adversarial"))
#: every client kind some walk of every scope uses: what the coverage map may assume the clients send
WALK_KINDS = ("adversarial", "java")
#: static membership (KIP-345), on the releases that have it: static consumers that crash and restart with their
#: group.instance.id and member id "", and an adversary forging client 0's instance id (also with a peer's member
#: id); then the adversary (a static member by that forged id) with two dynamic Java consumers, whose pending
#: member ids it sends with that instance id — the two documented findings of mixed groups (properties/findings.py:
#: J5b step 3's IllegalStateException, 3.x's LeaveGroup of a pending id). The first is the world of the static
#: scope's own coverage map (explore/static_coverage.py); both hold back what disrupts a rebalance (``STATIC_HELD``)
#: until the group is first Stable, as the reload walks hold partition moves. A client may restart with the other
#: assignor list (``assignor_upgrades``: a rolling bounce to ("roundrobin", "range")), so a static restart in Stable
#: re-runs the election with a first choice that is not the group's protocol (KAFKA-10284: stored while the selection
#: keeps it, rule static-protocol-selection).
_STATIC_SCOPE = Scope(append_mode="deferred", faults=True, commits=True, crashes=True, advance_ms=(1000, 5000),
                      session_timeout_ms=(20000, 20000, 20000), rebalance_timeout_ms=(6000, 6000, 6000),
                      assignor_upgrades=True)
STATIC_WALKS: dict[str, tuple[Scope, tuple[str, ...]]] = {
    # sessions outlive the join phase, so a static member that crashed is kept by a join completion (§4.4 step 1)
    "static": (_STATIC_SCOPE, ("static", "static-adversarial", "static")),
    "static-mixed": (_STATIC_SCOPE, ("java", "java", "static-adversarial")),
    # the partition moves too (held back, as in the reload walks, until the first Stable): a static restart's store
    # meets an unload — the KAFKA-10284 callback of a group object that left the cache (§3.7). Not in a coverage map
    # (the static map with partition moves is ten times the size: every stored group loads back with any static subset)
    "static-partition": (replace(_STATIC_SCOPE, unload=True), ("static", "static-adversarial", "static")),
}

#: the partition scope once the group has a durable record: a walk that holds the partition moves back until the
#: group has been Stable (the leader's SyncGroup stored its generation), then offers them as the partition walks do.
#: A uniform walk offers UnloadGroup at almost every step, so it seldom keeps a first rebalance together long enough
#: to reach Stable (none of 2.7.0's 60 partition walks of walk seeds 0-19 does), and an unload before the first record
#: loads nothing back. What a reload brings back (SPEC.md §3.7) meeting what the unload left behind — the stale
#: DelayedJoin of finding stale-join-completes-reloaded-heartbeats — needs a record to load. Part of the coverage
#: map (the partition scope).
RELOAD_WALKS: dict[str, tuple[Scope, tuple[str, ...]]] = {
    "reload": (WALK_SCOPES["partition"], ("java", "java", "adversarial")),
}
#: group.max.size (KIP-389, 2.2.0+): no other scope sets it, so no run met a full group. Three clients and room for
#: two or one (SPEC.md §3.1 J4: a join beyond it is refused GROUP_MAX_SIZE_REACHED; the rules of who is refused, and
#: when a group over capacity rebalances, differ by release — model/step.py). In no coverage map: the maps' model
#: scope has no bound (explore/coverage.py ``_model_scope``), and a bound is another abstract graph.
CAPACITY_WALKS: dict[str, tuple[Scope, tuple[str, ...]]] = {
    "capacity": (Scope(leaves=False, group_initial_rebalance_delay_ms=0, advance_ms=(1000,), group_max_size=2,
                       session_timeout_ms=(30000, 30000, 30000)),
                 ("java", "java", "java")),
    # room for one: every second member is refused (the walk above meets a full group in 7-11 of 15 seeds only)
    "capacity-1": (Scope(leaves=False, group_initial_rebalance_delay_ms=0, advance_ms=(1000,), group_max_size=1,
                         session_timeout_ms=(30000, 30000, 30000)),
                   ("java", "java", "adversarial")),
}
PARTITION_MOVES = frozenset({"UnloadGroup", "LoadGroup"})
#: group.max.size below the number of clients, where a refused pending member can be the last one a rebalance waits
#: for (SPEC-4x.md R10): walked where a refusal skips the join check (finding max-size-refusal-leaves-the-join-waiting)
MAX_SIZE_WALKS: dict[str, tuple[Scope, int | tuple[str, ...]]] = {
    "max-size": (Scope(append_mode="deferred", group_max_size=2, leaves=False, group_initial_rebalance_delay_ms=0,
                       advance_ms=(1000, 4000)), 3),
}
#: what a static walk holds back until the group's first Stable. A uniform walk offers a crash, a dropped message, a
#: failed append, a leave or one of the adversary's ~15 forged requests (a restart of "i0": a rebalance from
#: CompletingRebalance since 2.5.0, KAFKA-9801) at almost every step, so it never kept a first rebalance together
#: (0 of the 30 static walks per profile at the default budget reached Stable), and every Stable-only static rule
#: — the KAFKA-10284 persist path and its callback, the KIP-814 answer — was out of reach
STATIC_HELD = frozenset({"Crash", "Restart", "DropRequest", "DropResponse", "LeaveGroup"})
_API_KINDS = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"})
#: the map sweep's steps at a profile share of 150 s (explore/sweep.py; puppet clients, every step checked)
SWEEP_STEPS = 80000
#: where time decides edges (explore/deadlines.py ``applies``: 0.10's fixed-session deadline arithmetic) the sweep plans
#: in the timed graph (explore/plan.py), and its steps are worth more there — measured on 0.10.0, seed 0, gate phases
#: (bench/results/coverage-0.10.0-2026-11-27.md): 1× 87.0 % (REPLAN 32), 2× 91.1 %, 4× 92.5 % (before third ops). It
#: levels off, and a step costs more there (≈1.4 ms against ≈1.1), so a budget given to one profile stops at the max.
#: 2.4.1 gets more (``NEW_MEMBER_SWEEP`` below; harness.puppets.same_millisecond_matters: a new member keeps its
#: 5-minute op through the join completion of its own millisecond only, so its map's edges need concrete timings as
#: 0.10.0's do; measured, sweep alone: 40,000 steps 59 %, 160,000 steps 89 % —
#: bench/results/coverage-2.4.1-2026-11-27.md), and plans in its own timed graph (explore/new_member_timing.py): gate
#: at the default budget with 2× 93.4 % (was 81.6 % without the planning — bench/results/coverage-2.4.1-2026-11-28.md)
TIMED_SWEEP = 2
TIMED_SWEEP_MAX = 120000
#: where a new member's op time decides edges (harness.puppets.same_millisecond_matters, a release fact: 2.4.1) its
#: steps are worth more still, up to the same max, with each timing kept a planning target until tried twice
#: (explore/new_member_timing.py SPEND). Gate 2.4.1 at the default budget (40,000 sweep steps), seed 0: 2× 93.4 %,
#: 2.5× 94.0 % and 3× 95.3 % with SPEND 2, 3× 94.6 % and 4× 95.4 % with SPEND 1; 3× costs ≈ +30 CPU-s over 2×, 4×
#: ≈ +75 (bench/results/coverage-2.4.1-2026-11-28c.md)
NEW_MEMBER_SWEEP = 3
#: what the sweep's puppets stand for: any well-formed request at any time, as an adversarial client sends
PUPPET_KINDS = ("adversarial",)
#: the static scope's sweep (explore/static_coverage.py) at a profile share of 150 s
STATIC_SWEEP_STEPS = 30000


def walk_configs(profile: str) -> list[tuple[str, Scope, int | tuple[str, ...]]]:
    """(scope name, scope, clients) of every walk the gate makes on ``profile``, in order."""
    out: list[tuple[str, Scope, int | tuple[str, ...]]] = [
        (name, scope, clients) for name, scope in WALK_SCOPES.items() for clients in WALK_CLIENTS]
    out += [(name, scope, clients) for name, (scope, clients) in RELOAD_WALKS.items()]
    if fact("static-membership", profile):
        out += [(name, scope, clients) for name, (scope, clients) in STATIC_WALKS.items()]
    if fact("max-size-refusal-skips-join-check", profile):
        out += [(name, scope, clients) for name, (scope, clients) in MAX_SIZE_WALKS.items()]
    if fact("group-max-size", profile):
        out += [(name, scope, clients) for name, (scope, clients) in CAPACITY_WALKS.items()]
    return out


def walk(run: CheckedRun, rng: random.Random, steps: int, hold_partition: bool = False,
         hold_static: bool = False) -> None:
    """Up to ``steps`` uniformly chosen enabled actions; before the group's first Stable, ``hold_partition``: no
    partition move (RELOAD_WALKS), ``hold_static``: nothing of ``STATIC_HELD`` (STATIC_WALKS)."""
    held = hold_partition or hold_static
    for _ in range(steps):
        choices = run.world.enabled()
        if not choices or run.over:
            break
        if held:
            choices = tuple(a for a in choices if not (hold_partition and a.kind in PARTITION_MOVES)
                            and not (hold_static and _disrupts(run.world, a))) or choices
        run.step(choices[rng.randrange(len(choices))])
        held = held and not _is_stable(run.world)


def _disrupts(world: World, action: Action) -> bool:
    """What a static walk holds back (``STATIC_HELD``, a failed append, a request of an adversarial client)."""
    if action.kind in STATIC_HELD or (action.kind == "CompleteAppend" and action.arg != "NONE"):
        return True
    return action.kind in _API_KINDS and world.kinds[action.client].endswith("adversarial")


def _is_stable(world: World) -> bool:
    view = world.coord.describe(world.group_id)
    return view is not None and view.state is GroupState.STABLE


@dataclass(frozen=True)
class Plan:
    """How much each phase does; derived from the budget (per profile) so that runs are deterministic."""

    walk_seeds: int
    walk_steps: int
    machine_examples: int
    explore_depth: int = CI_DEPTH
    sweep_steps: int = 0
    static_steps: int = 0

    @staticmethod
    def for_budget(budget_s: float) -> "Plan":
        scale = max(budget_s, 10.0) / 150.0
        return Plan(walk_seeds=max(2, round(30 * scale)), walk_steps=400, machine_examples=max(10, round(100 * scale)),
                    explore_depth=CI_DEPTH if budget_s >= 60 else CI_DEPTH - 2,
                    sweep_steps=round(SWEEP_STEPS * scale), static_steps=round(STATIC_SWEEP_STEPS * scale))


@dataclass
class PhaseResult:
    name: str
    runs: int = 0
    steps: int = 0
    seconds: float = 0.0
    note: str = ""


@dataclass
class GateResult:
    profile: str
    mutant: str | None
    seed: int
    phases: list[PhaseResult] = field(default_factory=list)
    found: Found | None = None
    properties: tuple[str, ...] = ()
    coverage: CoverageReport | None = None
    static_coverage: CoverageReport | None = None      # the static scope's map (releases with KIP-345)

    @property
    def edges_covered(self) -> int:
        return self.coverage.covered_edges if self.coverage is not None else 0

    @property
    def passed(self) -> bool:
        return self.found is None and all(not p.note.startswith("FAILED") for p in self.phases)


def _preferred(mutant: str | None) -> tuple[str, ...]:
    return get_mutant(mutant).catches if mutant else ()


class _Best:
    """Keeps a phase's counterexample: the first one, unless a later run breaks the mutant's named property."""

    def __init__(self, mutant: str | None) -> None:
        self.preferred = _preferred(mutant)
        self.found: Found | None = None

    def offer(self, found: Found | None) -> bool:
        """Record ``found``; True when the search can stop (no mutant, or its named property is broken)."""
        if found is not None and (self.found is None or found.violation.property in self.preferred):
            self.found = found
        return self.found is not None and (not self.preferred or self.found.violation.property in self.preferred)


def scenario_phase(profile: str, mutant: str | None) -> tuple[PhaseResult, Found | None]:
    result, best = PhaseResult("scenarios"), _Best(mutant)
    for scenario in SCENARIOS:
        if profile not in scenario.profiles:
            continue
        run = CheckedRun(World(profile, scenario.scope, clients=scenario.clients, seed=0, record=True, mutant=mutant))
        driver = Driver(run.world)

        def act(action: Action, run: CheckedRun = run) -> None:
            if run.over or action not in run.world.enabled():
                raise ScenarioError(f"{action} is not enabled")
            run.step(action)
        driver.act = act   # type: ignore[method-assign]
        result.runs += 1
        try:
            for instr in scenario.script:
                driver.run(instr)
        except ScenarioError:
            pass   # the coordinator under test no longer fits the script (or it raised): the run ends here
        result.steps += len(run.world.steps)
        if best.offer(run.result(f"scenario {scenario.name}", best.preferred)):
            break
    return result, best.found


def walk_phase(profile: str, mutant: str | None, plan: Plan, seed: int, cov: Coverage | None = None,
               static_cov: Coverage | None = None) -> tuple[PhaseResult, Found | None]:
    """``cov`` gathers the walk scopes' coverage, ``static_cov`` the static walk's (its own map)."""
    result, best = PhaseResult("walks"), _Best(mutant)
    for index in range(plan.walk_seeds):
        for scope_name, scope, clients in walk_configs(profile):
            walk_seed = seed * 100003 + index
            run = CheckedRun(World(profile, scope, clients=clients, seed=walk_seed, record=True, mutant=mutant))
            result.runs += 1
            walk(run, random.Random(walk_seed), plan.walk_steps,
                 hold_partition=scope_name in RELOAD_WALKS or scope_name == "static-partition",
                 hold_static=scope_name in STATIC_WALKS)
            result.steps += len(run.world.steps)
            if best.offer(run.result(f"walk {scope_name} {clients} seed {walk_seed}", best.preferred)):
                return result, best.found
            if cov is not None and scope_name not in STATIC_WALKS and scope_name not in CAPACITY_WALKS:
                cov.add(run)
            if static_cov is not None and scope_name == "static":
                static_cov.add(run)
    return result, best.found


def directed_steps(profile: str, plan: Plan) -> int:
    """The map sweep's steps in the directed phase: more where time decides edges, up to ``TIMED_SWEEP_MAX`` (a plan
    of more steps keeps its own)."""
    factor = NEW_MEMBER_SWEEP if same_millisecond_matters(profile) else TIMED_SWEEP if timed(profile) else 1
    return min(plan.sweep_steps * factor, max(plan.sweep_steps, TIMED_SWEEP_MAX))


def directed_phase(profile: str, mutant: str | None, plan: Plan, seed: int, cov: Coverage
                   ) -> tuple[PhaseResult, Found | None]:
    """Toward the uncovered reachable edges: the map sweep of every walk scope with puppet clients
    (explore/sweep.py)."""
    cmap = profile_map(profile, WALK_SCOPES, WALK_KINDS)
    before = len(cov.edges & cmap.reachable_edges)
    found = swept(profile, list(WALK_SCOPES.values()), PUPPET_KINDS, cmap, cov, directed_steps(profile, plan), seed,
                  mutant)
    result = PhaseResult("directed", runs=found.tries, steps=found.steps,
                         note=f"+{len(cov.edges & cmap.reachable_edges) - before:,} abstract edges, "
                              f"{found.kept_states:,} states kept")
    if found.failed is None:
        return result, None
    run = found.failed
    scope_name = next(n for n, s in WALK_SCOPES.items() if s == run.world.scope)
    return result, run.result(f"directed sweep {scope_name} puppets seed {seed}", _preferred(mutant))


def static_phase(profile: str, mutant: str | None, plan: Plan, seed: int, cov: Coverage
                 ) -> tuple[PhaseResult, Found | None]:
    """Toward the static scope's uncovered edges: the map sweep of explore/static_coverage.py's map with puppets that
    join with group.instance.ids (harness/puppets.py ``INSTANCES``)."""
    scope = STATIC_WALKS["static"][0]
    smap = static_map(profile, scope)
    before = len(cov.edges & smap.reachable_edges)
    found = swept(profile, [scope], PUPPET_KINDS, smap, cov, plan.static_steps, seed, mutant,
                  maps=[smap.reachable_edges])
    result = PhaseResult("static", runs=found.tries, steps=found.steps,
                         note=f"+{len(cov.edges & smap.reachable_edges) - before:,} static-scope edges, "
                              f"{found.kept_states:,} states kept")
    if found.failed is None:
        return result, None
    return result, found.failed.result(f"static sweep puppets seed {seed}", _preferred(mutant))


def explore_phase(profile: str, mutant: str | None, plan: Plan) -> tuple[PhaseResult, Found | None]:
    spec = ExploreSpec(profile, CI_MEMBERS, plan.explore_depth, get_scope(CI_SCOPE), mutant=mutant)
    result = bfs(spec)
    phase = PhaseResult("explore", runs=1, steps=result.edges,
                        note=f"{result.states:,} states to depth {spec.depth}, {CI_MEMBERS} members")
    if not result.violations:
        # deeper, where members are named by join order (the clients share one client.id, as deployed consumers
        # often do): 4 mutants the first search misses are found here (bench/results/explore-perf-2026-11-27.md §6)
        spec = ExploreSpec(profile, CI_MEMBERS, plan.explore_depth + SYMMETRY_MORE,
                           replace(get_scope(CI_SCOPE), client_id=SHARED_CLIENT_ID), mutant=mutant, symmetry=True)
        result = bfs(spec)
        phase.runs, phase.steps = 2, phase.steps + result.edges
        phase.note += f"; {result.states:,} orbits to depth {spec.depth}, one client.id"
    if not result.violations:
        return phase, None
    preferred = _preferred(mutant)
    ordered = sorted(result.violations.values(), key=lambda f: (f.property not in preferred, f.key(), f.property))
    trace = counterexample(spec, ordered[0], name=f"explore {CI_SCOPE} depth {spec.depth}"
                                                  + (" symmetry" if spec.symmetry else ""))
    assert trace.violation is not None
    also = tuple(sorted(f.property for f in ordered[1:]))
    return phase, Found(trace.violation, trace, "explore (BFS shortest)", also)


def machine_phase(profile: str, mutant: str | None, plan: Plan) -> tuple[PhaseResult, Found | None]:
    from stateful_tests.machine import run_machine
    steps: list[int] = []
    shrunk = run_machine(profile, mutant, plan.machine_examples, steps)
    result = PhaseResult("machines", runs=plan.machine_examples, steps=sum(steps))
    if shrunk is None or shrunk.violation is None:
        return result, None
    return result, Found(shrunk.violation, shrunk, "machines (Hypothesis-shrunk)")


#: the shrink's allowance in replayed steps per second of the profile's budget (a checked step costs about 1 ms,
#: NOTES-perf.md), less the steps the phases took, never under SHRINK_FLOOR: the budget's rest, counted in steps
SHRINK_STEPS_PER_S, SHRINK_FLOOR = 1000, 10000


def shrink_allowance(budget_s: float, phases: list[PhaseResult]) -> Allowance:
    """The rest of the budget after the phases, as steps: deterministic, so the report bytes do not depend on how
    fast the machine ran."""
    return Allowance(max(SHRINK_FLOOR, round(SHRINK_STEPS_PER_S * budget_s) - sum(p.steps for p in phases)))


def run_gate(profile: str, mutant: str | None = None, budget_s: float = 150.0, seed: int = 0,
             progress: Callable[[str], None] = lambda _msg: None, prove: Callable[[str], PhaseResult] | None = None,
             ) -> GateResult:
    """Every phase against one profile; ``budget_s`` is this profile's share of the budget."""
    plan = Plan.for_budget(budget_s)
    if not release(profile).runnable:
        return _runtime_gate(profile, mutant, plan, seed, progress, budget_s, prove)
    result = GateResult(profile, mutant, seed, properties=tuple(
        p.name for p in for_profile(profile, level="concrete") if p.kind != "sometimes"))

    cov = Coverage(set(), set())
    static_cov = Coverage(set(), set()) if fact("static-membership", profile) else None
    phases: list[tuple[str, Callable[[], tuple[PhaseResult, Found | None]]]] = [
        ("scenarios", lambda: scenario_phase(profile, mutant)),
        ("walks", lambda: walk_phase(profile, mutant, plan, seed, cov, static_cov)),
        ("explore", lambda: explore_phase(profile, mutant, plan)),
        ("machines", lambda: machine_phase(profile, mutant, plan)),
        ("directed", lambda: directed_phase(profile, mutant, plan, seed, cov))]
    if static_cov is not None:
        phases.append(("static", lambda: static_phase(profile, mutant, plan, seed, static_cov)))
    for name, phase in phases:
        progress(name)
        t0 = time.perf_counter()
        phase_result, found = phase()
        phase_result.seconds = time.perf_counter() - t0
        result.phases.append(phase_result)
        if found is not None:
            progress("shrinking the counterexample")
            result.found = found if found.phase.startswith(("machines", "explore")) else shrink(
                found, shrink_allowance(budget_s, result.phases))
            return result
    result.coverage = report(profile_map(profile, WALK_SCOPES, WALK_KINDS), cov)
    if static_cov is not None:
        result.static_coverage = report(static_map(profile, STATIC_WALKS["static"][0]), static_cov)
    if prove is not None and mutant is None:
        progress("prove")
        result.phases.append(prove(profile))
    return result


#: the runtime-rules gate walks 1/RUNTIME_WALK_SHARE of the seeds the budget gives a judged profile
RUNTIME_WALK_SHARE = 3
#: the runtime-rules gate's explorations (explore/rules.py judges every edge): the CI scope at the plan's depth, as on
#: the judged profiles, then deferred writes with faults — the event loop's flushes, failed flushes, commits and write
#: timeouts as edges, which the CI scope's synchronous writes do not have — with two Java consumers, RUNTIME_FAULTS_LESS
#: levels shallower. At the default budget 9,014 + 4,484 states, 18,813 + 9,872 edges: less than a judged profile's
#: explore phase (3.9: 38,574 edges with its symmetric search). Every seeded mutant of the runtime is found there by
#: depth 7 (tests/test_explore_4_1.py), with its shortest counterexample, whatever the walks' seeds
RUNTIME_FAULTS_SCOPE, RUNTIME_FAULTS_MEMBERS, RUNTIME_FAULTS_LESS = "faults", 2, 2


#: what the gate runs on a release the model has a profile for but the catalog does not judge yet (4.1), in one line
RUNTIME_PHASES = ("walks checked by the concrete catalog (through the Java runtime's observation adapter, "
                  "properties/observation_4x.py), the runtime rules and the refinement against its model profile "
                  "(states and answers), two explorations checked by the runtime rules, then the Z3 proofs of that "
                  "profile; no scenarios, machines, directed or static sweep, coverage: they judge through the "
                  "labelled refinement, which reads the Scala coordinator")


def _runtime_gate(profile: str, mutant: str | None, plan: Plan, seed: int, progress: Callable[[str], None],
                  budget_s: float, prove: Callable[[str], PhaseResult] | None = None) -> GateResult:
    """A release the labelled refinement does not judge yet (4.1, README "Kafka 4.x"): the seeded walks, every step
    checked by the concrete catalog (properties/observation_4x.py reads the runtime), the runtime's rules
    (properties/runtime_4x.py) and the state refinement, two breadth-first explorations checked by the runtime's
    rules, and — the model having its profile (model/releases.py ``modelled``) — the Z3 proofs of that profile;
    ``RUNTIME_PHASES`` says what it leaves out and why."""
    start = time.perf_counter()
    # a third of a judged profile's walk seeds: these walks are this profile's whole gate (at the default budget
    # shared by the profiles: 75 walks of 400 steps, 30,000 checked steps)
    plan = replace(plan, walk_seeds=max(2, plan.walk_seeds // RUNTIME_WALK_SHARE))
    judged = (REFINES,) if release(profile).modelled else ()   # the state refinement (harness/refinement_4x.py)
    catalog = tuple(p.name for p in for_profile(profile, level="concrete") if p.kind != "sometimes")
    result = GateResult(profile, mutant, seed, properties=catalog + tuple(r.name for r in rules_for(profile)) + judged)
    progress("walks")
    phase, found = walk_phase(profile, mutant, plan, seed)
    phase.seconds = time.perf_counter() - start
    phase.note = "on this release: " + RUNTIME_PHASES
    result.phases.append(phase)
    if found is not None:
        progress("shrinking the counterexample")
        result.found = shrink(found, shrink_allowance(budget_s, result.phases))
        return result
    progress("explore")
    t0 = time.perf_counter()
    phase, result.found = runtime_explore_phase(profile, mutant, plan)
    phase.seconds = time.perf_counter() - t0
    result.phases.append(phase)
    if result.found is not None:
        return result
    if prove is not None and mutant is None and release(profile).modelled:
        progress("prove")
        result.phases.append(prove(profile))
    return result


def runtime_explore_phase(profile: str, mutant: str | None, plan: Plan) -> tuple[PhaseResult, Found | None]:
    """The runtime-rules gate's explorations (``RUNTIME_FAULTS_SCOPE``); BFS counterexamples are already shortest."""
    specs = (ExploreSpec(profile, CI_MEMBERS, plan.explore_depth, get_scope(CI_SCOPE), mutant=mutant),
             ExploreSpec(profile, RUNTIME_FAULTS_MEMBERS, plan.explore_depth - RUNTIME_FAULTS_LESS,
                         get_scope(RUNTIME_FAULTS_SCOPE), mutant=mutant))
    phase = PhaseResult("explore", note="runtime rules only")
    for spec, scope_name in zip(specs, (CI_SCOPE, RUNTIME_FAULTS_SCOPE), strict=True):
        result = bfs(spec)
        phase.runs, phase.steps = phase.runs + 1, phase.steps + result.edges
        phase.note += f"; {result.states:,} states to depth {spec.depth}, {spec.members} members, {scope_name}"
        if result.violations:
            preferred = _preferred(mutant)
            ordered = sorted(result.violations.values(), key=lambda f: (f.property not in preferred, f.key(),
                                                                         f.property))
            trace = counterexample(spec, ordered[0], name=f"explore {scope_name} depth {spec.depth}")
            assert trace.violation is not None
            also = tuple(sorted(f.property for f in ordered[1:]))
            return phase, Found(trace.violation, trace, "explore (BFS shortest)", also)
    return phase, None

"""Labelled refinement with static members (KIP-345): long seeded walks of static consumers that crash and restart
with their group.instance.id, and adversaries forging one, refine the model's static scope on every profile — each
step is the model transition of its abstract action, with its answers and armed timers (harness/labels.py)."""
from __future__ import annotations

from collections import Counter

import pytest

from core.actions import Action
from harness.refinement import RefinementChecker
from harness.scenarios import Driver
from harness.scope import Scope
from harness.world import World
from tests.test_refinement import walk

SCOPES = {
    "faults-deferred": Scope(append_mode="deferred", faults=True, crashes=True, commits=True, advance_ms=(1000, 5000)),
    "busy": Scope(leaves=False, commits=True, crashes=True, advance_ms=(3000,)),
    "unload-nodelay": Scope(append_mode="deferred", faults=True, commits=True, unload=True, crashes=True,
                            group_initial_rebalance_delay_ms=0, session_timeout_ms=(6000, 9000, 12000),
                            advance_ms=(1000, 4000)),
}
CLIENTS = {"static": ("static", "static", "static-adversarial"),
           "forged-peer": ("static", "static-adversarial", "static"), "mixed": ("java", "static", "adversarial")}
PROFILES = ("0.10.0", "2.4.1", "2.7.0", "3.9")


def walks(profile: str, scope: Scope, clients: tuple[str, ...], seeds: int, steps: int) -> tuple[Counter[str], int]:
    """Run refinement-checked walks (a non-refining step raises NonRefiningStep); the abstract actions the labelled
    steps were, and how many FENCED_INSTANCE_ID answers the coordinator gave."""
    kinds: Counter[str] = Counter()
    fenced = 0
    for seed in range(seeds):
        checker = walk(profile, scope, clients, seed, steps)
        world = checker.world
        kinds.update(f"{a.kind}[{a.arg}]" if a.kind == "CompleteAppend" else a.kind
                     for before, a, _ in checker.coverage.edges
                     if a.kind != "CompleteAppend" or (before.appends and before.appends[0] == "static"))
        fenced += sum(r.error == "FENCED_INSTANCE_ID" for s in world.steps for r in s.responses)
    return kinds, fenced


@pytest.mark.parametrize("profile", PROFILES)
def test_static_walks_refine_the_model(profile: str) -> None:
    seeds = 4 if profile == "0.10.0" else 20   # (the slow tier: 40 seeds × 500 steps, every scope and mix)
    kinds, fenced = walks(profile, SCOPES["faults-deferred"], CLIENTS["static"], seeds=seeds, steps=300)
    if profile == "0.10.0":   # no KIP-345: every instance id is refused (UNSUPPORTED_VERSION), nothing static moves
        assert not any("static" in k for k in kinds) and fenced == 0
        return
    # not vacuous: instances joined and restarted, and requests of replaced ids were fenced
    assert kinds["JoinGroup/static-new"] and kinds["JoinGroup/static-rejoin"] and fenced > 0, (kinds, fenced)


#: c0 forms a Stable group alone (deferred appends), restarts, and its stored id replacement fails; it restarts again
#: and the store succeeds (random walks with crashes seldom reach Stable, so this is scripted)
PERSIST = (("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"), ("request", 0, "SyncGroup"), ("append",),
           ("respond", 0, "SyncGroup"), ("do", Action("Crash", 0, 0)), ("do", Action("Restart", 0, 0)),
           ("request", 0, "JoinGroup"), ("do", Action("CompleteAppend", -1, "NOT_LEADER_OR_FOLLOWER")),
           ("respond", 0, "JoinGroup"), ("do", Action("Crash", 0, 0)), ("do", Action("Restart", 0, 0)),
           ("request", 0, "JoinGroup"), ("append",), ("respond", 0, "JoinGroup"))


@pytest.mark.parametrize("profile", ["2.7.0", "3.9"])
def test_a_stored_static_replacement_refines_the_model_when_it_fails_and_when_it_succeeds(profile: str) -> None:
    """2.6.1+ (SPEC.md §3.1 J5a step 4): a restart in Stable is stored; failure reverts it and answers the mapped
    store error with member id "", success answers the current generation — each a labelled model edge."""
    world = World(profile, Scope(append_mode="deferred", faults=True, crashes=True,
                                 group_initial_rebalance_delay_ms=0), clients=("static",), seed=0, record=True)
    checker = RefinementChecker(world)
    driver = Driver(world)
    driver.act = checker.step   # type: ignore[method-assign]
    for instr in PERSIST:
        if instr[0] == "do":
            checker.step(instr[1])   # type: ignore[arg-type]
        else:
            driver.run(instr)
    stored = [(str(a), after.group) for before, a, after in checker.coverage.edges
              if a.kind == "CompleteAppend" and before.appends == ("static",)]
    assert sorted(stored) == [("CompleteAppend[error]", "Stable"), ("CompleteAppend[ok]", "Stable")]
    joins = [(r.error, r.member_id) for s in world.steps for r in s.responses if r.api == "JoinGroup"]
    assert joins[1] == ("NOT_COORDINATOR", "") and joins[2][0] == "NONE" and joins[2][1].startswith("i0-")


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("scope", sorted(SCOPES))
@pytest.mark.parametrize("clients", sorted(CLIENTS))
def test_long_static_walks_refine_the_model(profile: str, scope: str, clients: str) -> None:
    kinds, _ = walks(profile, SCOPES[scope], CLIENTS[clients], seeds=40, steps=500)
    if profile == "0.10.0" and "java" not in CLIENTS[clients]:
        assert not kinds   # no KIP-345: every JoinGroup carries an instance id and is refused, nothing moves
    else:
        assert sum(kinds.values()) > 0

"""Kafka 4.x's runtime rules (properties/runtime_4x.py) on 4.1 walks: the reference keeps them on every step of the
gate's walk scopes, each rule is exercised there, and each seeded mutant of the runtime's seams
(impl/mutants/runtime_bugs.py) is caught by the rule it names."""
from __future__ import annotations

import random

import pytest

from harness.scope import Scope
from harness.world import World
from impl.mutants import all_mutants, get_mutant
from properties.runtime_4x import RULES, before, checked_walk, rules_for

SCOPES = {
    "calm": Scope(append_mode="deferred", commits=True, leaves=False, group_initial_rebalance_delay_ms=0,
                  session_timeout_ms=(6000, 9000, 12000), advance_ms=(1000, 4000)),
    "faults": Scope(append_mode="deferred", faults=True, commits=True, crashes=True, unload=True,
                    group_initial_rebalance_delay_ms=0, session_timeout_ms=(6000, 10000), advance_ms=(1000, 5000)),
    "churn": Scope(commits=True, advance_ms=(1000, 3000)),
}
CLIENTS = (3, ("java", "java", "adversarial"))
#: the runtime's mutants its rules catch (not the one the state refinement catches, tests/test_refinement_4x.py,
#: and the catalog catches, tests/test_catalog_4_1.py)
RUNTIME_MUTANTS = [m for m in all_mutants() if m.cls.__module__ == "impl.mutants.runtime_bugs"
                   and set(m.catches) <= {r.name for r in RULES}]


def _pick(rng: random.Random):   # type: ignore[no-untyped-def]
    return lambda enabled: enabled[rng.randrange(len(enabled))]


def test_the_rules_apply_by_release_fact() -> None:
    assert [r.name for r in rules_for("4.1")] == [r.name for r in RULES]
    assert rules_for("3.9") == ()


@pytest.mark.parametrize("scope", sorted(SCOPES))
def test_the_reference_keeps_every_rule_on_every_step(scope: str) -> None:
    for seed in range(4):
        for clients in CLIENTS:
            world = World("4.1", SCOPES[scope], clients=clients, seed=seed)
            assert checked_walk(world, 300, _pick(random.Random(seed))) == []


def test_each_rule_is_exercised_by_the_reference_walks() -> None:
    """Non-vacuity: a Heartbeat delivered behind an uncommitted write, a write timeout run, and no keyless task."""
    behind = timeouts = 0
    for seed in range(4):
        world = World("4.1", SCOPES["calm"], seed=seed)
        rng = random.Random(seed)
        for _ in range(300):
            enabled = world.enabled()
            action = enabled[rng.randrange(len(enabled))]
            seen = before(world)
            delivered = world.net.requests.get((action.client, action.arg)) if action.kind == "DeliverRequest" \
                else None
            world.step(action)
            behind += bool(seen.uncommitted and delivered is not None and delivered.api == "Heartbeat")
            timeouts += any(k == "write-timeout" and live for _key, k, live in world.coord.fired[seen.fired:])
    assert behind and timeouts


def test_the_runtime_mutants_are_listed_with_their_rules() -> None:
    assert {m.name for m in RUNTIME_MUTANTS} == {"timer-not-replaced-on-reschedule", "answer-before-commit",
                                                 "write-timeout-as-rebalance-in-progress"}
    for m in RUNTIME_MUTANTS:
        assert m.profiles == ("4.1",) and set(m.catches) <= {r.name for r in RULES}


@pytest.mark.parametrize("name", sorted(m.name for m in RUNTIME_MUTANTS))
def test_each_runtime_mutant_is_caught_by_the_rule_it_names(name: str) -> None:
    m = get_mutant(name)
    for seed in range(20):
        for scope in ("calm", "faults"):
            world = World("4.1", SCOPES[scope], seed=seed, mutant=name)
            found = checked_walk(world, 300, _pick(random.Random(seed)))
            if found:
                assert found[0].rule in m.catches, found
                return
    pytest.fail(f"mutant {name} was not caught in 40 walks")


def test_the_gate_on_4_1_is_its_rule_checked_walks_and_passes_on_the_reference(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from kgc.cli import main
    from kgc.gate import RUNTIME_PHASES, PhaseResult, run_gate
    proved: list[str] = []

    def prove(profile: str) -> PhaseResult:
        proved.append(profile)
        return PhaseResult("prove", runs=1)
    result = run_gate("4.1", None, 30.0, prove=prove)
    # the model has 4.1's profile, so the gate proves it (model/releases.py ``modelled``); the walks say what else
    # the gate leaves out on 4.1, in one line
    assert result.passed and [p.name for p in result.phases] == ["walks", "explore", "prove"]
    assert result.coverage is None
    assert proved == ["4.1"] and result.phases[0].note.endswith(RUNTIME_PHASES)
    assert all(p.runs > 0 and p.steps > 0 for p in result.phases[:2])
    # the catalog (properties/observation_4x.py), the runtime's rules and the state refinement against 4.1's model
    # profile (harness/refinement_4x.py)
    from properties.catalog import for_profile
    catalog = [p.name for p in for_profile("4.1", level="concrete") if p.kind != "sometimes"]
    assert "heartbeat-answer-follows-the-state-table" in catalog
    assert result.properties == tuple(catalog) + tuple(r.name for r in RULES) + ("refines-the-abstract-model",)
    assert main(["check", "--profile", "4.1", "--budget", "15", "--out", str(tmp_path)]) == 0
    run = json.loads((tmp_path / "4.1" / "run.json").read_text())
    assert run["passed"] and run["properties_checked"] == catalog + [r.name for r in RULES] + \
        ["refines-the-abstract-model"]
    assert 'failures="0"' in (tmp_path / "4.1" / "junit.xml").read_text()


def _stub_world(logged: int, fired: list[tuple[str, str, bool]],  # type: ignore[no-untyped-def]
                steps: tuple[object, ...] = ()):
    """A world as the rule ``no-illegal-state-in-an-event`` reads it: the runtime's count of logged
    IllegalStateExceptions, its log, the timer events run and the walk's steps."""
    from types import SimpleNamespace
    coord = SimpleNamespace(illegal_state_errors=lambda: logged, errors=["0 boom"] * logged, fired=fired)
    return SimpleNamespace(coord=coord, group_id="g", steps=list(steps))


def test_no_illegal_state_rule_fires_on_a_logged_exception_and_holds_without_one() -> None:
    """Witness and holding case of the rule, on a constructed step: one more IllegalStateException logged than
    before the step is a violation (a request here: no excuse applies); the same step without it is not."""
    from core.actions import Action
    from properties.runtime_4x import Before
    [rule] = [r for r in RULES if r.name == "no-illegal-state-in-an-event"]
    deliver = Action("DeliverRequest", 0, 1)
    seen = Before(False, 0, illegal_states=2)
    reason = rule.check(_stub_world(3, []), seen, deliver)
    assert reason is not None and "logged 1 IllegalStateException" in reason
    assert rule.check(_stub_world(2, []), seen, deliver) is None


def test_the_stale_join_excuse_is_no_wider_than_its_situation() -> None:
    """The excuse of reverted-group-join-timer-fires-on-its-successor needs all of: a FireTimer running the group's
    join timer, a group Empty without members before it, and a failed flush earlier in the walk."""
    from types import SimpleNamespace

    from core.actions import Action
    from harness.excuses import unexcused
    from properties.runtime_4x import STALE_JOIN_FINDING, Before
    [rule] = [r for r in RULES if r.name == "no-illegal-state-in-an-event"]
    fire = Action("FireTimer", -1, 7)
    failed = SimpleNamespace(action=Action("FlushBatch", -1, "NOT_LEADER_OR_FOLLOWER"))
    ok, last = SimpleNamespace(action=Action("FlushBatch", -1, "NONE")), SimpleNamespace(action=fire)
    join = [("join-g", "initial-join", True)]
    empty = Before(False, 0, illegal_states=0, empty_group=True)
    assert rule.check(_stub_world(1, join, (failed, last)), empty, fire) is None
    with unexcused([STALE_JOIN_FINDING]):
        assert rule.check(_stub_world(1, join, (failed, last)), empty, fire) is not None
    assert rule.check(_stub_world(1, join, (ok, last)), empty, fire) is not None               # no failed flush
    assert rule.check(_stub_world(1, [("heartbeat-g-m", "heartbeat", True)], (failed, last)), empty, fire)
    assert rule.check(_stub_world(1, [("join-g", "join", False)], (failed, last)), empty, fire)   # stale: dropped
    assert rule.check(_stub_world(1, join, (failed, last)), Before(False, 0), fire)              # group not Empty

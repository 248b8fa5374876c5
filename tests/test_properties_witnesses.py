"""Every ``sometimes`` witness is reached by a seeded run, so no property that speaks about it is vacuous.

Sources: the seed scenarios (harness/scenarios.py), the short scripts of tests/property_runs.py for what
the seeds never do (a failed or stale store callback, unload, DelayedSync, KIP-394, KAFKA-7610), and the
long walks — each source on its own must be clean, and together they must reach every witness.
"""
from __future__ import annotations

import pytest

from properties.catalog import CATALOG, for_profile
from tests.property_runs import PROFILES, WITNESS_SCRIPTS, all_scenario_runs, run, walk

SCRIPT_CASES = [(name, p) for name, s in WITNESS_SCRIPTS.items() for p in s.profiles]


def witnesses(profile: str) -> set[str]:
    return {p.name for p in for_profile(profile, level="concrete", kind="sometimes")}


@pytest.mark.parametrize("name,profile", SCRIPT_CASES)
def test_each_witness_script_reaches_its_witness_cleanly(name: str, profile: str) -> None:
    assert CATALOG[name].kind == "sometimes" and CATALOG[name].applies(profile)
    driver = run(WITNESS_SCRIPTS[name], profile)
    assert name in driver.checker.seen
    assert driver.checker.violations == [], driver.checker.violations[0].message
    step = driver.world.steps[driver.checker.seen[name]]
    assert CATALOG[name].explain(driver.triples[step.index][2])   # explain shows what was reached


@pytest.mark.parametrize("profile", PROFILES)
def test_scenarios_and_scripts_reach_every_witness(profile: str) -> None:
    seen: set[str] = set()
    for name, driver in all_scenario_runs(profile):
        assert driver.checker.violations == [], (name, driver.checker.violations[0].message)
        seen |= set(driver.checker.seen)
    for script in WITNESS_SCRIPTS.values():
        if profile in script.profiles:
            seen |= set(run(script, profile).checker.seen)
    assert witnesses(profile) - seen == set()


def test_a_witness_is_not_reached_by_a_run_that_cannot_reach_it() -> None:
    """The witnesses are not trivially true: an idle world reaches none of them."""
    checker, _ = walk("3.9", "steady", "java", seed=1, steps=0)
    assert checker.seen == {}
    obs = checker.obs
    assert not any(p.check(obs) for p in for_profile("3.9", level="concrete", kind="sometimes"))

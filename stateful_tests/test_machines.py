"""The Hypothesis machines: the reference passes on both profiles; a mutant is caught and shrunk to a
replayable kgc trace. Settings profile: KGC_HYPOTHESIS_PROFILE (ci by default; dev, nightly)."""
from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from harness.replay import replay
from stateful_tests.machine import FAILURES, MachineFailure, machine_for, settings_profile

pytestmark = pytest.mark.stateful
ACTIVE = settings.get_profile(settings_profile())


@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
def test_reference_coordinator_keeps_every_property(profile: str) -> None:
    run_state_machine_as_test(machine_for(profile), settings=ACTIVE)


@pytest.mark.parametrize("profile,mutant,caught_by", [
    # Hypothesis finds these within a second but spends a minute or more shrinking: slow tier (-m slow)
    pytest.param("3.9", "generation-not-bumped", "each-new-generation-increments-the-generation-id",
                 marks=pytest.mark.slow),
    pytest.param("0.10.0", "leader-not-reelected", "coordinator-raises-no-exception", marks=pytest.mark.slow),
    pytest.param("3.9", "rebalance-timeout-min", "rebalance-timeout-is-the-maximum", marks=pytest.mark.slow),
])
def test_a_mutant_is_caught_and_shrunk_to_a_replayable_trace(profile: str, mutant: str, caught_by: str) -> None:
    FAILURES.clear()
    with pytest.raises(MachineFailure):
        run_state_machine_as_test(machine_for(profile, mutant),
                                  settings=settings(ACTIVE, max_examples=300, stateful_step_count=16))
    shrunk = FAILURES[-1]
    assert shrunk.mutant == mutant and shrunk.violation is not None
    assert shrunk.violation.property in (caught_by, "refines-the-abstract-model") or \
        any(t.violation and t.violation.property == caught_by for t in FAILURES)
    assert len(shrunk.steps) <= min(len(t.steps) for t in FAILURES)   # the last one is the shrunk one
    replay(shrunk)   # the counterexample re-executes bit for bit on the mutant

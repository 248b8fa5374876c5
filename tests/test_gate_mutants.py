"""`kgc check` kills every seeded mutant by the property it names (apart from tests/test_gate.py so that the
two files, the suite's longest, run on different test workers)."""
from __future__ import annotations

import pytest

from harness.replay import replay
from impl.mutants import all_mutants
from kgc.gate import run_gate

KILL = 100.0       # seconds of budget per profile (the gate stops at the first counterexample)


#: (mutant, profile) whose kill takes the gate 10–50 s on 2.4.1 or 2.7.0 (bench/results/mutants-new-profiles-*.json):
#: they run in the slow tier; the default tier kills every mutant on at least one of its profiles (test below)
SLOW_KILLS = frozenset([(m, p) for p in ("2.4.1", "2.7.0") for m in (
    "commit-in-completing-rebalance-accepted", "store-callback-ignores-generation")]
    + [("prepare-keeps-parked-syncs", p) for p in ("2.4.1", "3.9")]   # 3.9: 47 s (directed phase); 0.10.0 stays
    # static membership (KIP-345): killed by the gate's static walk in 6–35 s (measured 2026-11-25, seed 0)
    + [("static-member-removed-at-join-completion", p) for p in ("2.4.1", "2.7.0", "3.9")]
    + [("replacement-keeps-old-incarnation-parked", p) for p in ("2.7.0", "3.9")]
    # a later restart re-keying a member whose store waits: the static-partition walk, 44 s on 2.7.0 (3.9: 15 s)
    + [("re-keyed-store-answers-with-the-current-id", "2.7.0")]
    # Kafka's own guards (impl/mutants/guard_bugs.py): a client joining again while its member stays, 46 s (faults walk)
    + [("member-id-is-client-id", "3.9")]
    # 60–100 s each on a loaded 2-core machine (bin/test --junitxml, 2026-11-28), killed in the default tier on the
    # profiles named in the comment: store-callback-ignores-generation (0.10.0), static-restart-rebalances-on-own-choice
    # (2.7.0), fenced-join-without-its-member-id (2.4.1, 2.7.0)
    + [(m, "3.9") for m in ("store-callback-ignores-generation", "static-restart-rebalances-on-own-choice",
                            "fenced-join-without-its-member-id")])
#: mutants killed in the slow tier only, with why: every one of their profiles takes the gate 6–50 s
SLOW_ONLY = {"member-id-is-client-id": "one profile (3.9), killed by the faults walk in about 46 s",
             "static-member-removed-at-join-completion": "killed by the static walk in 6–35 s on each of its profiles"}
CASES = [pytest.param(m.name, p, m.catches, id=f"{m.name}-{p}",
                      marks=[pytest.mark.slow] if (m.name, p) in SLOW_KILLS else [])
         for m in all_mutants() for p in m.profiles]   # 4.1's: by the runtime rules (kgc/gate.py _runtime_gate)


@pytest.mark.parametrize("mutant,profile,catches", CASES)
def test_every_mutant_is_killed_by_the_property_it_names(mutant: str, profile: str, catches: tuple[str, ...]) -> None:
    result = run_gate(profile, mutant, KILL)
    assert result.found is not None, f"mutant {mutant} survived the gate on {profile}"
    assert result.found.violation.property in catches, (result.found.violation.property, result.found.also)
    trace = result.found.trace
    assert trace.mutant == mutant and trace.violation is not None
    if not trace.meta.get("raising_action"):
        replay(trace)   # the shrunk counterexample re-executes bit for bit


def test_the_default_tier_kills_every_mutant_on_some_profile() -> None:
    """Moving a slow kill to the slow tier must leave each mutant a profile on which the default run kills it."""
    left = {m.name for m in all_mutants()} - {m for m, p in
                                               ((m.name, p) for m in all_mutants() for p in m.profiles)
                                               if (m, p) not in SLOW_KILLS}
    assert left == set(SLOW_ONLY), f"mutants whose every profile is in SLOW_KILLS: {sorted(left)}"

"""Regenerate the committed counterexample example in reports/examples/ (run from anywhere):

    python reports/examples/make_examples.py

It runs seed scenario ``rebalance-timeout-is-max-session`` on profile 3.9 against mutant
``rebalance-timeout-min`` (the DelayedJoin waits the smallest member's rebalance timeout instead of
the largest) with the property checker watching every step, cuts the trace at the first violation
of ``rebalance-timeout-is-the-maximum`` and writes what the gate writes for a counterexample
(kgc/reporting.py's ``write_reports``) into reports/examples/rebalance-timeout-min/:

    counterexample.json   the replayable trace: kgc replay reports/examples/rebalance-timeout-min/counterexample.json
    report.md             Markdown with a Mermaid sequence diagram
    report.html           one self-contained HTML page with an inline SVG sequence diagram
    violation.json        the report as JSON
    test_<name>.py        the generated regression test (not under testpaths; run it with bin/test <file>)

The output is deterministic: tests/test_reports_examples.py checks that the committed files equal a
fresh generation, so a change to a renderer shows up as a diff here. Paths recorded in the files
are relative to the repo root, so the replay and test commands in them work from there.
"""
from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.actions import Action  # noqa: E402
from core.trace import Violation  # noqa: E402
from harness.scenarios import BY_NAME, Driver  # noqa: E402
from harness.world import World  # noqa: E402
from kgc.reporting import violation_report, write_reports  # noqa: E402
from properties.check import Checker  # noqa: E402
from reports.violation import ViolationReport  # noqa: E402

MUTANT = "rebalance-timeout-min"
SCENARIO = "rebalance-timeout-is-max-session"
PROFILE = "3.9"
PROPERTY = "rebalance-timeout-is-the-maximum"
#: where the example goes, relative to the repo root (recorded in the files as such)
OUT = Path("reports") / "examples" / MUTANT


class _CheckedDriver(Driver):
    """The scenario driver with the property checker looking at every step."""

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.checker = Checker(world)
        self.found: list[Violation] = []

    def act(self, action: Action) -> None:
        self.found.extend(self.checker.step(action))


def example_report() -> ViolationReport:
    """The counterexample: the scenario's trace on the mutant, cut at the violating step."""
    scenario = BY_NAME[SCENARIO]
    world = World(PROFILE, scenario.scope, clients=scenario.clients, record=True, mutant=MUTANT)
    driver = _CheckedDriver(world)
    for instr in scenario.script:
        driver.run(instr)
        if driver.found:
            break
    hits = [v for v in driver.found if v.property == PROPERTY]
    if not hits:
        raise SystemExit(f"make_examples: scenario {SCENARIO} on mutant {MUTANT} no longer violates {PROPERTY}; "
                         f"pick another example (found: {[v.property for v in driver.found]}).")
    violation = hits[0]
    trace = world.trace(SCENARIO)
    trace = dataclasses.replace(trace, steps=trace.steps[:violation.step + 1])
    return violation_report(trace, violation, shrunk_by=f"scenario {SCENARIO}, cut at the violation")


def generate(root: Path = ROOT) -> dict[str, Path]:
    """Write the example under ``root``/reports/examples/; returns the files, as paths relative to ``root``."""
    report = example_report()
    with contextlib.chdir(root):   # write_reports records its paths as given: keep them repo-relative
        return write_reports(report, OUT)


def main() -> None:
    for path in generate().values():
        print(ROOT / path)


if __name__ == "__main__":
    main()

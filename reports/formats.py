"""Machine-readable reports: a counterexample as JSON, a run as JSON and as JUnit XML."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from reports.violation import ViolationReport


def violation_json(report: ViolationReport) -> str:
    obj = {"property": report.property, "claim": report.claim, "source": report.source, "kind": report.kind,
           "title": report.title, "replay": report.replay_command, "shrunk_by": report.shrunk_by,
           "abstract_path": list(report.abstract_path), "trace": report.trace.to_json()}
    return json.dumps(obj, sort_keys=True, indent=1) + "\n"


@dataclass
class RunSummary:
    """What one gate or exploration run did, for the run report."""

    profile: str
    mutant: str | None
    seed: int
    passed: bool
    properties_checked: tuple[str, ...] = ()
    violations: tuple[ViolationReport, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)        # e.g. steps, examples, states, edges
    coverage: dict[str, float] = field(default_factory=dict)    # e.g. model node/edge coverage
    timings: dict[str, float] = field(default_factory=dict)     # seconds per phase (not compared across runs)
    notes: tuple[str, ...] = ()

    def to_json(self, with_timings: bool = True) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "profile": self.profile, "mutant": self.mutant, "seed": self.seed, "passed": self.passed,
            "properties_checked": list(self.properties_checked), "counts": self.counts,
            "coverage": {k: round(v, 4) for k, v in self.coverage.items()},
            "violations": [{"property": v.property, "step": v.violation.step, "message": v.violation.message}
                           for v in self.violations], "notes": list(self.notes)}
        if with_timings:
            obj["timings"] = {k: round(v, 3) for k, v in self.timings.items()}
        return obj


def run_json(summary: RunSummary, with_timings: bool = True) -> str:
    return json.dumps(summary.to_json(with_timings), sort_keys=True, indent=1) + "\n"


def junit_xml(summary: RunSummary, suite: str = "kgc") -> str:
    """One testcase per checked property; a violated one carries a <failure> with its message."""
    failed = {v.property: v for v in summary.violations}
    name = f"{suite}.{summary.profile}" + (f".{summary.mutant}" if summary.mutant else "")
    cases = []
    for prop in summary.properties_checked:
        case = f"  <testcase classname={quoteattr(name)} name={quoteattr(prop)}"
        if prop in failed:
            v = failed[prop]
            case += (f">\n    <failure message={quoteattr(v.violation.message[:300])}>"
                     f"{escape(v.title)}&#10;{escape(v.replay_command)}</failure>\n  </testcase>")
        else:
            case += "/>"
        cases.append(case)
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name={quoteattr(name)} '
            f'tests="{len(summary.properties_checked)}" failures="{len(failed)}" errors="0" skipped="0">\n'
            + "\n".join(cases) + "\n</testsuite>\n")

"""Counterexample reports: Markdown + Mermaid, HTML, JSON, JUnit, terminal, and the generated regression test."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

from core.responses import parse_response
from core.trace import Trace, Violation
from harness.scenarios import BY_NAME, Driver
from harness.world import World
from kgc.reporting import violation_report, write_reports
from properties.check import Checker
from reports.formats import RunSummary, junit_xml, run_json, violation_json
from reports.html import render_html
from reports.markdown import render_markdown
from reports.terminal import print_violation
from reports.violation import ViolationReport, mermaid

ROOT = Path(__file__).resolve().parents[1]
MUTANT, PROPERTY = "rebalance-timeout-min", "rebalance-timeout-is-the-maximum"


class CheckedDriver(Driver):
    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.checker = Checker(world)
        self.found: list[Violation] = []

    def act(self, action: object) -> None:
        self.found.extend(self.checker.step(action))   # type: ignore[arg-type]


@pytest.fixture(scope="module")
def report() -> ViolationReport:
    scenario = BY_NAME["rebalance-timeout-is-max-session"]
    world = World("3.9", scenario.scope, clients=scenario.clients, record=True, mutant=MUTANT)
    driver = CheckedDriver(world)
    for instr in scenario.script:
        driver.run(instr)
        if driver.found:
            break
    violation = next(v for v in driver.found if v.property == PROPERTY)
    trace = world.trace("rebalance-timeout")
    trace = dataclasses.replace(trace, steps=trace.steps[:violation.step + 1])
    return violation_report(trace, violation)


def test_markdown_has_claim_changed_fields_diagram_and_replay(report: ViolationReport) -> None:
    md = render_markdown(report)
    assert md.startswith(f"# {PROPERTY} violated on mutant {MUTANT} (profile 3.9)")
    assert "**Claim** (always_step):" in md and "seed 000" in md
    assert "delay_ms=5000" in md and "expected_ms=10000" in md          # the witness values
    assert "| # | step | time | group | gen | leader | members |" in md
    assert f"| {report.violation.step} **⚠** |" in md
    assert "```mermaid\nsequenceDiagram" in md and "Note over coord: VIOLATION" in md
    assert "kgc replay counterexample.json" in md
    assert "## Abstract-graph path" in md and "PreparingRebalance" in "\n".join(report.abstract_path)


#: message and note text: no ':' or ';', and '#' only as the entity code #35; (a bare '#' starts a comment)
_TEXT = r"(?:[^;:#]|#35;)+"
MERMAID_LINE = re.compile(
    r"^(sequenceDiagram|    autonumber|    participant \w+( as \w+)?|"
    rf"    (c\d+|coord|timer|log)(->>|-->>|-x)(c\d+|coord): {_TEXT}|    Note over [\w,]+: {_TEXT})$")


def test_mermaid_uses_only_the_supported_grammar(report: ViolationReport) -> None:
    diagram = mermaid(report.trace)
    bad = [line for line in diagram.splitlines() if not MERMAID_LINE.match(line)]
    assert bad == []
    participants = set(re.findall(r"participant (\w+)", diagram))
    used = set(re.findall(r"^    (\w+)(?:->>|-->>|-x)(\w+):", diagram, re.M)[0])
    assert used <= participants | {"coord"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag not in ("meta", "br", "line", "path", "marker", "defs"):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("line", "path", "marker", "defs"):
            return
        assert self.stack and self.stack[-1] == tag, (self.stack[-3:], tag)
        self.stack.pop()


def test_html_is_balanced_self_contained_and_escapes_ids(report: ViolationReport) -> None:
    hostile = dataclasses.replace(report.trace.steps[-1],
                                  responses=(parse_response('c0 JoinGroup#9 NONE member=<script>x</script>'),),
                                  leader_id="<b>&")
    trace = dataclasses.replace(report.trace, steps=report.trace.steps[:-1] + (hostile,))
    page = render_html(dataclasses.replace(report, trace=trace, property="p<i>"))
    parser = _Tags()
    parser.feed(page)
    assert parser.stack == [] and parser.scripts == 0
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;&amp;" in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")   # no external resources
    assert "<svg" in page


def test_json_report_round_trips_the_trace(report: ViolationReport) -> None:
    obj = json.loads(violation_json(report))
    assert obj["property"] == PROPERTY and obj["replay"] == "kgc replay counterexample.json"
    trace = Trace.loads(json.dumps(obj["trace"]))
    assert trace.mutant == MUTANT and trace.violation is not None and trace.violation.property == PROPERTY


def test_junit_has_a_failure_for_the_violated_property(report: ViolationReport) -> None:
    summary = RunSummary("3.9", MUTANT, 0, False, properties_checked=(PROPERTY, "leader-is-a-member"),
                         violations=(report,), counts={"steps": 15})
    root = ET.fromstring(junit_xml(summary))
    assert root.attrib["tests"] == "2" and root.attrib["failures"] == "1"
    failures = [case.attrib["name"] for case in root if case.find("failure") is not None]
    assert failures == [PROPERTY]
    assert json.loads(run_json(summary, with_timings=False))["violations"][0]["property"] == PROPERTY


def test_terminal_rendering(report: ViolationReport) -> None:
    console = Console(record=True, width=200)
    print_violation(report, console)
    text = console.export_text()
    assert f"✗ {PROPERTY} violated" in text and "kgc replay" in text and "PreparingRebalance" in text


def test_rendering_is_deterministic(report: ViolationReport) -> None:
    assert render_markdown(report) == render_markdown(report) and render_html(report) == render_html(report)


def test_generated_regression_test_fails_on_the_mutant_and_passes_on_the_reference(
        report: ViolationReport, tmp_path: Path) -> None:
    files = write_reports(report, tmp_path)
    assert Trace.loads(files["trace"].read_text()).violation is not None

    def run(mutant: str | None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KGC_MUTANT": mutant or "", "PYTHONPATH": str(ROOT)}
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(files["test"])],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    on_mutant, on_reference = run(MUTANT), run(None)
    assert on_mutant.returncode == 1 and PROPERTY in on_mutant.stdout, on_mutant.stdout[-2000:]
    assert on_reference.returncode == 0, on_reference.stdout[-2000:]

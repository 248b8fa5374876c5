"""Report details of issue 26 §8: long labels stay inside the HTML sequence diagram, a client's request is shown
by what it carried, the conform report's request column agrees with its diagram, and a page that quotes the seeds'
Chinese names the font it needs."""
from __future__ import annotations

import dataclasses
import random
import re
from html import unescape

from core.trace import Violation
from harness.scenarios import BY_NAME, Driver
from harness.scope import Scope
from harness.world import World
from kgc.reporting import violation_report
from reports.conform import mermaid as conform_mermaid
from reports.conform import render_html as conform_html
from reports.conform import render_markdown as conform_markdown
from reports.html import CHAR_PX, render_html, sequence_svg
from reports.violation import changed_rows

LONG_ID = "kafka-python-3.0.12-0f1e2d3c-4b5a-6978"     # a real client's client.id: member ids of ~45 characters


def _walk(world: World, steps: int, seed: int) -> World:
    rng = random.Random(seed)
    for _ in range(steps):
        choices = [a for a in world.enabled() if a.kind not in ("Crash", "Restart")]
        if not choices:
            break
        world.step(choices[rng.randrange(len(choices))])
    return world


def test_every_label_of_the_sequence_diagram_lies_inside_the_picture() -> None:
    scenario = BY_NAME["three-consumers-one-rebalance"]
    world = World("3.9", dataclasses.replace(scenario.scope, client_id=LONG_ID), clients=scenario.clients,
                  record=True)
    driver = Driver(world)
    for instr in scenario.script:
        driver.run(instr)
    trace = world.trace("long ids")
    svg = sequence_svg(trace)
    width = int(re.search(r'<svg [^>]*width="(\d+)"', svg).group(1))      # type: ignore[union-attr]
    labels = [(int(x), unescape(text)) for x, text in re.findall(r'<text x="(\d+)" y="\d+" fill="[^"]+">([^<]*)<',
                                                                  svg)]
    assert any(LONG_ID in text and "gen=" in text for _x, text in labels)    # the long ones are there, whole
    for x, text in labels:
        assert 0 <= x and x + CHAR_PX * len(text) <= width, text


def test_a_request_row_says_what_the_request_carried() -> None:
    world = World("3.9", Scope(commits=True), clients=("java", "java", "adversarial"), seed=3, record=True)
    _walk(world, 120, 3)
    trace = world.trace("adversary")
    sends = [s for s in trace.steps if s.action.client == 2 and s.action.kind == "LeaveGroup" and s.action.arg]
    assert sends, "the walk sent no adversarial LeaveGroup variant"
    report = violation_report(trace, Violation("refines-the-abstract-model", len(trace.steps) - 1, "planted"))
    rows = {index: what for index, what, _changed, _lines in changed_rows(trace, report.sent)}
    for step in sends:
        assert re.fullmatch(r"c2 sends LeaveGroup#\d+ member=\S+ gen=-?\d+( instance=\S+)?", rows[step.index]), \
            rows[step.index]
    assert all("variant" not in what for what in rows.values())
    assert rows[sends[0].index] in render_html(report)


def _probe(request: str, target_request: str) -> dict[str, object]:
    step = {"step": "a join", "member": "a", "api": "JoinGroup", "version": 5, "request": request,
            "target_request": target_request, "target": {"error": "NONE", "generation": 1},
            "reference": {"error": "NONE", "generation": 2}, "differs": ["generation"]}
    return {"probe": "p", "spec": "§4.4", "claim": "c", "needs": None, "seed": None, "verdict": "diverges",
            "attempts": 1, "unsupported": None, "differences": [], "unconfirmed": [], "property_failures": [],
            "steps": [step]}


def _result(probe: dict[str, object]) -> dict[str, object]:
    return {"target": "t", "reference": "r", "profile": "3.9", "config": "c", "timing_window_ms": 500,
            "summary": {"conforms": 0, "diverges": 1, "unsupported": 0, "classes": {"generation": 1}},
            "probes": [probe]}


def test_the_conform_request_column_shows_what_the_diagram_shows() -> None:
    probe = _probe("JoinGroup v5 member=b gen=1", "JoinGroup v5 member=a gen=1")
    md, html = conform_markdown(_result(probe)), conform_html(_result(probe))
    assert "member=a" in conform_mermaid(probe)
    row = next(line for line in md.splitlines() if line.startswith("| a join |"))
    assert row.startswith("| a join | JoinGroup v5 member=a gen=1 (to the reference: JoinGroup v5 member=b gen=1) |")
    assert "<td>JoinGroup v5 member=a gen=1 (to the reference: JoinGroup v5 member=b gen=1)</td>" in html
    same = _probe("JoinGroup v5 member=a gen=1", "JoinGroup v5 member=a gen=1")
    assert "| a join | JoinGroup v5 member=a gen=1 |" in conform_markdown(_result(same))


def test_a_page_quoting_the_seeds_chinese_names_the_font_it_needs() -> None:
    world = _walk(World("0.10.0", Scope(), clients=2, seed=0, record=True), 10, 0)
    trace = world.trace("fonts")
    quoting = violation_report(trace, Violation("at-most-one-live-heartbeat-per-member", 3, "planted"))
    plain = violation_report(trace, Violation("checker-observes-every-state", 3, "planted"))
    assert re.search("[\u4e00-\u9fff]", quoting.source) and not re.search("[\u4e00-\u9fff]", plain.claim + plain.source)
    page = render_html(quoting)
    assert '"Noto Sans CJK SC"' in page and "apt-get install fonts-noto-cjk" in page
    assert "fonts-noto-cjk" not in render_html(plain)

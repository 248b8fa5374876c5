"""Assembling and writing counterexample reports: the gate's glue between the checkers and reports/.

``violation_report`` replays the trace to compute the abstract-graph path (harness + model), looks
the property up in the catalog, and returns the data record every report format renders.
``write_reports`` writes all formats for one counterexample into a directory.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from core.trace import Trace, Violation
from harness.abstraction import abstract
from harness.messages import Request
from harness.replay import world_for
from harness.world import World
from properties.catalog import CATALOG
from properties.checker_side import unobservable
from properties.runtime_4x import RULES as RUNTIME_RULES
from model.releases import release
from reports.formats import violation_json
from reports.html import render_html
from reports.markdown import render_markdown
from reports.regression import render_regression_test, test_name
from reports.violation import ViolationReport


def abstract_path(trace: Trace) -> tuple[str, ...]:
    """The abstract states the trace passes through (stutters folded), each with the step that led there;
    it ends at a state the abstraction has no image for (a ``checker-observes-every-state`` trace)."""
    return _replayed(trace)[0]


def _replayed(trace: Trace) -> tuple[tuple[str, ...], dict[int, str]]:
    """One replay of ``trace``: its abstract path, and what each request a client sent carried (by step index).
    A release the model does not judge yet (4.1) has no abstract path: one line says so."""
    world = world_for(trace, record=True)
    judged = release(trace.profile).runnable
    text = _abstract_text(world) if judged else \
        f"{NO_IMAGE} the model does not judge profile {trace.profile} yet)"
    lines, last, sent = [f"      {text}"], text, {}
    for step in trace.steps:
        if not world.is_enabled(step.action):
            lines.append(f"  (step {step.index} {step.action} is not enabled here: the trace diverges)")
            break
        in_flight = set(world.net.requests)
        try:
            world.step(step.action)
        except Exception:   # noqa: BLE001 — past a state with no abstract image; the report is still written
            break
        for key in sorted(set(world.net.requests) - in_flight):
            sent[step.index] = carried(world.net.requests[key])
        if last.startswith(NO_IMAGE):
            continue                      # the path ended; the requests are still read
        text = _abstract_text(world)
        if text != last:
            lines.append(f"  --[{step.index}: {step.action}]-->\n      {text}")
            last = text
    return tuple(lines), sent


def carried(req: Request) -> str:
    """What a request carries, in one line: ``LeaveGroup#4 member=c0-1 gen=-1 instance=i0``; a JoinGroup with its
    timeouts and protocols (what an adversarial client varies)."""
    parts = [f"{req.api}#{req.corr}", f"member={req.member_id or '-'}"]
    if req.api == "JoinGroup":
        parts += [f"session={req.session_timeout_ms}", f"rebalance={req.rebalance_timeout_ms}",
                  f"protocols={req.protocol_type}:{','.join(name for name, _ in req.protocols) or '-'}"]
    else:
        parts.append(f"gen={req.generation_id}")
    if req.group_instance_id is not None:
        parts.append(f"instance={req.group_instance_id}")
    if req.assignments:
        parts.append("assign=" + ",".join(m for m, _ in req.assignments))
    return " ".join(parts)


NO_IMAGE = "(no abstract state:"


def _abstract_text(world: World) -> str:
    try:
        return abstract(world.coord, world.group_id).short()
    except Exception as exc:   # noqa: BLE001 — the report of an unabstractable state must still be written
        return f"{NO_IMAGE} {type(exc).__name__}: {unobservable('abstracting', exc, -1).witness['message']})"


def violation_report(trace: Trace, violation: Violation, shrunk_by: str = "BFS (shortest)",
                     trace_file: str = "counterexample.json") -> ViolationReport:
    prop = CATALOG.get(violation.property)
    rule = next((r for r in RUNTIME_RULES if r.name == violation.property), None)   # a 4.x runtime rule
    claim = prop.claim if prop else rule.claim if rule else violation.message
    source = prop.source if prop else rule.source if rule else "kgc"
    kind = prop.kind if prop else "always_step" if rule else "always"
    trace = replace(trace, violation=violation)
    path, sent = _replayed(trace)
    return ViolationReport(violation.property, claim, source, kind, violation, trace, path, trace_file, shrunk_by,
                           sent=sent)


def write_reports(report: ViolationReport, out: Path) -> dict[str, Path]:
    """counterexample.json (replayable trace), report.md, report.html, violation.json, test_<name>.py."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "trace": out / "counterexample.json", "markdown": out / "report.md", "html": out / "report.html",
        "json": out / "violation.json", "test": out / f"{test_name(report)}.py",
    }
    report = replace(report, trace_file=str(files["trace"]),
                     extra={**report.extra, "regression_test": str(files["test"])})
    files["trace"].write_text(report.trace.dumps(), encoding="utf-8")
    files["markdown"].write_text(render_markdown(report), encoding="utf-8")
    files["html"].write_text(render_html(report), encoding="utf-8")
    files["json"].write_text(violation_json(report), encoding="utf-8")
    files["test"].write_text(render_regression_test(report), encoding="utf-8")
    return files

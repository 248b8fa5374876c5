"""The conformance report (`kgc conform`): JSON, Markdown + Mermaid, self-contained HTML + SVG, JUnit XML.

Renders the plain data of a run (schema ``kgc-conform/1``, built by wire/conform/run.py) — per probe
the target's answer, the reference's answer, the SPEC.md rule and the verdict, and a sequence diagram
for each divergent probe. Nothing here reads a clock: equal answers give equal bytes.
"""
from __future__ import annotations

import json
from html import escape
from typing import Any
from xml.sax.saxutils import quoteattr

from reports.html import CSS
from reports.violation import _mermaid_text


def answer_text(a: dict[str, Any] | None) -> str:
    """An answer in a few words: ``NONE gen 2 leader a members a,b``; ``no answer``; ``connection closed``."""
    if a is None:
        return "no answer"
    if a.get("closed"):
        return "connection closed"
    if a.get("malformed"):
        return f"malformed: {a['malformed']}"
    parts = [a["error"]]
    if "generation" in a:
        parts.append(f"gen {a['generation']}")
    if a.get("member_id"):
        parts.append(f"id {a['member_id']}")
    if a.get("leader"):
        parts.append(f"leader {a['leader']}")
    if a.get("members"):
        parts.append("members " + ",".join(m.split(":")[0] for m in a["members"]))
    if a.get("assignment"):
        parts.append(f"assignment {a['assignment']}")
    if a.get("protocol_type") or (a.get("protocol_name") and "generation" not in a):
        parts.append(f"protocol {a.get('protocol_type')}/{a.get('protocol_name')}")
    if a.get("member_errors"):
        parts.append("[" + " ".join(a["member_errors"]) + "]")
    return " ".join(parts)


def conform_json(result: dict[str, Any]) -> str:
    return json.dumps(result, sort_keys=True, indent=1) + "\n"


def _divergent(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in result["probes"] if p["verdict"] == "diverges"]


def differs_text(probe: dict[str, Any], step: dict[str, Any]) -> str:
    """A step's difference classes, a timing one with its numbers: the answer's latency on each side (rounded to
    500 ms, wire/conform/answers.py) or which side did not answer — the other classes' numbers are the two answers
    beside it."""
    timing = next((d for d in probe["differences"] if d["step"] == step["step"] and d["class"] == "timing"), None)
    return ", ".join(_timing_text(timing) if cls == "timing" and timing is not None else cls
                     for cls in step["differs"])


def _timing_text(d: dict[str, Any]) -> str:
    if d["field"] == "latency_ms":
        return f"timing: {d['target']} ms, Kafka {d['reference']} ms"
    return "timing: " + ("the target answered, Kafka did not" if d["target"] else "Kafka answered, the target did not")


def mermaid(probe: dict[str, Any]) -> str:
    """The probe as a Mermaid sequence diagram against the target; a differing answer carries the reference's."""
    members = sorted({s["member"] for s in probe["steps"]})
    lines = ["sequenceDiagram"] + [f"    participant {m}" for m in members] + ["    participant target"]
    for s in probe["steps"]:
        lines.append(f"    {s['member']}->>target: {_mermaid_text(s['target_request'])}")
        arrow = "--x" if s["differs"] else "-->>"
        lines.append(f"    target{arrow}{s['member']}: {_mermaid_text(answer_text(s['target']))}")
        if s["differs"]:
            note = f"Kafka (reference) {answer_text(s['reference'])} ({differs_text(probe, s)})"
            lines.append(f"    Note over target,{s['member']}: {_mermaid_text(note)}")
    return "\n".join(lines) + "\n"


def request_cell(step: dict[str, Any]) -> str:
    """The request column: what was sent to the target — the diagram's arrow — and what went to the reference only
    where that differs (ids are labelled, so they differ when the two sides' answers did)."""
    if step["request"] == step["target_request"]:
        return str(step["target_request"])
    return f"{step['target_request']} (to the reference: {step['request']})"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(result: dict[str, Any], command: str = "kgc conform") -> str:
    s = result["summary"]
    out = [f"# kgc conform: {result['target']} against {result['reference']}, profile {result['profile']}", "",
           f"Broker configuration assumed: {result['config']}. Timing window: {result['timing_window_ms']} ms.", "",
           f"**{s['conforms']} conform, {s['diverges']} diverge, {s['unsupported']} unsupported** "
           f"(difference classes: {', '.join(f'{k} {v}' for k, v in s['classes'].items()) or 'none'}).", "",
           "| probe | SPEC.md | verdict | differences |", "|---|---|---|---|"]
    for p in result["probes"]:
        classes = sorted({d["class"] for d in p["differences"]} | ({"property"} if p["property_failures"] else set()))
        out.append(f"| {p['probe']} | {_cell(p['spec'])} | {p['verdict']} | {', '.join(classes) or '-'} |")
    out += _clients_markdown(result.get("clients"))
    for p in result["probes"]:
        out += ["", f"## {p['probe']} — {p['verdict']}", "", f"*{p['claim']}* ({p['spec']})"]
        if p["needs"]:
            out.append(f"Depends on: {p['needs']}.")
        if p["seed"]:
            out.append(f"Seed scenario: {p['seed']}.")
        out.append(f"Reproduce: `{command} --probe {p['probe']}`")
        if p.get("attempts") == 2:
            out.append(_attempts_text(p))
        if p["unsupported"]:
            out += ["", f"Not run: {p['unsupported']}."]
            continue
        out += ["", "| step | request | target | reference (Kafka) | differs |", "|---|---|---|---|---|"]
        for st in p["steps"]:
            out.append(f"| {st['step']} | {_cell(request_cell(st))} | {_cell(answer_text(st['target']))} | "
                       f"{_cell(answer_text(st['reference']))} | {_cell(differs_text(p, st))} |")
        for f in p["property_failures"]:
            out.append(f"\nProperty **{f['property']}** fails at {f['step']}: {f['message']}")
        if p["verdict"] == "diverges":
            out += ["", "```mermaid", mermaid(p).rstrip(), "```"]
    return "\n".join(out) + "\n"


def _attempts_text(p: dict[str, Any]) -> str:
    """A divergent probe ran twice; only differences both attempts showed count (wire/conform/run.py)."""
    text = "Run twice: the differences below showed in both attempts (the answers shown are the second's)."
    if p.get("unconfirmed"):
        text += " Seen in one attempt only, not counted: " + ", ".join(p["unconfirmed"]) + "."
    return text


def _clients_markdown(clients: dict[str, Any] | None) -> list[str]:
    """The real-client section: the timeouts and bounds, the per-target table of client-visible failures with
    run counts and reproduce commands, what was skipped, and each run's verdicts (messages carry measured
    times, so this section varies between runs)."""
    if not clients:
        return []
    t = clients["timeouts"]
    out = ["", f"## Real clients — {clients['verdict']}", "",
           f"Every schedule with every library, {clients['repeat']} run(s) each, against the target and the control "
           f"at once ({clients['partitions']} partitions). Timeouts: session S {t['session_ms']} ms, heartbeat "
           f"{t['heartbeat_ms']} ms, rebalance R (max.poll.interval) {t['rebalance_ms']} ms, initial delay D "
           f"{t['initial_delay_ms']} ms, margin {t['margin_ms']} ms. Bounds: a partition without owner at most "
           f"{t['unowned_bound_ms']} ms (S + R + D + margin); a SIGKILLed member's partitions owned again within "
           f"{t['expiry_bound_ms']} ms (S + margin); the group settled (complete, no rebalance callback for "
           f"{t.get('quiet_ms', 0)} ms) within {t.get('rebalance_bound_ms', 0)} ms of its last change (R + D + "
           f"margin; S more after a SIGKILL). A run ends once its group settled, or at that bound. A property "
           "counts against the target only when it held on the control in the same run; each run's event logs "
           "are in `clients/` beside this report.", ""]
    if clients["summary"]:
        out += ["| schedule | library | property | runs | example | reproduce |", "|---|---|---|---|---|---|"]
        out += [f"| {r['schedule']} | {r['library']} | {r['property']} | {_runs(r)} | "
                f"{_cell(r['example'])} | `{r.get('reproduce', '')}` |" for r in clients["summary"]]
    else:
        out.append("No client-visible failure: every property that held on the control held on the target.")
    out += [f"- {why}" for why in clients["skipped"]]
    late = sum(1 for r in clients["runs"] if r.get("late_start"))
    if late:
        out.append(f"- {late} of {len(clients['runs'])} runs not judged: a consumer started more than "
                   f"{t.get('late_start_ms', 0)} ms after its scheduled time (a loaded machine), so the schedule's "
                   "situation may never have arisen.")
    for r in clients["runs"]:
        verdicts = [f"{p} FAILS ({'; '.join(m[:2])})" for p, m in r["failures"].items()]
        verdicts += [f"{p} not judged (failed on the control too: {'; '.join(r['control_failures'].get(p, [])[:1])})"
                     for p in r["not_judged"]]
        verdicts += [why for whys in r.get("unjudged", {}).values() for why in whys]
        if r.get("late_start"):
            verdicts = [f"not judged, the schedule slipped ({'; '.join(r['late_start'][:2])})"]
        errors = f"; client errors: {'; '.join(r['errors'][:3])}" if r["errors"] else ""
        took = f" ({r['seconds']['target']:g} s)" if "seconds" in r else ""
        out.append(f"- {r['schedule']} × {r['library']} #{r['attempt']}{took}: {', '.join(verdicts) or 'holds'}"
                   f"{errors}")
    return out


def _runs(row: dict[str, Any]) -> str:
    """k of N, and how many runs could not judge it because the control failed too."""
    extra = f"; {row['not_judged']} not judged: the control failed too" if row.get("not_judged") else ""
    slipped = row.get("attempts", row["of"]) - row["of"]
    extra += f"; {slipped} run(s) could not judge it (a late start, or its situation did not arise)" if slipped else ""
    return f"{row['runs']} of {row['of']}" + (f" ({extra[2:]})" if extra else "")


def _clients_html(clients: dict[str, Any] | None) -> list[str]:
    if not clients:
        return []
    rows = "".join(f"<tr><td>{escape(r['schedule'])}</td><td>{escape(r['library'])}</td><td>{escape(r['property'])}"
                   f"</td><td>{escape(_runs(r))}</td><td>{escape(r['example'])}</td><td><code>"
                   f"{escape(r.get('reproduce', ''))}</code></td></tr>" for r in clients["summary"])
    return [f"<h2>Real clients — {escape(clients['verdict'])}</h2>",
            "<table><tr><th>schedule</th><th>library</th><th>property</th><th>runs</th><th>example</th>"
            f"<th>reproduce</th></tr>{rows}</table>" if rows else "<p>No client-visible failure.</p>",
            "<ul>" + "".join(f"<li>{escape(why)}</li>" for why in clients["skipped"]) + "</ul>"]


def sequence_svg(probe: dict[str, Any]) -> str:
    lanes = sorted({s["member"] for s in probe["steps"]}) + ["target"]
    x = {lane: 70 + 150 * i for i, lane in enumerate(lanes)}
    rows: list[tuple[str, str, str, bool]] = []
    for s in probe["steps"]:
        rows.append((s["member"], "target", s["target_request"], False))
        rows.append(("target", s["member"], answer_text(s["target"]), bool(s["differs"])))
        if s["differs"]:
            rows.append(("target", "target", "Kafka: " + answer_text(s["reference"]), True))
    height = 50 + 24 * len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{x["target"] + 520}" height="{height}" role="img" '
             'aria-label="sequence diagram"><defs><marker id="a" markerWidth="8" markerHeight="8" refX="8" refY="4" '
             'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>']
    for lane in lanes:
        parts.append(f'<text x="{x[lane]}" y="16" text-anchor="middle">{escape(lane)}</text>'
                     f'<line x1="{x[lane]}" y1="22" x2="{x[lane]}" y2="{height}" stroke="#bbb"/>')
    for i, (src, dst, label, bad) in enumerate(rows):
        y, color = 40 + 24 * i, "#c00" if bad else "#333"
        if src == dst:
            parts.append(f'<text x="{x[src] + 6}" y="{y + 4}" fill="{color}">{escape(label)}</text>')
            continue
        parts.append(f'<line x1="{x[src]}" y1="{y}" x2="{x[dst]}" y2="{y}" stroke="{color}" marker-end="url(#a)"/>'
                     f'<text x="{min(x[src], x[dst]) + 6}" y="{y - 4}" fill="{color}">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(result: dict[str, Any], command: str = "kgc conform") -> str:
    s = result["summary"]
    body = [f"<h1>kgc conform: {escape(result['target'])} against {escape(result['reference'])}, profile "
            f"{escape(result['profile'])}</h1>",
            f"<p>Broker configuration assumed: {escape(result['config'])}. Timing window: "
            f"{result['timing_window_ms']} ms.</p>",
            f"<p><b>{s['conforms']} conform, {s['diverges']} diverge, {s['unsupported']} unsupported</b></p>",
            "<table><tr><th>probe</th><th>SPEC.md</th><th>verdict</th></tr>"]
    body += [f"<tr><td>{escape(p['probe'])}</td><td>{escape(p['spec'])}</td><td>{escape(p['verdict'])}</td></tr>"
             for p in result["probes"]]
    body.append("</table>")
    body += _clients_html(result.get("clients"))
    for p in result["probes"]:
        body.append(f"<h2>{escape(p['probe'])} — {escape(p['verdict'])}</h2><p class=\"claim\">{escape(p['claim'])} "
                    f"({escape(p['spec'])})</p><p>Reproduce: <code>{escape(command)} --probe {escape(p['probe'])}"
                    "</code></p>" + (f"<p>{escape(_attempts_text(p))}</p>" if p.get("attempts") == 2 else ""))
        if p["unsupported"]:
            body.append(f"<p>Not run: {escape(p['unsupported'])}.</p>")
            continue
        body.append("<table><tr><th>step</th><th>request</th><th>target</th><th>reference (Kafka)</th>"
                    "<th>differs</th></tr>")
        for st in p["steps"]:
            cls = ' class="violation"' if st["differs"] else ""
            body.append(f"<tr{cls}><td>{escape(st['step'])}</td><td>{escape(request_cell(st))}</td>"
                        f"<td>{escape(answer_text(st['target']))}</td><td>{escape(answer_text(st['reference']))}</td>"
                        f"<td>{escape(differs_text(p, st))}</td></tr>")
        body.append("</table>")
        body += [f"<p>Property <b>{escape(f['property'])}</b> fails at {escape(f['step'])}: {escape(f['message'])}</p>"
                 for f in p["property_failures"]]
        if p["verdict"] == "diverges":
            body.append(sequence_svg(p))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kgc conform</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def junit_xml(result: dict[str, Any]) -> str:
    """One testcase per probe (classname kgc-conform.TARGET); a divergence is a <failure>, unsupported <skipped>."""
    name = f"kgc-conform.{result['target']}"
    cases = []
    for p in result["probes"]:
        case = f"  <testcase classname={quoteattr(name)} name={quoteattr(p['probe'])}"
        if p["verdict"] == "diverges":
            what = [f"{d['step']} {d['class']} {d['field']}: target {d['target']!r}, reference {d['reference']!r}"
                    for d in p["differences"]]
            what += [f"{f['property']} at {f['step']}: {f['message']}" for f in p["property_failures"]]
            text = escape("\n".join(what))
            case += f">\n    <failure message={quoteattr(what[0][:300])}>{text}</failure>\n  </testcase>"
        elif p["verdict"] == "unsupported":
            case += f">\n    <skipped message={quoteattr(p['unsupported'])}/>\n  </testcase>"
        else:
            case += "/>"
        cases.append(case)
    for run in (result.get("clients") or {}).get("runs", []):
        run_name = f"{run['schedule']}-{run['library']}-{run['attempt']}"
        case = f"  <testcase classname={quoteattr(name + '.clients')} name={quoteattr(run_name)}"
        found = [f"{p}: {m}" for p, ms in run["failures"].items() for m in ms]
        cases.append(case + (f">\n    <failure message={quoteattr(found[0][:300])}>{escape(chr(10).join(found))}"
                             "</failure>\n  </testcase>" if found else "/>"))
    failures = sum(c.count("<failure") for c in cases)
    skipped = sum(p["verdict"] == "unsupported" for p in result["probes"])
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name={quoteattr(name)} tests="{len(cases)}" '
            f'failures="{failures}" skipped="{skipped}">\n' + "\n".join(cases) + "\n</testsuite>\n")

"""A counterexample as one self-contained HTML page: no scripts, no external resources, every id escaped.

The sequence diagram is drawn as inline SVG (lanes for the clients, the coordinator, the timer
and the log), so the page shows the picture without Mermaid.
"""
from __future__ import annotations

from html import escape

from core.actions import receive_summary
from core.trace import Trace
from reports.terminal import format_ms
from reports.violation import FIELDS, ViolationReport, changed_rows, request_names

CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}th{background:#f3f3f3}
tr.violation{background:#fde2e2}code,pre{font:12px ui-monospace,monospace}
pre{background:#f7f7f7;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere}.claim{font-size:16px}
svg text{font:11px ui-monospace,monospace;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}"""


def _arrows(trace: Trace) -> list[tuple[str, str, str, bool]]:
    """(from lane, to lane, label, is_violation) for the diagram."""
    names = request_names(trace)
    out = []
    for step in trace.steps:
        a = step.action
        who, bad = f"c{a.client}", trace.violation is not None and step.index == trace.violation.step
        if a.kind == "DeliverRequest":
            out.append((who, "coordinator", f"{names.get((a.client, a.arg), 'request')}#{a.arg}", bad))
        elif a.kind == "Receive":
            out.append((who, "coordinator", receive_summary(str(a.arg)), bad))
        elif a.kind == "FireTimer":
            out.append(("timer", "coordinator", f"task {a.arg} expires", bad))
        elif a.kind == "CompleteAppend":
            out.append(("log", "coordinator", f"append {a.arg}", bad))
        elif a.kind == "FlushBatch":
            out.append(("log", "coordinator", f"batch flushed {a.arg}", bad))
        elif a.kind == "CommitBatch":
            out.append(("log", "coordinator", "batch committed", bad))
        elif a.kind in ("AdvanceClock", "AdvanceToNextDeadline"):
            out.append(("timer", "timer", f"clock {format_ms(step.time_ms)}", bad))
        for response in step.response_lines:
            target, text = response.split(" ", 1)
            out.append(("coordinator", target, text, bad))
    return out


def sequence_svg(trace: Trace) -> str:
    clients = sorted({f"c{s.action.client}" for s in trace.steps if s.action.client >= 0})
    lanes = clients + ["coordinator", "timer", "log"]
    x = {lane: 90 + 170 * i for i, lane in enumerate(lanes)}
    arrows = _arrows(trace)
    height = 50 + 24 * len(arrows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{90 + 170 * len(lanes)}" height="{height}" '
             f'role="img" aria-label="sequence diagram">']
    for lane in lanes:
        parts.append(f'<text x="{x[lane]}" y="16" text-anchor="middle">{escape(lane)}</text>'
                     f'<line x1="{x[lane]}" y1="22" x2="{x[lane]}" y2="{height}" stroke="#bbb"/>')
    for i, (src, dst, label, bad) in enumerate(arrows):
        y = 40 + 24 * i
        color = "#c00" if bad else "#333"
        if src == dst:
            parts.append(f'<text x="{x[src] + 6}" y="{y + 4}" fill="#777">{escape(label)}</text>')
            continue
        parts.append(f'<line x1="{x[src]}" y1="{y}" x2="{x.get(dst, x[src])}" y2="{y}" stroke="{color}" '
                     f'marker-end="url(#a)"/><text x="{(x[src] + x.get(dst, x[src])) // 2}" y="{y - 4}" '
                     f'text-anchor="middle" fill="{color}">{escape(label)}</text>')
    parts.insert(1, '<defs><marker id="a" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
                    '<path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: ViolationReport) -> str:
    v, trace = report.violation, report.trace
    rows = []
    for index, what, changed, lines in changed_rows(trace):
        cls = ' class="violation"' if index == v.step else ""
        cells = "".join(f"<td>{escape(changed.get(f, ''))}</td>" for f in FIELDS)
        detail = "<br>".join(escape(line) for line in lines)
        rows.append(f"<tr{cls}><td>{index}</td><td>{escape(what)}</td>{cells}<td>{detail}</td></tr>")
    witness = "".join(f"<tr><td><code>{escape(str(k))}</code></td><td><code>{escape(repr(val))}</code></td></tr>"
                      for k, val in v.witness.items())
    path = escape("\n".join(report.abstract_path)) if report.abstract_path else "(not computed)"
    head = "".join(f"<th>{escape(f)}</th>" for f in FIELDS)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(report.title)}</title><style>{CSS}</style></head>
<body><h1>{escape(report.title)}</h1>
<p class="claim"><b>Claim</b> ({escape(report.kind)}): {escape(report.claim)}</p>
<p><b>Source</b>: {escape(report.source)}<br><b>Violated at step</b> {v.step} of {len(trace.steps)}
({escape(report.shrunk_by)}).</p>
<h2>Witness</h2><table>{witness or '<tr><td>(none)</td></tr>'}</table><pre>{escape(v.message)}</pre>
<h2>Sequence diagram</h2>{sequence_svg(trace)}
<h2>Trace (only changed fields)</h2>
<table><tr><th>#</th><th>step</th>{head}<th>responses and coordinator events</th></tr>{''.join(rows)}</table>
<h2>Abstract-graph path</h2><pre>{path}</pre>
<h2>Reproduce</h2><pre>{escape(report.replay_command)}</pre>
</body></html>
"""

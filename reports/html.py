"""A counterexample as one self-contained HTML page: no scripts, no external resources, every id escaped.

The sequence diagram is drawn as inline SVG (lanes for the clients, the coordinator, the timer
and the log), so the page shows the picture without Mermaid.
"""
from __future__ import annotations

import re
from html import escape

from core.actions import receive_summary
from core.trace import Trace
from reports.terminal import format_ms
from reports.violation import FIELDS, ViolationReport, changed_rows, request_names

#: fonts with the seeds' Chinese, after the Latin ones (a browser takes each character from the first font that has
#: it); which of them a reader has varies — none may be installed (cjk_note says so in the report)
CJK_FONTS = '"Noto Sans CJK SC","Source Han Sans SC","PingFang SC","Microsoft YaHei","WenQuanYi Micro Hei"'
CSS = f"""body{{font:14px/1.45 system-ui,{CJK_FONTS},sans-serif;margin:2em;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}}th{{background:#f3f3f3}}
tr.violation{{background:#fde2e2}}code,pre{{font:12px ui-monospace,monospace,{CJK_FONTS}}}
pre{{background:#f7f7f7;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere}}.claim{{font-size:16px}}
.note{{color:#555;font-size:12px}}
svg text{{font:11px ui-monospace,monospace;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}}"""
CJK = re.compile("[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


def cjk_note(*texts: str) -> str:
    """A line saying which font the page needs, when it quotes Chinese (the seed documents): without a CJK font a
    browser shows boxes, and no font can be named that every reader has."""
    if not any(CJK.search(t) for t in texts):
        return ""
    return ('<p class="note">This page quotes the seed documents in Chinese. If they show as boxes, install a '
            "Simplified Chinese font — Noto Sans CJK SC (Debian/Ubuntu: <code>apt-get install fonts-noto-cjk</code>)"
            " or Source Han Sans SC.</p>")


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


CHAR_PX = 7       # an 11px monospace character is 6.6px wide; rounded up so a label never runs out of the picture
LANE_PX = 170     # between two lanes
MARGIN_PX = 90    # left of the first lane (its name is centred on it)


def sequence_svg(trace: Trace) -> str:
    """Lanes for the clients, the coordinator, the timer and the log; a message is an arrow with its label written
    rightwards from the arrow's left end, so a long one (a real client's 40-character member id) is never cut at
    the left edge; the picture is as wide as its longest label needs."""
    clients = sorted({f"c{s.action.client}" for s in trace.steps if s.action.client >= 0})
    lanes = clients + ["coordinator", "timer", "log"]
    x = {lane: MARGIN_PX + LANE_PX * i for i, lane in enumerate(lanes)}
    arrows = _arrows(trace)
    height = 50 + 24 * len(arrows)
    labels = [(min(x[src], x.get(dst, x[src])) + 6, label) for src, dst, label, _bad in arrows]
    width = max([x[lanes[-1]] + MARGIN_PX] + [left + CHAR_PX * len(label) + 10 for left, label in labels])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="sequence diagram">']
    for lane in lanes:
        parts.append(f'<text x="{x[lane]}" y="16" text-anchor="middle">{escape(lane)}</text>'
                     f'<line x1="{x[lane]}" y1="22" x2="{x[lane]}" y2="{height}" stroke="#bbb"/>')
    for i, ((src, dst, label, bad), (left, _)) in enumerate(zip(arrows, labels, strict=True)):
        y = 40 + 24 * i
        color = "#c00" if bad else "#333"
        if src == dst:
            parts.append(f'<text x="{left}" y="{y + 4}" fill="#777">{escape(label)}</text>')
            continue
        parts.append(f'<line x1="{x[src]}" y1="{y}" x2="{x.get(dst, x[src])}" y2="{y}" stroke="{color}" '
                     f'marker-end="url(#a)"/><text x="{left}" y="{y - 4}" fill="{color}">{escape(label)}</text>')
    parts.insert(1, '<defs><marker id="a" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
                    '<path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: ViolationReport) -> str:
    v, trace = report.violation, report.trace
    rows = []
    for index, what, changed, lines in changed_rows(trace, report.sent):
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
({escape(report.shrunk_by)}).</p>{cjk_note(report.claim, report.source, v.message)}
<h2>Witness</h2><table>{witness or '<tr><td>(none)</td></tr>'}</table><pre>{escape(v.message)}</pre>
<h2>Sequence diagram</h2>{sequence_svg(trace)}
<h2>Trace (only changed fields)</h2>
<table><tr><th>#</th><th>step</th>{head}<th>responses and coordinator events</th></tr>{''.join(rows)}</table>
<h2>Abstract-graph path</h2><pre>{path}</pre>
<h2>Reproduce</h2><pre>{escape(report.replay_command)}</pre>
</body></html>
"""

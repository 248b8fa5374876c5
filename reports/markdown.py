"""A counterexample as Markdown (renders on a code-hosting site: tables and a Mermaid block)."""
from __future__ import annotations

from reports.violation import FIELDS, ViolationReport, changed_rows, mermaid


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def render_markdown(report: ViolationReport) -> str:
    v, trace = report.violation, report.trace
    out = [f"# {report.title}", "",
           f"**Claim** ({report.kind}): {report.claim}  ", f"**Source**: {report.source}  ",
           f"**Violated at step** {v.step} of {len(trace.steps)} ({report.shrunk_by}).", "",
           "## Witness", "", "| value | |", "|---|---|"]
    out += [f"| `{_cell(str(k))}` | `{_cell(repr(val))}` |" for k, val in v.witness.items()] or ["| (none) | |"]
    out += ["", f"> {_cell(v.message)}", "", "## Trace (only changed fields)", "",
            "| # | step | " + " | ".join(FIELDS) + " | responses and coordinator events |",
            "|---|---|" + "---|" * len(FIELDS) + "---|"]
    for index, what, changed, lines in changed_rows(trace, report.sent):
        marker = " **⚠**" if index == v.step else ""
        cells = [_cell(changed.get(f, "")) for f in FIELDS]
        out.append(f"| {index}{marker} | {_cell(what)} | " + " | ".join(cells) + f" | {_cell(chr(10).join(lines))} |")
    out += ["", "## Sequence diagram", "", "```mermaid", mermaid(trace).rstrip(), "```", ""]
    if report.abstract_path:
        out += ["## Abstract-graph path", "", "```"] + list(report.abstract_path) + ["```", ""]
    out += ["## Reproduce", "", "```bash", report.replay_command,
            f"bin/test {report.extra.get('regression_test', 'tests/regression/test_<name>.py')}", "```", ""]
    return "\n".join(out)

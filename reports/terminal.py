"""Traces as readable terminal tables (rich): one row per step, quiet clock steps folded together."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from core.actions import REQUEST_KINDS, receive_summary
from core.trace import Step, Trace

if TYPE_CHECKING:
    from reports.violation import ViolationReport

_CLOCK = frozenset({"AdvanceClock", "AdvanceToNextDeadline"})
_STATE_STYLE = {"Stable": "green", "PreparingRebalance": "yellow", "CompletingRebalance": "cyan",
                "AwaitingSync": "cyan", "Empty": "dim", "Dead": "red"}


def format_ms(ms: int) -> str:
    """12.345s — seconds with milliseconds, the resolution of the mock clock."""
    return f"{ms // 1000}.{ms % 1000:03d}s"


@dataclass(frozen=True, slots=True)
class Row:
    first: int
    last: int
    time_ms: int
    event: str
    state: str
    generation_id: int
    members: str
    detail: str


def describe_action(step: Step, apis: dict[tuple[int, object], str] | None = None, carried: str | None = None
                    ) -> str:
    """The step as a short sentence: who did what. ``apis`` names requests by (client, corr); ``carried``: what the
    request a client sends in this step carries (``LeaveGroup#4 member=c0-1 gen=-1``), known to whoever replayed the
    trace — without it a send is named by its kind and the client's variant number."""
    a = step.action
    c = f"c{a.client}"
    if carried is not None and a.kind in REQUEST_KINDS:
        return f"{c} sends {carried}"
    req = f"{c} {(apis or {}).get((a.client, a.arg), 'request')}#{a.arg}"
    sentences = {
        "DeliverRequest": f"coordinator handles {req}",
        "Receive": f"coordinator handles {c} {receive_summary(str(a.arg))} (a real client's)",
        "DeliverResponse": f"{c} receives {req.split(' ', 1)[1]} response",
        "DropRequest": f"network loses {req}",
        "DropResponse": f"{c} never gets {req.split(' ', 1)[1]} response",
        "AdvanceClock": f"clock +{a.arg} ms",
        "AdvanceToNextDeadline": "clock to next deadline",
        "FireTimer": f"timer fires task {a.arg}",
        "CompleteAppend": f"log append completes ({a.arg})",
        "FlushBatch": "log writes the open batch" if a.arg == "NONE" else f"log fails the open batch ({a.arg})",
        "CommitBatch": "high watermark passes the oldest written batch",
        "Choose": f"the last step again, choice points picking {a.arg}",
        "Crash": f"{c} crashes", "Restart": f"{c} restarts",
        "UnloadGroup": "partition unloaded", "LoadGroup": "partition loaded",
    }
    return sentences.get(a.kind, f"{c} sends {a.kind}" + (f" (variant {a.arg})" if a.arg else ""))


def _members(step: Step) -> str:
    return ", ".join(m + ("*" if m == step.leader_id else "") for m in step.members)


def rows(trace: Trace) -> list[Row]:
    """Table rows; consecutive clock steps with nothing to show become one row."""
    out: list[Row] = []
    sent: dict[int, int] = {}
    apis: dict[tuple[int, object], str] = {}
    for step in trace.steps:
        if step.action.kind in REQUEST_KINDS:   # a client's n-th request carries correlation id n
            sent[step.action.client] = sent.get(step.action.client, 0) + 1
            apis[(step.action.client, sent[step.action.client])] = step.action.kind
        detail = "\n".join(step.response_lines + step.event_lines)
        quiet_clock = step.action.kind in _CLOCK and not detail
        prev = out[-1] if out else None
        if quiet_clock and prev is not None and prev.event.startswith("clock →") and not prev.detail:
            out[-1] = Row(prev.first, step.index, step.time_ms, f"clock → {format_ms(step.time_ms)}",
                          step.group_state, step.generation_id, _members(step), "")
            continue
        event = f"clock → {format_ms(step.time_ms)}" if quiet_clock else describe_action(step, apis)
        out.append(Row(step.index, step.index, step.time_ms, event, step.group_state, step.generation_id,
                       _members(step), detail))
    return out


def trace_table(trace: Trace, title: str | None = None) -> Table:
    table = Table(title=title or f"{trace.name or 'trace'} — profile {trace.profile}", header_style="bold",
                  title_justify="left", caption="members: * marks the leader", caption_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("step", no_wrap=True)
    table.add_column("group", no_wrap=True)
    table.add_column("gen", justify="right")
    table.add_column("members")
    table.add_column("responses / coordinator", overflow="fold")
    for r in rows(trace):
        index = str(r.first) if r.first == r.last else f"{r.first}-{r.last}"
        state = Text(r.state, style=_STATE_STYLE.get(r.state, ""))
        table.add_row(index, format_ms(r.time_ms), r.event, state, str(r.generation_id), r.members, r.detail)
    return table


def print_trace(trace: Trace, console: Console | None = None, title: str | None = None) -> None:
    (console or Console()).print(trace_table(trace, title))


def print_violation(report: "ViolationReport", console: Console | None = None, replay: str | None = None) -> None:
    """A counterexample in the terminal: title, claim, witness values and the trace's changed fields. ``replay``:
    the replay command as the user can type it where they are (the caller knows where the trace was written and how
    kgc was started); by default the report's own, relative to the directory its files are in."""
    from reports.violation import FIELDS, changed_rows
    console = console or Console()
    v = report.violation
    console.print(f"[bold red]✗ {report.title}[/bold red]")
    console.print(f"[bold]claim[/bold] ({report.kind}): {report.claim}\n[bold]source[/bold]: {report.source}")
    witness = Table("witness", "value", header_style="bold", title_justify="left")
    for key, value in v.witness.items():
        witness.add_row(str(key), repr(value))
    if v.witness:
        console.print(witness)
    else:
        console.print(v.message, markup=False, highlight=False)
    steps = Table("#", "step", *FIELDS, "responses / coordinator", header_style="bold",
                  title=f"minimal trace ({report.shrunk_by}), only changed fields", title_justify="left")
    for index, what, changed, lines in changed_rows(report.trace, report.sent):
        style = "red" if index == v.step else ""
        steps.add_row(str(index), what, *(changed.get(f, "") for f in FIELDS), "\n".join(lines), style=style)
    console.print(steps)
    console.print(f"replay: [bold]{replay or report.replay_command}[/bold]", highlight=False)

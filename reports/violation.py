"""What a counterexample report says, as data: the property, its witness, the minimal trace as
rows of changed fields, a Mermaid sequence diagram, the abstract-graph path and the replay command.

Reports render this record; they never run anything (the gate assembles it, DESIGN.md §9).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.actions import REQUEST_KINDS, receive_summary
from core.trace import Step, Trace, Violation
from reports.terminal import describe_action, format_ms

#: fields of a step shown when they change
FIELDS = ("time", "group", "gen", "leader", "members")


@dataclass(frozen=True)
class ViolationReport:
    property: str
    claim: str
    source: str
    kind: str
    violation: Violation
    trace: Trace
    abstract_path: tuple[str, ...] = ()     # abstract states along the trace, with the abstract actions
    trace_file: str = "counterexample.json"
    shrunk_by: str = "BFS (shortest)"       # or "Hypothesis shrinking"
    extra: dict[str, Any] = field(default_factory=dict)
    #: step index -> what the request sent in that step carried ("LeaveGroup#4 member=c0-1 gen=-1"): a trace
    #: records the client's choice (an adversary's variant number), the replay that assembles the report sees the
    #: request itself
    sent: dict[int, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        target = f"mutant {self.trace.mutant}" if self.trace.mutant else "the reference coordinator"
        return f"{self.property} violated on {target} (profile {self.trace.profile})"

    @property
    def replay_command(self) -> str:
        return f"kgc replay {self.trace_file}"


def _values(step: Step) -> dict[str, str]:
    members = ", ".join(m + ("*" if m == step.leader_id else "") for m in step.members)
    return {"time": format_ms(step.time_ms), "group": step.group_state, "gen": str(step.generation_id),
            "leader": step.leader_id or "-", "members": members or "-"}


def request_names(trace: Trace) -> dict[tuple[int, object], str]:
    """(client, corr) → API: a client's n-th request carries correlation id n."""
    sent: dict[int, int] = {}
    names: dict[tuple[int, object], str] = {}
    for step in trace.steps:
        if step.action.kind in REQUEST_KINDS:
            sent[step.action.client] = sent.get(step.action.client, 0) + 1
            names[(step.action.client, sent[step.action.client])] = step.action.kind
    return names


def changed_rows(trace: Trace, sent: dict[int, str] | None = None
                 ) -> list[tuple[int, str, dict[str, str], tuple[str, ...]]]:
    """(index, what happened, only the fields that changed, responses and events) per step; ``sent``: what each
    send carried (``ViolationReport.sent``)."""
    names = request_names(trace)
    previous: dict[str, str] = {}
    rows = []
    for step in trace.steps:
        now = _values(step)
        changed = {k: v for k, v in now.items() if previous.get(k) != v}
        previous = now
        rows.append((step.index, describe_action(step, names, (sent or {}).get(step.index)), changed,
                     step.response_lines + step.event_lines))
    return rows


def _participant(client: int) -> str:
    return f"c{client}"


def mermaid(trace: Trace) -> str:
    """A Mermaid sequence diagram: clients ↔ coordinator, the timer and the log."""
    clients = sorted({s.action.client for s in trace.steps if s.action.client >= 0})
    lines = ["sequenceDiagram", "    autonumber"]
    lines += [f"    participant {_participant(c)}" for c in clients]
    lines += ["    participant coord as Coordinator", "    participant timer as Timer", "    participant log as Log"]
    names = request_names(trace)
    for step in trace.steps:
        a, who = step.action, _participant(step.action.client)
        req = _mermaid_text(f"{names.get((a.client, a.arg), 'request')}#{a.arg}")
        if a.kind == "DeliverRequest":
            lines.append(f"    {who}->>coord: {req}")
        elif a.kind == "Receive":
            lines.append(f"    {who}->>coord: {_mermaid_text(receive_summary(str(a.arg)))}")
        elif a.kind == "DropRequest":
            lines.append(f"    {who}-x coord: {req} lost")
        elif a.kind == "DropResponse":
            lines.append(f"    coord-x {who}: {req} response lost")
        elif a.kind == "FireTimer":
            lines.append(f"    timer->>coord: task {a.arg} expires")
        elif a.kind == "CompleteAppend":
            lines.append(f"    log-->>coord: append {a.arg}")
        elif a.kind == "FlushBatch":
            lines.append(f"    log-->>coord: batch flushed {a.arg}")
        elif a.kind == "CommitBatch":
            lines.append("    log-->>coord: batch committed")
        elif a.kind in ("Crash", "Restart"):
            lines.append(f"    Note over {who}: {a.kind.lower()}")
        elif a.kind in ("AdvanceClock", "AdvanceToNextDeadline"):
            lines.append(f"    Note over coord,timer: clock {format_ms(step.time_ms)}")
        elif a.kind in ("UnloadGroup", "LoadGroup"):
            lines.append(f"    Note over coord: {a.kind}")
        for response in step.response_lines:
            target, text = response.split(" ", 1)
            lines.append(f"    coord-->>{target}: {_mermaid_text(text)}")
        if trace.violation is not None and step.index == trace.violation.step:
            lines.append(f"    Note over coord: VIOLATION {_mermaid_text(trace.violation.property)}")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Mermaid message text: no ';' (it would end an entity code like #35;), no further ':', and '#' as
    the entity code #35; (a bare '#' starts a comment in Mermaid's sequence grammar, so "JoinGroup#1 NONE"
    would render as just "JoinGroup")."""
    return text.replace(";", ",").replace(":", " ").replace("#", "#35;")

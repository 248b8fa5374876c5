"""Traces: a run of the world as values, and their versioned JSON encoding (stdlib only).

A ``Trace`` holds what is needed to re-run it (profile, scope, seed, mutant, actions) and,
per step, what was observed, so that ``kgc replay`` can re-execute and compare field by field.
A step's events and responses are typed values (core/events.py, core/responses.py); the JSON and
the fields replay compares hold their rendered lines, which ``Step.from_json`` parses back.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.actions import Action
from core.events import StepEvent, parse_event
from core.responses import Response, parse_response

SCHEMA = "kgc-trace/1"


class TraceFormatError(ValueError):
    """A trace file that cannot be read; the message is one sentence for the user."""


@dataclass(frozen=True, slots=True)
class Step:
    """One executed action and what the world looked like right after it."""

    index: int
    action: Action
    time_ms: int
    group_state: str            # display name of the group state ("-" if there is no group)
    generation_id: int
    leader_id: str
    members: tuple[str, ...]    # sorted member ids
    responses: tuple[Response, ...]  # responses the coordinator produced in this step, in order
    digest: str                 # blake2b-64 of the world snapshot after the step
    events: tuple[StepEvent, ...] = ()  # what the coordinator did inside the step: transitions, timers, removals

    @property
    def response_lines(self) -> tuple[str, ...]:
        """The responses as a report shows them, "c0 JoinGroup#1 NONE gen=1"."""
        return tuple(r.render() for r in self.responses)

    @property
    def event_lines(self) -> tuple[str, ...]:
        return tuple(e.render() for e in self.events)

    def observed(self) -> dict[str, Any]:
        """The fields replay compares, in a stable order (events and responses rendered)."""
        return {
            "time_ms": self.time_ms, "group_state": self.group_state,
            "generation_id": self.generation_id, "leader_id": self.leader_id,
            "members": list(self.members), "responses": list(self.response_lines), "digest": self.digest,
            "events": list(self.event_lines),
        }

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "action": self.action.to_json(), **self.observed()}

    @staticmethod
    def from_json(obj: Any) -> "Step":
        try:
            return Step(
                index=int(obj["index"]), action=Action.from_json(obj["action"]),
                time_ms=int(obj["time_ms"]), group_state=str(obj["group_state"]),
                generation_id=int(obj["generation_id"]), leader_id=str(obj["leader_id"]),
                members=tuple(str(m) for m in obj["members"]),
                responses=tuple(parse_response(str(r)) for r in obj["responses"]), digest=str(obj["digest"]),
                events=tuple(parse_event(str(e)) for e in obj.get("events", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TraceFormatError(f"step {obj!r:.80} is malformed ({exc})") from None


@dataclass(frozen=True, slots=True)
class Violation:
    """A property that failed at a step of a trace, with the witness values that show it."""

    property: str
    step: int
    message: str
    witness: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        witness = {str(k): v if isinstance(v, (int, str, bool, type(None))) else repr(v)
                   for k, v in self.witness.items()}
        return {"property": self.property, "step": self.step, "message": self.message, "witness": witness}


@dataclass(frozen=True, slots=True)
class Trace:
    profile: str
    scope: dict[str, Any]
    seed: int | None
    steps: tuple[Step, ...]
    mutant: str | None = None
    violation: Violation | None = None
    name: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(s.action for s in self.steps)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA, "name": self.name, "profile": self.profile, "scope": self.scope,
            "seed": self.seed, "mutant": self.mutant, "meta": self.meta,
            "violation": self.violation.to_json() if self.violation else None,
            "steps": [s.to_json() for s in self.steps],
        }

    def dumps(self) -> str:
        """Canonical text: sorted keys, fixed separators, trailing newline."""
        return json.dumps(self.to_json(), sort_keys=True, indent=1, separators=(",", ": ")) + "\n"

    @staticmethod
    def loads(text: str, source: str = "trace") -> "Trace":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TraceFormatError(f"{source} is not valid JSON ({exc.msg} at line {exc.lineno}).") from None
        if not isinstance(obj, dict) or obj.get("schema") != SCHEMA:
            found = obj.get("schema") if isinstance(obj, dict) else type(obj).__name__
            raise TraceFormatError(f"{source} is not a kgc trace: expected schema {SCHEMA!r}, found {found!r}.")
        try:
            v = obj.get("violation")
            return Trace(
                profile=str(obj["profile"]), scope=dict(obj["scope"]), seed=obj.get("seed"),
                steps=tuple(Step.from_json(s) for s in obj["steps"]), mutant=obj.get("mutant"),
                violation=Violation(str(v["property"]), int(v["step"]), str(v["message"]),
                                    dict(v.get("witness") or {})) if v else None,
                name=str(obj.get("name", "")), meta=dict(obj.get("meta") or {}),
            )
        except (KeyError, TypeError) as exc:
            raise TraceFormatError(f"{source} lacks a required field ({exc}).") from None

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

from core.actions import KINDS, Action
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
    def from_json(obj: Any, where: str = "step") -> "Step":
        """A step from its JSON; a TraceFormatError names the first field that is missing or ill-typed."""
        o = _object(obj, where)
        return Step(
            index=_int(o, "index", where, 0), action=action_from_json(_get(o, "action", where), f"{where}.action"),
            time_ms=_int(o, "time_ms", where, 0), group_state=_str(o, "group_state", where),
            generation_id=_int(o, "generation_id", where, -1, INT32_MAX), leader_id=_str(o, "leader_id", where),
            members=tuple(_strs(o, "members", where)),
            responses=tuple(_parsed(parse_response, line, f"{where}.responses[{i}]")
                            for i, line in enumerate(_strs(o, "responses", where))),
            digest=_str(o, "digest", where),
            events=tuple(_parsed(parse_event, line, f"{where}.events[{i}]")
                         for i, line in enumerate(_strs(o, "events", where, optional=True))))


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
        """The trace ``text`` holds, read whole before anything uses it: every field present with its type and in
        its range, every action well formed, every response and event line one a step renders (issue 26 §11: a
        hand-edited trace is one sentence, not a traceback in the middle of a replay)."""
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            where = f" ({exc.msg} at line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
            raise TraceFormatError(f"{source} is not valid JSON{where}.") from None
        if not isinstance(obj, dict) or obj.get("schema") != SCHEMA:
            found = obj.get("schema") if isinstance(obj, dict) else type(obj).__name__
            raise TraceFormatError(f"{source} is not a kgc trace: expected schema {SCHEMA!r}, found {found!r:.60}.")
        try:
            return Trace._from_json(obj)
        except TraceFormatError as exc:
            raise TraceFormatError(f"{source} is not a valid kgc trace: {exc}.") from None

    @staticmethod
    def _from_json(obj: dict[str, Any]) -> "Trace":
        steps = [Step.from_json(s, f"steps[{i}]") for i, s in enumerate(_list(obj, "steps", "the trace"))]
        for i, step in enumerate(steps):
            if step.index != i:
                raise TraceFormatError(f"steps[{i}] has index {step.index}; steps are numbered 0, 1, 2, … in order")
        v = obj.get("violation")
        violation = None if v is None else Violation(
            _str(_object(v, "violation"), "property", "violation"), _int(v, "step", "violation", -1, len(steps)),
            _str(v, "message", "violation"), dict(_object(v.get("witness", {}), "violation.witness")))
        meta = dict(_object(obj.get("meta", {}), "meta"))
        if "raising_action" in meta:
            action_from_json(meta["raising_action"], "meta.raising_action")
        seed = obj.get("seed")
        if seed is not None:
            _int(obj, "seed", "the trace", 0)
        return Trace(profile=_str(obj, "profile", "the trace"), scope=dict(_object(_get(obj, "scope", "the trace"),
                                                                                   "scope")),
                     seed=seed, steps=tuple(steps), mutant=_str(obj, "mutant", "the trace", optional=True),
                     violation=violation, name=_str(obj, "name", "the trace", optional=True) or "", meta=meta)


# --- reading JSON strictly: each reader names the field (``steps[3].time_ms``) that is missing or ill-typed ----------
INT_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
CLIENT_MAX = 1023


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _get(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise TraceFormatError(f"{where} has no {key!r}")
    return obj[key]


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TraceFormatError(f"{where} must be an object, got {_show(value)}")
    return value


def _int(obj: dict[str, Any], key: str, where: str, lo: int, hi: int = INT_MAX) -> int:
    value = _get(obj, key, where)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise TraceFormatError(f"{where}.{key} must be an integer from {lo} to {hi}, got {_show(value)}")
    return value


def _str(obj: dict[str, Any], key: str, where: str, optional: bool = False) -> Any:
    if optional and obj.get(key) is None:
        return None
    value = _get(obj, key, where)
    if not isinstance(value, str):
        raise TraceFormatError(f"{where}.{key} must be a string, got {_show(value)}")
    return value


def _list(obj: dict[str, Any], key: str, where: str, optional: bool = False) -> list[Any]:
    value = obj.get(key, []) if optional else _get(obj, key, where)
    if not isinstance(value, list):
        raise TraceFormatError(f"{where}.{key} must be a list, got {_show(value)}")
    return value


def _strs(obj: dict[str, Any], key: str, where: str, optional: bool = False) -> list[str]:
    value = _list(obj, key, where, optional)
    for v in value:
        if not isinstance(v, str):
            raise TraceFormatError(f"{where}.{key} must hold strings only, got {_show(v)}")
    return value


def _parsed(parse: Any, line: str, where: str) -> Any:
    try:
        return parse(line)
    except ValueError:
        raise TraceFormatError(f"{where} is not a line a step records: {_show(line)}") from None


#: the action kinds whose ``arg`` is text: a real client's request (JSON), an append's or a batch flush's error name,
#: and the picks of a Choose ("1", "0.2": harness/event_loop.py)
TEXT_ARGS = frozenset({"Receive", "CompleteAppend", "FlushBatch", "Choose"})


def action_from_json(value: Any, where: str) -> Action:
    """An action from its JSON: a known kind, a client from -1 (none) to CLIENT_MAX, an argument of the kind's type
    (text for Receive, CompleteAppend, FlushBatch and Choose, else an integer ≥ 0)."""
    obj = _object(value, where)
    kind = _str(obj, "kind", where)
    if kind not in KINDS:
        raise TraceFormatError(f"{where}.kind must be one of {', '.join(KINDS)}, got {_show(kind)}")
    client = _int(obj, "client", where, -1, CLIENT_MAX) if "client" in obj else -1
    if kind in TEXT_ARGS:
        arg: int | str = _str(obj, "arg", where)
    else:
        arg = _int(obj, "arg", where, 0) if "arg" in obj else 0
    return Action(kind, client, arg)

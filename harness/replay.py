"""Re-running a recorded trace and checking it step by step (harness layer; ``kgc replay``).

The world is rebuilt from the trace's profile, scope (with its client kinds) and seed; every
recorded action is stepped and what the world then shows is compared with the recorded step.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

from core.trace import Trace, TraceFormatError
from harness.scope import Scope
from harness.world import World
from impl.mutants import UnknownMutantError
from impl.profiles import UnknownProfileError


class ReplayDivergence(AssertionError):
    """The replayed world differs from the recorded trace; the message names the first difference."""


#: a world's clients: as many as a trace may ask for (the explorers use up to 6, served sessions a few more)
MAX_CLIENTS = 64
#: the largest millisecond count a scope may hold (a year: beyond any session, delay or clock horizon)
MAX_MS = 365 * 24 * 3600 * 1000


def world_for(trace: Trace, record: bool = True) -> World:
    """A fresh world configured as the one that recorded ``trace``; a TraceFormatError names what in the trace's
    scope, clients, profile or mutant no world can be made of."""
    scope_json: dict[str, Any] = dict(trace.scope)
    clients = scope_json.pop("clients", 3)
    try:
        _check_scope(scope_json)
        scope = Scope.from_json(scope_json)
    except ValueError as exc:
        raise TraceFormatError(f"the trace's scope is malformed: {str(exc).rstrip('.')}.") from None
    if not (isinstance(clients, int) and not isinstance(clients, bool) and 0 <= clients <= MAX_CLIENTS) and not (
            isinstance(clients, list) and len(clients) <= MAX_CLIENTS and all(isinstance(k, str) for k in clients)):
        raise TraceFormatError(f"the trace's scope 'clients' must be a count from 0 to {MAX_CLIENTS} or a list of "
                               f"client kinds, got {str(clients)[:60]!r}.")
    seed = trace.seed if trace.seed is not None else 0
    try:
        return World(trace.profile, scope, clients=clients, seed=seed, record=record, mutant=trace.mutant)
    except (UnknownProfileError, UnknownMutantError):
        raise
    except (ValueError, TypeError) as exc:
        raise TraceFormatError(f"no world can be made of the trace's scope and clients: {str(exc).rstrip('.')}.") \
            from None


def _check_scope(obj: dict[str, Any]) -> None:
    """Each scope value of its field's type (Scope's annotations) and range: a bool is true or false, a count or a
    number of milliseconds is an integer from 0 (a group size from 1) to MAX_MS, text is text."""
    types = {f.name: str(f.type) for f in fields(Scope)}
    for key, value in obj.items():
        kind = types.get(key)
        if kind is None:
            continue                                   # Scope.from_json names unknown keys
        optional = kind.endswith("| None")
        if value is None and optional:
            continue
        base = kind.removesuffix(" | None")
        lo = 1 if key == "group_max_size" else 0
        if base == "bool":
            ok = isinstance(value, bool)
        elif base == "int":
            ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= MAX_MS
        elif base == "str":
            ok = isinstance(value, str) and len(value) <= 200
        else:                                          # tuple[int, ...]: milliseconds, one per client or amount
            ok = isinstance(value, list) and len(value) <= MAX_CLIENTS and all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_MS for v in value)
        if not ok:
            want = {"bool": "true or false", "int": f"an integer from {lo} to {MAX_MS}", "str": "a short string"}.get(
                base, f"a list of integers from 0 to {MAX_MS}") + (" or null" if optional else "")
            raise ValueError(f"scope {key} must be {want}, got {str(value)[:40]!r}")


def replay(trace: Trace) -> World:
    """Re-run ``trace``; raise ReplayDivergence at the first step that does not match (an action that is not
    enabled, one the replayed coordinator raises on — the recorded run went on — or a field that differs)."""
    world = world_for(trace)
    for recorded in trace.steps:
        if not world.is_enabled(recorded.action):
            raise ReplayDivergence(
                f"step {recorded.index}: action {recorded.action} is not enabled in the replayed world.")
        try:
            world.step(recorded.action)
        except Exception as exc:   # noqa: BLE001 — a hand-edited trace can lead the coordinator anywhere
            raise ReplayDivergence(f"step {recorded.index} ({recorded.action}) raised {type(exc).__name__} in the "
                                   f"replayed world ({str(exc)[:120]}), where the recorded run went on.") from None
        actual = world.steps[-1].observed()
        for field, expected in recorded.observed().items():
            if actual[field] != expected:
                raise ReplayDivergence(
                    f"step {recorded.index} ({recorded.action}): {field} was recorded as {expected!r} "
                    f"but replays as {actual[field]!r}.")
    return world

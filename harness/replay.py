"""Re-running a recorded trace and checking it step by step (harness layer; ``kgc replay``).

The world is rebuilt from the trace's profile, scope (with its client kinds) and seed; every
recorded action is stepped and what the world then shows is compared with the recorded step.
"""
from __future__ import annotations

from typing import Any

from core.trace import Trace, TraceFormatError
from harness.scope import Scope
from harness.world import World


class ReplayDivergence(AssertionError):
    """The replayed world differs from the recorded trace; the message names the first difference."""


def world_for(trace: Trace, record: bool = True) -> World:
    """A fresh world configured as the one that recorded ``trace``."""
    scope_json: dict[str, Any] = dict(trace.scope)
    clients = scope_json.pop("clients", 3)
    try:
        scope = Scope.from_json(scope_json)
    except ValueError as exc:
        raise TraceFormatError(f"the trace's scope is malformed: {exc}") from None
    if not isinstance(clients, (int, list)):
        raise TraceFormatError(f"the trace's scope 'clients' must be a count or a list of kinds, got {clients!r}.")
    seed = trace.seed if trace.seed is not None else 0
    return World(trace.profile, scope, clients=clients, seed=seed, record=record, mutant=trace.mutant)


def replay(trace: Trace) -> World:
    """Re-run ``trace``; raise ReplayDivergence at the first step that does not match."""
    world = world_for(trace)
    for recorded in trace.steps:
        if not world.is_enabled(recorded.action):
            raise ReplayDivergence(
                f"step {recorded.index}: action {recorded.action} is not enabled in the replayed world.")
        world.step(recorded.action)
        actual = world.steps[-1].observed()
        for field, expected in recorded.observed().items():
            if actual[field] != expected:
                raise ReplayDivergence(
                    f"step {recorded.index} ({recorded.action}): {field} was recorded as {expected!r} "
                    f"but replays as {actual[field]!r}.")
    return world

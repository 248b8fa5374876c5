"""A served session: real clients' group requests stepped through a checked World, on real time.

``kgc serve`` keeps one ``LiveSession``. Each group request off the wire becomes a ``Receive`` step
of a World whose clients are the server's connections (harness.external); the real-time clock
becomes ``AdvanceClock``/``FireTimer`` steps that fire the coordinator's timers at their deadlines
(the MockTimer rule of DESIGN.md §4: a task fires once now > deadline, in (deadline, seq) order).
With a checked runner (``kgc.runs.CheckedRun``, injected by the layer above) every step is checked
by the whole catalog and refinement, live; the recorded trace replays with ``kgc replay``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from core.actions import Action
from core.trace import Trace, Violation
from harness.external import WireRequest
from harness.scope import Scope
from harness.world import World


class Stepper(Protocol):
    """What a checked run offers the session (kgc.runs.CheckedRun has this shape)."""

    def step(self, action: Action) -> list[Violation]: ...


@dataclass(frozen=True, slots=True)
class Answer:
    """The coordinator's answer to request ``corr`` of connection ``conn``; ``result`` is impl's value."""

    conn: int
    corr: int
    api: str
    result: Any


class LiveSession:
    """The reference coordinator of one profile (optionally a seeded mutant) behind real connections.

    The checked group is ``group_id`` (default: the first group a request names); requests for other
    groups are answered by the same coordinator but observed only through it. ``checked`` builds the
    runner that steps the world (None: unchecked); ``on_violation`` hears each violation as it is found.
    """

    def __init__(self, profile: str = "3.9", mutant: str | None = None, group_id: str | None = None,
                 checked: Callable[[World], Stepper] | None = None,
                 on_violation: Callable[[Violation], None] | None = None) -> None:
        self.profile, self.mutant, self.group_id = profile, mutant, group_id
        World(profile, Scope(), clients=0, record=False, mutant=mutant)   # bad profile/mutant: fail now
        self._checked, self._on_violation = checked, on_violation
        self.world: World | None = None
        self.runner: Stepper | None = None
        self.violations: list[Violation] = []
        self._conns: list[str] = []            # client ids, by connection index
        self._corr: list[int] = []             # the next request number, by connection index
        self._origin_ms: int | None = None     # the real time that is 0 on the coordinator's clock
        self._last_real_ms = 0                 # the latest real time advance_to was given

    # --- connections and requests ---------------------------------------------------------
    def open(self, client_id: str) -> int:
        """Register a connection; its index names it in the trace (c0, c1, …)."""
        self._conns.append(client_id)
        self._corr.append(1)
        if self.world is not None:
            self.world.add_client("external")
        return len(self._conns) - 1

    def submit(self, conn: int, api: str, **fields: Any) -> int:
        """Hand one group request to the coordinator; returns its number on ``conn``."""
        corr = self._corr[conn]
        self._corr[conn] = corr + 1
        request = _wire_request(api, corr, self._conns[conn], fields)
        self._ensure_world(request.group_id)
        self._step(Action("Receive", conn, request.to_payload()))
        return corr

    def answers(self) -> list[Answer]:
        """Every answer produced since the last call, in the order the coordinator gave them."""
        if self.world is None:
            return []
        return [Answer(key[0], key[1], api, result) for key, api, result in self.world.take_outbox()]

    # --- real time ------------------------------------------------------------------------
    def advance_to(self, real_ms: int) -> None:
        """Move the coordinator's clock to ``real_ms`` (time since the session's origin), firing every
        timer that falls due on the way at its deadline: advance to deadline + 1, fire, go on."""
        self._last_real_ms = real_ms
        if self.world is None or self._origin_ms is None:
            return
        target = real_ms - self._origin_ms
        coord = self.world.coord
        while True:
            due = coord.due_timers()
            if due:
                self._step(Action("FireTimer", -1, due[0].seq))
                continue
            deadline = coord.next_deadline()
            stop = target if deadline is None else min(target, deadline + 1)
            if stop <= coord.now_ms:
                return
            self._step(Action("AdvanceClock", -1, stop - coord.now_ms))

    def next_deadline_ms(self) -> int | None:
        """The real time (same origin as ``advance_to``) at which the earliest timer falls due."""
        if self.world is None or self._origin_ms is None:
            return None
        deadline = self.world.coord.next_deadline()
        return None if deadline is None else deadline + 1 + self._origin_ms

    # --- read-outs ------------------------------------------------------------------------
    def describe(self, group_id: str) -> Any:
        return None if self.world is None else self.world.coord.describe(group_id)

    def trace(self, name: str = "serve") -> Trace:
        """The session so far as a kgc trace (ends at the first violation's step when there is one)."""
        if self.world is None:
            self._ensure_world(self.group_id or "")
        assert self.world is not None
        trace = self.world.trace(name)
        if self.violations:
            first = self.violations[0]
            trace = dataclasses.replace(trace, violation=first)
        return trace

    def close(self) -> None:
        """Nothing to release: the session holds no sockets or threads (the server owns those)."""

    # --- internals ------------------------------------------------------------------------
    def _ensure_world(self, group_id: str) -> None:
        if self.world is not None:
            return
        self.group_id = self.group_id or group_id
        self.world = World(self.profile, Scope(group_id=self.group_id), clients=["external"] * len(self._conns),
                           record=True, mutant=self.mutant)
        self.runner = self._checked(self.world) if self._checked is not None else None
        self._origin_ms = self._last_real_ms

    def _step(self, action: Action) -> None:
        assert self.world is not None
        if self.runner is None:
            self.world.step(action)
            return
        for violation in self.runner.step(action):
            self.violations.append(violation)
            if self._on_violation is not None:
                self._on_violation(violation)


def _wire_request(api: str, corr: int, client_id: str, fields: dict[str, Any]) -> WireRequest:
    """A WireRequest from the server's keyword fields (dicts become sorted tuples)."""
    known = {f.name for f in dataclasses.fields(WireRequest)} - {"api", "corr", "client_id"}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ValueError(f"unknown request field(s) {', '.join(unknown)} for {api}.")
    values = dict(fields)
    for name in ("assignments", "offsets"):
        if isinstance(values.get(name), dict):
            values[name] = tuple(sorted(values[name].items()))
    for name in ("protocols", "members"):
        if name in values:
            values[name] = tuple(tuple(p) for p in values[name])
    return WireRequest(api=api, corr=corr, client_id=client_id, **values)

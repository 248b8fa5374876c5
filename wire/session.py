"""A served session: real clients' group requests stepped through a checked World, on real time.

``kgc serve`` keeps one ``LiveSession``. Each group request off the wire becomes a ``Receive`` step
of a World whose clients are the server's connections (harness.external); the real-time clock
becomes ``AdvanceClock``/``FireTimer`` steps that fire the coordinator's timers at their deadlines
(the MockTimer rule of DESIGN.md §4: a task fires once now > deadline, in (deadline, seq) order).
With a checked runner (``kgc.runs.CheckedRun``, injected by the layer above) every step is checked
by the whole catalog and refinement, live; each group's recorded trace replays with ``kgc replay``.
A profile the World does not drive yet (wire/direct.py ``world_runs``) is served by ``DirectGroup``s instead:
the same answers and timers, unchecked and unrecorded (``recorded`` is False).
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
from impl import CoordinatorConfig, GroupCoordinator
from impl.profiles import get_profile, sibling_runtime
from impl.results import GroupSummary
from properties.catalog import commit_answer_depends_on_version
from wire.direct import DirectGroup, world_runs


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

    Each group gets its own checked World (its own coordinator: classic groups never interact, SPEC.md
    §5.1 — every path takes only its own group's lock), all sharing the server's connections as
    external clients; so every group is checked with the whole catalog and has its own trace. The
    primary group is ``group_id`` (default: the first group a request names). ``checked`` builds the
    runner that steps a world (None: unchecked); ``on_violation`` hears each violation as it is found.
    """

    def __init__(self, profile: str = "3.9", mutant: str | None = None, group_id: str | None = None,
                 checked: Callable[[World], Stepper] | None = None,
                 on_violation: Callable[[Violation], None] | None = None,
                 coordinator: dict[str, int] | None = None) -> None:
        self.profile, self.mutant, self.group_id = profile, mutant, group_id
        #: broker settings for every group's coordinator (Scope's coordinator overrides, e.g.
        #: group_min_session_timeout_ms; kgc conform matches the target's configuration with them)
        self.coordinator = dict(sorted((coordinator or {}).items()))
        if sibling_runtime(profile) is None:
            get_profile(profile)                 # an unknown profile: UnknownProfileError names the known ones
        #: the harness drives this profile: every group is a World (checked if ``checked``), its trace recorded
        self.recorded = world_runs(profile)
        if self.recorded:
            World(profile, Scope(), clients=0, record=False, mutant=mutant)   # a bad mutant: fail now
        elif mutant is not None:
            raise ValueError(f"seeded mutants run where the harness drives the profile; it does not drive "
                             f"{profile} yet.")
        self._checked = checked if self.recorded else None
        self._on_violation = on_violation
        self.worlds: dict[str, Any] = {}         # group id -> its World (or DirectGroup), in the order groups appeared
        self.runners: dict[str, Stepper] = {}
        self.violations: list[Violation] = []
        self.violations_by_group: dict[str, list[Violation]] = {}
        self._conns: list[str] = []            # client ids, by connection index
        self._corr: list[int] = []             # the next request number, by connection index
        self._origin_ms: dict[str, int] = {}   # group id -> the real time that is 0 on its coordinator's clock
        self._last_real_ms = 0                 # the latest real time advance_to was given
        self._blank: Any = None                # a coordinator with no group: describes groups nobody named

    @property
    def world(self) -> World | None:
        """The primary group's world (None before any group request)."""
        return None if self.group_id is None else self.worlds.get(self.group_id)

    @property
    def runner(self) -> Stepper | None:
        return None if self.group_id is None else self.runners.get(self.group_id)

    # --- connections and requests ---------------------------------------------------------
    def open(self, client_id: str) -> int:
        """Register a connection; its index names it in the traces (c0, c1, …)."""
        self._conns.append(client_id)
        self._corr.append(1)
        for world in self.worlds.values():
            world.add_client("external")
        return len(self._conns) - 1

    def submit(self, conn: int, api: str, api_version: int | None = None, **fields: Any) -> int:
        """Hand one group request to its group's coordinator; returns its number on ``conn``. ``api_version``
        (the request's version) reaches a coordinator stepped directly; a World's Receive does not carry it."""
        corr = self._corr[conn]
        self._corr[conn] = corr + 1
        request = _wire_request(api, corr, self._conns[conn], fields)
        world = self._world_of(request.group_id)
        if isinstance(world, DirectGroup):
            world.receive(conn, request, api_version)
        else:
            if api == "OffsetCommit" and commit_answer_depends_on_version(self.profile):
                request = dataclasses.replace(request, api_version=api_version)
            self._step(world, Action("Receive", conn, request.to_payload()))
        return corr

    def answers(self) -> list[Answer]:
        """Every answer produced since the last call (group by group, each in the coordinator's order)."""
        return [Answer(key[0], key[1], api, result)
                for world in self.worlds.values() for key, api, result in world.take_outbox()]

    # --- real time ------------------------------------------------------------------------
    def advance_to(self, real_ms: int) -> None:
        """Move every coordinator's clock to ``real_ms`` (same origin for all calls), firing each timer
        that falls due on the way at its deadline: advance to deadline + 1, fire, go on."""
        self._last_real_ms = real_ms
        for group_id, world in self.worlds.items():
            target, coord = real_ms - self._origin_ms[group_id], world.coord
            while True:
                due = coord.due_timers()
                if due:
                    self._step(world, Action("FireTimer", -1, due[0].seq))
                    continue
                deadline = coord.next_deadline()
                stop = target if deadline is None else min(target, deadline + 1)
                if stop <= coord.now_ms:
                    break
                self._step(world, Action("AdvanceClock", -1, stop - coord.now_ms))

    def next_deadline_ms(self) -> int | None:
        """The real time (same origin as ``advance_to``) at which the earliest timer of any group falls due."""
        times = [deadline + 1 + self._origin_ms[g] for g, w in self.worlds.items()
                 if (deadline := w.coord.next_deadline()) is not None]
        return min(times, default=None)

    # --- read-outs ------------------------------------------------------------------------
    def describe(self, group_id: str) -> Any:
        world = self.worlds.get(group_id)
        return None if world is None else world.coord.describe(group_id)

    def describe_group(self, group_id: str, api_version: int) -> GroupSummary:
        """DescribeGroups for one group at ``api_version``, answered by the group's coordinator — or, for a group
        no request named yet, by a coordinator without groups (an unknown group: Dead; GROUP_ID_NOT_FOUND where
        the release's v6 says so, R16). Changes nothing."""
        world = self.worlds.get(group_id)
        if world is None:
            if self._blank is None:
                self._blank = GroupCoordinator(CoordinatorConfig(profile=self.profile, **self.coordinator))
            coord = self._blank
        else:
            coord = world.coord
        summary: GroupSummary = coord.describe_group(group_id, api_version)
        return summary

    def steps(self, group_id: str) -> int:
        """How many steps a group's coordinator took (requests and clock steps)."""
        world = self.worlds.get(group_id)
        return 0 if world is None else len(world.steps) if self.recorded else int(world.steps)

    def trace(self, group_id: str | None = None, name: str = "serve") -> Trace:
        """A group's session so far as a kgc trace (default the primary group), carrying its first violation;
        only when ``recorded``."""
        if not self.recorded:
            raise ValueError(f"the harness does not drive profile {self.profile} yet: its sessions are not recorded.")
        world = self._world_of(group_id or self.group_id or "")
        gid = world.group_id
        trace = world.trace(name)
        found = self.violations_by_group.get(gid)
        return dataclasses.replace(trace, violation=found[0]) if found else trace

    def close(self) -> None:
        """Nothing to release: the session holds no sockets or threads (the server owns those)."""

    # --- internals ------------------------------------------------------------------------
    def _world_of(self, group_id: str) -> Any:
        world = self.worlds.get(group_id)
        if world is not None:
            return world
        if self.group_id is None:
            self.group_id = group_id
        if not self.recorded:
            direct = DirectGroup(self.profile, group_id, self.coordinator)
            self.worlds[group_id] = direct
            self._origin_ms[group_id] = self._last_real_ms
            return direct
        world = World(self.profile, Scope(group_id=group_id, **self.coordinator),
                      clients=["external"] * len(self._conns), record=True, mutant=self.mutant)
        self.worlds[group_id] = world
        if self._checked is not None:
            self.runners[group_id] = self._checked(world)
        self._origin_ms[group_id] = self._last_real_ms
        return world

    def _step(self, world: Any, action: Action) -> None:
        runner = self.runners.get(world.group_id)
        if runner is None:
            world.step(action)
            return
        for violation in runner.step(action):
            self.violations.append(violation)
            self.violations_by_group.setdefault(world.group_id, []).append(violation)
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

"""Parsing of a step's event and response lines — the coordinator's log as properties read it.

The coordinator writes one line per thing it did inside a step (impl ``_event`` calls: transitions,
heartbeat deadlines, completions, removals); the world writes one line per response. Properties
that speak about the *order* of things inside one step read these lines; every pattern lives here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.actions import Action
from harness.external import WireRequest

#: a response line, "c0 JoinGroup#3 NONE gen=2 leader=c0-1 member=c0-1 members=c0-1,c1-2"
RESPONSE = re.compile(r"^c(\d+) (\w+)#(\d+) (\w+)(.*)$")
#: "Stable -> PreparingRebalance, DelayedJoin delay=10000" (prepareRebalance)
PREPARE = re.compile(r"^(\w+) -> PreparingRebalance, (DelayedJoin|InitialDelayedJoin) delay=(\d+)$")
#: "generation 2: CompletingRebalance, leader=c0-1, protocol=range" (initNextGeneration)
GENERATION = re.compile(r"^generation (\d+): (\w+), leader=(\S*), protocol=(\S*)$")
#: "DelayedJoin join:g seq=12 completed (condition)" — how a delayed operation completed
COMPLETED = re.compile(r"^(DelayedJoin|InitialDelayedJoin|DelayedHeartbeat|DelayedSync) (\S+) seq=(\d+) "
                       r"completed \((condition|expired)\)$")
#: "DelayedHeartbeat c1-4 deadline=15000" (completeAndScheduleNextHeartbeatExpiration)
DEADLINE = re.compile(r"^DelayedHeartbeat (\S+) deadline=(-?\d+)$")
AT_BIRTH = re.compile(r"^DelayedHeartbeat (\S+) completed at birth$")
ADDED = re.compile(r"^member (\S+) added$")
LEAVES = re.compile(r"^member (\S+) leaves$")
EXPIRED = re.compile(r"^member (\S+) failed: heartbeat expired$")
NOT_REJOINED = re.compile(r"^member (\S+) removed: did not rejoin$")
NO_SYNC = re.compile(r"^member (\S+) removed: no SyncGroup within the rebalance timeout$")
STORE_IGNORED = re.compile(r"^store callback for generation (\d+) ignored \(group (\w+) generation (\d+)\)$")
UNLOADED = re.compile(r"^unloaded: (\w+) -> Dead$")
PENDING_EXPIRED = re.compile(r"^pending member (\S+) expired$")

#: events that take a member out of its group before whatever follows in the step
REMOVALS = (LEAVES, EXPIRED, NOT_REJOINED, NO_SYNC)
#: actions that only move the clock (the coordinator does nothing in them)
CLOCK_KINDS = frozenset({"AdvanceClock", "AdvanceToNextDeadline"})


@dataclass(frozen=True, slots=True)
class ResponseLine:
    client: int
    api: str
    corr: int
    error: str
    fields: dict[str, str]

    @property
    def key(self) -> tuple[int, int]:
        return (self.client, self.corr)

    @property
    def members(self) -> tuple[str, ...]:
        text = self.fields.get("members", "")
        return tuple(text.split(",")) if text else ()


def response(line: str) -> ResponseLine:
    m = RESPONSE.match(line)
    if m is None:
        raise ValueError(f"not a response line: {line!r}")
    fields = dict(part.split("=", 1) for part in m.group(5).split() if "=" in part)
    return ResponseLine(int(m.group(1)), m.group(2), int(m.group(3)), m.group(4), fields)


def responses(lines: tuple[str, ...]) -> list[ResponseLine]:
    return [response(line) for line in lines]


def first(pattern: re.Pattern[str], events: tuple[str, ...]) -> tuple[int, re.Match[str]] | None:
    for i, e in enumerate(events):
        m = pattern.match(e)
        if m:
            return i, m
    return None


def matches(pattern: re.Pattern[str], events: tuple[str, ...]) -> list[tuple[int, re.Match[str]]]:
    return [(i, m) for i, e in enumerate(events) if (m := pattern.match(e))]


def removed_before(events: tuple[str, ...], end: int) -> set[str]:
    """Member ids taken out of their group by events[:end]."""
    return {m.group(1) for e in events[:end] for p in REMOVALS if (m := p.match(e))}


def delivered_key(action: Action) -> tuple[int, int] | None:
    """The request key a DeliverRequest (or a real client's Receive) action hands to the coordinator."""
    if action.kind == "DeliverRequest" and isinstance(action.arg, int):
        return (action.client, action.arg)
    if action.kind == "Receive":
        return (action.client, WireRequest.from_payload(str(action.arg)).corr)
    return None

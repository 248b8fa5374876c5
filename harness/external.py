"""Requests from real clients: what ``kgc serve`` hands the world, as data that a trace can hold.

A real client is not modelled, so the world cannot enumerate what it sends. Its request enters as
a ``Receive`` action whose ``arg`` is the whole request as compact, key-sorted JSON
(``WireRequest.to_payload``); the world hands it to the coordinator exactly as a delivered request
of a simulated client, and the answer goes to the world's outbox (``World.take_outbox``) instead
of the simulated network. Everything the coordinator saw is therefore in the trace, and ``kgc
replay`` re-executes a served session step for step.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.actions import Action
from core.types import NO_GENERATION
from harness.messages import Request

#: the group APIs a Receive may carry (the others are answered by the server itself)
RECEIVE_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")


@dataclass(frozen=True, slots=True)
class WireRequest:
    """A group request off the wire, with every field the coordinator reads (bytes kept as hex in JSON)."""

    api: str
    corr: int                      # the request's number on its connection (assigned by the server)
    group_id: str
    client_id: str = ""
    member_id: str = ""
    generation_id: int = NO_GENERATION
    session_timeout_ms: int = 0
    rebalance_timeout_ms: int = 0
    protocol_type: str = ""
    protocols: tuple[tuple[str, bytes], ...] = ()
    group_instance_id: str | None = None
    require_known_member_id: bool = False
    assignments: tuple[tuple[str, bytes], ...] = ()   # SyncGroup: (member_id, assignment), sorted
    members: tuple[tuple[str, str | None], ...] = ()   # LeaveGroup: the identities to remove
    offsets: tuple[tuple[str, int], ...] = ()          # OffsetCommit: ("topic-partition", offset), sorted
    support_skipping_assignment: bool = False          # JoinGroup v9+ (KIP-814): the client can skip the assignor
    #: the request's version off the wire, kept only where a coordinator's answer depends on it (the Java
    #: runtime's OffsetCommit, SPEC-4x.md R15); None elsewhere, so earlier traces keep their bytes
    api_version: int | None = None

    def __post_init__(self) -> None:
        if self.api not in RECEIVE_APIS:
            raise ValueError(f"a Receive carries one of {', '.join(RECEIVE_APIS)}, not {self.api!r}.")

    def to_payload(self) -> str:
        obj: dict[str, Any] = {
            "api": self.api, "corr": self.corr, "group_id": self.group_id, "client_id": self.client_id,
            "member_id": self.member_id, "generation_id": self.generation_id,
            "session_timeout_ms": self.session_timeout_ms, "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "protocol_type": self.protocol_type, "protocols": [[n, m.hex()] for n, m in self.protocols],
            "group_instance_id": self.group_instance_id, "require_known_member_id": self.require_known_member_id,
            "assignments": [[m, a.hex()] for m, a in self.assignments],
            "members": [list(m) for m in self.members], "offsets": [list(o) for o in self.offsets],
        }
        if self.support_skipping_assignment:   # only then: payloads of older traces stay byte-identical
            obj["support_skipping_assignment"] = True
        if self.api_version is not None:
            obj["api_version"] = self.api_version
        return json.dumps(obj, sort_keys=True, separators=(",", ":"))

    @staticmethod
    def from_payload(text: str) -> "WireRequest":
        """Inverse of ``to_payload``; anything malformed is a ValueError naming the problem."""
        try:
            obj = json.loads(text)
            return WireRequest(
                api=str(obj["api"]), corr=int(obj["corr"]), group_id=str(obj["group_id"]),
                client_id=str(obj["client_id"]), member_id=str(obj["member_id"]),
                generation_id=int(obj["generation_id"]), session_timeout_ms=int(obj["session_timeout_ms"]),
                rebalance_timeout_ms=int(obj["rebalance_timeout_ms"]), protocol_type=str(obj["protocol_type"]),
                protocols=tuple((str(n), bytes.fromhex(m)) for n, m in obj["protocols"]),
                group_instance_id=None if obj["group_instance_id"] is None else str(obj["group_instance_id"]),
                require_known_member_id=bool(obj["require_known_member_id"]),
                assignments=tuple((str(m), bytes.fromhex(a)) for m, a in obj["assignments"]),
                members=tuple((str(m), None if i is None else str(i)) for m, i in obj["members"]),
                offsets=tuple((str(tp), int(o)) for tp, o in obj["offsets"]),
                support_skipping_assignment=bool(obj.get("support_skipping_assignment", False)),
                api_version=None if obj.get("api_version") is None else int(obj["api_version"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"malformed Receive payload {text[:80]!r} ({exc}).") from None

    def request(self, client: int) -> Request:
        """The same request as the simulated network's value (what observations and reports show)."""
        return Request(self.api, client, self.corr, self.member_id, self.generation_id, self.session_timeout_ms,
                       self.rebalance_timeout_ms, self.protocol_type, self.protocols,
                       self.require_known_member_id, self.assignments, self.group_instance_id,
                       self.support_skipping_assignment)


def admits_unenumerable(kinds: tuple[str, ...], coord: Any, max_time_ms: int | None, action: Action) -> bool:
    """What real clients and real time bring that ``World.enabled()`` cannot list: a well-formed Receive
    from an external client, and — in a world with external clients — AdvanceClock by any positive amount
    while no timer is due (the served clock moves with the wall clock, never past a due timer)."""
    if action.kind == "Receive":
        if not (0 <= action.client < len(kinds) and kinds[action.client] == "external"):
            return False
        try:
            WireRequest.from_payload(str(action.arg))
        except ValueError:
            return False
        return True
    if action.kind == "AdvanceClock" and "external" in kinds:
        ms = action.arg
        return (isinstance(ms, int) and ms > 0 and not coord.due_timers()
                and (max_time_ms is None or coord.now_ms + ms <= max_time_ms))
    return False

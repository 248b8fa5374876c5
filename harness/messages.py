"""Requests and responses on the simulated network, as plain frozen values (harness layer).

A message is identified by ``(client, corr)``: ``corr`` is the per-client correlation id the
client stamped on the request, and the coordinator's answer carries it back (request_key).
``to_tuple``/``from_tuple`` give the plain-data form used in world snapshots.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.types import NO_GENERATION

Protocols = tuple[tuple[str, bytes], ...]
Assignments = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class Request:
    """A request a client put on the wire; ``api`` is a Kafka API name ("JoinGroup", ...)."""

    api: str
    client: int
    corr: int
    member_id: str = ""
    generation_id: int = NO_GENERATION
    session_timeout_ms: int = 0
    rebalance_timeout_ms: int = 0
    protocol_type: str = ""
    protocols: Protocols = ()
    require_known_member_id: bool = False
    assignments: Assignments = ()        # SyncGroup: (member_id, assignment) sorted by member id
    group_instance_id: str | None = None

    @property
    def key(self) -> tuple[int, int]:
        return (self.client, self.corr)

    def to_tuple(self) -> tuple[Any, ...]:
        return (self.api, self.client, self.corr, self.member_id, self.generation_id,
                self.session_timeout_ms, self.rebalance_timeout_ms, self.protocol_type, self.protocols,
                self.require_known_member_id, self.assignments, self.group_instance_id)

    @staticmethod
    def from_tuple(data: tuple[Any, ...]) -> "Request":
        return Request(*data)

    def __str__(self) -> str:
        parts = [f"c{self.client} {self.api}#{self.corr}", f"member={self.member_id or '-'}"]
        if self.api != "JoinGroup":
            parts.append(f"gen={self.generation_id}")
        if self.group_instance_id is not None:
            parts.append(f"instance={self.group_instance_id}")
        if self.assignments:
            parts.append("assign=" + ",".join(m for m, _ in self.assignments))
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Response:
    """The coordinator's answer to request ``(client, corr)``; ``error`` is an Errors name."""

    api: str
    client: int
    corr: int
    error: str = "NONE"
    generation_id: int = NO_GENERATION
    member_id: str = ""
    leader_id: str = ""
    members: tuple[str, ...] = ()        # JoinGroup: member ids, in the leader's response only
    assignment: bytes = b""
    protocol_name: str = ""

    @property
    def key(self) -> tuple[int, int]:
        return (self.client, self.corr)

    def to_tuple(self) -> tuple[Any, ...]:
        return (self.api, self.client, self.corr, self.error, self.generation_id, self.member_id,
                self.leader_id, self.members, self.assignment, self.protocol_name)

    @staticmethod
    def from_tuple(data: tuple[Any, ...]) -> "Response":
        return Response(*data)

    @staticmethod
    def from_result(api: str, client: int, corr: int, result: Any) -> "Response":
        """Convert an impl result value (JoinGroupResult, ...) into a network Response."""
        error = result.error.name
        if api == "JoinGroup":
            return Response(api, client, corr, error, result.generation_id, result.member_id,
                            result.leader_id or "", tuple(m[0] for m in result.members), b"",
                            result.protocol_name or "")
        if api == "SyncGroup":
            return Response(api, client, corr, error, assignment=result.assignment)
        if api == "LeaveGroup" and error == "NONE":
            # one identity per LeaveGroup here: its per-member error is what the client sees
            for _member, _instance, member_error in result.member_errors:
                if member_error.name != "NONE":
                    return Response(api, client, corr, member_error.name)
        return Response(api, client, corr, error)

    def __str__(self) -> str:
        """One line, e.g. ``c0 JoinGroup#3 NONE gen=2 leader=c0-1 member=c0-1``."""
        parts = [f"c{self.client} {self.api}#{self.corr} {self.error}"]
        if self.api == "JoinGroup":
            if self.generation_id != NO_GENERATION:
                parts.append(f"gen={self.generation_id}")
            if self.leader_id:
                parts.append(f"leader={self.leader_id}")
            if self.member_id:
                parts.append(f"member={self.member_id}")
            if self.members:
                parts.append("members=" + ",".join(self.members))
        elif self.assignment:
            parts.append("assignment=" + self.assignment.decode("ascii", "replace"))
        return " ".join(parts)

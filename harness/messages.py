"""Requests and responses on the simulated network, as plain frozen values (harness layer).

``Response`` is a core value (core/responses.py: step records and properties read it); it is
re-exported here, where the network and the clients use it.

A message is identified by ``(client, corr)``: ``corr`` is the per-client correlation id the
client stamped on the request, and the coordinator's answer carries it back (request_key).
``to_tuple``/``from_tuple`` give the plain-data form used in world snapshots.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.responses import Response
from core.types import NO_GENERATION

Protocols = tuple[tuple[str, bytes], ...]
Assignments = tuple[tuple[str, bytes], ...]

__all__ = ["Assignments", "Protocols", "Request", "Response"]


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
    support_skipping_assignment: bool = False   # JoinGroup v9+ (KIP-814, 3.2)

    @property
    def key(self) -> tuple[int, int]:
        return (self.client, self.corr)

    def to_tuple(self) -> tuple[Any, ...]:
        return (self.api, self.client, self.corr, self.member_id, self.generation_id,
                self.session_timeout_ms, self.rebalance_timeout_ms, self.protocol_type, self.protocols,
                self.require_known_member_id, self.assignments, self.group_instance_id,
                self.support_skipping_assignment)

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

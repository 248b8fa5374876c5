"""The coordinator's answers as the world hands them to clients: one typed value per response (stdlib only).

A response is identified by ``(client, corr)``, the request it answers. Properties read the fields;
``render()`` is the line a report shows and a trace file stores, and ``parse_response`` reads that
line back (a trace file is the only place text is read).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.types import NO_GENERATION

#: what an assignment byte outside ASCII renders as (bytes.decode("ascii", "replace"))
_REPLACED = "\ufffd"


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
        """Convert a coordinator result value (impl's JoinGroupResult, ...) into a Response."""
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

    def render(self) -> str:
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

    def __str__(self) -> str:
        return self.render()


def _join_fields(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = {"gen": "generation_id", "leader": "leader_id", "member": "member_id", "members": "members"}
    for part in text.split(" "):
        name, _, value = part.partition("=")
        if name not in names or names[name] in out:
            raise ValueError(f"unexpected field {part!r}")
        out[names[name]] = int(value) if name == "gen" else tuple(value.split(",")) if name == "members" else value
    return out


def parse_response(line: str) -> Response:
    """The response a stored line renders; ValueError if no Response renders exactly that line.

    Fields a line does not show (the protocol name; an assignment byte beyond ASCII, shown as U+FFFD and
    read back as 0xFF) come back as what renders the same."""
    try:
        response = _read(line)
    except ValueError:
        response = None
    if response is None or response.render() != line:
        raise ValueError(f"not a response line: {line!r}")
    return response


def _read(line: str) -> Response | None:
    head, _, rest = line.partition(" ")
    call, _, rest = rest.partition(" ")
    error, _, rest = rest.partition(" ")
    api, _, corr = call.partition("#")
    if not head.startswith("c") or not api or not error:
        return None
    kwargs: dict[str, Any] = {}
    if rest and api == "JoinGroup":
        kwargs = _join_fields(rest)
    elif rest:
        if not rest.startswith("assignment="):
            return None
        kwargs["assignment"] = bytes(0xFF if c == _REPLACED else ord(c) for c in rest[len("assignment="):])
    return Response(api, int(head[1:]), int(corr), error, **kwargs)

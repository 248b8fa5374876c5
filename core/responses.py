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
    # -- fields a trace line does not show (refinement compares them live; issue 27 item 4) -----------------
    protocol_type: str = ""              # JoinGroup v7+ (KIP-559): the group's protocol type, "" for none
    skip_assignment: bool = False        # JoinGroup v9+ (KIP-814)
    member_instances: tuple[str, ...] = ()   # JoinGroup: each listed member's group.instance.id ("" for none)
    member_metadata: tuple[bytes, ...] = ()  # JoinGroup: each listed member's metadata for the group's protocol
    #: LeaveGroup: (member id, group.instance.id or "", error) per identity of the request, in its order; ``error``
    #: is then the top-level error (v3+, KAFKA-8221). A line shows the per-identity errors when they say more
    #: than one NONE under a NONE top level
    member_errors: tuple[tuple[str, str, str], ...] = ()

    @property
    def key(self) -> tuple[int, int]:
        return (self.client, self.corr)

    @property
    def request_error(self) -> str:
        """The error of the request as one value: a LeaveGroup of one identity whose top level is NONE answers with
        that identity's error (what a client that sent one identity acts on); any other answer with ``error``."""
        if self.api == "LeaveGroup" and self.error == "NONE" and len(self.member_errors) == 1:
            return self.member_errors[0][2]
        return self.error

    def to_tuple(self) -> tuple[Any, ...]:
        return (self.api, self.client, self.corr, self.error, self.generation_id, self.member_id,
                self.leader_id, self.members, self.assignment, self.protocol_name, self.protocol_type,
                self.skip_assignment, self.member_instances, self.member_metadata, self.member_errors)

    @staticmethod
    def from_tuple(data: tuple[Any, ...]) -> "Response":
        return Response(*data)

    @staticmethod
    def from_result(api: str, client: int, corr: int, result: Any) -> "Response":
        """Convert a coordinator result value (impl's JoinGroupResult, ...) into a Response."""
        error = result.error.name
        if api == "JoinGroup":
            members = tuple(result.members)
            return Response(api, client, corr, error, result.generation_id, result.member_id,
                            result.leader_id or "", tuple(m[0] for m in members), b"",
                            result.protocol_name or "", result.protocol_type or "",
                            bool(getattr(result, "skip_assignment", False)), tuple(m[1] or "" for m in members),
                            tuple(bytes(m[2]) for m in members))
        if api == "SyncGroup":
            return Response(api, client, corr, error, assignment=result.assignment)
        if api == "LeaveGroup":
            return Response(api, client, corr, error, member_errors=tuple(
                (member, instance or "", member_error.name) for member, instance, member_error in result.member_errors))
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
            if self.skip_assignment:
                parts.append("skip")
        elif self.api == "LeaveGroup" and self._shows_member_errors():
            parts.append("leave=" + ",".join(e for _, _, e in self.member_errors))
        elif self.assignment:
            parts.append("assignment=" + self.assignment.decode("ascii", "replace"))
        return " ".join(parts)

    def _shows_member_errors(self) -> bool:
        errors = [e for _, _, e in self.member_errors]
        return bool(errors) and not (len(errors) == 1 and errors[0] in ("NONE", self.error))

    def __str__(self) -> str:
        return self.render()


def _join_fields(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = {"gen": "generation_id", "leader": "leader_id", "member": "member_id", "members": "members"}
    for part in text.split(" "):
        if part == "skip" and "skip_assignment" not in out:
            out["skip_assignment"] = True
            continue
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
    elif rest and api == "LeaveGroup":
        if not rest.startswith("leave="):
            return None
        kwargs["member_errors"] = tuple(("", "", e) for e in rest[len("leave="):].split(","))
    elif rest:
        if not rest.startswith("assignment="):
            return None
        kwargs["assignment"] = bytes(0xFF if c == _REPLACED else ord(c) for c in rest[len("assignment="):])
    return Response(api, int(head[1:]), int(corr), error, **kwargs)

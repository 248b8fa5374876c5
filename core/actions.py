"""World actions: the choices a scheduler makes, as small frozen values (stdlib only).

An action is one flat record so that it hashes, sorts, prints on one line and encodes to
JSON without a registry. ``kind`` is a Kafka API name when a client sends a request, or the
name of an environment event (DESIGN.md §5).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

#: kinds where a client sends a request of that API
REQUEST_KINDS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")
#: kinds of environment events
EVENT_KINDS = (
    "DeliverRequest",        # the network hands request (client, arg=corr) to the coordinator
    "DeliverResponse",       # the network hands response (client, arg=corr) to the client
    "DropRequest",           # fault: the request is lost (the client sees a timeout)
    "DropResponse",          # fault: the response is lost (the client sees a timeout)
    "AdvanceClock",          # move the mock clock by arg ms (no timer may be due)
    "AdvanceToNextDeadline", # move the clock just past the earliest timer deadline
    "FireTimer",             # a due timer task (arg = its sequence number) runs
    "CompleteAppend",        # the oldest pending log append completes, arg = error name
    "Crash",                 # the client process dies; its state is lost
    "Restart",               # a crashed client starts again with no member id
    "UnloadGroup",           # the group's partition emigrates (SPEC.md §3.7)
    "LoadGroup",             # the partition is loaded again
    "Receive",               # a real client's request off the wire (kgc serve): client = connection, arg = JSON
    # Kafka 4.x's event loop (harness/event_loop.py, SPEC-4x.md R2, R3, R11)
    "FlushBatch",            # the partition's open batch is written (arg "NONE") or fails (arg = error name)
    "CommitBatch",           # the high watermark passes the oldest written batch
    "Choose",                # the last step again with other picks at its choice points (arg = "i.j…")
)
KINDS = REQUEST_KINDS + EVENT_KINDS


@dataclass(frozen=True, slots=True, order=True)
class Action:
    """One step of the world. ``client`` is -1 for events without a client.

    ``arg`` means: for requests, the variant an adversarial client chose (0 for the
    Java-consumer model); for deliveries/drops, the correlation id; for AdvanceClock, the
    milliseconds; for FireTimer, the timer task's sequence number; for CompleteAppend, the
    error name ("NONE" for success); for Receive, the whole request as compact JSON (a real client
    chose it, so the world cannot enumerate it: see ``harness.external``).
    """

    kind: str
    client: int = -1
    arg: int | str = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown action kind {self.kind!r}; expected one of {', '.join(KINDS)}")

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "client": self.client, "arg": self.arg}

    @staticmethod
    def from_json(obj: object) -> "Action":
        if not isinstance(obj, dict) or "kind" not in obj:
            raise ValueError(f"an action must be an object with a 'kind', got {obj!r}")
        arg = obj.get("arg", 0)
        client = obj.get("client", -1)
        if not isinstance(client, int) or not isinstance(arg, (int, str)):
            raise ValueError(f"malformed action {obj!r}")
        return Action(str(obj["kind"]), client, arg)

    def __str__(self) -> str:
        who = f"c{self.client}" if self.client >= 0 else ""
        if self.kind == "Receive":
            return f"Receive {who} {receive_summary(str(self.arg))}"
        arg = "" if self.arg == 0 and self.kind in REQUEST_KINDS else str(self.arg)
        return " ".join(p for p in (self.kind, who, arg) if p)


def receive_summary(payload: str) -> str:
    """A Receive payload in one short line (``JoinGroup#3 member=- gen=-1``) for tables and reports."""
    try:
        obj = json.loads(payload)
        parts = [f"{obj['api']}#{obj['corr']}", f"member={obj.get('member_id') or '-'}"]
    except (ValueError, KeyError, TypeError):
        return payload[:60]
    if obj["api"] == "LeaveGroup" and obj.get("members"):
        parts[1] = "members=" + ",".join(m[0] or f"instance:{m[1]}" for m in obj["members"])
    elif obj["api"] != "JoinGroup":
        parts.append(f"gen={obj.get('generation_id', -1)}")
    return " ".join(parts)

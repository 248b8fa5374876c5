"""The wire driver: runs a probe's script against a broker at HOST:PORT, in real time.

One TCP connection per member, as Kafka clients have (a parked JoinGroup holds back only its own
member's later requests), one request in flight per connection. Requests are encoded and answers
decoded with kafka-python's ``kafka.protocol`` (wire/codec.py). What comes back is recorded raw in
``Exchange`` values — the member ids the broker chose included; wire/conform/answers.py turns them
into structural answers.
"""
from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.consumer import (HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, OffsetCommitRequest,
                                     SyncGroupRequest)
from kafka.protocol.schemas.fields.codecs import Int32

from wire.codec import MAX_FRAME_BYTES, Undecodable, decode_exact, encode_request
from wire.conform.script import GROUP, TOPIC, Assign, Gen, Id, Probe, Send

CLIENT_ID = "kgc-conform"


@dataclass
class Exchange:
    """One request of the script and what came back: ``answered_ms`` None = no answer before the probe
    ended (or not sent: ``sent_ms`` None); ``closed``: the broker closed the connection instead."""

    label: str
    member: str
    api: str
    version: int
    request: dict[str, Any]
    sent_ms: int | None = None
    answered_ms: int | None = None
    response: dict[str, Any] | None = None
    closed: bool = False
    correlation_ok: bool = True
    malformed: str = ""              # why the answer could not be read ("" = it could); the member stops there


@dataclass
class Run:
    """A probe's recorded exchanges, in script order, and stray frames (answers nobody asked for)."""

    probe: str
    exchanges: list[Exchange]
    stray: list[str] = field(default_factory=list)


class _Memory:
    """What the members learned so far: their member ids and generations, the leaders' member lists."""

    def __init__(self) -> None:
        self.ids: dict[str, list[str]] = {}
        self.gens: dict[str, int] = {}
        self.lists: dict[str, list[str]] = {}

    def learn(self, member: str, api: str, response: dict[str, Any]) -> None:
        if api != "JoinGroup":
            return
        mid = response.get("member_id") or ""
        learned = response.get("error_code") in (0, 79)              # NONE, MEMBER_ID_REQUIRED: the broker's choice
        if mid and learned and mid not in self.ids.get(member, []):
            self.ids.setdefault(member, []).append(mid)
        if response.get("error_code") == 0:
            self.gens[member] = response["generation_id"]
            self.lists[member] = [m["member_id"] for m in response.get("members", [])]

    def resolve(self, value: Any, group: str, label_of: Any) -> Any:
        if value is GROUP:
            return group
        if isinstance(value, Id):
            known = self.ids.get(value.member, [])
            return known[value.nth] if -len(known) <= value.nth < len(known) else ""
        if isinstance(value, Gen):
            gen = self.gens.get(value.member)
            return -1 if gen is None else gen + value.delta
        if isinstance(value, Assign):
            return [(mid, f"asg:{label_of(mid)}".encode()) for mid in self.lists.get(value.member, [])]
        if isinstance(value, tuple):
            return tuple(self.resolve(v, group, label_of) for v in value)
        return value


def build_request(api: str, version: int, f: dict[str, Any]) -> Any:
    """A kafka-python request object of ``api`` at ``version`` from resolved fields."""
    if api == "JoinGroup":
        proto = JoinGroupRequest.JoinGroupRequestProtocol
        return JoinGroupRequest[version](
            group_id=f["group_id"], session_timeout_ms=f["session_timeout_ms"],
            rebalance_timeout_ms=f["rebalance_timeout_ms"], member_id=f["member_id"],
            group_instance_id=f["group_instance_id"], protocol_type=f["protocol_type"],
            protocols=[proto(name=n, metadata=m) for n, m in f["protocols"]], reason=None)
    if api == "SyncGroup":
        a = SyncGroupRequest.SyncGroupRequestAssignment
        return SyncGroupRequest[version](
            group_id=f["group_id"], generation_id=f["generation_id"], member_id=f["member_id"],
            group_instance_id=f["group_instance_id"], protocol_type=f["protocol_type"],
            protocol_name=f["protocol_name"], assignments=[a(member_id=m, assignment=x) for m, x in f["assignments"]])
    if api == "Heartbeat":
        return HeartbeatRequest[version](group_id=f["group_id"], generation_id=f["generation_id"],
                                         member_id=f["member_id"], group_instance_id=f["group_instance_id"])
    if api == "LeaveGroup":
        ident = LeaveGroupRequest.MemberIdentity
        members = [ident(member_id=m, group_instance_id=i, reason=None) for m, i in f["members"]]
        return LeaveGroupRequest[version](group_id=f["group_id"], member_id=f["member_id"], members=members)
    if api == "OffsetCommit":
        t = OffsetCommitRequest.OffsetCommitRequestTopic
        part = t.OffsetCommitRequestPartition(partition_index=0, committed_offset=0, committed_metadata="")
        return OffsetCommitRequest[version](
            group_id=f["group_id"], generation_id_or_member_epoch=f["generation_id"], member_id=f["member_id"],
            group_instance_id=f["group_instance_id"], retention_time_ms=-1, topics=[t(name=TOPIC, partitions=[part])])
    raise ValueError(f"the driver does not send {api}.")


def response_fields(api: str, response: Any) -> dict[str, Any]:
    """The fields of a decoded response the comparison reads, as plain values (raw member ids)."""
    if api == "JoinGroup":
        return dict(error_code=response.error_code, generation_id=response.generation_id,
                    protocol_type=getattr(response, "protocol_type", None), protocol_name=response.protocol_name,
                    leader=response.leader, member_id=response.member_id,
                    skip_assignment=getattr(response, "skip_assignment", None),   # v9+ (KIP-814)
                    members=[dict(member_id=m.member_id, group_instance_id=getattr(m, "group_instance_id", None),
                                  metadata=bytes(m.metadata).decode("latin-1")) for m in response.members])
    if api == "SyncGroup":
        return dict(error_code=response.error_code, protocol_type=getattr(response, "protocol_type", None),
                    protocol_name=getattr(response, "protocol_name", None),
                    assignment=bytes(response.assignment).decode("latin-1"))
    if api == "LeaveGroup":
        return dict(error_code=response.error_code,
                    members=[dict(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                  error_code=m.error_code) for m in (getattr(response, "members", None) or [])])
    if api == "OffsetCommit":
        codes = [p.error_code for t in response.topics for p in t.partitions]
        return dict(error_code=codes[0] if len(codes) == 1 else -1, partitions=codes)
    return dict(error_code=response.error_code)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.corr = reader, writer, 0

    async def call(self, api: str, version: int, request: Any) -> tuple[Any, bool]:
        """Send ``request`` and read one answer: (response, its correlation id matched). Undecodable for a
        frame size Kafka refuses or bytes that are not the response asked for; IncompleteReadError or
        ConnectionError when the broker closes the connection."""
        self.corr += 1
        self.writer.write(encode_request(request, self.corr, CLIENT_ID))
        await self.writer.drain()
        size = Int32.decode(io.BytesIO(await self.reader.readexactly(4)))
        if not 0 <= size <= MAX_FRAME_BYTES:
            raise Undecodable(f"a frame size of {size} bytes (a Kafka client accepts 0 to {MAX_FRAME_BYTES})")
        response = decode_exact(api, version, await self.reader.readexactly(size))
        return response, response.header.correlation_id == self.corr

    async def stray(self) -> bool:
        """True if the broker sent bytes nobody asked for (checked at the end of a probe)."""
        try:
            data = await asyncio.wait_for(self.reader.read(4), 0.05)
        except (asyncio.TimeoutError, ConnectionError):
            return False
        return bool(data)

    def close(self) -> None:
        self.writer.close()


async def run_probe(probe: Probe, host: str, port: int, group: str) -> Run:
    """Execute ``probe`` against host:port with group id ``group``; every member ends by ``probe.end_ms``."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    memory = _Memory()
    exchanges = {s.label: Exchange(s.label, s.member, s.api, s.version, {}) for s in probe.steps}
    answered = {s.label: asyncio.Event() for s in probe.steps}
    members = sorted({s.member for s in probe.steps})
    raw_labels: dict[str, str] = {}

    def label_of(mid: str) -> str:                  # assignment bytes name members by the driver's label
        for member, ids in sorted(memory.ids.items()):
            if mid in ids:
                return member if ids.index(mid) == 0 else f"{member}#{ids.index(mid) + 1}"
        return raw_labels.setdefault(mid, f"?{len(raw_labels) + 1}")

    def now() -> int:
        return int((loop.time() - start) * 1000)

    async def member_task(member: str) -> list[str]:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:                                  # the broker went away mid-run: the member gets nothing
            first = next(s for s in probe.steps if s.member == member)
            exchanges[first.label].closed, exchanges[first.label].answered_ms = True, now()
            answered[first.label].set()
            return []
        conn = _Connection(reader, writer)
        outstanding = False                              # a request given up on: a late answer is no stray
        try:
            for step in (s for s in probe.steps if s.member == member):
                if not await _wait_turn(step, answered, exchanges, start, probe.end_ms, loop):
                    break
                ex = exchanges[step.label]
                fields = {k: memory.resolve(v, group, label_of) for k, v in step.fields}
                ex.request = fields
                ex.sent_ms = now()
                try:
                    response, ok = await asyncio.wait_for(
                        conn.call(step.api, step.version, build_request(step.api, step.version, fields)),
                        max(probe.end_ms - ex.sent_ms, 1) / 1000)
                except asyncio.TimeoutError:
                    outstanding = True                    # parked past the probe's end: no answer
                    break
                except (asyncio.IncompleteReadError, ConnectionError):
                    ex.closed, ex.answered_ms = True, now()
                    answered[step.label].set()
                    break
                except Undecodable as exc:             # Kafka's clients drop the connection on such an answer
                    ex.malformed, ex.answered_ms = str(exc), now()
                    answered[step.label].set()
                    break
                ex.answered_ms, ex.correlation_ok = now(), ok
                ex.response = response_fields(step.api, response)
                memory.learn(member, step.api, ex.response)
                answered[step.label].set()
            return [member] if not outstanding and await conn.stray() else []
        finally:
            conn.close()

    results = await asyncio.gather(*(member_task(m) for m in members))
    stray = sorted(m for found in results for m in found)
    return Run(probe.name, [exchanges[s.label] for s in probe.steps], stray)


async def _wait_turn(step: Send, answered: dict[str, asyncio.Event], exchanges: dict[str, Exchange],
                     start: float, end_ms: int, loop: asyncio.AbstractEventLoop) -> bool:
    """Wait for the answers the step comes after, then ``at_ms`` more (counted from the latest of those
    answers, or from the probe's start); False when the probe ends first."""
    deadline = start + end_ms / 1000
    for label in step.after:
        try:
            await asyncio.wait_for(answered[label].wait(), max(deadline - loop.time(), 0.001))
        except asyncio.TimeoutError:
            return False
    base = max((exchanges[label].answered_ms or 0 for label in step.after), default=0)
    delay = start + (base + step.at_ms) / 1000 - loop.time()
    if delay > 0:
        await asyncio.sleep(delay)
    return loop.time() < deadline

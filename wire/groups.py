"""Group APIs at the wire: a decoded request -> the session's keyword fields; impl's result -> a response.

Owns the per-version field mapping of JoinGroup, SyncGroup, Heartbeat, LeaveGroup and OffsetCommit,
the KafkaApis part of each (what Kafka computes before the coordinator sees the request: the v0
rebalance timeout, requireKnownMemberId, unknown-topic partitions of a commit) and the responses
built from impl's JoinGroupResult / SyncGroupResult / HeartbeatResult / LeaveGroupResult / CommitResult.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from core.types import Errors

from wire.codec import response_class

GROUP_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")


@dataclass(frozen=True, slots=True)
class Commit:
    """An OffsetCommit as split by KafkaApis: partitions for the coordinator, and partitions of unknown
    topics answered UNKNOWN_TOPIC_OR_PARTITION without it; ``order`` is the request's (topic, partition) order."""

    group_id: str
    known: dict[tuple[str, int], tuple[int, str | None]] = field(default_factory=dict)
    unknown: tuple[tuple[str, int], ...] = ()
    order: tuple[tuple[str, int], ...] = ()


def join_fields(version: int, req: Any) -> dict[str, Any]:
    """JoinGroup: v0 has no rebalance timeout, Kafka uses the session timeout (SPEC.md §3.1, KIP-62);
    requireKnownMemberId = v4+ and no group instance id (SPEC.md §3.1, KIP-394/KIP-345); supportSkippingAssignment
    = v9+ (KIP-814: KafkaApis hands the coordinator ``request.version >= 9``)."""
    instance = req.group_instance_id if version >= 5 else None
    fields = dict(group_id=req.group_id, member_id=req.member_id, session_timeout_ms=req.session_timeout_ms,
                  rebalance_timeout_ms=req.rebalance_timeout_ms if version >= 1 else req.session_timeout_ms,
                  protocol_type=req.protocol_type, protocols=[(p.name, bytes(p.metadata)) for p in req.protocols],
                  group_instance_id=instance, require_known_member_id=version >= 4 and instance is None)
    if version >= 9:
        fields["support_skipping_assignment"] = True
    return fields


def sync_fields(version: int, req: Any) -> dict[str, Any]:
    return dict(group_id=req.group_id, member_id=req.member_id, generation_id=req.generation_id,
                group_instance_id=req.group_instance_id if version >= 3 else None,
                assignments={a.member_id: bytes(a.assignment) for a in req.assignments})


def heartbeat_fields(version: int, req: Any) -> dict[str, Any]:
    return dict(group_id=req.group_id, member_id=req.member_id, generation_id=req.generation_id,
                group_instance_id=req.group_instance_id if version >= 3 else None)


def leave_fields(version: int, req: Any) -> dict[str, Any]:
    """v0-2 name one member; v3+ a batch of identities (KAFKA-8221, SPEC.md §3.4)."""
    if version < 3:
        return dict(group_id=req.group_id, members=[(req.member_id, None)])
    return dict(group_id=req.group_id, members=[(m.member_id, m.group_instance_id) for m in req.members])


def split_commit(req: Any, has: Callable[[str, int], bool]) -> Commit:
    known: dict[tuple[str, int], tuple[int, str | None]] = {}
    unknown, order = [], []
    for t in req.topics:
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            order.append(tp)
            if has(t.name, p.partition_index):
                known[tp] = (p.committed_offset, p.committed_metadata)
            else:
                unknown.append(tp)
    return Commit(req.group_id, known, tuple(unknown), tuple(order))


def commit_fields(version: int, req: Any, commit: Commit) -> dict[str, Any]:
    return dict(group_id=req.group_id, member_id=req.member_id, generation_id=req.generation_id_or_member_epoch,
                group_instance_id=req.group_instance_id if version >= 7 else None,
                offsets={f"{t}-{p}": offset for (t, p), (offset, _) in sorted(commit.known.items())})


def request_fields(api: str, version: int, req: Any) -> dict[str, Any]:
    """The session's keyword fields for JoinGroup/SyncGroup/Heartbeat/LeaveGroup (OffsetCommit: commit_fields)."""
    return {"JoinGroup": join_fields, "SyncGroup": sync_fields, "Heartbeat": heartbeat_fields,
            "LeaveGroup": leave_fields}[api](version, req)


# --- responses ---------------------------------------------------------------------------------
def join_response(version: int, result: Any) -> Any:
    """Protocol name is a non-null string before v7; the protocol type appears in v7 (KIP-559);
    only the leader's response lists the members (the result already says so)."""
    cls = response_class("JoinGroup", version)
    members = [cls.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=meta)
               for m, i, meta in result.members]
    name = result.protocol_name if version >= 7 else (result.protocol_name or "")
    return cls(throttle_time_ms=0, error_code=int(result.error), generation_id=result.generation_id,
               protocol_type=result.protocol_type, protocol_name=name, leader=result.leader_id or "",
               skip_assignment=bool(result.skip_assignment), member_id=result.member_id, members=members)


def sync_response(version: int, result: Any, protocol: tuple[str | None, str | None]) -> Any:
    """v5 carries the group's protocol type and name on success (KIP-559, SPEC.md §3.2)."""
    cls = response_class("SyncGroup", version)
    ok = result.error is Errors.NONE
    return cls(throttle_time_ms=0, error_code=int(result.error), protocol_type=protocol[0] if ok else None,
               protocol_name=protocol[1] if ok else None, assignment=bytes(result.assignment))


def heartbeat_response(version: int, result: Any) -> Any:
    return response_class("Heartbeat", version)(throttle_time_ms=0, error_code=int(result.error))


def leave_response(version: int, result: Any) -> Any:
    cls = response_class("LeaveGroup", version)
    members = [cls.MemberResponse(member_id=m, group_instance_id=i, error_code=int(e))
               for m, i, e in result.member_errors]
    return cls(throttle_time_ms=0, error_code=int(result.error), members=members)


def commit_response(version: int, commit: Commit, error: Errors) -> Any:
    """One error per partition: the coordinator's for known topics, UNKNOWN_TOPIC_OR_PARTITION for the rest."""
    cls = response_class("OffsetCommit", version)
    topic_cls = cls.OffsetCommitResponseTopic
    unknown = set(commit.unknown)
    topics: dict[str, list[Any]] = {}
    for tp in commit.order:
        code = Errors.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else error
        topics.setdefault(tp[0], []).append(
            topic_cls.OffsetCommitResponsePartition(partition_index=tp[1], error_code=int(code)))
    return cls(throttle_time_ms=0, topics=[topic_cls(name=t, partitions=ps) for t, ps in topics.items()])


def group_response(api: str, version: int, result: Any, protocol: tuple[str | None, str | None]) -> Any:
    """The response to a JoinGroup/SyncGroup/Heartbeat/LeaveGroup answered by the coordinator."""
    if api == "JoinGroup":
        return join_response(version, result)
    if api == "SyncGroup":
        return sync_response(version, result, protocol)
    if api == "Heartbeat":
        return heartbeat_response(version, result)
    return leave_response(version, result)

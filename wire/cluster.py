"""The one-node cluster `kgc serve` pretends to be: answers that do not go to the coordinator.

Owns Produce (refused: the logs stay empty), ApiVersions, Metadata, FindCoordinator, ListOffsets,
Fetch (an empty log per partition), OffsetFetch (from the offsets the server saw committed) and
DescribeGroups (from the coordinator's ``describe_group``), each built at the request's version with
kafka.protocol classes. Every function is pure: request in, response object out.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from core.types import Errors

from wire.codec import api_versions_body, response_class

NODE_ID = 0
CLUSTER_ID = "kgc-serve"
#: Fetch with no data waits max_wait_ms like a broker, capped so a session's clock stays lively
FETCH_WAIT_CAP_MS = 500
OFFSET_OUT_OF_RANGE = 1           # not coordinator errors, so not in core.types.Errors
TOPIC_AUTHORIZATION_FAILED = 29
NO_OFFSET = -1                    # OffsetFetch for a partition with no committed offset


@dataclass(frozen=True, slots=True)
class Cluster:
    """What every answer needs: the node's address, the topics and the advertised versions."""

    host: str
    port: int
    topics: Mapping[str, int]
    versions: Mapping[int, tuple[int, int]]
    profile: str = "3.9"

    def has(self, topic: str | None, partition: int | None = None) -> bool:
        if topic is None or topic not in self.topics:
            return False
        return partition is None or 0 <= partition < self.topics[topic]


def topic_id(name: str) -> uuid.UUID:
    """A stable topic id (Metadata v10+): the same name always gets the same id."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"kgc-serve/topic/{name}")


def api_versions(version: int, cluster: Cluster) -> Any:
    return response_class("ApiVersions", version)(error_code=0, api_keys=api_versions_body(cluster.versions),
                                                  throttle_time_ms=0)


def produce(version: int, request: Any, cluster: Cluster) -> Any:
    """Every log stays empty: a write to a known partition is refused as Kafka refuses an unauthorised
    one (non-retriable, so a producer fails fast); unknown partitions get UNKNOWN_TOPIC_OR_PARTITION.
    The caller sends nothing back for acks=0, as Kafka does."""
    cls = response_class("Produce", version)
    topic_cls = cls.TopicProduceResponse
    topics = []
    for t in request.topic_data:
        parts = [topic_cls.PartitionProduceResponse(
            index=p.index, error_code=TOPIC_AUTHORIZATION_FAILED if cluster.has(t.name, p.index)
            else int(Errors.UNKNOWN_TOPIC_OR_PARTITION), base_offset=-1, log_append_time_ms=-1, log_start_offset=-1,
            record_errors=[], error_message=None) for p in t.partition_data]
        topics.append(topic_cls(name=t.name, partition_responses=parts))
    return cls(responses=topics, throttle_time_ms=0)


def metadata(version: int, request: Any, cluster: Cluster) -> Any:
    """All topics for a null list (and for an empty v0 list, which meant "all"); unknown names get
    UNKNOWN_TOPIC_OR_PARTITION — auto-creation is off."""
    cls = response_class("Metadata", version)
    wanted = request.topics
    names: list[str | None]
    if wanted is None or (version == 0 and not wanted):
        names = list(sorted(cluster.topics))
    else:
        by_id = {topic_id(n): n for n in cluster.topics}
        names = [t.name if t.name is not None else by_id.get(t.topic_id) for t in wanted]
    broker = cls.MetadataResponseBroker(node_id=NODE_ID, host=cluster.host, port=cluster.port, rack=None)
    return cls(throttle_time_ms=0, brokers=[broker], cluster_id=CLUSTER_ID, controller_id=NODE_ID,
               topics=[_metadata_topic(cls, n, cluster) for n in names])


def _metadata_topic(cls: Any, name: str | None, cluster: Cluster) -> Any:
    topic_cls = cls.MetadataResponseTopic
    if not cluster.has(name):
        return topic_cls(error_code=int(Errors.UNKNOWN_TOPIC_OR_PARTITION), name=name, topic_id=None,
                         is_internal=False, partitions=[])
    assert name is not None
    partitions = [topic_cls.MetadataResponsePartition(
        error_code=0, partition_index=p, leader_id=NODE_ID, leader_epoch=-1, replica_nodes=[NODE_ID],
        isr_nodes=[NODE_ID], offline_replicas=[]) for p in range(cluster.topics[name])]
    return topic_cls(error_code=0, name=name, topic_id=topic_id(name), is_internal=False, partitions=partitions)


def find_coordinator(version: int, request: Any, cluster: Cluster) -> Any:
    """This node coordinates every group; there is no transaction coordinator (key type 1)."""
    cls = response_class("FindCoordinator", version)
    is_group = request.key_type == 0
    error = Errors.NONE if is_group else Errors.COORDINATOR_NOT_AVAILABLE
    node, host, port = (NODE_ID, cluster.host, cluster.port) if is_group else (-1, "", -1)
    if version >= 4:       # batched keys (KIP-699)
        coordinators = [cls.Coordinator(key=k, node_id=node, host=host, port=port, error_code=int(error),
                                        error_message=None) for k in request.coordinator_keys]
        return cls(throttle_time_ms=0, coordinators=coordinators)
    return cls(throttle_time_ms=0, error_code=int(error), error_message=None, node_id=node, host=host, port=port)


def list_offsets(version: int, request: Any, cluster: Cluster) -> Any:
    """Every log is empty: earliest = latest = 0 (v0 answers the old list of offsets)."""
    cls = response_class("ListOffsets", version)
    topic_cls = cls.ListOffsetsTopicResponse
    part_cls = topic_cls.ListOffsetsPartitionResponse
    topics = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            known = cluster.has(t.name, p.partition_index)
            error = Errors.NONE if known else Errors.UNKNOWN_TOPIC_OR_PARTITION
            parts.append(part_cls(partition_index=p.partition_index, error_code=int(error),
                                  old_style_offsets=[0] if known else [], timestamp=-1,
                                  offset=0 if known else -1, leader_epoch=-1))
        topics.append(topic_cls(name=t.name, partitions=parts))
    return cls(throttle_time_ms=0, topics=topics)


def fetch(version: int, request: Any, cluster: Cluster) -> tuple[Any, int]:
    """(response, ms to wait before sending it). No partition ever has data, so a clean fetch waits
    max_wait_ms (capped); a fetch with an error in it is answered at once, as a broker would."""
    cls = response_class("Fetch", version)
    topic_cls = cls.FetchableTopicResponse
    errors = False
    topics = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            error = _fetch_error(cluster, t.topic, p.partition, p.fetch_offset)
            errors = errors or error != 0
            parts.append(topic_cls.PartitionData(
                partition_index=p.partition, error_code=error, high_watermark=0, last_stable_offset=0,
                log_start_offset=0, aborted_transactions=None, preferred_read_replica=-1, records=b""))
        topics.append(topic_cls(topic=t.topic, partitions=parts))
    response = cls(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)
    wait = 0 if errors or request.min_bytes <= 0 else min(max(request.max_wait_ms, 0), FETCH_WAIT_CAP_MS)
    return response, wait


def _fetch_error(cluster: Cluster, topic: str, partition: int, offset: int) -> int:
    if not cluster.has(topic, partition):
        return int(Errors.UNKNOWN_TOPIC_OR_PARTITION)
    return 0 if offset == 0 else OFFSET_OUT_OF_RANGE   # the log is [0, 0)


Offsets = Mapping[tuple[str, str, int], tuple[int, str | None]]   # (group, topic, partition) -> (offset, metadata)


def offset_fetch(version: int, request: Any, offsets: Offsets) -> Any:
    """Committed offsets as the server saw them succeed; -1 (and no error) where there is none."""
    cls = response_class("OffsetFetch", version)
    if version >= 8:       # batched groups (KIP-709)
        group_cls = cls.OffsetFetchResponseGroup
        groups = []
        for g in request.groups:
            wanted = None if g.topics is None else [(t.name, t.partition_indexes) for t in g.topics]
            topics = _fetched(g.group_id, wanted, offsets, group_cls.OffsetFetchResponseTopics)
            groups.append(group_cls(group_id=g.group_id, topics=topics, error_code=0))
        return cls(throttle_time_ms=0, groups=groups)
    wanted = None if request.topics is None else [(t.name, t.partition_indexes) for t in request.topics]
    topics = _fetched(request.group_id, wanted, offsets, cls.OffsetFetchResponseTopic)
    return cls(throttle_time_ms=0, topics=topics, error_code=0)


def _fetched(group: str, wanted: list[tuple[str, list[int]]] | None, offsets: Offsets, topic_cls: Any) -> list[Any]:
    if wanted is None:     # null topics (v2+): every partition the group has an offset for
        by_topic: dict[str, list[int]] = {}
        for (g, t, p) in sorted(offsets):
            if g == group:
                by_topic.setdefault(t, []).append(p)
        wanted = sorted(by_topic.items())
    part_cls = getattr(topic_cls, "OffsetFetchResponsePartition", None) or topic_cls.OffsetFetchResponsePartitions
    topics = []
    for name, partitions in wanted:
        parts = []
        for p in partitions:
            offset, meta = offsets.get((group, name, p), (NO_OFFSET, ""))
            parts.append(part_cls(partition_index=p, committed_offset=offset, committed_leader_epoch=-1,
                                  metadata=meta, error_code=0))
        topics.append(topic_cls(name=name, partitions=parts))
    return topics


def describe_groups(version: int, request: Any, describe_group: Callable[[str], Any]) -> Any:
    """Each group as its coordinator describes it at this version (``describe_group``: impl's GroupSummary — the
    release decides what an unknown group answers, R16, and which members' bytes show)."""
    cls = response_class("DescribeGroups", version)
    return cls(throttle_time_ms=0, groups=[_described(cls.DescribedGroup, g, describe_group(g))
                                           for g in request.groups])


def _described(group_cls: Any, group_id: str, summary: Any) -> Any:
    members = [group_cls.DescribedGroupMember(
        member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
        client_host=m.client_host, member_metadata=m.metadata, member_assignment=m.assignment)
        for m in summary.members]
    return group_cls(error_code=int(summary.error), error_message=None, group_id=group_id,
                     group_state=summary.state, protocol_type=summary.protocol_type,
                     protocol_data=summary.protocol, members=members)

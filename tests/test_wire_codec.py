"""wire/codec, wire/versions, wire/cluster, wire/groups and wire/server: every served API at every
advertised version, as a real client sends it — built and read with kafka.protocol over a socket.

Group APIs run against a scripted fake session (its interface is wire/session.py's LiveSession), so
each field mapping is asserted exactly; one test forms a group on the real LiveSession (0.10.0).
"""
from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pytest
from kafka.protocol.admin import DescribeGroupsRequest
from kafka.protocol.consumer import (FetchRequest, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
                                     ListOffsetsRequest, OffsetCommitRequest, OffsetFetchRequest, SyncGroupRequest)
from kafka.protocol.metadata import ApiVersionsRequest, FindCoordinatorRequest, MetadataRequest
from kafka.protocol.producer import ProduceRequest

from core.types import Errors, GroupState
from impl.results import (CommitResult, GroupSummary, GroupView, HeartbeatResult, JoinGroupResult, LeaveGroupResult,
                          MemberSummary, SyncGroupResult)
from wire.codec import MESSAGES, decode_response, encode_request
from wire.server import ServerThread, run_in_thread
from wire.versions import BROKER_MAX_BY_RELEASE, SERVED, supported_versions

TOPICS = {"t": 3, "u": 1}


# --- a scripted session with LiveSession's interface ---------------------------------------------
@dataclass(frozen=True)
class FakeAnswer:
    conn: int
    corr: int
    api: str
    result: object


class FakeSession:
    """Answers each request at once with ``script[api](fields)``; None parks it until a timer ``park_ms``
    later (real time, as the server reports it) fires and answers it with the default result."""

    def __init__(self, profile: str = "3.9", script: dict[str, Callable[[dict[str, Any]], Any]] | None = None,
                 park_ms: int = 800) -> None:
        self.profile, self.script, self.park_ms = profile, script or {}, park_ms
        self.conns: list[str] = []
        self.submitted: list[tuple[int, str, dict[str, Any]]] = []
        self.versions: list[int | None] = []           # the api_version of each submitted request
        self.summaries: dict[str, GroupSummary] = {}    # what describe_group answers (else Dead, no error)
        self.described: list[tuple[str, int]] = []
        self._out: list[FakeAnswer] = []
        self._parked: list[tuple[int, int, str, Any]] = []
        self._corr: dict[int, int] = {}
        self.view: GroupView | None = None
        self._now = 0
        self._due: int | None = None

    def open(self, client_id: str) -> int:
        self.conns.append(client_id)
        return len(self.conns) - 1

    def submit(self, conn: int, api: str, api_version: int | None = None, **fields: Any) -> int:
        corr = self._corr[conn] = self._corr.get(conn, 0) + 1
        self.submitted.append((conn, api, fields))
        self.versions.append(api_version)
        result = self.script.get(api, _default)(fields)
        if result is None:
            self._parked.append((conn, corr, api, _default(dict(fields, api=api))))
            self._due = self._now + self.park_ms
        else:
            self._out.append(FakeAnswer(conn, corr, api, result))
        return corr

    def answers(self) -> list[FakeAnswer]:
        out, self._out = self._out, []
        return out

    def advance_to(self, now_ms: int) -> None:
        self._now = now_ms
        if self._parked and self._due is not None and now_ms > self._due:
            self._out.extend(FakeAnswer(c, k, a, r) for c, k, a, r in self._parked)
            self._parked, self._due = [], None

    def next_deadline_ms(self) -> int | None:
        return None if self._due is None else self._due + 1

    def describe(self, group_id: str) -> GroupView | None:
        return self.view if group_id == "g" else None

    def describe_group(self, group_id: str, api_version: int) -> GroupSummary:
        self.described.append((group_id, api_version))
        return self.summaries.get(group_id, GroupSummary(Errors.NONE, "Dead", "", ""))

    def close(self) -> None:
        pass


def _default(fields: dict[str, Any]) -> Any:
    api = fields.get("api")
    if api == "JoinGroup" or "protocols" in fields:
        return JoinGroupResult(Errors.NONE, 1, "consumer", "range", "m1", "m1", (("m1", None, b"meta"),))
    if "offsets" in fields:
        return CommitResult(Errors.NONE)
    if "members" in fields:
        return LeaveGroupResult(Errors.NONE, tuple((m, i, Errors.NONE) for m, i in fields["members"]))
    if "assignments" in fields:
        return SyncGroupResult(Errors.NONE, b"plan")
    return HeartbeatResult(Errors.NONE)


# --- a client over a raw socket -------------------------------------------------------------------
class Client:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.corr = 0

    def send(self, request: Any, client_id: str = "kgc-test") -> int:
        self.corr += 1
        self.sock.sendall(encode_request(request, self.corr, client_id))
        return self.corr

    def recv(self, api: str, version: int) -> Any:
        size = int.from_bytes(self._exactly(4), "big", signed=True)
        return decode_response(api, version, self._exactly(size))

    def call(self, api: str, request: Any) -> Any:
        corr = self.send(request)
        response = self.recv(api, request.API_VERSION)
        assert response.header.correlation_id == corr
        return response

    def _exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "the server closed the connection"
            buf += chunk
        return buf

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def served() -> Iterator[tuple[ServerThread, FakeSession]]:
    session = FakeSession()
    server = run_in_thread(session, TOPICS)
    yield server, session
    server.stop()


@pytest.fixture
def client(served: tuple[ServerThread, FakeSession]) -> Iterator[Client]:
    c = Client(served[0].port)
    yield c
    c.close()


def _versions(api: str, profile: str = "3.9") -> list[int]:
    from kafka.protocol.api_key import ApiKey
    low, high = supported_versions(profile)[int(ApiKey[api])]
    return list(range(low, high + 1))


# --- the version tables ---------------------------------------------------------------------------
def test_each_profile_advertises_its_release_capped_by_what_is_served() -> None:
    def named(profile: str) -> dict[str, tuple[int, int]]:
        from kafka.protocol.api_key import ApiKey
        return {ApiKey(k).name: v for k, v in supported_versions(profile).items()}
    assert named("0.10.0") == {
        "Produce": (0, 2), "Fetch": (0, 2), "ListOffsets": (0, 0), "Metadata": (0, 1), "OffsetCommit": (2, 2),
        "OffsetFetch": (1, 1), "FindCoordinator": (0, 0), "JoinGroup": (0, 0), "Heartbeat": (0, 0),
        "LeaveGroup": (0, 0), "SyncGroup": (0, 0), "DescribeGroups": (0, 0), "ApiVersions": (0, 0)}
    assert named("3.9") == {
        "Produce": (0, 9), "Fetch": (0, 12), "ListOffsets": (0, 7), "Metadata": (0, 12), "OffsetCommit": (2, 8),
        "OffsetFetch": (1, 8), "FindCoordinator": (0, 4), "JoinGroup": (0, 9), "Heartbeat": (0, 4),
        "LeaveGroup": (0, 5), "SyncGroup": (0, 5), "DescribeGroups": (0, 5), "ApiVersions": (0, 3)}


def test_release_steps_rise_and_served_versions_exist_in_the_codec() -> None:
    for api, steps in BROKER_MAX_BY_RELEASE.items():
        assert [r for r, _ in steps] == sorted(r for r, _ in steps) and [v for _, v in steps] == sorted(
            v for _, v in steps), api
        low, high = SERVED[api]
        assert 0 <= low <= high <= MESSAGES[api][0].max_version, api


# --- cluster APIs ---------------------------------------------------------------------------------
@pytest.mark.parametrize("version", range(0, 4))
def test_api_versions_lists_the_profile_table_with_a_v0_response_header(client: Client, version: int) -> None:
    request = ApiVersionsRequest[version](client_software_name="kgc", client_software_version="1")
    client.send(request)
    size = int.from_bytes(client._exactly(4), "big")
    payload = client._exactly(size)
    assert payload[4:6] == b"\x00\x00"          # error code right after the correlation id: header v0 (KIP-511)
    response = decode_response("ApiVersions", version, payload)
    assert response.error_code == 0
    assert {a.api_key: (a.min_version, a.max_version) for a in response.api_keys} == supported_versions("3.9")


@pytest.mark.parametrize("version", range(0, 13))
def test_metadata_names_one_node_and_the_topics(served: tuple[ServerThread, FakeSession], client: Client,
                                                version: int) -> None:
    topics = [MetadataRequest.MetadataRequestTopic(name=n, topic_id=None) for n in ("t", "nope")]
    response = client.call("Metadata", MetadataRequest[version](topics=topics, allow_auto_topic_creation=False))
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(0, "127.0.0.1", served[0].port)]
    by_name = {t.name: t for t in response.topics}
    assert by_name["nope"].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION and by_name["nope"].partitions == []
    assert by_name["t"].error_code == 0
    assert [(p.partition_index, p.leader_id, p.replica_nodes) for p in by_name["t"].partitions] == [
        (0, 0, [0]), (1, 0, [0]), (2, 0, [0])]
    everything = MetadataRequest[version](topics=[] if version == 0 else None)
    assert sorted(t.name for t in client.call("Metadata", everything).topics) == ["t", "u"]


@pytest.mark.parametrize("version", range(0, 5))
def test_find_coordinator_answers_this_node_for_groups(served: tuple[ServerThread, FakeSession], client: Client,
                                                       version: int) -> None:
    request = FindCoordinatorRequest[version](key="g", key_type=0, coordinator_keys=["g"])
    response = client.call("FindCoordinator", request)
    if version >= 4:
        [c] = response.coordinators
        assert (c.key, c.node_id, c.host, c.port, c.error_code) == ("g", 0, "127.0.0.1", served[0].port, 0)
    else:
        assert (response.error_code, response.node_id, response.host, response.port) == (0, 0, "127.0.0.1",
                                                                                      served[0].port)


@pytest.mark.parametrize("version", range(0, 8))
def test_list_offsets_reports_an_empty_log(client: Client, version: int) -> None:
    part = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition
    topics = [ListOffsetsRequest.ListOffsetsTopic(name=n, partitions=[part(partition_index=0, timestamp=-2,
                                                                           max_num_offsets=1)]) for n in ("t", "x")]
    response = client.call("ListOffsets", ListOffsetsRequest[version](replica_id=-1, isolation_level=0, topics=topics))
    t, x = response.topics
    assert t.partitions[0].error_code == 0 and x.partitions[0].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert (t.partitions[0].old_style_offsets if version == 0 else t.partitions[0].offset) in ([0], 0)


@pytest.mark.parametrize("version", range(0, 13))
def test_fetch_returns_no_records_and_flags_bad_partitions(client: Client, version: int) -> None:
    fp = FetchRequest.FetchTopic.FetchPartition
    ft = FetchRequest.FetchTopic
    topics = [ft(topic="t", partitions=[fp(partition=0, fetch_offset=0, partition_max_bytes=1024),
                                        fp(partition=1, fetch_offset=5, partition_max_bytes=1024)]),
              ft(topic="x", partitions=[fp(partition=0, fetch_offset=0, partition_max_bytes=9)])]
    request = FetchRequest[version](replica_id=-1, max_wait_ms=50, min_bytes=1, max_bytes=1 << 20, topics=topics,
                                    forgotten_topics_data=[], rack_id="")
    response = client.call("Fetch", request)
    got = [(r.topic, p.partition_index, p.error_code, p.high_watermark, bytes(p.records or b""))
           for r in response.responses for p in r.partitions]
    assert got == [("t", 0, 0, 0, b""), ("t", 1, 1, 0, b""), ("x", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION, 0, b"")]


@pytest.mark.parametrize("version", range(0, 10))
def test_produce_is_refused_and_acks_0_gets_no_response(client: Client, version: int) -> None:
    """The logs stay empty: a write is refused (29, non-retriable), an unknown partition gets 3; with
    acks=0 Kafka sends nothing, so the next answer on the connection is the next request's."""
    pd = ProduceRequest.TopicProduceData
    data = [pd(name="t", partition_data=[pd.PartitionProduceData(index=0, records=b"")]),
            pd(name="x", partition_data=[pd.PartitionProduceData(index=0, records=b"")])]
    response = client.call("Produce", ProduceRequest[version](transactional_id=None, acks=1, timeout_ms=100,
                                                              topic_data=data))
    assert [(r.name, p.index, p.error_code) for r in response.responses for p in r.partition_responses] == [
        ("t", 0, 29), ("x", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    client.send(ProduceRequest[version](transactional_id=None, acks=0, timeout_ms=100, topic_data=data))
    assert client.call("ApiVersions", ApiVersionsRequest[0]()).error_code == 0


# --- group APIs through the session ---------------------------------------------------------------
def _join(version: int, member_id: str = "", instance: str | None = None) -> Any:
    proto = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"sub")
    return JoinGroupRequest[version](group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=30000,
                                     member_id=member_id, group_instance_id=instance, protocol_type="consumer",
                                     protocols=[proto], reason=None)


@pytest.mark.parametrize("version", range(0, 10))
def test_join_group_fields_and_response_per_version(served: tuple[ServerThread, FakeSession], client: Client,
                                                   version: int) -> None:
    response = client.call("JoinGroup", _join(version))
    _conn, api, fields = served[1].submitted[-1]
    assert api == "JoinGroup" and fields["protocols"] == [("range", b"sub")]
    # v0 has no rebalance timeout: the session timeout stands in (SPEC.md §3.1); v4+ needs a known member id
    assert fields["rebalance_timeout_ms"] == (10000 if version == 0 else 30000)
    assert fields["require_known_member_id"] is (version >= 4)
    assert (response.error_code, response.generation_id, response.leader, response.member_id) == (0, 1, "m1", "m1")
    assert response.protocol_name == "range"
    assert response.protocol_type == ("consumer" if version >= 7 else None)
    assert [(m.member_id, bytes(m.metadata)) for m in response.members] == [("m1", b"meta")]


def test_a_static_join_passes_the_instance_id_and_does_not_require_a_member_id(
        served: tuple[ServerThread, FakeSession], client: Client) -> None:
    client.call("JoinGroup", _join(5, instance="i-1"))
    fields = served[1].submitted[-1][2]
    assert (fields["group_instance_id"], fields["require_known_member_id"]) == ("i-1", False)


def test_join_error_keeps_the_given_member_id_and_generation(served: tuple[ServerThread, FakeSession],
                                                             client: Client) -> None:
    served[1].script["JoinGroup"] = lambda f: JoinGroupResult(Errors.MEMBER_ID_REQUIRED, -1, None, None, "", "new-1")
    response = client.call("JoinGroup", _join(4))
    assert (response.error_code, response.generation_id, response.member_id, response.protocol_name,
            response.members) == (Errors.MEMBER_ID_REQUIRED, -1, "new-1", "", [])


@pytest.mark.parametrize("version", range(0, 6))
def test_sync_group_fields_and_response_per_version(served: tuple[ServerThread, FakeSession], client: Client,
                                                   version: int) -> None:
    served[1].view = GroupView("g", GroupState.STABLE, 1, "m1", "consumer", "range")
    a = SyncGroupRequest.SyncGroupRequestAssignment
    request = SyncGroupRequest[version](group_id="g", generation_id=1, member_id="m1", group_instance_id=None,
                                        protocol_type="consumer", protocol_name="range",
                                        assignments=[a(member_id="m1", assignment=b"p1"), a(member_id="m2",
                                                                                            assignment=b"p2")])
    response = client.call("SyncGroup", request)
    fields = served[1].submitted[-1][2]
    assert fields == {"group_id": "g", "member_id": "m1", "generation_id": 1, "group_instance_id": None,
                      "assignments": {"m1": b"p1", "m2": b"p2"}}
    assert (response.error_code, bytes(response.assignment)) == (0, b"plan")
    assert (response.protocol_type, response.protocol_name) == (("consumer", "range") if version >= 5 else (None, None))


@pytest.mark.parametrize("version", range(0, 5))
def test_heartbeat_per_version(served: tuple[ServerThread, FakeSession], client: Client, version: int) -> None:
    served[1].script["Heartbeat"] = lambda f: HeartbeatResult(Errors.REBALANCE_IN_PROGRESS)
    request = HeartbeatRequest[version](group_id="g", generation_id=3, member_id="m1", group_instance_id="i")
    assert client.call("Heartbeat", request).error_code == Errors.REBALANCE_IN_PROGRESS
    assert served[1].submitted[-1][2] == {"group_id": "g", "member_id": "m1", "generation_id": 3,
                                          "group_instance_id": "i" if version >= 3 else None}


@pytest.mark.parametrize("version", range(0, 6))
def test_leave_group_single_then_batch(served: tuple[ServerThread, FakeSession], client: Client, version: int) -> None:
    ident = LeaveGroupRequest.MemberIdentity
    request = LeaveGroupRequest[version](group_id="g", member_id="m1",
                                         members=[ident(member_id="m1", group_instance_id=None, reason=None),
                                                  ident(member_id="m2", group_instance_id="i2", reason=None)])
    response = client.call("LeaveGroup", request)
    members = served[1].submitted[-1][2]["members"]
    assert members == ([("m1", None)] if version < 3 else [("m1", None), ("m2", "i2")])
    assert response.error_code == 0
    if version >= 3:
        assert [(m.member_id, m.group_instance_id, m.error_code) for m in response.members] == [
            ("m1", None, 0), ("m2", "i2", 0)]


def _commit(version: int, offsets: dict[tuple[str, int], int]) -> Any:
    t = OffsetCommitRequest.OffsetCommitRequestTopic
    p = t.OffsetCommitRequestPartition
    by_topic: dict[str, list[Any]] = {}
    for (topic, part), off in offsets.items():
        by_topic.setdefault(topic, []).append(p(partition_index=part, committed_offset=off, committed_metadata="md"))
    return OffsetCommitRequest[version](group_id="g", generation_id_or_member_epoch=2, member_id="m1",
                                        group_instance_id=None, retention_time_ms=-1,
                                        topics=[t(name=n, partitions=ps) for n, ps in by_topic.items()])


def _fetch_offsets(version: int, wanted: list[tuple[str, list[int]]] | None) -> Any:
    if version >= 8:
        gt = OffsetFetchRequest.OffsetFetchRequestGroup
        topics = None if wanted is None else [gt.OffsetFetchRequestTopics(name=n, partition_indexes=ps)
                                              for n, ps in wanted]
        return OffsetFetchRequest[version](groups=[gt(group_id="g", topics=topics)], require_stable=False)
    topics = None if wanted is None else [OffsetFetchRequest.OffsetFetchRequestTopic(name=n, partition_indexes=ps)
                                          for n, ps in wanted]
    return OffsetFetchRequest[version](group_id="g", topics=topics, require_stable=False)


def _offsets_of(version: int, response: Any) -> list[tuple[str, int, int, int]]:
    topics = response.groups[0].topics if version >= 8 else response.topics
    return [(t.name, p.partition_index, p.committed_offset, p.error_code) for t in topics for p in t.partitions]


@pytest.mark.parametrize("version", range(2, 9))
def test_offset_commit_then_fetch(served: tuple[ServerThread, FakeSession], client: Client, version: int) -> None:
    response = client.call("OffsetCommit", _commit(version, {("t", 0): 7, ("t", 9): 1, ("x", 0): 3}))
    assert [(t.name, p.partition_index, p.error_code) for t in response.topics for p in t.partitions] == [
        ("t", 0, 0), ("t", 9, Errors.UNKNOWN_TOPIC_OR_PARTITION), ("x", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    fields = served[1].submitted[-1][2]     # KafkaApis drops unknown partitions before the coordinator
    assert (fields["offsets"], fields["generation_id"], fields["member_id"]) == ({"t-0": 7}, 2, "m1")
    fetch_version = min(version, 8) if version >= 2 else 1
    got = _offsets_of(fetch_version, client.call("OffsetFetch", _fetch_offsets(fetch_version, [("t", [0, 1])])))
    assert got == [("t", 0, 7, 0), ("t", 1, -1, 0)]
    every = _offsets_of(fetch_version, client.call("OffsetFetch", _fetch_offsets(fetch_version, None)))
    assert every == [("t", 0, 7, 0)]


def test_a_failed_commit_is_not_remembered(served: tuple[ServerThread, FakeSession], client: Client) -> None:
    served[1].script["OffsetCommit"] = lambda f: CommitResult(Errors.ILLEGAL_GENERATION)
    response = client.call("OffsetCommit", _commit(8, {("t", 0): 7}))
    assert response.topics[0].partitions[0].error_code == Errors.ILLEGAL_GENERATION
    assert _offsets_of(1, client.call("OffsetFetch", _fetch_offsets(1, [("t", [0])]))) == [("t", 0, -1, 0)]


@pytest.mark.parametrize("version", range(0, 6))
def test_describe_groups_answers_the_coordinators_summary_at_the_request_version(
        served: tuple[ServerThread, FakeSession], client: Client, version: int) -> None:
    served[1].summaries["g"] = GroupSummary(Errors.NONE, "Stable", "consumer", "range", (
        MemberSummary("m1", "i1", "kgc-test", "/127.0.0.1", b"meta", b"asg"),
        MemberSummary("m0", None, "other", "/127.0.0.1", b"", b"")))
    served[1].summaries["gone"] = GroupSummary(Errors.GROUP_ID_NOT_FOUND, "Dead", "", "")
    response = client.call("DescribeGroups", DescribeGroupsRequest[version](
        groups=["g", "other", "gone"], include_authorized_operations=False))
    assert served[1].described == [("g", version), ("other", version), ("gone", version)]
    g, other, gone = response.groups
    assert (g.error_code, g.group_state, g.protocol_type, g.protocol_data) == (0, "Stable", "consumer", "range")
    # every member, in the coordinator's order (Kafka's member map), each field as the summary says
    assert [(m.member_id, m.client_id, m.client_host, bytes(m.member_metadata), bytes(m.member_assignment))
            for m in g.members] == [("m1", "kgc-test", "/127.0.0.1", b"meta", b"asg"), ("m0", "other", "/127.0.0.1",
                                                                                      b"", b"")]
    assert g.members[0].group_instance_id == ("i1" if version >= 4 else None)     # v4+ carries it (KIP-345)
    assert (other.error_code, other.group_state, other.members) == (0, "Dead", [])
    assert (gone.error_code, gone.group_state) == (int(Errors.GROUP_ID_NOT_FOUND), "Dead")


def test_a_parked_join_holds_back_its_connection_only_and_a_timer_answers_it(
        served: tuple[ServerThread, FakeSession], client: Client) -> None:
    served[1].script["JoinGroup"] = lambda f: None          # parked until the fake's timer, 800 ms on
    first = client.send(_join(1))
    second = client.send(HeartbeatRequest[0](group_id="g", generation_id=1, member_id="m1"))
    other = Client(served[0].port)
    try:
        assert other.call("ApiVersions", ApiVersionsRequest[0]()).error_code == 0
        assert [api for _c, api, _f in served[1].submitted] == ["JoinGroup"]   # the heartbeat waits its turn
    finally:
        other.close()
    join = client.recv("JoinGroup", 1)
    heartbeat = client.recv("Heartbeat", 0)
    assert (join.header.correlation_id, join.error_code, join.generation_id) == (first, 0, 1)
    assert (heartbeat.header.correlation_id, heartbeat.error_code) == (second, 0)


# --- the real session -----------------------------------------------------------------------------
def test_a_member_forms_a_group_on_the_real_session_over_the_0_10_0_wire() -> None:
    from wire.session import LiveSession
    server = run_in_thread(LiveSession("0.10.0"), TOPICS)
    c = Client(server.port)
    try:
        versions = {a.api_key: a.max_version for a in c.call("ApiVersions", ApiVersionsRequest[0]()).api_keys}
        assert versions[11] == 0                   # 0.10.0 speaks JoinGroup v0 only
        join = c.call("JoinGroup", _join(0))
        assert (join.error_code, join.generation_id, join.leader) == (0, 1, join.member_id)
        plan = [SyncGroupRequest.SyncGroupRequestAssignment(member_id=join.member_id, assignment=b"all")]
        sync = c.call("SyncGroup", SyncGroupRequest[0](group_id="g", generation_id=1, member_id=join.member_id,
                                                       assignments=plan))
        assert (sync.error_code, bytes(sync.assignment)) == (0, b"all")
        beat = c.call("Heartbeat", HeartbeatRequest[0](group_id="g", generation_id=1, member_id=join.member_id))
        assert beat.error_code == 0
        [g] = c.call("DescribeGroups", DescribeGroupsRequest[0](groups=["g"])).groups
        assert (g.group_state, [m.member_id for m in g.members]) == ("Stable", [join.member_id])
        stale = c.call("Heartbeat", HeartbeatRequest[0](group_id="g", generation_id=7, member_id=join.member_id))
        assert stale.error_code == Errors.ILLEGAL_GENERATION
    finally:
        c.close()
        server.stop()

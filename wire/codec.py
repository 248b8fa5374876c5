"""Kafka framing and codecs for `kgc serve`, all through kafka-python's ``kafka.protocol``.

Owns: reading one size-prefixed frame, classifying it (a request of a served API and version, an
unknown API key, an unsupported version, or bytes that do not parse), decoding the request body of
the right class and version, and encoding a response with the header version that matches (header
v1 for flexible versions, v0 otherwise — and always v0 for ApiVersions, KIP-511; kafka.protocol's
ApiVersionsResponse does this itself). Nothing here encodes or decodes a field by hand.
"""
from __future__ import annotations

import asyncio
import io
import struct
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.api_key import ApiKey
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import (FetchRequest, FetchResponse, HeartbeatRequest, HeartbeatResponse,
                                     JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
                                     ListOffsetsRequest, ListOffsetsResponse, OffsetCommitRequest,
                                     OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse,
                                     SyncGroupRequest, SyncGroupResponse)
from kafka.protocol.metadata import (ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest,
                                     FindCoordinatorResponse, MetadataRequest, MetadataResponse)
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.protocol.schemas.fields.codecs import Int32

from core.types import Errors

#: Kafka's socket.request.max.bytes default: a size prefix outside [0, this] closes the connection
MAX_FRAME_BYTES = 104857600

#: API name -> (request class, response class) for every API the server answers
MESSAGES: Mapping[str, tuple[type[ApiMessage], type[ApiMessage]]] = MappingProxyType({
    "Produce": (ProduceRequest, ProduceResponse),
    "ApiVersions": (ApiVersionsRequest, ApiVersionsResponse),
    "Metadata": (MetadataRequest, MetadataResponse),
    "FindCoordinator": (FindCoordinatorRequest, FindCoordinatorResponse),
    "JoinGroup": (JoinGroupRequest, JoinGroupResponse),
    "SyncGroup": (SyncGroupRequest, SyncGroupResponse),
    "Heartbeat": (HeartbeatRequest, HeartbeatResponse),
    "LeaveGroup": (LeaveGroupRequest, LeaveGroupResponse),
    "OffsetCommit": (OffsetCommitRequest, OffsetCommitResponse),
    "OffsetFetch": (OffsetFetchRequest, OffsetFetchResponse),
    "ListOffsets": (ListOffsetsRequest, ListOffsetsResponse),
    "Fetch": (FetchRequest, FetchResponse),
    "DescribeGroups": (DescribeGroupsRequest, DescribeGroupsResponse),
})


class FrameError(Exception):
    """A size prefix Kafka refuses (negative or over MAX_FRAME_BYTES): the connection is closed."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One request frame, classified. ``kind`` is "request" (``body`` decoded), "unknown_api",
    "unsupported_version" or "malformed" (``correlation_id`` -1 when not even the header parsed)."""

    kind: str
    api_key: int = -1
    api_version: int = -1
    correlation_id: int = -1
    client_id: str = ""
    api: str | None = None
    body: Any = None


async def read_frame(reader: asyncio.StreamReader, max_bytes: int = MAX_FRAME_BYTES) -> bytes:
    """The payload of the next size-prefixed frame; EOF mid-frame raises asyncio.IncompleteReadError."""
    size = Int32.decode(io.BytesIO(await reader.readexactly(4)))
    if size < 0 or size > max_bytes:
        raise FrameError(f"frame size {size} outside [0, {max_bytes}]")
    return await reader.readexactly(size)


def _peek_header(payload: bytes) -> Any:
    """The request header's fixed part (api key, version, correlation id, client id) — header v1,
    which every request header version starts with; raises on bytes that do not parse."""
    return RequestHeader.decode(io.BytesIO(payload), flexible=False)


def api_name(api_key: int) -> str | None:
    try:
        name = ApiKey(api_key).name
    except ValueError:
        return None
    return name if name in MESSAGES else None


def classify(payload: bytes, versions: Mapping[int, tuple[int, int]]) -> Frame:
    """Parse one frame's payload against the advertised ``versions`` (API key -> (min, max))."""
    try:
        head = _peek_header(payload)
    except Exception:          # kafka.protocol raises struct/index/unicode errors on short bytes
        return Frame("malformed")
    key, version, corr = head.request_api_key, head.request_api_version, head.correlation_id
    client_id = head.client_id or ""
    api = api_name(key)
    if api is None or key not in versions:
        return Frame("unknown_api", key, version, corr, client_id)
    low, high = versions[key]
    if not low <= version <= high:
        return Frame("unsupported_version", key, version, corr, client_id, api)
    try:
        body = MESSAGES[api][0][version].decode(payload, header=True)
    except Exception:
        return Frame("malformed", key, version, corr, client_id, api)
    return Frame("request", key, version, corr, client_id, api, body)


def response_class(api: str, version: int) -> type[ApiMessage]:
    return MESSAGES[api][1][version]


def encode_response(response: ApiMessage, correlation_id: int) -> bytes:
    """The framed bytes of ``response`` (already built at its version) with its response header."""
    response.with_header(correlation_id=correlation_id)
    return bytes(response.encode(header=True, framed=True))


def api_versions_body(versions: Mapping[int, tuple[int, int]]) -> list[Any]:
    return [ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high)
            for key, (low, high) in sorted(versions.items())]


def api_versions_unsupported(correlation_id: int, versions: Mapping[int, tuple[int, int]]) -> bytes:
    """Kafka's answer to an ApiVersions request of a version it does not know: v0 with
    UNSUPPORTED_VERSION and the full version list, so the client can retry (KIP-511)."""
    response = ApiVersionsResponse[0](error_code=int(Errors.UNSUPPORTED_VERSION),
                                      api_keys=api_versions_body(versions))
    return encode_response(response, correlation_id)


def encode_request(request: ApiMessage, correlation_id: int, client_id: str = "kgc-test") -> bytes:
    """A framed request (the client side; tests and the wire driver use it)."""
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(header=True, framed=True))


def decode_response(api: str, version: int, payload: bytes) -> Any:
    """A response payload (size prefix stripped) decoded with its header (the client side)."""
    return MESSAGES[api][1][version].decode(payload, header=True)


class Undecodable(Exception):
    """An answer kgc cannot read as the response it asked for; the message says why, in a few words."""


def decode_at(api: str, version: int, payload: bytes) -> tuple[Any, int]:
    """(body with its header, bytes read) of ``payload`` as ``api``'s response at ``version``; raises
    whatever kafka.protocol raises on bytes that do not decode."""
    cls = MESSAGES[api][1][version]
    head = io.BytesIO(payload)
    header = cls.parse_header(head, version=version)
    flexible = cls.flexible_version_q(version)
    read = cls._struct.compiled_decode_from(version, compact=flexible, tagged=flexible, data_class=cls[None])
    body, end = read(memoryview(payload), head.tell())
    body._header = header
    return body, end


def decode_exact(api: str, version: int, payload: bytes) -> Any:
    """``payload`` decoded as ``api``'s response at ``version`` (header included), or Undecodable: bytes that
    end before the body does, or a null where the schema allows none (Kafka's generated readers refuse a
    null in a non-nullable field, so its clients drop such an answer). Bytes after the body are ignored, as
    Kafka's Java client ignores them (NetworkClient.parseResponse, AbstractResponse.parseResponse, 3.9.1)."""
    try:
        body, end = decode_at(api, version, payload)
    except Exception as exc:        # kafka.protocol raises struct, index, unicode and value errors on bad bytes
        raise Undecodable(f"{len(payload)} bytes that do not decode as {api} v{version} ({_why(exc)})") from None
    if end > len(payload):          # a length prefix pointing past the frame: memoryview slices do not raise
        raise Undecodable(f"{len(payload)} bytes, {end - len(payload)} short of the end of a {api} v{version} body")
    nulls = null_fields(MESSAGES[api][1][version]._struct, version, body, api)
    if nulls:
        raise Undecodable(f"null in the non-nullable field {nulls[0]} of {api} v{version}")
    return body


def _why(exc: Exception) -> str:
    if isinstance(exc, (struct.error, IndexError)):
        return "they end before the body does"
    if isinstance(exc, UnicodeDecodeError):
        return "a string that is not UTF-8"
    return f"{type(exc).__name__}: {exc}"[:120]


def null_fields(struct: Any, version: int, value: Any, path: str) -> list[str]:
    """The dotted names of fields of ``value`` (a decoded struct) that are null where ``version``'s schema
    does not allow it, in schema order."""
    found: list[str] = []
    for f in struct.untagged_fields(version):
        item = getattr(value, f.name, None)
        name = f"{path}.{f.name}"
        if item is None:
            if not f.nullable_for_version_q(version):
                found.append(name)
        elif f.is_struct_array():
            for i, element in enumerate(item):
                found += null_fields(f, version, element, f"{name}[{i}]")
        elif f.is_struct():
            found += null_fields(f, version, item, name)
    return found

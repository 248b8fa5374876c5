"""Malformed input at `kgc serve`'s socket: each bad frame is answered with Kafka's error or closes that
connection, and the server goes on serving — a fresh connection's ApiVersions and Metadata, and a
connection that was already open, still work (STYLE.md: at the wire, be a good citizen).
"""
from __future__ import annotations

import logging
import socket
import struct
from typing import Any, Iterator

import pytest
from kafka.protocol.consumer import HeartbeatRequest, JoinGroupRequest
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from core.types import Errors
from wire.codec import MAX_FRAME_BYTES, decode_response, encode_request
from wire.server import ServerThread, run_in_thread
from wire.session import LiveSession
from wire.versions import supported_versions

TOPICS = {"t": 2}
CLOSE_WAIT_S = 3.0


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=CLOSE_WAIT_S)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, "the server closed the connection"
        buf += chunk
    return buf


def _call(sock: socket.socket, api: str, request: Any, corr: int = 1) -> Any:
    sock.sendall(encode_request(request, corr))
    size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
    response = decode_response(api, request.API_VERSION, _recv_exactly(sock, size))
    assert response.header.correlation_id == corr
    return response


def _closed(sock: socket.socket) -> bool:
    """True when the server closes (EOF or reset) within CLOSE_WAIT_S without sending anything."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def _still_serving(port: int, healthy: socket.socket) -> None:
    fresh = _connect(port)
    try:
        assert _call(fresh, "ApiVersions", ApiVersionsRequest[0]()).error_code == 0
        topics = _call(fresh, "Metadata", MetadataRequest[1](topics=None), corr=2).topics
        assert [(t.name, len(t.partitions)) for t in topics] == [("t", 2)]
    finally:
        fresh.close()
    assert _call(healthy, "ApiVersions", ApiVersionsRequest[0](), corr=7).error_code == 0


@pytest.fixture
def server() -> Iterator[ServerThread]:
    s = run_in_thread(LiveSession("3.9"), TOPICS)
    yield s
    s.stop()


@pytest.fixture
def healthy(server: ServerThread) -> Iterator[socket.socket]:
    """A connection opened before the bad input, which must keep working after it."""
    sock = _connect(server.port)
    assert _call(sock, "ApiVersions", ApiVersionsRequest[0]()).error_code == 0
    yield sock
    sock.close()


def _frame_header(api_key: int, version: int, corr: int = 9, client_id: bytes = b"bad") -> bytes:
    """A request header v1 built with the codec (api key, version, correlation id, client id)."""
    from kafka.protocol.api_header import RequestHeader
    return bytes(RequestHeader(request_api_key=api_key, request_api_version=version, correlation_id=corr,
                               client_id=client_id.decode()).encode(flexible=False))


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


#: name -> (bytes sent, why the server closes: the reason it logs)
BAD_FRAMES = {
    # a frame whose size says 100 bytes, then 10 bytes and the client stops writing
    "truncated": (struct.pack(">i", 100) + b"\x00" * 10, None),
    "negative-size": (struct.pack(">i", -5) + b"\x00" * 8, "frame size -5"),
    "huge-size": (struct.pack(">i", MAX_FRAME_BYTES + 1) + b"\x00" * 8, f"frame size {MAX_FRAME_BYTES + 1}"),
    "zero-size": (_frame(b""), "malformed"),
    # "GET " read as a size prefix is 1195725856 bytes, over Kafka's socket.request.max.bytes
    "garbage-http": (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "frame size 1195725856"),
    "garbage-in-a-frame": (_frame(b"\xff\x13\x37\xfe\x00\x01"), "malformed"),
    "unknown-api-key": (_frame(_frame_header(9999, 0)), "unknown_api (api key 9999"),
    # CreateTopics is a real Kafka API that this server does not serve (nor advertise)
    "unserved-api-key": (_frame(_frame_header(19, 3)), "unknown_api (api key 19"),
    # JoinGroup v10 does not exist (3.9 serves up to v9): a v9 body under a v10 header
    "unsupported-join-version": (_frame(_frame_header(11, 10) + b"\x00" + bytes(JoinGroupRequest[9](
        group_id="g").encode())), "unsupported_version (api key 11, version 10)"),
    # a valid Heartbeat header followed by a body cut short
    "body-cut-short": (_frame(_frame_header(12, 0) + b"\x00\x01g"), "malformed (api key 12, version 0)"),
}


@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
def test_bad_input_closes_that_connection_and_the_server_keeps_serving(
        server: ServerThread, healthy: socket.socket, name: str, caplog: pytest.LogCaptureFixture) -> None:
    data, reason = BAD_FRAMES[name]
    bad = _connect(server.port)
    with caplog.at_level(logging.INFO, logger="wire.server"):
        try:
            bad.sendall(data)
            if name == "truncated":
                bad.shutdown(socket.SHUT_WR)
            assert _closed(bad), f"{name}: the connection stayed open"
        finally:
            bad.close()
        _still_serving(server.port, healthy)
    closing = [r.getMessage() for r in caplog.records if r.getMessage().startswith("closing")]
    assert closing == ([] if reason is None else [closing[0]]) and (reason is None or reason in closing[0]), closing


@pytest.mark.parametrize("version", [4, 99])
def test_api_versions_of_an_unknown_version_gets_v0_unsupported_version_and_the_list(
        server: ServerThread, healthy: socket.socket, version: int) -> None:
    """Kafka answers an ApiVersions it cannot parse with v0, error 35 and its versions (KIP-511),
    and keeps the connection, so the client retries with a version from the list."""
    sock = _connect(server.port)
    try:
        sock.sendall(struct.pack(">i", len(_frame_header(18, version, corr=42))) + _frame_header(18, version, corr=42))
        size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
        response = decode_response("ApiVersions", 0, _recv_exactly(sock, size))
        assert (response.header.correlation_id, response.error_code) == (42, Errors.UNSUPPORTED_VERSION)
        assert {a.api_key: (a.min_version, a.max_version) for a in response.api_keys} == supported_versions("3.9")
        assert _call(sock, "ApiVersions", ApiVersionsRequest[3](client_software_name="c",
                                                                client_software_version="1"), corr=43).error_code == 0
    finally:
        sock.close()
    _still_serving(server.port, healthy)


def test_a_version_the_profile_lacks_closes_the_connection() -> None:
    """JoinGroup v1 is valid Kafka, but not 0.10.0's: the 0.10.0 server closes the connection."""
    s = run_in_thread(LiveSession("0.10.0"), TOPICS)
    try:
        healthy = _connect(s.port)
        bad = _connect(s.port)
        bad.sendall(encode_request(JoinGroupRequest[1](group_id="g", session_timeout_ms=10000,
                                                       rebalance_timeout_ms=10000, member_id="",
                                                       protocol_type="consumer", protocols=[]), 5))
        assert _closed(bad)
        bad.close()
        _still_serving(s.port, healthy)
        healthy.close()
    finally:
        s.stop()


def test_a_client_that_vanishes_with_a_request_parked_does_not_disturb_the_others(server: ServerThread,
                                                                                  healthy: socket.socket) -> None:
    """A JoinGroup parked in the initial rebalance delay, then the client disconnects; later requests
    from others are served, and the session's answer to the vanished request is dropped."""
    gone = _connect(server.port)
    proto = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")
    join = JoinGroupRequest[3](group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
                               protocol_type="consumer", protocols=[proto])
    gone.sendall(encode_request(join, 1))
    gone.close()
    beat = _call(healthy, "Heartbeat", HeartbeatRequest[0](group_id="g", generation_id=1, member_id="nobody"), 8)
    assert beat.error_code == Errors.UNKNOWN_MEMBER_ID
    _still_serving(server.port, healthy)


def test_a_port_in_use_is_a_clear_error_and_stop_is_idempotent(server: ServerThread) -> None:
    with pytest.raises(RuntimeError, match="did not start"):
        run_in_thread(LiveSession("3.9"), TOPICS, port=server.port)
    server.stop()
    server.stop()
    with pytest.raises(OSError):
        _connect(server.port)

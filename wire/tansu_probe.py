"""A raw-socket Kafka client for probing a broker one request at a time (tansu, or `kgc serve`).

Owns: one TCP connection, framing a request built from kafka-python's ``kafka.protocol`` classes,
reading its response and decoding it with the matching response class and version. No retries, no
metadata, no coordinator discovery: the caller says exactly what goes on the wire, which is what a
behaviour study or a conformance probe needs. Requests are answered in order (one at a time per
connection, as Kafka does); ``send`` + ``recv`` split a call when a response is parked.
"""
from __future__ import annotations

import socket
from types import MappingProxyType
from typing import Any, Mapping

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse, ListGroupsRequest, ListGroupsResponse
from kafka.protocol.api_key import ApiKey
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata import ApiVersionsRequest

from wire.codec import MESSAGES, encode_request

#: API name -> (request class, response class): kgc serve's APIs plus the admin ones a broker study needs
PROBE_MESSAGES: Mapping[str, tuple[type[ApiMessage], type[ApiMessage]]] = MappingProxyType({
    **MESSAGES,
    "CreateTopics": (CreateTopicsRequest, CreateTopicsResponse),
    "ListGroups": (ListGroupsRequest, ListGroupsResponse),
})


class ProbeClosed(ConnectionError):
    """The broker closed the connection (or sent nothing within the timeout) instead of answering."""


def parse_bootstrap(bootstrap: str) -> tuple[str, int]:
    """"127.0.0.1:9092" -> ("127.0.0.1", 9092)."""
    host, _, port = bootstrap.rpartition(":")
    return host, int(port)


class Probe:
    """One connection to ``bootstrap``; ``call(request)`` returns the decoded response (with ``.header``)."""

    def __init__(self, bootstrap: str, timeout_s: float = 5.0, client_id: str = "kgc-probe") -> None:
        self.sock = socket.create_connection(parse_bootstrap(bootstrap), timeout=timeout_s)
        self.client_id = client_id
        self.corr = 0

    def send(self, request: Any) -> int:
        """Frame and send ``request`` (a versioned kafka.protocol request); returns its correlation id."""
        self.corr += 1
        self.sock.sendall(encode_request(request, self.corr, self.client_id))
        return self.corr

    def recv(self, request: Any, timeout_s: float | None = None) -> Any:
        """The next response, decoded as the answer to ``request``; ProbeClosed on EOF or timeout."""
        if timeout_s is not None:
            self.sock.settimeout(timeout_s)
        size = int.from_bytes(self._exactly(4), "big", signed=True)
        response_class = PROBE_MESSAGES[ApiKey(request.API_KEY).name][1][request.API_VERSION]
        return response_class.decode(self._exactly(size), header=True)

    def call(self, request: Any, timeout_s: float | None = None) -> Any:
        corr = self.send(request)
        response = self.recv(request, timeout_s)
        if response.header.correlation_id != corr:
            raise ProbeClosed(f"response correlation id {response.header.correlation_id}, expected {corr}")
        return response

    def _exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout as err:
                raise ProbeClosed("no response within the timeout") from err
            if not chunk:
                raise ProbeClosed("the broker closed the connection")
            buf += chunk
        return buf

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Probe":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def api_versions(bootstrap: str, timeout_s: float = 2.0) -> dict[int, tuple[int, int]]:
    """The broker's advertised versions, API key -> (min, max), from an ApiVersions v0 request."""
    with Probe(bootstrap, timeout_s) as probe:
        response = probe.call(ApiVersionsRequest[0]())
    if response.error_code != 0:
        raise ProbeClosed(f"ApiVersions answered error code {response.error_code}")
    return {a.api_key: (a.min_version, a.max_version) for a in response.api_keys}


def create_topic(bootstrap: str, name: str, partitions: int, timeout_s: float = 5.0) -> int:
    """Create ``name`` with ``partitions`` partitions (replication 1) by CreateTopics v4; its error code."""
    topic = CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1,
                                               assignments=[], configs=[])
    with Probe(bootstrap, timeout_s) as probe:
        response = probe.call(CreateTopicsRequest[4](topics=[topic], timeout_ms=int(timeout_s * 1000),
                                                     validate_only=False))
    return int(response.topics[0].error_code)

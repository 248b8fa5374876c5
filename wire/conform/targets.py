"""The two ends of a conformance run: the reference on the wire, and the target checked before use.

``ReferenceServer`` is `kgc serve`'s server (wire/server.py) in a thread on a free 127.0.0.1 port,
its coordinator the reference of a profile (or a seeded mutant) configured like the target
(``BrokerConfig``). The reference is reached over the wire by the same driver as the target, so both
answers go through the same encoding, connections and real-time clock: a difference is the target's,
never an artefact of two different drivers. ``preflight`` turns a bad target (nothing listening, a
server that closes the connection, bytes that are not Kafka) into one sentence (``TargetError``).
"""
from __future__ import annotations

import io
import socket
import time
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.api_key import ApiKey
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.schemas.fields.codecs import Int32

from core.types import Errors

from wire.codec import decode_at, encode_request, null_fields
from wire.conform.clients import CLIENT_PARTITIONS, CLIENT_TOPIC
from wire.conform.script import TOPIC, BrokerConfig
from wire.server import ServerThread
from wire.session import LiveSession

PREFLIGHT_SECONDS = 5.0


class TargetError(Exception):
    """A target kgc cannot test: the message is one sentence."""


class ReferenceServer:
    """The reference coordinator (or ``mutant``) behind `kgc serve`'s server on 127.0.0.1; stop() it."""

    def __init__(self, profile: str, cfg: BrokerConfig, mutant: str | None = None,
                 client_partitions: int = CLIENT_PARTITIONS) -> None:
        session = LiveSession(profile, mutant=mutant, coordinator=cfg.overrides())
        topics = {TOPIC: 1, CLIENT_TOPIC: client_partitions}
        self.thread = ServerThread(session, topics, port=0, profile=profile)
        self.host, self.port = "127.0.0.1", self.thread.port

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self) -> None:
        self.thread.stop()

    def __enter__(self) -> "ReferenceServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def parse_bootstrap(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise TargetError(f"--bootstrap takes HOST:PORT (e.g. 127.0.0.1:9092), not {text!r}.")
    return host, int(port)


def _call(sock: socket.socket, response_class: Any, request: Any, corr: int) -> Any:
    return response_class.decode(_call_raw(sock, request, corr), header=True)


def _call_raw(sock: socket.socket, request: Any, corr: int) -> bytes:
    sock.sendall(encode_request(request, corr, "kgc-conform"))
    size = Int32.decode(io.BytesIO(_exactly(sock, 4)))
    if not 0 <= size <= 1 << 24:
        raise ValueError(f"frame size {size}")
    return _exactly(sock, size)


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


@dataclass(frozen=True, slots=True)
class Negotiated:
    """What ApiVersions told: the target's API key -> (min, max), and the ApiVersions versions asked, in order
    (the last one answered without error)."""

    versions: dict[int, tuple[int, int]]
    asked: tuple[int, ...]


def api_versions_answer(payload: bytes, version: int) -> Any:
    """An ApiVersions answer read as Kafka's Java client reads it: at the version asked, else — a broker
    that does not know that version answers in v0's layout — at v0 (ApiVersionsResponse.parse, 3.9.1
    l.156-172); ValueError when neither reads."""
    for attempt in dict.fromkeys((version, 0)):
        try:
            body, end = decode_at("ApiVersions", attempt, payload)
        except Exception:          # kafka.protocol raises struct/index/unicode errors on bytes of another layout
            continue
        if end <= len(payload) and not null_fields(ApiVersionsResponse[attempt]._struct, attempt, body, "ApiVersions"):
            return body
    raise ValueError("not an ApiVersions response")


def negotiate(sock: socket.socket, where: str) -> Negotiated:
    """ApiVersions as Kafka's clients ask it: the newest version the codec knows first; on UNSUPPORTED_VERSION
    again at the highest version the answer advertises for ApiVersions itself, or v0 when it advertises none
    (NetworkClient.handleApiVersionsResponse, 3.9.1 l.973-996). Any other error is a TargetError sentence."""
    asked: list[int] = []
    version = ApiVersionsRequest.max_version
    while True:
        asked.append(version)
        response = api_versions_answer(_call_raw(sock, ApiVersionsRequest[version](
            client_software_name="kgc-conform", client_software_version="1"), len(asked)), version)
        versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys or []}
        if response.error_code == int(Errors.UNSUPPORTED_VERSION) and version > 0:
            own = versions.get(int(ApiKey.ApiVersions), (0, 0))[1]
            version = min(own, version - 1)       # never the same version twice: the loop ends at v0
            continue
        if response.error_code != 0:
            raise TargetError(f"{where} answered ApiVersions v{version} with error code {response.error_code}; "
                              "kgc cannot learn which versions it serves.")
        return Negotiated(versions, tuple(asked))


def preflight(host: str, port: int) -> Negotiated:
    """The target's advertised API versions, negotiated; a bad target is one TargetError sentence."""
    where = f"{host}:{port}"
    try:
        sock = socket.create_connection((host, port), timeout=PREFLIGHT_SECONDS)
    except OSError as exc:
        raise TargetError(f"nothing accepts connections at {where} ({exc.strerror or exc}); "
                          "start the broker or check --bootstrap.") from None
    with sock:
        try:
            negotiated = negotiate(sock, where)
        except socket.timeout:
            raise TargetError(f"{where} did not answer an ApiVersions request within {PREFLIGHT_SECONDS:g} s; "
                              "it does not look like a Kafka broker.") from None
        except (ConnectionError, OSError):
            raise TargetError(f"{where} closed the connection on an ApiVersions request; "
                              "it does not look like a Kafka broker.") from None
        except TargetError:
            raise
        except Exception:
            raise TargetError(f"{where} answered an ApiVersions request with bytes that are not a Kafka "
                              "response; it does not look like a Kafka broker.") from None
    if int(ApiKey.JoinGroup) not in negotiated.versions:
        raise TargetError(f"{where} answered ApiVersions without the JoinGroup API; it has no classic group "
                          "coordinator to test.")
    return negotiated


def ensure_topic(host: str, port: int, versions: dict[int, tuple[int, int]], name: str = TOPIC,
                 partitions: int = 1) -> None:
    """Create a topic the probes or clients use on a target that offers CreateTopics (an existing one is fine)."""
    key = int(ApiKey.CreateTopics)
    if key not in versions:
        return
    version = min(versions[key][1], 4)
    topic = CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1,
                                               assignments=[], configs=[])
    request = CreateTopicsRequest[version](topics=[topic], timeout_ms=5000, validate_only=False)
    try:
        with socket.create_connection((host, port), timeout=PREFLIGHT_SECONDS) as sock:
            _call(sock, CreateTopicsResponse[version], request, 1)
    except Exception:
        pass                  # the OffsetCommit probes will show UNKNOWN_TOPIC_OR_PARTITION; nothing else depends on it


def topic_partitions(host: str, port: int, name: str) -> int:
    """How many partitions ``name`` has on the target (Metadata v1; a broker that auto-creates topics does
    so here, as a consumer's first Metadata request would); 0 when it cannot tell."""
    request = MetadataRequest[1](topics=[MetadataRequest.MetadataRequestTopic(name=name)])
    try:
        with socket.create_connection((host, port), timeout=PREFLIGHT_SECONDS) as sock:
            for attempt in range(1, 6):
                response = _call(sock, MetadataResponse[1], request, attempt)
                found = [t for t in response.topics if t.name == name and t.error_code == 0]
                if found and found[0].partitions:
                    return len(found[0].partitions)
                time.sleep(0.5)                # auto-creation may answer LEADER_NOT_AVAILABLE first
    except Exception:                          # noqa: BLE001 - any failure: the caller says it cannot tell
        return 0
    return 0

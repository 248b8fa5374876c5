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
from typing import Any

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.api_key import ApiKey
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.schemas.fields.codecs import Int32

from wire.codec import encode_request
from wire.conform.clients import CLIENT_PARTITIONS, CLIENT_TOPIC
from wire.conform.script import TOPIC, BrokerConfig
from wire.server import ServerThread
from wire.session import LiveSession

PREFLIGHT_SECONDS = 5.0


class TargetError(Exception):
    """A target kgc cannot test: the message is one sentence."""


class ReferenceServer:
    """The reference coordinator (or ``mutant``) behind `kgc serve`'s server on 127.0.0.1; stop() it."""

    def __init__(self, profile: str, cfg: BrokerConfig, mutant: str | None = None) -> None:
        session = LiveSession(profile, mutant=mutant, coordinator=cfg.overrides())
        topics = {TOPIC: 1, CLIENT_TOPIC: CLIENT_PARTITIONS}
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
    sock.sendall(encode_request(request, corr, "kgc-conform"))
    head = _exactly(sock, 4)
    size = Int32.decode(io.BytesIO(head))
    if not 0 <= size <= 1 << 24:
        raise ValueError(f"frame size {size}")
    return response_class.decode(_exactly(sock, size), header=True)


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def preflight(host: str, port: int) -> dict[int, tuple[int, int]]:
    """The target's advertised API versions (key -> (min, max)); a bad target is one TargetError sentence."""
    where = f"{host}:{port}"
    try:
        sock = socket.create_connection((host, port), timeout=PREFLIGHT_SECONDS)
    except OSError as exc:
        raise TargetError(f"nothing accepts connections at {where} ({exc.strerror or exc}); "
                          "start the broker or check --bootstrap.") from None
    with sock:
        try:
            response = _call(sock, ApiVersionsResponse[0], ApiVersionsRequest[0](), 1)
        except socket.timeout:
            raise TargetError(f"{where} did not answer an ApiVersions request within {PREFLIGHT_SECONDS:g} s; "
                              "it does not look like a Kafka broker.") from None
        except ConnectionError:
            raise TargetError(f"{where} closed the connection on an ApiVersions request; "
                              "it does not look like a Kafka broker.") from None
        except Exception:
            raise TargetError(f"{where} answered an ApiVersions request with bytes that are not a Kafka "
                              "response; it does not look like a Kafka broker.") from None
    versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys or []}
    if response.error_code != 0 or int(ApiKey.JoinGroup) not in versions:
        raise TargetError(f"{where} answered ApiVersions (error code {response.error_code}) without the "
                          "JoinGroup API; it has no classic group coordinator to test.")
    return versions


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

"""Benchmark of `kgc serve`: heartbeats per second through the server, and join-to-stable latency of
three real consumers. Prints one JSON object; not part of the test run.

    python bench/serve.py [--seconds 10] [--profile 3.9] [--parts heartbeats,join]

heartbeats: `kgc serve` in its own process (one core: every request a checked step), a raw client built
with kafka-python's codec forms a one-member group and then sends Heartbeats one at a time on one
connection (Kafka's one-request-at-a-time per connection) — and, separately, from 3 members on 3
connections at once. join: 3 kafka-python consumers (wire/clients/runner.py) start together; the
latency is the time from their start to the moment every partition has an owner and every consumer
reported its assignment, and again after a fourth consumer joins (a rebalance).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kafka.protocol.consumer import HeartbeatRequest, JoinGroupRequest, SyncGroupRequest  # noqa: E402

from wire.codec import decode_response, encode_request  # noqa: E402

TOPIC, PARTITIONS = "bench", 6


def start_server(profile: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-m", "kgc", "serve", "--profile", profile, "--port", "0",
                             "--topics", f"{TOPIC}:{PARTITIONS}", "--out", "/tmp/kgc-bench-serve"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"127\.0\.0\.1:(\d+)", line)
        if found:
            return proc, int(found.group(1))
    raise RuntimeError("kgc serve ended before it listened")


def stop_server(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    return out


class RawMember:
    """One group member on one connection, speaking JoinGroup v1 / SyncGroup v0 / Heartbeat v0."""

    def __init__(self, port: int, name: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.name, self.corr = name, 0
        self.member_id, self.generation = "", -1

    def call(self, api: str, request: Any) -> Any:
        self.corr += 1
        self.sock.sendall(encode_request(request, self.corr, self.name))
        size = int.from_bytes(self._exactly(4), "big")
        return decode_response(api, request.API_VERSION, self._exactly(size))

    def _exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk
        return buf

    def join(self, group: str) -> Any:
        req = JoinGroupRequest[1](group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000,
                                  member_id=self.member_id, protocol_type="consumer",
                                  protocols=[JoinGroupRequest[1].JoinGroupRequestProtocol(name="range", metadata=b"")])
        resp = self.call("JoinGroup", req)
        self.member_id, self.generation = resp.member_id, resp.generation_id
        return resp

    def sync(self, group: str, members: list[str]) -> None:
        assignments = [SyncGroupRequest[0].SyncGroupRequestAssignment(member_id=m, assignment=b"") for m in members]
        self.call("SyncGroup", SyncGroupRequest[0](group_id=group, generation_id=self.generation,
                                                   member_id=self.member_id, assignments=assignments))

    def heartbeats(self, group: str, seconds: float) -> int:
        count, end = 0, time.monotonic() + seconds
        req = HeartbeatRequest[0](group_id=group, generation_id=self.generation, member_id=self.member_id)
        while time.monotonic() < end:
            resp = self.call("Heartbeat", req)
            assert resp.error_code == 0, resp
            count += 1
        return count


def heartbeats(profile: str, seconds: float) -> dict[str, Any]:
    proc, port = start_server(profile)
    try:
        one = RawMember(port, "hb-0")
        resp = one.join("hb1")
        one.sync("hb1", [m.member_id for m in resp.members])
        single = one.heartbeats("hb1", seconds) / seconds
        members = [RawMember(port, f"hb3-{i}") for i in range(3)]
        answers: list[Any] = [None] * 3
        threads = [threading.Thread(target=lambda i=i: answers.__setitem__(i, members[i].join("hb3")))
                   for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for m, a in zip(members, answers, strict=True):
            m.sync("hb3", [x.member_id for x in a.members] if a.members else [])
        counts = [0, 0, 0]
        threads = [threading.Thread(target=lambda i=i: counts.__setitem__(i, members[i].heartbeats("hb3", seconds)))
                   for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        tail = stop_server(proc).strip().splitlines()[-1:]
    return {"heartbeats_per_s_one_connection": round(single, 1),
            "heartbeats_per_s_three_connections": round(sum(counts) / seconds, 1), "server_said": tail}


def _consumer(port: int, name: str, epoch: float, duration: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wire.clients.runner", "--lib", "kafka-python", "--bootstrap", f"127.0.0.1:{port}",
         "--group", "bench", "--topic", TOPIC, "--name", name, "--duration", str(duration),
         "--epoch", repr(epoch), "--session-timeout-ms", "10000", "--heartbeat-interval-ms", "1000"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _stable_at(events: list[dict[str, Any]], names: set[str], after: float) -> float | None:
    """The first time after ``after`` at which every named consumer owns something and all partitions are owned."""
    owned: dict[str, set[str]] = {}
    for e in sorted(events, key=lambda e: e["t"]):
        if e["event"] == "assigned":
            owned[e["name"]] = set(e["partitions"])
        elif e["event"] in ("revoked", "lost", "stopped"):
            owned[e["name"]] = set()
        everyone = all(owned.get(n) for n in names)
        if e["t"] >= after and everyone and len(set().union(*owned.values())) == PARTITIONS:
            return float(e["t"])
    return None


def join_latency(profile: str) -> dict[str, Any]:
    proc, port = start_server(profile)
    epoch = time.time()
    try:
        first = [_consumer(port, f"c{i}", epoch, 25) for i in range(3)]
        time.sleep(12)
        started_fourth = time.time() - epoch
        fourth = _consumer(port, "c3", epoch, 13)
        events = []
        for p in first + [fourth]:
            out, _ = p.communicate(timeout=60)
            events += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    finally:
        tail = stop_server(proc).strip().splitlines()[-1:]
    three = _stable_at(events, {"c0", "c1", "c2"}, 0.0)
    four = _stable_at(events, {"c0", "c1", "c2", "c3"}, started_fourth)
    return {"join_to_stable_s_three_consumers": None if three is None else round(three, 2),
            "rebalance_to_stable_s_fourth_joins": None if four is None else round(four - started_fourth, 2),
            "server_said": tail}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="heartbeat measuring time per part")
    p.add_argument("--profile", default="3.9")
    p.add_argument("--parts", default="heartbeats,join")
    args = p.parse_args()
    parts = set(args.parts.split(","))
    out: dict[str, Any] = {"profile": args.profile, "cpus": os.cpu_count(),
                           "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                                    capture_output=True, text=True).stdout.strip()}
    if "heartbeats" in parts:
        out.update(heartbeats(args.profile, args.seconds))
    if "join" in parts:
        out.update(join_latency(args.profile))
    print(json.dumps(out, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()

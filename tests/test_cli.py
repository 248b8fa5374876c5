"""The `kgc` command line: help, scenarios, replay, and one-sentence errors with exit 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgc.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence_error(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("kgc: error: ")
    return lines[0]


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("scenario", "replay", "profiles"):
        assert command in out


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys)
    assert code == 2 and "usage: kgc" in out


def test_scenario_list_names_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.scenarios import SCENARIOS
    code, out, _ = run(capsys, "scenario", "--list")
    assert code == 0
    for s in SCENARIOS:
        assert s.name in out


def test_scenario_prints_a_table_with_time_state_and_responses(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scenario", "sync-in-preparing-rebalance", "--profile", "0.10.0")
    assert code == 0
    assert "AwaitingSync" in out and "PreparingRebalance" in out
    assert "c0 SyncGroup#2 REBALANCE_IN_PROGRESS" in out
    assert "coordinator handles c0 SyncGroup#2" in out
    assert "0.000s" in out


def test_scenario_all_summarises_every_scenario_and_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scenario", "--all")
    assert code == 0
    assert "Stable → PreparingRebalance → AwaitingSync" in out      # 0.10.0 paths use the old name
    assert "Empty → PreparingRebalance → CompletingRebalance" in out


@pytest.mark.parametrize("argv,needle", [
    (("scenario", "no-such-scenario"), "unknown scenario 'no-such-scenario'"),
    (("scenario", "first-join-completes-at-once", "--profile", "9.9"),
     "unknown profile '9.9'; known profiles: 0.10.0, 2.4.1, 2.7.0, 3.9."),
    (("scenario", "--all", "--profile", "2.4"), "unknown profile '2.4'"),
    (("scenario",), "name a scenario"),
    (("scenario", "same-millisecond-reschedule", "--profile", "3.9"), "applies to profiles 0.10.0, not 3.9"),
    (("scenario", "first-join-completes-at-once", "--out", "x.json"), "--out needs a single profile"),
    (("replay", "/nonexistent/trace.json"), "cannot read trace file /nonexistent/trace.json"),
])
def test_bad_input_is_one_sentence_and_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                              needle: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert needle in one_sentence_error(err)


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["scenario", "--bogus"])
    assert exc.value.code == 2


def test_scenario_out_then_replay_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace_file = tmp_path / "t.json"
    code, out, _ = run(capsys, "scenario", "leader-missed-join-response", "--profile", "3.9", "--out", str(trace_file))
    assert code == 0 and f"kgc replay {trace_file}" in out
    code, out, _ = run(capsys, "replay", str(trace_file), "--quiet")
    assert code == 0 and "replay ok" in out


def test_replay_of_a_tampered_trace_fails_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace_file = tmp_path / "t.json"
    run(capsys, "scenario", "sync-in-preparing-rebalance", "--profile", "0.10.0", "--out", str(trace_file))
    data = json.loads(trace_file.read_text())
    data["steps"][5]["group_state"] = "Stable"          # it was PreparingRebalance
    trace_file.write_text(json.dumps(data))
    code, out, _ = run(capsys, "replay", str(trace_file))
    assert code == 1
    assert "replay diverged" in out and "step 5" in out and "group_state" in out


@pytest.mark.parametrize("content,needle", [
    ("{not json", "is not valid JSON"),
    ('{"schema": "other/9"}', "is not a kgc trace"),
    ('{"schema": "kgc-trace/1", "profile": "3.9"}', "is not a valid kgc trace: the trace has no 'steps'"),
    ('{"schema": "kgc-trace/1", "profile": "7.7", "scope": {}, "seed": 0, "steps": []}', "unknown profile '7.7'"),
    ('{"schema": "kgc-trace/1", "profile": "3.9", "scope": {"warp": 1}, "seed": 0, "steps": []}',
     "unknown scope key(s) 'warp'"),
])
def test_malformed_trace_files_are_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                content: str, needle: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, _, err = run(capsys, "replay", str(bad))
    assert code == 2
    assert needle in one_sentence_error(err)


def test_profiles_lists_every_release_with_its_switches(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "profiles")
    assert code == 0 and all(name in out for name in ("0.10.0", "2.4.1", "2.7.0", "3.9"))
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in out.splitlines() if line.count("│") == 6}
    # columns 0.10.0, 2.4.1, 2.7.0, 3.9 (SPEC.md §2 table, §3.1 J4, §4.8)
    assert rows["liveness"] == ["deadline", "new_member_deadline", "satisfied", "satisfied"]
    assert rows["max_group_size"] == ["off", "over_capacity", "accept_joining_member", "accept_joining_member"]
    assert rows["delayed_sync"] == ["no", "no", "no", "yes"]
    assert rows["missing_member_heartbeat"] == ["held", "idle", "complete", "complete"]
    # static membership, one row per rule (SPEC.md §3.1 J5a step 4: KAFKA-9801 2.5.0, KAFKA-10284 2.6.1, KIP-814 3.2)
    assert rows["static: rejoin_in_stable"] == ["no KIP-345", "answer", "persist", "persist"]
    assert rows["static: rejoin_in_completing_rebalance"] == ["no KIP-345", "answer", "rebalance", "rebalance"]
    assert rows["static: skip_assignment"] == ["no KIP-345", "no", "no", "yes"]


def test_console_script_runs_as_a_module() -> None:
    proc = subprocess.run([sys.executable, "-m", "kgc", "scenario", "nope"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("kgc: error: unknown scenario 'nope'")
    assert "Traceback" not in proc.stderr

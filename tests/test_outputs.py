"""Output places (issue 26 §2, §3): refused before any work starts with one sentence and exit 2; one run at a time
per output directory; an earlier run's results never sit beside a new run's."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import main

ROOT = Path(__file__).resolve().parents[1]

WORK = {   # the function that starts each command's work: the test fails if it is reached
    "check": "kgc.check_cmd._run_profiles",
    "explore": "kgc.explore_cmd._run",
    "conform": "kgc.conform_cmd._with_target",
    "scenario": "kgc.cli.run_scenario",
    "serve": "kgc.serve_cmd._serve",
}


def _no_work(monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    def started(*_a: Any, **_k: Any) -> Any:
        raise AssertionError(f"{command} started its work before refusing its output place")
    monkeypatch.setattr(WORK[command], started)


def _bad_dirs(tmp_path: Path) -> list[tuple[Path, str]]:
    afile = tmp_path / "afile"
    afile.write_text("x")
    return [(afile, "is a file, not a directory"),
            (afile / "sub", f"it cannot be created: {afile} is a file"),
            (Path("/proc/kgc-no-such-dir"), "it cannot be created"),
            (Path("/proc/self"), "no file can be written in it")]


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], words: str) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("kgc: error: ") and len(err.splitlines()) == 1 and err.endswith("."), err
    assert words in err, err
    assert "Traceback" not in captured.out + captured.err


@pytest.mark.parametrize("command,argv", [
    ("check", ["check", "--budget", "5"]),
    ("explore", ["explore", "--depth", "2"]),
    ("conform", ["conform"]),
])
def test_a_bad_out_directory_is_refused_before_work(command: str, argv: list[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _no_work(monkeypatch, command)
    for place, words in _bad_dirs(tmp_path):
        _refused(capsys, [*argv, "--out", str(place)], f"--out {place} ")
        _refused(capsys, [*argv, "--out", str(place)], words)


@pytest.mark.parametrize("command,argv,option", [
    ("scenario", ["scenario", "first-join-completes-at-once", "--profile", "3.9"], "--out"),
    ("serve", ["serve", "--port", "0"], "--trace"),
])
def test_a_bad_output_file_is_refused_before_work(command: str, argv: list[str], option: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _no_work(monkeypatch, command)
    afile = tmp_path / "afile"
    afile.write_text("x")
    for place, words in [(tmp_path, "is a directory; give a file name"),
                         (afile / "t.json", f"it cannot be created: {afile} is a file"),
                         (Path("/proc/kgc-no-such-dir/t.json"), "it cannot be created"),
                         (Path("/proc/self/status"), "no file can be written in it")]:
        _refused(capsys, [*argv, option, str(place)], f"{option} {place} ")
        _refused(capsys, [*argv, option, str(place)], words)


def test_a_second_run_on_a_busy_out_is_refused_naming_the_first_runs_pid(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(tmp_path / "err.txt", "w") as err:
        first = subprocess.Popen([sys.executable, "-m", "kgc", "check", "--budget", "5", "--out", str(out)],
                                 cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while "scenarios" not in (tmp_path / "err.txt").read_text():
            assert first.poll() is None and time.monotonic() < deadline, (tmp_path / "err.txt").read_text()
            time.sleep(0.1)
        for argv in (["check", "--budget", "5"], ["explore", "--depth", "2"], ["conform"]):
            _refused(capsys, [*argv, "--out", str(out)], f"{out} is in use by kgc check (pid {first.pid}); "
                                                         "wait for it to end or use another directory.")
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=30) == 143


def test_a_check_run_clears_an_earlier_runs_profile_directories_only(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    old = out / "0.10.0-rebalance-timeout-min"           # an earlier mutant run's violation reports
    old.mkdir(parents=True)
    for name in ("run.json", "junit.xml", "report.md"):
        (old / name).write_text("old")
    (out / "mine").mkdir()                               # not kgc's: kept
    (out / "mine" / "run.json").write_text("mine")
    (out / "notes.txt").write_text("mine")
    assert main(["check", "--profile", "3.9", "--mutant", "generation-not-bumped", "--budget", "5",
                 "--out", str(out)]) == 1
    assert not old.exists() and (out / "mine" / "run.json").is_file() and (out / "notes.txt").is_file()
    assert (out / "3.9-generation-not-bumped" / "report.md").is_file()
    err = capsys.readouterr().err
    assert f"kgc check: removed the results of an earlier run from {out}: 0.10.0-rebalance-timeout-min\n" in err


def test_an_explore_run_clears_an_earlier_runs_summary_reports_and_checkpoint(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]
                                                                            ) -> None:
    out = tmp_path / "run"
    old = out / "refines-the-abstract-model"
    old.mkdir(parents=True)
    for name in ("counterexample.json", "violation.json", "report.md"):
        (old / name).write_text("old")
    (out / "explore.json").write_text('{"old": true}')
    (out / "checkpoint.json").write_text("old")
    assert main(["explore", "--depth", "3", "--out", str(out), "--no-progress"]) == 0
    assert not old.exists()
    assert json.loads((out / "explore.json").read_text())["spec"]["depth"] == 3
    assert json.loads((out / "checkpoint.json").read_text())["level"] == 3
    err = capsys.readouterr().err
    assert "removed the results of an earlier run" in err and "refines-the-abstract-model" in err

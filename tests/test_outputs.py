"""Output places (issue 26 §2, §3): refused before any work starts with one sentence and exit 2; one run at a time
per output directory; an earlier run's results never sit beside a new run's."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgc.cli import main

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

"""`kgc explore --resume DIR` (issue 26 §4): alone it continues with every option the checkpoint records; a deeper
--depth continues further; an option that differs from the checkpoint is named in one sentence."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main


def _explore(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explore", "--no-progress", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def run1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A finished 2.7.0 run with options unlike the defaults (3 members, faults scope, symmetry), checkpointed."""
    out = tmp_path / "run1"
    code, _out, err = _explore(capsys, "--profile", "2.7.0", "--members", "3", "--scope", "faults", "--symmetry",
                               "--depth", "4", "--checkpoint-every", "0", "--out", str(out))
    assert code == 0, err
    return out


def test_resume_alone_continues_with_the_checkpoints_options(run1: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _explore(capsys, "--resume", str(run1))
    assert code == 0, err
    assert "profile 2.7.0, 3 members, depth 4" in out and "resumed from level" in out
    code, out, err = _explore(capsys, "--resume", str(run1), "--depth", "6", "--members", "3", "--profile", "2.7.0")
    assert code == 0, err
    assert "profile 2.7.0, 3 members, depth 6" in out
    resumed = json.loads((run1 / "explore.json").read_text())
    fresh = tmp_path / "fresh"
    assert _explore(capsys, "--profile", "2.7.0", "--members", "3", "--scope", "faults", "--symmetry", "--depth", "6",
                    "--out", str(fresh))[0] == 0
    again = json.loads((fresh / "explore.json").read_text())
    assert (resumed["states"], resumed["edges"], resumed["levels"]) == (again["states"], again["edges"],
                                                                         again["levels"])


@pytest.mark.parametrize("option,value,recorded", [
    ("--profile", "3.9", "2.7.0"), ("--members", "2", "3"), ("--scope", "basic", "faults"),
    ("--engine", "spark", "local"), ("--search", "dfs", "bfs"), ("--max-time-ms", "1000", "60000"),
])
def test_an_option_that_differs_from_the_checkpoint_is_named(run1: Path, option: str, value: str, recorded: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _explore(capsys, "--resume", str(run1), option, value)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"kgc: error: {option} {value} conflicts with the checkpoint in {run1}, which has "
                          f"{option} {recorded}; "), err


def test_resume_of_a_directory_without_a_checkpoint_is_one_sentence(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _explore(capsys, "--resume", str(tmp_path))
    assert code == 2 and err == f"kgc: error: nothing to resume in {tmp_path}: no checkpoint there (a run writes " \
                                f"one with --out {tmp_path}).\n"
    (tmp_path / "checkpoint.json").write_text('{"format": "something else"}')
    code, _out, err = _explore(capsys, "--resume", str(tmp_path))
    assert code == 2 and err.startswith(f"kgc: error: the checkpoint in {tmp_path} is damaged") and \
        len(err.splitlines()) == 1

"""Printed hints work as printed (issue 26 §6): the replay command names kgc as the user started it (bin/kgc by a
relative path here) and the trace by a path relative to the user's current directory, so pasting it works."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bin_kgc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """bin/kgc started by a path relative to ``cwd``, as a user in ``cwd`` types it."""
    kgc = os.path.relpath(ROOT / "bin" / "kgc", cwd)
    return subprocess.run([kgc, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def _run_as_printed(cwd: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shlex.split(command), cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_replay_hints_of_check_and_scenario_work_pasted_where_they_were_printed(tmp_path: Path) -> None:
    kgc = os.path.relpath(ROOT / "bin" / "kgc", tmp_path)
    done = _bin_kgc(tmp_path, "check", "--profile", "3.9", "--mutant", "generation-not-bumped", "--budget", "5",
                    "--out", "out")
    assert done.returncode == 1, done.stderr
    hint = re.search(r"^replay: (.*)$", done.stdout, re.MULTILINE)
    assert hint is not None, done.stdout
    assert hint.group(1) == f"{kgc} replay out/3.9-generation-not-bumped/counterexample.json"
    replayed = _run_as_printed(tmp_path, hint.group(1))
    assert replayed.returncode == 0 and "replay ok" in replayed.stdout, replayed.stderr

    done = _bin_kgc(tmp_path, "scenario", "leader-missed-join-response", "--profile", "3.9", "--out", "t/t.json")
    assert done.returncode == 0, done.stderr
    hint = re.search(r"re-run it with: (.*)$", done.stdout, re.MULTILINE)
    assert hint is not None and hint.group(1) == f"{kgc} replay t/t.json", done.stdout
    replayed = _run_as_printed(tmp_path, hint.group(1))
    assert replayed.returncode == 0 and "replay ok" in replayed.stdout, replayed.stderr

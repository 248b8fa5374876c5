"""Progress in a CI log (issue 26 §9): off a terminal `kgc check` writes one stderr line per phase and profile, one
per profile's verdict, and ends its stdout with one overall verdict line; the reports stay byte-identical."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ("0.10.0", "2.4.1", "2.7.0", "3.9")


def test_check_off_a_terminal_logs_each_phase_and_ends_with_one_verdict(tmp_path: Path) -> None:
    mutant = "generation-not-bumped"     # caught in the seed scenarios on every profile: seconds
    done = subprocess.run([sys.executable, "-m", "kgc", "check", "--mutant", mutant, "--budget", "5",
                           "--out", str(tmp_path / "out")], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert done.returncode == 1, done.stderr
    log = done.stderr.splitlines()
    stamp = r"^\[ *(\d+m)?\d+s\] "
    assert re.match(stamp + rf"kgc check: profiles {', '.join(PROFILES)} on 2 processes, budget 5 s, mutant {mutant}$",
                    log[0]), log[0]
    for profile in PROFILES:
        p = re.escape(profile)
        assert any(re.match(stamp + rf"kgc check {p}: scenarios$", line) for line in log), log
        assert any(re.match(stamp + rf"kgc check {p}: FAIL in (\d+m)?\d+s$", line) for line in log), log
    assert "Traceback" not in done.stderr
    last = done.stdout.rstrip().splitlines()[-1]
    assert re.fullmatch(rf"kgc check: FAIL on {', '.join(PROFILES)} \(4 profiles, mutant {mutant}, (\d+m)?\d+s\)",
                        last), last

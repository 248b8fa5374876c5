"""Helpers shared by the exploration tests."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def killed_run(tmp_path: Path, engine_args: list[str], marker: str, depth: int) -> None:
    """Start `kgc explore` in its own process group, SIGKILL the group once ``marker`` exists."""
    proc = subprocess.Popen([sys.executable, "-m", "kgc", "explore", "--members", "3", "--depth", str(depth),
                             "--out", str(tmp_path), "--no-progress", *engine_args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (tmp_path / marker).exists():
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, f"{marker} never appeared"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)     # the run's own group: python and, for Spark, its JVM
        proc.wait()
    assert not (tmp_path / "explore.json").exists()     # it really died mid-way


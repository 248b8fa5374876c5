"""The README's snippets run as written, twice in a row (issue 26 §7), from the repo root as the README says.

Run here: the `kgc serve` snippet (the server, then its consumer twice against it: a consumer that never closed
left the second run printing [] twenty times), the "Everything else" commands that take seconds (once; twice in a
row in the slow tier, about a minute), and the Python snippet; the `kgc explore` lines (10-20 s each) twice in the
slow tier. Left out: `bin/kgc check` and `bin/test` (the
quick start: minutes, and this test is part of the second), `kgc prove` (2-5 minutes each), the Spark and depth-16
explorations (minutes). The snippets write to /tmp (as written), so concurrent runs share those files; their
contents are deterministic.
"""
from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MINUTES = ("bin/kgc prove", "--engine spark", "--depth 16")     # commands that take minutes: not run here


def _block(lang: str, containing: str) -> str:
    found = [b for b in re.findall(rf"```{lang}\n(.*?)```", README, re.DOTALL) if containing in b]
    assert len(found) == 1, f"one ```{lang} block with {containing!r} in README.md, found {len(found)}"
    return found[0]


def _commands(block: str) -> list[str]:
    """The block's command lines as written (a trailing comment is the shell's to ignore)."""
    return [line for line in block.splitlines()
            if line.strip() and not line.startswith("#") and not any(m in line for m in MINUTES)]


def _bash(script: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _wait_until_free(port: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
                return
            except OSError:
                assert time.monotonic() < deadline, f"port {port}, which the README's snippet uses, stays busy"
                time.sleep(1)


def test_the_serve_snippet_runs_twice_in_a_row(tmp_path: Path) -> None:
    block = _block("bash", "bin/kgc serve --port 9092")
    server_line, comment, consumer = block.split("\n", 2)
    assert comment.startswith("# in another shell")
    _wait_until_free(9092)
    log = tmp_path / "serve.txt"
    with open(log, "w") as out:
        server = subprocess.Popen(["bash", "-c", f"exec {server_line}"], cwd=ROOT, stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "Ctrl-C stops" not in log.read_text():
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        for run in (1, 2):
            done = _bash(consumer, timeout=120)
            lines = done.stdout.splitlines()
            assert done.returncode == 0 and len(lines) == 20, done.stdout + done.stderr
            assert lines[-1] == "[0, 1, 2, 3, 4, 5]", f"run {run} of the consumer: {lines}"
    finally:
        server.send_signal(signal.SIGINT)
        code = server.wait(timeout=60)
    assert code == 0, log.read_text()
    assert "no violation" in log.read_text()
    assert '"schema": "kgc-trace/1"' in Path("/tmp/session.json").read_text()


def _quick_commands(rounds: int) -> None:
    script = "\n".join(_commands(_block("bash", "bin/kgc scenario --list")))
    assert "bin/kgc replay /tmp/t.json" in script and "bin/kgc --help" in script
    for run in range(1, rounds + 1):
        done = _bash(script)
        assert done.returncode == 0, f"run {run}: {done.stderr[-2000:]}"
        assert "replay ok" in done.stdout and "Traceback" not in done.stdout + done.stderr


def test_the_quick_commands_run() -> None:
    _quick_commands(1)


@pytest.mark.slow     # ten commands of a few seconds each, twice (about a minute)
def test_the_quick_commands_run_twice_in_a_row() -> None:
    _quick_commands(2)


def test_the_python_snippet_runs_twice() -> None:
    code = _block("python", "GroupCoordinator")
    for _run in (1, 2):
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr


@pytest.mark.slow     # three explorations of 10-20 s, twice
def test_the_explore_snippets_run_twice_in_a_row() -> None:
    lines = _commands(_block("bash", "bin/kgc explore --members 3 --depth 10"))
    assert len(lines) == 3
    for run in (1, 2):
        for line in lines:
            done = _bash(line)
            expected = 1 if "--mutant" in line else 0    # a seeded mutant's counterexample is exit 1
            assert done.returncode == expected, f"run {run}, {line}: {done.stderr[-2000:]}"
            assert "Traceback" not in done.stdout + done.stderr

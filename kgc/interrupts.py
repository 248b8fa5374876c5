"""SIGINT and SIGTERM in the main process as one exception, ``Interrupted``, that a command turns into one line.

Python turns SIGINT into KeyboardInterrupt (a traceback, and ``with`` blocks that wait for worker processes)
and leaves SIGTERM — what a CI cancel sends — to kill the process outright, orphaning its workers. Inside
``interruptible()`` both raise ``Interrupted`` in the main thread instead, so every ``finally`` runs (workers are
stopped by pid) and the command says in one line what it kept; the exit status is the shell's 128 + signal
(130, 143). ``held()`` delays a signal until the files written inside it are whole.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A stop asked for by a signal; ``kept`` is what the command kept, as the end of one sentence.

    A KeyboardInterrupt, so that no ``except Exception`` on the way — the checkers turn an exception inside a step
    into a finding — mistakes it for the system under test failing, and libraries let it through as they do Ctrl-C."""

    def __init__(self, signum: int, kept: str = "") -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.kept = kept

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise ``Interrupted`` while inside (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, _raise) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextmanager
def held() -> Iterator[None]:
    """A signal that arrives inside is raised (as ``Interrupted``) when the block ends, not in the middle of it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    old = {s: signal.signal(s, lambda signum, _f: arrived.append(signum)) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    if arrived:
        signal.raise_signal(arrived[0])   # now handled as it would have been outside the block


__all__ = ["Interrupted", "held", "interruptible"]

"""Progress of a long command: a spinner on a terminal, one line per event in a log.

A CI log is not a terminal: a spinner there prints nothing for minutes. So where stdout is not a terminal, each
event (a phase starting, a profile ending) is one line on stderr, stamped with the minutes and seconds since the
start — stdout keeps the command's results, whose bytes do not depend on timing or on which process ends first.
"""
from __future__ import annotations

import sys
import time
from contextlib import AbstractContextManager
from types import TracebackType

from rich.console import Console


def clock(seconds: float) -> str:
    """2m41s, 12s."""
    whole = int(round(seconds))
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class PhaseLog(AbstractContextManager["PhaseLog"]):
    """``update(text)``: the spinner's text on a terminal; ``event(text)``: a line in a log (and the spinner's text
    on a terminal, where an event is not kept)."""

    def __init__(self, console: Console, first: str) -> None:
        self.console = console
        self.started = time.monotonic()
        self.terminal = console.is_terminal
        self.status = console.status(first, spinner="dots") if self.terminal else None
        if not self.terminal:
            self.event(first)

    def __enter__(self) -> "PhaseLog":
        if self.status is not None:
            self.status.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.status is not None:
            self.status.__exit__(kind, exc, tb)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def update(self, text: str) -> None:
        if self.status is not None:
            self.status.update(text)

    def event(self, text: str, status: str | None = None) -> None:
        """A log line; on a terminal the spinner shows ``status`` (default: the line) instead."""
        if self.status is not None:
            self.status.update(status or text)
            return
        sys.stderr.write(f"[{clock(self.elapsed):>6}] {text}\n")
        sys.stderr.flush()


__all__ = ["PhaseLog", "clock"]

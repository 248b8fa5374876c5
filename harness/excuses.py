"""Which documented findings the checkers excuse in this process (properties/findings.py).

A documented finding is real behaviour of a release that breaks a catalog property; the checkers
excuse it (the property stays off that profile, or a narrow rule such as ``labels.stale_completion``
accepts exactly that change) so that the search goes on looking for undocumented violations. To
*reproduce* a finding — the gate checks every documented finding still happens, and ``kgc check
--unexcuse NAME`` lets the search find it afresh — its excuse is switched off here for the duration
of a ``with unexcused(...)`` block. Standard library only; harness-level so that the refinement
rules in harness/labels.py can read it.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator

_UNEXCUSED: set[str] = set()


def excused(finding: str) -> bool:
    """Whether the checkers excuse documented finding ``finding`` right now (the default: yes)."""
    return finding not in _UNEXCUSED


@contextmanager
def unexcused(findings: Iterable[str]) -> Iterator[None]:
    """Check the properties ``findings`` break as if they were undocumented, inside the block."""
    names = set(findings) - _UNEXCUSED
    _UNEXCUSED.update(names)
    try:
        yield
    finally:
        _UNEXCUSED.difference_update(names)

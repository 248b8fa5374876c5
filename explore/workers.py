"""Worker processes for the local engine (``kgc explore --workers N``): each holds its own Expander.

A level's frontier is cut into consecutive chunks; ``pool.imap`` hands them out and yields the
expansions back *in frontier order*, so the parent absorbs them exactly as one process would — the
same counts, the same counterexamples, the same report bytes. Workers are forked (the parent's
imported modules come for free) and live for one search.
"""
from __future__ import annotations

import multiprocessing
from typing import Iterator

from core.actions import Action
from explore.space import Expander, Expansion, ExploreSpec

CHUNK = 32       # nodes per task: one expansion pickles to ~4 KB (NOTES-perf.md), a chunk to ~130 KB

_EXPANDER: Expander | None = None


def _init(spec: ExploreSpec) -> None:
    global _EXPANDER
    _EXPANDER = Expander(spec)


def _expand_chunk(chunk: list[tuple[bytes, frozenset[Action] | None]]) -> list[Expansion]:
    """The chunk's expansions; the coverage sets (witnesses, abstract states and edges — model.State values,
    slow to pickle) are merged into the first one: the parent only ever takes their union."""
    assert _EXPANDER is not None
    out = [_EXPANDER.expand(node, sleep) for node, sleep in chunk]
    first = out[0]
    for exp in out[1:]:
        first.witnesses |= exp.witnesses
        first.abstract_states |= exp.abstract_states
        first.abstract_edges |= exp.abstract_edges
        exp.witnesses, exp.abstract_states, exp.abstract_edges = set(), set(), set()
    return out


class ExpansionPool:
    """``workers`` forked processes expanding nodes for one search."""

    def __init__(self, spec: ExploreSpec, workers: int) -> None:
        self.pool = multiprocessing.get_context("fork").Pool(workers, initializer=_init, initargs=(spec,))

    def expand(self, items: list[tuple[bytes, frozenset[Action] | None]]) -> Iterator[Expansion]:
        """The expansions of ``items`` (node, sleep set), in order."""
        chunks = [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]
        for expansions in self.pool.imap(_expand_chunk, chunks, chunksize=1):
            yield from expansions

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


__all__ = ["ExpansionPool"]

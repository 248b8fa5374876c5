"""Processes for the local engine's BFS (``kgc explore --workers N``): the parent and N-1 forked workers
expand each level together; the parent alone absorbs the expansions, so the result is the one of one process.

Affinity. Every frontier node carries a *route*, ``route_of`` its coordinator state (``Expansion.routes``). A
level is dealt to the processes by route, and a route stays with the process that had it before unless that
would unbalance the level (``deal``): the nodes that share a coordinator state meet one Expander, whose caches
— the call memo, what is read and judged per coordinator state — serve them all. Dealt in consecutive chunks
instead, as before, each process re-derived much of what the other had: two Expanders fed alternate chunks spent
17-24 % more CPU than one at depth 12 (3.9, basic, 3 members), fed by route 0-1 % more; with the messages,
the whole search takes 9 % more instructions than one process (bench/results/explore-perf-2026-11-27.md).

Order. Each share is cut into chunks, and the chunks of all shares are ranked by how far into its share each
ends (``chunk_order``): about the order in which they complete. The parent expands its own chunks, takes the
workers' as they arrive, and yields every chunk's expansions in that rank order. Which expansion is absorbed
first changes nothing the search reports (counts add up; a node keeps its smallest path; a property its
smallest counterexample); it only orders the next frontier, and that order is itself a function of the
frontier and the routes, so a run is deterministic. Levels smaller than ``SMALL_LEVEL`` stay in the parent.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import traceback
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

from core.actions import Action
from explore.space import Expander, Expansion

CHUNK = 32            # nodes per chunk: one expansion pickles to ~5 KB (NOTES-perf.md), a chunk to ~160 KB
SMALL_LEVEL = 96      # a level with fewer nodes is expanded by the parent alone (a message costs more than it saves)
PARENT_WEIGHT = 0.95  # the parent's share against a worker's: it also absorbs (0.95 balanced instruction counts)
SLACK = 1.05          # a route stays with its process while that process's share stays under 105 % of its target
POLL_S = 5.0          # how often a waiting parent checks that its workers are alive

Item = tuple[bytes, "frozenset[Action] | None", int]     # node, sleep set, route


def deal(routes: list[int], owner: dict[int, int], weights: list[float]) -> list[list[int]]:
    """The positions of ``routes`` each process expands: a route's nodes go together, to the process ``owner``
    had for it while that keeps the process under its weighted share (else to the least loaded one, largest
    routes first); ``owner`` is updated. Deterministic: the same routes and owners give the same deal."""
    counts = Counter(routes)
    total, processes = len(routes), range(len(weights))
    cap = [total * w / sum(weights) * SLACK for w in weights]
    load = [0] * len(weights)
    for route, count in sorted(counts.items(), key=lambda rc: (-rc[1], rc[0])):
        p = owner.get(route)
        if p is None or load[p] + count > cap[p]:
            p = min(processes, key=lambda q: ((load[q] + count) / weights[q], q))
        load[p] += count
        owner[route] = p
    shares: list[list[int]] = [[] for _ in weights]
    for position, route in enumerate(routes):
        shares[owner[route]].append(position)
    return shares


def chunk_order(shares: list[list[int]]) -> list[tuple[int, list[int]]]:
    """(process, positions) chunks of every share, ranked by the fraction of its share each one ends at."""
    ranked: list[tuple[float, int, list[int]]] = []
    for p, share in enumerate(shares):
        pieces = [share[i:i + CHUNK] for i in range(0, len(share), CHUNK)]
        ranked += [((k + 1) / len(pieces), p, piece) for k, piece in enumerate(pieces)]
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [(p, piece) for _rank, p, piece in ranked]


def _merge_coverage(out: list[Expansion]) -> None:
    """Coverage sets (model.State values, slow to pickle) go into the first expansion: the parent takes their union."""
    first = out[0]
    for exp in out[1:]:
        first.witnesses |= exp.witnesses
        first.abstract_states |= exp.abstract_states
        first.abstract_edges |= exp.abstract_edges
        exp.witnesses, exp.abstract_states, exp.abstract_edges = set(), set(), set()


PR_SET_PDEATHSIG = 1   # prctl(2): the signal a process gets when its parent dies (Linux)
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextmanager
def forking() -> Iterator[None]:
    """Around starting workers: a stop signal waits until the children have their own handlers (``as_worker``) —
    in between, a forked child would run the parent's."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def as_worker(parent: int) -> None:
    """In a forked worker: the parent decides when to stop. SIGINT (a Ctrl-C reaches the whole process group) is
    ignored, SIGTERM (the parent's stop) ends the worker at once, and the worker gets SIGTERM if the parent dies
    without stopping it (Linux; elsewhere a worker whose parent was killed outright finishes its task alone). The
    death signal follows the *thread* that forked: workers are started from the main thread, which lives as long as
    the process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)   # blocked by the parent around the fork
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):   # not Linux
        pass
    if os.getppid() != parent:          # the parent died before the death signal was asked for
        os._exit(1)


def _serve(expander: Expander, tasks: Any, results: Any, ident: int, parent: int) -> None:
    """A worker: expand each chunk it is sent with (a forked copy of) the parent's Expander, until None."""
    as_worker(parent)
    while True:
        task = tasks.get()
        if task is None:
            return
        chunk, items = task
        try:
            out = [expander.expand(node, sleep) for node, sleep in items]
            _merge_coverage(out)
            results.put((chunk, out))
        except BaseException:   # noqa: BLE001 — expand catches what a state can raise; this is a bug: tell the parent
            results.put((chunk, f"worker {ident} failed:\n{traceback.format_exc()}"))
            return


class WorkerFailed(RuntimeError):
    pass


class ExpansionPool:
    """The parent's ``expander`` and ``workers`` - 1 forked processes, expanding the levels of one search."""

    def __init__(self, expander: Expander, workers: int) -> None:
        self.expander = expander
        expander.route_children = True     # before the fork: the workers' copies route too
        ctx = multiprocessing.get_context("fork")
        self.results = ctx.Queue()
        self.tasks = [ctx.Queue() for _ in range(workers - 1)]
        self.procs = [ctx.Process(target=_serve, args=(expander, q, self.results, i, os.getpid()),
                                  daemon=True)
                      for i, q in enumerate(self.tasks, 1)]
        with forking():
            for proc in self.procs:
                proc.start()
        self.weights = [PARENT_WEIGHT] + [1.0] * len(self.procs)
        self.owner: dict[int, int] = {}      # route -> process, kept from level to level
        self.outstanding = 0                 # chunks sent to workers and not yet taken back

    def expand(self, items: list[Item]) -> Iterator[tuple[int, Expansion]]:
        """(position in ``items``, its expansion) for every item, in the order of the module doc."""
        if len(items) < SMALL_LEVEL or not self.procs:
            for position, (node, sleep, _route) in enumerate(items):
                yield position, self.expander.expand(node, sleep)
            return
        chunks = chunk_order(deal([route for _n, _s, route in items], self.owner, self.weights))
        own = []
        for c, (p, positions) in enumerate(chunks):
            if p == 0:
                own.append(c)
            else:
                self.tasks[p - 1].put((c, [(items[i][0], items[i][1]) for i in positions]))
                self.outstanding += 1
        yield from self._collect(items, chunks, own)

    def _collect(self, items: list[Item], chunks: list[tuple[int, list[int]]], own: list[int]
                 ) -> Iterator[tuple[int, Expansion]]:
        """Expand the parent's chunks while the workers expand theirs; yield every chunk in rank order."""
        ready: dict[int, list[Expansion]] = {}
        own.reverse()                        # popped from the end: the parent's chunks in rank order
        nxt = 0
        while nxt < len(chunks):
            self._take(ready, block=False)
            while nxt in ready:
                yield from zip(chunks[nxt][1], ready.pop(nxt), strict=True)
                nxt += 1
            if nxt == len(chunks):
                break
            if own:
                c = own.pop()
                ready[c] = [self.expander.expand(items[i][0], items[i][1]) for i in chunks[c][1]]
            else:
                self._take(ready, block=True)

    def _take(self, ready: dict[int, list[Expansion]], block: bool) -> None:
        """Move the workers' finished chunks into ``ready`` (waiting for one when ``block``)."""
        while True:
            try:
                chunk, out = self.results.get(block, POLL_S) if block else self.results.get_nowait()
            except queue.Empty:
                if not block:
                    return
                dead = [f"worker {i} (exit code {p.exitcode})" for i, p in enumerate(self.procs, 1)
                        if p.exitcode is not None]
                if dead:
                    raise WorkerFailed(f"{', '.join(dead)} ended during the search (out of memory?); the search "
                                       f"stopped — its last checkpoint, if any, resumes with --resume.") from None
                continue
            if isinstance(out, str):
                raise WorkerFailed(out)
            self.outstanding -= 1
            ready[chunk] = out
            block = False

    def close(self) -> None:
        """Stop the workers: at once when a search ended inside a level (work still queued), else when idle."""
        for q in self.tasks:
            if self.outstanding:
                q.cancel_join_thread()     # a stopped worker reads no more: do not wait to flush to it
            else:
                q.put(None)
        for proc in self.procs:
            if not self.outstanding:
                proc.join(timeout=POLL_S)
            if proc.exitcode is None:
                proc.terminate()
                proc.join()


__all__ = ["ExpansionPool", "WorkerFailed", "as_worker", "chunk_order", "deal", "forking"]

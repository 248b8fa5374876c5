"""The local engine: breadth-first (shortest counterexamples) and depth-first search over the World.

BFS is level-synchronous, like the Spark engine: level d holds the nodes first reached in d steps,
in discovery order, which is the lexicographic order of their paths of action indexes — so the
first counterexample found for a property is the smallest shortest one, the same one Spark picks.
Deduplication is by 63-bit fingerprint (``Expander``'s: of the canonical form by default). With POR a node reached
several times within one level keeps the intersection of its sleep sets.

Checkpoints: at the end of a level (at most every ``checkpoint_every_s`` seconds, and always at the
end) the visited fingerprints, the next frontier and every counter are written atomically to
``<dir>/checkpoint.json`` (data, not a pickle: ``explore.checkpoint``); ``resume`` continues from the
last one and ends with the same counts.

DFS (``search="dfs"``) is depth-bounded with a node→least-depth table; a node reached again at a
smaller depth is expanded again, so it visits the same nodes as BFS within the horizon (its edge
count and its counterexamples are not minimal).
"""
from __future__ import annotations

import os
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from explore import checkpoint
from explore.result import ExploreResult, merge_found
from explore.space import Expander, Expansion, ExploreSpec
from explore.workers import ExpansionPool
from model.state import State

CHECKPOINT, CHECKPOINT_FORMAT = checkpoint.CHECKPOINT, checkpoint.CHECKPOINT_FORMAT


@dataclass
class Progress:
    """What a progress display shows; ``level_done``/``level_total`` give the ETA of the level."""

    level: int
    level_done: int
    level_total: int
    states: int
    edges: int
    elapsed: float


ProgressFn = Callable[[Progress], None]


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed (missing, another format, another space)."""


@dataclass
class _Run:
    """Everything BFS carries from level to level (what a checkpoint holds)."""

    spec: ExploreSpec
    level: int = 0
    visited: set[int] = field(default_factory=set)
    frontier: dict[int, list] = field(default_factory=dict)   # fp -> [node, path, sleep]
    result: ExploreResult | None = None
    abstract_states: set[State] = field(default_factory=set)
    abstract_edges: set[tuple[State, str, State]] = field(default_factory=set)
    #: fp -> route of its node (``Expansion.routes``) for the worker processes; not in a checkpoint (a resumed
    #: search routes its first level by fingerprint: only the speed differs)
    routes: dict[int, int] = field(default_factory=dict)


def keep(level: dict[int, list], fp: int, node: bytes, path: bytes, sleep: frozenset | None) -> bool:
    """The same-level rule of both engines for a node reached again within one level: the smallest
    path wins (one process sees paths in that order; workers and Spark in any), the POR sleep sets
    intersect. True when ``node`` is the one kept now."""
    entry = level.get(fp)
    if entry is None:
        level[fp] = [node, path, sleep]
        return True
    kept = path < entry[1]
    if kept:
        entry[0], entry[1] = node, path
    if sleep is not None and entry[2] is not None:
        entry[2] = entry[2] & sleep
    return kept


def absorb(result: ExploreResult, states: set[State], edges: set[tuple[State, str, State]],
           exp: Expansion, path: tuple[int, ...]) -> None:
    """Add one expansion's counts, violations and coverage (a violation at index -1 is the node's own:
    its path is the one that reached it)."""
    result.edges += exp.edges
    result.pruned += exp.pruned
    for prop, index, msg in exp.violations:
        merge_found(result.violations, prop, path + (index,) if index >= 0 else path, msg)
    result.witnesses |= exp.witnesses
    states |= exp.abstract_states
    edges |= exp.abstract_edges


def _save(run: _Run, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (CHECKPOINT + ".tmp")
    assert run.result is not None
    text = checkpoint.dumps(run.spec, run.level, run.visited, run.frontier, run.result, run.abstract_states,
                            run.abstract_edges)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, directory / CHECKPOINT)


def load_checkpoint(directory: Path | str, spec: ExploreSpec | None = None) -> dict:
    """The checkpoint in ``directory``; a CheckpointError says why it cannot be used for ``spec``."""
    path = Path(directory) / CHECKPOINT
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}; run with --out {directory} first.")
    try:
        data = checkpoint.loads(path.read_text(encoding="utf-8"))
    except checkpoint.UnsafeCheckpoint as exc:
        raise CheckpointError(f"{path} was not written by kgc explore ({exc}); it is not loaded — delete it "
                              f"and start again with --out.") from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, EOFError, pickle.UnpicklingError) as exc:
        raise CheckpointError(f"{path} is damaged or not a {CHECKPOINT_FORMAT} file ({type(exc).__name__}); "
                              f"delete it and start again with --out.") from None
    if spec is not None and not data["spec"].same_space(spec):
        raise CheckpointError(f"{path} explores another space ({data['spec'].to_json()}); "
                              f"resume with the same options.")
    return data


def bfs(spec: ExploreSpec, checkpoint_dir: Path | str | None = None, resume: bool = False,
        progress: ProgressFn | None = None, checkpoint_every_s: float = 30.0, stop_after_level: int | None = None,
        workers: int = 1) -> ExploreResult:
    """Breadth-first search to ``spec.depth``. ``stop_after_level`` ends the run early (as a kill would,
    after that level's checkpoint) — tests use it to check resumption. ``workers`` > 1 expands each level
    in that many processes (``explore.workers``); the parent absorbs the expansions in frontier order,
    so the result is the same as with one."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}.")
    expander = Expander(spec)
    pool = ExpansionPool(expander, workers) if workers > 1 else None
    try:
        return _bfs(spec, expander, pool, checkpoint_dir, resume, progress, checkpoint_every_s, stop_after_level)
    finally:
        if pool is not None:
            pool.close()


def _bfs(spec: ExploreSpec, expander: Expander, pool: "ExpansionPool | None", checkpoint_dir: Path | str | None,
         resume: bool, progress: ProgressFn | None, checkpoint_every_s: float, stop_after_level: int | None,
         ) -> ExploreResult:
    directory = Path(checkpoint_dir) if checkpoint_dir is not None else None
    start = time.perf_counter()
    if resume:
        if directory is None:
            raise CheckpointError("resume needs the checkpoint directory.")
        data = load_checkpoint(directory, spec)
        run = _Run(spec, data["level"], data["visited"], data["frontier"], data["result"], data["abstract_states"],
                   data["abstract_edges"])
        assert run.result is not None
        run.result.spec = spec
        run.result.resumed_from_level = run.level
        start -= run.result.seconds
    else:
        result = ExploreResult(spec, "local", "bfs", states=1, levels=[1])
        fp = expander.root_fp
        run = _Run(spec, 0, {fp}, {fp: [expander.root, b"", frozenset() if spec.por else None]}, result,
                   set(expander.root_abstract_states), set())
        result.add_root_violations(expander.root_violations)
    result = run.result
    assert result is not None
    last_save = time.perf_counter()
    while run.frontier and run.level < spec.depth:
        t_level = time.perf_counter()
        nxt: dict[int, list] = {}
        total = len(run.frontier)
        routes, run.routes = run.routes, {}
        for done, ((_node, path, _sleep), exp) in enumerate(_expansions(run.frontier, routes, expander, pool)):
            parent_path = tuple(path)
            absorb(result, run.abstract_states, run.abstract_edges, exp, parent_path)
            for k, (index, fp, child, child_sleep) in enumerate(exp.children):
                if fp not in run.visited and keep(nxt, fp, child, path + bytes((index,)), child_sleep) and exp.routes:
                    run.routes[fp] = exp.routes[k]
            if progress is not None and (done & 63) == 0:
                progress(Progress(run.level, done, total, len(run.visited) + len(nxt), result.edges,
                                  time.perf_counter() - start))
        run.visited.update(nxt)
        run.frontier = nxt
        run.level += 1
        if nxt:
            result.levels.append(len(nxt))
        result.states = len(run.visited)
        result.level_seconds.append(time.perf_counter() - t_level)
        result.seconds = time.perf_counter() - start
        if progress is not None:
            progress(Progress(run.level, total, total, result.states, result.edges, result.seconds))
        stopping = stop_after_level is not None and run.level >= stop_after_level
        if directory is not None and (stopping or time.perf_counter() - last_save >= checkpoint_every_s):
            _save(run, directory)
            last_save = time.perf_counter()
        if stopping:
            break
    result.complete = not run.frontier
    _finish(result, run.abstract_states, run.abstract_edges, start)
    if directory is not None:
        _save(run, directory)
    return result


def _expansions(frontier: dict[int, list], routes: dict[int, int], expander: Expander, pool: ExpansionPool | None
                ) -> Iterator[tuple[list, Expansion]]:
    """(frontier entry, its expansion) for the whole level: in frontier order in one process, else in the pool's
    order (explore/workers.py; the search's result does not depend on it)."""
    entries = list(frontier.items())
    if pool is None:
        for _fp, entry in entries:
            yield entry, expander.expand(entry[0], entry[2])
        return
    items = [(entry[0], entry[2], routes.get(fp, fp)) for fp, entry in entries]
    for position, exp in pool.expand(items):
        yield entries[position][1], exp


def _finish(result: ExploreResult, states: set[State], edges: set[tuple[State, str, State]], start: float) -> None:
    result.seconds = time.perf_counter() - start
    result.set_coverage(states, edges)


def dfs(spec: ExploreSpec, progress: ProgressFn | None = None) -> ExploreResult:
    """Depth-first search to ``spec.depth`` (POR is not applied: sleep sets need the BFS level rule)."""
    expander = Expander(spec)
    start = time.perf_counter()
    result = ExploreResult(spec, "local", "dfs")
    states: set[State] = set(expander.root_abstract_states)
    edges: set[tuple[State, str, State]] = set()
    result.add_root_violations(expander.root_violations)
    best: dict[int, int] = {expander.root_fp: 0}
    stack: list[tuple[bytes, bytes]] = [(expander.root, b"")]
    while stack:
        node, path = stack.pop()
        depth = len(path)
        if depth >= spec.depth:
            continue
        exp = expander.expand(node, None)
        absorb(result, states, edges, exp, tuple(path))
        for index, fp, child, _sleep in reversed(exp.children):
            seen = best.get(fp)
            if seen is None or seen > depth + 1:
                best[fp] = depth + 1
                stack.append((child, path + bytes((index,))))
        if progress is not None and (result.edges & 1023) < len(exp.children):
            progress(Progress(depth, 0, 0, len(best), result.edges, time.perf_counter() - start))
    result.states = len(best)
    result.complete = True
    _finish(result, states, edges, start)
    return result

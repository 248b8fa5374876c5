"""The first levels of a Spark BFS, expanded on the driver: a level smaller than ``DRIVER_BELOW`` nodes costs
more as a Spark job than as work (NOTES-spark.md §3: 0.3–0.4 s per level on a quiet 2-core box, 0.5–1 s on a
busy one, and a 2.5–4 s warm-up on the first; at depth 12 of the issue's space the 8 levels under 400 nodes are
~0.7 s of expansion in one process). The driver uses the same ``Expander`` and the local engine's rules
(``absorb``, ``keep``), so the counts, counterexamples and coverage are the same; the first level too large
goes to Spark as partitioned batches, exactly as a merge would have left it (``to_rdds``).
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from explore.local import Progress, absorb, keep
from explore.result import ExploreResult
from explore.space import Expander, ExploreSpec
from explore.spark.parquet import commit_level, write_part
from model.state import State

#: a frontier with fewer nodes is expanded on the driver (0: every level is a Spark job)
DRIVER_BELOW = 2048
#: the Python workers are started (explore/spark/engine.py ``WarmUp``) once a frontier reaches 1/WARM_AHEAD of that
WARM_AHEAD = 16


def driver_levels(spec: ExploreSpec, ex: Expander, result: ExploreResult, coverage: tuple[set[State], set],
                  below: int, stop: Callable[[int], bool], progress: Callable[[Progress], None] | None,
                  checkpoint: tuple[str, int] | None, start: float,
                  near: Callable[[], None] = lambda: None) -> tuple[int, dict[int, int], dict[int, list]]:
    """BFS from the root on the driver while the frontier has fewer than ``below`` nodes (and ``stop(level)``
    is False): the level reached, the visited fingerprints with their routes, and the frontier (fp -> [node,
    path, sleep]). ``checkpoint``: (directory, partitions) to write each level as the merge tasks would.
    ``near`` is called once, when a frontier reaches ``below / WARM_AHEAD`` nodes (the levels double: Spark's
    turn is a few levels away)."""
    ex.route_children = True
    visited = {ex.root_fp: ex.root_route}
    frontier: dict[int, list] = {ex.root_fp: [ex.root, b"", frozenset() if spec.por else None]}
    level, warned = 0, False
    while frontier and len(frontier) < below and level < spec.depth and not stop(level):
        if not warned and len(frontier) * WARM_AHEAD >= below:
            near()
            warned = True
        t_level = time.perf_counter()
        nxt: dict[int, list] = {}
        routes: dict[int, int] = {}
        for node, path, sleep in frontier.values():
            exp = ex.expand(node, sleep)
            absorb(result, coverage[0], coverage[1], exp, tuple(path))
            for (index, fp, child, child_sleep), route in zip(exp.children, exp.routes, strict=True):
                if fp not in visited:
                    keep(nxt, fp, child, path + bytes((index,)), child_sleep)
                    routes[fp] = route
        visited.update(routes)
        frontier, level = nxt, level + 1
        if nxt:
            result.levels.append(len(nxt))
        result.states += len(nxt)
        result.level_seconds.append(time.perf_counter() - t_level)
        result.seconds = time.perf_counter() - start
        if checkpoint is not None:
            _save(spec, checkpoint, level, visited, frontier, result, coverage)
        if progress is not None:
            progress(Progress(level, len(nxt), len(nxt), result.states, result.edges, result.seconds))
    return level, visited, frontier


def _parts(parts: int, visited: dict[int, int], frontier: dict[int, list]) -> list[tuple[np.ndarray, tuple]]:
    """Per partition (route mod parts, as the expansion routes candidates): the sorted visited array and the
    frontier batch."""
    vis: list[list[int]] = [[] for _ in range(parts)]
    for fp, route in visited.items():
        vis[route % parts].append(fp)
    front: list[list[int]] = [[] for _ in range(parts)]
    for fp in frontier:
        front[visited[fp] % parts].append(fp)
    return [(np.array(sorted(v), np.int64),
             ("F", np.array(f, np.int64).tobytes(), [frontier[x][0] for x in f], [frontier[x][1] for x in f],
              [frontier[x][2] for x in f]))
            for v, f in zip(vis, front, strict=True)]


def _save(spec: ExploreSpec, checkpoint: tuple[str, int], level: int, visited: dict[int, int],
          frontier: dict[int, list], result: ExploreResult, coverage: tuple[set[State], set]) -> None:
    directory, parts = checkpoint
    for pidx, (vis, batch) in enumerate(_parts(parts, visited, frontier)):
        write_part(directory, level, pidx, vis, batch)
    commit_level(directory, level, spec, parts, result, coverage[0], coverage[1], len(frontier))


def to_rdds(sc: Any, parts: int, visited: dict[int, int], frontier: dict[int, list], partitioner: Callable[[int], int]
            ) -> tuple[Any, Any]:
    """The visited and frontier RDDs a merge would have produced for this level."""
    split = _parts(parts, visited, frontier)
    vis = sc.parallelize([(o, ("V", v.tobytes())) for o, (v, _b) in enumerate(split)], parts)
    front = sc.parallelize([(o, b) for o, (_v, b) in enumerate(split) if b[2]], parts)
    return vis.partitionBy(parts, partitioner), front.partitionBy(parts, partitioner)


__all__ = ["DRIVER_BELOW", "WARM_AHEAD", "driver_levels", "to_rdds"]

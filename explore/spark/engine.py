"""The Spark engine: level-synchronous BFS with PySpark, the "rdd_blob" pattern of NOTES-spark.md §3.

Each record is a whole batch keyed by its partition index (the partitioner is the identity on the key,
one function object everywhere, so ``visited.union(candidates)`` of two equally partitioned RDDs is
a partition-aware union and visited is never shuffled). A node lives in the partition of its route mod P
(``explore.space.route_of``: its coordinator state, corrs of parked requests blinded — a function of its
fingerprint, so every copy of a node meets in one merge), so the nodes that share a coordinator state are
expanded by one task and its Expander's caches serve them all (by fingerprint, each task re-derived much of
what the other had: 17-24 % more CPU, measured on the local engine, explore/workers.py):

- ``("V", fps)``: the visited fingerprints of one partition, a sorted int64 array;
- ``("F", fps, nodes, paths, sleeps)``: the new frontier of one partition (nodes first reached at this level);
- ``("C", …)``: candidates, the successors one expansion task routes to a partition (deduplicated map-side);
- ``("X", stats)``: what an expansion task counted (edges, violations, witnesses, coverage), sent to a merge, which
  reports it to the driver with its count of new nodes through an accumulator (``_Summaries``).

A level's whole output is both the next expansion's input (it reads the ``"F"`` records) and the next merge's visited
side (it reads ``"V"``; candidates and stats come tagged ``"C"`` and ``"X"``, so the level before's ``"F"`` is not taken
for new ones), and the job that computes it is a count in the JVM: no Python filter splits or summarises it, which
would unpickle and pickle every record again in one more Python worker per task.

One Spark job per level: expansion (``Expander.expand``, the local engine's step function) in Python
workers, a shuffle of P×P batches, and a merge that drops fingerprints already visited (numpy
``searchsorted``), keeps the smallest path per new node and intersects its POR sleep sets — exactly the
local engine's rules, so both report the same counts and counterexamples.

Checkpoints: with ``checkpoint_dir`` every merge task also writes its partition of the new visited set
and frontier as Parquet (``level-NNNN/part-PPPPP.parquet``), and the driver then writes
``level-NNNN/_SUCCESS.json`` with the counters; ``resume`` restarts from the last level that has one.
Lineage is cut with ``localCheckpoint()`` every ``LINEAGE_LEVELS`` levels (a deep BFS without it
overflows the JVM's stack, NOTES-spark.md §3).
"""
from __future__ import annotations

import json
import pickle
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from explore.local import CheckpointError, Progress, absorb, keep
from explore.result import ExploreResult, merge_found
from explore.space import Expander, ExploreSpec
from explore.spark.driver import DRIVER_BELOW, driver_levels, to_rdds
from explore.spark.parquet import CHECKPOINT_FORMAT, commit_level, last_complete_level, level_dir, read_part, write_part
from model.state import State

LINEAGE_LEVELS = 10
EMPTY = np.empty(0, np.int64).tobytes()

_EXPANDERS: dict[str, Expander] = {}
Records = Iterable[tuple[int, tuple]]
RecordIter = Iterator[tuple[int, tuple]]


def _storage() -> Any:
    """Memory, spilling to disk: a level evicted from memory would otherwise be recomputed (re-expanded)."""
    from pyspark import StorageLevel
    return StorageLevel.MEMORY_AND_DISK


def part_ident(key: int) -> int:
    """The partitioner: keys are partition indexes. Always pass this very object (PySpark compares it)."""
    return key


def _expander(spec_json: str) -> Expander:
    """One Expander per spec per Python worker (workers are reused between tasks)."""
    found = _EXPANDERS.get(spec_json)
    if found is None:
        found = _EXPANDERS[spec_json] = Expander(ExploreSpec.from_json(json.loads(spec_json)))
        found.route_children = True     # candidates go to the partition of their route (see the module doc)
    return found


class WarmUp:
    """Starts the Python workers — each imports kgc and builds its Expander — in a Spark job of its own, from a thread,
    while the driver still expands the first levels (PySpark runs jobs from several threads). Without it the first
    Spark level pays that start (1.5–2 s of its 3 s at depth 11 of the issue's space, measured) while the driver
    waits. A failed warm-up is left alone: the level that needs the workers reports what is wrong."""

    GROUP = "kgc-warm-up"

    def __init__(self, sc: Any, spec_json: str, parts: int) -> None:
        self.sc, self.spec_json, self.parts = sc, spec_json, parts
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._job, name="kgc-spark-warm-up", daemon=True)
            self.thread.start()

    def _job(self) -> None:
        try:
            self.sc.setJobGroup(self.GROUP, "kgc: start the Python workers", interruptOnCancel=False)
            self.sc.parallelize(range(self.parts), self.parts).mapPartitions(make_warm(self.spec_json)).count()
        except Exception:      # noqa: BLE001 — only a head start; the levels' own jobs report failures
            pass

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()

    def cancel(self) -> None:
        """No Spark level follows (the driver did them all): the warm-up is cancelled, not waited for (again until its
        thread ends: a cancel before the job is submitted would miss it)."""
        while self.thread is not None and self.thread.is_alive():
            self.sc.cancelJobGroup(self.GROUP)
            self.thread.join(0.05)


def make_warm(spec_json: str) -> Callable[[Iterable[int]], Iterator[int]]:
    def warm(_records: Iterable[int]) -> Iterator[int]:
        _expander(spec_json)
        return iter(())
    return warm


class Stats:
    """What one expansion task counted; merged on the driver."""

    def __init__(self, spec: ExploreSpec) -> None:
        self.result = ExploreResult(spec, "spark")
        self.states: set[State] = set()
        self.edges: set[tuple[State, str, State]] = set()

    def merge_into(self, result: ExploreResult, states: set[State], edges: set[tuple[State, str, State]]) -> None:
        result.edges += self.result.edges
        result.pruned += self.result.pruned
        for prop, found in self.result.violations.items():
            merge_found(result.violations, prop, found.path, found.message, found.count)
        result.witnesses |= self.result.witnesses
        states |= self.states
        edges |= self.edges


def _batches(cands: dict[int, list], routes: dict[int, int], parts: int) -> Iterator[tuple[int, tuple]]:
    routed: list[list[int]] = [[] for _ in range(parts)]
    for fp in cands:
        routed[routes[fp] % parts].append(fp)
    for o, fps in enumerate(routed):
        if fps:
            yield o, ("C", np.array(fps, np.int64).tobytes(), [cands[f][0] for f in fps],
                      [cands[f][1] for f in fps], [cands[f][2] for f in fps])


def make_expand(spec_json: str, parts: int) -> Callable[[int, Records], RecordIter]:
    def expand(index: int, records: Records) -> RecordIter:
        ex = _expander(spec_json)
        stats = Stats(ex.spec)
        cands: dict[int, list] = {}
        routes: dict[int, int] = {}
        for _key, rec in records:
            if rec[0] != "F":
                continue
            for node, path, sleep in zip(rec[2], rec[3], rec[4], strict=True):
                exp = ex.expand(node, sleep)
                absorb(stats.result, stats.states, stats.edges, exp, tuple(path))
                for (idx, fp, child, child_sleep), route in zip(exp.children, exp.routes, strict=True):
                    keep(cands, fp, child, path + bytes((idx,)), child_sleep)
                    routes[fp] = route
        yield from _batches(cands, routes, parts)
        yield index % parts, ("X", pickle.dumps(stats, protocol=5))
    return expand


class _Summaries:
    """A level's merges report to the driver through an accumulator (pyspark's AccumulatorParam, by its two
    methods): partition -> (new nodes, the expansion stats it received). Keyed by partition, so a task Spark runs
    twice reports once."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, value1: dict, value2: dict) -> dict:
        value1.update(value2)
        return value1


def make_merge(checkpoint: str | None, level: int, summaries: Any) -> Callable[[Records], RecordIter]:
    def merge(records: Records) -> RecordIter:
        vis = np.empty(0, np.int64)
        pidx = None
        cands: dict[int, list] = {}
        stats: list[bytes] = []
        for key, rec in records:
            pidx = key
            tag = rec[0]
            if tag == "V":
                vis = np.frombuffer(rec[1], np.int64)
            elif tag == "X":
                stats.append(rec[1])
            elif tag == "C":     # the level before's "F" and "S" (the visited side is its whole output) are not ours
                for fp, node, path, sleep in zip(np.frombuffer(rec[1], np.int64).tolist(), rec[2], rec[3], rec[4],
                                                 strict=True):
                    keep(cands, fp, node, path, sleep)
        if pidx is None:
            return
        new: list[int] = []
        if cands:
            fps = np.array(sorted(cands), np.int64)
            if len(vis):
                pos = np.searchsorted(vis, fps)
                pos[pos == len(vis)] = 0
                fps = fps[vis[pos] != fps]
            if len(fps):
                vis = np.sort(np.concatenate([vis, fps]))
                new = fps.tolist()
        frontier = ("F", np.array(new, np.int64).tobytes(), [cands[f][0] for f in new], [cands[f][1] for f in new],
                    [cands[f][2] for f in new])
        if checkpoint is not None:
            write_part(checkpoint, level, pidx, vis, frontier)
        summaries.add({pidx: (len(new), stats)})
        if new:
            yield pidx, frontier
        yield pidx, ("V", vis.tobytes())
    return merge


# --- the driver --------------------------------------------------------------------------------------
def bfs(spec: ExploreSpec, session: Any, partitions: int | None = None, checkpoint_dir: str | Path | None = None,
        resume: bool = False, progress: Callable[[Progress], None] | None = None,
        stop_after_level: int | None = None, startup_seconds: float = 0.0, driver_below: int = DRIVER_BELOW
        ) -> ExploreResult:
    """Breadth-first search on ``session``'s SparkContext; the same result as ``explore.local.bfs``. Levels
    with fewer than ``driver_below`` nodes are expanded on the driver (explore/spark/driver.py)."""
    sc = session.sparkContext
    checkpoint = str(Path(checkpoint_dir).resolve()) if checkpoint_dir is not None else None
    start = time.perf_counter()
    if resume:
        run = _resumed(spec, sc, checkpoint)
        start -= run.result.seconds
    else:
        run = _started(spec, sc, partitions or sc.defaultParallelism, checkpoint, start, driver_below,
                       stop_after_level, progress)
    run.result.startup_seconds = startup_seconds
    run.result.extra = {"partitions": run.parts, "master": sc.master}
    if run.frontier_size and run.level < spec.depth and not (stop_after_level is not None
                                                             and run.level >= stop_after_level):
        _spark_levels(spec, run, checkpoint, start, progress, stop_after_level)
    result = run.result
    result.complete = run.frontier_size == 0
    result.seconds = time.perf_counter() - start
    result.set_coverage(run.states, run.edges)
    return result


class _Run:
    """What the driver carries from level to level."""

    def __init__(self, result: ExploreResult, states: set[State], edges: set, parts: int, level: int,
                 frontier_size: int, visited: Any, frontier: Any) -> None:
        self.result, self.states, self.edges, self.parts = result, states, edges, parts
        self.level, self.frontier_size, self.visited, self.frontier = level, frontier_size, visited, frontier


def _resumed(spec: ExploreSpec, sc: Any, checkpoint: str | None) -> _Run:
    if checkpoint is None:
        raise CheckpointError("resume needs the checkpoint directory.")
    level = last_complete_level(checkpoint)
    if level is None:
        raise CheckpointError(f"no complete Spark level under {checkpoint}; run with --out {checkpoint} first.")
    saved = json.loads((level_dir(checkpoint, level) / "_SUCCESS.json").read_text())
    if saved.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{checkpoint} was written in another format ({saved.get('format')}, this kgc writes "
                              f"{CHECKPOINT_FORMAT}); start again with --out.")
    if not ExploreSpec.from_json(saved["spec"]).same_space(spec):
        raise CheckpointError(f"{checkpoint} holds another exploration; resume with the same options.")
    parts = saved["partitions"]
    with open(level_dir(checkpoint, level) / "result.pkl", "rb") as f:
        result, states, edges, frontier_size = pickle.load(f)
    result.spec, result.resumed_from_level = spec, level
    loaded = sc.parallelize(range(parts), parts).flatMap(
        lambda p, ck=checkpoint, lv=level: read_part(ck, lv, p)).partitionBy(parts, part_ident)
    loaded = loaded.persist(_storage())
    return _Run(result, states, edges, parts, level, frontier_size, loaded, loaded)


def _started(spec: ExploreSpec, sc: Any, parts: int, checkpoint: str | None, start: float, driver_below: int,
             stop_after_level: int | None, progress: Callable[[Progress], None] | None) -> _Run:
    """The root, and the levels the driver expands itself; then the RDDs the Spark levels go on from."""
    ex = Expander(spec)
    result = ExploreResult(spec, "spark", "bfs", states=1, levels=[1])
    result.add_root_violations(ex.root_violations)
    states: set[State] = set(ex.root_abstract_states)
    edges: set = set()
    warming = WarmUp(sc, json.dumps(spec.to_json(), sort_keys=True), parts)

    def stop(lv: int) -> bool:
        return stop_after_level is not None and lv >= stop_after_level

    level, frontier = 0, dict[int, list]()
    try:
        level, visited, frontier = driver_levels(
            spec, ex, result, (states, edges), driver_below, stop, progress,
            (checkpoint, parts) if checkpoint is not None else None, start, warming.start)
    finally:
        if frontier and level < spec.depth and not stop(level):
            warming.join()      # Spark's turn: the workers are (being) started
        else:
            warming.cancel()
    vis_rdd, front_rdd = to_rdds(sc, parts, visited, frontier, part_ident)
    return _Run(result, states, edges, parts, level, len(frontier), vis_rdd, front_rdd)


def _spark_levels(spec: ExploreSpec, run: _Run, checkpoint: str | None, start: float,
                  progress: Callable[[Progress], None] | None, stop_after_level: int | None) -> None:
    """One Spark job per level until the frontier is empty, the depth is reached or ``stop_after_level``."""
    spec_json, parts, result = json.dumps(spec.to_json(), sort_keys=True), run.parts, run.result
    prev = None
    while run.frontier_size and run.level < spec.depth:
        t_level = time.perf_counter()
        summaries = run.frontier.context.accumulator({}, _Summaries())
        cand = run.frontier.mapPartitionsWithIndex(make_expand(spec_json, parts)).partitionBy(parts, part_ident)
        out = run.visited.union(cand).mapPartitions(make_merge(checkpoint, run.level + 1, summaries), True)
        out.persist(_storage())
        if (run.level + 1) % LINEAGE_LEVELS == 0:
            out.localCheckpoint()
        out._jrdd.count()      # the level's job: the JVM counts the merges' batches, no Python pass over them
        if prev is not None:
            prev.unpersist()
        prev = out
        run.frontier_size = sum(n for n, _ in summaries.value.values())
        for pidx in sorted(summaries.value):
            for stats in summaries.value[pidx][1]:
                pickle.loads(stats).merge_into(result, run.states, run.edges)
        run.level += 1
        if run.frontier_size:
            result.levels.append(run.frontier_size)
        result.states += run.frontier_size
        result.level_seconds.append(time.perf_counter() - t_level)
        result.seconds = time.perf_counter() - start
        run.visited = run.frontier = out     # the expansion reads only "F" records, the merge "V" (and "C", "X")
        if checkpoint is not None:
            commit_level(checkpoint, run.level, spec, parts, result, run.states, run.edges, run.frontier_size)
        if progress is not None:
            progress(Progress(run.level, run.frontier_size, run.frontier_size, result.states, result.edges,
                              result.seconds))
        if stop_after_level is not None and run.level >= stop_after_level:
            break
    if prev is not None:
        prev.unpersist()


__all__ = ["bfs", "part_ident", "last_complete_level"]

"""The Spark engine: level-synchronous BFS with PySpark, the "rdd_blob" pattern of NOTES-spark.md §3.

Each record is a whole batch keyed by its partition index (the partitioner is the identity on the key,
one function object everywhere, so ``visited.union(candidates)`` of two equally partitioned RDDs is
a partition-aware union and visited is never shuffled):

- ``("V", fps)``: the visited fingerprints of one partition, a sorted int64 array;
- ``("F", fps, nodes, paths, sleeps)``: the new frontier of one partition (nodes first reached at this level);
- ``("C", …)``: candidates, the successors one expansion task routes to a partition (deduplicated map-side);
- ``("S", stats)``: what an expansion task counted (edges, violations, witnesses, coverage).

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
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from explore.local import CheckpointError, Progress, absorb, keep
from explore.result import ExploreResult, merge_found
from explore.space import Expander, ExploreSpec
from model.state import State

LINEAGE_LEVELS = 10
EMPTY = np.empty(0, np.int64).tobytes()
CHECKPOINT_FORMAT = "kgc-explore-spark-checkpoint/1"

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
    return found


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


def _batches(cands: dict[int, list], parts: int) -> Iterator[tuple[int, tuple]]:
    routed: list[list[int]] = [[] for _ in range(parts)]
    for fp in cands:
        routed[fp % parts].append(fp)
    for o, fps in enumerate(routed):
        if fps:
            yield o, ("C", np.array(fps, np.int64).tobytes(), [cands[f][0] for f in fps],
                      [cands[f][1] for f in fps], [cands[f][2] for f in fps])


def make_expand(spec_json: str, parts: int) -> Callable[[int, Records], RecordIter]:
    def expand(index: int, records: Records) -> RecordIter:
        ex = _expander(spec_json)
        stats = Stats(ex.spec)
        cands: dict[int, list] = {}
        for _key, rec in records:
            if rec[0] != "F":
                continue
            for node, path, sleep in zip(rec[2], rec[3], rec[4], strict=True):
                exp = ex.expand(node, sleep)
                absorb(stats.result, stats.states, stats.edges, exp, tuple(path))
                for idx, fp, child, child_sleep in exp.children:
                    keep(cands, fp, child, path + bytes((idx,)), child_sleep)
        yield from _batches(cands, parts)
        yield index % parts, ("S", pickle.dumps(stats, protocol=5))
    return expand


def make_merge(checkpoint: str | None, level: int) -> Callable[[Records], RecordIter]:
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
            elif tag == "S":
                stats.append(rec[1])
            elif tag in ("C", "F"):
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
            _write_part(checkpoint, level, pidx, vis, frontier)
        if new:
            yield pidx, frontier
        yield pidx, ("V", vis.tobytes())
        for s in stats:
            yield pidx, ("S", s)
    return merge


# --- Parquet checkpoints -------------------------------------------------------------------------
def _level_dir(checkpoint: str | Path, level: int) -> Path:
    return Path(checkpoint) / f"level-{level:04d}"


def _write_part(checkpoint: str, level: int, pidx: int, vis: np.ndarray, frontier: tuple) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    directory = _level_dir(checkpoint, level)
    directory.mkdir(parents=True, exist_ok=True)
    n = len(frontier[2])
    table = pa.table({
        "kind": pa.array(["V"] * len(vis) + ["F"] * n, pa.string()),
        "fp": pa.array(np.concatenate([vis, np.frombuffer(frontier[1], np.int64)]), pa.int64()),
        "node": pa.array([None] * len(vis) + frontier[2], pa.binary()),
        "path": pa.array([None] * len(vis) + frontier[3], pa.binary()),
        "sleep": pa.array([None] * len(vis) + [pickle.dumps(s, protocol=5) for s in frontier[4]], pa.binary()),
    })
    tmp = directory / f".part-{pidx:05d}.parquet.tmp"
    pq.write_table(table, tmp)
    tmp.replace(directory / f"part-{pidx:05d}.parquet")


def _read_part(checkpoint: str, level: int, pidx: int) -> Iterator[tuple[int, tuple]]:
    import pyarrow.parquet as pq
    table = pq.read_table(_level_dir(checkpoint, level) / f"part-{pidx:05d}.parquet").to_pydict()
    vis = [fp for fp, kind in zip(table["fp"], table["kind"], strict=True) if kind == "V"]
    rows = [i for i, kind in enumerate(table["kind"]) if kind == "F"]
    if rows:
        fps = np.array([table["fp"][i] for i in rows], np.int64).tobytes()
        yield pidx, ("F", fps, [table["node"][i] for i in rows], [table["path"][i] for i in rows],
                     [pickle.loads(table["sleep"][i]) for i in rows])
    yield pidx, ("V", np.array(vis, np.int64).tobytes())


def last_complete_level(checkpoint: str | Path) -> int | None:
    levels = sorted(int(p.parent.name.split("-")[1]) for p in Path(checkpoint).glob("level-*/_SUCCESS.json"))
    return levels[-1] if levels else None


# --- the driver --------------------------------------------------------------------------------------
def bfs(spec: ExploreSpec, session: Any, partitions: int | None = None, checkpoint_dir: str | Path | None = None,
        resume: bool = False, progress: Callable[[Progress], None] | None = None,
        stop_after_level: int | None = None, startup_seconds: float = 0.0) -> ExploreResult:
    """Breadth-first search on ``session``'s SparkContext; the same result as ``explore.local.bfs``."""
    sc = session.sparkContext
    parts = partitions or sc.defaultParallelism
    spec_json = json.dumps(spec.to_json(), sort_keys=True)
    checkpoint = str(Path(checkpoint_dir).resolve()) if checkpoint_dir is not None else None
    start = time.perf_counter()
    if resume:
        if checkpoint is None:
            raise CheckpointError("resume needs the checkpoint directory.")
        level = last_complete_level(checkpoint)
        if level is None:
            raise CheckpointError(f"no complete Spark level under {checkpoint}; run with --out {checkpoint} first.")
        saved = json.loads((_level_dir(checkpoint, level) / "_SUCCESS.json").read_text())
        if saved.get("format") != CHECKPOINT_FORMAT or not ExploreSpec.from_json(saved["spec"]).same_space(spec):
            raise CheckpointError(f"{checkpoint} holds another exploration; resume with the same options.")
        parts = saved["partitions"]
        with open(_level_dir(checkpoint, level) / "result.pkl", "rb") as f:
            result, states, edges, frontier_size = pickle.load(f)
        result.spec, result.resumed_from_level = spec, level
        start -= result.seconds
        loaded = sc.parallelize(range(parts), parts).flatMap(
            lambda p, ck=checkpoint, lv=level: _read_part(ck, lv, p)).partitionBy(parts, part_ident)
        loaded = loaded.persist(_storage())
        visited = loaded.filter(lambda kv: kv[1][0] == "V")
        frontier = loaded.filter(lambda kv: kv[1][0] == "F")
    else:
        ex = Expander(spec)
        root_fp = ex.root_fp
        result = ExploreResult(spec, "spark", "bfs", states=1, levels=[1])
        result.add_root_violations(ex.root_violations)
        states, edges = set(ex.root_abstract_states), set()
        level, frontier_size = 0, 1
        visited = sc.parallelize([(o, ("V", np.array([root_fp] if o == root_fp % parts else [], np.int64).tobytes()))
                                  for o in range(parts)], parts).partitionBy(parts, part_ident)
        frontier = sc.parallelize([(root_fp % parts, ("F", np.array([root_fp], np.int64).tobytes(), [ex.root], [b""],
                                                      [frozenset() if spec.por else None]))], 1)
    result.startup_seconds = startup_seconds
    result.extra = {"partitions": parts, "master": sc.master}
    prev = None
    while frontier_size and level < spec.depth:
        t_level = time.perf_counter()
        expand = make_expand(spec_json, parts)
        cand = frontier.mapPartitionsWithIndex(expand).partitionBy(parts, part_ident)
        out = visited.union(cand).mapPartitions(make_merge(checkpoint, level + 1), True).persist(_storage())
        if (level + 1) % LINEAGE_LEVELS == 0:
            out.localCheckpoint()
        summary = out.filter(lambda kv: kv[1][0] != "V").map(
            lambda kv: ("F", len(kv[1][2])) if kv[1][0] == "F" else ("S", kv[1][1])).collect()
        if prev is not None:
            prev.unpersist()
        prev = out
        frontier_size = 0
        for tag, value in summary:
            if tag == "F":
                frontier_size += value
            else:
                pickle.loads(value).merge_into(result, states, edges)
        level += 1
        if frontier_size:
            result.levels.append(frontier_size)
        result.states += frontier_size
        result.level_seconds.append(time.perf_counter() - t_level)
        result.seconds = time.perf_counter() - start
        visited = out.filter(lambda kv: kv[1][0] == "V")
        frontier = out.filter(lambda kv: kv[1][0] == "F")
        if checkpoint is not None:
            _commit_level(checkpoint, level, spec, parts, result, states, edges, frontier_size)
        if progress is not None:
            progress(Progress(level, frontier_size, frontier_size, result.states, result.edges, result.seconds))
        if stop_after_level is not None and level >= stop_after_level:
            break
    result.complete = frontier_size == 0
    result.seconds = time.perf_counter() - start
    result.set_coverage(states, edges)
    if prev is not None:
        prev.unpersist()
    return result


def _commit_level(checkpoint: str, level: int, spec: ExploreSpec, parts: int, result: ExploreResult,
                  states: set[State], edges: set, frontier_size: int) -> None:
    """After every part of ``level`` is written: the driver's counters, then the success marker; older
    levels are removed (the run resumes from the newest complete one)."""
    directory = _level_dir(checkpoint, level)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "result.pkl", "wb") as f:
        pickle.dump((result, states, edges, frontier_size), f, protocol=5)
    marker = {"format": CHECKPOINT_FORMAT, "spec": spec.to_json(), "partitions": parts, "level": level,
              "states": result.states, "edges": result.edges, "frontier": frontier_size}
    (directory / "_SUCCESS.json").write_text(json.dumps(marker, sort_keys=True) + "\n")
    for old in Path(checkpoint).glob("level-*"):
        if old != directory and old.name < directory.name:
            shutil.rmtree(old, ignore_errors=True)


__all__ = ["bfs", "part_ident", "last_complete_level"]

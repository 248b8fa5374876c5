"""The Spark engine's per-level checkpoints: each partition's visited set and frontier as Parquet
(``level-NNNN/part-PPPPP.parquet``), then the driver's counters and ``_SUCCESS.json``; a run resumes from
the newest level that has the marker. Written by the merge tasks, or by the driver for the levels it
expands itself (explore/spark/driver.py)."""
from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path
from typing import Iterator

import numpy as np

from explore.result import ExploreResult
from explore.space import ExploreSpec
from model.state import State

#: /2: partitions by route (/1 by fingerprint: its parts cannot be merged with /2 candidates)
CHECKPOINT_FORMAT = "kgc-explore-spark-checkpoint/2"

def level_dir(checkpoint: str | Path, level: int) -> Path:
    return Path(checkpoint) / f"level-{level:04d}"

def write_part(checkpoint: str, level: int, pidx: int, vis: np.ndarray, frontier: tuple) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    directory = level_dir(checkpoint, level)
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

def read_part(checkpoint: str, level: int, pidx: int) -> Iterator[tuple[int, tuple]]:
    import pyarrow.parquet as pq
    table = pq.read_table(level_dir(checkpoint, level) / f"part-{pidx:05d}.parquet").to_pydict()
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

def commit_level(checkpoint: str, level: int, spec: ExploreSpec, parts: int, result: ExploreResult,
                  states: set[State], edges: set, frontier_size: int) -> None:
    """After every part of ``level`` is written: the driver's counters, then the success marker; older
    levels are removed (the run resumes from the newest complete one)."""
    directory = level_dir(checkpoint, level)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "result.pkl", "wb") as f:
        pickle.dump((result, states, edges, frontier_size), f, protocol=5)
    marker = {"format": CHECKPOINT_FORMAT, "spec": spec.to_json(), "partitions": parts, "level": level,
              "states": result.states, "edges": result.edges, "frontier": frontier_size}
    (directory / "_SUCCESS.json").write_text(json.dumps(marker, sort_keys=True) + "\n")
    for old in Path(checkpoint).glob("level-*"):
        if old != directory and old.name < directory.name:
            shutil.rmtree(old, ignore_errors=True)


__all__ = ["CHECKPOINT_FORMAT", "commit_level", "last_complete_level", "level_dir", "read_part", "write_part"]

"""Exploration throughput and depth, before (a git revision) and after (the working tree), side by side; prints JSON.

    python bench/explore.py                       # before = merge-base with main, after = this tree
    python bench/explore.py --budget 600          # the issue's figure: depth reached in 10 minutes
    python bench/explore.py --parts core,machine  # only some measurements
    python bench/explore.py --out bench/results/explore-before-after.json
    python bench/explore.py --rounds 3            # core and machine 3 times, alternately; the median run is kept
    python bench/explore.py --symmetry --parts budget --budget 600   # the after code explores orbits

Space: profile 3.9 (``--profile``), 3 Java consumers, exploration scope "basic" (explore/scopes.py: fault-free, leaves
and rejoins, the clock moves to the next deadline, horizon 60 s; ``--scope`` picks another), BFS, no POR.
Parts, each run for the before code and the after code in their own process, alternately (the
machine's noise hits both):

- ``core``: distinct states/s of the local engine on one process at full checking (every catalog
  property, monitors, refinement), BFS to ``--depth`` (default 12: 27,086 states unreduced);
- ``machine``: the same BFS with ``--workers 2`` (when the code has it) and on Spark ``local[2]``
  (2 partitions; wall time excludes the session start-up, which is reported apart);
- ``budget``: the deepest BFS level completed exhaustively within ``--budget`` seconds (default 120 on
  a shared box; the issue asks 600) with the fastest local configuration each code has (``--workers 2``
  when available, else one process), and the states/s over that run.

``--symmetry``: the after code explores with ``ExploreSpec.symmetry`` (one state per orbit of client exchanges,
every client sending client.id "consumer", explore/canonical.py), the before code the space as it is; its states are
orbits, so compare depth (``budget``) and seconds to the same depth, not states/s.

"Before" is a ``git archive`` of the revision unpacked into a temporary directory; both sides run this
script's measuring code with that tree first on sys.path. A benchmark, not a test: nothing asserts on time.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MEMBERS, DEPTH, BUDGET_S = 3, 12, 120.0
SCOPE = os.environ.get("KGC_BENCH_SCOPE", "basic")    # set by --scope for the measuring processes
PROFILE = os.environ.get("KGC_BENCH_PROFILE", "3.9")  # set by --profile for the measuring processes
SYMMETRY = False                                      # set by the hidden --symmetric in the after side's process


class _Budget(Exception):
    pass


def _spec(depth: int) -> Any:
    from explore.scopes import get_scope
    from explore.space import ExploreSpec
    if SYMMETRY:
        from dataclasses import replace
        return ExploreSpec(PROFILE, MEMBERS, depth, replace(get_scope(SCOPE), client_id="consumer"), symmetry=True)
    return ExploreSpec(PROFILE, MEMBERS, depth, get_scope(SCOPE))


def _has_workers() -> bool:
    import inspect

    from explore.local import bfs
    return "workers" in inspect.signature(bfs).parameters


def _local(depth: int, workers: int) -> dict[str, Any]:
    from explore.local import bfs
    if workers > 1 and not _has_workers():
        return {"available": False}
    spec = _spec(depth)
    result = bfs(spec, workers=workers) if workers > 1 else bfs(spec)
    return {"states": result.states, "edges": result.edges, "levels": result.levels,
            "seconds": round(result.seconds, 2),
            "states_per_s": round(result.states_per_second), "violations": sorted(result.violations),
            "abstract": [result.abstract_states, result.abstract_edges]}


def _spark(depth: int) -> dict[str, Any]:
    from explore.spark import engine
    from explore.spark.session import spark_session
    session, startup, _ = spark_session("local[2]", partitions=2, app_name="kgc-bench")
    try:
        result = engine.bfs(_spec(depth), session, partitions=2, startup_seconds=startup)
    finally:
        session.stop()
    return {"states": result.states, "edges": result.edges, "seconds": round(result.seconds, 2),
            "startup_s": round(startup, 2), "states_per_s": round(result.states_per_second),
            "violations": sorted(result.violations)}


def _budget(budget_s: float) -> dict[str, Any]:
    """Deepest level completed within ``budget_s`` (BFS to depth 60, stopped when the budget runs out)."""
    from explore.local import bfs
    workers = 2 if _has_workers() else 1
    done: list[tuple[int, int, float]] = []     # (level, states, elapsed) at the end of each level
    start = time.perf_counter()

    def tick(p: Any) -> None:
        elapsed = time.perf_counter() - start
        if p.level_done == p.level_total and (not done or done[-1][0] != p.level):
            if elapsed <= budget_s:
                done.append((p.level, p.states, elapsed))
        if elapsed > budget_s:
            raise _Budget()
    try:
        if workers > 1:
            bfs(_spec(60), progress=tick, workers=workers)
        else:
            bfs(_spec(60), progress=tick)
    except _Budget:
        pass
    level, states, elapsed = done[-1] if done else (0, 1, 0.0)
    return {"budget_s": budget_s, "workers": workers, "depth_reached": level, "states": states,
            "seconds": round(elapsed, 1), "states_per_s": round(states / elapsed) if elapsed else 0}


def run_part(part: str, depth: int, budget_s: float) -> dict[str, Any]:
    if part == "core":
        return _local(depth, 1)
    if part == "workers2":
        return _local(depth, 2)
    if part == "spark2":
        return _spark(depth)
    return _budget(budget_s)


# --- the driver ---------------------------------------------------------------------------------------
def _unpack(rev: str, into: Path) -> str:
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", sha], capture_output=True,
                             check=True).stdout
    tar_path = into / "src.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into / "src", filter="data")
    return sha


def _measure(code: Path, part: str, depth: int, budget_s: float, symmetric: bool = False) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--part", part, "--code", str(code), "--depth", str(depth),
                          "--budget", str(budget_s)] + (["--symmetric"] if symmetric else []),
                         capture_output=True, text=True, env=env, cwd=code)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    found = json.loads(out.stdout.strip().splitlines()[-1])
    found["process_wall_s"] = round(time.perf_counter() - t0, 1)
    return found


def _ratio(after: dict[str, Any], before: dict[str, Any], key: str = "states_per_s") -> float | None:
    a, b = after.get(key), before.get(key)
    return round(a / b, 2) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=None, help="git revision measured as 'before' (default: merge-base with main)")
    ap.add_argument("--depth", type=int, default=DEPTH, help=f"BFS depth of the core and machine parts ({DEPTH})")
    ap.add_argument("--budget", type=float, default=BUDGET_S, help=f"seconds for the depth part ({BUDGET_S:g}; "
                                                                    "the issue's figure is 600)")
    ap.add_argument("--scope", default="basic", help="exploration scope (default basic, the issue's)")
    ap.add_argument("--profile", default="3.9", help="release profile (default 3.9; a profile the 'before' code "
                                                     "lacks reports an error there: use --before HEAD)")
    ap.add_argument("--parts", default="core,machine,budget",
                    help="comma list of core, machine (= workers2,spark2), budget")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each part but budget, alternately (1); the run with "
                                                          "the median states/s is reported, all states/s listed")
    ap.add_argument("--symmetry", action="store_true", help="the after code explores one state per orbit of client "
                                                            "exchanges (compare depth and seconds, not states/s)")
    ap.add_argument("--symmetric", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--code", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ["KGC_BENCH_SCOPE"] = args.scope
    os.environ["KGC_BENCH_PROFILE"] = args.profile
    if args.part:
        global SYMMETRY
        SYMMETRY = args.symmetric
        sys.path.insert(0, args.code)
        print(json.dumps(run_part(args.part, args.depth, args.budget)))
        return
    before = args.before or subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
                                           capture_output=True, text=True, check=True).stdout.strip()
    parts = [p for name in args.parts.split(",")
             for p in {"core": ["core"], "machine": ["workers2", "spark2"], "workers2": ["workers2"],
                                "spark2": ["spark2"], "budget": ["budget"]}[name]]
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, check=True).stdout.strip())
    figures: dict[str, Any] = {
        "space": {"profile": args.profile, "members": MEMBERS, "scope": args.scope, "depth": args.depth, "por": False,
                  "after_symmetry": args.symmetry},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_avg_at_start": [round(x, 2) for x in os.getloadavg()]},
        "command": " ".join([Path(sys.executable).name, "bench/explore.py", *sys.argv[1:]]),
    }
    with tempfile.TemporaryDirectory(prefix="kgc-bench-before-") as tmp:
        sha = _unpack(before, Path(tmp))
        figures["before"] = {"revision": sha}
        figures["after"] = {"revision": head + ("+working tree" if dirty else "")}
        for part in parts:
            runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
            for _round in range(1 if part == "budget" else max(1, args.rounds)):
                for side, code in (("before", Path(tmp) / "src"), ("after", ROOT)):
                    symmetric = args.symmetry and side == "after"
                    runs[side].append(found := _measure(code, part, args.depth, args.budget, symmetric))
                    print(f"{side} {part}: {found}", file=sys.stderr, flush=True)
            for side, found_runs in runs.items():
                ranked = sorted(found_runs, key=lambda f: f.get("states_per_s", 0))
                figures[side][part] = dict(ranked[len(ranked) // 2])
                if len(found_runs) > 1:
                    figures[side][part]["states_per_s_each_round"] = [f.get("states_per_s") for f in found_runs]
    b, a = figures["before"], figures["after"]
    figures["ratios_after_over_before"] = {p: _ratio(a[p], b[p]) for p in parts if p != "budget"}
    # the reduction explores fewer states for the same depth: time to the same depth is the fairer figure
    figures["speedup_to_the_same_depth"] = {p: _ratio(b[p], a[p], "seconds") for p in parts
                                            if p != "budget" and "seconds" in a[p] and "seconds" in b[p]}
    if "budget" in parts:
        figures["levels_gained_in_budget"] = a["budget"].get("depth_reached", 0) - b["budget"].get("depth_reached", 0)
    figures["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

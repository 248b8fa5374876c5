"""Exploration throughput: local engine on one core vs the Spark engine on local[1] and local[2]; prints JSON.

    python bench/explore.py                      # the named scope "bench-1m" (≥ 10^6 distinct states)
    python bench/explore.py --depth 12           # a smaller run of the same scope
    python bench/explore.py --parts local,spark2 # only some measurements

Scope "bench-1m": profile 3.9, 3 Java consumers, exploration scope "basic" (explore/scopes.py: fault-free,
leaves and rejoins, clock moves to the next deadline, horizon 60 s), BFS to depth 18 (1,832,354 nodes),
no POR. Each measurement runs in its own process so peak memory is its own: ``peak_rss_mib`` is the largest resident
set (VmHWM) of the Python driver, of the JVM and the sum over the Python worker processes below it (Spark).
Per-level overhead ("overhead" part) is the median wall time of the levels after the first (which
also starts the Python workers) of a Spark local[2] BFS over a space whose levels hold 1–12 nodes
(1 consumer, no leaves or rejoins, depth 10): their expansion work is a few milliseconds, so the
time is Spark's fixed cost per level. ``median_small_level_s`` is the same figure read off the big
run's levels with ≤ 50 nodes (first level included).
A benchmark, not a test: nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explore.scopes import get_scope  # noqa: E402
from explore.space import ExploreSpec  # noqa: E402

SCOPE_NAME, MEMBERS, DEPTH = "bench-1m", 3, 18
OVERHEAD_DEPTH = 10


def spec_for(depth: int) -> ExploreSpec:
    return ExploreSpec("3.9", MEMBERS, depth, get_scope("basic"))


def _vm_hwm_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc), alive at the time of the call."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _small_level_overhead(levels: list[int], seconds: list[float]) -> float | None:
    # level_seconds[i] expands the frontier of level i (levels[i] nodes)
    small = [s for n, s in zip(levels, seconds, strict=False) if n <= 50]
    return round(statistics.median(small), 3) if small else None


def overhead_spec() -> ExploreSpec:
    """A space whose first levels hold 1–12 nodes: their wall time is Spark's fixed cost per level."""
    return ExploreSpec("3.9", 1, OVERHEAD_DEPTH, replace(get_scope("basic"), leaves=False, rejoins=False))


def run_overhead() -> dict[str, object]:
    from explore.spark import engine
    from explore.spark.session import spark_session
    session, startup, _ = spark_session("local[2]", partitions=2, app_name="kgc-bench-overhead")
    result = engine.bfs(overhead_spec(), session, partitions=2)
    session.stop()
    steady = result.level_seconds[1:]             # level 0 also warms the Python workers up (2–3 s)
    return {"part": "overhead", "executor_cores": 2, "startup_s": round(startup, 2), "levels": result.levels,
            "first_level_s": round(result.level_seconds[0], 3), "median_level_s": round(statistics.median(steady), 3),
            "min_level_s": round(min(steady), 3), "level_seconds": [round(x, 3) for x in result.level_seconds]}


def run_part(part: str, depth: int) -> dict[str, object]:
    if part == "overhead":
        return run_overhead()
    spec = spec_for(depth)
    if part == "local":
        from explore.local import bfs
        result = bfs(spec)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return {"part": part, "states": result.states, "edges": result.edges, "levels": len(result.levels) - 1,
                "seconds": round(result.seconds, 2), "states_per_s": round(result.states_per_second),
                "peak_rss_mib": {"python": round(rss)}, "counts": result.counts()}
    cores = int(part[-1])
    from explore.spark import engine
    from explore.spark.session import spark_session
    session, startup, _ = spark_session(f"local[{cores}]", partitions=cores, driver_memory="8g",
                                        app_name=f"kgc-bench-{part}")
    result = engine.bfs(spec, session, partitions=cores, startup_seconds=startup)
    jvm = session.sparkContext._gateway.proc.pid   # the JVM py4j launched
    jvm_rss = _vm_hwm_mib(jvm)
    workers_rss = sum(_vm_hwm_mib(pid) for pid in _descendants(jvm))   # the pyspark daemon and its workers
    session.stop()
    return {"part": part, "executor_cores": cores, "states": result.states, "edges": result.edges,
            "levels": len(result.levels) - 1, "seconds": round(result.seconds, 2),
            "states_per_s": round(result.states_per_second), "startup_s": round(startup, 2),
            "level_seconds": [round(s, 3) for s in result.level_seconds],
            "median_small_level_s": _small_level_overhead(result.levels, result.level_seconds),
            "peak_rss_mib": {"python_driver": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                             "python_workers": round(workers_rss),
                             "jvm": round(jvm_rss)},
            "counts": result.counts()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=DEPTH)
    ap.add_argument("--parts", default="overhead,local,spark1,spark2",
                    help="comma list of overhead, local, spark1, spark2")
    ap.add_argument("--part", help=argparse.SUPPRESS)      # internal: run one measurement in this process
    args = ap.parse_args()
    if args.part:
        print(json.dumps(run_part(args.part, args.depth)))
        return
    results = {}
    for part in args.parts.split(","):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "--part", part, "--depth", str(args.depth)],
                             capture_output=True, text=True, check=True)
        results[part] = json.loads(out.stdout.strip().splitlines()[-1])
        results[part]["process_wall_s"] = round(time.perf_counter() - t0, 1)
        r = results[part]
        done = (f"median level {r['median_level_s']} s" if part == "overhead"
                else f"{r['states']:,} states in {r['seconds']} s")
        print(f"{part}: {done}", file=sys.stderr)
    counts = [r.pop("counts") for r in results.values() if "counts" in r]
    figures: dict[str, object] = {
        "scope": {"name": SCOPE_NAME if args.depth == DEPTH else f"{SCOPE_NAME} at depth {args.depth}",
                  **spec_for(args.depth).to_json()},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "engines_agree": all(c == counts[0] for c in counts),
        **results,
    }
    if "local" in results and "spark2" in results:
        figures["spark2_over_local"] = round(results["spark2"]["states_per_s"] / results["local"]["states_per_s"], 2)
    if "spark1" in results and "spark2" in results:
        one, two = results["spark1"]["states_per_s"], results["spark2"]["states_per_s"]
        figures["scaling_1_to_2_executors"] = round(two / one, 2)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

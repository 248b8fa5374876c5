"""Benchmark of the abstract model on one core; prints JSON figures (not a test).

    python bench/model.py [--members 3 4] [--profile 3.9] [--repeat 1]

Figures, per profile and member-slot count (default scope flags: deferred appends, initial delay,
max_appends 2):
  graph      build time, states, edges, states/s and edges/s of model.graph.build
  analysis   time of each analysis in model.analysis on that graph, and of analyse() as a whole
  z3         the Z3 proof of the abstract invariants (members uninterpreted): total and per-invariant
             seconds with each verdict (BMC times: bench/prove.py)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.analysis import ASSUMPTIONS, analyse, cannot_settle, deadlocks, fair_cycles, used_actions  # noqa: E402
from model.graph import build  # noqa: E402
from model.state import Scope  # noqa: E402


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time of ``repeat`` runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def graph_figures(profile: str, members: int, repeat: int) -> dict[str, Any]:
    seconds, g = _timed(lambda: build(Scope(members=members), profile), repeat)
    states, edges = g.number_of_nodes(), g.number_of_edges()
    analyses = {"deadlocks": _timed(lambda: deadlocks(g), repeat)[0],
                "cannot_settle": _timed(lambda: cannot_settle(g), repeat)[0],
                "used_actions": _timed(lambda: used_actions(g), repeat)[0]}
    for a in ASSUMPTIONS:
        analyses[f"fair_cycles/{a.name}"] = _timed(lambda a=a: fair_cycles(g, a), repeat)[0]
    analyses["analyse"] = _timed(lambda: analyse(g), repeat)[0]
    return {"build_s": round(seconds, 3), "states": states, "edges": edges, "depth": g.graph["depth"],
            "states_per_s": round(states / seconds), "edges_per_s": round(edges / seconds),
            "analysis_s": {k: round(v, 4) for k, v in analyses.items()}}


def z3_figures(profile: str) -> dict[str, Any] | None:
    """Proof time of every abstract invariant of ``profile`` (kgc prove), per invariant and in total."""
    from properties.z3.prove import prove
    start = time.perf_counter()
    results = prove(profile)
    return {"prove_s": round(time.perf_counter() - start, 2),
            "per_invariant_s": {r.invariant: {"status": r.status, "seconds": round(r.seconds, 3)} for r in results}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", type=int, nargs="+", default=[3, 4], help="member-slot counts (default 3 4)")
    ap.add_argument("--profile", action="append", help="profile(s) to measure (default: 0.10.0 and 3.9)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure; the best time is kept")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})   # one core
    results: dict[str, Any] = {}
    for profile in args.profile or ["0.10.0", "3.9"]:
        results[profile] = {"graph": {f"members={n}": graph_figures(profile, n, args.repeat) for n in args.members},
                            "z3": z3_figures(profile)}
    print(json.dumps({"bench": "model", "python": platform.python_version(), "cores": 1,
                      "scope": "deferred appends, initial delay, max_appends 2", "results": results}, indent=2))


if __name__ == "__main__":
    main()

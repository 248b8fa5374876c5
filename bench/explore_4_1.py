"""Profile 4.1 explored at several sizes, every edge judged by its runtime rules; prints one JSON line per run.

    python bench/explore_4_1.py [--runs NAME,NAME] [--unexcuse]

Each run is the local engine's BFS (explore/local.py, one process) of a named space below; with ``--unexcuse``
the documented findings R9 and R10 (properties/findings.py) are not excused, so their rules report them where the
search reaches them — the other rules are judged the same either way (a rule's verdict does not change the space).
Figures for bench/results/explore-4.1-2026-11-28.md; the seconds are wall-clock and depend on the machine's load.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explore.local import bfs                                      # noqa: E402
from explore.scopes import get_scope                               # noqa: E402
from explore.space import ExploreSpec                              # noqa: E402
from harness.excuses import unexcused                              # noqa: E402
from properties.runtime_4x import R9_FINDING, R10_FINDING          # noqa: E402

#: the gate's explore phase on 4.1 (kgc/gate.py runtime_explore_phase) and deeper settings
RUNS: dict[str, ExploreSpec] = {
    "gate-basic-3-10": ExploreSpec("4.1", 3, 10, get_scope("basic")),
    "gate-faults-2-8": ExploreSpec("4.1", 2, 8, get_scope("faults")),
    "basic-3-12": ExploreSpec("4.1", 3, 12, get_scope("basic")),
    "basic-2-18": ExploreSpec("4.1", 2, 18, get_scope("basic")),
    "faults-2-11": ExploreSpec("4.1", 2, 11, get_scope("faults")),
    "faults-3-9": ExploreSpec("4.1", 3, 9, get_scope("faults")),
    "crashes-2-12": ExploreSpec("4.1", 2, 12, get_scope("crashes")),
    "unload-2-12": ExploreSpec("4.1", 2, 12, get_scope("unload")),
    # no LeaveGroup: R9's shortest counterexample (20 steps) within reach
    "basic-no-leaves-2-20": ExploreSpec("4.1", 2, 20, replace(get_scope("basic"), leaves=False)),
    # group.max.size 2 with three consumers (the gate's MAX_SIZE_WALKS world: where R10 lives)
    "max-size-3-12": ExploreSpec("4.1", 3, 12, replace(get_scope("basic"), append_mode="deferred", group_max_size=2,
                                                       group_initial_rebalance_delay_ms=0)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default=",".join(RUNS), help="comma-separated run names (default: all)")
    ap.add_argument("--unexcuse", action="store_true", help="report R9 and R10 where reached")
    args = ap.parse_args()
    for name in args.runs.split(","):
        spec = RUNS[name]
        start = time.perf_counter()
        with unexcused([R9_FINDING, R10_FINDING] if args.unexcuse else []):
            result = bfs(spec)
        print(json.dumps({"run": name, "unexcused": args.unexcuse, "members": spec.members, "depth": spec.depth,
                          "states": result.states, "edges": result.edges, "levels": result.levels,
                          "complete": result.complete,
                          "violations": {k: {"edges": v.count, "shortest": len(v.path), "message": v.message}
                                         for k, v in sorted(result.violations.items())},
                          "seconds": round(time.perf_counter() - start, 1)}), flush=True)


if __name__ == "__main__":
    main()

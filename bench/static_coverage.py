"""The gate's static-scope coverage alone (issue 27 item 5b): the static walks and the static sweep, as `kgc check` runs
them, per profile; prints JSON (coverage, steps, CPU seconds, uncovered edges by action and reason).

    python bench/static_coverage.py                               # 2.4.1, 2.7.0, 3.9 at the default budget share
    python bench/static_coverage.py --profile 3.9 --steps 30000   # another static sweep budget

The walk phase is reduced to its ``static`` walks (the only ones the static scope's coverage counts, kgc/gate.py
``walk_phase``), same seeds and steps as the gate at ``--budget`` (the gate's per-profile share: 300 s / 4 profiles).
Coverage is deterministic; the CPU seconds are this process's (``time.process_time``), not a gate timing.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explore.runs import parse_label  # noqa: E402
from explore.static_coverage import static_map  # noqa: E402
from harness.world import World  # noqa: E402
from kgc.directed import Coverage, report  # noqa: E402
from kgc.gate import STATIC_WALKS, Plan, static_phase, walk  # noqa: E402
from kgc.runs import CheckedRun  # noqa: E402


def measure(profile: str, budget: float, steps: int | None, seed: int) -> dict[str, object]:
    plan = Plan.for_budget(budget)
    if steps is not None:
        plan = replace(plan, static_steps=steps)
    scope, clients = STATIC_WALKS["static"]
    cov = Coverage(set(), set())
    t0 = time.process_time()
    for index in range(plan.walk_seeds):
        walk_seed = seed * 100003 + index
        run = CheckedRun(World(profile, scope, clients=clients, seed=walk_seed, record=True))
        walk(run, random.Random(walk_seed), plan.walk_steps, hold_static=True)
        assert not run.violations, run.violations[0]
        cov.add(run)
    t1 = time.process_time()
    smap = static_map(profile, scope)
    walked = len(cov.edges & smap.reachable_edges)
    t2 = time.process_time()
    phase, found = static_phase(profile, None, plan, seed, cov)
    t3 = time.process_time()
    rep = report(smap, cov)
    missing = [r for r in rep.uncovered if r[3].startswith("not reached")]
    return {"profile": profile, "static_steps": plan.static_steps, "found": None if found is None else
            f"{found.violation.property}: {found.violation.message}",
            "states": f"{rep.covered_states}/{rep.reachable_states}",
            "edges": f"{rep.covered_edges}/{rep.reachable_edges}",
            "percent": round(100.0 * rep.covered_edges / rep.reachable_edges, 1), "model_edges": rep.model_edges,
            "walk_edges": walked, "sweep_steps": phase.steps, "sweep_note": phase.note,
            "cpu_s": {"walks": round(t1 - t0, 1), "map": round(t2 - t1, 1), "sweep": round(t3 - t2, 1)},
            "missing_by_action": dict(Counter(parse_label(r[1])[0] + (f"[{parse_label(r[1])[2]}]"
                                                                      if parse_label(r[1])[2] else "")
                                              for r in missing).most_common()),
            "missing_by_reason": dict(Counter(r[3] for r in missing).most_common()),
            "excluded_by_reason": dict(Counter(r[3] for r in rep.uncovered if not r[3].startswith("not reached"))
                                       .most_common())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", action="append", default=[])
    ap.add_argument("--budget", type=float, default=75.0, help="the gate's per-profile share (default 75 s)")
    ap.add_argument("--steps", type=int, default=None, help="static sweep steps (default: the budget's)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for profile in args.profile or ["2.4.1", "2.7.0", "3.9"]:
        print(json.dumps(measure(profile, args.budget, args.steps, args.seed), indent=1), flush=True)


if __name__ == "__main__":
    main()

"""How fast the gate kills each seeded mutant; prints JSON (a benchmark, not a test).

    python bench/mutants.py [--budget SECONDS] [--mutant NAME ...]

Per (mutant, profile): whether it was killed, by which property and in which phase, seconds to the
first counterexample (search only), seconds including shrinking, and the trace length before and
after shrinking. The budget is per profile, as `kgc check` gives each profile its share.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from impl.mutants import all_mutants, get_mutant  # noqa: E402
from kgc import gate  # noqa: E402
from kgc.runs import shrink  # noqa: E402


def measure(name: str, profile: str, budget: float) -> dict[str, object]:
    plan = gate.Plan.for_budget(budget)
    t0 = time.perf_counter()
    _, found = gate.scenario_phase(profile, name)
    if found is None:
        _, found, _ = gate.walk_phase(profile, name, plan, 0)
    if found is None:
        _, found = gate.explore_phase(profile, name, plan)
    if found is None:
        _, found = gate.machine_phase(profile, name, plan)
    first = time.perf_counter() - t0
    if found is None:
        return {"mutant": name, "profile": profile, "killed": False, "search_s": round(first, 2)}
    before = len(found.trace.steps)
    if not found.phase.startswith(("machines", "explore")):
        deadline = time.perf_counter() + budget
        found = shrink(found, lambda: time.perf_counter() > deadline)
    return {"mutant": name, "profile": profile, "killed": True, "property": found.violation.property,
            "named_property": found.violation.property in get_mutant(name).catches, "phase": found.phase,
            "first_counterexample_s": round(first, 2), "with_shrinking_s": round(time.perf_counter() - t0, 2),
            "trace_steps_found": before, "trace_steps_shrunk": len(found.trace.steps)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=150.0, help="per-profile budget, as in kgc check (default 150)")
    ap.add_argument("--mutant", action="append", help="only these mutants (default: all)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    mutants = [get_mutant(n) for n in args.mutant] if args.mutant else all_mutants()
    rows = [measure(m.name, p, args.budget) for m in mutants for p in m.profiles]
    killed = [r for r in rows if r["killed"]]
    print(json.dumps({
        "bench": "mutants", "python": platform.python_version(), "budget_per_profile_s": args.budget,
        "killed": len(killed), "total": len(rows),
        "killed_by_named_property": sum(1 for r in killed if r["named_property"]),
        "median_first_counterexample_s": sorted(r["first_counterexample_s"] for r in killed)[len(killed) // 2]
        if killed else None,
        "max_shrunk_trace_steps": max((r["trace_steps_shrunk"] for r in killed), default=None),
        "results": rows}, indent=1))


if __name__ == "__main__":
    main()

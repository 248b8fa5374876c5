"""How fast the gate kills each seeded mutant; prints JSON (a benchmark, not a test).

    python bench/mutants.py [--budget SECONDS] [--mutant NAME ...]

Per (mutant, profile): whether the gate's run (kgc.gate.run_gate: every phase in order, then shrinking)
killed it, by which property and in which phase, seconds to the first counterexample, seconds including
shrinking, and the shrunk trace's length. The budget is per profile, as `kgc check` gives each profile its
share (75 s of the default 300 with four profiles).
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


def measure(name: str, profile: str, budget: float) -> dict[str, object]:
    """The gate's own run (every phase, in order, then shrinking) of mutant ``name`` on ``profile``."""
    t0 = time.perf_counter()
    first: list[float] = []

    def progress(phase: str) -> None:
        if phase.startswith("shrinking") and not first:
            first.append(time.perf_counter() - t0)

    result = gate.run_gate(profile, name, budget, 0, progress, None)
    found = result.found
    if found is None:
        return {"mutant": name, "profile": profile, "killed": False, "search_s": round(time.perf_counter() - t0, 2)}
    return {"mutant": name, "profile": profile, "killed": True, "property": found.violation.property,
            "named_property": found.violation.property in get_mutant(name).catches, "phase": found.phase,
            "first_counterexample_s": round(first[0] if first else time.perf_counter() - t0, 2),
            "with_shrinking_s": round(time.perf_counter() - t0, 2), "trace_steps_shrunk": len(found.trace.steps)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=150.0, help="per-profile budget, as in kgc check (default 150)")
    ap.add_argument("--mutant", action="append", help="only these mutants (default: all)")
    ap.add_argument("--profile", action="append", help="only these profiles (default: each mutant's own)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    mutants = [get_mutant(n) for n in args.mutant] if args.mutant else all_mutants()
    rows = [measure(m.name, p, args.budget) for m in mutants for p in m.profiles
            if not args.profile or p in args.profile]
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

"""Benchmark of the Z3 proofs and BMC; prints JSON figures (not a test).

    python bench/prove.py [--profile 3.9] [--depth 10] [--members 3]

Figures, per profile:
  prove_s               wall time of `prove(profile)` (symbolic step of every action + Houdini)
  prove_cpu_s           the same in CPU seconds of this process (the machine may be shared)
  per_invariant_s       Z3 time per invariant (initiation + consecution over every action), and its status
  bmc_s, bmc_cpu_s      `bmc(profile, members, depth)`, and the depth at which each finding showed up
Targets (issue 3): proofs < 60 s per profile; BMC depth 10 at 3 members < 60 s.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.profiles import MODEL_PROFILES  # noqa: E402
from properties.z3.bmc import bmc  # noqa: E402
from properties.z3.prove import prove  # noqa: E402


def _timed(fn):   # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2)


def figures(profile: str, depth: int, members: int) -> dict[str, object]:
    results, prove_s, prove_cpu = _timed(lambda: prove(profile))
    found, bmc_s, bmc_cpu = _timed(lambda: bmc(profile, members=members, depth=depth))
    return {
        "prove_s": prove_s, "prove_cpu_s": prove_cpu,
        "per_invariant_s": {r.invariant: {"status": r.status, "seconds": round(r.seconds, 3)} for r in results},
        "bmc_s": bmc_s, "bmc_cpu_s": bmc_cpu, "bmc_depth": depth, "bmc_members": members,
        "bmc_violations": {v.invariant: v.depth for v in found.violations},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", choices=sorted(MODEL_PROFILES), help="one profile (default: every profile)")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--members", type=int, default=3)
    args = ap.parse_args()
    profiles = [args.profile] if args.profile else sorted(MODEL_PROFILES)
    out = {"python": platform.python_version(), "machine": platform.machine(),
           "profiles": {p: figures(p, args.depth, args.members) for p in profiles}}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

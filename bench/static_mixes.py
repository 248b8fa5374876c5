"""Which properties break when dynamic and static clients share a group (issue 11, not yet judged); prints JSON.

    python bench/static_mixes.py                      # profile 3.9, 60 seeds × 400 steps per client mix
    python bench/static_mixes.py --profile 2.7.0 --seeds 20

Each mix walks the gate's static walk scope (kgc.gate.STATIC_WALKS["static"]) with the whole catalog and the
labelled refinement checked on every step (kgc.runs.CheckedRun), as the gate's walks do. Per mix, per property
broken first: how many seeds broke it, and the first seed's step and message. The gate's own static walk uses
static clients only; these mixes are what it leaves out.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.world import World  # noqa: E402
from kgc.gate import STATIC_WALKS  # noqa: E402
from kgc.runs import CheckedRun  # noqa: E402

MIXES = (("java", "static-adversarial", "static"), ("static", "static-adversarial", "java"),
         ("java", "java", "static-adversarial"))


def broken(profile: str, clients: tuple[str, ...], seeds: int, steps: int) -> dict[str, dict[str, object]]:
    scope, _ = STATIC_WALKS["static"]
    out: dict[str, dict[str, object]] = {}
    for seed in range(seeds):
        run = CheckedRun(World(profile, scope, clients=clients, seed=seed, record=True))
        rng = random.Random(seed)
        for _ in range(steps):
            choices = run.world.enabled()
            if not choices or run.over:
                break
            run.step(choices[rng.randrange(len(choices))])
        if run.violations:
            v = run.violations[0]
            entry = out.setdefault(v.property, {"seeds": 0, "first": {"seed": seed, "step": v.step,
                                                                      "message": v.message}})
            entry["seeds"] = int(entry["seeds"]) + 1   # type: ignore[call-overload]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="3.9")
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--steps", type=int, default=400)
    args = ap.parse_args()
    print(json.dumps({"profile": args.profile, "seeds": args.seeds, "steps": args.steps,
                      "mixes": {",".join(m): broken(args.profile, m, args.seeds, args.steps) for m in MIXES}},
                     indent=2))


if __name__ == "__main__":
    main()

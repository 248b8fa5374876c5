"""Which properties break when dynamic and static clients share a group (issue 11); prints JSON.

    python bench/static_mixes.py                      # profile 3.9, 60 seeds × 400 steps per client mix
    python bench/static_mixes.py --profile 2.7.0 --seeds 20

Each mix walks the gate's static walk scope (kgc.gate.STATIC_WALKS["static"]) with the whole catalog and the
labelled refinement checked on every step (kgc.runs.CheckedRun), as the gate's walks do. Per mix, per property
broken first: how many seeds broke it, and the first seed's step and message. The gate walks the third mix
(STATIC_WALKS["static-mixed"]). Judged on 2026-11-25 (issue 11): the two documented findings of mixed groups
(properties/findings.py: instance-id-with-a-pending-member-id-throws, leave-of-a-pending-member-id-ignores-its-
instance-id) are excused here as everywhere, and the model's LeaveGroup of a pending id on 3.x was corrected
(SPEC.md §3.4 [3.x]); ``--unexcuse NAME`` shows a finding again.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.excuses import unexcused  # noqa: E402
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
    ap.add_argument("--unexcuse", action="append", default=[], metavar="FINDING",
                    help="check the properties a documented finding breaks as if it were undocumented")
    args = ap.parse_args()
    with unexcused(args.unexcuse):
        mixes = {",".join(m): broken(args.profile, m, args.seeds, args.steps) for m in MIXES}
    print(json.dumps({"profile": args.profile, "seeds": args.seeds, "steps": args.steps, "unexcused": args.unexcuse,
                      "mixes": mixes}, indent=2))


if __name__ == "__main__":
    main()

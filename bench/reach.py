"""How many runs of each gate phase reach the situations issue 27 counts (explore/reach.py), per profile, at the
default budget: prints JSON ({profile: {phase: {situation: runs, "runs", "steps", "violation"}, "coverage": ...,
"static_coverage": ...}} — the coverage lines `kgc check` prints, from the same phases).

    .venv/bin/python bench/reach.py [--profile P ...] [--seed N] [--budget S]

It runs the gate's walks, directed sweep and static sweep (kgc/gate.py) exactly as ``kgc check`` does at the budget's
per-profile share, with every checked step also accounted for by explore.reach: a walk is one run, a sweep's try
(a fork of a kept run) another. The counts are figures (bench/results/reach-*.md), not test assertions; the
predicates are tested on hand-made runs (tests/test_reach.py).
"""
from __future__ import annotations

import argparse
import json
import sys
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import kgc.directed as directed  # noqa: E402
from explore.reach import SITUATIONS, Reach, track  # noqa: E402
from explore.static_coverage import static_map  # noqa: E402
from harness.abstraction import abstract  # noqa: E402
from kgc import gate  # noqa: E402
from kgc.directed import profile_map, report  # noqa: E402
from kgc.runs import CheckedRun  # noqa: E402
from model.releases import RUNNABLE, fact  # noqa: E402


class Tally:
    """Per phase, how many runs reached each situation (each run counted once per situation)."""

    def __init__(self) -> None:
        self.phase = ""
        self.counts: dict[str, Counter[str]] = {}
        self.reach: weakref.WeakKeyDictionary[CheckedRun, Reach] = weakref.WeakKeyDictionary()

    def of(self, run: CheckedRun) -> Reach:
        got = self.reach.get(run)
        if got is None:
            got = self.reach[run] = Reach()
        return got

    def step(self, run: CheckedRun, action: Any, original: Any) -> Any:
        world = run.world
        before = abstract(world.coord, world.group_id)
        out = original(run, action)
        reach = self.of(run)
        known = set(reach.reached)
        track(reach, world, before, action)
        for name in reach.reached - known:
            self.counts.setdefault(self.phase, Counter())[name] += 1
        return out


def measure(profile: str, budget: float, seed: int) -> dict[str, dict[str, Any]]:
    tally = Tally()
    original_step, original_fork = CheckedRun.step, directed.fork

    def step(run: CheckedRun, action: Any) -> Any:
        return tally.step(run, action, original_step)

    def fork(run: CheckedRun) -> CheckedRun:
        twin = original_fork(run)
        tally.reach[twin] = tally.of(run).fork()
        return twin

    CheckedRun.step, directed.fork = step, fork   # type: ignore[method-assign]
    try:
        plan = gate.Plan.for_budget(budget)
        cov, static_cov = gate.Coverage(set(), set()), gate.Coverage(set(), set())
        done = []
        tally.phase = "walks"
        done.append(gate.walk_phase(profile, None, plan, seed, cov,
                                    static_cov if fact("static-membership", profile) else None))
        tally.phase = "directed"
        done.append(gate.directed_phase(profile, None, plan, seed, cov))
        if fact("static-membership", profile):
            tally.phase = "static"
            done.append(gate.static_phase(profile, None, plan, seed, static_cov))
    finally:
        CheckedRun.step, directed.fork = original_step, original_fork   # type: ignore[method-assign]
    out: dict[str, dict[str, Any]] = {}
    for result, found in done:
        out[result.name] = {name: tally.counts.get(result.name, Counter())[name] for name in SITUATIONS}
        out[result.name].update(runs=result.runs, steps=result.steps,
                                violation=None if found is None else found.violation.property)
    # the coverage lines `kgc check` prints (the same phases add to them; explore and machines add nothing)
    out["coverage"] = _coverage(report(profile_map(profile, gate.WALK_SCOPES, gate.WALK_KINDS), cov))
    if fact("static-membership", profile):
        out["static_coverage"] = _coverage(report(static_map(profile, gate.STATIC_WALKS["static"][0]), static_cov))
    return out


def _coverage(rep: Any) -> dict[str, Any]:
    return {"states": [rep.covered_states, rep.reachable_states], "edges": [rep.covered_edges, rep.reachable_edges],
            "percent": round(100.0 * rep.covered_edges / max(rep.reachable_edges, 1), 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", action="append", choices=RUNNABLE)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=float, default=300.0, help="the gate's whole budget (default 300, four profiles)")
    args = p.parse_args()
    profiles = args.profile or list(RUNNABLE)
    share = args.budget / len(RUNNABLE)
    print(json.dumps({profile: measure(profile, share, args.seed) for profile in profiles}, indent=1))


if __name__ == "__main__":
    main()

"""PCT-style randomised schedules (Burckhardt et al., "A randomized scheduler with probabilistic
guarantees of finding bugs", ASPLOS 2010) for orderings deeper than BFS reaches.

The "threads" are the sources of actions: each client (its sends, the network's deliveries and drops
of its messages, its crash and restart), the timer, the clock, the log and the partition. A run
gives every source a random priority above ``d``, picks ``d - 1`` change points among the steps, and
at each step takes an action of the highest-priority source that has one (uniformly among that
source's actions); at the j-th change point the source just scheduled drops to priority j. A bug of
depth d (d ordering constraints) is found by one run with probability ≥ 1/(n·k^(d-1)) for n sources
and k steps. Every step is checked exactly as in BFS (``Expander.step_one``). Deterministic: run r
uses ``random.Random(seed * 1_000_003 + r)``.
"""
from __future__ import annotations

import random
import time
from typing import Callable

from core.actions import Action
from explore.local import Progress
from explore.result import ExploreResult, merge_found
from explore.space import Expander, Expansion, ExploreSpec


def source(action: Action) -> str:
    if action.client >= 0:
        return f"client{action.client}"
    return {"FireTimer": "timer", "CompleteAppend": "log", "UnloadGroup": "partition",
            "LoadGroup": "partition"}.get(action.kind, "clock")


def pct(spec: ExploreSpec, runs: int = 200, length: int = 60, bug_depth: int = 3, seed: int = 0,
        progress: Callable[[Progress], None] | None = None) -> ExploreResult:
    """``runs`` PCT schedules of at most ``length`` steps each (``spec.depth`` is not used)."""
    if runs < 1 or length < 1 or bug_depth < 1:
        raise ValueError("pct needs runs, length and bug depth of at least 1.")
    expander = Expander(spec)
    start = time.perf_counter()
    result = ExploreResult(spec, "local", "pct")
    seen = {expander.root_fp}
    collected = Expansion()
    collected.abstract_states |= expander.root_abstract_states
    result.add_root_violations(expander.root_violations)
    for r in range(runs):
        rng = random.Random(seed * 1_000_003 + r)
        priority: dict[str, float] = {}
        changes = {step: j for j, step in enumerate(sorted(rng.sample(range(1, length + 1),
                                                                       min(bug_depth - 1, length))), start=1)}
        node, path = expander.root, ()
        for k in range(1, length + 1):
            try:
                actions = expander.actions(node)
            except Exception as exc:   # noqa: BLE001 — a state that cannot be restored, as expand reports it
                prop, _index, msg = expander.unrestorable(exc)
                merge_found(result.violations, prop, path, msg)
                break
            if not actions:
                break
            for a in actions:
                src = source(a)
                if src not in priority:
                    priority[src] = bug_depth + rng.random()
            best = max(priority[source(a)] for a in actions)
            mine = [i for i, a in enumerate(actions) if priority[source(a)] == best]
            index = mine[rng.randrange(len(mine))]
            fp, child, violations = expander.step_one(node, index, collected)
            result.edges += 1
            for prop, _i, msg in violations:
                merge_found(result.violations, prop, path + (index,), msg)
            if child is None or violations:
                break
            if k in changes:
                priority[source(actions[index])] = changes[k]
            seen.add(fp)
            node, path = child, path + (index,)
        if progress is not None:
            progress(Progress(0, r + 1, runs, len(seen), result.edges, time.perf_counter() - start))
    result.states = len(seen)
    result.witnesses = collected.witnesses
    result.seconds = time.perf_counter() - start
    result.set_coverage(collected.abstract_states, collected.abstract_edges)
    result.extra = {"runs": runs, "length": length, "bug_depth": bug_depth, "seed": seed}
    return result

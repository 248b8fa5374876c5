"""Benchmark of the world and the coordinator on one core; prints JSON figures (not a test).

    python bench/world.py [--seconds 2] [--profile 3.9] [--seed 1]

Figures, per profile, for a 3-consumer world (no leaves, so the group stays busy):
  world_steps_per_s        enabled() + a seeded random choice + step(), record=False
  snapshot_restore_per_s   restore(b) + snapshot() over snapshots taken along random walks
  coordinator_requests_per_s   the bare coordinator: heartbeats of a Stable 3-member group, and
                           full rebalances (3 JoinGroup + 3 SyncGroup) as a second figure
  checked_steps_per_s      the property Checker on every step of the 2,000-step seeded walks of
                           tests/test_properties_walks.py, the slowest scope and client mix of the profile
                           (the test once asserted "under 5 s"; wall-clock time is a figure, not a test)
Targets (issue "Reference coordinator…"): ≥ 20,000 steps/s and ≥ 20,000 snapshot+restore/s.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.scope import Scope  # noqa: E402
from harness.world import World  # noqa: E402
from impl import CoordinatorConfig, GroupCoordinator  # noqa: E402

SCOPE = Scope(leaves=False, commits=True, advance_ms=(1000, 5000))


def _rate(fn: Callable[[], int], seconds: float) -> float:
    """Run ``fn`` (which returns how many operations it did) until ``seconds`` pass; ops per second."""
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += fn()
    return done / (time.perf_counter() - start)


def world_steps(profile: str, seed: int, seconds: float) -> float:
    rng = random.Random(seed)
    world = World(profile, SCOPE, clients=3, seed=seed, record=False)

    def burst() -> int:
        nonlocal world
        for i in range(1000):
            choices = world.enabled()
            if not choices:
                world = World(profile, SCOPE, clients=3, seed=seed, record=False)
                return i
            world.step(choices[rng.randrange(len(choices))])
        return 1000
    return _rate(burst, seconds)


def snapshots_along_walks(profile: str, seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    out: list[bytes] = []
    while len(out) < count:
        world = World(profile, SCOPE, clients=3, seed=seed, record=False)
        for _ in range(400):
            choices = world.enabled()
            if not choices:
                break
            world.step(choices[rng.randrange(len(choices))])
            out.append(world.snapshot())
    return out[:count]


def snapshot_restore(profile: str, seed: int, seconds: float) -> tuple[float, float]:
    snaps = snapshots_along_walks(profile, seed, 2000)
    world = World(profile, SCOPE, clients=3, seed=seed, record=False)

    def burst() -> int:
        for data in snaps:
            world.restore(data)
            world.snapshot()
        return len(snaps)
    return _rate(burst, seconds), sum(map(len, snaps)) / len(snaps)


def _stable_group(profile: str) -> tuple[GroupCoordinator, list[str], int]:
    coord = GroupCoordinator(CoordinatorConfig(profile=profile, group_initial_rebalance_delay_ms=0))
    for i in range(3):
        coord.join_group("g", "", 10000, 10000, "consumer", [("range", b"x")], client_id=f"c{i}")
    ids = sorted(coord.describe("g").members)
    for m in ids:   # everyone rejoins so that one generation holds all three
        coord.join_group("g", m, 10000, 10000, "consumer", [("range", b"x")])
    gen = coord.describe("g").generation_id
    for m in ids:
        coord.sync_group("g", gen, m, {x: b"a" for x in ids})
    coord.take_responses()
    return coord, ids, gen


def coordinator_heartbeats(profile: str, seconds: float) -> float:
    coord, ids, gen = _stable_group(profile)

    def burst() -> int:
        for _ in range(300):
            # 1 ms per round: on 0.10.0 a heartbeat in the same millisecond as the previous one cannot
            # complete the previous op (strict '>' of SPEC.md §2), so a frozen clock would pile ops up
            coord.advance(1)
            for m in ids:
                coord.heartbeat("g", m, gen)
        coord.take_responses()
        return 900
    return _rate(burst, seconds)


def coordinator_rebalances(profile: str, seconds: float) -> float:
    coord, ids, _ = _stable_group(profile)

    def burst() -> int:
        for _ in range(50):
            coord.advance(1)
            for m in ids:
                coord.join_group("g", m, 10000, 10000, "consumer", [("range", b"x")])
            gen = coord.describe("g").generation_id
            for m in ids:
                coord.sync_group("g", gen, m, {x: b"a" for x in ids})
            coord.take_responses()
        return 300
    return _rate(burst, seconds)


def checked_steps(profile: str, seed: int) -> float:
    """Steps per second of the slowest of the long checked walks (every applicable property on every step)."""
    from tests.property_runs import CLIENTS, SCOPES, walk
    rates = []
    for scope in SCOPES:
        for clients in CLIENTS:
            start = time.perf_counter()
            checker, _ = walk(profile, scope, clients, seed=seed, steps=2000)
            rates.append(len(checker.world.steps) / (time.perf_counter() - start))
    return min(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    ap.add_argument("--profile", action="append", help="profile(s) to measure (default: 0.10.0 and 3.9)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})   # one core
    results = {}
    for profile in args.profile or ["0.10.0", "3.9"]:
        sr, size = snapshot_restore(profile, args.seed, args.seconds)
        results[profile] = {
            "world_steps_per_s": round(world_steps(profile, args.seed, args.seconds)),
            "snapshot_restore_per_s": round(sr),
            "snapshot_bytes_mean": round(size),
            "coordinator_heartbeats_per_s": round(coordinator_heartbeats(profile, args.seconds)),
            "coordinator_rebalance_requests_per_s": round(coordinator_rebalances(profile, args.seconds)),
            "checked_steps_per_s": round(checked_steps(profile, args.seed)),
        }
    print(json.dumps({"bench": "world", "clients": 3, "python": platform.python_version(),
                      "seconds_per_figure": args.seconds, "results": results,
                      "targets": {"world_steps_per_s": 20000, "snapshot_restore_per_s": 20000}}, indent=2))


if __name__ == "__main__":
    main()

"""The gate's capacity walks (kgc/gate.py CAPACITY_WALKS): the only worlds with group.max.size set, on the releases
that have it (KIP-389, 2.2.0), so that the GROUP_MAX_SIZE_REACHED paths (SPEC.md §3.1 J4) are walked with the whole
catalog and the labelled refinement — and outside every coverage map (the maps' model scope has no bound)."""
from __future__ import annotations

import random

import pytest

from harness.world import World
from kgc.gate import CAPACITY_WALKS, walk, walk_configs
from kgc.runs import CheckedRun


def test_capacity_walks_run_where_the_release_has_group_max_size() -> None:
    assert not {name for name, _, _ in walk_configs("0.10.0")} & set(CAPACITY_WALKS)
    for profile in ("2.4.1", "2.7.0", "3.9"):
        assert {name for name, _, _ in walk_configs(profile)} >= set(CAPACITY_WALKS)
    assert sorted(scope.group_max_size for scope, _ in CAPACITY_WALKS.values()) == [1, 2]


@pytest.mark.parametrize("profile", ["2.4.1", "2.7.0", "3.9"])
def test_a_capacity_walk_meets_a_full_group_and_refines(profile: str) -> None:
    scope, clients = CAPACITY_WALKS["capacity-1"]
    refused = 0
    for seed in range(4):
        run = CheckedRun(World(profile, scope, clients=clients, seed=seed, record=True))
        walk(run, random.Random(seed), 200)
        assert not run.violations, run.violations[:1]
        refused += any(r.api == "JoinGroup" and r.error == "GROUP_MAX_SIZE_REACHED"
                       for step in run.world.steps for r in step.responses)
    assert refused >= 3

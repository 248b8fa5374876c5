"""Slow tier: a real Spark standalone cluster (master + one worker on 127.0.0.1, started from the installed
pyspark package) runs an exploration; its answer equals the local engine's; the cluster is stopped."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from explore.local import bfs
from explore.scopes import get_scope
from explore.space import ExploreSpec
from explore.spark.cluster import LocalCluster

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def test_exploration_on_a_standalone_cluster_matches_the_local_engine(tmp_path) -> None:
    spec = ExploreSpec("3.9", 2, 8, get_scope("basic"), mutant="generation-not-bumped")
    local = bfs(spec)
    with LocalCluster(cores=2, work_dir=tmp_path / "cluster") as cluster:
        assert cluster.status()["aliveworkers"] == 1
        out = tmp_path / "out"
        run = subprocess.run(
            [sys.executable, "-m", "kgc", "explore", "--engine", "spark", "--master", cluster.url,
             "--members", "2", "--depth", "8", "--mutant", "generation-not-bumped", "--out", str(out),
             "--no-progress"], capture_output=True, text=True, timeout=600)
        assert run.returncode == 1, run.stdout + run.stderr       # the mutant is caught
        apps = cluster.status()["completedapps"]
        procs = list(cluster.procs)
    assert all(p.poll() is not None for p in procs)                # master and worker are stopped
    assert apps and apps[0]["name"] == "kgc-explore"              # the job ran on the cluster
    data = json.loads((out / "explore.json").read_text())
    assert data["extra"]["master"] == cluster.url
    for key, value in local.counts().items():
        assert data[key] == value, key

"""The Spark engine against the local engine: identical counts, violations and counterexamples
(parity), with every level a Spark job and with the first levels expanded on the driver, and resumption
from its per-level Parquet checkpoints (written by the merge tasks or by the driver)."""
from __future__ import annotations

import json
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from explore.local import CheckpointError, bfs
from explore.scopes import get_scope
from explore.space import ExploreSpec
from explore.spark import engine
from explore.spark.engine import last_complete_level
from kgc.cli import main
from tests.explore_helpers import killed_run

pytestmark = pytest.mark.spark

PARITY = {
    "basic-3-members": ExploreSpec("3.9", 3, 7, get_scope("basic")),
    "faults-deferred": ExploreSpec("3.9", 2, 6, get_scope("faults")),
    "unload-0.10.0-por": ExploreSpec("0.10.0", 2, 7, get_scope("unload"), por=True),
    "crashes-mutant": ExploreSpec("3.9", 2, 8, get_scope("crashes"), mutant="generation-not-bumped"),
    "adversarial-client": ExploreSpec("3.9", 2, 6, replace(get_scope("basic"), timed=True),
                                      clients=("java", "adversarial")),
    # a state its snapshot cannot restore: checker-observes-every-state on the node (tests/test_never_crash.py)
    "unrestorable-mutant": ExploreSpec("0.10.0", 2, 7, get_scope("basic"), mutant="delayed-op-completes-twice"),
    # one state per orbit of client exchanges: a node's route must blind the client of its parked requests' keys
    "symmetry-mutant": ExploreSpec("3.9", 3, 8, replace(get_scope("basic"), client_id="consumer"), symmetry=True,
                                   mutant="generation-not-bumped"),
    # profile 4.1, judged by its runtime rules (explore/rules.py): the event loop's flushes, failed flushes, commits
    # and timers as edges, and a runtime mutant's violations (576 states)
    "java-gc-4.1-mutant": ExploreSpec("4.1", 2, 6, get_scope("faults"), mutant="answer-before-commit"),
}
#: the releases added later, in the slow tier (each costs a Spark BFS): pending members, the initial delay and
#: the 2.4.1 keep-alive (faults: deferred appends), and 2.7.0's heartbeat reset with 3 members
PARITY_SLOW = {
    "faults-2.4.1": ExploreSpec("2.4.1", 2, 7, get_scope("faults")),
    "basic-2.7.0-3-members": ExploreSpec("2.7.0", 3, 7, get_scope("basic")),
    "unload-2.7.0": ExploreSpec("2.7.0", 2, 7, get_scope("unload")),
    "crashes-2.4.1-mutant": ExploreSpec("2.4.1", 2, 8, get_scope("crashes"), mutant="generation-not-bumped"),
    # 4.1 at the gate's scope (3 members, basic), and with partition moves and deferred writes
    "basic-4.1-3-members": ExploreSpec("4.1", 3, 8, get_scope("basic")),
    "unload-4.1": ExploreSpec("4.1", 2, 8, get_scope("unload")),
}


@pytest.mark.parametrize("name", [*PARITY, *(pytest.param(n, marks=pytest.mark.slow) for n in PARITY_SLOW)])
def test_spark_and_local_engines_agree(spark, name: str) -> None:
    spec = PARITY.get(name) or PARITY_SLOW[name]
    local = bfs(spec)
    distributed = engine.bfs(spec, spark, partitions=2, driver_below=0)     # every level a Spark job
    assert distributed.counts() == local.counts()
    assert distributed.states > 100 and distributed.edges > distributed.states
    assert {k: v.message for k, v in distributed.violations.items()} == \
           {k: v.message for k, v in local.violations.items()}
    if spec.mutant == "generation-not-bumped":
        assert "each-new-generation-increments-the-generation-id" in distributed.violations
    if spec.mutant == "answer-before-commit":
        assert "held-answers-wait-for-earlier-writes" in distributed.violations
    if spec.mutant == "delayed-op-completes-twice":
        assert "checker-observes-every-state" in distributed.violations


def test_the_driver_hands_its_small_levels_to_spark(spark) -> None:
    """Levels 1-4 (under 40 nodes) on the driver, the rest as Spark jobs: the local engine's result."""
    spec = PARITY["basic-3-members"]
    local = bfs(spec)
    assert local.levels[4] < 40 <= local.levels[5] and len(local.levels) > 6
    handed = engine.bfs(spec, spark, partitions=2, driver_below=40)
    assert handed.counts() == local.counts()
    assert {k: v.message for k, v in handed.violations.items()} == {k: v.message for k, v in local.violations.items()}


def test_the_workers_are_started_while_the_driver_expands_and_a_failed_start_is_harmless(spark, monkeypatch) -> None:
    """engine.WarmUp: started once, when a driver frontier reaches DRIVER_BELOW / WARM_AHEAD nodes (here 40 / 16, at
    level 1), and joined before the Spark levels; cancelled when the driver does every level after all; not started
    when Spark's turn never comes near; a warm-up whose job fails (an unreadable spec) raises nothing."""
    started: list[engine.WarmUp] = []
    real = engine.WarmUp.start

    def start(self) -> None:
        started.append(self)
        real(self)
    monkeypatch.setattr(engine.WarmUp, "start", start)
    spec = PARITY["basic-3-members"]
    local = bfs(spec)
    assert engine.bfs(spec, spark, partitions=2, driver_below=40).counts() == local.counts()
    assert len(started) == 1
    # the driver does every level, but its frontier comes within 1/16 of the hand-over: started, then cancelled
    below = max(local.levels) + 1
    assert engine.bfs(spec, spark, partitions=2, driver_below=below).counts() == local.counts()
    assert len(started) == 2 and started[1].thread is not None and not started[1].thread.is_alive()
    # every level on the driver, the frontier never near DRIVER_BELOW / WARM_AHEAD: no workers started
    assert engine.bfs(spec, spark, partitions=2, driver_below=1 << 20).counts() == local.counts()
    assert len(started) == 2
    broken = engine.WarmUp(spark.sparkContext, "not a spec", 2)
    broken.start()
    broken.join()
    assert broken.thread is not None and not broken.thread.is_alive()


def test_partition_count_does_not_change_the_answer(spark) -> None:
    spec = PARITY["crashes-mutant"]
    assert engine.bfs(spec, spark, partitions=3, driver_below=0).counts() == \
        engine.bfs(spec, spark, partitions=1, driver_below=0).counts()


@pytest.mark.parametrize("driver_below", [0, engine.DRIVER_BELOW], ids=["merge-written", "driver-written"])
def test_a_killed_spark_run_resumes_from_its_last_parquet_level(spark, tmp_path, driver_below: int) -> None:
    spec = ExploreSpec("3.9", 2, 8, get_scope("basic"), mutant="leader-not-reelected", por=True)
    whole = bfs(spec)
    engine.bfs(spec, spark, partitions=2, checkpoint_dir=tmp_path, stop_after_level=4, driver_below=driver_below)
    assert last_complete_level(tmp_path) == 4
    parts = sorted((tmp_path / "level-0004").glob("part-*.parquet"))
    assert len(parts) == 2
    table = pq.read_table(parts[0])
    assert set(table.column_names) == {"kind", "fp", "node", "path", "sleep"}
    marker = json.loads((tmp_path / "level-0004" / "_SUCCESS.json").read_text())
    assert marker["level"] == 4 and marker["states"] == sum(whole.levels[:5])
    (tmp_path / "level-0005").mkdir()          # a level the kill interrupted: no _SUCCESS, ignored
    (tmp_path / "level-0005" / "part-00000.parquet").write_bytes(b"half-written")
    resumed = engine.bfs(spec, spark, checkpoint_dir=tmp_path, resume=True)   # levels 5-8 as Spark jobs
    assert resumed.resumed_from_level == 4
    assert resumed.counts() == whole.counts()


def test_resume_refuses_another_exploration(spark, tmp_path) -> None:
    spec = ExploreSpec("3.9", 2, 4, get_scope("basic"))
    engine.bfs(spec, spark, partitions=2, checkpoint_dir=tmp_path, stop_after_level=2)
    with pytest.raises(CheckpointError, match="another exploration"):
        engine.bfs(replace(spec, profile="0.10.0"), spark, checkpoint_dir=tmp_path, resume=True)
    with pytest.raises(CheckpointError, match="no complete Spark level"):
        engine.bfs(spec, spark, checkpoint_dir=tmp_path / "empty", resume=True)


def test_cli_spark_engine_reports_like_the_local_one(spark, tmp_path) -> None:
    argv = ["explore", "--members", "2", "--depth", "7", "--mutant", "generation-not-bumped", "--no-progress"]
    assert main(argv + ["--out", str(tmp_path / "local")]) == 1
    assert main(argv + ["--engine", "spark", "--master", "local[2]", "--out", str(tmp_path / "spark")]) == 1
    local = json.loads((tmp_path / "local" / "explore.json").read_text())
    distributed = json.loads((tmp_path / "spark" / "explore.json").read_text())
    for key in ("states", "edges", "levels", "violations", "witnesses", "abstract_states", "abstract_edges"):
        assert distributed[key] == local[key], key
    assert distributed["engine"] == "spark" and local["engine"] == "local"
    assert (tmp_path / "spark" / "each-new-generation-increments-the-generation-id" / "report.html").is_file()


def test_a_sigkilled_spark_run_resumes_and_ends_with_the_same_counts(spark, tmp_path) -> None:
    killed_run(tmp_path, ["--engine", "spark", "--master", "local[2]"], "level-0006/_SUCCESS.json", 10)
    assert main(["explore", "--members", "3", "--depth", "10", "--engine", "spark", "--resume", str(tmp_path),
                 "--no-progress"]) == 0
    data = json.loads((tmp_path / "explore.json").read_text())
    whole = bfs(ExploreSpec("3.9", 3, 10, get_scope("basic")))
    assert data["resumed_from_level"] >= 6 and data["states"] == whole.states and data["edges"] == whole.edges
    assert data["levels"] == whole.levels


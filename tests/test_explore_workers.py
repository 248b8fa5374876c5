"""The local engine's worker processes (explore/workers.py): dealing a level by route, the order chunks are
absorbed in, and whole searches that must equal one process's — with the pool engaged from the first level
and small chunks, so that every level is split and absorbed out of frontier order."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from explore import workers
from explore.local import bfs
from explore.scopes import get_scope
from explore.space import Expander, ExploreSpec
from explore.workers import WorkerFailed, chunk_order, deal
from kgc.cli import main
from tests.expansions import SPECS, spec_id, summary

@pytest.fixture
def split_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every level goes to the pool, in chunks of 3 nodes."""
    monkeypatch.setattr(workers, "SMALL_LEVEL", 0)
    monkeypatch.setattr(workers, "CHUNK", 3)


# --- dealing -----------------------------------------------------------------------------------------
def test_a_route_goes_to_one_process_and_shares_follow_the_weights() -> None:
    routes = [r % 37 for r in range(1000)]
    owner: dict[int, int] = {}
    shares = deal(routes, owner, [1.0, 1.0])
    assert sorted(p for share in shares for p in share) == list(range(1000))
    for route in set(routes):
        assert len({p for p, share in enumerate(shares) for i in share if routes[i] == route}) == 1
    assert abs(len(shares[0]) - len(shares[1])) <= 2 * 28     # within two routes of even
    assert deal(routes, dict(owner), [1.0, 1.0]) == shares     # deterministic, and stable once dealt


def test_a_route_stays_with_its_process_unless_that_overloads_it() -> None:
    owner = {5: 1, 6: 1}
    shares = deal([5, 5, 6, 7, 8], owner, [1.0, 1.0])
    assert owner[5] == 1 and set(shares[1]) >= {0, 1}
    crowded = {r: 0 for r in range(10)}
    deal(list(range(10)), crowded, [1.0, 1.0])
    assert sorted(crowded.values()).count(1) >= 4             # half of them moved to the idle process


def test_chunks_cover_every_position_once_ranked_by_progress_through_their_share(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "CHUNK", 4)
    shares = [list(range(0, 40, 2)), list(range(1, 40, 2)), []]
    chunks = chunk_order(shares)
    assert sorted(i for _p, piece in chunks for i in piece) == list(range(40))
    assert [p for p, _piece in chunks] == [0, 1] * 5            # equal shares alternate: each completes in step
    for p in (0, 1):
        mine = [i for q, piece in chunks if q == p for i in piece]
        assert mine == shares[p]                                # each share in its own order
    uneven = chunk_order([list(range(8)), list(range(8, 40))])  # 2 chunks against 8: one per four of the other
    assert [p for p, _piece in uneven] == [1, 1, 1, 0, 1, 1, 1, 1, 0, 1]


# --- whole searches ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_two_and_three_processes_report_what_one_reports(spec: ExploreSpec, split_everything: None) -> None:
    one = bfs(spec)
    assert summary(bfs(spec, workers=2)) == summary(one)
    assert summary(bfs(spec, workers=3)) == summary(one)
    if spec.mutant:
        assert one.violations       # the comparison is about something


def test_the_next_frontier_is_the_same_on_every_run(split_everything: None, tmp_path: Path) -> None:
    """Absorbed out of frontier order, yet in an order fixed by the frontier and the routes: the checkpoints of
    two runs hold the same frontier, node for node and in the same order."""
    spec = ExploreSpec("3.9", 3, 9, get_scope("basic"))
    frontiers = []
    for run in ("a", "b"):
        bfs(spec, checkpoint_dir=tmp_path / run, stop_after_level=8, workers=2)
        frontiers.append(json.loads((tmp_path / run / "checkpoint.json").read_text())["frontier"])
    assert frontiers[0] == frontiers[1] and len(frontiers[0]) > 100


def test_a_resumed_search_ends_as_one_run(split_everything: None, tmp_path: Path) -> None:
    spec = ExploreSpec("3.9", 2, 8, get_scope("faults"), mutant="leader-not-reelected")
    bfs(spec, checkpoint_dir=tmp_path, stop_after_level=5, workers=2)
    resumed = bfs(spec, checkpoint_dir=tmp_path, resume=True, workers=2)
    assert resumed.counts() == bfs(spec).counts()


@pytest.fixture
def dying_worker(split_everything: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker process exits with code 3 at its first expansion."""
    parent, expand = os.getpid(), Expander.expand

    def dying(self: Expander, node: bytes, sleep=None):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            os._exit(3)
        return expand(self, node, sleep)

    monkeypatch.setattr(Expander, "expand", dying)
    monkeypatch.setattr(workers, "POLL_S", 0.2)


def test_a_worker_that_dies_ends_the_search_with_a_sentence(dying_worker: None) -> None:
    with pytest.raises(WorkerFailed, match=r"worker 1 \(exit code 3\) ended during the search \(out of memory\?\)"):
        bfs(ExploreSpec("3.9", 2, 6, get_scope("basic")), workers=2)


def test_the_cli_reports_a_dead_worker_without_a_traceback(dying_worker: None, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", "--members", "2", "--depth", "6", "--workers", "2", "--no-progress", "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "worker 1 (exit code 3) ended during the search" in err and "Traceback" not in err

"""The canonical-form reduction (explore/canonical.py), the local engine's worker processes and its
data-only checkpoints: each is checked against the plain search it must not change."""
from __future__ import annotations

import json
from dataclasses import replace
import os
import pickle
from pathlib import Path

import pytest

from explore import checkpoint
from explore.canonical import canonical, corr_blind
from explore.local import CheckpointError, bfs
from explore.scopes import get_scope
from explore.space import ExploreSpec, route_of
from harness.world import World
from kgc.cli import main


def _shown(result) -> dict:   # type: ignore[no-untyped-def]
    """What a reduction must keep: the violated properties with their shortest counterexamples, the
    sometimes-witnesses and the abstract states and edges reached."""
    return {"violations": {p: (list(f.path), f.message) for p, f in sorted(result.violations.items())},
            "witnesses": sorted(result.witnesses), "abstract": (result.abstract_states, result.abstract_edges),
            "covered": (result.covered_states, result.covered_edges)}


@pytest.mark.parametrize("spec", [
    ExploreSpec("3.9", 3, 9, get_scope("basic"), mutant="generation-not-bumped"),
    ExploreSpec("3.9", 2, 7, get_scope("faults"), mutant="leader-not-reelected"),
    ExploreSpec("0.10.0", 2, 8, get_scope("crashes")),
], ids=["basic-3-mutant", "faults-2-mutant", "crashes-0.10.0"])
def test_the_reduced_search_finds_what_the_unreduced_one_finds_in_no_more_states(spec: ExploreSpec) -> None:
    reduced = bfs(spec)
    raw = bfs(ExploreSpec(**{**spec.__dict__, "reduce": False}))
    assert _shown(reduced) == _shown(raw)
    assert reduced.states <= raw.states and reduced.edges <= raw.edges
    if spec.mutant:
        assert reduced.violations      # the comparison is about something


def test_the_reduction_merges_states_on_the_faults_scope() -> None:
    """A test that cannot fail is a defect: somewhere the canonical form must actually merge states."""
    spec = ExploreSpec("3.9", 2, 7, get_scope("faults"))
    assert bfs(spec).states < bfs(ExploreSpec(**{**spec.__dict__, "reduce": False})).states


def _walk(shift: int) -> list[tuple[tuple, tuple]]:
    """The same choices (by index) in a world whose client 0 numbers its requests from 1 + shift."""
    world = World("3.9", get_scope("faults"), clients=2, record=False)
    world.clients[0].next_corr += shift
    seen = []
    for index in (0, 0, 1, 2, 0, 1, 3, 0, 2, 1, 0):
        actions = world.enabled()
        world.step(actions[index % len(actions)])
        seen.append((tuple(a.kind for a in world.enabled()), world.to_state()))
    return seen


def test_shifted_correlation_ids_give_the_same_canonical_form_and_the_same_choices() -> None:
    plain, shifted = _walk(0), _walk(40)
    assert any(a[1] != b[1] for a, b in zip(plain, shifted, strict=True))     # the raw states differ …
    for (kinds_a, state_a), (kinds_b, state_b) in zip(plain, shifted, strict=True):
        assert kinds_a == kinds_b                                           # … the choices do not
        assert canonical(state_a) == canonical(state_b)                     # … nor does the canonical form
    assert canonical(plain[-1][1]) != plain[-1][1] or plain[-1][1][1][0][7] == 1


def _parked_join(shift: int) -> tuple:
    """The coordinator state once client 0's second JoinGroup (with the id KIP-394 handed it) is parked, its
    corrs counted from 1 + shift."""
    world = World("3.9", get_scope("basic"), clients=2, record=False)
    world.clients[0].next_corr += shift
    for kind in ("JoinGroup", "DeliverRequest", "DeliverResponse", "JoinGroup", "DeliverRequest"):
        world.step(next(a for a in world.enabled() if a.kind == kind and a.client == 0))
    return world.coordinator_state()


def test_worlds_with_one_canonical_form_have_one_route() -> None:
    """The Spark engine partitions by route (explore/space.py route_of): it must be a function of the fingerprint."""
    plain, shifted = _parked_join(0), _parked_join(40)
    assert plain != shifted and corr_blind(plain) == corr_blind(shifted)     # only the parked corr differs
    assert route_of(plain) == route_of(shifted)
    assert route_of(plain) != route_of(_parked_join(0)[:1] + (plain[1] + 1,) + plain[2:])   # the clock counts


def test_a_state_of_another_shape_is_left_unchanged() -> None:
    odd = ((), ((1, 2),), ((), ()), "LOADED")
    assert canonical(odd) == odd


# --- --workers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", [
    ExploreSpec("3.9", 3, 8, get_scope("basic"), mutant="generation-not-bumped"),
    ExploreSpec("0.10.0", 2, 7, get_scope("unload"), por=True),
    ExploreSpec("3.9", 3, 10, replace(get_scope("faults"), client_id="consumer"), symmetry=True),
], ids=["basic-mutant", "unload-por", "faults-symmetry"])
def test_two_workers_give_the_same_result_as_one(spec: ExploreSpec) -> None:
    one, two = bfs(spec), bfs(spec, workers=2)
    assert one.counts() == two.counts() and _shown(one) == _shown(two)


def test_cli_with_two_workers_writes_the_same_reports(tmp_path: Path) -> None:
    out = tmp_path / "run"       # one directory: reports name it
    argv = ["explore", "--members", "2", "--depth", "7", "--mutant", "generation-not-bumped", "--no-progress",
            "--out", str(out)]

    def written() -> dict[str, bytes]:
        files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        summary = json.loads(files.pop("explore.json"))
        for key in ("seconds", "states_per_second", "level_seconds"):
            summary.pop(key)
        files.pop(checkpoint.CHECKPOINT, None)      # holds the timings too
        return {**files, "explore.json": json.dumps(summary, sort_keys=True).encode()}

    assert main(argv) == 1
    one = written()
    assert any(name.endswith("report.md") for name in one)
    assert main(argv + ["--workers", "2"]) == 1
    assert written() == one


def test_workers_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--workers", "0", "--no-progress"]) == 2
    assert "--workers must be >= 1" in capsys.readouterr().err


# --- checkpoints are data ----------------------------------------------------------------------------
class _Planted:
    """What a tampered checkpoint could carry: unpickling it would create a file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):   # type: ignore[no-untyped-def]
        return (open, (self.path, "w"))


def test_a_checkpoint_is_json_and_resumes_to_the_same_counts(tmp_path: Path) -> None:
    spec = ExploreSpec("3.9", 2, 8, get_scope("basic"))
    bfs(spec, tmp_path, stop_after_level=3, checkpoint_every_s=0)
    data = json.loads((tmp_path / checkpoint.CHECKPOINT).read_text())
    assert data["format"] == checkpoint.CHECKPOINT_FORMAT and data["level"] == 3
    assert bfs(spec, tmp_path, resume=True).counts() == bfs(spec).counts()


def test_a_tampered_checkpoint_is_rejected_with_one_sentence_and_runs_nothing(tmp_path: Path) -> None:
    spec = ExploreSpec("3.9", 2, 8, get_scope("basic"))
    bfs(spec, tmp_path, stop_after_level=3, checkpoint_every_s=0)
    path = tmp_path / checkpoint.CHECKPOINT
    data = json.loads(path.read_text())
    planted = tmp_path / "planted"
    evil = pickle.dumps((pickle.dumps(_Planted(str(planted))), False, ()))
    data["frontier"][0][1] = __import__("base64").b64encode(evil).decode()
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointError) as info:
        bfs(spec, tmp_path, resume=True)
    message = str(info.value)
    assert "was not written by kgc explore" in message and "io.open" in message
    assert message.count(". ") == 0 and message.endswith(".")
    assert not planted.exists() and not os.path.exists(planted)


def test_a_damaged_checkpoint_is_rejected_with_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / checkpoint.CHECKPOINT).write_text('{"format": "kgc-explore-checkpoint/2", "spec": {}}')
    assert main(["explore", "--resume", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "is damaged or not a kgc-explore-checkpoint/2 file" in err and err.count("\n") == 1

"""kgc never crashes on a bad coordinator (issue 10 item 4): whatever a coordinator under test does,
`kgc check` and `kgc explore` end with exit 0 or 1, and an exception on the checker's side (observing,
abstracting, restoring or checking a state) is a violation of `checker-observes-every-state` with a
counterexample and the usual reports — never a traceback.

The planted coordinators below are the property's proof that it can fail (STYLE.md): test-only
mutants registered for one test each, putting a member or a group in a shape the checker cannot read.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from core.trace import Step
from explore.local import bfs
from explore.scopes import get_scope
from explore.space import ExploreSpec
from explore.traces import counterexample
from harness.replay import replay
from harness.world import World
from impl.coordinator import GroupCoordinator
from impl.group import GroupMetadata, MemberMetadata
from impl.mutants import MUTANTS, Mutant, all_mutants
from model.releases import RUNNABLE
from kgc.cli import main
from properties.catalog import CATALOG, Property
from properties.check import check_world_step
from properties.checker_side import OBSERVES, unobservable
from properties.observation import observe

REPORTS = {"report.md", "report.html", "violation.json", "counterexample.json"}


class MisshapenMember(GroupCoordinator):
    """Answers a join, then leaves the member's protocols as 1-tuples (no metadata): a member shape
    no Kafka code produces and ``properties.observation`` cannot read."""

    def _reschedule_after_join(self, group: GroupMetadata, member: MemberMetadata) -> None:
        super()._reschedule_after_join(group, member)
        member.protocols = tuple((name,) for name, _ in member.protocols)   # type: ignore[misc]


class DeadGroupKept(GroupCoordinator):
    """Unloading moves the group to Dead but keeps it cached: a cached group in a state the abstraction
    (harness/abstraction.py) has no image for."""

    def unload_group(self, group_id: str) -> None:
        group = self.groups.get(group_id)
        super().unload_group(group_id)
        if group is not None:
            self.groups[group_id] = group


#: test-only mutants: name -> (class, the stage the checker fails in, the shortest counterexample on 3.9)
PLANTED: dict[str, tuple[type[GroupCoordinator], str, int]] = {
    "test-member-protocols-misshapen": (MisshapenMember, "observing", 7),
    "test-dead-group-kept-cached": (DeadGroupKept, "abstracting", 3),
}

#: what the planted coordinators are caught by (tests/test_properties_mutants.py: every property is shown to fail)
PLANTED_CATCHES = (OBSERVES,)


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    all_mutants()   # the real ones are registered first
    for name, (cls, _stage, _length) in PLANTED.items():
        monkeypatch.setitem(MUTANTS, name, Mutant(name, cls, "planted by tests/test_never_crash.py", PLANTED_CATCHES,
                                                  ("0.10.0", "3.9")))
    yield


def _violation(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "violation.json").read_text())


def _witness(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "counterexample.json").read_text())["violation"]["witness"]


@pytest.mark.parametrize("mutant", list(PLANTED))
def test_kgc_check_reports_a_planted_unreadable_state(planted: None, mutant: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--mutant", mutant, "--profile", "3.9", "--budget", "10", "--out", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.out + out.err
    assert f"✗ {OBSERVES} violated on mutant {mutant}" in out.out
    directory = tmp_path / f"3.9-{mutant}"
    assert REPORTS <= {p.name for p in directory.iterdir()}
    assert _violation(directory)["property"] == OBSERVES
    witness = _witness(directory)
    assert witness["stage"] == PLANTED[mutant][1] and witness["exception"] and witness["message"]
    assert not json.loads((directory / "run.json").read_text())["passed"]
    _regression_test_fails_on_the_mutant_only(directory, mutant)


def _regression_test_fails_on_the_mutant_only(directory: Path, mutant: str) -> None:
    path = next(directory.glob("test_*.py"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    test = getattr(module, path.stem)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KGC_MUTANT", mutant)
        with pytest.raises(AssertionError, match=OBSERVES):
            test()
        mp.delenv("KGC_MUTANT")
        test()   # the reference passes


@pytest.mark.parametrize("mutant", list(PLANTED))
def test_kgc_explore_gives_the_shortest_counterexample(planted: None, mutant: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    scope = "unload" if "dead" in mutant else "basic"
    code = main(["explore", "--mutant", mutant, "--members", "2", "--depth", "8", "--scope", scope,
                 "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.out + out.err
    directory = tmp_path / OBSERVES
    assert REPORTS <= {p.name for p in directory.iterdir()}
    trace = json.loads((directory / "counterexample.json").read_text())
    assert len(trace["steps"]) == PLANTED[mutant][2]
    assert trace["violation"]["witness"]["stage"] == PLANTED[mutant][1]
    if "dead" in mutant:   # the report's abstract path ends at the state with no image
        assert "(no abstract state: KeyError" in (directory / "report.md").read_text()


def test_a_snapshot_that_does_not_restore_is_reported_on_its_node() -> None:
    """delayed-op-completes-twice leaves a completed DelayedJoin watched: the explorer stores the state
    but cannot restore it. It used to crash `kgc explore` (KeyError in impl/snapshot.py)."""
    spec = ExploreSpec("0.10.0", 2, 7, get_scope("basic"), mutant="delayed-op-completes-twice")
    result = bfs(spec)
    found = result.violations[OBSERVES]
    assert "stage='restoring the state from its snapshot'" in found.message
    assert "delayed-operation-completes-at-most-once" in result.violations
    trace = counterexample(spec, found)
    assert trace.violation is not None and trace.violation.witness["stage"].startswith("restoring")
    assert len(trace.steps) == len(found.path)
    replay(trace)
    shallower = bfs(ExploreSpec("0.10.0", 2, 6, get_scope("basic"), mutant="delayed-op-completes-twice"))
    assert OBSERVES not in shallower.violations   # the node is reported when it is expanded, one level on


def test_a_predicate_that_raises_is_a_violation_naming_it_and_the_others_still_run() -> None:
    world = World("3.9", clients=2, record=True)
    before = observe(world)
    world.step(world.enabled()[0])
    step: Step = world.steps[-1]
    after = observe(world, step, before.transition_count)

    def boom(_b: Any, _s: Any, _a: Any) -> None:
        raise RuntimeError(f"planted at {object()!r}")
    broken = Property("planted-predicate-raises", "always_step", "A planted predicate that always raises.",
                      "tests", ("3.9",), "concrete", boom, lambda *a: {}, fn=boom)
    holds = Property("planted-predicate-fails", "always_step", "A planted predicate that always fails.",
                     "tests", ("3.9",), "concrete", boom, lambda *a: {}, fn=lambda *a: {"seen": True})
    found = check_world_step((broken, holds), before, step, after)
    assert [v.property for v in found] == [OBSERVES, "planted-predicate-fails"]
    assert found[0].witness == {"stage": "checking planted-predicate-raises", "exception": "RuntimeError",
                                "message": "planted at <object object>"}   # no address: same bytes every run


def test_the_property_is_catalogued_for_every_profile() -> None:
    prop = CATALOG[OBSERVES]
    assert prop.applies_to == ("0.10.0", "2.4.1", "2.7.0", "3.9", "4.1") and prop.kind == "always_step"
    assert "issue 10" in prop.source
    assert unobservable("observing", KeyError("x"), 3).message.startswith(f"{OBSERVES}: Every state")


#: the profiles added in issue 11 run their mutant cases in the slow tier (the default tier keeps 0.10.0 and 3.9;
#: bench/mutants.py and tests/test_gate_mutants.py show every mutant killed on them)
NEW_PROFILES = ("2.4.1", "2.7.0")
#: the one static-membership mutant whose 10 s gate run takes 11 s on 3.9 runs in the slow tier too (the other two
#: static mutants keep the static seams in the default tier)
SLOW_HERE = {("static-member-removed-at-join-completion", "3.9")}
MUTANT_CASES = [pytest.param(m.name, p, id=f"{m.name}-{p}",
                             marks=[pytest.mark.slow] if p in NEW_PROFILES or (m.name, p) in SLOW_HERE else [])
                for m in all_mutants() for p in m.profiles if p in RUNNABLE]


@pytest.mark.parametrize("mutant,profile", MUTANT_CASES)
def test_every_mutant_ends_check_and_explore_with_0_or_1(mutant: str, profile: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The gate's cheapest run (budget 10 s) and a small exploration: an exit code, never a traceback."""
    check = main(["check", "--mutant", mutant, "--profile", profile, "--budget", "10", "--out", str(tmp_path / "c")])
    explore = main(["explore", "--mutant", mutant, "--profile", profile, "--members", "2", "--depth", "7",
                    "--out", str(tmp_path / "e"), "--no-progress"])
    out = capsys.readouterr()
    assert check in (0, 1) and explore in (0, 1) and "Traceback" not in out.out + out.err
    written = [tmp_path / "c" / f"{profile}-{mutant}"] if check == 1 else []
    if explore == 1:
        written += [d for d in (tmp_path / "e").iterdir() if d.is_dir()]
    for directory in written:
        assert REPORTS <= {p.name for p in directory.iterdir()}, directory


@pytest.mark.slow
def test_the_hypothesis_machine_reports_it_too(planted: None) -> None:
    """The gate's last phase: a MachineFailure carrying the shrunk trace, not an unhandled exception."""
    from stateful_tests.machine import run_machine
    trace = run_machine("3.9", "test-member-protocols-misshapen", 10)
    assert trace is not None and trace.violation is not None
    assert trace.violation.property == OBSERVES and trace.violation.witness["stage"] == "observing"

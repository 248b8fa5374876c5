"""Finding ``stale-join-completes-reloaded-heartbeats`` (properties/findings.py), found by the gate's directed
phase on 3.9: the trace below is its counterexample, shrunk by kgc (86 steps, partition scope)."""
from __future__ import annotations

import dataclasses

import pytest

from core.trace import Trace
from harness import labels, refinement
from harness.abstraction import abstract
from harness.replay import world_for
from impl.delayed import DelayedJoin
from kgc.runs import REFINES, CheckedRun, actions_of
from properties.findings import FINDINGS, get_finding

#: the counterexample recorded for the finding (reports/findings/, kgc/findings_cmd.py)
TRACE = Trace.loads((get_finding("stale-join-completes-reloaded-heartbeats").record("3.9")
                     / "counterexample.json").read_text())


def _replay() -> tuple[CheckedRun, object, object]:
    run = CheckedRun(world_for(dataclasses.replace(TRACE, steps=()), record=True))
    actions = actions_of(TRACE)
    for action in actions[:-1]:
        run.step(action)
    last = actions[-1]
    op = run.world.coord.timer.entries[int(last.arg)]
    before = abstract(run.world.coord, run.world.group_id)
    run.step(last)
    return run, op, before


def test_the_stale_delayed_join_completes_the_reloaded_members_heartbeat_ops() -> None:
    """SPEC.md §3.7 + §4.4: the DelayedJoin of the group object unloaded in PreparingRebalance is still in
    the purgatory; its expiry removes that object's members and checkAndComplete(MemberKey) completes the
    heartbeat op of the reloaded group's member with the same id, which awaits a join."""
    run, op, before = _replay()
    assert isinstance(op, DelayedJoin) and op.group is not run.world.coord.groups[run.world.group_id]
    assert "unloaded: PreparingRebalance -> Dead" in {str(e) for st in run.world.steps for e in st.events}
    after = abstract(run.world.coord, run.world.group_id)
    lost = [(b, a) for b, a in zip(before.slots, after.slots, strict=True) if b.watch > 0 and a.watch == 0]
    assert lost and all(b.awaiting_join or b.awaiting_sync for b, _ in lost)
    assert run.violations == []          # documented: refinement accepts exactly this change


def test_without_the_finding_refinement_rejects_that_step(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (labels, refinement):
        monkeypatch.setattr(module, "stale_completion", lambda *_args: False)
    run, _, _ = _replay()
    assert [v.property for v in run.violations] == [REFINES]
    assert run.violations[0].step == len(TRACE.steps) - 1


def test_the_finding_is_documented_for_the_releases_with_the_shared_heartbeat_key() -> None:
    finding = next(f for f in FINDINGS if f.name == "stale-join-completes-reloaded-heartbeats")
    assert "3.9" in finding.profiles and "0.10.0" not in finding.profiles
    assert finding.properties == ("refines-the-abstract-model",)

"""Finding ``stale-join-completes-reloaded-heartbeats`` (properties/findings.py): the counterexamples recorded for it,
shrunk by kgc — 3.9 found by the gate's directed phase (86 steps, partition scope), 2.4.1 and 2.7.0 by its reload
walk (kgc/gate.py RELOAD_WALKS: partition moves held back until the group's first Stable)."""
from __future__ import annotations

import dataclasses
import random

import pytest

from core.trace import Trace
from harness import labels, refinement
from harness.abstraction import abstract
from harness.replay import world_for
from impl.delayed import DelayedJoin
from kgc.runs import REFINES, CheckedRun, actions_of
from properties.findings import FINDINGS, get_finding

FINDING = get_finding("stale-join-completes-reloaded-heartbeats")
RECORDED = ("2.4.1", "2.7.0", "3.9")


def _trace(profile: str) -> Trace:
    """The counterexample recorded for the finding on ``profile`` (reports/findings/, kgc/findings_cmd.py)."""
    return Trace.loads((FINDING.record(profile) / "counterexample.json").read_text())


TRACE = _trace("3.9")


def _replay(trace: Trace = TRACE) -> tuple[CheckedRun, object, object]:
    run = CheckedRun(world_for(dataclasses.replace(trace, steps=()), record=True))
    actions = actions_of(trace)
    for action in actions[:-1]:
        run.step(action)
    last = actions[-1]
    op = run.world.coord.timer.entries[int(last.arg)]
    before = abstract(run.world.coord, run.world.group_id)
    run.step(last)
    return run, op, before


@pytest.mark.parametrize("profile", RECORDED)
def test_the_stale_delayed_join_completes_the_reloaded_members_heartbeat_ops(profile: str) -> None:
    """SPEC.md §3.7 + §4.4: the DelayedJoin of the group object unloaded in PreparingRebalance is still in
    the purgatory; its expiry removes that object's members and checkAndComplete(MemberKey) completes the
    heartbeat op of the reloaded group's member with the same id, which awaits a join."""
    run, op, before = _replay(_trace(profile))
    assert run.world.profile.name == profile
    assert isinstance(op, DelayedJoin) and op.group is not run.world.coord.groups[run.world.group_id]
    assert "unloaded: PreparingRebalance -> Dead" in {str(e) for st in run.world.steps for e in st.events}
    after = abstract(run.world.coord, run.world.group_id)
    lost = [(b, a) for b, a in zip(before.slots, after.slots, strict=True) if b.watch > 0 and a.watch == 0]
    assert lost and all(b.awaiting_join or b.awaiting_sync for b, _ in lost)
    assert run.violations == []          # documented: refinement accepts exactly this change


@pytest.mark.parametrize("profile", RECORDED)
def test_without_the_finding_refinement_rejects_that_step(monkeypatch: pytest.MonkeyPatch, profile: str) -> None:
    for module in (labels, refinement):
        monkeypatch.setattr(module, "stale_completion", lambda *_args: False)
    trace = _trace(profile)
    run, _, _ = _replay(trace)
    assert [v.property for v in run.violations] == [REFINES]
    assert run.violations[0].step == len(trace.steps) - 1


@pytest.mark.parametrize("profile", ["2.4.1", "2.7.0"])
def test_the_2_x_records_come_from_the_gates_reload_walk(profile: str) -> None:
    """Found by `kgc check --profile P --unexcuse stale-join-completes-reloaded-heartbeats` (seed 0, default budget)
    in the reload walk, not written by hand (shrunk by delta debugging, which keeps an unload and the two steps
    of the load back)."""
    trace = _trace(profile)
    assert trace.profile == profile and trace.name.startswith("walk reload ")
    kinds = [a.kind for a in trace.actions]
    assert "UnloadGroup" in kinds and kinds.count("LoadGroup") >= 2


def test_the_reload_walk_holds_partition_moves_until_the_group_is_stable() -> None:
    """kgc/gate.py: a uniform partition walk unloads so often that it seldom reaches Stable (so a reload brings no
    generation back); the reload walk offers no partition move before the group's first Stable, the usual ones
    after."""
    from harness.world import World
    from kgc.gate import RELOAD_WALKS, WALK_SCOPES, walk, walk_configs
    scope, clients = RELOAD_WALKS["reload"]
    assert scope == WALK_SCOPES["partition"] and scope.unload
    assert all(("reload", scope, clients) in walk_configs(p) for p in ("0.10.0", "2.4.1", "2.7.0", "3.9"))
    run = CheckedRun(World("2.7.0", scope, clients=clients, seed=0, record=True))
    walk(run, random.Random(0), 400, hold_partition=True)
    assert not run.violations
    first_stable = next(i for i, st in enumerate(run.world.steps) if st.group_state == "Stable")
    moves = [i for i, st in enumerate(run.world.steps) if st.action.kind in ("UnloadGroup", "LoadGroup")]
    assert moves and min(moves) > first_stable


def test_the_finding_is_documented_for_the_releases_with_the_shared_heartbeat_key() -> None:
    finding = next(f for f in FINDINGS if f.name == "stale-join-completes-reloaded-heartbeats")
    assert "3.9" in finding.profiles and "0.10.0" not in finding.profiles
    assert finding.properties == ("refines-the-abstract-model",)

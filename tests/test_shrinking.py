"""Shrinking with renamed references (kgc/shrinking.py): a step left out renames the correlation ids and timer
numbers of the steps after it, so a counterexample shrinks past steps that plain delta debugging must keep."""
from __future__ import annotations

import dataclasses

import pytest

from core.actions import Action
from core.trace import Trace
from harness.excuses import unexcused
from harness.replay import world_for
from kgc import gate, shrinking
from kgc.runs import Allowance, CheckedRun, Found, actions_of, replay_checked, shrink
from properties.findings import get_finding

FINDING = get_finding("instance-id-with-a-pending-member-id-throws")
PROP = "no-illegal-state-error"


def _noisy() -> Found:
    """The recorded 5-step counterexample of the finding on 2.4.1 (c0's JoinGroup gets MEMBER_ID_REQUIRED, the
    adversary c2 sends a JoinGroup with instance id i0 and c0's pending id), with the adversary's own heartbeat
    sent and delivered first: c2's JoinGroup is then its request #2, not #1."""
    path = FINDING.record("2.4.1") / "counterexample.json"
    record = Trace.loads(path.read_text(encoding="utf-8"))
    assert [a.kind for a in record.actions] == ["JoinGroup", "DeliverRequest", "DeliverResponse", "JoinGroup",
                                                "DeliverRequest"]
    run = CheckedRun(world_for(dataclasses.replace(record, steps=()), record=True))
    first, *rest = record.actions
    heartbeat = next(a for a in run.world.enabled() if a.kind == "Heartbeat" and a.client == 2)
    actions = [first, heartbeat, Action("DeliverRequest", 2, 1)] + rest[:-1] + [Action("DeliverRequest", 2, 2)]
    with unexcused([FINDING.name]):
        for action in actions:
            assert run.world.is_enabled(action), action
            run.step(action)
        found = run.result("noisy")
    assert found is not None and found.violation.property == PROP and len(found.trace.steps) == 7
    return found


def test_a_step_left_out_renames_the_later_correlation_ids() -> None:
    found = _noisy()
    with unexcused([FINDING.name]):
        short = shrink(found, lambda: False)
        assert len(short.trace.steps) == 5   # both noise steps gone: c2's JoinGroup is delivered as #1 now
        assert short.trace.actions[-1] == Action("DeliverRequest", 2, 1)
        assert replay_checked(short.trace, actions_of(short.trace), PROP) is not None   # an ordinary trace
        assert shrink(found, lambda: False).trace.to_json() == short.trace.to_json()   # the same every time


def test_without_renaming_the_sent_heartbeat_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: plain delta debugging cannot leave out the heartbeat's send (c2's JoinGroup would become #1
    while the trace delivers #2), so it keeps a step the renaming shrinker removes."""
    found = _noisy()
    monkeypatch.setattr(shrinking, "shrink_renamed", lambda *args: None)
    with unexcused([FINDING.name]):
        assert len(shrink(found, lambda: False).trace.steps) == 6


def test_an_allowance_counts_replayed_steps_and_stops_the_shrink_at_its_count() -> None:
    """The gate's shrink limit is a count of replayed steps (kgc/gate.py ``shrink_allowance``), so a spent allowance
    leaves the same trace on any machine: none spent, the 7 steps stay; a roomy one shrinks as without a limit."""
    found = _noisy()
    with unexcused([FINDING.name]):
        roomy = Allowance(10**6)
        assert len(shrink(found, roomy).trace.steps) == 5 and 0 < roomy.used < roomy.steps
        spent = Allowance(0)
        assert len(shrink(found, spent).trace.steps) == 7 and spent.used == 0


def _walk_found(monkeypatch: pytest.MonkeyPatch) -> Found:
    """The 0.10.0 gate's unshrunk counterexample for the mutant commit-in-completing-rebalance-accepted: found by the
    churn walk with an adversarial client at step 274 — only the adversary commits in CompletingRebalance, after the
    join it was answered, so most steps before it feed the clients' later requests."""
    monkeypatch.setattr(gate, "shrink", lambda found, _allowance: found)
    found = gate.run_gate("0.10.0", mutant="commit-in-completing-rebalance-accepted", budget_s=10).found
    assert found is not None and len(found.trace.steps) > 200
    return found


def test_a_left_out_join_takes_the_requests_that_needed_it_along(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leniently (a step that no longer runs is passed over), the 274 steps shrink to a readable handful; strictly
    alone, delta debugging stalls above a hundred (138 without any limit, 2026-11-28)."""
    found = _walk_found(monkeypatch)
    short = shrink(found, Allowance(10**6))
    assert len(short.trace.steps) <= 12 and short.violation.property == found.violation.property
    assert replay_checked(short.trace, actions_of(short.trace), short.violation.property) is not None
    monkeypatch.setattr(shrinking, "LENIENT_FIRST", False)
    assert len(shrink(found, Allowance(10**5)).trace.steps) > 100

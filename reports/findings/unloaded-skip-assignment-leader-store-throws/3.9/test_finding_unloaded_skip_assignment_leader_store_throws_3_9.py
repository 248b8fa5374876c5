"""Regression test kgc wrote for documented finding unloaded-skip-assignment-leader-store-throws on profile 3.9.

The release really behaves so (properties/findings.py): this replays the 43-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
parked-join-only-in-preparing-rebalance still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/unloaded-skip-assignment-leader-store-throws/3.9
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_unloaded_skip_assignment_leader_store_throws_3_9() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['unloaded-skip-assignment-leader-store-throws']):
        run = replay_checked(trace, actions_of(trace), 'parked-join-only-in-preparing-rebalance')
    assert run is not None, (
        "finding unloaded-skip-assignment-leader-store-throws no longer reproduces on profile 3.9")

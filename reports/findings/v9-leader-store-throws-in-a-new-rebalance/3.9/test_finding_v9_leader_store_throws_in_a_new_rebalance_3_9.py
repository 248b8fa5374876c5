"""Regression test kgc wrote for documented finding v9-leader-store-throws-in-a-new-rebalance on profile 3.9.

The release really behaves so (properties/findings.py): this replays the 22-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
no-illegal-state-error still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/v9-leader-store-throws-in-a-new-rebalance/3.9
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_v9_leader_store_throws_in_a_new_rebalance_3_9() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['v9-leader-store-throws-in-a-new-rebalance']):
        run = replay_checked(trace, actions_of(trace), 'no-illegal-state-error')
    assert run is not None, (
        "finding v9-leader-store-throws-in-a-new-rebalance no longer reproduces on profile 3.9")

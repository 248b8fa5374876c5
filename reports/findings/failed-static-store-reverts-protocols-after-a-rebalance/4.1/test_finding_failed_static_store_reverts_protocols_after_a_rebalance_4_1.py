"""Regression test kgc wrote for documented finding failed-static-store-reverts-protocols-after-a-rebalance on profile 4.1.

The release really behaves so (properties/findings.py): this replays the 22-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
stable-or-completing-group-has-members-and-a-common-protocol still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/failed-static-store-reverts-protocols-after-a-rebalance/4.1
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_failed_static_store_reverts_protocols_after_a_rebalance_4_1() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['failed-static-store-reverts-protocols-after-a-rebalance']):
        run = replay_checked(trace, actions_of(trace), 'stable-or-completing-group-has-members-and-a-common-protocol')
    assert run is not None, (
        "finding failed-static-store-reverts-protocols-after-a-rebalance no longer reproduces on profile 4.1")

"""Regression test kgc wrote for documented finding failed-static-store-of-a-departed-member-throws on profile 2.7.0.

The release really behaves so (properties/findings.py): this replays the 8-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
no-illegal-state-error still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/failed-static-store-of-a-departed-member-throws/2.7.0
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_failed_static_store_of_a_departed_member_throws_2_7_0() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['failed-static-store-of-a-departed-member-throws']):
        run = replay_checked(trace, actions_of(trace), 'no-illegal-state-error')
    assert run is not None, (
        "finding failed-static-store-of-a-departed-member-throws no longer reproduces on profile 2.7.0")

"""Regression test kgc wrote for documented finding instance-id-with-a-pending-member-id-throws on profile 4.1.

The release really behaves so (properties/findings.py): this replays the 5-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
no-illegal-state-in-an-event still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/instance-id-with-a-pending-member-id-throws/4.1
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_instance_id_with_a_pending_member_id_throws_4_1() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['instance-id-with-a-pending-member-id-throws']):
        run = replay_checked(trace, actions_of(trace), 'no-illegal-state-in-an-event')
    assert run is not None, (
        "finding instance-id-with-a-pending-member-id-throws no longer reproduces on profile 4.1")

"""Regression test kgc wrote for documented finding leave-of-a-pending-member-id-ignores-its-instance-id on profile 3.9.

The release really behaves so (properties/findings.py): this replays the 7-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
fenced-instance-id-never-succeeds still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/leave-of-a-pending-member-id-ignores-its-instance-id/3.9
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_leave_of_a_pending_member_id_ignores_its_instance_id_3_9() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['leave-of-a-pending-member-id-ignores-its-instance-id']):
        run = replay_checked(trace, actions_of(trace), 'fenced-instance-id-never-succeeds')
    assert run is not None, (
        "finding leave-of-a-pending-member-id-ignores-its-instance-id no longer reproduces on profile 3.9")

"""Regression test kgc wrote for documented finding no-liveness-op-after-the-join-response on profile 2.4.1.

The release really behaves so (properties/findings.py): this replays the 5-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
idle-member-has-a-live-heartbeat-expiration still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/no-liveness-op-after-the-join-response/2.4.1
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_no_liveness_op_after_the_join_response_2_4_1() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['no-liveness-op-after-the-join-response']):
        run = replay_checked(trace, actions_of(trace), 'idle-member-has-a-live-heartbeat-expiration')
    assert run is not None, "finding no-liveness-op-after-the-join-response no longer reproduces on profile 2.4.1"

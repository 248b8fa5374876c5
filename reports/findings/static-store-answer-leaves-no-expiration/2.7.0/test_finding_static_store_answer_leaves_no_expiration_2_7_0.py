"""Regression test kgc wrote for documented finding static-store-answer-leaves-no-expiration on profile 2.7.0.

The release really behaves so (properties/findings.py): this replays the 9-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
idle-member-has-a-live-heartbeat-expiration still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/static-store-answer-leaves-no-expiration/2.7.0
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_static_store_answer_leaves_no_expiration_2_7_0() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['static-store-answer-leaves-no-expiration']):
        run = replay_checked(trace, actions_of(trace), 'idle-member-has-a-live-heartbeat-expiration')
    assert run is not None, (
        "finding static-store-answer-leaves-no-expiration no longer reproduces on profile 2.7.0")

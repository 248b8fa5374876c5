"""Regression test kgc wrote for documented finding two-live-heartbeats-in-one-millisecond on profile 2.4.1.

The release really behaves so (properties/findings.py): this replays the 21-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
at-most-one-live-heartbeat-per-member still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/two-live-heartbeats-in-one-millisecond/2.4.1
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_two_live_heartbeats_in_one_millisecond_2_4_1() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['two-live-heartbeats-in-one-millisecond']):
        run = replay_checked(trace, actions_of(trace), 'at-most-one-live-heartbeat-per-member')
    assert run is not None, "finding two-live-heartbeats-in-one-millisecond no longer reproduces on profile 2.4.1"

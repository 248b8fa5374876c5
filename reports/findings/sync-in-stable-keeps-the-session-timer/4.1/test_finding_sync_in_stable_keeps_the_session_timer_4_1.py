"""Regression test kgc wrote for documented finding sync-in-stable-keeps-the-session-timer on profile 4.1.

The release really behaves so (properties/findings.py): this replays the 29-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
sync-in-stable-extends-the-session still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/sync-in-stable-keeps-the-session-timer/4.1
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_sync_in_stable_keeps_the_session_timer_4_1() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['sync-in-stable-keeps-the-session-timer']):
        run = replay_checked(trace, actions_of(trace), 'sync-in-stable-extends-the-session')
    assert run is not None, (
        "finding sync-in-stable-keeps-the-session-timer no longer reproduces on profile 4.1")

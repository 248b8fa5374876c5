"""Regression test kgc wrote for documented finding dead-to-dead-on-an-unloaded-group on profile 0.10.0.

The release really behaves so (properties/findings.py): this replays the 7-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
no-illegal-state-error still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/dead-to-dead-on-an-unloaded-group/0.10.0
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_dead_to_dead_on_an_unloaded_group_0_10_0() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['dead-to-dead-on-an-unloaded-group']):
        run = replay_checked(trace, actions_of(trace), 'no-illegal-state-error')
    assert run is not None, "finding dead-to-dead-on-an-unloaded-group no longer reproduces on profile 0.10.0"

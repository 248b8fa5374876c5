"""Regression test kgc wrote for documented finding stale-join-completes-reloaded-heartbeats on profile 2.7.0.

The release really behaves so (properties/findings.py): this replays the 52-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
refines-the-abstract-model still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/stale-join-completes-reloaded-heartbeats/2.7.0
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_stale_join_completes_reloaded_heartbeats_2_7_0() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['stale-join-completes-reloaded-heartbeats']):
        run = replay_checked(trace, actions_of(trace), 'refines-the-abstract-model')
    assert run is not None, (
        "finding stale-join-completes-reloaded-heartbeats no longer reproduces on profile 2.7.0")

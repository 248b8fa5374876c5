"""Regression test kgc wrote for documented finding max-size-refusal-leaves-the-join-waiting on profile 4.1.

The release really behaves so (properties/findings.py): this replays the 33-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
max-size-refusal-completes-the-join still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/max-size-refusal-leaves-the-join-waiting/4.1
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_max_size_refusal_leaves_the_join_waiting_4_1() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['max-size-refusal-leaves-the-join-waiting']):
        run = replay_checked(trace, actions_of(trace), 'max-size-refusal-completes-the-join')
    assert run is not None, (
        "finding max-size-refusal-leaves-the-join-waiting no longer reproduces on profile 4.1")

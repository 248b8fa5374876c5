"""Regression test kgc wrote for documented finding static-store-answers-the-next-restart-with-its-old-id on profile 3.9.

The release really behaves so (properties/findings.py): this replays the 23-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
join-response-carries-the-group-generation-and-leader still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/static-store-answers-the-next-restart-with-its-old-id/3.9
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_static_store_answers_the_next_restart_with_its_old_id_3_9() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['static-store-answers-the-next-restart-with-its-old-id']):
        run = replay_checked(trace, actions_of(trace), 'join-response-carries-the-group-generation-and-leader')
    assert run is not None, (
        "finding static-store-answers-the-next-restart-with-its-old-id no longer reproduces on profile 3.9")

"""Regression test kgc wrote for documented finding unload-leaves-a-static-restarts-join-parked on profile 3.9.

The release really behaves so (properties/findings.py): this replays the 19-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
unload-answers-every-parked-request-not-coordinator still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/unload-leaves-a-static-restarts-join-parked/3.9
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_unload_leaves_a_static_restarts_join_parked_3_9() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['unload-leaves-a-static-restarts-join-parked']):
        run = replay_checked(trace, actions_of(trace), 'unload-answers-every-parked-request-not-coordinator')
    assert run is not None, (
        "finding unload-leaves-a-static-restarts-join-parked no longer reproduces on profile 3.9")

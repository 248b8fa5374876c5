"""Regression test kgc wrote for documented finding failed-static-store-drops-the-next-restarts-join on profile 2.7.0.

The release really behaves so (properties/findings.py): this replays the 20-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
parked-request-is-answered-not-dropped still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/failed-static-store-drops-the-next-restarts-join/2.7.0
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_failed_static_store_drops_the_next_restarts_join_2_7_0() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['failed-static-store-drops-the-next-restarts-join']):
        run = replay_checked(trace, actions_of(trace), 'parked-request-is-answered-not-dropped')
    assert run is not None, (
        "finding failed-static-store-drops-the-next-restarts-join no longer reproduces on profile 2.7.0")

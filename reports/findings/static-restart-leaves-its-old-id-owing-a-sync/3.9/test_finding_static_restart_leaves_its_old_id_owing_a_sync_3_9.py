"""Regression test kgc wrote for documented finding static-restart-leaves-its-old-id-owing-a-sync on profile 3.9.

The release really behaves so (properties/findings.py): this replays the 14-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
members-owing-a-sync-are-watched-by-a-delayed-sync still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/static-restart-leaves-its-old-id-owing-a-sync/3.9
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_static_restart_leaves_its_old_id_owing_a_sync_3_9() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['static-restart-leaves-its-old-id-owing-a-sync']):
        run = replay_checked(trace, actions_of(trace), 'members-owing-a-sync-are-watched-by-a-delayed-sync')
    assert run is not None, (
        "finding static-restart-leaves-its-old-id-owing-a-sync no longer reproduces on profile 3.9")

"""Regression test kgc wrote for documented finding static-restart-keeps-a-protocol-it-does-not-support on profile 2.4.1.

The release really behaves so (properties/findings.py): this replays the 26-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
stable-or-completing-group-has-members-and-a-common-protocol still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest reports/findings/static-restart-keeps-a-protocol-it-does-not-support/2.4.1
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_static_restart_keeps_a_protocol_it_does_not_support_2_4_1() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused(['static-restart-keeps-a-protocol-it-does-not-support']):
        run = replay_checked(trace, actions_of(trace), 'stable-or-completing-group-has-members-and-a-common-protocol')
    assert run is not None, (
        "finding static-restart-keeps-a-protocol-it-does-not-support no longer reproduces on profile 2.4.1")

"""The tail of finding unload-leaves-a-static-restarts-join-parked on 3.2+ (KIP-814), on the walk that found it: the
gate's static-partition walk of walk seed 0 on 3.9. A static leader restarts in Stable (its JoinGroup v9 parked until
the store callback), the partition is unloaded, and the store then succeeds: the callback builds the leader's member
list on the Dead group object, currentMemberMetadata throws (GroupMetadata.scala 3.9.0-rc3 591-593, called from
GroupCoordinator.scala 3.9.0-rc3 1409-1415), and nothing answers the JoinGroup. Later in the same walk a restarted
leader of the reloaded group is answered with skipAssignment and the whole member list (KIP-814, Corrections 1), which
only-the-leader-receives-the-member-list must accept.
"""
from __future__ import annotations

import functools
import random

from harness.excuses import unexcused
from harness.world import World
from kgc.gate import STATIC_WALKS, walk
from kgc.runs import CheckedRun

FINDING = "unload-leaves-a-static-restarts-join-parked"
#: the steps of the recorded walk (index in world.steps): the store callback that throws, the restarted leader's answer
THROWS_AT, LEADER_ANSWER_AT = 154, 299


def _walk(steps: int) -> CheckedRun:
    scope, clients = STATIC_WALKS["static-partition"]
    run = CheckedRun(World("3.9", scope, clients=clients, seed=0, record=True))
    walk(run, random.Random(0), steps, hold_partition=True, hold_static=True)
    return run


@functools.cache
def _excused() -> CheckedRun:
    return _walk(LEADER_ANSWER_AT + 1)


def test_the_store_callback_of_an_unloaded_leader_throws_and_leaves_its_join_parked() -> None:
    run = _excused()
    step = run.world.steps[THROWS_AT]
    assert step.action.kind == "CompleteAppend" and step.action.arg == "NONE" and not step.responses
    assert [str(e) for e in step.events] == ["IllegalStateError: cannot obtain member metadata for group g in Dead"]
    assert not run.violations, run.violations[:1]


def test_a_restarted_leaders_v9_answer_carries_the_member_list() -> None:
    run = _excused()
    answer = run.world.steps[LEADER_ANSWER_AT].responses[0]
    assert answer.api == "JoinGroup" and answer.error == "NONE" and answer.skip_assignment
    assert answer.leader_id == answer.member_id and len(answer.members) == 2
    assert not run.violations


def test_without_the_excuse_the_throw_and_the_stranded_join_are_reported() -> None:
    with unexcused([FINDING]):
        run = _walk(THROWS_AT + 1)
    assert {v.property for v in run.violations if v.step == THROWS_AT} >= {
        "no-illegal-state-error", "parked-join-only-in-preparing-rebalance"}

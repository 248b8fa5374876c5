"""The DelayedOperation contract (SPEC.md §4.1), DelayedOperationPurgatory (§4.2) and the MockTimer
firing rule (DESIGN.md §4).

Generic behaviour is tested with small DelayedOperation subclasses that record their hooks; the
group-specific cases (seed 001's first join, several heartbeat ops on one MemberKey) go through the
coordinator.
"""
from __future__ import annotations

import pytest

from impl import Errors, GroupState
from impl.purgatory import DelayedOperation, DelayedOperationPurgatory, MockTimer
from tests.group_builders import (G, PROFILES, S_MS, completing, coordinator, hb_deadlines, new_member,
                                  op_deadlines, stable)


class Probe(DelayedOperation):
    """Completes when ``ready`` (or after ``ready_after`` tries); records every hook it runs."""

    def __init__(self, delay_ms: int, seq: int, log: list[str] | None = None, ready: bool = False,
                 ready_after: int | None = None) -> None:
        super().__init__(delay_ms, seq)
        self.ready, self.ready_after, self.tries = ready, ready_after, 0
        self.log = [] if log is None else log
        self.on_expire = None

    def try_complete(self) -> bool:
        self.tries += 1
        if self.ready or (self.ready_after is not None and self.tries >= self.ready_after):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.log.append(f"complete:{self.seq}")

    def on_expiration(self) -> None:
        self.log.append(f"expire:{self.seq}")
        if self.on_expire is not None:
            self.on_expire()


def purgatory() -> tuple[MockTimer, DelayedOperationPurgatory]:
    timer = MockTimer()
    return timer, DelayedOperationPurgatory("Test", timer)


# -- DelayedOperation (§4.1) ------------------------------------------------------------------------
def test_force_complete_runs_on_complete_exactly_once() -> None:
    op = Probe(10, 1)
    assert op.force_complete() is True
    assert op.force_complete() is False
    op.ready = True
    assert op.try_complete() is False                    # the condition holds, but forceComplete loses
    assert op.log == ["complete:1"] and op.complete_count == 1 and op.completed


def test_expiry_runs_on_complete_then_on_expiration() -> None:
    timer, p = purgatory()
    op = Probe(10, 1)
    p.try_complete_else_watch(op, ["k"])
    timer.advance(11)
    assert op.log == ["complete:1", "expire:1"] and op.complete_count == 1


def test_completed_op_is_cancelled_and_never_fires() -> None:
    timer, p = purgatory()
    op = Probe(10, 1)
    p.try_complete_else_watch(op, ["k"])
    op.ready = True
    assert p.check_and_complete("k") == 1
    assert timer.entries == {} and timer.next_deadline() is None
    timer.advance(100)
    assert op.log == ["complete:1"]


def test_timer_wins_then_try_complete_loses() -> None:
    # the race of §4.1: whoever wins forceComplete runs onComplete; the loser gets false
    timer, p = purgatory()
    op = Probe(10, 1)
    p.try_complete_else_watch(op, ["k"])
    timer.advance(11)
    op.ready = True
    assert p.check_and_complete("k") == 0
    assert op.force_complete() is False
    assert op.complete_count == 1 and op.log == ["complete:1", "expire:1"]


def test_run_after_completion_does_not_expire() -> None:
    op = Probe(10, 1)
    op.force_complete()
    op.run()                                             # a timer entry that lost the race
    assert op.log == ["complete:1"] and op.complete_count == 1


# -- DelayedOperationPurgatory (§4.2) ------------------------------------------------------------------
def test_try_complete_else_watch_completing_at_once_watches_nothing() -> None:
    timer, p = purgatory()
    op = Probe(10, 1, ready=True)
    assert p.try_complete_else_watch(op, ["a", "b"]) is True
    assert p.watchers == {} and timer.entries == {} and op.log == ["complete:1"]


def test_try_complete_else_watch_watches_every_key_and_arms_the_timer() -> None:
    timer, p = purgatory()
    timer.advance(5)
    op = Probe(10, 1)
    assert p.try_complete_else_watch(op, ["a", "b"]) is False
    assert p.watchers == {"a": [op], "b": [op]}
    assert list(timer.entries.values()) == [op] and op.deadline_ms == 15
    assert op.tries == 2                                 # try, watch, try again (§4.2)


def test_try_complete_else_watch_second_try_completes() -> None:
    timer, p = purgatory()
    op = Probe(10, 1, ready_after=2)                     # the condition turns true while being watched
    assert p.try_complete_else_watch(op, ["a"]) is True
    assert timer.entries == {} and op.log == ["complete:1"]
    assert p.check_and_complete("a") == 0 and p.watchers == {}


def test_check_and_complete_completes_only_ready_ops_and_counts_them() -> None:
    timer, p = purgatory()
    ops = [Probe(10, seq) for seq in (1, 2, 3)]
    for op in ops:
        p.try_complete_else_watch(op, ["k"])
    ops[0].ready = ops[2].ready = True
    assert p.check_and_complete("k") == 2
    assert [op.completed for op in ops] == [True, False, True]
    assert p.watchers == {"k": [ops[1]]}                  # completed ops dropped
    assert list(timer.entries) == [2]
    ops[1].ready = True
    assert p.check_and_complete("k") == 1 and "k" not in p.watchers   # empty key removed
    assert p.check_and_complete("k") == 0 and p.check_and_complete("never") == 0


def test_op_completed_elsewhere_is_dropped_without_counting() -> None:
    _, p = purgatory()
    op = Probe(10, 1)
    p.try_complete_else_watch(op, ["a", "b"])
    op.force_complete()                                  # e.g. via another key
    assert p.check_and_complete("a") == 0 and "a" not in p.watchers
    assert [k for k, _ in p.watched()] == []


def test_several_ops_watched_on_one_key() -> None:
    timer, p = purgatory()
    log: list[str] = []
    old, new = Probe(10, 1, log), Probe(20, 2, log)
    p.try_complete_else_watch(old, ["member:g:m"])
    p.try_complete_else_watch(new, ["member:g:m"])
    assert [op.seq for _, op in p.watched()] == [1, 2]
    timer.advance(11)
    assert log == ["complete:1", "expire:1"] and not new.completed


# -- the coordinator's purgatories ------------------------------------------------------------------------
def test_first_join_completes_inside_try_complete_else_watch_e0() -> None:
    # seed 001 / §4.2: the first member's DelayedJoin completes at once — nothing watched, nothing armed
    c = coordinator("0.10.0")
    _, future = new_member(c)
    assert future.done and future.result.error is Errors.NONE
    assert op_deadlines(c, "DelayedJoin") == [] and c.join_purgatory.watchers == {}
    assert [op.kind for op in c.timer.entries.values()] == ["DelayedHeartbeat"]


def test_initial_delayed_join_is_watched_and_armed_modern() -> None:
    c = coordinator("3.9")                               # §4.5: InitialDelayedJoin can only time out
    new_member(c)
    assert [(op.kind, op.key) for op in c.delayed_operations() if op.kind != "DelayedHeartbeat"] == [
        ("InitialDelayedJoin", f"join:{G}")]


@pytest.mark.parametrize("profile", PROFILES)
def test_several_heartbeat_ops_on_one_member_key(profile: str) -> None:
    # §4.2: "Multiple heartbeat ops can be watched on the same MemberKey at once (old ones that did not
    # complete plus the new one)". ≤ 2.4 (§4.6): two liveness events in the same ms leave the first op's
    # predicate latestHeartbeat + session > deadline false, so it stays next to the new one. 2.5+: the
    # heartbeatSatisfied flag completes the old op at every reschedule, so only the new one is watched.
    scene = stable(profile)
    c = scene.c
    c.advance(1_000)
    for _ in range(2):
        assert c.commit_offsets(G, scene.follower, scene.gen, {}).result.error is Errors.NONE
    expected = 2 if profile == "0.10.0" else 1
    assert hb_deadlines(c, scene.follower) == [c.now_ms + S_MS] * expected
    assert len({op.key for op in c.delayed_operations() if op.member_id == scene.follower}) == 1


@pytest.mark.parametrize("profile", PROFILES)
def test_reschedule_completes_earlier_heartbeat_ops(profile: str) -> None:
    # §4.6: the liveness event completes the earlier ops on the key (checkAndComplete) before arming one
    scene = completing(profile)
    c = scene.c
    c.advance(1_000)
    c.sync_group(G, scene.gen, scene.leader, {})         # → Stable; every answered member rescheduled
    for _ in range(3):
        c.advance(1_000)
        c.heartbeat(G, scene.leader, scene.gen)
        assert hb_deadlines(c, scene.leader) == [c.now_ms + S_MS]


# -- MockTimer (DESIGN.md §4) ---------------------------------------------------------------------------
def test_timer_fires_only_strictly_earlier_deadlines() -> None:
    timer = MockTimer()
    op = Probe(10, 1)
    timer.add(op)
    timer.advance(10)
    assert op.log == []                                  # deadline 10 is not < now 10
    timer.advance(1)
    assert op.log == ["complete:1", "expire:1"]


def test_task_created_while_firing_counts_from_the_advanced_clock() -> None:
    timer = MockTimer()
    first, second = Probe(10, 1), Probe(5, 2)
    first.on_expire = lambda: timer.add(second)
    timer.add(first)
    timer.advance(100)
    assert second.deadline_ms == 105 and second.log == []   # not 15: created at 100, not at 10
    timer.advance(5)
    assert second.log == []
    timer.advance(1)
    assert second.log == ["complete:2", "expire:2"]


@pytest.mark.parametrize("delay", [0, -5])
def test_task_with_non_positive_delay_fires_when_created(delay: int) -> None:
    timer = MockTimer()
    op = Probe(delay, 1)
    timer.add(op)
    assert op.log == ["complete:1", "expire:1"] and timer.entries == {}


def test_tasks_fire_in_deadline_then_seq_order() -> None:
    timer, log = MockTimer(), []
    for seq, delay in [(1, 5), (3, 3), (2, 3), (4, 4)]:
        timer.add(Probe(delay, seq, log))
    timer.advance(10)
    assert log == ["complete:2", "expire:2", "complete:3", "expire:3", "complete:4", "expire:4",
                   "complete:1", "expire:1"]


def test_manual_mode_fires_only_due_tasks() -> None:
    timer, log = MockTimer(), []
    early, late = Probe(5, 1, log), Probe(50, 2, log)
    timer.add(early)
    timer.add(late)
    timer.advance_time(10)
    assert log == [] and [op.seq for op in timer.due()] == [1]
    with pytest.raises(ValueError):
        timer.fire(2)                                    # not due
    with pytest.raises(ValueError):
        timer.fire(99)                                   # no such task
    timer.fire(1)
    assert log == ["complete:1", "expire:1"] and list(timer.entries) == [2]


def test_coordinator_manual_mode_refuses_a_task_that_is_not_due() -> None:
    scene = completing("3.9")
    c = scene.c
    c.advance_time(S_MS)                                 # heartbeat ops due at formation + S are not due yet
    assert c.due_timers() == []
    seq = min(op.seq for op in c.delayed_operations() if op.kind == "DelayedHeartbeat")
    with pytest.raises(ValueError):
        c.fire_timer(seq)
    c.advance_time(1)
    due = c.due_timers()
    assert [t.kind for t in due] == ["DelayedHeartbeat", "DelayedHeartbeat"]
    c.fire_timer(due[1].seq)                             # a scheduler may choose the order
    assert len(c.describe(G).members) == 1 and c.describe(G).state is GroupState.PREPARING_REBALANCE

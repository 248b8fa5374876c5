"""The 4.1 runtime's state is plain data: a snapshot round-trips, restores into a coordinator that behaves like
the original, and the same calls give the same bytes."""
from __future__ import annotations

import pickle
from typing import Any, Callable

from core.types import Errors
from impl.java_gc import JavaGroupCoordinator
from tests.kafka_suites.gmm_context import GROUP, context, create_group, join, sync

PLAIN = (int, str, bytes, bool, type(None), tuple)


def plain(value: Any) -> bool:
    return isinstance(value, PLAIN) and (not isinstance(value, tuple) or all(plain(v) for v in value))


def busy(c: JavaGroupCoordinator) -> list[Any]:
    """A coordinator mid-flight: parked joins, a pending sync, an open batch, a written batch, a queued and a
    stale timer event, a timed-out write whose record is still in the log."""
    create_group(c)
    futures = [join(c, session=6000, rebalance=10000), join(c, session=6000, rebalance=10000)]
    c.advance(3000)
    c.advance(3000)
    leader = futures[0].result.member_id
    follower = futures[1].result.member_id
    futures.append(sync(c, follower, 1))
    futures.append(sync(c, leader, 1, assignments={leader: b"a", follower: b"b"}))   # a write, pending
    c.flush()                                                                        # written, not committed
    futures.append(join(c, "", group_id="other", session=6000, known=True))           # another group: open batch
    c.advance(5000)                                                                  # write timeout of the sync
    c.advance_time(1100)                                                             # session timers queued
    futures.append(c.heartbeat(GROUP, follower, 1))                                  # rides on the open batch
    return futures


def test_a_snapshot_is_plain_data_and_round_trips() -> None:
    c = context("4.1", append_mode="deferred")
    busy(c)
    state = c.to_state()
    assert plain(state)
    assert {t.status for t in c.timers()} >= {"queued", "scheduled"}
    restored = JavaGroupCoordinator.from_state(state)
    assert restored.to_state() == state
    assert pickle.dumps(restored.to_state()) == pickle.dumps(state)


def _continue(c: JavaGroupCoordinator) -> list[Any]:
    steps: list[Callable[[], Any]] = [
        lambda: [c.fire_timer(t.seq) for t in c.timers() if t.status in ("queued", "stale")],
        lambda: c.complete_appends(),
        lambda: c.advance(10000),
        lambda: join(c, "", session=6000, rebalance=10000),
    ]
    for step in steps:
        step()
    return [(key, api, result) for key, api, result in c.take_responses()] + [c.to_state()]


def test_a_restored_coordinator_behaves_like_the_original() -> None:
    original = context("4.1", append_mode="deferred")
    busy(original)
    original.take_responses()
    restored = JavaGroupCoordinator.from_state(original.to_state())
    assert _continue(restored) == _continue(original)


def test_the_same_calls_give_the_same_bytes_and_answers() -> None:
    runs = []
    for _ in range(2):
        c = context("4.1", append_mode="deferred")
        futures = busy(c)
        runs.append((pickle.dumps(c.to_state()), [f.result for f in futures]))
    assert runs[0] == runs[1]
    assert any(r is not None and r.error is Errors.COORDINATOR_NOT_AVAILABLE for r in runs[0][1])   # the timeout


def test_the_views_change_nothing() -> None:
    c = context("4.1", append_mode="deferred")
    busy(c)
    c.advance_time(100000)   # every deadline passed: events wait in the queue
    before = c.to_state()
    views = (c.due_timers(), c.timers(), c.delayed_operations(), c.pending_appends(), c.describe(GROUP),
             c.describe_group(GROUP), c.describe_group("other"), c.next_deadline(), c.group_record(GROUP))
    assert c.to_state() == before and views[0]   # reading the views ran and queued nothing

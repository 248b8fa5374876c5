"""Kafka's DelayedOperationTest.scala restated against impl's DelayedOperation, DelayedOperationPurgatory and MockTimer
(impl/purgatory.py) at 2.4.1, 2.7.0 and 3.9.0.

Kafka's tests run a purgatory on the system timer with a reaper thread; the reference runs one thing at a time on a
mock clock (DESIGN.md §4), so an expiry is the clock passing the deadline rather than a thread waking up, and the
tests about operation locks and threads have no counterpart (each says why in ``SUITE``).
"""
from __future__ import annotations

from impl.purgatory import DelayedOperation, DelayedOperationPurgatory, MockTimer
from tests.kafka_suites.registry import Suite, restates

_THREADS = ("operation locks and concurrent completion: the reference runs one request or timer task at a time on one "
            "thread (DESIGN.md §4), so it has no operation lock, no tryLock contention and no maybeTryComplete / "
            "safeTryComplete to restate")
_CANCEL = ("cancelForKey: the group coordinator never cancels a watch key (at 2.4.1 only the transaction marker "
           "channel calls it), so the reference's purgatory has no such call")
_FUTURE = ("DelayedFuturePurgatory (CompletableFutures completed on an executor thread, used by broker admin paths, "
           "never by the group coordinator) has no counterpart in the reference")

SUITE = Suite(
    "core/src/test/scala/unit/kafka/server/DelayedOperationTest.scala",
    tests={
        "2.4.1": ("testRequestSatisfaction", "testRequestExpiry", "testDelayedFuture", "testRequestPurge",
                  "shouldCancelForKeyReturningCancelledOperations",
                  "shouldReturnNilOperationsOnCancelForKeyWhenKeyDoesntExist", "testTryCompleteLockContention",
                  "testTryCompleteWithMultipleThreads", "testDelayedOperationLock", "testDelayedOperationLockOverride"),
        **{tag: ("testLockInTryCompleteElseWatch", "testSafeTryCompleteOrElse", "testRequestSatisfaction",
                 "testRequestExpiry", "testDelayedFuture", "testRequestPurge",
                 "shouldCancelForKeyReturningCancelledOperations",
                 "shouldReturnNilOperationsOnCancelForKeyWhenKeyDoesntExist", "testTryCompleteWithMultipleThreads")
           for tag in ("2.7.0", "3.9.0")},   # KAFKA-8334 (2.7.0): the op's lock is held through tryCompleteElseWatch
    },
    not_applicable={
        "testDelayedFuture": _FUTURE,
        "shouldCancelForKeyReturningCancelledOperations": _CANCEL,
        "shouldReturnNilOperationsOnCancelForKeyWhenKeyDoesntExist": _CANCEL,
        **{name: _THREADS for name in ("testTryCompleteLockContention", "testTryCompleteWithMultipleThreads",
                                       "testDelayedOperationLock", "testDelayedOperationLockOverride",
                                       "testLockInTryCompleteElseWatch")},
    },
)

ALL = ("2.4.1", "2.7.0", "3.9.0")


class MockDelayedOperation(DelayedOperation):
    """The test file's operation: completes when ``completable`` is set and someone tries it."""

    kind = "MockDelayedOperation"
    __slots__ = ("completable", "tries")

    def __init__(self, delay_ms: int, seq: int) -> None:
        super().__init__(delay_ms, seq)
        self.completable = False
        self.tries = 0

    def try_complete(self) -> bool:
        self.tries += 1
        return self.force_complete() if self.completable else False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        pass


def purgatory() -> DelayedOperationPurgatory:
    """``DelayedOperationPurgatory("mock")``: its own timer, as Kafka's has."""
    return DelayedOperationPurgatory("mock", MockTimer())


@restates("testRequestSatisfaction", *ALL)
def test_watched_operations_complete_when_their_key_is_checked_and_they_can(profile: str) -> None:
    p = purgatory()
    r1, r2 = MockDelayedOperation(100000, 1), MockDelayedOperation(100000, 2)
    assert p.check_and_complete("test1") == 0                  # nothing waiting, nothing satisfied
    assert not p.try_complete_else_watch(r1, ["test1"])        # not satisfied, hence watched
    assert p.check_and_complete("test1") == 0
    assert not p.try_complete_else_watch(r2, ["test2"])
    assert p.check_and_complete("test2") == 0
    r1.completable = True
    assert p.check_and_complete("test1") == 1
    assert p.check_and_complete("test1") == 0
    r2.completable = True
    assert p.check_and_complete("test2") == 1
    assert p.check_and_complete("test2") == 0


@restates("testRequestExpiry", *ALL)
def test_an_operation_expires_once_its_delay_has_passed_and_not_before(profile: str) -> None:
    p = purgatory()
    r1, r2 = MockDelayedOperation(20, 1), MockDelayedOperation(200000, 2)
    assert not p.try_complete_else_watch(r1, ["test1"])
    assert not p.try_complete_else_watch(r2, ["test2"])
    p.timer.advance(19)
    assert not r1.completed                                    # Kafka: the time for expiration is at least 20 ms
    p.timer.advance(2)
    assert r1.completed and r1.expired                         # completed due to expiration
    assert not r2.completed


@restates("testRequestPurge", *ALL)
def test_completed_operations_leave_the_timer_at_once_and_a_watch_list_when_its_key_is_checked(profile: str) -> None:
    p = purgatory()
    r1, r2, r3 = (MockDelayedOperation(100000, seq) for seq in (1, 2, 3))
    p.try_complete_else_watch(r1, ["test1"])
    p.try_complete_else_watch(r2, ["test1", "test2"])
    p.try_complete_else_watch(r3, ["test1", "test2", "test3"])
    assert (p.num_delayed(), p.purgatory_size()) == (3, 6)
    r2.completable = True
    r2.try_complete()                                          # completed outside the purgatory: leaves the timer
    assert p.num_delayed() == 2
    r3.completable = True
    r3.try_complete()
    assert p.num_delayed() == 1
    p.check_and_complete("test1")                              # checking a key purges its watch list
    assert p.purgatory_size() == 4
    p.check_and_complete("test2")
    assert p.purgatory_size() == 2
    p.check_and_complete("test3")
    assert p.purgatory_size() == 1


@restates("testSafeTryCompleteOrElse", "2.7.0", "3.9.0")
def test_the_else_part_runs_only_when_the_first_try_fails_and_is_followed_by_a_last_try(profile: str) -> None:
    """safeTryCompleteOrElse is tryCompleteElseWatch's shape (2.7.0+): try; else watch, then try once more. The lock
    it holds throughout has no counterpart; the else part (watching) and the tries do."""
    p = purgatory()
    done = MockDelayedOperation(100000, 1)
    done.completable = True
    assert p.try_complete_else_watch(done, ["key"])
    assert done.tries == 1 and p.purgatory_size() == 0         # completed at once: the else part did not run
    waiting = MockDelayedOperation(100000, 2)
    assert not p.try_complete_else_watch(waiting, ["key"])
    assert waiting.tries == 2 and p.purgatory_size() == 1      # watched, then a last completion check

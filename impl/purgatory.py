"""Delayed operations, the purgatory that watches them, and the mock timer that expires them.

Contract: SPEC.md §4.1–4.2 (Kafka's DelayedOperation / DelayedOperationPurgatory) and the
MockTimer firing rule of DESIGN.md §4. Nothing here reads the wall clock.
"""
from __future__ import annotations

from abc import ABC, abstractmethod


class DelayedOperation(ABC):
    """An operation that completes when its condition holds or when its delay runs out.

    ``force_complete`` flips ``completed`` exactly once; the winner cancels the timer entry and
    runs ``on_complete``. On timeout ``run`` does ``force_complete`` and, if it won, then
    ``on_expiration`` (SPEC.md §4.1: onComplete then onExpiration).
    """

    kind = "DelayedOperation"
    __slots__ = ("seq", "delay_ms", "deadline_ms", "completed", "complete_count", "expired", "_timer")

    def __init__(self, delay_ms: int, seq: int) -> None:
        self.seq = seq
        self.delay_ms = delay_ms
        self.deadline_ms = -1           # set when the op is handed to the timer
        self.completed = False
        self.complete_count = 0         # how often on_complete ran; exactly-once means ≤ 1
        self.expired = False            # set by the timer before it forces completion
        self._timer: MockTimer | None = None

    @abstractmethod
    def try_complete(self) -> bool:
        """Check the completion condition; if it holds call force_complete and return its result."""

    @abstractmethod
    def on_complete(self) -> None:
        """The real work, run exactly once by whoever wins force_complete."""

    @abstractmethod
    def on_expiration(self) -> None:
        """Extra work after a timeout (runs after on_complete)."""

    def force_complete(self) -> bool:
        if self.completed:
            return False
        self.completed = True
        if self._timer is not None:
            self._timer.cancel(self)
        self.complete_count += 1
        self.on_complete()
        return True

    def run(self) -> None:
        """Timer expiry (TimerTask.run): no lock is taken here; hooks take the group lock themselves."""
        if not self.completed:
            self.expired = True
        if self.force_complete():
            self.on_expiration()


class MockTimer:
    """Kafka's MockTimer: tasks fire only when the clock is advanced past their deadline.

    ``advance(ms)`` adds ``ms`` to the clock, then repeatedly fires the due task with the smallest
    (deadline, seq) — due meaning deadline < now — until none is due. A task with delay ≤ 0 runs
    when added. ``advance_time`` + ``fire`` let a scheduler choose the firing order itself.
    """

    __slots__ = ("now_ms", "entries")

    def __init__(self, now_ms: int = 0) -> None:
        self.now_ms = now_ms
        self.entries: dict[int, DelayedOperation] = {}

    def add(self, op: DelayedOperation) -> None:
        op.deadline_ms = self.now_ms + op.delay_ms
        if op.delay_ms <= 0:
            op.run()
            return
        op._timer = self
        self.entries[op.seq] = op

    def cancel(self, op: DelayedOperation) -> None:
        self.entries.pop(op.seq, None)

    def due(self) -> list[DelayedOperation]:
        now = self.now_ms
        return sorted((op for op in self.entries.values() if op.deadline_ms < now),
                      key=lambda op: (op.deadline_ms, op.seq))

    def next_deadline(self) -> int | None:
        return min((op.deadline_ms for op in self.entries.values()), default=None)

    def fire(self, seq: int) -> None:
        op = self.entries.get(seq)
        if op is None or op.deadline_ms >= self.now_ms:
            raise ValueError(f"timer task {seq} is not due at {self.now_ms} ms.")
        del self.entries[seq]
        op._timer = None
        op.run()

    def advance_time(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("the clock only moves forward.")
        self.now_ms += ms

    def advance(self, ms: int) -> None:
        self.advance_time(ms)
        while True:
            due = self.due()
            if not due:
                return
            self.fire(due[0].seq)


class DelayedOperationPurgatory:
    """Watch lists of delayed operations by key (SPEC.md §4.2)."""

    __slots__ = ("name", "timer", "watchers", "purge_interval", "_watches")

    def __init__(self, name: str, timer: MockTimer, purge_interval: int = 64) -> None:
        self.name = name
        self.timer = timer
        self.watchers: dict[str, list[DelayedOperation]] = {}
        # Kafka's reaper purges completed ops once enough accumulate (purgeInterval); so does kgc,
        # counting watches instead of wall time so that runs stay deterministic
        self.purge_interval = purge_interval
        self._watches = 0

    def purge_completed(self) -> None:
        """Drop completed ops from every watch list, and empty lists."""
        for key in list(self.watchers):
            live = [op for op in self.watchers[key] if not op.completed]
            if live:
                self.watchers[key] = live
            else:
                del self.watchers[key]

    def try_complete_else_watch(self, op: DelayedOperation, keys: list[str]) -> bool:
        """Try once; watch on every key; try again; else hand the op to the timer.

        Returns whether *this* call completed the operation.
        """
        if op.try_complete():
            return True
        self._watches += 1
        if self._watches % self.purge_interval == 0:
            self.purge_completed()
        for key in keys:
            if op.completed:
                return False
            self.watchers.setdefault(key, []).append(op)
        if op.try_complete():
            return True
        if not op.completed:
            self.timer.add(op)
        return False

    def check_and_complete(self, key: str) -> int:
        """Try every uncompleted op watched on ``key``; drop completed ones. Returns how many completed."""
        ops = self.watchers.get(key)
        if not ops:
            return 0
        completed = 0
        for op in list(ops):
            if not op.completed and op.try_complete():
                completed += 1
        live = [op for op in self.watchers.get(key, ()) if not op.completed]
        if live:
            self.watchers[key] = live
        else:
            self.watchers.pop(key, None)
        return completed

    def purgatory_size(self) -> int:
        """Kafka's ``watched`` (the PurgatorySize gauge): watch-list entries, completed ones not yet dropped too."""
        return sum(len(ops) for ops in self.watchers.values())

    def num_delayed(self) -> int:
        """Kafka's ``numDelayed``: this purgatory's operations still waiting in the timer (the timer is shared by
        both of the coordinator's purgatories, so count the timed ops watched here; an op in the timer is watched)."""
        timed = self.timer.entries
        return len({op.seq for ops in self.watchers.values() for op in ops if timed.get(op.seq) is op})

    def watched(self) -> list[tuple[str, DelayedOperation]]:
        """Every uncompleted (key, op), sorted by key then op seq."""
        return sorted(((k, op) for k, ops in self.watchers.items() for op in ops if not op.completed),
                      key=lambda kv: (kv[0], kv[1].seq))

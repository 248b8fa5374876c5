"""Keyed timers of one coordinator partition, as Kafka 4.x's runtime runs them (R1), held as plain data.

CoordinatorRuntime.EventBasedCoordinatorTimer (CoordinatorRuntime.java:356-425 at 4.1.1): ``schedule(key)``
puts a new task under the key and cancels the previous one; when a task expires on the timer thread it only
*enqueues* a write event; that event, when the partition's event loop runs it, first checks that the key
still maps to this very task (``tasks.remove(key, this)``) and is dropped otherwise — the key was replaced
or cancelled while the event waited. Classic groups schedule with ``retry=false`` (GMM:6342-6348, 7069-7073),
so a failed timer write is not retried. kgc splits the two halves into explicit steps: ``expire`` (the clock
passed the deadline: the task's event joins the queue) and ``take`` (the loop runs a queued event: live or
stale). Unkeyed tasks (key None) are the runtime's own write timeouts (OperationTimeout, R2).

A task's operation is data, ``(kind, *args)``, never a closure: ("heartbeat", group_id, member_id),
("join", group_id), ("initial-join", group_id, delay_ms, remaining_ms), ("sync", group_id, generation_id),
("write-timeout", write_seq).

Timer rule of 4.x: a task expires once the clock has reached its deadline (deadline ≤ now; Kafka's
timing wheel and its MockCoordinatorTimer both fire at the deadline), unlike the Scala MockTimer's
strict "<" that the other profiles use (DESIGN.md §4).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Op = tuple[Any, ...]


@dataclass(slots=True)
class TimerTask:
    seq: int
    key: str | None       # None: an unkeyed runtime task (a write timeout)
    deadline_ms: int
    op: Op
    expired: bool = False


class KeyedTimer:
    """Scheduled tasks by key (live until their event runs), unkeyed tasks by seq, and the event queue."""

    __slots__ = ("tasks", "unkeyed", "queue")

    def __init__(self) -> None:
        self.tasks: dict[str, TimerTask] = {}
        self.unkeyed: dict[int, TimerTask] = {}
        self.queue: list[TimerTask] = []   # expired tasks whose events wait for the loop, in expiry order

    def schedule(self, key: str | None, deadline_ms: int, op: Op, seq: int) -> TimerTask:
        task = TimerTask(seq, key, deadline_ms, op)
        if key is None:
            self.unkeyed[seq] = task
        else:
            self.tasks[key] = task   # the previous task under ``key`` is cancelled (or, if queued, now stale)
        return task

    def schedule_if_absent(self, key: str, deadline_ms: int, op: Op, seq: int) -> None:
        if key not in self.tasks:
            self.schedule(key, deadline_ms, op, seq)

    def cancel(self, key: str) -> None:
        self.tasks.pop(key, None)

    def cancel_unkeyed(self, seq: int) -> None:
        task = self.unkeyed.pop(seq, None)
        if task is not None and task.expired:
            self.queue.remove(task)

    def scheduled(self) -> list[TimerTask]:
        """Tasks still on the timing wheel (not yet expired), by (deadline, seq)."""
        live = [t for t in self.tasks.values() if not t.expired] + [t for t in self.unkeyed.values()
                                                                   if not t.expired]
        return sorted(live, key=lambda t: (t.deadline_ms, t.seq))

    def next_deadline(self) -> int | None:
        wheel = self.scheduled()
        return wheel[0].deadline_ms if wheel else None

    def expire(self, now_ms: int) -> list[TimerTask]:
        """The wheel fires every task due at ``now_ms``: each one's event joins the queue."""
        due = [t for t in self.scheduled() if t.deadline_ms <= now_ms]
        for task in due:
            task.expired = True
            self.queue.append(task)
        return due

    def is_live(self, task: TimerTask) -> bool:
        if task.key is None:
            return self.unkeyed.get(task.seq) is task
        return self.tasks.get(task.key) is task

    def take(self, seq: int) -> tuple[TimerTask, bool]:
        """Run the queued event of task ``seq``: returns the task and whether it is still live (if so it
        leaves the key map, as ``tasks.remove(key, this)`` does); a stale one is dropped."""
        task = next((t for t in self.queue if t.seq == seq), None)
        if task is None:
            raise ValueError(f"no queued timer event {seq}; queued: {[t.seq for t in self.queue]}")
        self.queue.remove(task)
        live = self.is_live(task)
        if live and task.key is not None:
            del self.tasks[task.key]
        elif live:
            del self.unkeyed[task.seq]
        return task, live

    def clear(self) -> None:
        """cancelAll at unload: nothing of this partition fires any more."""
        self.tasks.clear()
        self.unkeyed.clear()
        self.queue.clear()

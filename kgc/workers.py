"""Independent jobs (the gate's profiles) in forked worker processes that the parent can stop at any moment.

Each job runs in a process of its own, at most ``workers`` at once; it reports progress and then its result over a
pipe. The parent waits on the pipes, so a signal reaches it at once (``kgc.interrupts``), and whatever ends the wait
— an interrupt, a failed job — stops every worker still running, by pid: SIGTERM, then SIGKILL. A worker ignores
SIGINT (a Ctrl-C reaches the whole process group: the parent decides) and dies with its parent
(``explore.workers.as_worker``). concurrent.futures' pool is not used: leaving its ``with`` block waits for the
running jobs, and the workers outlive a parent killed by SIGTERM.
"""
from __future__ import annotations

import multiprocessing
import os
import traceback
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Sequence, cast

from explore.workers import as_worker, forking

STOP_WAIT_S = 2.0    # how long a worker has to exit after SIGTERM before it gets SIGKILL

Progress = Callable[[str], None]
Job = Callable[[Progress], Any]


class JobFailed(RuntimeError):
    """A job raised, or its worker died; the message says which and how."""


def _child(conn: Connection, job: Job, parent: int) -> None:
    as_worker(parent)
    try:
        result = job(lambda message: conn.send(("progress", message)))
        conn.send(("done", result))
    except BaseException:   # noqa: BLE001 — the parent reports it; a worker has nobody else to tell
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def run_jobs(jobs: Sequence[tuple[str, Job]], workers: int, on_progress: Callable[[str, str], None],
             on_done: Callable[[str, Any], None]) -> None:
    """Run every ``(key, job)``; ``job(progress)`` returns its result. ``on_progress(key, message)`` and
    ``on_done(key, result)`` are called in the parent as the messages arrive."""
    ctx = multiprocessing.get_context("fork")
    pending = deque(jobs)
    running: dict[Connection, tuple[str, Any]] = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                key, job = pending.popleft()
                ours, theirs = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(theirs, job, os.getpid()), name=f"kgc-{key}", daemon=True)
                with forking():
                    proc.start()
                theirs.close()
                running[ours] = (key, proc)
            for ready in wait(list(running)):
                conn = cast(Connection, ready)
                key, proc = running[conn]
                try:
                    kind, value = conn.recv()
                except EOFError:
                    proc.join()
                    raise JobFailed(f"the worker process for {key} ended without a result "
                                    f"(exit code {proc.exitcode}; out of memory?).") from None
                if kind == "progress":
                    on_progress(key, value)
                    continue
                del running[conn]
                conn.close()
                proc.join()
                if kind == "error":
                    raise JobFailed(f"{key} failed in its worker process:\n{value}")
                on_done(key, value)
    finally:
        stop([proc for _key, proc in running.values()])


def stop(procs: Sequence[Any]) -> None:
    """End ``procs`` by pid: SIGTERM, then SIGKILL for any still alive after ``STOP_WAIT_S``; reap them all."""
    for proc in procs:
        if proc.exitcode is None:
            proc.terminate()
    for proc in procs:
        proc.join(STOP_WAIT_S)
        if proc.exitcode is None:
            proc.kill()
            proc.join()


__all__ = ["JobFailed", "run_jobs", "stop"]

"""The event loop of Kafka 4.x's CoordinatorRuntime for classic groups: every request and every timer runs as a
write event of its partition (R1, R2); its record goes to the log, and its answer waits for the commit (R3).

The world drives what the runtime leaves open: ``flush`` (the open batch is written, or fails and reverts the
group map), ``commit`` (the high watermark passes the oldest written batch), the clock (timers expire into the
event queue, write timeouts among them) and ``fire_timer`` (the loop runs one queued timer event, live or
stale). In "sync" append mode every write is flushed and committed inside the call that made it.
"""
from __future__ import annotations

from typing import Callable

from core.types import Errors
from impl.group import IllegalStateError
from impl.java_gc.base import ACTIVE, JavaBase, Partition, Result
from impl.java_gc.group import ClassicGroup, RequestError, answer
from impl.java_gc.log import Write, append_error, operation_error
from impl.java_gc.timers import TimerTask
from impl.results import (CommitResult, HeartbeatResult, JoinGroupResult, LeaveGroupResult, ResponseFuture,
                          SyncGroupResult)

#: a group a commit of offsets alone brings back on load: a "simple" Empty group without protocol type
SIMPLE_GROUP = None


class IllegalStateLog(str):
    """A line of ``errors`` that logs an IllegalStateException an event or an append callback threw: the runtime
    catches it, fails the event and logs it (CR:1421-1423, 384-405). A typed line, so that a reader counts these
    (``illegal_state_errors``) without parsing the text; it stays a str for the readers of the log."""

    __slots__ = ()


def service_error(api: str, error: Errors) -> object:
    """The service's answer to a failed write (GCS:880-891, 924-935, 965-979, 1008-1029, 1996-2002)."""
    error = operation_error(error)
    if api == "JoinGroup":
        return JoinGroupResult(error, -1, None, None, "", "")
    if api == "SyncGroup":
        return SyncGroupResult(error)
    if api == "Heartbeat":
        # GCS:969-972: a heartbeat to a loading partition is answered blindly (R6)
        return HeartbeatResult(Errors.NONE if error is Errors.COORDINATOR_LOAD_IN_PROGRESS else error)
    if api == "LeaveGroup":
        return LeaveGroupResult(error)
    return CommitResult(error)


class RuntimeMixin(JavaBase):
    def _active_partition(self, group_id: str) -> Partition:
        """withActiveContextOrThrow (CR:2149-2167): no context → NOT_COORDINATOR, loading → LOAD_IN_PROGRESS."""
        part = self.partitions.get(self.partition_for(group_id))
        if part is None:
            raise RequestError(Errors.NOT_COORDINATOR)
        if part.state != ACTIVE:
            raise RequestError(Errors.COORDINATOR_LOAD_IN_PROGRESS)
        return part

    def run_write(self, api: str, group_id: str, future: ResponseFuture | None, op: Callable[[], Result],
                  refused: Callable[[Errors], object] | None = None) -> None:
        """One write event: run the operation, then append its record or wait for the earlier writes. An
        operation that throws is answered at once (``refused`` builds that answer where the API differs)."""
        try:
            part = self._active_partition(group_id)
            self._created = []
            result = op()
        except RequestError as thrown:
            if refused is not None and future is not None:
                answer(future, refused(thrown.error))
            else:
                self._answer_failed(api, future, thrown.error)
            return
        except IllegalStateError as exc:   # logged by the runtime; the request gets UNKNOWN_SERVER_ERROR
            self.errors.append(IllegalStateLog(f"{self.now_ms} {exc}"))
            self._answer_failed(api, future, Errors.UNKNOWN_SERVER_ERROR)
            return
        self._append(part, api, future, result)

    def illegal_state_errors(self) -> int:
        """How many IllegalStateExceptions the runtime has logged (the lines of ``errors`` that log one)."""
        return sum(1 for line in self.errors if isinstance(line, IllegalStateLog))

    def _answer_failed(self, api: str, future: ResponseFuture | None, error: Errors) -> None:
        if future is not None:
            answer(future, service_error(api, error))
        else:
            self.errors.append(f"{self.now_ms} timer write failed: {error.name}")   # retry=false: ignored

    def _append(self, part: Partition, api: str, future: ResponseFuture | None, result: Result) -> None:
        write = Write(self._seq(), part.index, api, future, result.response, result.group_id, result.record,
                      result.has_record, result.callback, tuple(self._created))
        log = part.log
        if write.has_record:
            log.append(write)
            for group_id in write.created:
                part.visible_at[group_id] = None
        else:
            riding = log.open is not None and log.open.records > 0
            for group_id in write.created:
                part.visible_at[group_id] = None if riding else log.end
            if not log.wait_for_pending(write):
                self._finish_write(write, None)
                return
        if self.config.append_mode == "sync":
            self._flush(part, None)
            while part.log.written:
                self._commit(part)
        elif not write.done:
            # CR:1412-1419: a write still waiting after its operation gets offsets.commit.timeout.ms (R2)
            write.timeout_seq = self._seq()
            part.timer.schedule(None, self.now_ms + self.offsets_commit_timeout_ms, ("write-timeout", write.seq),
                                write.timeout_seq)

    # -- the world's choices over the log ----------------------------------------------------------------
    def _flush(self, part: Partition, error: Errors | None) -> None:
        log = part.log
        if log.open is None:
            return
        if error is None:
            members = list(log.open.writes)
            log.flush()
            for seq in members:
                write = log.writes.get(seq)
                for group_id in write.created if write is not None else ():
                    if part.visible_at.get(group_id, 0) is None:
                        part.visible_at[group_id] = log.end
            return
        failed = log.fail_open()
        for write in reversed(failed):   # revertLastWrittenOffset: groups created in the batch disappear
            for group_id in write.created:
                part.groups.pop(group_id, None)
                part.visible_at.pop(group_id, None)
        for write in failed:
            self._finish_write(write, error)

    def _commit(self, part: Partition) -> None:
        for write in part.log.commit_next():
            if write.has_record and write.group_id is not None:
                durable = self.durable.setdefault(part.index, {})
                if write.record is not None:
                    durable[write.group_id] = write.record
                else:
                    durable.setdefault(write.group_id, SIMPLE_GROUP)
            self._finish_write(write, None)

    def _finish_write(self, write: Write, error: Errors | None) -> None:
        """CoordinatorWriteEvent.complete (CR:1433-1458): the append callback first, then the request's future."""
        if write.done:
            return
        write.done = True
        part = self.partitions.get(write.partition)
        if part is not None and write.timeout_seq is not None:
            part.timer.cancel_unkeyed(write.timeout_seq)
        if write.callback is not None:
            self._run_callback(write, error)
        if error is None:
            if write.response is not None:
                answer(write.future, write.response)
        else:
            self._answer_failed(write.api, write.future, error)

    def _run_callback(self, write: Write, error: Errors | None) -> None:
        kind = write.callback[0] if write.callback else None
        try:
            if kind == "new-group" and error is not None:
                answer(write.future, JoinGroupResult(append_error(error), -1, None, None, "", ""))
            elif kind == "assignment":
                _, group, generation_id, items = write.callback  # type: ignore[misc]
                assert isinstance(group, ClassicGroup)
                self.on_assignment_appended(group, int(generation_id), dict(items), error)
            elif kind == "static":
                self.on_static_member_appended(write.future, write.callback or (), error)
            elif kind == "empty" and error is not None:   # GMM:6590-6599: only logged
                self.errors.append(f"{self.now_ms} failed to write the empty group metadata: {error.name}")
        except IllegalStateError as exc:
            self.errors.append(IllegalStateLog(f"{self.now_ms} {exc}"))

    # -- timer events ------------------------------------------------------------------------------------
    def _run_timer_event(self, part: Partition, task: TimerTask) -> None:
        kind = task.op[0]
        if kind == "write-timeout":
            write = part.log.writes.get(int(task.op[1]))
            if write is not None:   # its record stays in the log: a later commit makes it durable, answers nothing
                write.timeout_seq = None
                self._finish_write(write, Errors.REQUEST_TIMED_OUT)
            return
        handlers: dict[str, Callable[..., Result]] = {
            "heartbeat": self.on_heartbeat_timer, "join": self.on_join_timer,
            "initial-join": self.on_initial_join_timer, "sync": self.on_sync_timer}
        group_id = str(task.op[1])
        self.run_write("Timer", group_id, None, lambda: handlers[kind](*task.op[1:]))

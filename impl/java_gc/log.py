"""One partition's log as the runtime sees it (R2, R3, R5): pending writes, the open batch, written batches
waiting for the high watermark, and the committed records — all plain data.

CoordinatorRuntime.java at 4.1.1: a write's records are replayed and appended to the *open batch*
(``append``, 948-1086); the batch is flushed to the local log after the append linger (779-842) — the world's
``flush`` — and a flush that fails reverts the timeline to the batch's base and fails every event of the batch
(``failCurrentBatch``, 848-854). A written batch's events wait in the deferred queue until the high watermark
passes it (1879-1915) — the world's ``commit``. A write with no records completes once every earlier write is
committed: it rides on the open batch if that holds records, else waits for the last written offset
(``waitForPendingWrites``, 922-932). Every write event not done after its operation gets a timeout of
``offsets.commit.timeout.ms`` (1412-1419; OperationTimeout 1146-1166) that fails it with REQUEST_TIMED_OUT but
neither reverts nor removes its records.

Offsets here count group records: each write with records appends exactly one (the classic paths write one
GroupMetadata record at most); ``end`` is the offset after the last record, as the high watermark counts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.types import Errors
from impl.results import ResponseFuture

#: A group record: (generation, protocol_type, protocol, leader, members) with members
#: (member_id, instance_id, client_id, client_host, rebalance_timeout, session_timeout, subscription, assignment).
Record = tuple[Any, ...]


@dataclass(slots=True)
class Write:
    """One write event: its request's future, the answer a commit releases, its record and append callback."""

    seq: int
    partition: int
    api: str                              # a request API name, or "Timer" for a timer's write
    future: ResponseFuture | None         # the request's response future (None for a timer's write)
    response: object = None               # the answer the write's completion releases (Heartbeat/Leave/Commit)
    group_id: str | None = None           # the record's group (None: no record)
    record: Record | None = None          # the GroupMetadata value it appends (None: a tombstone-free no-op)
    has_record: bool = False
    callback: tuple[Any, ...] | None = None   # the appendFuture continuation, as data (runtime.py runs it)
    created: tuple[str, ...] = ()         # groups this write put into the group map (reverted if its batch fails)
    timeout_seq: int | None = None
    done: bool = False


@dataclass(slots=True)
class Batch:
    base: int                                  # offset of its first record
    writes: list[int] = field(default_factory=list)   # write seqs (records and riding no-record writes)
    records: int = 0


class PartitionLog:
    """Pending writes of one partition, in the order the event loop ran them."""

    __slots__ = ("writes", "open", "written", "waiting", "end", "committed")

    def __init__(self, end: int = 0) -> None:
        self.writes: dict[int, Write] = {}            # not yet done, or done but still in a batch (by seq)
        self.open: Batch | None = None                # the batch not yet flushed
        self.written: list[tuple[int, list[int]]] = []   # (end offset, write seqs) flushed, not committed
        self.waiting: list[tuple[int, int]] = []      # (offset, write seq): no-record writes waiting for it
        self.end = end                                # last written offset (end of the local log)
        self.committed = end                          # high watermark

    def has_pending(self) -> bool:
        return bool(self.open or self.written or self.waiting)

    def append(self, write: Write) -> None:
        """A write with a record joins the open batch (allocated if none)."""
        if self.open is None:
            self.open = Batch(self.end)
        self.open.writes.append(write.seq)
        self.open.records += 1
        self.writes[write.seq] = write

    def wait_for_pending(self, write: Write) -> bool:
        """waitForPendingWrites: False if nothing is pending, so the write completes at once."""
        if self.open is not None and self.open.records:
            self.open.writes.append(write.seq)
        elif self.committed < self.end:
            self.waiting.append((self.end, write.seq))
        else:
            return False
        self.writes[write.seq] = write
        return True

    def flush(self) -> None:
        """The open batch is written to the local log: its events wait for the high watermark."""
        if self.open is None:
            return
        self.end = self.open.base + self.open.records
        self.written.append((self.end, self.open.writes))
        self.open = None

    def fail_open(self) -> list[Write]:
        """The flush failed: the log end goes back to the batch base; the batch's writes, in order."""
        if self.open is None:
            return []
        failed = [self.writes.pop(s) for s in self.open.writes if s in self.writes]
        self.end = self.open.base
        self.open = None
        return failed

    def commit_next(self) -> list[Write]:
        """The high watermark passes the oldest written batch: the writes it completes, in order."""
        if not self.written:
            return []
        end, seqs = self.written.pop(0)
        self.committed = end
        riding = [s for offset, s in self.waiting if offset <= end]
        self.waiting = [(offset, s) for offset, s in self.waiting if offset > end]
        return [self.writes.pop(s) for s in seqs + riding if s in self.writes]

    def drop_all_written(self) -> list[Write]:
        """Unload's failAll: the writes waiting for the high watermark (written batches and record-less writes
        waiting on them), in offset order; the open batch is failed apart (failCurrentBatch)."""
        order = sorted([(end, i, s) for i, (end, seqs) in enumerate(self.written) for s in seqs] +
                       [(offset, len(self.written), s) for offset, s in self.waiting])
        self.written, self.waiting = [], []
        return [self.writes.pop(s) for _, _, s in order if s in self.writes]


#: CoordinatorOperationExceptionHelper.handleOperationException (4.1.1): what the service answers for a
#: failed write; any other error passes through (NETWORK_EXCEPTION → LOAD_IN_PROGRESS is transactional only).
OPERATION_ERRORS = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.INVALID_FETCH_SIZE: Errors.UNKNOWN_SERVER_ERROR,
}

#: GMM.appendGroupMetadataErrorToResponseError (GMM:7498-7517): the same table, applied by the append
#: callbacks of classic groups (R8) — REQUEST_TIMED_OUT → COORDINATOR_NOT_AVAILABLE, where 3.9 said
#: REBALANCE_IN_PROGRESS.
APPEND_ERRORS = dict(OPERATION_ERRORS)


def operation_error(error: Errors) -> Errors:
    return OPERATION_ERRORS.get(error, error)


def append_error(error: Errors) -> Errors:
    return APPEND_ERRORS.get(error, error)

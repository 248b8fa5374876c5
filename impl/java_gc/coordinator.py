"""JavaGroupCoordinator: Kafka 4.x's group coordinator serving classic groups (profile ``4.1``, tag 4.1.1),
behind the public surface of DESIGN.md §4 — GroupCoordinatorService's checks in front of the runtime.

``GroupCoordinator(CoordinatorConfig(profile="4.1"))`` builds one of these (impl/profiles.py SIBLING_RUNTIMES).
Requests, the clock, the world's log choices (``flush``, ``commit``, ``complete_appends``), scripted choice
points (``force_choices``) are here; partition load/unload in partitions.py, read-only views in views.py.
"""
from __future__ import annotations

from typing import Any, Hashable, Mapping

from core.events import StepEvent
from core.types import Errors
from impl.coordinator import JoinRequest
from impl.java_gc.base import Partition
from impl.java_gc.choices import ChoicePoint, Choices
from impl.java_gc.group import answer
from impl.java_gc.joining import JoinMixin
from impl.java_gc.log import operation_error
from impl.java_gc.members import MembersMixin
from impl.java_gc.partitions import PartitionsMixin
from impl.java_gc.rebalance import RebalanceMixin
from impl.java_gc.runtime import RuntimeMixin
from impl.java_gc.static import StaticMixin
from impl.java_gc.syncing import SyncMixin
from impl.java_gc.versions import JAVA_RELEASES, JavaRelease, max_version
from impl.java_gc.views import ViewsMixin
from impl.results import (CommitResult, CoordinatorConfig, HeartbeatResult, JoinGroupResult, LeaveGroupResult,
                          ResponseFuture, SyncGroupResult)

#: offsets.commit.timeout.ms default (GroupCoordinatorConfig.java:88): every classic write's timeout (R2)
OFFSETS_COMMIT_TIMEOUT_MS = 5000


class JavaGroupCoordinator(JoinMixin, StaticMixin, RebalanceMixin, SyncMixin, MembersMixin, RuntimeMixin,
                           PartitionsMixin, ViewsMixin):
    """One broker's group coordinator service leading ``num_partitions`` offsets partitions, on a mock clock."""

    def __init__(self, config: CoordinatorConfig | None = None, record_events: bool = False,
                 offsets_commit_timeout_ms: int = OFFSETS_COMMIT_TIMEOUT_MS, num_partitions: int = 1) -> None:
        self.config = config or CoordinatorConfig(profile="4.1")
        if self.config.profile not in JAVA_RELEASES:
            raise ValueError(f"the Java coordinator runs profiles {sorted(JAVA_RELEASES)}, not "
                             f"{self.config.profile!r}.")
        if offsets_commit_timeout_ms < 1 or num_partitions < 1:
            raise ValueError("offsets_commit_timeout_ms and num_partitions must be at least 1.")
        self.release: JavaRelease = JAVA_RELEASES[self.config.profile]
        self.offsets_commit_timeout_ms = offsets_commit_timeout_ms
        self.num_partitions = num_partitions
        self.partitions = {i: Partition(i) for i in range(num_partitions)}   # this broker leads them all
        self.durable: dict[int, dict[str, Any]] = {}   # committed group records per partition (survive unload)
        self.now_ms = 0
        self.counter = 0
        self.incarnations = 0
        self.active = True                             # GroupCoordinatorService.isActive
        self.choices = Choices()
        self.errors: list[str] = []
        self.events: list[StepEvent] = []
        self.record_events = record_events
        self._created: list[str] = []
        self.fired: list[tuple[str, str, bool]] = []   # (key, kind, live) of timer events run: history
        self._outbox: list[tuple[Hashable, str, Any]] = []

    @staticmethod
    def api_versions(profile: str) -> Mapping[str, tuple[int, int]]:
        """API -> (min, max) a broker of ``profile``'s release accepts and advertises (R14; versions.py): what
        `kgc serve` advertises for the APIs this runtime answers."""
        return JAVA_RELEASES[profile].api_versions

    # -- futures ------------------------------------------------------------------------------------
    def _future(self, request_key: Hashable | None, api: str) -> ResponseFuture:
        return ResponseFuture(("req", self._seq()) if request_key is None else request_key, api, self._outbox)

    def take_responses(self) -> list[tuple[Hashable, str, Any]]:
        """Every future completion since the last call, in completion order."""
        out, self._outbox[:] = list(self._outbox), []
        return out

    def take_fired(self) -> list[tuple[str, str, bool]]:
        """The timer events run since the last call: (key, kind, live — False if dropped as stale)."""
        out, self.fired = self.fired, []
        return out

    def force_choices(self, picks: list[int]) -> None:
        """Script the next choice points: each takes ``options[pick]`` instead of the default (index 0)."""
        self.choices.script = list(picks)

    def take_choices(self) -> list[ChoicePoint]:
        """The choice points with more than one option met since the last call, with what was picked."""
        out, self.choices.log = self.choices.log, []
        return out

    def set_active(self, active: bool) -> None:
        """GroupCoordinatorService startup/shutdown: an inactive service answers COORDINATOR_NOT_AVAILABLE."""
        self.active = active

    # -- requests (GroupCoordinatorService) -----------------------------------------------------------
    def _refused(self, group_id: str | None, empty_ok: bool = False) -> Errors | None:
        """The service's checks before the runtime (GCS:851-863; R7): inactive, then the group id."""
        if not self.active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if group_id is None or (group_id == "" and not empty_ok):
            return Errors.INVALID_GROUP_ID
        return None

    def join_group(self, group_id: str, member_id: str, session_timeout_ms: int, rebalance_timeout_ms: int,
                   protocol_type: str, protocols: list[tuple[str, bytes]], group_instance_id: str | None = None,
                   require_known_member_id: bool = False, client_id: str = "client",
                   client_host: str = "/127.0.0.1", request_key: Hashable | None = None,
                   support_skipping_assignment: bool = False) -> ResponseFuture:
        """``require_known_member_id``: JoinGroup v4+; ``support_skipping_assignment``: v9+ (KIP-814)."""
        future = self._future(request_key, "JoinGroup")
        error = self._refused(group_id)
        if error is None and not (self.config.group_min_session_timeout_ms <= session_timeout_ms
                                  <= self.config.group_max_session_timeout_ms):
            error = Errors.INVALID_SESSION_TIMEOUT   # GCS:865-871, before the partition is looked at (R7)
        if error is not None:
            answer(future, JoinGroupResult(error, -1, None, None, "", member_id))
            return future
        req = JoinRequest(member_id, session_timeout_ms, rebalance_timeout_ms, protocol_type,
                          tuple((str(n), bytes(m)) for n, m in protocols), require_known_member_id,
                          client_id, client_host, group_instance_id, support_skipping_assignment)
        self.run_write("JoinGroup", group_id, future, lambda: self.classic_group_join(req, group_id, future))
        return future

    def sync_group(self, group_id: str, generation_id: int, member_id: str,
                   assignments: dict[str, bytes] | None = None, group_instance_id: str | None = None,
                   protocol_type: str | None = None, protocol_name: str | None = None,
                   request_key: Hashable | None = None) -> ResponseFuture:
        future = self._future(request_key, "SyncGroup")
        error = self._refused(group_id)
        if error is not None:
            answer(future, SyncGroupResult(error))
            return future
        given = dict(assignments or {})
        self.run_write("SyncGroup", group_id, future, lambda: self.classic_group_sync(
            group_id, generation_id, member_id, given, group_instance_id, protocol_type, protocol_name, future))
        return future

    def heartbeat(self, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None = None,
                  request_key: Hashable | None = None) -> ResponseFuture:
        future = self._future(request_key, "Heartbeat")
        error = self._refused(group_id)
        if error is not None:
            answer(future, HeartbeatResult(error))
            return future
        self.run_write("Heartbeat", group_id, future, lambda: self.classic_group_heartbeat(
            group_id, member_id, generation_id, group_instance_id))
        return future

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]],
                    request_key: Hashable | None = None) -> ResponseFuture:
        future = self._future(request_key, "LeaveGroup")
        error = self._refused(group_id)
        if error is not None:
            answer(future, LeaveGroupResult(error))
            return future
        identities = [(str(m), i) for m, i in members]

        def unknown_group(error: Errors) -> object:
            # GCS:1008-1029: a group that is not there: each member UNKNOWN_MEMBER_ID, the top level NONE
            if error is not Errors.UNKNOWN_MEMBER_ID:
                return LeaveGroupResult(operation_error(error))
            return LeaveGroupResult(Errors.NONE, tuple((m, i, Errors.UNKNOWN_MEMBER_ID) for m, i in identities))
        self.run_write("LeaveGroup", group_id, future, lambda: self.classic_group_leave(group_id, identities),
                       unknown_group)
        return future

    def commit_offsets(self, group_id: str, member_id: str, generation_id: int, offsets: object = None,
                       group_instance_id: str | None = None, request_key: Hashable | None = None,
                       api_version: int | None = None) -> ResponseFuture:
        """OffsetCommit as far as membership goes. ``offsets`` None stands for a commit of some offsets (one
        write with records); an empty collection commits none. ``api_version`` defaults to 4.1's newest."""
        future = self._future(request_key, "OffsetCommit")
        error = self._refused(group_id, empty_ok=True)   # GCS:1983-1989: only a null group id is invalid
        if error is not None:
            answer(future, CommitResult(error))
            return future
        version = max_version(self.release, "OffsetCommit") if api_version is None else api_version
        has_offsets = offsets is None or bool(offsets)
        self.run_write("OffsetCommit", group_id, future, lambda: self.commit_offset(
            group_id, member_id, generation_id, group_instance_id, version, has_offsets))
        return future

    # -- the clock and the event queue ----------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Move the clock, then run every due timer event in (deadline, seq) order until none is due."""
        self.advance_time(ms)
        while True:
            due = self._due()
            if not due:
                return
            self.fire_timer(due[0].seq)

    def advance_time(self, ms: int) -> None:
        """Move the clock only: due tasks expire into their partition's event queue (nothing runs yet)."""
        if ms < 0:
            raise ValueError("the clock only moves forward.")
        self.now_ms += ms
        self._expire()

    def _expire(self) -> None:
        for index in sorted(self.partitions):
            self.partitions[index].timer.expire(self.now_ms)

    def _due(self) -> list[Any]:
        """Timer events the loop can run now: queued ones and tasks already at their deadline (read-only)."""
        due = [t for i in sorted(self.partitions) for t in self.partitions[i].timer.queue]
        due += [t for i in sorted(self.partitions) for t in self.partitions[i].timer.scheduled()
                if t.deadline_ms <= self.now_ms]
        return sorted(due, key=lambda t: (t.deadline_ms, t.seq))

    def fire_timer(self, seq: int) -> None:
        """The event loop runs the queued event of timer task ``seq``: dropped if its key moved on (R1)."""
        self._expire()
        for part in self.partitions.values():
            if any(t.seq == seq for t in part.timer.queue):
                task, live = part.timer.take(seq)
                self.fired.append((task.key or "", str(task.op[0]), live))
                if live:
                    self._run_timer_event(part, task)
                return
        raise ValueError(f"timer task {seq} is not due.")

    def next_deadline(self) -> int | None:
        deadlines = [d for p in self.partitions.values() if (d := p.timer.next_deadline()) is not None]
        return min(deadlines, default=None)

    # -- the world's choices over the logs ------------------------------------------------------------
    def flush(self, partition: int = 0, error: Errors | None = None) -> None:
        """The open batch of ``partition`` is written to the log, or (``error``) fails and is reverted."""
        part = self.partitions.get(partition)
        if part is not None:
            self._flush(part, None if error is None else Errors(error))

    def commit(self, partition: int = 0) -> None:
        """The high watermark of ``partition`` passes its oldest written batch (answers waiting on it go)."""
        part = self.partitions.get(partition)
        if part is not None:
            self._commit(part)

    def complete_appends(self, ok: bool = True, error: Errors | None = None) -> None:
        """Deferred mode: every partition's open batch is written and committed (``ok``) or fails with
        ``error`` (default REQUEST_TIMED_OUT), and every written batch commits."""
        for index in sorted(self.partitions):
            part = self.partitions[index]
            self._flush(part, None if ok else Errors(error or Errors.REQUEST_TIMED_OUT))
            while part.log.written and index in self.partitions:
                self._commit(part)

    def complete_append(self, error: Errors | None = None) -> None:
        """The oldest pending write: its batch committed (flushed first if open), or the open batch fails."""
        for index in sorted(self.partitions):
            part = self.partitions[index]
            if error is not None and part.log.open is not None:
                self._flush(part, Errors(error))
                return
            if error is None and part.log.has_pending():
                if not part.log.written:
                    self._flush(part, None)
                self._commit(part)
                return
        raise ValueError("there is no pending log append to complete.")

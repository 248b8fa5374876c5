"""Read-only views of the Java coordinator: the live group (``describe``), the DescribeGroups API over the
committed group map (``describe_group``: R4, R16), timers, pending writes and snapshots."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from core.types import Errors, GroupState
from impl.java_gc.base import ACTIVE, JavaBase
from impl.results import AppendView, DelayedOpView, GroupSummary, GroupView, MemberView, TimerView

if TYPE_CHECKING:
    from impl.java_gc.coordinator import JavaGroupCoordinator


@dataclass(frozen=True, slots=True)
class TaskView:
    """A timer task of the runtime: on the wheel ("scheduled"), expired and waiting for the event loop
    ("queued"), or queued after its key moved on, to be dropped when it runs ("stale")."""

    seq: int
    partition: int
    key: str | None
    kind: str
    deadline_ms: int
    status: str


class ViewsMixin(JavaBase):
    def describe(self, group_id: str) -> GroupView | None:
        """The group as the coordinator holds it now (uncommitted changes included), or None."""
        group = self._group(group_id)
        if group is None:
            return None
        members = {m.member_id: MemberView(
            m.member_id, m.group_instance_id, m.session_timeout_ms, m.rebalance_timeout_ms,
            m.awaiting_join is not None, m.awaiting_sync is not None, m.is_new, m.assignment, m.protocols,
            0, m.has_satisfied_heartbeat()) for m in group.all_members()}
        return GroupView(group.group_id, group.state, group.generation_id, group.leader_id, group.protocol_type,
                         group.protocol_name, members, frozenset(group.pending_join_members),
                         frozenset(group.pending_sync_members), group.num_members_awaiting_join,
                         tuple(sorted(group.supported_protocols.items())), group.new_member_added,
                         tuple(sorted(group.static_members.items())))

    def describe_group(self, group_id: str | None, api_version: int = 6) -> GroupSummary:
        """DescribeGroups for one group (GCS:1270-1318, GMM:737-790): a group is described once its creation is
        committed, its fields read live (ClassicGroup is not a timeline structure: R4); an unknown group is Dead,
        with GROUP_ID_NOT_FOUND from v6 (R16)."""
        if not self.active:
            return GroupSummary(Errors.COORDINATOR_NOT_AVAILABLE, "", "", "")
        if group_id is None:
            return GroupSummary(Errors.INVALID_GROUP_ID, "", "", "")
        part = self.partitions.get(self.partition_for(group_id))
        if part is None or part.state != ACTIVE:
            error = Errors.NOT_COORDINATOR if part is None else Errors.COORDINATOR_LOAD_IN_PROGRESS
            return GroupSummary(error, "", "", "")
        visible = part.visible_at.get(group_id, -1)
        group = part.groups.get(group_id)
        if group is None or visible is None or visible < 0 or visible > part.log.committed:
            return GroupSummary(Errors.GROUP_ID_NOT_FOUND if api_version >= 6 else Errors.NONE,
                                GroupState.DEAD.value, "", "")
        stable = group.is_(GroupState.STABLE)
        members = tuple(m.describe(group.protocol_name if stable else None) for m in group.all_members())
        return GroupSummary(Errors.NONE, group.state.value, group.protocol_type or "",
                            (group.protocol_name or "") if stable else "", members)

    def group_record(self, group_id: str) -> Any:
        """The group's last committed GroupMetadata record (what a load rebuilds it from), or None."""
        return self.durable.get(self.partition_for(group_id), {}).get(group_id)

    # -- timers and writes --------------------------------------------------------------------------
    def timers(self) -> list[TaskView]:
        out = []
        for index in sorted(self.partitions):
            timer = self.partitions[index].timer
            for task in timer.scheduled():
                out.append(TaskView(task.seq, index, task.key, str(task.op[0]), task.deadline_ms, "scheduled"))
            for task in timer.queue:
                status = "queued" if timer.is_live(task) else "stale"
                out.append(TaskView(task.seq, index, task.key, str(task.op[0]), task.deadline_ms, status))
        return sorted(out, key=lambda t: t.seq)

    def due_timers(self) -> list[TimerView]:
        """Timer events the loop can run now (expired, live or stale), by (deadline, seq); changes nothing."""
        return [TimerView(t.seq, t.deadline_ms, str(t.op[0]), t.key or "") for t in self._due()]

    def delayed_operations(self) -> list[DelayedOpView]:
        """The live keyed timers (the 4.x counterpart of the purgatories' operations), by key."""
        out = []
        for index in sorted(self.partitions):
            part = self.partitions[index]
            for key, task in sorted(part.timer.tasks.items()):
                member_id = str(task.op[2]) if task.op[0] == "heartbeat" else ""
                group = part.groups.get(str(task.op[1]))
                is_pending = group is not None and group.is_pending_member(member_id)
                out.append(DelayedOpView(str(task.op[0]), key, task.deadline_ms, False, task.seq, member_id,
                                         is_pending))
        return out

    def pending_appends(self) -> list[AppendView]:
        """Writes with a record not yet committed (open batch, then written), oldest first — a write already
        answered by its timeout included: its record may still commit."""
        out = []
        for index in sorted(self.partitions):
            part = self.partitions[index]
            for write in sorted(part.log.writes.values(), key=lambda w: w.seq):
                if write.has_record:
                    group = part.groups.get(write.group_id or "")
                    kind = str(write.callback[0]) if write.callback else "record"
                    out.append(AppendView(write.seq, write.group_id or "",
                                          group.generation_id if group is not None else -1, kind))
        return out

    def batches(self) -> list[tuple[int, bool, int]]:
        """Per led partition, by index: (index, an open batch holds writes, written batches awaiting the high
        watermark) — what the world may flush or commit next; changes nothing."""
        return [(i, self.partitions[i].log.open is not None, len(self.partitions[i].log.written))
                for i in sorted(self.partitions)]

    # -- snapshots ----------------------------------------------------------------------------------
    def to_state(self) -> tuple[Any, ...]:
        from impl.java_gc.snapshot import coordinator_to_state
        return coordinator_to_state(cast("JavaGroupCoordinator", self))

    @classmethod
    def from_state(cls, state: tuple[Any, ...], record_events: bool = False) -> Any:
        from impl.java_gc.snapshot import coordinator_from_state
        return coordinator_from_state(cast("type[JavaGroupCoordinator]", cls), state, record_events)


"""Seeded bugs in Kafka 4.x's runtime seams (profile 4.1, impl/java_gc): a keyed timer not replaced, an answer
released before the earlier writes commit, a write timeout answered with 3.9's store error — each caught by the
runtime rule it names (properties/runtime_4x.py) on the 4.1 walks (tests/test_runtime_4x.py) — and a satisfied
member's timer cancelled, caught only by the state refinement against 4.1's model (harness/refinement_4x.py), and a
Heartbeat that keeps the session timer, caught only by the catalog on 4.1 (properties/observation_4x.py)."""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.java_gc.base import Partition, Result, heartbeat_key
from impl.java_gc.coordinator import JavaGroupCoordinator
from impl.java_gc.group import ClassicGroup, ClassicGroupMember
from impl.java_gc.log import Write
from impl.java_gc.timers import Op, TimerTask
from impl.mutants import mutant
from impl.results import ResponseFuture

RUNTIME_RELEASES = ("4.1",)


@mutant("timer-not-replaced-on-reschedule", catches="timers-are-keyed",
        mistake="rescheduling a key adds a task beside the old one instead of replacing it, so a member's old "
                "session timer still fires after a heartbeat rescheduled it (R1)",
        profiles=RUNTIME_RELEASES)
class TimerNotReplaced(JavaGroupCoordinator):
    def _schedule(self, group_id: str, key: str, delay_ms: int, op: Op) -> None:
        timer = self._partition(group_id).timer
        old = timer.tasks.get(key)
        if old is not None and not old.expired:
            timer.unkeyed[old.seq] = TimerTask(old.seq, None, old.deadline_ms, old.op)   # kept, under no key
        super()._schedule(group_id, key, delay_ms, op)


@mutant("answer-before-commit", catches="held-answers-wait-for-earlier-writes",
        mistake="a write without records completes at once instead of waiting for the partition's earlier writes "
                "to commit, so a Heartbeat is answered on state that a failed batch may still revert (R3)",
        profiles=RUNTIME_RELEASES)
class AnswerBeforeCommit(JavaGroupCoordinator):
    def _append(self, part: Partition, api: str, future: ResponseFuture | None, result: Result) -> None:
        if result.has_record or result.callback is not None:
            super()._append(part, api, future, result)
            return
        self._finish_write(Write(self._seq(), part.index, api, future, result.response), None)


@mutant("write-timeout-as-rebalance-in-progress", catches="write-timeout-answers-coordinator-not-available",
        mistake="a write that times out is answered REBALANCE_IN_PROGRESS, 3.9's mapping of a timed-out store, "
                "instead of COORDINATOR_NOT_AVAILABLE (R2, R8)",
        profiles=RUNTIME_RELEASES)
class WriteTimeoutAsRebalance(JavaGroupCoordinator):
    def _run_timer_event(self, part: Partition, task: TimerTask) -> None:
        if task.op[0] == "write-timeout":
            write = part.log.writes.get(int(task.op[1]))
            if write is not None:
                write.timeout_seq = None
                self._finish_write(write, Errors.REBALANCE_IN_PROGRESS)
            return
        super()._run_timer_event(part, task)


@mutant("satisfied-member-timer-cancelled", catches="refines-the-abstract-model",
        mistake="rescheduling the session timer of a member that is awaiting a join or sync answer (and not new) "
                "cancels the key instead, the Scala coordinator's habit of completing such a DelayedHeartbeat at "
                "birth; a 4.x timer is only ever replaced and its firing judges the member as it is then (R1)",
        profiles=RUNTIME_RELEASES)
class SatisfiedMemberTimerCancelled(JavaGroupCoordinator):
    def reschedule_heartbeat(self, group: ClassicGroup, member: ClassicGroupMember,
                             timeout_ms: int | None = None) -> None:
        if member.has_satisfied_heartbeat():
            self._cancel(group.group_id, heartbeat_key(group.group_id, member.member_id))
            return
        super().reschedule_heartbeat(group, member, timeout_ms)


@mutant("heartbeat-keeps-the-session-timer", catches="heartbeat-answer-follows-the-state-table",
        mistake="a Heartbeat from a current member is answered without rescheduling the member's session timer "
                "(classicGroupHeartbeatToClassicGroup reschedules it, GroupMetadataManager.java@4.1.1:7615-7684), so "
                "a member that only heartbeats is expired a session after its join; keyed timers and the model's "
                "slots are unchanged, only the catalog's heartbeat table (SPEC.md §3.3) sees it",
        profiles=RUNTIME_RELEASES)
class HeartbeatKeepsSessionTimer(JavaGroupCoordinator):
    _in_heartbeat = False

    def classic_group_heartbeat(self, group_id: str, member_id: str, generation_id: int,
                                group_instance_id: str | None) -> Result:
        self._in_heartbeat = True
        try:
            return super().classic_group_heartbeat(group_id, member_id, generation_id, group_instance_id)
        finally:
            self._in_heartbeat = False

    def reschedule_heartbeat(self, group: ClassicGroup, member: ClassicGroupMember,
                             timeout_ms: int | None = None) -> None:
        if not self._in_heartbeat:
            super().reschedule_heartbeat(group, member, timeout_ms)


@mutant("sync-checks-generation-before-member", catches="refines-the-abstract-model",
        mistake="validateSyncGroup compares the generation before it looks the member id up, so a SyncGroup from a "
                "member id the group no longer knows, sent with its old generation, is answered ILLEGAL_GENERATION "
                "instead of UNKNOWN_MEMBER_ID (GroupMetadataManager.java@4.1.1:7519-7549 validates the member "
                "first); the client keeps the dead member id and rejoins with it. No catalog property or runtime "
                "rule states a non-member's SyncGroup error: only the answers of the 4.1 refinement see it",
        profiles=RUNTIME_RELEASES)
class SyncChecksGenerationFirst(JavaGroupCoordinator):
    def _validate_sync(self, group: ClassicGroup, generation_id: int, member_id: str, group_instance_id: str | None,
                       protocol_type: str | None, protocol_name: str | None) -> Errors | None:
        if group.state is not GroupState.DEAD and generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        return super()._validate_sync(group, generation_id, member_id, group_instance_id, protocol_type,
                                      protocol_name)

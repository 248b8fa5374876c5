"""Partition leadership in Kafka 4.x: unload (CoordinatorRuntime.CoordinatorContext.unload, CR:736-753, then
GMM.onUnloaded GMM:5936-5986), loading (CR:2149-2167: LOAD_IN_PROGRESS; R6) and load (replay of the
committed GroupMetadata records, GMM.replay GMM:6003-6059, then GMM.onLoaded GMM:5859-5930).

The group id names its partition (``partition_for``); with the default single partition, unloading one
group unloads every group. Records written but not committed when leadership moves are taken as lost: the
new leader rebuilds from committed records only.
"""
from __future__ import annotations

from core.types import Errors, GroupState
from impl.java_gc.base import ACTIVE, LOADING, JavaBase, Partition
from impl.java_gc.group import ClassicGroup, ClassicGroupMember
from impl.java_gc.log import PartitionLog
from impl.results import JoinGroupResult, SyncGroupResult

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


class PartitionsMixin(JavaBase):
    def unload_group(self, group_id: str) -> None:
        """The broker stops leading the group's partition: pending writes fail NOT_COORDINATOR, every
        group goes Dead and its parked requests are answered NOT_COORDINATOR, timers are gone."""
        index = self.partition_for(group_id)
        part = self.partitions.get(index)
        if part is None:
            return
        part.timer.clear()
        if part.state == ACTIVE:
            for write in part.log.drop_all_written():
                self._finish_write(write, Errors.NOT_COORDINATOR)
            self._flush(part, Errors.NOT_COORDINATOR)
            self._on_unloaded(part)
        del self.partitions[index]

    def _on_unloaded(self, part: Partition) -> None:
        for group_id in sorted(part.groups):
            group = part.groups[group_id]
            previous = group.state
            group.transition_to(D)
            if previous is PR:
                for member in group.all_members():
                    group.complete_join_future(member, JoinGroupResult(Errors.NOT_COORDINATOR, -1, None, None, "",
                                                                       member.member_id))
            elif previous in (CR, S):
                for member in group.all_members():
                    group.complete_sync_future(member, SyncGroupResult(Errors.NOT_COORDINATOR))

    def set_loading(self, group_id: str, loading: bool) -> None:
        """Open (``True``) or close the COORDINATOR_LOAD_IN_PROGRESS window of the group's partition; opening
        it on a partition this broker leads unloads it first, closing it finishes the load."""
        index = self.partition_for(group_id)
        if loading:
            if index in self.partitions and self.partitions[index].state == ACTIVE:
                self.unload_group(group_id)
            self.partitions[index] = Partition(index, LOADING)
        elif index in self.partitions and self.partitions[index].state == LOADING:
            self._load(index)

    def load_group(self, group_id: str) -> None:
        """The broker becomes leader of the group's partition: load it (already active: nothing)."""
        index = self.partition_for(group_id)
        part = self.partitions.get(index)
        if part is None or part.state == LOADING:
            self._load(index)

    def _load(self, index: int) -> None:
        part = Partition(index, ACTIVE, log=PartitionLog())
        self.partitions[index] = part
        for group_id, record in sorted(self.durable.get(index, {}).items()):
            part.groups[group_id] = self._replay(group_id, record)
            part.visible_at[group_id] = 0
        for group_id in sorted(part.groups):
            group = part.groups[group_id]
            for member in group.all_members():
                self.reschedule_heartbeat(group, member)
            if len(group.members) > self.config.group_max_size:
                self.prepare_rebalance(group)   # over capacity after load: rebalance (R13, GMM:5905-5909)

    def _replay(self, group_id: str, record: object) -> ClassicGroup:
        """A group rebuilt from its last committed record: Stable with its members, or Empty."""
        self.incarnations += 1
        if record is None:   # offsets only: a simple group
            return ClassicGroup(group_id, self.incarnations)
        assert isinstance(record, tuple)
        generation, protocol_type, protocol, leader, members = record
        group = ClassicGroup(group_id, self.incarnations, S if members else E, generation,
                             protocol_type or None, protocol, leader)
        for (member_id, instance_id, client_id, host, rebalance, session, subscription, assignment) in members:
            rebalance = session if rebalance == -1 else rebalance   # an old record without one (GMM:6015-6016)
            group.add(ClassicGroupMember(member_id, instance_id, client_id, host, rebalance, session,
                                         protocol_type, ((protocol, subscription),), assignment))
        return group

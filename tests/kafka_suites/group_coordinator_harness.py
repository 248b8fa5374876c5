"""The fixture of Kafka's GroupCoordinatorTest.scala over the reference coordinator: the broker settings of its
setUp, its request helpers and its two-static-member rebalance, built through the coordinator's public API on the
mock clock, as Kafka's test builds them.

Kafka's test mocks the replica manager: a log append is answered only when the test stubs the answer (the leader's
SyncGroup with NONE, a static rejoin "with persistence" with a chosen error), inside the request that made it. Here
the coordinator runs with ``append_mode="deferred"`` and the helpers that stand for those stubs complete the pending
appends right after the request; every other append stays pending, as an unstubbed mock leaves it. Where Kafka's
test reaches into GroupMetadata directly (a group added in a given state, ``transitionTo``, ``remove``,
``addPendingMember``, ``addStaticMember``), the ``poke_*`` helpers do the same to impl's group object and say so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from impl import (CoordinatorConfig, Errors, GroupCoordinator, GroupState, JoinGroupResult, LeaveGroupResult,
                  ResponseFuture, SyncGroupResult)
from impl.group import GroupMetadata, MemberMetadata

#: GroupCoordinatorTest's setUp and constants (the same at 2.4.1, 2.7.0 and 3.9.0)
GROUP_MIN_SESSION_TIMEOUT = 10
GROUP_MAX_SESSION_TIMEOUT = 10 * 60 * 1000
GROUP_MAX_SIZE = 4
DEFAULT_REBALANCE_TIMEOUT = 500
DEFAULT_SESSION_TIMEOUT = 500
GROUP_INITIAL_REBALANCE_DELAY = 50
NEW_MEMBER_JOIN_TIMEOUT = 5 * 60 * 1000   # GroupCoordinator.NewMemberJoinTimeoutMs

GROUP = "groupId"
OTHER_GROUP = "otherGroup"      # maps to a partition of __consumer_offsets this broker does not own
DEAD_GROUP = "deadGroupId"
PROTOCOL_TYPE = "consumer"
PROTOCOL_NAME = "range"
MEMBER_ID = "memberId"
INSTANCE = "groupInstanceId"
LEADER = "leader"
FOLLOWER = "follower"
INVALID_MEMBER = "invalidMember"
PROTOCOLS = (("range", b""),)
PROTOCOL_SUPERSET = (("range", b""), ("roundrobin", b""))

PR, CR, STABLE, EMPTY, DEAD = (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE,
                               GroupState.EMPTY, GroupState.DEAD)

#: which fields Kafka's checkJoinGroupResult compares, per profile: the JoinGroup protocol type from 2.7.0's test
#: (KIP-559, 2.5.0) and skipAssignment from 3.9.0's (KIP-814, 3.2.0)
CHECKS_PROTOCOL_TYPE = {"2.4.1": False, "2.7.0": True, "3.9": True}
CHECKS_SKIP_ASSIGNMENT = {"2.4.1": False, "2.7.0": False, "3.9": True}


def done(future: ResponseFuture) -> Any:
    """Kafka's ``Await.result``: the answer must be there already (the clock only moves when the test moves it)."""
    assert future.done, f"{future!r} is still parked: Kafka's Await.result would time out here"
    return future.result


def parked(future: ResponseFuture) -> None:
    """Kafka's ``verifyDelayedTaskNotCompleted``: no answer yet."""
    assert not future.done, f"{future!r} was answered {future.result!r}; Kafka's test expects it still parked"


@dataclass(frozen=True)
class RebalanceResult:
    """What staticMembersJoinAndRebalance hands back."""
    generation: int
    leader_id: str
    leader_assignment: bytes
    follower_id: str
    follower_assignment: bytes


class Kafka:
    """One GroupCoordinatorTest fixture: a coordinator of ``profile`` that owns ``GROUP``'s partition only."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.c = GroupCoordinator(CoordinatorConfig(
            profile=profile, group_min_session_timeout_ms=GROUP_MIN_SESSION_TIMEOUT,
            group_max_session_timeout_ms=GROUP_MAX_SESSION_TIMEOUT, group_max_size=GROUP_MAX_SIZE,
            group_initial_rebalance_delay_ms=GROUP_INITIAL_REBALANCE_DELAY,
            new_member_join_timeout_ms=NEW_MEMBER_JOIN_TIMEOUT, append_mode="deferred"))
        self.c.unload_group(OTHER_GROUP)   # setUp owns only groupPartitionId

    # -- the clock and the log ----------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """``timer.advanceClock(ms)``: move the clock, then run every task due (deadline < now)."""
        self.c.advance(ms)

    def advance_firing_first(self, ms: int, kind: str) -> None:
        """``timer.advanceClock(ms)`` where tasks due in the same millisecond run in the order of Kafka's MockTimer
        heap rather than impl's (deadline, seq) order: the due task of ``kind`` first, then the rest. Kafka's mock
        timer is a priority queue on the expiration alone that keeps cancelled entries, so equal deadlines come out
        in an order its heap history decides; a test whose assertions depend on that order says which it is."""
        self.c.advance_time(ms)
        for timer in self.c.due_timers():
            if timer.kind == kind:
                self.c.fire_timer(timer.seq)
        self.c.advance(0)

    def answer_appends(self, error: Errors = Errors.NONE) -> None:
        """The stubbed ``replicaManager.appendRecords``: answer what the last request appended with ``error``."""
        while self.c.pending_appends():
            self.c.complete_append(None if error is Errors.NONE else error)

    # -- JoinGroup -------------------------------------------------------------------------------------
    def send_join(self, member_id: str = "", protocols: Iterable[tuple[str, bytes]] = PROTOCOLS,
                  instance: str | None = None, session: int = DEFAULT_SESSION_TIMEOUT,
                  rebalance: int = DEFAULT_REBALANCE_TIMEOUT, require_known: bool = False, skip: bool = True,
                  group_id: str = GROUP, protocol_type: str = PROTOCOL_TYPE) -> ResponseFuture:
        """sendJoinGroup (client id "clientId"; JoinGroup v9 at 3.9, so the client may skip the assignment)."""
        return self.c.join_group(group_id, member_id, session, rebalance, protocol_type, list(protocols),
                                 group_instance_id=instance, require_known_member_id=require_known,
                                 client_id="clientId", client_host="clientHost", support_skipping_assignment=skip)

    def dynamic_join(self, member_id: str = "", protocols: Iterable[tuple[str, bytes]] = PROTOCOLS,
                     session: int = DEFAULT_SESSION_TIMEOUT, rebalance: int = DEFAULT_REBALANCE_TIMEOUT,
                     group_id: str = GROUP, protocol_type: str = PROTOCOL_TYPE) -> JoinGroupResult:
        """dynamicJoinGroup: a join that requires a known member id; an unknown one bounces once with
        MEMBER_ID_REQUIRED (any other first answer is returned at once); then the clock moves past the initial
        rebalance delay and the answer must be there."""
        future = self.send_join(member_id, protocols, None, session, rebalance, True, group_id=group_id,
                                protocol_type=protocol_type)
        if member_id == "":
            first = done(future)
            if first.error is not Errors.MEMBER_ID_REQUIRED:
                return first
            future = self.send_join(first.member_id, protocols, None, session, rebalance, True, group_id=group_id,
                                    protocol_type=protocol_type)
        self.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        return done(future)

    def join_partial(self, member_id: str = "", protocols: Iterable[tuple[str, bytes]] = PROTOCOLS,
                     session: int = DEFAULT_SESSION_TIMEOUT) -> JoinGroupResult:
        """joinGroupPartial: one JoinGroup that requires a known member id, answered at once."""
        return done(self.send_join(member_id, protocols, session=session, require_known=True))

    def static_join(self, member_id: str, instance: str, protocols: Iterable[tuple[str, bytes]] = PROTOCOLS,
                    clock_advance: int = GROUP_INITIAL_REBALANCE_DELAY + 1, session: int = DEFAULT_SESSION_TIMEOUT,
                    rebalance: int = DEFAULT_REBALANCE_TIMEOUT, skip: bool = True,
                    protocol_type: str = PROTOCOL_TYPE, group_id: str = GROUP) -> JoinGroupResult:
        """staticJoinGroup: send, move the clock by ``clock_advance``, the answer must be there."""
        future = self.send_join(member_id, protocols, instance, session, rebalance, skip=skip, group_id=group_id,
                                protocol_type=protocol_type)
        self.advance(clock_advance)
        return done(future)

    def static_join_persisted(self, member_id: str, instance: str, protocols: Iterable[tuple[str, bytes]],
                              clock_advance: int, session: int = DEFAULT_SESSION_TIMEOUT,
                              rebalance: int = DEFAULT_REBALANCE_TIMEOUT, append_error: Errors = Errors.NONE,
                              skip: bool = True) -> JoinGroupResult:
        """staticJoinGroupWithPersistence: as static_join, with the log append answered ``append_error``."""
        future = self.send_join(member_id, protocols, instance, session, rebalance, skip=skip)
        self.answer_appends(append_error)
        self.advance(clock_advance)
        return done(future)

    # -- SyncGroup ---------------------------------------------------------------------------------------
    def send_sync_leader(self, generation: int, member_id: str, assignment: dict[str, bytes],
                         protocol_type: str | None = None, protocol_name: str | None = None,
                         instance: str | None = None) -> ResponseFuture:
        """sendSyncGroupLeader: the store of the assignment is answered NONE."""
        future = self.c.sync_group(GROUP, generation, member_id, assignment, group_instance_id=instance,
                                   protocol_type=protocol_type, protocol_name=protocol_name)
        self.answer_appends()
        return future

    def sync_leader(self, generation: int, member_id: str, assignment: dict[str, bytes],
                    protocol_type: str | None = None, protocol_name: str | None = None,
                    instance: str | None = None) -> SyncGroupResult:
        return done(self.send_sync_leader(generation, member_id, assignment, protocol_type, protocol_name, instance))

    def send_sync_follower(self, generation: int, member_id: str, protocol_type: str | None = None,
                           protocol_name: str | None = None, instance: str | None = None,
                           group_id: str = GROUP) -> ResponseFuture:
        return self.c.sync_group(group_id, generation, member_id, {}, group_instance_id=instance,
                                 protocol_type=protocol_type, protocol_name=protocol_name)

    def sync_follower(self, generation: int, member_id: str, protocol_type: str | None = None,
                      protocol_name: str | None = None, instance: str | None = None,
                      group_id: str = GROUP) -> SyncGroupResult:
        return done(self.send_sync_follower(generation, member_id, protocol_type, protocol_name, instance, group_id))

    # -- Heartbeat, OffsetCommit, LeaveGroup ----------------------------------------------------------------
    def heartbeat(self, member_id: str, generation: int, instance: str | None = None,
                  group_id: str = GROUP) -> Errors:
        return done(self.c.heartbeat(group_id, member_id, generation, group_instance_id=instance)).error

    def commit(self, member_id: str, generation: int, instance: str | None = None, group_id: str = GROUP) -> Errors:
        """commitOffsets: the per-partition error (the reference answers one error for the request)."""
        return done(self.c.commit_offsets(group_id, member_id, generation, group_instance_id=instance)).error

    def leave(self, *identities: tuple[str, str | None], group_id: str = GROUP) -> LeaveGroupResult:
        """batchLeaveGroup (singleLeaveGroup is a batch of one)."""
        return done(self.c.leave_group(group_id, list(identities)))

    # -- reading the group ---------------------------------------------------------------------------------
    def view(self, group_id: str = GROUP) -> Any:
        view = self.c.describe(group_id)
        assert view is not None, f"group {group_id} not found in coordinator"
        return view

    def state(self, group_id: str = GROUP) -> GroupState:
        return self.view(group_id).state

    def static_ids(self) -> set[str]:
        """allStaticMembers: the group.instance.ids the group maps."""
        return {instance for instance, _ in self.view().static_members}

    def dynamic_members(self) -> set[str]:
        """allDynamicMembers: member ids no instance id maps to."""
        view = self.view()
        return set(view.members) - {member for _, member in view.static_members}

    def last_illegal_state(self) -> str:
        """The IllegalStateException the last request raised (impl logs it and answers UNKNOWN_SERVER_ERROR)."""
        assert self.c.errors, "no IllegalStateException was raised"
        return self.c.errors[-1]

    # -- Kafka's test reaching into GroupMetadata --------------------------------------------------------------
    def group(self, group_id: str = GROUP) -> GroupMetadata:
        return self.c.groups[group_id]

    def poke_add_group(self, group_id: str, state: GroupState) -> GroupMetadata:
        """``groupManager.addGroup(new GroupMetadata(groupId, state, time))``."""
        self.c.incarnations += 1
        group = GroupMetadata(group_id, self.c.profile, self.c.incarnations, self.c.now_ms)
        group.state = state
        self.c.groups[group_id] = group
        return group

    def poke_add_member(self, group: GroupMetadata, member_id: str, instance: str | None,
                        protocols: Iterable[tuple[str, bytes]], session: int, rebalance: int) -> None:
        """``group.add(new MemberMetadata(...))`` with no callback and no heartbeat."""
        group.add(MemberMetadata(member_id, "consumer-test", "localhost", session, rebalance, PROTOCOL_TYPE,
                                 tuple(protocols), instance), None)

    def poke_transition(self, state: GroupState) -> None:
        """``group.transitionTo(state)`` with no coordinator logic around it."""
        self.group().transition_to(state, self.c.now_ms)

    def static_rebalance(self, leader: str = LEADER, follower: str = FOLLOWER,
                         session: int = DEFAULT_SESSION_TIMEOUT,
                         rebalance: int = DEFAULT_REBALANCE_TIMEOUT) -> RebalanceResult:
        """staticMembersJoinAndRebalance: two static members join (protocol superset), the first initial delay
        runs out, the second one, then the leader and the follower sync: a Stable group at generation 1."""
        leader_join = self.send_join("", PROTOCOL_SUPERSET, leader, session, rebalance)
        follower_join = self.send_join("", PROTOCOL_SUPERSET, follower, session, rebalance)
        self.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        self.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
        leader_result, follower_result = done(leader_join), done(follower_join)
        assert (leader_result.error, leader_result.generation_id) == (Errors.NONE, 1)
        assert (follower_result.error, follower_result.generation_id) == (Errors.NONE, 1)
        leader_id, follower_id = leader_result.member_id, follower_result.member_id
        leader_sync = self.sync_leader(1, leader_id, {leader_id: b""})
        assert leader_sync.error is Errors.NONE and self.state() is STABLE
        follower_sync = self.sync_follower(1, follower_id)
        assert follower_sync.error is Errors.NONE and self.state() is STABLE
        return RebalanceResult(1, leader_id, leader_sync.assignment, follower_id, follower_sync.assignment)

    def check_join(self, result: JoinGroupResult, error: Errors, generation: int, instances: set[str],
                   state: GroupState, protocol_type: str | None, leader_id: str = "", member_id: str = "",
                   skip_assignment: bool = False) -> None:
        """checkJoinGroupResult of the profile's tag: error, generation, the instance ids of the member list, the
        group's state now, the protocol type (2.7.0+), skipAssignment (3.9.0), and the leader and member ids
        when given."""
        assert result.error is error, result
        assert result.generation_id == generation, result
        assert len(result.members) == len(instances) and {m[1] for m in result.members} == instances, result
        assert self.state() is state
        if CHECKS_PROTOCOL_TYPE[self.profile]:
            assert result.protocol_type == protocol_type, result
        if CHECKS_SKIP_ASSIGNMENT[self.profile]:
            assert result.skip_assignment is skip_assignment, result
        if leader_id:
            assert result.leader_id == leader_id, result
        if member_id:
            assert result.member_id == member_id, result

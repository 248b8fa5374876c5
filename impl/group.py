"""Group and member metadata: the state table, the member table and their bookkeeping (SPEC.md §1–§2).

Kafka keeps members in a HashMap whose order is arbitrary; kgc iterates member ids sorted and,
where Kafka picks "any" member (a new leader, a protocol tie), picks the smallest id — one fixed,
documented choice so that runs are deterministic.
"""
from __future__ import annotations

from typing import Callable

from core.types import Errors, GroupState
from impl.guards import (GuardAssertionError, GuardError, IllegalArgumentError, IllegalStateError,
                         ResponseCallbackError)
from impl.profiles import Profile
from impl.results import JoinGroupResult, ResponseFuture, SyncGroupResult

__all__ = ["GroupMetadata", "GuardError", "IllegalArgumentError", "IllegalStateError", "MemberMetadata"]


class MemberMetadata:
    """One member (MM). Liveness fields of every era live side by side; the profile picks the predicate."""

    __slots__ = ("member_id", "group_instance_id", "client_id", "client_host", "session_timeout_ms",
                 "rebalance_timeout_ms", "protocol_type", "protocols", "assignment", "awaiting_join",
                 "awaiting_sync", "latest_heartbeat_ms", "is_leaving", "is_new", "heartbeat_satisfied")

    def __init__(self, member_id: str, client_id: str, client_host: str, session_timeout_ms: int,
                 rebalance_timeout_ms: int, protocol_type: str, protocols: tuple[tuple[str, bytes], ...],
                 group_instance_id: str | None = None) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.protocol_type = protocol_type
        self.protocols = protocols
        self.assignment = b""
        self.awaiting_join: ResponseFuture | None = None   # awaitingJoinCallback
        self.awaiting_sync: ResponseFuture | None = None   # awaitingSyncCallback
        self.latest_heartbeat_ms = 0                       # ≤ 2.4 deadline arithmetic
        self.is_leaving = False                            # ≤ 2.8
        self.is_new = False                                # KAFKA-7610
        self.heartbeat_satisfied = False                   # KAFKA-9752

    @property
    def protocol_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.protocols)

    @property
    def is_static_member(self) -> bool:
        return self.group_instance_id is not None

    def matches(self, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        """Same protocol names in the same order with byte-equal metadata (SPEC.md §3.1 J5b)."""
        return self.protocols == protocols

    def metadata(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        # IllegalArgumentException at every release (MM 2.4.1 80-85, 3.9 85-90; MemberMetadataTest)
        raise IllegalArgumentError(f"member {self.member_id} does not support protocol {protocol}")

    def vote(self, candidates: set[str]) -> str:
        """First protocol in the member's preference order that every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise IllegalArgumentError(f"member {self.member_id} supports none of {sorted(candidates)}")   # MM 3.9 134-139


class GroupMetadata:
    """One group (GM): state machine, member table, leader, pending members and counters."""

    __slots__ = ("group_id", "profile", "state", "state_timestamp_ms", "protocol_type", "protocol_name",
                 "generation_id", "leader_id", "members", "pending_members", "pending_sync_members",
                 "num_members_awaiting_join", "supported_protocols", "new_member_added", "incarnation",
                 "history", "static_members", "on_callback_failure")

    def __init__(self, group_id: str, profile: Profile, incarnation: int, now_ms: int = 0,
                 protocol_type: str | None = None) -> None:
        self.group_id = group_id
        self.profile = profile
        self.state = profile.initial_state
        self.state_timestamp_ms = now_ms
        self.protocol_type = protocol_type
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, MemberMetadata] = {}
        self.pending_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.num_members_awaiting_join = 0
        self.supported_protocols: dict[str, int] = {}
        self.new_member_added = False
        self.incarnation = incarnation        # distinguishes a reloaded group object from a stale one
        self.history: list[tuple[str, str, str]] | None = None   # (group, from, to) log, when observed
        self.static_members: dict[str, str] = {}   # staticMembers: group.instance.id → member id (KIP-345, §1.4)
        #: where a caught response-callback failure is logged (3.3.2+; the coordinator's error log), if anywhere
        self.on_callback_failure: Callable[[GuardError], None] | None = None

    # -- state machine (SPEC.md §1.2) ------------------------------------------------------
    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def can_transition_to(self, target: GroupState) -> bool:
        return self.state in self.profile.previous_states.get(target, frozenset())

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        if not self.can_transition_to(target):
            raise IllegalStateError(
                f"group {self.group_id} should be in one of "
                f"{sorted(s.value for s in self.profile.previous_states.get(target, ()))} before moving to "
                f"{target.value}, but it is {self.state.value}")
        if self.history is not None:
            self.history.append((self.group_id, self.state.value, target.value))
        self.state = target
        self.state_timestamp_ms = now_ms

    @property
    def can_rebalance(self) -> bool:
        return self.can_transition_to(GroupState.PREPARING_REBALANCE)

    # -- members -------------------------------------------------------------------------
    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def all_members(self) -> list[MemberMetadata]:
        return [self.members[m] for m in sorted(self.members)]

    def is_pending_member(self, member_id: str) -> bool:
        # [3.x] membership in pendingMembers alone; [2.2–2.8] and not a member (SPEC.md §1.4, 2.4.1 GM 327)
        return member_id in self.pending_members and (self.profile.group_keeps_id_sets or member_id not in self.members)

    def remove_pending_member(self, member_id: str) -> None:
        self.pending_members.discard(member_id)

    def add_pending_member(self, member_id: str) -> None:
        """KIP-394: remember an id handed out with MEMBER_ID_REQUIRED."""
        if self.profile.group_keeps_id_sets and member_id in self.members:   # 3.9 GM 344-350 (3.0.0, #9958)
            raise IllegalStateError(f"cannot add pending member {member_id} to group {self.group_id}: it is "
                                    f"already a member")
        self.pending_members.add(member_id)

    def add_pending_sync_member(self, member_id: str) -> None:
        """KAFKA-12890: a member owes a SyncGroup of the new generation (3.9 GM 352-358)."""
        self._check_pending_sync(member_id, "add")
        self.pending_sync_members.add(member_id)

    def remove_pending_sync_member(self, member_id: str) -> None:
        """The member's SyncGroup arrived (3.9 GM 360-366)."""
        self._check_pending_sync(member_id, "remove")
        self.pending_sync_members.discard(member_id)

    def _check_pending_sync(self, member_id: str, what: str) -> None:
        # pendingSyncMembers only holds members: the bookkeeping of any other id is refused (IllegalStateException
        # wherever the set exists, 2.8.1/3.0.0 with KAFKA-12890)
        if member_id not in self.members:
            raise IllegalStateError(f"cannot {what} a pending sync for {member_id}: it is not a member of group "
                                    f"{self.group_id}")

    def add(self, member: MemberMetadata, callback: ResponseFuture | None = None) -> None:
        instance = member.group_instance_id
        if self.profile.group_keeps_id_sets and instance is not None and instance in self.static_members:
            # 3.9 GM 242-246 (3.0.0, #9958): 2.x's add() leaves the static map to the coordinator and overwrites
            raise IllegalStateError(f"static member {instance} cannot be added to group {self.group_id}: it is "
                                    f"already a member")
        if not self.members and not self.profile.protocol_type_at_creation:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type or not self.supports_protocols(
                member.protocol_type, member.protocol_names):
            # Scala asserts in add() at every release (2.4.1 GM 238-239, 3.9 GM 252-253; 0.10.0 asserts the
            # protocols): the caller checked supportsProtocols before, so this fires only on a bug
            raise GuardAssertionError(f"member {member.member_id} ({member.protocol_type}, "
                                      f"{list(member.protocol_names)}) does not fit group {self.group_id}")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        for name in member.protocol_names:
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + 1
        member.awaiting_join = callback
        if callback is not None:
            self.num_members_awaiting_join += 1
        if self.profile.group_keeps_id_sets:   # 3.9 GM 265; 2.x: the coordinator (add_member_and_rebalance)
            self.pending_members.discard(member.member_id)
        if member.group_instance_id is not None:
            # 3.9 GM 246; 2.x's coordinator puts it after add() (2.4.1 GC 970-971, loadGroup 138-140): the same map
            self.static_members[member.group_instance_id] = member.member_id

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            for name in member.protocol_names:
                self.supported_protocols[name] -= 1
                if not self.supported_protocols[name]:
                    del self.supported_protocols[name]
            if member.awaiting_join is not None:
                self.num_members_awaiting_join -= 1
            instance = member.group_instance_id
            if instance is not None and self.static_members.get(instance) == member_id:
                del self.static_members[instance]
        if self.is_leader(member_id):
            # Kafka: members.keys.headOption — "any remaining member"; kgc: the smallest id
            self.leader_id = min(self.members) if self.members else None
        if self.profile.group_keeps_id_sets:   # 3.9 GM 280; 2.x's remove() keeps a pending id pending
            self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def update_member(self, member: MemberMetadata, protocols: tuple[tuple[str, bytes], ...],
                      rebalance_timeout_ms: int, session_timeout_ms: int, callback: ResponseFuture | None) -> None:
        """Replace protocols and park the callback; an earlier parked callback is overwritten unanswered.

        A None callback (the revert of a static rejoin whose store failed, SPEC.md §3.1 J5a step 4) clears it."""
        for name in member.protocol_names:
            self.supported_protocols[name] -= 1
            if not self.supported_protocols[name]:
                del self.supported_protocols[name]
        member.protocols = protocols
        for name in member.protocol_names:
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + 1
        if self.profile.update_timeouts_on_rejoin:
            member.rebalance_timeout_ms = rebalance_timeout_ms
            member.session_timeout_ms = session_timeout_ms
        if member.awaiting_join is None and callback is not None:
            self.num_members_awaiting_join += 1
        elif member.awaiting_join is not None and callback is None:
            self.num_members_awaiting_join -= 1
        member.awaiting_join = callback

    def invoke_join_callback(self, member: MemberMetadata, result: object) -> bool:
        """maybeInvokeJoinCallback: answer a parked JoinGroup, if any.

        If the answer cannot be sent (the future raises ResponseCallbackError): from 3.3.2 the failure is logged,
        the member is answered UNKNOWN_SERVER_ERROR instead and no longer parked (3.9 GM 537-551); before, the
        exception goes up to the caller and the member stays parked, its callback set (2.4.1 GM 500-507)."""
        future = member.awaiting_join
        if future is None:
            return False
        if self.profile.callback_failure_answered:
            failed = JoinGroupResult(Errors.UNKNOWN_SERVER_ERROR, self.profile.join_error_generation, None, None, "",
                                     member.member_id)
            try:
                self._answer(future, result, failed)
            finally:
                member.awaiting_join = None
                self.num_members_awaiting_join -= 1
            return True
        future.complete(result)
        member.awaiting_join = None
        self.num_members_awaiting_join -= 1
        return True

    def invoke_sync_callback(self, member: MemberMetadata, result: object) -> bool:
        """maybeInvokeSyncCallback: answer a parked SyncGroup, if any (a failure as above: 3.9 GM 556-572,
        2.4.1 GM 512-521)."""
        future = member.awaiting_sync
        if future is None:
            return False
        if self.profile.callback_failure_answered:
            try:
                self._answer(future, result, SyncGroupResult(Errors.UNKNOWN_SERVER_ERROR))
            finally:
                member.awaiting_sync = None
            return True
        future.complete(result)
        member.awaiting_sync = None
        return True

    def _answer(self, future: ResponseFuture, result: object, failed: object) -> None:
        """3.3.2+ (#12910): a callback that throws is logged and called again with ``failed``."""
        try:
            future.complete(result)
        except ResponseCallbackError as exc:
            if self.on_callback_failure is not None:
                self.on_callback_failure(exc)
            future.complete(failed)

    # -- static members (KIP-345, SPEC.md §1.4, §3.1 J5a step 4) ------------------------------------
    def static_member_id(self, group_instance_id: str | None) -> str | None:
        return None if group_instance_id is None else self.static_members.get(group_instance_id)

    def is_static_member_fenced(self, member_id: str, group_instance_id: str | None) -> bool:
        """The instance id is known and maps to another member id."""
        owner = self.static_member_id(group_instance_id)
        return owner is not None and owner != member_id

    def replace_static_member(self, group_instance_id: str | None, old_member_id: str, new_member_id: str,
                              fenced_join: JoinGroupResult | None = None,
                              fenced_sync: SyncGroupResult | None = None) -> MemberMetadata:
        """replaceGroupInstance / replaceStaticMember: the same member object is re-keyed to the new id.

        A JoinGroup or SyncGroup the old incarnation still has parked is answered ``fenced_join`` / ``fenced_sync``
        (by default FENCED_INSTANCE_ID, the JoinGroup with the old id and no generation, protocol or leader); the
        leader id and the static map follow the new id. pendingSyncMembers is left as it is [3.0+]: an old id
        that owed a SyncGroup stays there, the new id cannot clear it, and the DelayedSync expiry rebalances
        (SPEC.md §3.1 J5a step 4 and Corrections 3; GroupMetadata.scala 3.9.0-rc3 lines 319-340).
        """
        if group_instance_id is None:   # 2.4.1 GM 299-301, 2.7.0 GM 308-312; 3.x takes a non-optional String
            raise IllegalArgumentError("unexpected null group.instance.id in replaceGroupInstance")
        member = self.members.pop(old_member_id, None)
        if member is None:   # IllegalArgumentException at every release (2.4.1 GM 302-303, 3.9 GM 324-325)
            raise IllegalArgumentError(f"cannot replace non-existing member id {old_member_id}")
        self.invoke_join_callback(member, fenced_join or JoinGroupResult(
            Errors.FENCED_INSTANCE_ID, self.profile.join_error_generation, None, None, "", old_member_id))
        self.invoke_sync_callback(member, fenced_sync or SyncGroupResult(Errors.FENCED_INSTANCE_ID))
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return member

    # -- derived predicates (SPEC.md §1.4) ----------------------------------------------------
    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        return [m for m in self.all_members() if m.awaiting_join is None]

    def has_all_members_joined(self) -> bool:
        if self.profile.pending_members:   # 2.2.0+: counter equality and no pending members
            return len(self.members) == self.num_members_awaiting_join and not self.pending_members
        return not self.not_yet_rejoined_members()   # 0.9–2.0: a scan for members without a callback

    def rebalance_timeout_ms(self) -> int:
        """Max over current members of the rebalance (or, in E0, session) timeout; 0 with no members."""
        if self.profile.rebalance_timeout_source == "session":
            return max((m.session_timeout_ms for m in self.members.values()), default=0)
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {name for name, count in self.supported_protocols.items() if count == n}

    def supports_protocols(self, protocol_type: str, names: tuple[str, ...]) -> bool:
        """SPEC.md §3.6; the 0.9 form also checks the protocol type fixed at creation."""
        if self.profile.protocol_check == "intersection":
            return protocol_type == self.protocol_type and (
                not self.members or bool(set(names) & self.candidate_protocols()))
        if self.is_(GroupState.EMPTY):
            return bool(protocol_type) and bool(names)
        n = len(self.members)
        return self.protocol_type == protocol_type and any(self.supported_protocols.get(p, 0) == n for p in names)

    def select_protocol(self) -> str:
        """Each member votes for its first candidate; most votes win, ties to the smallest name."""
        if not self.members:   # 2.4.1 GM 407-409, 3.9 GM 434-436
            raise IllegalStateError(f"cannot select a protocol for group {self.group_id}: it has no members")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.all_members():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return min(votes, key=lambda name: (-votes[name], name))

    def init_next_generation(self, now_ms: int) -> None:
        """initNextGeneration: a new generation, its protocol, and CompletingRebalance — or Empty with no members
        and no protocol (2.4.1 GM 523-537, 3.9 GM 574-589; 3.x also forgets who owed a SyncGroup)."""
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY, now_ms)
        self.pending_sync_members.clear()

    def current_member_metadata(self) -> tuple[tuple[str, str | None, bytes], ...]:
        if self.state in (GroupState.DEAD, GroupState.PREPARING_REBALANCE) or self.protocol_name is None:
            raise IllegalStateError(f"cannot obtain member metadata for group {self.group_id} in {self.state.value}")
        return tuple((m.member_id, m.group_instance_id, m.metadata(self.protocol_name)) for m in self.all_members())

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep a leader that rejoined, else pick a member awaiting join; False if none (SPEC.md §4.4)."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join is not None:
            return True
        joined = [m.member_id for m in self.all_members() if m.awaiting_join is not None]
        if not joined:
            return False
        self.leader_id = joined[0]
        return True

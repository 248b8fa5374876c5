"""Group and member metadata: the state table, the member table and their bookkeeping (SPEC.md §1–§2).

Kafka keeps members in a HashMap whose order is arbitrary; kgc iterates member ids sorted and,
where Kafka picks "any" member (a new leader, a protocol tie), picks the smallest id — one fixed,
documented choice so that runs are deterministic.
"""
from __future__ import annotations

from core.types import GroupState
from impl.profiles import Profile
from impl.results import ResponseFuture


class IllegalStateError(RuntimeError):
    """A transition or call the coordinator's own assertions forbid (Kafka's IllegalStateException)."""


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

    def matches(self, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        """Same protocol names in the same order with byte-equal metadata (SPEC.md §3.1 J5b)."""
        return self.protocols == protocols

    def metadata(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        raise IllegalStateError(f"member {self.member_id} does not support protocol {protocol}")

    def vote(self, candidates: set[str]) -> str:
        """First protocol in the member's preference order that every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise IllegalStateError(f"member {self.member_id} supports none of {sorted(candidates)}")


class GroupMetadata:
    """One group (GM): state machine, member table, leader, pending members and counters."""

    __slots__ = ("group_id", "profile", "state", "state_timestamp_ms", "protocol_type", "protocol_name",
                 "generation_id", "leader_id", "members", "pending_members", "pending_sync_members",
                 "num_members_awaiting_join", "supported_protocols", "new_member_added", "incarnation",
                 "history", "static_members")

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
        # [3.x] membership in pendingMembers alone; add() removes the id from it (SPEC.md §1.4)
        return member_id in self.pending_members

    def add(self, member: MemberMetadata, callback: ResponseFuture | None) -> None:
        if not self.members and not self.profile.protocol_type_at_creation:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        for name in member.protocol_names:
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + 1
        member.awaiting_join = callback
        if callback is not None:
            self.num_members_awaiting_join += 1
        self.pending_members.discard(member.member_id)
        if member.group_instance_id is not None:
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
        """maybeInvokeJoinCallback: answer a parked JoinGroup, if any."""
        future = member.awaiting_join
        if future is None:
            return False
        member.awaiting_join = None
        self.num_members_awaiting_join -= 1
        future.complete(result)
        return True

    def invoke_sync_callback(self, member: MemberMetadata, result: object) -> bool:
        """maybeInvokeSyncCallback: answer a parked SyncGroup, if any."""
        future = member.awaiting_sync
        if future is None:
            return False
        member.awaiting_sync = None
        future.complete(result)
        return True

    # -- static members (KIP-345, SPEC.md §1.4, §3.1 J5a step 4) ------------------------------------
    def static_member_id(self, group_instance_id: str | None) -> str | None:
        return None if group_instance_id is None else self.static_members.get(group_instance_id)

    def is_static_member_fenced(self, member_id: str, group_instance_id: str | None) -> bool:
        """The instance id is known and maps to another member id."""
        owner = self.static_member_id(group_instance_id)
        return owner is not None and owner != member_id

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str,
                              fenced_join: object, fenced_sync: object) -> MemberMetadata:
        """replaceGroupInstance / replaceStaticMember: the same member object is re-keyed to the new id.

        A JoinGroup or SyncGroup the old incarnation still has parked is answered ``fenced_*``; the
        leader id and the static map follow the new id. pendingSyncMembers is left as it is [3.0+]: an old id
        that owed a SyncGroup stays there, the new id cannot clear it, and the DelayedSync expiry rebalances
        (SPEC.md §3.1 J5a step 4 and Corrections 3; GroupMetadata.scala 3.9.0-rc3 lines 319-340).
        """
        member = self.members.pop(old_member_id, None)
        if member is None:
            raise IllegalStateError(f"cannot replace non-existing member id {old_member_id}")
        self.invoke_join_callback(member, fenced_join)
        self.invoke_sync_callback(member, fenced_sync)
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
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.all_members():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return min(votes, key=lambda name: (-votes[name], name))

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

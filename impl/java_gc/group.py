"""A classic group and its members as Kafka 4.x's Java coordinator keeps them (classic/ClassicGroup.java,
classic/ClassicGroupMember.java, classic/ClassicGroupState.java at tag 4.1.1): plain mutable data.

These objects are not part of the runtime's snapshottable timeline (ClassicGroup's fields are plain Java
fields, ClassicGroup.java:92-181): a failed log append never rolls them back, only the group map does (R4/R5).
Where Java iterates a HashMap keyed by random member ids (clientId-UUID), kgc iterates member ids sorted;
the places where that order picks a member (a new leader) are choice points (impl/java_gc/choices.py).
"""
from __future__ import annotations

from types import MappingProxyType

from core.types import Errors, GroupState
from impl.group import IllegalStateError
from impl.java_gc.choices import Choices
from impl.results import JoinGroupResult, MemberSummary, ResponseFuture, SyncGroupResult

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)

#: ClassicGroupState.java:111-117 — the valid previous states of each state (same table as 3.9's)
VALID_PREVIOUS_STATES = MappingProxyType({
    E: frozenset({PR}),
    PR: frozenset({S, CR, E}),
    CR: frozenset({PR}),
    S: frozenset({CR}),
    D: frozenset({S, PR, CR, E, D}),
})

Protocols = tuple[tuple[str, bytes], ...]


class RequestError(Exception):
    """A Kafka ApiException thrown by a coordinator operation: the write fails with ``error`` at once."""

    def __init__(self, error: Errors) -> None:
        super().__init__(error.name)
        self.error = error


def answer(future: ResponseFuture | None, result: object) -> bool:
    """CompletableFuture.complete: the first completion wins, later ones are no-ops (returns whether it took)."""
    if future is None or future.done:
        return False
    future.complete(result)
    return True


class ClassicGroupMember:
    """ClassicGroupMember.java: one member; ``awaiting_join``/``awaiting_sync`` are the parked futures."""

    __slots__ = ("member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout_ms",
                 "session_timeout_ms", "protocol_type", "protocols", "assignment", "awaiting_join",
                 "awaiting_sync", "is_new")

    def __init__(self, member_id: str, group_instance_id: str | None, client_id: str, client_host: str,
                 rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str, protocols: Protocols,
                 assignment: bytes = b"") -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.protocols = protocols
        self.assignment = assignment
        self.awaiting_join: ResponseFuture | None = None
        self.awaiting_sync: ResponseFuture | None = None
        self.is_new = False

    @property
    def protocol_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.protocols)

    def matches(self, protocols: Protocols) -> bool:
        """The request's protocol collection equals the member's (names, order and metadata)."""
        return self.protocols == protocols

    def metadata(self, protocol_name: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol_name:
                return meta
        raise IllegalStateError(f"member {self.member_id} does not support protocol {protocol_name}")

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise IllegalStateError(f"member {self.member_id} supports none of the candidate protocols")

    def describe(self, protocol_name: str | None = None) -> MemberSummary:
        """describe / describeNoMetadata (CGM:355-369): a DescribeGroups member, with the metadata of
        ``protocol_name`` if given; the assignment always (3.9 showed it only when Stable)."""
        metadata = b"" if protocol_name is None else self.metadata(protocol_name)
        return MemberSummary(self.member_id, self.group_instance_id, self.client_id, self.client_host, metadata,
                             self.assignment)

    def has_satisfied_heartbeat(self) -> bool:
        """ClassicGroupMember.java:207-215 (R13): a new member never counts as alive by parking."""
        if self.is_new:
            return False
        return self.awaiting_join is not None or self.awaiting_sync is not None


class ClassicGroup:
    """ClassicGroup.java: state machine, member table, static map, pending members, protocol votes."""

    __slots__ = ("group_id", "incarnation", "state", "previous_state", "protocol_type", "protocol_name",
                 "generation_id", "leader_id", "members", "static_members", "pending_join_members",
                 "num_members_awaiting_join", "supported_protocols", "pending_sync_members", "new_member_added",
                 "moves")

    def __init__(self, group_id: str, incarnation: int, state: GroupState = E, generation_id: int = 0,
                 protocol_type: str | None = None, protocol_name: str | None = None,
                 leader_id: str | None = None) -> None:
        self.group_id = group_id
        self.incarnation = incarnation   # tells apart a group and its successor of the same id (snapshots)
        self.state = state
        self.previous_state = D          # ClassicGroup.java:217
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.generation_id = generation_id
        self.leader_id = leader_id
        self.members: dict[str, ClassicGroupMember] = {}
        self.static_members: dict[str, str] = {}
        self.pending_join_members: set[str] = set()
        self.num_members_awaiting_join = 0
        #: protocol name -> members supporting it; Java keeps zero counts, which behave as absent ones
        self.supported_protocols: dict[str, int] = {}
        self.pending_sync_members: set[str] = set()
        self.new_member_added = False
        #: (from, to) of every transition_to, oldest first: history for observers (the Scala coordinator's
        #: transitions log), not state — snapshots leave it out
        self.moves: list[tuple[GroupState, GroupState]] = []

    # -- state ------------------------------------------------------------------------------------
    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def transition_to(self, target: GroupState) -> None:
        if self.state not in VALID_PREVIOUS_STATES[target]:
            raise IllegalStateError(f"Group {self.group_id} should be in one of "
                                    f"{sorted(s.value for s in VALID_PREVIOUS_STATES[target])} states before moving "
                                    f"to {target.value} state. Instead it is in {self.state.value} state.")
        self.moves.append((self.state, target))
        self.previous_state, self.state = self.state, target

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[PR]

    # -- members ----------------------------------------------------------------------------------
    def all_members(self) -> list[ClassicGroupMember]:
        return [self.members[m] for m in sorted(self.members)]

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def add(self, member: ClassicGroupMember, future: ResponseFuture | None = None) -> None:
        """ClassicGroup.add (ClassicGroup.java:435-470)."""
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise IllegalStateError(f"Static member with groupInstanceId={member.group_instance_id} cannot "
                                        f"be added to group {self.group_id} since it is already a member.")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise IllegalStateError("The group and member's protocol type must be the same.")
        if not self.supports_protocols(member.protocol_type, member.protocol_names):
            raise IllegalStateError("None of the member's protocols can be supported.")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._count_protocols(member, 1)
        member.awaiting_join = future
        if future is not None:
            self.num_members_awaiting_join += 1
        self.pending_join_members.discard(member.member_id)

    def remove(self, member_id: str, choices: Choices) -> None:
        """ClassicGroup.remove (ClassicGroup.java:477-496): a removed leader passes to "the first" member."""
        removed = self.members.pop(member_id, None)
        if removed is not None:
            self._count_protocols(removed, -1)
            if removed.awaiting_join is not None:
                self.num_members_awaiting_join -= 1
            if removed.group_instance_id is not None:
                self.static_members.pop(removed.group_instance_id, None)
        if self.is_leader(member_id):
            # members.keySet().iterator().next(): HashMap order over random member ids — any member
            self.leader_id = choices.pick("leader-on-remove", tuple(sorted(self.members))) if self.members else None
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def _count_protocols(self, member: ClassicGroupMember, delta: int) -> None:
        for name in member.protocol_names:
            count = self.supported_protocols.get(name, 0) + delta
            if count:
                self.supported_protocols[name] = count
            else:
                self.supported_protocols.pop(name, None)

    def update_member(self, member: ClassicGroupMember, protocols: Protocols, rebalance_timeout_ms: int,
                      session_timeout_ms: int, future: ResponseFuture | None) -> None:
        """ClassicGroup.updateMember (ClassicGroup.java:1196-1215): a rejoin copies the new timeouts."""
        self._count_protocols(member, -1)
        member.protocols = protocols
        self._count_protocols(member, 1)
        member.rebalance_timeout_ms, member.session_timeout_ms = rebalance_timeout_ms, session_timeout_ms
        if future is not None and member.awaiting_join is None:
            self.num_members_awaiting_join += 1
        elif future is None and member.awaiting_join is not None:
            self.num_members_awaiting_join -= 1
        member.awaiting_join = future

    def complete_join_future(self, member: ClassicGroupMember, result: object) -> bool:
        if member.awaiting_join is None:
            return False
        future, member.awaiting_join = member.awaiting_join, None
        answer(future, result)   # a future a write timeout already answered stays answered (R2)
        self.num_members_awaiting_join -= 1
        return True

    def complete_sync_future(self, member: ClassicGroupMember, result: object) -> bool:
        if member.awaiting_sync is None:
            return False
        future, member.awaiting_sync = member.awaiting_sync, None
        answer(future, result)
        return True

    # -- pending members --------------------------------------------------------------------------
    def add_pending_member(self, member_id: str) -> None:
        if self.has_member(member_id):
            raise IllegalStateError(f"Attempt to add pending member {member_id} which is already a stable member "
                                    "of the group.")
        self.pending_join_members.add(member_id)

    def add_pending_sync_member(self, member_id: str) -> None:
        if not self.has_member(member_id):
            raise IllegalStateError(f"Attempt to add pending sync member {member_id} which is not a member.")
        self.pending_sync_members.add(member_id)

    def remove_pending_sync_member(self, member_id: str) -> None:
        if not self.has_member(member_id):
            raise IllegalStateError(f"Attempt to remove pending sync member {member_id} which is not a member.")
        self.pending_sync_members.discard(member_id)

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join and not self.pending_join_members

    def not_yet_rejoined_members(self) -> list[ClassicGroupMember]:
        return [m for m in self.all_members() if m.awaiting_join is None]

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # -- static members ---------------------------------------------------------------------------
    def static_member_id(self, group_instance_id: str | None) -> str | None:
        return None if group_instance_id is None else self.static_members.get(group_instance_id)

    def validate_member(self, member_id: str, group_instance_id: str | None) -> None:
        """ClassicGroup.validateMember (ClassicGroup.java:797-817): fenced before unknown."""
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                raise RequestError(Errors.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise RequestError(Errors.FENCED_INSTANCE_ID)
        if not self.has_member(member_id):
            raise RequestError(Errors.UNKNOWN_MEMBER_ID)

    def replace_static_member(self, group_instance_id: str, old_member_id: str,
                              new_member_id: str) -> ClassicGroupMember:
        """ClassicGroup.replaceStaticMember (ClassicGroup.java:549-597): fence the old incarnation's parked
        requests and put a *new* member object (is_new false, nothing parked) under the new id (R12)."""
        old = self.members.pop(old_member_id, None)
        if old is None:
            raise IllegalStateError(f"Cannot replace non-existing member id {old_member_id}")
        self.complete_join_future(old, JoinGroupResult(Errors.FENCED_INSTANCE_ID, -1, None, None, "",
                                                       old_member_id))
        self.complete_sync_future(old, SyncGroupResult(Errors.FENCED_INSTANCE_ID))
        new = ClassicGroupMember(new_member_id, old.group_instance_id, old.client_id, old.client_host,
                                 old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type, old.protocols,
                                 old.assignment)
        self.members[new_member_id] = new
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return new

    # -- protocols --------------------------------------------------------------------------------
    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {name for name, count in self.supported_protocols.items() if count == n}

    def supports_protocols(self, protocol_type: str, names: tuple[str, ...]) -> bool:
        """ClassicGroup.java:1110-1118: an Empty group takes any non-empty type and protocol set."""
        if self.is_(E):
            return bool(protocol_type) and bool(names)
        n = len(self.members)
        return self.protocol_type == protocol_type and any(self.supported_protocols.get(p, 0) == n for p in names)

    def select_protocol(self, choices: Choices) -> str:
        """ClassicGroup.selectProtocol (ClassicGroup.java:1006-1026): the most voted candidate; a tie is R11's
        choice point, its default the entry Java's HashMap<String, Integer> iterates first."""
        if not self.members:
            raise IllegalStateError("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.all_members():
            name = member.vote(candidates)
            votes[name] = votes.get(name, 0) + 1
        best = max(votes.values())
        return choices.pick_protocol(tuple(name for name in votes if votes[name] == best))

    def group_assignment(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.all_members()}

    def current_members(self) -> tuple[tuple[str, str | None, bytes], ...]:
        """currentClassicGroupMembers: (member id, instance id, metadata of the selected protocol)."""
        if self.state in (D, PR):
            raise IllegalStateError(f"Cannot obtain classic member metadata for group {self.group_id} in state "
                                    f"{self.state.value}")
        return tuple((m.member_id, m.group_instance_id, m.metadata(self.protocol_name)) for m in self.all_members())

    def init_next_generation(self, choices: Choices) -> None:
        """ClassicGroup.initNextGeneration (ClassicGroup.java:1290-1302)."""
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol(choices)
            self.transition_to(CR)
        else:
            self.protocol_name = None
            self.transition_to(E)
        self.pending_sync_members.clear()

    def maybe_elect_new_joined_leader(self, choices: Choices) -> bool:
        """ClassicGroup.java:509-538: keep a leader that rejoined, else "the first" joined member."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join is not None:
            return True
        joined = tuple(m.member_id for m in self.all_members() if m.awaiting_join is not None)
        if not joined:
            return False
        self.leader_id = choices.pick("joined-leader", joined)
        return True

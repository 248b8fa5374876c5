"""What an abstract transition *says*: the answers the coordinator gives and the timers it arms.

The model's transitions carry outputs (issue 10, item 1): for every request the answer it must get
(or that it is parked), and for every delayed operation a step leaves armed the *source* of its
delay. Written from SPEC.md §3.1–§3.9 and §4.4–§4.8, independently of impl (core only).

An answer names the slot whose request it answers by the slot's index in the state *before* the
step (the working copy keeps slot positions until it is frozen). ``generation`` is the answer's
generation relative to the group: ``current`` (the generation before the step), ``new`` (the one
this step made), ``none`` (NoGeneration: -1, or 0 before 2.2 — ``ModelProfile.no_generation``)
and ``-`` for APIs whose answers carry none. ``shape`` is what a JoinGroup answer looks like:
``leader+members`` (the leader's answer with the member list), ``leader`` (the leader without the
list), ``follower``, ``static`` (the answer of a static id replacement, SPEC.md §3.1 J5a step 4),
``error+id`` (an error echoing a member id, or MEMBER_ID_REQUIRED with the new id), ``error`` (an error
with member id "") and ``error+prior`` (the failed store of a replacement: member id "" and the leader id of
when the replacement was taken); other APIs use ``-``.

What each shape means field by field — member id, leader id, member list, skipAssignment, protocol name and
type — is ``join_layout``; a LeaveGroup v3+ answer's top-level and per-member errors are ``leave_layout``; a
SyncGroup answer's assignment is ``sync_assignment``; what a log append stores is a ``Write`` (model/rules.py
records one per append a step makes, ``model.step.outcomes_written``). These are the model's statements about
every field of every answer and of every stored group record; harness/labels.py and harness/shadow.py compare
the coordinator's with them.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

#: generation relations of an answer
CURRENT, NEW, NONE_GEN, NO_FIELD = "current", "new", "none", "-"
#: the generation of the group object a completing log append belongs to (one that left the cache)
APPEND_GEN = "append"
#: JoinGroup answer shapes
LEADER_LIST, LEADER, FOLLOWER, ERROR_ID, ERROR_NO_ID = "leader+members", "leader", "follower", "error+id", "error"
#: the answer of a static id replacement (NONE, the current generation) and the store error of its revert
STATIC, ERROR_PRIOR = "static", "error+prior"
#: the success answer of a replacement whose member a later restart of the instance re-keyed: it goes to that
#: restart's parked JoinGroup and names the earlier replacement's member id (model/static.py ``_rekeyed``)
STATIC_FORMER = "static+former-id"
JOIN_SHAPES = (LEADER_LIST, LEADER, FOLLOWER, STATIC, ERROR_ID, ERROR_NO_ID, ERROR_PRIOR, STATIC_FORMER)
#: delayed operations and the sources of their delays (SPEC.md §4.4–§4.9)
HEARTBEAT_OP, PENDING_OP, JOIN_OP, INITIAL_JOIN_OP, SYNC_OP = "heartbeat", "pending", "join", "initial-join", "sync"
SESSION, NEW_MEMBER, REBALANCE, INITIAL = "session", "new-member", "rebalance", "initial"
#: the timers the coordinator arms in a step, by op: which delay sources are legal for it at all
SOURCES = {HEARTBEAT_OP: (SESSION, NEW_MEMBER), PENDING_OP: (SESSION,), JOIN_OP: (REBALANCE,),
           INITIAL_JOIN_OP: (INITIAL,), SYNC_OP: (REBALANCE,)}


@dataclass(frozen=True, slots=True, order=True)
class Answer:
    """The coordinator answers the parked or delivered request of slot ``slot``."""

    slot: int
    api: str
    error: str
    generation: str = NO_FIELD
    shape: str = NO_FIELD

    def __str__(self) -> str:
        extra = "".join(f" {x}" for x in (self.generation, self.shape) if x != NO_FIELD)
        return f"{self.api}({self.slot}) {self.error}{extra}"


@dataclass(frozen=True, slots=True, order=True)
class Arm:
    """A delayed operation armed in this step and still armed at its end (slot -1: a group op)."""

    op: str
    slot: int
    source: str

    def __str__(self) -> str:
        return f"{self.op}({self.slot}) <- {self.source}"


#: SPEC.md §3.2, store error mapping [GMM 2.4–3.9]: the error parked SyncGroups get when the
#: leader's group record fails to append (anything not listed passes through)
STORE_ERRORS: Mapping[str, str] = MappingProxyType({
    "UNKNOWN_TOPIC_OR_PARTITION": "COORDINATOR_NOT_AVAILABLE", "NOT_ENOUGH_REPLICAS": "COORDINATOR_NOT_AVAILABLE",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": "COORDINATOR_NOT_AVAILABLE", "NOT_LEADER_OR_FOLLOWER": "NOT_COORDINATOR",
    "NOT_LEADER_FOR_PARTITION": "NOT_COORDINATOR", "KAFKA_STORAGE_ERROR": "NOT_COORDINATOR",
    "REQUEST_TIMED_OUT": "REBALANCE_IN_PROGRESS", "MESSAGE_TOO_LARGE": "UNKNOWN_SERVER_ERROR",
    "RECORD_LIST_TOO_LARGE": "UNKNOWN_SERVER_ERROR", "INVALID_FETCH_SIZE": "UNKNOWN_SERVER_ERROR",
})


#: SPEC-4x.md R8 (GroupMetadataManager.java@4.1.1:7498-7517, appendGroupMetadataErrorToResponseError): a write that
#: timed out is COORDINATOR_NOT_AVAILABLE and NOT_ENOUGH_REPLICAS_AFTER_APPEND passes through
STORE_ERRORS_4X: Mapping[str, str] = MappingProxyType({
    "UNKNOWN_TOPIC_OR_PARTITION": "COORDINATOR_NOT_AVAILABLE", "NOT_ENOUGH_REPLICAS": "COORDINATOR_NOT_AVAILABLE",
    "REQUEST_TIMED_OUT": "COORDINATOR_NOT_AVAILABLE", "NOT_LEADER_OR_FOLLOWER": "NOT_COORDINATOR",
    "KAFKA_STORAGE_ERROR": "NOT_COORDINATOR", "MESSAGE_TOO_LARGE": "UNKNOWN_SERVER_ERROR",
    "RECORD_LIST_TOO_LARGE": "UNKNOWN_SERVER_ERROR", "INVALID_FETCH_SIZE": "UNKNOWN_SERVER_ERROR",
})


def store_error(raw: str, table: Mapping[str, str] | None = None) -> str:
    """The error a failed group-record append is answered with (SPEC.md §3.2; ``table``: the release's mapping,
    ModelProfile.store_errors — 3.x's by default)."""
    return (STORE_ERRORS if table is None else table).get(raw, raw)


@dataclass(frozen=True, slots=True)
class Outputs:
    """Everything one abstract transition says, in a canonical order."""

    answers: tuple[Answer, ...] = ()
    arms: tuple[Arm, ...] = ()

    def __str__(self) -> str:
        parts = [str(a) for a in self.answers] + [str(a) for a in self.arms]
        return "; ".join(parts) or "(no answer, no timer)"


# -- every field of an answer and of a stored record (issue 27 item 4) ---------------------------------------
#: the member id of a JoinGroup answer: the id the answered member holds after the step ("own"), the id the request
#: or the answered member carried before the step ("echo"; a new pending id for MEMBER_ID_REQUIRED), or ""
OWN, ECHO, EMPTY_ID = "own", "echo", "none"
#: ... or an id the answered member held before a later static restart replaced it (no member any more)
FORMER_ID = "former"
#: the leader id of a JoinGroup answer: the answered member's own id, the id of the group's leader after the step,
#: the id that led the group when the static replacement this answer belongs to was taken, or ""
SELF, GROUP_LEADER, PRIOR_LEADER, NO_LEADER = "self", "leader", "prior", "none"
#: ... or the id that led the group when the replacement that gave the answer's (former) member id was taken
FORMER_LEADER = "prior-of-former"
#: the protocol name / type of an answer: the group's (its selected protocol; its recorded type) or none
GROUP_PROTOCOL, NO_PROTOCOL = "group", "none"


@dataclass(frozen=True, slots=True)
class JoinLayout:
    """Every field of a JoinGroup answer, as relations to the group and the request (SPEC.md §3.1)."""

    member: str          # OWN / ECHO / EMPTY_ID / FORMER_ID
    leader: str          # SELF / GROUP_LEADER / PRIOR_LEADER / NO_LEADER / FORMER_LEADER
    members: bool        # the full member list: (member id, group.instance.id, metadata of the group's protocol)
    skip: bool           # skipAssignment [3.2+, KIP-814]
    protocol: str        # protocol name: GROUP_PROTOCOL / NO_PROTOCOL
    protocol_type: str   # protocol type [2.5+, KIP-559]: GROUP_PROTOCOL / NO_PROTOCOL (NO_PROTOCOL before 2.5)


def join_layout(shape: str, *, typed: bool, skip_supported: bool = False, leader_after: bool = False) -> JoinLayout:
    """The fields a JoinGroup answer of ``shape`` carries. ``typed``: the release answers the protocol type (2.5+,
    fact join-response-protocol-type). A ``static`` answer depends on the request: when the release has KIP-814 and
    the JoinGroup is v9+ (``skip_supported``) it names the real leader, lists the members to the leader and says
    skipAssignment = is the leader (``leader_after``: the answered member leads the group after the step) — a
    follower gets no list and false (SPEC.md §3.1 J5a step 4, Corrections 1; GroupCoordinator.scala 3.9.0-rc3 lines
    1407-1422); otherwise it names the leader of when the replacement was taken and lists nobody (lines 1423-1439;
    2.7.0 lines 1074-1087)."""
    typ = GROUP_PROTOCOL if typed else NO_PROTOCOL
    if shape == LEADER_LIST:
        return JoinLayout(OWN, SELF, True, False, GROUP_PROTOCOL, typ)
    if shape == LEADER:
        return JoinLayout(OWN, SELF, False, False, GROUP_PROTOCOL, typ)
    if shape == FOLLOWER:
        return JoinLayout(OWN, GROUP_LEADER, False, False, GROUP_PROTOCOL, typ)
    if shape == STATIC:
        if skip_supported:
            return JoinLayout(OWN, SELF if leader_after else GROUP_LEADER, leader_after, leader_after,
                              GROUP_PROTOCOL, typ)
        return JoinLayout(OWN, PRIOR_LEADER, False, False, GROUP_PROTOCOL, typ)
    if shape == STATIC_FORMER:   # the earlier replacement's answer: its leader, or KIP-814's follower form
        if skip_supported:       # isLeader(the former id) is false: the group's leader, no list, no skip
            return JoinLayout(FORMER_ID, GROUP_LEADER, False, False, GROUP_PROTOCOL, typ)
        return JoinLayout(FORMER_ID, FORMER_LEADER, False, False, GROUP_PROTOCOL, typ)
    if shape == ERROR_PRIOR:   # the revert: member id "", the current generation, protocol and old leader id
        return JoinLayout(EMPTY_ID, PRIOR_LEADER, False, False, GROUP_PROTOCOL, typ)
    if shape == ERROR_ID:
        return JoinLayout(ECHO, NO_LEADER, False, False, NO_PROTOCOL, NO_PROTOCOL)
    if shape == ERROR_NO_ID:
        return JoinLayout(EMPTY_ID, NO_LEADER, False, False, NO_PROTOCOL, NO_PROTOCOL)
    raise ValueError(f"not a JoinGroup answer shape: {shape!r}")


def answerable_on_a_dead_group(layout: JoinLayout) -> bool:
    """Whether the store callback of a static restart can give an answer of ``layout`` from a group object that an
    unload left Dead (model/static.py ``complete_orphan_append``, whose answers have generation APPEND_GEN). One that
    lists the members cannot: the list comes from currentMemberMetadata, which throws IllegalStateException on a Dead
    group (GroupMetadata.scala 3.9.0-rc3 and 3.9.1 lines 591-593) — so a v9 leader's restart (KIP-814: the leader is
    sent the list, GroupCoordinator.scala 3.9.0-rc3 lines 1409-1412) is answered nothing, its JoinGroup stays parked
    on the Dead object and the callback changes nothing else (finding unloaded-skip-assignment-leader-store-throws)."""
    return not layout.members


#: the assignment of a SyncGroup answer: the member's stored assignment, or none (b"")
MEMBER_ASSIGNMENT, NO_ASSIGNMENT = "member", "none"


def sync_assignment(error: str) -> str:
    """A SyncGroup answered NONE carries the member's assignment — the one the leader's SyncGroup gave it when its
    generation was stored (or what a load or the record of a static replacement gave it back); every error answer
    carries none (SPEC.md §3.2: callbacks with an error clear the assignments; §3.9)."""
    return MEMBER_ASSIGNMENT if error == "NONE" else NO_ASSIGNMENT


#: where a LeaveGroup answer's error goes: the top level (no member entries), or the entry of each identity
TOP_LEVEL, PER_MEMBER, SINGLE = "top", "member", "single"
#: the request cells whose error is the pre-check's (SPEC.md §3.0): top level, before any identity is looked at
PRECHECK_CELLS = frozenset({"not-coordinator", "loading"})
#: the request cells in which the coordinator throws and the request handler answers the whole request with the
#: API's error response (KafkaApis.handleError): for a LeaveGroup v3+ a top-level error and no member entries —
#: 2.x's pending member id sent with a group.instance.id (§3.4 [2.4], GroupCoordinator.scala@2.4.1 L471-474)
THROWN_CELLS = frozenset({"static-pending"})


def leave_layout(batch: bool, cell: str) -> str:
    """Where a LeaveGroup answer of the model puts its error. Before 2.4 (no batch leave) the one error is the
    answer's. From 2.4 (KAFKA-8221, SPEC.md §3.4) a pre-check failure is the top-level error with no member entries;
    otherwise the top-level error is NONE — even when the group is absent — and each identity of the request gets
    its own entry, with the model's answer to that identity's LeaveGroup as its error; where the coordinator throws
    (THROWN_CELLS) the error is the whole answer's, top level, with no entries."""
    if not batch:
        return SINGLE
    return TOP_LEVEL if cell in PRECHECK_CELLS or cell in THROWN_CELLS else PER_MEMBER


#: what an append stores
WRITE_ASSIGNMENT, WRITE_STATIC, WRITE_EMPTY, WRITE_TOMBSTONE = "assignment", "static", "empty", "tombstone"
#: where a stored member's assignment comes from: the leader's SyncGroup, the members' own, none
FROM_REQUEST, FROM_MEMBERS, FROM_NONE = "request", "members", "none"


@dataclass(frozen=True, slots=True, order=True)
class Write:
    """A group record a step appends (SPEC.md §3.7 "what is persisted"): its kind, the member slots it lists (slot
    numbers of the state before the step), the leader slot (-1: none), the static slots (whose group.instance.id it
    carries), its generation (``current`` or ``new``: the one the step made) and where the assignments come from.
    A tombstone (E0's emptied group) removes the record."""

    kind: str
    members: tuple[int, ...] = ()
    leader: int = -1
    statics: tuple[int, ...] = ()
    generation: str = CURRENT
    assignments: str = FROM_NONE

    def __str__(self) -> str:
        return f"write {self.kind} members={list(self.members)} leader={self.leader} gen={self.generation}"

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
list), ``follower``, ``error+id`` (an error echoing a member id, or MEMBER_ID_REQUIRED with the new
id) and ``error`` (an error with member id ""); other APIs use ``-``.
"""
from __future__ import annotations

from dataclasses import dataclass

#: generation relations of an answer
CURRENT, NEW, NONE_GEN, NO_FIELD = "current", "new", "none", "-"
#: the generation of the group object a completing log append belongs to (one that left the cache)
APPEND_GEN = "append"
#: JoinGroup answer shapes
LEADER_LIST, LEADER, FOLLOWER, ERROR_ID, ERROR_NO_ID = "leader+members", "leader", "follower", "error+id", "error"
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
STORE_ERRORS = {
    "UNKNOWN_TOPIC_OR_PARTITION": "COORDINATOR_NOT_AVAILABLE", "NOT_ENOUGH_REPLICAS": "COORDINATOR_NOT_AVAILABLE",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": "COORDINATOR_NOT_AVAILABLE", "NOT_LEADER_OR_FOLLOWER": "NOT_COORDINATOR",
    "NOT_LEADER_FOR_PARTITION": "NOT_COORDINATOR", "KAFKA_STORAGE_ERROR": "NOT_COORDINATOR",
    "REQUEST_TIMED_OUT": "REBALANCE_IN_PROGRESS", "MESSAGE_TOO_LARGE": "UNKNOWN_SERVER_ERROR",
    "RECORD_LIST_TOO_LARGE": "UNKNOWN_SERVER_ERROR", "INVALID_FETCH_SIZE": "UNKNOWN_SERVER_ERROR",
}


def store_error(raw: str) -> str:
    """The error a failed group-record append is answered with (SPEC.md §3.2)."""
    return STORE_ERRORS.get(raw, raw)


@dataclass(frozen=True, slots=True)
class Outputs:
    """Everything one abstract transition says, in a canonical order."""

    answers: tuple[Answer, ...] = ()
    arms: tuple[Arm, ...] = ()

    def __str__(self) -> str:
        parts = [str(a) for a in self.answers] + [str(a) for a in self.arms]
        return "; ".join(parts) or "(no answer, no timer)"

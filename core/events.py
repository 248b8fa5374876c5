"""What the coordinator did inside one step, as typed values (stdlib only).

impl appends one of these per thing it does (a transition, a timer armed, an operation completed, a
member removed and why); the world puts them into ``core.trace.Step.events``. Properties match on the
classes and read the fields; the text line a report shows, and a trace file stores, is ``render()``.
``parse_event`` turns a stored line back into its value: a trace file is the only place text is read.

Group states in events are the profile's display names ("AwaitingSync" on 0.10.0), as logged.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar, Sequence, TypeVar


class StepEvent:
    """One thing the coordinator did inside a step; ``TEMPLATE`` is its line, fields in braces."""

    __slots__ = ()
    TEMPLATE: ClassVar[str]
    __dataclass_fields__: ClassVar[dict[str, Any]]   # every event type is a dataclass

    def render(self) -> str:
        return self.TEMPLATE.format(**{f.name: getattr(self, f.name) for f in fields(self)})

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True, slots=True)
class IllegalState(StepEvent):
    """An IllegalStateError the request handler or timer caught (the step went on)."""

    message: str
    TEMPLATE: ClassVar[str] = "IllegalStateError: {message}"


@dataclass(frozen=True, slots=True)
class MemberAdded(StepEvent):
    """addMemberAndRebalance: a new member joined the group."""

    member_id: str
    TEMPLATE: ClassVar[str] = "member {member_id} added"


@dataclass(frozen=True, slots=True)
class MemberLeaves(StepEvent):
    """A LeaveGroup takes the member out (SPEC.md §3.4)."""

    member_id: str
    TEMPLATE: ClassVar[str] = "member {member_id} leaves"


@dataclass(frozen=True, slots=True)
class MemberExpired(StepEvent):
    """onExpireHeartbeat / onMemberFailure: the member's DelayedHeartbeat expired and it is removed."""

    member_id: str
    TEMPLATE: ClassVar[str] = "member {member_id} failed: heartbeat expired"


@dataclass(frozen=True, slots=True)
class MemberNotRejoined(StepEvent):
    """onCompleteJoin removes a member that did not rejoin (seed 000, SPEC.md §4.4 step 1)."""

    member_id: str
    TEMPLATE: ClassVar[str] = "member {member_id} removed: did not rejoin"


@dataclass(frozen=True, slots=True)
class MemberNotSynced(StepEvent):
    """DelayedSync expiry removes a member that sent no SyncGroup (SPEC.md §4.8)."""

    member_id: str
    TEMPLATE: ClassVar[str] = "member {member_id} removed: no SyncGroup within the rebalance timeout"


@dataclass(frozen=True, slots=True)
class PendingMemberExpired(StepEvent):
    """A KIP-394 pending member id expired (SPEC.md §4.7)."""

    member_id: str
    TEMPLATE: ClassVar[str] = "pending member {member_id} expired"


@dataclass(frozen=True, slots=True)
class HeartbeatScheduled(StepEvent):
    """completeAndScheduleNextHeartbeatExpiration armed a DelayedHeartbeat with this deadline."""

    member_id: str
    deadline_ms: int
    TEMPLATE: ClassVar[str] = "DelayedHeartbeat {member_id} deadline={deadline_ms}"


@dataclass(frozen=True, slots=True)
class HeartbeatCompletedAtBirth(StepEvent):
    """The DelayedHeartbeat just armed was completed by its own tryCompleteElseWatch."""

    member_id: str
    TEMPLATE: ClassVar[str] = "DelayedHeartbeat {member_id} completed at birth"


@dataclass(frozen=True, slots=True)
class OperationCompleted(StepEvent):
    """A delayed operation completed: ``how`` is "condition" (tryComplete) or "expired" (its timer)."""

    kind: str           # DelayedJoin | InitialDelayedJoin | DelayedHeartbeat | DelayedSync
    key: str            # its purgatory key, "join:g", "member:g:c0-1", "sync:g"
    seq: int
    how: str
    TEMPLATE: ClassVar[str] = "{kind} {key} seq={seq} completed ({how})"

    @property
    def expired(self) -> bool:
        return self.how == "expired"


@dataclass(frozen=True, slots=True)
class RebalancePrepared(StepEvent):
    """prepareRebalance: the group moved to PreparingRebalance and armed a (Initial)DelayedJoin."""

    previous: str       # display name of the state it left
    op_kind: str        # DelayedJoin | InitialDelayedJoin
    delay_ms: int
    TEMPLATE: ClassVar[str] = "{previous} -> PreparingRebalance, {op_kind} delay={delay_ms}"


@dataclass(frozen=True, slots=True)
class GenerationStarted(StepEvent):
    """initNextGeneration: the generation moved on, to CompletingRebalance (members) or Empty (none)."""

    generation_id: int
    state: str          # display name
    leader_id: str | None
    protocol_name: str | None
    TEMPLATE: ClassVar[str] = "generation {generation_id}: {state}, leader={leader_id}, protocol={protocol_name}"


@dataclass(frozen=True, slots=True)
class GenerationStable(StepEvent):
    """The store callback stored the leader's assignment and the group became Stable."""

    generation_id: int
    TEMPLATE: ClassVar[str] = "generation {generation_id} stable"


@dataclass(frozen=True, slots=True)
class StoreCallbackIgnored(StepEvent):
    """A store callback arrived for a group no longer CompletingRebalance in that generation."""

    generation_id: int
    group_state: str    # GroupState value (not the display name)
    group_generation_id: int
    TEMPLATE: ClassVar[str] = ("store callback for generation {generation_id} ignored "
                               "(group {group_state} generation {group_generation_id})")


@dataclass(frozen=True, slots=True)
class GroupEmptied(StepEvent):
    """0.10.0: a join phase that ended with no member leaves the group Dead."""

    TEMPLATE: ClassVar[str] = "group emptied -> Dead"


@dataclass(frozen=True, slots=True)
class StaticMemberReplaced(StepEvent):
    """replaceStaticMember (KIP-345, SPEC.md §3.1 J5a step 4): the instance's member is re-keyed to a new member id
    (a restart) or back to its old one (the revert of a failed store)."""

    instance_id: str
    old_member_id: str
    new_member_id: str
    TEMPLATE: ClassVar[str] = "static member {instance_id}: {old_member_id} replaced by {new_member_id}"


@dataclass(frozen=True, slots=True)
class Unloaded(StepEvent):
    """The group's partition emigrated: the group went from ``previous`` to Dead."""

    previous: str       # display name
    TEMPLATE: ClassVar[str] = "unloaded: {previous} -> Dead"


#: every event type, in the order ``parse_event`` tries them
EVENT_TYPES: tuple[type[StepEvent], ...] = (
    IllegalState, MemberAdded, MemberLeaves, MemberExpired, MemberNotRejoined, MemberNotSynced,
    PendingMemberExpired, HeartbeatScheduled, HeartbeatCompletedAtBirth, OperationCompleted, RebalancePrepared,
    GenerationStarted, GenerationStable, StoreCallbackIgnored, GroupEmptied, Unloaded, StaticMemberReplaced)

#: events that take a member out of its group
REMOVALS = (MemberLeaves, MemberExpired, MemberNotRejoined, MemberNotSynced)


E = TypeVar("E", bound=StepEvent)


def of_kind(events: Sequence[StepEvent], kind: type[E]) -> list[tuple[int, E]]:
    """(index, event) of every event of type ``kind``, in order."""
    return [(i, e) for i, e in enumerate(events) if isinstance(e, kind)]


def first_of(events: Sequence[StepEvent], kind: type[E]) -> tuple[int, E] | None:
    """(index, event) of the first event of type ``kind``, or None."""
    return next(((i, e) for i, e in enumerate(events) if isinstance(e, kind)), None)


def removed_before(events: Sequence[StepEvent], end: int) -> set[str]:
    """Member ids taken out of their group by events[:end]."""
    return {e.member_id for e in events[:end] if isinstance(e, REMOVALS)}


def _split(template: str, text: str) -> dict[str, str] | None:
    """The field texts of ``text`` read against ``template`` ("a {x} b {y}"), or None if it does not fit."""
    parts = template.split("{")
    if not text.startswith(parts[0]):
        return None
    at, out = len(parts[0]), dict[str, str]()
    for i, part in enumerate(parts[1:]):
        name, literal = part.split("}", 1)
        last = i == len(parts) - 2
        end = len(text) - len(literal) if last else text.find(literal, at)
        if end < at or (last and not text.endswith(literal)):
            return None
        out[name] = text[at:end]
        at = end + len(literal)
    return out


def _value(kind: Any, text: str) -> object:
    if kind == "int":
        return int(text)
    if kind == "str | None":
        return None if text == "None" else text
    return text


def parse_event(line: str) -> StepEvent:
    """The event a stored line renders; ValueError if no event type renders exactly that line."""
    for cls in EVENT_TYPES:
        found = _split(cls.TEMPLATE, line)
        if found is None:
            continue
        make: Callable[..., StepEvent] = cls
        try:
            event = make(**{f.name: _value(f.type, found[f.name]) for f in fields(cls)})
        except (KeyError, ValueError):
            continue
        if event.render() == line:
            return event
    raise ValueError(f"not a coordinator event line: {line!r}")

"""The Kafka 4.x runtime's own rules, checked on every step of a world that drives it (profile 4.1, SPEC-4x.md).

The catalog's properties and the labelled refinement read the Scala coordinator's structures and do not judge
profile 4.1 yet (issue 25 phase B, README "Kafka 4.x"); these three rules read only what the Java coordinator
shows through its views (``timers``, ``pending_appends``) and what a step answered, and apply by release fact:

- ``timers-are-keyed`` (R1, ``keyed-timers``): every timer task but a write timeout sits under its key, so that
  scheduling the key again replaces it (CoordinatorRuntime.java@4.1.1:356-425);
- ``held-answers-wait-for-earlier-writes`` (R3, ``answers-wait-for-commit``): a Heartbeat, LeaveGroup or
  OffsetCommit answered NONE in the step that delivered it found no uncommitted write of the partition
  (waitForPendingWrites, CR:922-932; a thrown error is answered at once, CR:1421-1423, so only NONE is judged);
- ``write-timeout-answers-coordinator-not-available`` (R2, ``write-timeout``): the requests a write timeout answers
  get COORDINATOR_NOT_AVAILABLE (REQUEST_TIMED_OUT mapped, CoordinatorOperationExceptionHelper@4.1.1);
- ``sync-in-stable-extends-the-session``: SPEC.md §3.2's rule that a SyncGroup in Stable, answered with the stored
  assignment, reschedules the member's heartbeat (GroupCoordinator.scala@3.9.1:643). Kafka 4.x does not (R9,
  ``stable-sync-keeps-session-timer``): documented finding ``sync-in-stable-keeps-the-session-timer``
  (properties/findings.py), excused unless a search looks for it (``kgc check --unexcuse``);
- ``max-size-refusal-completes-the-join``: SPEC.md §3.1 J4's refusal followed by the join-completion check every
  JoinGroup makes in 3.x (GroupCoordinator.scala@3.9.1:194-196, 228-231). Kafka 4.x skips the check (R10,
  ``max-size-refusal-skips-join-check``): documented finding ``max-size-refusal-leaves-the-join-waiting``;
- ``no-illegal-state-in-an-event``: no event throws an IllegalStateException — the runtime only logs it and fails the
  event, keeping what the operation changed before the throw (CR:1399-1423; ClassicGroup's fields are plain, not
  timeline-backed). Read through the runtime's count of logged ones (``illegal_state_errors``). Documented finding
  ``reverted-group-join-timer-fires-on-its-successor``, excused only in its own situation, and — as on 2.4.1-3.9 —
  ``instance-id-with-a-pending-member-id-throws`` (a JoinGroup with an instance id from a pending member id).

Written from SPEC-4x.md and the source, never from impl: the rules name Kafka's behaviour, not the runtime's code.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from core.actions import Action
from core.types import GroupState
from harness.excuses import excused
from harness.world import World
from model.releases import fact

HELD_APIS = ("Heartbeat", "LeaveGroup", "OffsetCommit")
#: the documented finding the last rule stands for on 4.x (properties/findings.py)
R9_FINDING = "sync-in-stable-keeps-the-session-timer"
R10_FINDING = "max-size-refusal-leaves-the-join-waiting"
STALE_JOIN_FINDING = "reverted-group-join-timer-fires-on-its-successor"
#: the documented finding of every release with static members and KIP-394's pending ids: a JoinGroup carrying a
#: group.instance.id with a member id the group holds as pending throws (GroupMetadataManager.java@4.1.1:6398-6402)
STATIC_PENDING_JOIN = "instance-id-with-a-pending-member-id-throws"


@dataclass(frozen=True, slots=True)
class Before:
    """What a rule needs of the world before a step: uncommitted writes, and how many timer events had run."""

    uncommitted: bool
    fired: int
    #: a SyncGroup delivered to a Stable group: (member id, its session timer task's seq, or None without one)
    stable_sync: tuple[str, int | None] | None = None
    #: how many IllegalStateExceptions the runtime had logged, and how many lines its log had
    illegal_states: int = 0
    logs: int = 0
    #: the group was Empty without members (so no join timer of its own can be on the wheel)
    empty_group: bool = False
    #: the step delivers a JoinGroup with a group.instance.id and a member id the group holds as pending
    static_pending_join: bool = False


@dataclass(frozen=True, slots=True)
class RuntimeRule:
    name: str
    fact: str          # the release fact that makes the rule apply (model/releases.py)
    claim: str
    source: str
    check: Callable[[World, Before, Action], str | None]   # a violation's one-line reason, or None


def before(world: World, action: Action | None = None) -> Before:
    seen = Before(bool(world.coord.pending_appends()), len(world.coord.fired),
                  illegal_states=world.coord.illegal_state_errors(), logs=len(world.coord.errors))
    if action is None or action.kind not in ("DeliverRequest", "FireTimer"):
        return seen      # the group's view is read only for the steps a rule or an excuse judges by it
    view = world.coord.describe(world.group_id)
    if action.kind == "FireTimer":
        return dataclasses.replace(seen, empty_group=view is not None and view.state is GroupState.EMPTY
                                   and not view.members)
    req = world.net.requests.get((action.client, int(action.arg)))
    if req is not None and req.api == "JoinGroup" and req.group_instance_id is not None and view is not None \
            and req.member_id in view.pending_members:
        return dataclasses.replace(seen, static_pending_join=True)
    if req is None or req.api != "SyncGroup" or view is None or view.state is not GroupState.STABLE:
        return seen
    key = f"heartbeat-{world.group_id}-{req.member_id}"   # GMM.classicGroupHeartbeatKey
    task = next((t.seq for t in world.coord.timers() if t.key == key and t.status == "scheduled"), None)
    return dataclasses.replace(seen, stable_sync=(req.member_id, task))


def _timers_are_keyed(world: World, _before: Before, _action: Action) -> str | None:
    for task in world.coord.timers():
        if task.key is None and task.kind != "write-timeout" and task.status != "stale":
            return f"timer task {task.seq} ({task.kind}, due {task.deadline_ms}) is under no key"
    return None


def _held_answers(world: World, seen: Before, action: Action) -> str | None:
    if action.kind != "DeliverRequest" or not seen.uncommitted:
        return None
    for r in world.answered:
        if (r.client, r.corr) == (action.client, action.arg) and r.api in HELD_APIS and r.error == "NONE":
            return f"{r.api} of client {r.client} answered NONE while an earlier write was uncommitted"
    return None


def _write_timeouts(world: World, seen: Before, action: Action) -> str | None:
    ran = world.coord.fired[seen.fired:]
    if action.kind != "FireTimer" or not any(kind == "write-timeout" and live for _key, kind, live in ran):
        return None
    wrong = sorted({r.error for r in world.answered} - {"COORDINATOR_NOT_AVAILABLE"})
    return f"a write timeout answered {', '.join(wrong)}" if wrong else None


def _sync_extends_session(world: World, seen: Before, action: Action) -> str | None:
    if seen.stable_sync is None or excused(R9_FINDING):
        return None
    member_id, task = seen.stable_sync
    answered = [r for r in world.answered if (r.client, r.corr) == (action.client, action.arg)]
    if not answered or answered[0].error != "NONE":
        return None
    key = f"heartbeat-{world.group_id}-{member_id}"
    now = next((t for t in world.coord.timers() if t.key == key and t.status == "scheduled"), None)
    if now is not None and now.seq != task:
        return None
    due = f"due at {now.deadline_ms} ms" if now is not None else "none"
    return (f"SyncGroup of {member_id} in Stable answered NONE at {world.now_ms} ms without rescheduling its "
            f"session timer ({due})")


def _refusal_completes_join(world: World, _seen: Before, action: Action) -> str | None:
    if action.kind != "DeliverRequest" or excused(R10_FINDING):
        return None
    if not any((r.client, r.corr) == (action.client, action.arg) and r.api == "JoinGroup"
               and r.error == "GROUP_MAX_SIZE_REACHED" for r in world.answered):
        return None
    view = world.coord.describe(world.group_id)
    if view is None or view.state is not GroupState.PREPARING_REBALANCE or not view.members or view.pending_members:
        return None
    if not all(m.awaiting_join for m in view.members.values()):
        return None
    join = next((t for t in world.coord.timers() if t.key == f"join-{world.group_id}" and t.status == "scheduled"
                 and t.kind == "join"), None)
    if join is None:
        return None
    return (f"JoinGroup refused GROUP_MAX_SIZE_REACHED at {world.now_ms} ms while every member of the "
            f"PreparingRebalance group awaits the join: the join phase waits for its timer (due at {join.deadline_ms} "
            f"ms) instead of completing")


def _stale_join_timer_on_a_successor(world: World, seen: Before, action: Action) -> bool:
    """The excuse of finding ``reverted-group-join-timer-fires-on-its-successor``, as narrow as the situation: a
    failed flush earlier in the walk (the batch that created a group reverted, the group left the map and its timers
    stayed, CR:846-853), then a join timer of the group's key ran on a group of that id that was Empty without
    members — a group in that state has no join timer of its own (only PreparingRebalance schedules one, GMM@4.1.1:
    6880-6892, and completing the join cancels it, 6550)."""
    if action.kind != "FireTimer" or not seen.empty_group or not excused(STALE_JOIN_FINDING):
        return False
    key = f"join-{world.group_id}"   # GMM.classicGroupJoinKey
    ran = world.coord.fired[seen.fired:]
    if not any(k == key and kind in ("join", "initial-join") and live for k, kind, live in ran):
        return False
    return any(s.action.kind == "FlushBatch" and s.action.arg != "NONE" for s in world.steps[:-1])


def _no_illegal_state(world: World, seen: Before, action: Action) -> str | None:
    logged = world.coord.illegal_state_errors() - seen.illegal_states
    if logged <= 0 or _stale_join_timer_on_a_successor(world, seen, action):
        return None
    if seen.static_pending_join and excused(STATIC_PENDING_JOIN):
        return None
    lines = "; ".join(world.coord.errors[seen.logs:])
    return f"the coordinator logged {logged} IllegalStateException(s) in this step (its log: {lines})"


RULES: tuple[RuntimeRule, ...] = (
    RuntimeRule("timers-are-keyed", "keyed-timers",
                "Every timer task but a write timeout sits under its key, so that scheduling the key again "
                "replaces it.", "SPEC-4x.md R1; CoordinatorRuntime.java@4.1.1:356-425", _timers_are_keyed),
    RuntimeRule("held-answers-wait-for-earlier-writes", "answers-wait-for-commit",
                "A Heartbeat, LeaveGroup or OffsetCommit is not answered NONE in the step that delivers it while an "
                "earlier write of the partition is uncommitted.",
                "SPEC-4x.md R3 (corrected); CoordinatorRuntime.java@4.1.1:922-932", _held_answers),
    RuntimeRule("write-timeout-answers-coordinator-not-available", "write-timeout",
                "A request whose write times out is answered COORDINATOR_NOT_AVAILABLE.",
                "SPEC-4x.md R2; CoordinatorRuntime.java@4.1.1:1146-1166", _write_timeouts),
    RuntimeRule("sync-in-stable-extends-the-session", "keyed-timers",
                "A SyncGroup answered with the stored assignment in Stable reschedules the member's session timer "
                "(the 3.x rule; 4.x breaks it: finding sync-in-stable-keeps-the-session-timer).",
                "SPEC.md §3.2 (Stable branch); GroupCoordinator.scala@3.9.1:643 vs SPEC-4x.md R9, "
                "GroupMetadataManager.java@4.1.1:7415-7424", _sync_extends_session),
    RuntimeRule("max-size-refusal-completes-the-join", "keyed-timers",
                "A JoinGroup refused with GROUP_MAX_SIZE_REACHED leaves no rebalance waiting for its timer once every "
                "member has joined (the 3.x rule; 4.x breaks it: finding max-size-refusal-leaves-the-join-waiting).",
                "SPEC.md §3.1 J4 and §4.4; GroupCoordinator.scala@3.9.1:194-196, 228-231 vs SPEC-4x.md R10, "
                "GroupMetadataManager.java@4.1.1:6134-6139", _refusal_completes_join),
    RuntimeRule("no-illegal-state-in-an-event", "keyed-timers",
                "No request, timer event or append callback throws an IllegalStateException (the runtime would only "
                "log it and fail the event, leaving whatever the operation changed before the throw; 4.x breaks it: "
                "finding reverted-group-join-timer-fires-on-its-successor).",
                "CoordinatorRuntime.java@4.1.1:384-405, 1421-1423; ClassicGroup.java@4.1.1:991-996",
                _no_illegal_state),
)


def rules_for(profile: str) -> tuple[RuntimeRule, ...]:
    return tuple(r for r in RULES if fact(r.fact, profile))


@dataclass(frozen=True, slots=True)
class RuntimeViolation:
    rule: str
    step: int
    reason: str


def checked_step(world: World, action: Action, rules: tuple[RuntimeRule, ...]) -> list[RuntimeViolation]:
    """Step ``world`` with ``action`` and judge the step by ``rules``."""
    seen = before(world, action)
    world.step(action)
    index = len(world.steps) - 1
    return [RuntimeViolation(r.name, index, reason) for r in rules
            if (reason := r.check(world, seen, action)) is not None]


def checked_walk(world: World, steps: int, pick: Callable[[tuple[Action, ...]], Action]) -> list[RuntimeViolation]:
    """A walk judged on every step; stops at the first violation."""
    rules = rules_for(world.profile.name)
    for _ in range(steps):
        enabled = world.enabled()
        if not enabled:
            break
        found = checked_step(world, pick(enabled), rules)
        if found:
            return found
    return []


__all__ = ["RULES", "RuntimeRule", "RuntimeViolation", "checked_step", "checked_walk", "rules_for"]

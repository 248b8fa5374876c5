"""What a run reaches of the situations issue 27 counts (bench/reach.py): each a step predicate over the abstract state
before and after the step (harness/abstraction.py), the action and the step's events and answers.

A run *reaches* a situation when one of its own steps enters it; a fork (a sweep's try) carries over what its history
did that a later situation needs — a static restart, before a partition move — but counts only what its own steps do,
so that a figure counts independent runs, not the prefixes they share.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.actions import Action
from core.events import StaticMemberReplaced, of_kind
from harness.abstraction import abstract
from harness.world import World
from model.state import ABSENT_GROUP, APPEND_CURRENT, COMPLETING, STABLE, State

STABLE_STATIC = "stable-with-static-members"
FAILED_CURRENT_STORE = "failed-store-of-the-current-generation"
STABLE_RELOAD = "reload-of-a-stable-group"
RESTART_STABLE = "static-restart-in-stable"
RESTART_COMPLETING = "static-restart-in-completing-rebalance"
RESTART_THEN_MOVE = "static-restart-then-partition-move"
AT_MAX_SIZE = "join-refused-at-group-max-size"
#: every situation, in the order the figures list them
SITUATIONS = (STABLE_STATIC, FAILED_CURRENT_STORE, STABLE_RELOAD, RESTART_STABLE, RESTART_COMPLETING, RESTART_THEN_MOVE,
              AT_MAX_SIZE)
_REQUESTS = frozenset({"DeliverRequest", "Receive"})


@dataclass
class Reach:
    """One run's account: what its own steps reached, and whether its history (its own or inherited) restarted a
    static member."""

    reached: set[str] = field(default_factory=set)
    restarted: bool = False

    def fork(self) -> "Reach":
        return Reach(restarted=self.restarted)


def _static_stable(state: State) -> bool:
    return state.group == STABLE and any(s.static for s in state.slots)


def entered(before: State, after: State, action: Action, world: World, restarted: bool) -> set[str]:
    """The situations a step of ``world`` (taken by ``action`` from abstract state ``before`` to ``after``; its events
    and answers are the world's last step's) enters. ``restarted``: whether a static member restarted before it."""
    out: set[str] = set()
    step = world.steps[-1] if world.steps else None
    events = step.events if step is not None else ()
    if _static_stable(after) and not _static_stable(before):
        out.add(STABLE_STATIC)
    if action.kind == "CompleteAppend" and action.arg != "NONE" and before.appends[:1] == (APPEND_CURRENT,):
        out.add(FAILED_CURRENT_STORE)
    if action.kind == "LoadGroup" and before.group == ABSENT_GROUP and after.group == STABLE:
        out.add(STABLE_RELOAD)
    if action.kind in _REQUESTS and of_kind(events, StaticMemberReplaced):   # a restart (a revert is an append's)
        if before.group == STABLE:
            out.add(RESTART_STABLE)
        elif before.group == COMPLETING:
            out.add(RESTART_COMPLETING)
    if action.kind == "UnloadGroup" and restarted:
        out.add(RESTART_THEN_MOVE)
    if any(r.api == "JoinGroup" and r.error == "GROUP_MAX_SIZE_REACHED" for r in world.answered):
        out.add(AT_MAX_SIZE)
    return out


def track(reach: Reach, world: World, before: State, action: Action) -> None:
    """Account for the step ``world`` just took by ``action`` from abstract state ``before``."""
    got = entered(before, abstract(world.coord, world.group_id), action, world, reach.restarted)
    reach.reached |= got
    reach.restarted = reach.restarted or bool(got & {RESTART_STABLE, RESTART_COMPLETING}) or (
        action.kind in _REQUESTS and bool(of_kind(world.steps[-1].events if world.steps else (), StaticMemberReplaced)))


__all__ = ["Reach", "SITUATIONS", "entered", "track"]

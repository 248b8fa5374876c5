"""Refinement: every world step must be an edge of the abstract graph, or a stutter (DESIGN.md §6).

``RefinementChecker`` wraps a recording World; ``step(action)`` steps it and checks that the
abstract state after is the abstract state before or one of its model successors, and — labelled
(harness/labels.py) — that the step is the transition of the one abstract action it is, with the
answers and armed timers the model gives that action. A step that fails either is a
``NonRefiningStep`` carrying both abstract states and the trace so far. Coverage of model states and
edges is collected along the way.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from core.actions import Action
from core.trace import Trace
from harness.abstraction import abstract, model_scope
from harness.labels import Before, capture, judge, predicted_error, stale_completion
from harness.shadow import Shadow
from harness.world import World
from model.state import AbstractAction, Scope, State, padded
from model.step import step, successors


class NonRefiningStep(AssertionError):
    """A concrete step the model does not allow; the message names the step and both abstract states."""

    def __init__(self, message: str, before: State, after: State, trace: Trace) -> None:
        super().__init__(message)
        self.before, self.after, self.trace = before, after, trace


@dataclass
class Coverage:
    states: set[State] = field(default_factory=set)
    edges: set[tuple[State, AbstractAction, State]] = field(default_factory=set)
    stutters: int = 0
    steps: int = 0
    #: labelled steps whose answers were judged, by abstract action kind (a LeaveGroup of several identities is
    #: "LeaveGroup×N"): what the outputs check saw, stutters included
    judged: dict[str, int] = field(default_factory=dict)


class RefinementChecker:
    """Steps a world and checks each step against the model of its profile."""

    def __init__(self, world: World, rules: object | None = None, halfway: bool | None = None,
                 shadow: Shadow | None = None) -> None:
        self.world = world
        #: what the request history says the coordinator holds (harness/shadow.py): a fork passes its run's copy; a
        #: checker started on a coordinator that already holds state takes its word for it
        self.shadow = shadow.copy() if shadow is not None else Shadow.adopt(world.coord, world.group_id)
        #: an IllegalStateError the model does not predict left the coordinator half-way through a handler (0.10.0's
        #: dead-to-dead finding): from then on its answers are no longer the model's to predict. ``halfway``: carried
        #: over by a fork of a run (None: any error already in the coordinator's log counts)
        self.halfway = bool(world.coord.errors) if halfway is None else halfway
        self._errors_seen = len(world.coord.errors)
        self.profile = rules if rules is not None else world.profile.name
        #: labelled output checks need the model's own rules; a custom ``rules`` object checks states only
        self.labelled = rules is None
        self.coverage = Coverage()
        self.coverage.states.add(self._abstract())

    def _abstract(self) -> State:
        return abstract(self.world.coord, self.world.group_id)

    def capture(self, action: Action | None = None) -> Before:
        """What ``verify`` judges the step against, taken before ``action`` (None: states only)."""
        return capture(self.world, action)

    def step(self, action: Action) -> None:
        before = self.capture(action)
        self.world.step(action)
        self.verify(before, action)

    def verify(self, captured: Before | State, action: Action) -> None:
        """Check the step the world just took from ``captured`` (``capture``; a bare State checks states only)."""
        raw_before = captured.state if isinstance(captured, Before) else captured
        raw_after = self._abstract()
        before, label, after = model_edge(self.profile, self.world.coord, raw_before, raw_after)
        self.coverage.steps += 1
        step = len(self.world.steps) - 1
        labelled = isinstance(captured, Before) and captured.action is not None and self.labelled
        if len(self.world.coord.errors) > self._errors_seen:
            self._errors_seen = len(self.world.coord.errors)
            self.halfway = self.halfway or not (isinstance(captured, Before) and predicted_error(self.world, captured))
        # a LeaveGroup v3+ naming several identities is several model actions in one step: labelled, it is judged as
        # those actions in turn (no single edge leads from its before to its after); a labelled step that carries a
        # request cell (new metadata of a static restart) is the model's transition of that cell, not a graph edge
        batch = labelled and not self.halfway and isinstance(captured, Before) and len(captured.leaving) > 1
        validated = False
        if labelled and not self.halfway:
            assert isinstance(captured, Before)
            act, why, shadow = judge(self.world, captured, action, raw_after, self.shadow)
            if why is not None:
                raise NonRefiningStep(f"step {step}: {why} (profile {self.world.profile.name})", before, after,
                                      self.world.trace("refinement"))
            self.shadow = shadow
            validated = act is not None or batch
            kind = act.kind if act is not None else f"LeaveGroup×{len(captured.leaving)}" if batch else None
            if kind is not None:
                self.coverage.judged[kind] = self.coverage.judged.get(kind, 0) + 1
            if act is not None:   # coverage credits the action the step is, not the first one between its states
                label = act
            elif batch:
                label = None
        if after != before and label is None and not validated and not (
                isinstance(captured, Before) and captured.action is not None
                and stale_completion(self.world, captured, before, after)):
            raise NonRefiningStep(
                f"step {step} ({action}) is not a model edge on profile {self.world.profile.name}:"
                f"\n  before {before.short()}\n  after  {after.short()}", before, after, self.world.trace("refinement"))
        if after == before or label is None:
            self.coverage.stutters += 1
            return
        self.coverage.states.add(after)
        self.coverage.edges.add((before, label, after))


def model_edge(rules: object, coord: object, raw_before: State, raw_after: State
               ) -> tuple[State, AbstractAction | None, State]:
    """The two abstract states padded to a common width (one free slot for a new member) and the model
    action between them: None when the model has no such edge (a stutter, before == after, needs none)."""
    width = max(len(raw_before.slots), len(raw_after.slots)) + 1
    before, after = padded(raw_before, width), padded(raw_after, width)
    if after == before:
        return before, None, after
    static = any(s.static for s in before.slots + after.slots)
    scope = model_scope(coord, len(before.slots), static)   # type: ignore[arg-type]
    if isinstance(rules, str):
        return before, _first_labels(before, rules, scope).get(after), after
    label = next((a for a, t in successors(before, rules, scope) if t == after), None)   # type: ignore[arg-type]
    return before, label, after


@lru_cache(maxsize=1 << 14)
def _first_labels(before: State, profile: str, scope: Scope) -> dict[State, AbstractAction]:
    """The first model action from ``before`` to each of its successors (what ``model_edge`` names), computed once
    per abstract state: a run meets the same few hundred states again and again, and ``successors`` of a 3-slot
    state is most of a checked step's time. Read only."""
    out: dict[State, AbstractAction] = {}
    for action, target in successors(before, profile, scope):
        out.setdefault(target, action)
    # a static restart that carries other protocol metadata is the model's transition of its ``changed`` cell, which
    # the graph's own actions do not carry (model/step.py REQUEST_CELLS): in Stable (KAFKA-10284) it may change the
    # selected protocol and rebalance — a restart with another assignor list does (Scope.assignor_upgrades). The
    # labelled check names the cell; an unlabelled step (after an error the model did not predict) may be it too
    for i, slot in enumerate(before.slots):
        if slot.static and slot.member:
            for target in step(before, AbstractAction("JoinGroup/static-rejoin", i, "changed"), profile, scope):
                out.setdefault(target, AbstractAction("JoinGroup/static-rejoin", i, "changed"))
    return out

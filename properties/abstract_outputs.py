"""Abstract output properties: predicates over one model transition and what it says (level "abstract",
kind "always_step").

A predicate takes ``(before, step, after)``: the pre-state, a ``ModelStep`` (the abstract action and its
``model.outputs.Outputs``) and the successor *with slot positions kept* (``model.step.outcomes(...,
canonical=False)``), so slot i of ``after`` is the identity the outputs call i. It returns ``None`` or
the witness values. Each has a Z3 twin of the same name (properties/z3/output_twins.py) that
``kgc prove`` proves for every step from a state satisfying the proved invariants — any number of
members; tests/test_z3_output_props.py checks both interpreters on hand-built broken steps and every
graph edge.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from model.outputs import ERROR_PRIOR, LEADER_LIST, NEW, SOURCES, STATIC, STATIC_FORMER, Answer, Outputs
from model.state import MEMBER, PENDING, AbstractAction, State
from model.releases import Predicate, all_of, everywhere, when
from properties.catalog import always_step, for_profile

Witness = dict[str, object]
StepPredicate = Callable[[State, "ModelStep", State], "Witness | None"]


@dataclass(frozen=True, slots=True)
class ModelStep:
    """One abstract transition's action and outputs (answers and arms name the pre-state's slots)."""

    action: AbstractAction
    outputs: Outputs


def output_property(name: str, *, claim: str, source: str,
                    applies_to: Predicate = everywhere) -> Callable[[StepPredicate], StepPredicate]:
    """An abstract step property over a transition's outputs; its Z3 twin has the same name."""
    return always_step(name, claim=claim, source=source, applies_to=applies_to, level="abstract", z3=name)


def _joins(step: ModelStep) -> list[Answer]:
    return [a for a in step.outputs.answers if a.api == "JoinGroup"]


def _new_generation(step: ModelStep) -> list[Answer]:
    return [a for a in _joins(step) if a.generation == NEW]


@output_property("model-member-list-goes-only-to-the-leader",
                 claim="A JoinGroup answer with the member list goes only to the group's leader.",
                 source="SPEC.md §4.4 step 5 (the full member list for the leader), §3.1 J5b")
def member_list_only_to_leader(before: State, step: ModelStep, after: State) -> Witness | None:
    bad = [a.slot for a in _joins(step) if a.shape == LEADER_LIST and not after.slots[a.slot].leader]
    return {"answers": str(step.outputs), "not_leader": bad} if bad else None


@output_property("model-join-completion-gives-the-member-list-once",
                 claim="A step that answers JoinGroups with a new generation gives the member list to exactly one "
                       "member.",
                 source="SPEC.md §4.4 step 5 (one join response per member, the full list for the leader)")
def member_list_once(before: State, step: ModelStep, after: State) -> Witness | None:
    if not _new_generation(step):
        return None
    lists = [a.slot for a in _joins(step) if a.shape == LEADER_LIST]
    return None if len(lists) == 1 else {"answers": str(step.outputs), "member_lists": lists}


@output_property("model-join-completion-answers-every-member-with-the-new-generation",
                 claim="A step that answers a JoinGroup with a new generation answers every member of the group "
                       "after it, and only them, with error NONE and that generation.",
                 source="SPEC.md §4.4 steps 4–5 (initNextGeneration, then a join response per member)")
def completion_answers_every_member(before: State, step: ModelStep, after: State) -> Witness | None:
    new = _new_generation(step)
    if not new:
        return None
    answered = sorted(a.slot for a in new if a.error == "NONE")
    if answered == sorted(after.members) and len(answered) == len(new):
        return None
    return {"answers": str(step.outputs), "members_after": list(after.members)}


@output_property("model-join-answers-of-a-step-share-one-generation",
                 claim="All successful JoinGroup answers of one step carry the same generation.",
                 source="SPEC.md §4.4 (one initNextGeneration per completion), §3.1 J5b (the current generation)")
def one_generation(before: State, step: ModelStep, after: State) -> Witness | None:
    gens = sorted({a.generation for a in _joins(step) if a.error == "NONE"})
    return {"answers": str(step.outputs), "generations": gens} if len(gens) > 1 else None


@output_property("model-success-answer-only-to-a-member",
                 claim="An answer with error NONE to a member identity goes to a member of the group after the "
                       "step, or, for a LeaveGroup, to a member or pending id before it (except a Heartbeat while "
                       "the partition loads, answered NONE without looking at the group).",
                 source="SPEC.md §3.8 (an unknown member id gets UNKNOWN_MEMBER_ID), §3.4 (LeaveGroup), §3.0 "
                        "(Heartbeat turns LOAD_IN_PROGRESS into NONE), §3.5 (a generation -1 commit has no member "
                        "identity: slot -1, outside this claim)")
def success_only_to_member(before: State, step: ModelStep, after: State) -> Witness | None:
    def ok(a: Answer) -> bool:
        if after.slots[a.slot].status == MEMBER or step.action.arg == "loading":
            return True
        return a.api == "LeaveGroup" and before.slots[a.slot].status in (MEMBER, PENDING)
    bad = [str(a) for a in step.outputs.answers if a.slot >= 0 and a.error == "NONE" and not ok(a)]
    return {"answers": bad, "after": after.short()} if bad else None


@output_property("model-timer-armed-with-a-legal-delay-source",
                 claim="Every delayed operation a step leaves armed has a delay its kind allows: a heartbeat the "
                       "session or new-member timeout, a pending id the session timeout, a join or sync the "
                       "rebalance timeout, an initial join the initial delay.",
                 source="SPEC.md §4.4–§4.8 (DelayedJoin, InitialDelayedJoin, DelayedHeartbeat, pending-member "
                        "expiration, DelayedSync)")
def legal_delay_source(before: State, step: ModelStep, after: State) -> Witness | None:
    bad = [str(a) for a in step.outputs.arms if a.source not in SOURCES[a.op]]
    return {"arms": bad} if bad else None


@output_property("model-new-member-delay-only-for-a-new-member",
                 claim="A heartbeat op armed with the new-member timeout belongs to a member that is still flagged "
                       "isNew after the step.",
                 source="SPEC.md §4.6 (T = 300000 for a new member in addMemberAndRebalance), §4.4 step 5 "
                        "(reschedule with the session timeout, then isNew = false), KAFKA-7610",
                 # with deadline arithmetic (2.1.1–2.4.x) a 5-minute op armed in the same millisecond as the join
                 # completion is not completed by that reschedule (strict '>', SPEC.md §2) and outlives isNew: a
                 # pending member whose second JoinGroup completes the join phase at once keeps it (2.4.1 finding,
                 # properties/findings.py)
                 applies_to=all_of(when("new-member-timeout"), when("heartbeat-satisfied-flag")))
def new_member_delay(before: State, step: ModelStep, after: State) -> Witness | None:
    bad = [a.slot for a in step.outputs.arms if a.source == "new-member"
           and not (after.slots[a.slot].status == MEMBER and after.slots[a.slot].is_new)]
    return {"arms": str(step.outputs), "not_new": bad} if bad else None


@output_property("model-static-answer-only-to-a-static-member",
                 claim="A JoinGroup answer of a static id replacement (its success, or the store error of its revert) "
                       "goes to a member that a group.instance.id maps to after the step.",
                 source="SPEC.md §3.1 J5a step 4 (replaceStaticMember, the store callback and its revert)",
                 applies_to=when("static-membership"))
def static_answer_to_static_member(before: State, step: ModelStep, after: State) -> Witness | None:
    bad = [a.slot for a in _joins(step) if a.shape in (STATIC, ERROR_PRIOR, STATIC_FORMER) and a.slot >= 0
           and not (after.slots[a.slot].member and after.slots[a.slot].static)]
    return {"answers": str(step.outputs), "not_static": bad} if bad else None


#: the request kinds whose slot sends a request, and the API it is answered on
REQUESTS = {"JoinGroup/new": "JoinGroup", "JoinGroup/new-pending": "JoinGroup", "JoinGroup/known": "JoinGroup",
            "JoinGroup/changed": "JoinGroup", "SyncGroup": "SyncGroup", "Heartbeat": "Heartbeat",
            "OffsetCommit": "OffsetCommit", "LeaveGroup": "LeaveGroup"}


@output_property("model-request-is-answered-or-parked",
                 claim="A member's request is answered in its step or parked: a JoinGroup awaits join, a SyncGroup "
                       "awaits sync after the step; Heartbeat, OffsetCommit and LeaveGroup are always answered.",
                 source="SPEC.md §3.1–§3.5 (each handler answers its callback or parks it), §3.9")
def answered_or_parked(before: State, step: ModelStep, after: State) -> Witness | None:
    a = step.action
    api = REQUESTS.get(a.kind)
    if api is None or any(x.slot == a.slot and x.api == api for x in step.outputs.answers):
        return None
    slot = after.slots[a.slot]
    if (api == "JoinGroup" and slot.awaiting_join) or (api == "SyncGroup" and slot.awaiting_sync):
        return None
    return {"action": str(a), "answers": str(step.outputs), "after": slot.short()}


def output_properties(profile: str) -> tuple[str, ...]:
    """The names of the abstract output properties that apply to ``profile``, in catalog order."""
    return tuple(p.name for p in for_profile(profile, level="abstract", kind="always_step"))


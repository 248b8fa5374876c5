"""Static membership (KIP-345, group.instance.id) properties, their witnesses, and what other properties need to
know about a static member's id replacement. Written from SPEC.md §1.5 I4, §3.1 J5a step 4, J5b step 4, §3.8 and
§4.4 step 1; they apply to the releases with static members (model/releases.py ``static-membership``).
"""
from __future__ import annotations

from core.events import GenerationStarted, MemberNotRejoined, StaticMemberReplaced, first_of, of_kind
from core.trace import Step
from harness.excuses import excused
from model.releases import fact, when
from properties.catalog import Witness, always, always_step, sometimes
from properties.concrete_requests import reverted_join
from properties.observation import Observation, delivered_request

STATIC = when("static-membership")



# -- the properties ----------------------------------------------------------------------------------------------
@always("at-most-one-member-per-instance-id",
        claim="No two members of a group carry the same group.instance.id, and the group's static map sends each "
              "instance id to the one member that carries it.",
        source="SPEC.md §1.5 I4 (staticMembers injective, values are current members, covers every static member); "
               "§3.1 J5a step 4 (a restart re-keys the same member object)",
        applies_to=STATIC)
def one_member_per_instance(obs: Observation) -> Witness | None:
    g = obs.group
    if g is None:
        return None
    carried: dict[str, list[str]] = {}
    for m in g.members:
        if m.group_instance_id is not None:
            carried.setdefault(m.group_instance_id, []).append(m.member_id)
    mapped = dict(g.static_members)
    for instance in sorted(set(carried) | set(mapped)):
        holders = carried.get(instance, [])
        if len(holders) != 1 or mapped.get(instance) != holders[0]:
            return {"instance_id": instance, "members_carrying_it": holders, "static_map_says": mapped.get(instance),
                    "state": g.state.value}
    return None


#: the documented finding (properties/findings.py) the property below excuses while the checkers excuse it
PENDING_LEAVE = "leave-of-a-pending-member-id-ignores-its-instance-id"


@always_step("fenced-instance-id-never-succeeds",
             claim="A request whose group.instance.id maps to another member id is never answered successfully, and "
                   "when a static member's id is replaced the requests its old incarnation had parked are answered "
                   "with an error in that step (FENCED_INSTANCE_ID).",
             source="SPEC.md §3.8 (instance id maps to other member → FENCED_INSTANCE_ID for every API); §3.1 J5a "
                    "step 4 (a parked JoinGroup / SyncGroup of the old incarnation is answered FENCED_INSTANCE_ID), "
                    "J5b step 4, §3.2 step 2, §3.3, §3.4, §3.5",
             applies_to=STATIC)
def fenced_never_succeeds(before: Observation, step: Step, after: Observation) -> Witness | None:
    answers = {r.key: r for r in step.responses}
    req = delivered_request(before, step)
    g = before.group
    if req is not None and g is not None and req.member_id and req.group_instance_id is not None:
        owner = dict(g.static_members).get(req.group_instance_id)
        got = answers.get(req.key)
        # the documented finding below: 3.x removes a pending member id before it reads the instance id (§3.4)
        pending_leave = (req.api == "LeaveGroup" and req.member_id in g.pending_members and excused(PENDING_LEAVE)
                         and fact("validate-current-member", before.profile))
        if owner is not None and owner != req.member_id and got is not None and got.request_error == "NONE" \
                and not pending_leave:
            return {"request": f"{req.api}#{req.key[1]}", "member_id": req.member_id,
                    "instance_id": req.group_instance_id, "instance_maps_to": owner, "answer": got.request_error}
    for _, e in of_kind(step.events, StaticMemberReplaced):
        old = None if g is None else g.member(e.old_member_id)
        for key in () if old is None else (old.awaiting_join, old.awaiting_sync):
            got = None if key is None else answers.get(key)
            if key == old.awaiting_join and reverted_join(before, step, holder=e.old_member_id):
                continue   # the documented finding failed-static-store-answers-the-captured-join: cleared, not fenced
            if key is not None and (got is None or got.error == "NONE"):
                return {"replaced": e.render(), "parked_request": key,
                        "answer": None if got is None else got.error}
    return None


@always_step("static-member-survives-join-completion",
             claim="Completing a join phase never removes a member with a group.instance.id for not having rejoined: "
                   "it keeps its member id (and gets no join response).",
             source="SPEC.md §4.4 step 1 (every member not awaiting join *and not static*, 2.3+), step 5 (static "
                    "members that did not rejoin get no response); §1.3, §3.9 (DelayedJoin done … retry if only "
                    "non-rejoined statics)",
             applies_to=STATIC)
def static_survives_completion(before: Observation, step: Step, after: Observation) -> Witness | None:
    g = before.group
    if g is None:
        return None
    for _, e in of_kind(step.events, MemberNotRejoined):
        m = g.member(e.member_id)
        if m is not None and m.group_instance_id is not None:
            return {"member": e.member_id, "instance_id": m.group_instance_id, "event": e.render(),
                    "state": g.state.value}
    return None


# -- witnesses: the properties above are not vacuous --------------------------------------------------------------
@sometimes("an-instance-id-moves-to-a-new-member-id",
           claim="A static member restarts (member id \"\", known group.instance.id) and its member is re-keyed to a "
                 "new member id.",
           source="SPEC.md §3.1 J5a step 4 (replaceStaticMember)", applies_to=STATIC)
def instance_moves(obs: Observation) -> Witness | None:
    found = first_of(obs.events, StaticMemberReplaced)
    return None if found is None else {"event": found[1].render()}


@sometimes("a-request-of-a-fenced-instance-is-answered-fenced",
           claim="A request whose group.instance.id maps to another member id is answered FENCED_INSTANCE_ID.",
           source="SPEC.md §3.8 (instance id maps to other member)", applies_to=STATIC)
def fenced_answered(obs: Observation) -> Witness | None:
    fenced = [f"{r.api}#{r.corr}" for r in obs.responses if r.request_error == "FENCED_INSTANCE_ID"]
    return {"fenced": fenced} if fenced else None


@sometimes("a-static-member-that-did-not-rejoin-survives-join-completion",
           claim="A join phase completes into a new generation while a static member that did not rejoin stays a "
                 "member without a join response.",
           source="SPEC.md §4.4 steps 1 and 5", applies_to=STATIC)
def static_kept(obs: Observation) -> Witness | None:
    g = obs.group
    started = first_of(obs.events, GenerationStarted)
    if g is None or started is None or started[1].state != "CompletingRebalance":
        return None
    answered = {r.member_id for r in obs.responses if r.api == "JoinGroup" and r.error == "NONE"}
    kept = sorted(m.member_id for m in g.members if m.group_instance_id is not None and m.member_id not in answered)
    return {"generation": started[1].generation_id, "kept_without_response": kept} if kept else None

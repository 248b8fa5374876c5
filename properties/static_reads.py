"""What the generic properties need to know about static members (KIP-345): which JoinGroup answers belong to a
static member's id replacement, and which members a join completion keeps without a response. Registers nothing
(properties/concrete_static.py holds the static properties themselves)."""
from __future__ import annotations

from core.events import GenerationStarted, first_of
from core.trace import Step
from model.releases import fact
from properties.observation import Observation, RequestObs, delivered_request


def static_restart(before: Observation, step: Step) -> RequestObs | None:
    """The step delivered a JoinGroup with member id "" whose group.instance.id maps to a member: a static
    member's restart (J5a step 4)."""
    req = delivered_request(before, step)
    g = before.group
    if (req is None or req.api != "JoinGroup" or req.member_id or req.group_instance_id is None or g is None
            or not fact("static-membership", before.profile)):
        return None
    return req if req.group_instance_id in dict(g.static_members) else None


def replacement_answers(before: Observation, step: Step) -> frozenset[tuple[int, int]]:
    """Keys of the JoinGroup answers this step gives to static id replacements outside a join completion: the
    immediate answer to a restart (2.3–2.4 CompletingRebalance, 2.3.0–2.6.0 Stable, or a synchronous store) and the
    answer of a persisted replacement's store callback (2.6.1+). Such an answer names the leader *before* the
    replacement and carries no member list (SPEC.md §3.1 J5a step 4), so the generic JoinGroup-answer properties
    leave its leader and member list to this rule. Not so a JoinGroup v9+ on a KIP-814 release (3.2+, Corrections 1):
    its answer names the group's leader and lists the members to the leader alone, as any JoinGroup answer does
    (GroupCoordinator.scala 3.9.0-rc3 lines 1409-1422), so the generic properties judge it."""
    if first_of(step.events, GenerationStarted) is not None:
        return frozenset()
    keys = set()
    kip814 = fact("static-rejoin-skips-assignment", before.profile)
    req = static_restart(before, step)
    if req is not None and not (kip814 and req.asked_to_skip):
        keys.add(req.key)
    if step.action.kind == "CompleteAppend" and before.appends and before.appends[0].kind == "static":
        skipping = {p.key for p in before.parked if p.asked_to_skip} if kip814 else set()
        keys |= {r.key for r in step.responses if r.api == "JoinGroup" and r.key not in skipping}
    return frozenset(keys)


def kept_static_members(before: Observation) -> frozenset[str]:
    """Members with a group.instance.id that have not rejoined: onCompleteJoin keeps them and sends them no join
    response (2.3+, SPEC.md §4.4 steps 1 and 5)."""
    g = before.group
    if g is None or not fact("static-membership", before.profile):
        return frozenset()
    return frozenset(m.member_id for m in g.members if m.group_instance_id is not None and m.awaiting_join is None)

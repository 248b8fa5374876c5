"""The two documented findings of a static store callback whose member a later restart re-keyed (2.6.1–3.9): what
the catalog excuses for each, exactly the step and state of its cause (properties/findings.py).

Kafka's store callback of a static restart in Stable closes over the member *object* (knownStaticMember), and a
later restart of the same instance re-keys that object under its own new id (replaceStaticMember keeps it,
GroupMetadata.scala 3.9.0-rc3 lines 319-340, 2.7.0 lines 305-326). When the earlier store completes, it acts on the
later restart's member: success answers that restart's parked JoinGroup with the earlier member id; failure clears
it unanswered and sets the member's timeouts back (updateMember with no callback) before the revert throws.
"""
from __future__ import annotations

from core.responses import Response
from core.trace import Step
from harness.excuses import excused
from properties.observation import AppendObs, GroupObs, MemberObs, Observation, OpObs

#: success: the later restart is answered with the earlier replacement's member id
ANSWERS_OLD_ID = "static-store-answers-the-next-restart-with-its-old-id"
#: failure: the later restart's JoinGroup is dropped and its member's timeouts are set back
DROPS_NEXT_JOIN = "failed-static-store-drops-the-next-restarts-join"


def _gone_static_append(before: Observation, step: Step, ok: bool) -> tuple[AppendObs, GroupObs] | None:
    """The completing append (``ok``: successfully) is a static id replacement whose new id its group object — the
    cached group, or one an unload left Dead, on which the callback acts all the same — no longer has."""
    if step.action.kind != "CompleteAppend" or (step.action.arg == "NONE") != ok:
        return None
    if not before.appends or before.appends[0].kind != "static":
        return None
    a = before.appends[0]
    g = next((x for x in before.groups if x.incarnation == a.incarnation), None)
    if g is None or g.member(a.member_id) is not None:
        return None
    return a, g


def _restarted_holder(g: GroupObs, member_id: str) -> bool:
    m = g.member(member_id)
    return m is not None and m.group_instance_id is not None


def answers_old_id(before: Observation, step: Step, r: Response) -> bool:
    """Finding static-store-answers-the-next-restart-with-its-old-id: a successful static store whose new id is gone
    answers a JoinGroup parked by a static member with that (former) id."""
    found = _gone_static_append(before, step, ok=True) if excused(ANSWERS_OLD_ID) else None
    if found is None or r.api != "JoinGroup" or r.error != "NONE" or r.member_id != found[0].member_id:
        return False
    return any(p.key == r.key and p.api == "JoinGroup" and _restarted_holder(found[1], p.member_id)
               for p in before.parked)


def drops_next_join(before: Observation, step: Step, parked: object) -> bool:
    """Finding failed-static-store-drops-the-next-restarts-join: a failed static store whose new id is gone clears
    the JoinGroup parked by a static member of that group object, unanswered."""
    found = _gone_static_append(before, step, ok=False) if excused(DROPS_NEXT_JOIN) else None
    return (found is not None and getattr(parked, "api", "") == "JoinGroup"
            and getattr(parked, "incarnation", None) == found[1].incarnation
            and _restarted_holder(found[1], str(getattr(parked, "member_id", ""))))


def timeouts_set_back(obs: Observation, m: MemberObs, ops: list[OpObs]) -> bool:
    """The same finding in the state: a static member whose live heartbeat op was scheduled with a longer session
    than the member now has (the revert set its timeouts back without rescheduling) and is due within that one."""
    return (excused(DROPS_NEXT_JOIN) and m.group_instance_id is not None
            and any(not op.pending and m.session_timeout_ms < op.delay_ms
                    and op.deadline_ms <= obs.time_ms + op.delay_ms for op in ops))

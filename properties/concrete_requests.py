"""Step predicates (kind "always_step") about requests and their responses: exactly-once answers, what a
delivered request gets in each state (SPEC.md §3), the store callback's guard and unload."""
from __future__ import annotations

from core.events import HeartbeatScheduled, MemberLeaves, StaticMemberReplaced, of_kind
from core.responses import Response
from core.trace import Step
from core.types import NO_GENERATION, GroupState
from harness.excuses import excused
from model.profiles import heartbeat_answers, heartbeat_resets
from model.releases import MODELLED, fact
from properties.catalog import Witness, always_step
from properties.concrete_state import orphan_static_completion, orphan_static_join, stranded_leader_join
from properties.observation import Observation, RequestObs, delivered_key, delivered_request
from properties.static_reads import replacement_answers
from properties.static_rekeyed import answers_old_id, drops_next_join

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)



def heartbeat_table_of(profile: str) -> dict[GroupState, tuple[str, bool]]:
    """SPEC.md §3.3 (model/profiles.py, from the release facts): Heartbeat from a current member with the current
    generation, by group state → (error, resets the heartbeat timer); 0.10.0 has the "0.9.0" column (E0), 3.9 the
    "2.6.1/2.7.0+" one. Empty has no members, so only the three states with members are listed."""
    resets = heartbeat_resets(profile)
    return {GroupState(state): (error, state in resets) for state, error in heartbeat_answers(profile).items()
            if GroupState(state) in (PR, CR, S)}


HEARTBEAT_TABLE: dict[str, dict[GroupState, tuple[str, bool]]] = {p: heartbeat_table_of(p) for p in MODELLED}


def delivered(before: Observation, step: Step) -> RequestObs | None:
    return delivered_request(before, step)


def valid_for_group(before: Observation, req: RequestObs) -> bool:
    """The request passes the pre-checks and the member/generation checks of the cached, live group."""
    g = before.group
    return (g is not None and g.state is not D and not before.unloaded and not before.loading
            and g.member(req.member_id) is not None and req.generation_id == g.generation_id)


def shown(value: str) -> str | None:
    """A response's id field as its line shows it: absent (None) when empty."""
    return value or None


def answer(step: Step, key: tuple[int, int]) -> Response | None:
    return next((r for r in step.responses if r.key == key), None)


@always_step("each-request-is-answered-at-most-once",
             claim="No request is answered twice: a step answers only the request it delivered or requests parked "
                   "before it, each once, and an answered request is no longer parked.",
             source="SPEC.md §4.1 (onComplete runs exactly once; a callback is invoked once); DESIGN.md §5 "
                    "(a coordinator bug that answers twice must be observable)")
def at_most_once(before: Observation, step: Step, after: Observation) -> Witness | None:
    keys = [r.key for r in step.responses]
    allowed = set(before.parked_keys) | set(before.in_write)   # in_write: the end of its write answers it (4.x)
    key = delivered_key(step.action)
    if key is not None:
        allowed.add(key)
    twice = sorted({k for k in keys if keys.count(k) > 1})
    stray = sorted(k for k in set(keys) if k not in allowed and not reverted_join(before, step, k))
    still = sorted(k for k in set(keys) if k in after.parked_keys and not timed_out_on_member(after, step, k))
    if twice or stray or still:
        return {"answered_twice_in_step": twice, "answered_but_not_delivered_or_parked": stray,
                "answered_and_still_parked": still}
    return None


def timed_out_on_member(after: Observation, step: Step, key: tuple[int, int]) -> bool:
    """A parked JoinGroup/SyncGroup answered by the end of its own write event, the future left on its member (Kafka
    completes the member's future; the join or sync phase's later completion is a no-op). Release facts:
    ``write-timeout`` (SPEC-4x.md R2; CoordinatorRuntime.java@4.1.1:1146-1166, 1412-1419: a write event outliving
    offsets.commit.timeout.ms fails, REQUEST_TIMED_OUT mapped to COORDINATOR_NOT_AVAILABLE by
    GroupCoordinatorService.java@4.1.1:880-891) and ``batched-log-writes`` (R5; CoordinatorRuntime.java@4.1.1:848-854:
    a failed flush fails every event of its batch). Exactly that: a timer step or a failed flush answering ``key``
    with an error, the future still on its member, completed once."""
    kind = step.action.kind
    by_write = ((kind == "FireTimer" and fact("write-timeout", after.profile))
                or (kind == "FlushBatch" and step.action.arg != "NONE" and fact("batched-log-writes", after.profile)))
    if not by_write:
        return False
    got = answer(step, key)
    parked = next((p for p in after.parked if p.key == key), None)
    return got is not None and got.error != "NONE" and parked is not None and parked.done and parked.completions == 1


def reverted_join(before: Observation, step: Step, key: tuple[int, int] | None = None, holder: str = "") -> bool:
    """The documented finding failed-static-store-answers-the-captured-join (properties/findings.py): a failed store
    of a static id replacement reverts it — clearing the member's parked JoinGroup unanswered — and answers the
    JoinGroup it captured, whether or not that one is still parked (SPEC.md §3.1 J5a step 4, 2.6.1+). Exactly that: a
    failed append of a static replacement whose step reverts it, answering a JoinGroup (``key``) with an error, or
    dropping the JoinGroup parked on the member it reverts (``holder``)."""
    if not excused("failed-static-store-answers-the-captured-join") or step.action.kind != "CompleteAppend" \
            or step.action.arg == "NONE" or not of_kind(step.events, StaticMemberReplaced):
        return False
    if not before.appends or before.appends[0].kind != "static":
        return False
    if key is not None:
        got = answer(step, key)
        return got is not None and got.api == "JoinGroup" and got.error != "NONE"
    return holder == before.appends[0].member_id


@always_step("parked-request-is-answered-not-dropped",
             claim="A parked request leaves the coordinator only by being answered, or by being overwritten by a newer "
                   "request of the same member; the one exception is a member that leaves with a parked SyncGroup "
                   "(both profiles) or, on 0.10.0, with a parked JoinGroup.",
             source="SPEC.md §3.1 J5b.6 and §3.2 (a parked callback is overwritten, never answered); §3.4 "
                    "(removeMemberAndUpdateGroup answers a parked JoinGroup from 2.2.0, never a parked SyncGroup)")
def not_dropped(before: Observation, step: Step, after: Observation) -> Witness | None:
    answered = {r.key for r in step.responses}
    req, key = delivered(before, step), delivered_key(step.action)
    newer = {p.member_id: p.api for p in after.parked if p.key == key and req is not None and p.api == req.api}
    got = answer(step, key) if key is not None else None
    if req is not None and got is not None and got.error == "NONE":
        # overwritten by a newer request that this step then answered: the member's own JoinGroup parked over the
        # old one (§3.1 J5b.6) and completed the join (an error answer comes before any overwrite)
        newer.setdefault(req.member_id, req.api)
    leavers = {e.member_id for _, e in of_kind(step.events, MemberLeaves)}
    for p in before.parked:
        if p.key in after.parked_keys or p.key in answered or newer.get(p.member_id) == p.api:
            continue
        if p.done and fact("write-timeout", after.profile):
            continue   # answered already by its write's end (timed_out_on_member); the member let go of it
        if p.api == "JoinGroup" and reverted_join(before, step, holder=p.member_id):
            continue
        if drops_next_join(before, step, p):
            continue   # finding failed-static-store-drops-the-next-restarts-join: updateMember with no callback
        if stranded_leader_join(before, p) and all(g.incarnation != p.incarnation for g in after.groups):
            continue   # finding unloaded-skip-assignment-leader-store-throws: its Dead object went out of reach
        if p.member_id in leavers and (p.api == "SyncGroup" or not fact("removal-answers-parked-join", after.profile)):
            continue   # SPEC.md §3.4: left unanswered until the client times out
        return {"request": p.key, "api": p.api, "holder": p.member_id, "answered": False, "still_parked": False,
                "overwritten": False, "holder_left": p.member_id in leavers, "action": str(step.action)}
    for key in before.held:   # R3: a held answer goes out when its write ends, never silently
        if key not in answered and key not in after.held and key not in after.parked_keys:
            return {"request": key, "held": True, "answered": False, "still_held": False, "action": str(step.action)}
    return None


@always_step("delivered-request-is-answered-or-parked-on-its-member",
             claim="A delivered request is answered in its step, or parked (JoinGroup/SyncGroup) on the member it "
                   "names — a new member's JoinGroup on the member created for it.",
             source="SPEC.md §3.1–§3.5 (every path either responds or parks the callback on the member)")
def answered_or_parked(before: Observation, step: Step, after: Observation) -> Witness | None:
    req = delivered(before, step)
    if req is None or answer(step, req.key) is not None:
        return None
    if req.key in after.held:
        return None   # answers-wait-for-commit (SPEC-4x.md R3): its answer waits for its write's commit
    parked = next((p for p in after.parked if p.key == req.key), None)
    ok = (parked is not None and parked.api == req.api and req.api in ("JoinGroup", "SyncGroup")
          and (req.member_id in ("", parked.member_id)))
    if not ok:
        return {"request": req.key, "api": req.api, "member": req.member_id, "answered": False,
                "parked_on": None if parked is None else parked.member_id}
    return None


@always_step("sync-in-preparing-rebalance-answers-rebalance-in-progress",
             claim="A SyncGroup from a current member with the current generation, delivered while the group is "
                   "PreparingRebalance, is answered REBALANCE_IN_PROGRESS at once.",
             source="seed 004 (协调者处理同步组请求: 消费组状态是“准备再平衡”,它会返回“正在再平衡”的错误码); "
                    "SPEC.md §3.2 step 5")
def sync_in_pr(before: Observation, step: Step, after: Observation) -> Witness | None:
    req = delivered(before, step)
    if req is None or req.api != "SyncGroup" or not valid_for_group(before, req) or before.group.state is not PR:  # type: ignore[union-attr]
        return None
    got = answer(step, req.key)
    if got is None or got.error != "REBALANCE_IN_PROGRESS":
        return {"request": req.key, "member": req.member_id, "state": "PreparingRebalance",
                "answer": None if got is None else got.error}
    return None


@always_step("heartbeat-answer-follows-the-state-table",
             claim="A Heartbeat from a current member with the current generation is answered, and resets the "
                   "member's heartbeat timer or not, as SPEC.md §3.3's table says for the group state and release.",
             source="SPEC.md §3.3 table (0.9.0 column for 0.10.0; 2.6.1/2.7.0+ column, KAFKA-10134, for 3.9); "
                    "seed 004 (协调者处理心跳请求)")
def heartbeat_table(before: Observation, step: Step, after: Observation) -> Witness | None:
    req = delivered(before, step)
    if req is None or req.api != "Heartbeat" or not valid_for_group(before, req):
        return None
    state = before.group.state  # type: ignore[union-attr]
    expected = HEARTBEAT_TABLE[before.profile].get(state)
    if expected is None:
        return None
    got = answer(step, req.key)
    reset = any(e.member_id == req.member_id for _, e in of_kind(step.events, HeartbeatScheduled))
    if got is None and req.key in after.held:   # answers-wait-for-commit (R3): the error comes with the commit
        if reset != expected[1]:
            return {"member": req.member_id, "state": state.value, "answer": "held", "reset": reset,
                    "expected": expected}
        return None
    if got is None or (got.error, reset) != expected:
        return {"member": req.member_id, "state": state.value, "answer": None if got is None else got.error,
                "reset": reset, "expected": expected}
    return None


@always_step("commit-in-completing-rebalance-answers-rebalance-in-progress",
             claim="An OffsetCommit from a current member with the current generation, delivered while the group is "
                   "CompletingRebalance, is answered REBALANCE_IN_PROGRESS and does not reset its heartbeat.",
             source="SPEC.md §3.5 (CompletingRebalance → REBALANCE_IN_PROGRESS; only Stable/PreparingRebalance "
                    "reschedule, KAFKA-3470); §3.8 matrix")
def commit_in_cr(before: Observation, step: Step, after: Observation) -> Witness | None:
    req = delivered(before, step)
    if req is None or req.api != "OffsetCommit" or not valid_for_group(before, req) or before.group.state is not CR:  # type: ignore[union-attr]
        return None
    got = answer(step, req.key)
    reset = any(e.member_id == req.member_id for _, e in of_kind(step.events, HeartbeatScheduled))
    if got is None or got.error != "REBALANCE_IN_PROGRESS" or reset:
        return {"member": req.member_id, "state": "CompletingRebalance", "answer": None if got is None else got.error,
                "reset": reset}
    return None


@always_step("join-response-carries-the-group-generation-and-leader",
             claim="A successful JoinGroup response names the member, the group's current generation and its leader.",
             source="SPEC.md §3.1 (JoinGroup success response: memberId, new generation, protocol, leaderId)")
def join_response_fields(before: Observation, step: Step, after: Observation) -> Witness | None:
    if orphan_static_completion(before, step):
        return None   # the documented finding: the callback answers from the unloaded object
    g = after.group
    replacing = replacement_answers(before, step)   # they name the leader before the replacement (§3.1 J5a 4)
    for r in step.responses:
        if r.api != "JoinGroup" or r.error != "NONE" or answers_old_id(before, step, r):
            continue
        gen = None if r.generation_id == NO_GENERATION else str(r.generation_id)
        leader_ok = r.key in replacing or shown(r.leader_id) == g.leader_id if g is not None else False
        if g is None or gen != str(g.generation_id) or not leader_ok or g.member(r.member_id) is None:
            return {"response": f"{r.api}#{r.corr}", "gen": gen, "leader": shown(r.leader_id),
                    "member": shown(r.member_id), "group_generation": None if g is None else g.generation_id,
                    "group_leader": None if g is None else g.leader_id,
                    "group_members": [] if g is None else sorted(g.member_ids)}
    return None


@always_step("only-the-leader-receives-the-member-list",
             claim="Exactly the leader's successful JoinGroup response carries the member list, and it lists every "
                   "member of the generation.",
             source="SPEC.md §3.1 (members = list … for the leader only); seed 004 (主消费者执行分区分配)")
def leader_list(before: Observation, step: Step, after: Observation) -> Witness | None:
    g = after.group
    if g is None:
        return None
    replacing = replacement_answers(before, step)   # a static id replacement's answer has no list (§3.1 J5a 4)
    for r in step.responses:
        if r.api != "JoinGroup" or r.error != "NONE":
            continue
        is_leader = shown(r.member_id) == g.leader_id and r.key not in replacing
        if is_leader != bool(r.members) or (is_leader and set(r.members) != g.member_ids):
            return {"member": shown(r.member_id), "leader": g.leader_id, "member_list": list(r.members),
                    "group_members": sorted(g.member_ids)}
    return None


@always_step("store-callback-generation-guard",
             claim="A store callback for a group that left CompletingRebalance, or for an older generation, changes "
                   "nothing and answers nothing.",
             source="SPEC.md §3.2 (the callback acts only if still CompletingRebalance with the same generation) "
                    "and §5.2 orderings (a)–(c)")
def store_guard(before: Observation, step: Step, after: Observation) -> Witness | None:
    if step.action.kind != "CompleteAppend" or not before.appends or before.appends[0].kind != "assignment":
        return None
    a = before.appends[0]
    g0 = before.group_by_incarnation(a.incarnation)
    if g0 is None or (g0.state is CR and g0.generation_id == a.generation_id):
        return None
    g1 = after.group_by_incarnation(a.incarnation)
    changed = g1 is not None and g1 != g0
    if changed or step.responses:
        return {"append_generation": a.generation_id, "group_state": g0.state.value,
                "group_generation": g0.generation_id, "group_changed": changed,
                "state_after": None if g1 is None else g1.state.value, "responses": list(step.response_lines)}
    return None


@always_step("unload-answers-every-parked-request-not-coordinator",
             claim="When the group's partition is unloaded, every parked JoinGroup and SyncGroup is answered "
                   "NOT_COORDINATOR in that step.",
             source="SPEC.md §3.7 onGroupUnloaded")
def unload_answers(before: Observation, step: Step, after: Observation) -> Witness | None:
    if step.action.kind != "UnloadGroup" or before.group is None:
        return None
    got = {r.key: r.error for r in step.responses}
    for p in before.parked:
        if orphan_static_join(before, p):
            continue
        if p.done and fact("write-timeout", before.profile):
            continue   # 4.x (R2): its write's failure or timeout answered it already; a future completes once
        if p.incarnation == before.group.incarnation and got.get(p.key) != "NOT_COORDINATOR":
            return {"request": p.key, "api": p.api, "holder": p.member_id, "answer": got.get(p.key)}
    return None

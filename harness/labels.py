"""Labelled, output-checking refinement: each concrete step is one abstract action, and must be that
action's model transition — successor state *and* outputs (model/outputs.py) — not any edge.

``capture(world, action)`` is taken before the step: the abstract state, which slot each member id is,
which requests are parked, which timers exist and the request the step hands over. ``label`` names the
abstract action the step is (a delivered JoinGroup of member m with unchanged metadata ↦
``JoinGroup/known`` of m's slot, a fired DelayedHeartbeat ↦ ``ExpireHeartbeat`` of its slot, …; a
refused request carries its cell in ``AbstractAction.arg``), and ``mismatch`` compares what the
coordinator did with the model's outcomes of that action: the answers (error, generation relative to
the group, JoinGroup shape) and the delayed operations left armed with the source of their delay.

Slots are compared by their abstract value before the step (equal slots are interchangeable), so a
concrete member and the model's slot index meet without a naming between them. What a request *is*
(its member id, generation, session timeout, metadata) is read from the request and the coordinator's
state before the step; what the coordinator *did* is only ever compared with the model.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from core.actions import Action
from core.types import GroupState
from harness import did
from harness.abstraction import abstract, model_scope, slots_by_id
from harness.answers import Context, Got, match, show
from harness.excuses import excused
from harness.external import WireRequest
from harness.messages import Request
from harness.shadow import Record, Shadow, StepView
from harness.world import LOADING, UNLOADED, World
from impl.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync
from model.outputs import Answer, Outputs, Write
from model.profiles import ModelProfile, get_model_profile
from model.releases import fact
from model.state import FREE, PENDING, AbstractAction, Scope as ModelScope, Slot, State, padded
from model.step import outcomes_written



@dataclass
class Before:
    """What a step is judged against, captured before it."""

    state: State                          # the abstract state, unpadded (as ``abstract`` gives it)
    slot_of: dict[str, Slot] = field(default_factory=dict)
    parked: dict[Any, str] = field(default_factory=dict)     # request key -> member id
    timers: frozenset[int] = frozenset()
    generation: int = -1
    request: Request | None = None        # the request the step hands to the coordinator
    protocols: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    partition: str = ""
    timeouts: dict[str, tuple[int, int]] = field(default_factory=dict)   # member id -> (session, rebalance)
    fired: object = None                  # the timer task a FireTimer step runs
    group: object = None                  # the cached group object before the step
    action: Action | None = None          # the action the capture was taken for (None: states only)
    protocol_type: str | None = None      # the group's recorded protocol type
    statics: dict[str, str] = field(default_factory=dict)   # group.instance.id -> member id (KIP-345)
    append_generation: int = -1           # the generation of the group object of the oldest pending append
    #: the oldest pending append's JoinGroup when it is a static id replacement's (request key, new member id): its
    #: store callback answers that request whether or not it is still parked (KAFKA-10284, 2.6.1+)
    append_join: tuple[Any, str] | None = None
    append_group: object = None           # the group object of the oldest pending append
    append_seqs: tuple[int, ...] = ()     # the pending appends, oldest first
    leader_id: str | None = None          # the group's leader before the step
    state_name: str = ""                  # the group's state before the step ("" for none)
    #: a LeaveGroup's identities (member id, group.instance.id), in request order (v3+ may name several)
    leaving: tuple[tuple[str, str | None], ...] = ()
    #: a step the model has no action for although it reaches the coordinator (none today: every request is labelled)
    unlabelled: bool = False


def capture(world: World, action: Action | None = None) -> Before:
    coord, gid = world.coord, world.group_id
    group = coord.groups.get(gid)
    before = Before(abstract(coord, gid), timers=frozenset(coord.timer.entries), partition=world.partition,
                    action=action)
    before.group = group
    if coord.appends:
        before.append_generation = coord.appends[0].group.generation_id
        rejoin = coord.appends[0].rejoin
        if rejoin is not None:
            before.append_join = (rejoin.future_key, rejoin.new_member_id)
        before.append_group = coord.appends[0].group
        before.append_seqs = tuple(p.seq for p in coord.appends)
    if group is not None:
        before.slot_of = slots_by_id(coord, group)
        before.generation = group.generation_id
        before.protocol_type = group.protocol_type
        before.statics = dict(group.static_members)
        before.leader_id, before.state_name = group.leader_id, group.state.value
        for mid, m in group.members.items():
            for fut in (m.awaiting_join, m.awaiting_sync):
                if fut is not None:
                    before.parked[fut.key] = mid
            before.protocols[mid] = (m.protocol_type, m.protocols)
            before.timeouts[mid] = (m.session_timeout_ms, m.rebalance_timeout_ms)
    if action is not None:
        _take_action(world, before, action)
    return before


def rebase(base: Before, world: World, action: Action) -> Before:
    """``base`` (captured with no action on an equal world) for ``action`` on ``world`` as it is now: the
    values are shared, the object references (group, timer task, request) are read from ``world``."""
    fresh = capture_refs(world, action)
    return replace(base, action=action, group=fresh.group, fired=fresh.fired, request=fresh.request,
                   unlabelled=fresh.unlabelled, leaving=fresh.leaving, append_group=fresh.append_group)


def capture_refs(world: World, action: Action) -> Before:
    before = Before(State(), action=action, group=world.coord.groups.get(world.group_id))
    if world.coord.appends:
        before.append_group = world.coord.appends[0].group
    _take_action(world, before, action)
    return before


def _take_action(world: World, before: Before, action: Action) -> None:
    if action.kind == "FireTimer":
        before.fired = world.coord.timer.entries.get(int(action.arg))
    else:
        take_request(world, before, action)


def take_request(world: World, before: Before, action: Action) -> None:
    """The request a DeliverRequest or Receive step hands the coordinator, and a LeaveGroup's identities."""
    if action.kind == "DeliverRequest":
        before.request = req = world.net.requests.get((action.client, action.arg))   # type: ignore[arg-type]
        if req is not None and req.api == "LeaveGroup":
            before.leaving = ((req.member_id, req.group_instance_id),)
    elif action.kind == "Receive":
        wire = WireRequest.from_payload(str(action.arg))
        if wire.group_id != world.group_id:
            return
        before.request = wire.request(action.client)
        if wire.api == "LeaveGroup":   # the identities of the request (what World hands the coordinator)
            before.leaving = wire.members or ((wire.member_id, wire.group_instance_id),)


def _requester_slot(state: State, value: Slot) -> int:
    return state.slots.index(value) if value in state.slots else state.slots.index(FREE)


def label(world: World, before: Before, action: Action, state: State) -> tuple[AbstractAction, str] | None:
    """The abstract action of the step (and a CompleteAppend's raw error); None when the coordinator
    does nothing the model names (client-side actions, the clock, timers of a group that died). A LeaveGroup
    naming several identities is several actions (``label_all``): this is the first."""
    found = label_all(world, before, action, state)
    return None if found is None or not found[0] else (found[0][0], found[1])


def label_all(world: World, before: Before, action: Action, state: State
              ) -> tuple[tuple[AbstractAction, ...], str] | None:
    """The abstract actions of the step, in the order the coordinator takes them (one, except for a LeaveGroup v3+
    naming several identities: one per identity, §3.4; none for a LeaveGroup v3+ naming nobody)."""
    p = get_model_profile(world.profile.name)
    kind = action.kind
    if kind in ("DeliverRequest", "Receive"):
        req = before.request
        if req is None:
            return None
        if req.api == "LeaveGroup":
            return _leave_labels(world, p, before, req, state), ""
        return (_request_label(world, p, before, req, state),), ""
    if kind == "FireTimer":
        found = _timer_label(world, before, before.fired, state)
        return None if found is None else ((found[0],), found[1])
    if kind == "CompleteAppend":
        return (AbstractAction("CompleteAppend", arg="ok" if action.arg == "NONE" else "error"),), str(action.arg)
    if kind == "UnloadGroup":
        return (AbstractAction("UnloadGroup"),), ""
    if kind == "LoadGroup" and before.partition == LOADING:
        return (AbstractAction("LoadGroup"),), ""
    return None


def _leave_labels(world: World, p: ModelProfile, before: Before, req: Request, state: State
                  ) -> tuple[AbstractAction, ...]:
    """One LeaveGroup per identity (SPEC.md §3.4: each judged on its own, in request order; 0.10.0 reads the first
    only). A pre-check failure answers the whole request before any identity: one action. Two identities of one
    member are one slot; two members whose slots look alike are two slots. An identity removed earlier in the request
    no longer owns its group.instance.id for the identities after it."""
    identities = before.leaving or ((req.member_id, req.group_instance_id),)
    if not p.batch_leave:
        identities = identities[:1]
    if not identities:
        return ()
    if before.partition in (UNLOADED, LOADING):
        return (_request_label(world, p, before, replace(req, member_id=identities[0][0],
                                                         group_instance_id=identities[0][1]), state),)
    slot_of_id: dict[str, int] = {}
    gone: set[str] = set()
    out = []
    for mid, instance in identities:
        now = replace(before, statics={k: v for k, v in before.statics.items() if v not in gone})
        act = _request_label(world, p, now, replace(req, member_id=mid, group_instance_id=instance), state)
        who = mid or now.statics.get(instance or "", "")
        if who in before.slot_of:
            if who not in slot_of_id:
                value = before.slot_of[who]
                slot_of_id[who] = next(j for j, s in enumerate(state.slots)
                                       if s == value and j not in slot_of_id.values())
            act = replace(act, slot=slot_of_id[who])
            if act.arg not in ("fenced", "unknown-instance"):
                gone.add(who)
        out.append(act)
    return tuple(out)


def _timer_label(world: World, before: Before, op: object, state: State) -> tuple[AbstractAction, str] | None:
    group = before.group
    if op is None or getattr(op, "group", None) is not group or group is None:
        return None                        # an op of a group object that left the cache is inert
    if isinstance(op, DelayedHeartbeat):
        return AbstractAction("ExpireHeartbeat", _requester_slot(state, before.slot_of.get(op.member_id, FREE))), ""
    if isinstance(op, DelayedJoin):        # InitialDelayedJoin included
        return AbstractAction("ExpireJoin"), ""
    if isinstance(op, DelayedSync):
        return AbstractAction("ExpireSync"), ""
    return None


def stale_completion(world: World, before: Before, b: State, a: State) -> bool:
    """The documented finding ``stale-join-completes-reloaded-heartbeats`` (properties/findings.py): a
    DelayedJoin of a group object unloaded in PreparingRebalance stays in the purgatory (SPEC.md §3.7: its
    condition is false once the parked joins were answered NOT_COORDINATOR); when it expires, onCompleteJoin
    removes the stale object's members and, since 2.1.0 (KAFKA-7196, SPEC.md §4.4),
    ``removeHeartbeatForLeavingMember`` runs ``checkAndComplete(MemberKey(group, member))`` — a key the
    *reloaded* group's ops share, so the heartbeat op of each reloaded member with the same id that awaits a
    join or sync (hasSatisfiedHeartbeat) completes. The model treats a stale incarnation's ops as inert; this
    accepts exactly that change: ``a`` is ``b`` with some such slots' watch gone, nothing else.

    ``b``/``a``: the padded abstract states before and after the step."""
    if not excused("stale-join-completes-reloaded-heartbeats"):
        return False
    op = before.fired
    if not isinstance(op, DelayedJoin) or op.group is before.group or before.group is None:
        return False
    if not fact("removal-completes-heartbeat", world.profile.name) or len(a.slots) != len(b.slots):
        return False
    if replace(a, slots=()) != replace(b, slots=()):
        return False
    return all(x == y or (y == replace(x, watch=0) and x.watch > 0 and x.member
                          and (x.awaiting_join or x.awaiting_sync))
               for x, y in zip(b.slots, a.slots, strict=True))


def _request_label(world: World, p: ModelProfile, before: Before, req: Request, state: State) -> AbstractAction:
    mid = req.member_id
    value = before.slot_of.get(mid, FREE) if mid else FREE
    i = _requester_slot(state, value)
    cell = {UNLOADED: "not-coordinator", LOADING: "loading"}.get(before.partition, "")
    member = mid in before.protocols
    instance = req.group_instance_id if p.static_members else None
    instance_cell = ""   # the request's instance id against the static map (J5b 4, §3.2 2, §3.3–§3.5)
    if instance is not None:
        owner = before.statics.get(instance)
        static = _static_label(world, before, req, state, instance, cell)
        if static is not None:
            return static
        simple = req.api == "OffsetCommit" and req.generation_id < 0 and not member
        if before.group is not None and not (mid and owner == mid):
            # §3.5 lists no unknown-instance check before a simple commit's Empty-group shortcut; 2.x judges the
            # member id alone except in JoinGroup (SPEC.md §3.1 J5b step 5: "or given instance id unknown")
            unknown = ("unknown-instance" if (p.validate_current_member or req.api == "JoinGroup") and not simple
                       else "")
            instance_cell = "fenced" if owner is not None else unknown
    if req.api == "JoinGroup":
        config = world.coord.config
        if not cell and req.group_instance_id is not None and not p.static_members:
            cell = "unsupported"   # no KIP-345 in this release (SPEC.md §3.1)
        if not cell and not (config.group_min_session_timeout_ms <= req.session_timeout_ms
                             <= config.group_max_session_timeout_ms):
            cell = "bad-session"   # J2, before the group is looked at
        if not cell and before.group is not None and not _supported(p, before, req):
            cell = "bad-protocol"  # J5b step 2
        if not cell and instance is not None and mid and state.slots[i].status == PENDING:
            cell = "static-pending"   # J5b step 3: a pending id with an instance id is an IllegalStateException
        cell = cell or instance_cell
        if not mid:
            return AbstractAction("JoinGroup/new-pending" if req.require_known_member_id and p.pending_members
                                  and req.group_instance_id is None else "JoinGroup/new", i, cell)
        changed = member and before.protocols[mid] != (req.protocol_type, req.protocols)
        return AbstractAction("JoinGroup/changed" if changed else "JoinGroup/known", i, cell)
    if (not cell and req.api == "LeaveGroup" and not p.validate_current_member and instance is not None and mid
            and state.slots[i].status == PENDING and instance_cell != "fenced"):
        # [2.4] §3.4: past the fencing check, a pending id carrying an instance id is an IllegalStateException
        # (GroupCoordinator.scala@2.4.1 L471-474, @2.7.0 L477-480)
        cell = "static-pending"
    cell = cell or instance_cell
    if req.api == "OffsetCommit" and req.generation_id < 0 and not member:
        return AbstractAction("OffsetCommit/simple", i, cell)
    if not cell and member and req.api != "LeaveGroup" and req.generation_id != before.generation:
        cell = "stale"
    return AbstractAction(req.api, i, cell)


def predicted_error(world: World, before: Before) -> bool:
    """Whether the step's IllegalStateError is one the model predicts, with the coordinator's state untouched: a
    request labelled ``static-pending`` — a JoinGroup carrying a group.instance.id from a pending member id (SPEC.md
    §3.1 J5b step 3), or a 2.x LeaveGroup doing so (§3.4 [2.4]) — throws before it changes anything, so later
    answers are still the model's to predict; the successful store of a v9 static leader's restart on a group
    object an unload left Dead (model/outputs.py ``answerable_on_a_dead_group``), which throws before it answers; and
    the failed store of a static id replacement whose new id has left the group since (model/static.py
    ``complete_static_append``: it cannot revert — finding failed-static-store-of-a-departed-member-throws)."""
    if before.action is not None and before.action.kind == "CompleteAppend":
        if before.action.arg == "NONE":
            return _stranded_leader_store(world, before)
        return _departed_member_store(before)
    if before.request is None or before.action is None or before.unlabelled:
        return False
    found = label(world, before, before.action, padded(before.state, len(before.state.slots) + 1))
    return found is not None and found[0].arg == "static-pending"


def _departed_member_store(before: Before) -> bool:
    """The oldest pending append was a static id replacement whose new member id is no member of its group object any
    more (left, expired, removed by a join completion): the failed store's revert, replaceStaticMember(new → old),
    throws IllegalArgumentException (GroupMetadata.scala 2.7.0 lines 311-312, 3.9.0-rc3 lines 324-325) and nothing is
    answered — what the model predicts, so the step is the labelled CompleteAppend[error] and later answers are still
    the model's to predict."""
    group, join = before.append_group, before.append_join
    return group is not None and join is not None and join[1] not in getattr(group, "members", {})


def _stranded_leader_store(world: World, before: Before) -> bool:
    """The oldest pending append was the static id replacement whose new id now leads its group object, and its
    JoinGroup asked to skip the assignment on a KIP-814 release, where the callback's member list for the leader
    throws (GroupMetadata.scala 3.9.0-rc3 lines 591-593): on a Dead group object an unload left behind (not the cached
    one), or on the cached group in PreparingRebalance (model/static.py ``_store_ok``)."""
    group, join = before.append_group, before.append_join
    if group is None or join is None or not fact("static-rejoin-skips-assignment", world.profile.name):
        return False
    key, new_member_id = join
    state = GroupState.PREPARING_REBALANCE if group is before.group else GroupState.DEAD
    return (getattr(group, "state", None) is state and getattr(group, "leader_id", None) == new_member_id
            and world.asks_to_skip_assignment(key))


def _static_label(world: World, before: Before, req: Request, state: State, instance: str, cell: str
                  ) -> AbstractAction | None:
    """A request carrying a group.instance.id (KIP-345): a JoinGroup with member id "" is the instance's first join
    or its restart (J5a steps 6 and 4); a LeaveGroup with member id "" removes the instance's member (§3.4); a
    request whose member id is the instance's own is that member's, judged as usual. None: the caller labels it
    (with ``fenced`` / ``unknown-instance`` when the instance does not map to its member id)."""
    mid, owner = req.member_id, before.statics.get(instance)
    if mid or req.api not in ("JoinGroup", "LeaveGroup"):
        return None
    if req.api == "LeaveGroup":
        return AbstractAction("LeaveGroup", _requester_slot(state, before.slot_of.get(owner or "", FREE)), cell)
    config = world.coord.config
    if not cell and not (config.group_min_session_timeout_ms <= req.session_timeout_ms
                         <= config.group_max_session_timeout_ms):
        cell = "bad-session"
    if not cell and before.group is not None and not _supported(get_model_profile(world.profile.name), before, req):
        cell = "bad-protocol"
    if owner is None or before.group is None:
        return AbstractAction("JoinGroup/static-new", _requester_slot(state, FREE), cell)
    changed = before.protocols.get(owner) != (req.protocol_type, req.protocols)
    return AbstractAction("JoinGroup/static-rejoin", _requester_slot(state, before.slot_of[owner]),
                          cell or ("changed" if changed else ""))


def _supported(p: ModelProfile, before: Before, req: Request) -> bool:
    """supportsProtocols (SPEC.md §3.6): a group without members needs a non-empty type and protocol list
    (1.0+; 0.9/0.10 accepted anything then); otherwise the type must be the group's and an offered protocol
    supported by every member (for the members' current lists both readings of §3.6 agree)."""
    names = {n for n, _ in req.protocols}
    if not before.protocols:
        return not p.empty_group_needs_protocols or bool(req.protocol_type and names)
    common = set.intersection(*({n for n, _ in protocols} for _, protocols in before.protocols.values()))
    return req.protocol_type == before.protocol_type and bool(names & common)


Outcome = tuple[State, Outputs, tuple[Write, ...]]


@lru_cache(maxsize=1 << 16)
def _outcomes(state: State, acts: tuple[AbstractAction, ...], profile: str, scope: ModelScope, detail: str
              ) -> tuple[Outcome, ...]:
    """The model's outcomes of ``acts`` (one request) from ``state``: successors canonical, outputs and writes naming
    the slots of ``state``."""
    if not acts:   # a LeaveGroup v3+ naming nobody: top level NONE, no entry, nothing changes (§3.4)
        return ((state, Outputs((Answer(-1, "LeaveGroup", "NONE"),)), ()),)
    found = outcomes_written(state, acts if len(acts) > 1 else acts[0], profile, scope, detail, canonical=False)
    return tuple(sorted({(t.canonical(), o, w) for t, o, w in found},
                        key=lambda x: (x[0].short(), str(x[1]), str(x[2]))))


def _context(world: World, before: Before, acts: tuple[AbstractAction, ...], shadow: Shadow | None) -> Context:
    profile = world.profile.name
    ctx = Context(world.coord.groups.get(world.group_id), before.append_group,
                  fact("join-response-protocol-type", profile), fact("static-rejoin-skips-assignment", profile),
                  dict(shadow.prior) if shadow is not None else {}, dict(shadow.skip) if shadow is not None else {},
                  former=dict(shadow.former) if shadow is not None else {})
    req = before.request
    if req is not None and acts and acts[0].kind == "JoinGroup/static-rejoin":   # its answer in this very step
        ctx.prior[req.key] = before.leader_id or ""   # type: ignore[index]
        ctx.skip[req.key] = req.support_skipping_assignment   # type: ignore[index]
    return ctx


def mismatch(world: World, before: Before, action: Action, after: State | None = None
             ) -> tuple[AbstractAction | None, str | None]:
    """The step's label, and None if the model has a transition for it with these outputs — else why not (a reason
    that breaks an output rule of harness/answers.py names it: "rule NAME — ..."). ``after``: the abstract state
    after the step when the caller has it already. A LeaveGroup of several identities is checked as its actions in
    turn and returns None for the label (it is no single edge)."""
    act, why, _ = judge(world, before, action, after)
    return act, why


def judge(world: World, before: Before, action: Action, after: State | None = None, shadow: Shadow | None = None
          ) -> tuple[AbstractAction | None, str | None, Shadow | None]:
    """``mismatch`` for a linear run: with its ``shadow`` (harness/shadow.py) the values only the request history
    knows are checked too, and the shadow after the step is returned (the one given when the step is refused)."""
    if before.unlabelled:
        return None, None, shadow
    if shadow is not None:   # what the members sent, as the request history (not the coordinator) says
        before = replace(before, protocols=shadow.protocol_map(), protocol_type=shadow.protocol_type)
    raw_after = after if after is not None else abstract(world.coord, world.group_id)
    width = max(len(before.state.slots), len(raw_after.slots)) + 1
    b, a = padded(before.state, width), padded(raw_after, width)
    p = get_model_profile(world.profile.name)
    labelled = label_all(world, before, action, b)
    gots = did.gots(world, before, p.batch_leave)
    arms = did.arms(world, before)
    if labelled is None:
        if a != b and not gots and not arms and stale_completion(world, before, b, a):
            return None, None, shadow
        if a != b or gots or arms:
            return None, (f"{action} changes the coordinator although the model has no action for it: "
                          f"{_show(gots, arms)}"), shadow
        return None, None, shadow
    acts, detail = labelled
    group = world.coord.groups.get(world.group_id)
    after_gen = group.generation_id if group is not None else -1
    gens = {"current": before.generation, "new": after_gen, "none": p.no_generation, "-": "-",
            "append": before.append_generation}
    static = any(s.static for s in b.slots + a.slots)
    options = _outcomes(b, acts, p.name, model_scope(world.coord, width, static), detail)
    ctx = _context(world, before, acts, shadow)
    first = acts[0] if len(acts) == 1 else None
    broken: list[str] = []
    for state, outputs, writes in options:
        if state != a or not did.arms_match(arms, outputs, b):
            continue
        coarse, rule = match(did.wants(outputs, b, p, gens, acts[0].arg if acts else ""), gots, ctx)
        if not coarse:
            continue
        if rule is None and shadow is not None:
            moved, why = shadow.advance(_step_view(world, before, acts, outputs, writes, gots))
            if why is None:
                return first, None, moved
            broken.append(why)
        elif rule is None:
            return first, None, shadow
        else:
            broken.append(f"{rule}: the answers are the model's but for this field")
    said = "; ".join(f"{s.short()} / {o}" for s, o, _ in options) or "nothing (the action is not possible here)"
    name = " ".join(map(str, acts)) or "LeaveGroup of no identity"
    if broken:
        return first, (f"rule {broken[0]} — {action} is {name}: the coordinator reached {a.short()} and did "
                       f"{_show(gots, arms)}; the model allows: {said}"), shadow
    return first, (f"{action} is {name}, but the coordinator reached {a.short()} and did {_show(gots, arms)};"
                   f" the model allows: {said}"), shadow


def _step_view(world: World, before: Before, acts: tuple[AbstractAction, ...], outputs: Outputs,
               writes: tuple[Write, ...], gots: list[Got]) -> StepView:
    coord, req = world.coord, before.request
    group = coord.groups.get(world.group_id)
    own = [g for g in gots if req is not None and g.resp.key == req.key and g.api == "JoinGroup"]
    kind = acts[0].kind if acts else ""
    completed = before.append_seqs[0] if kind == "CompleteAppend" and before.append_seqs else None
    state_after = group.state.value if group is not None else ""
    return StepView(
        kind=kind, request=req, accepted=not any(g.error != "NONE" for g in own) and not (acts and acts[0].arg in
                                                                                      _REFUSALS),
        group_before=before.group, group_after=group, state_before=before.state_name,
        generation_before=before.generation, generation_after=group.generation_id if group is not None else -1,
        statics_before=before.statics, members_before=frozenset(before.protocols), leader_before=before.leader_id,
        skip=bool(req is not None and req.support_skipping_assignment
                  and fact("static-rejoin-skips-assignment", world.profile.name)),
        writes=writes, gots=gots, deferred=coord.config.append_mode == "deferred", appends_before=before.append_seqs,
        appends_after=list(coord.appends), durable_after=Record.of_impl(coord.log.get(world.group_id)),
        completed_seq=completed, ok=kind == "CompleteAppend" and acts[0].arg == "ok", completed_group_is_ours=True,
        new_generation=any(a.generation == "new" for a in outputs.answers if a.api == "JoinGroup"),
        restart_in_stable=(kind == "JoinGroup/static-rejoin" and before.state_name == "Stable"
                           and fact("static-rejoin-persisted-in-stable", world.profile.name)
                           and state_after in ("Stable", "PreparingRebalance") and not own))


#: request cells whose request the coordinator refuses before it changes anything
_REFUSALS = frozenset({"not-coordinator", "loading", "unsupported", "bad-session", "bad-protocol", "static-pending",
                       "fenced", "unknown-instance", "stale"})


def _show(gots: list[Got], arms: did.Arms) -> str:
    parts = sorted(show(gots))
    parts += [f"{op}({v.short() if v else '-'}) delay={d} ~ {'/'.join(sorted(s)) or '?'}" for op, v, s, d in arms]
    return "; ".join(parts) or "(no answer, no timer)"

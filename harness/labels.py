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

from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from core.actions import Action
from harness.abstraction import abstract, model_scope, slots_by_id
from harness.excuses import excused
from harness.external import WireRequest
from harness.messages import Request
from harness.world import LOADING, UNLOADED, World
from impl.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync, InitialDelayedJoin
from model.outputs import (HEARTBEAT_OP, INITIAL, INITIAL_JOIN_OP, JOIN_OP, NEW_MEMBER, PENDING_OP, REBALANCE, SESSION,
                           SYNC_OP, Outputs)
from model.profiles import ModelProfile, get_model_profile
from model.releases import fact
from model.state import FREE, PENDING, AbstractAction, Scope as ModelScope, Slot, State, padded
from model.step import outcomes

#: SPEC.md §4.6: a member added by addMemberAndRebalance is watched with the 5-minute new-member timeout
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000


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
    #: a real client's request the model has no action for — a batch LeaveGroup of several identities, or
    #: static membership (the abstract model has no instance ids): its states are still checked, its outputs are not
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
    if group is not None:
        before.slot_of = slots_by_id(coord, group)
        before.generation = group.generation_id
        before.protocol_type = group.protocol_type
        before.statics = dict(group.static_members)
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
                   unlabelled=fresh.unlabelled)


def capture_refs(world: World, action: Action) -> Before:
    before = Before(State(), action=action, group=world.coord.groups.get(world.group_id))
    _take_action(world, before, action)
    return before


def _take_action(world: World, before: Before, action: Action) -> None:
    coord = world.coord
    if action.kind == "FireTimer":
        before.fired = coord.timer.entries.get(int(action.arg))
    elif action.kind == "DeliverRequest":
        before.request = world.net.requests.get((action.client, action.arg))   # type: ignore[arg-type]
    elif action.kind == "Receive":
        wire = WireRequest.from_payload(str(action.arg))
        if wire.group_id != world.group_id:
            return
        req = wire.request(action.client)
        if wire.api == "LeaveGroup" and len(wire.members) == 1:   # LeaveGroup v3+: the identity is in the list
            req = replace(req, member_id=wire.members[0][0])
        before.request = req
        before.unlabelled = (len(wire.members) > 1 or wire.group_instance_id is not None
                             or any(instance is not None for _, instance in wire.members))


def _requester_slot(state: State, value: Slot) -> int:
    return state.slots.index(value) if value in state.slots else state.slots.index(FREE)


def label(world: World, before: Before, action: Action, state: State) -> tuple[AbstractAction, str] | None:
    """The abstract action of the step (and a CompleteAppend's raw error); None when the coordinator
    does nothing the model names (client-side actions, the clock, timers of a group that died)."""
    p = get_model_profile(world.profile.name)
    kind = action.kind
    if kind in ("DeliverRequest", "Receive"):
        return None if before.request is None else (_request_label(world, p, before, before.request, state), "")
    if kind == "FireTimer":
        return _timer_label(world, before, before.fired, state)
    if kind == "CompleteAppend":
        return AbstractAction("CompleteAppend", arg="ok" if action.arg == "NONE" else "error"), str(action.arg)
    if kind == "UnloadGroup":
        return AbstractAction("UnloadGroup"), ""
    if kind == "LoadGroup" and before.partition == LOADING:
        return AbstractAction("LoadGroup"), ""
    return None


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
            # §3.5 lists no unknown-instance check before a simple commit's Empty-group shortcut
            # (2.x judges the member id alone: no cell for an unknown instance there)
            unknown = "unknown-instance" if p.validate_current_member and not simple else ""
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
    cell = cell or instance_cell
    if req.api == "OffsetCommit" and req.generation_id < 0 and not member:
        return AbstractAction("OffsetCommit/simple", i, cell)
    if not cell and member and req.api != "LeaveGroup" and req.generation_id != before.generation:
        cell = "stale"
    return AbstractAction(req.api, i, cell)


def predicted_error(world: World, before: Before) -> bool:
    """Whether the step's IllegalStateError is one the model predicts, with the coordinator's state untouched: a
    request labelled ``static-pending`` — a JoinGroup carrying a group.instance.id from a pending member id (SPEC.md
    §3.1 J5b step 3) throws before it changes anything, so later answers are still the model's to predict."""
    if before.request is None or before.action is None or before.unlabelled:
        return False
    found = label(world, before, before.action, padded(before.state, len(before.state.slots) + 1))
    return found is not None and found[0].arg == "static-pending"


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


# -- what the coordinator did, in the model's terms ------------------------------------------------
def _answers(world: World, before: Before, state: State, after_generation: int) -> Counter[tuple[Any, ...]]:
    """The step's answers as (slot value, api, error, generation, shape); the generation as a number."""
    out: Counter[tuple[Any, ...]] = Counter()
    req = before.request
    for resp in world.answered:
        if req is not None and resp.key == req.key:
            mid = req.member_id or _instance_owner(before, req)
        else:
            mid = before.parked.get(resp.key, "?")
            if mid == "?" and before.append_join is not None and resp.key == before.append_join[0]:
                # a failed static store answers its JoinGroup even after a join completion answered it (finding
                # failed-static-store-answers-the-captured-join): the answer is the replaced member's
                mid = before.append_join[1]
        value = before.slot_of.get(mid, FREE) if mid else FREE
        generation: Any = resp.generation_id if resp.api == "JoinGroup" else "-"
        shape = "-"
        if resp.api == "JoinGroup":
            if resp.error != "NONE":
                shape = "error+id" if resp.member_id else "error"
            elif resp.leader_id and resp.leader_id == resp.member_id:
                shape = "leader+members" if resp.members else "leader"
            else:
                shape = "follower+members" if resp.members else "follower"
        out[(value, resp.api, resp.error, generation, shape)] += 1
    return out


def _instance_owner(before: Before, req: Request) -> str:
    """A JoinGroup or LeaveGroup with member id "" and a known group.instance.id is that instance's member's (a
    restart, a removal by instance id; SPEC.md §3.1 J5a step 4, §3.4)."""
    if req.api in ("JoinGroup", "LeaveGroup") and req.group_instance_id is not None:
        return before.statics.get(req.group_instance_id, "")
    return ""


def _slot_values(world: World, before: Before) -> dict[str, Slot]:
    """Member id -> its slot's value before the step; a member id an instance was re-keyed to in this step (a static
    restart, or its revert) is the slot of the id the instance had before (SPEC.md §3.1 J5a step 4)."""
    values = dict(before.slot_of)
    group = world.coord.groups.get(world.group_id)
    if group is None or group is not before.group:
        return values
    for instance, mid in group.static_members.items():
        old = before.statics.get(instance)
        if old is not None and old != mid and old in before.slot_of:
            values[mid] = before.slot_of[old]
    return values


def _model_answers(outputs: Outputs, state: State, p: ModelProfile, before_gen: int, after_gen: int,
                   append_gen: int = -1) -> Counter[tuple[Any, ...]]:
    gens = {"current": before_gen, "new": after_gen, "none": p.no_generation, "-": "-", "append": append_gen}
    return Counter((state.slots[a.slot] if a.slot >= 0 else FREE, a.api, a.error, gens[a.generation], a.shape)
                   for a in outputs.answers)


def _arms(world: World, before: Before) -> list[tuple[str, Slot | None, frozenset[str], int]]:
    """Delayed operations of the group armed by this step and still armed: (op, slot value, sources, delay)."""
    coord = world.coord
    group = coord.groups.get(world.group_id)
    if group is None:
        return []
    sessions = {m.session_timeout_ms for m in group.members.values()} | {s for s, _ in before.timeouts.values()}
    rebalances = {m.rebalance_timeout_ms for m in group.members.values()} | {r for _, r in before.timeouts.values()}
    if before.request is not None:
        sessions.add(before.request.session_timeout_ms)
        rebalances.add(before.request.rebalance_timeout_ms)
    initial = coord.config.group_initial_rebalance_delay_ms
    values = _slot_values(world, before)
    out = []
    for seq, op in sorted(coord.timer.entries.items()):
        if seq in before.timers or getattr(op, "group", None) is not group:
            continue
        delay = op.delay_ms
        sources = {SESSION} if delay in sessions else set()
        if isinstance(op, DelayedHeartbeat):
            if delay == NEW_MEMBER_JOIN_TIMEOUT_MS:
                sources.add(NEW_MEMBER)
            name, value = (PENDING_OP if op.is_pending else HEARTBEAT_OP), values.get(op.member_id, FREE)
        elif isinstance(op, InitialDelayedJoin):
            name, value, sources = INITIAL_JOIN_OP, None, ({INITIAL} if 0 < delay <= initial else set())
        elif isinstance(op, DelayedJoin):
            name, value, sources = JOIN_OP, None, ({REBALANCE} if delay in rebalances else set())
        elif isinstance(op, DelayedSync):
            name, value, sources = SYNC_OP, None, ({REBALANCE} if delay in rebalances else set())
        else:
            continue
        out.append((name, value, frozenset(sources), delay))
    return out


def _arms_match(concrete: list[tuple[str, Slot | None, frozenset[str], int]], outputs: Outputs, state: State) -> bool:
    wanted = [(a.op, state.slots[a.slot] if a.slot >= 0 else None, a.source) for a in outputs.arms]
    if len(wanted) != len(concrete):
        return False
    for op, value, sources, _delay in concrete:
        match = next((w for w in wanted if w[0] == op and w[1] == value and w[2] in sources), None)
        if match is None:
            return False
        wanted.remove(match)
    return True


@lru_cache(maxsize=1 << 16)
def _outcomes(state: State, act: AbstractAction, profile: str, scope: ModelScope, detail: str
              ) -> tuple[tuple[State, Outputs], ...]:
    return outcomes(state, act, profile, scope, detail)


def mismatch(world: World, before: Before, action: Action, after: State | None = None
             ) -> tuple[AbstractAction | None, str | None]:
    """The step's label, and None if the model has a transition for it with these outputs — else why not.
    ``after``: the abstract state after the step when the caller has it already."""
    if before.unlabelled:
        return None, None
    raw_after = after if after is not None else abstract(world.coord, world.group_id)
    width = max(len(before.state.slots), len(raw_after.slots)) + 1
    b = padded(before.state, width)
    a = padded(raw_after, width)
    labelled = label(world, before, action, b)
    group = world.coord.groups.get(world.group_id)
    after_gen = group.generation_id if group is not None else -1
    answers = _answers(world, before, b, after_gen)
    arms = _arms(world, before)
    if labelled is None:
        if a != b and not answers and not arms and stale_completion(world, before, b, a):
            return None, None
        if a != b or answers or arms:
            return None, (f"{action} changes the coordinator although the model has no action for it: "
                          f"{_show(answers, arms)}")
        return None, None
    act, detail = labelled
    p = get_model_profile(world.profile.name)
    static = any(s.static for s in b.slots + a.slots)
    options = _outcomes(b, act, p.name, model_scope(world.coord, width, static), detail)
    for state, outputs in options:
        if state == a and _model_answers(outputs, b, p, before.generation, after_gen,
                                         before.append_generation) == answers \
                and _arms_match(arms, outputs, b):
            return act, None
    said = "; ".join(f"{s.short()} / {o}" for s, o in options) or "nothing (the action is not possible here)"
    return act, (f"{action} is {act}, but the coordinator reached {a.short()} and did {_show(answers, arms)};"
                 f" the model allows: {said}")


def _show(answers: Counter[tuple[Any, ...]], arms: list[tuple[str, Slot | None, frozenset[str], int]]) -> str:
    parts = [f"{api}({v.short()}) {err} gen={g} {shape}" for (v, api, err, g, shape) in sorted(answers, key=str)]
    parts += [f"{op}({v.short() if v else '-'}) delay={d} ~ {'/'.join(sorted(s)) or '?'}" for op, v, s, d in arms]
    return "; ".join(parts) or "(no answer, no timer)"

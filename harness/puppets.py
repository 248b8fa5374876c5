"""Puppet clients: the short concrete step sequences that can make a world take one given abstract action.

A world whose clients are all ``external`` (harness/external.py) takes any well-formed group request as a
``Receive`` and moves its clock by any amount while no timer is due. Its clients are *puppets*: a search
chooses every request they send — member id, generation, timeouts, the moment — as an adversarial client
that may send any well-formed request at any time (DESIGN.md §5) would, and so reaches what the simulated
Java consumers, whose timing and knowledge are fixed, seldom or never do (which heartbeat deadline comes
first, a second SyncGroup from a leader whose first is parked, a rejoin with a longer rebalance timeout).

``moves(world, kind, acting, arg)`` lists candidate sequences for the abstract action ``kind`` of a slot
whose value before the step is ``acting`` (``Slot.short()``; "" for group-level actions): the request sent
by each member id the slot could be, with a few timeout variants; a timer fired when due, or after the clock moved just
past its deadline (and after the members whose deadlines come first heartbeated); an append completed; a
partition move. ``variations(world)`` lists steps that change only what the abstraction forgets (a clock tick,
a same-millisecond heartbeat), so that a search can hold several concrete situations behind one abstract
state. Whether a candidate *is* that abstract action is for the labelled refinement check to say
(harness/labels.py) — this module only proposes.

What the puppets stay within, so that the coverage map's exclusions (explore/coverage.py ``not_offered``)
hold for them as for the simulated clients: the JoinGroup version of the profile's client generation (no
rebalance timeout before JoinGroup v1, a known member id required from v4, KIP-394, supportSkippingAssignment from
v9, KIP-814), each client's fixed
protocol metadata but for a subscription change where the scope has ``resubscribes`` (``JoinGroup/changed``), a
group.instance.id only for the static actions and a static member's own requests (``INSTANCES``: two, as the static
world's clients hold), and the scope's switches (LeaveGroup only with ``leaves``, OffsetCommit only with ``commits``;
failed appends and partition moves are the world's).
"""
from __future__ import annotations

from core.actions import Action
from core.types import NO_GENERATION
from harness.abstraction import slots_by_id
from harness.client_versions import client_version_for
from harness.external import WireRequest
from harness.world import APPEND_ERRORS, World
from impl.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync
from model.quotient import coarse_slots
from model.releases import fact

#: how many puppet clients a puppet world has (the coverage map's 3 member slots)
PUPPETS = 3
KINDS = ("external",) * PUPPETS
#: session timeouts a new member may ask for (the default, the minimum allowed, a long one): deadlines in
#: either order of the other members'
SESSIONS = (10000, 6000, 30000)
#: rebalance timeouts besides the session timeout (JoinGroup v1+): a join phase shorter than the initial
#: delay or the sessions, and one that outlasts them
REBALANCES = (1000, 60000)
Sequence_ = tuple[Action, ...]


def _protocols(client: int) -> tuple[tuple[str, bytes], ...]:
    return (("range", f"c{client}".encode()),)    # what World gives simulated client ``client``


def _resubscribed(protocols: tuple[tuple[str, bytes], ...]) -> tuple[tuple[str, bytes], ...]:
    """The member's protocols after a subscription change: the same names (protocol selection unchanged), the
    metadata toggled between the two subscriptions a resubscribing Java consumer holds (harness/clients.py)."""
    return tuple((n, m[:-3] if m.endswith(b"+t1") else m + b"+t1") for n, m in protocols)


class _Builder:
    """Receive actions for one world as it is now: correlation ids follow the steps the sequence will take."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.version = client_version_for(world.profile.name)

    def receive(self, position: int, client: int, api: str, **fields: object) -> Action:
        corr = len(self.world.steps) + 1 + position    # unique along a run: one step per action
        wire = WireRequest(api=api, corr=corr, group_id=self.world.group_id, client_id=f"c{client}",
                           **fields)   # type: ignore[arg-type]
        return Action("Receive", client, wire.to_payload())

    def join(self, position: int, client: int, member_id: str, session: int, rebalance: int,
             protocol_type: str, protocols: tuple[tuple[str, bytes], ...], instance: str | None = None) -> Action:
        if not self.version.join_group_v1:
            rebalance = session          # JoinGroup v0 has no rebalance timeout: the coordinator uses the session's
        return self.receive(position, client, "JoinGroup", member_id=member_id, session_timeout_ms=session,
                            rebalance_timeout_ms=rebalance, protocol_type=protocol_type, protocols=protocols,
                            require_known_member_id=self.version.join_group_v4, group_instance_id=instance,
                            support_skipping_assignment=self.version.join_group_version >= 9)   # KIP-814, as clients


def owner(member_id: str) -> int:
    """The puppet client a member id was given to (ids are ``<client_id>-<n>``, client ids ``c<k>``; a static
    member's ``<instance id>-<n>``, instance ids ``i<k>``)."""
    head = member_id.split("-", 1)[0]
    return int(head[1:]) if head[:1] in ("c", "i") and head[1:].isdigit() and int(head[1:]) < PUPPETS else 0


def moves(world: World, kind: str, acting: str, arg: str) -> list[Sequence_]:
    """Candidate sequences for abstract action ``kind`` (of a slot valued ``acting``; ``arg``: an append's
    outcome), in a fixed order; every one ends with the step meant to be that action."""
    if kind in _REQUESTS:
        return _requests(world, kind, acting)
    if kind in ("ExpireHeartbeat", "ExpireJoin", "ExpireSync"):
        return _timers(world, kind, acting)
    if kind == "CompleteAppend":
        errors = ("NONE",) if arg == "ok" else APPEND_ERRORS
        return [(Action("CompleteAppend", -1, e),) for e in errors]
    if kind == "UnloadGroup":
        return [(Action("UnloadGroup", -1, 0),)]
    if kind == "LoadGroup":      # the first opens the loading window, the second loads (harness/world.py)
        return [(Action("LoadGroup", -1, 0), Action("LoadGroup", -1, 0))]
    return []


_REQUESTS = frozenset({"JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/known", "JoinGroup/changed", "SyncGroup",
                       "Heartbeat", "OffsetCommit", "OffsetCommit/simple", "LeaveGroup", "JoinGroup/static-new",
                       "JoinGroup/static-rejoin"})
#: the group.instance.ids static puppets join with (KIP-345), as the static world's clients hold two
#: (explore/static_coverage.py): puppet k sends "i<k>"
INSTANCES = ("i0", "i1")


def _requests(world: World, kind: str, acting: str) -> list[Sequence_]:
    scope = world.scope
    if (kind == "LeaveGroup" and not scope.leaves) or (kind.startswith("OffsetCommit") and not scope.commits) \
            or (kind == "JoinGroup/changed" and not scope.resubscribes and not _reverts_keep_metadata(world)):
        return []
    b = _Builder(world)
    out = _request_steps(world, b, kind, acting, 0)
    for prefix in _prefixes(world, b):    # the request after a clock tick, or after same-millisecond heartbeats
        out += [prefix + seq for seq in _request_steps(world, b, kind, acting, len(prefix))]
    return out


def _reverts_keep_metadata(world: World) -> bool:
    """Where a static member's metadata can stop being its client's without a subscription change: a failed store of a
    static restart in Stable reverts the id and keeps the restart's protocols (2.6.1+, SPEC.md Corrections 2), so the
    client that shares the instance id sends its own metadata with that id (explore/static_coverage.py
    ``_changed_not_offered``) — after the first generation, and for a static member only (``_request_steps``)."""
    view = world.coord.describe(world.group_id)
    return fact("static-rejoin-persisted-in-stable", world.profile.name) and view is not None \
        and view.generation_id > 0


def _prefixes(world: World, b: "_Builder") -> list[Sequence_]:
    """A clock tick, or heartbeats in this millisecond of each non-empty set of members (each such member gets
    a second live op from what the request schedules for it in the same millisecond on 0.10, §4.6); on 2.4.1 also
    the clock moved just past the DelayedJoin's deadline (``_at_join_deadline``)."""
    out = [seq for seq in variations(world) if seq[0].kind == "AdvanceClock"] + _at_join_deadline(world)
    view = world.coord.describe(world.group_id)
    members = sorted(view.members) if view is not None else []
    for mask in range(1, 1 << len(members)):
        chosen = [m for i, m in enumerate(members) if mask >> i & 1]
        out.append(tuple(b.receive(i, owner(m), "Heartbeat", member_id=m, generation_id=view.generation_id)  # type: ignore
                         for i, m in enumerate(chosen)))
    return out


def same_millisecond_matters(profile: str) -> bool:
    """Where the KAFKA-9232 predicate decides by the millisecond (2.4.1): a new member keeps its 5-minute op through
    its join response only if it was added in the millisecond of the join completion (SPEC.md §2, §4.4 step 5)."""
    return fact("new-member-checked-first", profile) and not fact("heartbeat-satisfied-flag", profile)


def _at_join_deadline(world: World) -> list[Sequence_]:
    """Where the millisecond matters (``same_millisecond_matters``): the clock moved just past the DelayedJoin's
    deadline, so that the request lands in the millisecond it fires in (a new member added then keeps its 5-minute op
    through the join completion). Measured, 2.4.1 sweep alone at 40,000 steps: 6,889 edges without, 7,053 with; just
    past every live deadline instead: fewer (the candidates of every request grow)."""
    if not same_millisecond_matters(world.profile.name):
        return []
    coord = world.coord
    group = coord.groups.get(world.group_id)
    if group is None or coord.due_timers():
        return []
    return [(Action("AdvanceClock", -1, op.deadline_ms + 1 - coord.now_ms),)
            for _, op in sorted(coord.timer.entries.items())
            if isinstance(op, DelayedJoin) and op.group is group and op.deadline_ms >= coord.now_ms
            and _time_left(world, op.deadline_ms + 1 - coord.now_ms)]


def variations(world: World) -> list[Sequence_]:
    """Steps that usually leave the abstract state as it is but change what it forgets: a clock tick (no
    deadline reached), and a heartbeat of each member in this very millisecond — on 0.10 one more live
    heartbeat op for a member scheduled in it (SPEC.md §4.6: the earlier op's predicate is not yet true), later
    the deadline pushed out. A search keeps each that turns out a stutter as another run of the same state."""
    coord = world.coord
    out: list[Sequence_] = []
    nxt = coord.next_deadline()
    if not coord.due_timers() and (nxt is None or coord.now_ms + 1 <= nxt) and _time_left(world, 1):
        out.append((Action("AdvanceClock", -1, 1),))
    view = coord.describe(world.group_id)
    if view is not None:
        b = _Builder(world)
        for mid in sorted(view.members):
            out.append((b.receive(0, owner(mid), "Heartbeat", member_id=mid, generation_id=view.generation_id),))
    return out


def _request_steps(world: World, b: _Builder, kind: str, acting: str, at: int) -> list[Sequence_]:
    """One-step sequences of the request itself (its Receive is the sequence's step ``at``)."""
    coord = world.coord
    view = coord.describe(world.group_id)
    generation = view.generation_id if view is not None else NO_GENERATION
    if kind in ("JoinGroup/new", "JoinGroup/new-pending"):
        held = {owner(m) for m in _ids(world)}
        clients = [c for c in range(PUPPETS) if c not in held] + [c for c in range(PUPPETS) if c in held]
        rebalances = (0,) + (REBALANCES if b.version.join_group_v1 else ())
        return [(b.join(at, c, "", s, r or s, "consumer", _protocols(c)),)
                for c in clients for s in SESSIONS for r in rebalances]
    if kind == "OffsetCommit/simple":
        return [(b.receive(at, 0, "OffsetCommit", member_id="", generation_id=NO_GENERATION,
                           offsets=(("t-0", 1),)),)]
    instances = _instances(world)
    if kind == "JoinGroup/static-new":      # an instance id the group does not know joins with member id "" (J5a 6)
        rebalances = (0,) + (REBALANCES if b.version.join_group_v1 else ())
        return [(b.join(at, k, "", s, r or s, "consumer", _protocols(k), i),)
                for k, i in enumerate(INSTANCES) if i not in instances.values() for s in SESSIONS for r in rebalances]
    out: list[Sequence_] = []
    for mid in _acting_ids(world, acting):
        c, inst = owner(mid), instances.get(mid)     # a static member's requests carry its instance id
        member = view.members.get(mid) if view is not None else None
        if kind in ("JoinGroup/known", "JoinGroup/changed", "JoinGroup/static-rejoin"):
            if (kind == "JoinGroup/static-rejoin" or (kind == "JoinGroup/changed" and not world.scope.resubscribes)) \
                    and inst is None:
                continue
            session, rebalance = (member.session_timeout_ms, member.rebalance_timeout_ms) if member else (10000, 10000)
            ptype, protocols = (view.protocol_type or "consumer", member.protocols) if member else ("consumer",
                                                                                                  _protocols(c))
            if kind == "JoinGroup/changed":
                protocols = _resubscribed(protocols)
            joiner = "" if kind == "JoinGroup/static-rejoin" else mid    # a restart: member id "" (J5a step 4)
            for s in dict.fromkeys((session,) + SESSIONS):
                for r in dict.fromkeys((rebalance, s) + REBALANCES):
                    out.append((b.join(at, c, joiner, s, r, ptype, protocols, inst),))
        elif kind == "SyncGroup":
            if view is not None and view.leader_id == mid:
                assignment = tuple((m, f"p{i}".encode()) for i, m in enumerate(sorted(view.members)))
                out.append((b.receive(at, c, "SyncGroup", member_id=mid, generation_id=generation,
                                      assignments=assignment, group_instance_id=inst),))
            out.append((b.receive(at, c, "SyncGroup", member_id=mid, generation_id=generation,
                                  group_instance_id=inst),))
        elif kind == "OffsetCommit":
            out.append((b.receive(at, c, "OffsetCommit", member_id=mid, generation_id=generation,
                                  offsets=(("t-0", 1),), group_instance_id=inst),))
        elif kind == "LeaveGroup":
            out.append((b.receive(at, c, "LeaveGroup", member_id=mid, group_instance_id=inst),))
            if inst is not None:                  # a static member removed by its instance id alone (§3.4)
                out.append((b.receive(at, c, "LeaveGroup", member_id="", group_instance_id=inst),))
        else:
            out.append((b.receive(at, c, kind, member_id=mid, generation_id=generation, group_instance_id=inst),))
    return out


def _instances(world: World) -> dict[str, str]:
    """Member id -> the group.instance.id the cached group maps to it (KIP-345)."""
    group = world.coord.groups.get(world.group_id)
    return {} if group is None else {m: i for i, m in sorted(group.static_members.items())}


def _ids(world: World) -> dict[str, str]:
    """Every member id, pending id and id with a live heartbeat op of the cached group -> its slot's value, as the
    coverage quotient writes it (model/quotient.py: the acting slot of a map edge is named so)."""
    group = world.coord.groups.get(world.group_id)
    if group is None:
        return {}
    slots = slots_by_id(world.coord, group)
    return dict(zip(slots, (s.short() for s in coarse_slots(tuple(slots.values()), world.profile.name)), strict=True))


def _acting_ids(world: World, acting: str) -> list[str]:
    return [m for m, value in sorted(_ids(world).items()) if value == acting]


def _time_left(world: World, ms: int) -> bool:
    limit = world.scope.max_time_ms
    return limit is None or world.coord.now_ms + ms <= limit


def _timers(world: World, kind: str, acting: str) -> list[Sequence_]:
    """Fire one of the action's ops: at once when it is due; else move the clock just past its deadline and fire
    it. Around the clock move, members may heartbeat: before it, those whose deadlines come no later (pushed
    out) or the op's own member (one more op in the millisecond it was scheduled: 0.10, SPEC.md §4.6); after it,
    in the millisecond the op fires, the others (what the expiry or the join completion it causes schedules for
    them lands in the same millisecond)."""
    coord = world.coord
    group = coord.groups.get(world.group_id)
    if group is None:
        return []
    ids = _ids(world)
    ops = [op for _, op in sorted(coord.timer.entries.items()) if getattr(op, "group", None) is group
           and _is_target(op, kind, acting, ids)]
    due = {t.seq for t in coord.due_timers()}
    out: list[Sequence_] = []
    for op in ops:
        if op.seq in due:
            out.append((Action("FireTimer", -1, op.seq),))
        elif not due and _time_left(world, op.deadline_ms + 1 - coord.now_ms):
            out += _clock_moves(world, group, op)
    return out


def _clock_moves(world: World, group: object, op: object) -> list[Sequence_]:
    coord, b = world.coord, _Builder(world)
    members = sorted(group.members)                               # type: ignore[attr-defined]
    own = [getattr(op, "member_id", "")] if getattr(op, "member_id", "") in members else []
    early = sorted({o.member_id for o in coord.timer.entries.values()
                    if isinstance(o, DelayedHeartbeat) and o.group is group and o is not op
                    and o.deadline_ms <= op.deadline_ms and o.member_id in members})   # type: ignore[attr-defined]
    others = [m for m in members if m not in own]
    befores = list(dict.fromkeys(map(tuple, ([], early, own, early + own))))
    afters = list(dict.fromkeys(map(tuple, [[]] + [[m] for m in others] + [others])))
    out: list[Sequence_] = []
    for before in befores:
        for after in afters:
            beats = [b.receive(i, owner(m), "Heartbeat", member_id=m, generation_id=group.generation_id)  # type: ignore
                     for i, m in enumerate(before)]
            move = Action("AdvanceClock", -1, op.deadline_ms + 1 - coord.now_ms)     # type: ignore[attr-defined]
            then = [b.receive(len(before) + 1 + i, owner(m), "Heartbeat", member_id=m,
                              generation_id=group.generation_id) for i, m in enumerate(after)]  # type: ignore
            out.append(tuple(beats) + (move,) + tuple(then) + (Action("FireTimer", -1, op.seq),))  # type: ignore
    return out


def _is_target(op: object, kind: str, acting: str, ids: dict[str, str]) -> bool:
    if kind == "ExpireHeartbeat":
        return isinstance(op, DelayedHeartbeat) and ids.get(op.member_id) == acting
    if kind == "ExpireJoin":
        return isinstance(op, DelayedJoin)      # InitialDelayedJoin included
    return isinstance(op, DelayedSync)


def probes(world: World) -> list[Sequence_]:
    """One request of each kind the model answers in this state, for one member id of each slot value: a heartbeat,
    a commit and a SyncGroup with the group's generation and a heartbeat with the one before (stale), a JoinGroup
    with unchanged metadata; and a heartbeat from an unknown member id, a JoinGroup with a session timeout below
    the minimum. Most change nothing — the model's refusals and answers (SPEC.md §3.8-§3.9) — so no edge of the
    map asks for them; the labelled refinement checks each answer (error, generation, shape, parked or not)."""
    coord, scope = world.coord, world.scope
    view = coord.describe(world.group_id)
    b = _Builder(world)
    gen = view.generation_id if view is not None else NO_GENERATION
    out: list[Sequence_] = [
        (b.receive(0, 0, "Heartbeat", member_id="c0-999999", generation_id=max(gen, 0)),),
        (b.join(0, 0, "", coord.config.group_min_session_timeout_ms - 1, 1000, "consumer", _protocols(0)),)]
    if view is None:
        return out
    firsts: dict[str, str] = {}
    for mid, value in sorted(_ids(world).items()):
        firsts.setdefault(value, mid)
    for _value, mid in sorted(firsts.items()):
        c, member = owner(mid), view.members.get(mid)
        out.append((b.receive(0, c, "Heartbeat", member_id=mid, generation_id=gen),))
        out.append((b.receive(0, c, "Heartbeat", member_id=mid, generation_id=gen - 1),))
        out.append((b.receive(0, c, "SyncGroup", member_id=mid, generation_id=gen),))
        if scope.commits:
            out.append((b.receive(0, c, "OffsetCommit", member_id=mid, generation_id=gen, offsets=(("t-0", 1),)),))
        if member is not None:
            out.append((b.join(0, c, mid, member.session_timeout_ms, member.rebalance_timeout_ms,
                               view.protocol_type or "consumer", member.protocols),))
    return out


def situation(world: World) -> tuple[object, ...]:
    """What the abstract state forgets that decides which moves can realise an edge: the group's live timers in
    deadline order, each as (op kind, its member's slot value, due now), equal deadlines grouped — so how many
    heartbeat ops a member holds (0.10, §4.6), whose deadline comes first and which are due."""
    coord = world.coord
    group = coord.groups.get(world.group_id)
    if group is None:
        return ()
    ids = _ids(world)
    now = coord.now_ms
    ops = sorted((op.deadline_ms, type(op).__name__, ids.get(getattr(op, "member_id", ""), ""))
                 for op in coord.timer.entries.values() if getattr(op, "group", None) is group)
    out: list[tuple[object, ...]] = []
    for deadline, kind, value in ops:
        rank = len({d for d, _, _ in ops if d < deadline})
        out.append((rank, kind, value, deadline < now))
    return tuple(out)


def timing(world: World) -> tuple[tuple[tuple[str, int], ...], int]:
    """Where the group's timers stand, as explore/deadlines.py's timed graph counts it: each slot value (every member
    id, pending id and id with live ops; a third "w" when the id holds three ops or more) with where its heartbeat ops
    stand — 0 armed in this millisecond, 1 later, 2 due, -1 none — sorted, and where the DelayedJoin stands (-1:
    none)."""
    coord = world.coord
    group = coord.groups.get(world.group_id)
    if group is None:
        return (), -1
    now = coord.now_ms
    where: dict[str, int] = {}
    count: dict[str, int] = {}
    join = -1
    for op in coord.timer.entries.values():
        if getattr(op, "group", None) is not group:
            continue
        at = 0 if op.deadline_ms - op.delay_ms == now else 2 if op.deadline_ms < now else 1
        if isinstance(op, DelayedHeartbeat):
            where[op.member_id] = max(where.get(op.member_id, at), at)
            count[op.member_id] = count.get(op.member_id, 0) + 1
        elif isinstance(op, DelayedJoin):
            join = at
    return tuple(sorted((value + ("w" if count.get(m, 0) >= 3 else ""), where.get(m, -1))
                        for m, value in _ids(world).items())), join


def ticks(world: World) -> list[Sequence_]:
    """Clock moves while no timer is due: one millisecond, and just past each live deadline of the group (so the timers
    up to it come due together) — the timed graph's tick (explore/deadlines.py), each a guess at one of its sets."""
    coord = world.coord
    group = coord.groups.get(world.group_id)
    if group is None or coord.due_timers():
        return []
    now = coord.now_ms
    times = sorted({now + 1} | {op.deadline_ms + 1 for op in coord.timer.entries.values()
                                if getattr(op, "group", None) is group and op.deadline_ms >= now})
    return [(Action("AdvanceClock", -1, t - now),) for t in times if _time_left(world, t - now)]


def retimings(world: World) -> list[tuple[tuple[tuple[tuple[str, int], ...], int], Sequence_]]:
    """Stutter prefixes that move the group's timers to another timing (``timing``) without an abstract step, each with
    the timing it is expected to leave: the clock moved by a tick or just past a live timer's deadline (so the timers
    up to it come due), or not moved, then heartbeats of a set of members in that millisecond (their ops armed now).
    Only a guess — whether a prefix stutters and which timing it leaves is for the caller to check on a fork."""
    coord = world.coord
    group = coord.groups.get(world.group_id)
    view = coord.describe(world.group_id)
    if group is None or view is None:
        return []
    now = coord.now_ms
    ops = [op for _, op in sorted(coord.timer.entries.items()) if getattr(op, "group", None) is group]
    ids = _ids(world)
    members = sorted(view.members)
    times = [now]
    if not coord.due_timers():
        times += sorted({now + 1} | {op.deadline_ms + 1 for op in ops if op.deadline_ms >= now})
    b = _Builder(world)
    rearm = "Heartbeat" if coord.profile.heartbeat_answers[group.state][1] else \
        "OffsetCommit" if world.scope.commits else ""
    out = []
    for t in times:
        if not _time_left(world, t - now):
            continue
        for mask in range(0 if t > now else 1, 1 << len(members)):
            beating = {m for i, m in enumerate(members) if mask >> i & 1}
            where: dict[str, int] = {m: 0 for m in beating}
            join = -1
            for op in ops:
                armed = op.deadline_ms - op.delay_ms
                at = 0 if armed == t else 2 if op.deadline_ms < t else 1
                if isinstance(op, DelayedHeartbeat):
                    if op.member_id not in beating:
                        where[op.member_id] = max(where.get(op.member_id, at), at)
                elif isinstance(op, DelayedJoin):
                    join = at
            guess = tuple(sorted((value, where.get(m, -1)) for m, value in ids.items())), join
            move = (Action("AdvanceClock", -1, t - now),) if t > now else ()
            # a member's ops are armed anew by a heartbeat in Stable, by a commit elsewhere (0.10, SPEC.md §3.3, §3.5);
            # twice where it holds two (the second keeps the slot's MANY in the same millisecond)
            who = [m for m in sorted(beating) for _ in range(2 if ids.get(m, "").endswith("ww") else 1)]
            if rearm == "Heartbeat":
                beats = tuple(b.receive(len(move) + i, owner(m), "Heartbeat", member_id=m,
                                        generation_id=view.generation_id) for i, m in enumerate(who))
            elif rearm == "OffsetCommit":
                beats = tuple(b.receive(len(move) + i, owner(m), "OffsetCommit", member_id=m,
                                        generation_id=view.generation_id, offsets=(("t-0", 1),))
                              for i, m in enumerate(who))
            elif who:
                continue
            else:
                beats = ()
            out.append((guess, move + beats))
    return out


__all__ = ["KINDS", "PUPPETS", "moves", "owner", "probes", "retimings", "same_millisecond_matters", "situation",
           "ticks", "timing", "variations"]

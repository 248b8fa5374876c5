"""Starting states for the per-state request tests, built only through the coordinator's public API.

Every builder drives real requests (join_group / sync_group / leave_group / advance) — no field is
poked — so a state reached here is a state a client can reach. Expected values live in the tests,
each with the SPEC.md section it comes from; this module only builds and observes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from impl import CoordinatorConfig, GroupCoordinator, GroupState, ResponseFuture

PROFILES = ("0.10.0", "3.9")
G = "g"
S_MS = 10_000          # session timeout every member sends
R_MS = 20_000          # rebalance timeout every member sends (E0 ignores it: max session timeout, §4.9)
D_MS = 3_000           # group.initial.rebalance.delay.ms (SPEC.md §0 default)
NEW_MEMBER_MS = 300_000  # NewMemberJoinTimeoutMs (SPEC.md §0)
MIN_SESSION = 6_000    # group.min.session.timeout.ms, all versions (SPEC.md §0)
#: group.max.session.timeout.ms: 300000 in 0.10.0–2.7, 1800000 in 2.8.0+ (SPEC.md §0)
MAX_SESSION = {"0.10.0": 300_000, "2.4.1": 300_000, "2.7.0": 300_000, "3.9": 1_800_000}
PROTOCOL_TYPE = "consumer"
PROTOS = [("range", b"r1")]
PROTOS_CHANGED = [("range", b"r2")]   # same name, different bytes: not `matches` (SPEC.md §3.1 J5b)

PR, CR, ST, EMPTY, DEAD = (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE,
                           GroupState.EMPTY, GroupState.DEAD)


def config(profile: str, **overrides: Any) -> CoordinatorConfig:
    settings: dict[str, Any] = dict(profile=profile, group_min_session_timeout_ms=MIN_SESSION,
                                    group_max_session_timeout_ms=MAX_SESSION[profile],
                                    group_initial_rebalance_delay_ms=D_MS,
                                    new_member_join_timeout_ms=NEW_MEMBER_MS)
    settings.update(overrides)
    return CoordinatorConfig(**settings)


def coordinator(profile: str, **overrides: Any) -> GroupCoordinator:
    return GroupCoordinator(config(profile, **overrides))


def join(c: GroupCoordinator, member_id: str = "", protocols: list[tuple[str, bytes]] | None = None,
         session: int = S_MS, rebalance: int = R_MS, group_id: str = G, protocol_type: str = PROTOCOL_TYPE,
         **kw: Any) -> ResponseFuture:
    return c.join_group(group_id, member_id, session, rebalance, protocol_type,
                        PROTOS if protocols is None else protocols, **kw)


def assignment_for(member_id: str) -> bytes:
    return b"assignment-" + member_id.encode()


def members(c: GroupCoordinator, group_id: str = G) -> set[str]:
    view = c.describe(group_id)
    return set() if view is None else set(view.members)


def hb_deadlines(c: GroupCoordinator, member_id: str) -> list[int]:
    """Deadlines of the member's armed (uncompleted) DelayedHeartbeat ops — its liveness watch."""
    return sorted(op.deadline_ms for op in c.delayed_operations()
                  if op.kind == "DelayedHeartbeat" and op.member_id == member_id and not op.pending)


def liveness(c: GroupCoordinator, member_id: str, group_id: str = G) -> tuple[Any, ...]:
    """Everything a heartbeat reset changes: the armed deadlines and (≤ 2.4) latestHeartbeat."""
    view = c.describe(group_id)
    latest = view.members[member_id].latest_heartbeat_ms if view and member_id in view.members else None
    return tuple(hb_deadlines(c, member_id)), latest


def was_reset(c: GroupCoordinator, member_id: str, session: int = S_MS) -> bool:
    """completeAndScheduleNextHeartbeatExpiration ran just now: one watch, due a session from now (§4.6)."""
    return hb_deadlines(c, member_id) == [c.now_ms + session]


def op_deadlines(c: GroupCoordinator, kind: str) -> list[int]:
    return sorted(op.deadline_ms for op in c.delayed_operations() if op.kind == kind)


def advance_past(c: GroupCoordinator, deadline_ms: int) -> None:
    """Advance so that a task due at ``deadline_ms`` fires: the timer fires deadline < now (DESIGN.md §4)."""
    if c.now_ms <= deadline_ms:
        c.advance(deadline_ms - c.now_ms + 1)


def new_member(c: GroupCoordinator, **kw: Any) -> tuple[str, ResponseFuture]:
    """A JoinGroup with an unknown member id; returns the id the coordinator gave it and the future."""
    before = members(c, kw.get("group_id", G)) | pending(c, kw.get("group_id", G))
    future = join(c, "", **kw)
    if future.done and future.result.member_id:
        return future.result.member_id, future
    (member_id,) = (members(c, kw.get("group_id", G)) | pending(c, kw.get("group_id", G))) - before
    return member_id, future


def pending(c: GroupCoordinator, group_id: str = G) -> set[str]:
    view = c.describe(group_id)
    return set() if view is None else set(view.pending_members)


@dataclass
class Scene:
    """A coordinator in a named starting state, with the ids and futures a test needs."""

    c: GroupCoordinator
    profile: str
    leader: str = ""
    follower: str = ""
    joins: dict[str, ResponseFuture] = field(default_factory=dict)
    syncs: dict[str, ResponseFuture] = field(default_factory=dict)

    @property
    def view(self) -> Any:
        return self.c.describe(G)

    @property
    def gen(self) -> int:
        return self.view.generation_id

    @property
    def state(self) -> GroupState:
        return self.view.state


def form(c: GroupCoordinator, n: int, **kw: Any) -> dict[str, ResponseFuture]:
    """n new members join; members that have not rejoined rejoin; the clock runs until the join phase ends.

    Returns each member's latest JoinGroup future. Works for E0 (the first join completes at once and
    the next one needs the first member to rejoin) and E5 (InitialDelayedJoin has to time out).
    """
    futures: dict[str, ResponseFuture] = {}
    for _ in range(n):
        c.advance(1)   # 1 ms between steps: ≤ 2.4 deadline arithmetic leaves same-ms watches armed (§4.6)
        member_id, future = new_member(c, **kw)
        futures[member_id] = future
    for _ in range(20):
        view = c.describe(G)
        if view.state is not PR:
            return futures
        stragglers = [m for m, mv in sorted(view.members.items()) if not mv.awaiting_join]
        if stragglers:
            c.advance(1)
        for m in stragglers:
            futures[m] = join(c, m, **kw)
        if not stragglers:
            advance_past(c, min(op_deadlines(c, "DelayedJoin") + op_deadlines(c, "InitialDelayedJoin")))
    raise AssertionError("the join phase did not end")


def completing(profile: str, n: int = 2, cfg: dict[str, Any] | None = None, **kw: Any) -> Scene:
    """A CompletingRebalance group of n members: join responses sent, no SyncGroup yet."""
    c = coordinator(profile, **(cfg or {}))
    futures = form(c, n, **kw)
    view = c.describe(G)
    assert view.state is CR, view
    others = sorted(m for m in view.members if m != view.leader_id)
    return Scene(c, profile, view.leader_id, others[0] if others else "", futures)


def stable(profile: str, n: int = 2, follower_syncs: bool = True, cfg: dict[str, Any] | None = None,
           **kw: Any) -> Scene:
    """A Stable group: the leader's SyncGroup stored every member's assignment; the follower synced too."""
    scene = completing(profile, n, cfg, **kw)
    c, gen = scene.c, scene.gen
    c.advance(1)
    assignments = {m: assignment_for(m) for m in sorted(scene.view.members)}
    scene.syncs[scene.leader] = c.sync_group(G, gen, scene.leader, assignments)
    c.complete_appends()
    if follower_syncs and scene.follower:
        scene.syncs[scene.follower] = c.sync_group(G, gen, scene.follower)
    assert scene.state is ST, scene.view
    return scene


def preparing(profile: str, cfg: dict[str, Any] | None = None, **kw: Any) -> Scene:
    """PreparingRebalance with one member rejoined: a Stable group of two, 1 s later the leader rejoins."""
    scene = stable(profile, cfg=cfg, **kw)
    scene.c.advance(1_000)
    scene.joins[scene.leader] = join(scene.c, scene.leader, **kw)
    assert scene.state is PR and not scene.joins[scene.leader].done
    return scene


def empty(cfg: dict[str, Any] | None = None) -> Scene:
    """3.9 only: an Empty group that has rebalanced before — its only member left (→ Empty, gen 2)."""
    scene = stable("3.9", n=1, cfg=cfg)
    scene.c.leave_group(G, [(scene.leader, None)])
    assert scene.state is EMPTY, scene.view
    return scene


def in_state(profile: str, state: GroupState, cfg: dict[str, Any] | None = None) -> Scene:
    """The starting state by name, for tests parametrized over states."""
    builders = {EMPTY: lambda: empty(cfg), PR: lambda: preparing(profile, cfg),
                CR: lambda: completing(profile, cfg=cfg), ST: lambda: stable(profile, cfg=cfg)}
    return builders[state]()

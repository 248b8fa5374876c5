"""group.max.size (SPEC.md §3.1 J4) on each release, in impl and in the model: who is refused with
GROUP_MAX_SIZE_REACHED, what the refusal removes, and that walks of a group at its size refine the model.

Kafka's source at the tags (GroupCoordinator.scala, GroupMetadata.scala): 2.4.1 lines 161-167 (the 2.2–2.5 rule:
an unknown id when |members| ≥ max, a known member not awaiting join of an over-capacity group; then remove(memberId)
— members only — and removeStaticMember(groupInstanceId)); 2.7.0 lines 131-154 and 184-187 (acceptJoiningMember,
KAFKA-9885; the same removals); 3.9.0-rc3 lines 136-158 and 193-196 (acceptJoiningMember; remove — GroupMetadata.scala
lines 268-282 — drops the static mapping of the removed member and its pending id; no removeStaticMember).
"""
from __future__ import annotations

import random

import pytest

from harness.refinement import NonRefiningStep, RefinementChecker
from harness.scope import Scope
from harness.world import World
from impl import Errors, GroupState
from tests.test_static_membership import G, join, stable

ST, PR = GroupState.STABLE, GroupState.PREPARING_REBALANCE


@pytest.mark.parametrize("release", ["2.4.1", "2.7.0", "3.9"])
def test_a_new_member_of_a_full_stable_group_is_refused(release: str) -> None:
    g = stable(release, group_max_size=2)
    r = join(g.c, "", None).result
    assert (r.error, r.member_id, r.generation_id) == (Errors.GROUP_MAX_SIZE_REACHED, "", -1)
    assert g.view.state is ST and len(g.view.members) == 2


@pytest.mark.parametrize("release,keeps_mapping", [("2.4.1", False), ("2.7.0", False), ("3.9", True)])
def test_a_static_restart_refused_at_capacity(release: str, keeps_mapping: bool) -> None:
    """A restart has member id "": unknown, so refused once the group is full. Before 2.8 handleJoinGroup then drops
    the mapping of the request's instance id (removeStaticMember), leaving the member without it; 3.9 does not."""
    g = stable(release, group_max_size=2)
    b = g.ids["i-b"]
    r = join(g.c, "", "i-b").result
    assert (r.error, r.member_id) == (Errors.GROUP_MAX_SIZE_REACHED, "")
    assert b in g.view.members and g.view.state is ST
    assert (dict(g.view.static_members).get("i-b") == b) is keeps_mapping


@pytest.mark.parametrize("release,still_pending", [("2.7.0", True), ("3.9", False)])
def test_a_pending_id_refused_in_preparing_rebalance(release: str, still_pending: bool) -> None:
    """2.6+: in PreparingRebalance an id not awaiting join is accepted only while fewer than max await; a pending id
    refused there stays pending before 3.0 (remove touches members only) and is dropped after (3.0's remove)."""
    from tests.group_builders import join as dyn_join, stable as dyn_stable
    scene = dyn_stable(release, n=2, cfg={"group_max_size": 2})
    c = scene.c
    dyn_join(c, scene.leader)                               # the leader rejoins: PreparingRebalance, 1 awaiting
    pending = dyn_join(c, "", require_known_member_id=True).result   # 1 < 2 await: MEMBER_ID_REQUIRED
    assert pending.error is Errors.MEMBER_ID_REQUIRED and c.describe(G).state is PR
    dyn_join(c, scene.follower)                             # 2 await now (the pending id blocks the completion)
    r = dyn_join(c, pending.member_id, require_known_member_id=True).result
    assert (r.error, r.member_id) == (Errors.GROUP_MAX_SIZE_REACHED, "")
    assert (pending.member_id in c.describe(G).pending_members) is still_pending


def _walk(profile: str, scope: Scope, seed: int) -> str | None:
    return _checked_walk(World(profile, scope, clients=("java", "java", "adversarial"), seed=seed, record=True), seed)


@pytest.mark.parametrize("profile", ["2.4.1", "2.7.0", "3.9"])
def test_walks_of_a_group_at_its_size_refine_the_model(profile: str) -> None:
    """Three clients, group.max.size 2: refusals, the members they remove and the join checks after them are the
    model's (model/step.py ``_at_capacity``), answers and timers included."""
    scope = Scope(group_max_size=2, commits=True, advance_ms=(1000, 4000))
    refused = 0
    for seed in range(4):
        assert _walk(profile, scope, seed) is None
        world = World(profile, scope, clients=("java", "java", "adversarial"), seed=seed, record=True)
        rng = random.Random(seed)
        for _ in range(500):
            choices = world.enabled()
            if not choices:
                break
            world.step(choices[rng.randrange(len(choices))])
            refused += sum(r.error == "GROUP_MAX_SIZE_REACHED" for r in world.answered)
    assert refused > 0   # the walks do reach the limit


def test_a_wrong_capacity_rule_is_caught_by_refinement() -> None:
    """A plant with an off-by-one limit (a Stable group accepts a new member while |members| ≤ max) lets a third
    member in where the model refuses it (served session: catalog + refinement on every step)."""
    from kgc.runs import CheckedRun
    from wire.session import LiveSession

    def join_(s: LiveSession, conn: int, member_id: str = "") -> None:
        s.submit(conn, "JoinGroup", group_id="g", member_id=member_id, session_timeout_ms=10000,
                 rebalance_timeout_ms=10000, protocol_type="consumer", protocols=[("range", b"")])
    s = LiveSession("3.9", checked=CheckedRun, coordinator={"group_max_size": 2})
    conns = [s.open(f"c{i}") for i in range(3)]
    join_(s, conns[0])
    original = s.world.coord._accept_joining_member   # type: ignore[union-attr]

    def accept(group: object, member_id: str) -> bool:
        if group.is_(ST):   # type: ignore[attr-defined]
            return group.has(member_id) or len(group.members) <= 2   # type: ignore[attr-defined]
        return original(group, member_id)   # type: ignore[arg-type]
    s.world.coord._accept_joining_member = accept   # type: ignore[union-attr, method-assign]
    join_(s, conns[1])
    for t in range(0, 8000, 500):
        s.advance_to(t)
    joined = {a.conn: a.result for a in s.answers()}
    leader = next(c for c, r in joined.items() if r.leader_id == r.member_id)
    s.submit(leader, "SyncGroup", group_id="g", member_id=joined[leader].member_id,
             generation_id=joined[leader].generation_id, assignments={})
    assert s.describe("g").state is ST and s.violations == []
    join_(s, conns[2])                                   # the model refuses it: GROUP_MAX_SIZE_REACHED
    assert [v.property for v in s.violations] == ["refines-the-abstract-model"], s.violations
    assert "GROUP_MAX_SIZE_REACHED" in s.violations[0].message


def _checked_walk(world: World, seed: int) -> str | None:
    checker = RefinementChecker(world)
    rng = random.Random(seed)
    try:
        for _ in range(500):
            choices = world.enabled()
            if not choices:
                break
            checker.step(choices[rng.randrange(len(choices))])
    except NonRefiningStep as exc:
        return str(exc)
    return None

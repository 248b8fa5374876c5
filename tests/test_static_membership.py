"""Static membership (group.instance.id, KIP-345) in the reference coordinator, through its public API.

Every expected answer is written from SPEC.md (the section is cited at each test), never computed
by impl. Scenarios run on 3.9; where the answer depends on a per-release static rule (impl/static.py)
the test is parametrized over STATIC_2_4_1 / STATIC_2_7_0 / STATIC_3_9.

The per-release cases run on the real profiles 2.4.1, 2.7.0 and 3.9 (impl/profiles.py), whose
``static_membership`` holds those rules.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest

from impl import CoordinatorConfig, Errors, GroupCoordinator, GroupState, Profile, ResponseFuture
from impl.profiles import PROFILE_2_4_1, PROFILE_2_7_0, PROFILE_3_9
from impl.static import STATIC_2_4_1, STATIC_2_7_0, STATIC_3_9
from tests.group_builders import advance_past, assignment_for, op_deadlines

G = "g"
S_MS = 30_000   # session timeout > rebalance timeout: a static member that does not rejoin outlives a join phase
R_MS = 20_000
PROTOS = [("range", b"r1")]
TWO_PROTOS = [("range", b"r1"), ("roundrobin", b"x1")]
PR, CR, ST, EMPTY = (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE,
                     GroupState.EMPTY)

#: the release profiles with static members, by name
PROFILE_FOR: dict[str, Profile] = {"2.4.1": PROFILE_2_4_1, "2.7.0": PROFILE_2_7_0, "3.9": PROFILE_3_9}
RELEASES = tuple(PROFILE_FOR)
assert [p.static_membership for p in PROFILE_FOR.values()] == [STATIC_2_4_1, STATIC_2_7_0, STATIC_3_9]


def coordinator(release: str = "3.9", **overrides: Any) -> GroupCoordinator:
    settings: dict[str, Any] = dict(profile=PROFILE_FOR[release], group_min_session_timeout_ms=6_000,
                                    group_max_session_timeout_ms=1_800_000, group_initial_rebalance_delay_ms=3_000,
                                    new_member_join_timeout_ms=300_000)
    settings.update(overrides)
    return GroupCoordinator(CoordinatorConfig(**settings))


def join(c: GroupCoordinator, member_id: str, instance: str | None,
         protocols: list[tuple[str, bytes]] | None = None) -> ResponseFuture:
    return c.join_group(G, member_id, S_MS, R_MS, "consumer", PROTOS if protocols is None else protocols,
                        group_instance_id=instance)


def finish_join_phase(c: GroupCoordinator) -> None:
    for _ in range(10):
        if c.describe(G).state is not PR:
            return
        advance_past(c, min(op_deadlines(c, "DelayedJoin") + op_deadlines(c, "InitialDelayedJoin")))
    raise AssertionError("the join phase did not end")


def check_i4(c: GroupCoordinator) -> None:
    """SPEC.md §1.5 I4: staticMembers is injective, maps to current members, and covers every static member."""
    view = c.describe(G)
    mapping = dict(view.static_members)
    assert len(set(mapping.values())) == len(mapping)
    assert set(mapping.values()) <= set(view.members)
    assert mapping == {m.group_instance_id: m.member_id for m in view.members.values()
                       if m.group_instance_id is not None}


@dataclass
class Group:
    c: GroupCoordinator
    ids: dict[str, str]                  # instance id (or "dyn") → member id
    joins: dict[str, ResponseFuture]

    @property
    def view(self) -> Any:
        return self.c.describe(G)

    @property
    def gen(self) -> int:
        return self.view.generation_id


def completing(release: str = "3.9", instances: tuple[str | None, ...] = ("i-a", "i-b"),
               protocols: list[tuple[str, bytes]] | None = None, **cfg: Any) -> Group:
    """Members join one by one with member id "" (None: a dynamic member, keyed "dyn"); the join phase ends."""
    c = coordinator(release, **cfg)
    joins = {}
    for instance in instances:
        c.advance(1)
        joins[instance or "dyn"] = join(c, "", instance, protocols)
    finish_join_phase(c)
    assert c.describe(G).state is CR
    return Group(c, {k: f.result.member_id for k, f in joins.items()}, joins)


def stable(release: str = "3.9", instances: tuple[str | None, ...] = ("i-a", "i-b"),
           protocols: list[tuple[str, bytes]] | None = None, **cfg: Any) -> Group:
    """A Stable group: the leader (the first joiner) synced every assignment, the others synced too."""
    g = completing(release, instances, protocols, **cfg)
    c, gen, leader = g.c, g.gen, g.view.leader_id
    c.advance(1)
    c.sync_group(G, gen, leader, {m: assignment_for(m) for m in g.view.members})
    c.complete_appends()
    for member_id in sorted(set(g.view.members) - {leader}):
        c.sync_group(G, gen, member_id)
    assert g.view.state is ST
    return g


# -- joining (SPEC.md §2, §3.1 J5a step 6, §1.4) -------------------------------------------------------
def test_static_members_join_with_instance_prefixed_ids_and_are_listed_with_their_instance_ids() -> None:
    g = completing()
    a, b = g.ids["i-a"], g.ids["i-b"]
    # §2: a static member id is instanceId + "-" + a unique suffix
    assert a.startswith("i-a-") and b.startswith("i-b-") and a != b
    # §1.4: staticMembers instanceId → memberId; add makes the first member leader
    assert g.view.static_members == (("i-a", a), ("i-b", b)) and g.view.leader_id == a
    # §3.1 success response: the leader's member list carries (memberId, groupInstanceId, metadata)
    assert g.joins["i-a"].result.members == ((a, "i-a", b"r1"), (b, "i-b", b"r1"))
    assert g.joins["i-b"].result.members == ()
    check_i4(g.c)


def test_a_new_instance_joining_a_stable_group_is_added_and_rebalances() -> None:
    # §3.9 row "Join, unknown id, … static new instance": Stable → add member, → PR
    g = stable()
    f = join(g.c, "", "i-c")
    assert not f.done and g.view.state is PR
    assert dict(g.view.static_members)["i-c"] in g.view.members
    check_i4(g.c)


def test_without_kip_345_an_instance_id_is_unsupported() -> None:
    # §3.1: KafkaApis rejects a groupInstanceId it cannot serve with UNSUPPORTED_VERSION
    c = GroupCoordinator(CoordinatorConfig(profile=replace(PROFILE_3_9, static_membership=None)))
    assert join(c, "", "i-a").result.error is Errors.UNSUPPORTED_VERSION
    assert c.describe(G) is None


# -- restart with the same instance id (SPEC.md §3.1 J5a step 4) -----------------------------------------
@pytest.mark.parametrize("release", RELEASES)
def test_restart_in_stable_gets_a_new_id_and_the_current_generation(release: str) -> None:
    g = stable(release, append_mode="deferred")
    a, old_b, gen = g.ids["i-a"], g.ids["i-b"], g.gen
    g.c.advance(1)
    f = join(g.c, "", "i-b")
    # Stable: 2.3.0–2.6.0 answer at once, no log write; 2.6.1+ storeGroup first and answer from its callback
    answered_at_once = release == "2.4.1"
    assert f.done is answered_at_once
    assert len(g.c.pending_appends()) == (0 if answered_at_once else 1)
    g.c.complete_appends()
    r = f.result
    new_b = r.member_id
    # current generation, current protocol, the *old* leader id, empty member list, NONE
    assert (r.error, r.generation_id, r.protocol_name, r.leader_id, r.members) == (Errors.NONE, gen, "range", a, ())
    assert new_b.startswith("i-b-") and new_b != old_b
    assert g.view.state is ST and g.gen == gen and set(g.view.members) == {a, new_b}
    assert dict(g.view.static_members)["i-b"] == new_b
    # the same member object is re-keyed: its stored assignment is still there (§3.2 Stable branch)
    assert g.c.sync_group(G, gen, new_b, group_instance_id="i-b").result.assignment == assignment_for(old_b)
    assert g.c.heartbeat(G, new_b, gen, "i-b").result.error is Errors.NONE
    check_i4(g.c)


@pytest.mark.parametrize("release", RELEASES)
def test_the_old_member_id_is_fenced_on_every_request(release: str) -> None:
    g = stable(release)
    old_b, gen = g.ids["i-b"], g.gen
    join(g.c, "", "i-b")
    c = g.c
    # §3.8 row "instance id maps to other member" → FENCED_INSTANCE_ID for Join, Sync, Heartbeat, Leave, Commit
    assert c.heartbeat(G, old_b, gen, "i-b").result.error is Errors.FENCED_INSTANCE_ID          # §3.3
    assert c.sync_group(G, gen, old_b, group_instance_id="i-b").result.error is Errors.FENCED_INSTANCE_ID  # §3.2
    assert c.commit_offsets(G, old_b, gen, group_instance_id="i-b").result.error is Errors.FENCED_INSTANCE_ID  # §3.5
    r = join(c, old_b, "i-b").result                                                             # §3.1 J5b 4
    assert (r.error, r.member_id, r.generation_id) == (Errors.FENCED_INSTANCE_ID, old_b, -1)
    leave = c.leave_group(G, [(old_b, "i-b")]).result                                            # §3.4
    assert (leave.error, leave.member_errors) == (Errors.NONE, ((old_b, "i-b", Errors.FENCED_INSTANCE_ID),))
    # without its instance id the old id is simply not a member any more (§3.3 member absent)
    assert c.heartbeat(G, old_b, gen).result.error is Errors.UNKNOWN_MEMBER_ID
    assert g.view.state is ST and len(g.view.members) == 2
    check_i4(c)


@pytest.mark.parametrize("release", RELEASES)
def test_a_parked_join_of_the_old_incarnation_is_fenced_and_the_leader_id_moves(release: str) -> None:
    g = stable(release)
    a, b = g.ids["i-a"], g.ids["i-b"]
    old_join = join(g.c, a, "i-a")            # the leader rejoins a Stable group: always → PR (§3.1 J5b)
    assert g.view.state is PR and not old_join.done
    new = join(g.c, "", "i-a")                # ... then restarts
    # §3.1 J5a step 4: the parked JoinGroup is answered FENCED_INSTANCE_ID with the old id, generation −1;
    # leaderId moves to the new id; PreparingRebalance: the new join waits like everyone else
    r = old_join.result
    assert (r.error, r.member_id, r.generation_id) == (Errors.FENCED_INSTANCE_ID, a, -1)
    new_a = [m for m in g.view.members if m.startswith("i-a-")][0]
    assert not new.done and g.view.state is PR and g.view.leader_id == new_a != a
    gen = g.gen
    join(g.c, b, "i-b")                       # everyone has rejoined: the join phase completes (§4.4)
    r = new.result
    assert (r.error, r.generation_id, r.member_id, r.leader_id) == (Errors.NONE, gen + 1, new_a, new_a)
    assert [m for m, _, _ in r.members] == sorted([new_a, b])
    check_i4(g.c)


@pytest.mark.parametrize("release", RELEASES)
def test_a_parked_sync_of_the_old_incarnation_is_fenced(release: str) -> None:
    g = completing(release)
    a, old_b, gen = g.ids["i-a"], g.ids["i-b"], g.gen
    parked = g.c.sync_group(G, gen, old_b, group_instance_id="i-b")
    assert not parked.done
    new = join(g.c, "", "i-b")
    assert parked.result.error is Errors.FENCED_INSTANCE_ID       # §3.1 J5a step 4
    if release == "2.4.1":
        # CompletingRebalance, 2.3–2.4: the same immediate answer as Stable (KAFKA-9801)
        r = new.result
        assert (r.error, r.generation_id, r.leader_id, r.members) == (Errors.NONE, gen, a, ())
        assert g.view.state is CR
    else:
        assert not new.done and g.view.state is PR                 # 2.5.0+: prepareRebalance
    check_i4(g.c)


@pytest.mark.parametrize("release", RELEASES)
def test_leader_restart_during_completing_rebalance(release: str) -> None:
    g = completing(release)
    a, b, gen = g.ids["i-a"], g.ids["i-b"], g.gen
    follower_sync = g.c.sync_group(G, gen, b, group_instance_id="i-b")
    new = join(g.c, "", "i-a")
    new_a = dict(g.view.static_members)["i-a"]
    assert new_a != a and g.view.leader_id == new_a              # §3.1 J5a step 4: leaderId is moved
    if release == "2.4.1":
        # 2.3–2.4: answered at once with the *old* leader id and no member list; no rebalance
        r = new.result
        assert (r.error, r.generation_id, r.member_id, r.leader_id, r.members) == (Errors.NONE, gen, new_a, a, ())
        assert g.view.state is CR and not follower_sync.done
    else:
        # 2.5.0+: prepareRebalance, which first answers every parked SyncGroup REBALANCE_IN_PROGRESS (§1.3, §3.1)
        assert g.view.state is PR and not new.done
        assert follower_sync.result.error is Errors.REBALANCE_IN_PROGRESS
        join(g.c, b, "i-b")
        r = new.result
        assert (r.error, r.generation_id, r.leader_id) == (Errors.NONE, gen + 1, new_a)
        assert [m for m, _, _ in r.members] == sorted([new_a, b])
    check_i4(g.c)


@pytest.mark.parametrize("release", RELEASES)
def test_restart_in_stable_with_a_protocol_change(release: str) -> None:
    g = stable(release, instances=("i-a",), protocols=TWO_PROTOS)
    a, gen = g.ids["i-a"], g.gen
    assert g.view.protocol_name == "range"
    r = join(g.c, "", "i-a", [("roundrobin", b"x1"), ("range", b"r1")]).result
    if release == "2.4.1":
        # 2.3.0–2.6.0: answered with the current generation and protocol, no rebalance
        assert (r.error, r.generation_id, r.protocol_name, r.leader_id) == (Errors.NONE, gen, "range", a)
        assert g.view.state is ST
    else:
        # 2.6.1+ (KAFKA-10284, §1.3 Stable → PR): re-selecting with the new metadata changes the protocol →
        # maybePrepareRebalance; the only member has joined, so J6 completes the join phase at once
        assert (r.error, r.generation_id, r.protocol_name, r.leader_id) == (Errors.NONE, gen + 1, "roundrobin",
                                                                             r.member_id)
        assert g.view.state is CR
    check_i4(g.c)


@pytest.mark.parametrize("release", RELEASES)
def test_a_static_leader_that_can_skip_the_assignment_learns_it_is_the_leader(release: str) -> None:
    g = stable(release)
    a, b, gen = g.ids["i-a"], g.ids["i-b"], g.gen
    r = g.c.join_group(G, "", S_MS, R_MS, "consumer", PROTOS, group_instance_id="i-a",
                       support_skipping_assignment=True).result
    new_a = r.member_id
    assert g.view.state is ST and g.view.leader_id == new_a
    if release == "3.9":
        # [3.2+, KIP-814] the real leader id, the full member list (it is the leader), skipAssignment = true
        assert (r.error, r.generation_id, r.leader_id, r.skip_assignment) == (Errors.NONE, gen, new_a, True)
        assert r.members == ((new_a, "i-a", b"r1"), (b, "i-b", b"r1"))
    else:
        # before 3.2: the old leader id and no member list, whatever the client supports
        assert (r.error, r.generation_id, r.leader_id, r.members, r.skip_assignment) == (Errors.NONE, gen, a, (),
                                                                                          False)
    check_i4(g.c)


@pytest.mark.parametrize("release", ["2.7.0", "3.9"])
def test_a_failed_store_of_the_replacement_reverts_it(release: str) -> None:
    g = stable(release, append_mode="deferred")
    old_b, gen = g.ids["i-b"], g.gen
    f = join(g.c, "", "i-b")
    new_b = dict(g.view.static_members)["i-b"]
    g.c.complete_appends(ok=False, error=Errors.NOT_ENOUGH_REPLICAS)
    # §3.1 J5a step 4 (2.6.1+): on a store error revert the id replacement and answer the error with memberId "";
    # §3.2 store error mapping: NOT_ENOUGH_REPLICAS → COORDINATOR_NOT_AVAILABLE
    assert (f.result.error, f.result.member_id) == (Errors.COORDINATOR_NOT_AVAILABLE, "")
    assert dict(g.view.static_members)["i-b"] == old_b and old_b in g.view.members
    assert g.c.heartbeat(G, old_b, gen, "i-b").result.error is Errors.NONE
    assert g.c.heartbeat(G, new_b, gen, "i-b").result.error is Errors.FENCED_INSTANCE_ID
    check_i4(g.c)


# -- join completion (SPEC.md §4.4) ----------------------------------------------------------------------
def test_a_static_member_that_did_not_rejoin_survives_join_completion() -> None:
    g = stable(instances=("i-a", "i-b", None))
    a, b, dyn, gen = g.ids["i-a"], g.ids["i-b"], g.ids["dyn"], g.gen
    g.c.advance(1)
    f = join(g.c, a, "i-a")                      # the leader rejoins: → PR; b and the dynamic member do not
    advance_past(g.c, min(op_deadlines(g.c, "DelayedJoin")))
    # §4.4 step 1: only members that are not awaiting join *and not static* are removed
    assert set(g.view.members) == {a, b} and g.view.state is CR
    # §3.1 success response: the leader's list includes static members that did not rejoin, old metadata
    r = f.result
    assert (r.generation_id, r.members) == (gen + 1, ((a, "i-a", b"r1"), (b, "i-b", b"r1")))
    # b is still a member, of the old generation (§3.3: generation mismatch → ILLEGAL_GENERATION)
    assert g.c.heartbeat(G, b, gen, "i-b").result.error is Errors.ILLEGAL_GENERATION
    assert g.c.heartbeat(G, dyn, gen).result.error is Errors.UNKNOWN_MEMBER_ID
    check_i4(g.c)


def test_join_phase_retries_when_only_static_members_that_did_not_rejoin_remain() -> None:
    g = stable()
    gen = g.gen
    g.c.advance(1)
    dyn = join(g.c, "", None)                     # a dynamic member joins (§3.9: Stable → add, → PR) ...
    dyn_id = (set(g.view.members) - set(g.ids.values())).pop()
    g.c.leave_group(G, [(dyn_id, None)])           # ... and leaves again: nobody is awaiting join
    assert dyn.result.error is Errors.UNKNOWN_MEMBER_ID and g.view.state is PR
    advance_past(g.c, min(op_deadlines(g.c, "DelayedJoin")))
    # §4.4 step 3: no joined leader can be elected and members remain → a new DelayedJoin with the current
    # rebalance timeout; the group stays PreparingRebalance, same generation, static members kept
    assert g.view.state is PR and g.gen == gen and set(g.view.members) == set(g.ids.values())
    assert op_deadlines(g.c, "DelayedJoin") == [g.c.now_ms + R_MS]
    check_i4(g.c)


# -- removal by the coordinator takes the instance mapping with it (SPEC.md §1.5 I4) -------------------------------
def test_a_static_member_that_never_syncs_is_removed_with_its_mapping_by_the_delayed_sync() -> None:
    g = completing()
    a, b, gen = g.ids["i-a"], g.ids["i-b"], g.gen
    g.c.sync_group(G, gen, a, {a: b"x", b: b"y"}, group_instance_id="i-a")   # → Stable; b never syncs
    assert g.view.state is ST
    advance_past(g.c, min(op_deadlines(g.c, "DelayedSync")))
    # §4.8: expiry removes every member still owing a SyncGroup — static ones lose their mapping too — then PR
    assert set(g.view.members) == {a} and g.view.static_members == (("i-a", a),) and g.view.state is PR
    f = join(g.c, "", "i-b")                      # i-b is unknown now: a new member is added (§3.1 J5a step 6)
    assert not f.done and len(g.view.members) == 2 and dict(g.view.static_members)["i-b"] != b
    check_i4(g.c)


def test_a_silent_static_member_expires_with_its_mapping() -> None:
    g = stable()
    a, b, gen = g.ids["i-a"], g.ids["i-b"], g.gen
    for _ in range(3):                            # a heartbeats every 10 s, b is silent
        g.c.advance(10_000)
        assert g.c.heartbeat(G, a, gen, "i-a").result.error is Errors.NONE
    assert b in g.view.members                    # its session has not run out yet
    advance_past(g.c, g.c.now_ms + 1_000)
    # §4.6: a member that is neither awaiting join nor sync and did not heartbeat within its session is removed
    # (removeMemberAndUpdateGroup, which also drops the static mapping) and the Stable group rebalances
    assert set(g.view.members) == {a} and g.view.static_members == (("i-a", a),) and g.view.state is PR
    check_i4(g.c)


# -- LeaveGroup by instance id (SPEC.md §3.4) ------------------------------------------------------------
@pytest.mark.parametrize("release", RELEASES)
def test_leave_by_instance_id_in_a_batch(release: str) -> None:
    g = stable(release)
    a = g.ids["i-a"]
    r = g.c.leave_group(G, [("", "i-b"), ("", "i-unknown"), ("", None), ("i-a-stale", "i-a")]).result
    # removal by instance id with member id ""; unknown identities → UNKNOWN_MEMBER_ID; an instance id that
    # maps to another member id → FENCED_INSTANCE_ID; top-level NONE (the group existed)
    assert r.error is Errors.NONE
    assert r.member_errors == (("", "i-b", Errors.NONE), ("", "i-unknown", Errors.UNKNOWN_MEMBER_ID),
                               ("", None, Errors.UNKNOWN_MEMBER_ID), ("i-a-stale", "i-a", Errors.FENCED_INSTANCE_ID))
    # §3.9: Leave in Stable → remove, → PR; the instance mapping goes with the member
    assert set(g.view.members) == {a} and g.view.state is PR and g.view.static_members == (("i-a", a),)
    check_i4(g.c)


# -- validateCurrentMember: an unknown instance id (SPEC.md §3.1 J5b step 4, 3.x) ----------------------------
@pytest.mark.parametrize("release", RELEASES)
def test_a_member_id_with_an_unknown_instance_id(release: str) -> None:
    g = stable(release)
    a, b, gen, c = g.ids["i-a"], g.ids["i-b"], g.gen, g.c
    # 2.x only fences an instance id mapped to another member; 3.x validateCurrentMember answers an unknown
    # instance id UNKNOWN_MEMBER_ID (SPEC.md §3.1 J5b step 4, §3.4 [3.x])
    unknown = release == "3.9"
    expected = Errors.UNKNOWN_MEMBER_ID if unknown else Errors.NONE
    assert c.heartbeat(G, b, gen, "i-other").result.error is expected                   # §3.3 Stable: NONE
    assert c.commit_offsets(G, b, gen, group_instance_id="i-other").result.error is expected   # §3.5 Stable
    assert c.sync_group(G, gen, b, group_instance_id="i-other").result.error is expected       # §3.2 Stable
    # §3.1 J5b step 5: JoinGroup refuses an unknown instance id in every release (2.x doJoinGroup's
    # groupInstanceIdNotFound, GroupCoordinator.scala@2.4.1 L287-291, @2.7.0 L276-280)
    assert join(c, b, "i-other").result.error is Errors.UNKNOWN_MEMBER_ID
    assert c.leave_group(G, [(a, "i-other")]).result.member_errors == ((a, "i-other", expected),)
    assert (a in g.view.members) is unknown
    check_i4(c)


# -- fencing and pending members (SPEC.md §3.1 J5b step 3) ---------------------------------------------------
def test_a_static_join_with_a_pending_member_id_is_an_illegal_state() -> None:
    c = coordinator()
    pending = c.join_group(G, "", S_MS, R_MS, "consumer", PROTOS, require_known_member_id=True).result
    assert pending.error is Errors.MEMBER_ID_REQUIRED
    # "memberId is a pending member → (static ⇒ IllegalStateException)": the request fails, nothing changes
    r = join(c, pending.member_id, "i-a").result
    assert r.error is Errors.UNKNOWN_SERVER_ERROR and c.errors
    assert c.describe(G).members == {} and c.describe(G).pending_members == {pending.member_id}


@pytest.mark.parametrize("release", RELEASES)
def test_a_leave_of_a_pending_id_with_another_members_instance_id(release: str) -> None:
    """SPEC.md §3.4: [2.4] memberId ≠ "" and static fenced → FENCED_INSTANCE_ID before the pending check; [3.x] a
    pending id is removed first and validateCurrentMember never sees the instance id → NONE."""
    g = stable(release)
    pending = g.c.join_group(G, "", S_MS, R_MS, "consumer", PROTOS, require_known_member_id=True).result
    assert pending.error is Errors.MEMBER_ID_REQUIRED
    r = g.c.leave_group(G, [(pending.member_id, "i-a")]).result
    if release == "3.9":
        assert r.member_errors == ((pending.member_id, "i-a", Errors.NONE),) and not g.view.pending_members
    else:
        assert r.member_errors == ((pending.member_id, "i-a", Errors.FENCED_INSTANCE_ID),)
        assert g.view.pending_members == {pending.member_id}
    assert dict(g.view.static_members)["i-a"] == g.ids["i-a"] and g.view.state is ST   # the static member stays


# -- load and snapshots (SPEC.md §3.7; impl/snapshot.py) ------------------------------------------------------
def test_a_reloaded_group_keeps_its_static_members() -> None:
    g = stable()
    a, old_b = g.ids["i-a"], g.ids["i-b"]
    join(g.c, "", "i-b")                          # 2.6.1+: the replacement is persisted (§3.7)
    new_b = dict(g.view.static_members)["i-b"]
    gen = g.gen
    g.c.unload_group(G)
    g.c.load_group(G)
    assert g.view.state is ST and g.view.static_members == (("i-a", a), ("i-b", new_b))
    assert g.c.heartbeat(G, old_b, gen, "i-b").result.error is Errors.FENCED_INSTANCE_ID
    r = join(g.c, "", "i-a").result               # a known instance after the load: replaced, not added
    assert (r.error, r.generation_id, r.leader_id) == (Errors.NONE, gen, a) and len(g.view.members) == 2
    check_i4(g.c)


def test_a_snapshot_keeps_the_static_map_and_a_pending_replacement() -> None:
    g = stable(append_mode="deferred")
    old_b, gen = g.ids["i-b"], g.gen
    f = join(g.c, "", "i-b", [("range", b"r1")])
    state = g.c.to_state()
    restored = GroupCoordinator.from_state(state)
    assert restored.to_state() == state
    assert restored.describe(G).static_members == g.view.static_members
    for c in (g.c, restored):
        c.take_responses()
        c.complete_appends()
        # the store callback answers the JoinGroup (§3.1 J5a step 4, 2.6.1+) — the restored copy answers the same
        assert [(api, r.error, r.member_id) for _, api, r in c.take_responses()] == [
            ("JoinGroup", Errors.NONE, f.result.member_id)]
        assert c.heartbeat(G, old_b, gen, "i-b").result.error is Errors.FENCED_INSTANCE_ID
    assert restored.to_state() == g.c.to_state()


# -- the gate: dynamic walks stay dynamic, one static walk on the KIP-345 releases ---------------------------
def test_the_gate_walks_static_clients_only_in_its_static_walk_and_only_with_kip_345() -> None:
    """The gate's dynamic walk scopes and client mixes send no instance id (their coverage map assumes none); its
    static walks run only on the releases with static members (0.10.0 answers UNSUPPORTED_VERSION)."""
    from harness.world import World
    from kgc.gate import STATIC_WALKS, WALK_CLIENTS, WALK_KINDS, WALK_SCOPES, walk_configs
    assert set(WALK_KINDS) == {"java", "adversarial"}
    for scope in WALK_SCOPES.values():
        for clients in WALK_CLIENTS:
            world = World("3.9", scope, clients=clients, record=False)
            assert all(cfg.group_instance_id is None for cfg in world.configs)
    # the static walk: static kinds only; the mixed one adds one dynamic consumer, whose pending id the adversary
    # sends with an instance id (the two findings of properties/findings.py)
    assert STATIC_WALKS["static"][1] == ("static", "static-adversarial", "static")
    assert STATIC_WALKS["static-mixed"][1] == ("java", "java", "static-adversarial")
    assert not {name for name, _, _ in walk_configs("0.10.0")} & set(STATIC_WALKS)
    assert {name for name, _, _ in walk_configs("2.4.1")} >= set(STATIC_WALKS)


# -- harness static clients (the gate's static walk only) --------------------------------------------------------
@pytest.mark.parametrize("append_mode", ["sync", "deferred"])
def test_a_world_walk_with_static_clients_never_makes_the_coordinator_raise(append_mode: str) -> None:
    """Two static Java consumers that crash and restart with their instance id and member id "", and an
    adversary forging the first one's instance id, on 3.9: every request is answered without an exception."""
    from harness.scope import Scope
    from harness.world import World
    scope = Scope(append_mode=append_mode, faults=append_mode == "deferred", crashes=True, commits=True,
                  advance_ms=(1000, 5000))
    world = World("3.9", scope, clients=("static", "static", "static-adversarial"), seed=1, record=True)
    assert [cfg.group_instance_id for cfg in world.configs] == ["i0", "i1", "i0"]
    world.random_walk(400)
    assert world.coord.errors == []
    answers = [r for step in world.steps for r in step.responses]
    # not vacuous: static ids were handed out and old incarnations were fenced (SPEC.md §3.1 J5a step 4, §3.8)
    assert any(r.api == "JoinGroup" and r.error == "NONE" and r.member_id.startswith("i0-") for r in answers)
    assert any(r.error == "FENCED_INSTANCE_ID" for r in answers)

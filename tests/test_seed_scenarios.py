"""The seed documents' worked examples, asserted exactly as the documents state them.

Expected values are written from the seeds (shared/seeds/000–004), never from a run. Where 3.9
differs by design (an Empty initial state, the KIP-394 MEMBER_ID_REQUIRED round trip, heartbeats
that reset the timer in PreparingRebalance, no reschedule when a SyncGroup is parked) the 3.9
expectation says so and cites SPEC.md. Scenario scripts: harness/scenarios.py.
"""
from __future__ import annotations

import re

import pytest

from harness.scenarios import BY_NAME, SCENARIOS, run_scenario
from harness.world import World

S, PR, CR, E, D = "Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"
AS = "AwaitingSync"   # CompletingRebalance's name in 0.10.0


def path(world: World) -> list[str]:
    """Every group state the group passed through, with the profile's state names."""
    names = {"CompletingRebalance": AS} if world.profile.name == "0.10.0" else {}
    first = world.profile.initial_state.value
    return [names.get(s, s) for s in [first] + [to for _g, _f, to in world.coord.transitions]]


def sends(world: World, client: int, api: str) -> int:
    return sum(1 for st in world.steps if st.action.kind == api and st.action.client == client)


def responses(world: World, client: int, api: str, error: str | None = None) -> list[str]:
    out = [r for st in world.steps for r in st.response_lines if r.startswith(f"c{client} {api}#")]
    return [r for r in out if error is None or f" {error}" in r]


def step_of(world: World, pattern: str) -> int:
    """Index of the first step whose responses or events match ``pattern``."""
    for st in world.steps:
        if any(re.search(pattern, line) for line in st.response_lines + st.event_lines):
            return st.index
    raise AssertionError(f"nothing matched {pattern!r}")


def last_step_of(world: World, pattern: str) -> int:
    """Index of the last step whose responses or events match ``pattern``."""
    found = [st.index for st in world.steps if any(re.search(pattern, x) for x in st.response_lines + st.event_lines)]
    assert found, f"nothing matched {pattern!r}"
    return found[-1]


def created_deadlines(world: World, member: str, from_step: int = 0) -> list[int]:
    """Deadlines of the DelayedHeartbeat ops the coordinator created for ``member``, in order."""
    prefix = f"DelayedHeartbeat {member} deadline="
    return [int(e[len(prefix):]) for st in world.steps[from_step:] for e in st.event_lines if e.startswith(prefix)]


def heartbeat_deadlines(world: World, member: str) -> list[int]:
    return [op.deadline_ms for op in world.coord.delayed_operations()
            if op.kind == "DelayedHeartbeat" and op.member_id == member]


def member_of(world: World, client: int) -> str:
    """The member id the coordinator gave client ``client`` last (ids are "<client_id>-<n>")."""
    ids = [m for st in world.steps for m in st.members if m.startswith(f"c{client}-")]
    assert ids, f"client c{client} never became a member"
    return ids[-1]


BOTH = ("0.10.0", "3.9")
#: 3.x clients first get MEMBER_ID_REQUIRED and rejoin with the id (KIP-394, SPEC.md §3.1 J5a.5)
EXTRA_JOIN = {"0.10.0": 0, "3.9": 1}


def test_every_scenario_runs_on_its_profiles() -> None:
    for scenario in SCENARIOS:
        for profile in scenario.profiles:
            world = run_scenario(scenario, profile)
            assert world.coord.errors == [], (scenario.name, profile, world.coord.errors)


@pytest.mark.parametrize("profile", BOTH)
def test_first_join_completes_inside_try_complete_else_watch(profile: str) -> None:
    """Seed 001 (1)-(7): the first member's join completes at once and is answered in the same request."""
    world = run_scenario(BY_NAME["first-join-completes-at-once"], profile)
    # 0.10.0: Stable → PreparingRebalance → AwaitingSync within the one request (seed 001 (2),(6))
    assert path(world) == ([S, PR, AS] if profile == "0.10.0" else [E, PR, CR])
    delivered = [st for st in world.steps if st.action.kind == "DeliverRequest"][-1]
    assert any("JoinGroup" in r and " NONE gen=1" in r for r in delivered.response_lines)
    assert delivered.group_state in (AS, CR)
    kinds = {op.kind for op in world.coord.delayed_operations()}
    assert not kinds & {"DelayedJoin", "InitialDelayedJoin"}   # completed, not watched


@pytest.mark.parametrize("profile", BOTH)
def test_three_consumers_one_rebalance(profile: str) -> None:
    """Seed 004 §1: 稳定→准备再平衡→等待同步→准备再平衡→等待同步→稳定, then everyone leaves."""
    world = run_scenario(BY_NAME["three-consumers-one-rebalance"], profile)
    if profile == "0.10.0":
        assert path(world) == [S, PR, AS, PR, AS, S, PR, D]
    else:   # a 3.9 group starts and ends Empty (SPEC.md §1.3)
        assert path(world) == [E, PR, CR, PR, CR, S, PR, E]
    extra = EXTRA_JOIN[profile]
    # consumer-3 (c0) sent JoinGroup twice, consumers 2 and 1 once each
    assert [sends(world, c, "JoinGroup") for c in range(3)] == [2 + extra, 1 + extra, 1 + extra]
    # one rebalance, one assignment: each consumer got exactly one successful SyncGroup
    assert [len(responses(world, c, "SyncGroup", "NONE")) for c in range(3)] == [1, 1, 1]
    # the followers' SyncGroups were handled while the leader's assignment was being stored (7),
    # and all three answers came together when the store completed (8)
    stored = next(st for st in world.steps if st.action.kind == "CompleteAppend")
    assert sorted(r.split("#")[0] for r in stored.response_lines) == ["c0 SyncGroup", "c1 SyncGroup", "c2 SyncGroup"]


@pytest.mark.parametrize("profile", BOTH)
def test_three_consumers_two_rebalances(profile: str) -> None:
    """Seed 004 §2: 稳定→准备再平衡→等待同步→稳定→准备再平衡→等待同步→稳定."""
    world = run_scenario(BY_NAME["three-consumers-two-rebalances"], profile)
    start, end = (S, D) if profile == "0.10.0" else (E, E)
    mid = AS if profile == "0.10.0" else CR
    assert path(world) == [start, PR, mid, S, PR, mid, S, PR, end]
    extra = EXTRA_JOIN[profile]
    assert [sends(world, c, "JoinGroup") for c in range(3)] == [2 + extra, 1 + extra, 1 + extra]
    # consumer-1 took part in two rebalances, the others in one
    assert [len(responses(world, c, "SyncGroup", "NONE")) for c in range(3)] == [2, 1, 1]
    # first rebalance: consumer-1 alone gets every partition
    first = responses(world, 0, "SyncGroup", "NONE")[0]
    assert "assignment=p0,p1,p2,p3,p4,p5" in first


@pytest.mark.parametrize("profile", BOTH)
def test_three_consumers_three_rebalances(profile: str) -> None:
    """Seed 004 §3: three times 准备再平衡→等待同步→稳定; consumers rebalance 3, 2 and 1 times."""
    world = run_scenario(BY_NAME["three-consumers-three-rebalances"], profile)
    start, end = (S, D) if profile == "0.10.0" else (E, E)
    mid = AS if profile == "0.10.0" else CR
    assert path(world) == [start, PR, mid, S, PR, mid, S, PR, mid, S, PR, end]
    extra = EXTRA_JOIN[profile]
    assert [sends(world, c, "JoinGroup") for c in range(3)] == [3 + extra, 2 + extra, 1 + extra]
    assert [len(responses(world, c, "SyncGroup", "NONE")) for c in range(3)] == [3, 2, 1]


@pytest.mark.parametrize("profile", BOTH)
def test_follower_missed_join_response(profile: str) -> None:
    """Seed 004, first list: the follower rejoins a Stable group and is answered at once."""
    world = run_scenario(BY_NAME["follower-missed-join-response"], profile)
    leader_sync = last_step_of(world, r"^c0 SyncGroup#\d+ NONE")
    answered = world.steps[leader_sync].response_lines
    # (5) only the two members with a parked SyncGroup are answered
    assert sorted(r.split("#")[0] for r in answered) == ["c0 SyncGroup", "c1 SyncGroup"]
    assert world.steps[leader_sync].group_state == S
    generation = world.steps[leader_sync].generation_id
    # (6)-(7) the rejoin in Stable is answered at once with the current generation, no state change
    rejoin = [st for st in world.steps if st.index > leader_sync and st.action.kind == "DeliverRequest"
              and any(r.startswith("c2 JoinGroup#") for r in st.response_lines)][0]
    assert rejoin.group_state == S and rejoin.generation_id == generation
    assert f" NONE gen={generation}" in rejoin.response_lines[0]
    # (8)-(9) its SyncGroup in Stable returns its assignment immediately
    last = responses(world, 2, "SyncGroup")[-1]
    assert " NONE assignment=" in last
    assert path(world)[-1] == S


@pytest.mark.parametrize("profile", BOTH)
def test_leader_missed_join_response(profile: str) -> None:
    """Seed 004, second list: the group stays AwaitingSync until the leader rejoins and syncs."""
    world = run_scenario(BY_NAME["leader-missed-join-response"], profile)
    mid = AS if profile == "0.10.0" else CR
    # (3) the followers' SyncGroups are parked: nobody answers them before the leader syncs
    leader_sync = step_of(world, r"^c0 SyncGroup#\d+ NONE")
    before = [r for st in world.steps[:leader_sync] for r in st.response_lines if " SyncGroup#" in r and "c0" not in r]
    assert [r for r in before if "NONE" in r] == []
    # (5) the leader's rejoin in AwaitingSync is answered at once, with the member list
    rejoin = next(st for st in world.steps if st.action.kind == "DeliverRequest"
                  and any(r.startswith("c0 JoinGroup#") for r in st.response_lines) and st.group_state == mid)
    assert "members=" in rejoin.response_lines[0]
    # (7) the leader's SyncGroup answers all three and the group becomes Stable
    answered = sorted(r.split("#")[0] for r in world.steps[leader_sync].response_lines)
    assert answered == ["c0 SyncGroup", "c1 SyncGroup", "c2 SyncGroup"]
    assert world.steps[leader_sync].group_state == S


@pytest.mark.parametrize("profile", BOTH)
def test_sync_group_in_preparing_rebalance(profile: str) -> None:
    """Seed 004 (同步组请求 first list): SyncGroup in PreparingRebalance answers REBALANCE_IN_PROGRESS."""
    world = run_scenario(BY_NAME["sync-in-preparing-rebalance"], profile)
    assert responses(world, 0, "SyncGroup") and "REBALANCE_IN_PROGRESS" in responses(world, 0, "SyncGroup")[0]
    # (5) consumer 1 rejoins; with both members joined the rebalance completes with generation 2
    assert world.steps[-1].generation_id == 2
    assert sorted(world.steps[-1].members) == sorted([member_of(world, 0), member_of(world, 1)])


@pytest.mark.parametrize("profile", BOTH)
def test_rebalance_timeout_is_the_maximum(profile: str) -> None:
    """Seed 000: sessions 10 s and 5 s → the delayed join waits 10 s (not 5 s) for c0 to rejoin."""
    scenario = BY_NAME["rebalance-timeout-is-max-session"]
    seen: dict[int, list[object]] = {}

    def watch(world: World) -> None:
        for op in world.coord.delayed_operations():
            if op.kind == "DelayedJoin":
                seen.setdefault(world.now_ms, []).append(op.deadline_ms)
    world = run_scenario(scenario, profile, on_step=watch)
    # created when c1 joined at t = 1 s: deadline 1 s + max(10 s, 5 s)
    assert seen[1000] == [11000]
    assert seen.get(11000) == [11000]            # still waiting at 11.000 s (strictly-earlier rule)
    expired = step_of(world, r"JoinGroup#\d+ NONE gen=2")
    assert world.steps[expired].time_ms == 11001
    # c0 did not rejoin in time: removed before any join response is sent; c1 leads generation 2
    assert world.steps[expired].members == (member_of(world, 1),)
    assert world.steps[expired].leader_id == member_of(world, 1)


def test_heartbeat_deadlines_5_6_8_on_0_10() -> None:
    """Seed 004 (1)-(3): join response at 0 s → deadline 5 s; SyncGroup at 1 s → 6 s; sync response at 3 s → 8 s."""
    world = run_scenario(BY_NAME["heartbeat-deadlines-5-6-8"], "0.10.0")
    c1 = member_of(world, 1)
    assert created_deadlines(world, c1) == [5000, 6000, 8000]
    # the 6 s op is completed at once by its own tryCompleteElseWatch because c1 now has a parked
    # SyncGroup (keep-alive): the seed's "a fresh op never completes" does not hold here (finding)
    assert any(e == f"DelayedHeartbeat {c1} completed at birth" for st in world.steps for e in st.event_lines)
    assert heartbeat_deadlines(world, c1) == [8000]


def test_heartbeat_deadlines_5_8_on_3_9() -> None:
    """3.9 does not reschedule on a parked SyncGroup (SPEC.md §4.6 callers): deadlines 5 s then 8 s."""
    world = run_scenario(BY_NAME["heartbeat-deadlines-5-6-8"], "3.9")
    c1 = member_of(world, 1)
    assert created_deadlines(world, c1)[-2:] == [5000, 8000]          # earlier: the 300 s new-member op (KAFKA-7610)
    assert heartbeat_deadlines(world, c1) == [8000]


@pytest.mark.parametrize("profile", BOTH)
def test_parked_sync_keeps_member_alive_past_deadline(profile: str) -> None:
    """Seed 004: C1/C2/C3 = 10/20/40 s; C1's SyncGroup at 10:00:03 keeps it alive past its deadline."""
    world = run_scenario(BY_NAME["heartbeat-deadlines-10-20-40"], profile)
    c3, c1, c2 = (member_of(world, i) for i in range(3))
    join_done = step_of(world, r"gen=2")
    created = {m: created_deadlines(world, m, join_done) for m in (c1, c2, c3)}
    assert created[c2][0] == 20000 and created[c3][0] == 40000
    # 0.10.0: C1's deadline 10:00:10, then 10:00:13 after its SyncGroup; 3.9 keeps 10:00:10 (§4.6)
    assert created[c1] == ([10000, 13000] if profile == "0.10.0" else [10000])
    assert world.now_ms == 15000 and c1 in world.steps[-1].members   # still alive: awaiting sync


@pytest.mark.parametrize("profile", BOTH)
def test_pending_join_keeps_member_alive_and_reschedules(profile: str) -> None:
    """Seed 004 (1)-(4): C1 survives 10:00:10 with its JoinGroup parked; at 10:00:15 deadlines 25/35/55."""
    world = run_scenario(BY_NAME["heartbeat-deadlines-pending-join"], profile)
    c1, c2, c3 = (member_of(world, i) for i in range(3))
    assert set(world.steps[-1].members) == {c1, c2, c3}
    assert world.steps[-1].generation_id == 3 and world.now_ms == 16000
    # 10:00:00 is t = 1 s: deadlines 10:00:25, 10:00:35, 10:00:55
    assert heartbeat_deadlines(world, c1) == [26000]
    assert heartbeat_deadlines(world, c2) == [36000]
    assert heartbeat_deadlines(world, c3) == [56000]


@pytest.mark.parametrize("profile", BOTH)
def test_silent_member_removed_at_its_deadline(profile: str) -> None:
    """Seed 004, last paragraph: C2 misses its deadline 10:00:20 and is removed; it gets no join response."""
    world = run_scenario(BY_NAME["heartbeat-expiry-removes-c2"], profile)
    c1, c2, c3 = (member_of(world, i) for i in range(3))
    removed = step_of(world, rf"member {c2} failed")
    assert world.steps[removed].time_ms == 21001          # the clock passed 10:00:20 (t = 21 s)
    assert c2 not in world.steps[removed].members
    # the join completes with C1 and C3 only, in the same step
    assert set(world.steps[removed].members) == {c1, c3}
    assert world.steps[removed].generation_id == 3
    late = [r for st in world.steps[removed:] for r in st.response_lines if r.startswith("c1 JoinGroup#")]
    assert late == []


def test_same_millisecond_reschedule_leaves_a_stale_op_on_0_10() -> None:
    """0.10.0 finding: two reschedules in one millisecond leave two ops (strict '>' in SPEC.md §2);
    the stale one later removes an already-removed member and restarts a finished rebalance."""
    world = run_scenario(BY_NAME["same-millisecond-reschedule"], "0.10.0")
    assert path(world)[-4:] == [S, PR, AS, PR]
    assert world.steps[-1].generation_id == 3

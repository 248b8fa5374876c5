"""The map sweep (explore/sweep.py) and its puppet clients (harness/puppets.py)."""
from __future__ import annotations

import json

import pytest

from core.actions import Action
from explore.coverage import scope_edges, source_timings
from explore.runs import Runs
from explore.sweep import parse_label, sweep
from harness.external import WireRequest
from harness.puppets import KINDS, moves, owner, probes, retimings, timing, variations
from harness.replay import replay
from harness.world import World
from kgc.directed import Coverage, _state, fork, profile_map, run_edges, swept
from kgc.gate import PUPPET_KINDS, WALK_KINDS, WALK_SCOPES
from kgc.runs import CheckedRun

CHURN, CALM = WALK_SCOPES["churn"], WALK_SCOPES["calm"]


def _runs(profile: str, scopes: list[object], mutant: str | None = None) -> Runs[CheckedRun]:
    def start(scope: object) -> object:
        return lambda: CheckedRun(World(profile, scope, clients=KINDS, seed=0, record=True, mutant=mutant))
    return Runs(starts=[start(s) for s in scopes], fork=fork, enabled=lambda r: r.world.enabled(), state=_state,
                edges=run_edges, failed=lambda r: bool(r.violations), world=lambda r: r.world)


def _wire(action: Action) -> WireRequest:
    assert action.kind == "Receive"
    return WireRequest.from_payload(str(action.arg))


def test_labels_parse_into_kind_acting_slot_and_outcome() -> None:
    assert parse_label("JoinGroup/known(MLw)") == ("JoinGroup/known", "MLw", "")
    assert parse_label("CompleteAppend[error]") == ("CompleteAppend", "", "error")
    assert parse_label("ExpireHeartbeat(-ww)") == ("ExpireHeartbeat", "-ww", "")
    assert parse_label("ExpireJoin") == ("ExpireJoin", "", "")


@pytest.mark.parametrize("profile,rebalance_field,known_id", [("0.10.0", False, False), ("3.9", True, True)])
def test_puppet_joins_speak_the_join_group_version_of_the_profiles_clients(profile: str, rebalance_field: bool,
                                                                          known_id: bool) -> None:
    world = World(profile, CHURN, clients=KINDS, record=True)
    kind = "JoinGroup/new-pending" if known_id else "JoinGroup/new"
    joins = [_wire(seq[-1]) for seq in moves(world, kind, "-", "")]
    assert joins and all(j.member_id == "" and j.group_instance_id is None for j in joins)
    assert all(j.require_known_member_id is known_id for j in joins)
    # JoinGroup v0 has no rebalance timeout: the coordinator takes the session timeout (a puppet must not differ)
    assert any(j.rebalance_timeout_ms != j.session_timeout_ms for j in joins) is rebalance_field
    # a first join carries the client's own protocol metadata (a subscription change is JoinGroup/changed's)
    assert all(j.protocols == (("range", j.client_id.encode()),) for j in joins)
    assert {j.client_id for j in joins} == {"c0", "c1", "c2"}


def test_candidates_name_the_members_of_the_acting_slot_and_take_one_step_each() -> None:
    world = World("3.9", CHURN, clients=KINDS, record=True)
    run = CheckedRun(world)
    for seq in (moves(world, "JoinGroup/new-pending", "-", "")[0], ):
        for action in seq:
            run.step(action)
    pending = _wire(moves(world, "JoinGroup/known", "Pw", "")[0][-1])
    assert pending.member_id.startswith("c0-") and owner(pending.member_id) == 0
    assert moves(world, "JoinGroup/known", "MLw", "") == []          # no member of that value yet
    for seq in moves(world, "JoinGroup/known", "Pw", ""):
        # a Receive's correlation id is the number of the step it will be: unique along the run
        assert all(_wire(a).corr == len(world.steps) + 1 + i for i, a in enumerate(seq) if a.kind == "Receive")
    assert [a.kind for seq in variations(world) for a in seq] == ["AdvanceClock"]   # no member to heartbeat yet


def test_calm_candidates_send_no_leave_and_faults_alone_fail_appends() -> None:
    assert moves(World("3.9", CALM, clients=KINDS, record=True), "LeaveGroup", "Mw", "") == []
    faults = World("3.9", WALK_SCOPES["faults"], clients=KINDS, record=True)
    assert [seq[0].arg for seq in moves(faults, "CompleteAppend", "", "error")] == [
        "NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"]


def test_the_sweep_covers_a_scope_map_and_is_deterministic() -> None:
    edges = scope_edges("3.9", CHURN, PUPPET_KINDS)
    first, second = (sweep(_runs("3.9", [CHURN]), [edges], set(), 9000, 0) for _ in range(2))
    assert first.failed is None and first.edges == second.edges and first.steps == second.steps
    covered = first.edges & edges
    assert len(covered) >= 0.95 * len(edges), (len(covered), len(edges))
    # what it went for and never realised is reported apart, and never includes what it covered
    assert not (first.tried & first.edges)


def test_the_sweep_stays_inside_the_map_of_the_clients_it_stands_for() -> None:
    """Puppets send what an adversarial client may: nothing the coverage map calls not offered (a JoinGroup with
    changed metadata, a 3.x first join without a known member id, a LeaveGroup in a scope without leaves)."""
    cmap = profile_map("3.9", WALK_SCOPES, WALK_KINDS)
    cov = Coverage(set(), set())
    found = swept("3.9", [CALM], PUPPET_KINDS, cmap, cov, 4000, 0)
    assert found.failed is None and found.edges
    kinds = {parse_label(e[1])[0] for e in found.edges}
    assert not kinds & {"JoinGroup/changed", "JoinGroup/new", "LeaveGroup"}
    assert not found.edges & set(cmap.excluded)      # (a leader's third SyncGroup may pile appends beyond the map)


def test_a_violation_is_returned_with_its_run_and_its_trace_replays() -> None:
    """prepare-keeps-parked-syncs leaves a SyncGroup parked when a rebalance starts: it takes a SyncGroup parked
    in CompletingRebalance and then a rejoin (the gate's walks needed 47 s for it on 3.9; the sweep a few hundred
    steps)."""
    edges = scope_edges("3.9", CHURN, PUPPET_KINDS)
    found = sweep(_runs("3.9", [CHURN], mutant="prepare-keeps-parked-syncs"), [edges], set(), 5000, 0)
    assert found.failed is not None and found.steps < 2000
    result = found.failed.result("sweep", ("parked-sync-only-in-completing-rebalance",))
    assert result is not None and result.violation.property == "parked-sync-only-in-completing-rebalance"
    trace = result.trace
    assert trace.scope["clients"] == list(KINDS) and any(s.action.kind == "Receive" for s in trace.steps)
    json.dumps(trace.to_json())
    replay(trace)    # puppet steps are Receive actions with their whole request: the trace re-executes bit for bit


def test_every_reached_state_is_probed_with_the_answers_no_edge_asks_for() -> None:
    """commit-in-completing-rebalance-accepted answers a commit in CompletingRebalance with NONE: the answer
    changes no state, so no edge of the map is that request; the probes send it from every state reached."""
    edges = scope_edges("3.9", CHURN, PUPPET_KINDS)
    found = sweep(_runs("3.9", [CHURN], mutant="commit-in-completing-rebalance-accepted"), [edges], set(), 3000, 0)
    assert found.failed is not None and found.steps < 500
    named = "commit-in-completing-rebalance-answers-rebalance-in-progress"
    assert any(v.property == named for v in found.failed.violations)


def test_probes_ask_each_slot_value_for_each_answer() -> None:
    world = World("3.9", CHURN, clients=KINDS, record=True)
    run = CheckedRun(world)
    assert [(_wire(s[0]).api, _wire(s[0]).member_id) for s in probes(world)] == [
        ("Heartbeat", "c0-999999"), ("JoinGroup", "")]            # no group yet: an unknown member, a bad session
    assert _wire(probes(world)[1][0]).session_timeout_ms < world.coord.config.group_min_session_timeout_ms
    for kind, acting in (("JoinGroup/new-pending", "-"), ("JoinGroup/known", "Pw")):
        for action in moves(world, kind, acting, "")[0]:
            run.step(action)
    sent = [(_wire(s[0]).api, _wire(s[0]).member_id, _wire(s[0]).generation_id) for s in probes(world)[2:]]
    member = sent[0][1]
    gen = world.coord.describe(world.group_id).generation_id
    assert sent == [("Heartbeat", member, gen), ("Heartbeat", member, gen - 1), ("SyncGroup", member, gen),
                    ("OffsetCommit", member, gen), ("JoinGroup", member, -1)]


def test_a_puppet_runs_timing_reads_as_the_timed_graph_counts_it() -> None:
    """harness.puppets.timing and explore.deadlines.timing name the same thing: a first member joins and syncs, and a
    heartbeat in that millisecond piles a second live op onto the one the store callback armed (0.10, §4.6); the run's
    timing is one the timed graph takes edges from, and a clock tick moves its ops from "this millisecond" (0) to
    "later" (1). Profiles where time rules nothing out give the sweep no timings."""
    run = CheckedRun(World("0.10.0", CHURN, clients=KINDS, record=True))
    world = run.world
    for kind, acting in (("JoinGroup/new", "-"), ("SyncGroup", "MLw"), ("Heartbeat", "MLw")):
        assert any(_take(run, seq) for seq in moves(world, kind, acting, "") if len(seq) == 1), (kind, _state(run))
    assert _state(run).short().endswith("slots=[MLww]")
    fits = source_timings("0.10.0", CHURN, PUPPET_KINDS)
    here = {t for e, ts in fits.items() if e[0] == _state(run) for t in ts}
    assert timing(world) == ((("MLww", 0),), -1) and timing(world) in here
    run.step(Action("AdvanceClock", -1, 1))
    assert timing(world) == ((("MLww", 1),), -1) and timing(world) in here
    assert source_timings("3.9", CHURN, PUPPET_KINDS) == {}


def _take(run: CheckedRun, sequence: tuple[Action, ...]) -> bool:
    """Step ``run`` through ``sequence`` if a fork of it records a new edge that way (else leave it as it was)."""
    twin = fork(run)
    for action in sequence:
        twin.step(action)
    if not run_edges(twin) - run_edges(run):
        return False
    for action in sequence:
        run.step(action)
    return True


def test_retimings_come_back_to_the_state_in_the_timing_they_guess() -> None:
    """harness.puppets.retimings: from [MLww] with its ops armed earlier, two heartbeats in one millisecond arm both
    anew (0), and a clock move just past the deadline leaves them due (2) — each prefix that comes back to the same
    abstract state leaves the timing it guessed."""
    run = CheckedRun(World("0.10.0", CHURN, clients=KINDS, record=True))
    for kind, acting in (("JoinGroup/new", "-"), ("SyncGroup", "MLw"), ("Heartbeat", "MLw")):
        assert any(_take(run, seq) for seq in moves(run.world, kind, acting, "") if len(seq) == 1)
    run.step(Action("AdvanceClock", -1, 1))
    state = _state(run)
    assert timing(run.world) == ((("MLww", 1),), -1)
    realised = set()
    for guess, prefix in retimings(run.world):
        twin = fork(run)
        for action in prefix:
            twin.step(action)
        if _state(twin) == state:
            assert timing(twin.world) == guess, prefix
            realised.add(guess)
    assert {((("MLww", 0),), -1), ((("MLww", 2),), -1)} <= realised

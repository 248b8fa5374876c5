"""2.4.1's timed quotient graph (explore/new_member_timing.py): a new member's 5-minute op stamped with the millisecond
it was armed in, what it rules out of the coverage map, and that no run of the world takes what it rules out."""
from __future__ import annotations

import random

import pytest

from explore.coverage import source_timings, timed_map
from explore.new_member_timing import REASON, applies, seen
from explore.runs import parse_label
from explore.timedmap import TICK
from harness.puppets import KINDS, moves, ticks, timing
from harness.world import World
from kgc.directed import _state, profile_map, run_edges
from kgc.gate import PUPPET_KINDS, WALK_KINDS, WALK_SCOPES
from kgc.runs import CheckedRun
from tests.test_coverage import _key, _walks_then_directed

CALM = WALK_SCOPES["calm"]
PREP = "PreparingRebalance join=join sync=0 appends=[] slots="
DONE = "CompletingRebalance join=none sync=0 appends=[] slots="


def test_the_member_whose_join_completes_the_rebalance_keeps_its_five_minute_op() -> None:
    """A pending id's JoinGroup adds it (its 5-minute op armed now) and completes the join in the same request
    (GroupCoordinator.scala@2.4.1 L174-177): onCompleteJoin's reschedule falls in the op's own millisecond, so the op is
    kept (latestHeartbeat + 5 min is not above its deadline, MemberMetadata.scala@2.4.1 L88-91). The model also offers
    the outcome where it completed; the map rules those out whatever the leader did, and keeps the outcomes where the
    joiner keeps its op, the leader's either way."""
    cmap = profile_map("2.4.1", {"calm": CALM}, WALK_KINDS)
    source, label = PREP + "[MLJNw MJN Pw]", "JoinGroup/known(Pw)"
    for after in ("[ML M M]", "[MLw M M]"):
        assert cmap.excluded[_key(cmap.excluded, source, label, DONE + after)] == REASON
    for after in ("[ML Mw M]", "[MLw Mw M]"):
        assert _key(cmap.reachable_edges, source, label, DONE + after) in cmap.reachable_edges


def test_the_timed_walk_says_which_timing_an_edge_needs_and_rules_out_nothing_beyond_the_local_fact() -> None:
    """Source timings (the sweep's planning): the completion above in which the leader loses its op is taken only
    where the leader's op was armed earlier (1, or due: 2). The one in which the leader keeps it while the other new
    member has none needs that member's op completed by a heartbeat after the leader was added — within three slots
    no run does that, but a fourth member id makes it possible (a client joining again under a new id), so it stays in
    the map with no timing (explore/new_member_timing.py); and nothing else is left out for the new members' op
    times."""
    cmap = profile_map("2.4.1", {"calm": CALM}, WALK_KINDS)
    fits = source_timings("2.4.1", CALM, PUPPET_KINDS)
    source, label = PREP + "[MLJNw MJN Pw]", "JoinGroup/known(Pw)"
    timings = fits[_key(cmap.reachable_edges, source, label, DONE + "[ML Mw M]")]
    assert timings and all(dict(slots)["MLJNw"] in (1, 2) for slots, _ in timings)     # armed earlier (or due)
    beyond = _key(cmap.reachable_edges, source, label, DONE + "[MLw Mw M]")
    assert beyond in cmap.reachable_edges and beyond not in fits
    assert all(label.startswith("JoinGroup") for (_, label, _), why in cmap.excluded.items() if why == REASON)


def test_the_new_member_timing_holds_only_for_2_4_deadline_arithmetic() -> None:
    assert applies("2.4.1")
    assert not any(applies(p) for p in ("0.10.0", "2.7.0", "3.9"))
    cmap = profile_map("2.7.0", {"calm": CALM}, WALK_KINDS)
    assert REASON not in cmap.excluded.values()


def test_every_step_of_a_puppet_run_is_a_move_of_the_projected_map() -> None:
    """The timed graph over-approximates the world: walked at random along the projected map's moves (every candidate
    of each move, clock moves included), each concrete step leaves the run on a node of the map — its abstract state
    and its new members' op times, read from the world (harness.puppets.timing) — that a move of the map leads to, or
    where it was. Faults scope: failed stores, unloads and loads too."""
    faults = WALK_SCOPES["faults"]
    tmap = timed_map("2.4.1", faults, PUPPET_KINDS)
    assert tmap is not None and tmap.project is seen
    rng = random.Random(11)
    kept_now = 0
    for _walk in range(8):
        run = CheckedRun(World("2.4.1", faults, clients=KINDS, record=True))
        here = tmap.index[(_state(run), seen(timing(run.world)))]
        for _ in range(60):
            options = list(tmap.succ[here])
            rng.shuffle(options)
            for label, _there in options:
                world = run.world
                candidates = ticks(world) if label == TICK else moves(world, *parse_label(label))
                if candidates:
                    break
            else:
                break
            for action in rng.choice(candidates):
                assert run.step(action) == [] and not run.over, action
                proj = (_state(run), seen(timing(run.world)))
                assert proj in tmap.index, proj
                there = tmap.index[proj]
                assert there == here or there in {t for _, t in tmap.succ[here]}, (tmap.succ[here], proj)
                here = there
                kept_now += any(where == 0 for _, where in proj[1][0])
    assert kept_now       # a walk that never held an op armed in its millisecond would not test the stamp


def test_a_pending_member_whose_join_completes_the_rebalance_holds_its_op_after_the_answer() -> None:
    """The local fact on the reference (impl/, through a puppet world on the calm scope, no initial delay): a pending
    id's JoinGroup into an Empty group adds it and completes the join at once, and it comes out of the completion as the
    leader holding one live op — the 5-minute one armed by that request (its deadline 5 minutes after it) — so the
    edge to "[ML]" that the map leaves out is not the one taken."""
    run = CheckedRun(World("2.4.1", CALM, clients=KINDS, record=True))
    for kind, acting in (("JoinGroup/new-pending", "-"), ("JoinGroup/known", "Pw")):
        sequence = next(seq for seq in moves(run.world, kind, acting, "") if len(seq) == 1)
        assert run.step(sequence[0]) == []
    taken = {(b.short(), label, a.short()) for b, label, a in run_edges(run)}
    assert ("Empty gen0 join=none sync=0 appends=[] slots=[Pw]", "JoinGroup/known(Pw)", DONE + "[MLw]") in taken
    cmap = profile_map("2.4.1", {"calm": CALM}, WALK_KINDS)
    assert cmap.excluded[_key(cmap.excluded, "Empty gen0 join=none sync=0 appends=[] slots=[Pw]",
                              "JoinGroup/known(Pw)", DONE + "[ML]")] == REASON
    coord = run.world.coord
    (op,) = [o for o in coord.timer.entries.values() if getattr(o, "member_id", None)]
    assert op.deadline_ms - coord.now_ms == 5 * 60 * 1000


@pytest.mark.slow      # ≈45 s on a quiet machine: the walks and the sweep of a small gate on 2.4.1
def test_no_edge_a_checked_run_took_is_one_the_new_member_timing_rules_out() -> None:
    """Soundness on real runs: walks and the sweep on 2.4.1 never record an edge the denominator leaves out for the
    new members' op times — and it leaves some out (the exclusion is not vacuous)."""
    cmap = profile_map("2.4.1", WALK_SCOPES, WALK_KINDS)
    untimed = {e for e, why in cmap.excluded.items() if why == REASON}
    assert len(untimed) >= 100
    _, both = _walks_then_directed("2.4.1", 0)
    assert not both.edges & untimed

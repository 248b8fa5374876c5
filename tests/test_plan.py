"""Timed planning (explore/plan.py, explore/timedmap.py): the timed graph projected on what a run shows, distances to
targets, and the sweep's best-first descents toward the timings uncovered edges are taken from."""
from __future__ import annotations

from core.actions import Action
from explore.coverage import scope_edges, source_timings, timed_map
from explore.runs import parse_label
from explore.sweep import sweep
from explore.timedmap import TICK, TimedMapBuilder, target_table, targets
from harness.puppets import KINDS, moves, ticks, timing
from harness.world import World
from kgc.directed import _state, fork, profile_map
from kgc.gate import PUPPET_KINDS, WALK_KINDS, WALK_SCOPES, Plan, directed_steps
from kgc.runs import CheckedRun
from model.state import State
from tests.test_sweep import _runs, _take

CHURN = WALK_SCOPES["churn"]


def _proj(name: str) -> tuple[State, tuple[tuple[tuple[str, int], ...], int]]:
    return State(), (((name, 0),), -1)     # distinct timings stand for distinct nodes


def test_distances_count_moves_to_the_nearest_target_and_leave_out_what_reaches_none() -> None:
    """a → b → c → t, a → t2, d → a, e alone (no move): with targets {t, t2}, a is 1 away (by t2), b 2, c 1, d 2,
    e and every node only entered from e reach none (-1); targets are 0."""
    b = TimedMapBuilder()
    ids = {n: b.node(_proj(n)) for n in "abcdet"}
    ids["t2"] = b.node(_proj("t2"))
    for here, there in (("a", "b"), ("b", "c"), ("c", "t"), ("a", "t2"), ("d", "a"), ("b", "b")):
        b.move(ids[here], "X", ids[there])
    tmap = b.done()
    dist = tmap.distances([ids["t"], ids["t2"]])
    assert {n: dist[i] for n, i in ids.items()} == {"a": 1, "b": 2, "c": 1, "d": 2, "e": -1, "t": 0, "t2": 0}
    assert tmap.succ[ids["b"]] == (("X", ids["c"]),)      # a stutter is no move
    assert tmap.distances([]) == [-1] * len(ids)


def test_targets_are_the_uncovered_edges_sources_in_the_timings_they_are_taken_from_until_spent() -> None:
    tmap = timed_map("0.10.0", CHURN, PUPPET_KINDS)
    fits = source_timings("0.10.0", CHURN, PUPPET_KINDS)
    assert tmap is not None and fits
    out: dict[State, list[tuple[State, str, State]]] = {}
    for edge in sorted(fits, key=lambda e: (e[0].short(), e[1], e[2].short())):
        out.setdefault(edge[0], []).append(edge)
    table = target_table(tmap, out, fits)
    edge, nodes = table[0]
    everything = targets(table, set(), {}, 1)
    assert {n for _, n in nodes} <= set(everything)
    assert targets(table, {edge}, {}, 1) == targets(table[1:], set(), {}, 1)
    spent = {edge: {t: 1 for t, _ in nodes}}
    assert len(targets(table, set(), spent, 1)) == len(everything) - len(nodes)


def test_the_projected_map_has_every_timed_edge_from_each_timing_it_is_taken_from() -> None:
    """The map the descents plan on and the coverage map's timed edges come from one walk: each reachable edge of the
    scope is a move of the projected map from its source in every timing the coverage map says it is taken from, and
    a tick never changes the abstract state. 3.9 has no timed graph (time rules nothing out)."""
    tmap = timed_map("0.10.0", CHURN, PUPPET_KINDS)
    fits = source_timings("0.10.0", CHURN, PUPPET_KINDS)
    assert tmap is not None
    projs = {i: p for p, i in tmap.index.items()}
    moves_of = {p: {(label, projs[there][0]) for label, there in tmap.succ[i]} for p, i in tmap.index.items()}
    for (before, label, after), timings in fits.items():
        for t in timings:
            assert (label, after) in moves_of[(before, t)], (before.short(), label, after.short(), t)
    assert all(projs[there][0] == p[0] for p, i in tmap.index.items() for label, there in tmap.succ[i]
               if label == TICK)
    assert timed_map("3.9", CHURN, PUPPET_KINDS) is None


def test_a_tick_moves_the_clock_just_past_each_deadline_and_only_while_nothing_is_due() -> None:
    run = CheckedRun(World("0.10.0", CHURN, clients=KINDS, record=True))
    for kind, acting in (("JoinGroup/new", "-"), ("SyncGroup", "MLw")):
        assert any(_take(run, seq) for seq in moves(run.world, kind, acting, "") if len(seq) == 1)
    world = run.world
    deadlines = sorted({op.deadline_ms for op in world.coord.timer.entries.values()})
    got = [seq[0].arg for seq in ticks(world)]
    assert got == sorted({1} | {d + 1 - world.coord.now_ms for d in deadlines})
    run.step(Action("AdvanceClock", -1, max(got)))
    assert world.coord.due_timers() and ticks(world) == []
    assert timing(world)[0] == (("MLw", 2),)


def test_planning_reaches_edges_the_sweep_alone_does_not_in_the_same_steps() -> None:
    """On 0.10.0's churn map, 4,000 steps: the sweep that also plans in the timed graph covers at least a fifth more
    edges than the sweep alone (measured 1,243 against 900 of 1,915), is deterministic, and still takes no edge the
    coverage map excludes (every step checked, refinement labelled)."""
    edges = scope_edges("0.10.0", CHURN, PUPPET_KINDS)
    fits = source_timings("0.10.0", CHURN, PUPPET_KINDS)
    plan = timed_map("0.10.0", CHURN, PUPPET_KINDS)
    alone = sweep(_runs("0.10.0", [CHURN]), [edges], set(), 4000, 0, timings=[fits])
    planned, again = (sweep(_runs("0.10.0", [CHURN]), [edges], set(), 4000, 0, timings=[fits], plans=[plan])
                      for _ in range(2))
    assert alone.failed is None and planned.failed is None
    assert len(planned.edges & edges) >= 1.2 * len(alone.edges & edges), (len(planned.edges), len(alone.edges))
    assert planned.edges == again.edges and planned.steps == again.steps
    assert not planned.edges & set(profile_map("0.10.0", WALK_SCOPES, WALK_KINDS).excluded)


def test_a_third_op_in_the_same_millisecond_keeps_the_slot_many_after_one_expires() -> None:
    """A member holding two ops armed this millisecond gets a third from one more heartbeat there — the same abstract
    state (MANY counts to two), a timing that shows the third op, and a move of the projected map — and only then does
    an expiry of one op leave the slot MANY (here the group's last member: the ops left behind are counted). The timed
    graph takes such an expiry only from a timing with three ops (0.10, SPEC.md §4.6)."""
    run = CheckedRun(World("0.10.0", CHURN, clients=KINDS, record=True))
    for kind, acting in (("JoinGroup/new", "-"), ("SyncGroup", "MLw"), ("Heartbeat", "MLw")):
        assert any(_take(run, seq) for seq in moves(run.world, kind, acting, "") if len(seq) == 1)
    tmap = timed_map("0.10.0", CHURN, PUPPET_KINDS)
    assert tmap is not None
    two = tmap.index[(_state(run), timing(run.world))]
    three = fork(run)
    for action in moves(three.world, "Heartbeat", "MLww", "")[0]:
        assert three.step(action) == []
    assert _state(three) == _state(run) and timing(run.world) == ((("MLww", 0),), -1)
    assert timing(three.world) == ((("MLwww", 0),), -1)       # the timing counts a third op
    assert ("Heartbeat(MLww)", tmap.index[(_state(three), timing(three.world))]) in tmap.succ[two]
    ops = [op for op in three.world.coord.timer.entries.values() if type(op).__name__ == "DelayedHeartbeat"]
    assert len(ops) == 3
    left = {}
    for name, r in (("two", run), ("three", three)):
        r.step(ticks(r.world)[-1][0])      # just past the ops' deadline
        r.step(Action("FireTimer", -1, min(t.seq for t in r.world.coord.due_timers())))
        left[name] = sum(type(op).__name__ == "DelayedHeartbeat" for op in r.world.coord.timer.entries.values())
    assert left == {"two": 1, "three": 2}      # the removed member's slot: -w, or -ww (MANY)
    fits = source_timings("0.10.0", CHURN, PUPPET_KINDS)
    def removed_many(s: State) -> int:
        return sum(slot.short() == "-ww" for slot in s.slots)
    many = [ts for (before, label, after), ts in fits.items()
            if label == "ExpireHeartbeat(MLww)" and removed_many(after) == removed_many(before) + 1]
    assert many and all(("MLwww", 2) in t[0] for ts in many for t in ts)


def test_every_step_of_a_run_is_a_move_of_the_projected_map() -> None:
    """The timed graph over-approximates the world (explore/deadlines.py): walked at random along the projected map's
    moves (every candidate of each move, clock moves included), each concrete step leaves the run on a node of the
    map — three ops or more counted — and one a move of the map leads to, or where it was. Faults scope: failed
    stores, unloads and loads too."""
    import random
    faults = WALK_SCOPES["faults"]
    tmap = timed_map("0.10.0", faults, PUPPET_KINDS)
    assert tmap is not None
    rng = random.Random(7)
    seen_three = 0
    for _walk in range(6):
        run = CheckedRun(World("0.10.0", faults, clients=KINDS, record=True))
        here = tmap.index[(_state(run), timing(run.world))]
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
                proj = (_state(run), timing(run.world))
                assert proj in tmap.index, proj
                there = tmap.index[proj]
                assert there == here or there in {t for _, t in tmap.succ[here]}, (tmap.succ[here], proj)
                here = there
                seen_three += any(value.endswith("www") for value, _ in proj[1][0])
    assert seen_three       # a walk that never held three ops would not test their count


def test_the_directed_sweep_gets_three_times_the_steps_where_a_new_members_op_time_decides_edges() -> None:
    """At the all-profiles gate's share (75 s: 40,000 sweep steps) 2.4.1 (KAFKA-9232's same-millisecond rule) sweeps
    120,000 steps, 0.10.0 (deadline arithmetic) 80,000, 2.7.0 and 3.9 (time rules nothing out) 40,000; a profile run
    alone at 150 s stops at 120,000 where time decides, and a plan of more steps than that keeps its own."""
    gate, alone, big = Plan.for_budget(75), Plan.for_budget(150), Plan.for_budget(600)
    assert gate.sweep_steps == 40000 and alone.sweep_steps == 80000 and big.sweep_steps == 320000
    assert {p: directed_steps(p, gate) for p in ("0.10.0", "2.4.1", "2.7.0", "3.9")} == \
        {"0.10.0": 80000, "2.4.1": 120000, "2.7.0": 40000, "3.9": 40000}
    assert directed_steps("2.4.1", alone) == directed_steps("0.10.0", alone) == 120000
    assert directed_steps("2.4.1", big) == directed_steps("3.9", big) == 320000


def test_a_timing_stays_a_target_until_tried_twice_where_a_new_members_op_time_decides_edges() -> None:
    """2.4.1's timed map (new members' op times) keeps a (source, timing) a planning target until an edge was tried
    there twice, 0.10.0's once; the planning's distances count it so: after one try of an edge in its timing, the
    2.4.1 source is still 0 away, the 0.10.0 source no longer is (unless another edge keeps it)."""
    for profile, spend in (("2.4.1", 2), ("0.10.0", 1)):
        tmap = timed_map(profile, CHURN, PUPPET_KINDS)
        fits = source_timings(profile, CHURN, PUPPET_KINDS)
        assert tmap is not None and tmap.spend == spend, profile
        out: dict[State, list[tuple[State, str, State]]] = {}
        for edge in sorted(fits, key=lambda e: (e[0].short(), e[1], e[2].short())):
            out.setdefault(edge[0], []).append(edge)
        table = target_table(tmap, out, fits)
        alone = [(e, n) for e, n in table if len(n) == 1 and
                 sum(n[0][1] in {m for _, m in o} for _, o in table) == 1]
        assert alone, profile
        edge, ((sign, node),) = alone[0]
        once = {edge: {sign: 1}}
        assert (node in targets(table, set(), once, tmap.spend)) == (spend == 2), profile
        assert node not in targets(table, set(), {edge: {sign: 2}}, tmap.spend)

"""A static member's restart with another assignor list, in a Stable group of the Java runtime (profile 4.1): the
state refinement must know the model's ``changed`` cell of JoinGroup/static-rejoin (issue 25: seed 1's
static-partition walk, seed 100005, step 66, failed refines-the-abstract-model there). GMM@4.1.1:7206-7212 and
7268-7274 rebalance when the selected protocol changes; prepareRebalance completes the join at once when every member
has joined (GMM@4.1.1:6900, 6914-6916): Stable -> CompletingRebalance in one request."""
from __future__ import annotations

from core.actions import Action
from harness.refinement_4x import StateRefinement4x, model_path
from harness.scope import Scope as WorldScope
from harness.world import World
from model.state import COMPLETING, FREE, MEMBER, NO_JOIN, STABLE, AbstractAction, Scope, Slot, State
from model.step import JOIN_KINDS, successors

#: the shrunk trace of `bin/kgc check --profile 4.1 --seed 1 --unexcuse` of the finding
#: reverted-group-join-timer-fires-on-its-successor, whose walk (static-partition, seed 100005) restarts client 0
#: with another assignor list at its last step
SCOPE = WorldScope.from_json({
    "advance_ms": [1000, 5000], "append_mode": "deferred", "assignor_upgrades": True, "commits": True,
    "crashes": True, "faults": True, "group_id": "g", "group_initial_rebalance_delay_ms": None,
    "group_max_session_timeout_ms": None, "group_max_size": None, "group_min_session_timeout_ms": None,
    "heartbeat_interval_ms": 3000, "leaves": True, "max_time_ms": None, "rebalance_timeout_ms": [6000, 6000, 6000],
    "rejoins": True, "session_timeout_ms": [20000, 20000, 20000], "timed": False, "unload": True})
CLIENTS = ["static", "static-adversarial", "static"]
SEED = 100005
TRACE = (
    ('JoinGroup', 0, 0), ('JoinGroup', 2, 0), ('DeliverRequest', 0, 1), ('AdvanceToNextDeadline', -1, 0),
    ('FlushBatch', -1, 'NONE'), ('CommitBatch', -1, 0), ('DeliverRequest', 2, 1), ('FireTimer', -1, 3),
    ('AdvanceToNextDeadline', -1, 0), ('FireTimer', -1, 9), ('AdvanceClock', -1, 1000), ('AdvanceClock', -1, 5000),
    ('DeliverResponse', 0, 1), ('SyncGroup', 0, 0), ('DeliverRequest', 0, 2),
    ('FlushBatch', -1, 'NOT_LEADER_OR_FOLLOWER'), ('FireTimer', -1, 13), ('DeliverResponse', 2, 1),
    ('DeliverResponse', 0, 2), ('Heartbeat', 2, 0), ('DeliverRequest', 2, 2), ('AdvanceClock', -1, 1000),
    ('AdvanceClock', -1, 5000), ('FireTimer', -1, 18), ('AdvanceClock', -1, 5000), ('AdvanceClock', -1, 5000),
    ('JoinGroup', 0, 0), ('DeliverRequest', 0, 3), ('FireTimer', -1, 21), ('DeliverResponse', 0, 3),
    ('SyncGroup', 0, 0), ('AdvanceToNextDeadline', -1, 0), ('DeliverRequest', 0, 4),
    ('FlushBatch', -1, 'NOT_ENOUGH_REPLICAS'), ('DeliverResponse', 0, 4), ('JoinGroup', 0, 0), ('FireTimer', -1, 26),
    ('AdvanceToNextDeadline', -1, 0), ('FireTimer', -1, 31), ('DeliverRequest', 0, 5),
    ('AdvanceToNextDeadline', -1, 0), ('FireTimer', -1, 32), ('DeliverResponse', 0, 5),
    ('AdvanceToNextDeadline', -1, 0), ('SyncGroup', 0, 0), ('DeliverRequest', 0, 6), ('FlushBatch', -1, 'NONE'),
    ('FireTimer', -1, 37), ('DeliverResponse', 0, 6), ('JoinGroup', 0, 0), ('CommitBatch', -1, 0),
    ('DeliverRequest', 0, 7), ('DeliverResponse', 0, 7), ('SyncGroup', 0, 0), ('DeliverRequest', 0, 8),
    ('FlushBatch', -1, 'NONE'), ('CommitBatch', -1, 0), ('UnloadGroup', -1, 0), ('LoadGroup', -1, 0),
    ('LoadGroup', -1, 0), ('Crash', 0, 0), ('UnloadGroup', -1, 0), ('Restart', 0, 1), ('JoinGroup', 0, 0),
    ('LoadGroup', -1, 0), ('LoadGroup', -1, 0), ('DeliverRequest', 0, 9),
)
#: before and after the restart (step 66): the static leader alone; after, the new id owes its SyncGroup and the old
#: id's heartbeat task (keyed by that id) is still scheduled
BEFORE = State(STABLE, NO_JOIN, False, (), False, False, (Slot(MEMBER, leader=True, watch=1, static=True), FREE, FREE))
AFTER = State(COMPLETING, NO_JOIN, True, (), False, False,
              (Slot(MEMBER, leader=True, pending_sync=True, watch=1, static=True), Slot(watch=1), FREE))
MODEL_SCOPE = Scope(members=3, max_appends=1 << 30, unload=True, static=True)


def test_the_shrunk_trace_refines_and_its_restart_is_the_changed_cell() -> None:
    world = World("4.1", SCOPE, clients=CLIENTS, seed=SEED, record=True)
    refinement = StateRefinement4x(world)
    last = None
    for n, (kind, client, arg) in enumerate(TRACE):
        action = Action(kind, client, arg)
        assert world.is_enabled(action), (n, action)
        last = refinement.step(action)
        assert last.path is not None, (n, action, last.before.short(), last.after.short())
    assert last is not None and last.before.canonical() == BEFORE.canonical()
    assert last.after.canonical() == AFTER.canonical()
    assert last.path == (AbstractAction("JoinGroup/static-rejoin", 0, "changed"),)


def test_the_graphs_own_actions_have_no_such_step_but_the_changed_cell_does() -> None:
    # without the cell there is no path (the failure of issue 25); with it, exactly the restart
    assert AFTER.canonical() not in {t for _, t in successors(BEFORE.canonical(), "4.1", MODEL_SCOPE)}
    path = model_path(BEFORE.canonical(), AFTER.canonical(), "4.1", MODEL_SCOPE, 0, JOIN_KINDS)
    assert path == (AbstractAction("JoinGroup/static-rejoin", 0, "changed"),)


def test_the_changed_cell_is_only_a_static_members() -> None:
    # the same leader without a group.instance.id: its JoinGroup/changed keeps its id, so no old heartbeat is left
    dynamic_before = State(STABLE, NO_JOIN, False, (), False, False, (Slot(MEMBER, leader=True, watch=1), FREE, FREE))
    dynamic_after = State(COMPLETING, NO_JOIN, True, (), False, False,
                          (Slot(MEMBER, leader=True, pending_sync=True, watch=1), Slot(watch=1), FREE))
    assert model_path(dynamic_before.canonical(), dynamic_after.canonical(), "4.1", MODEL_SCOPE, 0, JOIN_KINDS) is None

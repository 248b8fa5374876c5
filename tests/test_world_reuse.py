"""The explorer's shortcuts are exact: reusing an untouched coordinator, reading only the requests in flight
again after a step that did not call into the coordinator, and not reloading unchanged monitors.

``World.reuse_coordinator``, ``observe_after`` and ``Expander`` trust ``harness.world._COORDINATOR_KINDS``:
the walks below check that every other action leaves the coordinator's state, error log and transitions log
as they were, and that ``observe_after`` equals a full ``observe``; then every expansion with the shortcuts
is compared with one taken without them (every kind counted as touching the coordinator).
"""
from __future__ import annotations

import pickle
import random
from dataclasses import replace
from typing import Any

import pytest

import harness.world as world_module
from explore.scopes import get_scope
from explore.space import Expander, ExploreSpec
from harness.scope import Scope
from harness.world import _COORDINATOR_KINDS, World
from properties.observation import observe, observe_after
from tests.expansions import compare_expansions

ALL_OPTIONS = Scope(append_mode="deferred", faults=True, crashes=True, unload=True, commits=True,
                    advance_ms=(1000, 7000))
# walks that reach Stable and heartbeat
STABLE_OFTEN = Scope(append_mode="deferred", commits=True, leaves=False, advance_ms=())


@pytest.mark.parametrize("profile,clients,mutant", [("3.9", ("java", "java", "adversarial"), None),
                                                    ("0.10.0", ("java", "java"), None),
                                                    ("3.9", ("java", "java"), "leader-not-reelected")])
def test_only_the_coordinator_kinds_change_the_coordinator(profile: str, clients: tuple[str, ...],
                                                           mutant: str | None) -> None:
    rng = random.Random(7)
    kinds_seen: set[str] = set()
    for walk in range(8):
        scope = ALL_OPTIONS if walk % 2 else STABLE_OFTEN
        world = World(profile, scope, clients=clients, mutant=mutant)
        for _ in range(120):
            choices = world.enabled()
            here, fine = world.snapshot(), []
            for action in choices:           # every enabled action from here, then one of them for real
                world.restore(here)
                before, coord_before = observe(world), world.coord.to_state()
                logs = (len(world.coord.errors), len(world.coord.transitions))
                try:
                    world.step(action)
                except Exception:            # noqa: BLE001 — a mutant may throw; that step is not compared
                    continue
                fine.append(action)
                step = world.steps[-1]
                assert world.touched_coordinator == (action.kind in _COORDINATOR_KINDS)
                if not world.touched_coordinator:
                    kinds_seen.add(action.kind)
                    assert world.coord.to_state() == coord_before, action
                    assert (len(world.coord.errors), len(world.coord.transitions)) == logs, action
                assert observe_after(before, world, step) == observe(world, step, before.transition_count), action
            if not fine:
                break
            world.restore(here)
            world.step(fine[rng.randrange(len(fine))])
    # the walks reached the client and network actions the shortcut is taken for (the mutant's group breaks early)
    wanted = {"JoinGroup", "SyncGroup", "Heartbeat", "DeliverResponse", "DropRequest", "DropResponse", "Crash",
              "Restart"}
    assert wanted | ({"OffsetCommit", "LeaveGroup"} if mutant is None else set()) <= kinds_seen


def _immutable(value: object) -> bool:
    if isinstance(value, tuple | frozenset):
        return all(_immutable(v) for v in value)
    return isinstance(value, int | str | bytes | float | type(None))


@pytest.mark.parametrize("profile,clients", [("3.9", ("java", "java", "adversarial")), ("0.10.0", ("java", "java"))])
def test_snapshots_hold_only_immutable_values(profile: str, clients: tuple[str, ...]) -> None:
    """World.restore parses the bytes it restored last only once, and every restore from them shares the parsed
    values: sound only because nothing in a snapshot can be changed in place."""
    rng = random.Random(3)
    for walk in range(4):
        world = World(profile, ALL_OPTIONS if walk % 2 else STABLE_OFTEN, clients=clients)
        for _ in range(120):
            choices = world.enabled()
            if not choices:
                break
            world.step(choices[rng.randrange(len(choices))])
            assert _immutable(pickle.loads(world.snapshot()))


class _NoShortcuts(Expander):
    """Monitors reloaded before every edge; with every kind patched into _COORDINATOR_KINDS the world
    rebuilds its coordinator, and the Expander observes and abstracts afresh, on every edge."""

    def __init__(self, spec: ExploreSpec) -> None:
        super().__init__(spec)
        self.world.call_memo = None       # every coordinator call is made (harness/calls.py)
        self.reuse_quiet = False          # nothing read from a coordinator state is reused (explore/verdicts.py)

    def _put(self, world_bytes, monitor_states, enabled):  # type: ignore[no-untyped-def]
        self._monitor_states = None
        super()._put(world_bytes, monitor_states, enabled)


SPECS = [
    ExploreSpec("3.9", 3, 8, get_scope("basic")),
    ExploreSpec("3.9", 2, 7, get_scope("faults")),
    ExploreSpec("3.9", 2, 7, get_scope("crashes"), mutant="leader-not-reelected"),
    ExploreSpec("0.10.0", 2, 7, get_scope("unload"), por=True),
    ExploreSpec("3.9", 2, 5, replace(get_scope("basic"), append_mode="deferred", timed=True),
                clients=("java", "adversarial")),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.profile}-{s.members}-{s.scope.faults}-{s.mutant}-{s.por}")
def test_every_expansion_equals_the_one_without_shortcuts(spec: ExploreSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = Expander(spec), _NoShortcuts(spec)
    every_kind = frozenset(world_module._HANDLERS)
    def expand_slow(node: Any, sleep: Any) -> Any:
        with monkeypatch.context() as m:
            m.setattr(world_module, "_COORDINATOR_KINDS", every_kind)
            return slow.expand(node, sleep)

    assert compare_expansions(fast, expand_slow, spec.depth, spec.por) > 100
    assert fast.world.call_memo             # the memo was used

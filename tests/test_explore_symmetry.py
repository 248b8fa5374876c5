"""Symmetry reduction (explore/canonical.py ``symmetric``, ``ExploreSpec.symmetry``): exchanging interchangeable
clients commutes with every step of the world and of the checks, and the reduced search reaches one state of every
orbit the full search reaches, with the same verdicts."""
from __future__ import annotations

import pickle
import random
from dataclasses import replace
from itertools import permutations
from typing import Any

import pytest

from core.actions import Action
from explore.canonical import interchangeable, permuted, symmetric
from explore.local import bfs
from explore.scopes import get_scope
from explore.space import Expander, ExploreSpec, route_of
from harness.scope import Scope
from harness.world import World
from kgc.cli import main

SHARED = "consumer"


def _shared(scope: str, **extra: Any) -> Scope:
    return replace(get_scope(scope), client_id=SHARED, **extra)


def _moved(action: Action, perm: tuple[int, ...]) -> Action:
    return action if action.client < 0 else Action(action.kind, perm[action.client], action.arg)


def _walks(scope: Scope, clients: int, seed: int, steps: int):   # type: ignore[no-untyped-def]
    """A random path and, for every exchange of the clients, the exchanged path: yields (perm, state of the path,
    state of the exchanged path, whether each action was enabled) after every step."""
    rng = random.Random(seed)
    perms = [p for p in permutations(range(clients)) if p != tuple(range(clients))]
    world = World("3.9", scope, clients=clients, record=False)
    others = {p: World("3.9", scope, clients=clients, record=False) for p in perms}
    for _ in range(steps):
        actions = world.enabled()
        if not actions:
            return
        # mostly the clients' and the network's actions: the clock reaches its horizon late, and requests park
        by_clients = [a for a in actions if a.client >= 0]
        action = rng.choice(by_clients if by_clients and rng.random() < 0.85 else actions)
        world.step(action)
        for perm, other in others.items():
            moved = _moved(action, perm)
            assert moved in other.enabled(), f"{moved} (exchanged {action}) is not enabled"
            other.step(moved)
            yield perm, world.to_state(), other.to_state()


@pytest.mark.parametrize("scope", ["basic", "faults", "crashes", "unload"])
def test_exchanging_clients_commutes_with_every_step_of_the_world(scope: str) -> None:
    """A path and its exchanged path end in exchanged states: ``permuted`` moves every reference to a client there
    is (a reference it missed would differ here, since the world itself moved it)."""
    shared = _shared(scope, commits=True)
    parked = 0
    for seed in range(6):
        for perm, state, other in _walks(shared, 3, seed, 45):
            assert permuted(state, perm) == other
            parked += _parks(state)
    assert parked           # parked requests (whose keys name clients) were among the states compared


def test_the_representative_is_a_function_of_the_orbit() -> None:
    classes = ((0, 1, 2),)
    seen: dict[bytes, tuple] = {}
    for seed in range(4):
        for perm, state, other in _walks(_shared("faults"), 3, seed, 40):
            form = symmetric(state, classes)
            assert symmetric(other, classes) == form
            assert symmetric(permuted(state, perm), classes) == form
            seen[pickle.dumps(state)] = form
    # some distinct states share a representative, and not all of them do
    forms = list(seen.values())
    assert len(set(map(pickle.dumps, forms))) < len(forms)
    assert len(set(map(pickle.dumps, forms))) > 1


def test_only_clients_configured_alike_are_interchangeable() -> None:
    # a shorter session, another kind, static members (each has its own group.instance.id): not interchangeable
    world = World("3.9", _shared("basic", session_timeout_ms=(10000, 6000, 10000, 10000)),
                  clients=("java", "java", "java", "adversarial", "static", "static"), record=False)
    assert interchangeable(world.kinds, world.configs) == ((0, 2),)
    plain = World("3.9", get_scope("basic"), clients=3, record=False)     # c0, c1, c2: ids name the client
    assert interchangeable(plain.kinds, plain.configs) == ()


def _orbits(spec: ExploreSpec) -> tuple[int, set[str]]:
    """The full search's states counted by orbit (their symmetric forms), and its violated properties."""
    expander = Expander(spec)
    classes = interchangeable(expander.world.kinds, expander.world.configs)
    seen, frontier, violated = {expander.root_fp}, [expander.root], set()

    def orbit(node: bytes) -> bytes:
        world_bytes, had_error, monitors = pickle.loads(node)
        return pickle.dumps((symmetric(pickle.loads(world_bytes), classes), had_error, monitors))
    keys = {orbit(expander.root)}
    for _level in range(spec.depth):
        nxt = []
        for node in frontier:
            out = expander.expand(node)
            violated |= {v[0] for v in out.violations}
            for _index, fp, child, _sleep in out.children:
                if fp not in seen:
                    seen.add(fp)
                    nxt.append(child)
                    keys.add(orbit(child))
        frontier = nxt
    return len(keys), violated


@pytest.mark.parametrize("spec", [
    ExploreSpec("3.9", 3, 9, _shared("basic")),
    ExploreSpec("3.9", 3, 8, _shared("basic"), mutant="generation-not-bumped"),
    ExploreSpec("0.10.0", 3, 7, _shared("faults"), mutant="leader-not-reelected"),
    ExploreSpec("3.9", 3, 7, _shared("unload")),
], ids=["basic", "basic-mutant", "faults-0.10.0-mutant", "unload"])
def test_the_symmetric_search_reaches_every_orbit_of_the_full_search_with_its_verdicts(spec: ExploreSpec) -> None:
    orbits, violated = _orbits(spec)
    reduced = bfs(replace(spec, symmetry=True))
    full = bfs(spec)
    assert reduced.states == orbits < full.states
    assert sorted(reduced.violations) == sorted(full.violations) == sorted(violated)
    for name, found in full.violations.items():        # shortest counterexamples as short, and real paths
        assert len(reduced.violations[name].path) == len(found.path)
    assert sorted(reduced.witnesses) == sorted(full.witnesses)
    if spec.mutant:
        assert reduced.violations


def _parks(state: tuple) -> bool:
    """Whether a member of the state's coordinator holds a parked request (its key names a client)."""
    return any(m[9] is not None or m[10] is not None for g in state[0][4] for m in g[8])


def test_exchanged_worlds_have_one_route_under_symmetry() -> None:
    """The Spark engine deduplicates a node in the partition its route picks: exchanged states must share it."""
    differ = 0
    for seed in range(4):
        for _perm, state, other in _walks(_shared("basic"), 3, seed, 30):
            assert route_of(state[0], True) == route_of(other[0], True)
            differ += route_of(state[0]) != route_of(other[0])
    assert differ       # without blinding the parked requests' clients, some routes would differ


def test_the_spec_refuses_symmetry_it_cannot_make_exact() -> None:
    with pytest.raises(ValueError, match="share one client.id"):
        ExploreSpec("3.9", 3, 5, get_scope("basic"), symmetry=True)
    with pytest.raises(ValueError, match="without POR"):
        ExploreSpec("3.9", 3, 5, _shared("basic"), symmetry=True, por=True)
    spec = ExploreSpec("3.9", 3, 5, _shared("basic"), symmetry=True)
    assert ExploreSpec.from_json(spec.to_json()) == spec
    assert "client_id" not in get_scope("basic").to_json()     # traces written before the field keep their bytes


def test_kgc_explore_symmetry_explores_orbits_and_says_so(tmp_path, capsys) -> None:   # type: ignore[no-untyped-def]
    code = main(["explore", "--members", "3", "--depth", "8", "--symmetry", "--no-progress",
                 "--out", str(tmp_path / "sym")])
    shown = capsys.readouterr().out
    assert code == 0
    assert "one state per orbit of client exchanges" in shown and SHARED in shown
    assert main(["explore", "--members", "3", "--depth", "8", "--symmetry", "--por", "--no-progress",
                 "--out", str(tmp_path / "bad")]) == 2
    assert "without POR" in capsys.readouterr().err

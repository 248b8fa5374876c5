"""Coverage of the abstract graph: which of its states and edges an exploration's steps mapped to.

The denominator is the model graph (``model.graph.build``) for the exploration's member count, with
the model scope that matches its coordinator configuration (deferred appends, initial delay, unload).
The explored abstract states and edges are compared without free slots (``explore.space.unpadded``);
an abstract state with more slots than members (E0 keeps heartbeat ops of removed members) is
counted as covered but lies outside the N-slot graph, so the fraction only counts the intersection.
"""
from __future__ import annotations

from functools import lru_cache

from explore.space import ExploreSpec, unpadded
from harness.world import World
from model.graph import build
from model.state import Scope, State


@lru_cache(maxsize=16)
def model_graph_sets(spec: ExploreSpec) -> tuple[frozenset[State], frozenset[tuple[State, str, State]]]:
    world = World(spec.profile, spec.scope, clients=spec.kinds, record=False)
    config = world.coord.config
    scope = Scope(members=spec.members, deferred_appends=config.append_mode == "deferred",
                  initial_delay=config.group_initial_rebalance_delay_ms > 0, max_appends=2,
                  unload=spec.scope.unload)
    g = build(scope, spec.profile)
    states = {n: unpadded(s) for n, s in g.nodes(data="state")}
    edges = frozenset((states[u], kind, states[v]) for u, v, kind in g.edges(data="kind"))
    return frozenset(states.values()), edges


def coverage(spec: ExploreSpec, states: set[State], edges: set[tuple[State, str, State]]) -> dict[str, int]:
    """Covered abstract states/edges of the N-slot model graph, and the graph's sizes."""
    g_states, g_edges = model_graph_sets(spec)
    return {"model_states": len(g_states), "model_edges": len(g_edges),
            "covered_states": len(states & g_states), "covered_edges": len(edges & g_edges)}

"""What an exploration reports, the same for every engine: counts, violations, coverage, timings.

``ExploreResult.counts()`` is the part two engines must agree on for the same spec (tests assert it);
timings and the engine name are not part of it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from explore.rules import BY_CATALOG, BY_RULES, judged_by_rules
from explore.space import ExploreSpec


@dataclass
class Found:
    """One violated property: how many explored edges violate it, and the first counterexample —
    the shortest, and among the shortest the smallest path of action indexes (``enabled()`` order)."""

    property: str
    count: int
    path: tuple[int, ...]           # action indexes from the initial state; the last step violates
    message: str

    def key(self) -> tuple[int, tuple[int, ...]]:
        return len(self.path), self.path


def merge_found(into: dict[str, Found], prop: str, path: tuple[int, ...], message: str, count: int = 1) -> None:
    """Add ``count`` violations of ``prop``; keep the smallest (length, path) counterexample."""
    old = into.get(prop)
    if old is None:
        into[prop] = Found(prop, count, path, message)
        return
    old.count += count
    if (len(path), path) < old.key():
        old.path, old.message = path, message


@dataclass
class ExploreResult:
    spec: ExploreSpec
    engine: str
    search: str = "bfs"
    states: int = 0                  # distinct nodes within the depth horizon
    edges: int = 0                   # edges taken from expanded nodes (POR-pruned ones not counted)
    pruned: int = 0                  # edges the sleep sets skipped
    levels: list[int] = field(default_factory=list)   # BFS: distinct new nodes per depth (0 = the root)
    complete: bool = False           # the space was exhausted before the depth horizon
    violations: dict[str, Found] = field(default_factory=dict)
    witnesses: set[str] = field(default_factory=set)
    abstract_states: int = 0
    abstract_edges: int = 0
    model_states: int = 0            # size of the abstract graph for this member count (coverage denominator)
    model_edges: int = 0
    covered_states: int = 0          # of those, how many the exploration's steps mapped to
    covered_edges: int = 0
    seconds: float = 0.0
    startup_seconds: float = 0.0     # Spark: session start-up, not part of `seconds`
    level_seconds: list[float] = field(default_factory=list)
    resumed_from_level: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def add_root_violations(self, violations: list[tuple[str, int, str]]) -> None:
        """The initial state's violations (``Expander.root_violations``): counterexamples of no steps."""
        for prop, _index, msg in violations:
            merge_found(self.violations, prop, (), msg)

    @property
    def judged_by(self) -> str:
        """What judged every edge: the catalog, or a release's runtime rules (explore/rules.py)."""
        return BY_RULES if judged_by_rules(self.spec.profile) else BY_CATALOG

    @property
    def coverage_collected(self) -> bool:
        """False on a release judged by its runtime rules: its coordinator has no abstraction yet."""
        return not judged_by_rules(self.spec.profile)

    def set_coverage(self, states: set, edges: set) -> None:
        """The abstract states/edges the steps mapped to, and their share of the model graph (none collected on a
        release the model does not judge: ``coverage_collected``)."""
        from explore.coverage import coverage
        self.abstract_states, self.abstract_edges = len(states), len(edges)
        if not self.coverage_collected:
            return
        c = coverage(self.spec, states, edges)
        self.model_states, self.model_edges = c["model_states"], c["model_edges"]
        self.covered_states, self.covered_edges = c["covered_states"], c["covered_edges"]

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else 0.0

    def counts(self) -> dict[str, Any]:
        """What engines must agree on."""
        return {"states": self.states, "edges": self.edges, "pruned": self.pruned, "levels": list(self.levels),
                "complete": self.complete,
                "violations": {k: [v.count, list(v.path)] for k, v in sorted(self.violations.items())},
                "witnesses": sorted(self.witnesses), "abstract_states": self.abstract_states,
                "abstract_edges": self.abstract_edges}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "kgc-explore/1", "engine": self.engine, "search": self.search, "spec": self.spec.to_json(),
            **self.counts(),
            "violation_messages": {k: v.message for k, v in sorted(self.violations.items())},
            "judged_by": self.judged_by,
            "coverage": {"abstract_states": self.abstract_states, "abstract_edges": self.abstract_edges,
                         "model_states": self.model_states, "model_edges": self.model_edges,
                         "covered_model_states": self.covered_states, "covered_model_edges": self.covered_edges}
            if self.coverage_collected else {"collected": False, "why": "the model does not judge this release yet"},
            "seconds": round(self.seconds, 3), "startup_seconds": round(self.startup_seconds, 3),
            "states_per_second": round(self.states_per_second, 1),
            "level_seconds": [round(s, 3) for s in self.level_seconds],
            "resumed_from_level": self.resumed_from_level, **({"extra": self.extra} if self.extra else {}),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

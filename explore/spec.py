"""What an exploration explores (``ExploreSpec``): profile, clients, scope, depth, and the switches that shape its
space.

Read by every engine (explore/local.py, explore/spark/), their checkpoints and the command line; explore/space.py
expands it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from harness.scope import Scope
from harness.clients import client_kinds
from harness.event_loop import hash_order_choices

__all__ = ["ExploreSpec"]


@dataclass(frozen=True)
class ExploreSpec:
    """What is explored: profile, clients, scope (its max_time_ms is the clock horizon), depth."""

    profile: str = "3.9"
    members: int = 2
    depth: int = 8
    scope: Scope = field(default_factory=Scope)
    clients: tuple[str, ...] = ()          # client kinds; empty = `members` Java consumers
    mutant: str | None = None
    por: bool = False
    #: deduplicate by the canonical form (explore/canonical.py: history counters relabelled); False = by the
    #: raw snapshot, the space before the reduction (its pinned counts are still checked in tests)
    reduce: bool = True
    #: deduplicate by orbit under exchanges of interchangeable clients (explore/canonical.py ``symmetric``): a
    #: state stands for every state its clients' exchanges give. Needs ``reduce`` and clients sharing one
    #: client.id (``scope.client_id``); not with ``por`` (a sleep set names clients)
    symmetry: bool = False

    def __post_init__(self) -> None:
        if self.depth < 0:
            raise ValueError(f"depth must be >= 0, got {self.depth}.")
        if not 1 <= self.members <= 6:
            raise ValueError(f"members must be between 1 and 6, got {self.members}.")
        if self.clients and len(self.clients) != self.members:
            raise ValueError(f"{len(self.clients)} client kinds given for {self.members} members.")
        if self.symmetry and not self.scope.client_id:
            raise ValueError("symmetry needs clients that share one client.id (scope client_id); "
                             "kgc explore --symmetry sets it to 'consumer'.")
        if self.symmetry and (self.por or not self.reduce):
            raise ValueError("symmetry works with the canonical form and without POR; drop --por or --no-reduce.")
        if self.symmetry and hash_order_choices(self.profile):
            # explore/canonical.py leaves the states of a world with choice points (the Java runtime's, by release
            # fact) as they are: the reduction would silently do nothing
            raise ValueError(f"symmetry is not available on profile {self.profile}: its worlds have choice points "
                             f"and states explore/canonical.py does not relabel; drop --symmetry.")
        # empty means `members` Java consumers; stored explicitly so that equal specs compare equal
        object.__setattr__(self, "clients", client_kinds(self.clients or self.members))

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.clients

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["scope"] = self.scope.to_json()
        out["clients"] = list(self.kinds)
        return out

    @staticmethod
    def from_json(obj: dict[str, Any]) -> "ExploreSpec":
        values = dict(obj)
        values["scope"] = Scope.from_json(values.get("scope", {}))
        values["clients"] = tuple(values.get("clients", ()))
        values.setdefault("reduce", False)     # written before the reduction existed: the raw space
        values.setdefault("symmetry", False)
        return ExploreSpec(**values)

    def same_space(self, other: "ExploreSpec") -> bool:
        """True when ``other`` explores the same space (a deeper depth is allowed: resuming may extend)."""
        return replace(self, depth=0) == replace(other, depth=0)

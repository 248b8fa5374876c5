"""What a search toward abstract edges needs of a run type (``Runs``), and the action kind of an edge label.

The run type is the caller's (kgc.runs.CheckedRun in the gate): the map sweep (explore/sweep.py) only needs
the ``Runs`` operations below, so it stays below kgc in the layers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Protocol, Sequence, TypeVar

from core.actions import Action
from explore.coverage import EdgeKey
from harness.world import World
from model.state import State


def abstract_kind(label: str) -> str:
    """``LeaveGroup(MLw)`` -> ``LeaveGroup``, ``CompleteAppend[ok]`` -> ``CompleteAppend``."""
    return label.split("(")[0].split("[")[0]


def parse_label(label: str) -> tuple[str, str, str]:
    """``JoinGroup/known(MLw)`` -> (``JoinGroup/known``, ``MLw``, ""); ``CompleteAppend[ok]`` -> (…, "", "ok")."""
    kind = abstract_kind(label)
    rest = label[len(kind):]
    arg = ""
    if rest.endswith("]") and "[" in rest:
        rest, arg = rest[:rest.index("[")], rest[rest.index("[") + 1:-1]
    acting = rest[1:-1] if rest.startswith("(") and rest.endswith(")") else ""
    return kind, acting, arg


class Runnable(Protocol):
    @property
    def over(self) -> bool: ...

    def step(self, action: Action) -> Sequence[object]: ...


R = TypeVar("R", bound=Runnable)


@dataclass(frozen=True)
class Runs(Generic[R]):
    """What the search needs of a run type."""

    starts: Sequence[Callable[[], R]]            # one fresh run per world configuration
    fork: Callable[[R], R]                       # an independent copy that continues from the same point
    enabled: Callable[[R], tuple[Action, ...]]
    state: Callable[[R], State]                  # the run's abstract state now (unpadded)
    edges: Callable[[R], set[EdgeKey]]           # the abstract edges the run covered (coverage keys)
    failed: Callable[[R], bool]                  # the run found a violation: stop and report it
    world: Callable[[R], World]                  # the run's world (to read what the search can send)


__all__ = ["R", "Runnable", "Runs", "abstract_kind", "parse_label"]

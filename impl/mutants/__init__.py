"""Seeded coordinator bugs: each a named subclass overriding one seam, with the property that must catch it.

A mutant stands for a real mistake someone could make in the coordinator; the gate (`kgc check
--mutant NAME`) must kill every one of them. Registering one touches this package only:

    @mutant("rebalance-timeout-min", catches="rebalance-timeout-is-the-maximum",
            mistake="takes the smallest member timeout as the rebalance timeout")
    class RebalanceTimeoutMin(GroupCoordinator): ...
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from impl.coordinator import GroupCoordinator


@dataclass(frozen=True, slots=True)
class Mutant:
    name: str                         # kebab-case, never changes once published
    cls: type[Any]                    # GroupCoordinator, or a sibling runtime's class (profile 4.1)
    mistake: str                      # the real mistake it stands for, one sentence
    catches: tuple[str, ...]          # catalog properties that must report it
    profiles: tuple[str, ...]         # releases whose code has the seam it breaks and the gate must kill it on


MUTANTS: dict[str, Mutant] = {}
C = TypeVar("C", bound=type)


class UnknownMutantError(ValueError):
    """A mutant name kgc does not have; the message lists the known ones."""


#: the releases kgc runs (impl/profiles.py), the default of a mutant whose seam every one of them has
EVERY_RELEASE = ("0.10.0", "2.4.1", "2.7.0", "3.9")
#: the releases with pending members and the initial rebalance delay (KIP-394 2.2.0, KAFKA-4925 0.11.0)
SINCE_2_2 = ("2.4.1", "2.7.0", "3.9")


def mutant(name: str, catches: str | tuple[str, ...], mistake: str,
           profiles: tuple[str, ...] = EVERY_RELEASE) -> Callable[[C], C]:
    def register(cls: C) -> C:
        if name in MUTANTS:
            raise ValueError(f"mutant {name!r} is registered twice")
        MUTANTS[name] = Mutant(name, cls, mistake, (catches,) if isinstance(catches, str) else catches, profiles)
        cls.mutant_name = name   # type: ignore[attr-defined]
        return cls
    return register


def get_mutant(name: str) -> Mutant:
    _load()
    try:
        return MUTANTS[name]
    except KeyError:
        raise UnknownMutantError(f"unknown mutant {name!r}; `kgc check --list-mutants` shows the "
                                 f"{len(MUTANTS)} known ones.") from None


def coordinator_class(name: str | None) -> type[Any]:
    """The coordinator class of a mutant, or the reference for None."""
    return GroupCoordinator if name is None else get_mutant(name).cls


def all_mutants() -> list[Mutant]:
    _load()
    return [MUTANTS[k] for k in sorted(MUTANTS)]


def _load() -> None:
    from impl.mutants import answer_bugs, bugs, guard_bugs, runtime_bugs, static_bugs  # noqa: F401  (registers the mutants)


__all__ = ["MUTANTS", "Mutant", "UnknownMutantError", "all_mutants", "coordinator_class", "get_mutant", "mutant"]

"""The one property catalog (DESIGN.md §7): named, frozen records registered by decorators.

A property is one decorated function (or, for ``eventually_within``, one decorated monitor class);
adding one touches one file. The decorated function returns ``None`` when the property holds and
otherwise a *witness*: a dict of the values of every sub-expression that matters, icontract-style
(``{"member": "c1-4", "awaiting_join": False, "state": "PreparingRebalance"}``) — never empty. The
record's ``check`` turns that into a one-line message and ``explain`` returns the dict itself ({} when
the property holds).

Concrete check signatures (level "concrete", over ``properties.observation.Observation``):
  always              check(obs) -> message | None
  always_step         check(before, step, after) -> message | None      (step: core.trace.Step)
  eventually_within   check() -> a fresh Monitor; monitor.reset(), monitor.observe(before, step, after)
                      -> message | None; explain(monitor) -> the witness of its last violation
  sometimes           check(obs) -> bool (reached); explain(obs) -> what was reached
Abstract properties (level "abstract") take model states the same way; their module is listed in
PROPERTY_MODULES like any other.

Who reads the catalog: the Checker (properties/check.py), the Hypothesis machines, the explorers,
Spark and the reports — all through ``CATALOG`` / ``for_profile``; nobody lists properties by hand.
"""
from __future__ import annotations

import importlib
import pickle
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, TypeVar

from model.releases import MODELLED, RUNNABLE, Predicate, everywhere, fact, profiles_where

KINDS = ("always", "always_step", "eventually_within", "sometimes")
LEVELS = ("concrete", "abstract")
PROFILES = RUNNABLE     # the runnable releases of model/releases.py
#: concrete properties judge every release the World drives and the model has a profile for: the runnable ones and
#: 4.1, whose Java runtime properties/observation_4x.py reads for them
CONCRETE_PROFILES = MODELLED
#: abstract properties judge the model, which has a profile for more releases than the catalog judges concretely
#: (model/releases.py MODELLED: 4.1's graph and proofs, before its runtime is judged): their release predicates
#: are read over these
ABSTRACT_PROFILES = MODELLED


def commit_answer_depends_on_version(profile: str) -> bool:
    """Whether an OffsetCommit's answer on ``profile`` depends on the request's version (SPEC-4x.md R15: v9+ with a
    generation to a missing group is GROUP_ID_NOT_FOUND) — what a served Receive must carry (wire/session.py)."""
    return fact("commit-to-missing-group-not-found", profile)
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")

#: modules that register properties, in catalog order (a new property module is added here)
PROPERTY_MODULES = (
    "properties.concrete_state",
    "properties.concrete_steps",
    "properties.concrete_requests",
    "properties.concrete_liveness",
    "properties.concrete_static",
    "properties.witnesses",
    "properties.abstract",
    "properties.abstract_outputs",
    "properties.checker_side",
)

Witness = dict[str, Any]


class CatalogError(ValueError):
    """A malformed property record or a duplicate name; the message names the property."""


@dataclass(frozen=True, slots=True)
class Property:
    name: str                        # kebab-case sentence-in-short; never changes once published
    kind: str                        # one of KINDS
    claim: str                       # one English sentence
    source: str                      # seed file + passage, or SPEC.md section
    applies_to: tuple[str, ...]      # the runnable profiles it applies to (computed from ``applies_when``)
    level: str                       # "concrete" | "abstract"
    check: Callable[..., Any]
    explain: Callable[..., Witness]
    z3: str | None = None            # name of the Z3 twin (properties/z3/)
    order: tuple[int, int] = (0, 0)  # (module index in PROPERTY_MODULES, definition order)
    # the decorated function (None for monitors): explain(*a) is fn(*a) or {}; hot loops call it directly
    fn: Callable[..., Witness | None] | None = None
    #: the release predicate it was declared with (model/releases.py ``when``/``unless``/``since``)
    applies_when: Predicate | None = None

    def applies(self, profile: str) -> bool:
        return profile in self.applies_to


class Monitor(ABC):
    """Base of eventually_within monitors: subclasses implement ``reset`` and ``_observe``."""

    name = ""
    claim = ""

    def __init__(self) -> None:
        self.witness: Witness = {}
        self.reset()

    def reset(self) -> None:   # noqa: B027 — a default hook: monitors without run state need not override it
        """Forget everything seen (a new run starts)."""

    @abstractmethod
    def _observe(self, before: Any, step: Any, after: Any) -> Witness | None:
        """The witness of a violated obligation at this step, or None."""

    def run_state(self) -> bytes:
        """Everything the monitor remembers of the run so far (not its last witness), as bytes: an
        explorer that restores a world snapshot restores this alongside it."""
        return pickle.dumps({k: v for k, v in vars(self).items() if k != "witness"}, protocol=5)

    def set_run_state(self, data: bytes) -> None:
        """Inverse of ``run_state``."""
        self.__dict__.update(pickle.loads(data))
        self.witness = {}

    def observe(self, before: Any, step: Any, after: Any) -> str | None:
        found = self._observe(before, step, after)
        if found is None:
            return None
        self.witness = found
        return message(self.name, self.claim, found)


def message(name: str, claim: str, witness: Witness) -> str:
    """``name: claim — violated: k=v, …`` on one line."""
    values = ", ".join(f"{k}={v!r}" for k, v in witness.items())
    return f"{name}: {claim.rstrip('.')} — violated: {values}"


_REGISTRY: dict[str, Property] = {}
_counter = [0]


def _module_index(module: str) -> int:
    return PROPERTY_MODULES.index(module) if module in PROPERTY_MODULES else len(PROPERTY_MODULES)


#: what a decorator takes as ``applies_to``: a release predicate (``when("delayed-sync")``), or profile names
AppliesTo = Predicate | tuple[str, ...]


def _known(level: str | None) -> tuple[str, ...]:
    return ABSTRACT_PROFILES if level == "abstract" else CONCRETE_PROFILES if level == "concrete" else PROFILES


def _profiles(applies_to: AppliesTo, level: str) -> tuple[str, ...]:
    return profiles_where(applies_to, among=_known(level)) if callable(applies_to) else tuple(applies_to)


def _validate(name: str, kind: str, claim: str, source: str, applies_to: tuple[str, ...], level: str) -> None:
    problems = []
    if not NAME_RE.match(name):
        problems.append("its name is not kebab-case (lowercase words joined by '-')")
    if kind not in KINDS:
        problems.append(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if level not in LEVELS:
        problems.append(f"level {level!r} is not one of {', '.join(LEVELS)}")
    if not claim.strip() or not source.strip():
        problems.append("it needs a claim and a source")
    if not applies_to or any(p not in _known(level) for p in applies_to):
        problems.append(f"applies_to {applies_to!r} must be a non-empty tuple of {', '.join(_known(level))}")
    if name in _REGISTRY:
        problems.append("that name is already registered")
    if problems:
        raise CatalogError(f"property {name!r}: " + "; ".join(problems) + ".")


def _register(name: str, kind: str, claim: str, source: str, applies_to: AppliesTo, level: str,
              check: Callable[..., Any], explain: Callable[..., Witness], z3: str | None, module: str,
              fn: Callable[..., Witness | None] | None = None) -> Property:
    profiles = _profiles(applies_to, level)
    _validate(name, kind, claim, source, profiles, level)
    _counter[0] += 1
    prop = Property(name, kind, claim, source, profiles, level, check, explain, z3,
                    (_module_index(module), _counter[0]), fn, applies_to if callable(applies_to) else None)
    _REGISTRY[name] = prop
    return prop


F = TypeVar("F", bound=Callable[..., Any])


def _decorator(kind: str, name: str, claim: str, source: str, applies_to: AppliesTo, level: str,
               z3: str | None) -> Callable[[F], F]:
    def wrap(fn: F) -> F:
        if kind == "sometimes":
            def check(*args: Any) -> bool:
                return fn(*args) is not None
        else:
            def check(*args: Any) -> str | None:   # type: ignore[misc]
                found = fn(*args)
                return None if found is None else message(name, claim, found)

        def explain(*args: Any) -> Witness:
            return fn(*args) or {}
        _register(name, kind, claim, source, applies_to, level, check, explain, z3, fn.__module__, fn)
        return fn
    return wrap


def always(name: str, *, claim: str, source: str, applies_to: AppliesTo = everywhere,
           level: str = "concrete", z3: str | None = None) -> Callable[[F], F]:
    """A state invariant: fn(obs) -> witness | None."""
    return _decorator("always", name, claim, source, applies_to, level, z3)


def always_step(name: str, *, claim: str, source: str, applies_to: AppliesTo = everywhere,
                level: str = "concrete", z3: str | None = None) -> Callable[[F], F]:
    """A predicate over one step: fn(before, step, after) -> witness | None."""
    return _decorator("always_step", name, claim, source, applies_to, level, z3)


def sometimes(name: str, *, claim: str, source: str, applies_to: AppliesTo = everywhere,
              level: str = "concrete") -> Callable[[F], F]:
    """A reachability witness: fn(obs) -> what was reached (a dict) | None."""
    return _decorator("sometimes", name, claim, source, applies_to, level, None)


M = TypeVar("M", bound=type)


def eventually_within(name: str, *, claim: str, source: str, applies_to: AppliesTo = everywhere,
                      level: str = "concrete") -> Callable[[M], M]:
    """Bounded liveness: a Monitor subclass; check() builds a fresh one."""
    def wrap(cls: M) -> M:
        cls.name, cls.claim = name, claim   # type: ignore[attr-defined]

        def explain(monitor: Monitor) -> Witness:
            return dict(monitor.witness)
        _register(name, "eventually_within", claim, source, applies_to, level, cls, explain, None, cls.__module__)
        return cls
    return wrap


class _Catalog(Mapping[str, Property]):
    """CATALOG: name -> Property in catalog order; importing the property modules on first use."""

    _loaded = False
    _sorted: dict[str, Property] = {}

    def _load(self) -> dict[str, Property]:
        if not _Catalog._loaded:
            for module in PROPERTY_MODULES:
                importlib.import_module(module)
            _Catalog._loaded = True
        if len(_Catalog._sorted) != len(_REGISTRY):   # a module registered more since the last read
            _Catalog._sorted = dict(sorted(_REGISTRY.items(), key=lambda kv: kv[1].order))
        return _Catalog._sorted

    def __getitem__(self, name: str) -> Property:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


CATALOG: Mapping[str, Property] = _Catalog()


def for_profile(profile: str, level: str | None = None, kind: str | None = None) -> tuple[Property, ...]:
    """The properties that apply to ``profile``, optionally of one level and kind, in catalog order."""
    if profile not in _known(level):
        raise CatalogError(f"unknown profile {profile!r}; the catalog knows {', '.join(_known(level))}.")
    return tuple(p for p in CATALOG.values() if p.applies(profile) and (level is None or p.level == level)
                 and (kind is None or p.kind == kind))

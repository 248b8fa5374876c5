"""What a world lets happen: the ``Scope`` value and its JSON form (harness layer).

A scope switches families of environment actions on or off, bounds the clock, and overrides
client and coordinator settings. It is part of every trace, so it round-trips through JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

APPEND_MODES = ("sync", "deferred")


@dataclass(frozen=True, slots=True)
class Scope:
    """The environment a ``World`` offers; defaults give a fault-free world of Java consumers."""

    append_mode: str = "sync"          # "deferred": log appends wait for CompleteAppend (SPEC.md §5.2)
    faults: bool = False               # DropRequest / DropResponse, failed CompleteAppend
    crashes: bool = False              # Crash / Restart of clients
    unload: bool = False               # UnloadGroup / LoadGroup (partition emigration, SPEC.md §3.7)
    commits: bool = False              # Java consumers send OffsetCommit when STABLE
    leaves: bool = True                # clients may send LeaveGroup
    rejoins: bool = True               # a STABLE Java consumer may rejoin with its metadata unchanged
    #: a STABLE Java consumer may rejoin with other protocol metadata: its subscription changed, or a pattern
    #: subscription matched a new topic (ConsumerCoordinator's rejoinNeededOrPending on a changed subscription or
    #: metadata snapshot); the member keeps its id and the coordinator rebalances (SPEC.md §3.1 J5b, §1.3)
    resubscribes: bool = False
    advance_ms: tuple[int, ...] = (1000,)   # AdvanceClock amounts offered
    timed: bool = False                # heartbeats only every heartbeat_interval_ms
    max_time_ms: int | None = None     # the clock never moves beyond this
    group_id: str = "g"
    #: the client.id every modelled client sends; empty: client i sends "c<i>". One shared id, as consumers
    #: deployed from one configuration send, makes member ids and protocol metadata independent of which client
    #: joined, so that the clients are interchangeable (``kgc explore --symmetry``, explore/canonical.py)
    client_id: str = ""
    # per-client overrides, by client index (missing entries: the defaults)
    session_timeout_ms: tuple[int, ...] = ()     # default 10000
    rebalance_timeout_ms: tuple[int, ...] = ()   # default: the client's session timeout
    heartbeat_interval_ms: int = 3000
    # coordinator overrides (None: impl's CoordinatorConfig default)
    group_min_session_timeout_ms: int | None = None
    group_max_session_timeout_ms: int | None = None
    group_initial_rebalance_delay_ms: int | None = None
    group_max_size: int | None = None

    def __post_init__(self) -> None:
        if self.append_mode not in APPEND_MODES:
            raise ValueError(f"scope append_mode must be one of {APPEND_MODES}, got {self.append_mode!r}.")
        for name in ("advance_ms", "session_timeout_ms", "rebalance_timeout_ms"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(isinstance(v, int) and v >= 0 for v in value):
                raise ValueError(f"scope {name} must be a tuple of non-negative ints, got {value!r}.")
        if any(ms <= 0 for ms in self.advance_ms):
            raise ValueError(f"scope advance_ms amounts must be positive, got {self.advance_ms!r}.")
        if self.max_time_ms is not None and self.max_time_ms < 0:
            raise ValueError(f"scope max_time_ms must be None or >= 0, got {self.max_time_ms!r}.")
        if not isinstance(self.client_id, str) or self.client_id != self.client_id.strip():
            raise ValueError(f"scope client_id must be a string without surrounding blanks, got {self.client_id!r}.")
        if self.heartbeat_interval_ms <= 0:
            raise ValueError(f"scope heartbeat_interval_ms must be positive, got {self.heartbeat_interval_ms!r}.")

    def coordinator_overrides(self) -> dict[str, int]:
        """The CoordinatorConfig keyword arguments this scope sets."""
        names = ("group_min_session_timeout_ms", "group_max_session_timeout_ms",
                 "group_initial_rebalance_delay_ms", "group_max_size")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def to_json(self) -> dict[str, Any]:
        """Every field, tuples as lists, in field order; ``client_id`` and ``resubscribes`` only when set (traces
        written before they existed keep their bytes)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("client_id", "resubscribes") and not value:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @staticmethod
    def from_json(obj: Any) -> "Scope":
        """Inverse of ``to_json``; unknown keys and ill-typed values are a ValueError."""
        if not isinstance(obj, dict):
            raise ValueError(f"a scope must be a JSON object, got {type(obj).__name__}.")
        known = {f.name for f in fields(Scope)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise ValueError(f"unknown scope key(s) {', '.join(map(repr, unknown))}; "
                             f"known keys are {', '.join(sorted(known))}.")
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in obj.items()}
        try:
            return Scope(**values)
        except TypeError as exc:
            raise ValueError(f"malformed scope {obj!r:.120} ({exc}).") from None

"""Named exploration scopes: the environments ``kgc explore --scope`` and the gate explore.

The clock moves only by AdvanceToNextDeadline (to just past the next coordinator deadline), so every
timer race is reachable in a few steps without enumerating clock amounts; ``max_time_ms`` is the
clock horizon.
"""
from __future__ import annotations

from harness.scope import Scope

SCOPES: dict[str, Scope] = {
    # joins, syncs, heartbeats, leaves, rejoins and every timer, fault-free
    "basic": Scope(advance_ms=(), max_time_ms=60_000),
    # plus lost requests/responses and failed log appends, appends completing later
    "faults": Scope(advance_ms=(), max_time_ms=60_000, faults=True, append_mode="deferred"),
    # plus consumer crashes and restarts
    "crashes": Scope(advance_ms=(), max_time_ms=60_000, crashes=True),
    # deferred appends and partition moves
    "unload": Scope(advance_ms=(), max_time_ms=60_000, append_mode="deferred", unload=True),
}

#: what the gate explores (and the acceptance test): 3 members, profile scope "basic", this depth
CI_SCOPE, CI_MEMBERS, CI_DEPTH = "basic", 3, 10
#: the gate then explores this many levels deeper with symmetry, every client sending this client.id
SYMMETRY_MORE, SHARED_CLIENT_ID = 3, "consumer"


class UnknownScopeError(ValueError):
    pass


def get_scope(name: str) -> Scope:
    try:
        return SCOPES[name]
    except KeyError:
        raise UnknownScopeError(f"unknown exploration scope {name!r}; choose one of {', '.join(SCOPES)}.") from None

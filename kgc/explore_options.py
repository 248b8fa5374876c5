"""`kgc explore`'s options as a space to explore (``ExploreSpec``) and as a run (engine, search, workers), for a
new run and for ``--resume DIR``, which takes the whole space from the checkpoint.

The options that shape the space default to None in the parser, so a resumed run can tell what the user typed: an
option equal to the checkpoint's is accepted, one that differs is named in one sentence; ``--depth`` may go deeper
(the search continues to the new horizon).
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from explore.checkpoint import CHECKPOINT_FORMAT, Recorded, UnsafeCheckpoint, recorded
from explore.scopes import SCOPES, SHARED_CLIENT_ID, UnknownScopeError, get_scope
from explore.space import ExploreSpec
from harness.scope import Scope
from impl.mutants import get_mutant
from impl.profiles import DEFAULT_PROFILE, profile_info

#: the space's options and their defaults for a new run (a resumed one takes the checkpoint's)
SPACE_DEFAULTS = {"profile": DEFAULT_PROFILE, "members": 2, "depth": 10, "scope": "basic", "max_time_ms": None,
                  "mutant": None, "por": False, "no_reduce": False, "symmetry": False}
RUN_DEFAULTS = {"engine": "local", "search": "bfs"}


class ExploreUsageError(ValueError):
    """Bad arguments to kgc explore."""


def new_spec(args: argparse.Namespace) -> ExploreSpec:
    """The space a new run explores, from the options given (defaults for the others)."""
    for name, value in {**SPACE_DEFAULTS, **RUN_DEFAULTS}.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    profile_info(args.profile)   # a sibling runtime's release (4.1) too: explore/rules.py judges it
    if args.mutant is not None:
        mutant = get_mutant(args.mutant)
        if args.profile not in mutant.profiles:
            raise ExploreUsageError(f"mutant {args.mutant} applies to profile(s) {', '.join(mutant.profiles)}, "
                                    f"not {args.profile}; pass --profile {mutant.profiles[0]}.")
    scope = _scope(args.scope)
    if args.max_time_ms is not None:
        if args.max_time_ms < 0:
            raise ExploreUsageError(f"--max-time-ms must be >= 0, got {args.max_time_ms}.")
        scope = replace(scope, max_time_ms=args.max_time_ms)
    check_run(args)
    if args.symmetry and not scope.client_id:
        scope = replace(scope, client_id=SHARED_CLIENT_ID)
    try:
        return ExploreSpec(args.profile, args.members, args.depth, scope, mutant=args.mutant, por=args.por,
                           reduce=not args.no_reduce, symmetry=args.symmetry)
    except ValueError as exc:
        raise ExploreUsageError(str(exc)) from None


def _scope(name: str) -> Scope:
    try:
        return get_scope(name)
    except UnknownScopeError as exc:
        raise ExploreUsageError(str(exc)) from None


def check_run(args: argparse.Namespace) -> None:
    """The run's options (not the space's) fit together."""
    if args.checkpoint_every < 0:
        raise ExploreUsageError(f"--checkpoint-every must be >= 0 seconds, got {args.checkpoint_every:g}.")
    if args.por and args.search != "bfs":
        raise ExploreUsageError("--por works with --search bfs only (sleep sets need the BFS level rule).")
    if args.engine == "spark" and args.search != "bfs":
        raise ExploreUsageError("the Spark engine runs BFS only; drop --search or use --engine local.")
    if args.master and args.engine != "spark":
        raise ExploreUsageError("--master needs --engine spark.")
    if args.workers < 1:
        raise ExploreUsageError(f"--workers must be >= 1, got {args.workers}.")
    if args.workers > 1 and (args.engine != "local" or args.search != "bfs"):
        raise ExploreUsageError("--workers applies to the local engine's BFS; drop it for --engine spark, dfs or pct.")


def checkpoint_of(directory: Path) -> Recorded:
    """The checkpoint ``--resume DIR`` continues; one sentence when there is none or it is damaged."""
    if not directory.is_dir():
        raise ExploreUsageError(f"nothing to resume: {directory} is not a directory.")
    try:
        found = recorded(directory)
    except (UnsafeCheckpoint, ValueError, KeyError, TypeError) as exc:
        raise ExploreUsageError(f"the checkpoint in {directory} is damaged or not a {CHECKPOINT_FORMAT} file "
                                f"({type(exc).__name__}: {str(exc)[:120]}); delete it and start again with --out "
                                f"{directory}.") from None
    if found is None:
        raise ExploreUsageError(f"nothing to resume in {directory}: no checkpoint there (a run writes one with "
                                f"--out {directory}).")
    return found


def resumed_spec(args: argparse.Namespace, ck: Recorded, directory: Path) -> ExploreSpec:
    """The checkpoint's space (at a deeper ``--depth`` if given); an option given that differs is named."""
    spec = ck.spec
    given: dict[str, tuple[object, Callable[[Any], object], object]] = {
        "--profile": (args.profile, lambda v: profile_info(v).name, spec.profile),
        "--members": (args.members, int, spec.members),
        "--mutant": (args.mutant, str, spec.mutant),
        "--max-time-ms": (args.max_time_ms, int, spec.scope.max_time_ms),
        "--por": (args.por, bool, spec.por),
        "--no-reduce": (args.no_reduce, bool, not spec.reduce),
        "--symmetry": (args.symmetry, bool, spec.symmetry),
        "--engine": (args.engine, str, ck.engine),
        "--search": (args.search, str, "bfs"),
    }
    for option, (value, norm, recorded_value) in given.items():
        if value is not None and norm(value) != recorded_value:
            _conflict(option, value, recorded_value, directory)
    if args.scope is not None:
        named = _scope(args.scope)
        if replace(named, max_time_ms=spec.scope.max_time_ms, client_id=spec.scope.client_id) != spec.scope:
            _conflict("--scope", args.scope, _scope_name(spec.scope), directory)
    args.engine, args.search = ck.engine, "bfs"
    args.por, args.no_reduce, args.symmetry = spec.por, not spec.reduce, spec.symmetry
    check_run(args)
    return replace(spec, depth=args.depth) if args.depth is not None else spec


def _scope_name(scope: Scope) -> str:
    return next((name for name, s in SCOPES.items()
                 if replace(s, max_time_ms=scope.max_time_ms, client_id=scope.client_id) == scope), "another scope")


def _conflict(option: str, value: object, recorded_value: object, directory: Path) -> None:
    shown = "" if isinstance(value, bool) else f" {value}"
    was = ("on" if recorded_value else "off") if isinstance(recorded_value, bool) else \
        "none" if recorded_value is None else recorded_value
    raise ExploreUsageError(f"{option}{shown} conflicts with the checkpoint in {directory}, which has {option} "
                            f"{was}; --resume takes the explored space from its checkpoint, so drop {option} "
                            f"(only --depth may change: deeper continues the search).")


__all__ = ["ExploreUsageError", "check_run", "checkpoint_of", "new_spec", "resumed_spec"]

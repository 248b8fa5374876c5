"""`kgc graph`: build the abstract transition graph of a profile and scope; summarise, analyse, export, pin.

    kgc graph --profile 3.9 --members 2                 summary table and analysis counts
    kgc graph --profile 3.9 --members 2 --analyse       the full analysis report, with witness paths
    kgc graph --members 2 --format dot|graphml|json     the graph as text (stdout, or --out FILE)
    kgc graph --members 2 --format svg|png --out F      a picture (whole graph up to 2 members)
    kgc graph --members 4 --quotient --format png --out F   the group-state quotient picture
    kgc graph --pin                                     rebuild model/manifest.toml and show what changed

The model computes and returns data; this module only formats it (rich tables) and writes files.
Exit 0, or 2 with one sentence on stderr for bad input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from model.analysis import analyse
from model.export import quotient_to_dot, to_dot, to_graphml, to_json
from model.graph import build, group_counts
from model import manifest
from model.profiles import get_model_profile
from model.state import Scope

MAX_MEMBERS = 5
MAX_APPENDS = 4
TEXT_FORMATS = ("dot", "graphml", "json")
PICTURES = ("svg", "png")


class GraphUsageError(Exception):
    """Bad input: one sentence, exit 2."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "graph", help="build the abstract transition graph; summarise, analyse, export or pin it",
        description="Enumerate the abstract model's reachable graph for a profile and scope (member-slot symmetry "
                    "reduced), print its size and analyses, export it, or re-pin model/manifest.toml.")
    p.add_argument("--profile", default="3.9", help="model profile (default 3.9)")
    p.add_argument("--members", type=int, default=2, help=f"member slots, 1 to {MAX_MEMBERS} (default 2)")
    p.add_argument("--sync-appends", action="store_true", help="log appends complete at once (default: deferred)")
    p.add_argument("--no-initial-delay", action="store_true", help="group.initial.rebalance.delay.ms = 0")
    p.add_argument("--max-appends", type=int, default=2, help=f"pending appends kept, 0 to {MAX_APPENDS} (default 2)")
    p.add_argument("--format", choices=TEXT_FORMATS + PICTURES, help="export instead of the summary")
    p.add_argument("--out", metavar="FILE", help="write the export here (the format may come from the suffix)")
    p.add_argument("--quotient", action="store_true", help="export the group-state quotient (dot, svg or png)")
    p.add_argument("--analyse", action="store_true", help="print the full analysis report with witness paths")
    p.add_argument("--pin", action="store_true", help="rebuild every pinned graph and rewrite model/manifest.toml")
    return p


def run(args: argparse.Namespace, console: Console) -> int:
    try:
        if args.pin:
            return _pin(console)
        scope, fmt = _check(args)
        graph = build(scope, args.profile)
        if fmt is not None:
            return _export(graph, fmt, args, console)
        _summary(graph, console)
        if args.analyse:
            console.print(analyse(graph).render_text(paths=1), markup=False, highlight=False)
        return 0
    except GraphUsageError as exc:
        sys.stderr.write(f"kgc: error: {exc}\n")
        return 2


def _check(args: argparse.Namespace) -> tuple[Scope, str | None]:
    try:
        get_model_profile(args.profile)
    except ValueError as exc:
        raise GraphUsageError(str(exc)) from None
    if not 1 <= args.members <= MAX_MEMBERS:
        raise GraphUsageError(f"--members must be 1 to {MAX_MEMBERS} (the graph grows fast), not {args.members}.")
    if not 0 <= args.max_appends <= MAX_APPENDS:
        raise GraphUsageError(f"--max-appends must be 0 to {MAX_APPENDS}, not {args.max_appends}.")
    fmt = args.format
    if fmt is None and args.out:
        fmt = Path(args.out).suffix.lstrip(".").lower()
        if fmt not in TEXT_FORMATS + PICTURES:
            raise GraphUsageError(f"cannot tell the format of {args.out}: add --format "
                                  f"({', '.join(TEXT_FORMATS + PICTURES)}).")
    if fmt in PICTURES and not args.out:
        raise GraphUsageError(f"a {fmt} picture needs a file: add --out FILE.{fmt}.")
    if args.quotient and fmt not in (None, "dot") + PICTURES:
        raise GraphUsageError("the group-state quotient exports as dot, svg or png only.")
    if args.quotient and fmt is None:
        raise GraphUsageError("--quotient chooses what to export: add --format dot, svg or png.")
    scope = Scope(members=args.members, deferred_appends=not args.sync_appends,
                  initial_delay=not args.no_initial_delay, max_appends=args.max_appends)
    return scope, fmt


def _export(graph: Any, fmt: str, args: argparse.Namespace, console: Console) -> int:
    if fmt in PICTURES:
        from model.render import figure_bytes, graph_figure, quotient_figure   # matplotlib loads only for pictures
        try:
            data = figure_bytes(quotient_figure(graph) if args.quotient else graph_figure(graph), fmt)
        except ValueError as exc:
            raise GraphUsageError(str(exc)) from None
        _write(Path(args.out), data)
        console.print(f"{fmt} picture written to {args.out}")
        return 0
    text = {"dot": quotient_to_dot if args.quotient else to_dot, "graphml": to_graphml, "json": to_json}[fmt](graph)
    if args.out:
        _write(Path(args.out), text.encode("utf-8"))
        console.print(f"{fmt} written to {args.out}: {graph.number_of_nodes()} states, {graph.number_of_edges()} edges")
    else:
        sys.stdout.write(text)
    return 0


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise GraphUsageError(f"cannot write {path}: {exc.strerror or exc}.") from None


def _summary(graph: Any, console: Console) -> None:
    g, scope = graph.graph, graph.graph["scope"]
    table = Table("states", "edges", "depth", "truncated", *[s for s in group_counts(graph)], header_style="bold",
                  title=f"model graph — profile {g['profile']}, {scope.members} member slot(s), "
                        f"{'deferred' if scope.deferred_appends else 'sync'} appends, max_appends {scope.max_appends}",
                  title_justify="left")
    table.add_row(str(g["distinct_states"]), str(g["edges"]), str(g["depth"]), "yes" if g["truncated"] else "no",
                  *[str(n) for n in group_counts(graph).values()])
    console.print(table)
    report = analyse(graph, limit=1)
    found = Table("analysis", "result", header_style="bold", title="analyses (kgc graph --analyse for paths)",
                  title_justify="left")
    found.add_row("deadlocks (no action changes the state)", str(len(report.dead)))
    found.add_row("timer-only states", str(len(report.timer_only)))
    found.add_row("states that cannot reach Stable/Empty", str(report.cannot_settle_count))
    for assumption, cycles in report.cycles:
        found.add_row(f"fair non-progress SCCs, {assumption.name}",
                      f"{len(cycles)} ({sum(len(c.nodes) for c in cycles)} states)" if cycles else "0")
    found.add_row("unreachable actions", ", ".join(report.unreachable) or "none")
    found.add_row("actions that never change the state", ", ".join(report.effect_free) or "none")
    console.print(found)


def _pin(console: Console) -> int:
    path = manifest.MANIFEST
    changed = manifest.write_manifest(path)
    if not changed:
        console.print(f"{path} rewritten; every pinned number is unchanged.")
        return 0
    table = Table("row", "was", "now", header_style="bold", title=f"changed rows of {path} (review the diff)",
                  title_justify="left")
    for name, old, new in changed:
        table.add_row(name, ", ".join(f"{k}={v}" for k, v in old.items()) or "(new)",
                      ", ".join(f"{k}={v}" for k, v in new.items()))
    console.print(table)
    return 0

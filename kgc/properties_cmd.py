"""`kgc properties`: the property catalog as a table (name, kind, level, claim, source, profiles)."""
from __future__ import annotations

import argparse
import json

from rich.console import Console

from impl.profiles import get_profile
from properties.catalog import CATALOG, KINDS, LEVELS
from reports.listing import Column, print_listing


def add_parser(sub: argparse._SubParsersAction) -> None:   # type: ignore[type-arg]
    p = sub.add_parser("properties", help="list the property catalog",
                       description="List the one property catalog every checker evaluates.")
    p.add_argument("--profile", help="only the properties that apply to this profile")
    p.add_argument("--kind", choices=KINDS, help="only this kind")
    p.add_argument("--level", choices=LEVELS, help="only concrete or abstract properties")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace, console: Console) -> int:
    if args.profile is not None:
        get_profile(args.profile)   # unknown → UnknownProfileError, one sentence, exit 2
    props = [p for p in CATALOG.values()
             if (args.profile is None or p.applies(args.profile)) and args.kind in (None, p.kind)
             and args.level in (None, p.level)]
    if args.json:
        console.print_json(json.dumps([{"name": p.name, "kind": p.kind, "level": p.level, "claim": p.claim,
                                        "source": p.source, "profiles": list(p.applies_to), "z3": p.z3}
                                       for p in props]))
        return 0
    print_listing(console, (Column("name", whole=True), Column("kind"), Column("level"), Column("claim"),
                            Column("source"), Column("profiles")),
                  [(p.name, p.kind, p.level + (" + z3" if p.z3 else ""), p.claim, p.source, ", ".join(p.applies_to))
                   for p in props], title=f"property catalog — {len(props)} of {len(CATALOG)} properties")
    return 0

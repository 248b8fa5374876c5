"""The `kgc` command line: scenarios, replay and profiles (exit 0 ok, 1 a failed check, 2 bad usage)."""
from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
from enum import Enum
from pathlib import Path
from typing import Mapping, Sequence

from rich.console import Console
from rich.table import Table

from core.trace import Trace, TraceFormatError
from core.types import Errors, GroupState
from harness.replay import ReplayDivergence, replay
from harness.scenarios import SCENARIOS, ScenarioError, UnknownScenarioError, get_scenario, run_scenario
from impl.mutants import UnknownMutantError
from kgc import check_cmd, conform_cmd, explore_cmd, findings_cmd, graph_cmd, properties_cmd, prove_cmd, serve_cmd
from impl.profiles import PROFILES, RUNTIME_PROFILES, Profile, UnknownProfileError, get_profile
from model.releases import FACTS, fact
from impl.static import StaticRules
from kgc.hints import replay_hint
from kgc.interrupts import Interrupted, interruptible
from kgc.outputs import OutputError, writable_file
from reports.listing import Column, print_listing
from reports.terminal import format_ms, print_trace

VERSION = "0.1.0"


class UsageError(Exception):
    """Bad input from the user: one sentence, exit 2."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kgc", description="kgc — verification suite for Kafka's classic consumer-group coordinator.",
        epilog="Exit status: 0 success, 1 a check failed (e.g. a replay diverged), 2 bad usage.")
    p.add_argument("--version", action="version", version=f"kgc {VERSION}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sc = sub.add_parser("scenario", help="run a worked example of the seed documents and show its trace",
                        description="Run a named scenario (the seeds' worked examples) on a profile and print "
                                    "its trace as a table.")
    sc.add_argument("name", nargs="?", help="scenario name (see --list)")
    sc.add_argument("--list", action="store_true", help="list the scenarios and exit")
    sc.add_argument("--all", action="store_true", help="run every scenario on every profile it applies to")
    sc.add_argument("--profile", help="release profile (default: every profile the scenario applies to)")
    sc.add_argument("--out", metavar="FILE", help="also write the trace as JSON (one scenario and profile only)")
    sc.add_argument("--tables", action="store_true", help="with --all: print every trace table, not a summary")
    rp = sub.add_parser("replay", help="re-execute a trace file and fail loudly on any divergence",
                        description="Re-execute a kgc trace (JSON) step by step and compare every recorded field.")
    rp.add_argument("file", help="trace file written by kgc (schema kgc-trace/1)")
    rp.add_argument("--quiet", action="store_true", help="print only the verdict")
    sub.add_parser("profiles", help="list the Kafka release profiles", description="List the release profiles.")
    graph_cmd.add_parser(sub)
    properties_cmd.add_parser(sub)
    check_cmd.add_parser(sub)
    findings_cmd.add_parser(sub)
    prove_cmd.add_parser(sub)
    explore_cmd.add_parser(sub)
    serve_cmd.add_parser(sub)
    conform_cmd.add_parser(sub)
    return p


def _profiles_for(name: str | None, scenario_profiles: Sequence[str]) -> list[str]:
    if name is None:
        return list(scenario_profiles)
    get_profile(name)   # UnknownProfileError names the known ones
    if name not in scenario_profiles:
        raise UsageError(f"this scenario applies to profiles {', '.join(scenario_profiles)}, not {name}.")
    return [name]


def _cmd_scenario(args: argparse.Namespace, console: Console) -> int:
    if args.list:
        print_listing(console, (Column("scenario", whole=True), Column("profiles"), Column("what it shows"),
                                Column("source")),
                      [(s.name, ", ".join(s.profiles), s.title, s.source) for s in SCENARIOS])
        return 0
    if args.all:
        return _run_all(args, console)
    if not args.name:
        raise UsageError("name a scenario, or use --list to see them or --all to run them all.")
    scenario = get_scenario(args.name)
    profiles = _profiles_for(args.profile, scenario.profiles)
    if args.out and len(profiles) != 1:
        raise UsageError("--out needs a single profile: add --profile.")
    if args.out:
        writable_file(Path(args.out), "--out")
    for profile in profiles:
        trace = run_scenario(scenario, profile).trace(name=scenario.name)
        console.print(f"[bold]{scenario.title}[/bold]\n{scenario.source}; {scenario.roles}")
        print_trace(trace, console)
        if args.out:
            Path(args.out).write_text(trace.dumps(), encoding="utf-8")
            console.print(f"trace written to {args.out}; re-run it with: {replay_hint(args.out)}", highlight=False)
    return 0


def _run_all(args: argparse.Namespace, console: Console) -> int:
    table = Table("scenario", "profile", "steps", "clock", "group states", "end", header_style="bold",
                  title="seed scenarios", title_justify="left")
    if args.profile is not None:
        get_profile(args.profile)
    for scenario in SCENARIOS:
        for profile in [p for p in scenario.profiles if args.profile in (None, p)]:
            world = run_scenario(scenario, profile)
            trace = world.trace(name=scenario.name)
            if args.tables:
                print_trace(trace, console)
            path = [world.profile.state_name(world.profile.initial_state)]
            path += [world.profile.state_name(GroupState(t)) for _g, _f, t in world.coord.transitions]
            view = world.coord.describe(world.group_id)
            n = len(view.members) if view else 0
            end = f"gen {view.generation_id}, {n} member{'s' if n != 1 else ''}" if view else "group removed"
            table.add_row(scenario.name, profile, str(len(trace.steps)), format_ms(world.now_ms),
                          " → ".join(path), end)
    console.print(table)
    return 0


def _cmd_replay(args: argparse.Namespace, console: Console) -> int:
    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read trace file {args.file}: {exc.strerror or exc}.") from None
    trace = Trace.loads(text, source=args.file)
    try:
        replay(trace)
    except ReplayDivergence as exc:
        console.print(f"[bold red]replay diverged[/bold red]: {exc}")
        return 1
    if not args.quiet:
        print_trace(trace, console)
    console.print(f"[green]replay ok[/green]: {len(trace.steps)} steps of {args.file} re-executed identically "
                  f"on profile {trace.profile}.")
    return 0


def _cmd_profiles(console: Console) -> int:
    table = Table("profile", "release", header_style="bold")
    for p in PROFILES.values():
        table.add_row(p.name, p.description)
    for r in RUNTIME_PROFILES.values():
        table.add_row(r.name, f"{r.description}; the world drives it, the model and the catalog do not judge it yet")
    console.print(table)
    profiles = list(PROFILES.values())
    switches = Table(header_style="bold", title="behaviour switches (impl/profiles.py)")
    switches.add_column("switch", no_wrap=True)
    for p in profiles:
        switches.add_column(p.name, overflow="fold")
    for name in (f.name for f in dataclasses.fields(Profile)):
        if name == "static_membership":   # a value of rules (impl/static.py): one row per rule
            for rule in (f.name for f in dataclasses.fields(StaticRules)):
                switches.add_row(f"static: {rule}", *(
                    "no KIP-345" if p.static_membership is None
                    else _switch_text(p, getattr(p.static_membership, rule)) for p in profiles))
        elif name not in ("name", "description"):
            switches.add_row(name, *(_switch_text(p, getattr(p, name)) for p in profiles))
    console.print(switches)
    for r in RUNTIME_PROFILES.values():   # a sibling runtime has no switches: the release facts that set it apart
        facts = Table("fact", "since", "claim", header_style="bold",
                      title=f"profile {r.name}: release facts of 4.x (model/releases.py)")
        for f in FACTS.values():
            if fact(f.name, r.name) and not any(fact(f.name, p) for p in PROFILES):
                facts.add_row(f.name, f.since, f.claim)
        console.print(facts)
    return 0


def _switch_text(profile: Profile, value: object) -> str:
    """One profile switch as short text: states by this release's names, (error, reset) pairs as 'ERROR+reset'."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Enum):
        return value.name if isinstance(value, Errors) else profile.state_name(value)  # type: ignore[arg-type]
    if isinstance(value, Mapping) and all(isinstance(v, tuple) and len(v) == 2 for v in value.values()):
        return " ".join(f"{profile.state_name(s)}:{e.name}{'+reset' if r else ''}" for s, (e, r) in value.items())
    if isinstance(value, Mapping) and value and all(isinstance(v, str) for v in value.values()):   # state_names
        return ", ".join(f"{s.value}={name}" for s, name in value.items())
    if isinstance(value, Mapping):   # previous_states: the states this release has
        return ", ".join(profile.state_name(s) for s in profile.states) if value else "-"
    return str(value)


#: the width of kgc's output off a terminal (a log, a pipe) when COLUMNS does not say
LOG_WIDTH = 160


def _width() -> int | None:
    """The console's width: the terminal's own on a terminal (rich reads it, COLUMNS first); off one, COLUMNS when it
    is a positive number, else ``LOG_WIDTH``."""
    if sys.stdout.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else LOG_WIDTH


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    console = Console(width=_width(), soft_wrap=True)
    try:
        with interruptible():
            return _dispatch(parser, args, console)
    except (Interrupted, KeyboardInterrupt) as exc:
        # KeyboardInterrupt: a library that installs its own SIGINT handler (PySpark's context does)
        stop = exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)
        sys.stderr.write(f"kgc {args.command or ''}: interrupted by {stop.name}"
                         + (f"; {stop.kept}" if stop.kept else "") + ".\n")
        return stop.exit_status


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, console: Console) -> int:
    try:
        if args.command == "scenario":
            return _cmd_scenario(args, console)
        if args.command == "replay":
            return _cmd_replay(args, console)
        if args.command == "profiles":
            return _cmd_profiles(console)
        if args.command == "graph":
            return graph_cmd.run(args, console)
        if args.command == "properties":
            return properties_cmd.run(args, console)
        if args.command == "check":
            return check_cmd.run(args, console)
        if args.command == "findings":
            return findings_cmd.run(args, console)
        if args.command == "prove":
            return prove_cmd.run(args, console)
        if args.command == "explore":
            return explore_cmd.run(args, console)
        if args.command == "serve":
            return serve_cmd.run(args, console)
        if args.command == "conform":
            return conform_cmd.run(args, console)
        parser.print_help()
        return 2
    except (UsageError, OutputError, UnknownProfileError, UnknownScenarioError, UnknownMutantError, TraceFormatError,
            check_cmd.CheckUsageError, findings_cmd.FindingsUsageError, prove_cmd.ProveUsageError,
            explore_cmd.ExploreUsageError, serve_cmd.ServeUsageError, conform_cmd.ConformUsageError) as exc:
        sys.stderr.write(f"kgc: error: {exc}\n")
        return 2
    except ScenarioError as exc:
        sys.stderr.write(f"kgc: scenario failed: {exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""`kgc serve`: the reference coordinator behind the Kafka protocol on 127.0.0.1, checked live.

Real consumers form groups against it; every group request and every timer firing is a checked step
(the catalog and refinement, kgc.runs.CheckedRun). A violation is printed the moment it happens; when
the server stops (Ctrl-C, SIGTERM or --duration) the session's trace is written (--trace) and, for a
violation, the counterexample — shrunk by replay, since a served trace replays — with every report
`kgc check` writes. A release only modelled so far (4.1) is checked by the catalog, its runtime rules and the
state refinement, not by the labelled refinement; serve says so in one line. Exit 0 clean, 1 a violation, 2 bad
usage.
"""
from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from pathlib import Path

from rich.console import Console

from core.trace import Violation
from impl.mutants import get_mutant
from impl.profiles import PROFILES, SIBLING_RUNTIMES, UnknownProfileError, get_profile, sibling_runtime
from kgc.hints import replay_hint
from kgc.outputs import writable_dir, writable_file
from kgc.reporting import violation_report, write_reports
from kgc.runs import CheckedRun, Found, shrink
from model.releases import RUNNABLE
from properties.catalog import CONCRETE_PROFILES
from wire.server import KafkaServer
from wire.session import LiveSession

DEFAULT_OUT = Path(".kgc-out/serve")
SHRINK_SECONDS = 20.0


class ServeUsageError(ValueError):
    """Bad arguments to kgc serve."""


def add_parser(sub: argparse._SubParsersAction) -> None:   # type: ignore[type-arg]
    p = sub.add_parser("serve", help="the reference coordinator on the Kafka wire, for real clients, checked live",
                       description="Serve a one-node Kafka look-alike on 127.0.0.1 whose group coordinator is the "
                                   "reference (or a seeded mutant); every step is checked by the catalog and "
                                   "refinement while real consumers use it.",
                       epilog="Exit status: 0 no violation, 1 a violation (reports written to --out), 2 bad usage.")
    p.add_argument("--profile", default="3.9", help="release profile (default 3.9)")
    p.add_argument("--port", type=int, default=9092, help="port on 127.0.0.1 (default 9092; 0 picks a free one)")
    p.add_argument("--topics", default="kgc:6", metavar="T:P,…",
                   help="topics and their partition counts (default kgc:6)")
    p.add_argument("--group", help="the group to check (default: the first group a client names)")
    p.add_argument("--mutant", help="serve a seeded mutant instead of the reference (see kgc check --list-mutants)")
    p.add_argument("--trace", type=Path, metavar="FILE", help="write the session's trace here when the server stops")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"report directory (default {DEFAULT_OUT})")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="stop by itself after this long")


def parse_topics(text: str) -> dict[str, int]:
    """``t:3,u:1`` -> {"t": 3, "u": 1}; anything else is one sentence of usage error."""
    topics: dict[str, int] = {}
    for item in (p.strip() for p in text.split(",") if p.strip()):
        name, _, count = item.partition(":")
        if not name or not count.isdigit() or int(count) < 1:
            raise ServeUsageError(f"--topics takes NAME:PARTITIONS pairs separated by commas (e.g. kgc:6), "
                                  f"not {item!r}.")
        topics[name] = int(count)
    if not topics:
        raise ServeUsageError("--topics needs at least one NAME:PARTITIONS pair (e.g. kgc:6).")
    return topics


def known_profile(name: str) -> str:
    """``name`` if impl serves it — a profile of switches or a sibling runtime's — else UnknownProfileError
    naming every profile it serves."""
    if sibling_runtime(name) is not None:
        return name
    try:
        return get_profile(name).name
    except UnknownProfileError:
        known = ", ".join(sorted({*PROFILES, *SIBLING_RUNTIMES}))
        raise UnknownProfileError(f"unknown profile {name!r}; known profiles: {known}.") from None


def judged(profile: str) -> bool:
    """Whether kgc.runs.CheckedRun judges ``profile``: the catalog with the labelled refinement (a runnable release),
    or — a release only modelled so far (4.1) — the catalog, the runtime's rules and the state refinement."""
    return profile in CONCRETE_PROFILES


def unchecked_reason(profile: str, session: LiveSession) -> str | None:
    """Why a session of ``profile`` runs unchecked (None: every step is checked). The seam issue 25 phase B
    closes: once the harness drives a profile its sessions are recorded, once the model judges it they are
    checked — decided by capability (wire/direct.py ``world_runs``, model/releases.py), not by name."""
    if not session.recorded:
        return (f"the harness does not drive profile {profile} yet (issue 25 phase B): the session is served by "
                "the reference runtime directly, unchecked and unrecorded")
    if not judged(profile):
        return (f"the model and the labelled refinement do not judge profile {profile} yet (issue 25 phase B): "
                "the session is recorded but unchecked")
    return None


def _check_args(args: argparse.Namespace) -> dict[str, int]:
    profile = known_profile(args.profile)             # UnknownProfileError names the known ones
    if args.mutant is not None and profile not in get_mutant(args.mutant).profiles:
        raise ServeUsageError(f"mutant {args.mutant} applies to profile(s) "
                              f"{', '.join(get_mutant(args.mutant).profiles)}, not {profile}.")
    if not 0 <= args.port <= 65535:
        raise ServeUsageError(f"--port must be between 0 and 65535, got {args.port}.")
    if args.duration is not None and args.duration <= 0:
        raise ServeUsageError(f"--duration must be positive, got {args.duration:g}.")
    topics = parse_topics(args.topics)
    if args.trace is not None:          # checked now: a session is lost if its trace cannot be written at the end
        writable_file(args.trace, "--trace")
    writable_dir(args.out, "--out")
    return topics


def run(args: argparse.Namespace, console: Console) -> int:
    topics = _check_args(args)

    def live(v: Violation) -> None:
        console.print(f"[bold red]VIOLATION[/] at step {v.step}: {v.property} — {v.message}", highlight=False)

    session = LiveSession(args.profile, mutant=args.mutant, group_id=args.group,
                          checked=CheckedRun if judged(args.profile) else None, on_violation=live)
    if args.trace is not None and not session.recorded:
        raise ServeUsageError(f"--trace: sessions of profile {args.profile} are not recorded until the harness "
                              "drives that profile (issue 25 phase B); run without --trace.")
    try:
        port = asyncio.run(_serve(session, topics, args, console))
    except OSError as exc:
        raise ServeUsageError(f"cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}); "
                              "choose another --port (0 picks a free one).") from None
    return _finish(session, args, console, port)


async def _serve(session: LiveSession, topics: dict[str, int], args: argparse.Namespace, console: Console) -> int:
    server = KafkaServer(session, topics, port=args.port, host="127.0.0.1")
    port = await server.start()
    who = f"mutant {args.mutant}" if args.mutant else "the reference"
    reason = unchecked_reason(args.profile, session)
    checked = "every step is checked" if reason is None else "unchecked"
    console.print(f"kgc serve: {who}, profile {args.profile}, on 127.0.0.1:{port} "
                  f"(topics {', '.join(f'{t}:{n}' for t, n in topics.items())}); {checked}. "
                  "Ctrl-C stops.", highlight=False)
    if reason is not None:
        console.print(f"kgc serve: profile {args.profile} runs unchecked: {reason}.", highlight=False)
    elif args.profile not in RUNNABLE:
        console.print(f"kgc serve: profile {args.profile} is checked by the catalog, its runtime rules and the state "
                      "refinement; the labelled refinement does not judge it yet (README \"Kafka 4.x\").",
                      highlight=False)
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        if args.duration is None:
            await stop.wait()
        else:
            try:
                await asyncio.wait_for(stop.wait(), timeout=args.duration)
            except asyncio.TimeoutError:
                pass
    finally:
        await server.stop()
    return port


def _finish(session: LiveSession, args: argparse.Namespace, console: Console, port: int) -> int:
    """Write each group's trace; report each group's counterexample. 1 if any group saw a violation."""
    groups = list(session.worlds) or [session.group_id or ""]
    several = len(groups) > 1
    status, steps = 0, 0
    for group in groups:
        steps += session.steps(group)
        if args.trace is not None:
            trace = session.trace(group)
            path = args.trace if group == groups[0] else args.trace.with_name(f"{args.trace.stem}.{group}.json")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(trace.dumps(), encoding="utf-8")
            console.print(f"trace of group {group!r}: {path} ({len(trace.steps)} steps; {replay_hint(path)})",
                          highlight=False)
        runner = session.runners.get(group)
        found = runner.result("serve") if isinstance(runner, CheckedRun) else None
        if found is not None:
            status = _report(found, args.out / group if several else args.out, console)
    if status == 0:
        what = "checked steps" if unchecked_reason(args.profile, session) is None else "steps, unchecked,"
        console.print(f"kgc serve: stopped after {steps} {what} in {len(session.worlds)} group(s); "
                      "no violation.", highlight=False)
    return status


def _report(found: Found, out: Path, console: Console) -> int:
    deadline = time.monotonic() + SHRINK_SECONDS
    shrunk = shrink(found, lambda: time.monotonic() > deadline)
    report = violation_report(shrunk.trace, shrunk.violation, shrunk_by="delta debugging of the served session")
    files = write_reports(report, out)
    console.print(f"[bold red]kgc serve: {found.violation.property} violated[/] "
                  f"(counterexample {len(shrunk.trace.steps)} steps, from {len(found.trace.steps)} served); "
                  f"reports in {out}: {files['markdown'].name}, {files['html'].name}, "
                  f"{files['trace'].name}, {files['test'].name}", highlight=False)
    return 1

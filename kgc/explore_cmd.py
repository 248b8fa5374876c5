"""`kgc explore`: every ordering of a bounded world, locally or on Spark; reports for each violated property.

Exit status: 0 no violation, 1 a violation (reports written under --out), 2 bad usage.
"""
from __future__ import annotations

import argparse
import signal
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from explore.local import CHECKPOINT, CheckpointError, bfs, dfs
from explore.local import Progress as Tick
from explore.pct import pct
from explore.result import ExploreResult
from explore.scopes import SCOPES, SHARED_CLIENT_ID
from explore.space import ExploreSpec
from explore.traces import counterexample
from explore.workers import WorkerFailed
from impl.mutants import get_mutant
from kgc.explore_options import ExploreUsageError, checkpoint_of, new_spec, resumed_spec
from kgc.hints import kgc_command, replay_hint, shown_path
from kgc.interrupts import Interrupted
from kgc.outputs import claim, holding, named, said_removed, writable_dir
from kgc.progress import PhaseLog
from kgc.reporting import violation_report, write_reports
from reports.terminal import print_violation

DEFAULT_OUT = Path(".kgc-out/explore")


def add_parser(sub: argparse._SubParsersAction) -> None:   # type: ignore[type-arg]
    p = sub.add_parser(
        "explore", help="explore every ordering of a bounded world (BFS/DFS/PCT, local or Spark)",
        description="Breadth-first (shortest counterexamples), depth-first or PCT-randomised exploration of every "
                    "ordering of joins, syncs, heartbeats, deliveries, timer firings and log appends, with the whole "
                    "property catalog and refinement checked on every step (on a release the model does not judge "
                    "yet, 4.1: its runtime rules).",
        epilog="Exit status: 0 no violation, 1 a violation (reports under --out), 2 bad usage. "
               "Examples: kgc explore --members 3 --depth 10;  kgc explore --mutant generation-not-bumped --depth 8; "
               "kgc explore --engine spark --master spark://127.0.0.1:7077 --out run1;  kgc explore --resume run1")
    # the space's options default to None: --resume takes them from the checkpoint (kgc/explore_options.py)
    p.add_argument("--profile", help="release profile (default 3.9)")
    p.add_argument("--members", type=int, help="number of consumers (default 2)")
    p.add_argument("--depth", type=int, help="depth horizon: steps from the initial state (default 10; with "
                                             "--resume, the checkpoint's unless given deeper)")
    p.add_argument("--scope", help=f"environment: {', '.join(SCOPES)} (default basic)")
    p.add_argument("--max-time-ms", type=int, help="clock horizon (default: the scope's, 60000)")
    p.add_argument("--mutant", help="explore a seeded mutant instead of the reference (kgc check --list-mutants)")
    p.add_argument("--search", choices=("bfs", "dfs", "pct"),
                   help="bfs: shortest counterexamples (default); dfs: depth-first; pct: randomised schedules")
    p.add_argument("--por", action="store_true", default=None, help="partial-order reduction (sleep sets; BFS only)")
    p.add_argument("--no-reduce", action="store_true", default=None,
                   help="deduplicate by the raw snapshot, not its canonical form (history counters relabelled)")
    p.add_argument("--symmetry", action="store_true", default=None,
                   help="one state per orbit under exchanges of interchangeable clients (every client sends "
                        f"client.id {SHARED_CLIENT_ID!r}: member ids then name the join, not the client); "
                        "about 5.8x fewer states with 3 members")
    p.add_argument("--workers", type=int, default=1,
                   help="local BFS: expand each level in this many processes (default 1; same results)")
    p.add_argument("--engine", choices=("local", "spark"), help="local (default) or spark (BFS)")
    p.add_argument("--master", help="Spark master URL (default: SPARK_MASTER, else local[*])")
    p.add_argument("--partitions", type=int, help="Spark partitions (default: the cluster's parallelism)")
    p.add_argument("--out", type=Path, help=f"report and checkpoint directory (default {DEFAULT_OUT})")
    p.add_argument("--resume", type=Path, metavar="DIR",
                   help="continue the run checkpointed in DIR, with the options it recorded (a deeper --depth "
                        "continues further)")
    p.add_argument("--checkpoint-every", type=float, default=30.0, metavar="SECONDS",
                   help="local engine: write a checkpoint at the end of a level at most this often (default 30); "
                        "the Spark engine writes every level")
    p.add_argument("--runs", type=int, default=200, help="pct: number of schedules (default 200)")
    p.add_argument("--length", type=int, default=60, help="pct: steps per schedule (default 60)")
    p.add_argument("--bug-depth", type=int, default=3, help="pct: ordering constraints d (default 3)")
    p.add_argument("--seed", type=int, default=0, help="pct: seed (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


class _Saved:
    """Which level the local engine's checkpoint file holds, followed from the progress ticks (the file itself can
    be hundreds of MB): it is written, if at all, just after the tick that ends a level."""

    def __init__(self, out: Path, level: int | None) -> None:
        self.path = out / CHECKPOINT
        self.level, self.completed = level, level
        self.mtime = self._mtime()

    def _mtime(self) -> int | None:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return None

    def refresh(self) -> None:
        mtime = self._mtime()
        if mtime != self.mtime:
            self.mtime, self.level = mtime, self.completed

    def tick(self, p: Tick) -> None:
        self.refresh()
        if p.level_done == p.level_total:
            self.completed = p.level


def _progress_bar(console: Console, enabled: bool) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TextColumn("level ETA"),
                    TimeRemainingColumn(), console=console, disable=not enabled, transient=True)


LOG_EVERY_S = 15.0   # dfs and pct have no levels: in a log, a progress line at most this often


class _Ticker:
    """The search's progress: a bar on a terminal; in a log (kgc.progress), a line per BFS level and one at most
    every LOG_EVERY_S for dfs and pct."""

    def __init__(self, args: argparse.Namespace, console: Console, saved: _Saved) -> None:
        self.args, self.saved = args, saved
        shown = not args.no_progress
        self.bar = _progress_bar(console, shown and console.is_terminal)
        self.log = PhaseLog(console, "kgc explore: starting") if shown and not console.is_terminal else None
        self.task = self.bar.add_task("exploring", total=1, stats="")
        self.last_line = 0.0

    def stats(self, p: Tick) -> str:
        rate = p.states / p.elapsed if p.elapsed > 0 else 0.0
        frontier = f"frontier {p.level_total:,}  " if self.args.search != "pct" else ""
        return f"{frontier}{p.states:,} states  {p.edges:,} edges  {rate:,.0f} states/s"

    def __call__(self, p: Tick) -> None:
        self.saved.tick(p)
        what = "schedules" if self.args.search == "pct" else f"level {p.level}"
        self.bar.update(self.task, description=what, total=max(p.level_total, 1), completed=p.level_done,
                        stats=self.stats(p))
        if self.log is None:
            return
        if self.args.search == "bfs":
            if p.level_done == p.level_total:
                self.log.event(f"kgc explore: level {p.level} done, {p.states:,} states, {p.edges:,} edges")
        elif self.log.elapsed - self.last_line >= LOG_EVERY_S:
            self.last_line = self.log.elapsed
            done = f"{p.level_done:,} of {p.level_total:,} schedules, " if self.args.search == "pct" else ""
            self.log.event(f"kgc explore: {done}{p.states:,} states, {p.edges:,} edges")

    def note(self, text: str) -> None:
        self.bar.update(self.task, description=text, stats="")
        if self.log is not None:
            self.log.event(f"kgc explore: {text}")


def _run(spec: ExploreSpec, args: argparse.Namespace, out: Path, resume: bool, console: Console, saved: _Saved
         ) -> ExploreResult:
    tick = _Ticker(args, console, saved)
    with tick.bar:
        if args.search == "dfs":
            return dfs(spec, progress=tick)
        if args.search == "pct":
            return pct(spec, args.runs, args.length, args.bug_depth, args.seed, progress=tick)
        if args.engine == "local":
            return bfs(spec, out, resume=resume, progress=tick, checkpoint_every_s=args.checkpoint_every,
                       workers=args.workers)
        from explore.spark.engine import bfs as spark_bfs
        from explore.spark.session import SparkUnavailable, spark_session
        tick.note("starting Spark")
        try:
            session, startup, owned = spark_session(args.master, args.partitions)
        except SparkUnavailable as exc:
            raise ExploreUsageError(str(exc)) from None
        try:
            return spark_bfs(spec, session, args.partitions, out, resume=resume, progress=tick, startup_seconds=startup)
        finally:
            if owned:
                session.stop()


def _kept(args: argparse.Namespace, out: Path, saved: _Saved) -> str:
    """What an interrupted run leaves: the newest checkpoint, from which --resume continues."""
    if args.search != "bfs":
        return f"a {args.search} search keeps no checkpoint, so nothing was kept"
    if args.engine == "spark":
        from explore.spark.parquet import last_complete_level
        level = last_complete_level(out)
    else:
        saved.refresh()
        level = saved.level
    if level is None:
        every = "every level" if args.engine == "spark" else f"at most every {args.checkpoint_every:g} s"
        return f"no checkpoint had been written yet (one is written {every}), so there is nothing to resume"
    return (f"the checkpoint of level {level} in {out} is kept; continue with: "
            f"{kgc_command()} explore --resume {shown_path(out)}")


def _summary(result: ExploreResult) -> Table:
    verdict = "[red]VIOLATIONS[/red]" if result.violations else "[green]no violation[/green]"
    spec = result.spec
    horizon = (f"{result.extra.get('runs')} schedules of ≤ {result.extra.get('length')} steps" if result.search == "pct"
               else f"depth {spec.depth}")
    title = (f"kgc explore — {result.search} on {result.engine}, profile {spec.profile}, {spec.members} members, "
             f"{horizon}" + (f", mutant {spec.mutant}" if spec.mutant else "") + f": {verdict}")
    table = Table("measure", "value", header_style="bold", title=title, title_justify="left")
    rows = [("distinct states", f"{result.states:,}"), ("edges", f"{result.edges:,}")]
    if spec.por:
        rows.append(("edges pruned by POR", f"{result.pruned:,}"))
    if spec.symmetry:
        rows.append(("symmetry", f"one state per orbit of client exchanges (client.id {spec.scope.client_id!r})"))
    if result.levels:
        rows.append(("new states per level", " ".join(map(str, result.levels))))
        rows.append(("space exhausted", "yes" if result.complete else f"no (depth horizon {spec.depth})"))
    if result.model_states:
        rows.append(("abstract graph coverage",
                     f"{result.covered_states} of {result.model_states} states "
                     f"({100 * result.covered_states / result.model_states:.1f}%), {result.covered_edges} of "
                     f"{result.model_edges} edges ({100 * result.covered_edges / max(result.model_edges, 1):.1f}%)"))
    if result.coverage_collected:
        rows += [("abstract states / edges reached", f"{result.abstract_states} / {result.abstract_edges}"),
                 ("sometimes-witnesses reached", str(len(result.witnesses)))]
    else:   # explore/rules.py: a release the model does not judge yet (4.1)
        rows += [("edges judged by", result.judged_by),
                 ("abstract coverage", "not collected: the model does not judge this release yet")]
    rows += [("seconds", f"{result.seconds:.1f}" + (f" (+{result.startup_seconds:.1f} Spark start-up)"
                                                     if result.startup_seconds else "")),
             ("states/s", f"{result.states_per_second:,.0f}")]
    if result.resumed_from_level is not None:
        rows.append(("resumed from level", str(result.resumed_from_level)))
    for name, value in rows:
        table.add_row(name, value)
    return table


def _violations(result: ExploreResult) -> Table:
    table = Table("property", "violating edges", "shortest counterexample (steps)", header_style="bold")
    for name, found in sorted(result.violations.items(), key=lambda kv: (len(kv[1].path), kv[0])):
        table.add_row(name, f"{found.count:,}", str(len(found.path)))
    return table


def run(args: argparse.Namespace, console: Console) -> int:
    resume = args.resume is not None
    if resume and args.out is not None and args.out != args.resume:
        raise ExploreUsageError("--resume DIR continues in DIR; drop --out or give the same directory.")
    out: Path = args.resume if resume else (args.out or DEFAULT_OUT)
    ck = checkpoint_of(out) if resume else None
    spec = resumed_spec(args, ck, out) if ck is not None else new_spec(args)
    if args.engine == "spark":        # PySpark and Java, before any work (bin/kgc no longer checks Java)
        from explore.spark.session import SparkUnavailable, check_available
        try:
            check_available()
        except SparkUnavailable as exc:
            raise ExploreUsageError(str(exc)) from None
    writable_dir(out, "--resume" if resume else "--out")
    # what an earlier run wrote goes (its summary and reports; its checkpoint too unless this run resumes it): the
    # directory then holds this run's results only
    stale = [named("explore.json"), holding("counterexample.json", "violation.json")]
    if not resume:
        stale.append(named(CHECKPOINT, CHECKPOINT + ".tmp", "level-*"))
    with claim(out, "kgc explore", *stale) as removed:
        said_removed("kgc explore", out, removed)
        return _explore(spec, args, out, ck.level if ck is not None else None, console)


def _explore(spec: ExploreSpec, args: argparse.Namespace, out: Path, resumed: int | None, console: Console) -> int:
    t0 = time.perf_counter()
    resume = resumed is not None
    saved = _Saved(out, resumed)
    try:
        result = _run(spec, args, out, resume, console, saved)
    except (CheckpointError, WorkerFailed) as exc:
        raise ExploreUsageError(str(exc)) from None
    except KeyboardInterrupt as exc:   # PySpark's context turns SIGINT into a plain KeyboardInterrupt
        stop = exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)
        stop.kept = _kept(args, out, saved)
        raise stop from None
    console.print(_summary(result))
    (out / "explore.json").write_text(result.dumps(), encoding="utf-8")
    if not result.violations:
        console.print(f"no property violated in {time.perf_counter() - t0:.1f} s; summary: {out / 'explore.json'}")
        return 0
    console.print(_violations(result))
    ordered = sorted(result.violations.values(), key=lambda f: (len(f.path), f.path, f.property))
    preferred = get_mutant(spec.mutant).catches if spec.mutant else ()
    primary = next((f for f in ordered if f.property in preferred), ordered[0])
    how = {"bfs": "BFS (shortest)", "dfs": "DFS (not minimal)", "pct": "PCT schedule (not minimal)"}[args.search]
    for found in ordered:
        trace = counterexample(spec, found, name=f"explore {found.property}")
        assert trace.violation is not None
        report = violation_report(trace, trace.violation, how)
        files = write_reports(report, out / found.property)
        if found is primary:
            print_violation(report, console, replay_hint(files["trace"]))
            console.print(f"reports: {shown_path(files['markdown'])}, {shown_path(files['html'])}; regression test: "
                          f"{shown_path(files['test'])}", highlight=False)
    noun = "property" if len(ordered) == 1 else "properties"
    console.print(f"{len(ordered)} {noun} violated; every report is under {out}/.")
    return 1

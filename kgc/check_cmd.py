"""`kgc check`: the CI gate. Exit 0 when every checker passes, 1 on a violation (reports written), 2 on bad usage."""
from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.table import Table

from explore.coverage import NOT_REACHED, CoverageReport
from harness.excuses import unexcused
from impl.mutants import all_mutants, get_mutant
from impl.profiles import PROFILES, RUNTIME_PROFILES, profile_info
from model.releases import release
from kgc.findings_cmd import Reproduction, rel, reproduce_all
from kgc.gate import GateResult, PhaseResult, run_gate
from kgc.hints import replay_hint, shown_path
from kgc.interrupts import Interrupted, held
from kgc.outputs import claim, holding, said_removed, writable_dir
from kgc.progress import PhaseLog, clock
from kgc.workers import run_jobs
from properties.findings import FINDINGS
from kgc.reporting import violation_report, write_reports
from reports.formats import RunSummary, junit_xml, run_json
from reports.listing import Column, print_listing
from reports.terminal import print_violation
from reports.violation import ViolationReport

DEFAULT_OUT = Path(".kgc-out/check")
UNCOVERED_FILE = "uncovered-edges.tsv"
#: the static scope's uncovered edges (its own map, explore/static_coverage.py)
UNCOVERED_STATIC_FILE = "uncovered-static-edges.tsv"
SHOWN_UNCOVERED = 5      # uncovered edges printed on the terminal (all of them go to UNCOVERED_FILE)


class CheckUsageError(ValueError):
    """Bad arguments to kgc check."""


def add_parser(sub: argparse._SubParsersAction) -> None:   # type: ignore[type-arg]
    p = sub.add_parser("check", help="the CI gate: every checker against the reference or a mutant",
                       description="Run the seed scenarios, seeded walks with refinement, the Hypothesis machines "
                                   "and the Z3 proofs; write reports for any violation.",
                       epilog="Exit status: 0 pass, 1 a violation (reports written to --out), 2 bad usage.")
    p.add_argument("--profile", help="one profile (default: every profile; a mutant's own profiles)")
    p.add_argument("--mutant", help="check a seeded mutant instead of the reference (see --list-mutants)")
    p.add_argument("--budget", type=float, default=300.0, metavar="SECONDS",
                   help="the size of the search, in seconds on 2 cores (default 300); counts derive from it, so "
                        "a run is deterministic")
    p.add_argument("--seed", type=int, default=0, help="seed of the walks (default 0)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"report directory (default {DEFAULT_OUT})")
    p.add_argument("--list-mutants", action="store_true", help="list the seeded mutants and exit")
    p.add_argument("--workers", type=int, default=2, metavar="N",
                   help="profiles checked at once, one process each (default 2: the gate's budget is 2 cores' worth); "
                        "the results do not depend on it")
    p.add_argument("--unexcuse", action="append", default=[], metavar="FINDING",
                   help="search as if documented finding FINDING (properties/findings.py) were undocumented, to "
                        "find its counterexample afresh (then: kgc findings record); repeatable")


def _profiles(args: argparse.Namespace) -> list[str]:
    if args.budget <= 0:
        raise CheckUsageError(f"--budget must be positive, got {args.budget:g}.")
    if getattr(args, "workers", 1) < 1:
        raise CheckUsageError(f"--workers must be at least 1, got {args.workers}.")
    known = {f.name for f in FINDINGS if f.gated}
    for name in getattr(args, "unexcuse", []):
        if name not in known:
            raise CheckUsageError(f"--unexcuse {name}: not a documented finding the gate checks; the gate checks "
                                  f"{', '.join(sorted(known))}.")
    # 4.1 (a sibling runtime) is gated by its runtime rules until the model judges it (kgc/gate.py _runtime_gate)
    wanted = [profile_info(args.profile).name] if args.profile else sorted(set(PROFILES) | set(RUNTIME_PROFILES))
    if args.mutant is None:
        return wanted
    mutant = get_mutant(args.mutant)
    chosen = [p for p in wanted if p in mutant.profiles]
    if not chosen:
        raise CheckUsageError(f"mutant {args.mutant} applies to profile(s) {', '.join(mutant.profiles)}, "
                              f"not {args.profile}.")
    return chosen


def _list_mutants(console: Console) -> int:
    print_listing(console, (Column("mutant", whole=True), Column("profiles"), Column("the mistake it stands for"),
                            Column("caught by", whole=True)),
                  [(m.name, ", ".join(m.profiles), m.mistake, ", ".join(m.catches)) for m in all_mutants()])
    return 0


def _summary(result: GateResult) -> Table:
    verdict = "[green]PASS[/green]" if result.passed else "[red]FAIL[/red]"
    title = f"kgc check — profile {result.profile}" + (f", mutant {result.mutant}" if result.mutant else "")
    table = Table("phase", "runs", "steps", "seconds", "note", header_style="bold",
                  title=f"{title}: {verdict}", title_justify="left")
    for phase in result.phases:
        table.add_row(phase.name, str(phase.runs), str(phase.steps), f"{phase.seconds:.1f}", phase.note)
    return table


def print_coverage(cov: CoverageReport, console: Console, listing: Path, static: bool = False) -> None:
    """Covered/reachable states and edges, the reasons edges are left out, the first uncovered ones, a warning;
    ``static``: the static scope's own map (explore/static_coverage.py)."""
    pct = 100.0 * cov.covered_edges / cov.reachable_edges if cov.reachable_edges else 100.0
    what, graph = ("static scope, ", "static model graph of the static walk") if static else ("", "model graph of the "
                                                                                                "walk scopes")
    console.print(f"abstract coverage, {what}profile {cov.profile}: states {cov.covered_states:,}/"
                  f"{cov.reachable_states:,}, edges {cov.covered_edges:,}/{cov.reachable_edges:,} reachable ({pct:.1f} "
                  f"%) of {cov.model_edges:,} in the 3-slot {graph}")
    reasons = Counter(r for *_, r in cov.uncovered)
    for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        console.print(f"  {n:>6,}  {reason}", markup=False)
    missing = [row for row in cov.uncovered if row[3].startswith(NOT_REACHED)]
    for before, action, after, _ in missing[:SHOWN_UNCOVERED]:
        console.print(f"    {before} --{action}--> {after}", markup=False)
    if missing:
        console.print(f"[yellow]warning[/yellow]: {len(missing):,} reachable abstract edges were not reached in "
                      f"budget (every uncovered edge, with its reason: {listing})")


def _uncovered_rows(cov: CoverageReport) -> list[dict[str, str]]:
    return [{"before": b, "action": a, "after": t, "reason": r} for b, a, t, r in cov.uncovered]


def print_findings(reproductions: list[Reproduction], console: Console) -> None:
    for r in reproductions:
        if r.reproduced:
            report = rel(r.report) if r.report else "-"
            console.print(f"finding {r.finding} reproduced on {r.profile}: {r.detail} — {report}", markup=False)
        elif not r.recorded:
            console.print(f"[yellow]warning[/yellow]: finding {r.finding} is documented for {r.profile}, but "
                          f"{r.detail}.")
        else:
            console.print(f"[red]stale finding[/red] {r.finding} on {r.profile}: {r.detail}; the gate fails until "
                          f"properties/findings.py and its record agree with the reference again.")


def _write(result: GateResult, out: Path, console: Console, findings: list[Reproduction] | None = None) -> None:
    name = result.profile + (f"-{result.mutant}" if result.mutant else "")
    directory = out / name
    directory.mkdir(parents=True, exist_ok=True)
    reports: tuple[ViolationReport, ...] = ()
    if result.found is not None:
        report = violation_report(result.found.trace, result.found.violation, result.found.phase)
        files = write_reports(report, directory)
        reports = (report,)
        print_violation(report, console, replay_hint(files["trace"]))
        console.print(f"reports: {shown_path(files['markdown'])}, {shown_path(files['html'])}; regression test: "
                      f"{shown_path(files['test'])}", highlight=False)
    cov = result.coverage
    notes = [f"{p.name}: {p.note}" for p in result.phases if p.note]
    if cov is not None:
        listing = directory / UNCOVERED_FILE
        listing.write_text("before\taction\tafter\treason\n" + "".join(
            "\t".join(row) + "\n" for row in cov.uncovered), encoding="utf-8")
        print_coverage(cov, console, listing)
        if cov.missing:
            notes.append(f"warning: {cov.missing} reachable abstract edges not reached in budget")
    static = result.static_coverage
    if static is not None:
        listing = directory / UNCOVERED_STATIC_FILE
        listing.write_text("before\taction\tafter\treason\n" + "".join(
            "\t".join(row) + "\n" for row in static.uncovered), encoding="utf-8")
        print_coverage(static, console, listing, static=True)
        if static.missing:
            notes.append(f"warning: {static.missing} reachable static-scope edges not reached in budget")
    summary = RunSummary(result.profile, result.mutant, result.seed, result.passed, result.properties, reports,
                         counts={p.name: p.steps for p in result.phases},
                         coverage=cov.to_json() if cov is not None else {},
                         notes=tuple(notes))
    obj = json.loads(run_json(summary, with_timings=False))
    if findings is not None:
        obj["findings"] = [{"finding": r.finding, "reproduced": r.reproduced, "recorded": r.recorded,
                            "detail": r.detail, "report": rel(r.report) if r.report else None} for r in findings]
    if cov is not None:
        obj["uncovered_edges"] = _uncovered_rows(cov)
    if static is not None:
        obj["static_coverage"] = static.to_json()
        obj["uncovered_static_edges"] = _uncovered_rows(static)
    (directory / "run.json").write_text(json.dumps(obj, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    (directory / "junit.xml").write_text(junit_xml(summary), encoding="utf-8")


def prove_phase(profile: str) -> PhaseResult:
    """The Z3 proofs of the abstract invariants and output properties for any number of members (`kgc prove`)."""
    from properties.z3.prove import prove
    from properties.z3.prove_outputs import prove_outputs
    t0 = time.perf_counter()
    results = prove(profile)
    proved = [r.invariant for r in results if r.status == "proved"]
    outputs = prove_outputs(profile, proved)
    findings = sum(r.status == "finding" for r in results)
    bad = [r.invariant for r in results + outputs if r.status not in ("proved", "finding")]
    note = (f"FAILED: not proved: {', '.join(bad)}" if bad
            else f"{len(proved)} invariants proved inductive, {len(outputs)} output properties proved, "
                 f"{findings} documented findings")
    return PhaseResult("prove", runs=len(results) + len(outputs), seconds=time.perf_counter() - t0, note=note)


ProfileRun = tuple[GateResult, "list[Reproduction] | None"]


def _check_profile(profile: str, mutant: str | None, budget: float, seed: int, unexcuse: tuple[str, ...],
                   prove: Callable[[str], PhaseResult] | None,
                   progress: Callable[[str], None] = lambda _phase: None) -> ProfileRun:
    """One profile's gate run and, on the reference, its documented findings (a mutant run is about the mutant;
    a run that searches for a finding afresh does not replay that finding's old record)."""
    with unexcused(unexcuse):
        result = run_gate(profile, mutant, budget, seed, progress, prove)
    if mutant is not None:
        return result, None
    progress("documented findings")
    return result, [r for r in reproduce_all(profile) if r.finding not in unexcuse]


def _run_profiles(args: argparse.Namespace, profiles: list[str], console: Console,
                  prove: Callable[[str], PhaseResult] | None, on_done: Callable[[str, ProfileRun], None]) -> None:
    """Each profile's run; ``on_done(profile, result)`` as each one ends. Profiles are independent and each run's
    counts derive from its budget share alone, so running them on ``--workers`` processes changes the wall time,
    not one byte."""
    # the budget is shared by the profiles the catalog judges; a runtime-rules-only one takes a share like theirs
    budget = args.budget / max(1, sum(release(p).runnable for p in profiles))
    unexcuse = tuple(args.unexcuse)
    workers = min(getattr(args, "workers", 1), len(profiles))
    how = f"on {workers} processes" if workers > 1 else "in one process"
    plural = "s" if len(profiles) > 1 else ""
    phases: dict[str, str] = {}
    started: dict[str, float] = {}
    with PhaseLog(console, f"kgc check: profile{plural} {', '.join(profiles)} {how}, budget {args.budget:g} s"
                  + (f", mutant {args.mutant}" if args.mutant else "")) as log:
        def show(profile: str, phase: str) -> None:
            started.setdefault(profile, log.elapsed)
            phases[profile] = phase
            log.event(f"kgc check {profile}: {phase}",
                      "kgc check: " + " · ".join(f"{p} {ph}" for p, ph in phases.items()))

        def done(profile: str, result: ProfileRun) -> None:
            phases.pop(profile, None)
            took = clock(log.elapsed - started.get(profile, 0.0))
            log.event(f"kgc check {profile}: {'FAIL' if _failed(result) else 'PASS'} in {took}",
                      f"kgc check: {profile} done")
            on_done(profile, result)

        if workers <= 1:
            for profile in profiles:
                show(profile, "starting")
                done(profile, _check_profile(profile, args.mutant, budget, args.seed, unexcuse, prove,
                                             partial(show, profile)))
            return
        run_jobs([(p, partial(_check_profile, p, args.mutant, budget, args.seed, unexcuse, prove)) for p in profiles],
                 workers, show, done)


def _failed(result: ProfileRun) -> bool:
    gate, findings = result
    return not gate.passed or any(r.stale for r in findings or ())


class _Outcome:
    """The profiles' results as they come in: printed and written in profile order (so the output does not depend
    on which process ends first), and on an interrupt every complete one, whatever its place."""

    def __init__(self, profiles: list[str], out: Path, console: Console) -> None:
        self.profiles, self.out, self.console = profiles, out, console
        self.results: dict[str, ProfileRun] = {}
        self.shown: list[str] = []
        self.failed: list[str] = []

    def done(self, profile: str, result: ProfileRun) -> None:
        self.results[profile] = result
        for p in self.profiles[len(self.shown):]:
            if p not in self.results:
                break
            self._show(p)

    def _show(self, profile: str) -> None:
        result, findings = self.results[profile]
        with held():    # an interrupt waits until this profile's files are whole and it is counted as shown
            self.console.print(_summary(result))
            if findings:
                print_findings(findings, self.console)
            _write(result, self.out, self.console, findings)
            self.shown.append(profile)
            if _failed(self.results[profile]):
                self.failed.append(profile)

    def flush(self) -> None:
        """Show and write every complete result not shown yet (an interrupt came before its turn)."""
        for p in self.profiles:
            if p in self.results and p not in self.shown:
                self._show(p)

    def kept(self) -> str:
        left = [p for p in self.profiles if p not in self.shown]
        if not self.shown:
            return f"no profile had finished, so nothing was written to {self.out}"
        verdicts = ", ".join(f"{p} ({'FAIL' if p in self.failed else 'PASS'})" for p in self.shown)
        return (f"kept the complete results of {verdicts} in {self.out}"
                + (f"; {', '.join(left)} did not finish and have none" if left else ""))


def run(args: argparse.Namespace, console: Console, prove: Callable[[str], PhaseResult] | None = prove_phase) -> int:
    if args.list_mutants:
        return _list_mutants(console)
    profiles = _profiles(args)
    writable_dir(args.out, "--out")
    # an earlier run's profile directories go: a directory holds one run's results, never an old report beside
    # new ones that look current (a report file is opened on its own, or uploaded as a CI artifact)
    with claim(args.out, "kgc check", holding("run.json", "junit.xml")) as removed:
        said_removed("kgc check", args.out, removed)
        return _run_all(args, profiles, console, prove)


def _run_all(args: argparse.Namespace, profiles: list[str], console: Console,
             prove: Callable[[str], PhaseResult] | None) -> int:
    outcome = _Outcome(profiles, args.out, console)
    started = time.monotonic()
    try:
        _run_profiles(args, profiles, console, prove, outcome.done)
    except Interrupted as exc:
        outcome.flush()
        exc.kept = outcome.kept()
        raise
    n = f"{len(profiles)} profile{'s' if len(profiles) > 1 else ''}"
    n += f", mutant {args.mutant}" if args.mutant else ""
    took = clock(time.monotonic() - started)
    if outcome.failed:
        console.print(f"kgc check: [red]FAIL[/red] on {', '.join(outcome.failed)} ({n}, {took})", highlight=False)
        return 1
    console.print(f"kgc check: [green]PASS[/green] ({n}, {took})", highlight=False)
    return 0

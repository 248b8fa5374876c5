"""`kgc check`: the CI gate. Exit 0 when every checker passes, 1 on a violation (reports written), 2 on bad usage."""
from __future__ import annotations

import argparse
import json
from collections import Counter
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
from properties.findings import FINDINGS
from kgc.reporting import violation_report, write_reports
from reports.formats import RunSummary, junit_xml, run_json
from reports.terminal import print_violation
from reports.violation import ViolationReport

DEFAULT_OUT = Path(".kgc-out/check")
UNCOVERED_FILE = "uncovered-edges.tsv"
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
    table = Table("mutant", "profiles", "the mistake it stands for", "caught by", header_style="bold")
    for m in all_mutants():
        table.add_row(m.name, ", ".join(m.profiles), m.mistake, ", ".join(m.catches))
    console.print(table)
    return 0


def _summary(result: GateResult) -> Table:
    verdict = "[green]PASS[/green]" if result.passed else "[red]FAIL[/red]"
    title = f"kgc check — profile {result.profile}" + (f", mutant {result.mutant}" if result.mutant else "")
    table = Table("phase", "runs", "steps", "seconds", "note", header_style="bold",
                  title=f"{title}: {verdict}", title_justify="left")
    for phase in result.phases:
        table.add_row(phase.name, str(phase.runs), str(phase.steps), f"{phase.seconds:.1f}", phase.note)
    return table


def print_coverage(cov: CoverageReport, console: Console, listing: Path) -> None:
    """Covered/reachable states and edges, the reasons edges are left out, the first uncovered ones, a warning."""
    pct = 100.0 * cov.covered_edges / cov.reachable_edges if cov.reachable_edges else 100.0
    console.print(f"abstract coverage, profile {cov.profile}: states {cov.covered_states:,}/{cov.reachable_states:,}, "
                  f"edges {cov.covered_edges:,}/{cov.reachable_edges:,} reachable ({pct:.1f} %) of "
                  f"{cov.model_edges:,} in the 3-slot model graph of the walk scopes")
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
        print_violation(report, console)
        console.print(f"reports: {files['markdown']}, {files['html']}; regression test: {files['test']}")
    cov = result.coverage
    notes = [f"{p.name}: {p.note}" for p in result.phases if p.note]
    if cov is not None:
        listing = directory / UNCOVERED_FILE
        listing.write_text("before\taction\tafter\treason\n" + "".join(
            "\t".join(row) + "\n" for row in cov.uncovered), encoding="utf-8")
        print_coverage(cov, console, listing)
        if cov.missing:
            notes.append(f"warning: {cov.missing} reachable abstract edges not reached in budget")
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
    (directory / "run.json").write_text(json.dumps(obj, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    (directory / "junit.xml").write_text(junit_xml(summary), encoding="utf-8")


def prove_phase(profile: str) -> PhaseResult:
    """The Z3 proofs of the abstract invariants and output properties for any number of members (`kgc prove`)."""
    import time

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


def _check_profile(profile: str, mutant: str | None, budget: float, seed: int, unexcuse: tuple[str, ...],
                   prove: Callable[[str], PhaseResult] | None,
                   progress: Callable[[str], None] = lambda _phase: None,
                   ) -> tuple[GateResult, list[Reproduction] | None]:
    """One profile's gate run and, on the reference, its documented findings (a mutant run is about the mutant;
    a run that searches for a finding afresh does not replay that finding's old record)."""
    with unexcused(unexcuse):
        result = run_gate(profile, mutant, budget, seed, progress, prove)
    if mutant is not None:
        return result, None
    progress("documented findings")
    return result, [r for r in reproduce_all(profile) if r.finding not in unexcuse]


def _run_profiles(args: argparse.Namespace, profiles: list[str], console: Console,
                  prove: Callable[[str], PhaseResult] | None) -> list[tuple[GateResult, list[Reproduction] | None]]:
    """Each profile's run, in profile order. Profiles are independent and each run's counts derive from its
    budget share alone, so running them on ``--workers`` processes changes the wall time, not one byte."""
    # the budget is shared by the profiles the catalog judges; a runtime-rules-only one takes a share like theirs
    budget = args.budget / max(1, sum(release(p).runnable for p in profiles))
    unexcuse = tuple(args.unexcuse)
    workers = min(getattr(args, "workers", 1), len(profiles))
    if workers <= 1:
        out = []
        for profile in profiles:
            with console.status(f"kgc check {profile}: starting", spinner="dots") as status:
                def progress(phase: str, profile: str = profile) -> None:
                    status.update(f"kgc check {profile}: {phase}")
                out.append(_check_profile(profile, args.mutant, budget, args.seed, unexcuse, prove, progress))
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool, \
            console.status(f"kgc check: {', '.join(profiles)} on {workers} processes", spinner="dots") as status:
        futures = {pool.submit(_check_profile, p, args.mutant, budget, args.seed, unexcuse, prove): p
                   for p in profiles}
        done: dict[str, tuple[GateResult, list[Reproduction] | None]] = {}
        for future in as_completed(futures):
            done[futures[future]] = future.result()
            left = [p for p in profiles if p not in done]
            status.update(f"kgc check: {len(done)} of {len(profiles)} profiles done"
                          + (f" (running: {', '.join(left)})" if left else ""))
    return [done[p] for p in profiles]


def run(args: argparse.Namespace, console: Console, prove: Callable[[str], PhaseResult] | None = prove_phase) -> int:
    if args.list_mutants:
        return _list_mutants(console)
    profiles = _profiles(args)
    failed = False
    for result, findings in _run_profiles(args, profiles, console, prove):
        console.print(_summary(result))
        if findings:
            print_findings(findings, console)
        _write(result, args.out, console, findings)
        failed |= not result.passed or any(r.stale for r in findings or ())
    return 1 if failed else 0

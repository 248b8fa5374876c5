"""`kgc prove`: the abstract invariants proved inductive with Z3, or checked by bounded model checking.

    kgc prove                         every profile: initiation + consecution for every abstract action,
                                      members an uninterpreted sort (any group size); CTIs as abstract states;
                                      then the output properties (answers, armed timers) on every step from
                                      a state of the proved invariants
    kgc prove --profile 3.9           one profile
    kgc prove --bmc 10 [--members 3]  bounded model checking from the initial state, 10 steps, 3 member slots
    kgc prove --static                the static scope (KIP-345): static members' fields and actions, the static
                                      invariants as claims, the abstract invariants it breaks as findings (their
                                      BMC traces over 2 static slots); with --bmc, a static scope

Exit 0 when every invariant of the proof set is proved (or, with --bmc, none is violated); 1 otherwise;
2 with one sentence on stderr for bad input. Known findings (properties.abstract.FINDINGS) are reported
with a trace and do not fail the command.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from model.profiles import MODEL_PROFILES, get_model_profile
from model.state import Scope
from properties.z3.bmc import BmcResult, bmc
from properties.z3.prove import FINDING, PROVED, Result, proof_set, prove
from properties.z3.prove_outputs import prove_outputs

MAX_DEPTH = 40
MAX_MEMBERS = 5
STYLE = {PROVED: "green", FINDING: "yellow"}


class ProveUsageError(Exception):
    """Bad input: one sentence, exit 2."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "prove", help="prove the abstract invariants inductive with Z3 (any group size), or run BMC",
        description="Check initiation and consecution of every abstract invariant for every abstract action, with "
                    "members as an uninterpreted sort (any group size); print counterexamples to induction as "
                    "abstract states. With --bmc K, unroll K steps from the initial state instead.")
    p.add_argument("--profile", help="model profile (default: every profile)")
    p.add_argument("--bmc", type=int, metavar="K", help="bounded model checking to depth K instead of the proof")
    p.add_argument("--members", type=int, help=f"member slots for --bmc, 1 to {MAX_MEMBERS} (default 3)")
    p.add_argument("--static", action="store_true",
                   help="the static scope (KIP-345): static members, their invariants and findings")
    return p


def run(args: argparse.Namespace, console: Console) -> int:
    try:
        profiles = _check(args)
    except ProveUsageError as exc:
        sys.stderr.write(f"kgc: error: {exc}\n")
        return 2
    if args.bmc is not None:
        return _run_bmc(profiles, args.bmc, args.members or 3, console, args.static)
    return _run_prove(profiles, console, args.static)


def _check(args: argparse.Namespace) -> list[str]:
    if args.profile is not None:
        try:
            get_model_profile(args.profile)
        except ValueError as exc:
            raise ProveUsageError(str(exc)) from None
    if args.bmc is not None and not 0 <= args.bmc <= MAX_DEPTH:
        raise ProveUsageError(f"--bmc needs a depth from 0 to {MAX_DEPTH}, not {args.bmc}.")
    if args.members is not None:
        if args.bmc is None:
            raise ProveUsageError("--members applies to bounded model checking only: add --bmc K.")
        if not 1 <= args.members <= MAX_MEMBERS:
            raise ProveUsageError(f"--members must be 1 to {MAX_MEMBERS}, not {args.members}.")
    return [args.profile] if args.profile else sorted(MODEL_PROFILES)


def _run_prove(profiles: list[str], console: Console, static: bool = False) -> int:
    table = Table("invariant", "profile", "result", "seconds", header_style="bold", title_justify="left",
                  title="abstract invariants: initiation and consecution, any number of members; "
                        "output properties: every step from a state of the proved invariants")
    results: list[Result] = []
    said: list[Result] = []
    started = time.perf_counter()
    for profile in profiles:
        t = time.perf_counter()
        found = prove(profile, static=static)
        outputs = prove_outputs(profile, [r.invariant for r in found if r.status == PROVED], static=static)
        for r in found:
            label = r.status + (" (strengthening)" if r.strengthening else "")
            table.add_row(r.invariant, r.profile, f"[{STYLE.get(r.status, 'red')}]{label}[/]", f"{r.seconds:.2f}")
        for r in outputs:
            table.add_row(r.invariant, r.profile, f"[{STYLE.get(r.status, 'red')}]{r.status} (output)[/]",
                          f"{r.seconds:.2f}")
        table.add_row("", profile, f"[bold]{sum(r.status == PROVED for r in found + outputs)} proved[/]",
                      f"[bold]{time.perf_counter() - t:.1f}[/]", end_section=True)
        results += found
        said += outputs
    console.print(table)
    for r in results + said:
        _details(r, console)
    failed = [r for r in results if r.status not in (PROVED, FINDING)]
    failed_outputs = [r for r in said if r.status not in (PROVED, FINDING)]
    proved = sum(r.status == PROVED for r in results)
    findings = sum(r.status == FINDING for r in results)
    bad = len(failed) + len(failed_outputs)
    found = sum(r.status == FINDING for r in said)
    output_findings = f"{found} known finding(s), " if found else ""
    verdict = "[green]all proved[/]" if not bad else f"[red]{bad} not proved[/]"
    console.print(f"{verdict}: {proved} proved, {findings} known finding(s), {len(failed)} not proved; "
                  f"output properties: {sum(r.status == PROVED for r in said)} proved, {output_findings}"
                  f"{len(failed_outputs)} not proved; "
                  f"{time.perf_counter() - started:.1f} s.")
    return 1 if bad else 0


def _details(r: Result, console: Console) -> None:
    if r.status == FINDING:
        console.print(f"\n[yellow]finding[/] {r.invariant} on {r.profile}: {r.note}")
        if r.trace is not None:
            console.print(f"shortest violation (BMC, {r.trace.depth} steps):", highlight=False)
            console.print("\n".join(r.trace.lines()), markup=False, highlight=False)
        if r.cti is not None:   # an output finding: a step model.step takes
            console.print("counterexample step (model.step takes it):", highlight=False)
            console.print("\n".join("  " + line for line in r.cti.lines()), markup=False, highlight=False)
        return
    if r.status == PROVED:
        return
    console.print(f"\n[red]{r.status}[/] {r.invariant} on {r.profile}"
                  + (f" — broken by {r.note}" if r.note else ""))
    if r.cti is not None:
        what = "counterexample to induction" if r.cti.outputs is None else \
            "counterexample step (its pre-state satisfies every proved invariant)"
        console.print(f"{what}:", highlight=False)
        console.print("\n".join("  " + line for line in r.cti.lines()), markup=False, highlight=False)
    else:
        console.print("Z3 gave no answer in time (no counterexample found among up to 4 members).")


def _run_bmc(profiles: list[str], depth: int, members: int, console: Console, static: bool = False) -> int:
    what = f"{members} static member slots" if static else f"{members} member slots"
    table = Table("invariant", "profile", "result", header_style="bold", title_justify="left",
                  title=f"bounded model checking: {depth} steps from the initial state, {what}")
    outcomes: list[BmcResult] = []
    failed = 0
    for profile in profiles:
        result = bmc(profile, members=members, depth=depth, scope=Scope(members=members, static=static))
        outcomes.append(result)
        findings = proof_set(profile, static)[1]
        for name in result.checked:
            v = result.violated(name)
            known = name in findings
            if v is None:
                table.add_row(name, profile, f"[green]holds to depth {depth}[/]")
            else:
                failed += not known
                text = f"violated at depth {v.depth}" + (" (known finding)" if known else "")
                table.add_row(name, profile, f"[{'yellow' if known else 'red'}]{text}[/]")
        table.add_row("", profile, f"[bold]{result.seconds:.1f} s[/]", end_section=True)
    console.print(table)
    for result in outcomes:
        for v in result.violations:
            console.print(f"\n{v.invariant} on {result.profile}, violated after {v.depth} steps:", highlight=False)
            console.print("\n".join(v.lines()), markup=False, highlight=False)
    return 1 if failed else 0

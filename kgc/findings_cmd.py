"""Documented findings as verdicts the gate enforces (properties/findings.py), and `kgc findings`.

Each gate-enforced finding keeps, per profile, the counterexample the tool itself found for it
(``kgc check --profile P --unexcuse NAME`` runs the search with that finding's excuse switched off;
``kgc findings record NAME --profile P --from DIR`` files what it wrote under
reports/findings/NAME/P/: the trace, its Markdown/HTML report and the generated regression test).
``kgc check`` replays every recorded finding of the profile it checks with the excuse off: a finding
that no longer reproduces is a red gate (a stale finding), not a silent pass.
"""
from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from core.trace import Trace, TraceFormatError
from harness.excuses import unexcused
from impl.profiles import PROFILES, RUNTIME_PROFILES, profile_info
from kgc.hints import kgc_command
from kgc.reporting import violation_report, write_reports
from kgc.runs import actions_of, replay_checked
from model.releases import version
from properties.findings import FINDINGS, Finding, gated, get_finding
from reports.listing import Column, print_listing

TRACE = "counterexample.json"


class FindingsUsageError(ValueError):
    """Bad arguments to kgc findings (one sentence, exit 2)."""


@dataclass(frozen=True, slots=True)
class Reproduction:
    finding: str
    profile: str
    reproduced: bool
    detail: str           # the property and step when reproduced, else why not
    report: Path | None   # the recorded Markdown report
    #: False when no counterexample was ever recorded for this profile: documented from SPEC.md, not yet
    #: found by the search there (a warning); a recorded one that no longer reproduces is stale (a failure)
    recorded: bool = True

    @property
    def stale(self) -> bool:
        return self.recorded and not self.reproduced


def reproduce(finding: Finding, profile: str) -> Reproduction:
    """Replay ``finding``'s recorded counterexample on ``profile`` with its excuse off: does it still break
    one of the finding's properties?"""
    where = finding.record(profile)
    path = where / TRACE
    if not path.is_file():
        return Reproduction(finding.name, profile, False,
                            f"no counterexample found by the search is recorded in {rel(where)} (look for one with: "
                            f"kgc check --profile {profile} --unexcuse {finding.name}; then kgc findings record)",
                            None, recorded=False)
    try:
        trace = Trace.loads(path.read_text(encoding="utf-8"), source=str(path))
    except TraceFormatError as exc:
        return Reproduction(finding.name, profile, False, f"its recorded trace does not load: {exc}", None)
    prop = trace.violation.property if trace.violation is not None else ""
    if version(trace.profile) != version(profile) or prop not in finding.properties:   # a record of another release
        return Reproduction(finding.name, profile, False,
                            f"{rel(path)} records {prop or 'no violation'} on profile {trace.profile}, not one of "
                            f"{', '.join(finding.properties)} on {profile}", None)
    with unexcused([finding.name]):
        run = replay_checked(trace, actions_of(trace), prop)
    if run is None:
        return Reproduction(finding.name, profile, False,
                            f"its {len(trace.steps)}-step counterexample no longer breaks {prop}", None)
    step = next(v.step for v in run.violations if v.property == prop)
    return Reproduction(finding.name, profile, True, f"{prop} at step {step}", where / "report.md")


def reproduce_all(profile: str) -> list[Reproduction]:
    return [reproduce(f, profile) for f in gated(profile)]


def record(name: str, profile: str, source: Path) -> Path:
    """Copy the counterexample ``kgc check`` wrote in ``source`` (its --out directory, or the profile's
    directory in it) into the finding's record; the trace must break one of the finding's properties."""
    finding = get_finding(name)
    if profile not in finding.profiles:
        raise FindingsUsageError(f"finding {name} is documented for profile(s) {', '.join(finding.profiles)}, "
                                 f"not {profile}.")
    directory = source / profile if (source / profile / TRACE).is_file() else source
    if not (directory / TRACE).is_file():
        raise FindingsUsageError(f"no {TRACE} in {source} or {source / profile}; run {kgc_command()} check "
                                 f"--profile {profile} --unexcuse {name} --out {source} first.")
    trace = Trace.loads((directory / TRACE).read_text(encoding="utf-8"), source=str(directory / TRACE))
    prop = trace.violation.property if trace.violation is not None else None
    if prop not in finding.properties:
        raise FindingsUsageError(f"the counterexample in {directory} breaks {prop}, which finding {name} does not "
                                 f"name ({', '.join(finding.properties)}).")
    target = finding.record(profile)
    shutil.rmtree(target, ignore_errors=True)
    # the reports are rendered again here so that the paths in them name the record, not kgc check's --out
    try:
        shrunk_by = str(json.loads((directory / "violation.json").read_text(encoding="utf-8"))["shrunk_by"])
    except (OSError, ValueError, KeyError):
        shrunk_by = trace.name
    assert trace.violation is not None
    files = write_reports(violation_report(trace, trace.violation, shrunk_by), Path(rel(target)))
    files["test"].unlink()   # asserts the property holds: the wrong way round for a finding (see below)
    (target / regression_test_name(finding, profile)).write_text(
        regression_test(finding, profile, str(prop), len(trace.steps)), encoding="utf-8")
    return target


def regression_test_name(finding: Finding, profile: str) -> str:
    return f"test_finding_{_ident(finding.name)}_{_ident(profile)}.py"


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def regression_test(finding: Finding, profile: str, prop: str, steps: int) -> str:
    """The record's pytest file: the release really behaves so, and this pins it (the generic generated test
    asserts the property *holds*, which for a finding would be the wrong way round)."""
    return f'''"""Regression test kgc wrote for documented finding {finding.name} on profile {profile}.

The release really behaves so (properties/findings.py): this replays the {steps}-step counterexample
the search found (kgc check --unexcuse FINDING) with the finding's excuse off and asserts that
{prop} still breaks. When it no longer does, the finding is stale:
fix the reference or properties/findings.py, and record again (kgc findings record).
Run it with: pytest {finding.record(profile).relative_to(finding.record(profile).parents[3]).as_posix()}
"""
from pathlib import Path

from core.trace import Trace
from harness.excuses import unexcused
from kgc.runs import actions_of, replay_checked

TRACE = Path(__file__).with_name("counterexample.json")


def test_finding_{_ident(finding.name)}_{_ident(profile)}() -> None:
    trace = Trace.loads(TRACE.read_text(encoding="utf-8"))
    with unexcused([{finding.name!r}]):
        run = replay_checked(trace, actions_of(trace), {prop!r})
    assert run is not None, (
        "finding {finding.name} no longer reproduces on profile {profile}")
'''


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def add_parser(sub: argparse._SubParsersAction) -> None:   # type: ignore[type-arg]
    p = sub.add_parser("findings", help="the documented findings and whether each still reproduces",
                       description="List the documented findings (real behaviour of a release that breaks a "
                                   "catalog property) and replay each recorded counterexample; or record one.",
                       epilog="Exit status: 0 every recorded finding reproduces, 1 one does not (stale), 2 bad usage.")
    p.add_argument("--profile", help="only this profile (default: every profile)")
    sub2 = p.add_subparsers(dest="findings_command", metavar="SUBCOMMAND")
    r = sub2.add_parser("record", help="file a counterexample kgc check found as a finding's record",
                        description="Copy the counterexample, reports and regression test that `kgc check --profile "
                                    "P --unexcuse NAME --out DIR` wrote into reports/findings/NAME/P/.")
    r.add_argument("name", help="the finding (properties/findings.py)")
    r.add_argument("--profile", dest="record_profile", required=True, help="the profile the counterexample is for")
    r.add_argument("--from", dest="source", type=Path, required=True, metavar="DIR", help="kgc check's --out directory")


def run(args: argparse.Namespace, console: Console) -> int:
    if getattr(args, "findings_command", None) == "record":
        profile_info(args.record_profile)
        try:
            target = record(args.name, args.record_profile, args.source)
        except LookupError as exc:
            raise FindingsUsageError(str(exc).strip('"')) from None
        console.print(f"recorded {args.name} on {args.record_profile}: {rel(target)}")
        return 0
    profiles = [profile_info(args.profile).name] if args.profile else list(PROFILES) + list(RUNTIME_PROFILES)
    rows: list[tuple[str, ...]] = []
    stale = 0
    for f in FINDINGS:
        for profile in [p for p in f.profiles if p in profiles]:
            if not f.gated:
                rows.append((f.name, profile, ", ".join(f.properties), f.fixed_in or "-", "shown by its test",
                             f.shown_by))
                continue
            r = reproduce(f, profile)
            stale += r.stale
            verdict = (f"[green]reproduced[/green]: {r.detail}" if r.reproduced
                       else f"[yellow]not recorded[/yellow]: {r.detail}" if not r.recorded
                       else f"[red]stale[/red]: {r.detail}")
            rows.append((f.name, profile, ", ".join(f.properties), f.fixed_in or "-", verdict,
                         rel(r.report) if r.report else "-"))
    # the report paths are what a user opens next: whole, never cut (reports/listing.py)
    print_listing(console, (Column("finding", whole=True), Column("profile"), Column("breaks", whole=True),
                            Column("fixed in"), Column("verdict"), Column("report or test", whole=True)), rows)
    return 1 if stale else 0

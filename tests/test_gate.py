"""`kgc check`: the reference passes, runs are deterministic, every mutant is killed by the property it names."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from impl.mutants import all_mutants
from kgc import check_cmd
from kgc.cli import main
from kgc.gate import run_gate

SMALL = 40.0       # seconds of budget per profile in these tests (the default is 150 per profile)


PHASES = ["scenarios", "walks", "explore", "machines", "directed"]


@pytest.mark.parametrize("profile", ["0.10.0"])     # 3.9's reference run is the command-line one below
def test_reference_passes_every_phase(profile: str) -> None:
    # the smallest budget (Plan.for_budget's floor): every phase still runs; 0.10.0's timed sweep at SMALL took 190 s
    # of the default run's time (the full budget's reference run is `bin/kgc check` itself)
    result = run_gate(profile, None, 10.0)
    assert result.passed, result.found and result.found.violation.message
    assert [p.name for p in result.phases] == PHASES
    assert all(p.runs > 0 and p.steps > 0 for p in result.phases) and result.edges_covered > 0
    assert result.coverage is not None and result.coverage.covered_edges <= result.coverage.reachable_edges
    assert len(result.properties) >= 30


def _args(tmp: Path, **kw: object) -> argparse.Namespace:
    base = dict(profile=None, mutant=None, budget=SMALL * 2, seed=0, out=tmp, list_mutants=False, unexcuse=[],
                workers=1)
    base.update(kw)
    return argparse.Namespace(**base)


def test_a_mutant_run_is_deterministic_down_to_the_report_bytes(tmp_path: Path) -> None:
    outputs = []
    out = tmp_path / "out"
    for run in ("a", "b"):
        shutil.rmtree(out, ignore_errors=True)
        with open(tmp_path / f"{run}.txt", "w") as log:
            code = check_cmd.run(_args(out, mutant="store-callback-ignores-generation", profile="0.10.0"),
                                 Console(file=log, width=200))
        assert code == 1
        outputs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert outputs[0] == outputs[1]
    names = {p.name for p in outputs[0]}
    assert {"report.md", "report.html", "violation.json", "counterexample.json", "run.json", "junit.xml"} <= names
    assert any(n.startswith("test_store_callback_generation_guard") for n in names)


def test_reference_run_passes_every_phase_and_writes_passing_junit(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # the budget floor (10 s): every phase and the coverage report still run; at SMALL it took ~86 s under load
    code = main(["check", "--profile", "3.9", "--budget", "10", "--out", str(tmp_path)])
    assert code == 0
    junit = (tmp_path / "3.9" / "junit.xml").read_text()
    assert 'failures="0"' in junit and "delayed-join-completes-only-when-all-rejoined" in junit
    out = capsys.readouterr().out
    assert "PASS" in out and "abstract coverage, profile 3.9: states " in out
    assert re.fullmatch(r"kgc check: PASS \(1 profile, (\d+m)?\d+s\)", out.rstrip().splitlines()[-1])
    run = json.loads((tmp_path / "3.9" / "run.json").read_text())
    assert run["passed"] and len(run["properties_checked"]) >= 30
    assert [k for k in PHASES if run["counts"].get(k, 0) > 0] == PHASES
    assert run["coverage"]["abstract_edges_covered"] > 0 and run["counts"]["machines"] > 0
    missing = int(run["coverage"]["abstract_edges_not_reached"])
    assert sum(r["reason"].startswith("not reached in budget: ") for r in run["uncovered_edges"]) == missing
    listing = (tmp_path / "3.9" / "uncovered-edges.tsv").read_text().splitlines()
    assert listing[0] == "before\taction\tafter\treason" and len(listing) == 1 + len(run["uncovered_edges"])
    assert ("warning:" in out) == (missing > 0)


@pytest.mark.parametrize("argv,needle", [
    (["check", "--budget", "0"], "--budget must be positive"),
    (["check", "--mutant", "nope"], "unknown mutant 'nope'"),
    (["check", "--profile", "1.0"], "unknown profile '1.0'"),
    (["check", "--workers", "0"], "--workers must be at least 1"),
    (["check", "--mutant", "initial-delay-ends-early", "--profile", "0.10.0"],
     "applies to profile(s) 2.4.1, 2.7.0, 3.9, not 0.10.0"),
])
def test_bad_usage_exits_2_with_one_sentence(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kgc: error: ") and needle in err and len(err.splitlines()) == 1


def test_list_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--list-mutants"]) == 0
    out = capsys.readouterr().out
    assert all(m.name in out for m in all_mutants())


@pytest.mark.slow     # Hypothesis shrinks for about 4 minutes
def test_machine_phase_returns_one_counterexample_when_hypothesis_finds_several() -> None:
    """leader-not-reelected gives the machine two distinct failures (a raise and a property); the phase
    must still return one shrunk trace rather than let Hypothesis' ExceptionGroup escape the gate."""
    from stateful_tests.machine import run_machine
    trace = run_machine("3.9", "leader-not-reelected", 100)
    assert trace is not None and trace.violation is not None and trace.mutant == "leader-not-reelected"


@pytest.mark.slow     # two whole reference gates (~40 s); test_coverage.py checks the numbers' determinism per seed
def test_a_reference_run_writes_the_same_coverage_bytes_twice(tmp_path: Path) -> None:
    """Coverage numbers and the uncovered-edge listing derive from the seed alone: two processes with
    different hash seeds (set and dict orders) write the same bytes."""
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / hash_seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        done = subprocess.run([sys.executable, "-m", "kgc", "check", "--profile", "3.9", "--budget", "15",
                               "--out", str(out)], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append({p.name: p.read_bytes() for p in sorted((out / "3.9").iterdir())})
    assert outputs[0] == outputs[1] and "uncovered-edges.tsv" in outputs[0]
    assert b'"abstract_edges_reachable"' in outputs[0]["run.json"]


def test_profiles_on_two_processes_write_the_same_bytes_as_one(tmp_path: Path) -> None:
    """--workers runs profiles in parallel processes; each profile's counts derive from its budget share
    alone, so the reports are byte-identical to a one-process run (a cheap mutant: killed in the scenarios)."""
    out = tmp_path / "out"
    outputs = []
    for workers in (1, 2):
        shutil.rmtree(out, ignore_errors=True)
        with open(tmp_path / f"w{workers}.txt", "w") as log:
            code = check_cmd.run(_args(out, mutant="generation-not-bumped", workers=workers),
                                 Console(file=log, width=200))
        assert code == 1
        outputs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert outputs[0] == outputs[1]
    profiles = {p.parts[0] for p in outputs[0]} - {".kgc-lock"}   # the run's lock file stays (kgc/outputs.py)
    assert profiles == {"0.10.0-generation-not-bumped", "2.4.1-generation-not-bumped",
                        "2.7.0-generation-not-bumped", "3.9-generation-not-bumped"}
